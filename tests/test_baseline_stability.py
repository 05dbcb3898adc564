"""Baseline writes are stable: a bot's pull request is force-pushed with whatever ``watch --update``
writes and reviewers read its diff, so a re-record that changes nothing writes nothing, and one that
changes something touches only the lines it must, in the style the file was written in."""

from __future__ import annotations

import difflib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hubdiff._baseline.record import merged
from hubdiff._baseline.store import dump, same, splice
from hubdiff._metrics.compute import cached_metrics
from hubdiff._metrics.options import MetricsOptions
from hubdiff._source import HubSettings, Sources, SourceSpec
from hubdiff._source.cache import SnapshotCache
from hubdiff.demo import _new_flash_revision
from hubdiff.testing import HubReplica
from hubdiff.testing.example import example_dir, example_hub
from hubdiff.testing.specs import CommitSpec, load_census

ROOT = Path(__file__).parent.parent
SHIPPED = ROOT / "baselines" / "glm-5.yaml"
FLASH = "zai-org/GLM-5.3-Flash"
FLASH_OPTIONS = MetricsOptions(kv_dtype="fp8", context=1_048_576)


def run(*args: str, endpoint: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_ENDPOINT": endpoint, "HUBDIFF_CACHE": str(cwd / "cache")},
        cwd=cwd,
        timeout=300,
    )


def hubdiff(*args: str, endpoint: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    result = run("-m", "hubdiff", *args, endpoint=endpoint, cwd=cwd)
    assert result.returncode in (0, 1), result.stdout + result.stderr
    return result


def copy_shipped(folder: Path, edit: Any = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "glm-5.yaml"
    shutil.copy(SHIPPED, path)
    if edit:
        path.write_text(edit(path.read_text()))
    return path


def changed_lines(before: str, after: str) -> tuple[list[str], list[str]]:
    """The lines removed and added, as ``git diff`` counts them."""
    removed, added = [], []
    for line in difflib.ndiff(before.splitlines(), after.splitlines()):
        if line.startswith("- "):
            removed.append(line[2:])
        elif line.startswith("+ "):
            added.append(line[2:])
    return removed, added


def fingerprint(path: Path) -> tuple[bytes, int, int]:
    stat = path.stat()
    return path.read_bytes(), stat.st_ino, stat.st_mtime_ns


@pytest.fixture
def quiet_hub(example_hub: HubReplica, example_cache: Any, tmp_path: Path) -> HubReplica:
    """The example repos, never pushed to, already read (``cwd / "cache"``): for the runs that must
    find nothing new."""
    example_cache(tmp_path / "cache")
    return example_hub


@pytest.fixture
def own_hub(example_cache: Any, tmp_path: Path) -> Iterator[HubReplica]:
    """The example repos for a test that pushes new revisions, read before the push."""
    hub = example_hub()
    example_cache(tmp_path / "cache", hub.endpoint)
    yield hub
    hub.stop()


# -- nothing changed: nothing written -----------------------------------------------------------


def test_a_no_op_update_watch_and_pytest_update_write_nothing(quiet_hub, tmp_path):
    path = copy_shipped(tmp_path / "baselines")
    before = fingerprint(path)
    update = hubdiff("baseline", "update", endpoint=quiet_hub.endpoint, cwd=tmp_path)
    assert update.stdout.count("config, tensors and figures unchanged") == 3
    assert fingerprint(path) == before  # the bytes, and not even rewritten (same inode, same mtime)
    watch = hubdiff("watch", "--update", "--output-dir", "reports", endpoint=quiet_hub.endpoint, cwd=tmp_path)
    assert "0 changed" in watch.stdout
    assert fingerprint(path) == before
    plugin = run(
        "-m",
        "pytest",
        str(ROOT / "checks"),
        "-q",
        "-p",
        "no:cacheprovider",
        "--hub-endpoint",
        quiet_hub.endpoint,
        "--baseline-dir",
        "baselines",
        "--update-baselines",
        endpoint=quiet_hub.endpoint,
        cwd=tmp_path,
    )
    assert plugin.returncode == 0, plugin.stdout + plugin.stderr
    assert fingerprint(path) == before


def test_init_of_a_tracked_repo_keeps_its_options_and_says_what_changed(quiet_hub, tmp_path):
    path = copy_shipped(tmp_path / "baselines")
    before = fingerprint(path)
    init = ["baseline", "init", FLASH, "--family", "glm-5"]
    again = hubdiff(*init, endpoint=quiet_hub.endpoint, cwd=tmp_path)
    assert (
        again.stdout
        == f"baselines/glm-5.yaml: {FLASH} still 600a281f210c: config, tensors and figures unchanged\n"
    )
    assert fingerprint(path) == before  # context, claims, notes, allow_changes, revision: all kept
    text = path.read_text()
    bf16 = hubdiff(*init, "--kv-dtype", "bf16", endpoint=quiet_hub.endpoint, cwd=tmp_path)
    assert (
        bf16.stdout == f"baselines/glm-5.yaml: {FLASH} still 600a281f210c: metrics options, figures changed\n"
    )
    entry = yaml.safe_load(path.read_text())["repos"][FLASH]
    options = entry["metrics_options"]
    assert options["kv_dtype"] == "bf16" and options["context"] == 1_048_576  # the context stays
    assert entry["recorded"] == yaml.safe_load(text)["repos"][FLASH]["recorded"]  # the sha did not move
    removed, added = changed_lines(text, path.read_text())
    assert removed[0] == "      kv_dtype: fp8" and added[0] == "      kv_dtype: bf16"
    assert all(line.startswith("      kv_") for line in removed)  # then only the KV figures
    # the options written whole (check measures what was recorded), after those the file had
    options_added = ["profile: naive", "count_mtp: false", "indexer_pooling: auto", "config_reader: auto"]
    assert added[1:5] == ["      " + line for line in options_added]
    assert (
        "      context: 1048576\n" + "".join(f"      {line}\n" for line in options_added) in path.read_text()
    )
    assert all(line.startswith("      kv_") for line in added[5:])


# -- one new revision: its lines and nothing else -----------------------------------------------


def figures_of(sources: Sources, revision: str) -> dict[str, Any]:
    snapshot = sources.open(SourceSpec("hub", FLASH, revision))
    return cached_metrics(sources.cache, snapshot, FLASH_OPTIONS).figures()


def expected_change(old_text: str, new_sha: str, new_figures: dict[str, Any]) -> set[tuple[str, str]]:
    """(old line, new line) of every figure of GLM-5.3-Flash whose value moved, worked out here."""
    old_figures = yaml.safe_load(old_text)["repos"][FLASH]["metrics"]
    return {
        (f"      {name}: {old_figures[name]}", f"      {name}: {value}")
        for name, value in new_figures.items()
        if not same(old_figures[name], value)
    }


HAND_STYLED = [
    # (as shipped, as a person rewrote it): a comment, an end-of-line comment on lines that change,
    # block style for a flow list, flow style kept, quotes on a plain string
    (
        "  zai-org/GLM-5.3-Flash:\n    revision: main\n    sha: 600a281f210ca4bf46321a16552df1faac8946be\n",
        "  zai-org/GLM-5.3-Flash:\n    revision: main\n    # pinned by the weekly watch\n"
        "    sha: 600a281f210ca4bf46321a16552df1faac8946be  # reviewed\n",
    ),
    (
        "    allow_changes: [transformers_version]\n    claims:\n      kv_bytes_per_token: 6.0 KB\n",
        "    allow_changes:\n      - transformers_version\n    claims:\n      kv_bytes_per_token: 6.0 KB\n",
    ),
    ("        index_kpool: 4\n", "        index_kpool: 4  # 4:1 in this release\n"),
    ("      model_type: glm5_flash\n", '      model_type: "glm5_flash"\n'),
]


def hand_styled(text: str) -> str:
    for shipped, styled in HAND_STYLED:
        assert text.count(shipped) == 1, shipped
        text = text.replace(shipped, styled)
    return text


def test_a_new_revision_changes_only_its_lines_in_the_files_style(own_hub, tmp_path):
    plain_path = copy_shipped(tmp_path / "plain")
    styled_path = copy_shipped(tmp_path / "styled", hand_styled)
    plain_before, styled_before = plain_path.read_text(), styled_path.read_text()
    new_sha = own_hub.push(FLASH, _new_flash_revision())

    hubdiff("baseline", "update", "plain/glm-5.yaml", endpoint=own_hub.endpoint, cwd=tmp_path)
    watch = hubdiff(
        "watch",
        "--update",
        "styled/glm-5.yaml",
        "--output-dir",
        "reports",
        endpoint=own_hub.endpoint,
        cwd=tmp_path,
    )
    assert "1 changed" in watch.stdout

    sources = Sources(HubSettings(endpoint=own_hub.endpoint), SnapshotCache(tmp_path / "cache"))
    figures = expected_change(plain_before, new_sha, figures_of(sources, new_sha))
    assert ("      kv_bytes_per_token: 5984", "      kv_bytes_per_token: 5808") in figures  # as the demo says
    recorded = yaml.safe_load(plain_path.read_text())["repos"][FLASH]["recorded"]
    old_recorded = yaml.safe_load(plain_before)["repos"][FLASH]["recorded"]
    assert recorded != old_recorded

    removed, added = changed_lines(plain_before, plain_path.read_text())
    assert set(zip(removed, added)) == {
        ("    sha: 600a281f210ca4bf46321a16552df1faac8946be", f"    sha: {new_sha}"),
        (f"    recorded: '{old_recorded}'", f"    recorded: '{recorded}'"),
        *figures,
        ("        index_kpool: 4", "        index_kpool: 8"),
        ("      transformers_version: 5.12.0", "      transformers_version: 5.13.0"),
    }
    assert len(removed) == len(added) == 4 + len(figures)

    styled_after = styled_path.read_text()
    removed, added = changed_lines(styled_before, styled_after)
    styled_recorded = yaml.safe_load(styled_after)["repos"][FLASH]["recorded"]
    assert set(zip(removed, added)) == {
        (
            "    sha: 600a281f210ca4bf46321a16552df1faac8946be  # reviewed",
            f"    sha: {new_sha}  # reviewed",
        ),
        (f"    recorded: '{old_recorded}'", f"    recorded: '{styled_recorded}'"),
        *figures,
        ("        index_kpool: 4  # 4:1 in this release", "        index_kpool: 8  # 4:1 in this release"),
        ("      transformers_version: 5.12.0", "      transformers_version: 5.13.0"),
    }
    assert len(removed) == len(added) == 4 + len(figures)
    for _, styled in HAND_STYLED[1:]:
        assert styled.replace("4  #", "8  #") in styled_after
    assert "    # pinned by the weekly watch\n" in styled_after
    assert "      index_topk_pattern: null\n" in styled_after  # GLM-5.3's null, as written
    assert not [line for line in styled_after.splitlines() if line != line.rstrip()]  # no trailing spaces


def test_a_changed_structure_is_merged_key_by_key(own_hub, tmp_path):
    """A key leaves the config and two arrive: the one line goes, the new keys follow the last one of
    their mapping (``null`` written as ``null``), and every other line stays."""
    path = copy_shipped(tmp_path / "baselines")
    before = path.read_text()
    base = example_dir() / "GLM-5.3-Flash"
    config = json.loads((base / "config.json").read_text())
    del config["text_config"]["hc_eps"]
    config["text_config"]["rope_scaling"] = None
    config["vision_config"]["projector_note"] = "no"  # a YAML 1.1 boolean, as a string
    commit = CommitSpec(
        {"config.json": json.dumps(config).encode()},
        load_census((base / "census.tsv").read_text()),
        shards=48,
        title="Drop hc_eps",
    )
    new_sha = own_hub.push(FLASH, commit)
    update = hubdiff("baseline", "update", "--repo", FLASH, endpoint=own_hub.endpoint, cwd=tmp_path)
    assert update.stdout.endswith(f"600a281f210c -> {new_sha[:12]}: config changed\n")
    after = path.read_text()
    removed, added = changed_lines(before, after)
    recorded = yaml.safe_load(after)["repos"][FLASH]["recorded"]
    assert removed == [
        "    sha: 600a281f210ca4bf46321a16552df1faac8946be",
        f"    recorded: '{yaml.safe_load(before)['repos'][FLASH]['recorded']}'",
        "        hc_eps: 1.0e-06",
    ]
    assert added == [
        f"    sha: {new_sha}",
        f"    recorded: '{recorded}'",
        "        rope_scaling: null",
        "        projector_note: 'no'",
    ]
    lines = after.splitlines()
    assert (
        lines[lines.index("        rope_scaling: null") - 1] == "        dtype: bfloat16"
    )  # text_config's last
    assert (
        lines[lines.index("        projector_note: 'no'") - 1] == "        mm_projector_type: patchmergerv2"
    )
    assert yaml.safe_load(after)["repos"][FLASH]["config"]["vision_config"]["projector_note"] == "no"


# -- hand-written layouts -----------------------------------------------------------------------

HAND_WRITTEN = [
    # a value replaced where it stands: its comment, its quotes, its tag's place kept
    ("a: 1  # one\nb: 'no'\n", {"a": 2, "b": "yes"}, "a: 2  # one\nb: 'yes'\n"),
    ("a: plain\n", {"a": "on"}, "a: 'on'\n"),  # a YAML 1.1 boolean as a string gets quotes
    ("a: !!str 123  # c\n", {"a": "124"}, "a: '124'  # c\n"),
    ('a: "x"\n', {"a": "y"}, 'a: "y"\n'),
    ("a: null\nb: 1\n", {"a": None, "b": 2}, "a: null\nb: 2\n"),
    ("a:\nb: 1\n", {"a": 5, "b": 1}, "a: 5\nb: 1\n"),
    ("a: 1\r\nb: 2\r\n", {"a": 1, "b": 3}, "a: 1\r\nb: 3\r\n"),
    (
        "a: [1]  # c\r\nb:\r\n  x: 1\r\n",
        {"a": [2], "b": {"x": 1, "y": [1]}},
        "a: [2]  # c\r\nb:\r\n  x: 1\r\n  y: [1]\r\n",
    ),
    # a changed collection rewritten in the style it had
    ("a: [1, 2]  # list\nb: 2\n", {"a": [1, 3], "b": 2}, "a: [1, 3]  # list\nb: 2\n"),
    ("a:\n- 1\n- 2\n", {"a": [1, 3]}, "a:\n- 1\n- 3\n"),
    ("a:\n  - x: 1\n    y: 2\nb: 2\n", {"a": [{"x": 1, "y": 3}], "b": 2}, "a:\n  - x: 1\n    y: 3\nb: 2\n"),
    ("a: {x: 1, y: 2}\n", {"a": {"x": 1, "y": 3}}, "a: {x: 1, y: 3}\n"),
    ("a: |\n  one\n  two\nb: 1\n", {"a": "one\nthree\n", "b": 1}, "a: |\n  one\n  three\nb: 1\n"),
    # keys merged in a mapping indented by hand: new ones after the last, at its indentation
    (
        "m:\n    x: 1  # kept\n    # about y\n    y: 2\nz: 0\n",
        {"m": {"x": 1, "y": 2, "w": None}, "z": 0},
        "m:\n    x: 1  # kept\n    # about y\n    y: 2\n    w: null\nz: 0\n",
    ),
    (  # a vanished key takes its own lines, not the comment above the next one
        "m:\n    x: 1  # gone\n    # about y\n    y: 2\nz: 0\n",
        {"m": {"y": 2}, "z": 0},
        "m:\n    # about y\n    y: 2\nz: 0\n",
    ),
    ("m:\n  b: 1\n", {"m": {}}, "m: {}\n"),  # an emptied mapping is {}, not null
]


@pytest.mark.parametrize(("text", "new", "expected"), HAND_WRITTEN)
def test_a_hand_written_layout_survives_a_change(text, new, expected):
    assert splice(text, new) == expected
    assert same(yaml.safe_load(expected), new)


def test_anchors_are_not_spliced_around():
    """An alias repeats its anchor's value: editing one in place would change the other unseen."""
    text = "a: &x [1, 2]\nb: *x\n"
    assert splice(text, {"a": [1, 2], "b": [1, 2]}) == text
    assert splice(text, {"a": [1, 3], "b": [1, 2]}) == "a: [1, 3]\nb: [1, 2]\n"


# -- the writer on any plain data ---------------------------------------------------------------

TRICKY = [
    "no",
    "on",
    "off",
    "yes",
    "y",
    "n",
    "true",
    "null",
    "~",
    "1",
    "1.0",
    "0x1f",
    "1e3",
    "012",
    "1_000",
    "2026-11-29",
    "2026-11-29T16:54:17Z",
    "",
    " lead",
    "trail ",
    "a: b",
    "#x",
    "- x",
    "[x]",
    "{x}",
    "é",
]
keys = st.sampled_from(TRICKY) | st.text("abcxyz_.{}-0123456789", min_size=1, max_size=12)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_infinity=True, allow_nan=True, width=32)
    | st.sampled_from(TRICKY)
    | st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=16)  # each fits on its line
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, min_size=1, max_size=4),
    max_leaves=12,
)
documents = st.dictionaries(keys, values, min_size=1, max_size=5)
FAST = {"derandomize": True, "deadline": None, "suppress_health_check": [HealthCheck.too_slow]}


@settings(max_examples=150, **FAST)
@given(documents)
def test_plain_data_dumps_reads_back_and_redumps_byte_for_byte(data):
    text = dump(data)
    assert same(yaml.safe_load(text), data)
    assert dump(yaml.safe_load(text)) == text
    assert splice(text, yaml.safe_load(text)) == text  # unchanged data: the very same text
    assert not [line for line in text.splitlines() if line != line.rstrip()]


def _mapping_paths(value: dict[Any, Any], at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key reached through mappings only, the way a re-record walks an entry."""
    out = []
    for key, inner in value.items():
        out.append((*at, key))
        if isinstance(inner, dict):
            out.extend(_mapping_paths(inner, (*at, key)))
    return out


def _complex_key(key: Any, depth: int) -> bool:
    """The dumper writes ``key`` as YAML's explicit ``? key`` / ``: value`` pair at ``depth``."""
    return dump({key: {"a": 1}}, width=120 - 2 * depth).startswith("? ")


def _lines(key: Any, value: Any, depth: int) -> int:
    """How many lines ``key: value`` takes at ``depth`` in a file this dumper wrote."""
    return len(dump({key: value}, width=120 - 2 * depth).splitlines())


@settings(max_examples=200, **FAST)
@given(documents, st.data())
def test_one_change_rewrites_only_its_own_lines(data, draw):
    """A changed scalar is one line, a vanished key exactly its lines, a new key exactly its lines; the
    comments a person put between the entries all stay."""
    comments = [f"# about {key!r}\n" for key in data]
    old_text = "".join(c + dump({k: v}) for c, (k, v) in zip(comments, data.items()))
    old = yaml.safe_load(old_text)
    path = draw.draw(st.sampled_from(_mapping_paths(old)))
    *parents, key = path
    new = yaml.safe_load(old_text)
    parent = new
    for part in parents:
        parent = parent[part]
    depth = len(parents)
    change = draw.draw(st.sampled_from(["set", "delete", "add"]))
    bound = None
    if change == "set":
        was = parent[key]
        parent[key] = draw.draw(scalars)
        if same(was, parent[key]):
            expected = (0, 0)
        elif isinstance(was, (dict, list)):  # the entry is written anew (a `? key` line may stay)
            bound = (_lines(key, was, depth), _lines(key, parent[key], depth))
        else:  # the value is replaced where it stands
            expected = (1, 1)
    elif change == "delete":
        assume(len(parent) > 1)  # a mapping left empty is written as {} on its parent's line
        first = next(iter(parent)) == key
        expected = (_lines(key, parent.pop(key), depth), 0)
        if first and parents and _complex_key(parents[-1], depth - 1):
            # a key YAML cannot write plainly (``? ''``) puts its value's first entry on the ``:``
            # line: that line goes with the entry, and the next entry takes the ``:``
            expected = (expected[0] + 1, 1)
    else:
        target = parent[key] if isinstance(parent[key], dict) else parent
        depth += target is not parent
        added = draw.draw(keys.filter(lambda k: k not in target))
        target[added] = draw.draw(values)
        expected = (0, _lines(added, target[added], depth))
    text = splice(old_text, merged(old, new))
    assert same(yaml.safe_load(text), new)
    removed, added_lines = changed_lines(old_text, text)
    if bound is None:
        assert (len(removed), len(added_lines)) == expected
    else:
        assert 0 < len(removed) <= bound[0] and 0 < len(added_lines) <= bound[1]
    assert all(comment in text for comment in comments)


def test_a_value_shared_in_memory_is_written_without_aliases(tmp_path):
    """The reader refuses YAML aliases, so the writer must never emit one, even for shared objects."""
    from hubdiff._baseline.schema import load_baseline
    from hubdiff._baseline.store import write_baseline

    shared = ["transformers_version"]
    data = {
        "family": "f",
        "repos": {
            "o/a": {"revision": "main", "sha": "a" * 40, "allow_changes": shared},
            "o/b": {"revision": "main", "sha": "b" * 40, "allow_changes": shared},
        },
    }
    path = tmp_path / "f.yaml"
    write_baseline(path, data)
    text = path.read_text()
    assert "&" not in text and "*" not in text
    assert [r.allow_changes for r in load_baseline(path).repos] == [("transformers_version",)] * 2
