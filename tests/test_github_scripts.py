"""The scripts the workflows run, run for real with a stub ``gh`` on PATH that records every call and
answers like the GitHub API (comment found or not, pull request open or not, 403 for a read-only
token), and a ``git`` whose push is recorded instead of sent. Each test asserts the exact calls."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hubdiff.testing import CommitSpec, RepoSpec

SCRIPTS = Path(__file__).parent.parent / ".github" / "scripts"
REPO = "acme/models"
MARKER = "<!-- hubdiff:checks -->"

STUB_GH = r'''#!PYTHON
"""gh, as far as the scripts use it: api GET/POST/PATCH, pr view/create/edit."""
import json, os, subprocess, sys

args = sys.argv[1:]
state = json.load(open(os.environ["STUB_GH_STATE"]))
record = list(args)
for i, a in enumerate(args):
    if a.startswith("body=@"):
        record[i] = "body=" + open(a[len("body=@"):]).read()
with open(os.environ["STUB_GH_LOG"], "a") as fh:
    fh.write(json.dumps(record) + "\n")


def reply(obj):
    data = json.dumps(obj)
    if "--jq" in args:
        jq = args[args.index("--jq") + 1]
        data = subprocess.run(["jq", "-r", jq], input=data, capture_output=True, text=True, check=True).stdout
    sys.stdout.write(data)


if args[0] == "api":
    method = args[args.index("--method") + 1] if "--method" in args else "GET"
    path = next(a for a in args[1:] if a.startswith("repos/"))
    if method != "GET" and state.get("read_only"):
        print("gh: Resource not accessible by integration (HTTP 403)", file=sys.stderr)
        sys.exit(1)
    if method == "GET" and path.endswith("/comments"):
        reply(state.get("comments", []))
    elif method == "GET" and "/pulls/" in path:
        reply(state["pulls"][path.rsplit("/", 1)[1]])
    else:
        reply({"id": 999})
elif args[:2] == ["pr", "view"]:
    pr = state.get("prs", {}).get(args[2])
    if pr is None:
        print(f'no pull requests found for branch "{args[2]}"', file=sys.stderr)
        sys.exit(1)
    reply(pr)
elif args[:2] in (["pr", "create"], ["pr", "edit"]):
    print("https://git.example.invalid/acme/models/pull/7")
else:
    print(f"stub gh: unexpected call {args}", file=sys.stderr)
    sys.exit(2)
'''

STUB_GIT = """#!/usr/bin/env bash
if [ "$1" = push ]; then printf '%s\\n' "$*" >> "$STUB_GIT_LOG"; exit 0; fi
exec REAL_GIT "$@"
"""


@pytest.fixture
def stubs(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(STUB_GH.replace("PYTHON", sys.executable))
    (bin_dir / "git").write_text(STUB_GIT.replace("REAL_GIT", shutil.which("git")))
    for tool in ("gh", "git"):
        (bin_dir / tool).chmod(0o755)

    class Stubs:
        state = tmp_path / "gh-state.json"
        log = tmp_path / "gh-calls.jsonl"
        git_log = tmp_path / "git-push.log"

        def env(self, state, **extra):
            self.state.write_text(json.dumps(state))
            path = os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), os.environ["PATH"]])
            return {
                **os.environ,
                "PATH": path,
                "STUB_GH_STATE": str(self.state),
                "STUB_GH_LOG": str(self.log),
                "STUB_GIT_LOG": str(self.git_log),
                "GH_TOKEN": "ghs_stub",
                "GITHUB_REPOSITORY": REPO,
                "GITHUB_SERVER_URL": "https://git.example.invalid",
                **extra,
            }

        def calls(self):
            return (
                [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []
            )

    return Stubs()


def run(script, *args, env, cwd=None):
    return subprocess.run(
        ["bash", str(SCRIPTS / script), *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )


def comment(tmp_path, body=f"{MARKER}\n### hubdiff check: all clear\n"):
    path = tmp_path / "comment.md"
    path.write_text(body)
    return path


LIST = [
    "api",
    f"repos/{REPO}/issues/42/comments",
    "--paginate",
    "--jq",
    '.[] | [.id, .user.login, (.body | split("\\n")[0])] | @tsv',
]


def test_sticky_posts_a_new_comment_when_the_bot_has_none(stubs, tmp_path):
    body = comment(tmp_path)
    people = [{"id": 5, "user": {"login": "alice"}, "body": f"{MARKER}\nI wrote this by hand"}]
    result = run("sticky_comment.sh", body, MARKER, env=stubs.env({"comments": people}, PR_NUMBER="42"))
    assert result.returncode == 0, result.stderr
    assert stubs.calls() == [
        LIST,
        ["api", "--method", "POST", f"repos/{REPO}/issues/42/comments", "-F", "body=" + body.read_text()],
    ]  # alice's comment starts with the marker but is not the bot's: it is left alone


def test_sticky_updates_the_bots_own_comment_with_the_exact_marker(stubs, tmp_path):
    body = comment(tmp_path)
    comments = [
        {"id": 3, "user": {"login": "github-actions[bot]"}, "body": "<!-- hubdiff:checks-other -->\nx"},
        {"id": 4, "user": {"login": "github-actions[bot]"}, "body": f"{MARKER}\nold report"},
        {"id": 6, "user": {"login": "github-actions[bot]"}, "body": f"{MARKER}\nlater duplicate"},
    ]
    result = run("sticky_comment.sh", body, MARKER, env=stubs.env({"comments": comments}, PR_NUMBER="42"))
    assert result.returncode == 0, result.stderr
    assert stubs.calls() == [
        LIST,
        ["api", "--method", "PATCH", f"repos/{REPO}/issues/comments/4", "-F", "body=" + body.read_text()],
    ]
    assert "updated comment 4 on #42" in result.stdout


def test_sticky_on_a_read_only_token_warns_and_does_not_fail_the_job(stubs, tmp_path):
    result = run(
        "sticky_comment.sh", comment(tmp_path), MARKER, env=stubs.env({"read_only": True}, PR_NUMBER="42")
    )
    assert result.returncode == 0
    assert "::warning::the token cannot comment on pull request #42 (HTTP 403)" in result.stdout
    assert [c[:3] for c in stubs.calls()] == [LIST[:3], ["api", "--method", "POST"]]


def test_sticky_refuses_a_file_without_its_marker(stubs, tmp_path):
    body = comment(tmp_path, "<!-- hubdiff:other -->\n")
    result = run("sticky_comment.sh", body, MARKER, env=stubs.env({}, PR_NUMBER="42"))
    assert result.returncode == 1 and stubs.calls() == []


def artifact(tmp_path, number):
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    (incoming / "pr-number").write_text(number)
    (incoming / "comment.md").write_text(f"{MARKER}\n### hubdiff check: changes found\n")
    return incoming


def test_workflow_run_side_posts_for_the_pull_request_the_checks_ran_on(stubs, tmp_path):
    incoming = artifact(tmp_path, "42\n")
    state = {"pulls": {"42": {"head": {"sha": "a" * 40}}}, "comments": []}
    result = run("post_checks_comment.sh", incoming, env=stubs.env(state, HEAD_SHA="a" * 40))
    assert result.returncode == 0, result.stderr
    assert stubs.calls() == [
        ["api", f"repos/{REPO}/pulls/42", "--jq", ".head.sha"],
        LIST,
        [
            "api",
            "--method",
            "POST",
            f"repos/{REPO}/issues/42/comments",
            "-F",
            "body=" + (incoming / "comment.md").read_text(),
        ],
    ]


@pytest.mark.parametrize(
    ("number", "head", "calls"),
    [
        ("41", "b" * 40, 1),  # a fork pointing its comment at another pull request
        ("42; rm -rf /", "a" * 40, 0),  # not a number: nothing is asked
    ],
    ids=["other-pull-request", "not-a-number"],
)
def test_workflow_run_side_trusts_nothing_in_the_artifact(stubs, tmp_path, number, head, calls):
    incoming = artifact(tmp_path, number)
    state = {"pulls": {"41": {"head": {"sha": head}}}}
    result = run("post_checks_comment.sh", incoming, env=stubs.env(state, HEAD_SHA="a" * 40))
    assert result.returncode == 1
    assert len(stubs.calls()) == calls and all("--method" not in c for c in stubs.calls())


def git_repo(tmp_path, hub=None):
    work = tmp_path / "work"
    (work / "baselines").mkdir(parents=True)
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    git = lambda *a: subprocess.run(["git", *a], cwd=work, check=True, capture_output=True, env=env)  # noqa: E731
    git("init", "-q", "-b", "main")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "start")
    return work, git


def test_open_prs_creates_then_updates_one_pull_request_per_family(stubs, tmp_path):
    work, git = git_repo(tmp_path)
    (work / "baselines" / "fam.yaml").write_text("family: fam\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "baseline")
    (work / "baselines" / "fam.yaml").write_text(
        "family: fam\nnotes: re-recorded\n"
    )  # what watch --update left
    (work / "reports").mkdir()
    (work / "reports" / "fam.pr.md").write_text("report body\n")
    outputs = {
        "FAMILIES": '["fam"]',
        "BASELINES": '{"fam": "baselines/fam.yaml"}',
        "PR_BODIES": '{"fam": "reports/fam.pr.md"}',
    }
    env = stubs.env({"prs": {}}, **outputs, GIT_CONFIG_GLOBAL=os.devnull)
    first = run("open_prs.sh", env=env, cwd=work)
    assert first.returncode == 0, first.stderr
    assert stubs.calls() == [
        ["pr", "view", "hubdiff/fam", "--json", "number"],
        ["pr", "create", "--head", "hubdiff/fam", "--title", "hubdiff: fam changed on the Hub", "--body-file",
         "reports/fam.pr.md"],
    ]  # fmt: skip
    assert stubs.git_log.read_text() == (
        "push -q --force https://x-access-token:ghs_stub@git.example.invalid/acme/models.git "
        "HEAD:refs/heads/hubdiff/fam\n"
    )
    shown = subprocess.run(
        ["git", "show", "hubdiff/fam:baselines/fam.yaml"], cwd=work, capture_output=True, text=True
    )
    assert shown.stdout == "family: fam\nnotes: re-recorded\n"

    stubs.log.unlink()
    (work / "baselines" / "fam.yaml").write_text("family: fam\nnotes: again\n")
    again = run("open_prs.sh", env=stubs.env({"prs": {"hubdiff/fam": {"number": 7}}}, **outputs), cwd=work)
    assert again.returncode == 0, again.stderr
    assert stubs.calls() == [
        ["pr", "view", "hubdiff/fam", "--json", "number"],
        ["pr", "edit", "hubdiff/fam", "--body-file", "reports/fam.pr.md"],
    ]


def test_with_the_workflows_own_token_the_checks_run_and_comment_from_the_watch_run(stubs, hub, tmp_path):
    tensors = [(f"model.layers.{i}.self_attn.q_proj.weight", "BF16", (8, 8)) for i in range(2)]
    cfg = b'{"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10}'
    hub.add(RepoSpec("org/m", [CommitSpec({"config.json": cfg}, tensors)]))
    work, _ = git_repo(tmp_path)
    hubdiff_env = {**os.environ, "HF_ENDPOINT": hub.endpoint, "HUBDIFF_CACHE": str(tmp_path / "c")}
    subprocess.run(
        [sys.executable, "-m", "hubdiff", "baseline", "init", "org/m", "--family", "fam"],
        cwd=work, env=hubdiff_env, check=True, capture_output=True,
    )  # fmt: skip
    (work / "reports").mkdir()
    (work / "reports" / "fam.pr.md").write_text("first baseline\n")
    env = stubs.env(
        {"prs": {"hubdiff/fam": {"number": 12}}, "comments": []},
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
    assert stubs.calls() == [
        ["pr", "view", "hubdiff/fam", "--json", "number"],
        ["pr", "edit", "hubdiff/fam", "--body-file", "reports/fam.pr.md"],
        ["pr", "view", "hubdiff/fam", "--json", "number", "--jq", ".number"],
        [*LIST[:1], f"repos/{REPO}/issues/12/comments", *LIST[2:]],
        ["api", "--method", "POST", f"repos/{REPO}/issues/12/comments", "-F", "body=" + posted],
    ]


def test_record_baseline_validates_its_inputs_and_writes_the_outputs(stubs, hub, tmp_path):
    tensors = [("model.layers.0.w", "BF16", (4, 4))]
    hub.add(RepoSpec("org/m", [CommitSpec({"config.json": b'{"hidden_size": 4}'}, tensors)]))
    output = tmp_path / "github_output"
    env = stubs.env(
        {}, RECORD="org/m", FAMILY="fam", GITHUB_OUTPUT=str(output), HF_ENDPOINT=hub.endpoint,
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
