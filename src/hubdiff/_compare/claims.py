"""Claims: statements an analyst wants to publish, checked at the precision they are written in.

``kv_bytes_per_token: 6.0 KB`` holds for 5,950 to 6,050 bytes; ``routed_expert_params: 25.17M`` for
25,165,000 to 25,175,000; ``{value: 0.56B, tolerance: 2%}`` or ``tolerance: 10M`` widens or narrows
that; a mapping (``attention_layers: {kda: 34, dsa: 11}``) must match exactly; ``config.<key path>``
claims a config value.
"""

from __future__ import annotations

import difflib
import math
from typing import Any

from .._metrics.figures import FIGURE_UNITS
from .._metrics.serving_options import figure_unit, name_problem
from ..units import parse_quantity
from .claim import _QUANTITY, Claim, ClaimError, ClaimResult, in_unit, written_unit
from .release_claims import evaluate_release_claim, is_release_claim, validate_release_claim


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
    if is_release_claim(claim.name):  # chat_template, *_token, generation.*, model_max_length
        validate_release_claim(claim)
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
    if is_release_claim(claim.name):
        return evaluate_release_claim(claim, release, recorded_release)
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
