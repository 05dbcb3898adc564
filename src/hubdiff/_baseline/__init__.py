"""Baselines: one YAML file per model family with what each repo is expected to be.

A baseline pins each repo to the commit it was recorded at and keeps its config, its tensor patterns
and its derived figures, plus what people add by hand: claims, keys allowed to change, notes.
``schema`` reads and validates (``file:line: what is wrong``), ``store`` changes a file in place
(locked, atomic, comments kept), ``record`` turns a snapshot into an entry. Every front end (the CLI,
``watch``, the pytest plugin) goes through these; none writes a baseline itself.
"""

from .record import (
    add_release,
    entry_for,
    init_repo,
    record_entry,
    restate_claims,
    unknown_repos,
    update_baseline,
)
from .schema import (
    Baseline,
    DiscoverRule,
    RepoBaseline,
    discover,
    load_baseline,
    parse_pattern_row,
    pattern_key,
    pattern_row,
)
from .store import write_baseline

__all__ = [
    "Baseline",
    "DiscoverRule",
    "RepoBaseline",
    "add_release",
    "discover",
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
