"""The layer census: what each layer is, read from every encoding configs use.

Attention kinds: ``mha``/``gqa``/``mqa`` (full attention, by KV heads), ``mla`` (latent KV),
``dsa`` (MLA with a sparse-attention indexer, own or shared with an earlier layer), ``swa``
(sliding window), ``compressed`` (a KV stream compressed ``compress_ratio``:1 beside a window), ``kda`` (Kimi Delta Attention), ``gdn`` (Gated DeltaNet), ``mamba``, ``none``.
MLP kinds: ``dense``, ``moe``, ``none``. MTP layers follow the main layers and are marked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .config import ArchConfig

LINEAR_KINDS = frozenset({"kda", "gdn", "mamba"})


@dataclass(frozen=True)
class LayerInfo:
    index: int
    attention: str
    mlp: str
    indexer: str | None = None  # "own" or "shared" for DSA layers
    window: int | None = None  # tokens, for sliding-window layers
    mtp: bool = False
    compress_ratio: int | None = None  # tokens per stored KV entry, for compressed-KV layers


def _full_kind(cfg: ArchConfig) -> str:
    if cfg.is_mla:
        return "dsa" if cfg.has_indexer else "mla"
    heads, kv = cfg.num_heads, cfg.num_kv_heads
    if kv == 1 and heads and heads > 1:
        return "mqa"
    if heads and kv and kv < heads:
        return "gqa"
    return "mha"


def _one_based(values: Any) -> set[int]:
    return {v - 1 for v in values if isinstance(v, int)} if isinstance(values, list) else set()


def _attention_kinds(cfg: ArchConfig, n: int) -> tuple[list[str], list[int | None]]:
    full = _full_kind(cfg)
    window = cfg.number("sliding_window", "attention_window")
    kinds = [full] * n
    windows: list[int | None] = [None] * n
    lin = cfg.linear_attn
    layer_types = cfg.get("layer_types") or cfg.get("layers_block_type")  # the latter: Jamba
    pattern = cfg.get("hybrid_override_pattern")
    ratios = cfg.get("compress_ratios")
    if isinstance(ratios, list) and len(ratios) >= n:
        # compressed attention: every layer keeps a sliding window, most also a compressed KV stream
        for i, ratio in enumerate(ratios[:n]):
            kinds[i], windows[i] = ("compressed" if ratio else "swa"), window
    elif lin.get("kda_layers") or lin.get("full_attn_layers"):
        kda, full_layers = _one_based(lin.get("kda_layers")), _one_based(lin.get("full_attn_layers"))
        for i in range(n):
            if i in kda or (full_layers and i not in full_layers):
                kinds[i] = "kda"
    elif isinstance(layer_types, list) and len(layer_types) >= n:
        for i, kind in enumerate(layer_types[:n]):
            kind = str(kind)
            if kind in ("linear_attention", "gated_deltanet", "linear"):
                kinds[i] = "gdn"
            elif kind in ("kda", "kimi_delta_attention"):
                kinds[i] = "kda"
            elif kind in ("mamba", "mamba2", "mamba1"):
                kinds[i] = "mamba"
            elif kind == "chunked_attention":
                kinds[i], windows[i] = "swa", cfg.number("attention_chunk_size") or window
            elif "sliding" in kind or kind == "local":
                kinds[i], windows[i] = "swa", window
    elif cfg.number("attention_chunk_size") and isinstance(cfg.get("no_rope_layers"), list):
        # Llama 4: layers that use RoPE attend within chunks of attention_chunk_size; NoPE layers globally
        chunk = cfg.number("attention_chunk_size")
        for i, uses_rope in enumerate(cfg.get("no_rope_layers")[:n]):
            if uses_rope:
                kinds[i], windows[i] = "swa", chunk
    elif isinstance(pattern, str) and len(pattern) >= n:
        for i, char in enumerate(pattern[:n]):
            kinds[i] = {"M": "mamba", "*": full}.get(char, "none")
    elif cfg.number("full_attention_interval"):
        interval = cfg.number("full_attention_interval") or 1
        kinds = [full if (i + 1) % interval == 0 else "gdn" for i in range(n)]
    elif window and cfg.number("sliding_window_pattern"):
        every = cfg.number("sliding_window_pattern") or 1
        for i in range(n):
            if (i + 1) % every:
                kinds[i], windows[i] = "swa", window
    elif window and cfg.get("use_sliding_window") is True:
        start = cfg.number("max_window_layers", default=0) or 0
        for i in range(start, n):
            kinds[i], windows[i] = "swa", window
    elif (
        window
        and cfg.get("use_sliding_window") is None
        and cfg.get("layer_types") is None
        and full
        in (
            "mha",
            "gqa",
            "mqa",
        )
    ):
        # Mistral-style: a sliding_window with no pattern applies to every layer
        kinds, windows = ["swa"] * n, [window] * n
    return kinds, windows


def _indexers(cfg: ArchConfig, kinds: list[str]) -> list[str | None]:
    out: list[str | None] = [("own" if k == "dsa" else None) for k in kinds]
    types = cfg.get("indexer_types")
    freq = cfg.number("index_topk_freq")
    dsa = [i for i, k in enumerate(kinds) if k == "dsa"]
    if isinstance(types, list) and len(types) >= len(kinds):
        for i in dsa:
            out[i] = "shared" if str(types[i]) == "shared" else "own"
    elif freq and freq > 1:
        skip = cfg.number("index_skip_topk_offset", default=0) or 0
        for i in dsa:
            out[i] = "own" if i < skip or (i - skip + 1) % freq == 0 else "shared"
    return out


def _mlp_kinds(cfg: ArchConfig, n: int) -> list[str]:
    if not cfg.num_experts:
        return ["dense"] * n
    types = cfg.get("mlp_layer_types")
    if isinstance(types, list) and len(types) >= n:
        return ["moe" if str(t) in ("sparse", "moe") else "dense" for t in types[:n]]
    pattern = cfg.get("hybrid_override_pattern")
    if isinstance(pattern, str) and len(pattern) >= n:
        return [{"E": "moe", "-": "dense"}.get(c, "none") for c in pattern[:n]]
    period = cfg.number("expert_layer_period")
    if period:  # Jamba: every period-th layer from expert_layer_offset is MoE
        offset = cfg.number("expert_layer_offset", default=0) or 0
        return ["moe" if i >= offset and (i - offset) % period == 0 else "dense" for i in range(n)]
    first_dense = cfg.number("first_k_dense_replace", default=0) or 0
    freq = cfg.number("moe_layer_freq", default=1) or 1
    step = cfg.number("decoder_sparse_step", "interleave_moe_layer_step", default=1) or 1
    only_dense = set(cfg.get("mlp_only_layers") or [])
    out = []
    for i in range(n):
        moe = i >= first_dense and i % freq == 0 and (i + 1) % step == 0 and i not in only_dense
        out.append("moe" if moe else "dense")
    return out


def layer_census(cfg: ArchConfig) -> list[LayerInfo]:
    n = cfg.num_layers
    kinds, windows = _attention_kinds(cfg, n)
    indexers = _indexers(cfg, kinds)
    mlps = _mlp_kinds(cfg, n)
    ratios = cfg.get("compress_ratios") if isinstance(cfg.get("compress_ratios"), list) else []
    layers = [
        LayerInfo(
            i,
            kinds[i],
            mlps[i],
            indexers[i],
            windows[i],
            False,
            (ratios[i] or None) if i < len(ratios) else None,
        )
        for i in range(n)
    ]
    full = _full_kind(cfg)
    mtp_mlp = "moe" if cfg.num_experts else "dense"
    for j in range(cfg.mtp_layers):
        layers.append(LayerInfo(n + j, full, mtp_mlp, "own" if full == "dsa" else None, None, mtp=True))
    return layers


def attention_counts(layers: list[LayerInfo], include_mtp: bool = False) -> dict[str, int]:
    counts: dict[str, int] = {}
    for layer in layers:
        if layer.mtp and not include_mtp:
            continue
        counts[layer.attention] = counts.get(layer.attention, 0) + 1
    return dict(sorted(counts.items()))
