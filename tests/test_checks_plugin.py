"""`pytest checks/` as an analyst runs it: one test per baseline and claim, readable failures, updates."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).parent.parent


def pytest_checks(tmp_path, endpoint, *args):
    env = {**os.environ, "HUBDIFF_CACHE": str(tmp_path / "cache")}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(ROOT / "checks"),
            "-p",
            "no:cacheprovider",
            "--hub-endpoint",
            endpoint,
            "--baseline-dir",
            str(tmp_path / "baselines"),
            *args,
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )


def copy_baselines(tmp_path, edit=None):
    (tmp_path / "baselines").mkdir()
    path = tmp_path / "baselines" / "glm-5.yaml"
    shutil.copy(ROOT / "baselines" / "glm-5.yaml", path)
    if edit:
        data = yaml.safe_load(path.read_text())
        edit(data)
        path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    return path


def test_ids_are_readable_and_embedded_baselines_pass(example_hub, tmp_path):
    copy_baselines(tmp_path)
    collected = pytest_checks(tmp_path, example_hub.endpoint, "--collect-only", "-q")
    ids = [line.split("[", 1)[1].rstrip("]") for line in collected.stdout.splitlines() if "[" in line]
    assert (
        "glm-5.3-flash::kv_bytes_per_token" in ids
        and "glm-5.3::layout" in ids
        and "glm-5::main_params" in ids
    )
    assert len(ids) == 3 + 32
    run = pytest_checks(tmp_path, example_hub.endpoint, "-q")
    assert run.returncode == 0, run.stdout
    assert "35 passed" in run.stdout


def test_a_wrong_claim_fails_readably_and_update_fixes_it(example_hub, example_cache, tmp_path):
    example_cache(tmp_path / "cache")  # what follows a read (the ids test above reads cold)

    def wrong(data):
        data["repos"]["zai-org/GLM-5.3-Flash"]["claims"]["kv_bytes_per_token"] = "5.0 KB"
        data["repos"]["zai-org/GLM-5.3-Flash"]["claims"]["vision_tower_params"] = {
            "value": "0.40B",
            "tolerance": "1%",
        }

    path = copy_baselines(tmp_path, wrong)
    run = pytest_checks(tmp_path, example_hub.endpoint, "-q", "-k", "flash")
    assert run.returncode == 1
    out = run.stdout
    assert "glm-5.3-flash::kv_bytes_per_token: the claim does not hold" in out
    assert "claim:    kv_bytes_per_token: 5.0 KB" in out and "checked:  4.95 KB ≤ x ≤ 5.05 KB" in out
    assert "measured: 5.98 KB (5,984)" in out
    assert "checked:  0.396B ≤ x ≤ 0.404B" in out  # the claim's own unit, not 3.96e+08
    assert "Traceback" not in out and "AssertionError" not in out
    assert "2 failed" in out
    # holding claims are their own passing tests, which warn only that the Flash's figures are unverified
    assert "claims hold" not in out
    assert all("holds, but rests on an unverified figure" in x for x in out.splitlines() if "holds" in x)
    assert "5,984 vs 5,984" not in out and "(1.0x)" not in out  # an unchanged figure is said once
    assert "unused claim (no test ran it)" not in out  # -k chose a subset: the others are not "unused"
    hint = next(line for line in out.splitlines() if "re-record after review with: pytest " in line)
    assert hint.endswith(f"--baseline-dir {tmp_path / 'baselines'} -q -k flash --update-baselines")
    assert "35 repo(s) checked" not in out and "3 repo(s) checked" not in out  # -k flash: one repo
    assert "1 repo(s) checked: 0 could not be read; 17 claim(s): 17 checked, 0 not checked" in out
    assert "2 failure(s) a re-record can fix, 0 update(s) written, 0 unused claim(s)" in out
    path.write_text("# the founding comparison's figures\n" + path.read_text())
    fixed = pytest_checks(tmp_path, example_hub.endpoint, "-q", "--update-baselines")
    assert fixed.returncode == 0, fixed.stdout
    assert path.read_text().startswith(
        "# the founding comparison's figures\nfamily: glm-5\n"
    )  # comments kept
    claims = yaml.safe_load(path.read_text())["repos"]["zai-org/GLM-5.3-Flash"]["claims"]
    assert claims["kv_bytes_per_token"] == "6.0 KB"
    assert claims["vision_tower_params"] == {"value": "0.56B", "tolerance": "1%"}
    assert pytest_checks(tmp_path, example_hub.endpoint, "-q").returncode == 0


def test_a_changed_repo_fails_its_layout_test_and_stale_patterns_are_reported(hub, tmp_path):
    from hubdiff._baseline.record import entry_for
    from hubdiff._baseline.store import write_baseline
    from hubdiff._source import HubSettings, Sources, SourceSpec
    from hubdiff._source.cache import SnapshotCache
    from hubdiff.testing import CommitSpec, RepoSpec

    tensors = [(f"model.layers.{i}.self_attn.q_proj.weight", "BF16", (8, 8)) for i in range(3)]
    cfg = b'{"hidden_size": 8, "num_hidden_layers": 3, "num_attention_heads": 2, "vocab_size": 10}'
    hub.add(RepoSpec("org/m", [CommitSpec({"config.json": cfg}, tensors)]))
    sources = Sources(HubSettings(endpoint=hub.endpoint), SnapshotCache(tmp_path / "c"))
    snapshot = sources.open(SourceSpec("hub", "org/m", "main"))
    (tmp_path / "baselines").mkdir()
    write_baseline(
        tmp_path / "baselines" / "m.yaml",
        {"family": "m", "repos": {"org/m": entry_for(snapshot)}},
    )
    hub.push("org/m", CommitSpec({"config.json": cfg}, tensors[:2], title="drop a layer's tensor"))
    run = pytest_checks(tmp_path, hub.endpoint, "-q")
    assert run.returncode == 1
    assert "m::layout: the Hub no longer matches" in run.stdout
    assert "stale: " in run.stdout and "1 recorded tensor patterns no longer exist" in run.stdout


def test_hub_offline_runs_from_the_cache(hub, tmp_path):
    from hubdiff._baseline.record import entry_for
    from hubdiff._baseline.store import write_baseline
    from hubdiff._source import HubSettings, Sources, SourceSpec
    from hubdiff._source.cache import SnapshotCache
    from hubdiff.testing import CommitSpec, RepoSpec

    tensors = [(f"model.layers.{i}.self_attn.q_proj.weight", "BF16", (8, 8)) for i in range(2)]
    cfg = b'{"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10}'
    hub.add(RepoSpec("org/m", [CommitSpec({"config.json": cfg}, tensors)]))
    snapshot = Sources(HubSettings(endpoint=hub.endpoint), SnapshotCache(tmp_path / "c")).open(
        SourceSpec("hub", "org/m", "main")
    )
    (tmp_path / "baselines").mkdir()
    entry = entry_for(snapshot, previous={"claims": {"layers": 2}})
    write_baseline(tmp_path / "baselines" / "m.yaml", {"family": "m", "repos": {"org/m": entry}})
    assert pytest_checks(tmp_path, hub.endpoint, "-q").returncode == 0  # fills the cache
    endpoint = hub.endpoint
    hub.stop()
    offline = pytest_checks(tmp_path, endpoint, "-q", "--hub-offline")  # the same Hub, now down
    assert offline.returncode == 0, offline.stdout
    assert "2 passed" in offline.stdout
    elsewhere = pytest_checks(tmp_path, "http://127.0.0.1:9", "-q", "--hub-offline")  # another Hub's cache
    assert elsewhere.returncode != 0 and "offline: no cached sha for this revision" in elsewhere.stdout


def test_a_missing_or_empty_baseline_dir_fails_instead_of_checking_nothing(tmp_path):
    run = pytest_checks(tmp_path, "http://127.0.0.1:9", "-q")  # tmp_path/baselines does not exist
    assert run.returncode != 0, run.stdout
    assert f"--baseline-dir {tmp_path / 'baselines'}: no such folder" in run.stdout
    (tmp_path / "baselines").mkdir()
    run = pytest_checks(tmp_path, "http://127.0.0.1:9", "-q")
    assert run.returncode != 0 and "no baseline files (*.yaml) in it" in run.stdout


def test_a_bad_unit_is_one_file_line_message(tmp_path):
    path = copy_baselines(
        tmp_path, lambda d: d["repos"]["zai-org/GLM-5"]["claims"].update(kv_bytes_per_token="6.0 M")
    )
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "kv_bytes_per_token: 6.0 M" in t)
    run = pytest_checks(tmp_path, "http://127.0.0.1:9", "-q")
    assert run.returncode != 0
    assert (
        f"{path}:{line}: repos.zai-org/GLM-5.claims.kv_bytes_per_token: claim kv_bytes_per_token: unit 'M'"
        in (run.stdout)
    )
    assert "Traceback" not in run.stdout and "pluggy" not in run.stdout and len(run.stdout.splitlines()) < 15


def test_a_baseline_whose_repos_are_gone_is_reported_stale(hub, tmp_path):
    (tmp_path / "baselines").mkdir()
    entry = {"revision": "main", "sha": "0" * 40, "claims": {"layers": 2, "kv_bytes_per_token": 512}}
    path = tmp_path / "baselines" / "old.yaml"
    path.write_text(yaml.safe_dump({"family": "old", "repos": {"org/deleted": entry}}, sort_keys=False))
    run = pytest_checks(tmp_path, hub.endpoint, "-q", "-rs", "--hub-endpoint", hub.endpoint)
    assert run.returncode == 1
    assert (
        "deleted::layout: could not be read: org/deleted@main: vanished: repository not found" in run.stdout
    )
    assert f"the repo is gone: remove it from {path}:3, or point it at its new name" in run.stdout
    assert "1 failed, 2 skipped" in run.stdout  # one failure per cause: its claims are not failed again
    assert "deleted::layers: org/deleted could not be read (see deleted::layout)" in run.stdout
    assert "1 repo(s) checked: 1 could not be read; 2 claim(s): 0 checked, 2 not checked" in run.stdout
    assert "--update-baselines" not in run.stdout  # re-recording cannot bring a repo back
    assert "stale: " in run.stdout and "every repo of this file is gone" in run.stdout


def test_a_claim_on_an_unverified_figure_warns(hub, tmp_path):
    """The claim holds, so the test passes, but pytest's warnings summary says what it rests on."""
    import json

    from hubdiff.testing import CommitSpec, RepoSpec

    config = {
        "hidden_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "vocab_size": 100,
        "max_position_embeddings": 4096,
        "tie_word_embeddings": False,
        "num_memory_slots": 16,
    }
    tensors = [("model.embed_tokens.weight", "BF16", (100, 64))]
    hub.add(RepoSpec("org/new", [CommitSpec({"config.json": json.dumps(config).encode()}, tensors)]))
    (tmp_path / "baselines").mkdir()
    init = subprocess.run(
        [sys.executable, "-m", "hubdiff", "baseline", "init", "org/new", "--family", "new"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "HF_ENDPOINT": hub.endpoint, "HUBDIFF_CACHE": str(tmp_path / "cache")},
        timeout=300,
    )
    assert init.returncode == 0, init.stderr
    path = tmp_path / "baselines" / "new.yaml"
    data = yaml.safe_load(path.read_text())
    data["repos"]["org/new"]["claims"] = {"layers": 2}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    result = pytest_checks(tmp_path, hub.endpoint, "-q")
    assert result.returncode == 0, result.stdout
    assert "UnverifiedFigure" in result.stdout
    assert (
        "new::layers: holds, but rests on an unverified figure: num_memory_slots not understood"
        in result.stdout
    )


def test_an_unreachable_hub_is_said_once_and_ends_hub_access(tmp_path):
    """No network: the first repo says so with the way out; the others are not tried again."""
    import socket
    import time

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    copy_baselines(tmp_path)
    start = time.monotonic()
    result = pytest_checks(tmp_path, closed, "-q")
    assert time.monotonic() - start < 120
    assert result.returncode == 1
    assert result.stdout.count("cannot connect to") >= 2
    assert result.stdout.count("--offline reads from the snapshot cache") >= 1
    assert "not tried: " in result.stdout
