"""A claim and the result of checking one (``Claim``, ``ClaimResult``, ``ClaimError``), with the unit a
claim is written in; what checks them is ``claims`` (figures, config) and ``release_claims`` (the
release files), which both build on these.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .._metrics.figures import FIGURE_UNITS
from .._metrics.serving_options import figure_unit
from ..units import UNITS_BY_KIND

_QUANTITY = re.compile(r"\s*([-+]?[\d,]*\.?\d+)(\s*)([A-Za-z]*)\s*")


class ClaimError(ValueError):
    """A claim that cannot be read: unknown figure, wrong type or unit."""


@dataclass(frozen=True)
class Claim:
    name: str
    stated: Any  # as written in the baseline
    line: int | None = None


def written_unit(claim: Claim) -> tuple[float, str, int]:
    """Scale, unit as written (with its leading space) and decimals of a claim's stated value:
    "6.0 KB" -> (1000, " KB", 1). Figures about a claim are said in these, as its author reads them."""
    stated = claim.stated.get("value") if isinstance(claim.stated, dict) else claim.stated
    unit = FIGURE_UNITS.get(claim.name) or figure_unit(claim.name) or "count"
    if isinstance(stated, float):
        text = repr(stated)
        return 1, "", len(text.split(".")[1]) if "." in text and "e" not in text else 0
    match = _QUANTITY.fullmatch(stated) if isinstance(stated, str) else None
    if not match:
        return 1, "", 0
    number, space, suffix = match.groups()
    scale = UNITS_BY_KIND.get(unit, {}).get(suffix.upper(), 1)
    return scale, (space + suffix) if suffix else "", len(number.split(".")[1]) if "." in number else 0


def in_unit(value: float, claim: Claim, extra_decimals: int = 1) -> str:
    """``value`` in the claim's own unit, one decimal finer than the claim (enough to see why it fails)."""
    scale, suffix, decimals = written_unit(claim)
    scaled = value / scale
    places = decimals + extra_decimals if scale != 1 or decimals else (0 if float(scaled).is_integer() else 1)
    return f"{scaled:,.{places}f}{suffix}"


@dataclass(frozen=True)
class ClaimResult:
    claim: Claim
    measured: Any
    holds: bool
    rule: str  # how it was checked, in the claim's unit: "5.95 KB ≤ x ≤ 6.05 KB"
    unverified: tuple[str, ...] = ()  # the figure rests on a reading hubdiff is not sure of

    @property
    def measured_text(self) -> str:
        """The measured value in the claim's unit, exact value beside it when the unit rounds it."""
        value = self.measured
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return (
                repr(value)
                if not isinstance(value, dict)
                else ", ".join(f"{k} {v}" for k, v in value.items())
            )
        scaled = in_unit(value, self.claim)
        exact = f"{value:,}" if isinstance(value, int) else f"{value:,.6g}"
        return scaled if scaled == exact else f"{scaled} ({exact})"
