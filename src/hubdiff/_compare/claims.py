"""Claims: statements an analyst wants to publish, checked at the precision they are written in.

``kv_bytes_per_token: 6.0 KB`` holds for 5,950 to 6,050 bytes; ``routed_expert_params: 25.17M`` for
25,165,000 to 25,175,000; ``{value: 0.56B, tolerance: 2%}`` or ``tolerance: 10M`` widens or narrows
that; a mapping (``attention_layers: {kda: 34, dsa: 11}``) must match exactly; ``config.<key path>``
claims a config value.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass
from typing import Any

from .._metrics import FIGURE_UNITS
from .._metrics.serving_options import figure_unit, name_problem
from ..units import UNITS_BY_KIND, parse_quantity

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


def restated(claim: Claim, measured: Any) -> Any:
    """The measured value written the way the claim was: same unit, same number of decimals, same
    thousands separators (``pytest --update-baselines`` writes it over a claim that no longer holds)."""
    stated = claim.stated
    if claim.name == "chat_template" and stated in ("unchanged", "same prompts"):
        return stated  # holds again once the baseline records the new template
    if isinstance(stated, dict):
        if "value" in stated:
            return {**stated, "value": restated(Claim(claim.name, stated["value"]), measured)}
        return dict(measured) if isinstance(measured, dict) else measured
    if isinstance(stated, bool) or not isinstance(measured, (int, float)):
        return measured
    if isinstance(stated, int):
        return round(measured)
    scale, suffix, decimals = written_unit(claim)
    if isinstance(stated, float):
        return round(float(measured), decimals)
    if not _QUANTITY.fullmatch(str(stated)):
        return measured
    grouping = "," if "," in str(stated) else ""
    return f"{measured / scale:{grouping}.{decimals}f}{suffix}"


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


def _bounds(claim: Claim, unit: str) -> tuple[float, float, float]:
    stated = claim.stated
    tolerance = None
    if isinstance(stated, dict):
        if "value" not in stated or set(stated) - {"value", "tolerance"}:
            raise ClaimError(f"claim {claim.name}: write {{value: ..., tolerance: ...}}")
        stated, tolerance = stated["value"], stated.get("tolerance")
    try:
        value, half_unit = parse_quantity(stated, unit)
        if tolerance is None:
            bounds = value, value - half_unit, value + half_unit
        elif isinstance(tolerance, str) and tolerance.strip().endswith("%"):
            margin = abs(value) * float(tolerance.strip()[:-1]) / 100
            bounds = value, value - margin, value + margin
        else:
            margin, _ = parse_quantity(tolerance, unit)
            bounds = value, value - margin, value + margin
    except OverflowError:  # an integer beyond any float
        bounds = (math.inf,) * 3
    if not all(map(math.isfinite, bounds)):  # "1e400", a 400-digit number: no figure is that large
        raise ClaimError(f"claim {claim.name}: out of range")
    return bounds


def validate(claim: Claim) -> None:
    if claim.name.startswith("config."):
        return
    from .._release.record import is_release_claim, validate_claim

    if is_release_claim(claim.name):  # chat_template, *_token, generation.*, model_max_length
        validate_claim(claim)
        return
    if "@" in claim.name and (problem := name_problem(claim.name)):  # a serving figure: kv_bytes...@tp8
        raise ClaimError(f"claim {claim.name[:80]}: {problem}")
    unit = FIGURE_UNITS.get(claim.name) or figure_unit(claim.name)
    if unit is None:
        closest = difflib.get_close_matches(claim.name, FIGURE_UNITS, n=1)
        if closest:  # a typo: the one name meant, not the whole list
            raise ClaimError(f"unknown figure {claim.name[:80]!r}: did you mean {closest[0]!r}?")
        known = ", ".join(sorted(FIGURE_UNITS))
        raise ClaimError(
            f"unknown figure {claim.name[:80]!r} (known: {known}, config.<key>, or a serving figure "
            "such as tokens_that_fit@tp8,80GB)"
        )
    if isinstance(claim.stated, dict) and "value" not in claim.stated:
        if not all(isinstance(v, int) for v in claim.stated.values()):
            raise ClaimError(f"claim {claim.name}: a mapping claim needs whole numbers")
        return
    try:
        _bounds(claim, unit)
    except ClaimError:
        raise
    except ValueError as exc:
        raise ClaimError(f"claim {claim.name}: {exc}") from None


def evaluate(
    claim: Claim,
    figures: dict[str, Any],
    config: dict[str, Any],
    unverified: tuple[str, ...] = (),
    release: dict[str, Any] | None = None,
    recorded_release: dict[str, Any] | None = None,
) -> ClaimResult:
    """``release``: the release record (``_release.record``) of what is checked; ``recorded_release``:
    the baseline's, which ``chat_template: unchanged`` compares with."""
    from .._release.record import evaluate_claim, is_release_claim

    if is_release_claim(claim.name):
        return evaluate_claim(claim, release, recorded_release)
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
    _, low, high = _bounds(claim, FIGURE_UNITS.get(claim.name) or figure_unit(claim.name) or "count")
    holds = isinstance(measured, (int, float)) and low <= measured <= high
    return ClaimResult(
        claim, measured, holds, f"{in_unit(low, claim)} ≤ x ≤ {in_unit(high, claim)}", unverified
    )
