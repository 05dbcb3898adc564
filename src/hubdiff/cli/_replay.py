"""A warm run's output, replayed: what a command printed and wrote for Hub revisions, printed and written
again while every revision still points at the commit it was read at.

What ``hubdiff metrics`` prints is a function of the commit it read, its arguments, the width its text is
laid out for, and the code that computed it (``cache_paths.code_versions``). What ``hubdiff check``
prints and writes is a function of the same for every repo of its baselines, and of the baselines'
bytes, the templates and jinja2 that render it, and the workflow run a comment links to. A run that
printed its output without a notice on stderr records it under the endpoint's cache folder
(``replay/<key>.json``, the key a digest of all of these but the commits, which the entry holds). The
next run with the same key asks the Hub where each revision points, the requests a warm run makes
anyway and no more (a check asks each owner's listing as it would), and when none has moved, prints
and writes the recorded output: no snapshot or baseline is read and no code that computes or renders is
imported. When one has moved, the run computes as any other, told where each points now, so the Hub is
asked once.

An entry is disk input like any other cache entry: read bounded, checked field by field, printed and
written only as printable text, to the files this run's arguments name (an entry names no path);
anything else is a miss. A commit revision (40 hex digits) needs no request at all, as a cached
snapshot of it does not.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from pathlib import Path

from .._files import atomic_write_text
from .._render.width import fitted_width, terminal_width
from .._source.cache_paths import code_versions, default_cache_dir, endpoint_origin, hub_folder
from .._source.quick import points_at
from .._source.repo_id import is_repo_id
from .._source.settings import HubSettings
from ..errors import EXIT_CHANGED, EXIT_OK, SourceError, WriteError
from ..visible import printable_lines
from ._arguments import offline_by_environment, settings_from
from ._outputs import WRITTEN, Outputs

FORMS = frozenset(what for what, _ in WRITTEN)
REPLAY_FORMAT = 2
MAX_ENTRY_BYTES = 64 << 20  # a recorded output: far above any metrics text, report, comment and summary
ASKING_THREADS = 8  # revisions asked at once, as many as a check's listings
_SHA = re.compile(r"[0-9a-f]{40}")

# Arguments that change how the Hub is reached or what is said on stderr, never what is printed: the
# endpoint and cache folder choose where the entry lives instead.
NOT_PRINTED = frozenset(
    {"func", "token", "timeout", "retries", "endpoint", "cache_dir", "offline", "quiet", "verbose"}
)


class Replay:
    """The recorded output of one command with one set of arguments and inputs on one endpoint."""

    def __init__(self, path: Path, key: str, settings: HubSettings) -> None:
        self.path, self.key, self.settings = path, key, settings
        # where each (repo, revision) points now, for those this run asked
        self.points: dict[tuple[str, str], str | None] = {}

    @classmethod
    def of_run(cls, command: str, args: argparse.Namespace, inputs: object = None) -> Replay | None:
        """The replay of a run that reads the Hub, or None offline. ``inputs``: what else its output is
        a function of (a check's baselines and templates)."""
        if args.offline or offline_by_environment():
            return None
        settings = settings_from(args)
        printed = {k: v for k, v in sorted(vars(args).items()) if k not in NOT_PRINTED}
        what = [REPLAY_FORMAT, command, code_versions(), printed, terminal_width(), fitted_width(), inputs]
        key = hashlib.sha256(json.dumps(what, sort_keys=True, default=repr).encode()).hexdigest()
        root = Path(args.cache_dir) if args.cache_dir else default_cache_dir()
        return cls(
            hub_folder(root, endpoint_origin(settings.endpoint)) / "replay" / f"{key}.json", key, settings
        )

    def _recorded(self) -> tuple[list[tuple[str, str, str]], Outputs] | None:
        """The entry's reads and outputs, if it is one this run wrote for this key."""
        try:
            with self.path.open("rb") as stream:
                raw = stream.read(MAX_ENTRY_BYTES + 1)
            entry = json.loads(raw) if len(raw) <= MAX_ENTRY_BYTES else None
        except (OSError, ValueError, RecursionError):
            return None
        if type(entry) is not dict or entry.get("format") != REPLAY_FORMAT or entry.get("key") != self.key:
            return None
        reads, stdout, files, code = (
            entry.get("reads"),
            entry.get("stdout"),
            entry.get("files"),
            entry.get("exit"),
        )
        if type(reads) is not list or not reads or not all(_is_read(r) for r in reads):
            return None
        if not (stdout is None or type(stdout) is str) or code not in (EXIT_OK, EXIT_CHANGED):
            return None
        if type(files) is not dict or not all(k in FORMS and type(v) is str for k, v in files.items()):
            return None
        shown = {what: printable_lines(text) for what, text in files.items()}
        outputs = Outputs(None if stdout is None else printable_lines(stdout), tuple(shown.items()), code)
        return [tuple(r) for r in reads], outputs

    def replayed(self) -> Outputs | None:
        """The recorded output, when every revision still points at the commit it describes."""
        recorded = self._recorded()
        if recorded is None:
            return None
        reads, outputs = recorded
        ask = [(repo, revision) for repo, revision, sha in reads if revision != sha]
        if ask:
            try:
                self.points = points_at(self.settings, ask, ASKING_THREADS)
            except SourceError:  # a final refusal: the run computes, and says it as it would
                return None
        if all(revision == sha or self.points.get((repo, revision)) == sha for repo, revision, sha in reads):
            return outputs
        return None

    def record(self, reads: list[tuple[str, str, str]], outputs: Outputs) -> None:
        """Keep ``outputs`` as what the run printed and wrote for ``reads``; a cache that cannot be
        written was said by the run."""
        entry = {
            "format": REPLAY_FORMAT,
            "key": self.key,
            "reads": [list(r) for r in reads],
            "stdout": outputs.stdout,
            "files": dict(outputs.files),
            "exit": outputs.exit_code,
        }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.path, json.dumps(entry))
        except (OSError, WriteError):
            pass


def _is_read(read: object) -> bool:
    """(repo, revision, commit), as a run read it."""
    return (
        type(read) is list
        and len(read) == 3
        and all(type(part) is str for part in read)
        and is_repo_id(read[0])
        and bool(_SHA.fullmatch(read[2]))
    )
