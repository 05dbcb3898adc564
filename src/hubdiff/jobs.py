"""The two jobs users run: ``diff`` (any two sources) and ``check`` (the Hub against the baselines).

Each turns sources into snapshots, snapshots into metrics, pairs into comparisons, and returns a
Report for the renderers. A source that cannot be read is reported and the others go on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._baseline import Baseline, RepoBaseline, load_baseline
from ._compare import Comparison, Side, compare, diff_figures
from ._compare.claims import evaluate
from ._compare.release import closest_sibling, variant_of
from ._compare.release_claims import is_release_claim
from ._metrics.compute import EarlyConfigRead, cached_metrics
from ._metrics.kv import kv_report
from ._metrics.options import MetricsOptions
from ._metrics.results import Metrics
from ._metrics.serving_options import ServingOptions, ServingRefused, figure_unit
from ._release.diff import ReleaseDiff, compare_release
from ._release.files import ReleaseFiles
from ._release.read import OFFLINE_NOTE, release_of
from ._release.record import compare_with_record, release_record
from ._release.render import Rendered
from ._source import Sources, SourceSpec, parse_source
from ._source.quick import listed_on_main
from ._threads import each_in_threads
from .errors import HubdiffError, SourceError, internal_error, reading
from .results import KVVariant, RepoResult, Report
from .snapshot import Snapshot
from .units import human_bytes

if TYPE_CHECKING:
    from ._compare.gguf_diff import VariantDiff
    from ._metrics.gguf import Variant
    from ._source.hub_answers import RepoInfo


def _side(sources: Sources, spec: SourceSpec, options: MetricsOptions, listed: str | None = None) -> Side:
    snapshot = sources.open(
        spec, listed=listed, on_config=EarlyConfigRead(options)
    )  # called on cold reads only
    return Side(snapshot.label, snapshot, _metrics_of(sources, snapshot, options))


def _metrics_of(sources: Sources, snapshot: Snapshot, options: MetricsOptions) -> Metrics:
    with reading(snapshot.source, snapshot.sha or None, "config.json"):
        return cached_metrics(sources.cache, snapshot, options)


def _compare(old: Side, new: Side, recorded: dict[str, Any] | None = None) -> Comparison:
    with reading(new.snapshot.source, new.snapshot.sha or None, "config.json"):
        return compare(old, new, recorded)


def _kv_variants(old: Side, new: Side, options: MetricsOptions) -> tuple[KVVariant, ...]:
    pooled = any((s.metrics.cfg.number("index_kpool", default=1) or 1) > 1 for s in (old, new))
    if not pooled or options.indexer_pooling != "auto":
        return ()

    def kv_bytes(side: Side, mode: str) -> int:
        m = side.metrics
        return kv_report(
            m.cfg,
            list(m.layers),
            profile=options.profile,
            kv_dtype=options.kv_dtype,
            context=options.context,
            count_mtp=options.count_mtp,
            indexer_pooling=mode,
        ).bytes_per_token

    modes = (
        ("stored", "index_kpool shrinks the stored indexer keys"),
        ("scan", "index_kpool shrinks only the scan"),
    )
    with reading(new.snapshot.source, new.snapshot.sha or None, "config.json"):
        return tuple(KVVariant(label, kv_bytes(old, mode), kv_bytes(new, mode)) for mode, label in modes)


def _with_serving(comparison: Comparison, old: dict[str, Any], new: dict[str, Any]) -> Comparison:
    """The comparison with serving figures (``name@configuration``) added to either side, and their deltas."""
    figures_old = {**old, **comparison.figures_old}
    figures_new = {**comparison.figures_new, **new}
    deltas = tuple(
        replace(d, unit=figure_unit(d.name) or d.unit) for d in diff_figures(figures_old, figures_new)
    )
    return replace(comparison, metrics=deltas, figures_old=figures_old, figures_new=figures_new)


def _serving_of(side: Side, serving: tuple[ServingOptions, ...]) -> dict[str, Any]:
    from ._metrics.serving import serving_figures  # only when serving figures are asked for

    try:
        return serving_figures(side.metrics, side.snapshot.patterns, serving)
    except ServingRefused as exc:
        raise ServingRefused(f"{side.label}: {exc}") from None


def run_diff(
    old: str, new: str, sources: Sources, options: MetricsOptions, serving: Sequence[ServingOptions] = ()
) -> Report:
    """``serving``: the parallel configurations whose per-GPU figures are compared too."""
    specs = [parse_source(old), parse_source(new)]
    read = each_in_threads(lambda i: _side(sources, specs[i], options), range(2), 2)  # side by side
    sides = [read[0], read[1]]
    comparison = _compare(sides[0], sides[1])
    if serving:
        with reading(sides[1].snapshot.source, sides[1].snapshot.sha or None, "config.json"):
            extra = [_serving_of(side, tuple(serving)) for side in sides]
        comparison = _with_serving(comparison, extra[0], extra[1])
    title = f"{specs[0]} → {specs[1]}"
    result = RepoResult(
        title,
        comparison,
        kv_variants=_kv_variants(sides[0], sides[1], options),
        fail_on_any_change=True,
        release=_release_diff(sources, sides[0].snapshot, sides[1].snapshot),
    )
    return Report("diff", (result,), options)


def _release_diff(sources: Sources, old: Snapshot, new: Snapshot) -> ReleaseDiff:
    """The two sides' release files (read side by side) compared, templates rendered."""
    sides = (old, new)
    read = each_in_threads(lambda i: release_of(sources, sides[i]), [0, 1], 2)
    if any(OFFLINE_NOTE in read[i].notes for i in (0, 1)):  # one side unread: nothing to compare
        return compare_release(*(ReleaseFiles(notes=read[i].notes) for i in (0, 1)))
    with reading(new.source, new.sha or None, "chat template"):
        return compare_release(read[0], read[1])


def failure(exc: Exception) -> str:
    """A failure as a report states it: repo, revision (the sha once known) and file, then the problem."""
    if not isinstance(exc, HubdiffError):
        exc = internal_error(exc)
    return exc.line().removeprefix("hubdiff: ")


def failed(title: str, exc: Exception, baseline: Path | None = None, line: int | None = None) -> RepoResult:
    """What a failed read reports: a repo the Hub says is gone or gated is that notice, not a failure."""
    access = exc.access if isinstance(exc, SourceError) else None
    if access is not None:
        kind = access if access in ("gated", "disabled") else "vanished"
        problem = exc.problem if isinstance(exc, SourceError) else None
        return RepoResult(title, baseline=baseline, line=line, kind=kind, note=problem)
    return RepoResult(title, error=failure(exc), baseline=baseline, line=line)


def check_repo(
    baseline: Baseline, repo: RepoBaseline, sources: Sources, listed: str | None = None
) -> tuple[RepoResult, Metrics | None]:
    """One repo against its baseline; whatever goes wrong is this repo's result, and the others go on.
    ``listed``: the sha its revision points at now, as its owner's model listing showed."""
    title = f"{repo.repo}@{repo.revision}"
    try:
        return _check_repo(baseline, repo, sources, title, listed)
    except Exception as exc:
        return failed(title, exc, baseline.path, repo.line), None


def _check_repo(
    baseline: Baseline, repo: RepoBaseline, sources: Sources, title: str, listed: str | None = None
) -> tuple[RepoResult, Metrics | None]:
    if repo.is_gguf:
        return _check_gguf(baseline, repo, sources, title), None
    new = _side(sources, SourceSpec("hub", repo.repo, repo.revision), repo.options, listed)
    with reading(str(baseline.path), None, repo.repo):
        expected = repo.expected_snapshot()
        old = Side(
            f"{repo.repo}@{(repo.sha or 'baseline')[:12]} (baseline)",
            expected,
            cached_metrics(sources.cache, expected, repo.options),
        )
    recorded: dict[str, Any] | None = repo.metrics or None
    comparison = _compare(old, new, recorded)
    # serving figures name their configuration (tokens_that_fit@tp8,80GB): measured as recorded or claimed
    named = [n for n in (*(recorded or {}), *(c.name for c in repo.claims)) if "@" in n]
    figures = new.metrics.figures()
    if named:
        from ._metrics.serving import serving_values

        with reading(new.snapshot.source, new.snapshot.sha or None, "config.json"):
            served = serving_values(named, new.metrics, new.snapshot.patterns)
        comparison = _with_serving(comparison, {}, {n: v for n, v in served.items() if n in (recorded or {})})
        figures = {**figures, **served}
    release, now = _release_against_record(sources, repo, new.snapshot)
    with reading(str(baseline.path), None, repo.repo):
        claims = tuple(
            evaluate(c, figures, new.snapshot.config, new.metrics.unverified, now, repo.release)
            for c in repo.claims
        )
    result = RepoResult(
        title,
        comparison,
        claims,
        allowed=repo.allow_changes,
        baseline=baseline.path,
        line=repo.line,
        kv_variants=_kv_variants(old, new, repo.options),
        release=release,
        read=(repo.repo, repo.revision, new.snapshot.sha) if new.snapshot.sha else None,
    )
    return result, new.metrics


def _check_gguf(baseline: Baseline, repo: RepoBaseline, sources: Sources, title: str) -> RepoResult:
    """A GGUF entry: the headers of every ``.gguf`` file at the tracked revision, read again (a GGUF
    repo has no snapshot to cache: a header costs a range or two), against the recorded variants."""
    from ._baseline.gguf_check import compare_gguf
    from ._metrics.gguf import variants
    from ._source.gguf_read import load_hub_gguf

    if sources.offline:
        raise SourceError(repo.repo, repo.revision, None, "a GGUF entry's headers are read from the Hub")
    release = load_hub_gguf(sources.settings, repo.repo, repo.revision)
    assert repo.gguf is not None
    with reading(str(baseline.path), None, repo.repo):
        check = compare_gguf(repo.gguf, variants(release), repo.sha, release.sha)
    return RepoResult(
        title,
        allowed=repo.allow_changes,
        baseline=baseline.path,
        line=repo.line,
        gguf=check,
        read=(repo.repo, repo.revision, release.sha),
    )


def _release_against_record(
    sources: Sources, repo: RepoBaseline, snapshot: Snapshot
) -> tuple[ReleaseDiff | None, dict[str, Any] | None]:
    """The revision's release files against the baseline's record of them, and their own record (what
    release claims are checked on). Not read when the baseline records none and claims none of them: a
    baseline recorded before hubdiff read these files is not compared (``baseline update`` records them)."""
    if repo.release is None and not any(is_release_claim(c.name) for c in repo.claims):
        return None, None
    files = release_of(sources, snapshot)
    if OFFLINE_NOTE in files.notes:  # not read: nothing to compare, release claims not checkable
        return compare_release(ReleaseFiles(), ReleaseFiles(notes=files.notes)), None
    with reading(snapshot.source, snapshot.sha or None, "chat template"):
        if repo.release is None:
            return None, release_record(files)
        diff = compare_with_record(repo.release, files)
        return diff, release_record(files, _prompts_known(diff, repo.release))


def _prompts_known(diff: ReleaseDiff, recorded: dict[str, Any]) -> tuple[Any, ...] | None:
    """The new template's renders without rendering it again: those the comparison made, or, for an
    unchanged template, the recorded ones (the same text renders the same prompts)."""
    template = diff.templates[0] if diff.templates else None
    if template is None or template.new_sha256 is None:
        return None
    if template.changed:
        return tuple(p.new for p in template.prompts if p.new is not None)
    prompts = (recorded.get("chat_template") or {}).get("prompts") or {}
    return tuple(Rendered(n, None, kind="recorded", recorded=k) for n, k in prompts.items()) or None


def check_release(baseline: Baseline, repo: str, sha: str, sources: Sources) -> RepoResult:
    """A new repo of the family against its closest pinned sibling (or the rule's reference): the same
    comparison as ``hubdiff diff``, or, for a sibling stored differently, what the storage changed."""
    title = f"{repo}@{sha[:12]}"
    try:
        with reading(repo, sha, None):
            return _check_release(baseline, repo, sha, sources, title)
    except Exception as exc:
        result = failed(title, exc, baseline.path)
        return replace(result, kind="new release" if result.error else result.kind, family=baseline.family)


def _check_release(baseline: Baseline, repo: str, sha: str, sources: Sources, title: str) -> RepoResult:
    rule = baseline.rule_for(repo)
    pinned = {r.repo: r for r in baseline.repos if not r.is_gguf}  # a GGUF entry has no config to compare
    if not pinned:
        note = "the family pins only GGUF repos: no safetensors sibling to compare it with"
        return RepoResult(title, baseline=baseline.path, kind="skipped", note=note, family=baseline.family)
    first = pinned[rule.reference] if rule and rule.reference else next(iter(pinned.values()))
    new = _side(sources, SourceSpec("hub", repo, sha), first.options)
    with reading(str(baseline.path), None, None):
        expected = {name: r.expected_snapshot() for name, r in pinned.items()}
        siblings = [
            (name, cached_metrics(sources.cache, expected[name], r.options)) for name, r in pinned.items()
        ]
    sibling = closest_sibling(new.metrics, siblings, rule.reference if rule else None)
    assert sibling is not None  # a baseline has at least one repo
    chosen = pinned[sibling.repo]
    if chosen.options != first.options:
        new = Side(new.label, new.snapshot, _metrics_of(sources, new.snapshot, chosen.options))
    old = Side(
        f"{chosen.repo}@{(chosen.sha or 'baseline')[:12]} (baseline)",
        expected[chosen.repo],
        dict(siblings)[chosen.repo],
    )
    comparison = _compare(old, new)
    variant = variant_of(chosen.repo, (old.snapshot, old.metrics), (new.snapshot, new.metrics))
    release = None
    if chosen.release is not None:  # the release files against the sibling's record of its own
        files = release_of(sources, new.snapshot)
        with reading(repo, sha, "chat template"):
            release = compare_with_record(chosen.release, files)
    return RepoResult(
        title,
        comparison,
        baseline=baseline.path,
        kv_variants=_kv_variants(old, new, chosen.options),
        fail_on_any_change=True,
        kind="new release",
        note=f"compared with {chosen.repo} ({sibling.why})",
        variant=variant,
        sibling=chosen.repo,
        family=baseline.family,
        release=release,
    )


def quantized_copy(baseline: Baseline, repo: str, info: RepoInfo, sources: Sources) -> RepoResult | None:
    """A repo of GGUF files whose card says it is a quantized copy of a repo this family pins
    (``base_model`` naming it, ``base_model_relation: quantized``: what lists it under the source's
    "Quantizations" on the Hub): each variant read by header, its model info not asked again, and set
    against the tensors the baseline recorded for the source. None: not such a repo.

    A copy is informational: it never fails the run, and it is reported on every poll until the family
    pins it (``baseline init`` on the copy records a ``gguf:`` entry; from then on it is checked as a
    pinned repo, and not seen here again). A copy whose headers cannot be read is the publisher's to
    fix: it is skipped, saying why."""
    from ._source.gguf_read import is_gguf_listing

    pinned = {r.repo.lower(): r for r in baseline.repos if not r.is_gguf}
    named = (pinned.get(name.lower()) for name in info.card.base_models)
    source = next((r for r in named if r is not None), None)
    if info.card.base_model_relation != "quantized" or source is None or not is_gguf_listing(info.sizes):
        return None
    from ._compare.gguf_diff import compare_variant
    from ._metrics.gguf import variants
    from ._source.gguf_read import load_hub_gguf

    title = f"{repo}@{info.sha[:12]}"
    try:
        release = load_hub_gguf(sources.settings, repo, info.sha, info)
        with reading(str(baseline.path), None, None):
            snapshot = source.expected_snapshot()
        with reading(repo, info.sha, None):
            found = [(v, compare_variant(snapshot, v)) for v in variants(release) if v.parameters]
        if not found:
            raise SourceError(repo, info.sha, None, "no GGUF file holds tensors")
    except Exception as exc:
        note = f"a GGUF copy of {source.repo} that could not be read ({failure(exc)})"
        return RepoResult(title, baseline=baseline.path, kind="skipped", note=note, family=baseline.family)
    return RepoResult(
        title,
        baseline=baseline.path,
        kind="quantized copy",
        note=_copy_note(found),
        sibling=source.repo,
        family=baseline.family,
    )


def _copy_note(found: list[tuple[Variant, VariantDiff]]) -> str:
    """Each variant's files, bytes and bits per weight, then how its tensors stand to the source's."""
    parts = []
    for variant, _ in found:
        files = f"{len(variant.files)} file" + ("s" if len(variant.files) > 1 else "")
        problems = f"; {'; '.join(variant.problems)}" if variant.problems else ""
        parts.append(
            f"{variant.name} ({files}, {human_bytes(variant.tensor_bytes)}, "
            f"{variant.bits_per_weight:.2f} bits per weight{problems})"
        )
    differing = [d for _, d in found if d.differs]
    source_parameters = found[0][1].source_parameters
    if differing:
        counts = ", ".join(
            f"{n} {what}"
            for n, what in (
                (len(differing[0].missing), "missing"),
                (len(differing[0].reshaped), "reshaped"),
                (len(differing[0].unmapped), "not mapped"),
                (sum(1 for *_, why in differing[0].only_gguf if not why), "only in the GGUF"),
            )
            if n
        )
        tensors = (
            f"tensors differ from the source's in {differing[0].name} ({counts}; hubdiff diff names them)"
        )
    else:
        dropped = sorted({why for _, d in found for _, _, why in d.dropped})
        kept = found[0][1].gguf_parameters
        tensors = f"every tensor matches the source's ({kept:,} parameters" + (
            f" of its {source_parameters:,}; left out as converters do: {', '.join(dropped)})"
            if kept != source_parameters or dropped
            else ")"
        )
    return "; ".join(parts) + "; " + tensors


# Repos checked side by side: each mostly waits on the Hub (one request when unchanged), and four at
# once bound the memory of cold reads of the largest checkpoints.
PARALLEL_REPOS = 4


def run_check(
    paths: list[Path], sources: Sources, points: dict[tuple[str, str], str | None] | None = None
) -> Report:
    """``points``: where each (repo, revision) points now, when a replay of this check asked already."""
    baselines = [load_baseline(p) for p in paths]  # every file is validated before anything is fetched
    pairs = [(baseline, repo) for baseline in baselines for repo in baseline.repos]
    if points is None and not sources.offline:  # owners' listings, as a replay asks
        mains = listed_on_main(sources.settings, [(repo.repo, repo.revision) for _, repo in pairs])
        points = {(repo, "main"): sha for repo, sha in mains.items()}
    listed = {read: sha for read, sha in (points or {}).items() if sha is not None}
    checked = each_in_threads(
        lambda i: check_repo(*pairs[i], sources, listed.get((pairs[i][1].repo, pairs[i][1].revision)))[0],
        range(len(pairs)),
        PARALLEL_REPOS,
    )
    return Report("check", tuple(checked[i] for i in range(len(pairs))))
