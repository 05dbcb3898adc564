"""GGUF releases read by header: the ``.gguf`` files of a Hub repo or a folder, and each one's header.

A GGUF header's length is written nowhere: it ends where its last tensor info does, after string arrays
(a tokenizer's tokens and merges) whose bytes only parsing tells. So a header is read as a stream that
stops where parsing does, never from 0 again: the first range asks ``FIRST_RANGE`` bytes (64 KiB, or
the whole file if smaller), which holds a model file's header whole and gives the parser its counts;
the second asks from where parsing stopped to well past the parser's estimate of the rest
(``gguf.Incomplete``), and is read only until the header is complete, in pieces of at most 16 KiB. A
header thus costs its size plus at most one piece, in 2 ranges in the common case; an estimate that
falls short by more than two thirds is followed by a third, and so on up to ``MAX_READS``: an unusual or
hostile header costs more requests, never a wrong answer. A retried range resumes where parsing stopped.
The first shard of a split is read the same way; every other shard's header is small (llama.cpp's
``gguf-split`` writes the model's metadata into the first only), so the first range holds it.
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
MAX_READS = 24  # ranges a header may take before it is refused (each past twice the last estimate)
SPLIT_NAME = re.compile(r"(?P<stem>.+)-(?P<no>\d{5})-of-(?P<count>\d{5})\.gguf")

# (start, length) -> the bytes of the file from start, at most length of them
Fetch = Callable[[int, int], bytes]
# (start_at, end, take): the file's bytes from start_at() up to end handed to take as they arrive, until
# take returns True; start_at is asked again by a retried attempt, so it resumes where parsing stopped
Stream = Callable[[Callable[[], int], int, Callable[[bytes], bool]], None]
PIECE = 16 << 10  # bytes parsed at a time from a fetched range: what a read may take past the header


def stream_of(fetch: Fetch) -> Stream:
    """A ``Stream`` over a ``Fetch`` (a file on disk, a benchmark's requests): each range fetched whole,
    then handed over a piece at a time."""

    def stream(start_at: Callable[[], int], end: int, take: Callable[[bytes], bool]) -> None:
        start = start_at()
        data = fetch(start, end - start)
        for at in range(0, len(data), PIECE):
            if take(data[at : at + PIECE]):
                return

    return stream


@dataclass(frozen=True)
class HeaderRead:
    """A header and what reading it cost: each range asked as (start, bytes received)."""

    header: GGUFHeader
    ranges: tuple[tuple[int, int], ...]

    @property
    def bytes_read(self) -> int:
        return sum(n for _, n in self.ranges)


def next_range(result: Incomplete) -> int:
    """Bytes to ask for next, from ``result.have``: three times the parser's estimate of the rest and
    256 KiB more. The estimate cannot see metadata not reached yet (after a tokenizer's tokens come
    their types, scores and merges): on real tokenizer headers and 32k-262k-token ones the rest was
    1.2-2.6 times it. Only what parsing uses is taken, so a generous end costs only what the server
    sends ahead before the connection closes (never past the end asked); a short one costs a request."""
    return max(result.need, 3 * result.estimate + (256 << 10))


def read_header(stream: Stream, file_size: int | None, first: int = FIRST_RANGE) -> HeaderRead:
    """The header of one file through ``stream``; GGUFProblem if it is not a valid GGUF header."""
    parser = GGUFParser(file_size)
    ranges: list[tuple[int, int]] = []
    length = first if file_size is None else min(first, file_size)
    result: GGUFHeader | Incomplete | None = None

    def take(piece: bytes) -> bool:
        nonlocal result
        parser.feed(piece)
        result = parser.parse()
        return not isinstance(result, Incomplete)

    while True:
        start = parser.have
        if file_size is not None:
            length = min(length, file_size - start)
        length = min(length, MAX_HEADER_BYTES + 1 - start)
        if length > 0:
            stream(lambda: parser.have, start + length, take)
        ranges.append((start, parser.have - start))
        if parser.have == start:
            raise GGUFProblem(f"file ends inside its GGUF header (at byte {start:,})")
        if isinstance(result, GGUFHeader):
            return HeaderRead(result, tuple(ranges))
        if len(ranges) >= MAX_READS:
            raise GGUFProblem(f"header not complete after {len(ranges)} ranges ({parser.have:,} bytes)")
        assert isinstance(result, Incomplete)
        length = next_range(result)


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
                read = read_header(stream_of(fetch), sizes[path], first=1 << 20)
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

        def stream(
            start_at: Callable[[], int], end: int, take: Callable[[bytes], bool], path: str = path
        ) -> None:
            reader._stream(repo, info.sha, path, start_at, end, take)

        with reading(repo, info.sha, path):
            try:
                read = read_header(stream, size)
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
