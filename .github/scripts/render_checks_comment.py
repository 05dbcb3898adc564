"""Render the checks comment from the data a pull request's checks run uploaded, on the trusted side.

    render_checks_comment.py ARTIFACT.zip OUTDIR --head-sha SHA --run-url URL

The artifact comes from a run of the pull request's own code (a fork's, maybe), so it is hostile data:
the zip is bounded in size and members, only three names are read (never extracted), each bounded;
``pr-number`` must be a plain integer, ``check-exit`` one too, and ``check.json`` (what
``hubdiff check --format json`` wrote) must have the shape hubdiff gives it. Nothing of it is
markdown: every string it holds goes through hubdiff's own escaping (``code``/``md``, the ones its
comments use, tested against a corpus of hostile strings), rendered by the default branch's hubdiff.
Writes OUTDIR/pr-number and OUTDIR/comment.md; on anything else, one ``::error::`` line and exit 1.

A broken claim is named with its ``file:line``, stated → measured, and what accepting the figures
writes; the one command that accepts them is composed here, by hubdiff's own rule
(``hubdiff._baseline.accept.accept_commands``), from a baseline path and repo ids that passed their own
patterns, never taken from the artifact as text: a fork's run must not tell a reviewer what to run.

The figures are the run's own report of itself, as trustworthy as that run (which a fork controls):
the comment says which run and commit they come from, and the verdict is the run's, not ours.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from hubdiff._baseline.accept import accept_commands
from hubdiff._render.markdown import COMMENT_LIMIT, code, md
from hubdiff._source.spec import is_repo_id

MARKER = "<!-- hubdiff:checks -->"
MAX_ZIP = 2 * 1024 * 1024
MAX_MEMBERS = 16
LIMITS = {"pr-number": 32, "check-exit": 8, "check.json": 1024 * 1024}
MAX_ROWS = 50
VERDICTS = {
    0: "all clear",
    1: "changes found",
    2: "baseline or usage error",
    3: "some repos could not be read",
}


class Hostile(ValueError):
    """The artifact is not what a checks run of ours uploads."""


def read_members(path: Path) -> dict[str, bytes]:
    if path.stat().st_size > MAX_ZIP:
        raise Hostile(f"the zip is over {MAX_ZIP} bytes")
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            if len(infos) > MAX_MEMBERS:
                raise Hostile(f"more than {MAX_MEMBERS} files")
            found: dict[str, bytes] = {}
            for info in infos:
                limit = LIMITS.get(info.filename)
                if limit is None:
                    continue
                if info.file_size > limit:
                    raise Hostile(f"{info.filename} is over {limit} bytes")
                with archive.open(info) as fh:
                    data = fh.read(limit + 1)  # the declared size may lie; what is inflated may not
                if len(data) > limit:
                    raise Hostile(f"{info.filename} is over {limit} bytes")
                found[info.filename] = data
            return found
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError, OSError) as exc:
        raise Hostile(f"not a readable zip ({type(exc).__name__})") from None


def integer(data: bytes | None, name: str, maximum: int) -> int:
    text = (data or b"").decode("ascii", errors="replace").strip()
    if not re.fullmatch(r"[1-9][0-9]{0,9}|0", text) or int(text) > maximum:
        raise Hostile(f"{name} is not an integer up to {maximum}")
    return int(text)


def _typed(value: Any, types: tuple[type, ...], where: str) -> Any:
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        raise Hostile(f"check.json: {where} has the wrong type")
    return value


def check_report(data: bytes) -> dict[str, Any]:
    """The report, once it has the shape of ``hubdiff check --format json`` in every field rendered."""
    try:
        report = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise Hostile("check.json is not JSON") from None
    _typed(report, (dict,), "the report")
    if report.get("kind") != "check":
        raise Hostile("check.json is not a hubdiff check report")
    if _typed(report.get("exit_code"), (int,), "exit_code") not in VERDICTS:
        raise Hostile("check.json: exit_code is not one of hubdiff's")
    for i, result in enumerate(_typed(report.get("results"), (list,), "results")):
        _typed(result, (dict,), f"results[{i}]")
        for key in ("title", "status"):
            _typed(result.get(key), (str,), f"results[{i}].{key}")
        for key in ("headline", "error", "baseline"):
            _typed(result.get(key), (str, type(None)), f"results[{i}].{key}")
        _typed(result.get("changed", False), (bool,), f"results[{i}].changed")
        for j, claim in enumerate(_typed(result.get("claims", []), (list,), f"results[{i}].claims")):
            _typed(claim, (dict,), f"results[{i}].claims[{j}]")
            _typed(claim.get("name"), (str,), f"results[{i}].claims[{j}].name")
            _typed(claim.get("holds"), (bool,), f"results[{i}].claims[{j}].holds")
            _typed(claim.get("line"), (int, type(None)), f"results[{i}].claims[{j}].line")
            for key in ("measured_text", "accepted"):
                _typed(claim.get(key), (str, type(None)), f"results[{i}].claims[{j}].{key}")
    return report


# a baseline as `hubdiff check` names it from a checkout: a relative path to a YAML file, no `..`
BASELINE_PATH = re.compile(
    r"(?:[A-Za-z0-9_][A-Za-z0-9._-]{0,63}/){0,4}[A-Za-z0-9_][A-Za-z0-9._-]{0,63}\.ya?ml"
)


def commands(results: list[dict[str, Any]]) -> list[str]:
    """The commands accepting the broken claims' figures, by hubdiff's rule, for the results whose
    baseline path and repo id have the shapes hubdiff writes; others get none (the comment says to see
    the run)."""
    usable = []
    for r in results:
        repo = r["title"].split("@")[0]
        path = r.get("baseline")
        if path and BASELINE_PATH.fullmatch(path) and ".." not in path and is_repo_id(repo):
            broken = [c for c in r.get("claims", []) if not c["holds"]]
            usable.append(SimpleNamespace(title=r["title"], baseline=path, broken_claims=broken,
                                          changed=bool(r.get("changed"))))  # fmt: skip
    return accept_commands("check", usable)


def where(result: dict[str, Any], claim: dict[str, Any]) -> str:
    path, line = result.get("baseline"), claim.get("line")
    if not path:
        return ""
    return code(f"{path}:{line}" if line is not None else path, 160)


def verdict(exit_code: int, broken: int) -> str:
    if exit_code == 1 and broken:
        return f"{broken} claim{'s' if broken != 1 else ''} no longer hold{'s' if broken == 1 else ''}"
    return VERDICTS[exit_code]


def render(report: dict[str, Any] | None, exit_code: int, head_sha: str, run_url: str) -> str:
    source = f"the checks of {code(head_sha[:12], table=False)} ([workflow run]({run_url}))"
    if report is None:
        return (
            f"{MARKER}\n### hubdiff check: {VERDICTS.get(exit_code, 'did not run')}\n\n"
            f"hubdiff check exited with {exit_code} before writing a report in {source}: see its log.\n"
        )
    results = report["results"]
    broken = [(r, c) for r in results for c in r.get("claims", []) if not c["holds"]]
    counts: dict[str, int] = {}
    for r in results:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    tally = ", ".join(f"{n} {md(status, 40)}" for status, n in sorted(counts.items()))
    lines = [
        MARKER,
        f"### hubdiff check: {verdict(report['exit_code'], len(broken))}",
        "",
        f"{len(results)} repo{'s' if len(results) != 1 else ''} in {source}: {tally or 'none'}. The figures are that run's; the full "
        "report is in its job summary and artifacts.",
    ]
    shown = [r for r in results if r["status"] != "ok"]
    if shown:
        lines += ["", "| repo | status | what |", "| --- | --- | --- |"]
        for r in shown[:MAX_ROWS]:
            lines.append(
                f"| {code(r['title'], 120)} | {md(r['status'], 40)} | {code(r['error'] or r['headline'] or '')} |"
            )
        if len(shown) > MAX_ROWS:
            lines.append(f"\n… and {len(shown) - MAX_ROWS} more in the run's job summary.")
    if broken:
        lines += [
            "",
            "**Claims that no longer hold**",
            "",
            "| repo | claim | where | stated → measured | accepting writes |",
            "| --- | --- | --- | --- | --- |",
        ]
        for r, c in broken[:MAX_ROWS]:
            measured = c.get("measured_text")
            measured = md(measured, 80) if measured is not None else code(c.get("measured"), 80)
            accepted = c.get("accepted")
            lines.append(
                f"| {code(r['title'], 120)} | {code(c['name'], 120)} | {where(r, c)} "
                f"| {code(c.get('stated'), 80)} → {measured} "
                f"| {code(accepted, 80) if accepted is not None else ''} |"
            )
        if len(broken) > MAX_ROWS:
            lines.append(f"\n… and {len(broken) - MAX_ROWS} more in the run's job summary.")
        accept = commands(results)
        lines += ["", "**What to do**", ""]
        if accept:
            lines.append(
                "- **The change is expected**: accept the measured figures on this pull request's branch with "
                + " and ".join(code(command, 2000, table=False) for command in accept)
                + ", then commit and push. Each claim is rewritten as *accepting writes* says, in its own "
                "unit and precision; comments and every other line of the file stay as they are."
            )
        else:
            lines.append("- **The change is expected**: restate the claims named above (see the run's log).")
        lines.append(
            "- **It is a regression**: keep the claims as they are and do not merge (a watch pull request: "
            "close it; the watch does not propose these Hub commits again)."
        )
    text = "\n".join(lines) + "\n"
    return (
        text if len(text) <= COMMENT_LIMIT else text[: COMMENT_LIMIT - 80] + "\n\n… cut to fit a comment.\n"
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("artifact", type=Path)
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--head-sha", required=True)
    parser.add_argument("--run-url", required=True)
    args = parser.parse_args(argv)
    if not re.fullmatch(r"[0-9a-f]{40}", args.head_sha) or not re.fullmatch(
        r"https://[A-Za-z0-9.-]+(:[0-9]+)?/[\w.-]+/[\w.-]+/actions/runs/[0-9]+", args.run_url, re.ASCII
    ):
        print("::error::--head-sha or --run-url is not what a workflow_run event gives")
        return 1
    try:
        members = read_members(args.artifact)
        number = integer(members.get("pr-number"), "pr-number", 2**31 - 1)
        exit_code = integer(members.get("check-exit"), "check-exit", 255)
        report = check_report(members["check.json"]) if members.get("check.json") else None
    except Hostile as exc:
        print(f"::error::the hubdiff-checks artifact: {exc}; not commenting")
        return 1
    args.outdir.mkdir(parents=True, exist_ok=True)
    (args.outdir / "pr-number").write_text(f"{number}\n")
    (args.outdir / "comment.md").write_text(
        render(report, exit_code, args.head_sha, args.run_url), encoding="utf-8"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
