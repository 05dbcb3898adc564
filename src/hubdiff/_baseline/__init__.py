"""Baselines: one YAML file per model family with what each repo is expected to be.

A baseline pins each repo to the commit it was recorded at and keeps its config, its tensor patterns
and its derived figures, plus what people add by hand: claims, keys allowed to change, notes.
``schema`` reads and validates (``file:line: what is wrong``), ``store`` changes a file in place
(locked, atomic, comments kept), ``record`` turns a snapshot into an entry. Every front end (the CLI,
``watch``, the pytest plugin) goes through these; none writes a baseline itself.

Writing (``record``, ``store``: filelock) is imported when first used, so that a run that
only reads baselines (``check``) does not pay for it.
"""

from typing import Any

from .rows import parse_pattern_row, pattern_key, pattern_row
from .schema import (
    Baseline,
    CopiesRule,
    DiscoverRule,
    RepoBaseline,
    load_baseline,
)

_WRITERS = {
    "accept_claims": "accept",
    "add_release": "record",
    "entry_for": "record",
    "init_repo": "record",
    "record_entry": "record",
    "restate_claims": "record",
    "unknown_repos": "record",
    "update_baseline": "record",
    "write_baseline": "store",
}


def __getattr__(name: str) -> Any:
    if name in _WRITERS:
        from importlib import import_module

        return getattr(import_module(f"{__name__}.{_WRITERS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Baseline",
    "CopiesRule",
    "DiscoverRule",
    "RepoBaseline",
    "accept_claims",
    "add_release",
    "entry_for",
    "init_repo",
    "load_baseline",
    "parse_pattern_row",
    "pattern_key",
    "pattern_row",
    "record_entry",
    "restate_claims",
    "unknown_repos",
    "update_baseline",
    "write_baseline",
]
