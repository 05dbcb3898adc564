"""``hubdiff snapshot`` and ``hubdiff metrics`` on a GGUF release (a Hub repo or a folder of ``.gguf``
files without safetensors weights): the headers read by range, the figures of ``_metrics.gguf``."""

from __future__ import annotations

import argparse
import json

from . import errors
from ._source import parse_source
from ._source.gguf_read import GGUFRelease, load_hub_gguf, load_local_gguf, local_gguf_folder


def is_local_gguf(args: argparse.Namespace) -> bool:
    """The source is a folder hubdiff reads as GGUF (checked before the safetensors path is tried)."""
    spec = parse_source(args.source)
    return spec.kind == "local" and local_gguf_folder(spec.target)


def hub_gguf_instead(exc: errors.SourceError, args: argparse.Namespace) -> bool:
    """The safetensors path found no config.json in a Hub repo: it may be a GGUF repo."""
    spec = parse_source(args.source)
    return (
        spec.kind == "hub" and exc.file == "config.json" and exc.problem == "not found" and not args.offline
    )


def read_release(args: argparse.Namespace) -> GGUFRelease:
    from .cli import sources_from

    spec = parse_source(args.source)
    if spec.kind == "local":
        return load_local_gguf(spec.target)
    sources = sources_from(args)
    with errors.reading(spec.target, spec.revision):
        release = load_hub_gguf(sources.settings, spec.target, spec.revision)
    if not release.ggufs:
        raise errors.SourceError(spec.target, release.sha, "config.json", "not found (and no .gguf files)")
    return release


def run(args: argparse.Namespace, command: str) -> int:
    """Print the release as ``command`` shows it; the exit code."""
    from ._metrics.gguf import release_json, release_text
    from .visible import printable_json, printable_lines

    release = read_release(args)
    with errors.reading(release.source, release.sha or None):
        if args.json:
            text = (
                json.dumps(release_json(release, with_tensors=command == "snapshot"), sort_keys=True) + "\n"
            )
            print(printable_json(text), end="")
        else:
            print(printable_lines(release_text(release, groups=command == "metrics")), end="")
    return errors.EXIT_OK
