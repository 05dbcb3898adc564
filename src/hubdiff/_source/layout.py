"""Which files of a repo make up the model, and the checks on the small JSON files around them.

Shared by every source, so a Hub repo and a local copy of it give the same snapshot.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

MAX_CONFIG_BYTES = 10_000_000
MAX_INDEX_BYTES = 256_000_000

INDEX_SUFFIX = ".safetensors.index.json"


class LayoutProblem(ValueError):
    """What is wrong, in words; ``file`` names the repo file concerned."""

    def __init__(self, file: str | None, problem: str) -> None:
        super().__init__(problem)
        self.file = file
        self.problem = problem


@dataclass(frozen=True)
class Component:
    folder: str  # "" for the repo root
    index: str | None  # an index file, or None when the safetensors files are read directly
    files: tuple[str, ...]  # safetensors files when there is no index


@dataclass(frozen=True)
class WeightLayout:
    components: tuple[Component, ...]

    @property
    def prefixed(self) -> bool:
        """Several component folders: tensor names get ``folder/`` so they cannot collide."""
        return len(self.components) > 1


def _component(folder: str, names: list[str]) -> Component | None:
    join = (lambda n: f"{folder}/{n}") if folder else (lambda n: n)
    indexes = sorted(n for n in names if n.endswith(INDEX_SUFFIX))
    if "model.safetensors.index.json" in indexes:
        return Component(folder, join("model.safetensors.index.json"), ())
    if indexes:
        return Component(folder, join(indexes[0]), ())
    if "model.safetensors" in names:
        return Component(folder, None, (join("model.safetensors"),))
    weights = sorted(n for n in names if n.endswith(".safetensors"))
    if weights:
        return Component(folder, None, tuple(join(n) for n in weights))
    return None


def choose_layout(paths: Iterable[str]) -> WeightLayout:
    """Root weights if there are any, else each top-level folder that holds weights (diffusers-style)."""
    by_folder: dict[str, list[str]] = {}
    for path in paths:
        folder, _, name = path.rpartition("/")
        if folder.count("/") == 0:
            by_folder.setdefault(folder, []).append(name)
    root = _component("", by_folder.get("", []))
    if root is not None:
        return WeightLayout((root,))
    found = [
        c for folder in sorted(by_folder) if folder for c in [_component(folder, by_folder[folder])] if c
    ]
    return WeightLayout(tuple(found))


def safe_member(index_file: str, shard: Any, listing: set[str] | None) -> str:
    """The repo path of a shard named in an index; refuses names that escape the repo."""
    if not isinstance(shard, str) or not shard or "\\" in shard or "\x00" in shard:
        raise LayoutProblem(index_file, f"weight_map names an invalid shard {shard!r}")
    if shard.startswith("/") or any(part in ("..", "") for part in shard.split("/")):
        raise LayoutProblem(index_file, f"weight_map names a shard outside the repo: {shard!r}")
    folder = posixpath.dirname(index_file)
    path = f"{folder}/{shard}" if folder else shard
    if listing is not None and path not in listing:
        raise LayoutProblem(index_file, f"weight_map names {shard!r}, which is not in the repo")
    return path


def parse_json_object(raw: bytes, file: str, limit: int) -> dict[str, Any]:
    if len(raw) > limit:
        raise LayoutProblem(file, f"{len(raw):,} bytes, over the {limit:,}-byte limit for this file")
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        raise LayoutProblem(file, f"not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise LayoutProblem(file, f"JSON but not an object ({type(data).__name__})")
    return data


def parse_index(
    raw: bytes, file: str, listing: set[str] | None
) -> tuple[dict[str, Any], list[str], dict[str, Any]]:
    """The index's ``metadata``, the shards it names (repo paths, sorted, each once) and its weight_map."""
    data = parse_json_object(raw, file, MAX_INDEX_BYTES)
    weight_map = data.get("weight_map")
    if not isinstance(weight_map, dict):
        raise LayoutProblem(file, "no weight_map object")
    metadata = data.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise LayoutProblem(file, "metadata is not an object")
    paths: dict[str, str] = {}
    for shard in weight_map.values():
        key = shard if isinstance(shard, str) else repr(shard)
        if key not in paths:
            paths[key] = safe_member(file, shard, listing)
    return metadata, sorted(set(paths.values())), weight_map
