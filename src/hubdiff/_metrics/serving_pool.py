"""The KV pool as vLLM's KV-cache manager lays it out: block size, page-size unification across layer
groups, sliding-window and Mamba pages, and the tokens that fit in the memory left after the weights."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING

from .serving_options import ServingOptions
from .serving_rules import _V, attention_backend
from .serving_shards import Cache, _main_layers, _stage_of

if TYPE_CHECKING:
    from .results import Metrics


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
