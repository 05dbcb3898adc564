"""The reading sequence every source shares, and the assembly of what it read into a Snapshot.

A source only says how to read a file (up to a limit) and how to read a set of headers; which files
make up the model, the size limits and the checks are the same for the Hub and a folder on disk.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from ..errors import SourceError, reading
from ..patterns import Grouping, ShardGroups
from ..snapshot import FileEntry, Snapshot, locate_groups
from .config_bounds import check_config
from .layout import (
    MAX_CONFIG_BYTES,
    MAX_INDEX_BYTES,
    LayoutProblem,
    NameSizes,
    WeightLayout,
    choose_layout,
    parse_json_object,
)

# The smallest header entry a tensor can have besides its quoted name: ':{"dtype":"U8","shape":[],
# "data_offsets":[0,0]},' -- so the sum over the index's names is a lower bound of the header.
_MIN_ENTRY_BYTES = len(':{"dtype":"U8","shape":[],"data_offsets":[0,0]},')
# Before any header is read: bytes an entry takes besides its name, on the generous side. A typical
# ':{"dtype":"BF16","shape":[7168,2048],"data_offsets":[9175040000,9204400128]},' is 78.
FIRST_GUESS_PER_ENTRY = 96.0
# Room left for what the first header did not show (longer shapes or offsets elsewhere).
MARGIN = 1.02
MARGIN_BYTES = 256


# The most the first range asks before the index is read: a header past it (over ~100,000 tensors in
# one shard) is read with a second range for the rest, as any header a range falls short of
FIRST_RANGE_CAP = 16 << 20


def first_range_before_index(index_bytes: int, shards: int) -> int:
    """The first shard's range, asked beside the index (so before it is read): an index entry is a name
    and its shard's file name (~40 bytes besides the name), a header entry the name and ~80 more, so a
    header is about 1.5 times its shard's share of the index. Twice that share covers a first shard
    holding more tensors than the average; a range that falls short is followed by one for the rest.
    The listing's sizes are the repo's word: a huge index over two shards asks at most the cap."""
    return min(8 + math.ceil(2 * index_bytes / max(shards, 1)) + MARGIN_BYTES, FIRST_RANGE_CAP)


@dataclass(frozen=True)
class HeaderHint:
    """What the index says about one shard's header: the bytes of its quoted names, and how many.

    Enough for a lower bound of the header's size (two ranges, exact) and, once one header has shown
    how many bytes an entry takes besides its name, for an estimate that one range nearly always covers.
    """

    shard: str = ""
    sizes: NameSizes | None = None  # None: no index lists this file
    prefix: str = ""  # put before each tensor name: the component's folder, in a multi-folder layout

    @property
    def names(self) -> int:
        return self.sizes.table.get(self.shard, (0, 0))[0] if self.sizes else 0

    @property
    def entries(self) -> int:
        return self.sizes.table.get(self.shard, (0, 0))[1] if self.sizes else 0

    @property
    def lower_bound(self) -> int:
        return 8 + 1 + self.names + self.entries * _MIN_ENTRY_BYTES

    def estimate(self, per_entry: float) -> int:
        """The first range to ask for: the lower bound when the index lists no names for this file."""
        if not self.entries:
            return self.lower_bound
        guess = 8 + 2 + self.names + math.ceil(self.entries * per_entry * MARGIN) + MARGIN_BYTES
        return max(self.lower_bound, guess)

    def per_entry(self, header_bytes: int) -> float:
        """Bytes an entry took besides its name, given this shard's real header size (prefix included)."""
        return (header_bytes - self.names) / self.entries if self.entries else FIRST_GUESS_PER_ENTRY


class ModelFiles(Protocol):
    def read(self, path: str, limit: int) -> bytes:
        """At most ``limit + 1`` bytes of a small file (one more than allowed, so "too big" shows)."""

    def index(self, raw: bytes, file: str, listing: set[str]) -> tuple[dict[str, Any], list[str], NameSizes]:
        """``layout.parse_index`` of an index's bytes, here or where the headers will be parsed."""

    def headers(self, hints: dict[str, HeaderHint]) -> dict[str, ShardGroups]:
        """Each shard's header, parsed and kept as it arrives (``parsing.kept``); ``hints`` says what
        the index tells of each header's size, and the prefix of its names."""


def config_file_of(listing: set[str], layout: WeightLayout) -> str:
    if "config.json" in listing:
        return "config.json"
    if "model_index.json" in listing:  # diffusers pipelines
        return "model_index.json"
    if len(layout.components) == 1 and f"{layout.components[0].folder}/config.json" in listing:
        return f"{layout.components[0].folder}/config.json"
    raise LayoutProblem("config.json", "not found")


def header_hints(sizes: NameSizes, shards: list[str]) -> dict[str, HeaderHint]:
    """Per shard, what the index tells of its header (see HeaderHint)."""
    return {shard: HeaderHint(shard, sizes) for shard in shards}


def read_model(
    files: ModelFiles,
    *,
    source: str,
    revision: str,
    error_revision: str | None,
    sha: str,
    commit_date: str | None,
    sizes: dict[str, int | None],
    headers: bool = True,
    on_config: Callable[[dict[str, Any]], None] | None = None,
) -> Snapshot:
    """Config, generation config, index(es) and headers, in that order, with every check.

    ``on_config`` is given the checked config as soon as it is read, before the headers: the CLI
    decides there whether the metrics will need transformers, and starts importing it while the
    headers are read.
    """
    listing = set(sizes)
    layout = choose_layout(listing) if headers else WeightLayout(())
    try:
        config_file = config_file_of(listing, layout)
        with reading(source, error_revision, config_file):
            raw = files.read(config_file, MAX_CONFIG_BYTES)
            config = parse_json_object(raw, config_file, MAX_CONFIG_BYTES, infinity=True)
            check_config(config, config_file)
        if on_config is not None:
            on_config(config)
        generation_config = None
        if "generation_config.json" in listing:
            with reading(source, error_revision, "generation_config.json"):
                raw = files.read("generation_config.json", MAX_CONFIG_BYTES)
                generation_config = parse_json_object(
                    raw, "generation_config.json", MAX_CONFIG_BYTES, infinity=True
                )
        index_metadata: dict[str, Any] = {}
        hints: dict[str, HeaderHint] = {}
        for component in layout.components:
            if component.index is None:
                hints.update((f, HeaderHint()) for f in component.files)
                continue
            with reading(source, error_revision, component.index):
                metadata = _read_index(files, component.index, listing, hints)
            if layout.prefixed:
                index_metadata[component.folder] = metadata
            else:
                index_metadata = metadata
        if layout.prefixed:
            hints = {f: replace(h, prefix=f.split("/", 1)[0] + "/") for f, h in hints.items()}
        return build_snapshot(
            source=source,
            revision=revision,
            sha=sha,
            commit_date=commit_date,
            config=config,
            generation_config=generation_config,
            files=[FileEntry(p, s) for p, s in sizes.items()],
            layout=layout,
            index_metadata=index_metadata,
            headers=files.headers(hints),
        )
    except LayoutProblem as exc:
        raise SourceError(source, error_revision, exc.file, exc.problem) from None


def _read_index(
    files: ModelFiles, index_file: str, listing: set[str], hints: dict[str, HeaderHint]
) -> dict[str, Any]:
    """The index's metadata; its shards' hints added to ``hints``.

    A function of its own so that the index's bytes (17 MB for 200,000 tensors) are let go before
    the headers are read; its weight_map lives on only in the hints, until their sizes are worked out
    (or not at all here, when a header worker read it).
    """
    raw = files.read(index_file, MAX_INDEX_BYTES)
    metadata, shards, sizes = files.index(raw, index_file, listing)
    hints.update(header_hints(sizes, shards))
    return metadata


def build_snapshot(
    *,
    source: str,
    revision: str,
    sha: str,
    commit_date: str | None,
    config: dict[str, Any],
    generation_config: dict[str, Any] | None,
    files: Iterable[FileEntry],
    layout: WeightLayout,
    index_metadata: dict[str, Any],
    headers: dict[str, ShardGroups],
) -> Snapshot:
    """The snapshot of what was read; ``headers`` is emptied on the way (each is let go once grouped)."""
    shards = [shard for shard in sorted(headers) if headers[shard].count]  # the files holding tensors
    unknown: set[str] = set().union(*(h.unknown_dtypes for h in headers.values()))
    grouping = Grouping()
    for number, shard in enumerate(shards):
        repeated = grouping.add(headers.pop(shard), number)  # each shard's groups let go once added
        if repeated is not None:
            name, earlier = repeated
            raise LayoutProblem(shard, f"tensor {name!r} is also in {shards[earlier]}")
    patterns, placement = locate_groups(grouping.groups)
    return Snapshot(
        source=source,
        revision=revision,
        sha=sha,
        commit_date=commit_date,
        config=config,
        generation_config=generation_config,
        files=tuple(sorted(files, key=lambda f: f.path)),
        index_metadata=index_metadata,
        patterns=tuple(patterns),
        shards=tuple(shards),
        placement=placement,
        unknown_dtypes=tuple(sorted(unknown)),
    )
