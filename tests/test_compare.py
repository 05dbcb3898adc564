"""hubdiff diff on the embedded example: the founding comparison as one command."""

import json

import pytest

from hubdiff._compare.config_diff import diff_configs
from hubdiff._metrics.options import MetricsOptions
from hubdiff._render.headline import headline
from hubdiff._render.markdown import render
from hubdiff._source import HubSettings, Sources
from hubdiff._source.cache import SnapshotCache
from hubdiff.jobs import run_diff
from hubdiff.testing.example import example_dir


@pytest.fixture(scope="module")
def sources(example_hub, tmp_path_factory):
    return Sources(
        HubSettings(endpoint=example_hub.endpoint), SnapshotCache(tmp_path_factory.mktemp("cache"))
    )


def real_config(name):
    return json.loads((example_dir() / name / "config.json").read_text())


def test_glm5_to_glm53(sources):
    report = run_diff("zai-org/GLM-5", "zai-org/GLM-5.3", sources, MetricsOptions(kv_dtype="fp8"))
    result = report.results[0]
    changes = {c.path: c for c in result.comparison.config}
    assert (changes["rope_parameters.rope_theta"].old, changes["rope_parameters.rope_theta"].new) == (
        1_000_000,
        8_000_000,
    )
    assert (changes["max_position_embeddings"].old, changes["max_position_embeddings"].new) == (
        202_752,
        1_048_576,
    )
    assert changes["index_topk_freq"].kind == "added" and changes["index_topk_freq"].new == 4
    assert changes["indexer_types"].summary == "78 entries: 57 shared, 21 full"
    assert changes["transformers_version"].category == "cosmetic"
    assert changes["index_topk_pattern"].category == "cosmetic"  # added as null
    # mlp_layer_types spells out first_k_dense_replace: same census, so it changes nothing
    assert changes["mlp_layer_types"].category == "cosmetic"
    assert changes["indexer_types"].category == "architectural"  # 57 layers now share an indexer
    # every difference between the two real configs is reported, and only those
    old, new = real_config("GLM-5"), real_config("GLM-5.3")
    expected = {k for k in old.keys() | new.keys() if old.get(k) != new.get(k) or (k in old) != (k in new)}
    expected = {("rope_parameters.rope_theta" if k == "rope_parameters" else k) for k in expected}
    assert set(changes) == expected
    assert all(
        c.category in ("architectural", "behavioural", "cosmetic") and c.rule for c in changes.values()
    )
    # indexer tensors leave 57 of the 78 main layers (79 with MTP -> 22)
    templates = {t.template: t for t in result.comparison.tensors.templates}
    wk = templates["model.layers.*.self_attn.indexer.wk.weight"]
    assert (wk.old_count, wk.new_count, wk.old_layers, wk.new_layers) == (79, 22, "0-78", "0-2,6-78/4")
    assert len(templates) == 5 and not result.comparison.tensors.added
    assert "self_attn.indexer.* tensors leave 57 of 79 layers (79 → 22)" in headline(result)
    assert report.exit_code == 1
    text = render(report, "text")
    assert "rope_parameters.rope_theta: 1,000,000 -> 8,000,000" in text
    assert "max_position_embeddings: 202,752 -> 1,048,576" in text
    assert "index_topk_freq: (absent) -> 4" in text
    assert "| `rope_parameters.rope_theta` | changed | `1,000,000` | `8,000,000` |" in render(report)


def test_glm53_to_flash_reproduces_the_seed(sources):
    report = run_diff(
        "zai-org/GLM-5.3", "zai-org/GLM-5.3-Flash", sources, MetricsOptions(kv_dtype="fp8", context=1_048_576)
    )
    result = report.results[0]
    reshaped = {x.pattern.name: (x.old_shape, x.pattern.shape) for x in result.comparison.tensors.changed}
    assert reshaped["language_model.model.layers.{3-43/4}.self_attn.kv_a_proj_with_mqa.weight"] == (
        (576, 6144),
        (512, 4096),
    )
    cross = {x.tail for x in result.comparison.tensors.cross_model}
    assert "self_attn.kv_a_proj_with_mqa.weight" not in cross  # said once, as a reshape
    variants = {v.label: (v.old_bytes, v.new_bytes) for v in result.kv_variants}
    assert variants["index_kpool shrinks the stored indexer keys"] == (47_616, 5_984)
    assert variants["index_kpool shrinks only the scan"] == (47_616, 7_040)
    text = render(report)
    for line in [
        "| attention | dsa 78 | dsa 11, kda 34 ◀ |",
        "| kv_lora_rank + qk_rope_head_dim | 512 + 64 | 512 + 0 ◀ |",
        "- zai-org/GLM-5.3@968e04d82b25: 78 × (512 + 64) × 1 + 21 × 128 × 1 = 47,616 bytes/token",
        "- zai-org/GLM-5.3-Flash@600a281f210c: 11 × (512 + 0) × 1 + 11 × 128 / 4 × 1 = 5,984 bytes/token",
        "- if index_kpool shrinks the stored indexer keys: 47,616 vs 5,984 bytes/token, 8.0×",
        "- if index_kpool shrinks only the scan: 47,616 vs 7,040 bytes/token, 6.8×",
        "- at 1,048,576 tokens: 49.9 GB (zai-org/GLM-5.3@968e04d82b25); at 1,048,576 tokens: 6.3 GB + 0.07 GB of "
        "recurrent state (zai-org/GLM-5.3-Flash@600a281f210c)",
        "| `language_model.model.layers.{3-43/4}.self_attn.kv_a_proj_with_mqa.weight` | `BF16` `[576, 6144]` | "
        "`BF16` `[512, 4096]` | 11 |",
        "new attn KKKDKKKDKKKDKKKDKKKDKKKDKKKDKKKDKKKDKKKDKKKDK",
    ]:
        assert line in text, line


def test_numbers_compare_as_numbers_and_nesting_is_followed():
    old = {"rope_theta": 1000000, "text_config": {"hidden_size": 4096, "rope_parameters": {"factor": 8}}}
    new = {"rope_theta": 1e6, "text_config": {"hidden_size": 4096.0, "rope_parameters": {"factor": 16.0}}}
    changes = {c.path: c for c in diff_configs(old, {**new, "torch_dtype": None})}
    assert set(changes) == {"text_config.rope_parameters.factor", "torch_dtype"}
    assert changes["text_config.rope_parameters.factor"].category == "architectural"
    assert changes["torch_dtype"].category == "cosmetic"
    # a flat config against a nested one: each key moved is one row naming where it was and is
    flat = {"rope_theta": 1e6, "hidden_size": 4096, "rope_parameters": {"factor": 8}}
    moved = {c.label: (c.kind, c.category) for c in diff_configs(flat, old)}
    assert moved == {
        "hidden_size → text_config.hidden_size": ("moved", "cosmetic"),
        "rope_parameters.factor → text_config.rope_parameters.factor": ("moved", "cosmetic"),
    }


def test_dtype_spelling_is_cosmetic():
    changes = diff_configs({"torch_dtype": "bfloat16"}, {"dtype": "bfloat16"})
    assert {c.path: c.rule for c in changes} == {
        "dtype": "dtype key spelling (torch_dtype <-> dtype)",
        "torch_dtype": "dtype key spelling (torch_dtype <-> dtype)",
    }


def test_same_revision_twice_is_no_difference(sources):
    report = run_diff("zai-org/GLM-5", "zai-org/GLM-5@main", sources, MetricsOptions())
    assert report.exit_code == 0 and headline(report.results[0]).endswith("no differences.")


def _snapshot(names):
    from hubdiff.snapshot import Snapshot, Tensor

    tensors = (Tensor(n, d, s, "") for n, d, s in names)
    return Snapshot.of_tensors("org/x", "main", "", None, {}, None, (), {}, tensors=tensors)


def test_a_prefix_rename_is_one_line_and_shapes_are_compared_through_it():
    from hubdiff._compare.tensor_diff import diff_tensors

    old = [(f"model.layers.{i}.self_attn.kv_a_proj_with_mqa.weight", "BF16", (576, 64)) for i in range(4)]
    old += [(f"model.layers.{i}.mlp.w.weight", "BF16", (8, 8)) for i in range(4)]
    new = [
        (f"language_model.model.layers.{i}.self_attn.kv_a_proj_with_mqa.weight", "BF16", (512, 64))
        for i in range(4)
    ]
    new += [(f"language_model.model.layers.{i}.mlp.w.weight", "BF16", (8, 8)) for i in range(3)]
    new += [("vision_tower.blocks.0.attn.weight", "BF16", (4, 4))]
    diff = diff_tensors(_snapshot(old), _snapshot(new))
    assert [(r.old, r.new, r.count, r.matched) for r in diff.renames] == [
        ("model.", "language_model.model.", 8, 7)
    ]
    assert [(c.pattern.name, c.old_shape, c.pattern.shape) for c in diff.changed] == [
        ("language_model.model.layers.{0-3}.self_attn.kv_a_proj_with_mqa.weight", (576, 64), (512, 64))
    ]
    assert [p.name for p in diff.removed] == ["model.layers.3.mlp.w.weight"]  # reported under its old name
    assert [p.name for p in diff.added] == ["vision_tower.blocks.0.attn.weight"]


def test_suffixes_met_by_chance_are_not_a_rename():
    from hubdiff._compare.tensor_diff import diff_tensors

    old = [(f"a.layers.{i}.x.weight", "F16", (2,)) for i in range(3)] + [("a.other.y.weight", "F16", (2,))]
    old += [(f"a.only_old_{k}.z.weight", "F16", (2,)) for k in range(6)]
    new = [(f"b.layers.{i}.x.weight", "F16", (2,)) for i in range(3)]
    new += [(f"b.only_new_{k}.z.weight", "F16", (2,)) for k in range(6)]
    diff = diff_tensors(_snapshot(old), _snapshot(new))
    assert diff.renames == ()  # 1 of 8 moved templates found again: not a rename
    assert len(diff.removed) + len(diff.added) > 2


def test_the_founding_comment_leads_with_the_reshape_and_the_kv_change(sources):
    from hubdiff._render.markdown import render_comment

    report = run_diff("zai-org/GLM-5.3", "zai-org/GLM-5.3-Flash", sources, MetricsOptions(kv_dtype="fp8"))
    first_screen = "\n".join(render_comment(report).splitlines()[:45])
    assert "| KV cache per token | 47,616 (47.6 KB) | 5,984 (6.0 KB) | −87.4%, 8.0× smaller |" in first_screen
    assert "kv_a_proj_with_mqa.weight` `BF16` `[576, 6144]` → `[512, 4096]`" in first_screen
    assert "`model.` → `language_model.model.`: 59,584 tensors" in first_screen
    assert "<details>" not in first_screen.split("what changed that matters")[1].split("**Architectural")[0]


def test_change_is_said_honestly():
    from hubdiff._render.headline import change

    assert change(100, 97) == "−3.0%"  # not "(1.0×)"
    assert change(47_616, 5_984) == "−87.4%, 8.0× smaller"
    assert change(1, 3) == "+200.0%, 3.0× larger"
    assert change(0, 5) == "new" and change(5, 5) == "unchanged"


def test_figures_compare_like_deepdiff_with_numeric_types_ignored():
    from deepdiff import DeepDiff

    from hubdiff._compare import diff_figures

    old = {"a": 3, "b": {"mla": 78, "dsa": 1}, "c": 1.5, "d": [1, 2], "e": "x", "gone": 1}
    new = {"a": 3.0, "b": {"mla": 78, "kda": 1}, "c": 1.5, "d": [2, 1], "e": "x", "came": 2}
    expected = {
        str(level.path(output_format="list")[0])
        for levels in DeepDiff(old, new, ignore_numeric_type_changes=True, verbose_level=2).tree.values()
        for level in levels
    }
    assert [d.name for d in diff_figures(old, new)] == sorted(expected) == ["b", "came", "d", "gone"]


def test_the_two_sides_are_read_side_by_side_and_stay_in_order(hub, tmp_path):
    from hubdiff.testing import CommitSpec, Fault, RepoSpec

    tensors = [(f"model.layers.{i}.mlp.up_proj.weight", "BF16", (8, 8)) for i in range(2)]
    cfg = b'{"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10}'
    hub.add(RepoSpec("org/old", [CommitSpec({"config.json": cfg}, tensors)]))
    hub.add(RepoSpec("org/new", [CommitSpec({"config.json": cfg}, tensors[:1])]))
    hub.add_fault(Fault("/api/models/org/old/revision/", delay_s=1.0, times=1))  # the old side answers late
    sources = Sources(HubSettings(endpoint=hub.endpoint, retries=0), SnapshotCache(tmp_path / "c"))
    report = run_diff("org/old", "org/new", sources, MetricsOptions())
    assert report.results[0].title == "org/old@main → org/new@main"
    assert report.results[0].comparison.tensors.removed  # old minus new, not the other way round
    log = hub.log  # in the order requests arrived, each with its arrival time
    slow_old = next(e for e in log if "/org/old/revision/" in e.path)
    # the new side was read while the old side's answer was held back for its second
    assert any("org/new" in e.path and slow_old.at < e.at < slow_old.at + 1.0 for e in log)


def test_a_warm_report_is_the_cold_one_byte_for_byte(example_hub, tmp_path):
    """The second run reads both snapshots from the cache, and reports the same, nested keys included
    (``linear_attn_config`` arrives inside Flash's text_config: a row per key)."""
    cache = SnapshotCache(tmp_path / "cache")
    sources = Sources(HubSettings(endpoint=example_hub.endpoint), cache)
    options = MetricsOptions(kv_dtype="fp8", context=1_048_576)
    cold = render(run_diff("zai-org/GLM-5.3", "zai-org/GLM-5.3-Flash", sources, options))
    example_hub.clear()
    warm = render(run_diff("zai-org/GLM-5.3", "zai-org/GLM-5.3-Flash", sources, options))
    assert len(example_hub.log) == 2  # where each revision points now: the snapshots came from the cache
    assert warm == cold
    assert "`text_config.linear_attn_config.full_attn_layers`" in warm
