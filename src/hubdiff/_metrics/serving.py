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

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..units import human_bytes
from .serving_options import ServingOptions, ServingRefused, memory_text, split_name
from .serving_pool import Pool, pool
from .serving_rules import _V, RULES
from .serving_shards import (
    Cache,
    StageWeights,
    _main_layers,
    _stage_of,
    caches,
    check,
    kv_per_rank,
    stage_weights,
)

if TYPE_CHECKING:
    from ..patterns import Pattern
    from .results import Metrics


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
    if any(x.attention_convs or x.cache_entries > 1 for x in main):  # the KV report counts them
        assumptions.append(
            "not in these figures: the short convolutions' state beside attention and the further cache "
            "entries of a layer run more than once a token (no engine's layout of them is modelled)"
        )
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
