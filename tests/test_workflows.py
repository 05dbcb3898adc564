"""The GitHub Actions workflows pass actionlint and zizmor (offline), pin current actions, and keep PR
content out of scripts; the properties that keep them alerting for months are asserted one by one."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

WORKFLOWS = sorted((Path(__file__).parent.parent / ".github" / "workflows").glob("*.yml"))
# The current major of each action, pinned to the commit its tag points at (read from each action's
# repository: `git rev-parse TAG^{commit}`); the trailing comment of every `uses:` names the tag.
PINS = {
    "actions/checkout": ("3d3c42e5aac5ba805825da76410c181273ba90b1", "v7.0.1"),
    "actions/setup-python": ("5fda3b95a4ea91299a34e894583c3862153e4b97", "v7.0.0"),
    "actions/cache/restore": ("27d5ce7f107fe9357f9df03efb73ab90386fccae", "v5.0.5"),
    "actions/cache/save": ("27d5ce7f107fe9357f9df03efb73ab90386fccae", "v5.0.5"),
    "actions/upload-artifact": ("bbbca2ddaa5d8feaa63e36b76fdaad77386f024f", "v7.0.0"),
    "actions/create-github-app-token": ("1b10c78c7865c340bc4f6099eb2f838309f1e8c3", "v3.1.1"),
}


def test_the_workflows_exist():
    assert [p.name for p in WORKFLOWS] == [
        "checks.yml", "ci.yml", "comment.yml", "latest.yml", "sweep.yml", "watch.yml"
    ]  # fmt: skip


def load(name):
    workflow = yaml.safe_load((WORKFLOWS[0].parent / name).read_text())
    return workflow, (workflow[True] if True in workflow else workflow["on"])  # YAML 1.1 reads "on" as true


def steps_of(name, job):
    workflow, _ = load(name)
    return workflow["jobs"][job]["steps"]


def uses(step, action):
    return step.get("uses", "").split("@")[0] == action


def test_fork_pull_requests_are_checked_read_only_and_commented_from_workflow_run():
    checks, on_checks = load("checks.yml")
    assert list(on_checks) == ["pull_request"]  # never pull_request_target: a fork's code runs here
    job = checks["jobs"]["checks"]
    assert job["permissions"] == {"contents": "read"}
    steps = {s.get("name", s.get("uses", "")): s for s in job["steps"]}
    assert steps["Install hubdiff and pytest"]["run"] == "pip install . pytest"  # pytest checks/ needs pytest
    report = steps["Report"]["run"]
    assert "--format json --output reports/check.json" in report and "reports/check-exit" in report
    assert "--comment" not in report  # markdown from the pull request's code is never posted
    comment, on_comment = load("comment.yml")
    assert on_comment == {"workflow_run": {"workflows": ["checks"], "types": ["completed"]}}
    job = comment["jobs"]["comment"]
    assert job["permissions"] == {"actions": "read", "contents": "read", "pull-requests": "write"}
    for step in job["steps"]:
        assert not {"ref", "repository"} & set(
            step.get("with", {})
        )  # the default branch, never the PR's head
        assert step.get("run", "pip install .") in (
            "pip install .",
            "bash .github/scripts/post_checks_comment.sh",
        )


def test_comment_runs_only_for_finished_checks_one_at_a_time_per_pull_request():
    comment, _ = load("comment.yml")
    job = comment["jobs"]["comment"]
    condition = " ".join(job["if"].split())
    assert "github.event.workflow_run.event == 'pull_request'" in condition
    assert (
        "conclusion == 'success' || github.event.workflow_run.conclusion == 'failure'" in condition
    )  # not cancelled
    group = job["concurrency"]["group"]
    assert "workflow_run.head_repository.full_name" in group and "workflow_run.head_branch" in group
    assert job["concurrency"]["cancel-in-progress"] is False
    post = job["steps"][-1]
    assert set(post["env"]) == {
        "GH_TOKEN",
        "RUN_ID",
        "RUN_URL",
        "HEAD_SHA",
        "HEAD_REPO",
        "HEAD_BRANCH",
        "RUN_PRS",
    }
    assert "pull_requests.*.number" in post["env"]["RUN_PRS"]


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
            if "uses" in step and step["uses"] != "./":  # ./ is action.yml at the commit checked out
                assert re.fullmatch(r"[\w.-]+/[\w.-]+(/[\w.-]+)*@[0-9a-f]{40}", step["uses"]), step["uses"]
            if "run" in step:
                assert "${{" not in step["run"], step["run"]


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_every_action_is_its_current_major_at_the_tagged_commit(path):
    lines = [
        line for line in path.read_text().splitlines() if re.match(r"\s*(- )?uses: (?!\./(\s|$))", line)
    ]  # every action but this repository's own (action.yml, whose pins are held by test_action.py)
    assert lines
    for line in lines:
        action, sha, tag = re.fullmatch(
            r"\s*(?:- )?uses: ([\w./-]+)@([0-9a-f]{40}) # (v[\d.]+)", line
        ).groups()
        assert (sha, tag) == PINS[action], line


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_artifacts_can_be_uploaded_again_by_a_re_run(path):
    workflow = yaml.safe_load(path.read_text())
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            if uses(step, "actions/upload-artifact"):
                assert step["with"]["overwrite"] is True


def test_caches_are_saved_by_the_default_branch_and_only_restored_by_pull_requests():
    for path in WORKFLOWS:
        text = path.read_text()
        assert "actions/cache@" not in text  # the combined action saves on every run, pull requests too
    checks_steps = steps_of("checks.yml", "checks")
    assert not [s for s in checks_steps if uses(s, "actions/cache/save")]
    restored = {s["with"]["path"] for s in checks_steps if uses(s, "actions/cache/restore")}
    assert restored == {"~/.cache/pip", "${{ runner.temp }}/hubdiff-cache"}
    watch, _ = load("watch.yml")
    job = watch["jobs"]["watch"]
    saves = [s for s in job["steps"] if uses(s, "actions/cache/save")]
    assert {s["with"]["path"] for s in saves} == restored
    assert all(s["if"].startswith("env.SAVE_CACHES == 'true'") for s in saves)
    assert job["env"]["SAVE_CACHES"] == (
        "${{ github.event_name == 'schedule' || github.ref_name == github.event.repository.default_branch }}"
    )
    hubdiff_steps = [s for s in job["steps"] if re.search(r"^\s*hubdiff |open_prs", s.get("run", ""), re.M)]
    (action,) = [s for s in job["steps"] if s.get("uses") == "./"]  # action.yml runs hubdiff watch
    assert action["with"]["cache-dir"] == "${{ runner.temp }}/hubdiff-cache"
    assert len(hubdiff_steps) == 1 and all(
        s["env"]["HUBDIFF_CACHE"] == "${{ runner.temp }}/hubdiff-cache" for s in hubdiff_steps
    )
    (ci_save,) = [s for s in steps_of("ci.yml", "tests") if uses(s, "actions/cache/save")]
    assert ci_save["if"].startswith("github.event_name == 'push'")  # pushes are to main only


def test_ci_never_cancels_a_run_on_main():
    ci, on = load("ci.yml")
    assert on["push"] == {"branches": ["main"]}
    assert ci["concurrency"]["cancel-in-progress"] == "${{ github.event_name == 'pull_request' }}"


def test_watch_is_scheduled_serialised_and_sharded_by_the_matrix_alone():
    watch, triggers = load("watch.yml")
    assert "schedule" in triggers and "workflow_dispatch" in triggers
    assert set(triggers["workflow_dispatch"]["inputs"]) == {
        "record",
        "family",
    }  # a fresh fork records a first baseline
    assert watch["concurrency"]["cancel-in-progress"] is False
    job = watch["jobs"]["watch"]
    assert job["strategy"]["matrix"] == {"shard": [0, 1, 2, 3]}
    assert job["env"]["SHARD"] == "${{ strategy.job-index }}/${{ strategy.job-total }}"
    assert job["name"] == "watch (shard ${{ strategy.job-index }} of ${{ strategy.job-total }})"
    text = (WORKFLOWS[0].parent / "watch.yml").read_text()
    assert "matrix.shard" not in text and "/4" not in text and "of 4" not in text  # the count is written once


def test_watch_is_red_only_when_the_watch_could_not_see_what_it_watches():
    """The last step's condition, evaluated as Actions does (tests/actions_double.py) for each outcome of
    the watch step: a change (exit 1) is green, an unreadable Hub (3), a baseline error (2) or a pinned
    repo lost (gone, gated, disabled) is red."""
    from tests.actions_double import evaluate

    steps = steps_of("watch.yml", "watch")
    last = steps[-1]
    assert last["run"].rstrip().endswith("exit 1")
    outcomes = {
        ("0", "[]"): False,
        ("1", "[]"): False,  # changes found and proposed: the pull request is the alert
        ("1", '["org/a@main"]'): True,  # a pinned repo the watch can no longer read
        ("2", "[]"): True,
        ("3", "[]"): True,
    }
    for (status, lost), red in outcomes.items():
        context = {"steps": {"watch": {"outputs": {"status": status, "lost": lost}}}}
        assert bool(evaluate(last["if"], context)) is red, (status, lost)
    opening = next(s for s in steps if s.get("run") == "bash .github/scripts/open_prs.sh")
    assert "continue-on-error" not in opening  # a pull request that could not be opened is red


def test_the_keepalive_job_re_enables_the_watch_on_schedule():
    watch, _ = load("watch.yml")
    job = watch["jobs"]["keepalive"]
    assert job["if"] == "github.event_name == 'schedule'"
    assert job["permissions"] == {"actions": "write", "contents": "read"}
    assert job["steps"][-1]["run"] == "bash .github/scripts/keepalive.sh"
    assert "needs" not in job  # it runs whether or not the watch failed


@pytest.mark.parametrize(
    "path", [p for p in WORKFLOWS if p.name in ("checks.yml", "watch.yml")], ids=lambda p: p.name
)
def test_hf_token_reaches_only_the_steps_that_run_hubdiff(path):
    """zizmor's secrets-outside-env: a job-level secret reaches every third-party action of the job.
    The token goes to the steps that run hubdiff: a ``run:`` that calls it, or this repository's own
    action (``uses: ./``, whose ``hf-token`` input reaches only its hubdiff step: test_action.py)."""
    workflow = yaml.safe_load(path.read_text())
    given = 0
    for job in workflow["jobs"].values():
        assert "HF_TOKEN" not in (job.get("env") or {})
        for step in job.get("steps", []):
            own_action = step.get("uses") == "./"
            has = "HF_TOKEN" in (step.get("env") or {}) or (
                own_action and "secrets.HF_TOKEN" in str((step.get("with") or {}).get("hf-token", ""))
            )
            assert "uses" not in step or own_action or not has, step  # never to another action
            assert "HF_TOKEN" not in str(step.get("with") or {}) or own_action, step
            lines = [line.strip() for line in step.get("run", "").splitlines()]
            runs_hubdiff = own_action or any(
                line.startswith(("hubdiff ", "pytest checks/")) or line.endswith("record_baseline.sh")
                for line in lines
            )
            assert has == runs_hubdiff, step
            given += has
    assert given >= 2
