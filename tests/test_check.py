"""hubdiff check and baselines: claims at their stated precision, validation with file:line, updates."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from hubdiff._baseline import load_baseline
from hubdiff.errors import BaselineError
from hubdiff.testing import CommitSpec, RepoSpec

REPO_BASELINES = Path(__file__).parent.parent / "baselines"


def hubdiff(*args, endpoint, cwd=None):
    env = {**os.environ, "HF_ENDPOINT": endpoint}
    return subprocess.run(
        [sys.executable, "-m", "hubdiff", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )


def test_embedded_baselines_pass(example_hub, tmp_path):
    result = hubdiff(
        "check",
        str(REPO_BASELINES / "glm-5.yaml"),
        "--format",
        "text",
        "--cache-dir",
        str(tmp_path / "c"),
        "--summary",
        str(tmp_path / "summary.md"),
        endpoint=example_hub.endpoint,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "zai-org/GLM-5.3-Flash@main: unchanged at 600a281f210c." in result.stdout
    flash = result.stdout.split("zai-org/GLM-5.3-Flash@main")[1]
    # holding claims are counted, not listed, but for those on an unverified figure: the Flash's
    # model_type is none transformers ships, so no sweep proved its layout
    assert "  claims  17 of 17 hold" in flash
    listed = [line for line in flash.splitlines() if line.strip().startswith("claim ")]
    assert listed and all("holds (on an unverified figure: model_type glm5_flash" in x for x in listed)
    assert "✅" in (tmp_path / "summary.md").read_text()


def test_a_wrong_claim_fails_with_stated_and_measured(example_hub, example_cache, tmp_path):
    example_cache(tmp_path / "c")
    data = yaml.safe_load((REPO_BASELINES / "glm-5.yaml").read_text())
    data["repos"]["zai-org/GLM-5.3-Flash"]["claims"]["kv_bytes_per_token"] = "5.0 KB"
    path = tmp_path / "glm-5.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    line = next(
        i for i, text in enumerate(path.read_text().splitlines(), 1) if "kv_bytes_per_token: 5.0 KB" in text
    )
    result = hubdiff(
        "check",
        str(path),
        "--cache-dir",
        str(tmp_path / "c"),
        "--output",
        str(tmp_path / "r.md"),
        "--comment",
        str(tmp_path / "comment.md"),
        endpoint=example_hub.endpoint,
    )
    assert result.returncode == 1, result.stderr
    report = (tmp_path / "r.md").read_text()
    assert (
        f"| `kv_bytes_per_token` | `{path}:{line}` | `5.0 KB` → 5.98 KB (5,984) | `6.0 KB` | 4.95 KB ≤ x ≤ 5.05 KB"
        in report
    )
    assert (
        "16 of 17 claims hold (8 on an unverified figure" in report  # the Flash's model_type is unproven
        and "| `routed_experts_per_layer`" not in report.split("### Claims")[-1]  # a holding claim: no row
    )
    comment = (tmp_path / "comment.md").read_text()
    assert comment.startswith("<!-- hubdiff:hubdiff -->") and "Claims that no longer hold" in comment
    assert f"accept the measured figures with `hubdiff baseline accept {path}`" in comment  # the Hub matches


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda d: d.update(famly="x"), "famly: unknown key"),
        (
            lambda d: d["repos"]["zai-org/GLM-5"].update(sha="abc"),
            "repos.zai-org/GLM-5.sha: must be a 40-character",
        ),
        (
            lambda d: d["repos"]["zai-org/GLM-5"]["claims"].update(kv_bytes_per_token="6.0 M"),
            "claims.kv_bytes_per_token: claim kv_bytes_per_token: unit 'M' does not fit a bytes figure",
        ),
        (lambda d: d["repos"]["zai-org/GLM-5"]["claims"].update(kv_bytez=1), "unknown figure 'kv_bytez'"),
        (
            lambda d: d["repos"]["zai-org/GLM-5"].update(metrics_options={"kv_dtype": "fp7"}),
            "unknown KV dtype",
        ),
        (lambda d: d["repos"]["zai-org/GLM-5"].update(allow_changes="x"), "must be a list of config keys"),
    ],
    ids=["unknown-key", "bad-sha", "wrong-unit", "unknown-figure", "bad-option", "wrong-type"],
)
def test_baseline_validation_names_file_and_line(tmp_path, edit, problem):
    data = yaml.safe_load((REPO_BASELINES / "glm-5.yaml").read_text())
    edit(data)
    path = tmp_path / "b.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(BaselineError) as info:
        load_baseline(path)
    message = str(info.value)
    assert message.startswith(f"{path}:") and problem in message
    line = int(message.split(":")[1])
    key = problem.split(":")[0].split(".")[-1].strip() if ":" in problem else None
    if key and key.isidentifier():
        assert key in path.read_text().splitlines()[line - 1]


def test_cli_exit_2_on_a_broken_baseline(tmp_path):
    path = tmp_path / "b.yaml"
    path.write_text("family: x\nrepos:\n  org/m:\n    claims:\n      kv_bytes_per_token: [1]\n")
    result = hubdiff("check", str(path), endpoint="http://127.0.0.1:9")
    assert result.returncode == 2
    assert result.stderr.startswith(f"hubdiff: {path}:5: repos.org/m.claims.kv_bytes_per_token:")


def test_init_change_update_cycle_keeps_claims_and_notes(hub, tmp_path):
    tensors = [(f"model.layers.{i}.self_attn.q_proj.weight", "BF16", (64, 64)) for i in range(4)]
    cfg = b'{"hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4, "vocab_size": 100}'
    hub.add(RepoSpec("org/m", [CommitSpec({"config.json": cfg}, tensors)]))
    cache = ["--cache-dir", str(tmp_path / "c")]
    run = lambda *a: hubdiff(*a, *cache, endpoint=hub.endpoint, cwd=tmp_path)  # noqa: E731
    assert run("baseline", "init", "org/m", "--family", "fam").returncode == 0
    path = tmp_path / "baselines" / "fam.yaml"
    data = yaml.safe_load(path.read_text())
    data["notes"] = "hand-written notes"
    data["repos"]["org/m"]["claims"] = {"layers": 4}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    assert run("check").returncode == 0
    new_cfg = cfg.replace(b'"vocab_size": 100', b'"vocab_size": 100, "transformers_version": "9"')
    hub.push("org/m", CommitSpec({"config.json": new_cfg}, tensors, title="cosmetic"))
    assert run("check").returncode == 0  # transformers_version is allowed to change by default
    wider = [(n, d, (128, 64)) for n, d, _ in tensors]
    hub.push(
        "org/m",
        CommitSpec(
            {"config.json": new_cfg.replace(b'"hidden_size": 64', b'"hidden_size": 128')},
            wider,
            title="wider",
        ),
    )
    changed = run("check", "--format", "text")
    assert changed.returncode == 1
    assert "hidden_size: 64 -> 128" in changed.stdout
    assert (
        "reshape model.layers.{0-3}.self_attn.q_proj.weight: BF16 [64, 64] -> BF16 [128, 64]"
        in changed.stdout
    )
    before = path.read_text()
    hub.add_fault(
        __import__("hubdiff.testing", fromlist=["Fault"]).Fault("/api/models/org/m", status=404, times=1)
    )
    failed = run("baseline", "update", "--retries", "0")
    assert failed.returncode == 3 and path.read_text() == before  # a failed run leaves the baseline as it was
    assert run("baseline", "update").returncode == 0
    after = yaml.safe_load(path.read_text())
    assert after["notes"] == "hand-written notes" and after["repos"]["org/m"]["claims"] == {"layers": 4}
    assert after["repos"]["org/m"]["sha"] == hub.repos["org/m"].branches["main"]
    assert run("check").returncode == 0
    shutil.rmtree(tmp_path / "c")


def test_a_claim_on_an_unverified_figure_says_so(hub, tmp_path):
    """A config holding a key that may size something hubdiff does not model: the claim may hold, but
    the check says that it rests on an unverified figure, in text and in markdown."""
    config = {
        "model_type": "brand_new_arch",
        "hidden_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": 100,
        "intermediate_size": 128,
        "max_position_embeddings": 4096,
        "tie_word_embeddings": False,
        "num_memory_slots": 16,  # a new key that may size something: not understood
    }
    tensors = [("model.embed_tokens.weight", "BF16", (100, 64))]
    hub.add(RepoSpec("org/new", [CommitSpec({"config.json": json.dumps(config).encode()}, tensors)]))
    init = hubdiff(
        "baseline",
        "init",
        "org/new",
        "--family",
        "new",
        "--baseline-dir",
        str(tmp_path),
        endpoint=hub.endpoint,
    )
    assert init.returncode == 0, init.stderr
    path = tmp_path / "new.yaml"
    data = yaml.safe_load(path.read_text())
    data["repos"]["org/new"]["claims"] = {"layers": 2}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    text = hubdiff("check", str(path), "--format", "text", endpoint=hub.endpoint)
    assert text.returncode == 0, text.stdout + text.stderr
    expected = "claim   layers: stated 2, measured 2: holds (on an unverified figure: num_memory_slots not understood"
    assert expected in text.stdout
    markdown = hubdiff("check", str(path), "--output", str(tmp_path / "r.md"), endpoint=hub.endpoint)
    assert markdown.returncode == 0, markdown.stderr
    report = (tmp_path / "r.md").read_text()
    assert "1 of 1 claims hold (1 on an unverified figure: `layers`)." in report
    assert "**Unverified figures for org/new" in report


@pytest.mark.parametrize(
    ("name", "stated", "measured", "written"),
    [
        ("kv_bytes_per_token", "5.0 KB", 5984, "6.0 KB"),
        ("kv_bytes_per_token", "47,616", 5984, "5,984"),
        ("routed_expert_params", "25.17M", 25_165_824, "25.17M"),
        (
            "vision_tower_params",
            {"value": "0.40B", "tolerance": "1%"},
            561_250_000,
            {"value": "0.56B", "tolerance": "1%"},
        ),
        ("layers", 78, 45.2, 45),
        ("kv_bytes_per_token", 6.0, 5.984, 6.0),
    ],
)
def test_a_failing_claim_is_restated_the_way_it_was_written(name, stated, measured, written):
    from hubdiff._compare.claims import Claim, restated

    assert restated(Claim(name, stated), measured) == written


def test_a_baseline_edited_by_hand_is_not_called_unchanged(example_hub, example_cache, tmp_path):
    example_cache(tmp_path / "c")
    data = yaml.safe_load((REPO_BASELINES / "glm-5.yaml").read_text())
    data["repos"] = {"zai-org/GLM-5": data["repos"]["zai-org/GLM-5"]}
    data["repos"]["zai-org/GLM-5"]["config"]["vocab_size"] = 1
    path = tmp_path / "glm-5.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    result = hubdiff(
        "check",
        str(path),
        "--format",
        "text",
        "--cache-dir",
        str(tmp_path / "c"),
        endpoint=example_hub.endpoint,
    )
    assert result.returncode == 1
    assert result.stdout.startswith(
        "zai-org/GLM-5@main: the recorded commit 000a66bceb37 differs from the baseline; "
        "1 architectural config change (vocab_size)"
    )


def test_a_recorded_config_gets_the_hubs_bounds(tmp_path):
    """A baseline is a file people edit: its recorded config is bounded like one from the Hub."""
    data = yaml.safe_load((REPO_BASELINES / "glm-5.yaml").read_text())
    data["repos"]["zai-org/GLM-5.3"]["config"]["num_hidden_layers"] = 10**9
    path = tmp_path / "glm-5.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(BaselineError, match=r"glm-5\.yaml:\d+: .*config.*num_hidden_layers is 1,000,000,000"):
        load_baseline(path)


def test_check_of_a_repo_that_is_gone_says_so_and_exits_3(hub, tmp_path):
    path = tmp_path / "old.yaml"
    path.write_text(yaml.safe_dump({"family": "old", "repos": {"org/deleted": {"revision": "main"}}}))
    result = hubdiff("check", str(path), "--cache-dir", str(tmp_path / "c"), endpoint=hub.endpoint)
    assert result.returncode == 3, result.stdout + result.stderr
    assert (
        "org/deleted@main: vanished: repository not found (deleted, renamed, or made private" in result.stdout
    )


def test_repos_are_checked_side_by_side_and_reported_in_baseline_order(hub, tmp_path):
    from hubdiff._source import HubSettings, Sources
    from hubdiff._source.cache import SnapshotCache
    from hubdiff.jobs import run_check
    from hubdiff.testing import Fault

    tensors = [(f"model.layers.{i}.mlp.up_proj.weight", "BF16", (8, 8)) for i in range(2)]
    cfg = b'{"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10}'
    for repo in ("org/a", "org/b"):
        hub.add(RepoSpec(repo, [CommitSpec({"config.json": cfg}, tensors)]))
        init = hubdiff("baseline", "init", repo, "--family", "fam", endpoint=hub.endpoint, cwd=tmp_path)
        assert init.returncode == 0, init.stderr
    hub.clear()
    hub.add_fault(Fault("/api/models/org/a/revision/", delay_s=1.0, times=1))  # org/a's first answer is slow
    sources = Sources(HubSettings(endpoint=hub.endpoint, retries=0), SnapshotCache(tmp_path / "c"))
    report = run_check([tmp_path / "baselines" / "fam.yaml"], sources)
    assert [r.title for r in report.results] == ["org/a@main", "org/b@main"]
    assert all(r.status == "ok" for r in report.results)
    log = hub.log  # in the order requests arrived, each with its arrival time
    slow_a = next(e for e in log if "/org/a/revision/" in e.path)
    # org/b was read while org/a's answer was held back for its second
    assert any("org/b" in e.path and slow_a.at < e.at < slow_a.at + 1.0 for e in log)


def test_pauses_of_the_collector_side_by_side_leave_it_as_it_was():
    import gc

    from hubdiff._gc import gc_paused
    from hubdiff._threads import each_in_threads

    def pause(_: int) -> bool:
        with gc_paused():
            return gc.isenabled()

    assert gc.isenabled()
    for _ in range(20):  # without the count, a pause ending under another one left it off
        assert not any(each_in_threads(pause, range(64), threads=4).values())
        assert gc.isenabled()


def test_the_umask_is_read_without_being_changed():
    from hubdiff._files import _umask

    before = os.umask(0o027)
    try:
        assert _umask() == 0o027
    finally:
        os.umask(before)
