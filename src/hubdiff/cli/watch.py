"""``hubdiff watch``: new revisions of pinned repos and new releases in each family, reported (and with
--update recorded), with the files and outputs a GitHub Actions job reads."""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import errors
from .._render.markdown import render
from ..results import Report
from ..watch import github_annotations, parse_shard, run_watch, write_github_files
from ._arguments import baseline_args, baseline_paths, describe, hub_access
from ._cli_utils import sources_from
from ._help import EXIT_CODES


def register(name: str, parser: argparse.ArgumentParser) -> None:
    describe(
        parser,
        "Poll the Hub with one model listing per owner, check every repo whose sha moved against its "
        "baseline, compare each new repo a family's discover rules take with its closest pinned "
        "sibling, report pinned repos that vanished or became gated, and write reports (full, PR "
        "comment/body, job summary) and GitHub Actions outputs.",
        EXIT_CODES
        + "\n  (watch: 1 means changes or new releases found and not recorded, pinned repos vanished or"
        + "\n  gated, or claims broken; repos skipped for having no safetensors weights do not count)",
    )
    baseline_args(parser)
    parser.add_argument(
        "--update",
        action="store_true",
        help="re-record changed repos and add new releases to their baselines",
    )
    parser.add_argument(
        "--shard", help="INDEX/COUNT: only the families of this shard (0-based), for CI matrices"
    )
    parser.add_argument("--output-dir", default="reports", help="where reports are written (default reports)")
    parser.add_argument("--templates", help="a folder of jinja2 templates overriding the built-in ones")
    hub_access(parser)
    parser.set_defaults(func=cmd_watch)


def cmd_watch(args: argparse.Namespace) -> int:
    paths = baseline_paths(args)
    sources = sources_from(args)
    if sources.offline:
        raise errors.UsageError("hubdiff watch asks the Hub: not with --offline (or HF_HUB_OFFLINE)")
    outcome = run_watch(
        paths,
        sources,
        update=args.update,
        shard=parse_shard(args.shard),
        output_dir=Path(args.output_dir),
        template_dir=Path(args.templates) if args.templates else None,
    )
    results = tuple(r for rs in outcome.results.values() for r in rs)
    write_github_files(outcome, render(Report("watch", results), "summary"))
    for line in github_annotations(outcome):
        print(line)
    for family, files in sorted(outcome.files.items()):
        print(
            f"{family}: report {files['report']}"
            + (f", PR body {files['pr_body']}" if "pr_body" in files else "")
        )
    print(outcome.summary_line())
    return outcome.exit_code
