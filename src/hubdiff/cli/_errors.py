"""Errors mapped at the edge: whatever a command raises becomes one line on stderr and a documented exit
code (``errors.EXIT_*``), never a traceback."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from .. import errors
from ..visible import printable_lines


def exit_code_of(command: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run ``command``; its exit code, or the one line and code of what it raised."""
    try:
        return command(args)
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


def _no_such_folder(exc: errors.HubdiffError, args: argparse.Namespace) -> str:
    """A source given as ``dir/name`` is a Hub repo id when no such folder exists; when ``dir`` is a
    folder here, the name was likely a mistyped path, and "repository not found" (or, with no network,
    "cannot connect") alone would hide that."""
    if not isinstance(exc, errors.SourceError):
        return ""
    given = [getattr(args, name, None) for name in ("source", "old", "new")]
    owner = exc.where.split("/", 1)[0]
    named = any(str(g).partition("@")[0] == exc.where for g in given if g)
    # a folder that exists was read as one: its own error says what is wrong with it
    if named and owner and not Path(exc.where).exists() and Path(owner).is_dir():
        return f"; no folder {printable_lines(exc.where)} exists either"
    return ""
