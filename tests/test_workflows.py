"""The GitHub Actions workflows pass actionlint and zizmor (offline), pin actions, and keep PR content out of scripts."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

WORKFLOWS = sorted((Path(__file__).parent.parent / ".github" / "workflows").glob("*.yml"))


def test_the_four_workflows_exist():
    assert [p.name for p in WORKFLOWS] == ["checks.yml", "ci.yml", "comment.yml", "watch.yml"]


def load(name):
    workflow = yaml.safe_load((WORKFLOWS[0].parent / name).read_text())
    return workflow, (workflow[True] if True in workflow else workflow["on"])  # YAML 1.1 reads "on" as true


def test_fork_pull_requests_are_checked_read_only_and_commented_from_workflow_run():
    checks, on_checks = load("checks.yml")
    assert list(on_checks) == ["pull_request"]  # never pull_request_target: a fork's code runs here
    job = checks["jobs"]["checks"]
    assert job["permissions"] == {"contents": "read"}
    steps = {s.get("name", s.get("uses", "")): s for s in job["steps"]}
    assert steps["Install hubdiff and pytest"]["run"] == "pip install . pytest"  # pytest checks/ needs pytest
    assert any("upload-artifact" in name for name in steps)
    comment, on_comment = load("comment.yml")
    assert on_comment == {"workflow_run": {"workflows": ["checks"], "types": ["completed"]}}
    job = comment["jobs"]["comment"]
    assert job["permissions"] == {"actions": "read", "pull-requests": "write"}
    for step in job["steps"]:
        assert "ref" not in step.get("with", {})  # the default branch, never the pull request's head
        assert "pip install" not in step.get("run", "")  # nothing from the pull request is installed or run


@pytest.mark.parametrize("tool", ["actionlint", "zizmor"])
def test_linters_pass(tool):
    exe = shutil.which(tool)
    assert exe, f"{tool} is installed by the test extra"
    args = [exe, *map(str, WORKFLOWS)] if tool == "actionlint" else [exe, "--offline", *map(str, WORKFLOWS)]
    result = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_actions_pinned_and_no_expressions_in_scripts(path):
    workflow = yaml.safe_load(path.read_text())
    assert workflow["permissions"] == {}  # least privilege: each job asks for what it needs
    for job in workflow["jobs"].values():
        assert "permissions" in job
        for step in job["steps"]:
            if "uses" in step:
                assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", step["uses"]), step["uses"]
            if "run" in step:
                assert "${{" not in step["run"], step["run"]


def test_watch_is_scheduled_and_serialised():
    watch, triggers = load("watch.yml")
    assert "schedule" in triggers and "workflow_dispatch" in triggers
    assert set(triggers["workflow_dispatch"]["inputs"]) == {
        "record",
        "family",
    }  # a fresh fork records a first baseline
    assert watch["concurrency"]["cancel-in-progress"] is False
    assert watch["jobs"]["watch"]["strategy"]["matrix"]["shard"] == [0, 1, 2, 3]
