"""Markdown (and plain-text) reports from the jinja2 templates in ``templates/``.

Everything that came from the Hub passes through ``md`` or ``code`` before it reaches markdown: HTML
is written as entities; an ``@`` that could start a mention or end an e-mail's local part is followed
by a zero-width space (written as the entity, so the text stays ASCII), which GitHub's mention and
e-mail autolink rules do not match across; ``:`` and the
dot of ``www.`` are backslash-escaped, so GFM's extended autolinks (``https://``, ``www.``,
``mailto:``, ``xmpp:``) never start; ``|`` and newlines cannot break a table; code spans are fenced
with more backticks than they contain; and invisible characters (bidi overrides, zero-width, control)
are written as visible escapes, in code spans too. Every expression a template writes is passed
through ``printable_lines`` as well (jinja2's ``finalize``), so a field a template forgets to escape
still cannot carry a terminal escape or a bidi override.
"""

from __future__ import annotations

import json
import os
import re
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import jinja2

from .._compare.claims import ClaimResult, restated
from .._compare.release import hub_count
from .._metrics.memory import total_memory
from .._metrics.results import Metrics
from ..results import Report
from ..units import gib, human_bytes, human_count
from ..visible import ascii_form, named, printable, printable_lines
from .headline import (
    by_impact,
    change,
    config_impact,
    headline,
    headlined,
    key_figures,
    release_heading,
    reshaped_first,
)
from .marker import comment_marker
from .text import fit, grouped, layer_strip

COMMENT_LIMIT = 65_536
STEP_SUMMARY_LIMIT = 1_000_000  # GitHub refuses job summaries over 1 MiB
COMMENT_ROWS = 40  # rows per folded table of a PR comment; the rest is in the full report
MAX_TEXT = 300
# Markdown punctuation, plus what starts a GFM extended autolink: the dot of "www.", the colon of
# "scheme://", "mailto:" and "xmpp:".
_MD_SPECIAL = re.compile(
    r"([\\`*_\[\]#|~!])|(?<=[wW]{3})(\.)|(:)(?=//)|(?<=[mM][aA][iI][lL][tT][oO])(:)|(?<=[xX][mM][pP][pP])(:)"
)
# An @ that GitHub reads as a mention (after a non-word character) or that could end the local part of
# an e-mail autolink (a domain with a dot follows).
_AT = re.compile(r"(?<![A-Za-z0-9_])@|@(?=[A-Za-z0-9._-]*\.[A-Za-z0-9])")


def _clip(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def md(value: Any, limit: int = MAX_TEXT) -> str:
    """Text from the Hub as inert markdown: no HTML, no mentions, no table breaks."""
    text = printable(_clip(re.sub(r"[\r\n\t]+", " ", str(value)), limit))
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), text)
    return _AT.sub("@&#8203;", text)


def code(value: Any, limit: int = MAX_TEXT, table: bool = True) -> str:
    """An inline code span that its content cannot end early; ``|`` escaped for table cells."""
    text = printable(
        _clip(re.sub(r"[\r\n\t]+", " ", value if isinstance(value, str) else json.dumps(value)), limit)
    )
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    if text.startswith("`") or text.endswith("`") or not text.strip():
        text = f" {text} "
    if table:
        text = text.replace("|", "\\|")
    form = ascii_form(text)
    if form is not None:  # a name that could pass for another: its ASCII form beside it
        return f"{fence}{text}{fence} ({code(form, limit * 8, table)})"
    return f"{fence}{text}{fence}"


def config_value(value: Any) -> str:
    """A config value as people read it: whole numbers with thousands separators, the rest as JSON."""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if isinstance(value, float) and value.is_integer() and abs(value) >= 1000:
        return f"{value:,.0f}"
    return json.dumps(value, ensure_ascii=False)


def number(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.0f}" if value.is_integer() else f"{value:,.4g}"
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items())
    return str(value)


def figure(value: Any, unit: str) -> str:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return number(value)
    if unit == "params":
        return f"{number(value)} ({human_count(value)})" if value >= 1000 else number(value)
    if unit == "bytes":
        return f"{number(value)} ({human_bytes(value)})" if value >= 1000 else f"{number(value)} B"
    return number(value)


def gigabytes(value: float) -> str:
    return f"{value / 1e9:.2f} GB"


def architecture_rows(old: Metrics, new: Metrics) -> list[tuple[str, str, str]]:
    def row(label: str, get: Any) -> tuple[str, str, str]:
        return label, get(old), get(new)

    def cfg(*keys: str) -> Any:
        return lambda m: number(m.cfg.get(*keys)) if m.cfg.get(*keys) is not None else "-"

    def rope(m: Metrics) -> str:
        params = m.cfg.get("rope_parameters")
        theta = params.get("rope_theta") if isinstance(params, dict) else m.cfg.get("rope_theta")
        return number(theta) if theta is not None else "-"

    def layers(m: Metrics) -> str:
        f = m.figures()
        return f"{f['layers']}" + (f" (+{f['mtp_layers']} MTP)" if f["mtp_layers"] else "")

    def experts(m: Metrics) -> str:
        e = m.experts
        if not e["moe_layers"]:
            return "dense"
        shared = f" + {e['shared_per_layer']} shared" if e["shared_per_layer"] else ""
        return (
            f"{e['routed_per_layer']} routed{shared}, top-{e['experts_per_token']}, "
            f"{human_count(e['params_per_routed_expert'])} each, {e['moe_layers']} MoE layers"
        )

    def indexer(m: Metrics) -> str:
        i = m.indexer_summary()
        if not (i["own"] or i["shared"]):
            return "-"
        return (
            f"runs in {i['own']}, {i['shared']} reuse; tensors in {i['layers_with_indexer_tensors']} layers"
        )

    def kv(m: Metrics) -> str:
        n = m.kv.bytes_per_token
        return f"{n:,} B ({human_bytes(n)})" if n >= 1000 else f"{n:,} B"

    return [
        row("layers", layers),
        row("attention", lambda m: number(m.attention_layers())),
        row("DSA indexer", indexer),
        row("experts", experts),
        row("hidden size", cfg("hidden_size")),
        row(
            "attention heads / KV heads",
            lambda m: f"{number(m.cfg.num_heads)} / {number(m.cfg.num_kv_heads)}",
        ),
        row(
            "kv_lora_rank + qk_rope_head_dim",
            lambda m: (
                f"{m.cfg.number('kv_lora_rank')} + {m.cfg.number('qk_rope_head_dim', default=0)}"
                if m.cfg.is_mla
                else "-"
            ),
        ),
        row("vocabulary", cfg("vocab_size")),
        row("context (max_position_embeddings)", cfg("max_position_embeddings")),
        row("rope theta", rope),
        row("parameters", lambda m: human_count(m.params.total)),
        row("active per token", lambda m: human_count(m.active_params)),
        row("vision tower", lambda m: human_count(m.params.by_component.get("vision_tower", 0)) or "-"),
        row(f"KV cache per token ({new.kv.profile}, {new.kv.kv_dtype})", kv),
        row(
            "recurrent state per sequence",
            lambda m: human_bytes(m.kv.state_bytes_per_sequence, 2) if m.kv.state_bytes_per_sequence else "-",
        ),
    ]


def memory_row(old: Any, new: Any) -> tuple[str, str, str]:
    """Weights + one sequence's KV cache and state at each side's own context (``metrics --batch-size``
    for more): the stored bytes when headers were read, else the estimate's."""

    def one(side: Any) -> str:
        stored = side.snapshot.tensor_bytes() if side.metrics.basis == "headers" else None
        m = total_memory(side.metrics, stored)
        return f"{human_bytes(m.total_bytes)} at {m.context_tokens:,} tokens"

    return "memory (weights + KV and state, one sequence)", one(old), one(new)


def kv_derivation(metrics: Metrics) -> str:
    terms = [f"{g.layers} × {g.formula}" for g in metrics.kv.groups if g.window_tokens is None]
    return " + ".join(terms) + f" = {metrics.kv.bytes_per_token:,} bytes/token" if terms else "no KV cache"


# what a reviewer is offered to claim for a new release, in the order a model card states them
CLAIMABLE = (
    "total_params",
    "main_params",
    "active_params",
    "layers",
    "routed_experts_per_layer",
    "experts_per_token",
    "kv_bytes_per_token",
    "state_bytes_per_sequence",
)


class _Compiled(jinja2.ModuleLoader):
    """The compiled templates, which hold no sources: asking it for one passes to the next loader
    (jinja2's ``ModuleLoader`` raises instead, which would stop a ``ChoiceLoader``)."""

    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str | None, Any]:
        raise jinja2.TemplateNotFound(template)


@cache
def environment(template_dir: Path | None = None) -> jinja2.Environment:
    """One per template folder and process, so that the templates (``_macros.md.j2`` above all) are
    compiled once for every form a run renders. Never a bytecode cache on disk: that is code read back
    with ``marshal`` from a cache folder, which can be planted (one restored in CI). The shipped
    templates are compiled once per user and jinja2 into a folder of the user's alone (``compiled``)
    and imported from there; a template of ``template_dir`` overrides the shipped one of its name."""
    from . import compiled

    shipped = jinja2.FileSystemLoader(str(files("hubdiff.templates")))
    env = jinja2.Environment(
        loader=shipped,
        autoescape=False,  # markdown, escaped field by field with md/code
        finalize=lambda value: printable_lines(str(value)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        t=named,
        value=config_value,
        md=md,
        code=code,
        number=number,
        count=human_count,
        bytes=human_bytes,
        gib=gib,
        figure=figure,
        gb=gigabytes,
        grouped=grouped,
    )
    env.globals.update(
        layer_strip=layer_strip,
        architecture_rows=architecture_rows,
        memory_row=memory_row,
        kv_derivation=kv_derivation,
        change=change,
        by_impact=by_impact,
        reshaped_first=reshaped_first,
        key_figures=key_figures,
        config_impact=config_impact,
        hub_count=hub_count,
        release_heading=release_heading,
        CLAIMABLE=CLAIMABLE,
        accept_commands=accept_commands,
        accepted=accepted,
    )
    from .release import GLOBALS as release_globals

    env.globals.update(release_globals)
    # compiled with the filters and globals in place (the compiler looks filters up)
    loaders: list[jinja2.BaseLoader] = []
    if template_dir is not None:
        loaders.append(jinja2.FileSystemLoader(str(template_dir)))
    folder = compiled.code_folder(env)
    if folder is not None:
        loaders.append(_Compiled(str(folder)))
    env.loader = jinja2.ChoiceLoader([*loaders, shipped])
    return env


def accepted(result: ClaimResult) -> str:
    """What accepting the measured figures writes over a broken claim, as the file will read."""
    from .._baseline.accept import written

    return written(restated(result.claim, result.measured))


def accept_commands(kind: str, results: Any) -> list[str]:
    """The command that accepts a report's measured figures, per baseline file (see ``_baseline.accept``)."""
    from .._baseline.accept import accept_commands as commands

    return commands(kind, results)


def workflow_run_url(env: dict[str, str] | None = None) -> str | None:
    """The GitHub Actions run this runs in (its job summary and artifacts), from the variables Actions
    sets; None outside Actions or when a value does not look like one (it goes into a link)."""
    env = dict(os.environ) if env is None else env
    server, repo, run = (
        env.get("GITHUB_SERVER_URL", ""),
        env.get("GITHUB_REPOSITORY", ""),
        env.get("GITHUB_RUN_ID", ""),
    )
    if (
        re.fullmatch(r"https://[A-Za-z0-9.-]+(:\d+)?", server)
        and re.fullmatch(r"[\w.-]+/[\w.-]+", repo)
        and run.isdigit()
    ):
        return f"{server}/{repo}/actions/runs/{run}"
    return None


def full_report_link(full_report: str | None, run_url: str | None) -> str:
    """Where a reader finds the full report: the run's page (job summary, artifacts) when there is one,
    since a local path in a PR comment leads nowhere."""
    if run_url:
        where = f" ({code(Path(full_report).name, table=False)} in its artifacts)" if full_report else ""
        return f"[job summary and artifacts of the workflow run]({run_url}){where}"
    return md(full_report or "in the job artifacts")


def render(
    report: Report,
    form: str = "report",
    template_dir: Path | None = None,
    max_rows: int | None = None,
    full_report: str | None = None,
    marker: str = "hubdiff",
    run_url: str | None = None,
) -> str:
    """``form``: report (full markdown), comment (PR comment), summary (job summary), text, or changes."""
    name = {
        "report": "report.md.j2",
        "comment": "comment.md.j2",
        "summary": "summary.md.j2",
        "text": "report.txt.j2",
        "changes": "report.txt.j2",  # the text form without claims: what lies behind a failing check
    }[form]
    template = environment(template_dir).get_template(name)
    report = headlined(report)
    text = template.render(
        report=report,
        max_rows=max_rows,
        full_report=full_report,
        marker=comment_marker(marker),
        results=report.results,
        show_claims=form != "changes",
        full_report_link=full_report_link(full_report, run_url),
    )
    return fit(text) if name == "report.txt.j2" else text


def render_comment(
    report: Report,
    template_dir: Path | None = None,
    full_report: str | None = None,
    limit: int = COMMENT_LIMIT,
    marker: str = "hubdiff",
    run_url: str | None = None,
) -> str:
    """The PR comment, cut down until it fits GitHub's limit; what was cut is said, with where the full
    report is (``run_url``: the workflow run, see ``workflow_run_url``)."""
    for rows in (COMMENT_ROWS, 10, 0):
        text = render(report, "comment", template_dir, rows, full_report, marker, run_url)
        if len(text) <= limit:
            return text
    note = f"\n\n… cut to fit a comment; the full report: {full_report_link(full_report, run_url)}\n"
    return text[: limit - len(note)] + note


def fit_summary(text: str, limit: int = STEP_SUMMARY_LIMIT) -> str:
    """A job summary cut to ``limit`` bytes, saying so: GitHub drops a summary over its limit whole."""
    if len(text.encode()) <= limit:
        return text
    note = "\n\n… cut to GitHub's job-summary limit; see the report artifacts.\n"
    return text.encode()[: max(0, limit - len(note.encode()))].decode(errors="ignore") + note


REPORT_FORMAT = 1  # of diff / check / watch JSON, as snapshot and metrics JSON carry theirs (schemas/)


def report_json(report: Report) -> dict[str, Any]:
    results: list[dict[str, Any]] = []
    out: dict[str, Any] = {
        "format": REPORT_FORMAT,
        "kind": report.kind,
        "exit_code": report.exit_code,
        "results": results,
    }
    for r in report.results:
        entry: dict[str, Any] = {
            "title": r.title,
            "status": r.status,
            "headline": headline(r),
            "error": r.error,
            "kind": r.kind,
            "note": r.note,
            "sibling": r.sibling,
            "baseline": str(r.baseline) if r.baseline is not None else None,
            "changed": r.changed,
        }
        if r.variant is not None:
            entry["variant"] = vars(r.variant)
        c = r.comparison
        if c is not None:
            entry["old"] = {"label": c.old.label, "sha": c.old.snapshot.sha}
            entry["new"] = {"label": c.new.label, "sha": c.new.snapshot.sha}
            for side, key in ((c.old, "old"), (c.new, "new")):
                entry[key]["hub_parameters"] = side.snapshot.hub_parameters
            entry["config"] = [
                {
                    "path": x.path,
                    "kind": x.kind,
                    "old": x.old,
                    "new": x.new,
                    "category": x.category,
                    "rule": x.rule,
                    "summary": x.summary,
                    "deepdiff": [{"type": kind, "path": path} for kind, path in x.deepdiff],
                    **({"moved_from": x.moved_from} if x.moved_from else {}),
                }
                for x in c.config
            ]
            entry["tensors"] = tensors_json(c.tensors)
            entry["metrics"] = [
                {"name": m.name, "old": m.old, "new": m.new, "delta": m.delta, "ratio": m.ratio}
                for m in c.metrics
            ]
            entry["kv_variants"] = [vars(v) for v in r.kv_variants]
        if r.gguf is not None:
            entry["gguf"] = gguf_json(r)
        if r.release is not None:
            from .release import release_json

            entry["release"] = release_json(r.release)
        entry["claims"] = [
            {
                "name": x.claim.name,
                "stated": x.claim.stated,
                "measured": x.measured,
                "holds": x.holds,
                "rule": x.rule,
                "unverified": list(x.unverified),
                "line": x.claim.line,
                "measured_text": x.measured_text,
                "accepted": None if x.holds else accepted(x),
            }
            for x in r.claims
        ]
        results.append(entry)
    return out


def tensors_json(t: Any) -> dict[str, Any]:
    """A ``TensorDiff`` as report JSON: a check's tensor layout, a GGUF pin's strip."""
    return {
        "old_count": t.old_count,
        "new_count": t.new_count,
        "added": [
            {"pattern": p.name, "dtype": p.dtype, "shape": list(p.shape), "count": p.count} for p in t.added
        ],
        "removed": [
            {"pattern": p.name, "dtype": p.dtype, "shape": list(p.shape), "count": p.count} for p in t.removed
        ],
        "changed": [
            {
                "pattern": x.pattern.name,
                "old": [x.old_dtype, list(x.old_shape)],
                "new": [x.pattern.dtype, list(x.pattern.shape)],
                "count": x.pattern.count,
            }
            for x in t.changed
        ],
        "templates": [vars(x) for x in t.templates],
        "cross_model": [vars(x) for x in t.cross_model],
    }


def gguf_json(r: Any) -> dict[str, Any]:
    """A GGUF entry's check as report JSON (``report.json``'s ``gguf``)."""
    g = r.gguf
    blocking = g.blocking(r.allowed)
    return {
        "old_sha": g.old_sha,
        "new_sha": g.new_sha,
        "pin": g.pin,
        "pinned": g.pinned,
        "variants": [vars(v) for v in g.variants],
        "changes": [
            {
                "variant": x.variant,
                "what": x.what,
                "kind": x.kind,
                "path": x.path,
                "old": x.old,
                "new": x.new,
                "allowed": x not in blocking,
            }
            for x in g.changes
        ],
        "strip": tensors_json(g.strip) if g.strip is not None else None,
    }
