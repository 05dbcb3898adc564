"""A snapshot: one model revision as hubdiff sees it, without the weights.

It is immutable per commit sha, which is what makes it cacheable. Its working form is the tensor
patterns (name template x index sets x dtype x shape): a checkpoint of 200,000 tensors has a few dozen,
and every later stage (metrics, diffs, claims) works on them, multiplying by their counts. The tensor
list is still there, rebuilt from the patterns and where each one is stored (``placement``), for
``--json`` and for anything that wants names one by one.

The JSON form (``to_json``) is stable: keys are sorted, tensors are listed in name order, and
``format`` is bumped whenever the layout changes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain, groupby, product, repeat
from operator import itemgetter
from typing import Any, NamedTuple

from . import dtypes
from .patterns import GroupKey, Pattern, format_index_set, group, parse_index_set, patterns_of

SNAPSHOT_FORMAT = 1
COMPACT_FORMAT = 3  # the cache's pattern form (Snapshot.compact); 2 had no hub_parameters
_HEAD = ("source", "revision", "sha", "commit_date", "config", "generation_config", "index_metadata")

# per pattern, in the order of Pattern.names(): runs of (shard number, how many tensors)
Placement = tuple[tuple[tuple[int, int], ...], ...]


class Tensor(NamedTuple):
    name: str
    dtype: str
    shape: tuple[int, ...]
    file: str

    @property
    def elements(self) -> int:
        n = 1
        for dim in self.shape:
            n *= dim
        return n


@dataclass(frozen=True)
class FileEntry:
    path: str
    size: int | None


def _elements(shape: tuple[int, ...]) -> int:
    n = 1
    for dim in shape:
        n *= dim
    return n


def locate(
    names: list[str], dtypes_: list[str], shapes: list[tuple[int, ...]], shards: list[int] | None = None
) -> tuple[list[Pattern], Placement]:
    """Patterns of the tensors, and where each pattern's tensors are stored (runs of shard numbers)."""
    return locate_groups(group(names, dtypes_, shapes, shards))


def locate_groups(groups: dict[GroupKey, dict[tuple[int, ...], int]]) -> tuple[list[Pattern], Placement]:
    """``locate`` from the tensors already grouped (``patterns.group`` or ``patterns.Grouping``)."""
    patterns = patterns_of(groups)
    placement = []
    for p in patterns:
        shard_of = groups[(p.parts, p.dtype, p.shape)]
        runs = groupby(map(shard_of.__getitem__, product(*p.index_sets)))
        placement.append(tuple((shard, len(list(run))) for shard, run in runs))
    return patterns, tuple(placement)


@dataclass(frozen=True)
class Snapshot:
    source: str  # "owner/name" for a Hub repo, the folder path for a local checkout
    revision: str  # as asked for: branch, tag, refs/pr/N or sha ("local" for a folder)
    sha: str  # the commit every request was pinned to ("" for a folder)
    commit_date: str | None
    config: dict[str, Any]
    generation_config: dict[str, Any] | None
    files: tuple[FileEntry, ...]
    index_metadata: dict[str, Any]
    patterns: tuple[Pattern, ...] = ()  # in natural name order (see patterns.compress)
    shards: tuple[str, ...] = ()  # the safetensors files holding tensors, sorted
    placement: Placement = ()  # per pattern: runs of (index into shards, tensor count), names() order
    unknown_dtypes: tuple[str, ...] = field(default=())
    # the Hub's own count of stored elements per dtype (safetensors.parameters), None when not asked
    # or not given: a cross-check of parameters_by_dtype
    hub_parameters: dict[str, int] | None = None

    @classmethod
    def of_tensors(cls, *head: Any, tensors: Iterable[Tensor], **rest: Any) -> Snapshot:
        """A snapshot from a tensor list (baselines, tests, benchmarks); ``head`` as the first fields."""
        rows = list(tensors)
        shards = sorted({t.file for t in rows})
        number = {path: i for i, path in enumerate(shards)}
        patterns, placement = locate(
            [t.name for t in rows],
            [t.dtype for t in rows],
            [tuple(t.shape) for t in rows],
            [number[t.file] for t in rows],
        )
        return cls(*head, tuple(patterns), tuple(shards), placement, **rest)  # type: ignore[call-arg]

    @property
    def label(self) -> str:
        if not self.sha:
            return self.source
        return f"{self.source}@{self.sha[:12]}"

    @property
    def tensor_count(self) -> int:
        return sum(p.count for p in self.patterns)

    def _rows(self) -> list[tuple[str, str, tuple[int, ...], int]]:
        """(name, dtype, shape, shard number) of every tensor, in name order, built at C speed."""
        rows: list[tuple[str, str, tuple[int, ...], int]] = []
        for p, runs in zip(self.patterns, self.placement or [((0, p.count),) for p in self.patterns]):
            shard_numbers = chain.from_iterable(repeat(shard, n) for shard, n in runs)
            rows.extend(zip(p.names(), repeat(p.dtype), repeat(p.shape), shard_numbers))
        rows.sort(key=itemgetter(0))
        return rows

    @cached_property
    def tensors(self) -> tuple[Tensor, ...]:
        """Every tensor, in name order: rebuilt from the patterns on demand (no stage needs it)."""
        shards = self.shards or ("",)
        return tuple(Tensor(n, d, s, shards[i]) for n, d, s, i in self._rows())

    def parameters_by_dtype(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for p in self.patterns:
            out[p.dtype] = out.get(p.dtype, 0) + p.count * _elements(p.shape)
        return dict(sorted(out.items()))

    def tensor_bytes(self) -> int:
        return sum(dtypes.nbytes(p.dtype, p.count * _elements(p.shape)) or 0 for p in self.patterns)

    def _head(self, form: int) -> dict[str, Any]:
        """What the JSON form and the cache's pattern form share."""
        return {
            "format": form,
            **{key: getattr(self, key) for key in _HEAD},
            "shards": list(self.shards),
            "unknown_dtypes": list(self.unknown_dtypes),
            "hub_parameters": self.hub_parameters,
        }

    @classmethod
    def _from_head(
        cls,
        data: dict[str, Any],
        form: int,
        files: Iterable[FileEntry],
        patterns: Iterable[Pattern],
        placement: Placement,
    ) -> Snapshot:
        if data.get("format") != form:
            raise ValueError(f"snapshot format {data.get('format')!r}, expected {form}")
        return cls(
            **{key: data[key] for key in _HEAD},
            files=tuple(files),
            patterns=tuple(patterns),
            shards=tuple(data["shards"]),
            placement=placement,
            unknown_dtypes=tuple(data.get("unknown_dtypes", ())),
            hub_parameters=data.get("hub_parameters"),
        )

    def to_json(self) -> dict[str, Any]:
        """The stable JSON form (``--json``): every tensor as [name, dtype, shape, shard number]."""
        return {
            **self._head(SNAPSHOT_FORMAT),
            "files": [{"path": f.path, "size": f.size} for f in self.files],
            "tensors": self._rows(),  # tuples: JSON arrays, without a list built per tensor
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Snapshot:
        rows = data["tensors"]
        patterns, placement = locate(
            [r[0] for r in rows], [r[1] for r in rows], [tuple(r[2]) for r in rows], [r[3] for r in rows]
        )
        files = (FileEntry(f["path"], f["size"]) for f in data["files"])
        return cls._from_head(data, SNAPSHOT_FORMAT, files, patterns, placement)

    def compact(self) -> dict[str, Any]:
        """The pattern form the cache stores: a few KB where the tensor list is megabytes."""
        return {
            **self._head(COMPACT_FORMAT),
            "files": [[f.path, f.size] for f in self.files],
            "patterns": [
                [list(p.parts), [format_index_set(v) for v in p.index_sets], p.dtype, list(p.shape)]
                for p in self.patterns
            ],
            "placement": [[x for run in runs for x in run] for runs in self.placement],
        }

    @classmethod
    def from_compact(cls, data: dict[str, Any]) -> Snapshot:
        patterns = (
            Pattern(tuple(parts), tuple(parse_index_set(v) for v in sets), dtype, tuple(shape))
            for parts, sets, dtype, shape in data["patterns"]
        )
        placement = tuple(tuple(zip(flat[0::2], flat[1::2])) for flat in data["placement"])
        files = (FileEntry(path, size) for path, size in data["files"])
        return cls._from_head(data, COMPACT_FORMAT, files, patterns, placement)

    def dumps(self) -> str:
        """The JSON form, compact, keys sorted; the tensor list written at C speed (orjson, imported
        here: a warm run that prints text never loads it, ~8 ms)."""
        from ._json import dumps_sorted

        return dumps_sorted(self.to_json(), "tensors")
