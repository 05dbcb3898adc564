"""Tensor-layout changes, computed on sets of names and shown as patterns.

Comparing two 200,000-entry dicts with deepdiff takes seconds and hundreds of MB; set differences on
``{name: (dtype, shape)}`` take a fraction of a second, and the results are compressed with the same
pattern notation as snapshots. For each name template touched (indices as ``*``), the report gives
how many tensors and which layers carry it before and after: "indexer tensors in 79 layers -> 22".

A new layout often moves the whole text model under a new prefix (``model.`` ->
``language_model.model.`` when a vision tower joins). Reported name by name, that is tens of thousands
of "removed" and "added" tensors hiding the few that matter, so prefix renames are detected first
(the old and new names that agree after a prefix, weighted by how many tensors agree) and names are
aligned through them: the rename is one line, and a tensor whose shape changed under it is reported as
reshaped (``kv_a_proj_with_mqa [576, 6144] -> [512, 4096]``).

When most names still differ after that, templates are also matched by their tail after the layer
index; a tail found once on each side whose dtype or shape differs is a "shape change across models".
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from itertools import product

from .._gc import gc_paused
from ..patterns import GroupKey, Pattern, compress, format_index_set, patterns_of, split_name
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
class PrefixRename:
    old: str  # "model."
    new: str  # "language_model.model."
    count: int  # old tensors under the old prefix, compared under the new one
    matched: int  # of those, found under the new prefix with the same rest of the name


@dataclass(frozen=True)
class TensorDiff:
    added: tuple[Pattern, ...]
    removed: tuple[Pattern, ...]  # under their old names
    changed: tuple[ShapeChange, ...]  # under their new names
    templates: tuple[TemplateChange, ...]  # old names aligned through the renames
    cross_model: tuple[CrossShape, ...]
    old_count: int
    new_count: int
    renames: tuple[PrefixRename, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)


def _template_stats(names: list[str], templates: set[str]) -> dict[str, tuple[int, set[int]]]:
    """For the given name templates: how many names match, and the values of their first index.

    Only names ending like some template are split, so a diff touching a few templates of a
    200,000-tensor checkpoint does not split every name.
    """
    suffixes = tuple({t.rsplit("*", 1)[-1] for t in templates})
    out: dict[str, tuple[int, set[int]]] = {t: (0, set()) for t in templates}
    for name in names:
        if not name.endswith(suffixes):
            continue
        parts, indices = split_name(name)
        key = "*".join(parts)
        if key in out:
            count, first = out[key]
            if indices:
                first.add(indices[0])
            out[key] = (count + 1, first)
    return out


def _tail(template: str) -> str:
    return template.split("*", 1)[1].lstrip(".") if "*" in template else template


def _describe(dtype: str, shape: tuple[int, ...]) -> str:
    return f"{dtype} [{', '.join(map(str, shape))}]"


def diff_tensors(old: Snapshot, new: Snapshot) -> TensorDiff:
    with gc_paused():
        return _diff(old, new)


MAX_RENAMES = 4
MIN_TEMPLATE_SHARE = 0.5  # of the moved name templates found again: below this, suffixes met by chance


def _template(name: str) -> str:
    return "*".join(split_name(name)[0])


def _best_rename(gone: set[str], came: set[str]) -> tuple[str, str] | None:
    """The (old prefix, new prefix) under which most vanished tensors reappear, by name template.

    Each vanished template votes, with its tensor count, for the prefixes of the longest dotted tail
    (two segments at least, the old prefix never empty) that some new template ends with.
    """
    gone_templates = Counter(_template(n) for n in gone)
    by_tail: dict[str, set[str]] = defaultdict(set)
    for template in {_template(n) for n in came}:
        segments = template.split(".")
        for k in range(len(segments) - 1):
            by_tail[".".join(segments[k:])].add(".".join(segments[:k]))
    votes: Counter[tuple[str, str]] = Counter()
    for template, count in gone_templates.items():
        segments = template.split(".")
        for k in range(1, len(segments) - 1):
            old_prefix = ".".join(segments[:k]) + "."
            if "*" in old_prefix:
                break
            prefixes = by_tail.get(".".join(segments[k:]))
            if prefixes:
                for prefix in prefixes:
                    new_prefix = prefix + "." if prefix else ""
                    if "*" not in new_prefix and new_prefix != old_prefix:
                        votes[(old_prefix, new_prefix)] += count
                break
    return votes.most_common(1)[0][0] if votes else None


def _align(before: dict[str, object], after: dict[str, object]) -> tuple[dict[str, str], list[PrefixRename]]:
    """Old name -> name it is compared under, and the prefix renames that explain the differences."""
    aligned = {n: n for n in before}
    gone, came = set(before) - set(after), set(after) - set(before)
    renames: list[PrefixRename] = []
    for _ in range(MAX_RENAMES):
        if not gone or not came:
            break
        best = _best_rename(gone, came)
        if best is None:
            break
        old_prefix, new_prefix = best
        moved = {
            n: new_prefix + n[len(old_prefix) :]
            for n in gone
            if n.startswith(old_prefix) and new_prefix + n[len(old_prefix) :] not in before
        }
        found = {n for n, m in moved.items() if m in came}
        moved_templates = {_template(m) for m in moved.values()}
        came_templates = {_template(n) for n in came}
        if len(found) < 2 or len(moved_templates & came_templates) < MIN_TEMPLATE_SHARE * len(
            moved_templates
        ):
            break
        renames.append(PrefixRename(old_prefix, new_prefix, len(moved), len(found)))
        for name, target in moved.items():
            aligned[name] = target
        gone -= set(moved)
        came -= {moved[n] for n in found}
    return aligned, renames


def _diff(old: Snapshot, new: Snapshot) -> TensorDiff:
    """Set differences per group (name template x dtype x shape), never name by name, unless names
    both vanished and appeared: only then can a prefix rename explain them, and that needs the names.

    A group whose patterns are the same on both sides is skipped whole; the others are compared as
    sets of index tuples. A name that left one group and joined another of the same template changed
    dtype or shape. With nothing both removed and added, ``_align`` finds no rename, so this is what
    ``_diff_by_name`` gives (tests/test_pattern_form.py checks it).
    """
    before, after = _by_group(old.patterns), _by_group(new.patterns)
    gone: dict[GroupKey, set[tuple[int, ...]]] = {}
    came: dict[GroupKey, set[tuple[int, ...]]] = {}
    for key in before.keys() | after.keys():
        a, b = before.get(key, []), after.get(key, [])
        if a == b:
            continue
        left, joined = _minus(a, b), _minus(b, a)
        if left:
            gone[key] = left
        if joined:
            came[key] = joined
    came_by_parts: dict[tuple[str, ...], list[GroupKey]] = defaultdict(list)
    for key in came:
        came_by_parts[key[0]].append(key)
    by_change: dict[tuple[str, tuple[int, ...]], dict[GroupKey, set[tuple[int, ...]]]] = defaultdict(dict)
    for key in list(gone):
        for other in came_by_parts.get(key[0], ()):
            moved = gone[key] & came[other]
            if moved:
                by_change[(key[1], key[2])][other] = moved
                gone[key] -= moved
                came[other] -= moved
    removed = patterns_of({k: v for k, v in gone.items() if v})
    added = patterns_of({k: v for k, v in came.items() if v})
    if removed and added:
        return _diff_by_name(old, new)
    changed = [
        ShapeChange(p, dtype, shape) for (dtype, shape), rows in by_change.items() for p in patterns_of(rows)
    ]
    changed.sort(key=lambda c: c.pattern.name)
    touched = {p.template for p in (*removed, *added)} | {c.pattern.template for c in changed}
    old_t, new_t = _template_counts(old.patterns, touched), _template_counts(new.patterns, touched)
    templates = [
        TemplateChange(
            key,
            old_t[key][0],
            new_t[key][0],
            format_index_set(old_t[key][1]) if old_t[key][1] else "",
            format_index_set(new_t[key][1]) if new_t[key][1] else "",
        )
        for key in sorted(touched)
    ]
    return TensorDiff(
        tuple(added), tuple(removed), tuple(changed), tuple(templates), (), old.tensor_count, new.tensor_count
    )


def _template_counts(patterns: tuple[Pattern, ...], templates: set[str]) -> dict[str, tuple[int, set[int]]]:
    """``_template_stats`` from patterns: per template, how many names and the values of the first index."""
    out: dict[str, tuple[int, set[int]]] = {t: (0, set()) for t in templates}
    for p in patterns:
        if p.template in out:
            count, first = out[p.template]
            if p.index_sets:
                first.update(p.index_sets[0])
            out[p.template] = (count + p.count, first)
    return out


def _by_group(patterns: tuple[Pattern, ...]) -> dict[GroupKey, list[Pattern]]:
    out: dict[GroupKey, list[Pattern]] = defaultdict(list)
    for p in patterns:
        out[(p.parts, p.dtype, p.shape)].append(p)
    return out


def _tuples(patterns: list[Pattern]) -> set[tuple[int, ...]]:
    out: set[tuple[int, ...]] = set()
    for p in patterns:
        out.update(product(*p.index_sets))
    return out


Box = tuple[frozenset[int], ...]  # a cartesian product of index sets
MAX_BOXES = 4_096  # pieces of a difference past which the index tuples are compared instead


def _minus(a: list[Pattern], b: list[Pattern]) -> set[tuple[int, ...]]:
    """The index tuples of ``a``'s patterns that ``b``'s lack (one group: same template, dtype, shape).

    Worked out on the products, never on the tuples they stand for: each product of ``a`` minus each
    of ``b``, by ``_box_minus``, and only what is left is written out; 13 removed experts of a
    66,560-tensor grid cost 13 tuples, not 133,120. Should the pieces multiply (index sets that are
    no grid at all), the tuples are compared after all.
    """
    boxes = [tuple(map(frozenset, p.index_sets)) for p in a]
    for q in b:
        cut = tuple(map(frozenset, q.index_sets))
        boxes = [piece for box in boxes for piece in _box_minus(box, cut)]
        if len(boxes) > MAX_BOXES:
            return _tuples(a) - _tuples(b)
    return {t for box in boxes for t in product(*box)}


def _box_minus(p: Box, q: Box) -> list[Box]:
    """p minus q as disjoint products: for each position i, the part of p that agrees with q before i
    and leaves it at i (empty positions yield nothing; a p that misses q is itself)."""
    common = [x & y for x, y in zip(p, q)]
    if not all(common):
        return [p]
    return [(*common[:i], p[i] - q[i], *p[i + 1 :]) for i in range(len(p)) if p[i] - q[i]]


def _diff_by_name(old: Snapshot, new: Snapshot) -> TensorDiff:
    """Name by name, with prefix renames aligned first: when tensors both vanished and appeared."""
    original = {t.name: (t.dtype, t.shape) for t in old.tensors}
    after = {t.name: (t.dtype, t.shape) for t in new.tensors}
    aligned, renames = _align(original, after)
    before = {aligned[n]: v for n, v in original.items()}
    old_name = {a: n for n, a in aligned.items()}
    common = before.keys() & after.keys()
    removed = compress((old_name[n], *before[n]) for n in before.keys() - common)
    added = compress((n, *after[n]) for n in after.keys() - common)
    by_change: dict[tuple[str, tuple[int, ...]], list[tuple[str, str, tuple[int, ...]]]] = defaultdict(list)
    for name in common:
        if before[name] != after[name]:
            by_change[before[name]].append((name, *after[name]))
    changed = [
        ShapeChange(p, dtype, shape) for (dtype, shape), rows in by_change.items() for p in compress(rows)
    ]
    changed.sort(key=lambda c: c.pattern.name)

    touched = {p.template for p in added} | {c.pattern.template for c in changed}
    touched |= (
        {p.template for p in removed} if not renames else {_template(n) for n in before.keys() - common}
    )
    old_t, new_t = _template_stats(list(before), touched), _template_stats(list(after), touched)
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
    gone, came = (
        len(before) - len(before.keys() & after.keys()),
        len(after) - len(before.keys() & after.keys()),
    )
    different_models = gone > len(before) // 2 and came > len(after) // 2  # most names differ: match by tail
    cross = _cross_model(old, new) if different_models else []
    reshaped_tails = {_tail(c.pattern.template) for c in changed}
    cross = [x for x in cross if x.tail not in reshaped_tails]  # already a reshape through a rename
    return TensorDiff(
        tuple(added),
        tuple(removed),
        tuple(changed),
        tuple(templates),
        tuple(cross),
        len(before),
        len(after),
        tuple(renames),
    )


def _cross_model(old: Snapshot, new: Snapshot) -> list[CrossShape]:
    def by_tail(snapshot: Snapshot, keys: set[str]) -> dict[str, set[str]]:
        out: dict[str, set[str]] = defaultdict(set)
        for p in snapshot.patterns:
            if p.template in keys:
                out[_tail(p.template)].add(_describe(p.dtype, p.shape))
        return out

    old_templates = {p.template for p in old.patterns}
    new_templates = {p.template for p in new.patterns}
    a, b = by_tail(old, old_templates - new_templates), by_tail(new, new_templates - old_templates)
    out = []
    for tail in sorted(a.keys() & b.keys()):
        if len(a[tail]) == 1 and len(b[tail]) == 1 and a[tail] != b[tail]:
            out.append(CrossShape(tail, next(iter(a[tail])), next(iter(b[tail]))))
    return out
