"""The cache: each snapshot in its pattern form, the metrics computed from it, the last sha of each revision.

A snapshot never changes for a given sha, so a cached one is reused without asking the Hub for
anything but the revision's current sha. It is stored as patterns (``Snapshot.compact``): a few KB for
a 200,000-tensor checkpoint, read back in milliseconds. Metrics are stored per content (the source,
config, patterns, options and the versions of hubdiff and transformers that computed them), so a warm
``metrics`` or ``check`` neither recomputes them nor imports transformers. Writes are atomic
(``_files.atomic_write_text``), so a run that fails or is killed leaves the cache as it was.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import re
from dataclasses import fields
from pathlib import Path
from typing import Any

from ..snapshot import Snapshot
from .jsonin import MAX_DEPTH, load_json
from .layout import check_config


def atomic_write_text(path: Path, text: str | bytes) -> None:
    """``_files.atomic_write_text``, imported on the first write: a warm run that writes nothing does
    not load filelock (~30 ms of its ~0.3 s)."""
    from .._files import atomic_write_text as write

    write(path, text)


_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?$")


def default_cache_dir() -> Path:
    """``$HUBDIFF_CACHE``, else ``$HF_HOME/hubdiff``, else ``~/.cache/huggingface/hubdiff``."""
    if os.environ.get("HUBDIFF_CACHE"):
        return Path(os.environ["HUBDIFF_CACHE"])
    hf_home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "huggingface"
    )
    return Path(hf_home) / "hubdiff"


class _MetricsUnpickler(pickle.Unpickler):
    """Only hubdiff's own result classes and plain containers: a cache file can run no other code."""

    _BUILTINS = frozenset({"object", "set", "frozenset", "dict", "list", "tuple", "int", "float", "str"})

    def find_class(self, module: str, name: str) -> Any:
        if (
            (module == "builtins" and name in self._BUILTINS)
            or (module == "copyreg" and name == "_reconstructor")
            or (module == "collections" and name in ("Counter", "defaultdict", "OrderedDict"))
        ):
            return super().find_class(module, name)
        if "." not in name and (module == "hubdiff._metrics" or module.startswith("hubdiff._metrics.")):
            found = super().find_class(module, name)
            # a class defined there, never a function or a module reached through one (os.system)
            if isinstance(found, type) and found.__module__.startswith("hubdiff._metrics"):
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not allowed in the metrics cache")


def metrics_key(snapshot: Snapshot, options: Any) -> str:
    """What the metrics are a function of: the snapshot's label, config and patterns, the options, and
    the versions of hubdiff and transformers (whose configuration classes fill in defaults)."""
    from importlib.util import find_spec

    from .. import __version__

    # transformers' own files stand for its version: reading its metadata costs ~50 ms, a stat nothing
    spec = find_spec("transformers")
    transformers = None
    if spec is not None and spec.origin:
        stat = os.stat(spec.origin)
        transformers = [spec.origin, stat.st_size, stat.st_mtime_ns]
    what = [
        __version__,
        transformers,
        snapshot.label,
        snapshot.config,
        [[p.parts, p.index_sets, p.dtype, p.shape] for p in snapshot.patterns],
        [(f.name, getattr(options, f.name)) for f in fields(options)],
    ]
    return hashlib.sha256(json.dumps(what, sort_keys=True, default=repr).encode()).hexdigest()


class SnapshotCache:
    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else default_cache_dir()

    @staticmethod
    def _slug(repo_id: str) -> str:
        if not _REPO_ID.match(repo_id) or ".." in repo_id:
            raise ValueError(f"not a repo id: {repo_id!r}")
        return repo_id.replace("/", "--")

    def _snapshot_path(self, repo_id: str, sha: str) -> Path:
        if not re.fullmatch(r"[0-9a-f]{40}", sha):
            raise ValueError(f"not a commit sha: {sha!r}")
        return self.root / "snapshots" / self._slug(repo_id) / f"{sha}.patterns.json"

    def _refs_path(self, repo_id: str) -> Path:
        return self.root / "refs" / f"{self._slug(repo_id)}.json"

    def load(self, repo_id: str, sha: str) -> Snapshot | None:
        """The cached snapshot, or None when there is none or it is not one hubdiff would have written.

        The cache is disk input like any other: it goes through the same JSON and config checks as
        what the Hub sends, so a damaged or planted entry is refetched, never trusted.
        """
        path = self._snapshot_path(repo_id, sha)
        try:
            snapshot = Snapshot.from_compact(
                load_json(path.read_bytes(), max_depth=MAX_DEPTH + 2, infinity=True)
            )
            check_config(snapshot.config, "config.json")
        except FileNotFoundError:
            return None
        except (ValueError, KeyError, TypeError, IndexError, AttributeError):
            return None  # unreadable, planted or of an older format: refetch and overwrite
        if snapshot.source != repo_id or snapshot.sha != sha:
            return None
        return snapshot

    def has_snapshot(self, repo_id: str, sha: str) -> bool:
        try:
            return self._snapshot_path(repo_id, sha).is_file()
        except ValueError:  # not a repo id or not a sha: nothing cached under it
            return False

    def store(self, snapshot: Snapshot) -> None:
        text = json.dumps(snapshot.compact(), sort_keys=True, separators=(",", ":"))
        atomic_write_text(self._snapshot_path(snapshot.source, snapshot.sha), text)

    def _metrics_path(self, key: str) -> Path:
        return self.root / "metrics" / key[:2] / f"{key}.pickle"

    def load_metrics(self, key: str) -> Any:
        """The metrics stored under ``key``, or None (absent, unreadable, or from another format)."""
        try:
            with self._metrics_path(key).open("rb") as fh:
                return _MetricsUnpickler(fh).load()
        except FileNotFoundError:
            return None
        except Exception:  # a damaged or foreign file: compute again and overwrite
            return None

    def store_metrics(self, key: str, metrics: Any) -> None:
        atomic_write_text(self._metrics_path(key), pickle.dumps(metrics, protocol=pickle.HIGHEST_PROTOCOL))

    def known_refs(self, repo_id: str) -> dict[str, str]:
        try:
            refs = json.loads(self._refs_path(repo_id).read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {}
        return refs if isinstance(refs, dict) else {}

    def remember_ref(self, repo_id: str, revision: str, sha: str) -> None:
        """Read, add and write under the file's lock: two revisions of one repo read side by side (a
        diff, two runs) would otherwise each write back what they read, and one would be lost."""
        if self.known_refs(repo_id).get(revision) == sha:
            return  # the warm run's case: nothing to write, no lock to take
        from .._files import locked

        path = self._refs_path(repo_id)
        with locked(path):
            refs = self.known_refs(repo_id)
            refs[revision] = sha
            atomic_write_text(path, json.dumps(refs, sort_keys=True, indent=1))
