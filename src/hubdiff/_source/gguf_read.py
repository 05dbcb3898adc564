"""GGUF releases read by header: the ``.gguf`` files of a Hub repo or a folder, and each one's header.

A header is read in ranges that grow from where parsing stopped, never from 0: the first asks
``FIRST_RANGE`` bytes (64 KiB, or the whole file if smaller), the next the parser's estimate of the
rest (``gguf.Incomplete``), the third that estimate with a margin, so a header costs at most its
size + 64 KiB in 3 requests in the common case (the tests measure it on real tokenizer headers and
llama.cpp-written files). An estimate that still falls short is followed by further ranges, each
twice the last, up to the header limit: a hostile or unusual header costs more requests, never a
wrong answer. The first shard of a split is read the same way; every other shard's header is small
(llama.cpp's ``gguf-split`` writes the model's metadata into the first only), so one range of 64 KiB
holds it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import SourceError, reading
from .gguf import MAX_HEADER_BYTES, GGUFHeader, GGUFParser, GGUFProblem, Incomplete

if TYPE_CHECKING:
    from .hub import RepoInfo
    from .spec import HubSettings

FIRST_RANGE = 64 << 10  # bytes: the slack a read may take beyond the header
MAX_READS = 24  # ranges a header may take before it is refused (each at least twice the last)
SPLIT_NAME = re.compile(r"(?P<stem>.+)-(?P<no>\d{5})-of-(?P<count>\d{5})\.gguf")

# (start, length) -> the bytes of the file from start, at most length of them
Fetch = Callable[[int, int], bytes]


@dataclass(frozen=True)
class HeaderRead:
    """A header and what reading it cost: each range asked as (start, bytes received)."""

    header: GGUFHeader
    ranges: tuple[tuple[int, int], ...]

    @property
    def bytes_read(self) -> int:
        return sum(n for _, n in self.ranges)


def next_range(result: Incomplete, reads_so_far: int) -> int:
    """Bytes to ask for next, from ``result.have``: the parser's estimate of the rest, then (the
    estimate having fallen short once) that estimate with a margin of an eighth and 8 KiB."""
    if reads_so_far == 1:
        return max(result.need, result.estimate)
    return max(result.need, result.estimate + result.estimate // 8 + (8 << 10))


def read_header(fetch: Fetch, file_size: int | None, first: int = FIRST_RANGE) -> HeaderRead:
    """The header of one file through ``fetch``; GGUFProblem if it is not a valid GGUF header."""
    parser = GGUFParser(file_size)
    ranges: list[tuple[int, int]] = []
    length = first if file_size is None else min(first, file_size)
    while True:
        start = parser.have
        if file_size is not None:
            length = min(length, file_size - start)
        length = min(length, MAX_HEADER_BYTES + 1 - start)
        chunk = fetch(start, length) if length > 0 else b""
        ranges.append((start, len(chunk)))
        if not chunk:
            raise GGUFProblem(f"file ends inside its GGUF header (at byte {start:,})")
        parser.feed(chunk[:length])
        result = parser.parse()
        if not isinstance(result, Incomplete):
            return HeaderRead(result, tuple(ranges))
        if len(ranges) >= MAX_READS:
            raise GGUFProblem(f"header not complete after {len(ranges)} ranges ({parser.have:,} bytes)")
        length = next_range(result, len(ranges))


@dataclass(frozen=True)
class GGUFFile:
    path: str
    size: int | None
    header: GGUFHeader
    ranges: tuple[tuple[int, int], ...] = ()  # what its read cost (empty when read from disk)


@dataclass(frozen=True)
class GGUFRelease:
    """A repo or folder of GGUF files as read: every ``.gguf`` file's header, by path."""

    source: str
    revision: str
    sha: str
    commit_date: str | None
    files: tuple[tuple[str, int | None], ...]  # every file of the repo, with its size
    ggufs: tuple[GGUFFile, ...] = field(default=())

    @property
    def label(self) -> str:
        return f"{self.source}@{self.sha[:12]}" if self.sha else self.source


class GGUFRepo(SourceError):
    """A Hub repo of ``.gguf`` files and no safetensors weights or config: the safetensors path stops
    here, after its one model-info request, and hands that info to ``load_hub_gguf``. Any command that
    does not read GGUF says so in one line (exit 3)."""

    def __init__(self, repo: str, info: RepoInfo) -> None:
        super().__init__(
            repo, info.sha, "config.json", "not found: a GGUF repo (hubdiff snapshot and metrics read it)"
        )
        self.info = info


def gguf_paths(paths: Iterable[str]) -> list[str]:
    """The ``.gguf`` files of a listing, in path order (every folder: quant repos keep some in folders)."""
    return sorted(p for p in paths if p.endswith(".gguf"))


def is_gguf_listing(paths: Iterable[str]) -> bool:
    """A listing hubdiff reads as GGUF: ``.gguf`` files and no safetensors weights."""
    names = list(paths)
    return any(p.endswith(".gguf") for p in names) and not any(p.endswith(".safetensors") for p in names)


def load_local_gguf(folder: str) -> GGUFRelease:
    """Every ``.gguf`` file under ``folder``, each read to the end of its header (and no further)."""
    from .local import _Folder, _listing

    root = Path(folder)
    sizes: dict[str, int | None] = dict(_listing(root))
    files = _Folder(root, folder, sizes)
    out = []
    for path in gguf_paths(sizes):
        with reading(folder, None, path), files.open(path) as fh:

            def fetch(start: int, length: int, fh: object = fh) -> bytes:
                fh.seek(start)  # type: ignore[attr-defined]
                return fh.read(length)  # type: ignore[attr-defined,no-any-return]

            try:
                read = read_header(fetch, sizes[path], first=1 << 20)
            except GGUFProblem as exc:
                raise SourceError(folder, None, path, str(exc)) from None
        out.append(GGUFFile(path, sizes[path], read.header))
    return GGUFRelease(folder, "local", "", None, tuple(sorted(sizes.items())), tuple(out))


def load_hub_gguf(
    settings: HubSettings, repo: str, revision: str, info: RepoInfo | None = None
) -> GGUFRelease:
    """The repo's ``.gguf`` headers at ``revision``: one model-info request (none when ``info`` is given,
    as ``GGUFRepo`` carries it), then ranges per file."""
    from .hub import HubReader

    reader = HubReader(settings)
    if info is None:
        info = reader.resolve(repo, revision)
    out = []
    for path in gguf_paths(info.sizes):
        size = info.sizes[path]

        def fetch(start: int, length: int, path: str = path) -> bytes:
            body, _ = reader._get(repo, info.sha, path, length, (start, start + length - 1))
            return body[:length]

        with reading(repo, info.sha, path):
            try:
                read = read_header(fetch, size)
            except GGUFProblem as exc:
                raise SourceError(repo, info.sha, path, str(exc)) from None
        out.append(GGUFFile(path, size, read.header, read.ranges))
    return GGUFRelease(
        repo, revision, info.sha, info.last_modified, tuple(sorted(info.sizes.items())), tuple(out)
    )


def local_gguf_folder(folder: str) -> bool:
    """A folder hubdiff reads as GGUF (``is_gguf_listing`` of its files, hidden folders skipped)."""
    if not os.path.isdir(folder):
        return False
    from .local import _listing

    return is_gguf_listing(_listing(Path(folder)))
