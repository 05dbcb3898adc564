"""Serving figures per GPU and the KV pool as vLLM allocates it, against arithmetic written out here.

Every rule is quoted from the vLLM source it follows (vLLM 0.33.0, the PyPI release read; paths are
inside the ``vllm`` package). Five layouts: a dense GQA model (Llama-3.1-8B's real config), an MLA model
(DeepSeek-V3's, and GLM-5.1's for DSA), a sliding/full hybrid and a linear-attention hybrid (the shapes
transformers' GptOssConfig and Qwen3NextConfig default to, written out below) and an MoE under expert
parallelism (Qwen3-30B-A3B's real config). A baseline claims per-rank figures and a new revision breaks
them, through the Hub replica.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest
import yaml

from hubdiff._metrics.compute import compute_metrics
from hubdiff._metrics.options import MetricsOptions
from hubdiff._metrics.serving import serving_report
from hubdiff._metrics.serving_options import ServingOptions, ServingRefused, figure_unit, split_name
from hubdiff._metrics.serving_shards import pp_partitions
from hubdiff.errors import UsageError
from hubdiff.snapshot import Snapshot

from .conftest import DATA

GB = 10**9
BUDGET_80GB = math.ceil(
    80 * GB * 0.92
)  # vllm/v1/worker/utils.py: ceil(total_memory * gpu_memory_utilization)


def config(model: str) -> dict:
    return json.loads((DATA / model / "config.json").read_text())


def metrics_of(cfg: dict, **kw):
    return compute_metrics(Snapshot("x", "main", "", None, cfg, None, (), {}, ()), MetricsOptions(**kw))


def served(m, **kw):
    return serving_report(m, (), ServingOptions(**kw))


# -- a dense GQA model ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def llama():
    return metrics_of(config("Llama-3.1-8B"))


def test_gqa_kv_heads_per_rank_below_and_above_the_kv_head_count(llama):
    """vllm/config/model.py ModelConfig.get_num_kv_heads:
    ``return max(1, total_num_kv_heads // parallel_config.tensor_parallel_size)`` -- "We will replicate the
    KV heads in the case where the number of KV heads is smaller than the tensor parallel size"."""
    layers, head_dim, bf16 = 32, 128, 2
    tp4 = served(llama, tp=4)
    assert tp4.kv_heads_per_rank == 8 // 4 == 2
    assert tp4.kv_bytes_per_token_per_rank == layers * 2 * 2 * head_dim * bf16 == 32_768  # K and V
    assert tp4.kv_bytes_per_token_all_ranks == 4 * 32_768
    tp16 = served(llama, tp=16)
    assert tp16.kv_heads_per_rank == max(1, 8 // 16) == 1  # replicated: 2 ranks hold each KV head
    assert tp16.kv_bytes_per_token_per_rank == layers * 2 * 1 * head_dim * bf16 == 16_384
    assert tp16.kv_bytes_per_token_all_ranks == 16 * 16_384 > served(llama, tp=1).kv_bytes_per_token_per_rank
    assert served(llama, tp=1).kv_bytes_per_token_per_rank == llama.kv.bytes_per_token == 131_072


def test_gqa_weights_per_rank_by_component(llama):
    """vllm/model_executor/layers/vocab_parallel_embedding.py: ``pad_vocab_size`` rounds up to
    ``DEFAULT_VOCAB_PADDING_SIZE = 64`` and ``num_embeddings_per_partition = divide(num_embeddings_padded,
    tp_size)``; linear.py QKVParallelLinear: ``self.num_heads = divide(self.total_num_heads, tp_size)``, and for
    ``tp_size >= self.total_num_kv_heads``: ``self.num_kv_heads = 1``."""
    h, vocab, inter, layers, bf16 = 4096, 128_256, 14_336, 32, 2
    assert vocab % 64 == 0  # no padding rows for this vocabulary
    tp1 = served(llama, tp=1)
    assert tp1.weight_bytes_per_rank == 16_060_522_496  # the real index's metadata.total_size
    tp2 = served(llama, tp=2)
    c = tp2.stages[0].by_component
    assert c["embeddings"] == c["output_head"] == vocab // 2 * h * bf16
    q_o = 2 * h * h // 2
    k_v = 2 * (8 // 2) * 128 * h
    assert c["attention"] == layers * (q_o + k_v) * bf16
    assert c["dense_mlp"] == layers * 3 * inter * h // 2 * bf16
    assert c["norms"] == (2 * layers + 1) * h * bf16  # RMSNorm: whole on every rank
    assert tp2.weight_bytes_all_ranks == tp1.weight_bytes_per_rank + c["norms"]  # norms twice
    tp16 = served(llama, tp=16).stages[0].by_component
    # q and o split 16 ways; each of the 8 KV heads is held by 2 ranks, so k and v are split only 8 ways
    assert tp16["attention"] == layers * (2 * h * h // 16 + 2 * 128 * h) * bf16


def test_a_configuration_the_engine_refuses_is_one_line_naming_the_rule(llama, tmp_path, capsys):
    """vllm/config/model.py verify_with_parallel_config: ``if total_num_attention_heads % tensor_parallel_size
    != 0: raise ValueError(f"Total number of attention heads ({total_num_attention_heads}) must be divisible by
    tensor parallel size ({tensor_parallel_size}).")``."""
    with pytest.raises(ServingRefused, match=r"Total number of attention heads \(32\) must be divisible"):
        served(llama, tp=3)
    # 48 heads divide by 6, 8 KV heads do not: linear.py ``self.num_kv_heads = divide(self.total_num_kv_heads,
    # tp_size)`` asserts "8 is not divisible by 6" (distributed/utils.py ensure_divisibility)
    wide = metrics_of({**config("Llama-3.1-8B"), "num_attention_heads": 48, "head_dim": 128})
    with pytest.raises(ServingRefused, match="8 KV heads at --tp 6: QKVParallelLinear"):
        served(wide, tp=6)
    with pytest.raises(ServingRefused, match="model without experts"):
        served(llama, tp=2, ep=2)  # config/model.py _verify_with_expert_parallelism

    from hubdiff.cli import main

    (tmp_path / "config.json").write_text(json.dumps(config("Llama-3.1-8B")))
    assert main(["metrics", str(tmp_path), "--config-only", "--tp", "3", "--offline"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        len(err) == 1 and "32 attention heads at --tp 3" in err[0] and "verify_with_parallel_config" in err[0]
    )


def test_dense_pool_and_tokens_that_fit(llama):
    """v1/kv_cache_interface.py AttentionSpec.page_size_bytes: ``num_heads * num_states *
    state_content_size_bytes`` with ``(head_size + head_size_v) * get_dtype_size(dtype)``;
    FullAttentionSpec.max_memory_usage_bytes: ``cdiv(max_model_len, self.block_size) * self.page_size_bytes``;
    core/kv_cache_planning.py: ``num_blocks = available_memory // bytes_per_block``; core/kv_cache_utils.py
    get_kv_cache_capacity: ``int(max_concurrency * max_model_len)``."""
    r = served(llama, tp=4, gpu_memory=80 * GB)
    p = r.pool
    page = 16 * 2 * 128 * 2 * 2  # block 16 (config/cache.py DEFAULT_BLOCK_SIZE) x (K + V) x 2 heads x bf16
    assert p.block_size == 16 and p.bytes_per_block == 32 * page
    assert p.engine_bytes_per_token == r.kv_bytes_per_token_per_rank == 32_768
    budget = BUDGET_80GB - r.weight_bytes_per_rank
    blocks = budget // (32 * page)
    context = 131_072
    assert p.num_blocks == blocks and p.pages_per_sequence == context // 16
    assert p.tokens_that_fit == int(blocks / (context // 16) * context)
    assert r.figures()["tokens_that_fit@tp4,80GB"] == p.tokens_that_fit
    # at a shorter max_model_len the pages a sequence needs shrink, the blocks do not
    short = served(metrics_of(config("Llama-3.1-8B"), context=8192), tp=4, gpu_memory=80 * GB).pool
    assert short.num_blocks == blocks and short.tokens_that_fit == int(blocks / 512 * 8192)


def test_pipeline_stages_split_the_layers_as_get_pp_indices_does(llama):
    """vllm/distributed/utils.py get_pp_indices: ``layers_per_partition = num_hidden_layers // pp_size`` and
    ``for i in range(2, remaining_layers + 2): partitions[-i] += 1``."""
    assert pp_partitions(61, 4) == [15, 15, 16, 15]
    assert pp_partitions(32, 2) == [16, 16]
    r = served(llama, tp=1, pp=2, gpu_memory=80 * GB)
    first, last = r.stages
    assert first.layers == (0, 16) and last.layers == (16, 32)
    assert "embeddings" in first.by_component and "output_head" not in first.by_component
    assert "output_head" in last.by_component and "embeddings" not in last.by_component
    assert r.kv_bytes_per_token_per_rank == 16 * 2 * 8 * 128 * 2  # each stage caches its 16 layers


# -- MLA ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def deepseek():
    cfg = config("DeepSeek-V3")
    return metrics_of({k: v for k, v in cfg.items() if k != "quantization_config"})  # BF16 arithmetic


def test_mla_caches_one_latent_per_layer_on_every_rank(deepseek):
    """model_executor/layers/attention/mla_attention.py MLAAttention.get_kv_cache_spec: ``num_kv_heads=1,
    max_tp_shards=1``; config/model.py get_num_kv_heads: ``if self.use_mla: return 1``."""
    latent = 512 + 64  # kv_lora_rank + qk_rope_head_dim, the DeepSeek-V2 paper's 576
    for tp in (1, 8, 16):
        r = served(deepseek, tp=tp)
        assert r.kv_bytes_per_token_per_rank == 61 * latent * 2 == 70_272  # the same on every rank
        assert r.kv_bytes_per_token_all_ranks == tp * 70_272
    fp8 = served(metrics_of(deepseek.cfg.raw, kv_dtype="fp8"), tp=8)
    assert fp8.kv_bytes_per_token_per_rank == 61 * latent  # plain MLA in FP8: a per-tensor scale
    assert fp8.pool.block_size == 64  # v1/attention/backends/mla/flashmla.py: kernel block sizes [64]


def test_mla_attention_weights_per_rank(deepseek):
    """model_executor/models/deepseek_v2.py DeepseekV2MLAAttention: ``self.fused_qkv_a_proj =
    DeepSeekV2FusedQkvAProjLinear(...)`` built with ``disable_tp=True`` (q_a_proj and kv_a_proj_with_mqa whole
    on every rank); q_b_proj / kv_b_proj ``ColumnParallelLinear``, o_proj ``RowParallelLinear``."""
    h, q_lora, kv_lora, rope, nope, v, heads = 7168, 1536, 512, 64, 128, 128, 128
    whole = (q_lora + kv_lora + rope) * h
    split = q_lora * heads * (nope + rope) + kv_lora * heads * (nope + v) + heads * v * h
    r = served(deepseek, tp=8)
    assert r.stages[0].by_component["attention"] == 61 * (whole + split // 8) * 2


def test_dsa_indexer_pages_with_their_fp8_scales():
    """models/deepseek_v2.py Indexer: ``head_dim=self.head_dim + self.head_dim // self.quant_block_size * 4``
    in ``torch.uint8`` ("# no tensor parallel, just replicated"); v1/attention/backends/mla/flashmla_sparse.py:
    "each token's KV cache is 656 Bytes" (512 fp8 + 4 float32 scales + 64 bf16)."""
    m = metrics_of(config("GLM-5.1"), kv_dtype="fp8")
    r = served(m, tp=8)
    layers = 78
    assert r.pool.engine_bytes_per_token == layers * (656 + 128 + 128 // 128 * 4)
    # one group: every page is full attention (kv_cache_interface.py UniformTypeKVCacheSpecs)
    assert len(r.pool.groups) == 1 and r.pool.bytes_per_block == 64 * layers * (656 + 132)


# -- a sliding / full hybrid --------------------------------------------------------------------------

# transformers' GptOssConfig defaults (the 120B layout), BF16 experts for the arithmetic
GPT_OSS = {
    "model_type": "gpt_oss",
    "architectures": ["GptOssForCausalLM"],
    "num_hidden_layers": 36,
    "hidden_size": 2880,
    "intermediate_size": 2880,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "head_dim": 64,
    "sliding_window": 128,
    "layer_types": ["sliding_attention", "full_attention"] * 18,
    "num_local_experts": 128,
    "num_experts_per_tok": 4,
    "vocab_size": 201_088,
    "max_position_embeddings": 131_072,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}


def test_sliding_window_pages_are_the_window_plus_a_block_for_the_tokens_in_flight():
    """v1/kv_cache_interface.py SlidingWindowSpec.max_admission_blocks_per_request: ``num_tokens =
    min(self.sliding_window - 1 + self.extra_retained_tokens + max_in_flight_tokens, max_model_len)`` then
    ``return cdiv(num_tokens, self.block_size) + 1``; config/vllm.py max_in_flight_tokens:
    ``self.max_concurrent_batches * self.scheduler_config.max_num_batched_tokens`` (2 batches with async
    scheduling); core/kv_cache_planning.py _get_kv_cache_groups_uniform_page_size: "we can use the "1" in the
    n:1 pattern as the group size"."""
    r = served(metrics_of(GPT_OSS), tp=8, gpu_memory=80 * GB)
    per_layer = 2 * 64 * max(1, 8 // 8) * 2  # K and V, 1 KV head a rank, bf16
    assert r.kv_bytes_per_token_per_rank == 18 * per_layer == 4_608  # the full layers
    assert r.kv_window_bytes_per_token_per_rank == 18 * per_layer  # the windows, until full
    p = r.pool
    page = 16 * per_layer
    assert [g.kind for g in p.groups] == ["sliding", "full"] and p.bytes_per_block == 18 * page
    in_flight = 2 * 8192
    sliding = math.ceil(min(128 - 1 + in_flight, 131_072) / 16) + 1
    assert sliding == 1033 and p.groups[0].pages_per_sequence == sliding
    assert p.pages_per_sequence == 131_072 // 16 + sliding
    assert p.engine_bytes_per_token == 18 * page // 16 == 4_608
    assert p.fixed_bytes_per_sequence == sliding * 18 * page
    blocks = (BUDGET_80GB - r.weight_bytes_per_rank) // (18 * page)
    assert p.tokens_that_fit == int(blocks / (8192 + sliding) * 131_072)
    # fewer tokens in flight, fewer window pages: --max-num-batched-tokens 2048
    small = served(metrics_of(GPT_OSS), tp=8, max_num_batched_tokens=2048).pool
    assert small.groups[0].pages_per_sequence == math.ceil((127 + 4096) / 16) + 1


# -- a linear-attention hybrid ------------------------------------------------------------------------

# transformers' Qwen3NextConfig defaults (the 80B-A3B layout): 36 Gated DeltaNet layers, 12 full attention
QWEN3_NEXT = {
    "model_type": "qwen3_next",
    "architectures": ["Qwen3NextForCausalLM"],
    "num_hidden_layers": 48,
    "hidden_size": 2048,
    "intermediate_size": 5120,
    "num_attention_heads": 16,
    "num_key_value_heads": 2,
    "head_dim": 256,
    "linear_num_value_heads": 32,
    "linear_num_key_heads": 16,
    "linear_key_head_dim": 128,
    "linear_value_head_dim": 128,
    "linear_conv_kernel_dim": 4,
    "layer_types": (["linear_attention"] * 3 + ["full_attention"]) * 12,
    "num_experts": 512,
    "num_experts_per_tok": 10,
    "moe_intermediate_size": 512,
    "shared_expert_intermediate_size": 512,
    "decoder_sparse_step": 1,
    "vocab_size": 151_936,
    "max_position_embeddings": 262_144,
    "torch_dtype": "bfloat16",
}


def test_linear_attention_state_per_rank_and_its_fixed_pages():
    """model_executor/layers/mamba/mamba_utils.py gated_delta_net_state_shape: ``conv_dim = head_k_dim *
    num_k_heads * 2 + head_v_dim * num_v_heads``, ``divide(conv_dim, tp_world_size)`` by ``conv_kernel_size -
    1``, and ``(divide(num_v_heads, tp_world_size), head_v_dim, head_k_dim)``; platforms/interface.py
    _align_hybrid_block_size: ``attn_block_size = kernel_block_alignment_size * cdiv(mamba_page_size,
    kernel_block_alignment_size * attn_page_size_1_token)`` with, in align mode, ``kernel_block_alignment_size =
    lcm(kernel_block_alignment_size, get_mamba_prefill_checkpoint_alignment(vllm_config) or 1)``;
    kv_cache_interface.py MambaSpec max_memory_usage_bytes in "align" mode: ``self.page_size_bytes * (2 +
    self.num_speculative_blocks + self.num_prefill_checkpoint_blocks)``."""
    tp = 8
    r = served(metrics_of(QWEN3_NEXT), tp=tp, gpu_memory=80 * GB)
    conv = (4 - 1) * (128 * 16 * 2 + 128 * 32) // tp * 2
    ssm = 32 // tp * 128 * 128 * 2
    assert conv + ssm == 137_216
    assert r.state_bytes_per_sequence_per_rank == 36 * (conv + ssm)
    attn_1 = 2 * 256 * max(1, 2 // tp) * 2  # K and V of the one (replicated) KV head a rank
    assert r.kv_bytes_per_token_per_rank == 12 * attn_1
    p = r.pool
    # align mode (prefix caching): FlashInfer's GDN prefill checkpoints every 64 tokens
    # (gdn_attn.py ``FLASHINFER_GDN_CHECKPOINT_ALIGNMENT = 64``), so the block is a multiple of 64
    block = 64 * math.ceil((conv + ssm) / (64 * attn_1))
    assert block == 192 == p.block_size
    page = block * attn_1  # the state page padded to it
    assert len(p.groups) == 4 and p.bytes_per_block == 12 * page  # 12 full + 3 groups of 12 GDN layers
    pages = math.ceil(262_144 / block) + 3 * (2 + 1)  # 2 state pages and a prefill checkpoint a group
    assert p.pages_per_sequence == pages
    blocks = (BUDGET_80GB - r.weight_bytes_per_rank) // (12 * page)
    assert p.tokens_that_fit == int(blocks / pages * 262_144)
    none = served(metrics_of(QWEN3_NEXT), tp=tp, mamba_cache_mode="none").pool
    block = 16 * math.ceil((conv + ssm) / (16 * attn_1))  # FlashAttention's kernel blocks of 16
    assert none.block_size == block == 144
    assert none.pages_per_sequence == math.ceil(262_144 / block) + 3  # one state page a group
    with pytest.raises(ServingRefused, match="16 Gated DeltaNet key heads at --tp 32"):
        served(metrics_of({**QWEN3_NEXT, "num_attention_heads": 32}), tp=32)


def test_kda_state_per_rank_on_a_real_kimi_linear_config():
    """mamba_utils.py kda_state_shape: ``conv_dim = proj_size + 2 * proj_k_size`` over ``conv_kernel_size - 1``
    and ``(divide(num_heads, tp_world_size), head_dim, head_dim)``; kda_state_dtype: float32 for "auto"."""
    m = metrics_of(config("Kimi-K3"))
    heads, dim, kernel, tp = 96, 128, 4, 8
    kda_layers = sum(1 for x in m.layers if x.attention == "kda" and not x.mtp)
    per_layer = heads // tp * dim * dim * 4 + (kernel - 1) * 3 * heads * dim // tp * 2
    assert served(m, tp=tp).state_bytes_per_sequence_per_rank == kda_layers * per_layer


# -- an MoE under expert parallelism ------------------------------------------------------------------


def test_experts_split_by_tp_or_held_whole_under_ep():
    """model_executor/layers/fused_moe/config.py FusedMoEParallelConfig.make: with EP "each device owns a set
    of experts fully", ``ep_size = tp_size`` flattened across DP; fused_moe/expert_map_manager.py
    determine_expert_map: ``local_num_experts = base_experts + 1 if ep_rank < remainder else base_experts``."""
    m = metrics_of(config("Qwen3-30B-A3B"))
    layers, experts, h, inter, bf16 = 48, 128, 2048, 768, 2
    expert = 3 * inter * h * bf16
    tp4 = served(m, tp=4).stages[0].by_component["routed_experts"]
    assert tp4 == layers * experts * expert // 4
    ep8 = served(m, tp=4, ep=8)  # two data-parallel replicas of tp 4, experts over all 8 ranks
    assert ep8.options.dp == 2 and ep8.options.ranks == 8
    assert ep8.stages[0].by_component["routed_experts"] == layers * (experts // 8) * expert
    ep48 = served(m, tp=4, ep=48)  # 128 = 48 x 2 + 32: the first 32 ranks hold 3
    assert ep48.stages[0].by_component["routed_experts"] == layers * 3 * expert
    # attention stays split by tp within each replica: 32 q heads / 4, 4 KV heads / 4
    assert ep8.kv_bytes_per_token_per_rank == layers * 2 * 1 * 128 * 2
    assert ep8.weight_bytes_all_ranks > served(m, tp=1).weight_bytes_all_ranks  # replicas repeat attention
    with pytest.raises(ServingRefused, match="--ep must be --tp x a data-parallel size"):
        served(m, tp=4, ep=6)


# -- figure names, claims, baselines, diff -------------------------------------------------------------


def test_figure_names_carry_their_configuration():
    base, options = split_name("tokens_that_fit@tp8,ep16,80GiB")
    assert base == "tokens_that_fit" and (options.tp, options.ep, options.gpu_memory) == (8, 16, 80 * 2**30)
    assert options.spec("fit") == "tp8,ep16,80GiB" and options.spec("parallel") == "tp8,ep16"
    assert figure_unit("kv_bytes_per_token_per_rank@tp8") == "bytes" and figure_unit("kv_bytes@tp8") is None
    for bad in ("tokens_that_fit@tp8", "kv_bytes_per_token_per_rank@8", "weight_bytes_per_rank@tp8,tp4"):
        with pytest.raises(UsageError, match=r"tp|GPU memory|twice"):
            split_name(bad)


def model_commit(kv_heads: int):
    """A small Llama with real headers: 2 layers, 8 heads of 64, ``kv_heads`` KV heads, vocab 1,000."""
    from hubdiff.testing import CommitSpec

    h, inter, vocab, hd = 512, 1024, 1000, 64
    cfg = {
        "model_type": "llama",
        "architectures": ["LlamaForCausalLM"],
        "hidden_size": h,
        "intermediate_size": inter,
        "num_hidden_layers": 2,
        "num_attention_heads": 8,
        "num_key_value_heads": kv_heads,
        "head_dim": hd,
        "vocab_size": vocab,
        "max_position_embeddings": 4096,
        "torch_dtype": "bfloat16",
    }
    tensors = [("model.embed_tokens.weight", "BF16", (vocab, h)), ("lm_head.weight", "BF16", (vocab, h))]
    tensors.append(("model.norm.weight", "BF16", (h,)))
    for i in range(2):
        p = f"model.layers.{i}."
        tensors += [
            (p + "self_attn.q_proj.weight", "BF16", (8 * hd, h)),
            (p + "self_attn.k_proj.weight", "BF16", (kv_heads * hd, h)),
            (p + "self_attn.v_proj.weight", "BF16", (kv_heads * hd, h)),
            (p + "self_attn.o_proj.weight", "BF16", (h, 8 * hd)),
            (p + "mlp.gate_proj.weight", "BF16", (inter, h)),
            (p + "mlp.up_proj.weight", "BF16", (inter, h)),
            (p + "mlp.down_proj.weight", "BF16", (h, inter)),
            (p + "input_layernorm.weight", "BF16", (h,)),
            (p + "post_attention_layernorm.weight", "BF16", (h,)),
        ]
    return CommitSpec({"config.json": json.dumps(cfg).encode()}, tensors, title=f"{kv_heads} KV heads")


def small_model_at_tp2(kv_heads: int) -> tuple[int, int, int]:
    """(weights a rank, KV bytes a token a rank, tokens that fit in 1 GB) of model_commit at tp 2."""
    h, inter, hd, bf16 = 512, 1024, 64, 2
    kv_rank = max(1, kv_heads // 2)
    vocab_rows = 1024 // 2  # 1,000 rows padded to 1,024, split in two
    layer = (8 * hd * h // 2 + 2 * kv_rank * hd * h + h * 8 * hd // 2 + 3 * inter * h // 2 + 2 * h) * bf16
    weights = 2 * layer + 2 * vocab_rows * h * bf16 + h * bf16
    kv = 2 * 2 * kv_rank * hd * bf16  # 2 layers, K and V
    bytes_per_block = 16 * kv
    blocks = (math.ceil(GB * 0.92) - weights) // bytes_per_block
    return weights, kv, int(blocks / (4096 // 16) * 4096)


def test_baseline_claims_per_rank_figures_and_a_new_revision_breaks_them(hub, tmp_path):
    from hubdiff._baseline.record import init_repo, update_baseline
    from hubdiff._source import HubSettings, Sources, SourceSpec
    from hubdiff._source.cache import SnapshotCache
    from hubdiff.jobs import run_check
    from hubdiff.testing import RepoSpec

    hub.add(RepoSpec("org/m", [model_commit(2)]))
    sources = Sources(HubSettings(endpoint=hub.endpoint, retries=0), SnapshotCache(tmp_path / "c"))
    path = tmp_path / "fam.yaml"
    serving = [ServingOptions(tp=2, gpu_memory=GB)]
    init_repo(path, "fam", SourceSpec("hub", "org/m", "main"), sources, MetricsOptions(), serving)
    weights, kv, tokens = small_model_at_tp2(2)
    data = yaml.safe_load(path.read_text())
    recorded = data["repos"]["org/m"]["metrics"]
    assert recorded["weight_bytes_per_rank@tp2"] == weights
    assert recorded["kv_bytes_per_token_per_rank@tp2"] == kv == 512
    assert recorded["tokens_that_fit@tp2,1GB"] == tokens
    data["repos"]["org/m"]["claims"] = {
        "kv_bytes_per_token_per_rank@tp2": 512,
        "kv_bytes_per_token_per_rank@tp8": 512,  # not recorded: measured from its name alone
        "tokens_that_fit@tp2,1GB": {"value": tokens, "tolerance": "1%"},
    }
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    report = run_check([path], sources)
    assert report.exit_code == 0 and all(c.holds for c in report.results[0].claims)

    hub.push("org/m", model_commit(4))  # twice the KV heads: twice the cache on each of 2 ranks
    report = run_check([path], sources)
    result = report.results[0]
    broken = {c.claim.name: c.measured for c in result.broken_claims}
    _, kv4, tokens4 = small_model_at_tp2(4)
    assert broken == {"kv_bytes_per_token_per_rank@tp2": kv4, "tokens_that_fit@tp2,1GB": tokens4}
    assert kv4 == 2 * kv  # at tp 8 one (replicated) KV head a rank either way: that claim holds
    deltas = {d.name: (d.old, d.new, d.unit) for d in result.comparison.metrics}
    assert deltas["kv_bytes_per_token_per_rank@tp2"] == (kv, kv4, "bytes")
    assert deltas["tokens_that_fit@tp2,1GB"] == (tokens, tokens4, "count")

    update_baseline(path, sources)  # re-recorded: the figures it records or claims, measured again
    recorded = yaml.safe_load(path.read_text())["repos"]["org/m"]["metrics"]
    assert recorded["kv_bytes_per_token_per_rank@tp2"] == kv4
    assert recorded["tokens_that_fit@tp2,1GB"] == tokens4
    assert recorded["kv_bytes_per_token_per_rank@tp8"] == 512  # claimed, now recorded too


def test_a_claim_on_a_serving_figure_that_cannot_be_read_is_refused_with_its_line(tmp_path):
    from hubdiff._baseline import load_baseline
    from hubdiff.errors import BaselineError

    path = tmp_path / "fam.yaml"
    path.write_text("family: fam\nrepos:\n  org/m:\n    claims:\n      tokens_that_fit@tp8: 1000\n")
    with pytest.raises(BaselineError, match=r"fam.yaml:5: .*needs the GPU memory in its name"):
        load_baseline(path)


def test_diff_shows_how_a_revision_changes_the_per_rank_figures(tmp_path):
    from hubdiff._source import HubSettings, Sources
    from hubdiff._source.cache import SnapshotCache
    from hubdiff.jobs import run_diff

    for name, kv in (("old", 8), ("new", 4)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.json").write_text(
            json.dumps({**config("Llama-3.1-8B"), "num_key_value_heads": kv})
        )
    sources = Sources(HubSettings(), SnapshotCache(tmp_path / "c"), offline=True)
    configurations = [ServingOptions(tp=tp, gpu_memory=80 * GB) for tp in (2, 8)]
    report = run_diff(str(tmp_path / "old"), str(tmp_path / "new"), sources, MetricsOptions(), configurations)
    deltas = {d.name: (d.old, d.new) for d in report.results[0].comparison.metrics}
    assert deltas["kv_bytes_per_token_per_rank@tp2"] == (32 * 2 * 4 * 128 * 2, 32 * 2 * 2 * 128 * 2)
    assert deltas["tokens_that_fit@tp2,80GB"][1] > deltas["tokens_that_fit@tp2,80GB"][0]
    # at tp 8 both revisions hold one KV head a rank (4 and 8 KV heads, 8 ranks): no per-rank KV change
    assert "kv_bytes_per_token_per_rank@tp8" not in deltas


def test_metrics_json_carries_the_serving_figures(tmp_path, capsys):
    from hubdiff.cli import main

    (tmp_path / "config.json").write_text(json.dumps(config("Llama-3.1-8B")))
    argv = ["metrics", str(tmp_path), "--config-only", "--offline", "--tp", "4,16", "--gpu-memory", "80GB"]
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [s["figures"]["kv_bytes_per_token_per_rank@tp" + str(s["tp"])] for s in data["serving"]] == [
        32_768,
        16_384,
    ]
    assert data["serving"][0]["pool"]["engine"] == "vLLM 0.33.0"
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "kv_heads: KV heads per rank = max(1, kv_heads // tp)" in text and "2,123,536" in text


def test_options_bounds():
    from hubdiff._metrics.serving_options import checked_options

    for bad in (
        ServingOptions(tp=0),
        ServingOptions(gpu_memory_utilization=1.5),
        replace(ServingOptions(), mamba_cache_mode="x"),
    ):
        with pytest.raises(UsageError):
            checked_options(bad)
