"""Hostile input is bounded in time and memory before any work: pattern grouping of any name shape,
config values that transformers' classes or hubdiff's readers expand or multiply, and local files
reached through symlinks. Each refusal is one line naming the file, exit 3."""

from __future__ import annotations

import gc
import json
import math
import os
import struct
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hubdiff._metrics.config import _transformers
from hubdiff._source.config_bounds import check_config
from hubdiff._source.layout import LayoutProblem
from hubdiff.cli import main
from hubdiff.patterns import Grouping, ShardGroups, compress, expand, patterns_of
from hubdiff.testing import CommitSpec, RepoSpec, write_checkpoint

from .test_fuzz import FUZZ, _peak_mb, assert_one_clean_outcome, run

# -- pattern grouping -----------------------------------------------------------------------------

_SEGMENTS = st.one_of(
    st.sampled_from(["model", "layers", "experts", "w", "", "0", "1", "7", "10", "007", "-1", "x1", "1x"]),
    # digits int() reads but ASCII does not, 18 and 19 digits, more than int() reads, format characters
    st.sampled_from(
        ["١", "٢٣", "²", "1²", "9" * 18, "1" + "0" * 18, "7" * 5000, "{", "}", "*", "\n", "\x00"]
    ),
    st.integers(0, 300).map(str),
    st.text(st.characters(categories=["Nd"]), min_size=1, max_size=3),  # digits of every script
    st.text(max_size=4),
)
_NAMES = st.lists(_SEGMENTS, min_size=1, max_size=6).map(".".join)
_ROWS = st.lists(
    st.tuples(_NAMES, st.sampled_from(["BF16", "F32"]), st.sampled_from([(), (2,), (2, 3)])),
    max_size=60,
    unique_by=lambda row: row[0],
)


@settings(max_examples=150, **FUZZ)
@given(_ROWS, st.integers(1, 3))
def test_grouped_names_expand_back_to_exactly_the_names(rows, shards):
    """Whatever the names' shape, the patterns stand for exactly the names, each with its dtype and
    shape; fed one shard at a time (as a cold read does) or all at once."""
    kind = {name: (dtype, shape) for name, dtype, shape in rows}
    patterns = compress(rows)
    assert sorted(expand(patterns)) == sorted(kind)
    assert all(kind[name] == (p.dtype, p.shape) for p in patterns for name in p.names())
    grouping = Grouping()
    for shard in range(shards):
        part = rows[shard::shards]
        grouped = ShardGroups.of([r[0] for r in part], [r[1] for r in part], [r[2] for r in part])
        assert [name for name, _, _ in grouped.names()] == [r[0] for r in part]
        assert grouping.add(grouped, shard) is None
    assert patterns_of(grouping.groups) == patterns


def _letters(i: int) -> str:
    return str(i).translate(str.maketrans("0123456789", "abcdefghij"))


# name shapes, each a function of n giving n distinct (name, shape) rows
_SHAPES: dict[str, Callable[[int], list[tuple[str, tuple[int, ...]]]]] = {
    "no index": lambda n: [(f"model.tensor_{_letters(i)}", (1,)) for i in range(n)],
    "all index": lambda n: [(str(i), (1,)) for i in range(n)],
    "a 30-digit segment": lambda n: [(f"a.{10**30 + i}.b", (1,)) for i in range(n)],
    "20 index positions": lambda n: [
        (".".join(str((i >> k) & 1) for k in range(20)), (1,)) for i in range(n)
    ],
    "a 500-character prefix": lambda n: [("x" * 500 + "." + _letters(i), (1,)) for i in range(n)],
    "unicode digits": lambda n: [
        (f"a.{_letters(i).translate(str.maketrans('abcdefghij', '٠١٢٣٤٥٦٧٨٩'))}", (1,)) for i in range(n)
    ],
    "one template in n shapes": lambda n: [(f"a.{i}", (i,)) for i in range(n)],
    "scattered pairs": lambda n: [(f"a.{i}.b.{(i * 7919) % n}", (1,)) for i in range(n)],
}


def _group_in_four_shards(rows: list[tuple[str, tuple[int, ...]]]) -> None:
    grouping = Grouping()
    for shard in range(4):
        part = rows[shard::4]
        grouped = ShardGroups.of([r[0] for r in part], ["F32"] * len(part), [r[1] for r in part])
        assert grouping.add(grouped, shard) is None
    patterns_of(grouping.groups)


def _cpu_seconds(work: Callable[[], object]) -> float:
    """The least CPU time of three runs, the collector off (it runs when it likes)."""
    best = math.inf
    for _ in range(3):
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()
            work()
            best = min(best, time.process_time() - start)
        finally:
            gc.enable()
    return best


@pytest.mark.parametrize("shape", _SHAPES)
def test_four_times_the_names_cost_well_under_sixteen_times(shape):
    """Linear: 4x the names is ~4x the work; the quadratic steps this replaced were 16x (40,000 names
    with no index took 102 s). Those steps ran at C speed (a filter per group, a lookup per key), where
    no Python-level count sees them, so this compares CPU time, with generous bounds: under 10x, plus
    50 ms for a base too small to time."""
    rows = _SHAPES[shape]
    small, large = rows(2_000), rows(8_000)
    assert len({r[0] for r in large}) == len(large)
    base = _cpu_seconds(lambda: _group_in_four_shards(small))
    four = _cpu_seconds(lambda: _group_in_four_shards(large))
    assert four < 10 * base + 0.05, (shape, base, four)


def test_indices_squared_cost_in_proportion_to_the_indices():
    """n names of n index positions, each 1 at its own position (n products, one per name): the
    products were worked out position by position, comparing tails of up to n indices each (n^3).
    4x the names is 16x the indices: linear is ~16x the work, this bounds it at 32x (it was 51x)."""

    def identity(n: int) -> list[tuple[str, tuple[int, ...]]]:
        return [(".".join("1" if k == m else "0" for k in range(n)), (1,)) for m in range(n)]

    small, large = identity(100), identity(400)
    base = _cpu_seconds(lambda: _group_in_four_shards(small))
    sixteen = _cpu_seconds(lambda: _group_in_four_shards(large))
    assert sixteen < 32 * base + 0.05, (base, sixteen)
    patterns = compress([(name, "F32", shape) for name, shape in large])
    assert len(patterns) == 400 and all(p.count == 1 and len(p.index_sets) == 400 for p in patterns)


def test_a_name_of_thousands_of_index_positions_is_no_deeper():
    """The products are walked with a stack: 3,000 positions once hit Python's recursion limit."""
    rows = [(".".join(["0"] * 3_000 + [str(i), str(j)]), "F32", ()) for i in range(3) for j in range(i + 1)]
    patterns = compress(rows)
    assert sorted(expand(patterns)) == sorted(r[0] for r in rows)
    assert [p.index_sets[-2:] for p in patterns] == [((0,), (0,)), ((1,), (0, 1)), ((2,), (0, 1, 2))]


def _no_index_rows(n: int) -> list[tuple[str, str, tuple[int, ...]]]:
    return [(f"model.tensor_{_letters(i)}", "U8", (1,)) for i in range(n)]


def test_twenty_thousand_names_with_no_index_through_a_local_folder(tmp_path):
    """The shape of the 102 s report, end to end: snapshot, metrics and diff, each within the fuzz
    tests' bounds (5 s, 500 MB)."""
    old, new = tmp_path / "old", tmp_path / "new"
    rows = _no_index_rows(20_000)
    write_checkpoint(old, CommitSpec({"config.json": b'{"hidden_size": 8}'}, rows))
    write_checkpoint(new, CommitSpec({"config.json": b'{"hidden_size": 8}'}, rows[:-1]))
    assert_one_clean_outcome(("snapshot", str(old)), (0,))
    assert_one_clean_outcome(("metrics", str(old)), (0,))
    code, out, _, _ = run("snapshot", str(old))
    assert code == 0 and "tensors: 20,000 in 20,000 patterns" in out


def test_twenty_thousand_names_with_no_index_through_the_replica(hub, tmp_path):
    hub.add(RepoSpec("org/x", [CommitSpec({"config.json": b'{"hidden_size": 8}'}, _no_index_rows(20_000))]))
    argv = ("snapshot", "org/x", "--endpoint", hub.endpoint, "--cache-dir", str(tmp_path / "c"))
    peak = _peak_mb()
    code, out, err, took = run(*argv)
    assert code == 0 and "tensors: 20,000 in 20,000 patterns" in out, err
    assert took < 10 and _peak_mb() - peak < 500, (took, _peak_mb() - peak)


# -- config values --------------------------------------------------------------------------------

# (key, limit): sizes and multipliers read by hubdiff's estimates or transformers' classes
_SIZES = {
    "hidden_size": 2**40,
    "intermediate_size": 2**40,
    "num_attention_heads": 2**40,
    "head_dim": 2**40,
    "vocab_size": 2**40,
    "embed_dim": 2**40,
    "patch_size": 2**40,
    "image_size": 2**40,
    "num_channels": 2**40,
    "spatial_merge_size": 2**40,
    "time_step_rank": 2**40,
    "encoder_layers": 1_024,
    "num_residual_layers": 1_024,
    "num_labels": 131_072,
}
_MULTIPLIERS = {"ffn_mult": 2**20, "mlp_ratio": 2**20, "expand": 2**20, "partial_rotary_factor": 2**20}
_PLACES = ["", "text_config.", "vision_config.", "block_configs[0].ffn."]


def _placed(place: str, key: str, value: Any) -> dict[str, Any]:
    if place == "block_configs[0].ffn.":
        return {"block_configs": [{"ffn": {key: value}}]}
    if place:
        return {place[:-1]: {key: value}}
    return {key: value}


@st.composite
def hostile_values(draw: st.DrawFn) -> tuple[dict[str, Any], str, bool]:
    """(config, the dotted path of the value, whether it must be refused): a size or multiplier
    given as a string, a number past its limit, a huge float, or a list holding one; or a fair value."""
    limits = {**_SIZES, **_MULTIPLIERS}
    key = draw(st.sampled_from(sorted(limits)))
    limit = limits[key]
    fair = st.one_of(
        st.integers(1, 64),
        st.sampled_from([None, True, 0.5] if key in _MULTIPLIERS else [None, True, 1024]),
        st.lists(st.integers(1, 64), min_size=1, max_size=3),
    )
    bad = st.one_of(
        st.text(max_size=6).filter(lambda s: not (s == "auto" and key.endswith("rank"))),
        st.sampled_from(["4096", "x" * 1000, limit + 1, -(2**41), 2**63, 1e308, -1e308, float(limit) * 2]),
        # a list of layers may name them; in any other list of sizes a string is hostile
        st.lists(
            st.sampled_from([1e308, limit + 1] if key.endswith("layers") else ["16", 1e308, limit + 1]),
            min_size=1,
            max_size=2,
        ).map(lambda v: [1, *v]),
    )
    refused = draw(st.booleans())
    value = draw(bad if refused else fair)
    place = draw(st.sampled_from(_PLACES))
    return _placed(place, key, value), place + key, refused


@settings(max_examples=200, **FUZZ)
@given(hostile_values())
def test_check_config_refuses_exactly_the_hostile_sizes(case):
    config, path, refused = case
    if refused:
        with pytest.raises(LayoutProblem) as info:
            check_config(config, "config.json")
        assert info.value.problem.startswith(path + " "), (path, info.value.problem)
    else:
        check_config(config, "config.json")


BASE_CONFIG = {"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10}


@settings(max_examples=30, **FUZZ)
@given(hostile_values(), st.sampled_from([None, "llama", "qwen2_vl", "nemotron-nas"]))
def test_hostile_sizes_through_metrics_config_only(tmp_path_factory, case, model_type):
    """Through transformers' classes or hubdiff's own readers: refused in one line before either sees
    the value, or read within the bounds (5 s, 500 MB)."""
    _transformers()  # imported once per process (seconds on a busy machine): not what is bounded here
    config, path, refused = case
    folder = tmp_path_factory.mktemp("m")
    model = {**BASE_CONFIG, **({"model_type": model_type} if model_type else {})}
    (folder / "config.json").write_text(json.dumps({**model, **config}))
    err = assert_one_clean_outcome(("metrics", str(folder), "--config-only"), (3,) if refused else (0, 3))
    if refused:
        assert err.startswith(f"hubdiff: {folder} config.json: {path} "), err


_ONE_BILLION_LABELS = {"model_type": "llama", "num_labels": 1_000_000_000}
# A config of what transformers expands or hubdiff multiplies: what each one line says
CONFIG_CASES = {
    "a billion labels": (_ONE_BILLION_LABELS, "num_labels is 1,000,000,000: out of range (-1 to 131,072)"),
    "id2label of 200,000": (
        {"model_type": "llama", "id2label": {str(i): "x" for i in range(200_000)}},
        "id2label has 200,000 entries (at most 131,072)",
    ),
    "label2id a list": ({"model_type": "llama", "label2id": [1, 2]}, "label2id is a list, not an object"),
    "a string embed_dim": (
        {
            "model_type": "qwen9_vl",
            "vision_config": {"depth": 1, "embed_dim": "x" * 1000, "patch_size": 10**6},
        },
        "vision_config.embed_dim is a string, not a number",
    ),
    "a string hidden_size": ({"hidden_size": "4096"}, "hidden_size is a string, not a number"),
    "ffn_mult 1e308": (
        {"block_configs": [{"attention": {"n_heads_in_group": 1}, "ffn": {"ffn_mult": 1e308}}]},
        "block_configs[0].ffn.ffn_mult is 1e+308: out of range (-1,048,576 to 1,048,576)",
    ),
    "per_layer_config of 2,000 layers": (
        {"per_layer_config": {str(i): {} for i in range(2_000)}},
        "per_layer_config has 2,000 entries (at most 1,024)",
    ),
    "GPT-Neo attention_types of a billion": (
        {"model_type": "gpt_neo", "attention_types": [[[], 10**9]]},
        "attention_types expands to more than 1,024 layers",
    ),
    "a looped count": ({"text_config": {"num_residual_layers": 10**9}}, "out of range (-1 to 1,024)"),
}


@pytest.mark.parametrize("case", CONFIG_CASES)
@pytest.mark.parametrize("command", ["snapshot", "metrics"])
def test_expanded_config_values_are_refused_from_the_replica(hub, tmp_path, case, command):
    config, problem = CONFIG_CASES[case]
    hub.add(RepoSpec("org/x", [CommitSpec({"config.json": json.dumps({**BASE_CONFIG, **config}).encode()})]))
    argv = (
        command,
        "org/x",
        "--endpoint",
        hub.endpoint,
        "--cache-dir",
        str(tmp_path / "c"),
        "--retries",
        "0",
    )
    err = assert_one_clean_outcome(argv, (3,))
    sha = hub.repos["org/x"].branches["main"]
    assert err.startswith(f"hubdiff: org/x@{sha} config.json: ") and problem in err, err


def test_a_huge_size_of_a_real_config_is_refused_in_a_local_folder(tmp_path):
    """Qwen3-VL's own config with a string where the vision tower's width is: the one line, exit 3."""
    from .conftest import DATA

    config = json.loads((DATA / "Qwen3-VL-30B-A3B-Instruct" / "config.json").read_text())
    config["vision_config"]["hidden_size"] = "1152" * 100
    (tmp_path / "config.json").write_text(json.dumps(config))
    for command in ("snapshot", "metrics"):
        err = assert_one_clean_outcome((command, str(tmp_path)), (3,))
        assert (
            err == f"hubdiff: {tmp_path} config.json: vision_config.hidden_size is a string, not a number\n"
        )


def test_a_size_given_per_axis_is_not_multiplied_as_one_number(tmp_path):
    """A list passes the boundary (image_size [384, 384] is real), but a tower reader multiplying it
    as one number repeats the list: [1] x 16384^2 was 2 GB and 15 s before a TypeError."""
    vision = {
        "depth": 1,
        "hidden_size": 8,
        "embed_dim": [1],
        "intermediate_size": 4,
        "spatial_merge_size": 16384,
    }
    config = {**BASE_CONFIG, "model_type": "qwen9_vl", "vision_config": vision}
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert_one_clean_outcome(("metrics", str(tmp_path), "--config-only"), (0,))


def test_memory_error_in_transformers_is_never_exit_0(tmp_path, capsys, monkeypatch):
    """transformers' configuration classes ran inside a broad except, so an allocation that failed
    (a billion labels: 5.5 GB) fell back to the raw keys and the run ended 0."""
    llama = _transformers().CONFIG_MAPPING["llama"]

    def out_of_memory(cls, *args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(llama, "from_dict", classmethod(out_of_memory))
    monkeypatch.setenv("HUBDIFF_CACHE", str(tmp_path / "cache"))
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(json.dumps({**BASE_CONFIG, "model_type": "llama"}))
    code = main(["metrics", str(tmp_path / "m"), "--config-only"])
    out, err = capsys.readouterr()
    assert code == 3 and out == ""
    assert (
        err.count("\n") == 1
        and err.startswith(f"hubdiff: {tmp_path / 'm'} config.json: ")
        and "MemoryError" in err
    )


# -- local files through symlinks -----------------------------------------------------------------

SECRET = b"root:x:0:0:root:/root:/bin/bash\n"
SECRET_NUMBER = struct.unpack("<Q", SECRET[:8])[0]


def _secret_outside(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "passwd").write_bytes(SECRET)
    (outside / "settings.json").write_text('{"token": "hf_SECRET_TOKEN"}')
    return outside


def _model(tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    write_checkpoint(
        folder, CommitSpec({"config.json": json.dumps(BASE_CONFIG).encode()}, [("w", "F32", (2,))])
    )
    return folder


def _assert_refused(folder: Path, file: str) -> None:
    for argv in (("snapshot", str(folder)), ("metrics", str(folder)), ("diff", str(folder), str(folder))):
        err = assert_one_clean_outcome(argv, (3,))
        assert err == f"hubdiff: {folder} {file}: symlink points outside the folder\n", (argv, err)
        assert f"{SECRET_NUMBER:,}" not in err and str(SECRET_NUMBER) not in err


def test_a_shard_linked_outside_the_folder_is_not_read(tmp_path):
    outside, folder = _secret_outside(tmp_path), _model(tmp_path)
    (folder / "model.safetensors").unlink()
    (folder / "model.safetensors").symlink_to(outside / "passwd")
    _assert_refused(folder, "model.safetensors")


def test_a_config_linked_outside_the_folder_is_not_read(tmp_path):
    outside, folder = _secret_outside(tmp_path), _model(tmp_path)
    (folder / "config.json").unlink()
    (folder / "config.json").symlink_to(os.path.relpath(outside / "settings.json", folder))
    _assert_refused(folder, "config.json")
    _, out, err, _ = run("snapshot", str(folder), "--json")
    assert "hf_SECRET_TOKEN" not in out + err


def test_an_index_linked_outside_the_folder_is_not_read(tmp_path):
    outside, folder = _secret_outside(tmp_path), _model(tmp_path)
    (outside / "model.safetensors.index.json").write_text(
        json.dumps({"weight_map": {"w": "model.safetensors"}})
    )
    (folder / "model.safetensors.index.json").symlink_to(outside / "model.safetensors.index.json")
    _assert_refused(folder, "model.safetensors.index.json")


def test_symlinks_inside_the_folder_are_read(tmp_path):
    folder = _model(tmp_path)
    (folder / "real").mkdir()
    for name in ("config.json", "model.safetensors"):
        (folder / name).rename(folder / "real" / name)
        (folder / name).symlink_to(Path("real") / name)
    code, out, err, _ = run("snapshot", str(folder))
    assert code == 0 and "tensors: 1 in 1 patterns" in out, err


@pytest.mark.parametrize("text", [SECRET, b"#!/bin/sh\necho hi\n", b"\x7fELF\x02\x01\x01\x00" + bytes(64)])
def test_a_file_that_is_not_safetensors_is_not_echoed_as_a_number(hub, tmp_path, text):
    """Its first 8 bytes read as a length are in the quintillions: said to be out of range, not shown."""
    number = struct.unpack("<Q", text[:8])[0]
    folder = _model(tmp_path)
    (folder / "model.safetensors").write_bytes(text)
    hub.add(RepoSpec("org/x", [CommitSpec({"config.json": b"{}", "model.safetensors": text})]))
    sha = hub.repos["org/x"].branches["main"]
    for argv, where in (
        (("snapshot", str(folder)), str(folder)),
        (
            ("snapshot", "org/x", "--endpoint", hub.endpoint, "--cache-dir", str(tmp_path / "c")),
            f"org/x@{sha}",
        ),
    ):
        err = assert_one_clean_outcome(argv, (3,))
        assert (
            err
            == f"hubdiff: {where} model.safetensors: not a safetensors file (header length out of range)\n"
        )
        assert str(number) not in err and f"{number:,}" not in err
