"""What the command groups share past their arguments (``_arguments``): the sources and metrics options
they build from them, the baselines they name, and the report's output forms (stdout, --output,
--comment, --summary)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from .. import errors
from .._metrics.options import OPTION_KEYS, MetricsOptions, OptionError, parse_options
from .._metrics.serving_options import DEFAULT_GPU_CLASS, ServingOptions, checked_options, parse_memory
from .._source import Sources
from .._source.cache import SnapshotCache
from ._arguments import offline_by_environment, settings_from
from ._outputs import Outputs

if TYPE_CHECKING:
    from ..results import Report


def sources_from(args: argparse.Namespace) -> Sources:
    cache = SnapshotCache(args.cache_dir) if args.cache_dir else SnapshotCache()
    return Sources(settings_from(args), cache, offline=args.offline or offline_by_environment())


def options_from(args: argparse.Namespace, config_only: bool = False) -> MetricsOptions:
    try:
        options = parse_options({key: getattr(args, key) for key in OPTION_KEYS})
    except OptionError as exc:
        raise errors.UsageError(f"--{(exc.key or 'option').replace('_', '-')}: {exc}") from None
    return replace(options, config_only=config_only)


def emit(report: Report, args: argparse.Namespace) -> int:
    """Write the report in the forms asked for; its exit code."""
    return report_outputs(report, args).deliver(args)


def report_outputs(report: Report, args: argparse.Namespace) -> Outputs:
    """The report rendered in the forms asked for, before anything is printed or written."""
    from .._render.markdown import fit_summary, render, render_comment, report_json, workflow_run_url

    templates = Path(args.templates) if args.templates else None
    if args.format is None:  # a terminal gets the text form; a file or a pipe gets markdown
        args.format = "text" if not args.output and sys.stdout.isatty() else "markdown"
    if args.format == "json":
        text = json.dumps(report_json(report), indent=1, default=str) + "\n"
    else:
        text = render(
            report, "report" if args.format == "markdown" else "text", templates, full_report=args.output
        )
    files = [("report", text)] if args.output else []
    if args.comment:
        comment = render_comment(
            report, templates, args.output, marker=args.marker, run_url=workflow_run_url()
        )
        files.append(("comment", comment))
    if args.summary:
        summary = render(report, "summary", templates, full_report=args.output, run_url=workflow_run_url())
        files.append(("summary", fit_summary(summary)))
    return Outputs(None if args.output else text, tuple(files), report.exit_code)


def serving_options_from(args: argparse.Namespace) -> list[ServingOptions]:
    """The serving configurations the flags ask for: one per --tp value; none without --tp / --gpu-memory."""
    tp_text = getattr(args, "tp", None)
    memory = getattr(args, "gpu_memory", None)
    if tp_text is None and memory is None and getattr(args, "ep", 1) == 1 and getattr(args, "pp", 1) == 1:
        return []
    sizes = []
    for part in str(tp_text or "1").split(","):
        if not part.strip().isdigit() or len(part.strip()) > 4:
            raise errors.UsageError(
                f"--tp {tp_text!r}: a whole number, or several separated by commas (1,2,4,8)"
            )
        sizes.append(int(part))
    if len(sizes) > 16:
        raise errors.UsageError("--tp: at most 16 sizes at once")
    base = ServingOptions(
        ep=args.ep,
        pp=args.pp,
        gpu_memory=parse_memory(memory) if memory is not None else None,
        gpu_memory_utilization=args.gpu_memory_utilization,
        block_size=args.block_size,
        gpu_class=getattr(args, "gpu_class", DEFAULT_GPU_CLASS),
        max_num_batched_tokens=args.max_num_batched_tokens,
        mamba_cache_mode=args.mamba_cache_mode,
    )
    return [checked_options(replace(base, tp=tp)) for tp in dict.fromkeys(sizes)]
