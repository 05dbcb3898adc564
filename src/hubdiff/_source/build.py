"""The reading sequence every source shares, and the assembly of what it read into a Snapshot.

A source only says how to read a file (up to a limit) and how to read a set of headers; which files
make up the model, the size limits and the checks are the same for the Hub and a folder on disk.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any, Protocol

from ..errors import SourceError, reading
from ..snapshot import FileEntry, Snapshot, Tensor
from .header import ParsedHeader
from .layout import (
    MAX_CONFIG_BYTES,
    MAX_INDEX_BYTES,
    LayoutProblem,
    WeightLayout,
    check_config,
    choose_layout,
    parse_index,
    parse_json_object,
)

# The smallest header entry a tensor can have besides its quoted name: ':{"dtype":"U8","shape":[],
# "data_offsets":[0,0]},' -- so the sum over the index's names is a lower bound of the header.
_MIN_ENTRY_BYTES = len(':{"dtype":"U8","shape":[],"data_offsets":[0,0]},')


class ModelFiles(Protocol):
    def read(self, path: str, limit: int) -> bytes:
        """At most ``limit + 1`` bytes of a small file (one more than allowed, so "too big" shows)."""

    def headers(self, bounds: dict[str, int]) -> dict[str, ParsedHeader]:
        """The parsed header of each shard; ``bounds`` gives a lower bound of each header's size."""


def config_file_of(listing: set[str], layout: WeightLayout) -> str:
    if "config.json" in listing:
        return "config.json"
    if "model_index.json" in listing:  # diffusers pipelines
        return "model_index.json"
    if len(layout.components) == 1 and f"{layout.components[0].folder}/config.json" in listing:
        return f"{layout.components[0].folder}/config.json"
    raise LayoutProblem("config.json", "not found")


def header_lower_bounds(weight_map: dict[str, Any], index_file: str, shards: list[str]) -> dict[str, int]:
    """A lower bound of each shard's header size from the names the index lists for it.

    A name takes at least its UTF-8 bytes plus two quotes (escaping only adds), and each entry at least
    ``_MIN_ENTRY_BYTES`` more; the 8-byte length prefix and the braces are added once.
    """
    folder = index_file.rpartition("/")[0]
    sums: dict[str, int] = defaultdict(int)
    for name, shard in weight_map.items():
        sums[shard] += len(name.encode()) + 2 + _MIN_ENTRY_BYTES
    prefix = f"{folder}/" if folder else ""
    by_path = {prefix + shard: n for shard, n in sums.items() if isinstance(shard, str)}
    return {shard: 8 + 1 + by_path.get(shard, 0) for shard in shards}


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
) -> Snapshot:
    """Config, generation config, index(es) and headers, in that order, with every check."""
    listing = set(sizes)
    layout = choose_layout(listing) if headers else WeightLayout(())
    try:
        config_file = config_file_of(listing, layout)
        with reading(source, error_revision, config_file):
            raw = files.read(config_file, MAX_CONFIG_BYTES)
            config = parse_json_object(raw, config_file, MAX_CONFIG_BYTES, infinity=True)
            check_config(config, config_file)
        generation_config = None
        if "generation_config.json" in listing:
            with reading(source, error_revision, "generation_config.json"):
                raw = files.read("generation_config.json", MAX_CONFIG_BYTES)
                generation_config = parse_json_object(
                    raw, "generation_config.json", MAX_CONFIG_BYTES, infinity=True
                )
        index_metadata: dict[str, Any] = {}
        bounds: dict[str, int] = {}
        for component in layout.components:
            if component.index is None:
                bounds.update((f, 8) for f in component.files)
                continue
            with reading(source, error_revision, component.index):
                raw = files.read(component.index, MAX_INDEX_BYTES)
                metadata, shards, weight_map = parse_index(raw, component.index, listing)
            if layout.prefixed:
                index_metadata[component.folder] = metadata
            else:
                index_metadata = metadata
            bounds.update(header_lower_bounds(weight_map, component.index, shards))
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
            headers=files.headers(bounds),
        )
    except LayoutProblem as exc:
        raise SourceError(source, error_revision, exc.file, exc.problem) from None


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
    headers: dict[str, ParsedHeader],
) -> Snapshot:
    prefix_of = {}
    if layout.prefixed:
        for shard in headers:
            prefix_of[shard] = shard.split("/", 1)[0] + "/"
    seen: dict[str, str] = {}
    tensors: list[Tensor] = []
    unknown: set[str] = set()
    for shard in sorted(headers):
        parsed = headers[shard]
        unknown |= parsed.unknown_dtypes
        prefix = prefix_of.get(shard, "")
        for t in parsed.tensors:
            name = prefix + t.name if prefix else t.name
            other = seen.get(name)
            if other is not None:
                raise LayoutProblem(shard, f"tensor {name!r} is also in {other}")
            seen[name] = shard
            tensors.append(Tensor(name, t.dtype, t.shape, shard) if prefix else t)
    tensors.sort(key=lambda t: t.name)
    return Snapshot(
        source=source,
        revision=revision,
        sha=sha,
        commit_date=commit_date,
        config=config,
        generation_config=generation_config,
        files=tuple(sorted(files, key=lambda f: f.path)),
        index_metadata=index_metadata,
        tensors=tuple(tensors),
        unknown_dtypes=tuple(sorted(unknown)),
    )
