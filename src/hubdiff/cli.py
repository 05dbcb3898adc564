"""The ``hubdiff`` command: a thin layer over the stages (source -> snapshot -> metrics -> compare -> render)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from . import errors
from ._source import HubSettings, Sources, parse_source
from ._source.cache import SnapshotCache

EXIT_CODES = """exit codes:
  0  nothing beyond tolerance
  1  changes found, or claims that no longer hold
  2  usage or baseline error
  3  the Hub or a source could not be read (missing, gated, malformed, unreachable, not cached)"""

SOURCE_HELP = (
    "a Hub repo as owner/name[@revision] (branch, tag, refs/pr/N or sha; default main), or a local folder"
)


def _common(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("Hub access")
    group.add_argument("--endpoint", help="Hub endpoint (default: $HF_ENDPOINT or https://huggingface.co)")
    group.add_argument("--cache-dir", help="snapshot cache (default: $HUBDIFF_CACHE or $HF_HOME/hubdiff)")
    group.add_argument("--offline", action="store_true", help="use only the snapshot cache; make no request")
    group.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for the Hub (default 10)")
    group.add_argument("--retries", type=int, default=4, help="retries on 429/5xx/timeouts (default 4)")


def sources_from(args: argparse.Namespace) -> Sources:
    settings = HubSettings.from_env(
        args.endpoint,
        timeout_s=args.timeout,
        retries=max(0, args.retries),
        progress=sys.stderr.isatty(),
    )
    cache = SnapshotCache(args.cache_dir) if args.cache_dir else SnapshotCache()
    return Sources(settings, cache, offline=args.offline)


def cmd_snapshot(args: argparse.Namespace) -> int:
    from ._render.text import snapshot_text

    snapshot = sources_from(args).open(parse_source(args.source))
    if args.json:
        print(json.dumps(snapshot.to_json(), sort_keys=True, indent=1))
    else:
        print(snapshot_text(snapshot), end="")
    return errors.EXIT_OK


def cmd_metrics(args: argparse.Namespace) -> int:
    from ._metrics import MetricsOptions, compute_metrics
    from ._render.text import metrics_text

    options = MetricsOptions(
        profile=args.profile,
        kv_dtype=args.kv_dtype,
        context=args.context,
        count_mtp=args.count_mtp,
        indexer_pooling=args.indexer_pooling,
        config_only=args.config_only,
    )
    snapshot = sources_from(args).open(parse_source(args.source), headers=not args.config_only)
    try:
        metrics = compute_metrics(snapshot, options)
    except ValueError as exc:
        raise errors.UsageError(str(exc)) from None
    if args.json:
        print(json.dumps(metrics.to_json(), indent=1))
    else:
        print(metrics_text(metrics), end="")
    return errors.EXIT_OK


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    return run_demo(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hubdiff",
        description=(
            "What changed between model revisions on the Hugging Face Hub, and what it means: config keys, "
            "tensor layouts, parameters, KV cache. Reads config.json and safetensors headers only (HTTP range "
            "requests), never the weights."
        ),
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"hubdiff {__import__('hubdiff').__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser(
        "snapshot",
        help="what a revision holds: commit, files, tensors as patterns, elements by dtype",
        description="Read one revision's config and every tensor's name, dtype and shape, without the weights.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("source", help=SOURCE_HELP)
    p.add_argument("--json", action="store_true", help="the snapshot as stable JSON")
    _common(p)
    p.set_defaults(func=cmd_snapshot)

    p = sub.add_parser(
        "metrics",
        help="what a revision means: parameters by component, active parameters, layers, KV cache and state",
        description=(
            "Derived metrics from config keys and tensor names and shapes, each with its assumptions. Without "
            "safetensors headers (or with --config-only) parameters are estimated from config.json."
        ),
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("source", help=SOURCE_HELP)
    p.add_argument("--json", action="store_true", help="stable JSON (documented in the README)")
    p.add_argument(
        "--context", type=int, help="tokens for the memory figure (default: max_position_embeddings)"
    )
    p.add_argument("--kv-dtype", help="KV cache dtype: bf16, fp16, fp8, fp32 (default: the model dtype)")
    p.add_argument(
        "--profile",
        default="naive",
        choices=["naive", "vllm"],
        help="naive: elements x dtype bytes; vllm: vLLM's layouts with scales (default naive)",
    )
    p.add_argument("--count-mtp", action="store_true", help="count MTP layers in the KV cache")
    p.add_argument(
        "--indexer-pooling",
        default="auto",
        choices=["auto", "stored", "scan"],
        help="whether index_kpool shrinks the stored indexer keys or only the scan "
        "(auto: as index_kpool_compress says)",
    )
    p.add_argument("--config-only", action="store_true", help="estimate from config.json; read no headers")
    _common(p)
    p.set_defaults(func=cmd_metrics)

    p = sub.add_parser(
        "demo",
        help="run hubdiff on the embedded example (GLM-5, GLM-5.3, GLM-5.3-Flash) served by a local Hub replica",
        description="Start the Hub replica on 127.0.0.1 with the embedded example and run the main job on it.",
    )
    p.add_argument("--output-dir", default="reports", help="where reports are written (default ./reports)")
    p.set_defaults(func=cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except errors.HubdiffError as exc:
        print(exc.line(), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("hubdiff: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into head & co.
        sys.stderr.close()
        return errors.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
