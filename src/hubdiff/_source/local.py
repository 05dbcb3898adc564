"""A checkpoint folder on disk, read the way the Hub is read: config, index, header bytes only."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from .._threads import each_in_threads
from ..errors import SourceError, reading
from ..patterns import ShardGroups
from ..snapshot import Snapshot
from .build import HeaderHint, read_model
from .header import HeaderProblem, header_length
from .layout import NameSizes, parse_index
from .parsing import MANY_SHARDS, HeaderParser


def _listing(root: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in names:
            path = Path(folder, name)
            if path.is_file():
                out[path.relative_to(root).as_posix()] = path.stat().st_size
    return out


@dataclass(frozen=True)
class _Folder:
    root: Path
    where: str
    sizes: dict[str, int | None]
    processes: int | None = None
    processes_from_shards: int = MANY_SHARDS

    def open(self, path: str) -> BinaryIO:
        """The file, opened where its symlinks lead, which must be inside the folder.

        A checked-out model repo is hostile input too: a ``config.json`` or a shard linked to
        ``~/.ssh/...`` would otherwise be read and its content shown, as config values or as the number
        its first 8 bytes make. (A Hugging Face cache snapshot, all links into ``../../blobs``, is
        refused for the same reason: copy it with ``cp -rL`` first.)
        """
        target = (self.root / path).resolve()
        if not target.is_relative_to(self.root.resolve()):
            raise SourceError(self.where, None, path, "symlink points outside the folder")
        return target.open("rb")

    def read(self, path: str, limit: int) -> bytes:
        with self.open(path) as fh:
            return fh.read(limit + 1)

    def index(self, raw: bytes, file: str, listing: set[str]) -> tuple[dict[str, Any], list[str], NameSizes]:
        return parse_index(raw, file, listing)  # its names' sizes are never asked: headers are read whole

    def headers(self, hints: dict[str, HeaderHint]) -> dict[str, ShardGroups]:
        shards = sorted(hints)
        parser = HeaderParser(len(shards), self.processes, self.processes_from_shards)
        parser.start()

        def one(shard: str) -> ShardGroups:
            try:
                with reading(self.where, None, shard):
                    with self.open(shard) as fh:
                        size = self.sizes[shard]
                        length = header_length(fh.read(8), size)
                        raw = fh.read(length)
                    # A header-only skeleton (no data section at all) describes a layout without the
                    # weights; its offsets cannot be checked against data that is not there.
                    skeleton = size == 8 + length
                    return parser.parse(raw, shard, None if skeleton else size, hints[shard].prefix)
            except HeaderProblem as exc:
                raise SourceError(self.where, None, shard, str(exc)) from None

        return each_in_threads(one, shards, parser.callers)  # each thread waits on its worker


def load_local(
    folder: str, headers: bool = True, processes: int | None = None, processes_from_shards: int = MANY_SHARDS
) -> Snapshot:
    """``processes`` and ``processes_from_shards`` as in HubSettings: header workers for many shards."""
    root = Path(folder)
    if not root.is_dir():
        raise SourceError(str(folder), None, None, "no such folder")
    sizes: dict[str, int | None] = dict(_listing(root))
    return read_model(
        _Folder(root, str(folder), sizes, processes, processes_from_shards),
        source=str(folder),
        revision="local",
        error_revision=None,
        sha="",
        commit_date=None,
        sizes=sizes,
        headers=headers,
    )
