"""Claims: statements an analyst wants to publish, checked at the precision they are written in.

``kv_bytes_per_token: 6.0 KB`` holds for 5,950 to 6,050 bytes; ``routed_expert_params: 25.17M`` for
25,165,000 to 25,175,000; ``{value: 0.56B, tolerance: 2%}`` or ``tolerance: 10M`` widens or narrows
that; a mapping (``attention_layers: {kda: 34, dsa: 11}``) must match exactly; ``config.<key path>``
claims a config value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._metrics import FIGURE_UNITS
from ..units import parse_quantity


class ClaimError(ValueError):
    """A claim that cannot be read: unknown figure, wrong type or unit."""


@dataclass(frozen=True)
class Claim:
    name: str
    stated: Any  # as written in the baseline
    line: int | None = None


@dataclass(frozen=True)
class ClaimResult:
    claim: Claim
    measured: Any
    holds: bool
    rule: str  # how it was checked, e.g. "5,950 ≤ x ≤ 6,050"
    unverified: tuple[str, ...] = ()  # the figure rests on a reading hubdiff is not sure of


def _bounds(claim: Claim, unit: str) -> tuple[float, float, float]:
    stated = claim.stated
    tolerance = None
    if isinstance(stated, dict):
        if "value" not in stated or set(stated) - {"value", "tolerance"}:
            raise ClaimError(f"claim {claim.name}: write {{value: ..., tolerance: ...}}")
        stated, tolerance = stated["value"], stated.get("tolerance")
    value, half_unit = parse_quantity(stated, unit)
    if tolerance is None:
        return value, value - half_unit, value + half_unit
    if isinstance(tolerance, str) and tolerance.strip().endswith("%"):
        margin = abs(value) * float(tolerance.strip()[:-1]) / 100
    else:
        margin, _ = parse_quantity(tolerance, unit)
    return value, value - margin, value + margin


def validate(claim: Claim) -> None:
    if claim.name.startswith("config."):
        return
    unit = FIGURE_UNITS.get(claim.name)
    if unit is None:
        known = ", ".join(sorted(FIGURE_UNITS))
        raise ClaimError(f"unknown figure {claim.name!r} (known: {known}, or config.<key>)")
    if isinstance(claim.stated, dict) and "value" not in claim.stated:
        if not all(isinstance(v, int) for v in claim.stated.values()):
            raise ClaimError(f"claim {claim.name}: a mapping claim needs whole numbers")
        return
    try:
        _bounds(claim, unit)
    except ValueError as exc:
        raise ClaimError(f"claim {claim.name}: {exc}") from None


def evaluate(
    claim: Claim, figures: dict[str, Any], config: dict[str, Any], unverified: tuple[str, ...] = ()
) -> ClaimResult:
    if claim.name.startswith("config."):
        measured: Any = config
        for part in claim.name.split(".")[1:]:
            measured = measured.get(part) if isinstance(measured, dict) else None
        holds = measured == claim.stated or (
            isinstance(measured, (int, float))
            and isinstance(claim.stated, (int, float))
            and float(measured) == float(claim.stated)
        )
        return ClaimResult(claim, measured, holds, "equal")
    measured = figures.get(claim.name)
    if isinstance(claim.stated, dict) and "value" not in claim.stated:
        expected = {str(k): v for k, v in claim.stated.items()}
        actual = {str(k): v for k, v in (measured or {}).items()} if isinstance(measured, dict) else measured
        return ClaimResult(claim, measured, actual == expected, "equal", unverified)
    _, low, high = _bounds(claim, FIGURE_UNITS[claim.name])
    holds = isinstance(measured, (int, float)) and low <= measured <= high
    return ClaimResult(claim, measured, holds, f"{low:,.6g} ≤ x ≤ {high:,.6g}", unverified)
