"""A warm run's output, replayed: what a command printed for a Hub revision, printed again while the
revision still points at the same commit.

What ``hubdiff metrics`` prints is a function of the commit it read, its arguments, the width its text is
laid out for, and the code that computed it (``cache_paths.code_versions``). A run that printed its output
without a notice on stderr records it under the endpoint's cache folder (``replay/<key>.json``, the key a
digest of all of these but the commit, which the entry holds). The next run with the same key asks the
Hub where the revision points, the one request a warm run makes anyway, and when it is that commit,
prints the recorded output: no snapshot is read and no code that computes metrics is imported. When the
revision has moved, the run computes as any other, told where it points now, so the Hub is asked once.

An entry is disk input like any other cache entry: read bounded, checked field by field, printed only as
printable text; anything else is a miss. A commit revision (40 hex digits) needs no request at all, as a
cached snapshot of it does not.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .._files import atomic_write_text
from .._render.width import fitted_width, terminal_width
from .._source.cache_paths import code_versions, default_cache_dir, endpoint_origin, hub_folder
from .._source.quick import current_sha
from .._source.spec import SourceSpec, parse_source
from ..errors import WriteError
from ._arguments import offline_by_environment, settings_from

REPLAY_FORMAT = 1
MAX_ENTRY_BYTES = 16 << 20  # a recorded output: far above any metrics text or JSON
_SHA = re.compile(r"[0-9a-f]{40}")

# Arguments that change how the Hub is reached or what is said on stderr, never what is printed: the
# endpoint and cache folder choose where the entry lives instead.
NOT_PRINTED = frozenset(
    {"func", "token", "timeout", "retries", "endpoint", "cache_dir", "offline", "quiet", "verbose"}
)


@dataclass
class Replay:
    """The recorded output of one command with one set of arguments on one endpoint."""

    path: Path
    key: str
    spec: SourceSpec
    args: argparse.Namespace
    points_at: str | None = field(default=None)  # where the revision points now, when it was asked

    @classmethod
    def of_run(cls, command: str, args: argparse.Namespace) -> Replay | None:
        """The replay of a run of a Hub revision, or None where there is none (a folder, offline)."""
        spec = parse_source(args.source)
        if spec.kind != "hub" or args.offline or offline_by_environment():
            return None
        endpoint = endpoint_origin(settings_from(args).endpoint)
        printed = {k: v for k, v in sorted(vars(args).items()) if k not in NOT_PRINTED}
        what = [REPLAY_FORMAT, command, code_versions(), printed, terminal_width(), fitted_width()]
        key = hashlib.sha256(json.dumps(what, sort_keys=True, default=repr).encode()).hexdigest()
        root = Path(args.cache_dir) if args.cache_dir else default_cache_dir()
        return cls(hub_folder(root, endpoint) / "replay" / f"{key}.json", key, spec, args)

    def _recorded(self) -> tuple[str, str] | None:
        """The entry's commit and output, if it is one this run wrote for this key."""
        try:
            with self.path.open("rb") as stream:
                raw = stream.read(MAX_ENTRY_BYTES + 1)
            entry = json.loads(raw) if len(raw) <= MAX_ENTRY_BYTES else None
        except (OSError, ValueError, RecursionError):
            return None
        if type(entry) is not dict or entry.get("format") != REPLAY_FORMAT or entry.get("key") != self.key:
            return None
        sha, text = entry.get("sha"), entry.get("text")
        if type(sha) is not str or not _SHA.fullmatch(sha) or type(text) is not str:
            return None
        return sha, text

    def replayed(self) -> str | None:
        """The recorded output, when the revision still points at the commit it describes."""
        recorded = self._recorded()
        if recorded is None:
            return None
        sha, text = recorded
        if self.spec.revision == sha:
            return text
        self.points_at = current_sha(settings_from(self.args), self.spec.target, self.spec.revision)
        return text if self.points_at == sha else None

    def record(self, sha: str, text: str) -> None:
        """Keep ``text`` as the output for ``sha``; a cache that cannot be written was said by the run."""
        entry = {"format": REPLAY_FORMAT, "key": self.key, "sha": sha, "text": text}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.path, json.dumps(entry))
        except (OSError, WriteError):
            pass
