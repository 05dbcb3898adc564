"""Tensor-layout changes, computed on sets of names and shown as patterns.

Comparing two 200,000-entry dicts with deepdiff takes seconds and hundreds of MB; set differences on
``{name: (dtype, shape)}`` take a fraction of a second, and the results are compressed with the same
pattern notation as snapshots. For each name template touched (indices as ``*``), the report gives
how many tensors and which layers carry it before and after: "indexer tensors in 79 layers -> 22".

Two different models rarely share names (``model.layers`` vs ``language_model.model.layers``), so
templates are also matched by their tail after the layer index; a tail found once on each side whose
dtype or shape differs is a "shape change across models" (``kv_a_proj_with_mqa [576, 6144] -> [512, 4096]``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from ..patterns import Pattern, compress, format_index_set, split_name
from ..snapshot import Snapshot


@dataclass(frozen=True)
class ShapeChange:
    pattern: Pattern  # names (with the new dtype and shape)
    old_dtype: str
    old_shape: tuple[int, ...]


@dataclass(frozen=True)
class TemplateChange:
    template: str  # e.g. "model.layers.*.self_attn.indexer.wk.weight"
    old_count: int
    new_count: int
    old_layers: str  # index set of the first index position, "" when the name has none
    new_layers: str


@dataclass(frozen=True)
class CrossShape:
    tail: str  # e.g. "self_attn.kv_a_proj_with_mqa.weight"
    old: str  # "BF16 [576, 6144]"
    new: str


@dataclass(frozen=True)
class TensorDiff:
    added: tuple[Pattern, ...]
    removed: tuple[Pattern, ...]
    changed: tuple[ShapeChange, ...]
    templates: tuple[TemplateChange, ...]
    cross_model: tuple[CrossShape, ...]
    old_count: int
    new_count: int

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)


def _template_index(snapshot: Snapshot) -> dict[str, tuple[int, set[int]]]:
    out: dict[str, list] = {}
    for t in snapshot.tensors:
        parts, indices = split_name(t.name)
        key = "*".join(parts)
        entry = out.setdefault(key, [0, set()])
        entry[0] += 1
        if indices:
            entry[1].add(indices[0])
    return {k: (v[0], v[1]) for k, v in out.items()}


def _tail(template: str) -> str:
    return template.split("*", 1)[1].lstrip(".") if "*" in template else template


def _describe(dtype: str, shape: tuple[int, ...]) -> str:
    return f"{dtype} [{', '.join(map(str, shape))}]"


def diff_tensors(old: Snapshot, new: Snapshot) -> TensorDiff:
    before = {t.name: (t.dtype, t.shape) for t in old.tensors}
    after = {t.name: (t.dtype, t.shape) for t in new.tensors}
    removed = compress((n, *before[n]) for n in before.keys() - after.keys())
    added = compress((n, *after[n]) for n in after.keys() - before.keys())
    by_change: dict[tuple[str, tuple[int, ...]], list[tuple[str, str, tuple[int, ...]]]] = defaultdict(list)
    for name in before.keys() & after.keys():
        if before[name] != after[name]:
            by_change[before[name]].append((name, *after[name]))
    changed = [
        ShapeChange(p, dtype, shape) for (dtype, shape), rows in by_change.items() for p in compress(rows)
    ]
    changed.sort(key=lambda c: c.pattern.name)

    old_t, new_t = _template_index(old), _template_index(new)
    touched = {_template(p) for p in (*removed, *added)} | {_template(c.pattern) for c in changed}
    templates = []
    for key in sorted(touched):
        a, b = old_t.get(key, (0, set())), new_t.get(key, (0, set()))
        templates.append(
            TemplateChange(
                key,
                a[0],
                b[0],
                format_index_set(a[1]) if a[1] else "",
                format_index_set(b[1]) if b[1] else "",
            )
        )
    cross = _cross_model(old, new, set(old_t) - set(new_t), set(new_t) - set(old_t))
    return TensorDiff(
        tuple(added), tuple(removed), tuple(changed), tuple(templates), tuple(cross), len(before), len(after)
    )


def _template(pattern: Pattern) -> str:
    return "*".join(pattern.parts)


def _cross_model(old: Snapshot, new: Snapshot, only_old: set[str], only_new: set[str]) -> list[CrossShape]:
    def by_tail(snapshot: Snapshot, keys: set[str]) -> dict[str, set[str]]:
        out: dict[str, set[str]] = defaultdict(set)
        for t in snapshot.tensors:
            parts, _ = split_name(t.name)
            key = "*".join(parts)
            if key in keys:
                out[_tail(key)].add(_describe(t.dtype, t.shape))
        return out

    if not only_old or not only_new:
        return []
    a, b = by_tail(old, only_old), by_tail(new, only_new)
    out = []
    for tail in sorted(a.keys() & b.keys()):
        if len(a[tail]) == 1 and len(b[tail]) == 1 and a[tail] != b[tail]:
            out.append(CrossShape(tail, next(iter(a[tail])), next(iter(b[tail]))))
    return out
