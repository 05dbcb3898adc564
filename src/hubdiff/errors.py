"""Errors that end a hubdiff run, each with the exit code the CLI documents.

Exit codes: 0 nothing beyond tolerance; 1 changes or broken claims; 2 usage or baseline error;
3 the Hub or a source could not be read (missing, gated, malformed, unreachable, not in the cache).
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_CHANGED = 1
EXIT_USAGE = 2
EXIT_SOURCE = 3


class HubdiffError(Exception):
    exit_code = EXIT_USAGE

    def line(self) -> str:
        """The single line the CLI prints for this error."""
        return f"hubdiff: {self}"


class UsageError(HubdiffError):
    exit_code = EXIT_USAGE


class BaselineError(HubdiffError):
    """A baseline file that does not load or validate; the message starts with ``file:line:``."""

    exit_code = EXIT_USAGE


class SourceError(HubdiffError):
    """A source that could not be read. Names the repo (or folder), revision and file concerned."""

    exit_code = EXIT_SOURCE

    def __init__(self, where: str, revision: str | None, file: str | None, problem: str) -> None:
        self.where = where
        self.revision = revision
        self.file = file
        self.problem = problem
        super().__init__(self.line())

    def line(self) -> str:
        at = self.where + (f"@{self.revision}" if self.revision else "")
        in_file = f" {self.file}" if self.file else ""
        return f"hubdiff: {at}{in_file}: {self.problem}"

    def __str__(self) -> str:
        return self.line().removeprefix("hubdiff: ")
