"""Comparison: two sides (snapshot + metrics), their config, tensor and metric differences.

deepdiff does the config comparison (imported only when the configs differ); figures are compared
directly, tensors as groups of index tuples shown as patterns (see tensor_diff).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from .._metrics.figures import FIGURE_UNITS
from .._metrics.results import Metrics
from ..snapshot import Snapshot
from ..values import same_value
from .config_diff import ConfigChange, diff_configs
from .tensor_diff import TensorDiff, diff_tensors


@dataclass(frozen=True)
class Side:
    label: str
    snapshot: Snapshot
    metrics: Metrics


@dataclass(frozen=True)
class MetricDelta:
    name: str
    old: Any
    new: Any
    unit: str

    @property
    def delta(self) -> float | None:
        if isinstance(self.old, (int, float)) and isinstance(self.new, (int, float)):
            return self.new - self.old
        return None

    @property
    def ratio(self) -> float | None:
        if isinstance(self.old, (int, float)) and isinstance(self.new, (int, float)) and self.new:
            return self.old / self.new
        return None


@dataclass(frozen=True)
class Comparison:
    old: Side
    new: Side
    config: tuple[ConfigChange, ...]
    tensors: TensorDiff
    metrics: tuple[MetricDelta, ...]
    figures_old: dict[str, Any] = field(default_factory=dict)
    figures_new: dict[str, Any] = field(default_factory=dict)

    def config_by(self, category: str) -> list[ConfigChange]:
        return [c for c in self.config if c.category == category]

    @property
    def same_commit(self) -> bool:
        return bool(self.old.snapshot.sha) and self.old.snapshot.sha == self.new.snapshot.sha

    @property
    def differs(self) -> bool:
        return bool(self.config or not self.tensors.empty or self.metrics)


def diff_figures(old: dict[str, Any], new: dict[str, Any]) -> list[MetricDelta]:
    """The figures whose value changed. A few dozen flat values: compared directly (deepdiff and the numpy
    it imports cost 0.4 s, more than the rest of a warm diff)."""
    names = sorted(
        n for n in old.keys() | new.keys() if n not in old or n not in new or not same_value(old[n], new[n])
    )
    return [MetricDelta(n, old.get(n), new.get(n), FIGURE_UNITS.get(n, "count")) for n in names]


# Keys that spell out, layer by layer, what other keys already imply; which census field each one drives.
LAYER_PATTERN_KEYS = {
    "mlp_layer_types": ("mlp",),
    "indexer_types": ("attention", "indexer"),
    "layer_types": ("attention", "window"),
    "hybrid_override_pattern": ("attention", "mlp"),
}


def _restated(change: ConfigChange, old: Metrics, new: Metrics) -> ConfigChange:
    """A layer-pattern key whose census is unchanged restates the other keys: cosmetic, said so."""
    fields = LAYER_PATTERN_KEYS.get(change.path.removeprefix("text_config."))
    if fields is None or change.category != "architectural":
        return change
    before = [tuple(getattr(x, f) for f in fields) for x in old.layers]
    after = [tuple(getattr(x, f) for f in fields) for x in new.layers]
    if before != after:
        return change
    return replace(change, category="cosmetic", rule="restates the layer pattern the other keys already give")


def compare(old: Side, new: Side, old_figures: dict[str, Any] | None = None) -> Comparison:
    """``old_figures`` replaces the old side's computed figures (a baseline's recorded ones)."""
    figures_old = old_figures if old_figures is not None else old.metrics.figures()
    figures_new = new.metrics.figures()
    config = [
        _restated(c, old.metrics, new.metrics) for c in diff_configs(old.snapshot.config, new.snapshot.config)
    ]
    order = {"architectural": 0, "behavioural": 1, "cosmetic": 2}
    config.sort(key=lambda c: (order[c.category], c.path))
    return Comparison(
        old=old,
        new=new,
        config=tuple(config),
        tensors=diff_tensors(old.snapshot, new.snapshot),
        metrics=tuple(diff_figures(figures_old, figures_new)),
        figures_old=figures_old,
        figures_new=figures_new,
    )
