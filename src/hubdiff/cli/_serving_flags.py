"""The serving flags of ``metrics``, ``diff`` and ``baseline init`` (argparse), and the
``ServingOptions`` they ask for."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .._metrics.serving_options import (
    DEFAULT_BATCHED_TOKENS,
    DEFAULT_GPU_CLASS,
    DEFAULT_UTILIZATION,
    GPU_CLASSES,
    MAMBA_CACHE_MODES,
    VLLM_VERSION,
    ServingOptions,
    checked_options,
    parse_memory,
)
from ..errors import UsageError


def add_arguments(parser: Any) -> None:
    """The serving flags of ``metrics``, ``diff`` and ``baseline init`` (an argparse parser)."""
    group = parser.add_argument_group(f"serving (per GPU, by vLLM {VLLM_VERSION}'s rules)")
    group.add_argument("--tp", help="tensor-parallel size, or several: 1,2,4,8 (serving figures per rank)")
    group.add_argument("--ep", type=int, default=1, help="expert-parallel size: --tp x a data-parallel size")
    group.add_argument("--pp", type=int, default=1, help="pipeline-parallel size (default 1)")
    group.add_argument("--gpu-memory", help="memory of one GPU for the tokens that fit: 80GB, 80GiB, 141GB")
    group.add_argument(
        "--gpu-memory-utilization",
        type=float,
        default=DEFAULT_UTILIZATION,
        help=f"share of it vLLM may use (default {DEFAULT_UTILIZATION}, vLLM's)",
    )
    group.add_argument(
        "--block-size",
        type=int,
        help="KV block size (default: the attention backend's for the GPU class: 16; MLA 16 on sm90, 32 on sm100, "
        "64 for FP8 or sparse MLA)",
    )
    group.add_argument(
        "--gpu-class",
        choices=GPU_CLASSES,
        default=DEFAULT_GPU_CLASS,
        help="GPU class, for the attention backends vLLM picks: sm90 (Hopper, the default) or sm100 (Blackwell)",
    )
    group.add_argument(
        "--max-num-batched-tokens",
        type=int,
        default=DEFAULT_BATCHED_TOKENS,
        help=f"tokens a batch schedules, for the in-flight pages of sliding windows (default {DEFAULT_BATCHED_TOKENS})",
    )
    group.add_argument(
        "--mamba-cache-mode",
        choices=MAMBA_CACHE_MODES,
        default="align",
        help="align: prefix caching on (vLLM's default for hybrids), 2 state pages a sequence; none: 1",
    )


def options_from_args(args: Any) -> list[ServingOptions]:
    """The serving configurations the flags ask for: one per --tp value; none without --tp / --gpu-memory."""
    tp_text = getattr(args, "tp", None)
    memory = getattr(args, "gpu_memory", None)
    if tp_text is None and memory is None and getattr(args, "ep", 1) == 1 and getattr(args, "pp", 1) == 1:
        return []
    sizes = []
    for part in str(tp_text or "1").split(","):
        if not part.strip().isdigit() or len(part.strip()) > 4:
            raise UsageError(f"--tp {tp_text!r}: a whole number, or several separated by commas (1,2,4,8)")
        sizes.append(int(part))
    if len(sizes) > 16:
        raise UsageError("--tp: at most 16 sizes at once")
    base = ServingOptions(
        ep=args.ep,
        pp=args.pp,
        gpu_memory=parse_memory(memory) if memory is not None else None,
        gpu_memory_utilization=args.gpu_memory_utilization,
        block_size=args.block_size,
        gpu_class=getattr(args, "gpu_class", DEFAULT_GPU_CLASS),
        max_num_batched_tokens=args.max_num_batched_tokens,
        mamba_cache_mode=args.mamba_cache_mode,
    )
    return [checked_options(replace(base, tp=tp)) for tp in dict.fromkeys(sizes)]
