"""``hubdiff check``: the Hub's current state against the baselines."""

from __future__ import annotations

import argparse

from ..jobs import run_check
from ._arguments import baseline_args, describe, hub_access, report_options
from ._cli_utils import baseline_paths, emit, sources_from


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
    return emit(run_check(baseline_paths(args), sources_from(args)), args)
