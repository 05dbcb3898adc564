"""``hubdiff check``: the Hub's current state against the baselines.

A check whose every repo still points at the commit the last run read prints and writes what that run
did (``_replay``); only a run that computes imports the stages (jobs, baselines, comparison, rendering)."""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from importlib.util import find_spec
from pathlib import Path

from .. import _say
from ._arguments import baseline_args, baseline_paths, describe, hub_access, report_options
from ._replay import Replay

# What a comment's and a summary's link to the workflow run is made of (``markdown.workflow_run_url``)
RUN_VARIABLES = ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")


def register(name: str, parser: argparse.ArgumentParser) -> None:
    describe(
        parser,
        "For every repo of every baseline: read its tracked revision, compare it with what was "
        "recorded, and check every claim at the precision it is stated in.",
    )
    baseline_args(parser)
    report_options(parser)
    hub_access(parser)
    parser.set_defaults(func=cmd_check)


def cmd_check(args: argparse.Namespace) -> int:
    paths = baseline_paths(args)
    inputs = _inputs(paths, args)
    replay = Replay.of_run("check", args, inputs) if inputs is not None else None
    outputs = replay.replayed() if replay is not None else None
    if outputs is None:
        from ..jobs import run_check
        from ._cli_utils import report_outputs, sources_from

        said = _say.said
        report = run_check(paths, sources_from(args), (replay.points or None) if replay else None)
        outputs = report_outputs(report, args)
        reads = [r.read for r in report.results if r.read is not None]
        every_repo_read = 0 < len(reads) == len(report.results)
        if replay is not None and _say.said == said and every_repo_read and outputs.exit_code in (0, 1):
            replay.record(reads, outputs)
    return outputs.deliver(args)


def _inputs(paths: list[Path], args: argparse.Namespace) -> list[object] | None:
    """What a check's output is a function of besides its arguments and the commits it reads: each
    baseline's bytes, the templates and jinja2 that render it, the run a comment links to, and whether
    stdout is a terminal (text there, markdown elsewhere). None where a baseline cannot be read: the
    run computes, and says why."""
    shipped = find_spec("hubdiff.templates")  # where the package's templates are, also in an editable install
    folders = [Path(p) for p in (shipped.submodule_search_locations or [])] if shipped is not None else []
    folders += [Path(args.templates)] if args.templates else []
    try:
        baselines = [[str(p), hashlib.sha256(p.read_bytes()).hexdigest()] for p in paths]
        templates = [_files_stat(folder) for folder in folders]
    except OSError:
        return None
    jinja2 = find_spec("jinja2")
    return [
        baselines,
        templates,
        _stat(Path(jinja2.origin)) if jinja2 is not None and jinja2.origin else None,
        {name: os.environ.get(name) for name in RUN_VARIABLES},
        sys.stdout.isatty(),
    ]


def _files_stat(folder: Path) -> list[object]:
    """Every file under ``folder`` (a template may include another from a subfolder), by size and time."""
    found: list[object] = [str(folder)]
    for top, folders, names in os.walk(folder):
        folders[:] = sorted(f for f in folders if f != "__pycache__")  # the interpreter's, not templates
        found += [
            [os.path.relpath(os.path.join(top, n), folder), *_stat(Path(top, n))] for n in sorted(names)
        ]
    return found


def _stat(path: Path) -> list[int]:
    stat = path.stat()
    return [stat.st_size, stat.st_mtime_ns]
