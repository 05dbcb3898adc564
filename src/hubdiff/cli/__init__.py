"""The ``hubdiff`` command: a thin layer over the stages (source -> snapshot -> metrics -> compare -> render).

One file per command group, each with ``register`` (its arguments) and its ``cmd_*`` functions; the
arguments they share are in ``_arguments.py``, what they build from them in ``_cli_utils.py``, and
``_errors.py`` turns whatever a command raises into one line and an exit code. ``COMMANDS`` names every command with its one-line help, so ``hubdiff --help``
lists them all while a run imports only its own command's file.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .. import __version__, _say
from ._arguments import with_revisions
from ._errors import exit_code_of
from ._help import EXIT_CODES

# command -> its line in ``hubdiff --help``; its arguments are built by its file's ``register``
COMMANDS: dict[str, str] = {
    "snapshot": "what a revision holds: commit, files, tensors as patterns, elements by dtype",
    "refs": "a repo's branches and tags with their commits, to name a revision",
    "metrics": "what a revision means: parameters by component, active parameters, layers, KV cache and state",
    "diff": "compare two sources: two repos, two revisions (repo@a repo@b), local folders",
    "check": "compare the Hub's current state with the baselines (all of baselines/ by default)",
    "baseline": "record (init), re-record (update) baselines, or accept their figures",
    "validate": "check baselines offline: schema, units, figure names, claims their own figures contradict",
    "watch": "notice new revisions of pinned repos and new releases in each family; report and (--update) record",
    "demo": "run hubdiff on the embedded example (GLM-5, GLM-5.3, GLM-5.3-Flash) served by a local Hub replica",
}


def _register(command: str, parser: argparse.ArgumentParser) -> None:
    """Build one command's arguments; only its own file is imported."""
    if command in ("snapshot", "refs"):
        from .snapshot import register
    elif command == "metrics":
        from .metrics import register
    elif command == "diff":
        from .diff import register
    elif command == "check":
        from .check import register
    elif command == "baseline":
        from .baseline import register
    elif command == "validate":
        from .validate import register
    elif command == "watch":
        from .watch import register
    else:
        from .demo import register
    register(command, parser)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Only ``command``'s parser is built when it is given (each costs an ArgumentParser, and building its
    arguments imports its file); every command, for ``hubdiff --help`` and a name that is none of them."""
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
    parser.add_argument("--version", action="version", version=f"hubdiff {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    named = command if command in COMMANDS else None  # else every command, for --help and a mistyped name
    for name, help_line in COMMANDS.items():
        if named is None or named == name:
            _register(name, commands.add_parser(name, help=help_line))
    return parser


def run() -> int:
    """The command line (the ``hubdiff`` script, ``python -m hubdiff``): ``main`` in a process that is
    hubdiff alone. httpcore, under huggingface_hub's client, imports trio wherever it is installed, for
    async clients (~40 ms of a cold run's critical path); hubdiff's requests are synchronous, so here it
    is never imported. ``main`` called by other code imports as it always did."""
    sys.modules.setdefault("trio", None)  # type: ignore[arg-type]
    return main()


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(next((w for w in words if not w.startswith("-")), None))
    args = parser.parse_args(argv)
    _say.level = (
        _say.QUIET
        if getattr(args, "quiet", False)
        else (_say.VERBOSE if getattr(args, "verbose", False) else _say.DEFAULT)
    )
    return exit_code_of(lambda a: args.func(with_revisions(a)), args)


if __name__ == "__main__":
    sys.exit(main())
