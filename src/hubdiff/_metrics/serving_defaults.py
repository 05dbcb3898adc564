"""The vLLM release the serving figures follow and the defaults they take from it: all the serving flags'
arguments need (``cli._serving_flags``), so a command's parser imports nothing that computes."""

from __future__ import annotations

VLLM_VERSION = "0.33.0"
MAMBA_CACHE_MODES = ("align", "none")
DEFAULT_UTILIZATION = 0.92  # vllm/config/cache.py CacheConfig.gpu_memory_utilization
# The GPU class decides the attention backends vLLM picks (platforms/cuda.py _get_backend_priorities),
# and with them the MLA block size and the Gated DeltaNet prefill: sm90 (Hopper, H100/H200) or sm100
# (Blackwell, B200/GB200). sm90 unless --gpu-class says otherwise.
GPU_CLASSES = ("sm90", "sm100")
DEFAULT_GPU_CLASS = "sm90"
DEFAULT_BATCHED_TOKENS = 8192  # engine/arg_utils.py get_batch_defaults: vllm serve on a >= 70 GiB GPU
