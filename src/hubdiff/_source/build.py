"""Put the pieces every source reads together into a Snapshot."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..snapshot import FileEntry, Snapshot, Tensor
from .header import ParsedHeader
from .layout import LayoutProblem, WeightLayout


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
