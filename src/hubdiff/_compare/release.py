"""A new repo in a family: which pinned sibling to compare it with, and whether it is only a quantized
or converted copy of one.

Both work on metrics (patterns, never tensors one by one) so that a release of 200,000 tensors costs no
more than its few dozen patterns. The sibling is the pinned repo nearest in architecture, not in name:
a publisher's naming says little ("-Flash", "-Air", "-0905"), the layer census and widths say what a
reader compares against.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._metrics.results import Metrics
from ..snapshot import Snapshot
from ..units import human_count

# Config keys a quantized or re-saved copy changes without changing the model.
STORAGE_KEYS = frozenset(
    {
        "quantization_config",
        "compression_config",
        "torch_dtype",
        "dtype",
        "transformers_version",
        "_name_or_path",
    }
)


@dataclass(frozen=True)
class Sibling:
    repo: str
    why: str


@dataclass(frozen=True)
class Variant:
    """The new repo has the sibling's architecture and parameters: ``kind`` is "quantized" (fewer bytes
    in other dtypes, or scale tensors), "converted" (other dtypes without scales, other names or
    shards) or "same layout" (every tensor's name, dtype and shape equal: a fine-tune, a re-upload or
    a copy; only headers are read, so which cannot be told)."""

    kind: str
    of: str
    old_bytes: int  # tensor data, as stored
    new_bytes: int
    old_scale_bytes: int
    new_scale_bytes: int
    old_dtypes: dict[str, int]  # stored elements per dtype
    new_dtypes: dict[str, int]


def distance(old: Metrics, new: Metrics) -> tuple[float, str]:
    """How far apart two models are in architecture, and why, in words: the layer census (the share of
    layers whose attention, indexer or MLP kind differs), plus hidden size and parameters (each as
    |ln ratio|, when both are positive), plus 1 for another model type."""
    old_layers = [(x.attention, x.indexer, x.mlp) for x in old.layers if not x.mtp]
    new_layers = [(x.attention, x.indexer, x.mlp) for x in new.layers if not x.mtp]
    length = max(len(old_layers), len(new_layers), 1)
    differing = sum(a != b for a, b in zip(old_layers, new_layers)) + abs(len(old_layers) - len(new_layers))
    hidden = [m.cfg.hidden_size or 0 for m in (old, new)]
    params = [m.main_params for m in (old, new)]
    score = differing / length + sum(abs(math.log(a / b)) for a, b in (hidden, params) if a > 0 and b > 0)
    same_type = old.cfg.model_type == new.cfg.model_type
    score += 0 if same_type else 1
    why = [
        "same layer census" if not differing else f"{differing} of {length} layers differ in kind",
        f"hidden size {hidden[0]}" if hidden[0] == hidden[1] else f"hidden size {hidden[0]} vs {hidden[1]}",
        f"{human_count(params[0])} parameters both"
        if params[0] == params[1]
        else f"{human_count(params[0])} vs {human_count(params[1])} parameters",
    ]
    if not same_type:
        why.append(f"model type {old.cfg.model_type} vs {new.cfg.model_type}")
    return score, ", ".join(why)


def closest_sibling(
    new: Metrics, siblings: Sequence[tuple[str, Metrics]], reference: str | None
) -> Sibling | None:
    """The pinned repo to compare a new release with: the family's ``reference`` when it names one,
    else the nearest by ``distance`` (ties: the first in name order)."""
    if reference is not None:
        return Sibling(reference, "the family's reference")
    if not siblings:
        return None
    scored = [(distance(m, new), repo) for repo, m in siblings]
    (_, why), repo = min(scored, key=lambda r: (r[0][0], r[1]))  # ties: the first name
    return Sibling(repo, f"closest pinned sibling: {why}")


def variant_of(sibling: str, old: tuple[Snapshot, Metrics], new: tuple[Snapshot, Metrics]) -> Variant | None:
    """A Variant when ``new`` is ``sibling``'s model stored differently: the config equal but for
    storage keys, every parameter figure and the layer census equal. None when the model differs."""
    (old_snapshot, old_metrics), (new_snapshot, new_metrics) = old, new
    if _model_config(old_snapshot.config) != _model_config(new_snapshot.config):
        return None
    if old_metrics.unverified or new_metrics.unverified:
        return None  # "the same model" is a claim; figures that may be wrong cannot back it
    figures = [m.figures() for m in (old_metrics, new_metrics)]
    same = all(
        figures[0].get(k) == figures[1].get(k)
        for k in figures[0].keys() | figures[1].keys()
        if k.endswith("_params") or k in ("layers", "attention_layers", "routed_experts_per_layer")
    )
    if not same:
        return None
    old_dtypes, new_dtypes = old_snapshot.parameters_by_dtype(), new_snapshot.parameters_by_dtype()
    scales = old_metrics.params.scale_bytes, new_metrics.params.scale_bytes
    sizes = old_snapshot.tensor_bytes(), new_snapshot.tensor_bytes()
    if _layout(old_snapshot) == _layout(new_snapshot):
        kind = "same layout"
    elif scales[0] != scales[1] or (old_dtypes != new_dtypes and sizes[1] < sizes[0]):
        kind = "quantized"
    else:
        kind = "converted"
    return Variant(
        kind,
        sibling,
        *sizes,
        scales[0],
        scales[1],
        old_dtypes,
        new_dtypes,
    )


def _layout(snapshot: Snapshot) -> set[tuple[str, str, tuple[int, ...]]]:
    return {(p.name, p.dtype, p.shape) for p in snapshot.patterns}


def _model_config(config: dict[str, Any]) -> dict[str, Any]:
    """The config without what only says how it is stored, at the top and in nested sub-configs."""
    return {
        k: _model_config(v) if isinstance(v, dict) else v for k, v in config.items() if k not in STORAGE_KEYS
    }


@dataclass(frozen=True)
class HubCount:
    """The Hub's count of stored elements per dtype against hubdiff's, from the same headers."""

    hub: dict[str, int]
    ours: dict[str, int]

    @property
    def agrees(self) -> bool:
        return self.hub == self.ours

    @property
    def differing(self) -> list[str]:
        return sorted(d for d in self.hub.keys() | self.ours.keys() if self.hub.get(d) != self.ours.get(d))


def hub_count(snapshot: Snapshot) -> HubCount | None:
    """None when the Hub gave no count (a folder, the cache of an older hubdiff, or none computed)."""
    if snapshot.hub_parameters is None:
        return None
    return HubCount(dict(snapshot.hub_parameters), snapshot.parameters_by_dtype())
