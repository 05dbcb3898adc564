"""The cache: each snapshot in its pattern form, the metrics computed from it, the last sha of each revision.

A snapshot never changes for a given sha, so a cached one is reused without asking the Hub for
anything but the revision's current sha. It is stored as patterns (``Snapshot.compact``): a few KB for
a 200,000-tensor checkpoint, read back in milliseconds. Metrics are stored per content (the source,
config, patterns, options and the versions of hubdiff and transformers that computed them), so a warm
``metrics`` or ``check`` neither recomputes them nor imports transformers. Writes are atomic
(``_files.atomic_write_text``), so a run that fails or is killed leaves the cache as it was.

The cache is disk input like any other, and in CI often one restored from another run: every entry is
plain JSON read under the same checks as the Hub's, and names what it holds (repo and sha, or the
metrics key), so a damaged or planted one is a miss and is recomputed; nothing in it is ever run. It
is also only an optimisation: a cache that cannot be read is a miss, one that cannot be written (read
only, full, not a folder) is said once on stderr and the run goes on without it.

Every entry lives under the endpoint it was read from (``hubs/<host>-<digest>/``): a repo id names
different things on the Hub, a mirror and a local replica, so what one served is never answered for
another. Entries of the older layout (``snapshots/``, ``refs/``, ``metrics/`` at the root) say nothing of
their endpoint and are never read.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import types
import typing
from collections.abc import Callable
from dataclasses import fields, is_dataclass
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from .._say import notice
from ..errors import WriteError
from ..snapshot import Snapshot
from ..visible import printable
from .cache_paths import code_versions, default_cache_dir, endpoint_origin, hub_folder
from .config_bounds import check_config
from .jsonin import MAX_DEPTH, load_json
from .repo_id import is_repo_id

T = TypeVar("T")
METRICS_FORMAT = 1  # of a metrics entry: {"format", "key", "metrics"}
_SHA = re.compile(r"[0-9a-f]{40}")


def atomic_write_text(path: Path, text: str | bytes) -> None:
    """``_files.atomic_write_text``, imported on the first write: a warm run that writes nothing does
    not load filelock (~30 ms of its ~0.3 s)."""
    from .._files import atomic_write_text as write

    write(path, text)


class _Unstorable(TypeError):
    """A value the metrics' plain form has no place for: those metrics are not cached."""


def _plain(value: Any) -> Any:
    """A config (``Any`` in the result classes) as JSON: scalars as they are, each container as a list
    tagged with its type, so tuples and int keys (transformers' ``id2label``) come back as they were."""
    kind = type(value)
    if value is None or kind in (bool, int, float, str):
        return value
    if kind in (list, tuple):
        return [kind.__name__, *map(_plain, value)]
    if kind is dict:
        return ["dict", *(_plain(item) for pair in value.items() for item in pair)]
    raise _Unstorable(kind.__name__)


def _unplain(data: Any) -> Any:
    kind = type(data)
    if data is None or kind in (bool, int, float, str):
        return data
    if kind is list and data:
        tag, items = data[0], [_unplain(item) for item in data[1:]]
        if tag == "list":
            return items
        if tag == "tuple":
            return tuple(items)
        if tag == "dict" and len(items) % 2 == 0:
            return dict(zip(items[::2], items[1::2]))  # an unhashable key: TypeError, a miss
    raise ValueError("not a plain value")


@cache
def _hints(cls: Any) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _is_scalar(value: Any, hint: Any) -> bool:
    """A float field may hold an int (JSON keeps the two apart); a bool is never an int."""
    return type(value) in (int, float) if hint is float else hint in (int, str, bool) and type(value) is hint


def _without_none(hint: Any) -> Any:
    (rest,) = (a for a in typing.get_args(hint) if a is not type(None))
    return rest


def _to_json(value: Any, hint: Any) -> Any:
    """``value`` as JSON, guided by its annotation; anything that does not match it is not stored."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return _plain(value)
    if origin in (typing.Union, types.UnionType):  # X | None
        return None if value is None else _to_json(value, _without_none(hint))
    if is_dataclass(hint):
        if type(value) is not hint:
            raise _Unstorable(type(value).__name__)
        of: Any = hint
        return {f.name: _to_json(getattr(value, f.name), _hints(of)[f.name]) for f in fields(of)}
    if origin is dict and type(value) is dict:
        return [[_to_json(k, args[0]), _to_json(v, args[1])] for k, v in value.items()]
    if origin in (list, tuple, set) and type(value) is origin:
        return [_to_json(item, args[0]) for item in (sorted(value) if origin is set else value)]
    if _is_scalar(value, hint):
        return value
    raise _Unstorable(f"{type(value).__name__} for {hint}")


@cache
def _reader(hint: Any) -> Callable[[Any], Any]:
    """The inverse of ``_to_json`` for ``hint``, made once per annotation (a warm run reads every
    field of every layer), checking each value against it: a planted entry of the wrong shape
    raises (a miss) instead of reaching the reports."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return _unplain
    if origin in (typing.Union, types.UnionType):  # X | None
        rest = _reader(_without_none(hint))
        return lambda data: None if data is None else rest(data)
    if is_dataclass(hint):
        cls: Any = hint
        names = frozenset(f.name for f in fields(cls))
        readers = {name: _reader(_hints(cls)[name]) for name in names}

        def dataclass(data: Any) -> Any:
            if type(data) is not dict or data.keys() != names:
                raise ValueError(f"not a {cls.__name__}")
            return cls(**{name: read(data[name]) for name, read in readers.items()})

        return dataclass
    if origin is dict:
        key, value = _reader(args[0]), _reader(args[1])

        def pairs(data: Any) -> Any:
            if type(data) is not list or not all(type(p) is list and len(p) == 2 for p in data):
                raise ValueError("not a list of pairs")
            return {key(k): value(v) for k, v in data}

        return pairs
    if origin in (list, tuple, set):
        kind, item_hint, item = origin, args[0], _reader(args[0])

        def items(data: Any) -> Any:
            if type(data) is not list:
                raise ValueError(f"not a {kind.__name__}")
            if item_hint in (int, str) and all(type(x) is item_hint for x in data):
                return kind(data)  # the common case (layer numbers, names) at C speed
            return kind(map(item, data))

        return items

    def scalar(data: Any) -> Any:
        if not _is_scalar(data, hint):
            raise ValueError(f"{type(data).__name__} where {hint} belongs")
        return data

    return scalar


def metrics_key(snapshot: Snapshot, options: Any) -> str:
    """What the metrics are a function of: the snapshot's label, config and patterns, the options, and
    the code that computed them (hubdiff's and transformers', whose configuration classes fill in
    defaults)."""
    what = [
        code_versions(),
        snapshot.label,
        snapshot.config,
        [[p.parts, p.index_sets, p.dtype, p.shape] for p in snapshot.patterns],
        [(f.name, getattr(options, f.name)) for f in fields(options)],
    ]
    return hashlib.sha256(json.dumps(what, sort_keys=True, default=repr).encode()).hexdigest()


class SnapshotCache:
    """The cache of one endpoint (``endpoint``, the Hub by default) under ``root``; ``for_endpoint``
    gives the same root's cache of another, which ``Sources`` and ``HubReader`` take from their settings."""

    def __init__(self, root: Path | None = None, endpoint: str | None = None) -> None:
        from .settings import DEFAULT_ENDPOINT

        self.root = Path(root) if root is not None else default_cache_dir()
        self.endpoint = endpoint_origin(endpoint or DEFAULT_ENDPOINT)
        self.base = hub_folder(self.root, self.endpoint)
        self.writable = True  # until a write fails: then the run goes on without caching
        self._said = threading.Lock()

    def for_endpoint(self, endpoint: str) -> SnapshotCache:
        """This cache, if it is ``endpoint``'s; else the same root's cache of ``endpoint``."""
        if endpoint_origin(endpoint) == self.endpoint:
            return self
        return SnapshotCache(self.root, endpoint)

    @staticmethod
    def _slug(repo_id: str) -> str:
        if not is_repo_id(repo_id):
            raise ValueError(f"not a repo id: {repo_id!r}")
        return repo_id.replace("/", "--")

    def _snapshot_path(self, repo_id: str, sha: str) -> Path:
        if not _SHA.fullmatch(sha):
            raise ValueError(f"not a commit sha: {sha!r}")
        return self.base / "snapshots" / self._slug(repo_id) / f"{sha}.patterns.json"

    def _refs_path(self, repo_id: str) -> Path:
        return self.base / "refs" / f"{self._slug(repo_id)}.json"

    def _write(self, write: Callable[[], None]) -> None:
        """``write()``, or, when the cache cannot take it, a line on stderr the first time and no cache
        for the rest of the run: the cache is an optimisation, and a read must not fail for it."""
        if not self.writable:
            return
        try:
            write()
        except WriteError as exc:
            with self._said:
                if self.writable:
                    self.writable = False
                    notice(printable(f"hubdiff: cache {self.root} not used: {exc}"))

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
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
            return None  # absent, unreadable, planted or of an older format: refetch and overwrite
        if snapshot.source != repo_id or snapshot.sha != sha:
            return None
        return snapshot

    def has_snapshot(self, repo_id: str, sha: str) -> bool:
        try:
            return self._snapshot_path(repo_id, sha).is_file()
        except (ValueError, OSError):  # not a repo id or not a sha, or an unreadable cache: a miss
            return False

    def store(self, snapshot: Snapshot) -> None:
        # keys in their own order, not sorted: a config read back must print as the Hub's did (a warm
        # report shows a nested value's first keys as the cold one does)
        text = json.dumps(snapshot.compact(), separators=(",", ":"))
        self._write(lambda: atomic_write_text(self._snapshot_path(snapshot.source, snapshot.sha), text))

    def _metrics_path(self, key: str) -> Path:
        return self.base / "metrics" / key[:2] / f"{key}.json"

    def load_metrics(self, key: str, kind: type[T]) -> T | None:
        """The metrics stored under ``key``, read as ``kind`` (the result class, whose field types say
        how), or None: absent, unreadable, of another format, of another key (a file copied or planted
        under this name) or not of the result classes' shapes."""
        try:
            entry = load_json(self._metrics_path(key).read_bytes(), max_depth=2 * MAX_DEPTH, infinity=True)
            if type(entry) is not dict or entry.get("format") != METRICS_FORMAT or entry.get("key") != key:
                return None
            return _reader(kind)(entry.get("metrics"))  # type: ignore[no-any-return,arg-type]
        except (OSError, ValueError, TypeError, RecursionError):
            return None  # compute again and overwrite

    def store_metrics(self, key: str, metrics: T, kind: type[T]) -> None:
        """``metrics`` written in the plain form of ``kind``, its class."""
        try:
            entry = {"format": METRICS_FORMAT, "key": key, "metrics": _to_json(metrics, kind)}
        except (TypeError, ValueError):  # _Unstorable: a value the plain form cannot hold exactly
            return  # computed again next time
        text = json.dumps(entry, separators=(",", ":"))
        self._write(lambda: atomic_write_text(self._metrics_path(key), text))

    def known_refs(self, repo_id: str) -> dict[str, str]:
        """The last sha of each revision seen: only ``revision -> 40-hex sha`` entries, the rest ignored."""
        try:
            refs = load_json(self._refs_path(repo_id).read_bytes())
        except (OSError, ValueError):
            return {}
        if type(refs) is not dict:
            return {}
        return {rev: sha for rev, sha in refs.items() if type(sha) is str and _SHA.fullmatch(sha)}

    def remember_ref(self, repo_id: str, revision: str, sha: str) -> None:
        """Read, add and write under the file's lock: two revisions of one repo read side by side (a
        diff, two runs) would otherwise each write back what they read, and one would be lost."""
        if not self.writable or self.known_refs(repo_id).get(revision) == sha:
            return  # the warm run's case: nothing to write, no lock to take
        from .._files import locked

        path = self._refs_path(repo_id)

        def write() -> None:
            with locked(path):
                refs = self.known_refs(repo_id)
                refs[revision] = sha
                atomic_write_text(path, json.dumps(refs, sort_keys=True, indent=1))

        self._write(write)
