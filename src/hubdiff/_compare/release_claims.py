"""Claims on a release's files, checked against its record (``_release.record``):

- ``chat_template: unchanged`` (the recorded template's hash), ``chat_template: same prompts`` (every
  recorded prompt hash: a cosmetic edit holds), or a sha256;
- ``eos_token: "<|im_end|>"`` and any other ``*_token`` (``null``: the release has none);
- ``generation.temperature: 0.6`` and any other key of generation_config.json;
- ``model_max_length: 131072``.
"""

from __future__ import annotations

import re
from typing import Any

from .._metrics.figures import FIGURE_UNITS
from .._release.record import RECORD_KEY, SHA256
from ..values import same_value
from .claim import Claim, ClaimError, ClaimResult

_TOKEN_CLAIM = re.compile(r"(?!.*_per_token$)[A-Za-z0-9_]{1,60}_token")
TEMPLATE_CLAIMS = ("unchanged", "same prompts")


def is_release_claim(name: str) -> bool:
    """chat_template, model_max_length, generation.KEY, or a special token (``eos_token``; never a
    figure such as ``kv_bytes_per_token``)."""
    if name in ("chat_template", "model_max_length") or name.startswith("generation."):
        return True
    return bool(_TOKEN_CLAIM.fullmatch(name)) and name not in FIGURE_UNITS


def validate_release_claim(claim: Claim) -> None:
    stated = claim.stated
    if claim.name == "chat_template":
        if stated not in TEMPLATE_CLAIMS and not (isinstance(stated, str) and SHA256.fullmatch(stated)):
            raise ClaimError(
                f"claim chat_template: write 'unchanged', 'same prompts' or a sha256, not {str(stated)[:40]!r}"
            )
    elif claim.name.endswith("_token") and not claim.name.startswith("generation."):
        if stated is not None and not isinstance(stated, str):
            raise ClaimError(f"claim {claim.name}: a token is a string (or null: none)")
    elif claim.name == "model_max_length":
        if isinstance(stated, bool) or not isinstance(stated, (int, float)):
            raise ClaimError("claim model_max_length: a number")
    elif not RECORD_KEY.fullmatch(claim.name.removeprefix("generation.")):
        raise ClaimError(f"claim {claim.name[:80]}: generation.<key of generation_config.json>")


def evaluate_release_claim(
    claim: Claim, now: dict[str, Any] | None, recorded: dict[str, Any] | None
) -> ClaimResult:
    """``now``: the release record of the revision checked (None: not read, ``--offline``);
    ``recorded``: the baseline's."""
    if now is None:
        return ClaimResult(claim, None, False, "not checked: the release files were not read (--offline)")
    if claim.name == "chat_template":
        template = now.get("chat_template") or {}
        measured = template.get("sha256")
        before = (recorded or {}).get("chat_template") or {}
        if claim.stated == "unchanged":
            return ClaimResult(
                claim,
                measured,
                measured is not None and measured == before.get("sha256"),
                "the recorded template's sha256",
            )
        if claim.stated == "same prompts":
            prompts = template.get("prompts") or {}
            holds = bool(prompts) and prompts == (before.get("prompts") or {})
            return ClaimResult(claim, measured, holds, "the recorded prompts' sha256 on every conversation")
        return ClaimResult(claim, measured, measured == claim.stated, "sha256 equal")
    if claim.name == "model_max_length":
        measured = now.get("model_max_length")
    elif claim.name.startswith("generation."):
        measured = (now.get("generation") or {}).get(claim.name.removeprefix("generation."))
    else:
        measured = (now.get("special_tokens") or {}).get(claim.name)
    return ClaimResult(claim, measured, same_value(measured, claim.stated), "equal")
