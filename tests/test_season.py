"""A season in the field: one family watched for months, through the workflows' own jobs.

Every scheduled run is watch.yml's ``watch`` job for the family's shard, its steps run as Actions runs
them (tests/actions_double.py) with the real hubdiff CLI against the Hub replica and the real scripts
against the GitHub double (tests/gh_double.py, gh as its source selects pull requests). People merge,
close, and accept figures on a bot branch with ``hubdiff baseline accept``; a person's push starts
checks.yml and then comment.yml, as GitHub does (pull requests the workflow's own token opens start
none, so the watch posts their checks comment itself). Every pull request, push and comment the double
records is asserted event by event, and the season's table is printed:

    pytest -q -s tests/test_season.py

Events, in order: first poll (nothing); first change (PR); the reviewer accepts the figures; merge;
second change (a new PR, not the merged one); closed unmerged; the same commits again (nothing); newer
commits (a new PR); a re-run (nothing); two shards at once, the family's run twice (one push, no second
pull request or comment); merge; a rename (re-pinned, never a release); a
429 storm (waited out, PR); merge; the Hub answering garbage (red, nothing touched); a quiet stretch past the 60-day rule (the keep-alive re-arms the schedule).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hubdiff.testing import CommitSpec, Fault, RepoSpec
from hubdiff.watch import in_shard
from tests.actions_double import JobRun, Runner
from tests.gh_double import SERVER, GitHubDouble

ROOT = Path(__file__).parent.parent
FAMILY = "fam"
BRANCH = f"hubdiff/{FAMILY}"
PATH = f"baselines/{FAMILY}.yaml"
SHARDS = 4  # watch.yml's matrix (tests/test_workflows.py holds it to one place)
SHARD = next(i for i in range(SHARDS) if in_shard(FAMILY, (i, SHARDS)))
BOT = "github-actions[bot]"
CHECKS = "<!-- hubdiff:checks -->"
BASELINE = """\
family: fam
notes: the season's family
discover:  # new repos of the family: a rename must not look like one
  - owner: org
    match: ["a*", "b*"]
repos:
  org/a:
    revision: main
    claims:
      kv_bytes_per_token: 0.26 KB  # the model card, table 2
      layers: 2
      config.hidden_size: 32
  org/b:
    revision: main
"""


def commit(hidden: int, layers: int = 2, vocab: int = 100) -> CommitSpec:
    config = {
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": 4,
        "vocab_size": vocab,
    }
    tensors = [(f"model.layers.{i}.self_attn.q_proj.weight", "BF16", (hidden, hidden)) for i in range(layers)]
    return CommitSpec(
        {"config.json": json.dumps(config).encode()}, tensors, title=f"{hidden} wide, {layers} layers"
    )


def kv_bytes(hidden: int, layers: int) -> int:
    """Multi-head attention in BF16: K and V, every layer, ``hidden`` wide, 2 bytes each."""
    return 2 * layers * hidden * 2


@dataclass(frozen=True)
class PRChecks:
    """checks.yml's conclusion on a pull request (comment.yml ran after it)."""

    conclusion: str


class Season:
    """The family's world: the replica, the double, the workflows' runner, and the table being kept."""

    def __init__(self, hub: Any, root: Path) -> None:
        self.hub, self.root = hub, root
        self.github = GitHubDouble(root / "github")
        self.runner = Runner(ROOT / ".github" / "workflows", self.github, root / "runners",
                             env={"HF_ENDPOINT": hub.endpoint})  # fmt: skip
        self.rows: list[tuple[str, str, str, str, str]] = []
        self.people = 0
        self._lock = threading.Lock()

    # -- the world as it starts -------------------------------------------------------------------

    def start(self) -> None:
        """org/a and org/b on the Hub; the repository holds hubdiff's workflows, action, scripts and checks, and
        the family's baseline recorded where every claim holds."""
        self.hub.add(RepoSpec("org/a", [commit(32)]))
        self.hub.add(RepoSpec("org/b", [commit(32, vocab=200)]))
        scratch = self.root / "record"
        (scratch / "baselines").mkdir(parents=True)
        (scratch / PATH).write_text(BASELINE)
        assert self.hubdiff(scratch, "baseline", "update").returncode == 0
        files = {PATH: (scratch / PATH).read_text(), "action.yml": (ROOT / "action.yml").read_text()}
        for folder in (".github/workflows", ".github/scripts", "checks"):
            for path in sorted((ROOT / folder).iterdir()):
                if path.is_file() and path.suffix in (".yml", ".sh", ".py"):
                    files[f"{folder}/{path.name}"] = path.read_text()
        self.github.commit(files, "hubdiff: watch fam")

    def hubdiff(self, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
        env = {
            **os.environ,
            "HF_ENDPOINT": self.hub.endpoint,
            "HUBDIFF_CACHE": str(self.root / "people-cache"),
        }
        return subprocess.run([sys.executable, "-m", "hubdiff", *args], cwd=cwd, env=env, capture_output=True,
                              text=True, timeout=120)  # fmt: skip

    # -- runs and people --------------------------------------------------------------------------

    def scheduled(self, index: int = SHARD, run_id: int | None = None) -> JobRun:
        return self.runner.run("watch.yml", "watch", event="schedule", index=index, run_id=run_id)

    def keepalive(self) -> JobRun:
        return self.runner.run("watch.yml", "keepalive", event="schedule")

    def accept(self, number: int) -> PRChecks:
        """A reviewer takes the bot branch, accepts the measured figures, commits and pushes; GitHub then
        runs checks.yml on the pull request and comment.yml after it. Returns the checks' colour."""
        self.people += 1
        work = self.github.checkout(self.root / f"person-{self.people}", ref=BRANCH)
        accepted = self.hubdiff(work, "baseline", "accept", PATH)
        assert accepted.returncode == 0, accepted.stdout + accepted.stderr
        who = {"GIT_AUTHOR_NAME": "a reviewer", "GIT_AUTHOR_EMAIL": "reviewer@example.invalid",
               "GIT_COMMITTER_NAME": "a reviewer", "GIT_COMMITTER_EMAIL": "reviewer@example.invalid"}  # fmt: skip
        env = self.github.env(**who)
        for args in (
            ["commit", "-qam", "accept the measured figures"],
            ["push", "-q", "origin", f"HEAD:{BRANCH}"],
        ):
            subprocess.run(["git", *args], cwd=work, env=env, check=True, capture_output=True)
        return self.pr_checks(number)

    def pr_checks(self, number: int) -> PRChecks:
        head = self.github.branch(BRANCH)
        checks = self.runner.run("checks.yml", "checks", event="pull_request", ref=BRANCH,
                                 event_payload={"pull_request": {"number": number}})  # fmt: skip
        run_id = self.runner.runs + 1000
        comment = self.runner.run(
            "comment.yml",
            "comment",
            event="workflow_run",
            event_payload={
                "workflow_run": {
                    "event": "pull_request",
                    "conclusion": checks.conclusion,
                    "id": run_id,
                    "html_url": f"{SERVER}/{self.github.repo}/actions/runs/{run_id}",
                    "head_sha": head,
                    "head_repository": {"full_name": self.github.repo},
                    "head_branch": BRANCH,
                    "pull_requests": [{"number": number}],
                }
            },
        )
        assert comment.conclusion == "success", comment.log
        return PRChecks(checks.conclusion)

    # -- the record -------------------------------------------------------------------------------

    def event(self, name: str, act: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]], Any]:
        """Do ``act`` and return what GitHub recorded meanwhile (events, pushes) and what ``act`` gave."""
        mark = self.github.mark()
        result = act()
        events, pushes, _ = self.github.since(mark)
        colour = _colour(result)
        enabled = sum(1 for e in events if e["kind"] == "workflow.enable")
        if enabled:
            colour += f"; the keep-alive re-enabled watch.yml {enabled}×"
        self.rows.append((name, colour, _prs(events, self.github), _pushes(pushes), _comments(events)))
        return events, pushes, result

    def table(self) -> str:
        header = ("event", "run", "pull requests", "pushes", "comments")
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(row) + " |" for row in self.rows]
        return "\n".join(lines)


def _colour(result: Any) -> str:
    """What the runs of an event ended as: the watch's job, or a pull request's checks (PRChecks)."""
    runs = result if isinstance(result, list) else [result]
    colours = []
    for run in runs:
        if isinstance(run, JobRun):
            colours.append({"success": "green", "failure": "red"}.get(run.conclusion, run.conclusion))
        elif isinstance(run, PRChecks):
            colours.append(f"checks {'green' if run.conclusion == 'success' else 'red'}")
    return ", ".join(dict.fromkeys(colours)) or "—"


def _prs(events: list[dict[str, Any]], github: GitHubDouble) -> str:
    words = {"pr.create": "opened", "pr.edit": "edited", "pr.merge": "merged", "pr.close": "closed"}
    done = [f"#{e['number']} {words[e['kind']]}" for e in events if e["kind"] in words]
    done = list(dict.fromkeys(done))
    open_now = [f"#{p['number']}" for p in github.prs() if p["state"] == "OPEN"]
    return (", ".join(done) or "none") + f" (open: {', '.join(open_now) or 'none'})"


def _pushes(pushes: list[dict[str, Any]]) -> str:
    if not pushes:
        return "0"
    kinds = [
        "new branch" if p["old"] == "0" * 40 else ("forced" if p["forced"] else "fast-forward")
        for p in pushes
    ]
    return f"{len(pushes)} ({', '.join(kinds)})"


def _comments(events: list[dict[str, Any]]) -> str:
    words = {"comment.create": "posted", "comment.update": "updated", "comment.delete": "deleted"}
    done = [f"{words[e['kind']]} on #{e['issue']}" for e in events if e["kind"] in words]
    return ", ".join(done) or "0"


def kinds(events: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [(e["kind"], e.get("number", e.get("issue"))) for e in events]


def claim_lines(body: str) -> list[tuple[str, int]]:
    return [(m[1], int(m[2])) for m in re.finditer(rf"\| `([\w.]+)` \| `{re.escape(PATH)}:(\d+)` \|", body)]


@pytest.fixture
def season(hub, tmp_path):
    world = Season(hub, tmp_path)
    world.start()
    yield world
    print("\n" + world.table())


def test_a_season_of_one_family(season):
    hub, github = season.hub, season.github

    # first poll: nothing moved, and nothing reaches GitHub
    events, pushes, run = season.event("first poll, nothing new", season.scheduled)
    assert run.conclusion == "success" and events == pushes == [] and github.calls() == []
    assert run.step("Watch").outputs["status"] == "0"

    # first change: org/a grows (64 wide, 3 layers) and breaks every claim
    sha = hub.push("org/a", commit(64, 3))
    events, pushes, run = season.event("first change", season.scheduled)
    assert run.conclusion == "success", run.log  # exit 1, and the pull request is the alert
    assert run.step("Watch").outputs["status"] == "1"
    assert kinds(events) == [("pr.create", 1), ("comment.create", 1)]
    assert [(p["ref"], p["old"]) for p in pushes] == [(f"refs/heads/{BRANCH}", "0" * 40)]
    body = github.pr(1)["body"]
    proposed = github.git("show", f"{BRANCH}:{PATH}").splitlines()
    lines = claim_lines(body)
    assert [name for name, _ in lines] == ["kv_bytes_per_token", "layers", "config.hidden_size"]
    for name, line in lines:  # each file:line names the claim in the file the pull request proposes
        assert proposed[line - 1].strip().startswith(f"{name}:"), (name, line)
    assert kv_bytes(64, 3) == 768
    assert (
        "| `0.26 KB` → 0.768 KB (768) | `0.77 KB` |" in body
    )  # stated → measured, and what accepting writes
    assert f"with `hubdiff baseline accept {PATH}`, then commit and push" in body
    assert "- **It is a regression**: do not merge; close this pull request." in body
    assert body.rstrip().endswith(f"<!-- hubdiff:proposes org/a@{sha} -->")
    (checks,) = [c for c in github.comments(1) if c["user"]["login"] == BOT]
    assert checks["body"].startswith(f"{CHECKS}\n### hubdiff check: changes found")
    assert f"`hubdiff baseline accept {PATH}`" in checks["body"] and "`0.77 KB`" in checks["body"]

    # the reviewer accepts the figures on the branch: checks.yml runs on the push, comment.yml updates
    events, pushes, checked = season.event("reviewer accepts the figures", lambda: season.accept(1))
    assert checked == PRChecks("success")
    assert [(p["ref"], p["forced"]) for p in pushes] == [(f"refs/heads/{BRANCH}", False)]
    assert kinds(events) == [("comment.update", 1)]
    accepted = github.git("show", f"{BRANCH}:{PATH}")
    assert "      kv_bytes_per_token: 0.77 KB  # the model card, table 2\n" in accepted  # comment kept
    assert "      layers: 3\n" in accepted and "      config.hidden_size: 64\n" in accepted
    assert github.comments(1)[0]["body"].startswith(f"{CHECKS}\n### hubdiff check: all clear")

    events, pushes, _ = season.event("merge #1", lambda: github.merge(1))
    assert kinds(events) == [("pr.merge", 1)] and pushes == []

    # a second change after the merge is a new pull request, never an edit of the merged one
    second = hub.push("org/a", commit(96, 3))
    events, pushes, run = season.event("second change", season.scheduled)
    assert run.conclusion == "success", run.log
    assert kinds(events) == [("pr.create", 2), ("comment.create", 2)]
    assert [p["forced"] for p in pushes] == [False]  # the branch moves on from the merged one
    assert github.pr(1)["state"] == "MERGED" and f"org/a@{sha}" in github.pr(1)["body"]

    # the reviewer says no: the same commits are never proposed again
    events, pushes, _ = season.event("#2 closed unmerged", lambda: github.close(2))
    events, pushes, run = season.event("same commits again", season.scheduled)
    assert run.conclusion == "success" and events == pushes == []
    assert (
        "#2 proposed these Hub commits and was closed unmerged"
        in run.step("Open or update one pull request per changed family").stdout
    )

    # newer commits are another proposal
    newer = hub.push("org/a", commit(80, 3))
    events, pushes, run = season.event("newer commits", season.scheduled)
    assert run.conclusion == "success", run.log
    assert kinds(events) == [("pr.create", 3), ("comment.create", 3)] and len(pushes) == 1
    assert f"org/a@{newer}" in github.pr(3)["body"] and second not in github.pr(3)["body"]
    run_id = season.runner.runs + 1000

    # a re-run of that job: nothing pushed, edited or posted
    events, pushes, run = season.event("re-run", lambda: season.scheduled(run_id=run_id))
    assert run.conclusion == "success" and events == pushes == []

    # the matrix's shards at once, and a second run of the family's shard beside them
    hub.push("org/b", commit(32, vocab=300))
    jobs: list[JobRun] = []

    def matrix() -> list[JobRun]:
        threads = [
            threading.Thread(target=lambda i=i: jobs.append(season.scheduled(i)))
            for i in (SHARD, (SHARD + 1) % SHARDS, SHARD)  # the family's run twice, another shard
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return jobs

    events, pushes, runs = season.event("two shards at once, the family's twice", matrix)
    assert [r.conclusion for r in runs] == ["success"] * 3, [r.log for r in runs]
    assert {kind for kind, _ in kinds(events)} <= {"pr.edit", "comment.update"} and ("pr.edit", 3) in kinds(
        events
    )
    assert len(pushes) == 1 and pushes[0]["ref"] == f"refs/heads/{BRANCH}"  # the other run found it done
    assert [p["state"] for p in github.prs()] == ["MERGED", "CLOSED", "OPEN"]
    assert len([c for c in github.comments(3) if c["user"]["login"] == BOT]) == 1
    (other,) = [r for r in runs if r.step("Watch").outputs["changed"] == "false"]
    assert "0 repos checked" in other.step("Watch").outputs["summary"]  # another shard: not its family

    events, pushes, _ = season.event("merge #3", lambda: github.merge(3))
    assert kinds(events) == [("pr.merge", 3)] and pushes == []

    # org/b is renamed: followed, re-pinned under its new name, never reported as a new release
    hub.rename("org/b", "org/b2")
    events, pushes, run = season.event("org/b renamed org/b2", season.scheduled)
    assert run.conclusion == "success", run.log
    assert kinds(events) == [("pr.create", 4), ("comment.create", 4)]
    assert "renamed: org/b → org/b2" in github.pr(4)["body"] and "New release" not in github.pr(4)["body"]
    assert "  org/b2:\n" in github.git("show", f"{BRANCH}:{PATH}")
    season.event("merge #4", lambda: github.merge(4))

    # a 429 storm: the watch waits what RateLimit says and still proposes the change
    storm = hub.push("org/a", commit(80, 4))
    hub.add_fault(Fault("/api/", rate_limited=1, times=3))
    answered = len(hub.log)
    events, pushes, run = season.event("429 storm", season.scheduled)
    assert run.conclusion == "success", run.log
    assert [e.status for e in hub.log[answered:]][:4] == [429, 429, 429, 200]  # waited out, then read
    assert (
        kinds(events) == [("pr.create", 5), ("comment.create", 5)]
        and f"org/a@{storm}" in github.pr(5)["body"]
    )

    season.event("merge #5", lambda: github.merge(5))

    # the Hub answers garbage to every API call: red, nothing on GitHub moves, and the next run is calm
    hub.add_fault(Fault("/api/models", body=b"{not json"))
    events, pushes, run = season.event("the Hub cannot be read", season.scheduled)
    assert run.conclusion == "failure" and run.step("Watch").outputs["status"] == "3"
    assert events == pushes == []
    assert "::error::hubdiff watch exited with 3" in run.steps[-1].stdout
    hub.clear_faults()

    # a quiet stretch: nothing changes for 75 days; the keep-alive keeps the schedule armed
    last_commit = github.now()
    quiet: list[JobRun] = []

    def stretch() -> list[JobRun]:
        for day in (15, 30, 46, 61, 75):
            github.advance(day - (github.now() - last_commit) / 86_400)
            assert github.schedule_active(), f"GitHub would have stopped the schedule by day {day}"
            quiet.append(season.keepalive())
            if day == 75:
                quiet.append(season.scheduled())
        return quiet

    events, pushes, runs = season.event("quiet stretch, days 15–75", stretch)
    assert all(r.conclusion == "success" for r in runs)
    assert kinds(events) == [("workflow.enable", None)] * 3 and pushes == []  # days 46, 61, 75
    assert github.now() - last_commit > 60 * 86_400  # without the keep-alive it would have stopped

    assert [(p["number"], p["state"]) for p in github.prs()] == [
        (1, "MERGED"), (2, "CLOSED"), (3, "MERGED"), (4, "MERGED"), (5, "MERGED"),
    ]  # fmt: skip
    for number in range(1, 6):  # one checks comment per pull request, ever
        assert len([c for c in github.comments(number) if c["body"].startswith(CHECKS)]) == 1
