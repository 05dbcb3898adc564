"""``hubdiff snapshot``, ``metrics`` and ``diff`` on a GGUF release (a Hub repo or a folder of ``.gguf``
files without safetensors weights): the headers read by range, the figures of ``_metrics.gguf``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from .. import errors
from .._files import atomic_write_text
from .._source import parse_source
from ..visible import printable_json, printable_lines
from ._cli_utils import sources_from

if TYPE_CHECKING:
    from .._metrics.gguf_kv import KVSettings
    from .._source.gguf_read import GGUFRelease


def is_local_gguf(args: argparse.Namespace, text: str | None = None) -> bool:
    """The source (or ``text``) is a folder hubdiff reads as GGUF (checked before the safetensors path).
    A Hub source is told by the read itself (``hub_gguf_instead``): the GGUF reader is not imported."""
    spec = parse_source(args.source if text is None else text)
    if spec.kind != "local":
        return False
    from .._source.gguf_read import local_gguf_folder

    return local_gguf_folder(spec.target)


def hub_gguf_instead(exc: errors.SourceError) -> bool:
    """The safetensors path stopped at a Hub repo of ``.gguf`` files (``gguf_read.GGUFRepo``)."""
    from .._source.gguf_read import GGUFRepo

    return isinstance(exc, GGUFRepo)


def read_release(
    args: argparse.Namespace, found: errors.SourceError | None = None, text: str | None = None
) -> GGUFRelease:
    """The release ``args.source`` (or ``text``) names; ``found`` is the ``GGUFRepo`` a Hub read stopped
    at (its model info is used again, not asked for twice)."""
    from .._source.gguf_read import GGUFRepo, load_hub_gguf, load_local_gguf

    spec = parse_source(args.source if text is None else text)
    if spec.kind == "local":
        return load_local_gguf(spec.target)
    info = found.info if isinstance(found, GGUFRepo) and found.where == spec.target else None
    with errors.reading(spec.target, spec.revision):
        return load_hub_gguf(sources_from(args).settings, spec.target, spec.revision, info)


def kv_settings(args: argparse.Namespace) -> KVSettings:
    """``metrics``' --kv-dtype and --context as llama.cpp's cache type and n_ctx (n_seq 1, n_ubatch 512)."""
    from .._metrics.gguf_kv import KVSettings, KVUsage, kv_type

    dtype = getattr(args, "kv_dtype", None) or "f16"
    try:
        kv_type(dtype)
    except KVUsage as exc:
        raise errors.UsageError(f"--kv-dtype {exc}") from None
    context = getattr(args, "context", None)
    if context is not None and context < 1:
        raise errors.UsageError(f"--context {context}: a context is at least one token")
    return KVSettings(kv_dtype=dtype, n_ctx=context)


def run(args: argparse.Namespace, command: str, found: errors.SourceError | None = None) -> int:
    """Print the release as ``command`` shows it; the exit code."""
    from .._metrics.gguf import release_json, release_text

    kv = kv_settings(args) if command == "metrics" else None
    release = read_release(args, found)
    with errors.reading(release.source, release.sha or None):
        if args.format == "json":
            text = (
                json.dumps(release_json(release, with_tensors=command == "snapshot", kv=kv), sort_keys=True)
                + "\n"
            )
            print(printable_json(text), end="")
        else:
            print(printable_lines(release_text(release, groups=command == "metrics", kv=kv)), end="")
    return errors.EXIT_OK


def gguf_side(exc: errors.SourceError, text: str) -> bool:
    """The safetensors path stopped at a Hub repo of ``.gguf`` files, and that repo is ``text``'s."""
    from .._source.gguf_read import GGUFRepo

    return isinstance(exc, GGUFRepo) and exc.where == parse_source(text).target


def run_diff(args: argparse.Namespace, found: errors.SourceError | None = None) -> int:
    """``hubdiff diff SOURCE GGUF``: the safetensors release ``args.old`` against every variant of the
    GGUF release ``args.new`` (``_compare.gguf_diff``); 1 when a variant differs."""
    from .._compare.gguf_diff import compare_variant, diff_text
    from .._metrics.gguf import variants
    from .._release.read import release_of

    sources = sources_from(args)
    snapshot = sources.open(parse_source(args.old))
    files = release_of(sources, snapshot)
    template = files.template.text if files.template is not None else None
    release = read_release(args, found, args.new)
    with errors.reading(release.source, release.sha or None):
        diffs = [compare_variant(snapshot, v, template) for v in variants(release) if v.parameters]
        if not diffs:
            raise errors.SourceError(release.source, release.sha or None, None, "no GGUF file holds tensors")
        if args.format == "json":
            data = {
                "format": 1,
                "kind": "gguf_diff",
                "source": {"source": snapshot.source, "sha": snapshot.sha, "revision": snapshot.revision},
                "gguf": {"source": release.source, "sha": release.sha, "revision": release.revision},
                "variants": [d.to_json() for d in diffs],
            }
            text = printable_json(json.dumps(data, indent=1, sort_keys=True) + "\n")
        else:
            text = printable_lines(diff_text(snapshot.label, release.label, diffs))
    if args.output:
        atomic_write_text(Path(args.output), text)
    else:
        print(text, end="")
    return errors.EXIT_CHANGED if any(d.differs for d in diffs) else errors.EXIT_OK
