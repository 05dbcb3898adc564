"""A double of GitHub and of the ``gh`` CLI for the workflow scripts, built from gh's own source.

GitHub's state lives in one folder: a bare git repository the scripts really push to (their https URL is
mapped onto it with ``url.<file>.insteadOf``) whose post-receive hook logs every ref update, and a JSON
file with the pull requests, comments, artifacts and workflow state. ``gh`` on PATH runs this module
(``gh_main``): each call holds the state's lock for its whole run, as the server answers one request at
a time, serves the subcommands the scripts use, and logs the call and what it changed. A ``date`` on
PATH adds the double's clock offset, so that a test can let months pass.

Every rule names its source. gh's come from cli/cli at GH_COMMIT (tag v2.60.0; the runner's gh is newer,
and these parts have not changed in it): file and function are given where each is modelled. GitHub's
own rules (what the server refuses) are the documented behaviour of its API, with its error texts.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import re
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

GH_COMMIT = "44ee17760709bedf1cad7e452e61751489b81a33"  # cli/cli v2.60.0
SERVER = "https://git.example.invalid"
ZERO = "0" * 40
DAY = 86_400
INACTIVE_DAYS = 60  # GitHub Docs, "Disabling and enabling a workflow": a public repository's scheduled
# workflows are disabled after 60 days without repository activity; "When a public repository is forked,
# scheduled workflows are disabled by default."
PR_FIELDS = [
    "number",
    "state",
    "title",
    "body",
    "headRefName",
    "headRefOid",
    "baseRefName",
    "isCrossRepository",
    "headRepositoryOwner",
    "mergedAt",
    "closedAt",
    "createdAt",
    "url",
    "author",
]


def _clean_git_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return {**env, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", **(extra or {})}


class GitHubDouble:
    """One repository on a GitHub that the scripts reach only through ``gh`` and ``git``.

    Tests act as the people (merge, close, comment, commit to the default branch, let time pass) and
    read back every pull request, push, comment and call.
    """

    def __init__(
        self,
        root: Path,
        repo: str = "acme/models",
        default_branch: str = "main",
        login: str = "github-actions[bot]",
    ) -> None:
        self.root = root
        self.repo = repo
        self.default_branch = default_branch
        self.remote = root / "remote.git"
        self.bin = root / "bin"
        self.bin.mkdir(parents=True)
        subprocess.run(
            ["git", "init", "-q", "--bare", "-b", default_branch, str(self.remote)],
            check=True,
            env=_clean_git_env(),
        )
        hook = self.remote / "hooks" / "post-receive"
        hook.write_text(f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(Path(__file__).parent)!r})\n"
                        f"import gh_double\ngh_double.hook_main({str(root)!r})\n")  # fmt: skip
        gh = self.bin / "gh"
        gh.write_text(f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(Path(__file__).parent)!r})\n"
                      "import gh_double\nsys.exit(gh_double.gh_main(sys.argv[1:]))\n")  # fmt: skip
        date = self.bin / "date"
        date.write_text(
            f'#!/bin/sh\nexec /bin/date -d "@$(( $(/bin/date +%s) + $(cat {root}/clock) ))" "$@"\n'
        )
        for tool in (hook, gh, date):
            tool.chmod(0o755)
        (root / "clock").write_text("0\n")
        for log in ("calls", "events", "pushes"):
            (root / f"{log}.jsonl").touch()
        _save(
            root,
            {
                "repo": repo,
                "default_branch": default_branch,
                "login": login,
                "read_only": False,
                "next_number": 1,
                "next_comment_id": 1001,
                "next_artifact_id": 501,
                "prs": [],
                "comments": [],
                "artifacts": {},
                "enabled_at": None,
            },
        )

    # -- the environment a script runs in -------------------------------------------------------

    def env(self, **extra: str) -> dict[str, str]:
        """What a workflow step has: gh and git reaching this double, the variables Actions sets."""
        path = os.pathsep.join([str(self.bin), str(Path(sys.executable).parent), os.environ["PATH"]])
        return _clean_git_env(
            {
                "PATH": path,
                "GH_DOUBLE": str(self.root),
                "GH_TOKEN": "ghs_double",
                "GITHUB_REPOSITORY": self.repo,
                "GITHUB_SERVER_URL": SERVER,
                "GIT_CONFIG_COUNT": "1",
                "GIT_CONFIG_KEY_0": f"url.file://{self.remote}.insteadOf",
                "GIT_CONFIG_VALUE_0": f"{SERVER}/{self.repo}.git",
                **extra,
            }
        )

    def git(self, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
        where = ["--git-dir", str(self.remote)] if cwd is None else []
        done = subprocess.run(
            ["git", *where, *args],
            cwd=cwd,
            check=True,
            capture_output=True,
            text=True,
            env=_clean_git_env(env),
        )
        return done.stdout.strip()

    def checkout(self, dest: Path, ref: str | None = None) -> Path:
        """A branch (the default one unless ``ref`` names another) as actions/checkout leaves it: depth 1,
        origin the https URL, no token."""
        dest.parent.mkdir(parents=True, exist_ok=True)
        self.git(
            "clone",
            "-q",
            "--depth",
            "1",
            "--branch",
            ref or self.default_branch,
            f"file://{self.remote}",
            str(dest),
            cwd=self.root,
        )
        self.git("remote", "set-url", "origin", f"{SERVER}/{self.repo}.git", cwd=dest)
        return dest

    # -- people and time ------------------------------------------------------------------------

    def now(self) -> float:
        return time.time() + float((self.root / "clock").read_text())

    def advance(self, days: float) -> None:
        offset = float((self.root / "clock").read_text()) + days * DAY
        (self.root / "clock").write_text(f"{offset:.0f}\n")

    def _dated(self) -> dict[str, str]:
        when = f"@{int(self.now())} +0000"
        who = {"GIT_AUTHOR_NAME": "a person", "GIT_AUTHOR_EMAIL": "person@example.invalid"}
        return {**who, "GIT_COMMITTER_NAME": "a person", "GIT_COMMITTER_EMAIL": "person@example.invalid",
                "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}  # fmt: skip

    def commit(
        self, files: dict[str, str], message: str = "a person's change", branch: str | None = None
    ) -> str:
        """A person's commit on a branch (the default one unless named), made on the server: no push is
        logged."""
        branch = branch or self.default_branch
        index = self.root / "index.tmp"
        env = {**self._dated(), "GIT_INDEX_FILE": str(index)}
        with contextlib.suppress(FileNotFoundError):
            index.unlink()
        parent = self._sha(f"refs/heads/{branch}") or self._sha(f"refs/heads/{self.default_branch}")
        if parent:
            self.git("read-tree", parent, env=env)
        for path, text in files.items():
            blob = subprocess.run(
                ["git", "--git-dir", str(self.remote), "hash-object", "-w", "--stdin"],
                input=text, capture_output=True, text=True, check=True, env=_clean_git_env(),
            ).stdout.strip()  # fmt: skip
            self.git("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
        tree = self.git("write-tree", env=env)
        commit = self.git("commit-tree", tree, *(["-p", parent] if parent else []), "-m", message, env=env)
        self.git("update-ref", f"refs/heads/{branch}", commit)
        index.unlink()
        return commit

    def merge(self, number: int, how: str = "merge", delete_branch: bool = False) -> str:
        """The merge button: a merge commit (or a squash) on the default branch; the branch deleted when
        the repository deletes head branches on merge."""
        with self._state() as state:
            pr = _pr(state, number)
            assert pr["state"] == "OPEN" and not pr["isCrossRepository"], pr
            main = self._sha(f"refs/heads/{self.default_branch}")
            tree = self.git("merge-tree", "--write-tree", main, pr["headRefOid"])
            parents = ["-p", main] + (["-p", pr["headRefOid"]] if how == "merge" else [])
            message = f"Merge pull request #{number} from {self.repo.split('/')[0]}/{pr['headRefName']}"
            commit = self.git("commit-tree", tree, *parents, "-m", message, env=self._dated())
            self.git("update-ref", f"refs/heads/{self.default_branch}", commit, main)
            pr.update(state="MERGED", mergedAt=_iso(self.now()), closedAt=_iso(self.now()))
            if delete_branch:
                self.git("update-ref", "-d", f"refs/heads/{pr['headRefName']}")
            _event(self.root, "pr.merge", number=number, how=how, deleted_branch=delete_branch)
        return commit

    def close(self, number: int) -> None:
        """Closed unmerged: the reviewer said no."""
        with self._state() as state:
            pr = _pr(state, number)
            assert pr["state"] == "OPEN"
            pr.update(state="CLOSED", closedAt=_iso(self.now()))
            _event(self.root, "pr.close", number=number)

    def fork_pr(self, owner: str, branch: str, body: str = "from a fork", head_sha: str = "f" * 40) -> int:
        """A pull request from another account's fork, on a branch of any name."""
        with self._state() as state:
            number = _new_pr(state, self.now(), branch, "a fork's change", body, head_sha, owner, owner)
            _event(self.root, "pr.create", number=number, by=owner)
        return number

    def comment(self, number: int, user: str, body: str) -> int:
        with self._state() as state:
            return _add_comment(self.root, state, number, user, body, self.now())

    def artifact(
        self,
        run_id: int,
        name: str,
        members: dict[str, bytes] | bytes,
        expired: bool = False,
        listed_size: int | None = None,
    ) -> int:
        """An artifact a run uploaded (a dict is zipped the way upload-artifact does; bytes go as they are).
        ``listed_size`` is the size the listing reports, when the uploader lied about it."""
        if isinstance(members, dict):
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
                for member, data in members.items():
                    archive.writestr(member, data)
            members = buffer.getvalue()
        with self._state() as state:
            artifact_id = state["next_artifact_id"]
            state["next_artifact_id"] += 1
            path = self.root / f"artifact-{artifact_id}.zip"
            path.write_bytes(members)
            state["artifacts"].setdefault(str(run_id), []).append(
                {
                    "id": artifact_id,
                    "name": name,
                    "size_in_bytes": len(members) if listed_size is None else listed_size,
                    "expired": expired,
                    "file": str(path),
                }
            )
        return artifact_id

    def replace_artifact(self, run_id: int, name: str, members: dict[str, bytes]) -> int:
        """upload-artifact with ``overwrite: true``: the run's artifact of that name is replaced."""
        with self._state() as state:
            run = state["artifacts"].get(str(run_id), [])
            state["artifacts"][str(run_id)] = [a for a in run if a["name"] != name]
        return self.artifact(run_id, name, members)

    def configure(self, **settings: Any) -> None:
        """``read_only=True``: the token may read but not write (a fork's pull request); ``login``: who
        the token posts as; ``race_comment=BODY`` / ``race_pr=BODY``: just before the next comment is
        posted / pull request opened, another run does the same with BODY (the race two runs at once
        can have, made certain); ``fail_create=REASON``: the next pull request cannot be opened."""
        with self._state() as state:
            state.update(settings)

    def schedule_active(self) -> bool:
        """Whether GitHub still runs the schedule: activity within 60 days, where activity is a commit on
        the default branch or enabling the workflow through the API. Which other events count GitHub does
        not say; this counts only those two, so a keep-alive that works here works there."""
        state = _load(self.root)
        tip = self._sha(f"refs/heads/{self.default_branch}")
        last = max(float(self.git("log", "-1", "--format=%ct", tip)) if tip else 0, state["enabled_at"] or 0)
        return self.now() - last < INACTIVE_DAYS * DAY

    # -- what happened --------------------------------------------------------------------------

    def prs(self) -> list[dict[str, Any]]:
        with self._state() as state:
            return [dict(pr) for pr in state["prs"]]

    def pr(self, number: int) -> dict[str, Any]:
        return next(pr for pr in self.prs() if pr["number"] == number)

    def comments(self, number: int | None = None) -> list[dict[str, Any]]:
        state = _load(self.root)
        return [c for c in state["comments"] if number is None or c["issue"] == number]

    def branch(self, name: str) -> str | None:
        return self._sha(f"refs/heads/{name}")

    def events(self) -> list[dict[str, Any]]:
        return _read_log(self.root / "events.jsonl")

    def pushes(self) -> list[dict[str, Any]]:
        return _read_log(self.root / "pushes.jsonl")

    def calls(self) -> list[list[str]]:
        return [c["argv"] for c in _read_log(self.root / "calls.jsonl")]

    def mark(self) -> tuple[int, int, int]:
        return len(self.events()), len(self.pushes()), len(self.calls())

    def since(
        self, mark: tuple[int, int, int]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[list[str]]]:
        return self.events()[mark[0] :], self.pushes()[mark[1] :], self.calls()[mark[2] :]

    @contextlib.contextmanager
    def _state(self) -> Iterator[dict[str, Any]]:
        with _locked(self.root):
            state = _load(self.root)
            _sync(self.root, state)
            yield state
            _save(self.root, state)

    def _sha(self, ref: str) -> str | None:
        return _ref(self.remote, ref)


# -- state ------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    with open(root / "lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield


def _load(root: Path) -> dict[str, Any]:
    return json.loads((root / "state.json").read_text())


def _save(root: Path, state: dict[str, Any]) -> None:
    tmp = root / "state.json.tmp"
    tmp.write_text(json.dumps(state, indent=1))
    tmp.replace(root / "state.json")


def _read_log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _append(path: Path, record: dict[str, Any]) -> None:
    with open(path, "a") as fh:
        fh.write(json.dumps(record) + "\n")


def _event(root: Path, kind: str, **fields: Any) -> None:
    _append(root / "events.jsonl", {"kind": kind, **fields})


def _iso(when: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))


def _clock(root: Path) -> float:
    return time.time() + float((root / "clock").read_text())


def _ref(remote: Path, ref: str) -> str | None:
    done = subprocess.run(
        ["git", "--git-dir", str(remote), "rev-parse", "-q", "--verify", ref + "^{commit}"],
        capture_output=True, text=True, env=_clean_git_env(),
    )  # fmt: skip
    return done.stdout.strip() or None


def _is_ancestor(remote: Path, old: str, new: str) -> bool:
    done = subprocess.run(
        ["git", "--git-dir", str(remote), "merge-base", "--is-ancestor", old, new], env=_clean_git_env()
    )
    return done.returncode == 0


def _sync(root: Path, state: dict[str, Any]) -> None:
    """An open pull request from a branch of this repository follows the branch: its head is the
    branch's commit, and deleting the branch closes it (GitHub does both)."""
    for pr in state["prs"]:
        if pr["state"] == "OPEN" and not pr["isCrossRepository"]:
            sha = _ref(root / "remote.git", f"refs/heads/{pr['headRefName']}")
            if sha is None:
                pr.update(state="CLOSED", closedAt=_iso(_clock(root)))
            else:
                pr["headRefOid"] = sha


def _pr(state: dict[str, Any], number: int) -> dict[str, Any]:
    return next(pr for pr in state["prs"] if pr["number"] == number)


def _new_pr(
    state: dict[str, Any],
    now: float,
    head: str,
    title: str,
    body: str,
    sha: str,
    owner: str | None,
    author: str,
) -> int:
    number = state["next_number"]  # issues and pull requests share one sequence of numbers
    state["next_number"] += 1
    state["prs"].append(
        {
            "number": number,
            "state": "OPEN",
            "title": title,
            "body": body,
            "headRefName": head,
            "headRefOid": sha,
            "baseRefName": state["default_branch"],
            "isCrossRepository": owner is not None,
            "headRepositoryOwner": {"login": owner or state["repo"].split("/")[0]},
            "mergedAt": None,
            "closedAt": None,
            "createdAt": _iso(now),
            "created": now + number * 1e-3,  # the order GitHub lists by: creation
            # GitHub's web URL of a pull request, <server>/<owner>/<repo>/pull/<number>, on the double's server
            "url": f"{SERVER}/{state['repo']}/pull/{number}",
            "author": {"login": author},
        }
    )
    return number


def _add_comment(root: Path, state: dict[str, Any], number: int, user: str, body: str, now: float) -> int:
    comment_id = state["next_comment_id"]
    state["next_comment_id"] += 1
    state["comments"].append({"id": comment_id, "issue": number, "user": {"login": user}, "body": body,
                              "created_at": _iso(now)})  # fmt: skip
    _event(root, "comment.create", id=comment_id, issue=number, user=user, body=body)
    return comment_id


def hook_main(root: str) -> None:
    """post-receive: every ref update a push made, with whether it rewrote history (a force push)."""
    remote = Path(root) / "remote.git"
    for line in sys.stdin.read().splitlines():
        old, new, ref = line.split()
        forced = old != ZERO and new != ZERO and not _is_ancestor(remote, old, new)
        _append(Path(root) / "pushes.jsonl", {"ref": ref, "old": old, "new": new, "forced": forced})


# -- gh ---------------------------------------------------------------------------------------------


class Exit(Exception):
    def __init__(self, code: int, stderr: str = "", stdout: str = "") -> None:
        super().__init__(stderr)
        self.code, self.stderr, self.stdout = code, stderr, stdout


def _flags(
    args: list[str], spec: dict[str, str], repeat: frozenset[str] = frozenset()
) -> tuple[dict[str, Any], list[str]]:
    """gh's flags as cobra parses them: ``--name value``, ``--name=value``, ``-x value``; spec maps every
    spelling to its name, and a name in ``repeat`` collects a list. Unknown flags fail as cobra's do."""
    values: dict[str, Any] = {}
    positional: list[str] = []
    booleans = {"paginate", "silent"}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("-") and arg != "-":
            name, _, inline = arg.partition("=")
            if name not in spec:
                raise Exit(1, f"unknown flag: {name}\n")
            dest = spec[name]
            if dest in booleans:
                value: Any = True
            elif inline or "=" in arg:
                value = inline
            else:
                i += 1
                if i >= len(args):
                    raise Exit(1, f"flag needs an argument: {name}\n")
                value = args[i]
            if dest in repeat:
                values.setdefault(dest, []).append(value)
            else:
                values[dest] = value
        else:
            positional.append(arg)
        i += 1
    return values, positional


def _jq(data: Any, expression: str | None) -> str:
    """gh's --jq (gojq, pkg/jq): strings print raw, anything else as compact JSON, one a line; jq -r -c
    does the same."""
    text = json.dumps(data)
    if expression is None:
        return text + "\n"
    done = subprocess.run(["jq", "-r", "-c", expression], input=text, capture_output=True, text=True)
    if done.returncode:
        raise Exit(1, done.stderr)
    return done.stdout


def _export(pr: dict[str, Any], fields: str | None) -> dict[str, Any]:
    """--json FIELDS: only the fields named, each known to gh (api.PullRequestFields), else gh's error."""
    if not fields:
        raise Exit(2, "the double serves pr list/view with --json only: a script should not parse a table\n")
    names = fields.split(",")
    unknown = [n for n in names if n not in PR_FIELDS]
    if unknown:
        raise Exit(1, f'Unknown JSON field: "{unknown[0]}"\n')
    return {n: pr[n] for n in names}


def _head_label(pr: dict[str, Any]) -> str:
    """api/queries_pr.go, PullRequest.HeadLabel: OWNER:BRANCH for a cross-repository pull request."""
    return (
        f"{pr['headRepositoryOwner']['login']}:{pr['headRefName']}"
        if pr["isCrossRepository"]
        else pr["headRefName"]
    )


def find(
    state: dict[str, Any], selector: str, base: str = "", states: list[str] | None = None
) -> dict[str, Any]:
    """pkg/cmd/pr/shared/finder.go, ``Find``: a number (``#`` allowed) selects by number unless a base
    branch is given (``gh pr create``'s case); anything else is a branch, found by ``findForBranch``:
    the branch's pull requests in the given states (all when none is given: ``gh pr view`` and
    ``gh pr edit`` give none), newest first (CREATED_AT DESC, first 30), then sort.SliceStable with the
    open ones first, and the first whose HeadLabel() is the selector, whose base matches when one is
    given, and that is open unless the branch is the default branch. So with no open pull request,
    ``gh pr view BRANCH`` answers with the branch's newest merged or closed one."""
    number = selector.removeprefix("#")
    if number.isdigit() and not base:
        for pr in state["prs"]:
            if pr["number"] == int(number):
                return pr
        raise Exit(
            1,
            f"GraphQL: Could not resolve to a PullRequest with the number of {number}. (repository.pullRequest)\n",
        )
    branch = selector.split(":", 1)[-1]
    candidates = [
        pr for pr in state["prs"] if pr["headRefName"] == branch and (not states or pr["state"] in states)
    ]
    candidates = sorted(candidates, key=lambda pr: -pr["created"])[:30]
    candidates.sort(key=lambda pr: pr["state"] != "OPEN")  # stable, as sort.SliceStable
    for pr in candidates:
        if (
            _head_label(pr) == selector
            and (not base or pr["baseRefName"] == base)
            and (pr["state"] == "OPEN" or state["default_branch"] != selector)
        ):
            return pr
    raise Exit(1, f'no pull requests found for branch "{selector}"\n')


def _need_repo(state: dict[str, Any]) -> None:
    """gh pr resolves its base repository from GH_REPO or the checkout's remotes; the double's remotes
    point at no host gh knows, so a script must name the repository (as it should in Actions anyway)."""
    if os.environ.get("GH_REPO") != state["repo"]:
        raise Exit(1, "none of the git remotes configured for this repository point to a known GitHub host\n")


def _body(values: dict[str, Any]) -> str | None:
    if "body_file" in values:
        path = values["body_file"]
        return sys.stdin.read() if path == "-" else Path(path).read_text()
    return values.get("body")


def pr_list(root: Path, state: dict[str, Any], args: list[str]) -> str:
    """pkg/cmd/pr/list: --state defaults to open (list.go, StringEnumFlag default "open"), --limit to 30;
    http.go, listPullRequests: states open→[OPEN], closed→[CLOSED, MERGED], merged→[MERGED],
    all→[OPEN, CLOSED, MERGED]; --head filters headRefName only (a fork's branch of the same name is
    listed too), --base baseRefName; newest first (CREATED_AT DESC)."""
    _need_repo(state)
    spec = {"--head": "head", "-H": "head", "--base": "base", "-B": "base", "--state": "state", "-s": "state",
            "--limit": "limit", "-L": "limit", "--json": "json", "--jq": "jq", "-q": "jq"}  # fmt: skip
    values, _ = _flags(args, spec)
    states = {
        "open": ["OPEN"],
        "closed": ["CLOSED", "MERGED"],
        "merged": ["MERGED"],
        "all": ["OPEN", "CLOSED", "MERGED"],
    }
    chosen = states.get(values.get("state", "open"))
    if chosen is None:
        raise Exit(
            1,
            f'invalid argument "{values["state"]}" for "-s, --state" flag: valid values are {{open|closed|merged|all}}\n',
        )
    prs = [
        pr
        for pr in sorted(state["prs"], key=lambda pr: -pr["created"])
        if pr["state"] in chosen
        and ("head" not in values or pr["headRefName"] == values["head"])
        and ("base" not in values or pr["baseRefName"] == values["base"])
    ][: int(values.get("limit", 30))]
    return _jq([_export(pr, values.get("json")) for pr in prs], values.get("jq"))


def pr_view(root: Path, state: dict[str, Any], args: list[str]) -> str:
    """pkg/cmd/pr/view/view.go, viewRun: Finder.Find with the selector and no states."""
    _need_repo(state)
    values, positional = _flags(args, {"--json": "json", "--jq": "jq", "-q": "jq"})
    pr = find(state, positional[0] if positional else "")
    return _jq(_export(pr, values.get("json")), values.get("jq"))


def pr_create(root: Path, state: dict[str, Any], args: list[str]) -> str:
    """pkg/cmd/pr/create/create.go. NewCreateContext: the base is --base or the repository's default
    branch; with --head nothing is pushed. createRun: Finder.Find(HeadBranchLabel, BaseBranch, States
    [OPEN]) first, and an open one fails with 'a pull request for branch %q into branch %q already
    exists'; submitPR: the server's refusals come back as 'pull request create failed: GraphQL: …'.
    The server (createPullRequest) refuses a read-only token, a head that is not a branch here, a head
    with no commits the base lacks ('No commits between BASE and HEAD'), and a second open pull request
    for the same head and base ('A pull request already exists for OWNER:HEAD.')."""
    _need_repo(state)
    spec = {"--head": "head", "-H": "head", "--base": "base", "-B": "base", "--title": "title", "-t": "title",
            "--body": "body", "-b": "body", "--body-file": "body_file", "-F": "body_file"}  # fmt: skip
    values, _ = _flags(args, spec)
    body = _body(values)
    if "title" not in values or body is None:
        raise Exit(
            1,
            "must provide `--title` and `--body` (or `--fill` or `fill-first` or `--fillverbose`) when not running interactively\n",
        )
    if "head" not in values:
        raise Exit(2, "the double serves pr create with --head only (gh would push the current branch)\n")
    head, base = values["head"], values.get("base") or state["default_branch"]
    if reason := state.pop("fail_create", None):
        raise Exit(1, f"pull request create failed: GraphQL: {reason} (createPullRequest)\n")
    if race := state.pop("race_pr", None):  # another run opened one between our look and now
        sha = _ref(root / "remote.git", f"refs/heads/{head}")
        number = _new_pr(state, _clock(root), head, values["title"], race, sha or ZERO, None, state["login"])
        _event(root, "pr.create", number=number, head=head, body=race)
    try:
        existing = find(state, head, base, ["OPEN"])
    except Exit:  # a NotFoundError: none open, go on
        existing = None
    if existing is not None:
        raise Exit(
            1, f'a pull request for branch "{head}" into branch "{base}" already exists:\n{existing["url"]}\n'
        )
    failed = "pull request create failed: GraphQL: {} (createPullRequest)\n"
    if state["read_only"]:
        raise Exit(1, failed.format("Resource not accessible by integration"))
    remote = root / "remote.git"
    head_sha, base_sha = _ref(remote, f"refs/heads/{head}"), _ref(remote, f"refs/heads/{base}")
    if head_sha is None or base_sha is None:
        raise Exit(
            1,
            failed.format(
                f"Head sha can't be blank, Base sha can't be blank, No commits between {base} and {head}, Head ref must be a branch"
            ),
        )
    if _is_ancestor(remote, head_sha, base_sha):
        raise Exit(1, failed.format(f"No commits between {base} and {head}"))
    if any(
        pr["state"] == "OPEN" and _head_label(pr) == head and pr["baseRefName"] == base for pr in state["prs"]
    ):
        raise Exit(
            1, failed.format(f"A pull request already exists for {state['repo'].split('/')[0]}:{head}.")
        )
    number = _new_pr(state, _clock(root), head, values["title"], body, head_sha, None, state["login"])
    _event(root, "pr.create", number=number, head=head, body=body)
    return _pr(state, number)["url"] + "\n"


def pr_edit(root: Path, state: dict[str, Any], args: list[str]) -> str:
    """pkg/cmd/pr/edit/edit.go, editRun: Finder.Find with the selector and no states, so a branch name
    picks as ``gh pr view`` does; then updatePullRequest."""
    _need_repo(state)
    spec = {
        "--title": "title",
        "-t": "title",
        "--body": "body",
        "-b": "body",
        "--body-file": "body_file",
        "-F": "body_file",
    }
    values, positional = _flags(args, spec)
    pr = find(state, positional[0] if positional else "")
    if state["read_only"]:
        raise Exit(1, "GraphQL: Resource not accessible by integration (updatePullRequest)\n")
    body = _body(values)
    if body is not None:
        pr["body"] = body
    if "title" in values:
        pr["title"] = values["title"]
    _event(root, "pr.edit", number=pr["number"], body=body)
    return pr["url"] + "\n"


def _fields(values: dict[str, Any]) -> dict[str, Any]:
    """pkg/cmd/api/api.go, parseFields: -f is a string; -F converts true, false, null and integers, and
    reads @FILE (or @- for stdin)."""
    params: dict[str, Any] = {}
    for raw in values.get("raw_field", []):
        key, _, value = raw.partition("=")
        params[key] = value
    for typed in values.get("field", []):
        key, _, value = typed.partition("=")
        if value.startswith("@"):
            params[key] = sys.stdin.read() if value == "@-" else Path(value[1:]).read_text()
        elif value in ("true", "false", "null"):
            params[key] = json.loads(value)
        elif re.fullmatch(r"-?[0-9]+", value):
            params[key] = int(value)
        else:
            params[key] = value
    return params


def _rest_pr(state: dict[str, Any], pr: dict[str, Any]) -> dict[str, Any]:
    owner = pr["headRepositoryOwner"]["login"]
    name = state["repo"].split("/")[1]
    return {
        "number": pr["number"],
        "state": "open" if pr["state"] == "OPEN" else "closed",
        "merged": pr["state"] == "MERGED",
        "merged_at": pr["mergedAt"],
        "title": pr["title"],
        "body": pr["body"],
        "user": pr["author"],
        "html_url": pr["url"],
        "head": {
            "ref": pr["headRefName"],
            "sha": pr["headRefOid"],
            "label": f"{owner}:{pr['headRefName']}",
            "repo": {"full_name": f"{owner}/{name}"},
        },
        "base": {"ref": pr["baseRefName"]},
    }


def _rest(
    root: Path, state: dict[str, Any], method: str, endpoint: str, params: dict[str, Any]
) -> tuple[int, Any]:
    """GitHub's REST routes the scripts call, with its status codes and error bodies."""
    path, _, query = endpoint.lstrip("/").partition("?")
    args = dict(part.partition("=")[::2] for part in query.split("&") if part)
    if method == "GET":
        args.update({k: str(v) for k, v in params.items()})
    not_found = (
        404,
        {"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"},
    )
    prefix = f"repos/{state['repo']}/"
    if not path.startswith(prefix):
        return not_found
    route = path[len(prefix) :]
    if method != "GET" and state["read_only"]:
        return 403, {"message": "Resource not accessible by integration", "status": "403"}
    if m := re.fullmatch(r"pulls/([0-9]+)", route):
        pr = next((p for p in state["prs"] if p["number"] == int(m[1])), None)
        return (200, _rest_pr(state, pr)) if pr and method == "GET" else not_found
    if route == "pulls" and method == "GET":
        # "head: Filter pulls by head user or head organization and branch name in the format of
        # user:ref-name"; state open (default), closed or all; newest first
        wanted = {"open": ["OPEN"], "closed": ["CLOSED", "MERGED"], "all": ["OPEN", "CLOSED", "MERGED"]}[
            args.get("state", "open")
        ]
        prs = [p for p in sorted(state["prs"], key=lambda p: -p["created"]) if p["state"] in wanted]
        if "head" in args:
            prs = [
                p for p in prs if f"{p['headRepositoryOwner']['login']}:{p['headRefName']}" == args["head"]
            ]
        if "base" in args:
            prs = [p for p in prs if p["baseRefName"] == args["base"]]
        return 200, [_rest_pr(state, p) for p in prs]
    if m := re.fullmatch(r"issues/([0-9]+)/comments", route):
        number = int(m[1])
        if not any(p["number"] == number for p in state["prs"]):
            return not_found
        if method == "GET":
            return 200, [
                {k: c[k] for k in ("id", "user", "body", "created_at")}
                for c in state["comments"]
                if c["issue"] == number
            ]
        if method == "POST":
            if race := state.pop("race_comment", None):  # another run posted between our look and now
                _add_comment(root, state, number, state["login"], race, _clock(root))
            if not isinstance(params.get("body"), str):
                return 422, {"message": 'Invalid request.\n\n"body" wasn\'t supplied.', "status": "422"}
            comment_id = _add_comment(root, state, number, state["login"], params["body"], _clock(root))
            return 201, {"id": comment_id, "user": {"login": state["login"]}, "body": params["body"]}
        return not_found
    if m := re.fullmatch(r"issues/comments/([0-9]+)", route):
        comment = next((c for c in state["comments"] if c["id"] == int(m[1])), None)
        if comment is None:
            return not_found
        if method == "PATCH":
            comment["body"] = params["body"]
            _event(root, "comment.update", id=comment["id"], issue=comment["issue"], body=params["body"])
            return 200, {k: comment[k] for k in ("id", "user", "body")}
        if method == "DELETE":
            state["comments"].remove(comment)
            _event(root, "comment.delete", id=comment["id"], issue=comment["issue"])
            return 204, None
        return (200, {k: comment[k] for k in ("id", "user", "body")}) if method == "GET" else not_found
    if m := re.fullmatch(r"actions/workflows/([A-Za-z0-9._-]+)/enable", route):
        if method != "PUT":
            return not_found
        state["enabled_at"] = _clock(root)
        _event(root, "workflow.enable", workflow=m[1])
        return 204, None
    if m := re.fullmatch(r"actions/runs/([0-9]+)/artifacts", route):
        artifacts = [
            a for a in state["artifacts"].get(m[1], []) if "name" not in args or a["name"] == args["name"]
        ]
        shown = [{k: a[k] for k in ("id", "name", "size_in_bytes", "expired")} for a in artifacts]
        return 200, {"total_count": len(shown), "artifacts": shown}
    if m := re.fullmatch(r"actions/artifacts/([0-9]+)/zip", route):
        for artifact in (a for run in state["artifacts"].values() for a in run):
            if artifact["id"] == int(m[1]):
                if artifact["expired"]:
                    return 410, {"message": "Artifact has expired", "status": "410"}
                return 200, Path(artifact["file"]).read_bytes()  # GitHub redirects to the zip; gh follows
        return not_found
    return not_found


def api(root: Path, state: dict[str, Any], args: list[str]) -> str | bytes:
    """pkg/cmd/api/api.go. apiRun: the method is GET, or POST when fields are given and --method is not;
    for GET the fields go in the query string. processResponse: 204 prints nothing; an error status
    prints the error body to stdout unfiltered and 'gh: MESSAGE (HTTP STATUS)' to stderr, exit 1;
    --paginate joins the pages' arrays into one (a single page here)."""
    spec = {"--method": "method", "-X": "method", "--jq": "jq", "-q": "jq", "--paginate": "paginate",
            "--field": "field", "-F": "field", "--raw-field": "raw_field", "-f": "raw_field", "--silent": "silent",
            "--header": "header", "-H": "header"}  # fmt: skip
    values, positional = _flags(args, spec, frozenset({"field", "raw_field", "header"}))
    params = _fields(values)
    method = values.get("method", "POST" if params else "GET").upper()
    status, body = _rest(root, state, method, positional[0], params)
    if status >= 400:
        raise Exit(1, f"gh: {body['message']} (HTTP {status})\n", json.dumps(body))
    if status == 204 or values.get("silent"):
        return ""
    if isinstance(body, bytes):
        return body
    return _jq(body, values.get("jq"))


COMMANDS = {
    ("pr", "list"): pr_list,
    ("pr", "view"): pr_view,
    ("pr", "create"): pr_create,
    ("pr", "edit"): pr_edit,
}


def gh_main(argv: list[str]) -> int:
    root = Path(os.environ["GH_DOUBLE"])
    logged = [
        ("body=" + Path(a[6:]).read_text()) if a.startswith("body=@") and a != "body=@-" else a for a in argv
    ]
    with _locked(root):
        _append(root / "calls.jsonl", {"argv": logged})
        if not os.environ.get("GH_TOKEN"):
            sys.stderr.write(
                "gh: To use GitHub CLI in a GitHub Actions workflow, set the GH_TOKEN environment variable.\n"
            )
            return 4
        state = _load(root)
        _sync(root, state)
        try:
            if argv[:1] == ["api"]:
                out = api(root, state, argv[1:])
            elif tuple(argv[:2]) in COMMANDS:
                out = COMMANDS[tuple(argv[:2])](root, state, argv[2:])  # type: ignore[index]
            else:
                raise Exit(2, f"the gh double does not serve: gh {' '.join(argv[:2])}\n")
        except Exit as exc:
            _save(root, state)
            sys.stdout.write(exc.stdout)
            sys.stderr.write(exc.stderr)
            return exc.code
        _save(root, state)
    if isinstance(out, bytes):
        sys.stdout.buffer.write(out)
    else:
        sys.stdout.write(out)
    return 0
