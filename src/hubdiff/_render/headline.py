"""What a reader sees first: the headline of a result (every report, annotation and terminal line opens
with it) and the "what changed that matters" block that opens a PR comment.

They live with the renderers, not with the jobs, because they decide wording only; the jobs decide
what changed and whether it fails.
"""

from __future__ import annotations

import re
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any

from .._compare.release import hub_count
from .._metrics.figures import FIGURE_UNITS
from ..patterns import parse_index_set
from ..results import RepoResult, Report
from ..units import human_bytes

if TYPE_CHECKING:
    from .._baseline.gguf_check import GGUFChange, GGUFCheck
    from .._compare import Comparison
    from .._compare.config_diff import ConfigChange
    from .._compare.tensor_diff import ShapeChange, TensorDiff
    from .._release.diff import ReleaseDiff


def change(old: float, new: float) -> str:
    """How a figure moved, said honestly: "−3.0%" for a small change (a ratio would round it to 1.0×),
    "−87.4%, 8.0× smaller" once the ratio says more than the percentage."""
    if old == new:
        return "unchanged"
    if not old:
        return "new"
    pct = (new - old) / abs(old) * 100
    text = f"{pct:+.1f}%".replace("-", "−")
    if new and old / new >= 2:
        text += f", {old / new:.1f}× smaller"
    elif new and new / old >= 2:
        text += f", {new / old:.1f}× larger"
    return text


def layer_moves(c: Comparison) -> str:
    """The biggest group of tensor kinds whose layer set changed: "self_attn.indexer.* tensors leave 57 layers"."""
    groups: dict[tuple[str, str], list[str]] = {}
    for x in c.tensors.templates:
        if x.old_count and x.new_count and x.old_layers != x.new_layers:
            groups.setdefault((x.old_layers, x.new_layers), []).append(x.template)
    if not groups:
        return ""
    (old, new), templates = max(groups.items(), key=lambda kv: len(kv[1]))
    before, after = set(parse_index_set(old)), set(parse_index_set(new))
    tails = [t.split("*", 1)[1].lstrip(".") if "*" in t else t for t in templates]
    split = [t.split(".") for t in tails]
    shared = []
    for parts in zip(*split):
        if len(set(parts)) != 1:
            break
        shared.append(parts[0])
    common = ".".join(shared[: min(len(x) for x in split) - 1])
    label = f"{common}.* tensors" if common else f"{len(templates)} tensor kinds"
    if after < before:
        return f"{label} leave {len(before - after)} of {len(before)} layers ({len(before)} → {len(after)})"
    if before < after:
        return f"{label} join {len(after - before)} layers ({len(before)} → {len(after)})"
    return f"{label} move from layers {old} to {new}"


NOTICE_WORDING = {
    "vanished": "vanished: repository not found (deleted, renamed, or made private: a token that may "
    "read it sees it)",
    "gated": "gated: the Hub refuses this token its files (accept the terms on the Hub, or give the "
    "workflow a token that has)",
    "disabled": "disabled on the Hub (nothing of it can be read until it is enabled again)",
    "skipped": "skipped",
}


def release_heading(result: RepoResult) -> str:
    """ "New release in glm-5: zai-org/GLM-5.3-Flash, compared with zai-org/GLM-5.3"."""
    repo = result.title.split("@")[0]
    if result.sibling is None:
        return f"New release in {result.family}: {repo}"
    return f"New release in {result.family}: {repo}, compared with {result.sibling}"


def variant_line(result: RepoResult) -> str:
    v = result.variant
    assert v is not None
    if v.kind == "same layout":
        return (
            f"same architecture and tensor layout as {v.of} (every name, dtype and shape equal; the weights "
            "are not read, so a fine-tune, a re-upload and a copy look the same)"
        )
    storage = f"weights {human_bytes(v.old_bytes)} → {human_bytes(v.new_bytes)} ({change(v.old_bytes, v.new_bytes)})"
    scales = f", scales {human_bytes(v.old_scale_bytes)} → {human_bytes(v.new_scale_bytes)}"
    return f"a {v.kind} copy of {v.of}: same architecture, parameters equal; {storage}" + (
        scales if v.old_scale_bytes or v.new_scale_bytes else ""
    )


def hub_disagreement(c: Comparison) -> str | None:
    """The flag for a new side whose Hub-reported parameter count differs from its headers'."""
    counted = hub_count(c.new.snapshot)
    if counted is None or counted.agrees:
        return None
    return f"the Hub's own parameter count disagrees with the headers ({', '.join(counted.differing)})"


class Headlined(RepoResult):
    """A result as the templates see it: its headline beside its fields (``r.headline``), so that a
    template of ``--templates`` reads it as the shipped ones do."""

    @property
    def headline(self) -> str:
        return headline(self)


def headlined(report: Report) -> Report:
    """``report`` with each result a ``Headlined``."""
    return replace(
        report,
        results=tuple(Headlined(**{f.name: getattr(r, f.name) for f in fields(r)}) for r in report.results),
    )


def headline(result: RepoResult) -> str:
    if result.error:
        return f"{result.title}: could not be read ({result.error})"
    if result.kind == "quantized copy":  # the note says what each variant holds
        return f"{result.title}: a GGUF quantized copy of {result.sibling} (so its card says): {result.note}."
    if result.kind == "renamed":  # the note says "old → new"
        return f"{result.title}: renamed: {result.note}."
    if result.kind in NOTICE_WORDING:
        wording = NOTICE_WORDING[result.kind]
        return f"{result.title}: {wording}" + (f" ({result.note})" if result.kind == "skipped" else "") + "."
    if result.kind == "new release" and result.variant is not None:
        disagrees = hub_disagreement(result.comparison) if result.comparison else None
        return f"{release_heading(result)}: {variant_line(result)}" + (
            f"; {disagrees}." if disagrees else "."
        )
    if result.gguf is not None:
        return f"{result.title}: " + "; ".join(gguf_parts(result)) + "."
    c = result.comparison
    assert c is not None
    parts = []
    if c.same_commit and not result.fail_on_any_change:
        sha = c.new.snapshot.sha[:12]
        parts.append(
            f"unchanged at {sha}" if not c.differs else f"the recorded commit {sha} differs from the baseline"
        )
    arch = c.config_by("architectural")
    if arch:
        keys = ", ".join(x.label if len(x.label) <= 60 else x.label[:59] + "…" for x in arch[:4]) + (
            f" and {len(arch) - 4} more" if len(arch) > 4 else ""
        )
        parts.append(f"{len(arch)} architectural config change{'s' if len(arch) != 1 else ''} ({keys})")
    other = len(c.config) - len(arch)
    if other:
        parts.append(f"{other} other config change{'s' if other != 1 else ''}")
    t = c.tensors
    moved = layer_moves(c)
    if moved:
        parts.append(moved)
    for rename in t.renames:
        parts.append(f"{rename.old}* renamed {rename.new}* ({rename.count:,} tensors)")
    if t.removed or t.added or t.changed:
        parts.append(
            f"tensors {t.old_count:,} → {t.new_count:,} ({sum(p.count for p in t.removed):,} removed, "
            f"{sum(p.count for p in t.added):,} added, {sum(x.pattern.count for x in t.changed):,} reshaped)"
        )
    kv = next((m for m in c.metrics if m.name == "kv_bytes_per_token"), None)
    if kv is not None and kv.delta:
        parts.append(f"KV cache per token {kv.old:,} → {kv.new:,} bytes ({change(kv.old, kv.new)})")
    if result.release is not None and result.release_changed:
        parts.extend(release_parts(result.release))
    if result.broken_claims:
        parts.append(f"{len(result.broken_claims)} claim(s) no longer hold")
    counted = hub_count(c.new.snapshot)
    if counted is not None and not counted.agrees:
        parts.append(
            f"the Hub's own parameter count disagrees with the headers ({', '.join(counted.differing)})"
        )
    if not parts:
        parts.append("no differences")
    if result.kind == "new release":
        return f"{release_heading(result)}: " + "; ".join(parts) + "."
    return f"{result.title}: " + "; ".join(parts) + "."


def gguf_parts(result: RepoResult) -> list[str]:
    """A GGUF entry's changes in a headline: variants added or removed, a recorded figure that moved,
    and the pinned variant's requantized or reshaped tensor kinds by name; an allowed change says so."""
    g = result.gguf
    assert g is not None
    blocking = g.blocking(result.allowed)
    parts = []
    if g.moved:
        parts.append(f"moved {(g.old_sha or '')[:12]} → {g.new_sha[:12]}")
    for x in g.changes:
        parts.append(gguf_change(x, g) + ("" if x in blocking else " (allowed)"))
    if not g.changes:
        parts.append("no differences" if g.moved or not g.old_sha else f"unchanged at {g.new_sha[:12]}")
    return parts


def _gguf_value(what: str, value: Any) -> str:
    if what == "bytes" and isinstance(value, int):
        return human_bytes(value)
    if what == "parameters" and isinstance(value, int):
        return f"{value:,}"
    if what == "types" and isinstance(value, dict):
        return ", ".join(f"{k} x{n}" for k, n in value.items()) or "none"
    if what == "files" and isinstance(value, list):
        return f"{len(value)} file{'s' if len(value) != 1 else ''}"
    return str(value)


def gguf_change(x: GGUFChange, g: GGUFCheck) -> str:
    """One ``GGUFChange`` as a phrase."""
    if x.what == "variant":
        return f"variant {x.variant} {x.kind}" + (f" ({x.new})" if x.kind == "added" else "")
    if x.what == "pin":
        return f"pin {x.variant!r} names no variant of the repo"
    if x.what == "strip" and x.kind == "added":
        return f"{x.variant}: its per-layer quantization is not recorded (hubdiff baseline update records it)"
    if x.what == "strip" and g.strip is not None:
        return f"{x.variant}: " + strip_phrase(g.strip)
    if x.what == "files" and isinstance(x.old, list) and isinstance(x.new, list) and len(x.old) == len(x.new):
        return f"{x.variant} files renamed"
    return (
        f"{x.variant} {x.what.replace('_', ' ')} {_gguf_value(x.what, x.old)} → {_gguf_value(x.what, x.new)}"
    )


def strip_phrase(t: TensorDiff) -> str:
    """The pinned variant's tensors against its recorded strip: the requantized kinds first, by name."""
    parts = []
    retyped = [x for x in t.changed if x.old_shape == x.pattern.shape]
    for x in retyped[:3]:
        count = f"{x.pattern.count:,} tensor{'s' if x.pattern.count != 1 else ''}"
        parts.append(f"{x.pattern.name} {x.old_dtype} → {x.pattern.dtype} ({count})")
    if retyped:
        more = f" and {len(retyped) - 3} more" if len(retyped) > 3 else ""
        parts = ["requantized " + ", ".join(parts) + more]
    reshaped = len(t.changed) - len(retyped)
    if t.removed or t.added or reshaped:
        parts.append(
            f"tensors {t.old_count:,} → {t.new_count:,} ({sum(p.count for p in t.removed):,} removed, "
            f"{sum(p.count for p in t.added):,} added, "
            f"{sum(x.pattern.count for x in t.changed if x not in retyped):,} reshaped)"
        )
    return "; ".join(parts)


def release_parts(rel: ReleaseDiff) -> list[str]:
    """The release files' changes in a headline: the template's verdict, the tokens that changed, the
    generation defaults that changed (their names; the tables give the values)."""
    parts = []
    for t in rel.changed_templates:
        what = "chat template" if t.name == "default" else f"chat template {t.name}"
        if t.verdict == "real":
            parts.append(f"{what} changed (prompts differ: {', '.join(p.conversation for p in t.differing)})")
        elif t.verdict == "cosmetic":
            parts.append(f"{what} changed (cosmetic: the same prompts)")
        else:
            parts.append(f"{what} {t.verdict}")
    tokens = rel.changed_tokens
    if tokens:
        parts.append(_changed("special tokens", [x.name for x in tokens], 4))
    gen = rel.changed_rows(rel.generation, cosmetic=not rel.changed)
    if gen:
        parts.append(_changed("generation defaults", [r.name for r in gen], 5))
    rest = rel.changed_rows(rel.tokenizer) + rel.changed_rows(rel.processor)
    if rest or rel.added_tokens:
        parts.append(f"{len(rest) + bool(rel.added_tokens)} tokenizer/processor change(s)")
    return parts


# -- what changed that matters: the first screen of a PR comment ---------------------------------

_CACHE_KEY = re.compile(
    r"kv|rope|head_dim|index|window|layer_types|compress|kpool|linear_attn|nope|cache|mla"
)
_SHAPE_KEY = re.compile(r"hidden|intermediate|_size$|_dim$|rank|heads|experts|num_|vocab|layers|hc_mult")
_CACHE_TENSOR = re.compile(r"kv_|k_proj|v_proj|indexer\.wk|wkv")
# Figures that decide memory and cost, in the order a reader asks about them.
KEY_FIGURES = (
    ("kv_bytes_per_token", "KV cache per token"),
    ("kv_bytes_at_context", "KV cache at context"),
    ("state_bytes_per_sequence", "recurrent state per sequence"),
    ("total_params", "parameters"),
    ("active_params", "active parameters per token"),
)


def config_impact(path: str) -> int:
    """0 for keys that size both the KV cache and tensors, 1 tensors only, 2 the cache only, 3 the rest."""
    leaf = path.rsplit(".", 1)[-1]
    cache, shape = bool(_CACHE_KEY.search(leaf)), bool(_SHAPE_KEY.search(leaf))
    return 0 if cache and shape else 1 if shape else 2 if cache else 3


def by_impact(c: Comparison) -> list[ConfigChange]:
    """Architectural config changes by impact; within one impact a changed value before a key that
    appears or disappears (a new feature's flags are many, a resized dimension is one)."""
    arch = c.config_by("architectural")
    return sorted(arch, key=lambda x: (config_impact(x.path), x.kind not in ("changed", "moved"), x.path))


def reshaped_first(c: Comparison) -> list[ShapeChange]:
    """Reshaped or retyped tensors, those that hold the KV cache's projections first, then by count."""
    return sorted(
        c.tensors.changed,
        key=lambda x: (not _CACHE_TENSOR.search(x.pattern.name), -x.pattern.count, x.pattern.name),
    )


def key_figures(c: Comparison) -> list[tuple[str, str, Any, Any]]:
    """(label, unit, old, new) of the figures that decide memory and cost, when either side has them."""
    rows = []
    for name, label in KEY_FIGURES:
        old, new = c.figures_old.get(name), c.figures_new.get(name)
        if not old and not new:
            continue
        if name == "kv_bytes_at_context":
            label = f"{label} ({c.figures_new.get('context_tokens', 0):,} tokens)"
        rows.append((label, FIGURE_UNITS.get(name, "count"), old, new))
    return rows


def _changed(what: str, names: list[str], most: int) -> str:
    """``what changed (a, b, …)``: the first ``most`` names, an ellipsis for the rest."""
    return f"{what} changed ({', '.join(names[:most])}{' …' if len(names) > most else ''})"
