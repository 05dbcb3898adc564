"""``hubdiff metrics`` computed: the snapshot read (or had from the cache), its metrics, and the text or
JSON the command prints. Imported only by a run whose output is not replayed (``_replay``)."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace

from .. import errors
from .._metrics.compute import EarlyConfigRead, cached_metrics
from .._metrics.memory import total_memory
from .._render.text import fit, memory_text, metrics_text
from .._source import parse_source
from . import gguf
from ._cli_utils import options_from, serving_options_from, sources_from


def metrics_output(args: argparse.Namespace, listed: str | None = None) -> tuple[str, str | None] | int:
    """The text the command prints and the commit it describes (None for a folder); or, for a GGUF
    source, the exit code of the GGUF path, which printed its own. ``listed`` is where the revision
    points now, when the replay asked."""
    if gguf.is_local_gguf(args):
        return gguf.run(args, "metrics")
    options = replace(options_from(args, config_only=args.config_only), witness=args.witness)
    configurations = serving_options_from(args)
    sources, spec = sources_from(args), parse_source(args.source)
    early = EarlyConfigRead(options) if spec.kind == "hub" and not sources.offline else None
    if early is not None and options.config_reader == "auto" and sources.last_cached(spec, listed) is None:
        from .._metrics.config_child import prestart

        prestart()  # a cold read: the child imports while this process asks the Hub
    try:
        snapshot = sources.open(spec, headers=not args.config_only, on_config=early, listed=listed)
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
    return text, (snapshot.sha or None) if spec.kind == "hub" else None
