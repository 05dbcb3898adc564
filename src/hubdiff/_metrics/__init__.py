"""Metrics: what a snapshot means. Parameters by component, active parameters, the layer census, KV
cache and recurrent state, and the checks of config against tensors.

Everything is derived from config keys and tensor names and shapes; when there are no headers, from
the tensors the config implies (``estimate``), with that basis stated.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..patterns import format_index_set
from ..snapshot import Snapshot
from .components import COMPONENTS, ParamReport, count_parameters, count_patterns
from .config import ArchConfig, wants_transformers
from .kv import KVReport, kv_report
from .layers import LINEAR_KINDS, LayerInfo, attention_counts, layer_census

if TYPE_CHECKING:
    from .._source.cache import SnapshotCache

METRICS_FORMAT = 1

# The unit of every figure: "params" (written 25.17M, 0.56B), "bytes" (6.0 KB, 49.9 GB) or "count".
FIGURE_UNITS: dict[str, str] = {
    **{
        name: "params"
        for name in (
            "total_params",
            "main_params",
            "active_params",
            "active_params_without_embeddings",
            "active_params_without_embeddings_and_head",
            "routed_expert_params",
            "shared_expert_params",
        )
    },
    **{f"{component}_params": "params" for component in COMPONENTS},
    **{
        name: "bytes"
        for name in (
            "kv_bytes_per_token",
            "kv_window_bytes_per_token",
            "state_bytes_per_sequence",
            "kv_bytes_at_context",
            "quantization_scale_bytes",
        )
    },
    **{
        name: "count"
        for name in (
            "routed_experts_per_layer",
            "shared_experts_per_layer",
            "experts_per_token",
            "moe_layers",
            "layers",
            "mtp_layers",
            "attention_layers",
            "indexer_layers",
            "shared_indexer_layers",
            "layers_with_indexer_tensors",
            "context_tokens",
        )
    },
}


@dataclass(frozen=True)
class MetricsOptions:
    profile: str = "naive"
    kv_dtype: str | None = None  # default: the model dtype
    context: int | None = None  # default: max_position_embeddings
    count_mtp: bool = False
    indexer_pooling: str = "auto"  # "auto" (as index_kpool_compress says), "stored" or "scan"
    config_only: bool = False
    config_reader: str = "auto"  # "auto": transformers' configuration classes first; "keys": hubdiff's own
    witness: bool = False  # also build transformers' class on the meta device and compare (``witness``)


@dataclass(frozen=True)
class Check:
    """A disagreement between what the config says and what the tensors show."""

    subject: str
    config_value: str
    tensor_value: str

    def __str__(self) -> str:
        return f"{self.subject}: config says {self.config_value}, tensors show {self.tensor_value}"


@dataclass(frozen=True)
class Metrics:
    source: str
    basis: str  # "headers" or "config"
    cfg: ArchConfig
    params: ParamReport
    layers: tuple[LayerInfo, ...]
    kv: KVReport
    checks: tuple[Check, ...] = ()
    estimate: ParamReport | None = None  # config-only counts, when headers were read too
    assumptions: tuple[str, ...] = field(default=())
    unverified: tuple[str, ...] = field(default=())  # why these figures may be wrong; empty when sure

    # -- derived figures ----------------------------------------------------------------------
    @property
    def top_k(self) -> int:
        return self.cfg.experts_per_token or 0

    def _component(self, name: str) -> int:
        return self.params.by_component.get(name, 0)

    @property
    def main_params(self) -> int:
        """Everything but the MTP layers."""
        return self.params.total - self._component("mtp")

    @property
    def routed_expert_params(self) -> int:
        """Parameters of one routed expert (the most common value across MoE layers)."""
        per = Counter(
            self.params.routed_by_layer[layer] // n
            for layer, n in self.params.experts_by_layer.items()
            if n and layer in self.params.routed_by_layer
        )
        return per.most_common(1)[0][0] if per else 0

    @property
    def active_params(self) -> int:
        """Per text token: all but the vision side, MTP and the routed experts not chosen (top-k per MoE layer)."""
        p, top_k = self.params, self.top_k  # top_k reads the config: once, not once a layer
        active = p.total - sum(self._component(c) for c in ("vision_tower", "multimodal_projector", "mtp"))
        for layer, routed in p.routed_by_layer.items():
            n = p.experts_by_layer.get(layer) or 0
            if n:
                active -= routed - min(top_k, n) * (routed // n)
        return active

    @property
    def active_without_embeddings(self) -> int:
        return self.active_params - self._component("embeddings")

    @property
    def active_without_embeddings_and_head(self) -> int:
        return self.active_without_embeddings - self._component("output_head")

    @property
    def experts(self) -> dict[str, int]:
        p = self.params
        moe_layers = len(p.routed_by_layer)
        counts = Counter(p.experts_by_layer.values())
        shared = self._component("shared_experts")
        n_shared = self.cfg.num_shared_experts or (1 if shared else 0)
        return {
            "moe_layers": moe_layers,
            "routed_per_layer": counts.most_common(1)[0][0] if counts else 0,
            "params_per_routed_expert": self.routed_expert_params,
            "experts_per_token": self.top_k,
            "shared_per_layer": n_shared if shared else 0,
            "params_per_shared_expert": shared // (moe_layers * n_shared) if shared and moe_layers else 0,
        }

    def attention_layers(self) -> dict[str, int]:
        return attention_counts(list(self.layers))

    def indexer_summary(self) -> dict[str, int]:
        main = [x for x in self.layers if not x.mtp and x.attention == "dsa"]
        tensor_layers = self.params.layer_features.get("indexer", set())
        return {
            "own": sum(1 for x in main if x.indexer == "own"),
            "shared": sum(1 for x in main if x.indexer == "shared"),
            "layers_with_indexer_tensors": len(tensor_layers),
        }

    def figures(self) -> dict[str, Any]:
        """Every headline figure by the name claims and comparisons use (see FIGURE_UNITS)."""
        e, kv, idx = self.experts, self.kv, self.indexer_summary()
        out: dict[str, Any] = {
            "total_params": self.params.total,
            "main_params": self.main_params,
            "active_params": self.active_params,
            "active_params_without_embeddings": self.active_without_embeddings,
            "active_params_without_embeddings_and_head": self.active_without_embeddings_and_head,
            "routed_expert_params": e["params_per_routed_expert"],
            "shared_expert_params": e["params_per_shared_expert"],
            "routed_experts_per_layer": e["routed_per_layer"],
            "shared_experts_per_layer": e["shared_per_layer"],
            "experts_per_token": e["experts_per_token"],
            "moe_layers": e["moe_layers"],
            "layers": sum(1 for x in self.layers if not x.mtp),
            "mtp_layers": sum(1 for x in self.layers if x.mtp),
            "attention_layers": self.attention_layers(),
            "indexer_layers": idx["own"],
            "shared_indexer_layers": idx["shared"],
            "layers_with_indexer_tensors": idx["layers_with_indexer_tensors"],
            "kv_bytes_per_token": kv.bytes_per_token,
            "kv_window_bytes_per_token": kv.window_bytes_per_token,
            "state_bytes_per_sequence": kv.state_bytes_per_sequence,
            "kv_bytes_at_context": kv.bytes_at_context,
            "context_tokens": kv.context_tokens,
            "quantization_scale_bytes": self.params.scale_bytes,
        }
        for component in COMPONENTS:
            out[f"{component}_params"] = self.params.by_component.get(component, 0)
        return out

    def to_json(self) -> dict[str, Any]:
        kv = self.kv
        return {
            "format": METRICS_FORMAT,
            "source": self.source,
            "basis": self.basis,
            "params": {
                "total": self.params.total,
                "main": self.main_params,
                "active": self.active_params,
                "active_without_embeddings": self.active_without_embeddings,
                "active_without_embeddings_and_head": self.active_without_embeddings_and_head,
                "by_component": self.params.by_component,
                "by_dtype": self.params.by_dtype,
                "quantization_scales": {
                    "elements": self.params.scale_elements,
                    "bytes": self.params.scale_bytes,
                },
                "mtp_embedding_copies": self.params.mtp_embedding_copies,
                "experts": self.experts,
            },
            "layers": {
                "count": sum(1 for x in self.layers if not x.mtp),
                "mtp": sum(1 for x in self.layers if x.mtp),
                "attention": self.attention_layers(),
                "mlp": dict(sorted(Counter(x.mlp for x in self.layers if not x.mtp).items())),
                "indexer": self.indexer_summary(),
                "per_layer": [
                    {k: v for k, v in vars(x).items() if v is not None and v is not False}
                    for x in self.layers
                ],
            },
            "kv": {
                "profile": kv.profile,
                "kv_dtype": kv.kv_dtype,
                "bytes_per_token": kv.bytes_per_token,
                "window_bytes_per_token": kv.window_bytes_per_token,
                "state_bytes_per_sequence": kv.state_bytes_per_sequence,
                "context_tokens": kv.context_tokens,
                "bytes_at_context": kv.bytes_at_context,
                "groups": [
                    {
                        "name": g.name,
                        "layers": g.layers,
                        "bytes_per_layer": g.bytes_per_layer,
                        "bytes_per_token": g.bytes_per_token,
                        "formula": g.formula,
                        "window_tokens": g.window_tokens,
                    }
                    for g in kv.groups
                ],
                "states": [
                    {
                        "name": s.name,
                        "layers": s.layers,
                        "bytes_per_layer": s.bytes_per_layer,
                        "bytes_per_sequence": s.bytes_per_sequence,
                        "dtype": s.dtype,
                        "formula": s.formula,
                    }
                    for s in kv.states
                ],
                "assumptions": list(kv.assumptions),
            },
            "config_reader": self.cfg.reader,
            "assumptions": list(self.assumptions),
            "unverified": list(self.unverified),
            "checks": [
                {"subject": c.subject, "config": c.config_value, "tensors": c.tensor_value}
                for c in self.checks
            ],
        }


CONFIG_READERS = ("auto", "keys")


def prepare_transformers() -> None:
    """Import transformers' configuration classes now, e.g. in a thread while the Hub is read.

    ``ArchConfig.read`` imports them on first use anyway; this only moves the ~1.4 s earlier.
    """
    from .config import _transformers

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
    layers = layer_census(cfg, facts(cfg)[0].sublayers)
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
