"""The config comparison walks the keys itself; deepdiff, which it replaced, is the reference here.

Every pair of real configs in tests/data and the embedded example, and generated JSON with the cases
deepdiff's ``ignore_numeric_type_changes`` decides in its own way (1 == 1.0 == true, numbers equal to 12
decimals, -0 == 0), give the same changed keys, and so the same report rows.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from deepdiff import DeepDiff
from hypothesis import given, settings
from hypothesis import strategies as st

from hubdiff._compare.config_diff import _changed_keys, diff_configs, flatten_text
from hubdiff.testing.example import example_dir

from .conftest import DATA


def deepdiff_keys(old: dict[str, Any], new: dict[str, Any]) -> dict[tuple[Any, ...], str]:
    """What ``diff_configs`` made of deepdiff's tree before the walk: key path -> kind, a path cut at
    its first list index (a list that differs anywhere is a change of its key)."""
    tree = DeepDiff(
        old, new, ignore_numeric_type_changes=True, verbose_level=2, threshold_to_diff_deeper=0
    ).tree
    grouped: dict[tuple[Any, ...], str] = {}
    for report, levels in tree.items():
        for level in levels:
            path = level.path(output_format="list")
            cut = next((i for i, part in enumerate(path) if isinstance(part, int)), len(path))
            key = tuple(path[:cut])
            if cut < len(path):
                grouped[key] = "changed"
            elif report.endswith("_added"):
                grouped.setdefault(key, "added")
            elif report.endswith("_removed"):
                grouped.setdefault(key, "removed")
            else:
                grouped.setdefault(key, "changed")
    return grouped


def load(paths: list[Path]) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(paths)]


def test_every_pair_of_real_configs_differs_where_deepdiff_says():
    releases = load([*DATA.glob("*/config.json"), *example_dir().glob("*/config.json")])
    corpus = load(list((DATA / "corpus").rglob("config.json")))
    assert len(releases) >= 8 and len(corpus) >= 50
    pairs = [*itertools.permutations(releases, 2), *itertools.pairwise(corpus)]
    for a, b in pairs:
        old, new = flatten_text(a), flatten_text(b)
        assert _changed_keys(old, new) == deepdiff_keys(old, new)
    assert all(
        deepdiff_keys(flatten_text(a), flatten_text(b)) for a, b in itertools.combinations(releases, 2)
    )


def test_the_founding_pair_reports_the_keys_deepdiff_found():
    old = json.loads((example_dir() / "GLM-5.3" / "config.json").read_text())
    new = json.loads((example_dir() / "GLM-5.3-Flash" / "config.json").read_text())
    changes = diff_configs(old, new)
    assert {tuple(c.path.split(".")) for c in changes} == set(
        deepdiff_keys(flatten_text(old), flatten_text(new))
    )
    kinds = {c.path: c.kind for c in changes}
    assert (
        kinds["hidden_size"] == "changed" and kinds["hc_mult"] == "added" and kinds["head_dim"] == "removed"
    )


# numbers deepdiff took as equal, whatever their type, and numbers it did not
EQUAL = [[0, 0.0, -0.0, False, 1e-13, -1e-13], [1, 1.0, True], [0.3, 0.1 + 0.2], [1e16, 10**16 + 1], [2.5]]
numbers = st.sampled_from([x for same in EQUAL for x in same])
leaves = st.one_of(st.none(), numbers, st.sampled_from(["", "a", "1", "true"]))
trees = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("abc"), inner, max_size=3)
    ),
    max_leaves=12,
)
configs = st.dictionaries(st.sampled_from(["x", "y", "z", "text_config"]), trees, max_size=4)


def variant(value: Any, rng: Any) -> Any:
    """The value with numbers swapped for ones deepdiff took as equal (mostly) or for others, and now
    and then a key dropped or added: two configs that differ in few places, and in subtle ones."""
    if isinstance(value, dict):
        out = {k: variant(v, rng) for k, v in value.items() if rng.random() > 0.1}
        if rng.random() < 0.1:
            out[rng.choice("abcxyz")] = rng.choice([None, 1, "a"])
        return out
    if isinstance(value, list):
        out = [variant(v, rng) for v in value]
        return [*out, 0] if rng.random() < 0.05 else out
    if isinstance(value, (int, float)):
        same = next(group for group in EQUAL if any(_identical(value, x) for x in group))
        return rng.choice(same) if rng.random() < 0.8 else rng.choice(rng.choice(EQUAL))
    return value


def _identical(a: Any, b: Any) -> bool:
    return type(a) is type(b) and repr(a) == repr(b)


@settings(max_examples=200, deadline=None)
@given(configs, configs, st.randoms(use_true_random=False))
def test_generated_configs_differ_where_deepdiff_says(old, other, rng):
    for a, b in ((old, variant(old, rng)), (old, other)):
        a, b = flatten_text(a), flatten_text(b)
        assert _changed_keys(a, b) == deepdiff_keys(a, b)


@pytest.mark.parametrize(
    ("old", "new", "changed"),
    [
        ({"a": 1}, {"a": 1.0}, {}),
        ({"a": True}, {"a": 1}, {}),
        ({"a": 0.3}, {"a": 0.1 + 0.2}, {}),  # equal to 12 decimals
        ({"a": 1e-13}, {"a": -0.0}, {}),
        ({"a": [1e16]}, {"a": [10**16 + 1]}, {}),
        ({"a": 1e-11}, {"a": 0}, {("a",): "changed"}),
        ({"a": False}, {"a": 1e-13}, {("a",): "changed"}),  # an old boolean: compared by value
        ({"a": 1e-13}, {"a": False}, {}),  # an old number: to 12 decimals
        ({"a": "1"}, {"a": 1}, {("a",): "changed"}),
        ({"a": None}, {"a": []}, {("a",): "changed"}),
        ({"a": {"b": 1}}, {"a": {"b": 2, "c": 3}}, {("a", "b"): "changed", ("a", "c"): "added"}),
        ({"a": [{"x": 1}]}, {"a": [{"x": 2}]}, {("a",): "changed"}),  # inside a list: the list's key
        ({"a": [1, 2]}, {"a": [2, 1]}, {("a",): "changed"}),
        ({"a": 1, "b": 2}, {"b": 2.0}, {("a",): "removed"}),
    ],
)
def test_what_counts_as_a_change(old, new, changed):
    assert _changed_keys(old, new) == changed == deepdiff_keys(old, new)


def test_a_number_too_large_to_format_is_compared_as_itself():
    """deepdiff raised OverflowError on an integer past a float's range; the walk compares it exactly."""
    assert _changed_keys({"a": 10**400}, {"a": 10**400}) == {}
    assert _changed_keys({"a": 10**400}, {"a": 10**400 + 1}) == {("a",): "changed"}
