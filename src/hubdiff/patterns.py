"""Tensor names compressed to patterns: a 200,000-tensor checkpoint on one screen.

A name is split at dots; every segment that is a plain decimal number (no sign, no leading zero) is an
index position. Names that share the rest of their text, dtype and shape form one group, and each
group's index tuples are written as a union of cartesian products of index sets, so that

    model.layers.{3-78}.mlp.experts.{0-255}.down_proj.weight   BF16 [6144, 2048]   x19,456

stands for 19,456 names. The compression is lossless: ``expand`` gives back exactly the names.

Index-set notation (also accepted when reading census files): comma-separated items, each a number
``7``, a range ``3-78`` (step 1) or a strided range ``6-74/4`` (6, 10, ..., 74).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import product

# a dotted segment that is a plain decimal number: no sign, no leading zero (so it round-trips)
_INDEX_SEGMENT = re.compile(r"(?:(?<=\.)|^)(0|[1-9][0-9]*)(?=\.|$)")
_ITEM = re.compile(r"^(\d+)(?:-(\d+)(?:/(\d+))?)?$")


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
    """Inverse of :func:`format_index_set`; raises ValueError on anything else."""
    values: set[int] = set()
    for item in text.split(","):
        match = _ITEM.match(item.strip())
        if not match:
            raise ValueError(f"not an index set: {text!r}")
        start = int(match.group(1))
        end = int(match.group(2)) if match.group(2) is not None else start
        step = int(match.group(3)) if match.group(3) is not None else 1
        if end < start or step < 1 or (end - start) % step:
            raise ValueError(f"not an index set: {text!r}")
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
        parts = self.parts
        for combo in product(*self.index_sets):
            out = [parts[0]]
            for value, text in zip(combo, parts[1:]):
                out.append(str(value))
                out.append(text)
            yield "".join(out)


def split_name(name: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """``a.3.b.17.c`` -> (("a.", ".b.", ".c"), (3, 17))."""
    pieces = _INDEX_SEGMENT.split(name)
    return tuple(pieces[0::2]), tuple(int(p) for p in pieces[1::2])


def _products(tuples: set[tuple[int, ...]]) -> list[tuple[tuple[int, ...], ...]]:
    """Write a set of equal-length index tuples as a union of disjoint cartesian products."""
    first = next(iter(tuples))
    if len(first) == 0:
        return [()]
    if len(first) == 1:
        return [(tuple(sorted(t[0] for t in tuples)),)]
    rest_by_head: dict[int, set[tuple[int, ...]]] = defaultdict(set)  # head index -> the tails after it
    for t in tuples:
        rest_by_head[t[0]].add(t[1:])
    heads_by_rest: dict[frozenset[tuple[int, ...]], list[int]] = defaultdict(list)
    for head, rest in rest_by_head.items():
        heads_by_rest[frozenset(rest)].append(head)
    out: list[tuple[tuple[int, ...], ...]] = []
    for tails, heads in heads_by_rest.items():
        head_set = tuple(sorted(heads))
        for tail in _products(set(tails)):
            out.append((head_set, *tail))
    return out


def _natural_key(text: str) -> tuple:
    return tuple(int(tok) if tok.isdigit() else tok for tok in re.split(r"(\d+)", text))


def compress(tensors: Iterable[tuple[str, str, tuple[int, ...]]]) -> list[Pattern]:
    """Group ``(name, dtype, shape)`` triples into patterns, in natural name order."""
    groups: dict[tuple[tuple[str, ...], str, tuple[int, ...]], set[tuple[int, ...]]] = defaultdict(set)
    for name, dtype, shape in tensors:
        parts, indices = split_name(name)
        groups[(parts, dtype, tuple(shape))].add(indices)
    patterns = [
        Pattern(parts, index_sets, dtype, shape)
        for (parts, dtype, shape), tuples in groups.items()
        for index_sets in _products(tuples)
    ]
    patterns.sort(key=lambda p: (_natural_key(next(p.names())), p.dtype, p.shape))
    return patterns


def expand(patterns: Iterable[Pattern]) -> list[str]:
    return [name for pattern in patterns for name in pattern.names()]
