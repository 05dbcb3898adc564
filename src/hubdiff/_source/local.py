"""A checkpoint folder on disk, read the way the Hub is read: config, index, header bytes only."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import SourceError
from ..snapshot import FileEntry, Snapshot
from .build import build_snapshot
from .header import HeaderProblem, ParsedHeader, header_length, parse_header
from .layout import (
    MAX_CONFIG_BYTES,
    MAX_INDEX_BYTES,
    LayoutProblem,
    WeightLayout,
    choose_layout,
    parse_index,
    parse_json_object,
)


def _listing(root: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in names:
            path = Path(folder, name)
            if path.is_file():
                out[path.relative_to(root).as_posix()] = path.stat().st_size
    return out


def _read_limited(path: Path, limit: int) -> bytes:
    with path.open("rb") as fh:
        return fh.read(limit + 1)


def read_header(path: Path, file: str, size: int) -> ParsedHeader:
    with path.open("rb") as fh:
        length = header_length(fh.read(8), size)
        return parse_header(fh.read(length), file, size)


def load_local(folder: str, headers: bool = True) -> Snapshot:
    root = Path(folder)
    where = str(folder)
    if not root.is_dir():
        raise SourceError(where, None, None, "no such folder")
    sizes = _listing(root)
    layout = choose_layout(sizes) if headers else WeightLayout(())
    config_file = "config.json"
    if config_file not in sizes and len(layout.components) == 1 and layout.components[0].folder:
        config_file = f"{layout.components[0].folder}/config.json"
    try:
        if config_file not in sizes:
            raise LayoutProblem(config_file, "not found")
        config = parse_json_object(
            _read_limited(root / config_file, MAX_CONFIG_BYTES), config_file, MAX_CONFIG_BYTES
        )
        generation_config: dict[str, Any] | None = None
        if "generation_config.json" in sizes:
            raw = _read_limited(root / "generation_config.json", MAX_CONFIG_BYTES)
            generation_config = parse_json_object(raw, "generation_config.json", MAX_CONFIG_BYTES)
        index_metadata: dict[str, Any] = {}
        shards: list[str] = []
        for component in layout.components:
            if component.index:
                raw = _read_limited(root / component.index, MAX_INDEX_BYTES)
                metadata, named, _ = parse_index(raw, component.index, set(sizes))
                if layout.prefixed:
                    index_metadata[component.folder] = metadata
                else:
                    index_metadata = metadata
                shards.extend(named)
            else:
                shards.extend(component.files)
    except LayoutProblem as exc:
        raise SourceError(where, None, exc.file, exc.problem) from None
    headers: dict[str, ParsedHeader] = {}
    for shard in shards:
        try:
            headers[shard] = read_header(root / shard, shard, sizes[shard])
        except HeaderProblem as exc:
            raise SourceError(where, None, shard, str(exc)) from None
    try:
        return build_snapshot(
            source=where,
            revision="local",
            sha="",
            commit_date=None,
            config=config,
            generation_config=generation_config,
            files=[FileEntry(p, s) for p, s in sizes.items()],
            layout=layout,
            index_metadata=index_metadata,
            headers=headers,
        )
    except LayoutProblem as exc:
        raise SourceError(where, None, exc.file, exc.problem) from None
