"""``hubdiff diff``: two sources compared (two repos, two revisions, folders, or a release and its GGUF
copy), as a report."""

from __future__ import annotations

import argparse

from .. import errors
from ..jobs import run_diff
from . import gguf
from ._arguments import describe, hub_access, metric_options, report_options, revision
from ._cli_utils import emit, options_from, serving_options_from, sources_from
from ._help import EXIT_CODES, SOURCE_HELP
from ._serving_flags import add_arguments as serving_flags


def register(name: str, parser: argparse.ArgumentParser) -> None:
    describe(
        parser,
        "Config, tensor-layout and metric differences between two sources, as a report.",
        EXIT_CODES + "\n  (diff: 1 means the sources differ)",
    )
    parser.add_argument("old", help=SOURCE_HELP)
    parser.add_argument("new", help="the other source, same forms")
    revision(parser, "each source that names none")
    metric_options(parser)
    serving_flags(parser)
    report_options(parser)
    hub_access(parser)
    parser.set_defaults(func=cmd_diff)


def cmd_diff(args: argparse.Namespace) -> int:
    if gguf.is_local_gguf(args, args.new):  # safetensors against a GGUF
        return gguf.run_diff(args)
    serving = serving_options_from(args)
    try:
        return emit(run_diff(args.old, args.new, sources_from(args), options_from(args), serving), args)
    except errors.SourceError as exc:
        if gguf.gguf_side(exc, args.new):
            return gguf.run_diff(args, exc)
        raise
