"""Tensor names compressed to patterns: a 200,000-tensor checkpoint on one screen.

A name is split at dots; every segment that is a plain decimal number (no sign, no leading zero, at
most 18 digits, so that it is a 64-bit number) is an index position. Names that share the rest of their text, dtype and shape form one group, and each
group's index tuples are written as a union of cartesian products of index sets, so that

    model.layers.{3-78}.mlp.experts.{0-255}.down_proj.weight   BF16 [6144, 2048]   x19,456

stands for 19,456 names. The compression is lossless: ``expand`` gives back exactly the names.

Index-set notation (also accepted when reading census files): comma-separated items, each a number
``7``, a range ``3-78`` (step 1) or a strided range ``6-74/4`` (6, 10, ..., 74).
"""

from __future__ import annotations

import math
import re
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from itertools import accumulate, product, repeat, starmap
from operator import itemgetter

# a dotted segment that is a plain decimal number: no sign, no leading zero (so it round-trips), at most
# 18 digits (a longer run of digits in a hostile name stays text: int() of thousands of digits refuses)
_INDEX_SEGMENT = re.compile(r"(?:(?<=\.)|^)(0|[1-9][0-9]{0,17})(?=\.|$)")
_ITEM = re.compile(r"^([0-9]{1,18})(?:-([0-9]{1,18})(?:/([0-9]{1,18}))?)?$")  # ASCII digits only
# Values one index set may hold when read back (a cache entry, a baseline): "0-99999999999" is 13
# characters; far above the ~2 million tensors a 100 MB header can name.
MAX_INDEX_VALUES = 1 << 22


def format_index_set(values: Iterable[int]) -> str:
    """``[0, 1, 2, 6, 10, ..., 74]`` -> ``0-2,6-74/4``: greedy runs of equal step, three or more long."""
    ordered = sorted(set(values))
    items: list[str] = []
    i = 0
    while i < len(ordered):
        start = ordered[i]
        if i + 1 < len(ordered):
            step = ordered[i + 1] - start
            j = i + 1
            while j + 1 < len(ordered) and ordered[j + 1] - ordered[j] == step:
                j += 1
            length = j - i + 1
            if length >= 3 or (length == 2 and step == 1):
                end = ordered[j]
                items.append(f"{start}-{end}" if step == 1 else f"{start}-{end}/{step}")
                i = j + 1
                continue
        items.append(str(start))
        i += 1
    return ",".join(items)


def parse_index_set(text: str) -> tuple[int, ...]:
    """Inverse of :func:`format_index_set`; raises ValueError on anything else, and on a set of more
    than ``MAX_INDEX_VALUES`` values (counted before any is made)."""
    values: set[int] = set()
    total = 0
    for item in text.split(","):
        match = _ITEM.match(item.strip())
        if not match:
            raise ValueError(f"not an index set: {text[:80]!r}")
        start = int(match.group(1))
        end = int(match.group(2)) if match.group(2) is not None else start
        step = int(match.group(3)) if match.group(3) is not None else 1
        if end < start or step < 1 or (end - start) % step:
            raise ValueError(f"not an index set: {text[:80]!r}")
        total += (end - start) // step + 1
        if total > MAX_INDEX_VALUES:
            raise ValueError(f"index set of more than {MAX_INDEX_VALUES:,} values: {text[:80]!r}")
        values.update(range(start, end + 1, step))
    return tuple(sorted(values))


@dataclass(frozen=True)
class Pattern:
    """A set of tensor names of one dtype and shape: literal parts between index positions."""

    parts: tuple[str, ...]  # len(parts) == len(index_sets) + 1
    index_sets: tuple[tuple[int, ...], ...]
    dtype: str
    shape: tuple[int, ...]

    @property
    def count(self) -> int:
        n = 1
        for values in self.index_sets:
            n *= len(values)
        return n

    @property
    def name(self) -> str:
        """The pattern as people read it; a one-value index is written inline."""
        out = [self.parts[0]]
        for values, text in zip(self.index_sets, self.parts[1:]):
            out.append(str(values[0]) if len(values) == 1 else "{" + format_index_set(values) + "}")
            out.append(text)
        return "".join(out)

    @property
    def template(self) -> str:
        """The name with every index position as ``*``: equal across revisions that only renumber."""
        return "*".join(self.parts)

    def names(self) -> Iterator[str]:
        """Every name, in index order; formatted at C speed (rebuilding 200,000 names takes 0.1 s)."""
        fmt = "{}".join(part.replace("{", "{{").replace("}", "}}") for part in self.parts)
        return starmap(fmt.format, product(*self.index_sets))


def split_name(name: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """``a.3.b.17.c`` -> (("a.", ".b.", ".c"), (3, 17))."""
    pieces = _INDEX_SEGMENT.split(name)
    return tuple(pieces[0::2]), tuple(int(p) for p in pieces[1::2])


# The same segments in names written as ".name." one per line: a pattern that starts with a literal
# dot lets the regex engine skip ahead, three times faster than the lookbehind form.
_DOTTED_INDEX = re.compile(r"\.(0|[1-9][0-9]{0,17})(?=\.)")

# (parts, dtype, shape): the key every tensor of one pattern shares
GroupKey = tuple[tuple[str, ...], str, tuple[int, ...]]


def _split_all(names: list[str]) -> list[tuple[tuple[str, ...], tuple[int, ...]]] | None:
    """``split_name`` of every name with two regex passes over all names joined by newlines.

    Splitting names one by one costs ~5 us each (a second per 200,000 names); here the regex runs once
    at C speed and Python only slices. Each distinct template is split once, by ``split_name`` itself,
    so the result is the same by construction. Returns None when a name holds a newline or NUL (the
    joined text would be ambiguous): the caller then splits one by one.
    """
    if not names:
        return []
    blob = "." + ".\n.".join(names) + "."
    if "\x00" in blob or blob.count("\n") != len(names) - 1:
        return None
    numbers = list(map(int, _DOTTED_INDEX.findall(blob)))
    templates = _DOTTED_INDEX.sub(".\x00", blob).split("\n")
    known: dict[str, tuple[tuple[str, ...], int]] = {}
    out: list[tuple[tuple[str, ...], tuple[int, ...]]] = []
    pos = 0
    for name, template in zip(names, templates):
        entry = known.get(template)
        if entry is None:
            parts, indices = split_name(name)
            entry = known[template] = (parts, len(indices))
        parts, k = entry
        out.append((parts, tuple(numbers[pos : pos + k])))
        pos += k
    return out


def group(
    names: list[str], dtypes: list[str], shapes: list[tuple[int, ...]], shards: Sequence[int] | None = None
) -> dict[GroupKey, dict[tuple[int, ...], int]]:
    """The index tuples of each (name template, dtype, shape), each with its shard number (0 if not given).

    The step before patterns; the shard numbers say where each tensor is stored (see Snapshot).
    """
    split = _split_all(names)
    if split is None:
        split = [split_name(n) for n in names]
    groups: dict[GroupKey, dict[tuple[int, ...], int]] = defaultdict(dict)
    for (parts, indices), dtype, shape, shard in zip(split, dtypes, shapes, shards or repeat(0)):
        groups[(parts, dtype, shape)][indices] = shard
    return groups


@dataclass(frozen=True)
class ShardGroups:
    """One shard's tensors grouped (what ``group`` makes of them), with what the rest of a read needs.

    ``order`` says which group each tensor of the header, in its order, went to (4 bytes a tensor), so
    that the names can be told in that order if one of them turns out to be in another shard too.
    """

    groups: dict[GroupKey, list[tuple[int, ...]]]
    order: array
    count: int
    unknown_dtypes: frozenset[str] = frozenset()
    size: int = 0  # bytes of the header in the file, the 8-byte length included

    @classmethod
    def of(
        cls,
        names: list[str],
        dtypes: list[str],
        shapes: list[tuple[int, ...]],
        unknown_dtypes: Iterable[str] = (),
        size: int = 0,
    ) -> ShardGroups:
        """Group one shard's tensors, per tensor only at C speed (map, zip, one regex split)."""
        unknown = frozenset(unknown_dtypes)
        if not names:
            return cls({}, array("I"), 0, unknown, size)
        blob = "." + ".\n.".join(names) + "."
        if "\x00" in blob or blob.count("\n") != len(names) - 1:  # see _split_all: one by one
            groups: dict[GroupKey, list[tuple[int, ...]]] = {}
            seen: dict[GroupKey, int] = {}
            order = array("I")
            for (parts, indices), dtype, shape in zip(map(split_name, names), dtypes, shapes):
                key = (parts, dtype, shape)
                groups.setdefault(key, []).append(indices)
                order.append(seen.setdefault(key, len(seen)))
            return cls(groups, order, len(names), unknown, size)
        pieces = _DOTTED_INDEX.split(blob)  # literal, number, literal, number, ..., literal
        numbers = list(map(int, pieces[1::2]))
        templates = ".\x00".join(pieces[0::2]).split("\n")
        del pieces, blob
        # each distinct template split once, by split_name itself, from one of its names
        parts_of: dict[str, tuple[str, ...]] = {}
        width_of: dict[str, int] = {}
        for template, name in dict(zip(templates, names)).items():
            parts, indices = split_name(name)
            parts_of[template], width_of[template] = parts, len(indices)
        widths = set(width_of.values())
        if len(widths) == 1:  # every name has as many index positions: the tuples by one zip
            (width,) = widths
            tuples: list[tuple[int, ...]] = (
                list(zip(*[iter(numbers)] * width)) if width else [()] * len(names)
            )
        else:
            ends = list(accumulate(map(width_of.__getitem__, templates)))
            starts = [0, *ends[:-1]]
            tuples = list(map(tuple, map(numbers.__getitem__, map(slice, starts, ends))))
        triples = list(zip(templates, dtypes, shapes))
        number = {triple: n for n, triple in enumerate(dict.fromkeys(triples))}
        order = array("I", map(number.__getitem__, triples))
        keys = [(parts_of[template], dtype, shape) for template, dtype, shape in number]
        if len(keys) == 1:
            groups = {keys[0]: tuples}
        else:
            # The tuples in group order by one stable sort, then cut at each group's count: one pass
            # whatever the number of groups (a filter per group was groups x tensors: 40,000 names
            # with no index, 40,000 groups, took minutes).
            by_group = list(map(tuples.__getitem__, sorted(range(len(order)), key=order.__getitem__)))
            counts = Counter(order)
            ends = list(accumulate(map(counts.__getitem__, range(len(keys)))))
            groups = dict(zip(keys, map(by_group.__getitem__, map(slice, [0, *ends[:-1]], ends))))
        return cls(groups, order, len(names), unknown, size)

    def names(self) -> Iterator[tuple[str, tuple[str, ...], tuple[int, ...]]]:
        """(name, parts, indices) of every tensor, in the header's order."""
        keys = list(self.groups)
        rests = [iter(self.groups[key]) for key in keys]
        for n in self.order:
            parts = keys[n][0]
            indices = next(rests[n])
            text = [parts[0]]
            for value, part in zip(indices, parts[1:]):
                text += (str(value), part)
            yield "".join(text), parts, indices


class Grouping:
    """``group`` fed one shard at a time, each shard grouped on its own (``ShardGroups``) as it arrives.

    Holding every name of a 200,000-tensor checkpoint at once (and the joined text ``_split_all``
    makes of them) is what set a cold read's peak memory; the index tuples kept here are a third of
    that. ``groups`` ends equal to ``group`` of all the names with their shard numbers.

    A repeated name is looked up once per template: ``_seen`` holds each template's index tuples (over
    all its dtypes and shapes) with their shards. For a template of one dtype and shape, the usual
    case, that is the group's own dict, shared; only a template of several keeps a merged copy (looking
    through each of its keys instead was keys x shards: one template in 40,000 shapes, quadratic).
    """

    def __init__(self) -> None:
        self.groups: dict[GroupKey, dict[tuple[int, ...], int]] = defaultdict(dict)
        self._seen: dict[tuple[str, ...], dict[tuple[int, ...], int]] = {}  # template -> tuple -> shard
        self._merged: set[tuple[str, ...]] = set()  # templates whose _seen is a dict of its own

    def add(self, shard_groups: ShardGroups, shard: int) -> tuple[str, int] | None:
        """Add one shard's tensors (names unique within it); or, if a name was in an earlier shard, the
        first such name (in the header's order) and that shard's number, adding nothing."""
        groups, seen = self.groups, self._seen
        new = shard_groups.groups
        for (parts, _, _), tuples in new.items():
            earlier = seen.get(parts)
            if earlier is not None and not earlier.keys().isdisjoint(tuples):
                return self._first_repeat(shard_groups)
        for key, tuples in new.items():
            held = groups[key]
            held.update(zip(tuples, repeat(shard)))
            parts = key[0]
            known = seen.setdefault(parts, held)
            if known is not held:  # a second key of this template: its tuples kept merged from now on
                if parts not in self._merged:
                    known = seen[parts] = dict(known)
                    self._merged.add(parts)
                known.update(zip(tuples, repeat(shard)))
        return None

    def _first_repeat(self, shard_groups: ShardGroups) -> tuple[str, int] | None:
        for name, parts, indices in shard_groups.names():
            earlier = self._seen.get(parts, {}).get(indices)
            if earlier is not None:
                return name, earlier
        return None


def patterns_of(groups: Mapping[GroupKey, Iterable[tuple[int, ...]]]) -> list[Pattern]:
    """Each group's index tuples as a union of cartesian products, in natural name order."""
    return ordered(
        Pattern(parts, index_sets, dtype, shape)
        for (parts, dtype, shape), tuples in groups.items()
        for index_sets in _products(tuples.keys() if isinstance(tuples, dict) else set(tuples))
    )


def ordered(patterns: Iterable[Pattern]) -> list[Pattern]:
    """Patterns in natural order of their first name, then dtype and shape: how snapshots list them."""
    return sorted(patterns, key=lambda p: (_natural_key(next(p.names())), p.dtype, p.shape))


def _products(tuples: AbstractSet[tuple[int, ...]]) -> list[tuple[tuple[int, ...], ...]]:
    """Write a set of equal-length index tuples as a union of disjoint cartesian products.

    The first index splits the set: heads whose tails are the same set share one product with those
    tails, which are split the same way, one index position after another. Each distinct tail is
    numbered once (a suffix id: its first value and the id of the tail after it), so a set of tails is
    a set of numbers and the work is linear in the indices however many positions a name has and
    however the tuples are shaped (comparing the tails themselves was positions squared per tuple);
    the positions are walked with a stack, not recursion, so a name of 5,000 indices is no deeper.
    """
    first = next(iter(tuples))
    width = len(first)
    if width == 0:
        return [()]
    columns = [set(map(itemgetter(i), tuples)) for i in range(width)]
    if math.prod(map(len, columns)) == len(tuples):  # the common case, one full grid
        return [tuple(tuple(sorted(values)) for values in columns)]
    # suffix id -> (its first index, the id of the suffix after it); 0 is the empty suffix
    head_of: list[int] = [-1]
    rest_of: list[int] = [0]
    number: dict[tuple[int, int], int] = {}
    ids = [0] * len(tuples)
    rows = list(tuples)
    for position in reversed(range(width)):
        suffixes = []
        for pair in zip(map(itemgetter(position), rows), ids):
            sid = number.get(pair)
            if sid is None:
                sid = number[pair] = len(head_of)
                head_of.append(pair[0])
                rest_of.append(pair[1])
            suffixes.append(sid)
        ids = suffixes

    def split(suffixes: Iterable[int]) -> list[tuple[tuple[int, ...], frozenset[int]]]:
        rest_by_head: dict[int, list[int]] = defaultdict(list)  # head index -> the tails after it
        for sid in suffixes:
            rest_by_head[head_of[sid]].append(rest_of[sid])
        heads_by_rest: dict[frozenset[int], list[int]] = defaultdict(list)
        for head, rest in rest_by_head.items():
            heads_by_rest[frozenset(rest)].append(head)
        return [(tuple(sorted(heads)), tails) for tails, heads in heads_by_rest.items()]

    out: list[tuple[tuple[int, ...], ...]] = []
    path: list[tuple[int, ...]] = []  # the index sets chosen at the positions above the current one
    stack = [iter(split(set(ids)))]
    while stack:
        step = next(stack[-1], None)
        if step is None:
            stack.pop()
            if stack:
                path.pop()
            continue
        heads, tails = step
        if len(tails) == 1:  # one tail (the empty one at the last position): one index per position
            (sid,) = tails
            rest = []
            while sid:
                rest.append((head_of[sid],))
                sid = rest_of[sid]
            out.append((*path, heads, *rest))
        else:
            path.append(heads)
            stack.append(iter(split(tails)))
    return out


_DIGITS = re.compile(r"([0-9]+)")


def _natural_key(text: str) -> tuple:
    """Text with its runs of ASCII digits ordered as numbers: (length without leading zeros, digits)
    orders as int() would, without int() (which refuses 4,300 digits and reads '²' as a digit)."""
    pieces = _DIGITS.split(text)
    for i in range(1, len(pieces), 2):
        digits = pieces[i].lstrip("0")
        pieces[i] = (len(digits), digits)  # type: ignore[call-overload]
    return tuple(pieces)


def compress(tensors: Iterable[tuple[str, str, tuple[int, ...]]]) -> list[Pattern]:
    """Group ``(name, dtype, shape)`` triples into patterns, in natural name order."""
    rows = list(tensors)
    return patterns_of(group([r[0] for r in rows], [r[1] for r in rows], [tuple(r[2]) for r in rows]))


def expand(patterns: Iterable[Pattern]) -> list[str]:
    return [name for pattern in patterns for name in pattern.names()]
