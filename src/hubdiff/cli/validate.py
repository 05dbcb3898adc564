"""``hubdiff validate``: the baselines read as check would, with no network (a pre-commit hook)."""

from __future__ import annotations

import argparse
import sys

from .. import errors
from .._baseline.validate import validate_baselines
from ..visible import printable_lines
from ._arguments import baseline_args, baseline_paths, describe, verbosity
from ._help import EXIT_CODES


def register(name: str, parser: argparse.ArgumentParser) -> None:
    describe(
        parser,
        "Read every baseline as check would, with no network: each problem is one file:line line on "
        "stderr, every file is read. Usable as a pre-commit hook (.pre-commit-hooks.yaml).",
        EXIT_CODES
        + "\n  (validate: 2 means a file check would refuse, 1 claims their file's own figures contradict)",
    )
    baseline_args(parser)
    verbosity(parser)
    parser.set_defaults(func=cmd_validate)


def cmd_validate(args: argparse.Namespace) -> int:
    """Schema errors exit 2 (what check would refuse), claims the files contradict exit 1."""
    done = validate_baselines(baseline_paths(args))
    for line in [*done.problems, *done.contradicted]:
        print(printable_lines(line), file=sys.stderr)
    bad = len(done.problems) + len(done.contradicted)
    if not args.quiet or bad:
        print(
            f"{done.checked} baseline file(s), {done.claims} claim(s): "
            + (f"{bad} problem(s)" if bad else "valid")
        )
    return errors.EXIT_USAGE if done.problems else (errors.EXIT_CHANGED if bad else errors.EXIT_OK)
