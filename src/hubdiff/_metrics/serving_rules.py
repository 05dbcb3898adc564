"""The engine's rules as read in vLLM's source (``RULES``: the key names each in figures, text and tests)
and the attention backend each GPU class and cache kind gets."""

from __future__ import annotations

from dataclasses import dataclass

from .serving_defaults import VLLM_VERSION
from .serving_options import EP_MULTIPLE_RULE

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
