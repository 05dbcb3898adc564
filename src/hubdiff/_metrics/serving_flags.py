"""The serving flags of ``metrics``, ``diff`` and ``baseline init``, apart from the rules that use them.

A run without --tp, --ep, --pp or --gpu-memory never imports ``serving`` (~7 ms of every warm run,
which is otherwise little more than the interpreter and one request).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import UsageError

if TYPE_CHECKING:
    from .serving import ServingOptions

VLLM_VERSION = "0.33.0"
MAMBA_CACHE_MODES = ("align", "none")
DEFAULT_UTILIZATION = 0.92  # vllm/config/cache.py CacheConfig.gpu_memory_utilization
DEFAULT_BATCHED_TOKENS = 8192  # engine/arg_utils.py get_batch_defaults: vllm serve on a >= 70 GiB GPU


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
        "--block-size", type=int, help="KV block size (default: the backend's, 16; 64 for MLA)"
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
    from dataclasses import replace

    from .serving import ServingOptions, checked_options, parse_memory

    base = ServingOptions(
        ep=args.ep,
        pp=args.pp,
        gpu_memory=parse_memory(memory) if memory is not None else None,
        gpu_memory_utilization=args.gpu_memory_utilization,
        block_size=args.block_size,
        max_num_batched_tokens=args.max_num_batched_tokens,
        mamba_cache_mode=args.mamba_cache_mode,
    )
    return [checked_options(replace(base, tp=tp)) for tp in dict.fromkeys(sizes)]
