"""Tensor-layout changes, computed on patterns and shown as patterns.

Comparing two 200,000-entry dicts with deepdiff takes seconds and hundreds of MB. Here each side is its
groups (name template x dtype x shape), and each group's index tuples are kept as the products of index
sets its patterns are: differences and intersections are worked out box by box, and only what is left
is written out as patterns (a removed expert costs its own few tuples, not the grid's). For each name
template touched (indices as ``*``), the report gives how many tensors and which layers carry it before
and after: "indexer tensors in 79 layers -> 22".

A new layout often moves the whole text model under a new prefix (``model.`` ->
``language_model.model.`` when a vision tower joins). Reported name by name, that is tens of thousands
of "removed" and "added" tensors hiding the few that matter, so prefix renames are detected first, on
the templates (the old and new templates that agree after a prefix, weighted by how many tensors they
hold), and the vanished groups are compared under the new prefix: the rename is one line, and a tensor
whose shape changed under it is reported as reshaped (``kv_a_proj_with_mqa [576, 6144] -> [512, 4096]``).
No name is built, split or compared on the way (the founding diff: 4 s name by name, 3 ms on patterns);
the tests hold it to a reference that does it name by name (``tests/tensor_reference.py``).

When most names still differ after that, templates are also matched by their tail after the layer
index; a tail found once on each side whose dtype or shape differs is a "shape change across models".
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import product
from math import prod

from .._gc import gc_paused
from ..patterns import GroupKey, Pattern, format_index_set, ordered, patterns_of
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


def _tail(template: str) -> str:
    return template.split("*", 1)[1].lstrip(".") if "*" in template else template


def _describe(dtype: str, shape: tuple[int, ...]) -> str:
    return f"{dtype} [{', '.join(map(str, shape))}]"


def diff_tensors(old: Snapshot, new: Snapshot) -> TensorDiff:
    with gc_paused():
        return _diff(old, new)


MAX_RENAMES = 4
MIN_TEMPLATE_SHARE = 0.5  # of the moved name templates found again: below this, suffixes met by chance


def _template(parts: tuple[str, ...]) -> str:
    return "*".join(parts)


def _best_rename(gone: Mapping[str, int], came: Iterable[str]) -> tuple[str, str] | None:
    """The (old prefix, new prefix) under which most vanished tensors reappear, by name template.

    ``gone`` counts the vanished tensors per template, ``came`` holds the templates of the new ones.
    Each vanished template votes, with its tensor count, for the prefixes of the longest dotted tail
    (two segments at least, the old prefix never empty) that some new template ends with. Templates
    and prefixes are taken in sorted order, so that a tie goes the same way in every run.
    """
    by_tail: dict[str, set[str]] = defaultdict(set)
    for template in came:
        segments = template.split(".")
        for k in range(len(segments) - 1):
            by_tail[".".join(segments[k:])].add(".".join(segments[:k]))
    votes: Counter[tuple[str, str]] = Counter()
    for template in sorted(gone):
        segments = template.split(".")
        for k in range(1, len(segments) - 1):
            old_prefix = ".".join(segments[:k]) + "."
            if "*" in old_prefix:
                break
            prefixes = by_tail.get(".".join(segments[k:]))
            if prefixes:
                for prefix in sorted(prefixes):
                    new_prefix = prefix + "." if prefix else ""
                    if "*" not in new_prefix and new_prefix != old_prefix:
                        votes[(old_prefix, new_prefix)] += gone[template]
                break
    return votes.most_common(1)[0][0] if votes else None


# -- sets of index tuples, kept as products --------------------------------------------------------

Box = tuple[frozenset[int], ...]  # a cartesian product of index sets (never empty: each set has a value)
# One group's set of index tuples: disjoint boxes, or the tuples written out once boxes would multiply
Indices = list[Box] | set[tuple[int, ...]]
MAX_BOXES = 4_096  # pieces of a difference past which the index tuples are compared instead
MAX_WORK = 65_536  # box operations one difference or intersection may take before it writes them out


def _boxes(patterns: Iterable[Pattern]) -> list[Box]:
    return [tuple(map(frozenset, p.index_sets)) for p in patterns]


def _tuples(boxes: Iterable[Sequence[Iterable[int]]]) -> set[tuple[int, ...]]:
    """Every index tuple of some boxes (or patterns' index sets): what a difference falls back to."""
    out: set[tuple[int, ...]] = set()
    for box in boxes:
        out.update(product(*box))
    return out


def _written(s: Indices) -> set[tuple[int, ...]]:
    return s if isinstance(s, set) else {t for box in s for t in product(*box)}


def _count(s: Indices) -> int:
    return len(s) if isinstance(s, set) else sum(prod(map(len, box)) for box in s)


def _firsts(s: Indices) -> set[int]:
    """The values of the first index position (the layer, in a layer's tensor)."""
    if isinstance(s, set):
        return {t[0] for t in s if t}
    out: set[int] = set()
    for box in s:
        if box:
            out |= box[0]
    return out


def _difference(a: Indices, b: Indices) -> Indices:
    """``a`` minus ``b``, on the products: each box of ``a`` minus each of ``b`` (``_box_minus``).

    13 removed experts of a 66,560-tensor grid cost 13 tuples' worth of boxes, not 133,120 tuples.
    Should the pieces multiply (index sets that are no grid at all), the tuples are compared instead.
    """
    if not a or not b:
        return a
    if isinstance(a, set) or isinstance(b, set):
        return _written(a) - _written(b)
    boxes, work = a, 0
    for q in b:
        work += len(boxes)
        boxes = [piece for box in boxes for piece in _box_minus(box, q)]
        if len(boxes) > MAX_BOXES or work > MAX_WORK:
            return _tuples(a) - _tuples(b)
    return boxes


def _intersection(a: Indices, b: Indices) -> Indices:
    """``a`` and ``b``: disjoint boxes meet in disjoint boxes, one per pair that overlaps."""
    if not a or not b:
        return []
    if isinstance(a, set) or isinstance(b, set) or len(a) * len(b) > MAX_WORK:
        return _written(a) & _written(b)
    out: list[Box] = []
    for p in a:
        for q in b:
            common = tuple(x & y for x, y in zip(p, q))
            if all(common):
                out.append(common)
    return out


def _union(a: Indices, b: Indices) -> Indices:
    """Two disjoint sets together."""
    if not a:
        return b
    if not b:
        return a
    if isinstance(a, set) or isinstance(b, set):
        return _written(a) | _written(b)
    return [*a, *b]


def _minus(a: list[Pattern], b: list[Pattern]) -> set[tuple[int, ...]]:
    """The index tuples of ``a``'s patterns that ``b``'s lack (one group: same template, dtype, shape)."""
    return _written(_difference(_boxes(a), _boxes(b)))


def _box_minus(p: Box, q: Box) -> list[Box]:
    """p minus q as disjoint products: for each position i, the part of p that agrees with q before i
    and leaves it at i (empty positions yield nothing; a p that misses q is itself)."""
    common = [x & y for x, y in zip(p, q)]
    if not all(common):
        return [p]
    return [(*common[:i], p[i] - q[i], *p[i + 1 :]) for i in range(len(p)) if p[i] - q[i]]


def _patterns(sets: Mapping[GroupKey, Indices]) -> list[Pattern]:
    """Each group's index tuples as patterns, exactly as ``patterns.compress`` gives them for its names.

    A set that is one box is one full grid, which is what ``patterns_of`` makes of a full grid; any
    other set is written out and split into products by ``patterns_of`` itself.
    """
    out: list[Pattern] = []
    written: dict[GroupKey, set[tuple[int, ...]]] = {}
    for key, s in sets.items():
        if isinstance(s, list) and len(s) == 1:
            out.append(Pattern(key[0], tuple(tuple(sorted(v)) for v in s[0]), key[1], key[2]))
        elif s:
            written[key] = _written(s)
    out.extend(patterns_of(written))
    return ordered(out)


# -- the diff ---------------------------------------------------------------------------------------


@dataclass
class _Move:
    """Tensors of one old group compared under a renamed prefix, and those found there."""

    key: GroupKey  # the old group
    target: tuple[str, ...]  # the name template's parts under the new prefix
    moved: Indices
    found: Indices = field(default_factory=list)


def _diff(old: Snapshot, new: Snapshot) -> TensorDiff:
    """Set differences per group (name template x dtype x shape) of index tuples kept as products; the
    names themselves are never built, split or compared.

    A group whose patterns are the same on both sides is skipped whole; the others are compared box by
    box. A name that left one group and joined another of the same template changed dtype or shape.
    When names both vanished and appeared, prefix renames are found on the templates (``_align``) and
    the vanished groups compared under the new prefix, box by box again. ``_diff_by_name`` is the
    name-by-name reference this equals (tests/test_pattern_form.py, tests/test_tensor_diff.py).
    """
    before, after = _by_group(old.patterns), _by_group(new.patterns)
    gone: dict[GroupKey, Indices] = {}
    came: dict[GroupKey, Indices] = {}
    for key in before.keys() | after.keys():
        a, b = before.get(key, []), after.get(key, [])
        if a == b:
            continue
        boxes_a, boxes_b = _boxes(a), _boxes(b)
        left, joined = _difference(boxes_a, boxes_b), _difference(boxes_b, boxes_a)
        if left:
            gone[key] = left
        if joined:
            came[key] = joined
    by_change: dict[tuple[str, tuple[int, ...]], dict[GroupKey, Indices]] = defaultdict(dict)
    for key, other, moved in _matches(gone, came, {k: k[0] for k in gone}):
        _record(by_change, key, other, moved)
    renames, moves, pairs = _align(before, gone, came)
    for key, other, found in pairs:
        _record(by_change, key, other, found)
    removed_sets: dict[GroupKey, Indices] = dict(gone)
    for move in moves:
        removed_sets[move.key] = _union(removed_sets.get(move.key, []), _difference(move.moved, move.found))
    removed, added = _patterns(removed_sets), _patterns(came)
    changed = [
        ShapeChange(p, dtype, shape) for (dtype, shape), rows in by_change.items() for p in _patterns(rows)
    ]
    changed.sort(key=lambda c: c.pattern.name)
    # templates of the removed tensors as they were compared: a renamed one under its new prefix
    touched = {p.template for p in added} | {c.pattern.template for c in changed}
    touched |= {_template(key[0]) for key in gone}
    touched |= {_template(m.target) for m in moves if _count(m.moved) > _count(m.found)}
    old_t, new_t = _aligned_counts(before, moves, touched), _template_counts(new.patterns, touched)
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
    old_count, new_count = old.tensor_count, new.tensor_count
    gone_count, came_count = sum(p.count for p in removed), sum(p.count for p in added)
    cross: list[CrossShape] = []
    if gone_count > old_count // 2 and came_count > new_count // 2:  # most names differ: match by tail
        reshaped_tails = {_tail(c.pattern.template) for c in changed}
        cross = [x for x in _cross_model(old, new) if x.tail not in reshaped_tails]  # said as a reshape
    return TensorDiff(
        tuple(added),
        tuple(removed),
        tuple(changed),
        tuple(templates),
        tuple(cross),
        old_count,
        new_count,
        tuple(renames),
    )


def _matches(
    gone: dict[GroupKey, Indices], came: dict[GroupKey, Indices], targets: Mapping[GroupKey, tuple[str, ...]]
) -> list[tuple[GroupKey, GroupKey, Indices]]:
    """The tuples of each vanished group (``targets``: under which template it is compared) found in an
    appeared group of that template, taken out of both; emptied groups are dropped from both."""
    came_by_parts: dict[tuple[str, ...], list[GroupKey]] = defaultdict(list)
    for key in came:
        came_by_parts[key[0]].append(key)
    out = []
    for key, parts in targets.items():
        for other in came_by_parts.get(parts, ()):
            if key not in gone or other not in came:
                continue
            found = _intersection(gone[key], came[other])
            if found:
                out.append((key, other, found))
                for side, k in ((gone, key), (came, other)):
                    rest = _difference(side[k], found)
                    if rest:
                        side[k] = rest
                    else:
                        del side[k]
    return out


def _record(
    by_change: dict[tuple[str, tuple[int, ...]], dict[GroupKey, Indices]],
    key: GroupKey,
    other: GroupKey,
    found: Indices,
) -> None:
    """Tensors of old group ``key`` found in new group ``other``: reshaped or retyped unless both agree."""
    if (key[1], key[2]) != (other[1], other[2]):
        rows = by_change[(key[1], key[2])]
        rows[other] = _union(rows.get(other, []), found)


def _align(
    before: dict[GroupKey, list[Pattern]], gone: dict[GroupKey, Indices], came: dict[GroupKey, Indices]
) -> tuple[list[PrefixRename], list[_Move], list[tuple[GroupKey, GroupKey, Indices]]]:
    """Prefix renames that explain vanished and appeared tensors, worked out on templates and products.

    ``gone`` and ``came`` (tensors whose name is on one side only) lose what a rename matches. A
    vanished tensor is compared under the new prefix unless that name is an old tensor's own, or one an
    earlier rename already moved a tensor to (two old tensors are never compared under one name).
    """
    old_by_parts: dict[tuple[str, ...], list[Box]] = defaultdict(list)
    for (parts, _, _), patterns in before.items():
        old_by_parts[parts].extend(_boxes(patterns))
    claimed: dict[tuple[str, ...], Indices] = {}
    renames: list[PrefixRename] = []
    moves: list[_Move] = []
    matched: list[tuple[GroupKey, GroupKey, Indices]] = []
    for _ in range(MAX_RENAMES):
        if not gone or not came:
            break
        gone_templates: Counter[str] = Counter()
        for key, s in gone.items():
            gone_templates[_template(key[0])] += _count(s)
        came_templates = {_template(key[0]) for key in came}
        best = _best_rename(gone_templates, came_templates)
        if best is None:
            break
        old_prefix, new_prefix = best
        step: dict[GroupKey, _Move] = {}
        for key, s in gone.items():
            head = key[0][0]
            if not head.startswith(old_prefix):
                continue
            target = (new_prefix + head[len(old_prefix) :], *key[0][1:])
            moved = _difference(_difference(s, old_by_parts.get(target, [])), claimed.get(target, []))
            if moved:
                step[key] = _Move(key, target, moved)
        trial = dict(came)  # came as it is if this rename is kept
        pairs = _matches(
            {key: move.moved for key, move in step.items()}, trial, {key: m.target for key, m in step.items()}
        )
        found_count = sum(_count(f) for _, _, f in pairs)
        moved_templates = {_template(move.target) for move in step.values()}
        if found_count < 2 or len(moved_templates & came_templates) < MIN_TEMPLATE_SHARE * len(
            moved_templates
        ):
            break
        renames.append(
            PrefixRename(old_prefix, new_prefix, sum(_count(m.moved) for m in step.values()), found_count)
        )
        came.clear()
        came.update(trial)
        for key, _, f in pairs:
            step[key].found = _union(step[key].found, f)
        matched.extend(pairs)
        for key, move in step.items():
            rest = _difference(gone[key], move.moved)
            if rest:
                gone[key] = rest
            else:
                del gone[key]
            claimed[move.target] = _union(claimed.get(move.target, []), move.moved)
            moves.append(move)
    return renames, moves, matched


def _aligned_counts(
    before: dict[GroupKey, list[Pattern]], moves: list[_Move], templates: set[str]
) -> dict[str, tuple[int, set[int]]]:
    """``_template_counts`` of the old side as it was compared: a moved tensor under its new template."""
    out: dict[str, tuple[int, set[int]]] = {t: (0, set()) for t in templates}

    def add(template: str, count: int, first: set[int]) -> None:
        total, values = out[template]
        out[template] = (total + count, values | first)

    moved_from: dict[GroupKey, list[Indices]] = defaultdict(list)
    for move in moves:
        moved_from[move.key].append(move.moved)
        if _template(move.target) in out:
            add(_template(move.target), _count(move.moved), _firsts(move.moved))
    for key, patterns in before.items():
        template = _template(key[0])
        if template not in out:
            continue
        stay: Indices = _boxes(patterns)
        for moved in moved_from.get(key, ()):
            stay = _difference(stay, moved)
        add(template, _count(stay), _firsts(stay))
    return out


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
