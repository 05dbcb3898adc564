"""hubdiff watch over the replica: few requests, failure isolation, updates, GitHub outputs."""

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from hubdiff._baseline.record import entry_for
from hubdiff._baseline.store import write_baseline
from hubdiff._render.headline import headline
from hubdiff._source import HubSettings, Sources, SourceSpec
from hubdiff._source.cache import SnapshotCache
from hubdiff.testing import CommitSpec, Fault, RepoSpec
from hubdiff.watch import github_annotations, in_shard, parse_shard, run_watch

CFG = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100}


def small(repo_id, hidden=32, **kw):
    cfg = {**CFG, "hidden_size": hidden}
    tensors = [(f"model.layers.{i}.self_attn.q_proj.weight", "BF16", (hidden, hidden)) for i in range(2)]
    return RepoSpec(repo_id, [CommitSpec({"config.json": json.dumps(cfg).encode()}, tensors)], **kw)


def commit(hidden):
    cfg = {**CFG, "hidden_size": hidden}
    tensors = [(f"model.layers.{i}.self_attn.q_proj.weight", "BF16", (hidden, hidden)) for i in range(2)]
    return CommitSpec({"config.json": json.dumps(cfg).encode()}, tensors, title=f"hidden {hidden}")


def record(
    path: Path, family: str, repos: list[str], sources: Sources, claims=None, stale: set[str] = frozenset()
):
    entries = {}
    for repo in repos:
        snapshot = sources.open(SourceSpec("hub", repo, "main"))
        entry = entry_for(snapshot, previous={"claims": (claims or {}).get(repo, {})})
        if repo in stale:
            entry["sha"] = "0" * 40
        entries[repo] = entry
    write_baseline(path, {"family": family, "notes": "", "repos": entries})


def watch_cli(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """``hubdiff watch ARGS`` as a user (or a workflow) runs it, in ``cwd``."""
    return subprocess.run(
        [sys.executable, "-m", "hubdiff", "watch", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def sources_for(hub, tmp_path):
    return Sources(HubSettings(endpoint=hub.endpoint, retries=0, timeout_s=2), SnapshotCache(tmp_path / "c"))


def test_no_change_poll_of_50_repos_in_3_orgs_costs_one_listing_per_org_page(hub, tmp_path):
    hub.page_size = 20
    repos = [f"org{o}/m{i:02d}" for o in range(3) for i in range(17)][:50]
    for repo in repos:
        hub.add(small(repo))
    sources = sources_for(hub, tmp_path)
    record(tmp_path / "all.yaml", "all", repos, sources)
    hub.clear()
    outcome = run_watch([tmp_path / "all.yaml"], sources, output_dir=tmp_path / "reports")
    assert outcome.checked == 50 and len(outcome.unchanged) == 50 and not outcome.results
    log = hub.log
    assert all(e.path.startswith("/api/models?") for e in log), [e.path for e in log]
    assert len(log) == 3  # 17 (or 16) repos per org, one page of 20 each
    assert not (tmp_path / "reports").exists()
    hub.page_size = 5
    hub.clear()
    run_watch([tmp_path / "all.yaml"], sources, output_dir=tmp_path / "reports")
    assert len(hub.log) == 4 + 4 + 4  # ceil(17 / 5), ceil(17 / 5), ceil(16 / 5) pages


def test_new_commit_between_two_runs_with_gated_and_failing_repos(hub, tmp_path):
    for repo in ("org/a", "org/b"):
        hub.add(small(repo))
    hub.add(small("org/gated", gated=True))
    hub.add(small("other/broken"))
    sources = sources_for(hub, tmp_path)
    path = tmp_path / "fam.yaml"
    record(path, "fam", ["org/a", "org/b"], sources, claims={"org/a": {"layers": 2}})
    data = yaml.safe_load(path.read_text())
    for repo in ("org/gated", "other/broken"):  # recorded at an older sha, so the watch has to read them
        data["repos"][repo] = {**copy.deepcopy(data["repos"]["org/b"]), "sha": "1" * 40}  # no YAML aliases
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    hub.add_fault(Fault("/other/broken/resolve/", status=503))
    before = path.read_text()

    first = run_watch([path], sources, output_dir=tmp_path / "r1")
    assert first.changed_families == []
    failed = {r.title: r.error for r in first.failed}
    assert list(failed) == ["other/broken@main"] and "HTTP 503" in failed["other/broken@main"]
    gated = next(r for r in first.results["fam"] if r.title == "org/gated@main")
    assert gated.status == "gated" and not gated.error  # what the watch saw, not a read failure
    assert "gated: the Hub refuses this token its files" in headline(gated)
    assert "1 gated" in first.summary_line()
    assert sorted(first.unchanged) == ["org/a", "org/b"]
    assert path.read_text() == before and first.exit_code == 3
    assert "pr_body" not in first.files["fam"]  # failures are reported, but there is nothing to propose

    new_sha = hub.push("org/a", commit(64))
    second = run_watch([path], sources, update=True, output_dir=tmp_path / "r2")
    changed = [r for r in second.results["fam"] if r.status == "changed"]
    assert [r.title for r in changed] == ["org/a@main"]
    assert "hidden_size" in headline(changed[0])
    assert second.updated == {"fam": ["org/a"]}
    after = yaml.safe_load(path.read_text())
    assert after["repos"]["org/a"]["sha"] == new_sha and after["repos"]["org/a"]["claims"] == {"layers": 2}
    assert after["repos"]["org/b"] == data["repos"]["org/b"]
    body = Path(second.files["fam"]["pr_body"]).read_text()
    assert body.startswith("<!-- hubdiff:fam -->") and "org/a@main" in body
    assert len(github_annotations(second)) == 3 and second.exit_code == 3


def test_cli_writes_github_outputs_summary_and_annotations(hub, tmp_path):
    hub.add(small("org/a"))
    sources = sources_for(hub, tmp_path)
    baselines = tmp_path / "baselines"
    baselines.mkdir()
    record(baselines / "fam.yaml", "fam", ["org/a"], sources)
    hub.push("org/a", commit(48))
    env = {
        **os.environ,
        "HF_ENDPOINT": hub.endpoint,
        "GITHUB_OUTPUT": str(tmp_path / "out"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "HUBDIFF_CACHE": str(tmp_path / "c"),
    }
    run = watch_cli(tmp_path, env, "--update")
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[0].startswith("::warning file=baselines/fam.yaml,line=")
    outputs = dict(line.split("=", 1) for line in (tmp_path / "out").read_text().splitlines())
    assert outputs["changed"] == "true" and json.loads(outputs["families"]) == ["fam"]
    assert json.loads(outputs["pr_bodies"]) == {"fam": "reports/fam.pr.md"}
    assert outputs["summary"] == "hubdiff watch: 1 repos checked, 1 changed, baselines updated: fam"
    assert "org/a@main" in (tmp_path / "summary.md").read_text()
    assert (tmp_path / "reports" / "fam.md").exists()
    again = watch_cli(tmp_path, env)
    assert again.returncode == 0 and again.stdout.strip().endswith("1 repos checked, 0 changed")


def test_shards_split_families_deterministically():
    families = [f"family-{i}" for i in range(40)]
    shards = [[f for f in families if in_shard(f, (i, 4))] for i in range(4)]
    assert sorted(f for shard in shards for f in shard) == sorted(families) and all(shards)
    assert parse_shard("2/4") == (2, 4) and parse_shard(None) == (0, 1)


def test_annotations_are_capped_at_ten_and_escaped():
    from hubdiff.jobs import RepoResult
    from hubdiff.watch import WatchOutcome

    outcome = WatchOutcome()
    outcome.results["fam"] = [
        RepoResult(
            f"org/m{i}@main",
            error="HTTP 503\nafter 5 attempts, 100%",
            baseline=Path("baselines/fam.yaml"),
            line=10 + i,
        )
        for i in range(15)
    ]
    lines = github_annotations(outcome)
    assert len(lines) == 10
    assert lines[0] == (
        "::error file=baselines/fam.yaml,line=10,title=hubdiff error::org/m0@main: could not be "
        "read (HTTP 503%0Aafter 5 attempts, 100%25)"
    )
    assert lines[-1] == "::warning ::6 more hubdiff findings in the job summary"


def test_two_updates_at_once_leave_a_valid_baseline(hub, tmp_path):
    from hubdiff._baseline import load_baseline

    for repo in ("org/a", "org/b"):
        hub.add(small(repo))
    sources = sources_for(hub, tmp_path)
    path = tmp_path / "fam.yaml"
    record(path, "fam", ["org/a", "org/b"], sources, claims={"org/a": {"layers": 2}})
    sha_a, sha_b = hub.push("org/a", commit(64)), hub.push("org/b", commit(96))
    env = {**os.environ, "HF_ENDPOINT": hub.endpoint, "HUBDIFF_CACHE": str(tmp_path / "c")}
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "hubdiff", "baseline", "update", str(path), "--repo", repo],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for repo in ("org/a", "org/b")
    ]
    assert [r.wait(timeout=120) for r in runs] == [0, 0]
    recorded = {r.repo: r for r in load_baseline(path).repos}
    assert recorded["org/a"].sha == sha_a and recorded["org/b"].sha == sha_b  # neither write was lost
    assert recorded["org/a"].claims[0].name == "layers"
    assert not list(tmp_path.glob(".fam.yaml.*.tmp"))
