"""``hubdiff metrics``: what a revision means (parameters by component, active parameters, KV cache and
state, memory, and with the serving flags the figures per GPU)."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace

from .. import errors
from .._metrics.compute import EarlyConfigRead, cached_metrics
from .._metrics.memory import total_memory
from .._render.text import fit, memory_text, metrics_text
from .._source import parse_source
from ..visible import printable_lines
from . import gguf
from ._cli_utils import (
    describe,
    hub_access,
    metric_options,
    options_from,
    output_format,
    revision,
    sources_from,
)
from ._help import SOURCE_HELP
from ._serving_flags import add_arguments as serving_flags
from ._serving_flags import options_from_args


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
    if gguf.is_local_gguf(args):
        return gguf.run(args, "metrics")
    options = replace(options_from(args, config_only=args.config_only), witness=args.witness)
    configurations = options_from_args(args)
    sources, spec = sources_from(args), parse_source(args.source)
    early = EarlyConfigRead(options) if spec.kind == "hub" and not sources.offline else None
    if early is not None and options.config_reader == "auto" and sources.last_cached(spec) is None:
        from .._metrics.config_child import prestart

        prestart()  # a cold read: the child imports while this process asks the Hub
    try:
        snapshot = sources.open(spec, headers=not args.config_only, on_config=early)
    except errors.SourceError as exc:
        if gguf.hub_gguf_instead(exc):
            return gguf.run(args, "metrics", exc)
        raise
    if early is not None:
        early.join()
    with errors.reading(snapshot.source, snapshot.sha or None, "config.json"):
        metrics = cached_metrics(sources.cache, snapshot, options)
        serving_json, serving_text = None, ""
        if configurations:  # the pool's rules are imported only when the serving flags ask for them
            from .._metrics.serving import serving_report
            from .._metrics.serving_text import reports_text

            reports = [serving_report(metrics, snapshot.patterns, o) for o in configurations]
            serving_json, serving_text = [r.to_json() for r in reports], reports_text(reports)
        stored = snapshot.tensor_bytes() if metrics.basis == "headers" else None
        memory = total_memory(metrics, stored, args.batch_size)
        if args.format == "json":
            data = metrics.to_json()
            data["memory"] = memory.to_json()
            if serving_json:
                data["serving"] = serving_json
            text = json.dumps(data, indent=1) + "\n"
        else:
            text = fit(metrics_text(metrics) + memory_text(memory) + serving_text)
    print(printable_lines(text), end="")
    return errors.EXIT_OK
