"""Recording: the one place a snapshot becomes a baseline entry, for ``baseline init``/``update``,
``watch --update`` and ``pytest --update-baselines`` alike.

What people wrote (claims, notes, allowed changes, the tracked revision, ``config_keys``) is kept;
what hubdiff measures (sha, figures, config, tensors) is replaced; the metrics options are written
whole, since a figure recorded under one option and checked under a default would be a false change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .._metrics import Metrics, MetricsOptions, compute_metrics
from .._metrics.options import OptionError, options_entry, parse_options
from .._source import Sources, SourceSpec
from ..errors import UsageError
from ..snapshot import Snapshot
from .schema import pattern_key, pattern_row
from .store import edit, plain, to_yaml_node

# The order keys take in a new entry; a key added to an existing entry goes where this order puts it.
ENTRY_ORDER = (
    "revision",
    "sha",
    "recorded",
    "notes",
    "metrics_options",
    "allow_changes",
    "claims",
    "config_keys",
    "metrics",
    "config",
    "tensors",
)
MEASURED = ("metrics", "config", "tensors")


def _set(entry: Any, key: str, value: Any) -> None:
    """Set ``key`` in a round-trip mapping; a new key goes after the keys that precede it in ENTRY_ORDER."""
    if key in entry:
        entry[key] = value
        return
    rank = ENTRY_ORDER.index(key)
    position = sum(1 for k in entry if k in ENTRY_ORDER and ENTRY_ORDER.index(k) < rank)
    entry.insert(position, key, value)


def _same_options(raw: Any, options: MetricsOptions) -> bool:
    try:
        return parse_options(plain(raw)) == options
    except OptionError:
        return False


def record_entry(
    entry: Any, snapshot: Snapshot, options: MetricsOptions, metrics: Metrics | None = None
) -> None:
    """Re-record ``entry`` (a round-trip mapping, possibly empty) from ``snapshot`` measured with
    ``options``; ``metrics``, when given, are those figures already computed (the sources' cache)."""
    metrics = metrics or compute_metrics(snapshot, options)
    config = snapshot.config
    if entry.get("config_keys") == "listed":
        config = {k: v for k, v in config.items() if k in (entry.get("config") or {})}
    _set(entry, "revision", entry.get("revision", snapshot.revision))
    _set(entry, "sha", snapshot.sha)
    _set(entry, "recorded", datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
    if not _same_options(entry.get("metrics_options", {}), options):
        _set(entry, "metrics_options", to_yaml_node(options_entry(options)))
    if "allow_changes" not in entry:
        _set(entry, "allow_changes", to_yaml_node(["transformers_version"]))
    _set(entry, "metrics", to_yaml_node(metrics.figures()))
    _set(entry, "config", to_yaml_node(config))
    _set(entry, "tensors", to_yaml_node({pattern_key(p): pattern_row(p) for p in snapshot.patterns}))


def entry_for(
    snapshot: Snapshot, options: MetricsOptions | None = None, previous: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A new entry as plain data (what ``record_entry`` writes into a file), for tests and benchmarks."""
    entry = to_yaml_node(dict(previous or {}))
    record_entry(entry, snapshot, options or MetricsOptions())
    return plain(entry)


def _what_changed(before: Mapping[str, Any], after: Mapping[str, Any]) -> str:
    names = {"metrics": "figures", "config": "config", "tensors": "tensor layout"}
    changed = [names[k] for k in MEASURED if plain(before.get(k)) != plain(after.get(k))]
    if not before:
        return "new entry"
    return (", ".join(changed) + " changed") if changed else "config, tensors and figures unchanged"


def _line(path: Path, repo: str, before: Mapping[str, Any], after: Mapping[str, Any]) -> str:
    old = str(before.get("sha") or "none")[:12]
    new = str(after["sha"])[:12]
    at = f"{old} -> {new}" if old != new else f"still {new}"
    return f"{path}: {repo} {at}: {_what_changed(before, after)}"


def unknown_repos(wanted: Iterable[str], known: Iterable[str]) -> list[str]:
    known = set(known)
    return sorted(set(wanted) - known)


def update_baseline(
    path: Path,
    sources: Sources,
    only: set[str] | None = None,
    revisions: Mapping[str, str] | None = None,
) -> list[str]:
    """Re-record the repos of one baseline (all, or ``only``) at their tracked revision, or at the sha in
    ``revisions``. One atomic write, under the lock; one line per repo saying what changed."""
    lines = []
    with edit(path) as editing:
        missing = unknown_repos(only or (), (r.repo for r in editing.baseline.repos))
        if missing:
            known = ", ".join(r.repo for r in editing.baseline.repos)
            raise UsageError(f"{path} has no repo {', '.join(missing)} (it has {known})")
        for repo in editing.baseline.repos:
            if only is not None and repo.repo not in only:
                continue
            revision = (revisions or {}).get(repo.repo, repo.revision)
            snapshot = sources.open(SourceSpec("hub", repo.repo, revision))
            entry = editing.doc["repos"][repo.repo]
            before = plain(dict(entry))
            record_entry(entry, snapshot, repo.options, sources.metrics(snapshot, repo.options))
            lines.append(_line(path, repo.repo, before, entry))
    return lines


def init_repo(path: Path, family: str, spec: SourceSpec, sources: Sources, options: MetricsOptions) -> str:
    """Record ``spec`` into the family file (created if missing), tracking ``spec.revision``."""
    snapshot = sources.open(spec)
    with edit(path, create={"family": family, "notes": "", "repos": {}}) as editing:
        repos = editing.doc["repos"]
        if spec.target not in repos:
            repos[spec.target] = to_yaml_node({})
        entry = repos[spec.target]
        before = plain(dict(entry))
        _set(entry, "revision", spec.revision)
        record_entry(entry, snapshot, options, sources.metrics(snapshot, options))
        return _line(path, spec.target, before, entry)


def add_release(path: Path, repo: str, sha: str, sibling: str, note: str, sources: Sources) -> str:
    """Add a new release found by ``watch`` to its family: recorded at ``sha``, tracking main, with the
    sibling it was compared with as its note and the sibling's metrics options. No claims: those are
    for a reviewer to state."""
    with edit(path) as editing:
        options = next(r.options for r in editing.baseline.repos if r.repo == sibling)
        snapshot = replace(sources.open(SourceSpec("hub", repo, sha)), revision="main")
        repos = editing.doc["repos"]
        before = plain(dict(repos[repo])) if repo in repos else {}
        repos[repo] = entry = to_yaml_node({})
        _set(entry, "revision", "main")
        _set(entry, "notes", f"New release found by hubdiff watch; {note}." if note else "New release.")
        record_entry(entry, snapshot, options, sources.metrics(snapshot, options))
        return _line(path, repo, before, entry)


def restate_claims(path: Path, values: Mapping[tuple[str, str], Any]) -> list[str]:
    """Write measured values over claims that no longer hold, in the form each claim was written in."""
    lines = []
    with edit(path) as editing:
        for (repo, name), value in values.items():
            editing.doc["repos"][repo]["claims"][name] = to_yaml_node(value)
            lines.append(f"{path}: {repo} claim {name} restated as {value!r}")
    return lines
