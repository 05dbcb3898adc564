"""JSON from the Hub or from disk, read under the rules the later stages rely on.

Python's ``json`` is lenient where everything after it is not: it reads UTF-16 and a byte-order mark,
``NaN``/``Infinity`` and ``1e400`` (as inf, which then compares unequal to itself in every diff),
escapes of lone UTF-16 surrogates (text that cannot be printed or written to a file), integers of
thousands of digits, and nesting down to the interpreter's recursion limit, which the next recursive
consumer (deepdiff, jinja2, YAML) then overflows. Every JSON document hubdiff reads comes through
``load_json``, so each of these ends as one line naming the file, not as a traceback stages later.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

# Below this, the checked reader alone: a cached snapshot or figures file is tens of KB (under a
# millisecond either way), and importing orjson costs ~6 ms of a warm run that reads nothing bigger
FAST_FROM_BYTES = 256 * 1024
MAX_DEPTH = 32  # real configs nest 5 deep (quantization_config.config_groups.group_0.weights.num_bits)
_FAST_DEPTH = 100  # deeper than this, the standard library's reader decides (it may hit recursion)
INT_RANGE = (-(2**63), 2**64 - 1)  # what a 64-bit reader (safetensors, transformers' torch) can hold

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class JSONProblem(ValueError):
    """What is wrong with a JSON document, in words; the caller names the file."""


def _refuse_constant(name: str) -> Any:
    raise JSONProblem(f"not JSON ({name} is not a JSON number)")


def _infinity_only(name: str) -> Any:
    """Configs written by Python (Nemotron-H's ``time_step_limit``) hold Infinity; NaN never equals itself."""
    if name == "NaN":
        _refuse_constant(name)
    return float(name)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JSONProblem(f"number {text[:40]} is out of range")
    return value


def load_json(
    raw: bytes,
    *,
    max_depth: int | None = MAX_DEPTH,
    infinity: bool = False,
    parse_int: Callable[[str], Any] | None = None,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
) -> Any:
    """Decode ``raw`` (strict UTF-8, no BOM) and check it; ``max_depth=None`` leaves depth to the caller.

    ``infinity`` lets ``Infinity``/``-Infinity`` (and numbers that overflow to them) through, as Python
    and transformers read configs; the safetensors format and the Hub's API never have them.
    """
    if parse_int is None and object_pairs_hook is None and len(raw) >= FAST_FROM_BYTES:
        data = _fast(raw, max_depth)
        if data is not None:
            return data
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JSONProblem(f"not UTF-8 text (invalid byte at offset {exc.start})") from None
    if text.startswith("\ufeff"):
        raise JSONProblem("not JSON (starts with a byte-order mark)")
    try:
        data = json.loads(
            text,
            parse_constant=_infinity_only if infinity else _refuse_constant,
            parse_float=float if infinity else _finite_float,
            parse_int=parse_int,
            object_pairs_hook=object_pairs_hook,
        )
    except RecursionError:
        raise JSONProblem("nested too deeply to read") from None
    except JSONProblem:
        raise
    except ValueError as exc:  # JSONDecodeError, or an integer of more than 4,300 digits
        raise JSONProblem(f"not JSON ({exc})") from None
    if max_depth is not None:
        check_tree(data, max_depth)
    if _SURROGATE_ESCAPE.search(text) and has_lone_surrogate(data):
        raise JSONProblem("holds a lone UTF-16 surrogate escape (\\udXXX), which is not text")
    return data


def _fast(raw: bytes, max_depth: int | None) -> Any:
    """``raw`` read by orjson, when that is certainly what the checked reader below would give; else None.

    orjson reads the bytes without a decoded copy, at C speed (an index of 200,000 names: half the
    time and 20 MB less at the peak), and refuses what the rules above refuse: invalid UTF-8, a
    byte-order mark, NaN, Infinity, numbers that overflow, lone surrogates, control characters. Where
    it differs, it reads a number: an integer beyond 64 bits becomes a float, and a float's rounding
    is its own. So a document holding any float is read again the checked way, as is anything orjson
    refuses (so that the problem is named in hubdiff's words) or nests deeper than ``max_depth`` (or,
    without one, deeper than the standard library is sure to read).
    """
    import orjson

    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if type(data) is float:
        return None
    # without a depth of its own, the standard library's (its recursion limit, which orjson does not share)
    limit = max_depth if max_depth is not None else _FAST_DEPTH
    stack = [(data, 1)] if type(data) in (dict, list) else []
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return None
        children = value.values() if type(value) is dict else value
        kinds = set(map(type, children))  # one pass at C speed, even over 200,000 values
        if float in kinds:
            return None
        if dict in kinds or list in kinds:
            stack.extend((child, depth + 1) for child in children if type(child) in (dict, list))
    return data


def has_lone_surrogate(data: Any) -> bool:
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    except RecursionError:
        raise JSONProblem("nested too deeply to read") from None
    return False


def check_tree(data: Any, max_depth: int, what: str = "") -> None:
    """Nesting at most ``max_depth`` containers deep, and every integer within 64 bits (iteratively)."""
    low, high = INT_RANGE
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            if type(value) is int and not low <= value <= high:
                raise JSONProblem(f"{what}integer {str(value)[:30]}… does not fit in 64 bits")
            continue
        if depth > max_depth:
            raise JSONProblem(f"{what}nested more than {max_depth} levels deep")
        stack.extend((child, depth + 1) for child in children)
