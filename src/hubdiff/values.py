"""Values as a file records them (a config, a baseline's YAML, a release file, GGUF metadata), compared as
values: a YAML ``5`` is a recorded ``5.0``, while ``true`` is never ``1`` nor ``"5"`` ``5``.

One rule for every comparison of recorded values (figures, release settings, GGUF metadata, release
claims), so that two stages never disagree on whether a value changed."""

from __future__ import annotations

from typing import Any


def same_value(a: Any, b: Any) -> bool:
    """Numbers by value whatever their type (3 and 3.0; exactly, as Python compares int and float),
    mappings key by key, lists and tuples in order, anything else by type and value."""
    numbers = (int, float)
    if (
        isinstance(a, numbers)
        and isinstance(b, numbers)
        and not isinstance(a, bool)
        and not isinstance(b, bool)
    ):
        return bool(a == b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b
