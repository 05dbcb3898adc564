"""The options the command groups share, as arguments (each command's ``register`` builds its own from
these), and what they mean for Hub access. Light on purpose: every run builds its parser from it, and a
replayed run (``_replay``) needs nothing else to find its output."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from .. import _say, errors
from .._render.marker import comment_marker
from .._source.settings import HubSettings
from .._source.spec import parse_source
from ._help import EXIT_CODES


def describe(parser: argparse.ArgumentParser, description: str, exit_codes: str | None = EXIT_CODES) -> None:
    """A command's --help page: what it does, then its exit codes as written (not re-wrapped)."""
    parser.description = description
    if exit_codes is not None:
        parser.epilog = exit_codes
        parser.formatter_class = argparse.RawDescriptionHelpFormatter


def hub_access(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("Hub access")
    group.add_argument("--endpoint", help="Hub endpoint (default: $HF_ENDPOINT or https://huggingface.co)")
    group.add_argument("--cache-dir", help="snapshot cache (default: $HUBDIFF_CACHE or $HF_HOME/hubdiff)")
    group.add_argument("--offline", action="store_true", help="use only the snapshot cache; make no request")
    group.add_argument("--token", help="Hub token for gated or private repos (default: $HF_TOKEN)")
    group.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for the Hub (default 10)")
    group.add_argument("--retries", type=int, default=4, help="retries on 429/5xx/timeouts (default 4)")
    verbosity(parser)


def verbosity(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "-q", "--quiet", action="store_true", help="errors only on stderr: no progress, no notices"
    )
    group.add_argument(
        "-v", "--verbose", action="store_true", help="progress bars even when stderr is not a terminal"
    )


def revision(parser: argparse.ArgumentParser, what: str = "the source") -> None:
    parser.add_argument(
        "--revision",
        help=f"branch, tag, refs/pr/N or sha of {what} (as the hf CLI's; same as @revision)",
    )


def output_format(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, choices: Sequence[str], default: str
) -> None:
    """One convention for every command: --format NAME, and --json for --format json."""
    parser.add_argument("--format", choices=choices, help=f"output form (default: {default})")
    parser.add_argument(
        "--json", dest="format", action="store_const", const="json", help="same as --format json"
    )


def with_revisions(args: argparse.Namespace) -> argparse.Namespace:
    """The sources as hubdiff's stages take them, with --revision folded in (hf:// URIs read here)."""
    for name in ("source", "old", "new"):
        text = getattr(args, name, None)
        if text is not None and "revision" in args:
            spec = parse_source(text, args.revision)
            setattr(args, name, str(spec) if spec.kind == "hub" else text)
    return args


def offline_by_environment() -> bool:
    """The ecosystem's offline switch, read as huggingface_hub reads it (constants.py: ``HF_HUB_OFFLINE``,
    else ``TRANSFORMERS_OFFLINE``, true for 1, ON, YES or TRUE): it means ``--offline``."""
    value = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return value.upper() in {"1", "ON", "YES", "TRUE"}


def metric_options(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group("metrics")
    group.add_argument(
        "--context",
        "--max-model-len",
        type=int,
        help="tokens for the memory figure, as vLLM's --max-model-len (default: max_position_embeddings)",
    )
    group.add_argument(
        "--batch-size",
        type=positive,
        default=1,
        help="sequences held at once, for the total memory (weights + each one's KV and state; default 1)",
    )
    group.add_argument(
        "--kv-dtype",
        help="KV cache dtype: bf16, fp16, fp8, fp32, or vLLM's spellings (auto, bfloat16, fp8_e4m3, "
        "fp8_e5m2; default: the model dtype)",
    )
    group.add_argument(
        "--profile",
        default="naive",
        choices=["naive", "vllm"],
        help="naive: elements x dtype bytes; vllm: vLLM's layouts with scales (default naive)",
    )
    group.add_argument("--count-mtp", action="store_true", help="count MTP layers in the KV cache")
    group.add_argument(
        "--indexer-pooling",
        default="auto",
        choices=["auto", "stored", "scan"],
        help="whether index_kpool shrinks the stored indexer keys or only the scan "
        "(auto: as index_kpool_compress says)",
    )
    p.add_argument(
        "--config-reader",
        default="auto",
        choices=["auto", "keys"],
        help="auto: transformers' configuration classes first, hubdiff's key readers where they do not "
        "know the model_type; keys: hubdiff's key readers only",
    )


def positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a positive whole number, not {text!r}")
    return int(text)


def baseline_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "baselines", nargs="*", help="baseline YAML files or folders of them (default: baselines/*.yaml)"
    )
    p.add_argument("--baseline-dir", default="baselines", help="where baselines live (default baselines)")


def report_options(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group("report")
    output_format(group, ["markdown", "json", "text"], "text on a terminal, markdown otherwise")
    group.add_argument("--output", help="write the report to this file instead of stdout")
    group.add_argument("--comment", help="also write the PR-comment form (fits GitHub's 65,536 characters)")
    group.add_argument("--summary", help="also write the job-summary form")
    group.add_argument("--templates", help="a folder of jinja2 templates overriding the built-in ones")
    group.add_argument(
        "--marker",
        default="hubdiff",
        type=marker,
        help="hidden marker of the PR comment: letters, digits, '.', '_', '-' (default hubdiff)",
    )


def marker(text: str) -> str:
    try:
        return comment_marker(text)
    except errors.UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def settings_from(args: argparse.Namespace) -> HubSettings:
    """The Hub access the arguments ask for (endpoint, token, time and retries), with the environment's."""
    return HubSettings.from_env(
        args.endpoint,
        token=args.token,
        timeout_s=args.timeout,
        retries=max(0, args.retries),
        progress=_say.progress_wanted(),
    )


def baseline_paths(args: argparse.Namespace) -> list[Path]:
    """The baseline files named, a folder named standing for the files in it (as linters take a folder),
    or those of --baseline-dir when none is named; a name that does not exist ends the run."""
    named = [Path(p) for p in args.baselines]
    paths = [f for p in named for f in (_yaml_files(p) if p.is_dir() else [p])]
    if not named:
        paths = _yaml_files(Path(args.baseline_dir))
    for path in paths:
        if not path.is_file():
            raise errors.BaselineError(f"{path}: no such baseline file")
    if not paths:
        if args.baselines:  # only folders were named
            raise errors.UsageError(f"no baseline files (*.yaml, *.yml) in {args.baselines[0].rstrip('/')}/")
        raise errors.UsageError(f"no baselines given and none in {args.baseline_dir}/")
    return paths


def _yaml_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.yaml")) + sorted(folder.glob("*.yml"))
