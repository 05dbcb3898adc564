"""What a metrics run reports: the ``Metrics`` of one snapshot with its derived figures, the checks of
config against tensors, and each figure's unit. The snapshot cache rebuilds a ``Metrics`` from these
classes alone, so a warm run imports none of the code that computes them."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .components import ParamReport
from .config import ArchConfig
from .figures import COMPONENTS
from .kv import KVReport
from .layers import LayerInfo, attention_counts

METRICS_FORMAT = 1  # of the JSON ``hubdiff metrics --format json`` writes (docs/metrics.md)


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
