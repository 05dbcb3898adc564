"""A runner for the workflows' own jobs: each ``run:`` step executed as GitHub Actions executes it, its
``if:`` and ``${{ }}`` evaluated as Actions evaluates them, against the GitHub double (gh_double.py).

What is GitHub's, and where it is said:

- Expressions (GitHub Docs, "Evaluate expressions in workflows and actions"): literals ``true``,
  ``false``, ``null``, numbers, ``'strings'`` with ``''`` for a quote; operators ``( ) [ ] . ! < <= > >=
  == != && ||``; strings compared ignoring case; loose equality, coercing to numbers when the types differ
  (null 0, true 1, false 0, a string its JSON number or NaN); falsy ``false 0 -0 "" null``; ``&&`` and
  ``||`` give one of their operands (``a || b`` is a when a is truthy), which is how
  ``steps.app.outputs.token || secrets.X || github.token`` picks a token; ``.*`` the object filter.
  Status functions: a step's ``if`` without one is ``success() && (...)``.
- ``run:`` steps: ``bash --noprofile --norc -eo pipefail {0}``, the default shell on Linux runners
  (Workflow syntax, ``jobs.<job_id>.steps[*].shell``); ``$GITHUB_OUTPUT`` a fresh file per step, read
  back as ``name=value`` or ``name<<DELIMITER`` lines ("Setting an output parameter"); a step with
  ``continue-on-error`` fails without failing the job, and ``steps.<id>.outcome`` says it failed.
- A job is red (``failure``) when a step failed and was not allowed to.

A composite action (this repository's ``action.yml``, as ``uses: ./`` or by the name the test maps to
its folder) is run step by step the same way, with its ``inputs``, ``github.action_path`` and outputs.
The other ``uses:`` steps are the only ones not run: checkout clones the double's repository as
actions/checkout leaves it (depth 1, no token kept); setup-python and the caches are the test's
interpreter and folders (a cache restored is the folder the previous run left, as a restore would);
upload-artifact zips its path into the double's artifacts of the run, by name, replacing an older one
(``overwrite: true``); the App token step gives an installation token. A step that only ``pip install``s hubdiff
is skipped: the test process's hubdiff is the one on PATH.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.gh_double import GitHubDouble

# -- expressions --------------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<number>-?(?:0x[0-9a-fA-F]+|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?))"
    r"|(?P<op>&&|\|\||==|!=|<=|>=|[()\[\].!<>,*])|(?P<name>[A-Za-z_][A-Za-z0-9_-]*))"
)
STATUS_FUNCTIONS = ("success", "failure", "always", "cancelled")


class ExpressionError(ValueError):
    """An expression this runner cannot read: the workflow uses syntax GitHub's docs do not give."""


def _tokens(text: str) -> list[tuple[str, str]]:
    out, at = [], 0
    while at < len(text):
        if not text[at:].strip():
            break
        match = _TOKEN.match(text, at)
        if not match:
            raise ExpressionError(f"cannot read {text[at:]!r} in {text!r}")
        kind = match.lastgroup
        assert kind is not None
        out.append((kind, match.group(kind)))
        at = match.end()
    return out


def truthy(value: Any) -> bool:
    if isinstance(value, float) and math.isnan(value):
        return False
    return value not in (False, 0, "", None) or isinstance(value, (dict, list))


def _number(value: Any) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if text == "":
            return 0.0
        try:
            return float(int(text, 16)) if text.lower().startswith("0x") else float(json.loads(text))
        except (ValueError, TypeError):
            return math.nan
    return math.nan


def loosely_equal(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.casefold() == b.casefold()
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return a is b
    if type(a) is type(b) and not isinstance(a, float):
        return a == b
    return _number(a) == _number(b)


def _compare(op: str, a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        x, y = a.casefold(), b.casefold()
    else:
        x, y = _number(a), _number(b)  # type: ignore[assignment]
    return {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op]


def as_string(value: Any) -> str:
    """A value as ``${{ }}`` puts it into text."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        return json.dumps(value, indent=2)
    return str(value)


def _member(value: Any, name: str) -> Any:
    if isinstance(value, _Star):
        return _Star([_member(v, name) for v in value.items])
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and key.casefold() == name.casefold():
                return item
    return None


class _Star:
    """The result of ``.*``: what follows applies to every item."""

    def __init__(self, items: list[Any]) -> None:
        self.items = items


class _Parser:
    def __init__(self, text: str, context: dict[str, Any], functions: dict[str, Any]) -> None:
        self.tokens, self.at, self.context, self.functions = _tokens(text), 0, context, functions
        self.text = text

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, value: str | None = None) -> tuple[str, str]:
        token = self.peek()
        if token is None or (value is not None and token[1] != value):
            raise ExpressionError(f"expected {value!r} in {self.text!r}")
        self.at += 1
        return token

    def parse(self) -> Any:
        value = self.or_()
        if self.peek() is not None:
            raise ExpressionError(f"unexpected {self.peek()} in {self.text!r}")
        return value.items if isinstance(value, _Star) else value

    def or_(self) -> Any:
        value = self.and_()
        while self.peek() == ("op", "||"):
            self.take()
            right = self.and_()
            value = value if truthy(value) else right
        return value

    def and_(self) -> Any:
        value = self.equality()
        while self.peek() == ("op", "&&"):
            self.take()
            right = self.equality()
            value = right if truthy(value) else value
        return value

    def equality(self) -> Any:
        value = self.comparison()
        while self.peek() in (("op", "=="), ("op", "!=")):
            op = self.take()[1]
            right = self.comparison()
            equal = loosely_equal(_plain(value), _plain(right))
            value = equal if op == "==" else not equal
        return value

    def comparison(self) -> Any:
        value = self.unary()
        while self.peek() in (("op", "<"), ("op", "<="), ("op", ">"), ("op", ">=")):
            op = self.take()[1]
            value = _compare(op, _plain(value), _plain(self.unary()))
        return value

    def unary(self) -> Any:
        if self.peek() == ("op", "!"):
            self.take()
            return not truthy(_plain(self.unary()))
        return self.postfix()

    def postfix(self) -> Any:
        value = self.primary()
        while self.peek() in (("op", "."), ("op", "[")):
            if self.take()[1] == ".":
                kind, name = self.take()
                if name == "*":
                    value = _Star(list(value.values()) if isinstance(value, dict) else list(value or []))
                elif kind == "name":
                    value = _member(value, name)
                else:
                    raise ExpressionError(f"a property name after '.' in {self.text!r}")
            else:
                index = _plain(self.or_())
                self.take("]")
                if isinstance(value, list) and isinstance(index, (int, float)) and 0 <= index < len(value):
                    value = value[int(index)]
                elif isinstance(index, str):
                    value = _member(value, index)
                else:
                    value = None
        return value

    def primary(self) -> Any:
        kind, text = self.take()
        if kind == "string":
            return text[1:-1].replace("''", "'")
        if kind == "number":
            number = float(int(text, 16)) if "x" in text.lower() else float(text)
            return int(number) if number.is_integer() else number
        if text == "(":
            value = self.or_()
            self.take(")")
            return value
        if kind == "name":
            if text in ("true", "false"):
                return text == "true"
            if text == "null":
                return None
            if self.peek() == ("op", "("):
                self.take()
                args = []
                while self.peek() != ("op", ")"):
                    args.append(_plain(self.or_()))
                    if self.peek() == ("op", ","):
                        self.take()
                self.take(")")
                if text not in self.functions:
                    raise ExpressionError(f"function {text}() is not served here")
                return self.functions[text](*args)
            return _member(self.context, text)
        raise ExpressionError(f"unexpected {text!r} in {self.text!r}")


def _plain(value: Any) -> Any:
    return value.items if isinstance(value, _Star) else value


def _functions(status: dict[str, bool]) -> dict[str, Any]:
    return {
        "success": lambda: not status.get("failed", False),
        "failure": lambda: status.get("failed", False),
        "always": lambda: True,
        "cancelled": lambda: False,
        "toJSON": lambda value: json.dumps(value, indent=2),
        "fromJSON": lambda text: json.loads(text),
        "contains": lambda a, b: (
            any(loosely_equal(x, b) for x in a)
            if isinstance(a, list)
            else str(b).casefold() in str(a).casefold()
        ),
        "startsWith": lambda a, b: str(a).casefold().startswith(str(b).casefold()),
        "hashFiles": lambda *patterns: "0" * 64,
    }


def evaluate(expression: str, context: dict[str, Any], status: dict[str, bool] | None = None) -> Any:
    """``expression`` (an ``if:``, with or without ``${{ }}``) evaluated over ``context``."""
    text = expression.strip()
    if text.startswith("${{") and text.endswith("}}"):
        text = text[3:-2]
    return _Parser(text, context, _functions(status or {})).parse()


def condition(expression: str | None, context: dict[str, Any], failed: bool) -> bool:
    """A step's or job's ``if:``: ``success()`` when none is given, and ``success() && (...)`` when it
    names no status function."""
    text = (expression or "").strip()
    if text.startswith("${{") and text.endswith("}}"):
        text = text[3:-2]
    if not text:
        text = "success()"
    elif not any(re.search(rf"\b{name}\s*\(", text) for name in STATUS_FUNCTIONS):
        text = f"success() && ({text})"
    return truthy(evaluate(text, context, {"failed": failed}))


def interpolate(text: str, context: dict[str, Any]) -> str:
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: as_string(evaluate(m.group(1), context)), str(text))


# -- jobs ---------------------------------------------------------------------------------------------


@dataclass
class StepRun:
    name: str
    outcome: str  # success, failure or skipped
    stdout: str = ""
    stderr: str = ""
    outputs: dict[str, str] = field(default_factory=dict)


@dataclass
class JobRun:
    name: str
    conclusion: str  # success, failure, or skipped (its if: was false)
    steps: list[StepRun] = field(default_factory=list)

    @property
    def log(self) -> str:
        return "\n".join(f"## {s.name} ({s.outcome})\n{s.stdout}{s.stderr}" for s in self.steps)

    def step(self, name: str) -> StepRun:
        return next(s for s in self.steps if s.name == name)


def read_outputs(path: Path) -> dict[str, str]:
    """``$GITHUB_OUTPUT`` as the runner reads it: ``name=value`` lines and ``name<<DELIMITER`` blocks."""
    outputs: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, i + 1)
            outputs[name] = "\n".join(lines[i + 1 : end])
            i = end + 1
            continue
        name, _, value = line.partition("=")
        outputs[name] = value
        i += 1
    return outputs


# the test process's hubdiff (and pytest) are on PATH: a workflow's install of the checkout, and
# action.yml's of its own folder
INSTALL = re.compile(r'pip install (\.|"\$HUBDIFF_SOURCE")( [\w-]+)*')


class Runner:
    """Runs the jobs of ``.github/workflows/*.yml`` against ``github`` in folders under ``root``."""

    def __init__(
        self,
        workflows: Path,
        github: GitHubDouble,
        root: Path,
        env: dict[str, str] | None = None,
        actions: dict[str, Path] | None = None,
    ):
        """``actions``: composite actions by the name a ``uses:`` gives them (``OWNER/hubdiff``), each the
        folder of its ``action.yml``; ``uses: ./PATH`` is the checkout's own."""
        self.workflows, self.github, self.root, self.env = workflows, github, root, env or {}
        self.actions = actions or {}
        self.runs = 0
        self._count = threading.Lock()  # jobs of a matrix run side by side

    def run(
        self,
        workflow: str,
        job_name: str,
        *,
        event: str = "schedule",
        event_payload: dict[str, Any] | None = None,
        index: int = 0,
        run_id: int | None = None,
        ref: str | None = None,
        secrets: dict[str, str] | None = None,
        variables: dict[str, str] | None = None,
        inputs: dict[str, str] | None = None,
        skip: tuple[str, ...] = (),
    ) -> JobRun:
        """One job of ``workflow`` (shard ``index`` of its matrix), as the event ``event`` starts it.
        ``ref``: the branch checked out (the default branch unless given); ``skip``: step names left out
        (the test does what they do)."""
        with self._count:
            self.runs += 1
            number = self.runs
        spec = yaml.safe_load((self.workflows / workflow).read_text())
        job = spec["jobs"][job_name]
        matrix = (job.get("strategy") or {}).get("matrix") or {}
        total = max((len(v) for v in matrix.values() if isinstance(v, list)), default=1)
        run_id = run_id or 1000 + number
        work = self.root / f"run-{number}-{job_name}-{index}"
        temp = work / "runner-temp"
        temp.mkdir(parents=True)
        default = self.github.default_branch
        context: dict[str, Any] = {
            "github": {
                "event_name": event,
                "event": {"repository": {"default_branch": default}, **(event_payload or {})},
                "ref_name": ref or default,
                "repository": self.github.repo,
                "run_id": run_id,
                "run_attempt": 1,
                "token": "ghs_workflow",
            },
            "strategy": {"job-index": index, "job-total": total},
            "matrix": {k: v[index] for k, v in matrix.items() if isinstance(v, list)},
            "runner": {"os": "Linux", "temp": str(self.root / "runner-temp")},  # kept between runs: the cache
            "secrets": secrets or {},
            "vars": variables or {},
            "inputs": inputs or {},
            "steps": {},
            "env": {},
        }
        if not condition(job.get("if"), context, failed=False):
            return JobRun(f"{job_name} {index}", "skipped")
        context["env"] = {k: interpolate(v, context) for k, v in (job.get("env") or {}).items()}
        run = JobRun(f"{job_name} {index}", "success")
        failed = False
        workspace = work / "workspace"
        for number, step in enumerate(job["steps"]):
            name = step.get("name") or step.get("uses") or f"step {number}"
            if name in skip or INSTALL.fullmatch(str(step.get("run", "")).strip()):
                run.steps.append(StepRun(name, "skipped"))
                continue
            if not condition(step.get("if"), context, failed):
                run.steps.append(StepRun(name, "skipped"))
                continue
            step_env = {k: interpolate(v, context) for k, v in (step.get("env") or {}).items()}
            if "uses" in step:
                result = self._uses(step, name, context, workspace, run_id, ref, temp, event)
            else:
                result = self._run(
                    step, name, context, workspace, {**context["env"], **step_env}, temp, run_id, event
                )
            run.steps.append(result)
            if "id" in step:
                context["steps"][step["id"]] = {
                    "outputs": result.outputs,
                    "outcome": result.outcome,
                    "conclusion": "success" if step.get("continue-on-error") else result.outcome,
                }
            if result.outcome == "failure" and not step.get("continue-on-error"):
                failed = True
        run.conclusion = "failure" if failed else "success"
        return run

    def _run(
        self,
        step: dict[str, Any],
        name: str,
        context: dict[str, Any],
        workspace: Path,
        env: dict[str, str],
        temp: Path,
        run_id: int,
        event: str,
        action_path: Path | None = None,
    ) -> StepRun:
        if "${{" in step["run"]:
            raise ExpressionError(f"{name}: an expression inside run: (the workflows keep them in env)")
        script = temp / f"step-{len(list(temp.iterdir()))}.sh"
        script.write_text(step["run"])
        output = temp / f"{script.stem}.output"
        output.touch()
        summary = temp / f"{script.stem}.summary"
        actions = {
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_RUN_ID": str(run_id),
            "GITHUB_EVENT_NAME": event,
            "GITHUB_WORKSPACE": str(workspace),
            "RUNNER_TEMP": context["runner"]["temp"],
            **({"GITHUB_ACTION_PATH": str(action_path)} if action_path else {}),
        }
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=workspace,
            env=self.github.env(**{**self.env, **actions, **env}),
            capture_output=True,
            text=True,
            timeout=120,
        )
        return StepRun(
            name,
            "success" if done.returncode == 0 else "failure",
            done.stdout,
            done.stderr,
            read_outputs(output),
        )

    def _uses(
        self,
        step: dict[str, Any],
        name: str,
        context: dict[str, Any],
        workspace: Path,
        run_id: int,
        ref: str | None,
        temp: Path,
        event: str,
    ) -> StepRun:
        action = step["uses"].split("@")[0]
        given = {k: interpolate(str(v), context) for k, v in (step.get("with") or {}).items()}
        if action.startswith("./") or action in self.actions:
            folder = workspace / action if action.startswith("./") else self.actions[action]
            step_env = {k: interpolate(v, context) for k, v in (step.get("env") or {}).items()}
            return self._composite(
                folder,
                given,
                name,
                context,
                workspace,
                {**context["env"], **step_env},
                run_id,
                ref,
                temp,
                event,
            )
        if action == "actions/checkout":
            self.github.checkout(workspace, ref=ref)
            return StepRun(name, "success")
        if action == "actions/setup-python":
            return StepRun(name, "success")
        if action in ("actions/cache/restore", "actions/cache/save"):
            Path(given["path"].replace("~", str(self.root / "home"))).mkdir(parents=True, exist_ok=True)
            return StepRun(name, "success", outputs={"cache-hit": "false", "cache-primary-key": given["key"]})
        if action == "actions/create-github-app-token":
            return StepRun(name, "success", outputs={"token": "ghs_app_installation"})
        if action == "actions/upload-artifact":
            folder = workspace / given["path"]
            files = sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []
            if files:
                members = {str(p.relative_to(folder)): p.read_bytes() for p in files}
                self.github.replace_artifact(run_id, given["name"], members)
            return StepRun(name, "success", outputs={"files": str(len(files))})
        raise ExpressionError(f"{name}: the runner does not serve {action}")

    def _composite(
        self,
        folder: Path,
        given: dict[str, str],
        name: str,
        context: dict[str, Any],
        workspace: Path,
        env: dict[str, str],
        run_id: int,
        ref: str | None,
        temp: Path,
        event: str,
    ) -> StepRun:
        """A composite action (``runs.using: composite``, "Metadata syntax for GitHub Actions"): its
        steps run in order with ``inputs`` (its defaults, then what ``with:`` gave), ``github.action_path``
        its folder and ``steps`` its own; each ``run:`` step names its shell; its outputs are its
        ``outputs.*.value`` expressions, evaluated once the steps have run. It fails when one of its steps
        fails (and was not allowed to)."""
        spec = yaml.safe_load((folder / "action.yml").read_text())
        assert spec["runs"]["using"] == "composite", folder
        unknown = set(given) - set(spec.get("inputs") or {})
        if unknown:  # GitHub warns and drops them; a test should not rely on that
            raise ExpressionError(f"{name}: inputs the action does not declare: {sorted(unknown)}")
        inputs = {k: str((v or {}).get("default", "")) for k, v in (spec.get("inputs") or {}).items()}
        inputs.update(given)
        inner = {
            **context,
            "github": {**context["github"], "action_path": str(folder)},
            "inputs": inputs,
            "steps": {},
            "env": env,
        }
        failed, out, err = False, [], []
        for number, step in enumerate(spec["runs"]["steps"]):
            label = step.get("name") or step.get("uses") or f"step {number}"
            if INSTALL.fullmatch(str(step.get("run", "")).strip()) or not condition(
                step.get("if"), inner, failed
            ):
                continue
            step_env = {k: interpolate(v, inner) for k, v in (step.get("env") or {}).items()}
            if "uses" in step:
                result = self._uses(step, label, inner, workspace, run_id, ref, temp, event)
            else:
                assert step.get("shell") == "bash", f"{label}: a composite's run step names its shell"
                result = self._run(
                    step, label, inner, workspace, {**env, **step_env}, temp, run_id, event, folder
                )
            out.append(result.stdout)
            err.append(result.stderr)
            if "id" in step:
                inner["steps"][step["id"]] = {"outputs": result.outputs, "outcome": result.outcome}
            if result.outcome == "failure" and not step.get("continue-on-error"):
                failed = True
        outputs = {k: as_string(evaluate(v["value"], inner)) for k, v in (spec.get("outputs") or {}).items()}
        return StepRun(name, "failure" if failed else "success", "".join(out), "".join(err), outputs)
