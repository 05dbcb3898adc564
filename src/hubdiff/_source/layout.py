"""Which files of a repo make up the model, the index that names its shards, and the JSON checks on
both (a config's value bounds are ``config_bounds``').

Shared by every source, so a Hub repo and a local copy of it give the same snapshot.
"""

from __future__ import annotations

import posixpath
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from itertools import groupby
from operator import itemgetter
from typing import Any

from .jsonin import MAX_DEPTH, JSONProblem, check_tree, load_json

MAX_CONFIG_BYTES = 10_000_000
MAX_INDEX_BYTES = 256_000_000

INDEX_SUFFIX = ".safetensors.index.json"


class LayoutProblem(ValueError):
    """What is wrong, in words; ``file`` names the repo file concerned."""

    def __init__(self, file: str | None, problem: str) -> None:
        super().__init__(problem)
        self.file = file
        self.problem = problem

    def __reduce__(self) -> tuple[type[LayoutProblem], tuple[str | None, str]]:
        """Pickled whole: a header worker that reads an index sends one back as raised."""
        return LayoutProblem, (self.file, self.problem)


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


def parse_json_object(
    raw: bytes, file: str, limit: int, max_depth: int | None = MAX_DEPTH, infinity: bool = False
) -> dict[str, Any]:
    if len(raw) > limit:
        raise LayoutProblem(file, f"{len(raw):,} bytes, over the {limit:,}-byte limit for this file")
    try:
        data = load_json(raw, max_depth=max_depth, infinity=infinity)
    except JSONProblem as exc:
        raise LayoutProblem(file, str(exc)) from None
    if not isinstance(data, dict):
        raise LayoutProblem(file, f"JSON but not an object ({type(data).__name__})")
    return data


def parse_index(
    raw: bytes, file: str, listing: set[str] | None
) -> tuple[dict[str, Any], list[str], NameSizes]:
    """The index's ``metadata``, the shards it names (repo paths, sorted, each once) and what it says of
    each shard's names (``NameSizes``, worked out when first asked)."""
    data = parse_json_object(raw, file, MAX_INDEX_BYTES, max_depth=None)
    weight_map = data.get("weight_map")
    if not isinstance(weight_map, dict):
        raise LayoutProblem(file, "no weight_map object")
    metadata = data.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise LayoutProblem(file, "metadata is not an object")
    try:
        check_tree(metadata, MAX_DEPTH - 1)  # the rest of the index is read as flat names and never kept
    except JSONProblem as exc:
        raise LayoutProblem(file, f"metadata {exc}") from None
    paths: dict[str, str] = {}
    try:
        distinct: Iterable[Any] = dict.fromkeys(weight_map.values())  # each shard once, in order, at C speed
    except TypeError:  # a value that is not hashable (a list): one by one
        distinct = weight_map.values()
    for shard in distinct:
        key = shard if isinstance(shard, str) else repr(shard)
        if key not in paths:
            paths[key] = safe_member(file, shard, listing)
    return metadata, sorted(set(paths.values())), NameSizes(weight_map, file)


class NameSizes:
    """Per shard of one index, the bytes of the quoted names it lists and how many: what sizes the
    first range of each header read (``build.HeaderHint``). Worked out once, on first use: a Hub read
    asks (in a header worker, which sends back only this table); a folder on disk never does."""

    def __init__(self, weight_map: dict[str, Any], index_file: str) -> None:
        self.weight_map: dict[str, Any] | None = weight_map
        folder = index_file.rpartition("/")[0]
        self.prefix = f"{folder}/" if folder else ""

    @cached_property
    def table(self) -> dict[str, tuple[int, int]]:
        """Worked out once; the weight_map (tens of MB for 200,000 names) is then let go."""
        weight_map = self.weight_map or {}
        sums: dict[Any, int] = defaultdict(int)
        counts: Counter[Any] = Counter()
        # an index lists each shard's names in a run: per run, one join and one encode at C speed
        for shard, run in groupby(weight_map.items(), key=itemgetter(1)):
            names = list(map(itemgetter(0), run))
            sums[shard] += len("".join(names).encode()) + 2 * len(names)
            counts[shard] += len(names)  # UTF-8 plus two quotes per name: escaping only adds
        self.weight_map = None
        return {
            self.prefix + shard: (n, counts[shard]) for shard, n in sums.items() if isinstance(shard, str)
        }
