"""The release files' part of a report: helpers the templates (``_release.md.j2``, ``report.txt.j2``)
lay out. Every string from the Hub goes through ``md``/``code`` or into a fenced block that it cannot
close, made visible (``printable_lines``)."""

from __future__ import annotations

import json
import re
from typing import Any

from .._release.diff import ReleaseDiff, TemplateDiff
from .._release.diff import template_summary as template_summary_line
from ..visible import printable, printable_lines

MAX_LINE = 300  # characters of one line shown from a template or a prompt


def fenced(lines: list[str] | tuple[str, ...], info: str = "") -> str:
    """A fenced code block that no line of its content can close (the fence is longer than any run of
    backticks in it), every invisible character made visible."""
    body = printable_lines("\n".join(_clip(line) for line in lines))
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{body}\n{fence}"


def _clip(line: str, limit: int = MAX_LINE) -> str:
    return line if len(line) <= limit else line[: limit - 1] + "…"


def token_text(content: str | None, token_id: int | None) -> str:
    """A special token as one line of plain text: its repr and id."""
    if content is None:
        return "(none)"
    shown = printable(json.dumps(content, ensure_ascii=False))
    return shown + (f" (id {token_id})" if token_id is not None else "")


def setting_text(value: Any) -> str:
    if value is None:
        return "(absent)"
    if isinstance(value, str):
        return printable(_clip(value, 120))
    return printable(_clip(json.dumps(value, ensure_ascii=False), 120))


def template_title(t: TemplateDiff) -> str:
    return "Chat template" if t.name == "default" else f"Chat template {t.name!r}"


def prompt_rows(t: TemplateDiff) -> list[tuple[str, str, str, str]]:
    """(conversation, result, old line, new line) per conversation."""
    rows = []
    for p in t.prompts:
        if p.same:
            failed = p.new is not None and p.new.text is None
            rows.append((p.conversation, "fails on both sides" if failed else "same prompt", "", ""))
            continue
        old = _side_line(p.old, p.old_line, p.line)
        new = _side_line(p.new, p.new_line, p.line)
        rows.append((p.conversation, f"differs from line {p.line}" if p.line else "differs", old, new))
    return rows


def _side_line(rendered: Any, line: str | None, at: int | None) -> str:
    """One side of a differing prompt: its first differing line, or what stands for it."""
    if rendered is None:
        return "(no template)"
    if rendered.recorded is not None:
        key = rendered.recorded
        return key if key.startswith("fails") else f"recorded prompt, sha256 {key[:12]}"
    if rendered.text is None:
        return f"does not render: {rendered.error}"
    if at is None:
        return f"prompt sha256 {rendered.key[:12]}"
    if line is None:
        return "(ends before)"
    return _clip(line, 160) if line else "(empty line)"


def text_lines(rel: ReleaseDiff | None, any_change: bool) -> list[str]:
    """The release files in the terminal report: one line per change, then each template's diff whole."""
    if rel is None:
        return []
    out: list[str] = []
    for t in rel.changed_templates:
        size = (
            f"+{t.added} -{t.removed} lines"
            if t.unified
            else f"sha256 {str(t.old_sha256)[:12]} -> {str(t.new_sha256)[:12]}"
        )
        out.append(f"  template {t.name}: {t.verdict} ({size})")
        if t.note:
            out.append(f"  note     {printable(t.note)}")
        for conversation, result, old, new in prompt_rows(t):
            if result != "same prompt":
                out.append(f"  prompt   {conversation}: {result}")
                if old or new:
                    out.append(f"             old: {printable(old)}")
                    out.append(f"             new: {printable(new)}")
        out.extend(f"  | {printable(_clip(line))}" for line in t.unified)
        if t.cut:
            out.append(f"  | … {t.cut} more diff lines")
    for tok in rel.changed_tokens:
        out.append(
            f"  token    {tok.name}: {token_text(tok.old, tok.old_id)} -> {token_text(tok.new, tok.new_id)}"
        )
    for r in rel.changed_rows(rel.generation, cosmetic=any_change):
        out.append(f"  generate {printable(r.name)}: {setting_text(r.old)} -> {setting_text(r.new)}")
    for r in rel.changed_rows(rel.tokenizer):
        out.append(f"  tokenizer {r.name}: {setting_text(r.old)} -> {setting_text(r.new)}")
    for content, old_id, new_id in rel.added_tokens[:40]:
        out.append(f"  added    {token_text(content, None)}: id {old_id} -> {new_id}")
    if len(rel.added_tokens) > 40:
        out.append(f"  added    … {len(rel.added_tokens) - 40} more")
    for r in rel.changed_rows(rel.processor):
        out.append(f"  processor {printable(r.name)}: {setting_text(r.old)} -> {setting_text(r.new)}")
    for w in rel.warnings:
        out.append(f"  warning  {printable(w)}")
    for side, files in (("old", rel.old), ("new", rel.new)):
        for note in files.notes:
            out.append(f"  note     {side}: {printable(note)}")
    return out


def present(rows: Any) -> list[Any]:
    """The rows either side has a value for."""
    return [r for r in rows if r.old not in (None, []) or r.new not in (None, [])]


def prompt_line(rendered: Any, line: str | None, at: int | None = 1) -> str:
    return _side_line(rendered, line, at)


def other_summary(rel: ReleaseDiff) -> list[str]:
    return rel.other_summary()


GLOBALS = {
    "release_template_summary": template_summary_line,
    "release_other_summary": other_summary,
    "release_template_title": template_title,
    "release_prompt_rows": prompt_rows,
    "release_fenced": fenced,
    "release_token": token_text,
    "release_setting": setting_text,
    "release_present": present,
    "release_prompt_line": prompt_line,
    "release_text_lines": text_lines,
}


def release_json(rel: ReleaseDiff) -> dict[str, Any]:
    """The release files' comparison in ``--json`` (``report.json``'s ``release``)."""

    def rendered(r: Any) -> dict[str, Any] | None:
        if r is None:
            return None
        return {"sha256": r.sha256, "error": r.error, "kind": r.kind}

    return {
        "changed": rel.changed,
        "summary": rel.summary(),
        "old_files": list(rel.old.files),
        "new_files": list(rel.new.files),
        "templates": [
            {
                "name": t.name,
                "verdict": t.verdict,
                "old_file": t.old_file,
                "new_file": t.new_file,
                "old_sha256": t.old_sha256,
                "new_sha256": t.new_sha256,
                "added_lines": t.added,
                "removed_lines": t.removed,
                "diff": list(t.unified),
                "prompts": [
                    {
                        "conversation": p.conversation,
                        "same": p.same,
                        "line": p.line,
                        "old_line": p.old_line,
                        "new_line": p.new_line,
                        "old": rendered(p.old),
                        "new": rendered(p.new),
                    }
                    for p in t.prompts
                ],
            }
            for t in rel.templates
        ],
        "special_tokens": [
            {
                "name": x.name,
                "old": x.old,
                "new": x.new,
                "old_id": x.old_id,
                "new_id": x.new_id,
                "changed": x.changed,
            }
            for x in rel.tokens
        ],
        "generation": [
            {"name": r.name, "old": r.old, "new": r.new, "changed": r.changed, "cosmetic": r.cosmetic}
            for r in rel.generation
        ],
        "tokenizer": [
            {"name": r.name, "old": r.old, "new": r.new, "changed": r.changed} for r in rel.tokenizer
        ],
        "processor": [{"name": r.name, "old": r.old, "new": r.new} for r in rel.processor],
        "added_tokens": [{"token": c, "old_id": a, "new_id": b} for c, a, b in rel.added_tokens],
        "warnings": list(rel.warnings),
        "notes": {"old": list(rel.old.notes), "new": list(rel.new.notes)},
    }
