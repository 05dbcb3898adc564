"""The pattern form gives what the tensor-by-tensor computation gives, on every checkpoint in tests/data.

Metrics count per pattern and layer, diffs compare groups of index tuples, the cache keeps patterns
instead of tensors. Each is checked here against the per-tensor path it replaced: ``count_parameters``
(kept as the reference), a name-by-name set difference, and the tensor list itself.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hubdiff._compare import tensor_diff
from hubdiff._compare.tensor_diff import _minus, diff_tensors
from hubdiff._metrics.components import _is_scale, classify, count_parameters, count_patterns
from hubdiff._metrics.config import ArchConfig
from hubdiff._metrics.estimate import synthesize
from hubdiff._metrics.layers import layer_census
from hubdiff.patterns import compress, patterns_of
from hubdiff.snapshot import Snapshot, Tensor
from hubdiff.testing import load_census
from hubdiff.testing.example import example_dir

from .conftest import DATA
from .tensor_reference import diff_by_name
from .test_local_source import mixtral_tensors

Triple = tuple[str, str, tuple[int, ...]]


def census_checkpoints() -> dict[str, tuple[dict, list[Triple]]]:
    """Every checkpoint with real tensor names: the censuses in tests/data, Mixtral, the GLM example."""
    out = {}
    for folder in [*sorted(DATA.iterdir()), *sorted(example_dir().iterdir())]:
        census = folder / ("tensor_census.tsv" if (folder / "tensor_census.tsv").is_file() else "census.tsv")
        if census.is_file():
            config = json.loads((folder / "config.json").read_text())
            out[folder.name] = (config, load_census(census.read_text()))
    out["Mixtral-8x7B-v0.1"] = (
        json.loads((DATA / "Mixtral-8x7B-v0.1/config.json").read_text()),
        mixtral_tensors(),
    )
    return out


CENSUS = census_checkpoints()
CONFIGS = sorted({p.parent for p in DATA.rglob("config.json")})


def assert_same_counts(tensors: list[Triple], cfg: ArchConfig) -> None:
    layers = layer_census(cfg)
    reference = count_parameters(tensors, cfg, layers)
    by_pattern = count_patterns(compress(tensors), cfg, layers)
    others = set(by_pattern.other_names)
    by_pattern.other_names = reference.other_names = []
    assert by_pattern == reference
    assert len(others) == min(20, len(others))  # up to 20 names, each really classified "other"
    by_layer = {x.index: x for x in layers}
    shapes = {n: s for n, _, s in tensors}
    for name in others:
        assert not _is_scale(name.split("."))
        assert classify(name, shapes[name], by_layer, cfg.num_layers)[0] == "other"


@pytest.mark.parametrize("name", sorted(CENSUS))
def test_counting_per_pattern_equals_counting_per_tensor_on_real_censuses(name):
    config, tensors = CENSUS[name]
    assert_same_counts(tensors, ArchConfig.read(config))


@pytest.mark.parametrize("folder", CONFIGS, ids=lambda p: p.name)
def test_counting_per_pattern_equals_counting_per_tensor_on_the_tensors_each_config_implies(folder):
    cfg = ArchConfig.read(json.loads((folder / "config.json").read_text()), use_transformers=False)
    tensors = synthesize(cfg, layer_census(cfg))
    if tensors:
        assert_same_counts(tensors, cfg)


def test_split_expert_numbers_and_layers_are_counted_per_layer():
    """An expert index inside the pattern becomes that layer's expert set, whatever order the names come in."""
    config, tensors = CENSUS["GLM-5.1"]
    cfg = ArchConfig.read(config)
    layers = layer_census(cfg)
    dropped = [t for t in tensors if not (".experts.7." in t[0] and ".layers.3." in t[0])]
    report = count_patterns(compress(dropped), cfg, layers)
    assert (report.experts_by_layer[3], report.experts_by_layer[4]) == (255, 256)
    assert report == count_parameters(dropped, cfg, layers)


# -- diffs ----------------------------------------------------------------------------------


def snapshot_of(tensors: list[Triple]) -> Snapshot:
    return Snapshot.of_tensors(
        "x", "main", "", None, {}, None, (), {}, tensors=(Tensor(*t, "") for t in tensors)
    )


def assert_same_diff(old: list[Triple], new: list[Triple]) -> None:
    """The diff per group of index tuples gives what the name-by-name diff (with its prefix-rename
    alignment, the reference) gives; the group path is taken unless names both vanished and appeared."""
    a, b = snapshot_of(old), snapshot_of(new)
    assert diff_tensors(a, b) == diff_by_name(a, b)


@pytest.mark.parametrize(
    ("old", "new"), [("GLM-5", "GLM-5.3"), ("GLM-5.3", "GLM-5.3-Flash"), ("GLM-5.1", "GLM-5.3")]
)
def test_diff_per_pattern_equals_diff_per_name_on_the_example(old, new):
    assert_same_diff(CENSUS[old][1], CENSUS[new][1])


@pytest.mark.parametrize("name", ["Mixtral-8x7B-v0.1", "Qwen3-VL-30B-A3B-Instruct"])
def test_diff_per_pattern_equals_diff_per_name_on_random_edits(name):
    rng = random.Random(name)
    old = CENSUS[name][1]
    new = []
    for n, d, s in old:
        roll = rng.random()
        if roll < 0.02:
            continue  # removed
        if roll < 0.03:
            new.append((n, d, (*s[:-1], s[-1] + 1)))  # reshaped
        elif roll < 0.035:
            new.append((n, "F8_E4M3" if d != "F8_E4M3" else "BF16", s))  # another dtype
        else:
            new.append((n, d, s))
    assert_same_diff(old, new)  # removals and reshapes only: the group path
    assert_same_diff(new, old)  # additions and reshapes only


index_tuples = st.sets(
    st.tuples(st.integers(0, 5), st.integers(0, 7), st.integers(0, 3)), min_size=1, max_size=120
)


@settings(max_examples=300, deadline=None)
@given(index_tuples, index_tuples)
def test_differences_of_products_equal_differences_of_their_tuples(a, b):
    """What ``_minus`` works out on products (never writing out a grid) is the tuples' own difference."""
    key = ("model.layers.", ".experts.", ".w.", ".weight"), "BF16", (4, 4)
    pa = patterns_of({key: a})
    pb = patterns_of({key: b})
    assert _minus(pa, pb) == a - b and _minus(pb, pa) == b - a
    assert _minus(pa, pa) == set()


def test_past_max_boxes_the_tuples_are_compared_with_the_same_result(monkeypatch):
    rng = random.Random(7)
    a = {(rng.randrange(6), rng.randrange(8), rng.randrange(4)) for _ in range(100)}
    b = {(rng.randrange(6), rng.randrange(8), rng.randrange(4)) for _ in range(100)}
    key = ("model.layers.", ".experts.", ".w.", ".weight"), "BF16", (4, 4)
    pa, pb = patterns_of({key: a}), patterns_of({key: b})
    asked, written_out = [], tensor_diff._tuples
    monkeypatch.setattr(tensor_diff, "MAX_BOXES", 0)
    monkeypatch.setattr(tensor_diff, "_tuples", lambda ps: asked.append(ps) or written_out(ps))
    assert _minus(pa, pb) == a - b and asked  # the fallback was taken


def test_a_removed_expert_is_worked_out_without_writing_out_the_grid(monkeypatch):
    full = {(layer, e) for layer in range(65) for e in range(1024)}
    edited = full - {(layer, 7) for layer in range(0, 65, 5)}
    key = ("model.layers.", ".mlp.experts.", ".up_proj.weight"), "BF16", (2048, 7168)
    (grid,) = patterns_of({key: full})
    edited_patterns = patterns_of({key: edited})
    monkeypatch.setattr(tensor_diff, "_tuples", None)  # the fallback would fail if it were taken
    assert _minus([grid], edited_patterns) == {(layer, 7) for layer in range(0, 65, 5)}
    assert _minus(edited_patterns, [grid]) == set()


# -- the stored forms ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["Mixtral-8x7B-v0.1", "GLM-5.3-Flash"])
def test_patterns_rebuild_the_tensor_list_with_its_files(name):
    tensors = CENSUS[name][1]
    rng = random.Random(name)
    rows = [Tensor(n, d, tuple(s), f"model-{rng.randint(1, 5):05d}.safetensors") for n, d, s in tensors]
    snapshot = Snapshot.of_tensors("x", "main", "", None, {"a": 1}, None, (), {}, tensors=reversed(rows))
    assert snapshot.tensors == tuple(sorted(rows))
    assert snapshot.tensor_count == len(rows)
    assert Snapshot.from_compact(json.loads(json.dumps(snapshot.compact()))) == snapshot
    assert Snapshot.from_json(json.loads(snapshot.dumps())) == snapshot
    assert sum(snapshot.parameters_by_dtype().values()) == sum(t.elements for t in rows)


def test_the_json_form_is_the_standard_librarys(tmp_path: Path):
    """--json is written by orjson where it can; what it cannot write (NaN in a config) is json's."""
    rows = [Tensor("a.0.w", "BF16", (2, 3), "m.safetensors"), Tensor("é\\u", "F32", (), "m.safetensors")]
    snapshot = Snapshot.of_tensors(
        "x", "main", "", None, {"nan": float("nan"), "big": 2**70}, None, (), {}, tensors=rows
    )
    text = snapshot.dumps()
    assert json.loads(text)["tensors"] == [["a.0.w", "BF16", [2, 3], 0], ["é\\u", "F32", [], 0]]
    assert '"config":{"big":1180591620717411303424,"nan":NaN}' in text
