"""The serving flags of ``metrics``, ``diff`` and ``baseline init`` (argparse); the ``ServingOptions``
they ask for are built by ``_cli_utils.serving_options_from``."""

from __future__ import annotations

from typing import Any

from .._metrics.serving_defaults import (
    DEFAULT_BATCHED_TOKENS,
    DEFAULT_GPU_CLASS,
    DEFAULT_UTILIZATION,
    GPU_CLASSES,
    MAMBA_CACHE_MODES,
    VLLM_VERSION,
)


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
