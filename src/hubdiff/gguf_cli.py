"""``hubdiff snapshot`` and ``hubdiff metrics`` on a GGUF release (a Hub repo or a folder of ``.gguf``
files without safetensors weights): the headers read by range, the figures of ``_metrics.gguf``."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from . import errors
from ._source import parse_source

if TYPE_CHECKING:
    from ._metrics.gguf_kv import KVSettings
    from ._source.gguf_read import GGUFRelease


def is_local_gguf(args: argparse.Namespace) -> bool:
    """The source is a folder hubdiff reads as GGUF (checked before the safetensors path is tried)."""
    from ._source.gguf_read import local_gguf_folder

    spec = parse_source(args.source)
    return spec.kind == "local" and local_gguf_folder(spec.target)


def hub_gguf_instead(exc: errors.SourceError, args: argparse.Namespace) -> bool:
    """The safetensors path stopped at a Hub repo of ``.gguf`` files (``gguf_read.GGUFRepo``)."""
    from ._source.gguf_read import GGUFRepo

    return isinstance(exc, GGUFRepo)


def read_release(args: argparse.Namespace, found: errors.SourceError | None = None) -> GGUFRelease:
    """The release ``args.source`` names; ``found`` is the ``GGUFRepo`` a Hub read stopped at (its
    model info is used again, not asked for twice)."""
    from ._source.gguf_read import GGUFRepo, load_hub_gguf, load_local_gguf
    from .cli import sources_from

    spec = parse_source(args.source)
    if spec.kind == "local":
        return load_local_gguf(spec.target)
    info = found.info if isinstance(found, GGUFRepo) else None
    with errors.reading(spec.target, spec.revision):
        return load_hub_gguf(sources_from(args).settings, spec.target, spec.revision, info)


def kv_settings(args: argparse.Namespace) -> KVSettings:
    """``metrics``' --kv-dtype and --context as llama.cpp's cache type and n_ctx (n_seq 1, n_ubatch 512)."""
    from ._metrics.gguf_kv import KVSettings, KVUsage, kv_type

    dtype = getattr(args, "kv_dtype", None) or "f16"
    try:
        kv_type(dtype)
    except KVUsage as exc:
        raise errors.UsageError(f"--kv-dtype {exc}") from None
    return KVSettings(kv_dtype=dtype, n_ctx=getattr(args, "context", None))


def run(args: argparse.Namespace, command: str, found: errors.SourceError | None = None) -> int:
    """Print the release as ``command`` shows it; the exit code."""
    from ._metrics.gguf import release_json, release_text
    from .visible import printable_json, printable_lines

    kv = kv_settings(args) if command == "metrics" else None
    release = read_release(args, found)
    with errors.reading(release.source, release.sha or None):
        if args.json:
            text = (
                json.dumps(release_json(release, with_tensors=command == "snapshot", kv=kv), sort_keys=True)
                + "\n"
            )
            print(printable_json(text), end="")
        else:
            print(printable_lines(release_text(release, groups=command == "metrics", kv=kv)), end="")
    return errors.EXIT_OK
