"""The hidden marker of a PR comment (``<!-- hubdiff:MARKER -->``), by which a workflow finds the comment
it wrote before: checked where the command line takes it, before anything that renders is imported."""

from __future__ import annotations

import re

from ..errors import UsageError

_MARKER = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._]|-(?!-))*")


def comment_marker(marker: str) -> str:
    """The marker as written into ``<!-- hubdiff:MARKER -->``, verbatim, so a script can match it exactly.

    Markdown escaping would change it (``pr_checks`` became ``pr\\_checks``), so it is refused instead
    unless it is letters, digits, ``.``, ``_`` and single ``-``.
    """
    if not _MARKER.fullmatch(marker):
        raise UsageError(
            f"marker {marker[:60]!r}: use letters, digits, '.', '_' and single '-' (it goes into an HTML comment)"
        )
    return marker
