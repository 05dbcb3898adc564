"""Errors that end a hubdiff run, each with the exit code the CLI documents.

Exit codes: 0 nothing beyond tolerance; 1 changes or broken claims; 2 usage or baseline error, or a
file that cannot be written; 3 the Hub or a source could not be read (missing, gated, malformed,
unreachable, not in the cache).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress

from .visible import printable

EXIT_OK = 0
EXIT_CHANGED = 1
EXIT_USAGE = 2
EXIT_SOURCE = 3


class HubdiffError(Exception):
    exit_code = EXIT_USAGE

    def line(self) -> str:
        """The single line the CLI prints for this error."""
        return printable(f"hubdiff: {self}")


class UsageError(HubdiffError):
    exit_code = EXIT_USAGE


class BaselineError(HubdiffError):
    """A baseline file that does not load or validate; the message starts with ``file:line:``."""

    exit_code = EXIT_USAGE


class WriteError(HubdiffError):
    """A file hubdiff was asked to write (a report, a baseline) that could not be written or locked.

    The message is ``PATH: cannot write: <reason>`` (or ``cannot lock``); the file is left as it was.
    """

    exit_code = EXIT_USAGE

    def __init__(self, path: object, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{path}: {problem}")


class SourceError(HubdiffError):
    """A source that could not be read. Names the repo (or folder), revision and file concerned."""

    exit_code = EXIT_SOURCE

    def __init__(
        self, where: str, revision: str | None, file: str | None, problem: str, access: str | None = None
    ) -> None:
        self.where = where
        self.revision = revision
        self.file = file
        self.problem = problem
        self.access = access  # "gated" or "missing" (deleted, renamed or private) when the Hub said so
        super().__init__(self.line())

    def line(self) -> str:
        at = self.where + (f"@{self.revision}" if self.revision else "")
        in_file = f" {self.file}" if self.file else ""
        return printable(f"hubdiff: {at}{in_file}: {self.problem}")

    def __str__(self) -> str:
        return self.line().removeprefix("hubdiff: ")


@contextmanager
def reading(where: str, revision: str | None = None, file: str | None = None) -> Iterator[None]:
    """Name what is being read, so that an exception nobody expected can still be reported against it.

    The innermost ``reading`` around the failure wins; ``internal_error`` turns the exception into the
    one line every other failure gets, instead of a traceback.
    """
    try:
        yield
    except HubdiffError:
        raise
    except Exception as exc:
        if getattr(exc, "_hubdiff_where", None) is None:
            with suppress(AttributeError):
                exc._hubdiff_where = (where, revision, file)  # type: ignore[attr-defined]
        raise


def internal_error(exc: BaseException) -> SourceError:
    """An exception hubdiff did not expect, as one line naming what was being read (exit 3)."""
    where, revision, file = getattr(exc, "_hubdiff_where", None) or ("hubdiff", None, None)
    return SourceError(
        where,
        revision,
        file,
        f"internal error: {type(exc).__name__} (a hubdiff bug: please report it with this line)",
    )
