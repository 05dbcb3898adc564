"""Baselines: one YAML file per model family with what each repo is expected to be.

A baseline pins each repo to the commit it was recorded at and keeps its config, its tensor patterns
and its derived figures, plus what people add by hand: claims, keys allowed to change, notes.
``schema`` reads and validates (``file:line: what is wrong``), ``store`` changes a file in place
(locked, atomic, comments kept), ``record`` turns a snapshot into an entry. Every front end (the CLI,
``watch``, the pytest plugin) goes through these; none writes a baseline itself.

The package holds the readers; the writers are imported from their own modules (``record``, ``store``:
filelock) by the front ends that write, so that a run that only reads baselines (``check``) never loads
them.
"""

from .rows import parse_pattern_row, pattern_key, pattern_row
from .schema import (
    Baseline,
    CopiesRule,
    DiscoverRule,
    RepoBaseline,
    load_baseline,
)

__all__ = [
    "Baseline",
    "CopiesRule",
    "DiscoverRule",
    "RepoBaseline",
    "load_baseline",
    "parse_pattern_row",
    "pattern_key",
    "pattern_row",
]
