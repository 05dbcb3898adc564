"""``hubdiff snapshot`` (what a revision holds) and ``hubdiff refs`` (the names a revision goes by)."""

from __future__ import annotations

import argparse
import json

from .. import errors
from .._render.text import snapshot_text
from .._source import parse_source
from ..visible import printable_json, printable_lines
from . import gguf
from ._arguments import describe, hub_access, output_format, revision
from ._cli_utils import sources_from
from ._help import SOURCE_HELP


def register(name: str, parser: argparse.ArgumentParser) -> None:
    if name == "snapshot":
        describe(
            parser,
            "Read one revision's config and every tensor's name, dtype and shape, without the weights.",
        )
        parser.add_argument("source", help=SOURCE_HELP)
        revision(parser)
        output_format(parser, ["text", "json"], "text; json is the stable snapshot form")
        hub_access(parser)
        parser.set_defaults(func=cmd_snapshot)
    else:
        describe(parser, "List a Hub repo's branches, tags and converts, each with the commit it points to.")
        parser.add_argument("repo", help="a Hub repo id, owner/name")
        output_format(parser, ["text", "json"], "text")
        hub_access(parser)
        parser.set_defaults(func=cmd_refs)


def cmd_snapshot(args: argparse.Namespace) -> int:
    if gguf.is_local_gguf(args):
        return gguf.run(args, "snapshot")
    try:
        snapshot = sources_from(args).open(parse_source(args.source))
    except errors.SourceError as exc:
        if gguf.hub_gguf_instead(exc):
            return gguf.run(args, "snapshot", exc)
        raise
    as_json = args.format == "json"
    with errors.reading(snapshot.source, snapshot.sha or None):
        text = snapshot.dumps() + "\n" if as_json else snapshot_text(snapshot)
    print(printable_json(text) if as_json else printable_lines(text), end="")
    return errors.EXIT_OK


def cmd_refs(args: argparse.Namespace) -> int:
    spec = parse_source(args.repo)
    if spec.kind != "hub" or spec.revision != "main" or "@" in args.repo:
        raise errors.UsageError(f"{args.repo!r}: hubdiff refs takes a Hub repo id (owner/name)")
    refs = sources_from(args).refs(spec.target)
    if args.format == "json":
        print(json.dumps(refs, sort_keys=True, indent=1))
        return errors.EXIT_OK
    lines = [
        f"{kind[:-1] if kind != 'branches' else 'branch'}  {name}  {sha}"
        for kind, names in refs.items()
        for name, sha in sorted(names.items())
    ]
    print(printable_lines("\n".join(lines) + "\n" if lines else "no refs\n"), end="")
    return errors.EXIT_OK
