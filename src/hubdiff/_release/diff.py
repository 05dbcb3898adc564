"""Two releases' files compared the way a reviewer reads them: each chat template as a unified diff with
what it does to the prompts, special tokens with their ids side by side, generation defaults, the
tokenizer's context length and vocabulary, processor settings."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

from .._threads import each_in_threads
from ..values import same_value
from .files import SPECIAL_TOKENS, ReleaseFiles
from .render import PromptComparison, Rendered, compare_prompts, render_template

# generation_config keys that say how the file was written, not how the model generates
COSMETIC_GENERATION = frozenset({"transformers_version", "_from_model_config"})
LONG_LINE = 160  # a template line longer than this is broken before each tag for the diff
_TAG = re.compile(r"(?=\{[%{#])")
MAX_DIFF_LINES = 2_000  # of one template's unified diff; the rest is counted, not shown


@dataclass(frozen=True)
class Row:
    """One setting on both sides (None: absent)."""

    name: str
    old: Any
    new: Any
    cosmetic: bool = False

    @property
    def changed(self) -> bool:
        return not same_value(self.old, self.new)


@dataclass(frozen=True)
class TokenRow:
    """A special token on both sides: its text and its id (from the added tokens), None where absent."""

    name: str
    old: str | None
    new: str | None
    old_id: int | None
    new_id: int | None

    @property
    def changed(self) -> bool:
        return self.old != self.new or self.old_id != self.new_id


@dataclass(frozen=True)
class TemplateDiff:
    name: str  # "default" or a named template
    old_file: str | None
    new_file: str | None
    old_sha256: str | None
    new_sha256: str | None
    unified: tuple[str, ...]  # the unified diff, headers included; empty when unchanged
    added: int
    removed: int
    prompts: tuple[PromptComparison, ...]
    reflowed: bool  # long lines were broken before each tag to make the diff readable
    cut: int = 0  # diff lines not kept (over MAX_DIFF_LINES)
    note: str | None = None  # why there is no diff (a baseline keeps only the hash)

    @property
    def changed(self) -> bool:
        return self.old_sha256 != self.new_sha256

    @property
    def verdict(self) -> str:
        """unchanged; added or removed; cosmetic (every conversation renders the same prompt); real."""
        if not self.changed:
            return "unchanged"
        if self.old_sha256 is None:
            return "added"
        if self.new_sha256 is None:
            return "removed"
        return "cosmetic" if all(p.same for p in self.prompts) else "real"

    @property
    def differing(self) -> list[PromptComparison]:
        return [p for p in self.prompts if not p.same]

    @property
    def failed(self) -> list[tuple[str, Rendered]]:
        """(side, render) of every conversation a template could not render."""
        out = []
        for p in self.prompts:
            for side, r in (("old", p.old), ("new", p.new)):
                if r is not None and r.text is None:
                    out.append((side, r))
        return out

    @property
    def changed_text(self) -> list[str]:
        """The template's own lines that were added or removed, as the diff shows them."""
        return [line for line in self.unified if line[:1] in "+-" and not line.startswith(("+++", "---"))]


@dataclass(frozen=True)
class ReleaseDiff:
    old: ReleaseFiles
    new: ReleaseFiles
    templates: tuple[TemplateDiff, ...]
    tokens: tuple[TokenRow, ...]
    generation: tuple[Row, ...]
    tokenizer: tuple[Row, ...]
    processor: tuple[Row, ...]
    added_tokens: tuple[tuple[str, int | None, int | None], ...]  # content, old id, new id (changed only)
    warnings: tuple[str, ...] = ()  # the new side disagreeing with itself (eos ids)

    @property
    def changed_templates(self) -> list[TemplateDiff]:
        return [t for t in self.templates if t.changed]

    @property
    def changed_tokens(self) -> list[TokenRow]:
        return [t for t in self.tokens if t.changed]

    def changed_rows(self, rows: tuple[Row, ...], cosmetic: bool = False) -> list[Row]:
        return [r for r in rows if r.changed and (cosmetic or not r.cosmetic)]

    @property
    def changed(self) -> bool:
        """Anything a user of the model would notice (cosmetic generation keys aside)."""
        return bool(
            self.changed_templates
            or self.changed_tokens
            or self.changed_rows(self.generation)
            or self.changed_rows(self.tokenizer)
            or self.changed_rows(self.processor)
            or self.added_tokens
        )

    @property
    def differs(self) -> bool:
        return self.changed or bool(self.changed_rows(self.generation, cosmetic=True))

    def summary(self) -> list[str]:
        """One line per change, as the first screen says them."""
        out = [template_summary(t) for t in self.changed_templates]
        for tok in self.changed_tokens:
            out.append(f"{tok.name}: {_token(tok.old, tok.old_id)} → {_token(tok.new, tok.new_id)}")
        out.extend(
            f"generation default {r.name}: {_plain(r.old)} → {_plain(r.new)}"
            for r in self.changed_rows(self.generation)
        )
        return out + self.other_summary()

    def other_summary(self) -> list[str]:
        """The tokenizer's and processor's changes, in words."""
        out = [f"{r.name}: {_plain(r.old)} → {_plain(r.new)}" for r in self.changed_rows(self.tokenizer)]
        if self.added_tokens:
            out.append(f"added tokens: {len(self.added_tokens)} with another id or none")
        proc = self.changed_rows(self.processor)
        if proc:
            out.append(f"processor settings: {len(proc)} changed")
        return out


def template_summary(t: TemplateDiff) -> str:
    """A changed template in one line: what changed and what it does to the prompts."""
    what = "chat template" if t.name == "default" else f"chat template {t.name!r}"
    if t.verdict in ("added", "removed"):
        return f"{what} {t.verdict}"
    size = (
        f"+{t.added} −{t.removed} lines"
        if t.unified
        else f"sha256 {str(t.old_sha256)[:12]} → {str(t.new_sha256)[:12]}"
    )
    if t.verdict == "cosmetic":
        return f"{what} changed ({size}): cosmetic, the same prompts on all {len(t.prompts)} conversations"
    return (
        f"{what} changed ({size}): real, other prompts for {', '.join(p.conversation for p in t.differing)}"
    )


def _token(content: str | None, token_id: int | None) -> str:
    if content is None:
        return "(none)"
    return f"{content!r}" + (f" (id {token_id})" if token_id is not None else "")


def _plain(value: Any) -> str:
    return "(absent)" if value is None else str(value)


def reflow(text: str) -> tuple[list[str], bool]:
    """The template's lines, each over LONG_LINE characters broken before every ``{%``/``{{``/``{#``:
    a template written on one line otherwise diffs as one changed line."""
    out: list[str] = []
    broken = False
    for line in text.split("\n"):
        if len(line) > LONG_LINE:
            parts = [p for p in _TAG.split(line) if p]
            broken = broken or len(parts) > 1
            out.extend(parts)
        else:
            out.append(line)
    return out, broken


def template_diff(
    name: str, old: Any, new: Any, old_tokens: dict[str, str], new_tokens: dict[str, str]
) -> TemplateDiff:
    """``old``/``new``: ChatTemplate or None. Rendered only when the texts differ (the same text gives
    the same prompts: rendering is deterministic)."""
    old_lines, a = reflow(old.text) if old else ([], False)
    new_lines, b = reflow(new.text) if new else ([], False)
    changed = (old.sha256 if old else None) != (new.sha256 if new else None)
    unified: list[str] = []
    prompts: tuple[PromptComparison, ...] = ()
    if changed:
        unified = list(
            difflib.unified_diff(
                old_lines,
                new_lines,
                f"old/{old.file}" if old else "/dev/null",
                f"new/{new.file}" if new else "/dev/null",
                lineterm="",
            )
        )
        jobs = [(t, tokens) for t, tokens in ((old, old_tokens), (new, new_tokens))]
        done = each_in_threads(
            lambda i: render_template(jobs[i][0].text, jobs[i][1]) if jobs[i][0] else None, [0, 1], 2
        )
        prompts = compare_prompts(done[0], done[1])
    added = sum(1 for x in unified if x.startswith("+") and not x.startswith("+++"))
    removed = sum(1 for x in unified if x.startswith("-") and not x.startswith("---"))
    cut = max(0, len(unified) - MAX_DIFF_LINES)
    return TemplateDiff(
        name,
        old.file if old else None,
        new.file if new else None,
        old.sha256 if old else None,
        new.sha256 if new else None,
        tuple(unified[:MAX_DIFF_LINES]),
        added,
        removed,
        prompts,
        a or b,
        cut,
    )


def _ordered_tokens(old: ReleaseFiles, new: ReleaseFiles) -> list[str]:
    names = old.special_tokens.keys() | new.special_tokens.keys()
    return [n for n in SPECIAL_TOKENS if n in names] + sorted(names - set(SPECIAL_TOKENS))


def _flat(data: dict[str, Any] | None, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in (data or {}).items():
        if isinstance(value, dict) and value:
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _rows(
    old: dict[str, Any], new: dict[str, Any], cosmetic: frozenset[str] = frozenset()
) -> tuple[Row, ...]:
    return tuple(Row(k, old.get(k), new.get(k), k in cosmetic) for k in sorted(old.keys() | new.keys()))


def eos_warnings(files: ReleaseFiles) -> list[str]:
    """Where the release disagrees with itself: generation_config's eos_token_id not holding the id of
    the tokenizer's eos_token (generation would not stop where the chat template ends a turn)."""
    eos = files.special_tokens.get("eos_token")
    eos_id = files.token_id(eos)
    gen = files.generation or {}
    ids = gen.get("eos_token_id")
    listed = ids if isinstance(ids, list) else [ids] if ids is not None else []
    if eos is None or eos_id is None or not listed or eos_id in listed:
        return []
    return [
        f"generation_config.json eos_token_id {ids} does not include the id of eos_token {eos!r} ({eos_id})"
    ]


def compare_release(old: ReleaseFiles, new: ReleaseFiles) -> ReleaseDiff:
    olds = {t.name: t for t in old.templates}
    news = {t.name: t for t in new.templates}
    names = [n for n in ("default",) if n in olds or n in news] + sorted(
        (olds.keys() | news.keys()) - {"default"}
    )
    templates = tuple(
        template_diff(n, olds.get(n), news.get(n), old.special_tokens, new.special_tokens) for n in names
    )
    tokens = tuple(
        TokenRow(
            n,
            old.special_tokens.get(n),
            new.special_tokens.get(n),
            old.token_id(old.special_tokens.get(n)),
            new.token_id(new.special_tokens.get(n)),
        )
        for n in _ordered_tokens(old, new)
    )
    generation = _rows(old.generation or {}, new.generation or {}, COSMETIC_GENERATION)
    tokenizer = (
        Row("model_max_length", old.model_max_length, new.model_max_length),
        Row("extra special tokens", list(old.extra_special_tokens), list(new.extra_special_tokens)),
        Row("added tokens (tokenizer_config.json)", old.added_tokens, new.added_tokens),
        Row("vocabulary (tokenizer.json)", _vocab(old), _vocab(new)),
        Row(
            "chat template file",
            old.template.file if old.template else None,
            new.template.file if new.template else None,
        ),
    )
    processor = tuple(r for r in _rows(_processor(old), _processor(new)) if r.changed)
    added = tuple(
        (content, old.token_ids.get(content), new.token_ids.get(content))
        for content in sorted(old.token_ids.keys() | new.token_ids.keys())
        if old.token_ids.get(content) != new.token_ids.get(content)
    )
    return ReleaseDiff(
        old, new, templates, tokens, generation, tokenizer, processor, added, tuple(eos_warnings(new))
    )


def _vocab(files: ReleaseFiles) -> str | None:
    v = files.vocabulary
    if v is None:
        return None
    if v.size is not None:
        return f"{v.size:,} tokens"
    if v.lower_bound is not None:
        return (
            f"at least {v.lower_bound:,} tokens (highest added id + 1; the vocabulary is past the bytes read)"
        )
    return None


def _processor(files: ReleaseFiles) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for file, data in files.processor.items():
        out.update({f"{file}: {k}": v for k, v in _flat(data).items()})
    return out
