"""The config comparison: deepdiff on the two whole configs, once they are not equal as JSON.

What counts as a change (numbers as numbers, 12 decimals, -0 == 0, a list that differs anywhere a
change of its key) is pinned by the table below; that no change is ever hidden, by an independent
walk on generated configs and by the shadowing class (a top-level key and its namesake in
``text_config``) end to end through ``diff`` and ``check``.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hubdiff._compare.config_diff import diff_configs
from hubdiff.testing import CommitSpec, RepoSpec
from hubdiff.testing.example import example_dir

from .conftest import DATA


def changed_keys(old: dict[str, Any], new: dict[str, Any]) -> dict[tuple[str, ...], str]:
    """Every path reported, a move as the two keys it stands for (removed where it was, added where it is)."""
    out: dict[tuple[str, ...], str] = {}
    for c in diff_configs(old, new):
        if c.kind == "moved":
            out[tuple(c.moved_from.split("."))] = "removed"
            out[tuple(c.path.split("."))] = "added"
        else:
            out[tuple(c.path.split("."))] = c.kind
    return out


def differing_paths(old: Any, new: Any, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], str]:
    """The oracle, for values compared exactly (no numbers of two types): every key whose value
    differs, followed through nested objects, a list a change of its key."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: dict[tuple[str, ...], str] = {}
        for key in old.keys() | new.keys():
            if key not in new:
                out.update(_whole((*path, key), old[key], "removed"))
            elif key not in old:
                out.update(_whole((*path, key), new[key], "added"))
            else:
                out.update(differing_paths(old[key], new[key], (*path, key)))
        return out
    return {} if json.dumps(old) == json.dumps(new) else {path: "changed"}


def _whole(path: tuple[str, ...], value: Any, kind: str) -> dict[tuple[str, ...], str]:
    """A key added or removed: a non-empty object is each of its keys, at every level."""
    if isinstance(value, dict) and value:
        out: dict[tuple[str, ...], str] = {}
        for key, item in value.items():
            out.update(_whole((*path, key), item, kind))
        return out
    return {path: kind}


def load(paths: list[Path]) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(paths)]


def test_every_pair_of_real_configs_differs_where_something_differs():
    """Real configs (dense, MoE, VLMs with text_config): each reported key's values differ, no pair
    that differs as JSON is reported as equal, and every nested key the walk sees differ is there."""
    releases = load([*DATA.glob("*/config.json"), *example_dir().glob("*/config.json")])
    corpus = load(list((DATA / "corpus").rglob("config.json")))
    assert len(releases) >= 8 and len(corpus) >= 50
    nested = 0
    for a, b in [*itertools.permutations(releases, 2), *itertools.pairwise(corpus)]:
        changes = diff_configs(a, b)
        assert changes and all(json.dumps(c.old) != json.dumps(c.new) or c.kind != "changed" for c in changes)
        reported = set(changed_keys(a, b))
        nested += sum(len(k) > 1 for k in reported)
        # exactly typed: a key whose values differ only as 1 vs 1.0 is the one thing the walk reports
        # and deepdiff (numbers as numbers) does not
        for key in differing_paths(a, b):
            if key not in reported:
                before = _at(a, key)
                after = _at(b, key)
                assert isinstance(before, (int, float)) and before == after, key
    assert nested > 0  # nested keys are reported under their own path


def _at(config: Any, key: tuple[str, ...]) -> Any:
    for part in key:
        config = config.get(part) if isinstance(config, dict) else None
    return config


def test_the_founding_pair_reports_every_key_that_differs():
    old = json.loads((example_dir() / "GLM-5.3" / "config.json").read_text())
    new = json.loads((example_dir() / "GLM-5.3-Flash" / "config.json").read_text())
    changes = diff_configs(old, new)
    assert set(changed_keys(old, new)) == set(differing_paths(old, new))
    # Flash nests its text model: a flat key that reappears in text_config is one row naming both
    # paths, value beside value; keys only one side has stay added or removed
    hidden = next(c for c in changes if c.path == "text_config.hidden_size")
    assert (hidden.kind, hidden.moved_from, hidden.old, hidden.new) == ("moved", "hidden_size", 6144, 4096)
    assert hidden.label == "hidden_size → text_config.hidden_size" and hidden.category == "architectural"
    assert hidden.deepdiff == (
        ("dictionary_item_removed", "root['hidden_size']"),
        ("dictionary_item_added", "root['text_config']"),
    )
    assert not any(c.path == "hidden_size" for c in changes)
    same = [c for c in changes if c.kind == "moved" and c.old == c.new]
    assert same and all(c.category == "cosmetic" for c in same)  # moved, value kept: read the same


def test_a_move_is_paired_only_where_it_is_the_one_candidate():
    flat = {"hidden_size": 8, "vocab_size": 10}
    nested = {"text_config": {"hidden_size": 16}, "vision_config": {"vocab_size": 10}, "vocab_size": 12}
    rows = {c.path: (c.kind, c.moved_from, c.old, c.new) for c in diff_configs(flat, nested)}
    assert rows == {
        "text_config.hidden_size": ("moved", "hidden_size", 8, 16),
        "vision_config.vocab_size": ("added", "", None, 10),  # vocab_size stayed: not a move
        "vocab_size": ("changed", "", 10, 12),
    }
    two = {"text_config": {"hidden_size": 8}, "vision_config": {"hidden_size": 8}}
    rows = {c.path: (c.kind, c.moved_from) for c in diff_configs(flat | {"vocab_size": 10}, two)}
    assert rows == {  # two places it could have gone: neither is called its new home
        "hidden_size": ("removed", ""),
        "vocab_size": ("removed", ""),
        "text_config.hidden_size": ("added", ""),
        "vision_config.hidden_size": ("added", ""),
    }
    back = {c.path: (c.kind, c.moved_from) for c in diff_configs({"text_config": {"hidden_size": 8}}, flat)}
    assert back["hidden_size"] == ("moved", "text_config.hidden_size")  # nested to flat as well


def test_equal_configs_are_not_compared_at_all():
    """The no-change path of a check: equal as JSON, and deepdiff is not even imported."""
    code = (
        "import sys, json\n"
        "from hubdiff._compare.config_diff import diff_configs\n"
        "c = json.loads(open(sys.argv[1]).read())\n"
        "assert diff_configs(c, json.loads(json.dumps(c))) == []\n"
        "print('deepdiff' in sys.modules)\n"
    )
    config = example_dir() / "GLM-5.3" / "config.json"
    result = subprocess.run([sys.executable, "-c", code, str(config)], capture_output=True, text=True)
    assert result.stdout == "False\n", result.stderr


def test_configs_that_differ_compare_the_same_without_numpy_and_leave_it_importable():
    """In hubdiff's own process (its command line), deepdiff is imported with numpy and pydantic hidden when
    the process has neither (they cost a run 0.44 s, and a config holds no array or model): every change
    of the real pairs is what this process, which has numpy, finds; and numpy imports as usual afterwards.
    In another program's process nothing is hidden: deepdiff there sees the numpy the program has."""
    pairs = [
        (example_dir() / "GLM-5.3" / "config.json", example_dir() / "GLM-5.3-Flash" / "config.json"),
        (example_dir() / "GLM-5" / "config.json", example_dir() / "GLM-5.3" / "config.json"),
        *itertools.pairwise(sorted(DATA.glob("*/config.json"))[:12]),
    ]
    code = (
        "import sys, json, dataclasses\n"
        "import hubdiff._entry\n"
        "hubdiff._entry.OWNS_PROCESS = sys.argv[1] == 'own'  # as run() sets it for the command line\n"
        "from hubdiff._compare.config_diff import diff_configs\n"
        "pairs = json.loads(sys.stdin.read())\n"
        "out = [[dataclasses.asdict(c) for c in diff_configs(*p)] for p in pairs]\n"
        "print(json.dumps([out, [m in sys.modules for m in ('deepdiff', 'numpy', 'pydantic')]]))\n"
        "import numpy\n"
    )
    configs = [[json.loads(a.read_text()), json.loads(b.read_text())] for a, b in pairs]

    def run(process: str) -> list[Any]:
        done = subprocess.run(
            [sys.executable, "-c", code, process],
            input=json.dumps(configs),
            capture_output=True,
            text=True,
            check=True,
        )
        return json.loads(done.stdout)

    theirs, loaded = run("own")
    assert "numpy" in sys.modules and loaded == [True, False, False]
    assert run("hosted") == [theirs, [True, True, True]]
    ours = [[json.loads(json.dumps(dataclasses.asdict(c))) for c in diff_configs(*p)] for p in configs]
    assert theirs == ours and sum(map(len, ours)) > 40


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


@settings(max_examples=100, deadline=None, derandomize=True)
@given(configs, configs, st.randoms(use_true_random=False))
def test_generated_configs_never_lose_a_change(old, other, rng):
    """Whatever numbers deepdiff takes as equal, a key missing on one side, or a value that is not a
    number and differs, is always reported."""
    for a, b in ((old, variant(old, rng)), (old, other)):
        reported = changed_keys(a, b)
        for key, kind in differing_paths(a, b).items():
            if kind != "changed" or not _numbers_only(_at_any(a, key), _at_any(b, key)):
                assert key in reported or any(key[: len(k)] == k for k in reported), (key, reported)


def _numbers_only(a: Any, b: Any) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_numbers_only(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_numbers_only(a[k], b[k]) for k in a)
    numbers = (int, float)
    return (isinstance(a, numbers) and isinstance(b, numbers)) or json.dumps(a) == json.dumps(b)


def _at_any(config: Any, key: tuple[str, ...]) -> Any:
    for part in key:
        config = config.get(part) if isinstance(config, dict) else None
    return config


exact_leaves = st.one_of(st.none(), st.integers(-3, 3), st.sampled_from(["", "a", "b"]))
exact_trees = st.recursive(
    exact_leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("abc"), inner, max_size=3)
    ),
    max_leaves=12,
)
KEYS = ["hidden_size", "num_hidden_layers", "vocab_size", "x"]


@settings(max_examples=100, deadline=None, derandomize=True)
@given(
    st.dictionaries(st.sampled_from(KEYS), exact_trees, max_size=4),
    st.dictionaries(st.sampled_from(KEYS), exact_trees, max_size=4),
    st.dictionaries(st.sampled_from(KEYS), exact_trees, max_size=4),
    st.dictionaries(st.sampled_from(KEYS), exact_trees, max_size=4),
)
def test_no_key_is_shadowed_at_any_level(top_old, text_old, top_new, text_new):
    """The shape of the llava case: a top level and a ``text_config`` sharing key names, each side
    changed on its own. Exactly the keys that differ (exact values, so the oracle needs no numeric
    rule) are reported, each under its own path."""
    old = {**top_old, "text_config": text_old, "vision_config": {"hidden_size": 8, **text_old}}
    new = {**top_new, "text_config": text_new, "vision_config": {"hidden_size": 8, **text_new}}
    assert changed_keys(old, new) == differing_paths(old, new)


LLAVA_TEXT = {"hidden_size": 4096, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10}


def test_a_top_level_key_under_its_text_config_namesake_is_a_change():
    old = {"model_type": "llava", "hidden_size": 32, "text_config": LLAVA_TEXT}
    new = {**old, "hidden_size": 4096}
    assert [(c.path, c.kind, c.old, c.new, c.category) for c in diff_configs(old, new)] == [
        ("hidden_size", "changed", 32, 4096, "architectural")
    ]
    inner = {**old, "text_config": {**LLAVA_TEXT, "hidden_size": 32}}
    assert [c.path for c in diff_configs(old, inner)] == ["text_config.hidden_size"]


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
    assert changed_keys(old, new) == changed


def test_a_number_too_large_to_format_is_compared_as_itself():
    """deepdiff raises OverflowError formatting an integer past a float's range; it stands for itself."""
    assert changed_keys({"a": 10**400, "b": 1}, {"a": 10**400}) == {("b",): "removed"}
    assert changed_keys({"a": 10**400}, {"a": 10**400 + 1}) == {("a",): "changed"}


def hubdiff(*args: str, endpoint: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hubdiff", *args, "--cache-dir", str(cwd / "cache")],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_ENDPOINT": endpoint},
        cwd=cwd,
        timeout=300,
    )


def test_a_shadowed_change_fails_diff_and_check_end_to_end(hub, tmp_path):
    """llava-style: only the top-level hidden_size changes (32 -> 4096), text_config's stays 4096."""
    tensors = [(f"language_model.model.layers.{i}.mlp.up_proj.weight", "BF16", (8, 4)) for i in range(2)]
    old = {"model_type": "llava", "hidden_size": 32, "text_config": LLAVA_TEXT}
    first = CommitSpec({"config.json": json.dumps(old).encode()}, tensors)
    hub.add(RepoSpec("org/llava", [first]))
    init = hubdiff("baseline", "init", "org/llava", "--family", "v", endpoint=hub.endpoint, cwd=tmp_path)
    assert init.returncode == 0, init.stderr
    sha = hub.push(
        "org/llava", CommitSpec({"config.json": json.dumps({**old, "hidden_size": 4096}).encode()}, tensors)
    )
    pinned = next(
        line.split()[-1]
        for line in (tmp_path / "baselines" / "v.yaml").read_text().splitlines()
        if "sha" in line
    )
    diff = hubdiff(
        "diff",
        f"org/llava@{pinned.strip(chr(39) + chr(34))}",
        f"org/llava@{sha}",
        "--json",
        endpoint=hub.endpoint,
        cwd=tmp_path,
    )
    assert diff.returncode == 1, diff.stdout + diff.stderr
    (entry,) = json.loads(diff.stdout)["results"][0]["config"]
    assert (entry["path"], entry["old"], entry["new"]) == ("hidden_size", 32, 4096)
    assert entry["deepdiff"] == [{"type": "values_changed", "path": "root['hidden_size']"}]
    check = hubdiff("check", "baselines/v.yaml", "--format", "text", endpoint=hub.endpoint, cwd=tmp_path)
    assert check.returncode == 1, check.stdout + check.stderr
    assert "hidden_size" in check.stdout
