"""``hubdiff baseline init | update | accept``: record a repo, re-record baselines at their tracked
revisions, restate the claims their recorded figures no longer support."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .. import errors
from .._baseline import load_baseline
from .._baseline.accept import accept_claims
from .._baseline.record import init_repo, unknown_repos, update_baseline
from .._baseline.schema import family_file
from .._source import parse_source
from ._arguments import baseline_args, baseline_paths, describe, hub_access, metric_options, revision
from ._cli_utils import options_from, serving_options_from, sources_from
from ._help import EXIT_CODES
from ._serving_flags import add_arguments as serving_flags


def register(name: str, parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="baseline_command", metavar="ACTION", required=True)
    b = actions.add_parser("init", help="record a repo's current revision into baselines/FAMILY.yaml")
    b.add_argument("source", help="owner/name[@revision]")
    revision(b)
    b.add_argument("--family", required=True, help="the family file to record into (created if missing)")
    b.add_argument("--baseline-dir", default="baselines")
    b.add_argument(
        "--pin",
        metavar="VARIANT",
        help="a GGUF repo: the variant the family depends on (Q4_K_M, or one of its files); its "
        "per-layer quantization is recorded and checked too",
    )
    metric_options(b)
    serving_flags(b)
    hub_access(b)
    b.set_defaults(func=cmd_baseline_init)
    b = actions.add_parser(
        "update", help="re-record baselines at their tracked revisions, keeping claims and notes"
    )
    baseline_args(b)
    b.add_argument("--repo", action="append", help="only this repo (repeatable)")
    b.add_argument(
        "--accept-claims",
        action="store_true",
        help="then restate the claims the new figures break, as hubdiff baseline accept does",
    )
    hub_access(b)
    b.set_defaults(func=cmd_baseline_update)
    b = actions.add_parser(
        "accept",
        help="restate the claims the recorded figures no longer support, in their own unit and precision",
    )
    describe(
        b,
        "Accept the measured figures: every claim that the baseline's recorded figures and config "
        "(as a re-record, or a watch pull request, wrote them) no longer support is rewritten from "
        "them, in the unit and precision it was written in; comments and every other line are kept. "
        "Reads no Hub: the figures are the file's.",
        EXIT_CODES + "\n  (accept: 1 means some broken claims could not be restated; each is named)",
    )
    baseline_args(b)
    b.add_argument("--repo", action="append", help="only this repo (repeatable)")
    b.set_defaults(func=cmd_baseline_accept)


def cmd_baseline_init(args: argparse.Namespace) -> int:
    spec = parse_source(args.source)
    if spec.kind != "hub":
        raise errors.UsageError("baselines track Hub repos: give owner/name[@revision]")
    path = family_file(Path(args.baseline_dir), args.family, ".yaml")
    serving = serving_options_from(args)
    sources = sources_from(args)
    print(init_repo(path, args.family, spec, sources, options_from(args), serving, pin=args.pin))
    return errors.EXIT_OK


def _selected(args: argparse.Namespace) -> tuple[list[Any], list[str], list[tuple[Path, set[str] | None]]]:
    """The baselines named (every file validated before anything is fetched or written), the --repo
    names none of them tracks, and each file to work on with the repos of it --repo asks for (None: all)."""
    baselines = [load_baseline(p) for p in baseline_paths(args)]
    only = set(args.repo) if args.repo else None
    missing = unknown_repos(only or (), (r.repo for b in baselines for r in b.repos))
    work = []
    for baseline in baselines:
        repos = {r.repo for r in baseline.repos}
        if only is None or repos & only:
            work.append((baseline.path, only & repos if only else None))
    return baselines, missing, work


def cmd_baseline_update(args: argparse.Namespace) -> int:
    baselines, missing, work = _selected(args)
    if missing:
        raise errors.UsageError(
            f"no baseline tracks {', '.join(missing)} (tracked: "
            + ", ".join(sorted({r.repo for b in baselines for r in b.repos}))
            + ")"
        )
    sources = sources_from(args)
    refused = False
    for path, repos in work:
        for line in update_baseline(path, sources, only=repos):
            print(line)
        if args.accept_claims:
            refused |= _accept(path, repos)
    return errors.EXIT_CHANGED if refused else errors.EXIT_OK


def _accept(path: Path, only: set[str] | None) -> bool:
    """Restate the claims of ``path`` its recorded figures no longer support; True if some could not be."""
    done = accept_claims(path, only)
    for line in done.restated + done.refused:
        print(line)
    if not done.restated and not done.refused:
        print(f"{path}: every claim holds on the recorded figures; nothing to accept")
    return bool(done.refused)


def cmd_baseline_accept(args: argparse.Namespace) -> int:
    _, missing, work = _selected(args)
    if missing:
        raise errors.UsageError(f"no baseline tracks {', '.join(missing)}")
    refused = False
    for path, repos in work:
        refused |= _accept(path, repos)
    return errors.EXIT_CHANGED if refused else errors.EXIT_OK
