"""The GitHub Actions workflows pass actionlint and zizmor (offline), pin actions, and keep PR content out of scripts."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

WORKFLOWS = sorted((Path(__file__).parent.parent / ".github" / "workflows").glob("*.yml"))


def test_the_three_workflows_exist():
    assert [p.name for p in WORKFLOWS] == ["checks.yml", "ci.yml", "watch.yml"]


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
    watch = yaml.safe_load((WORKFLOWS[2]).read_text())
    triggers = watch[True] if True in watch else watch["on"]  # YAML 1.1 reads "on" as true
    assert "schedule" in triggers and "workflow_dispatch" in triggers
    assert watch["concurrency"]["cancel-in-progress"] is False
    assert watch["jobs"]["watch"]["strategy"]["matrix"]["shard"] == [0, 1, 2, 3]
