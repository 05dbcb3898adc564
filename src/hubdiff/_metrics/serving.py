"""Serving figures: what one GPU holds under tensor, expert and pipeline parallelism, and the KV pool as
vLLM allocates it.

The figures that decide a deployment are per GPU, and every memory tool gets them wrong in the same
places: KV heads replicated when the tensor-parallel size exceeds the KV-head count, MLA's latent held
whole by every rank, sliding-window layers that still reserve pages, recurrent layers that hold a fixed
state per sequence. hubdiff knows every layer's kind (``layers``) and every tensor's component
(``components``); this module applies the engine's rules to them, and says which rule each figure
follows, citing the file of vLLM it was read from (``VLLM_VERSION``, the PyPI release read).

Three layers of figures, each built on the existing metrics (never a second model of the checkpoint):

- per rank, by the engine's sharding rules: weights by component, KV bytes per token, recurrent state
  per sequence, and the totals across all ranks (``ServingReport``);
- the KV pool as vLLM 0.33.0's KV-cache manager lays it out: block size, page-size unification across
  layer groups, sliding-window and Mamba pages, MLA and DSA-indexer pages with their FP8 scales, and the
  tokens that fit in ``--gpu-memory`` x ``--gpu-memory-utilization`` less the rank's weights (``Pool``);
- figure names that carry their configuration (``kv_bytes_per_token_per_rank@tp8``,
  ``tokens_that_fit@tp8,80GB``), so that a baseline's claim or recorded figure can be measured again
  without any other setting.

A configuration the engine refuses (32 heads at tp 3) raises ``ServingRefused``: one line, exit 2,
naming the rule.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from .. import dtypes
from ..units import human_bytes
from .components import _LAYER, COMPONENTS, classify
from .kv import KV_DTYPE_BYTES
from .layers import LINEAR_KINDS, LayerInfo
from .serving_options import (
    EP_MULTIPLE_RULE,
    VLLM_VERSION,
    ServingOptions,
    ServingRefused,
    checked_options,
    memory_text,
    split_name,
)

if TYPE_CHECKING:
    from ..patterns import Pattern
    from . import Metrics

_V = f"vLLM {VLLM_VERSION}"

# Each rule as read in vLLM's source: the key names it in figures, text and tests.
RULES: dict[str, str] = {
    "heads_divide": "attention heads must divide by the tensor-parallel size "
    "(vllm/config/model.py ModelConfig.verify_with_parallel_config)",
    "kv_heads": "KV heads per rank = max(1, kv_heads // tp), replicated tp // kv_heads times when tp > kv_heads "
    "(vllm/config/model.py ModelConfig.get_num_kv_heads; vllm/model_executor/layers/linear.py QKVParallelLinear)",
    "kv_divide": "QKVParallelLinear shards KV heads with divide(kv_heads, tp), or replicates them with "
    "divide(tp, kv_heads) (vllm/model_executor/layers/linear.py)",
    "mla_latent": "MLA caches one latent per layer on every rank: num_kv_heads=1, max_tp_shards=1 "
    "(vllm/model_executor/layers/attention/mla_attention.py MLAAttention.get_kv_cache_spec)",
    "dsa_indexer": "the DSA indexer is replicated, weights and key cache: ReplicatedLinear wq_b, wk_weights_proj "
    "with disable_tp, a uint8 key cache of index_head_dim + index_head_dim // 128 x 4 scale bytes "
    "(vllm/model_executor/models/deepseek_v2.py Indexer, DeepseekV32IndexerCache)",
    "fp8_ds_mla": "sparse MLA in FP8 stores 512 fp8 + 4 float32 scales + 64 bf16 RoPE = 656 bytes a token "
    "(vllm/v1/attention/backends/mla/flashmla_sparse.py; mla_attention.py state_content_bytes)",
    "vocab": "VocabParallelEmbedding / ParallelLMHead: rows padded to a multiple of 64, divide(padded, tp) a rank "
    "(vllm/model_executor/layers/vocab_parallel_embedding.py)",
    "column_row": "ColumnParallelLinear / RowParallelLinear: split by tp; a RowParallelLinear bias is whole "
    "(vllm/model_executor/layers/linear.py)",
    "mla_replicated": "MLA's q_a_proj and kv_a_proj_with_mqa are ReplicatedLinear (fused_qkv_a_proj with "
    "disable_tp); q_b_proj, kv_b_proj and o_proj are split (vllm/model_executor/models/deepseek_v2.py "
    "DeepseekV2MLAAttention)",
    "experts_tp": "without expert parallelism FusedMoE splits each expert's intermediate size by tp "
    "(vllm/model_executor/layers/fused_moe/config.py FusedMoEParallelConfig.make)",
    "experts_ep": "with expert parallelism the EP group is tp x dp ranks and each holds num_experts // ep whole "
    "experts, one more on the first num_experts % ep ranks "
    "(fused_moe/config.py FusedMoEParallelConfig.make; fused_moe/expert_map_manager.py determine_expert_map)",
    "ep_multiple": EP_MULTIPLE_RULE,
    "ep_needs_experts": "expert parallelism needs experts: 'Number of experts in the model must be greater than 0 "
    "when expert parallelism is enabled.' (vllm/config/model.py _verify_with_expert_parallelism)",
    "shared_experts": "shared experts are a TP-split MLP (vllm/model_executor/models/deepseek_v2.py "
    "DeepseekV2MoE.shared_experts)",
    "replicated": "routers (GateLinear / ReplicatedLinear) and norms are whole on every rank",
    "linear_attention": "linear-attention and Mamba mixers split heads, projections and conv by tp; KDA's "
    "f_a_proj and g_a_proj are ReplicatedLinear "
    "(vllm/model_executor/layers/mamba/gdn/kimi_gdn_linear_attn.py; mamba/mamba_utils.py)",
    "state_heads": "recurrent state per rank: heads // tp with divide() (GDN num_v_heads and conv dim, KDA heads, "
    "Mamba heads), Mamba-2 groups extended to tp when they do not divide "
    "(vllm/model_executor/layers/mamba/mamba_utils.py MambaStateShapeCalculator)",
    "vision": "the vision tower is split by tp (mm_encoder_tp_mode 'weights', the default, "
    "vllm/config/multimodal.py); hubdiff splits it as a whole",
    "mtp": "MTP layers are not loaded unless speculative decoding asks for them",
    "other": "tensors hubdiff cannot place are counted whole on every rank (an upper bound)",
    "pp_layers": "pipeline stages take num_layers // pp layers, the remainder to the stages before the last; "
    "the first holds the embedding, the last the head and final norm (vllm/distributed/utils.py get_pp_indices)",
    "pp_more": "more pipeline stages than layers leaves a stage with none (vllm/distributed/utils.py get_pp_indices)",
    # the pool
    "block_size": "block size: the kernel block of the attention backend vLLM picks for the GPU class "
    "(--gpu-class; vllm/platforms/cuda.py _get_backend_priorities, each backend's "
    "get_supported_kernel_block_sizes): 16 for FlashAttention (multiples of 16); MLA on sm90 FLASH_ATTN_MLA, any "
    "multiple of 16, so 16 (v1/attention/backends/mla/flashattn_mla.py; it takes no FP8 cache, which goes to "
    "FLASHMLA, 64: mla/flashmla.py); on sm100 FLASHINFER_MLA, [32, 64], so 32 (mla/flashinfer_mla.py); sparse "
    "MLA (DSA) FLASHMLA_SPARSE, 64 (mla/flashmla_sparse.py)",
    "mamba_align": "hybrid models raise the attention block size until an attention page holds a Mamba page, "
    "then pad the Mamba page to it (vllm/platforms/interface.py _align_hybrid_block_size)",
    "unify": "page sizes are unified: a smaller attention page scales its block size when it divides the largest, "
    "else is padded; a Mamba page is padded (vllm/v1/core/kv_cache_planning.py unify_kv_cache_spec_page_size)",
    "groups": "layers of one kind form groups of equal size (the smallest kind's count, or the largest when it is "
    "under 1.5 x the smallest); every group shares one pool of blocks of (layers a group) x page bytes "
    "(kv_cache_planning.py _get_kv_cache_groups_uniform_page_size, get_kv_cache_config_from_groups)",
    "uniform": "layers that all need the same token slots form one group whose page is the sum of theirs "
    "(kv_cache_interface.py UniformTypeKVCacheSpecs; kv_cache_planning.py get_kv_cache_groups)",
    "full_pages": "full attention needs cdiv(max_model_len, block_size) pages a sequence "
    "(vllm/v1/kv_cache_interface.py FullAttentionSpec.max_memory_usage_bytes)",
    "sliding_pages": "a sliding window needs cdiv(min(window - 1 + in-flight tokens, max_model_len), block_size) + 1 "
    "pages a sequence: the window plus a block, for the tokens still in flight "
    "(kv_cache_interface.py SlidingWindowSpec.max_admission_blocks_per_request)",
    "chunked_pages": "chunked local attention needs cdiv(min(chunk + in-flight tokens, max_model_len), block_size) "
    "pages a sequence (kv_cache_interface.py ChunkedLocalAttentionSpec)",
    "state_pages": "a Mamba / linear-attention layer holds fixed pages a sequence: 2 in mamba_cache_mode 'align' "
    "(prefix caching, the default for generative hybrids), +1 prefill checkpoint for Mamba-2 mixers and for Gated "
    "DeltaNet prefilled by FlashInfer (sm90: its checkpoints every 64 tokens make the attention block a multiple "
    "of 64; on sm100 the Triton prefill exports none), 1 in 'none' (kv_cache_interface.py MambaSpec.max_memory_usage_bytes; models/config.py "
    "MambaModelConfig; mamba/mamba_mixer2.py, mamba/gdn/qwen_gdn_linear_attn.py get_kv_cache_spec)",
    "in_flight": "in-flight tokens: max_concurrent_batches x max_num_batched_tokens; 2 batches with async "
    "scheduling (the default), pp + 1 under pipeline parallelism with Model Runner V2 (vllm/config/vllm.py "
    "max_in_flight_tokens, max_concurrent_batches)",
    "budget": "KV budget per rank: ceil(gpu_memory x gpu_memory_utilization) less what the rank holds; hubdiff "
    "subtracts the weights only, not the activation peak or CUDA graphs (vllm/v1/worker/utils.py request_memory, "
    "gpu_worker.py determine_available_memory)",
    "capacity": "num_blocks = budget // bytes per block, the smallest over pipeline stages; tokens that fit = "
    "int(num_blocks / pages a sequence needs x max_model_len), the 'GPU KV cache size' vLLM logs "
    "(kv_cache_planning.py get_kv_cache_configs; kv_cache_utils.py get_kv_cache_capacity)",
}


# Gated DeltaNet on Hopper (sm90) prefills with FlashInfer, which exports mid-prefill checkpoints every 64
# tokens (v1/attention/backends/gdn_attn.py FLASHINFER_GDN_CHECKPOINT_ALIGNMENT; qwen_gdn_linear_attn.py);
# elsewhere the Triton prefill exports none
GDN_CHECKPOINT_ALIGNMENT = 64
GDN_FLASHINFER_PREFILL = frozenset({"sm90"})


@dataclass(frozen=True)
class AttentionBackend:
    """The attention backend vLLM picks for a model's attention on a GPU class, and its kernel block."""

    name: str
    block: int


def attention_backend(gpu_class: str, mla: bool, sparse: bool, fp8: bool) -> AttentionBackend:
    """vLLM's first valid backend in platforms/cuda.py _get_backend_priorities for the GPU class (RULES
    "block_size"): the smallest kernel block it supports is the pool's block size."""
    if not mla:
        return AttentionBackend("FLASH_ATTN" if gpu_class == "sm90" else "FLASHINFER", 16)
    if sparse:
        return AttentionBackend("FLASHMLA_SPARSE", 64)
    if gpu_class == "sm100":
        return AttentionBackend("FLASHINFER_MLA", 32)
    if fp8:  # FLASH_ATTN_MLA's supported_kv_cache_dtypes hold no FP8
        return AttentionBackend("FLASHMLA", 64)
    return AttentionBackend("FLASH_ATTN_MLA", 16)


def table_text(reports: list[ServingReport]) -> str:
    """Several tensor-parallel sizes side by side, one row each, for ``--tp 1,2,4,8``."""
    rows = [
        [
            "tp",
            "weights a rank",
            "KV a token a rank",
            "engine a token",
            "state a sequence",
            "engine fixed a sequence",
            "tokens that fit",
        ]
    ]
    contexts = {r.pool.context for r in reports if isinstance(r.pool, Pool)}
    if len(contexts) == 1:
        rows[0][-1] += f" (max_model_len {contexts.pop():,})"
    for r in reports:
        p = r.pool
        fit = f"{p.tokens_that_fit:,}" if isinstance(p, Pool) and p.tokens_that_fit is not None else "-"
        rows.append(
            [
                str(r.options.tp),
                human_bytes(r.weight_bytes_per_rank),
                f"{r.kv_bytes_per_token_per_rank:,} B",
                f"{p.engine_bytes_per_token:,} B" if isinstance(p, Pool) else "-",
                f"{r.state_bytes_per_sequence_per_rank:,} B",
                human_bytes(p.fixed_bytes_per_sequence) if isinstance(p, Pool) else "-",
                fit,
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return (
        "\n".join(
            "  "
            + "  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths)))
            for row in rows
        )
        + "\n"
    )


# -- the model as the engine sees it ---------------------------------------------------------------


def _kv_bytes(dtype: str) -> float:
    return KV_DTYPE_BYTES.get(dtype, 2.0)


def _model_bytes(metrics: Metrics) -> int:
    return {"float32": 4, "float16": 2, "bfloat16": 2}.get(metrics.cfg.dtype.replace("torch.", ""), 2)


def _heads(metrics: Metrics, layer: LayerInfo) -> tuple[int, int, int, int]:
    from .estimate import layer_heads
    from .layers import block_kv_heads

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
    from .estimate import mamba_shape

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
        from .estimate import synthesize
        from .quantized import stored_tensors

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
    from .estimate import mamba_shape

    cfg, tp = metrics.cfg, options.tp
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
            latent = kv_lora + rope
            engine = 656 if kind == "dsa" and fp8 else int(latent * (1 if fp8 else b))
            formula = f"({kv_lora} + {rope}) × {b:g}"
            out.append(Cache(layer.index, "mla", int(latent * b), engine, formula, "mla_latent", kv_heads=1))
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


# -- the vLLM pool ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PoolGroup:
    kind: str  # "full" (full attention, MLA and indexer pages), "sliding", "chunked", "state"
    layers: tuple[int, ...]  # a DSA layer twice: its latent and its indexer keys
    pages: tuple[int, ...]  # each layer's page bytes, after unification
    block_size: int
    pages_per_sequence: int
    window: int | None = None

    def bytes_on(self, stage_of: dict[int, int], stage: int) -> int:
        return sum(page for layer, page in zip(self.layers, self.pages) if stage_of.get(layer, 0) == stage)


@dataclass(frozen=True)
class Pool:
    version: str
    block_size: int
    groups: tuple[PoolGroup, ...]
    bytes_per_block: int  # the largest stage's: the pool's blocks hold one page of every layer of a group
    pages_per_sequence: int
    context: int
    in_flight: int
    steps: tuple[str, ...]
    budget: int | None = None  # per rank of the tightest stage
    num_blocks: int | None = None
    refused_start: str | None = None  # vLLM would not start: one sequence does not fit

    @property
    def engine_bytes_per_token(self) -> int:
        """What one more token of context costs the pool: a block of every group that grows with the context
        (each block is bytes_per_block, whichever group holds it), over its tokens."""
        return round(
            sum(Fraction(self.bytes_per_block, g.block_size) for g in self.groups if g.kind == "full")
        )

    @property
    def fixed_bytes_per_sequence(self) -> int:
        """Pages a sequence holds whatever its length: sliding windows, chunks and recurrent state."""
        return sum(g.pages_per_sequence * self.bytes_per_block for g in self.groups if g.kind != "full")

    @property
    def max_concurrency(self) -> float | None:
        if self.num_blocks is None or not self.pages_per_sequence:
            return None
        return self.num_blocks / self.pages_per_sequence

    @property
    def tokens_that_fit(self) -> int | None:
        c = self.max_concurrency
        return None if c is None else int(c * self.context)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _pages(
    kind: str, block: int, window: int | None, context: int, in_flight: int, mode: str, checkpoint: bool
) -> int:
    """Pages one sequence of ``context`` tokens holds in a group of this kind (vLLM's max_memory_usage_bytes
    over the page size)."""
    if kind == "full":
        return _cdiv(context, block)
    if kind == "sliding":
        return _cdiv(min((window or 0) - 1 + in_flight, context), block) + 1
    if kind == "chunked":
        return _cdiv(min((window or 0) + in_flight, context), block)
    return (2 + (1 if checkpoint else 0)) if mode == "align" else 1


@dataclass(frozen=True)
class _Spec:
    layer: int
    kind: str  # as PoolGroup.kind
    block: int
    page: int
    window: int | None
    checkpoint: bool


def _groups(specs: list[_Spec], steps: list[str], mla: bool) -> list[_Spec] | str:
    """Page sizes unified as vLLM's unify_kv_cache_spec_page_size does (or why they cannot be)."""
    largest = max(s.page for s in specs)
    out = []
    for s in specs:
        if s.page == largest or s.kind == "state":
            out.append(replace(s, page=largest))
        elif largest % s.page == 0:
            out.append(replace(s, block=s.block * (largest // s.page), page=largest))
        elif not mla:
            out.append(replace(s, page=largest))  # padded
        else:
            return "MLA pages that do not divide the largest page fall back to full allocation: not modelled"
    if any(a.page != b.page or a.block != b.block for a, b in zip(specs, out)):
        steps.append(f"pages unified to {largest:,} B [unify]")
    return out


def pool(
    metrics: Metrics, options: ServingOptions, layer_caches: list[Cache], stage_bytes: list[int]
) -> Pool | str:
    """The KV pool as vLLM 0.33.0 lays it out (FlashAttention / FlashMLA backends, the layer-outer LBNHC layout,
    no speculative decoding), or why hubdiff cannot follow it for this model."""
    if any(c.kind == "compressed" for c in layer_caches):
        return (
            "compressed-KV layers (one entry per compress_ratio tokens) are packed block-outermost by their own "
            "builder: not modelled"
        )
    dtype = metrics.kv.kv_dtype
    if dtype not in ("fp32", "f32", "bf16", "fp16", "f16", "fp8", "f8"):
        return f"KV dtype {dtype}: vLLM's packed {dtype} page layouts are not modelled"
    context = metrics.kv.context_tokens
    if not context:
        return "no context length (max_position_embeddings): give --context"
    if not layer_caches:
        return "no layer holds a KV cache or a state"
    if any(c.engine <= 0 for c in layer_caches):
        return "a layer's cache page is empty (no heads or no head width in the config)"
    steps: list[str] = []
    mla = any(c.kind == "mla" for c in layer_caches)
    attention = [c for c in layer_caches if c.kind != "state"]
    state = [c for c in layer_caches if c.kind == "state"]
    mode = options.mamba_cache_mode if attention else "none"  # attention-free models cache no prefix
    sparse = any(c.kind == "indexer" for c in layer_caches) or any(
        x.attention == "dsa" for x in metrics.layers
    )
    backend = attention_backend(options.gpu_class, mla, sparse, dtype in ("fp8", "f8"))
    block = options.block_size or backend.block
    steps.append(
        f"block size {block}"
        + (
            " (--block-size)"
            if options.block_size
            else f" ({backend.name} on {options.gpu_class}) [block_size]"
        )
    )
    state_page: int | None = None
    # every recurrent layer exports prefill checkpoints (mamba_abstract get_mamba_prefill_checkpoint_alignment)
    exports = mode == "align" and bool(state) and all(c.checkpoint_alignment is not None for c in state)
    if attention and state:
        attn_1 = next(c.engine for c in attention if c.kind != "indexer")
        mamba_page = max(c.engine for c in state)
        kernel = backend.block
        align = max(kernel, block, 128 if mla else 0)
        if exports:
            align = math.lcm(align, *(c.checkpoint_alignment or 1 for c in state))
            steps.append(
                f"prefill checkpoints in align mode: the attention block a multiple of {align} [state_pages]"
            )
        needed = kernel * _cdiv(align * _cdiv(mamba_page, align * attn_1), kernel)
        if needed > block:
            steps.append(
                f"attention block raised to {needed} tokens so that {needed} × {attn_1:,} B holds the "
                f"{mamba_page:,} B state page [mamba_align]"
            )
            block = needed
        state_page = block * attn_1
        if state_page != mamba_page:
            steps.append(f"state pages padded from {mamba_page:,} B to {state_page:,} B")
    batches = 2 if options.pp == 1 else options.pp + 1
    in_flight = batches * options.max_num_batched_tokens
    specs = [
        _Spec(
            c.layer,
            "state",
            block,
            state_page or c.engine,
            None,
            c.checkpoint_page and (exports or c.checkpoint_alignment is None),
        )
        if c.kind == "state"
        else _Spec(
            c.layer,
            "full" if c.kind in ("full", "mla", "indexer") else c.kind,
            block,
            block * c.engine,
            c.window,
            False,
        )
        for c in layer_caches
    ]
    kinds = {s.kind for s in specs}
    windows = {s.window for s in specs}
    same_spec = len({(s.kind, s.block, s.page, s.window) for s in specs}) == 1
    same_slots = (
        len(kinds) == 1 and len(windows) == 1 and (kinds != {"state"} or len({s.page for s in specs}) == 1)
    )
    groups: list[PoolGroup] = []
    if same_spec or same_slots:
        s0 = specs[0]
        pages = _pages(s0.kind, block, s0.window, context, in_flight, mode, any(s.checkpoint for s in specs))
        groups.append(
            PoolGroup(
                s0.kind, tuple(s.layer for s in specs), tuple(s.page for s in specs), block, pages, s0.window
            )
        )
        steps.append(
            f"one group of {len(specs)} layer caches, a block of {sum(s.page for s in specs):,} B "
            f"[{'groups' if same_spec else 'uniform'}]"
        )
    else:
        unified = _groups(specs, steps, mla)
        if isinstance(unified, str):
            return unified
        buckets: dict[tuple[str, int, int | None, bool], list[_Spec]] = defaultdict(list)
        for s in unified:
            buckets[(s.kind, s.block, s.window, s.checkpoint)].append(s)
        counts = [len(v) for v in buckets.values()]
        size = max(counts) if max(counts) < 1.5 * min(counts) else min(counts)
        for (kind, bs, window, m2), members in buckets.items():
            count = _cdiv(len(members), size)
            pages = _pages(kind, bs, window, context, in_flight, mode, m2)
            for i in range(count):
                part = members[i::count]
                groups.append(
                    PoolGroup(
                        kind, tuple(s.layer for s in part), tuple(s.page for s in part), bs, pages, window
                    )
                )
        steps.append(f"{len(groups)} groups of up to {size} layers [groups]")
    main = _main_layers(metrics)
    stage_of = dict(zip((x.index for x in main), _stage_of(len(main), options.pp)))
    per_stage = [max(g.bytes_on(stage_of, stage) for g in groups) for stage in range(options.pp)]
    bytes_per_block = max(per_stage)
    pages = sum(g.pages_per_sequence for g in groups)
    sliding = next((g for g in groups if g.kind == "sliding"), None)
    if sliding is not None:
        steps.append(
            f"sliding window {sliding.window}: cdiv(min({sliding.window} - 1 + {in_flight:,}, {context:,}), "
            f"{sliding.block_size}) + 1 = {sliding.pages_per_sequence} pages a sequence a group "
            f"[sliding_pages, in_flight]"
        )
    chunked = next((g for g in groups if g.kind == "chunked"), None)
    if chunked is not None:
        steps.append(
            f"chunks of {chunked.window}: {chunked.pages_per_sequence} pages a sequence a group [chunked_pages]"
        )
    held = next((g for g in groups if g.kind == "state"), None)
    if held is not None:
        steps.append(f"{held.pages_per_sequence} state pages a sequence a group [state_pages]")
    steps.append(
        f"a sequence of {context:,} tokens holds {pages:,} blocks of {bytes_per_block:,} B [full_pages]"
    )
    result = Pool(_V, block, tuple(groups), bytes_per_block, pages, context, in_flight, tuple(steps))
    if options.gpu_memory is None:
        return result
    requested = math.ceil(options.gpu_memory * options.gpu_memory_utilization)
    budgets = [requested - w for w in stage_bytes]
    blocks = min(max(0, budget) // per for budget, per in zip(budgets, per_stage) if per)
    budget = min(budgets)
    refused = None
    if blocks < pages:
        refused = (
            f"vLLM would not start: one sequence of {context:,} tokens needs {pages * bytes_per_block:,} B, "
            f"the pool has {max(0, budget):,} B (lower --context or add GPUs)"
        )
    return replace(result, budget=budget, num_blocks=blocks, refused_start=refused)


# -- the report -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServingReport:
    options: ServingOptions
    stages: tuple[StageWeights, ...]
    weight_rules: dict[str, tuple[str, ...]]
    caches: tuple[Cache, ...]
    stage_of: dict[int, int]
    pool: Pool | str  # the pool, or why it is not modelled
    basis: str
    kv_dtype: str
    assumptions: tuple[str, ...] = field(default=())

    # -- per rank
    @property
    def weight_bytes_per_rank(self) -> int:
        return max(s.per_rank for s in self.stages)

    @property
    def weight_bytes_all_ranks(self) -> int:
        o = self.options
        return sum(s.per_rank for s in self.stages) * o.tp * o.dp if o.ep <= 1 else self._all_ranks_ep()

    def _all_ranks_ep(self) -> int:
        # every rank of a stage holds the same but for the experts: all of them, spread over the EP group
        o = self.options
        total = 0
        for s in self.stages:
            experts = s.whole.get("routed_experts", 0)
            total += (s.per_rank - s.by_component.get("routed_experts", 0)) * o.tp * o.dp + experts
        return total

    def _stage_sum(self, kinds: tuple[str, ...], field_name: str = "bytes") -> list[int]:
        out = [0] * self.options.pp
        for c in self.caches:
            if c.kind in kinds:
                out[self.stage_of.get(c.layer, 0)] += getattr(c, field_name)
        return out

    @property
    def kv_bytes_per_token_per_rank(self) -> int:
        return max(self._stage_sum(("full", "mla", "indexer", "compressed")))

    @property
    def kv_window_bytes_per_token_per_rank(self) -> int:
        return max(self._stage_sum(("sliding", "chunked")))

    @property
    def state_bytes_per_sequence_per_rank(self) -> int:
        return max(self._stage_sum(("state",)))

    @property
    def kv_bytes_per_token_all_ranks(self) -> int:
        return sum(self._stage_sum(("full", "mla", "indexer", "compressed"))) * self.options.tp

    @property
    def kv_heads_per_rank(self) -> int:
        heads = [c.kv_heads for c in self.caches if c.kv_heads]
        return min(heads) if heads else 0

    def figures(self) -> dict[str, Any]:
        """Every serving figure under its name (``base@configuration``)."""
        o = self.options
        par, pool_spec, fit = o.spec("parallel"), o.spec("pool"), o.spec("fit")
        out: dict[str, Any] = {
            f"weight_bytes_per_rank@{par}": self.weight_bytes_per_rank,
            f"weight_bytes_all_ranks@{par}": self.weight_bytes_all_ranks,
            f"kv_bytes_per_token_per_rank@{par}": self.kv_bytes_per_token_per_rank,
            f"kv_window_bytes_per_token_per_rank@{par}": self.kv_window_bytes_per_token_per_rank,
            f"kv_bytes_per_token_all_ranks@{par}": self.kv_bytes_per_token_all_ranks,
            f"state_bytes_per_sequence_per_rank@{par}": self.state_bytes_per_sequence_per_rank,
            f"kv_heads_per_rank@{par}": self.kv_heads_per_rank,
        }
        largest = max(self.stages, key=lambda s: s.per_rank)
        for component, size in largest.by_component.items():
            out[f"{component}_bytes_per_rank@{par}"] = size
        if isinstance(self.pool, Pool):
            out[f"kv_block_size@{pool_spec}"] = self.pool.block_size
            out[f"engine_kv_bytes_per_token_per_rank@{pool_spec}"] = self.pool.engine_bytes_per_token
            out[f"engine_fixed_bytes_per_sequence_per_rank@{pool_spec}"] = self.pool.fixed_bytes_per_sequence
            if self.pool.num_blocks is not None:
                out[f"kv_pool_bytes_per_rank@{fit}"] = max(0, self.pool.budget or 0)
                out[f"tokens_that_fit@{fit}"] = self.pool.tokens_that_fit
                out[f"max_concurrency@{fit}"] = round(self.pool.max_concurrency or 0.0, 2)
        return out

    def value(self, base: str) -> Any:
        """The figure ``base`` of this configuration (None: not measured, e.g. a pool hubdiff cannot follow)."""
        for name, value in self.figures().items():
            if name.partition("@")[0] == base:
                return value
        return None

    def to_json(self) -> dict[str, Any]:
        o = self.options
        pool_json: dict[str, Any] | str
        if isinstance(self.pool, Pool):
            p = self.pool
            pool_json = {
                "engine": p.version,
                "block_size": p.block_size,
                "bytes_per_block": p.bytes_per_block,
                "pages_per_sequence": p.pages_per_sequence,
                "max_model_len": p.context,
                "in_flight_tokens": p.in_flight,
                "engine_bytes_per_token": p.engine_bytes_per_token,
                "fixed_bytes_per_sequence": p.fixed_bytes_per_sequence,
                "groups": [
                    {
                        "kind": g.kind,
                        "layers": len(g.layers),
                        "block_size": g.block_size,
                        "page_bytes": max(g.pages),
                        "pages_per_sequence": g.pages_per_sequence,
                        **({"window": g.window} if g.window else {}),
                    }
                    for g in p.groups
                ],
                "budget_bytes": p.budget,
                "num_blocks": p.num_blocks,
                "tokens_that_fit": p.tokens_that_fit,
                "max_concurrency": p.max_concurrency,
                "refused_start": p.refused_start,
                "steps": list(p.steps),
            }
        else:
            pool_json = self.pool
        return {
            "engine": _V,
            "tp": o.tp,
            "ep": o.ep,
            "pp": o.pp,
            "dp": o.dp,
            "ranks": o.ranks,
            "basis": self.basis,
            "kv_dtype": self.kv_dtype,
            "gpu_memory": o.gpu_memory,
            "gpu_memory_utilization": o.gpu_memory_utilization,
            "gpu_class": o.gpu_class,
            "weights": {
                "per_rank": self.weight_bytes_per_rank,
                "all_ranks": self.weight_bytes_all_ranks,
                "stages": [
                    {
                        "stage": s.stage,
                        "layers": list(s.layers),
                        "per_rank": s.per_rank,
                        "by_component": s.by_component,
                    }
                    for s in self.stages
                ],
                "rules": {c: list(r) for c, r in self.weight_rules.items()},
            },
            "kv": {
                "bytes_per_token_per_rank": self.kv_bytes_per_token_per_rank,
                "window_bytes_per_token_per_rank": self.kv_window_bytes_per_token_per_rank,
                "bytes_per_token_all_ranks": self.kv_bytes_per_token_all_ranks,
                "kv_heads_per_rank": self.kv_heads_per_rank,
                "state_bytes_per_sequence_per_rank": self.state_bytes_per_sequence_per_rank,
                "layers": _cache_rows(self.caches),
            },
            "pool": pool_json,
            "figures": self.figures(),
            "assumptions": list(self.assumptions),
        }

    def text(self) -> str:
        """The report as ``hubdiff metrics --tp`` prints it: each figure beside the keys of its rules, and the
        rules, as read in vLLM's source, after them."""
        o, lines, used = self.options, [], list[str]()

        def keys(*names: str) -> str:
            used.extend(n for n in names if n not in used)
            return "[" + ", ".join(names) + "]"

        parallel = (
            f"tp {o.tp}"
            + (f", ep {o.ep} (dp {o.dp})" if o.ep > 1 else "")
            + (f", pp {o.pp}" if o.pp > 1 else "")
        )
        lines.append(f"serving     {parallel}: {o.ranks} rank{'s' if o.ranks > 1 else ''}, {_V} rules")
        largest = max(self.stages, key=lambda s: s.per_rank)
        where = (
            f" (stage {largest.stage}, layers {largest.layers[0]}-{largest.layers[1] - 1})"
            if o.pp > 1
            else ""
        )
        lines.append(
            f"  weights   {self.weight_bytes_per_rank:,} B a rank ({human_bytes(self.weight_bytes_per_rank)}){where}, "
            f"{human_bytes(self.weight_bytes_all_ranks)} across ranks; {self.basis}"
            + ("  " + keys("pp_layers") if o.pp > 1 else "")
        )
        rows = [
            (component, f"{size:,}", human_bytes(size), keys(*self.weight_rules.get(component, ("other",))))
            for component, size in largest.by_component.items()
        ]
        width = [max(len(r[i]) for r in rows) for i in range(3)] if rows else [0, 0, 0]
        for c, exact, human, rule in rows:
            lines.append(f"    {c:<{width[0]}}  {exact:>{width[1]}} B  {human:>{width[2]}}  {rule}")
        kv = self.kv_bytes_per_token_per_rank
        lines.append(
            f"  kv        {kv:,} B a token a rank ({self.kv_dtype}), {self.kv_bytes_per_token_all_ranks:,} B across the "
            f"{o.tp} tp rank{'s' if o.tp > 1 else ''}"
        )
        for row in _cache_rows(self.caches):
            lines.append(f"    {row['layers']:>3} × {row['kind']:<10} {row['formula']}  {keys(row['rule'])}")
        if self.kv_window_bytes_per_token_per_rank:
            lines.append(
                f"  windows   {self.kv_window_bytes_per_token_per_rank:,} B a token a rank, until each is full"
            )
        if self.state_bytes_per_sequence_per_rank:
            lines.append(f"  state     {self.state_bytes_per_sequence_per_rank:,} B a sequence a rank")
        p = self.pool
        if isinstance(p, str):
            lines.append(f"  pool      not modelled: {p}")
        else:
            fixed = (
                f", {p.fixed_bytes_per_sequence:,} B fixed a sequence" if p.fixed_bytes_per_sequence else ""
            )
            lines.append(
                f"  pool      {p.version}: {p.engine_bytes_per_token:,} B a token a rank (theory {kv:,}){fixed}; "
                f"block {p.block_size}, {len(p.groups)} group{'s' if len(p.groups) > 1 else ''}, "
                f"{p.bytes_per_block:,} B a block"
            )
            for step in p.steps:
                head, _, rest = step.rpartition(" [")
                lines.append(f"    {head} {keys(*rest.rstrip(']').split(', '))}" if head else f"    {step}")
            if p.num_blocks is not None:
                lines.append(
                    f"  fit       {p.tokens_that_fit:,} tokens ({p.max_concurrency:.2f} sequences of {p.context:,}): "
                    f"ceil({memory_text(o.gpu_memory or 0)} × {o.gpu_memory_utilization:g}) - "
                    f"{self.weight_bytes_per_rank:,} B of weights = {max(0, p.budget or 0):,} B, "
                    f"{p.num_blocks:,} blocks / {p.pages_per_sequence:,} a sequence × {p.context:,}  "
                    + keys("budget", "capacity")
                )
                if p.refused_start:
                    lines.append(f"    {p.refused_start}")
        for a in self.assumptions:
            lines.append(f"  note      {a}")
        lines.append(f"  rules ({_V}, as read in its source):")
        lines += [f"    {key}: {RULES[key]}" for key in used]
        return "\n".join(lines) + "\n"


def _cache_rows(items: Iterable[Cache]) -> list[dict[str, Any]]:
    rows: dict[tuple[str, str, str], int] = {}
    for c in items:
        key = (c.kind, c.formula, c.rule)
        rows[key] = rows.get(key, 0) + 1
    return [{"kind": k, "formula": f, "rule": r, "layers": n} for (k, f, r), n in rows.items()]


def serving_report(metrics: Metrics, patterns: Iterable[Pattern], options: ServingOptions) -> ServingReport:
    """The serving figures of ``metrics`` (and its snapshot's ``patterns``) under ``options``; raises
    ServingRefused for a configuration the engine refuses."""
    check(metrics, options)
    stages, rules = stage_weights(metrics, patterns, options)
    layer_caches = caches(metrics, options)
    main = _main_layers(metrics)
    stage_of = dict(zip((x.index for x in main), _stage_of(len(main), options.pp)))
    result = pool(metrics, options, layer_caches, [s.per_rank for s in stages])
    if metrics.basis == "headers":
        basis = "from safetensors headers"
    else:
        from .quantized import basis as estimate_basis

        basis = estimate_basis(metrics.cfg)
    assumptions = [RULES["mtp"]] if any(x.mtp for x in metrics.layers) else []
    if metrics.unverified:
        assumptions.append("the metrics these rest on are unverified: " + "; ".join(metrics.unverified)[:300])
    return ServingReport(
        options,
        tuple(stages),
        rules,
        tuple(layer_caches),
        stage_of,
        result,
        basis,
        metrics.kv.kv_dtype,
        tuple(assumptions),
    )


def reports_text(reports: list[ServingReport]) -> str:
    """What ``hubdiff metrics --tp`` adds after the metrics: a row per size when several are asked, then
    each size's figures beside their rules."""
    if not reports:
        return ""
    out = [""]
    if len(reports) > 1:
        out += [
            f"serving     {_V} rules, one row per tensor-parallel size",
            table_text(reports).rstrip("\n"),
            "",
        ]
    for r in reports:
        out.append(r.text())
    return "\n".join(out)


def serving_figures(
    metrics: Metrics, patterns: Iterable[Pattern], configurations: Iterable[ServingOptions]
) -> dict[str, Any]:
    """Every serving figure of each configuration; raises ServingRefused for one the engine refuses."""
    out: dict[str, Any] = {}
    patterns = list(patterns)
    for options in configurations:
        out.update(serving_report(metrics, patterns, options).figures())
    return out


def serving_values(names: Iterable[str], metrics: Metrics, patterns: Iterable[Pattern]) -> dict[str, Any]:
    """The value of each serving figure name, each measured under the configuration its name says; a
    configuration the engine refuses gives the refusal's text (which no claim holds for)."""
    wanted: dict[ServingOptions, list[tuple[str, str]]] = defaultdict(list)
    for name in names:
        parsed = split_name(name)
        if parsed is not None:
            wanted[parsed[1]].append((name, parsed[0]))
    out: dict[str, Any] = {}
    patterns = list(patterns)
    for options, items in wanted.items():
        try:
            report = serving_report(metrics, patterns, options)
        except ServingRefused as exc:
            for name, _ in items:
                out[name] = f"refused: {exc}"
            continue
        for name, base in items:
            out[name] = report.value(base)
    return out


__all__ = [  # the options, flags and figure names are serving_options'
    "RULES",
    "Pool",
    "ServingReport",
    "check",
    "kv_per_rank",
    "pool",
    "serving_figures",
    "serving_report",
    "serving_values",
]
