"""What a baseline keeps of a release's files, and checking a new revision against it (the claims that
can pin them are ``_compare.release_claims``).

A baseline records hashes, not text: the chat template's sha256, the sha256 of the prompt it renders
on each fixed conversation (or ``fails: KIND``), the special tokens with their ids, the generation
defaults and ``model_max_length``. ``check`` compares a revision with that record: a template with a
new hash whose prompts all hash the same is cosmetic; ``hubdiff diff`` between the two commits shows
the text.
"""

from __future__ import annotations

import re
from typing import Any

from .diff import (
    COSMETIC_GENERATION,
    ReleaseDiff,
    Row,
    TemplateDiff,
    TokenRow,
    _rows,
    eos_warnings,
)
from .files import ReleaseFiles
from .render import CONVERSATION_NAMES, Rendered, compare_prompts, render_template

SHA256 = re.compile(r"[0-9a-f]{64}")  # a file's or a rendered prompt's hash, as recorded
RECORD_KEY = re.compile(r"[A-Za-z0-9_.-]{1,100}")  # a key of generation_config.json or a token's name
RECORD_KEYS = (
    "chat_template",
    "named_templates",
    "special_tokens",
    "token_ids",
    "generation",
    "model_max_length",
)


def release_record(files: ReleaseFiles, prompts: tuple[Rendered, ...] | None = None) -> dict[str, Any]:
    """The baseline's ``release`` entry; ``prompts``: the default template's renders (rendered here
    when not given)."""
    out: dict[str, Any] = {}
    template = files.template
    if template is not None:
        if prompts is None:
            prompts = render_template(template.text, files.special_tokens)
        out["chat_template"] = {
            "file": template.file,
            "sha256": template.sha256,
            "prompts": {r.conversation: r.key for r in prompts},
        }
    named = {t.name: t.sha256 for t in files.templates if t.name != "default"}
    if named:
        out["named_templates"] = named
    if files.special_tokens:
        out["special_tokens"] = dict(files.special_tokens)
        ids = {n: files.token_id(c) for n, c in files.special_tokens.items() if files.token_id(c) is not None}
        if ids:
            out["token_ids"] = ids
    if files.generation is not None:
        out["generation"] = dict(files.generation)
    if files.model_max_length is not None:
        out["model_max_length"] = files.model_max_length
    return out


def check_record(record: Any) -> str | None:
    """What is wrong with a baseline's ``release`` entry (it may have been edited), or None."""
    if not isinstance(record, dict):
        return "must be a mapping"
    bad = set(record) - set(RECORD_KEYS)
    if bad:
        return f"unknown key {sorted(bad)[0]!r} (known: {', '.join(RECORD_KEYS)})"
    template = record.get("chat_template")
    if template is not None:
        if not isinstance(template, dict) or not SHA256.fullmatch(str(template.get("sha256", ""))):
            return "chat_template needs a sha256 (64 hex digits)"
        prompts = template.get("prompts") or {}
        if not isinstance(prompts, dict) or not all(
            k in CONVERSATION_NAMES
            and isinstance(v, str)
            and (SHA256.fullmatch(v) or v.startswith("fails: "))
            for k, v in prompts.items()
        ):
            return "chat_template.prompts maps the fixed conversations to a sha256 or 'fails: KIND'"
    for key, kind in (("special_tokens", str), ("token_ids", int), ("named_templates", str)):
        value = record.get(key)
        if value is not None and (
            not isinstance(value, dict)
            or not all(
                isinstance(k, str) and RECORD_KEY.fullmatch(k) and type(v) is kind for k, v in value.items()
            )
        ):
            return f"{key} must map names to {kind.__name__}s"
    if record.get("generation") is not None and not isinstance(record["generation"], dict):
        return "generation must be a mapping"
    length = record.get("model_max_length")
    if length is not None and (isinstance(length, bool) or not isinstance(length, (int, float))):
        return "model_max_length must be a number"
    return None


def compare_with_record(record: dict[str, Any], new: ReleaseFiles) -> ReleaseDiff:
    """A revision's release files against a baseline's record (``check``)."""
    old = ReleaseFiles(
        files=("the baseline's record",),
        special_tokens=dict(record.get("special_tokens") or {}),
        generation=record.get("generation"),
        model_max_length=record.get("model_max_length"),
    )
    templates = []
    recorded = record.get("chat_template")
    template = new.template
    old_sha = recorded["sha256"] if recorded else None
    new_sha = template.sha256 if template else None
    if recorded or template:
        prompts: tuple[Any, ...] = ()
        note = None
        if old_sha != new_sha:
            olds = (
                tuple(
                    Rendered(n, None, kind="recorded", recorded=k)
                    for n, k in (recorded.get("prompts") or {}).items()
                )
                if recorded
                else None
            )
            news = render_template(template.text, new.special_tokens) if template else None
            prompts = compare_prompts(olds, news)
            note = (
                "the baseline keeps the template's sha256, not its text: `hubdiff diff` between the "
                "recorded commit and this one shows the text"
            )
        templates.append(
            TemplateDiff(
                "default",
                recorded.get("file") if recorded else None,
                template.file if template else None,
                old_sha,
                new_sha,
                (),
                0,
                0,
                prompts,
                False,
                note=note,
            )
        )
    ids = record.get("token_ids") or {}
    names = list(dict.fromkeys([*old.special_tokens, *new.special_tokens]))
    tokens = tuple(
        TokenRow(
            n,
            old.special_tokens.get(n),
            new.special_tokens.get(n),
            ids.get(n),
            new.token_id(new.special_tokens.get(n)),
        )
        for n in names
    )
    generation = _rows(old.generation or {}, new.generation or {}, COSMETIC_GENERATION)
    tokenizer = (Row("model_max_length", old.model_max_length, new.model_max_length),)
    return ReleaseDiff(
        old, new, tuple(templates), tokens, generation, tokenizer, (), (), tuple(eos_warnings(new))
    )
