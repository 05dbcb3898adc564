"""A baseline's tensor rows: a compressed tensor pattern as a YAML key and value, and back.

``pattern_key`` writes a pattern's name with its index sets (``blk.{0-3}.attn_v.weight``), doubling
literal braces so that any tensor name survives the round trip; ``pattern_row`` its dtype, shape and
count (``Q6_K [1024, 4096] x4``). Both the safetensors ``tensors:`` map and a GGUF variant's ``strip:``
are written and read here.
"""

from __future__ import annotations

import re

from ..patterns import Pattern, format_index_set, parse_index_set

_ROW = re.compile(r"^(\S+) \[([\d, ]*)\] x(\d+)$")


def pattern_key(pattern: Pattern) -> str:
    """The pattern's name with literal braces doubled, so that any tensor name survives the round trip."""
    out = [pattern.parts[0].replace("{", "{{").replace("}", "}}")]
    for values, text in zip(pattern.index_sets, pattern.parts[1:]):
        out.append("{" + format_index_set(values) + "}")
        out.append(text.replace("{", "{{").replace("}", "}}"))
    return "".join(out)


def pattern_row(pattern: Pattern) -> str:
    return f"{pattern.dtype} [{', '.join(map(str, pattern.shape))}] x{pattern.count}"


def parse_pattern_row(key: str, row: str) -> Pattern:
    match = _ROW.match(row)
    if not match:
        raise ValueError(f"tensor row {row!r} is not 'DTYPE [d0, d1, ...] xCOUNT'")
    parts, sets, buf, i = [], [], [], 0
    while i < len(key):
        ch = key[i]
        if key.startswith("{{", i) or key.startswith("}}", i):
            buf.append(ch)
            i += 2
        elif ch == "{":
            end = key.index("}", i)
            parts.append("".join(buf))
            buf = []
            sets.append(parse_index_set(key[i + 1 : end]))
            i = end + 1
        else:
            buf.append(ch)
            i += 1
    parts.append("".join(buf))
    shape = tuple(int(d) for d in match.group(2).split(",") if d.strip())
    pattern = Pattern(tuple(parts), tuple(sets), match.group(1), shape)
    if pattern.count != int(match.group(3)):
        raise ValueError(f"{key} expands to {pattern.count} names, row says x{match.group(3)}")
    return pattern
