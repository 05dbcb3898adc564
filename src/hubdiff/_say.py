"""What hubdiff says on stderr besides its errors: notices (a cache it cannot use, a rate-limit wait)
and progress bars. ``-q`` keeps only the errors; ``-v`` also shows progress where stderr is not a
terminal (CI logs and pipes get none by default: a bar redrawn into a log is noise).

One process-wide level, set once by the CLI before any work starts; library callers get the default.
"""

from __future__ import annotations

import sys

QUIET, DEFAULT, VERBOSE = 0, 1, 2
level = DEFAULT
said = 0  # notices so far, quiet or not: a run that gave one is not replayed without it (``cli._replay``)


def notice(line: str) -> None:
    """One line on stderr unless quiet; Hub and disk text in it is made printable by the caller."""
    global said
    said += 1
    if level >= DEFAULT:
        print(line, file=sys.stderr)


def progress_wanted() -> bool:
    """Progress bars: on a terminal by default, anywhere when verbose, never when quiet."""
    return level >= VERBOSE or (level == DEFAULT and sys.stderr.isatty())
