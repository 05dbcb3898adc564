"""The tensor diff across models works on patterns: renamed prefixes are found on name templates and the
tensors compared as products of index sets, never name by name.

Each case is checked against ``diff_by_name`` (every name built, split and compared: the reference)
and, where it says something new, against counts written out here.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from hubdiff import patterns
from hubdiff._compare import tensor_diff
from hubdiff._compare.tensor_diff import diff_tensors
from hubdiff.snapshot import Snapshot, Tensor
from hubdiff.testing import load_census
from hubdiff.testing.example import example_dir

from .conftest import DATA
from .tensor_reference import diff_by_name, template_stats
from .test_local_source import mixtral_tensors

Triple = tuple[str, str, tuple[int, ...]]


def snapshot_of(tensors: list[Triple]) -> Snapshot:
    return Snapshot.of_tensors(
        "x", "main", "", None, {}, None, (), {}, tensors=(Tensor(n, d, s, "") for n, d, s in tensors)
    )


def census(name: str) -> list[Triple]:
    return load_census((example_dir() / name / "census.tsv").read_text())


def forbid_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on, building the tensor list or splitting a name fails the test."""

    def refuse(*_: object) -> None:
        raise AssertionError("the diff went name by name")

    monkeypatch.setattr(Snapshot, "tensors", property(refuse))
    monkeypatch.setattr(patterns, "split_name", refuse)
    assert not hasattr(tensor_diff, "split_name")  # nothing of the diff's own could split one
    monkeypatch.setattr(patterns, "_split_all", refuse)


def test_the_founding_diff_never_builds_or_splits_a_name(monkeypatch):
    old_rows, new_rows = census("GLM-5.3"), census("GLM-5.3-Flash")
    old, new = snapshot_of(old_rows), snapshot_of(new_rows)
    reference = diff_by_name(old, new)
    forbid_names(monkeypatch)
    diff = diff_tensors(old, new)
    assert diff == reference
    # the rename, counted here from the names: every GLM-5.3 tensor under model. moves, and those whose
    # rest of the name GLM-5.3-Flash has under language_model.model. are found there
    under_old = {n.removeprefix("model.") for n, _, _ in old_rows if n.startswith("model.")}
    under_new = {n.removeprefix("language_model.model.") for n, _, _ in new_rows}
    assert [(r.old, r.new, r.count, r.matched) for r in diff.renames] == [
        ("model.", "language_model.model.", len(under_old), len(under_old & under_new))
    ]
    assert len(under_old) == 59_585 - 1  # all but lm_head.weight
    removed, added = sum(p.count for p in diff.removed), sum(p.count for p in diff.added)
    assert removed == len(old_rows) - len(under_old & under_new) and added == len(new_rows) - len(
        under_old & under_new
    )


def renamed(rows: list[Triple], rng: random.Random, old: str, new: str) -> list[Triple]:
    """Most names under ``old`` moved under ``new``; a few tensors dropped, reshaped or retyped; a
    vision tower added."""
    out = []
    for name, dtype, shape in rows:
        if name.startswith(old) and rng.random() < 0.97:
            name = new + name.removeprefix(old)
        roll = rng.random()
        if roll < 0.02:
            continue
        if roll < 0.03:
            shape = (*shape[:-1], shape[-1] + 1)
        elif roll < 0.035:
            dtype = "F8_E4M3" if dtype != "F8_E4M3" else "BF16"
        out.append((name, dtype, shape))
    return out + [(f"vision_tower.blocks.{i}.attn.weight", "BF16", (8, 8)) for i in range(rng.randrange(30))]


CHECKPOINTS = {
    "Qwen3-VL-30B-A3B-Instruct": lambda: load_census(
        (DATA / "Qwen3-VL-30B-A3B-Instruct/tensor_census.tsv").read_text()
    ),
    "Mixtral-8x7B-v0.1": mixtral_tensors,
}


@pytest.mark.parametrize("name", sorted(CHECKPOINTS))
@pytest.mark.parametrize("new_prefix", ["language_model.", "language_model.model.", "", "text."])
def test_renamed_prefixes_on_random_edits_equal_the_name_by_name_diff(name, new_prefix):
    rows = CHECKPOINTS[name]()
    rng = random.Random(f"{name}:{new_prefix}")
    edited = renamed(rows, rng, "model.", new_prefix)
    for a, b in ((rows, edited), (edited, rows)):
        old, new = snapshot_of(a), snapshot_of(b)
        diff = diff_tensors(old, new)
        assert diff == diff_by_name(old, new)
        assert diff.renames  # the rename was found, so the comparison went through it


def test_two_renames_never_compare_two_old_tensors_under_one_name():
    """``x.model.layers.{0-3}.w`` would move to the names ``model.layers.{0-3}.w`` already moved to:
    they stay removed under their own names, and no tensor goes uncounted."""
    old = [(f"model.layers.{i}.w", "BF16", (2,)) for i in range(8)]
    old += [(f"x.model.layers.{i}.w", "BF16", (2,)) for i in (0, 1, 2, 3, 8, 9)]
    new = [(f"lm.model.layers.{i}.w", "BF16", (2,)) for i in range(12)]
    a, b = snapshot_of(old), snapshot_of(new)
    diff = diff_tensors(a, b)
    assert diff == diff_by_name(a, b)
    assert [(r.old, r.new, r.count, r.matched) for r in diff.renames] == [
        ("model.", "lm.model.", 8, 8),
        ("x.", "lm.", 2, 2),
    ]
    assert [(p.name, p.count) for p in diff.removed] == [("x.model.layers.{0-3}.w", 4)]
    assert [(p.name, p.count) for p in diff.added] == [("lm.model.layers.{10-11}.w", 2)]
    common = 8 + 2
    assert (diff.old_count, diff.new_count) == (common + 4, common + 2)


def test_thousands_of_names_without_an_index_are_renamed_in_one_pass(monkeypatch):
    old = [(f"model.w_{k}.weight", "BF16", (k % 7 + 1,)) for k in range(3_000)]
    new = [(f"lm.model.w_{k}.weight", "BF16", (k % 7 + 1 + (k == 5),)) for k in range(3_000)]
    a, b = snapshot_of(old), snapshot_of(new)
    reference = diff_by_name(a, b)
    forbid_names(monkeypatch)
    diff = diff_tensors(a, b)
    assert diff == reference
    assert [(r.count, r.matched) for r in diff.renames] == [(3_000, 3_000)]
    assert [(c.pattern.name, c.old_shape, c.pattern.shape) for c in diff.changed] == [
        ("lm.model.w_5.weight", (6,), (7,))
    ]
    assert not diff.added and not diff.removed


def test_products_written_out_give_the_same_diff(monkeypatch):
    """Past MAX_BOXES or MAX_WORK the index tuples are compared instead: the same diff."""
    rows = CHECKPOINTS["Qwen3-VL-30B-A3B-Instruct"]()
    edited = renamed(rows, random.Random(3), "model.", "language_model.model.")
    old, new = snapshot_of(rows), snapshot_of(edited)
    expected = diff_tensors(old, new)
    monkeypatch.setattr(tensor_diff, "MAX_BOXES", 0)
    monkeypatch.setattr(tensor_diff, "MAX_WORK", 0)
    assert diff_tensors(old, new) == expected == diff_by_name(old, new)


def test_template_stats_count_each_name_once_whatever_the_number_of_templates():
    names = [f"a.{i}.b.{j}.c" for i in range(3) for j in range(4)] + [f"t_{k}.w" for k in range(2_000)]
    templates = {"a.*.b.*.c", "t_7.w", "t_1999.w", "absent.*"}
    assert template_stats(names, templates) == {
        "a.*.b.*.c": (12, {0, 1, 2}),
        "t_7.w": (1, set()),
        "t_1999.w": (1, set()),
        "absent.*": (0, set()),
    }


def test_the_example_censuses_are_where_the_tests_read_them():
    assert all((example_dir() / n / "census.tsv").is_file() for n in ("GLM-5.3", "GLM-5.3-Flash"))
    assert Path(DATA / "Qwen3-VL-30B-A3B-Instruct/tensor_census.tsv").is_file()
