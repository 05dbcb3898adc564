"""How metrics are computed from a snapshot (``compute_metrics``) and had from the cache when the same
content, options and versions were computed before (``cached_metrics``)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from ..patterns import format_index_set
from ..snapshot import Snapshot
from .components import ParamReport, count_parameters, count_patterns
from .config import ArchConfig, _transformers, wants_transformers
from .kv import kv_report
from .layers import LINEAR_KINDS, LayerInfo, layer_census
from .options import CONFIG_READERS, MetricsOptions
from .results import Check, Metrics

if TYPE_CHECKING:
    from .._source.cache import SnapshotCache


def prepare_transformers() -> None:
    """Import transformers' configuration classes now, e.g. in a thread while the Hub is read.

    ``ArchConfig.read`` imports them on first use anyway; this only moves the ~1.4 s earlier.
    """
    _transformers()


def needs_transformers(config: dict[str, Any], options: MetricsOptions) -> bool:
    """Whether computing metrics of ``config`` under ``options`` would import transformers."""
    return options.config_reader == "auto" and wants_transformers(config)


class EarlyConfigRead:
    """Read the config with transformers' classes while the headers of a Hub repo are read: in a child
    process (``config_child``), else by importing transformers (~1 s, ~40 MiB) in a thread.

    Given to ``Sources.open`` as ``on_config``, so called with the config as soon as the Hub has sent
    it; the child is given it only when the metrics will use it (a config with a model_type, read
    through transformers' classes). A warm run never calls it (its snapshot comes from the cache, and
    its metrics too). ``metrics``, ``check`` and ``diff`` read through it: without it, a cold check
    imported transformers after the read, 0.58 s of its 1.78 s.
    """

    def __init__(self, options: MetricsOptions) -> None:
        self.options = options
        self.thread: threading.Thread | None = None

    def __call__(self, config: dict[str, Any]) -> None:
        from .config_child import start

        if self.thread is None and needs_transformers(config, self.options):
            if start(config):  # read in a child, on another core: this process never imports it
                return
            self.thread = threading.Thread(
                target=prepare_transformers, name="import-transformers", daemon=True
            )
            self.thread.start()

    def join(self) -> None:
        if self.thread is not None:
            self.thread.join()


def compute_metrics(snapshot: Snapshot, options: MetricsOptions = MetricsOptions()) -> Metrics:
    from .estimate import (
        ASSUMPTIONS as ESTIMATE_ASSUMPTIONS,  # not imported by a run whose metrics are cached
    )
    from .estimate import facts, synthesize
    from .quantized import basis, stored_tensors, unread_exclusions
    from .unverified import architecture_assumption, unverified_reasons

    if options.config_reader not in CONFIG_READERS:
        raise ValueError(
            f"unknown config reader {options.config_reader!r} (known: {', '.join(CONFIG_READERS)})"
        )
    cfg = ArchConfig.read(snapshot.config, use_transformers=options.config_reader == "auto")
    layers = layer_census(cfg, facts(cfg)[0].sublayers, facts(cfg)[0].inkling > 0)
    kv = kv_report(
        cfg,
        layers,
        profile=options.profile,
        kv_dtype=options.kv_dtype,
        context=options.context,
        count_mtp=options.count_mtp,
        indexer_pooling=options.indexer_pooling,
    )
    # as the release stores it: a quantization_config's packed values and scales (``quantized``)
    estimate = count_parameters(stored_tensors(cfg, synthesize(cfg, layers), layers), cfg, layers)
    _ = (cfg.experts_per_token, cfg.num_shared_experts)  # read by the figures; known as read before the audit
    unverified = unverified_reasons(cfg, layers)
    if not kv.context_tokens and kv.groups:
        unverified += ("no context length in the config (max_position_embeddings): give --context",)
    assumptions: tuple[str, ...]
    if options.config_only or not snapshot.patterns:
        assumptions = (
            cfg.reader,
            "parameters estimated from config.json alone",
            architecture_assumption(cfg),
            *ESTIMATE_ASSUMPTIONS,
            "weights " + basis(cfg).removeprefix("estimated from config.json").lstrip(": "),
        )
        unread = unread_exclusions(cfg)
        if unread:
            unverified += (f"quantization_config ignore patterns not read: {', '.join(unread)[:200]}",)
        if options.witness:
            verdict = _witness(snapshot, cfg, layers, estimate)
            if verdict.agrees is False:  # two readings of one config that differ: neither is vouched for
                unverified += (verdict.line,)
            else:
                assumptions += (verdict.line,)
        return Metrics(
            snapshot.label, "config", cfg, estimate, tuple(layers), kv, (), None, assumptions, unverified
        )
    params = count_patterns(snapshot.patterns, cfg, layers)
    # an estimate hubdiff cannot vouch for is no yardstick: only the structural checks then
    checks = tuple(_checks(cfg, layers, params, estimate if not unverified else None))
    assumptions = (
        cfg.reader,
        "parameters counted from safetensors headers; quantization scales counted apart",
    )
    if options.witness:
        verdict = _witness(snapshot, cfg, layers, params)
        assumptions += (verdict.line,)
        if verdict.agrees is False:  # the config's model, as transformers builds it, is not these tensors
            checks += (
                Check(
                    "parameters of transformers' class for the config",
                    f"{verdict.theirs:,}",
                    f"{verdict.ours:,}",
                ),
            )
    return Metrics(
        snapshot.label, "headers", cfg, params, tuple(layers), kv, checks, estimate, assumptions, unverified
    )


def cached_metrics(cache: SnapshotCache, snapshot: Snapshot, options: MetricsOptions) -> Metrics:
    """``compute_metrics``, or what the cache holds for the same content, options and versions.

    A hit costs one small file read and no import of transformers (1.4 s of a cold run).
    """
    from .._source.cache import metrics_key

    key = metrics_key(snapshot, options)
    cached = cache.load_metrics(key, Metrics)
    if cached is not None:
        return cached
    metrics = compute_metrics(snapshot, options)
    cache.store_metrics(key, metrics, Metrics)
    return metrics


def _witness(snapshot: Snapshot, cfg: ArchConfig, layers: list[LayerInfo], counted: ParamReport) -> Any:
    """The run-time witness's verdict on ``counted`` (``witness.compare``)."""
    from .witness import compare, witness

    return compare(witness(snapshot.config), cfg, layers, counted)


def _layers_text(layers: set[int]) -> str:
    return f"{len(layers)} layers ({format_index_set(layers)})" if layers else "no layers"


def _checks(
    cfg: ArchConfig, layers: list[LayerInfo], real: ParamReport, estimate: ParamReport | None
) -> list[Check]:
    out: list[Check] = []
    main = [x for x in layers if not x.mtp]
    mtp = {x.index for x in layers if x.mtp}
    features = real.layer_features

    def compare(subject: str, expected: set[int], feature: str) -> None:
        seen = features.get(feature, set()) - mtp
        if expected != seen:
            out.append(Check(subject, _layers_text(expected), _layers_text(seen)))

    compare(  # DSA layers and DeepSeek-V4's sparse compressed ones
        "DSA indexer",
        {x.index for x in main if x.attention in ("dsa", "compressed") and x.indexer == "own"}
        | {x.index for x in main if x.attention in ("mha", "gqa", "mqa") and x.indexer == "own"},  # QSA
        "indexer",
    )
    compare(
        "linear attention",
        {x.index for x in main if x.attention in LINEAR_KINDS or x.parallel_ssm},
        "linear_attention",
    )
    if cfg.num_experts:
        compare("routed experts", {x.index for x in main if x.mlp == "moe"}, "experts")
        counts = {n for layer, n in real.experts_by_layer.items() if layer not in mtp}
        if counts and counts != {cfg.num_experts}:
            out.append(
                Check(
                    "routed experts per layer",
                    str(cfg.num_experts),
                    ", ".join(str(c) for c in sorted(counts)),
                )
            )
    if cfg.is_mla and real.kv_a_rows:
        expected = (cfg.number("kv_lora_rank", default=0) or 0) + (
            cfg.number("qk_rope_head_dim", default=0) or 0
        )
        from .estimate_facts import mla_latent_rows

        rows = mla_latent_rows(cfg, main) or {expected}  # Dots 3: each layer its own latent
        if real.kv_a_rows != rows:
            out.append(
                Check(
                    "kv_lora_rank + qk_rope_head_dim vs rows of kv_a_proj_with_mqa",
                    ", ".join(str(r) for r in sorted(rows)),
                    ", ".join(str(r) for r in sorted(real.kv_a_rows)),
                )
            )
    if estimate is None:
        return out
    for component in sorted(set(real.by_component) | set(estimate.by_component)):
        if component in ("mtp", "other"):
            continue
        a, b = real.by_component.get(component, 0), estimate.by_component.get(component, 0)
        if abs(a - b) > max(1_000_000, 0.005 * max(a, b)):
            out.append(Check(f"{component} parameters", f"{b:,}", f"{a:,}"))
    return out
