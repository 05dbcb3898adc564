"""Terminal views of snapshots and patterns."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from .._metrics.memory import TotalMemory
from .._metrics.results import Metrics
from ..patterns import Pattern
from ..snapshot import Snapshot
from ..units import gib, human_bytes, human_count
from ..visible import named, printable
from .width import fitted_width, terminal_width

# One glyph a layer, for the layer-stack strip of the terminal and the reports (legend in docs/metrics.md).
ATTENTION_GLYPHS = {
    "kda": "K",
    "gdn": "G",
    "mamba": "m",
    "rglru": "R",  # RecurrentGemma's RG-LRU block
    "rwkv": "W",
    "lightning": "L",
    "shortconv": "c",  # LFM2's short convolution
    "mla": "M",
    "mha": "A",
    "gqa": "A",
    "mqa": "A",
    "swa": "S",
    "compressed": "C",
    "none": ".",
}
MLP_GLYPHS = {"moe": "E", "dense": "F", "none": "."}


def layer_strip(metrics: Metrics) -> tuple[str, str]:
    """The attention and MLP kind of every layer but the MTP ones, a glyph each."""
    attention, mlp = [], []
    for layer in metrics.layers:
        if layer.mtp:
            continue
        glyph = ATTENTION_GLYPHS.get(layer.attention, "?")
        if layer.attention == "dsa":
            glyph = "D" if layer.indexer != "shared" else "d"
        attention.append(glyph)
        mlp.append(MLP_GLYPHS.get(layer.mlp, "?"))
    return "".join(attention), "".join(mlp)


def grouped(strip: str, size: int = 10) -> str:
    """A layer strip in groups of ten, so that layers can be counted and a terminal can wrap it."""
    return " ".join(strip[i : i + size] for i in range(0, len(strip), size))


def fit(text: str, width: int | None = None) -> str:
    """Lines wider than the terminal wrapped at spaces, continuations indented under their line. Only
    for a terminal (or $COLUMNS): a pipe into grep wants one finding per line."""
    if width is None:
        width = fitted_width()
        if width is None:
            return text
    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip(" ")) + 4)
        out.append(
            textwrap.fill(
                line, width, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False
            )
        )
    return "\n".join(out)


def table(rows: Sequence[Sequence[str]], align: str = "") -> str:
    """A plain column-aligned table; ``align`` has one letter per column, ``r`` for right-aligned."""
    if not rows:  # a file with zero tensors is legal, and so is its empty table
        return ""
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            right = i < len(align) and align[i] == "r"
            cells.append(str(cell).rjust(widths[i]) if right else str(cell).ljust(widths[i]))
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def pattern_rows(patterns: Sequence[Pattern]) -> list[list[str]]:
    return [
        [named(p.name), printable(p.dtype), "[" + ", ".join(map(str, p.shape)) + "]", f"×{p.count:,}"]
        for p in patterns
    ]


def pattern_lines(patterns: Sequence[Pattern], width: int) -> list[str]:
    """Patterns as an aligned table when it fits ``width``; else each name on its own line with its
    dtype, shape and count indented below (names are long, and a wrapped table row cannot be read)."""
    rows = pattern_rows(patterns)
    lines = table([["pattern", "dtype", "shape", "count"], *rows], "lllr").splitlines()
    if max(len(line) for line in lines) <= width:
        return lines
    details = table([["dtype", "shape", "count"], *[r[1:] for r in rows]], "llr").splitlines()
    out = ["pattern", "    " + details[0]]
    for row, detail in zip(rows, details[1:]):
        out += [row[0], "    " + detail]
    return out


def snapshot_text(snapshot: Snapshot, width: int | None = None) -> str:
    width = width or terminal_width()
    shards = snapshot.shards
    params = snapshot.parameters_by_dtype()
    total = sum(params.values())
    head = [
        f"{snapshot.source} @ {snapshot.revision}",
        *(
            [f"commit {snapshot.sha}" + (f" ({snapshot.commit_date})" if snapshot.commit_date else "")]
            if snapshot.sha
            else []
        ),
        f"files: {len(snapshot.files):,} ({len(shards):,} safetensors)",
        f"tensors: {snapshot.tensor_count:,} in {len(snapshot.patterns):,} patterns",
        f"stored elements: {total:,} ({human_count(total)})",
        f"tensor bytes: {snapshot.tensor_bytes():,} ({human_bytes(snapshot.tensor_bytes())})",
    ]
    if "total_size" in snapshot.index_metadata:
        head.append(f"index total_size: {snapshot.index_metadata['total_size']:,}")
    counted = None
    if snapshot.hub_parameters is not None:
        from .._compare.release import hub_count

        counted = hub_count(snapshot)
    if counted is not None:
        head.append(
            "the Hub's own count (safetensors.parameters): agrees"
            if counted.agrees
            else "the Hub's own count (safetensors.parameters): DISAGREES on "
            + printable(", ".join(f"{d} (Hub {counted.hub.get(d, 0):,})" for d in counted.differing))
        )
    if snapshot.unknown_dtypes:
        head.append(f"unknown dtypes (bytes not counted): {printable(', '.join(snapshot.unknown_dtypes))}")
    by_dtype = table([[printable(d), f"{n:,}", human_count(n)] for d, n in params.items()], "lrr")
    patterns = "\n".join(pattern_lines(snapshot.patterns, width))
    return fit("\n".join(head), width) + "\n\nelements by dtype\n" + by_dtype + "\n\n" + patterns + "\n"


def metrics_text(metrics: Metrics) -> str:
    j = metrics.to_json()
    p, layers, kv = j["params"], j["layers"], metrics.kv
    e = p["experts"]
    basis = "from safetensors headers" if metrics.basis == "headers" else "estimated from config.json"
    lines = [f"{printable(metrics.source)} ({basis})", ""]
    if metrics.unverified:
        lines[-1:] = [
            f"UNVERIFIED: {len(metrics.unverified)} reason(s) below; these figures may be wrong",
            "",
        ]
    lines.append(
        f"parameters  {human_count(p['total'])} total, {human_count(p['main'])} without MTP; active per token "
        f"{human_count(p['active'])} ({human_count(p['active_without_embeddings'])} without embeddings, "
        f"{human_count(p['active_without_embeddings_and_head'])} without embeddings and head)"
    )
    rows = [["component", "parameters", ""]]
    rows += [[c, f"{n:,}", human_count(n)] for c, n in p["by_component"].items()]
    if p["quantization_scales"]["elements"]:
        scales = p["quantization_scales"]
        rows.append(["(quantization scales)", f"{scales['elements']:,}", f"{human_bytes(scales['bytes'])}"])
    lines += ["  " + line for line in table(rows, "lrr").splitlines()]
    if e["moe_layers"]:
        shared = (
            f" + {e['shared_per_layer']} shared ({human_count(e['params_per_shared_expert'])})"
            if e["shared_per_layer"]
            else ""
        )
        lines.append(
            f"experts     {e['routed_per_layer']} routed per layer ({human_count(e['params_per_routed_expert'])} each,"
            f" top-{e['experts_per_token']}){shared} in {e['moe_layers']} MoE layers"
        )
    attention = ", ".join(f"{k} {v}" for k, v in layers["attention"].items())
    mlp = ", ".join(f"{k} {v}" for k, v in layers["mlp"].items())
    lines.append(
        f"layers      {layers['count']}"
        + (f" (+{layers['mtp']} MTP)" if layers["mtp"] else "")
        + f": attention {attention}; mlp {mlp}"
    )
    attention_strip, mlp_strip = layer_strip(metrics)
    lines += [
        f"  attn  {grouped(attention_strip)}",
        f"  mlp   {grouped(mlp_strip)}",
    ]  # the legend in docs/metrics.md
    idx = layers["indexer"]
    if idx["own"] or idx["shared"]:
        lines.append(
            f"indexer     runs in {idx['own']} layers, {idx['shared']} reuse it; indexer tensors in "
            f"{idx['layers_with_indexer_tensors']} layers"
        )
    lines.append("")
    lines.append(
        f"KV cache    {kv.bytes_per_token:,} bytes per token ({human_bytes(kv.bytes_per_token)}),"
        f" profile {kv.profile}, {kv.kv_dtype}"
    )
    group_rows = [
        [
            g.name,
            f"{g.layers} layers",
            f"x {g.bytes_per_layer:g} B",
            f"= {g.bytes_per_token:,.0f} B",
            g.formula,
        ]
        for g in kv.groups
    ]
    group_rows += [
        [
            s.name,
            f"{s.layers} layers",
            f"x {s.bytes_per_layer:,} B",
            f"= {s.bytes_per_sequence:,} B/seq",
            s.formula,
        ]
        for s in kv.states
    ]
    if group_rows:
        lines += ["  " + line for line in table(group_rows, "lrrrl").splitlines()]
    if kv.states:
        lines.append(
            f"state       {kv.state_bytes_per_sequence:,} bytes per sequence "
            f"({human_bytes(kv.state_bytes_per_sequence, 2)})"
        )
    at = kv.bytes_at_context
    lines.append(
        f"at {kv.context_tokens:,} tokens: {at:,} bytes = {human_bytes(at)} = {gib(at)}"
        + (" (state included)" if kv.states else "")
    )
    lines.append("")
    lines.append("assumptions: " + "; ".join([*metrics.assumptions, *kv.assumptions]))
    for reason in metrics.unverified:
        lines.append(f"unverified: {printable(reason)}")
    if metrics.checks:
        lines.append("config vs tensors:")
        lines += [f"  - {c}" for c in metrics.checks]
    elif metrics.basis == "headers":
        lines.append("config vs tensors: consistent")
    return "\n".join(lines) + "\n"


def memory_text(memory: TotalMemory) -> str:
    """One line of the sum a deployment asks about, then what it rests on."""
    batch = memory.batch_size
    per_sequence = memory.kv_bytes_per_sequence + memory.state_bytes_per_sequence
    line = (
        f"memory      {human_bytes(memory.total_bytes)} = {human_bytes(memory.weight_bytes)} weights + "
        f"{batch} × {human_bytes(per_sequence)} KV"
        + (" and state" if memory.state_bytes_per_sequence else "")
        + f" at {memory.context_tokens:,} tokens ({memory.total_bytes:,} bytes)"
    )
    return line + "\n  " + "; ".join(memory.assumptions) + "\n"
