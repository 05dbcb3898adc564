"""How serving is asked for, apart from the rules that answer: ``ServingOptions``, and the figure names
that carry them (``tokens_that_fit@tp8,80GB``); the flags of ``metrics``, ``diff`` and ``baseline init``
that fill them are ``hubdiff.cli._serving_flags``, with the defaults of ``serving_defaults``.

A run without --tp, --ep, --pp or --gpu-memory, and a check whose baselines name no serving figure,
never imports ``serving`` (~7 ms of a warm run, which is otherwise little more than the interpreter
and one request).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from ..units import parse_quantity
from .figures import COMPONENTS
from .serving_defaults import (
    DEFAULT_BATCHED_TOKENS,
    DEFAULT_GPU_CLASS,
    DEFAULT_UTILIZATION,
    GPU_CLASSES,
    MAMBA_CACHE_MODES,
)

EP_MULTIPLE_RULE = (
    "the expert-parallel group is the tensor-parallel group flattened across data parallelism, "
    "so --ep must be --tp x a data-parallel size (fused_moe/config.py FusedMoEParallelConfig.make)"
)


class ServingRefused(UsageError):
    """A parallel configuration the engine refuses; the message names the rule (exit 2)."""


# -- options and figure names ----------------------------------------------------------------------

MAX_PARALLEL = 4096


@dataclass(frozen=True)
class ServingOptions:
    """How the model is served: the parallel sizes and the pool's settings (vLLM's defaults otherwise)."""

    tp: int = 1
    ep: int = 1  # 1: no expert parallelism; else the EP group size, tp x data-parallel size
    pp: int = 1
    gpu_memory: int | None = None  # bytes of one GPU
    gpu_memory_utilization: float = DEFAULT_UTILIZATION
    block_size: int | None = None  # None: the backend's (serving.attention_backend)
    gpu_class: str = DEFAULT_GPU_CLASS  # which backends vLLM picks (GPU_CLASSES)
    max_num_batched_tokens: int = DEFAULT_BATCHED_TOKENS
    mamba_cache_mode: str = "align"

    @property
    def dp(self) -> int:
        return self.ep // self.tp if self.ep > 1 else 1

    @property
    def ranks(self) -> int:
        return self.tp * self.pp * self.dp

    def spec(self, part: str = "fit") -> str:
        """The configuration as a figure name writes it: ``parallel`` (tp, ep, pp), ``pool`` (and the pool's
        settings that differ from vLLM's defaults) or ``fit`` (and the GPU memory)."""
        out = [f"tp{self.tp}"]
        if self.ep > 1:
            out.append(f"ep{self.ep}")
        if self.pp > 1:
            out.append(f"pp{self.pp}")
        if part in ("pool", "fit"):
            if self.block_size is not None:
                out.append(f"bs{self.block_size}")
            if self.gpu_class != DEFAULT_GPU_CLASS:
                out.append(self.gpu_class)
            if self.max_num_batched_tokens != DEFAULT_BATCHED_TOKENS:
                out.append(f"batched{self.max_num_batched_tokens}")
            if self.mamba_cache_mode != "align":
                out.append(f"mamba-{self.mamba_cache_mode}")
        if part == "fit":
            if self.gpu_memory is not None:
                out.append(memory_text(self.gpu_memory))
            if self.gpu_memory_utilization != DEFAULT_UTILIZATION:
                out.append(f"util{self.gpu_memory_utilization:g}")
        return ",".join(out)


def memory_text(n: int) -> str:
    """80,000,000,000 -> '80GB'; 85,899,345,920 -> '80GiB': the unit that writes it exactly."""
    for unit, scale in (("TB", 10**12), ("GB", 10**9), ("GiB", 2**30), ("MB", 10**6), ("MiB", 2**20)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
    return f"{n}B"


def parse_memory(text: str) -> int:
    """'80GB' -> 80,000,000,000 (powers of ten); '80GiB' -> 85,899,345,920; a bare number is bytes."""
    try:
        value, _ = parse_quantity(str(text).strip(), "bytes")
    except ValueError as exc:
        raise UsageError(f"--gpu-memory {text!r}: {exc}") from None
    if not 0 < value <= 2**50:
        raise UsageError(f"--gpu-memory {text!r}: must be a positive size of at most 1 PiB")
    return int(value)


def checked_options(options: ServingOptions) -> ServingOptions:
    """The options with every number in its range, or a UsageError naming the one that is not."""
    for name in ("tp", "ep", "pp"):
        value = getattr(options, name)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_PARALLEL:
            raise UsageError(f"--{name} {value!r}: must be a whole number from 1 to {MAX_PARALLEL}")
    if options.ep > 1 and options.ep % options.tp:
        raise ServingRefused(f"--ep {options.ep} with --tp {options.tp}: {EP_MULTIPLE_RULE}")
    u = options.gpu_memory_utilization
    if isinstance(u, bool) or not isinstance(u, (int, float)) or not 0 < u <= 1:
        raise UsageError(f"--gpu-memory-utilization {u!r}: must be above 0 and at most 1")
    if options.block_size is not None and not 1 <= options.block_size <= 1 << 16:
        raise UsageError(f"--block-size {options.block_size!r}: must be from 1 to 65,536 tokens")
    if not 1 <= options.max_num_batched_tokens <= 1 << 24:
        raise UsageError(
            f"--max-num-batched-tokens {options.max_num_batched_tokens!r}: must be from 1 to 2^24"
        )
    if options.gpu_class not in GPU_CLASSES:
        raise UsageError(f"--gpu-class {options.gpu_class!r}: must be one of {', '.join(GPU_CLASSES)}")
    if options.mamba_cache_mode not in MAMBA_CACHE_MODES:
        raise UsageError(f"--mamba-cache-mode {options.mamba_cache_mode!r}: must be align or none")
    return options


# Figure bases: unit, and which part of the configuration the figure depends on
_PARALLEL_FIGURES = {
    "weight_bytes_per_rank": "bytes",
    "weight_bytes_all_ranks": "bytes",
    "kv_heads_per_rank": "count",
    "kv_bytes_per_token_per_rank": "bytes",
    "kv_window_bytes_per_token_per_rank": "bytes",
    "kv_bytes_per_token_all_ranks": "bytes",
    "state_bytes_per_sequence_per_rank": "bytes",
    **{f"{c}_bytes_per_rank": "bytes" for c in COMPONENTS},
}
_POOL_FIGURES = {
    "kv_block_size": "count",
    "engine_kv_bytes_per_token_per_rank": "bytes",
    "engine_fixed_bytes_per_sequence_per_rank": "bytes",
}
_FIT_FIGURES = {"kv_pool_bytes_per_rank": "bytes", "tokens_that_fit": "count", "max_concurrency": "count"}
SERVING_FIGURES: dict[str, str] = {**_PARALLEL_FIGURES, **_POOL_FIGURES, **_FIT_FIGURES}

_TOKEN = re.compile(
    r"^(?:(?P<par>tp|ep|pp)(?P<n>\d{1,4})|bs(?P<bs>\d{1,5})|batched(?P<bt>\d{1,8})|mamba-(?P<mm>align|none)"
    r"|util(?P<u>0?\.\d{1,4}|1(?:\.0{0,4})?)|(?P<gpu>sm90|sm100)|(?P<mem>\d[\d.]{0,12}\s*[KMGT]i?B))$",
    re.IGNORECASE,
)


def split_name(name: str) -> tuple[str, ServingOptions] | None:
    """``tokens_that_fit@tp8,80GB`` -> ('tokens_that_fit', its options); None for a name without '@'.

    A UsageError says what in the name cannot be read."""
    base, at, spec = name.partition("@")
    if not at:
        return None
    if base not in SERVING_FIGURES:
        known = ", ".join(sorted(SERVING_FIGURES))
        raise UsageError(f"unknown serving figure {base[:60]!r} (known: {known})")
    values: dict[str, Any] = {}
    for raw in spec.split(","):
        token = raw.strip()
        m = _TOKEN.match(token)
        if not m or len(token) > 40:
            raise UsageError(
                f"{name[:80]!r}: {token[:40]!r} is not tpN, epN, ppN, a GPU memory (80GB, 80GiB), utilX, bsN, "
                "batchedN, mamba-align/none or a GPU class (sm90, sm100)"
            )
        key = (
            m["par"].lower()
            if m["par"]
            else "block_size"
            if m["bs"]
            else "max_num_batched_tokens"
            if m["bt"]
            else "mamba_cache_mode"
            if m["mm"]
            else "gpu_memory_utilization"
            if m["u"]
            else "gpu_class"
            if m["gpu"]
            else "gpu_memory"
        )
        if key in values:
            raise UsageError(f"{name[:80]!r}: {key} given twice")
        if m["par"]:
            values[key] = int(m["n"])
        elif m["bs"]:
            values[key] = int(m["bs"])
        elif m["bt"]:
            values[key] = int(m["bt"])
        elif m["mm"]:
            values[key] = m["mm"].lower()
        elif m["u"]:
            values[key] = float(m["u"])
        elif m["gpu"]:
            values[key] = m["gpu"].lower()
        else:
            values[key] = parse_memory(m["mem"])
    if "tp" not in values:
        raise UsageError(f"{name[:80]!r}: the tensor-parallel size is part of the name (e.g. @tp8)")
    if base in _FIT_FIGURES and "gpu_memory" not in values:
        raise UsageError(f"{name[:80]!r}: {base} needs the GPU memory in its name (e.g. {base}@tp8,80GB)")
    return base, checked_options(ServingOptions(**values))


def figure_unit(name: str) -> str | None:
    """The unit of a serving figure name (None: not a serving figure, or one that cannot be read)."""
    base = name.partition("@")[0]
    if "@" not in name or base not in SERVING_FIGURES:
        return None
    return SERVING_FIGURES[base]


def name_problem(name: str) -> str | None:
    """Why ``name`` is not a serving figure hubdiff can measure (None: it is one)."""
    try:
        split_name(name)
    except UsageError as exc:
        return str(exc)
    return None
