"""``hubdiff metrics``: what a revision means (parameters by component, active parameters, KV cache and
state, memory, and with the serving flags the figures per GPU).

A run of a Hub revision whose output was recorded prints it again after asking where the revision points
(``_replay``); only a run that computes imports the stages (``_metrics_report``)."""

from __future__ import annotations

import argparse

from .. import _say
from .._source.spec import parse_source
from ..visible import printable_lines
from ._arguments import describe, hub_access, metric_options, output_format, revision
from ._help import SOURCE_HELP
from ._outputs import Outputs
from ._replay import Replay
from ._serving_flags import add_arguments as serving_flags


def register(name: str, parser: argparse.ArgumentParser) -> None:
    describe(
        parser,
        "Derived metrics from config keys and tensor names and shapes, each with its assumptions. Without "
        "safetensors headers (or with --config-only) parameters are estimated from config.json.",
    )
    parser.add_argument("source", help=SOURCE_HELP)
    revision(parser)
    output_format(parser, ["text", "json"], "text; json is documented in docs/metrics.md")
    metric_options(parser)
    parser.add_argument(
        "--config-only", action="store_true", help="estimate from config.json; read no headers"
    )
    parser.add_argument(
        "--witness",
        action="store_true",
        help="where torch is installed, also build transformers' own class on the meta device (offline, "
        "never remote code, in a child process bounded in time) and say whether its count agrees",
    )
    serving_flags(parser)
    hub_access(parser)
    parser.set_defaults(func=cmd_metrics)


def cmd_metrics(args: argparse.Namespace) -> int:
    spec = parse_source(args.source)
    # a folder is read, never replayed; a witness is run, never replayed
    replay = Replay.of_run("metrics", args) if spec.kind == "hub" and not args.witness else None
    outputs = replay.replayed() if replay is not None else None
    if outputs is None:
        from ._metrics_report import metrics_output

        said = _say.said
        points_at = replay.points.get((spec.target, spec.revision)) if replay is not None else None
        output = metrics_output(args, points_at)
        if isinstance(output, int):  # a GGUF source, printed by the GGUF path
            return output
        text, sha = output
        outputs = Outputs(printable_lines(text))
        if replay is not None and sha is not None and _say.said == said:
            replay.record([(spec.target, spec.revision, sha)], outputs)
    return outputs.deliver(args)
