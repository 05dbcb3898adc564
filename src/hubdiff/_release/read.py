"""The release files of a snapshot's source: through the Hub reader (one request per file, side by
side, pinned to the snapshot's sha, with hubdiff's retries, timeouts and origin rules) or from the
folder (inside it only). The listing is the snapshot's: a file it does not have is not asked for."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._threads import each_in_threads
from ..errors import SourceError, reading
from ..snapshot import Snapshot
from .files import ReleaseFiles, ReleaseProblem, read_release, release_paths

if TYPE_CHECKING:
    from .._source.sources import Sources

OFFLINE_NOTE = "not read: --offline reads only cached snapshots, which do not hold the release files"
PARALLEL_FILES = 8


class _Folder:
    def __init__(self, root: str, sizes: dict[str, int | None]) -> None:
        from .._source.local import _Folder as Folder

        self.folder = Folder(Path(root), root, sizes)

    def read(self, path: str, limit: int) -> bytes:
        return self.folder.read(path, limit)

    def head(self, path: str, size: int) -> bytes:
        with self.folder.open(path) as fh:
            return fh.read(size)


class _Hub:
    def __init__(self, sources: Sources, repo: str, sha: str) -> None:
        self.sources, self.repo, self.sha = sources, repo, sha

    @cached_property
    def reader(self) -> Any:
        """Built at the first file asked for: a release with none (and a warm check of it) never
        imports the Hub client (~0.3 s)."""
        from .._source.hub import HubReader

        return HubReader(self.sources.settings, self.sources.cache)

    def read(self, path: str, limit: int) -> bytes:
        return self.reader._get(self.repo, self.sha, path, limit)[0]

    def head(self, path: str, size: int) -> bytes:
        body, _ = self.reader._get(self.repo, self.sha, path, size, (0, size - 1))
        return body[:size]


def release_of(sources: Sources, snapshot: Snapshot) -> ReleaseFiles:
    """``snapshot``'s release files; a malformed one is a SourceError naming repo, revision and file."""
    listing = {f.path for f in snapshot.files}
    hub = bool(snapshot.sha)
    if hub and sources.offline:
        if not release_paths(listing):
            return ReleaseFiles(generation=snapshot.generation_config)
        return ReleaseFiles(generation=snapshot.generation_config, notes=(OFFLINE_NOTE,))
    reader: Any = _Hub(sources, snapshot.source, snapshot.sha) if hub else None
    if reader is None:
        reader = _Folder(snapshot.source, {f.path: f.size for f in snapshot.files})
    revision = snapshot.sha or None

    def each(call: Any, paths: list[str]) -> dict[str, Any]:
        def one(path: str) -> Any:
            with reading(snapshot.source, revision, path):
                return call(path)

        return each_in_threads(one, paths, PARALLEL_FILES if hub else 1)

    try:
        return read_release(reader, listing, snapshot.generation_config, each)
    except ReleaseProblem as exc:
        raise SourceError(snapshot.source, revision, exc.file, exc.problem) from None
