"""A report's output forms once rendered (stdout, --output, --comment, --summary), and their delivery:
one step shared by a run that computed them and a run that replays them (``_replay``), so both print,
write and say the same."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import NamedTuple

from .. import _say
from .._files import atomic_write_text
from ..visible import printable_lines

# The files a report may be written to, in the order they are written, by the option naming each
WRITTEN = (("report", "output"), ("comment", "comment"), ("summary", "summary"))


class Outputs(NamedTuple):
    """What a run prints and writes. ``files``: the text of each form asked for, by its name in
    ``WRITTEN``; where each goes is the arguments' (a recorded output never names a path). A NamedTuple,
    as every value a replayed run builds (``HubSettings``)."""

    stdout: str | None
    files: tuple[tuple[str, str], ...] = ()
    exit_code: int = 0

    def deliver(self, args: argparse.Namespace) -> int:
        """Print and write, then say where files went (a run that prints nothing else says so); the
        exit code."""
        if self.stdout is not None:
            print(self.stdout, end="")
        texts = dict(self.files)
        written = []
        for what, option in WRITTEN:
            path = getattr(args, option, None)
            if path and what in texts:
                atomic_write_text(Path(path), texts[what])
                written.append(f"{what} {path}")
        if written:
            _say.notice(printable_lines(f"hubdiff: wrote {', '.join(written)}"))
        return self.exit_code
