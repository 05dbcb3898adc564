"""action.yml, hubdiff as a step of another repository's workflow: the README's ten-line workflow run in
the Actions double (tests/actions_double.py) with the real hubdiff CLI against the Hub replica, the token
reaching the hubdiff step alone; its pins and zizmor's audit held as the workflows' are
(tests/test_workflows.py). The watch form runs in tests/test_season.py, through watch.yml's ``uses: ./``."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from hubdiff.testing import CommitSpec, RepoSpec
from tests.actions_double import Runner
from tests.gh_double import GitHubDouble
from tests.test_workflows import PINS

ROOT = Path(__file__).parent.parent
ACTION = ROOT / "action.yml"
TOKEN = "hf_reader"  # the replica's token that may read gated repos (tests/conftest.py)


def ten_lines() -> str:
    """The workflow the README's "Adopting hubdiff in ten lines" shows, as written there."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Adopting hubdiff in ten lines", 1)[1].split("\n#", 1)[0]
    return re.findall(r"```yaml\n(.*?)```", section, re.S)[0]


def commit(hidden: int) -> CommitSpec:
    config = {"hidden_size": hidden, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100}
    tensors = [(f"model.layers.{i}.self_attn.q_proj.weight", "BF16", (hidden, hidden)) for i in range(2)]
    return CommitSpec({"config.json": json.dumps(config).encode()}, tensors)


@pytest.fixture
def adopter(hub, tmp_path):
    """A repository of analyses: one baseline of a gated repo, and the README's workflow, nothing else of
    hubdiff's; the runner maps ``OWNER/hubdiff`` to this clone, as GitHub fetches the tag named."""
    hub.add(RepoSpec("org/gated", [commit(32)], gated=True))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    recorded = subprocess.run(
        [sys.executable, "-m", "hubdiff", "baseline", "init", "org/gated", "--family", "fam"],
        cwd=scratch, capture_output=True, text=True, timeout=120,
        env={**os.environ, "HF_ENDPOINT": hub.endpoint, "HF_TOKEN": TOKEN, "HUBDIFF_CACHE": str(tmp_path / "c")},
    )  # fmt: skip
    assert recorded.returncode == 0, recorded.stderr
    github = GitHubDouble(tmp_path / "github")
    github.commit({"baselines/fam.yaml": (scratch / "baselines" / "fam.yaml").read_text()}, "watch fam")
    workflows = tmp_path / "workflows"
    workflows.mkdir()
    (workflows / "hubdiff.yml").write_text(ten_lines())
    # no token but the one the workflow gives; the cache a runner starts with, empty
    env = {"HF_ENDPOINT": hub.endpoint, "HF_TOKEN": "", "HUBDIFF_CACHE": str(tmp_path / "runner-cache")}
    return Runner(workflows, github, tmp_path / "runners", env=env, actions={"OWNER/hubdiff": ROOT})


def test_the_readme_workflow_is_ten_lines_that_use_the_action():
    text = ten_lines()
    assert len(text.strip().splitlines()) == 10
    workflow = yaml.safe_load(text)
    steps = workflow["jobs"]["hubdiff"]["steps"]
    assert steps[-1]["uses"] == "OWNER/hubdiff@v1"
    assert "env" not in workflow and "env" not in workflow["jobs"]["hubdiff"]  # the token goes in as an input
    assert set(steps[-1]["with"]) <= set(yaml.safe_load(ACTION.read_text())["inputs"])


def test_the_token_reaches_the_step_that_runs_hubdiff_and_no_other():
    steps = yaml.safe_load(ACTION.read_text())["runs"]["steps"]
    holding = [s.get("id") for s in steps if "inputs.hf-token" in json.dumps(s)]
    assert holding == ["hubdiff"]
    (hubdiff,) = [s for s in steps if s.get("id") == "hubdiff"]
    assert hubdiff["env"]["HF_TOKEN"] == "${{ inputs.hf-token }}"


def test_nothing_changed_is_green_with_the_report_and_every_request_carried_the_token(adopter, hub):
    before = len(hub.log)
    run = adopter.run("hubdiff.yml", "hubdiff", secrets={"HF_TOKEN": TOKEN})
    assert run.conclusion == "success", run.log
    step = run.steps[-1]
    assert step.outputs["status"] == "0" and step.outputs["report"] == "reports/check.md"
    assert "hubdiff: wrote report reports/check.md" in step.stderr
    report = next(adopter.root.glob("run-*/workspace/reports/check.md")).read_text()
    assert "org/gated" in report
    asked = [e for e in hub.log[before:] if e.host == "hub"]  # the CDN's signed URLs are never sent it
    assert any(e.path.startswith("/api/models/org/gated") for e in asked)
    assert {e.authorization for e in asked} == {f"Bearer {TOKEN}"}


def test_a_change_on_the_hub_is_red_and_says_why(adopter, hub):
    hub.push("org/gated", commit(64))
    run = adopter.run("hubdiff.yml", "hubdiff", secrets={"HF_TOKEN": TOKEN})
    assert run.conclusion == "failure"
    step = run.steps[-1]
    assert step.outputs["status"] == "1"
    assert "::error::hubdiff check exited with 1 (1: changes beyond tolerance or broken claims" in step.stdout
    report = next(adopter.root.glob("run-*/workspace/reports/check.md")).read_text()
    assert "hidden_size" in report


def test_without_the_token_the_gated_repo_is_unreadable_and_red(adopter, hub):
    before = len(hub.log)
    run = adopter.run("hubdiff.yml", "hubdiff", secrets={})
    assert run.conclusion == "failure"
    assert run.steps[-1].outputs["status"] == "3"  # the Hub could not be read
    report = next(adopter.root.glob("run-*/workspace/reports/check.md")).read_text()
    assert "org/gated@main: gated: the Hub refuses this token its files" in report
    assert {e.authorization for e in hub.log[before:]} == {None}


def test_the_action_pins_its_actions_and_passes_zizmor():
    lines = [line for line in ACTION.read_text().splitlines() if re.match(r"\s*(- )?uses: ", line)]
    assert lines
    for line in lines:
        action, sha, tag = re.fullmatch(
            r"\s*(?:- )?uses: ([\w./-]+)@([0-9a-f]{40}) # (v[\d.]+)", line
        ).groups()
        assert (sha, tag) == PINS[action], line
    spec = yaml.safe_load(ACTION.read_text())
    for step in spec["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), step  # inputs reach scripts as environment variables
    exe = shutil.which("zizmor")
    assert exe, "zizmor is installed by the test extra"
    result = subprocess.run([exe, "--offline", str(ACTION)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_action_passes_on_every_output_the_watch_writes():
    from hubdiff.watch import WatchOutcome, github_outputs

    declared = set(yaml.safe_load(ACTION.read_text())["outputs"])
    assert declared == {"status", "report", *github_outputs(WatchOutcome())}
