"""The repo-id rule, in a module of its own so that the cache, the Hub client and the baselines share it
without importing each other."""

from __future__ import annotations

import re

# huggingface_hub's rule (validate_repo_id in huggingface_hub/utils/_validators.py, 2.4): an optional
# namespace and a name, each 1 to 96 ASCII letters, digits, "_", "-" or ".", starting and ending with a
# letter, digit or "_"; no "--" or ".." anywhere; not ending in ".git". Copied, not imported: the warm
# path never imports huggingface_hub (tests/test_hostile_baselines.py checks that the two agree).
_REPO_NAME = r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9_])?"
_REPO_ID = re.compile(rf"(?:{_REPO_NAME}/)?{_REPO_NAME}")


def is_repo_id(text: object) -> bool:
    """Whether ``text`` is a repo id the Hub client accepts: the one test for the CLI and the baselines."""
    return (
        isinstance(text, str)
        and _REPO_ID.fullmatch(text) is not None
        and "--" not in text
        and ".." not in text
        and not text.endswith(".git")
    )
