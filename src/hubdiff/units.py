"""How numbers are written for people: parameter counts in K/M/B/T, bytes in KB/MB/GB (powers of 10)
and GiB (powers of 2). Exact integers are always kept alongside in JSON output."""

from __future__ import annotations

import re

_COUNT_UNITS = (("T", 10**12), ("B", 10**9), ("M", 10**6), ("K", 10**3))
_BYTE_UNITS = (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("KB", 10**3))
# Units a person may write, by the kind of figure they qualify.
UNITS_BY_KIND: dict[str, dict[str, int]] = {
    "params": {"": 1, "K": 10**3, "M": 10**6, "B": 10**9, "T": 10**12},
    "bytes": {
        "": 1,
        "B": 1,
        "BYTES": 1,
        "KB": 10**3,
        "MB": 10**6,
        "GB": 10**9,
        "TB": 10**12,
        "KIB": 2**10,
        "MIB": 2**20,
        "GIB": 2**30,
        "TIB": 2**40,
    },
    "count": {"": 1, "K": 10**3, "M": 10**6},
}


def human_count(n: float, digits: int = 2) -> str:
    """25165824 -> '25.17M'; 560M -> '0.56B' is not produced: the largest unit <= n is used."""
    for suffix, scale in _COUNT_UNITS:
        if abs(n) >= scale:
            return f"{n / scale:.{digits}f}{suffix}"
    return f"{n:,.0f}" if float(n).is_integer() else f"{n:.{digits}f}"


def human_bytes(n: float, digits: int = 1) -> str:
    for suffix, scale in _BYTE_UNITS:
        if abs(n) >= scale:
            return f"{n / scale:.{digits}f} {suffix}"
    return f"{n:,.0f} B"


def gib(n: float) -> str:
    return f"{n / 2**30:.2f} GiB"


def parse_quantity(text: str | int | float, kind: str = "params") -> tuple[float, float]:
    """'6.0 KB' -> (6000.0, 50.0): the value and half a unit in its last stated digit.

    The second number is the precision a person implied by writing the value that way, so that a claim
    of '6.0 KB' holds for 5,950 to 6,050 bytes and '25.17M' for 25,165,000 to 25,175,000. ``kind`` says
    which units make sense ("params", "bytes", "count"); any other unit is a ValueError.
    """
    if isinstance(text, bool):
        raise ValueError(f"not a quantity: {text!r}")
    if isinstance(text, int):
        return float(text), 0.5
    if isinstance(text, float):
        digits = len(repr(text).split(".")[1]) if "." in repr(text) else 0
        return text, 0.5 * 10**-digits
    match = re.fullmatch(r"\s*([-+]?[\d,]*\.?\d+)\s*([A-Za-z]*)\s*", str(text))
    if not match:
        raise ValueError(f"not a quantity: {text!r}")
    number, unit = match.group(1).replace(",", ""), match.group(2).upper()
    units = UNITS_BY_KIND[kind]
    if unit not in units:
        known = ", ".join(u for u in units if u) or "none"
        raise ValueError(f"unit {match.group(2)!r} does not fit a {kind} figure (use {known})")
    scale = units[unit]
    decimals = len(number.split(".")[1]) if "." in number else 0
    return float(number) * scale, 0.5 * scale * 10**-decimals
