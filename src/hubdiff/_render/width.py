"""The width terminal text is laid out for: what a run's text output depends on besides its input (so a
replayed output, ``cli._replay``, is keyed by it too)."""

from __future__ import annotations

import os
import shutil
import sys


def terminal_width() -> int:
    """The terminal's columns ($COLUMNS, else 80 when not a terminal): tables are laid out for it."""
    return max(40, shutil.get_terminal_size((80, 24)).columns)


def fitted_width() -> int | None:
    """The width long lines are wrapped to: only for a terminal (or $COLUMNS), since a pipe into grep
    wants one finding per line."""
    if not (os.environ.get("COLUMNS") or sys.stdout.isatty()):
        return None
    return terminal_width()
