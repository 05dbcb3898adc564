"""Recording: the one place a snapshot becomes a baseline entry, for ``baseline init``/``update``,
``watch --update`` and ``pytest --update-baselines`` alike.

What people wrote (claims, notes, allowed changes, the tracked revision, ``config_keys``) is kept;
what hubdiff measures (sha, figures, config, tensors) is merged in key by key: a key keeps its place,
a new one goes after it, a vanished one goes, and a value that did not change stays the very value the
file had, so ``store`` rewrites only what moved. ``recorded`` moves only with the sha. The metrics
options are written whole when they change, since a figure recorded under one option and checked under
a default would be a false change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import fields, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._metrics.compute import EarlyConfigRead, cached_metrics, compute_metrics
from .._metrics.options import OPTION_KEYS, MetricsOptions, OptionError, options_entry, parse_options
from .._metrics.results import Metrics
from .._metrics.serving import serving_figures, serving_values
from .._metrics.serving_options import ServingOptions
from .._release.read import release_of
from .._release.record import release_record
from .._source import Sources, SourceSpec
from ..errors import UsageError
from ..snapshot import Snapshot
from .rows import pattern_key, pattern_row
from .store import edit, plain, same

if TYPE_CHECKING:
    from .._source.gguf_read import GGUFRelease

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
    "release",
    "gguf",
)
MEASURED = ("metrics", "config", "tensors", "release", "gguf")


def _set(entry: dict[str, Any], key: str, value: Any) -> None:
    """Set ``key`` in ``entry`` in place; a new key goes after the keys that precede it in ENTRY_ORDER."""
    if key in entry:
        entry[key] = value
        return
    rank = ENTRY_ORDER.index(key)
    position = sum(1 for k in entry if k in ENTRY_ORDER and ENTRY_ORDER.index(k) < rank)
    items = list(entry.items())
    items.insert(position, (key, value))
    entry.clear()
    entry.update(items)


def merged(old: Any, new: Any) -> Any:
    """``new`` laid out as ``old`` was: mappings merged key by key (old keys keep their place, new ones
    follow, vanished ones go), and anything unchanged is ``old`` itself."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = {k: merged(old[k], new[k]) for k in old if k in new}
        out.update((k, v) for k, v in new.items() if k not in old)
        return out
    return old if same(old, new) else new


def _same_options(raw: Any, options: MetricsOptions) -> bool:
    try:
        return parse_options(plain(raw)) == options
    except OptionError:
        return False


def record_entry(
    entry: dict[str, Any],
    snapshot: Snapshot,
    options: MetricsOptions,
    metrics: Metrics | None = None,
    serving: Iterable[ServingOptions] = (),
    release: dict[str, Any] | None = None,
) -> None:
    """Re-record ``entry`` (possibly empty) in place from ``snapshot`` measured with ``options``;
    ``metrics``, when given, are those figures already computed (the sources' cache). An entry never
    recorded (no sha) also gets the revision it tracks and the default allowed change. ``serving`` adds
    the per-GPU figures of those configurations; those the entry records or claims (``name@tp8``) are
    measured again, and dropped if the engine now refuses their configuration."""
    metrics = metrics or compute_metrics(snapshot, options)
    figures = {**metrics.figures(), **serving_figures(metrics, snapshot.patterns, serving)}
    named = [*(entry.get("metrics") or {}), *(entry.get("claims") or {})]
    kept = list(dict.fromkeys(n for n in named if "@" in str(n) and n not in figures))
    again = serving_values(kept, metrics, snapshot.patterns)
    figures.update({n: v for n, v in again.items() if not isinstance(v, str)})
    new = "sha" not in entry
    config = snapshot.config
    if entry.get("config_keys") == "listed":
        config = {k: v for k, v in config.items() if k in (entry.get("config") or {})}
    if new and "revision" not in entry:
        _set(entry, "revision", snapshot.revision)
    moved = entry.get("sha") != snapshot.sha
    _set(entry, "sha", snapshot.sha)
    if moved:
        _set(entry, "recorded", datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
    if not _same_options(entry.get("metrics_options") or {}, options):
        _set(entry, "metrics_options", merged(entry.get("metrics_options"), options_entry(options)))
    if new and "allow_changes" not in entry:
        _set(entry, "allow_changes", ["transformers_version"])
    measured = {
        "metrics": figures,
        "config": config,
        "tensors": {pattern_key(p): pattern_row(p) for p in snapshot.patterns},
    }
    if release:  # the release files' record (``release_record``): hashes, tokens, defaults
        measured["release"] = release
    for key, value in measured.items():
        _set(entry, key, merged(entry.get(key), plain(value)))


def entry_for(
    snapshot: Snapshot, options: MetricsOptions | None = None, previous: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A new entry as plain data (what ``record_entry`` writes into a file), for tests and benchmarks."""
    entry = plain(dict(previous or {}))
    record_entry(entry, snapshot, options or MetricsOptions())
    return entry


def _what_changed(before: Mapping[str, Any], after: Mapping[str, Any]) -> str:
    if not before:
        return "new entry"
    names = {
        "revision": "tracked revision",
        "metrics_options": "metrics options",
        "metrics": "figures",
        "config": "config",
        "tensors": "tensor layout",
        "release": "chat template, tokens or generation defaults",
        "gguf": "GGUF variants",
    }
    changed = [name for key, name in names.items() if not same(before.get(key), after.get(key))]
    if changed:
        return ", ".join(changed) + " changed"
    return "GGUF variants unchanged" if "gguf" in after else "config, tensors and figures unchanged"


def _line(path: Path, repo: str, before: Mapping[str, Any], after: Mapping[str, Any]) -> str:
    old = str(before.get("sha") or "none")[:12]
    new = str(after["sha"])[:12]
    at = f"{old} -> {new}" if old != new else f"still {new}"
    return f"{path}: {repo} {at}: {_what_changed(before, after)}"


def record_gguf(entry: dict[str, Any], release: GGUFRelease, pin: str | None = None) -> str:
    """Re-record ``entry`` (possibly empty) in place as the GGUF repo ``release``: the ``gguf`` block
    merged in as ``record_entry`` merges what it measures, its ``pin`` (``pin`` given, else the one the
    entry has: a person's choice, kept) with the pinned variant's strip. An entry of a safetensors repo
    is refused, not turned into a GGUF one: its claims and figures would be lost unseen. Returns what
    to add to the line that reports it (a pin that names no variant), or ""."""
    from .._metrics.gguf import variants
    from .gguf import SAFETENSORS_ONLY, gguf_block, pinned_key, text_problem, variant_keys

    problem = text_problem(pin) if pin is not None else None
    if problem:
        raise UsageError(f"--pin {problem}")
    held = [k for k in SAFETENSORS_ONLY if k in entry]
    if held:
        raise UsageError(
            f"{release.source} is a GGUF repo now, but its entry records {held[0]} (a safetensors repo's); "
            "remove the entry and record it again with hubdiff baseline init"
        )
    old = entry.get("gguf")
    pin = pin if pin is not None else old.get("pin") if isinstance(old, dict) else None
    found = variants(release)
    if "sha" not in entry and "revision" not in entry:
        _set(entry, "revision", release.revision)
    if entry.get("sha") != release.sha:
        _set(entry, "sha", release.sha)
        _set(entry, "recorded", datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
    _set(entry, "gguf", merged(entry.get("gguf"), plain(gguf_block(found, pin))))
    if pin is not None and pinned_key(pin, variant_keys(found)) is None:
        return f"; pin {pin!r} names no variant (it has {', '.join(variant_keys(found)) or 'none'})"
    return ""


def _gguf_of(exc: Exception, sources: Sources, repo: str, revision: str) -> GGUFRelease:
    """The release a safetensors read stopped at (``GGUFRepo``: its model info used again)."""
    from .._source.gguf_read import load_hub_gguf

    return load_hub_gguf(sources.settings, repo, revision, getattr(exc, "info", None))


def release_of_snapshot(sources: Sources, snapshot: Snapshot) -> dict[str, Any]:
    """What a baseline records of the snapshot's release files (read through ``sources``)."""

    return release_record(release_of(sources, snapshot))


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
    ``revisions``. One atomic write, under the lock, and none if nothing changed; one line per repo
    saying what changed."""
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
            entry = editing.doc["repos"][repo.repo]
            before = plain(entry)
            if repo.is_gguf:
                from .._source.gguf_read import load_hub_gguf

                release = replace(
                    load_hub_gguf(sources.settings, repo.repo, revision), revision=repo.revision
                )
                extra = record_gguf(entry, release)
                lines.append(_line(path, repo.repo, before, entry) + extra)
                continue
            from .._source.gguf_read import GGUFRepo

            try:
                snapshot = sources.open(
                    SourceSpec("hub", repo.repo, revision), on_config=EarlyConfigRead(repo.options)
                )
            except GGUFRepo as exc:  # an entry written by hand, first recorded here
                release = replace(_gguf_of(exc, sources, repo.repo, revision), revision=repo.revision)
                extra = record_gguf(entry, release)
                lines.append(_line(path, repo.repo, before, entry) + extra)
                continue
            metrics = cached_metrics(sources.cache, snapshot, repo.options)
            # read at a sha when watch found one, but still tracking what the entry tracks
            record_entry(
                entry,
                replace(snapshot, revision=repo.revision),
                repo.options,
                metrics,
                release=release_of_snapshot(sources, snapshot),
            )
            lines.append(_line(path, repo.repo, before, entry))
    return lines


def _options_for(recorded: Any, given: MetricsOptions) -> MetricsOptions:
    """The options a repo already tracked is re-recorded with: those it was recorded with, overridden
    by those given on the command line that differ from the defaults (an option left at its default
    cannot be told from one not given, so it never resets a recorded one)."""
    default = MetricsOptions()
    chosen = {k: getattr(given, k) for k in OPTION_KEYS if getattr(given, k) != getattr(default, k)}
    try:
        options = parse_options({**(recorded or {}), **chosen})
    except OptionError as exc:  # the recorded ones were validated: only the given ones can clash
        raise UsageError(f"--{(exc.key or 'option').replace('_', '-')}: {exc}") from None
    extra = {f.name: getattr(given, f.name) for f in fields(given) if f.name not in OPTION_KEYS}
    return replace(options, **extra)


def init_repo(
    path: Path,
    family: str,
    spec: SourceSpec,
    sources: Sources,
    options: MetricsOptions,
    serving: Iterable[ServingOptions] = (),
    pin: str | None = None,
) -> str:
    """Record ``spec`` into the family file (created if missing), tracking ``spec.revision``. A repo the
    file already tracks keeps everything it has (options, claims, notes, allowed changes, revision,
    unless ``spec`` names another revision than main) and is re-recorded like ``baseline update``.
    A GGUF repo gets a ``gguf`` entry; ``pin`` (a variant's name or file) is the variant the family
    depends on, refused unless it names one, since a pin that names nothing pins nothing."""
    from .._source.gguf_read import GGUFRepo

    with edit(path, create={"family": family, "notes": "", "repos": {}}) as editing:
        repos = editing.doc["repos"]
        entry = repos.setdefault(spec.target, {})
        before = plain(entry)
        if not before or spec.revision != "main":
            _set(entry, "revision", spec.revision)
        if before:
            options = _options_for(entry.get("metrics_options"), options)
        revision = entry.get("revision", "main")
        try:
            snapshot = sources.open(spec._replace(revision=revision), on_config=EarlyConfigRead(options))
        except GGUFRepo as exc:
            release = _gguf_of(exc, sources, spec.target, revision)
            return _init_gguf(path, entry, before, release, pin)
        if pin is not None:
            raise UsageError(f"--pin names a GGUF variant, and {spec.target} is not a GGUF repo")
        record_entry(
            entry,
            snapshot,
            options,
            cached_metrics(sources.cache, snapshot, options),
            serving,
            release=release_of_snapshot(sources, snapshot),
        )
        return _line(path, spec.target, before, entry)


def _init_gguf(
    path: Path, entry: dict[str, Any], before: Mapping[str, Any], release: GGUFRelease, pin: str | None
) -> str:
    """``init_repo`` of a GGUF repo; a ``pin`` given that names no variant is refused (nothing is written)."""
    extra = record_gguf(entry, release, pin)
    if extra and pin is not None:
        raise UsageError(f"--pin {pin[:200]!r}: {release.source}{extra.removeprefix('; pin ' + repr(pin))}")
    return _line(path, release.source, before, entry) + extra


def add_release(path: Path, repo: str, sha: str, sibling: str, note: str, sources: Sources) -> str:
    """Add a new release found by ``watch`` to its family: recorded at ``sha``, tracking main, with the
    sibling it was compared with as its note and the sibling's metrics options. No claims: those are
    for a reviewer to state."""
    with edit(path) as editing:
        options = next(r.options for r in editing.baseline.repos if r.repo == sibling)
        snapshot = replace(
            sources.open(SourceSpec("hub", repo, sha), on_config=EarlyConfigRead(options)), revision="main"
        )
        repos = editing.doc["repos"]
        before = plain(repos.get(repo, {}))
        entry: dict[str, Any] = {}
        repos[repo] = entry
        _set(entry, "revision", "main")
        _set(entry, "notes", f"New release found by hubdiff watch; {note}." if note else "New release.")
        record_entry(
            entry,
            snapshot,
            options,
            cached_metrics(sources.cache, snapshot, options),
            release=release_of_snapshot(sources, snapshot),
        )
        return _line(path, repo, before, entry)


def restate_claims(path: Path, values: Mapping[tuple[str, str], Any]) -> list[str]:
    """Write measured values over claims that no longer hold, in the form each claim was written in."""
    lines = []
    with edit(path) as editing:
        for (repo, name), value in values.items():
            claims = editing.doc["repos"][repo]["claims"]
            claims[name] = merged(claims[name], plain(value))
            lines.append(f"{path}: {repo} claim {name} restated as {value!r}")
    return lines
