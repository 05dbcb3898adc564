"""The model as the engine shards it: what it refuses, the pipeline stages, the weights each rank holds
and the KV and recurrent state per rank."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from .. import dtypes
from .components import _LAYER, classify
from .estimate import facts, layer_heads, mamba_shape, synthesize
from .estimate_facts import mla_rope_dim
from .figures import COMPONENTS
from .kv import KV_DTYPE_BYTES
from .layers import LINEAR_KINDS, LayerInfo, block_kv_heads
from .quantized import stored_tensors
from .serving_options import ServingOptions, ServingRefused, checked_options
from .serving_rules import GDN_CHECKPOINT_ALIGNMENT, GDN_FLASHINFER_PREFILL, RULES

if TYPE_CHECKING:
    from ..patterns import Pattern
    from .results import Metrics


# -- the model as the engine sees it ---------------------------------------------------------------


def _kv_bytes(dtype: str) -> float:
    return KV_DTYPE_BYTES.get(dtype, 2.0)


def _model_bytes(metrics: Metrics) -> int:
    return {"float32": 4, "float16": 2, "bfloat16": 2}.get(metrics.cfg.dtype.replace("torch.", ""), 2)


def _heads(metrics: Metrics, layer: LayerInfo) -> tuple[int, int, int, int]:

    heads, kv, hd, vd = layer_heads(metrics.cfg, layer)
    nas = block_kv_heads(metrics.cfg)
    if nas is not None and layer.index < len(nas) and nas[layer.index]:
        kv = nas[layer.index] or kv
    return heads, kv, hd, vd


def kv_per_rank(kv: int, tp: int) -> int:
    """vLLM's ModelConfig.get_num_kv_heads: at least one a rank, replicated above the KV-head count."""
    return max(1, kv // tp)


def _main_layers(metrics: Metrics) -> list[LayerInfo]:
    return [x for x in metrics.layers if not x.mtp]


def refusal(metrics: Metrics, options: ServingOptions) -> str | None:
    """The first rule the engine would refuse ``options`` by, for this model (None: it serves them)."""
    cfg, tp = metrics.cfg, options.tp
    layers = _main_layers(metrics)
    heads = cfg.num_heads
    attends = any(x.attention not in LINEAR_KINDS and x.attention not in ("none",) for x in layers)
    if heads and attends and heads % tp:
        return (
            f"{heads} attention heads at --tp {tp}: {RULES['heads_divide']}: 'Total number of attention heads "
            f"({heads}) must be divisible by tensor parallel size ({tp}).'"
        )
    if not cfg.is_mla:
        seen: set[int] = set()
        for layer in layers:
            if layer.attention not in ("mha", "gqa", "mqa", "swa", "cross", "compressed"):
                continue
            _, kv, _, _ = _heads(metrics, layer)
            if kv in seen or not kv:
                continue
            seen.add(kv)
            if (tp < kv and kv % tp) or (tp >= kv and tp % kv):
                return f"{kv} KV heads at --tp {tp}: {RULES['kv_divide']}"
    vocab = cfg.vocab_size or 0
    padded = -(-vocab // 64) * 64
    if padded and padded % tp:
        return f"vocabulary of {vocab:,} rows ({padded:,} padded) at --tp {tp}: {RULES['vocab']}"
    if options.ep > 1 and not cfg.num_experts:
        return f"--ep {options.ep} on a model without experts: {RULES['ep_needs_experts']}"
    if not layers:
        return "the config names no layers: nothing is served"
    if options.pp > len(layers):
        return f"--pp {options.pp} with {len(layers)} layers: {RULES['pp_more']}"
    for name, count in _state_head_counts(metrics):
        if count and count % tp:
            return f"{count} {name} at --tp {tp}: {RULES['state_heads']}"
    return None


def _state_head_counts(metrics: Metrics) -> list[tuple[str, int]]:
    """The head counts a recurrent layer's state is divided by, as vLLM's divide() asserts them."""

    cfg = metrics.cfg
    kinds = {x.attention for x in _main_layers(metrics)} | (
        {"mamba"} if any(x.parallel_ssm for x in metrics.layers) else set()
    )
    out: list[tuple[str, int]] = []
    if "kda" in kinds:
        out.append(("KDA heads", cfg.linear_attn.get("num_heads") or cfg.num_heads or 0))
    if "gdn" in kinds:
        nv = cfg.number("linear_num_value_heads", default=0) or 0
        nk = cfg.number("linear_num_key_heads", default=nv) or 0
        out += [("Gated DeltaNet value heads", nv), ("Gated DeltaNet key heads", nk)]
    if "mamba" in kinds:
        m = mamba_shape(cfg)
        out.append(("Mamba heads", m.heads) if m.version == 2 else ("Mamba channels", m.channels))
    if "lightning" in kinds:
        out.append(("linear-attention heads", cfg.num_heads or 0))
    return out


def check(metrics: Metrics, options: ServingOptions) -> None:
    """Raise ServingRefused when the engine would refuse to serve this model so."""
    problem = refusal(metrics, checked_options(options))
    if problem:
        raise ServingRefused(problem)


# -- pipeline stages --------------------------------------------------------------------------------


def pp_partitions(n: int, pp: int) -> list[int]:
    """vLLM's get_pp_indices (no VLLM_PP_LAYER_PARTITION): n // pp a stage, the remainder to the stages
    before the last, from the end."""
    parts = [n // pp] * pp
    for i in range(2, n % pp + 2):
        parts[-i] += 1
    return parts


def _stage_of(layers: int, pp: int) -> list[int]:
    out: list[int] = []
    for stage, count in enumerate(pp_partitions(layers, pp)):
        out += [stage] * count
    return out


# -- weights per rank -------------------------------------------------------------------------------

_MLA_REPLICATED = {"q_a_proj", "kv_a_proj_with_mqa", "fused_qkv_a_proj", "wq_a", "wkv_a"}


_KV_NAMES = {"k_proj", "v_proj", "key", "value", "wk", "wv", "k", "v", "kv_proj"}


_QKV_NAMES = {"qkv_proj", "query_key_value", "c_attn", "W_pack", "Wqkv", "qkv", "in_proj_qkv"}


_ROW_NAMES = {
    "o_proj",
    "dense",
    "out_proj",
    "c_proj",
    "wo",
    "o",
    "down_proj",
    "w2",
    "fc2",
    "dense_4h_to_h",
    "fc_out",
}


_LINEAR_REPLICATED = {"f_a_proj", "g_a_proj"}


@dataclass(frozen=True)
class _Tensor:
    name: str
    dtype: str
    shape: tuple[int, ...]
    copies: int
    component: str
    layer: int | None


def _tensors(metrics: Metrics, patterns: Iterable[Pattern]) -> Iterator[_Tensor]:
    """Every tensor once per layer value (as ``count_patterns`` classifies them), or the config's estimate."""
    by_layer = {x.index: x for x in metrics.layers}
    n = metrics.cfg.num_layers
    if metrics.basis != "headers":  # the estimate as the release stores it (its quantization_config)
        layers = list(metrics.layers)
        for name, dtype, shape in stored_tensors(metrics.cfg, synthesize(metrics.cfg, layers), layers):
            component, layer = classify(name, shape, by_layer, n)
            yield _Tensor(name, dtype, shape, 1, component, layer)
        return
    for p in patterns:
        pieces, starts = [p.parts[0]], []
        for index_set, text in zip(p.index_sets, p.parts[1:]):
            starts.append(len("".join(pieces)))
            pieces += [str(index_set[0]), text]
        name = "".join(pieces)
        match = _LAYER.search(name)
        layer_at = starts.index(match.start(1)) if match and match.start(1) in starts else None
        values: tuple[int | None, ...] = p.index_sets[layer_at] if layer_at is not None else (None,)
        copies = p.count // len(values)
        for value in values:
            one = name
            if value is not None and layer_at is not None:
                start = starts[layer_at]
                one = name[:start] + str(value) + name[start + len(str(p.index_sets[layer_at][0])) :]
            component, layer = classify(one, p.shape, by_layer, n)
            yield _Tensor(one, p.dtype, p.shape, copies, component, layer)


def _tensor_bytes(t: _Tensor) -> int:
    elements = math.prod(t.shape)
    return (dtypes.nbytes(t.dtype, elements) or 0) * t.copies


def _share(metrics: Metrics, t: _Tensor, options: ServingOptions) -> tuple[Fraction, str]:
    """The fraction of the tensor one rank holds (the largest rank's, for expert parallelism), and the rule."""
    tp, cfg = options.tp, metrics.cfg
    segments = t.name.split(".")
    segset = set(segments)
    last = segments[-1]
    bias = last == "bias"
    c = t.component
    if c in ("norms", "routers", "hyper_connections", "other"):
        return Fraction(1), "replicated" if c != "other" else "other"
    if c == "mtp":
        return Fraction(0), "mtp"
    if c == "dsa_indexer":
        return Fraction(1), "dsa_indexer"
    if c in ("vision_tower", "multimodal_projector"):
        return Fraction(1, tp), "vision"
    if c in ("embeddings", "output_head"):
        if len(t.shape) < 2 or not t.shape[0]:
            return Fraction(1), "vocab"
        rows = t.shape[0]
        padded = -(-rows // 64) * 64
        return Fraction(padded, rows * tp), "vocab"
    if c == "routed_experts":
        if options.ep > 1:
            n = cfg.num_experts or 0
            per = metrics.params.experts_by_layer.get(t.layer or -1) or n
            if per:
                local = per // options.ep + (1 if per % options.ep else 0)
                return Fraction(local, per), "experts_ep"
        return Fraction(1, tp), "experts_tp"
    if c in ("dense_mlp", "shared_experts"):
        if bias and segset & _ROW_NAMES:
            return Fraction(1), "column_row"
        return Fraction(1, tp), "column_row" if c == "dense_mlp" else "shared_experts"
    if c == "linear_attention":
        if segset & _LINEAR_REPLICATED:
            return Fraction(1), "linear_attention"
        return Fraction(1, tp), "linear_attention"
    # attention
    layer = next((x for x in metrics.layers if x.index == t.layer), None)
    if cfg.is_mla:
        if segset & _MLA_REPLICATED:
            return Fraction(1), "mla_replicated"
        if bias and segset & _ROW_NAMES:
            return Fraction(1), "column_row"
        return Fraction(1, tp), "mla_replicated"
    if bias and segset & _ROW_NAMES:
        return Fraction(1), "column_row"
    if layer is None or layer.attention in LINEAR_KINDS:
        return Fraction(1, tp), "column_row"
    _, kv, hd, vd = _heads(metrics, layer)
    if not kv:
        return Fraction(1, tp), "column_row"
    kvr = kv_per_rank(kv, tp)
    if segset & _KV_NAMES:
        return Fraction(kvr, kv), "kv_heads"
    if segset & _QKV_NAMES and t.shape:
        rows = t.shape[-1] if t.dtype in ("I32",) and last == "qweight" else t.shape[0]
        kv_rows = kv * (hd + vd)
        if rows > kv_rows:
            q_rows = rows - kv_rows
            return Fraction(q_rows, tp * rows) + Fraction(kvr * (hd + vd), rows), "kv_heads"
    return Fraction(1, tp), "column_row"


@dataclass(frozen=True)
class StageWeights:
    stage: int
    layers: tuple[int, int]  # first, last + 1
    by_component: dict[str, int]  # bytes on one rank of the stage (the largest, under expert parallelism)
    whole: dict[str, int]  # bytes of the stage's tensors, unsharded

    @property
    def per_rank(self) -> int:
        return sum(self.by_component.values())


def stage_weights(
    metrics: Metrics, patterns: Iterable[Pattern], options: ServingOptions
) -> tuple[list[StageWeights], dict[str, tuple[str, ...]]]:
    """Weights on one rank of each pipeline stage, by component, and the rules each component followed."""
    main = _main_layers(metrics)
    stage_of_layer = _stage_of(len(main), options.pp)
    index_stage = {layer.index: stage_of_layer[i] for i, layer in enumerate(main)}
    last = options.pp - 1
    per: list[dict[str, Fraction]] = [defaultdict(Fraction) for _ in range(options.pp)]
    whole: list[dict[str, int]] = [defaultdict(int) for _ in range(options.pp)]
    rules: dict[str, dict[str, None]] = defaultdict(dict)
    for t in _tensors(metrics, patterns):
        size = _tensor_bytes(t)
        share, rule = _share(metrics, t, options)
        rules[t.component][rule] = None
        if t.layer is not None and t.layer in index_stage:
            stages = [index_stage[t.layer]]
        elif t.component == "output_head" or (t.component == "norms" and t.layer is None):
            stages = [last]
        elif t.component == "embeddings" and metrics.cfg.tied_embeddings and last > 0:
            stages = [0, last]  # the last stage ties its head to a copy of the embedding
        else:
            stages = [0]
        for stage in stages:
            per[stage][t.component] += share * size
            whole[stage][t.component] += size
    out = []
    for stage in range(options.pp):
        layers = [layer.index for layer in main if index_stage[layer.index] == stage]
        span = (min(layers), max(layers) + 1) if layers else (0, 0)
        comp = {c: math.ceil(per[stage][c]) for c in COMPONENTS if per[stage].get(c)}
        out.append(
            StageWeights(stage, span, comp, {c: whole[stage][c] for c in COMPONENTS if whole[stage].get(c)})
        )
    return out, {c: tuple(r) for c, r in rules.items()}


# -- KV and state per rank --------------------------------------------------------------------------


@dataclass(frozen=True)
class Cache:
    """One layer's cache on one rank: per token (attention) or per sequence (recurrent state)."""

    layer: int
    kind: str  # "full", "sliding", "chunked", "mla", "indexer", "compressed", "state"
    bytes: int  # theoretical: elements x the KV dtype, per token (or per sequence for "state")
    engine: int  # vLLM's bytes per token per layer (or per sequence for "state")
    formula: str
    rule: str
    window: int | None = None
    kv_heads: int | None = None
    # a recurrent layer's prefill checkpoints in mamba_cache_mode "align": a page more a sequence, and the
    # token alignment of the checkpoints it exports (None: it exports none of its own)
    checkpoint_page: bool = False
    checkpoint_alignment: int | None = None


def caches(metrics: Metrics, options: ServingOptions) -> list[Cache]:
    """Every main layer's caches on one rank, theoretical (the KV dtype's bytes) and as vLLM stores them."""

    cfg, tp = metrics.cfg, options.tp
    sublayers = facts(cfg)[0].sublayers  # LongCat-Flash: two attention sublayers a layer, a latent each
    dtype = metrics.kv.kv_dtype
    b = _kv_bytes(dtype)
    fp8 = dtype in ("fp8", "f8")
    gdn_flashinfer = options.gpu_class in GDN_FLASHINFER_PREFILL
    out: list[Cache] = []
    chunk = cfg.number("attention_chunk_size")
    kv_lora = cfg.number("kv_lora_rank", default=0) or 0
    rope = cfg.number("qk_rope_head_dim", default=0) or 0
    index_dim = cfg.number("index_head_dim", default=0) or 0
    model_bytes = _model_bytes(metrics)
    for layer in _main_layers(metrics):
        kind = layer.attention
        if kind in ("mla", "dsa"):
            kept = mla_rope_dim(cfg, layer) if rope else 0  # a NoPE layer's latent has no rope slice
            latent = kv_lora + kept
            engine = 656 if kind == "dsa" and fp8 else int(latent * (1 if fp8 else b))
            formula = f"({kv_lora} + {kept}) × {b:g}"
            out += [
                Cache(layer.index, "mla", int(latent * b), engine, formula, "mla_latent", kv_heads=1)
            ] * sublayers
            if kind == "dsa" and layer.indexer == "own" and index_dim:
                pooled = next(  # index_kpool's pooling, as the metrics read it
                    (g.bytes_per_layer for g in metrics.kv.groups if g.name == "dsa_indexer_keys"), 0
                )
                theory = pooled if metrics.kv.profile == "naive" else index_dim * b
                engine_idx = index_dim + index_dim // 128 * 4
                out.append(
                    Cache(
                        layer.index, "indexer", int(theory), engine_idx, f"{index_dim} × {b:g}", "dsa_indexer"
                    )
                )
        elif kind in ("mha", "gqa", "mqa", "swa", "compressed") and layer.kv_shared:
            continue  # reads an earlier layer's keys and values (Gemma 3n, Gemma 4)
        elif kind in ("mha", "gqa", "mqa", "swa", "compressed"):
            _, kv, hd, vd = _heads(metrics, layer)
            kvr = kv_per_rank(kv, tp)
            per = kvr * (hd + vd)
            widths = f"2 × {hd}" if hd == vd else f"({hd} + {vd})"
            formula = f"{widths} × {kvr} × {b:g}" + (" (replicated)" if tp > kv else "")
            engine = per * (1 if fp8 else int(b))
            if kind == "compressed":
                ratio = layer.compress_ratio or 1
                out.append(
                    Cache(
                        layer.index,
                        "compressed",
                        int(kvr * hd * b / ratio),
                        0,
                        f"{kvr} × {hd} × {b:g} / {ratio}",
                        "kv_heads",
                        kv_heads=kvr,
                    )
                )
                continue
            if kind == "swa":
                sub = "chunked" if chunk and layer.window == chunk else "sliding"
                out.append(
                    Cache(
                        layer.index,
                        sub,
                        int(per * b),
                        engine,
                        formula + f", at most {layer.window} tokens",
                        "kv_heads",
                        layer.window,
                        kvr,
                    )
                )
            else:
                out.append(
                    Cache(layer.index, "full", int(per * b), engine, formula, "kv_heads", kv_heads=kvr)
                )
        if kind in LINEAR_KINDS or layer.parallel_ssm:
            which = "mamba" if layer.parallel_ssm else kind
            total, parts = 0, []
            for s in metrics.kv.states:
                if not s.name.startswith({"kda": "kda", "gdn": "gdn", "mamba": "mamba"}.get(which, "linear")):
                    continue
                rank_bytes = s.bytes_per_layer // tp
                if s.name == "mamba_conv" and mamba_shape(cfg).version == 2:
                    m = mamba_shape(cfg)
                    groups = m.groups + (0 if m.groups % tp == 0 else tp - m.groups)
                    rank_bytes = (m.kernel - 1) * ((m.channels + 2 * groups * m.state) // tp) * model_bytes
                total += rank_bytes
                parts.append(f"{s.name} {s.formula} / {tp}")
            if parts:
                out.append(
                    Cache(
                        layer.index,
                        "state",
                        total,
                        total,
                        "; ".join(parts),
                        "state_heads",
                        checkpoint_page=(which == "gdn" and gdn_flashinfer)
                        or (which == "mamba" and mamba_shape(cfg).version == 2),
                        checkpoint_alignment=GDN_CHECKPOINT_ALIGNMENT
                        if which == "gdn" and gdn_flashinfer
                        else None,
                    )
                )
    return out
