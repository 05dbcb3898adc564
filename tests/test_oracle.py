"""hubdiff's config-only parameter estimate against transformers' model classes (``tests/oracle.py``).

For every model config in the corpus whose class transformers ships, the tensors transformers builds on
the meta device are counted with hubdiff's own classifier and compared with the config-only estimate,
component by component: the parameter count and the set of tensor shapes (up to the order of their
dimensions). Both sides go through the same ``count_parameters`` with the same ``ArchConfig`` and layer
census as ``compute_metrics``, and the oracle's tensors carry checkpoint names (see ``oracle.py``), so a
disagreement is a tensor the estimate misses or invents, or one it names differently from the checkpoint
so that the classifier places it elsewhere. The tests fail until the estimate is right; the only
exceptions are where transformers' class itself differs from what checkpoints store
(``ORACLE_EXCEPTIONS``), each with its reason. Models transformers has no class for are skipped and
listed, with the reason, in the coverage report printed at the end of the module.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import json
import math
import os
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from hubdiff._metrics.components import count_parameters
from hubdiff._metrics.compute import compute_metrics
from hubdiff._metrics.estimate import synthesize
from hubdiff._metrics.options import MetricsOptions
from hubdiff.snapshot import Snapshot

from .conftest import DATA
from .oracle import Inventory, Triple, cached_inventory

# -- where transformers' class is not what a checkpoint stores -----------------------------------------
# (model_type or "*", what, treatment, reason). Treatments: "skip" leaves component ``what`` out of the
# comparison on both sides; "count" compares component ``what`` by parameter count only, not shapes (a
# fused-vs-split layout that holds the same parameters); "drop" removes the oracle's tensors whose
# normalised name matches the regex ``what`` before counting. Nothing goes here because the estimate is
# wrong: only where transformers' class itself differs from the checkpoints.
ORACLE_EXCEPTIONS: tuple[tuple[str, str, str, str], ...] = (
    (
        "*",
        "mtp",
        "skip",
        "transformers never builds multi-token-prediction layers (it drops them on load); checkpoints "
        "store them after the main layers",
    ),
    (
        "kimi_k25",
        "vision_tower",
        "count",
        "checkpoints store each vision block's attention as one fused wqkv [3d, d]; transformers splits "
        "it into q_proj, k_proj, v_proj [d, d] on load",
    ),
)

MAX_LINES = 15


@dataclass(frozen=True)
class Model:
    """One corpus entry: where its config is and the id it is reported under."""

    id: str
    path: Path

    @property
    def config(self) -> dict[str, Any]:
        return json.loads(self.path.read_text())


def _model_id(folder: Path) -> str:
    """The Hub id from ``source.yaml`` when there is one (corpus entries), else the folder's path."""
    source = folder / "source.yaml"
    if source.is_file():
        import yaml

        with_id = yaml.load(source.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}
        if isinstance(with_id, dict):
            for key in ("hub_repo", "repo_id", "repo", "id", "model"):
                if isinstance(with_id.get(key), str):
                    return with_id[key]
    return str(folder.relative_to(DATA))


def corpus() -> list[Model]:
    """Every model config under tests/data and tests/data/corpus, in a stable order."""
    paths = sorted(DATA.glob("*/config.json")) + sorted((DATA / "corpus").glob("*/config.json"))
    models: list[Model] = []
    for path in paths:
        model_id = _model_id(path.parent)
        if any(m.id == model_id for m in models):  # the same repo twice: keep both, apart
            model_id = str(path.parent.relative_to(DATA))
        models.append(Model(model_id, path))
    return models


MODELS = corpus()


def _excepted(model_type: str) -> tuple[set[str], frozenset[str], list[re.Pattern[str]]]:
    """The exceptions for one model type: components skipped, compared by count only, tensors dropped."""
    skip: set[str] = set()
    count: set[str] = set()
    drop: list[re.Pattern[str]] = []
    for kind, what, treatment, _reason in ORACLE_EXCEPTIONS:
        if kind not in ("*", model_type):
            continue
        if treatment == "skip":
            skip.add(what)
        elif treatment == "count":
            count.add(what)
        else:
            drop.append(re.compile(what))
    return skip, frozenset(count), drop


_NUMBER = re.compile(r"(?<=\.)\d+(?=\.|$)|^\d+(?=\.)")
_PREFIX = re.compile(r"^(?:backbone\.|(?:model\.)?(?:language_model\.)?(?:model\.)?)")


def normalise(name: str) -> str:
    """Layer (and block, expert) numbers as ``{i}``, the text-model prefix stripped: one line a kind."""
    return _NUMBER.sub("{i}", _PREFIX.sub("", name))


@dataclass
class Side:
    """One side of the comparison: parameters and tensors (normalised name, shape) by component."""

    params: dict[str, int]
    tensors: dict[str, Counter[tuple[str, tuple[int, ...]]]]


def _kind_key(name: str, by_layer: dict[int, Any]) -> tuple[Any, ...]:
    """What a tensor's classification can depend on besides its normalised name and shape: the census
    entries (less their index) of the numbers in its name. Tensors alike in all three are classified
    once; an over-fine key only costs time."""
    out: list[Any] = []
    for segment in name.split("."):
        info = by_layer.get(int(segment)) if segment.isdigit() else None
        if info is not None:
            try:
                out.append(dataclasses.replace(info, index=-1))
            except (TypeError, ValueError):  # not a dataclass with an index: key on the entry itself
                out.append(info)
    return tuple(out)


def _side(tensors: list[Triple], cfg: Any, layers: list[Any], skip: set[str]) -> Side:
    """Count ``tensors`` with hubdiff's ``count_parameters``, and group them by the component it gives.

    Each tensor's component is what ``count_parameters`` makes of that tensor alone (only the public
    counting function, so the grouping follows the classifier whatever its internals become); a tensor
    it counts as a quantization scale, not a parameter, is grouped under "(scale)". Tensors alike in
    normalised name, shape and layer kind are asked about once (thousands of calls become hundreds).
    """
    report = count_parameters(tensors, cfg, layers)
    by_layer = {x.index: x for x in layers}
    seen: dict[tuple[Any, ...], str] = {}
    grouped: dict[str, Counter[tuple[str, tuple[int, ...]]]] = {}
    for name, dtype, shape in tensors:
        key = (normalise(name), shape, dtype, _kind_key(name, by_layer))
        if key not in seen:
            alone = count_parameters([(name, dtype, shape)], cfg, layers).by_component
            seen[key] = next(iter(alone), "(scale)")
        grouped.setdefault(seen[key], Counter())[(key[0], shape)] += 1
    params = {c: n for c, n in report.by_component.items() if c not in skip}
    return Side(params, {c: t for c, t in grouped.items() if c not in skip})


def _fmt(entry: tuple[str, tuple[int, ...]], n: int) -> str:
    name, shape = entry
    return f"{name} {list(shape)}" + (f" x{n}" if n > 1 else "")


def _layout(shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape with its dimensions sorted: ``[E, H, 2I]`` and ``[E, 2I, H]`` hold the same parameters."""
    return tuple(sorted(shape))


def _diff_lines(oracle: Counter, estimate: Counter) -> list[str]:
    """Tensors (normalised name, shape, how many) on one side only, the oracle's first.

    A tensor on each side with the same shape (up to the order of its dimensions), the same number of
    copies and a similar name (``attn_norm`` / ``input_layernorm``, ``router`` / ``gate``) is taken for
    the same tensor under another name or layout: it changes no count, so it is listed last, as a pair.
    """
    missing = oracle - estimate
    invented = estimate - oracle
    candidates = sorted(
        (
            (-difflib.SequenceMatcher(None, a[0], b[0]).ratio(), a, b)
            for a, n in missing.items()
            for b, m in invented.items()
            if n == m and _layout(a[1]) == _layout(b[1])
        ),
        key=lambda c: (c[0], c[1], c[2]),
    )
    pairs: list[str] = []
    for score, a, b in candidates:
        if -score < 0.6 or a not in missing or b not in invented:
            continue
        pairs.append(f"  same size, names differ: oracle {_fmt(a, missing[a])} ~ hubdiff {b[0]} {list(b[1])}")
        del missing[a], invented[b]
    lines = [f"  missing from hubdiff: {_fmt(e, n)}" for e, n in sorted(missing.items())]
    lines += [f"  invented by hubdiff: {_fmt(e, n)}" for e, n in sorted(invented.items())]
    return lines + sorted(pairs)


def _capped(lines: list[str], limit: int = MAX_LINES) -> list[str]:
    if len(lines) <= limit:
        return lines
    return [*lines[: limit - 1], f"  ... and {len(lines) - limit + 1} more"]


def compare(
    model_id: str, oracle: Side, estimate: Side, count_only: frozenset[str] = frozenset()
) -> list[tuple[str, str, list[str]]]:
    """Disagreements by component: (component, headline, every differing tensor); empty on agreement.

    Shapes are compared up to the order of their dimensions (a transposed expert tensor holds the same
    parameters); components in ``count_only`` are compared by parameter count alone.
    """
    out: list[tuple[str, str, list[str]]] = []
    for component in sorted(set(oracle.params) | set(estimate.params) | set(oracle.tensors)):
        a, b = oracle.params.get(component, 0), estimate.params.get(component, 0)
        ta = oracle.tensors.get(component, Counter())
        tb = estimate.tensors.get(component, Counter())
        if a == b and (component in count_only or {_layout(s) for _, s in ta} == {_layout(s) for _, s in tb}):
            continue
        headline = f"{model_id} / {component}: oracle {a:,} vs hubdiff {b:,} parameters ({b - a:+,})"
        if a == b:
            headline += ": same count, other tensor shapes (a fused/split or 2-D/3-D layout?)"
        out.append((component, headline, _diff_lines(ta, tb)))
    return out


@dataclass
class Result:
    """The comparison for one model, kept for the session report."""

    model: Model
    inventory: Inventory
    disagreements: list[tuple[str, str, list[str]]]

    @property
    def components(self) -> list[str]:
        return [component for component, _, _ in self.disagreements]

    def lines(self, limit: int | None = MAX_LINES) -> list[str]:
        """The failure message: each component's headline and its tensors, ``limit`` lines at most each."""
        out: list[str] = []
        for _, headline, tensors in self.disagreements:
            out += [headline, *(tensors if limit is None else _capped(tensors, limit))]
        return out


RESULTS: dict[str, Result] = {}


def check(model: Model) -> Result:
    config = model.config
    inv = cached_inventory(config)
    if inv.tensors is None:
        result = Result(model, inv, [])
        RESULTS[model.id] = result
        return result
    snapshot = Snapshot(model.id, "main", "", None, config, None, (), {}, ())
    metrics = compute_metrics(snapshot, MetricsOptions(config_only=True))
    cfg, layers = metrics.cfg, list(metrics.layers)
    skip, count_only, drop = _excepted(str(config.get("model_type", "")))
    tensors = [t for t in inv.tensors if not any(p.search(normalise(t[0])) for p in drop)]
    oracle = _side(tensors, cfg, layers, skip)
    estimate = _side(synthesize(cfg, layers), cfg, layers, skip)
    result = Result(model, inv, compare(model.id, oracle, estimate, count_only))
    RESULTS[model.id] = result
    return result


@pytest.fixture(scope="module", autouse=True)
def coverage_report(request: pytest.FixtureRequest) -> Iterator[None]:
    """At the end of the module: which corpus models the oracle covers, which it cannot, and why.

    Written to the terminal past output capture, so it shows in a plain ``pytest -q`` run; with
    HUBDIFF_ORACLE_REPORT=path, the report and every disagreement are also written to that file.
    """
    yield
    if not RESULTS:
        return
    lines = coverage_lines()
    target = os.environ.get("HUBDIFF_ORACLE_REPORT")
    if target:
        details = [line for r in RESULTS.values() if r.disagreements for line in [*r.lines(None), ""]]
        Path(target).write_text("\n".join([*lines, "", *details]) + "\n")
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is None:
        return
    with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
        reporter.write_line("")
        reporter.write_sep("-", "transformers oracle coverage")
        for line in lines:
            reporter.write_line(line)


def coverage_lines() -> list[str]:
    """One line a model checked: covered (class, seconds, components that disagree) or not, and why."""
    out = []
    for model in MODELS:
        r = RESULTS.get(model.id)
        if r is None:
            continue
        inv = r.inventory
        if inv.tensors is None:
            out.append(f"not covered  {model.id}: {inv.reason}")
            continue
        state = f"disagrees on {', '.join(r.components)}" if r.components else "agrees"
        out.append(f"covered      {model.id} ({inv.model_class}, {inv.seconds:.1f}s): {state}")
    return out


@pytest.mark.parametrize("model", MODELS, ids=[m.id for m in MODELS])
def test_estimate_matches_transformers(model: Model) -> None:
    """Agree with transformers' class, or say the figures are unverified; where transformers has no class
    (remote code, a model_type it does not know), hubdiff's own key readers are the ones that read it."""
    result = check(model)
    snapshot = Snapshot(model.id, "main", "", None, model.config, None, (), {}, ())
    metrics = compute_metrics(snapshot, MetricsOptions(config_only=True))
    if result.inventory.tensors is None:
        assert not metrics.cfg.via_transformers, (model.id, result.inventory.reason, metrics.cfg.reader)
        assert "read from config keys" in metrics.cfg.reader
        return
    if result.disagreements and not metrics.unverified:
        pytest.fail("\n".join(result.lines()), pytrace=False)


# -- the oracle itself -------------------------------------------------------------------------------
def test_oracle_counts_llama_31_8b_as_published() -> None:
    """The oracle is only useful if it is right: Llama-3.1-8B has 8,030,261,248 parameters (8.03B)."""
    from .oracle import meta_inventory

    tensors = meta_inventory(json.loads((DATA / "Llama-3.1-8B" / "config.json").read_text()))
    assert tensors is not None
    assert sum(math.prod(shape) for _, _, shape in tensors) == 8_030_261_248
    assert not any("rotary_emb" in name for name, _, _ in tensors)  # non-persistent buffers are left out


def test_oracle_lists_a_tied_embedding_once() -> None:
    """A tied head is one tensor with the embedding, as hubdiff counts it."""
    from .oracle import meta_inventory

    config = {
        "model_type": "llama",
        "architectures": ["LlamaForCausalLM"],
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": 1000,
        "tie_word_embeddings": True,
    }
    tensors = meta_inventory(config)
    assert tensors is not None
    names = [name for name, _, _ in tensors]
    assert "model.embed_tokens.weight" in names and "lm_head.weight" not in names


def test_oracle_declines_remote_code_and_unknown_types() -> None:
    """No class in transformers: None and a reason, never remote code."""
    from .oracle import cached_inventory

    remote = cached_inventory({"model_type": "kimi_k3", "auto_map": {"AutoConfig": "x.Y"}})
    assert remote.tensors is None and "remote code" in remote.reason
    assert cached_inventory({"hidden_size": 8}).tensors is None


@pytest.mark.parametrize("model", ["GLM-5.1", "Qwen3-VL-30B-A3B-Instruct"])
def test_oracle_matches_real_checkpoint_census(model: str) -> None:
    """Where real headers are at hand, the oracle counts what the checkpoint stores, component by
    component (MTP aside: transformers does not build it). This is what makes it an oracle."""
    from hubdiff.testing import load_census

    config = json.loads((DATA / model / "config.json").read_text())
    census = load_census((DATA / model / "tensor_census.tsv").read_text())
    tensors = cached_inventory(config).tensors
    assert tensors is not None
    snapshot = Snapshot(model, "main", "", None, config, None, (), {}, ())
    metrics = compute_metrics(snapshot, MetricsOptions(config_only=True))
    real = count_parameters(census, metrics.cfg, list(metrics.layers)).by_component
    oracle = count_parameters(tensors, metrics.cfg, list(metrics.layers)).by_component
    real.pop("mtp", None)
    assert oracle == real
