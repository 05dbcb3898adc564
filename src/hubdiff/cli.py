"""The ``hubdiff`` command: a thin layer over the stages (source -> snapshot -> metrics -> compare -> render)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _say, errors
from ._metrics import EarlyConfigRead, MetricsOptions, cached_metrics
from ._source import HubSettings, Sources, parse_source
from ._source.cache import SnapshotCache
from .visible import printable_json, printable_lines

if TYPE_CHECKING:
    from .results import Report

EXIT_CODES = """exit codes:
  0  nothing beyond tolerance
  1  changes found, or claims that no longer hold
  2  usage or baseline error, or a file that cannot be written
  3  the Hub or a source could not be read (missing, gated, malformed, unreachable, not cached)"""

SOURCE_HELP = (
    "a Hub repo as owner/name[@revision] (branch, tag, refs/pr/N or sha; default main), or a local folder"
)


def _common(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("Hub access")
    group.add_argument("--endpoint", help="Hub endpoint (default: $HF_ENDPOINT or https://huggingface.co)")
    group.add_argument("--cache-dir", help="snapshot cache (default: $HUBDIFF_CACHE or $HF_HOME/hubdiff)")
    group.add_argument("--offline", action="store_true", help="use only the snapshot cache; make no request")
    group.add_argument("--token", help="Hub token for gated or private repos (default: $HF_TOKEN)")
    group.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for the Hub (default 10)")
    group.add_argument("--retries", type=int, default=4, help="retries on 429/5xx/timeouts (default 4)")
    _verbosity(parser)


def _verbosity(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "-q", "--quiet", action="store_true", help="errors only on stderr: no progress, no notices"
    )
    group.add_argument(
        "-v", "--verbose", action="store_true", help="progress bars even when stderr is not a terminal"
    )


def _revision(parser: argparse.ArgumentParser, what: str = "the source") -> None:
    parser.add_argument(
        "--revision",
        help=f"branch, tag, refs/pr/N or sha of {what} (as the hf CLI's; same as @revision)",
    )


def _format(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, choices: Sequence[str], default: str
) -> None:
    """One convention for every command: --format NAME, and --json for --format json."""
    parser.add_argument("--format", choices=choices, help=f"output form (default: {default})")
    parser.add_argument(
        "--json", dest="format", action="store_const", const="json", help="same as --format json"
    )


def _source_text(text: str, revision: str | None) -> str:
    """The source as hubdiff's stages take it, with --revision folded in (hf:// URIs read here)."""
    spec = parse_source(text, revision)
    return str(spec) if spec.kind == "hub" else text


def sources_from(args: argparse.Namespace) -> Sources:
    settings = HubSettings.from_env(
        args.endpoint,
        token=args.token,
        timeout_s=args.timeout,
        retries=max(0, args.retries),
        progress=_say.progress_wanted(),
    )
    cache = SnapshotCache(args.cache_dir) if args.cache_dir else SnapshotCache()
    return Sources(settings, cache, offline=args.offline or offline_by_environment())


def offline_by_environment() -> bool:
    """The ecosystem's offline switch, read as huggingface_hub reads it (constants.py: ``HF_HUB_OFFLINE``,
    else ``TRANSFORMERS_OFFLINE``, true for 1, ON, YES or TRUE): it means ``--offline``."""
    value = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return value.upper() in {"1", "ON", "YES", "TRUE"}


def cmd_refs(args: argparse.Namespace) -> int:
    spec = parse_source(args.repo)
    if spec.kind != "hub" or spec.revision != "main" or "@" in args.repo:
        raise errors.UsageError(f"{args.repo!r}: hubdiff refs takes a Hub repo id (owner/name)")
    refs = sources_from(args).refs(spec.target)
    if args.json:
        print(json.dumps(refs, sort_keys=True, indent=1))
        return errors.EXIT_OK
    lines = [
        f"{kind[:-1] if kind != 'branches' else 'branch'}  {name}  {sha}"
        for kind, names in refs.items()
        for name, sha in sorted(names.items())
    ]
    print(printable_lines("\n".join(lines) + "\n" if lines else "no refs\n"), end="")
    return errors.EXIT_OK


def cmd_snapshot(args: argparse.Namespace) -> int:
    from . import gguf_cli
    from ._render.text import snapshot_text

    if gguf_cli.is_local_gguf(args):
        return gguf_cli.run(args, "snapshot")
    try:
        snapshot = sources_from(args).open(parse_source(args.source))
    except errors.SourceError as exc:
        if gguf_cli.hub_gguf_instead(exc, args):
            return gguf_cli.run(args, "snapshot", exc)
        raise
    with errors.reading(snapshot.source, snapshot.sha or None):
        text = snapshot.dumps() + "\n" if args.json else snapshot_text(snapshot)
    print(printable_json(text) if args.json else printable_lines(text), end="")
    return errors.EXIT_OK


def cmd_metrics(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from . import gguf_cli
    from ._metrics.memory import total_memory
    from ._render.text import fit, memory_text, metrics_text
    from .serving_args import options_from_args

    if gguf_cli.is_local_gguf(args):
        return gguf_cli.run(args, "metrics")
    options = replace(_options_from(args, config_only=args.config_only), witness=args.witness)
    configurations = options_from_args(args)
    sources, spec = sources_from(args), parse_source(args.source)
    early = EarlyConfigRead(options) if spec.kind == "hub" and not sources.offline else None
    if early is not None and options.config_reader == "auto" and sources.last_cached(spec) is None:
        from ._metrics.config_child import prestart

        prestart()  # a cold read: the child imports while this process asks the Hub
    try:
        snapshot = sources.open(spec, headers=not args.config_only, on_config=early)
    except errors.SourceError as exc:
        if gguf_cli.hub_gguf_instead(exc, args):
            return gguf_cli.run(args, "metrics", exc)
        raise
    if early is not None:
        early.join()
    with errors.reading(snapshot.source, snapshot.sha or None, "config.json"):
        metrics = cached_metrics(sources.cache, snapshot, options)
        serving_json, serving_text = None, ""
        if configurations:  # serving is imported only when its flags are given
            from ._metrics.serving import serving_report
            from ._metrics.serving_text import reports_text

            reports = [serving_report(metrics, snapshot.patterns, o) for o in configurations]
            serving_json, serving_text = [r.to_json() for r in reports], reports_text(reports)
        stored = snapshot.tensor_bytes() if metrics.basis == "headers" else None
        memory = total_memory(metrics, stored, args.batch_size)
        if args.json:
            data = metrics.to_json()
            data["memory"] = memory.to_json()
            if serving_json:
                data["serving"] = serving_json
            text = json.dumps(data, indent=1) + "\n"
        else:
            text = fit(metrics_text(metrics) + memory_text(memory) + serving_text)
    print(printable_lines(text), end="")
    return errors.EXIT_OK


def _metric_options(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group("metrics")
    group.add_argument(
        "--context",
        "--max-model-len",
        type=int,
        help="tokens for the memory figure, as vLLM's --max-model-len (default: max_position_embeddings)",
    )
    group.add_argument(
        "--batch-size",
        type=_positive,
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


def _serving_options(p: argparse.ArgumentParser) -> None:
    """--tp, --ep, --pp and the KV pool's settings: figures per GPU by the engine's rules."""
    from .serving_args import add_arguments

    add_arguments(p)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a positive whole number, not {text!r}")
    return int(text)


def _options_from(args: argparse.Namespace, config_only: bool = False) -> MetricsOptions:
    from dataclasses import replace

    from ._metrics.options import OPTION_KEYS, OptionError, parse_options

    try:
        options = parse_options({key: getattr(args, key) for key in OPTION_KEYS})
    except OptionError as exc:
        raise errors.UsageError(f"--{(exc.key or 'option').replace('_', '-')}: {exc}") from None
    return replace(options, config_only=config_only)


def _baseline_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "baselines", nargs="*", help="baseline YAML files or folders of them (default: baselines/*.yaml)"
    )
    p.add_argument("--baseline-dir", default="baselines", help="where baselines live (default baselines)")


def _report_options(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group("report")
    _format(group, ["markdown", "json", "text"], "text on a terminal, markdown otherwise")
    group.add_argument("--output", help="write the report to this file instead of stdout")
    group.add_argument("--comment", help="also write the PR-comment form (fits GitHub's 65,536 characters)")
    group.add_argument("--summary", help="also write the job-summary form")
    group.add_argument("--templates", help="a folder of jinja2 templates overriding the built-in ones")
    group.add_argument(
        "--marker",
        default="hubdiff",
        type=_marker,
        help="hidden marker of the PR comment: letters, digits, '.', '_', '-' (default hubdiff)",
    )


def _marker(text: str) -> str:
    from ._render.markdown import comment_marker

    try:
        return comment_marker(text)
    except errors.UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def emit(report: Report, args: argparse.Namespace) -> int:
    from ._files import atomic_write_text
    from ._render.markdown import fit_summary, render, render_comment, report_json, workflow_run_url

    templates = Path(args.templates) if args.templates else None
    if args.format is None:  # a terminal gets the text form; a file or a pipe gets markdown
        args.format = "text" if not args.output and sys.stdout.isatty() else "markdown"
    if args.format == "json":
        text = json.dumps(report_json(report), indent=1, default=str) + "\n"
    else:
        text = render(
            report, "report" if args.format == "markdown" else "text", templates, full_report=args.output
        )
    if args.output:
        atomic_write_text(Path(args.output), text)
    else:
        print(text, end="")
    if args.comment:
        atomic_write_text(
            Path(args.comment),
            render_comment(report, templates, args.output, marker=args.marker, run_url=workflow_run_url()),
        )
    if args.summary:
        summary = render(report, "summary", templates, full_report=args.output, run_url=workflow_run_url())
        atomic_write_text(Path(args.summary), fit_summary(summary))
    written = [
        f"{what} {path}"
        for what, path in (("report", args.output), ("comment", args.comment), ("summary", args.summary))
        if path
    ]
    if written:  # a run that prints nothing else still says where its output went
        _say.notice(printable_lines(f"hubdiff: wrote {', '.join(written)}"))
    return report.exit_code


def cmd_diff(args: argparse.Namespace) -> int:
    from . import gguf_cli
    from .jobs import run_diff
    from .serving_args import options_from_args

    if gguf_cli.is_local_gguf(args, args.new):  # safetensors against a GGUF
        return gguf_cli.run_diff(args)
    serving = options_from_args(args)
    try:
        return emit(run_diff(args.old, args.new, sources_from(args), _options_from(args), serving), args)
    except errors.SourceError as exc:
        if gguf_cli.gguf_side(exc, args.new):
            return gguf_cli.run_diff(args, exc)
        raise


def _baseline_paths(args: argparse.Namespace) -> list[Path]:
    """The baseline files named, or those of --baseline-dir; a name that does not exist ends the run."""
    from ._baseline import discover

    paths = discover(args.baselines, Path(args.baseline_dir))
    for path in paths:
        if not path.is_file():
            raise errors.BaselineError(f"{path}: no such baseline file")
    if not paths:
        if args.baselines:  # only folders were named
            raise errors.UsageError(f"no baseline files (*.yaml, *.yml) in {args.baselines[0].rstrip('/')}/")
        raise errors.UsageError(f"no baselines given and none in {args.baseline_dir}/")
    return paths


def cmd_check(args: argparse.Namespace) -> int:
    from .jobs import run_check

    return emit(run_check(_baseline_paths(args), sources_from(args)), args)


def cmd_baseline_init(args: argparse.Namespace) -> int:
    from ._baseline import init_repo
    from ._baseline.schema import family_file

    spec = parse_source(args.source)
    if spec.kind != "hub":
        raise errors.UsageError("baselines track Hub repos: give owner/name[@revision]")
    from .serving_args import options_from_args

    path = family_file(Path(args.baseline_dir), args.family, ".yaml")
    serving = options_from_args(args)
    print(init_repo(path, args.family, spec, sources_from(args), _options_from(args), serving))
    return errors.EXIT_OK


def _selected(args: argparse.Namespace) -> tuple[list[Any], list[str], list[tuple[Path, set[str] | None]]]:
    """The baselines named (every file validated before anything is fetched or written), the --repo
    names none of them tracks, and each file to work on with the repos of it --repo asks for (None: all)."""
    from ._baseline import load_baseline, unknown_repos

    baselines = [load_baseline(p) for p in _baseline_paths(args)]
    only = set(args.repo) if args.repo else None
    missing = unknown_repos(only or (), (r.repo for b in baselines for r in b.repos))
    work = []
    for baseline in baselines:
        repos = {r.repo for r in baseline.repos}
        if only is None or repos & only:
            work.append((baseline.path, only & repos if only else None))
    return baselines, missing, work


def cmd_baseline_update(args: argparse.Namespace) -> int:
    from ._baseline import update_baseline

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
    from ._baseline.accept import accept_claims

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


def cmd_validate(args: argparse.Namespace) -> int:
    """Schema errors exit 2 (what check would refuse), claims the files contradict exit 1."""
    from ._baseline.validate import validate_baselines

    done = validate_baselines(_baseline_paths(args))
    for line in [*done.problems, *done.contradicted]:
        print(printable_lines(line), file=sys.stderr)
    bad = len(done.problems) + len(done.contradicted)
    if not args.quiet or bad:
        print(
            f"{done.checked} baseline file(s), {done.claims} claim(s): "
            + (f"{bad} problem(s)" if bad else "valid")
        )
    return errors.EXIT_USAGE if done.problems else (errors.EXIT_CHANGED if bad else errors.EXIT_OK)


def cmd_watch(args: argparse.Namespace) -> int:
    from ._render.markdown import render
    from .results import Report
    from .watch import github_annotations, parse_shard, run_watch, write_github_files

    paths = _baseline_paths(args)
    sources = sources_from(args)
    if sources.offline:
        raise errors.UsageError("hubdiff watch asks the Hub: not with --offline (or HF_HUB_OFFLINE)")
    outcome = run_watch(
        paths,
        sources,
        update=args.update,
        shard=parse_shard(args.shard),
        output_dir=Path(args.output_dir),
        template_dir=Path(args.templates) if args.templates else None,
    )
    results = tuple(r for rs in outcome.results.values() for r in rs)
    write_github_files(outcome, render(Report("watch", results), "summary"))
    for line in github_annotations(outcome):
        print(line)
    for family, files in sorted(outcome.files.items()):
        print(
            f"{family}: report {files['report']}"
            + (f", PR body {files['pr_body']}" if "pr_body" in files else "")
        )
    print(outcome.summary_line())
    return outcome.exit_code


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    return run_demo(args)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Every subcommand is named (for ``hubdiff --help``), but only ``command``'s arguments are built
    when it is given: building all of them is ~4 ms of a warm run that uses one."""

    def wanted(name: str) -> bool:
        return command is None or command == name

    parser = argparse.ArgumentParser(
        prog="hubdiff",
        description=(
            "What changed between model revisions on the Hugging Face Hub, and what it means: config keys, "
            "tensor layouts, parameters, KV cache. Reads config.json and safetensors headers only (HTTP range "
            "requests), never the weights."
        ),
        epilog="""examples:
  hubdiff demo                                    the whole loop on a local Hub replica
  hubdiff snapshot zai-org/GLM-5.3                what the revision holds
  hubdiff metrics zai-org/GLM-5.3 --kv-dtype fp8  what it means
  hubdiff diff zai-org/GLM-5 zai-org/GLM-5.3      what changed
  hubdiff check                                   the Hub against baselines/*.yaml

"""
        + EXIT_CODES,
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
    if wanted("snapshot"):
        p.add_argument("source", help=SOURCE_HELP)
        _revision(p)
        _format(p, ["text", "json"], "text; json is the stable snapshot form")
        _common(p)
        p.set_defaults(func=cmd_snapshot)

    p = sub.add_parser(
        "refs",
        help="a repo's branches and tags with their commits, to name a revision",
        description="List a Hub repo's branches, tags and converts, each with the commit it points to.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    if wanted("refs"):
        p.add_argument("repo", help="a Hub repo id, owner/name")
        _format(p, ["text", "json"], "text")
        _common(p)
        p.set_defaults(func=cmd_refs)

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
    if wanted("metrics"):
        p.add_argument("source", help=SOURCE_HELP)
        _revision(p)
        _format(p, ["text", "json"], "text; json is documented in docs/metrics.md")
        _metric_options(p)
        p.add_argument(
            "--config-only", action="store_true", help="estimate from config.json; read no headers"
        )
        p.add_argument(
            "--witness",
            action="store_true",
            help="where torch is installed, also build transformers' own class on the meta device (offline, "
            "never remote code, in a child process bounded in time) and say whether its count agrees",
        )
        _serving_options(p)
        _common(p)
        p.set_defaults(func=cmd_metrics)

    p = sub.add_parser(
        "diff",
        help="compare two sources: two repos, two revisions (repo@a repo@b), local folders",
        description="Config, tensor-layout and metric differences between two sources, as a report.",
        epilog=EXIT_CODES + "\n  (diff: 1 means the sources differ)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    if wanted("diff"):
        p.add_argument("old", help=SOURCE_HELP)
        p.add_argument("new", help="the other source, same forms")
        _revision(p, "each source that names none")
        _metric_options(p)
        _serving_options(p)
        _report_options(p)
        _common(p)
        p.set_defaults(func=cmd_diff)

    p = sub.add_parser(
        "check",
        help="compare the Hub's current state with the baselines (all of baselines/ by default)",
        description=(
            "For every repo of every baseline: read its tracked revision, compare it with what was recorded, "
            "and check every claim at the precision it is stated in."
        ),
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    if wanted("check"):
        _baseline_args(p)
        _report_options(p)
        _common(p)
        p.set_defaults(func=cmd_check)

    p = sub.add_parser(
        "baseline", help="record (init), re-record (update) baselines, or accept their figures"
    )
    if wanted("baseline"):
        bsub = p.add_subparsers(dest="baseline_command", metavar="ACTION", required=True)
        b = bsub.add_parser("init", help="record a repo's current revision into baselines/FAMILY.yaml")
        b.add_argument("source", help="owner/name[@revision]")
        _revision(b)
        b.add_argument("--family", required=True, help="the family file to record into (created if missing)")
        b.add_argument("--baseline-dir", default="baselines")
        _metric_options(b)
        _serving_options(b)
        _common(b)
        b.set_defaults(func=cmd_baseline_init)
        b = bsub.add_parser(
            "update", help="re-record baselines at their tracked revisions, keeping claims and notes"
        )
        _baseline_args(b)
        b.add_argument("--repo", action="append", help="only this repo (repeatable)")
        b.add_argument(
            "--accept-claims",
            action="store_true",
            help="then restate the claims the new figures break, as hubdiff baseline accept does",
        )
        _common(b)
        b.set_defaults(func=cmd_baseline_update)
        b = bsub.add_parser(
            "accept",
            help="restate the claims the recorded figures no longer support, in their own unit and precision",
            description=(
                "Accept the measured figures: every claim that the baseline's recorded figures and config "
                "(as a re-record, or a watch pull request, wrote them) no longer support is rewritten from "
                "them, in the unit and precision it was written in; comments and every other line are kept. "
                "Reads no Hub: the figures are the file's."
            ),
            epilog=EXIT_CODES
            + "\n  (accept: 1 means some broken claims could not be restated; each is named)",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        _baseline_args(b)
        b.add_argument("--repo", action="append", help="only this repo (repeatable)")
        b.set_defaults(func=cmd_baseline_accept)

    p = sub.add_parser(
        "validate",
        help="check baselines offline: schema, units, figure names, claims their own figures contradict",
        description=(
            "Read every baseline as check would, with no network: each problem is one file:line line on "
            "stderr, every file is read. Usable as a pre-commit hook (.pre-commit-hooks.yaml)."
        ),
        epilog=EXIT_CODES
        + "\n  (validate: 2 means a file check would refuse, 1 claims their file's own figures contradict)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    if wanted("validate"):
        _baseline_args(p)
        _verbosity(p)
        p.set_defaults(func=cmd_validate)

    p = sub.add_parser(
        "watch",
        help="notice new revisions of pinned repos and new releases in each family; report and (--update) record",
        description=(
            "Poll the Hub with one model listing per owner, check every repo whose sha moved against its "
            "baseline, compare each new repo a family's discover rules take with its closest pinned "
            "sibling, report pinned repos that vanished or became gated, and write reports (full, PR "
            "comment/body, job summary) and GitHub Actions outputs."
        ),
        epilog=EXIT_CODES
        + "\n  (watch: 1 means changes or new releases found and not recorded, pinned repos vanished or"
        + "\n  gated, or claims broken; repos skipped for having no safetensors weights do not count)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    if wanted("watch"):
        _baseline_args(p)
        p.add_argument(
            "--update",
            action="store_true",
            help="re-record changed repos and add new releases to their baselines",
        )
        p.add_argument(
            "--shard", help="INDEX/COUNT: only the families of this shard (0-based), for CI matrices"
        )
        p.add_argument("--output-dir", default="reports", help="where reports are written (default reports)")
        p.add_argument("--templates", help="a folder of jinja2 templates overriding the built-in ones")
        _common(p)
        p.set_defaults(func=cmd_watch)

    p = sub.add_parser(
        "demo",
        help="run hubdiff on the embedded example (GLM-5, GLM-5.3, GLM-5.3-Flash) served by a local Hub replica",
        description="Start the Hub replica on 127.0.0.1 with the embedded example and run the main job on it.",
    )
    if wanted("demo"):
        p.add_argument(
            "--output-dir", default="reports", help="where reports are written (default ./reports)"
        )
        p.add_argument(
            "--serve",
            action="store_true",
            help="keep the replica running and print the HF_ENDPOINT=... lines to try every command on it",
        )
        p.set_defaults(func=cmd_demo)
    return parser


def run() -> int:
    """The command line (the ``hubdiff`` script, ``python -m hubdiff``): ``main`` in a process that is
    hubdiff alone. httpcore, under huggingface_hub's client, imports trio wherever it is installed, for
    async clients (~40 ms of a cold run's critical path); hubdiff's requests are synchronous, so here it
    is never imported. ``main`` called by other code imports as it always did."""
    sys.modules.setdefault("trio", None)  # type: ignore[arg-type]
    return main()


def _no_such_folder(exc: errors.HubdiffError, args: argparse.Namespace) -> str:
    """A source given as ``dir/name`` is a Hub repo id when no such folder exists; when ``dir`` is a
    folder here, the name was likely a mistyped path, and "repository not found" alone would hide that."""
    if not isinstance(exc, errors.SourceError) or exc.access != "missing":
        return ""
    given = [getattr(args, name, None) for name in ("source", "old", "new")]
    owner = exc.where.split("/", 1)[0]
    if any(str(g).partition("@")[0] == exc.where for g in given if g) and Path(owner).is_dir():
        return f"; no folder {printable_lines(exc.where)} exists either"
    return ""


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(next((w for w in words if not w.startswith("-")), None))
    args = parser.parse_args(argv)
    _say.level = (
        _say.QUIET
        if getattr(args, "quiet", False)
        else (_say.VERBOSE if getattr(args, "verbose", False) else _say.DEFAULT)
    )
    if args.func in (cmd_snapshot, cmd_metrics, cmd_refs):
        args.json = args.format == "json"
    try:
        for name in ("source", "old", "new"):
            if getattr(args, name, None) is not None and "revision" in args:
                setattr(args, name, _source_text(getattr(args, name), args.revision))
        return args.func(args)
    except errors.HubdiffError as exc:
        print(exc.line() + _no_such_folder(exc, args), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("hubdiff: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into head & co.
        sys.stderr.close()
        return errors.EXIT_OK
    except Exception as exc:  # anything else is a bug, but still one line and exit 3, never "changes found"
        print(errors.internal_error(exc).line(), file=sys.stderr)
        return errors.EXIT_SOURCE


if __name__ == "__main__":
    sys.exit(main())
