"""``hubdiff watch``: notice new revisions of every repo pinned in the baselines and new releases in
each family, report, record.

State lives in git: the pinned shas in the baselines. A poll costs one model listing per owner (and
page), which returns every repo's sha at once; per-repo requests are made only for repos the listing
does not cover (private ones, revisions other than main), for repos that changed, and for new repos a
family's ``discover`` rules take. A ``quantized_copies_of`` rule adds one listing (and page) per poll,
filtered on the Hub's ``base_model:quantized:`` tag, and one request per copy it lists. A run that
crashes loses nothing and the next one redoes the work; baseline writes are atomic and serialised
with a lock (see ``_baseline.store``), so two runs at once cannot corrupt one.
"""

from __future__ import annotations

import hashlib
import json
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from ._baseline import Baseline, RepoBaseline, load_baseline
from ._baseline.record import add_release, update_baseline
from ._baseline.schema import family_file
from ._baseline.store import edit
from ._files import atomic_write_text
from ._source import Sources
from ._source.hub import HubReader, ListedRepo
from .errors import EXIT_CHANGED, EXIT_OK, EXIT_SOURCE, BaselineError, SourceError, UsageError, WriteError
from .jobs import check_release, check_repo, failed, failure, quantized_copy
from .results import INFORMATIONAL, NOTICES, RepoResult, Report
from .visible import printable_lines

MAX_ANNOTATIONS = 10


@dataclass
class WatchOutcome:
    checked: int = 0
    unchanged: list[str] = field(default_factory=list)
    results: dict[str, list[RepoResult]] = field(default_factory=dict)  # family -> what needs a look
    updated: dict[str, list[str]] = field(default_factory=dict)  # family -> repos re-recorded or added
    files: dict[str, dict[str, str]] = field(default_factory=dict)  # family -> {report, comment, pr_body}
    baseline_files: dict[str, Path] = field(default_factory=dict)

    def _all(self) -> list[RepoResult]:
        return [r for rs in self.results.values() for r in rs]

    @property
    def failed(self) -> list[RepoResult]:
        return [r for r in self._all() if r.error]

    @property
    def lost(self) -> list[RepoResult]:
        """Pinned repos the watch can no longer see: gone (deleted, or private to this token), gated or
        disabled. News, not read failures (exit 1, not 3), but the watch is blind to them until a person
        changes the baseline or the token, so the workflow goes red for them."""
        return [r for r in self._all() if not r.error and r.kind in ("vanished", "gated", "disabled")]

    @property
    def changed_families(self) -> list[str]:
        """Families with something to record: a pinned repo that moved, or a new release."""
        return sorted(f for f, rs in self.results.items() if any(_recordable(r) for r in rs))

    @property
    def exit_code(self) -> int:
        if self.failed:
            return EXIT_SOURCE
        pending = [
            r
            for f, rs in self.results.items()
            for r in rs
            if r.status not in INFORMATIONAL and _repo_of(r) not in self.updated.get(f, [])
        ]
        broken = [r for r in self._all() if r.broken_claims]
        return EXIT_CHANGED if pending or broken else EXIT_OK

    def summary_line(self) -> str:
        results = self._all()
        changed = sum(1 for r in results if not r.error and r.kind == "revision")
        parts = [f"{self.checked} repos checked", f"{changed} changed"]
        for kind, label in (("new release", "new releases"), *((k, k) for k in NOTICES)):
            n = sum(1 for r in results if r.kind == kind and not r.error)
            if n:
                parts.append(f"{n} {'quantized copies' if label == 'quantized copy' and n > 1 else label}")
        if self.failed:
            parts.append(f"{len(self.failed)} could not be read")
        if self.updated:
            parts.append(f"baselines updated: {', '.join(sorted(self.updated))}")
        return "hubdiff watch: " + ", ".join(parts)


def _recordable(result: RepoResult) -> bool:
    return not result.error and result.kind in ("revision", "new release", "renamed")


def _repo_of(result: RepoResult) -> str:
    return result.title.split("@")[0]


def parse_shard(text: str | None) -> tuple[int, int]:
    if not text:
        return 0, 1
    try:
        index, count = (int(x) for x in text.split("/"))
    except ValueError:
        raise UsageError(f"--shard takes INDEX/COUNT, e.g. 0/4 (got {text!r})") from None
    if count < 1 or not 0 <= index < count:
        raise UsageError(f"--shard {text}: INDEX must be 0 to COUNT-1")
    return index, count


def in_shard(family: str, shard: tuple[int, int]) -> bool:
    """Families, not repos, are split: each family's baseline file is written by exactly one shard."""
    digest = int(hashlib.sha1(family.encode()).hexdigest(), 16)
    return digest % shard[1] == shard[0]


Listing = dict[str, ListedRepo] | Exception


def _listings(
    owners: set[str], copies_of: set[str], reader: HubReader
) -> tuple[dict[str, Listing], dict[str, Listing]]:
    """Each owner's model listing, and each ``quantized_copies_of`` repo's listing of copies (one
    request per page of 1,000), fetched side by side."""

    def listing(job: tuple[bool, str]) -> Listing:
        copies, name = job
        try:
            return reader.quantized_copies(name) if copies else reader.listing(name)
        except Exception as exc:
            return exc  # pinned repos fall back to one request each; discovery says the listing failed

    jobs = [(False, o) for o in sorted(owners)] + [(True, r) for r in sorted(copies_of)]
    with ThreadPoolExecutor(max_workers=min(8, len(jobs) or 1)) as pool:
        listed = dict(zip(jobs, pool.map(listing, jobs)))
    return (
        {name: v for (copies, name), v in listed.items() if not copies},
        {name: v for (copies, name), v in listed.items() if copies},
    )


def _copies_rules(baselines: list[Baseline], everything: list[Baseline]) -> dict[str, Baseline]:
    """repo -> the family whose ``quantized_copies_of`` rule lists its copies this run: the first by
    name of the families naming it (in any shard), so that a repo two families pin is listed once and
    its copies reported once, by the shard that holds that family."""
    first: dict[str, Baseline] = {}
    for baseline in sorted(everything, key=lambda b: b.family):
        for rule in baseline.copies:
            first.setdefault(rule.repo, baseline)
    mine = {id(b) for b in baselines}
    return {repo: b for repo, b in first.items() if id(b) in mine}


def _current(
    repo: RepoBaseline, listings: dict[str, Listing], reader: HubReader
) -> tuple[str, str] | Exception:
    """The sha the repo's tracked revision points at now and the name the Hub answers under: from the
    listing when it covers the repo, else one request (a private repo, another revision, or one that
    left the listing, as a renamed repo does: its old name answers with a 307 to the new one, which
    model info names)."""
    listed = listings.get(repo.repo.split("/")[0])
    if repo.revision == "main" and isinstance(listed, dict) and repo.repo in listed:
        return listed[repo.repo].sha, repo.repo
    try:
        info = reader.resolve(repo.repo, repo.revision)
    except Exception as exc:
        return exc
    return info.sha, info.repo_id or repo.repo


def skip_reason(sizes: dict[str, int | None]) -> str | None:
    """Why a repo has nothing hubdiff can read (None: it has safetensors weights and a config)."""
    names = [p.rsplit("/", 1)[-1] for p in sizes]
    if any(n.endswith(".safetensors") for n in names) and any(n == "config.json" for n in names):
        return None
    if "adapter_config.json" in names:
        return "an adapter (adapter_config.json), not a model of its own"
    ggufs = sum(n.endswith(".gguf") for n in names)
    if ggufs:
        return f"GGUF only ({ggufs} .gguf files, no safetensors weights)"
    if not any(n.endswith(".safetensors") for n in names):
        return "no safetensors weights"
    return "safetensors weights without a config.json"


def _release_or_notice(
    baseline: Baseline,
    repo: str,
    listed: ListedRepo,
    reader: HubReader,
    sources: Sources,
    copies_only: bool = False,
) -> RepoResult:
    """A new repo read and compared, or skipped with the reason. A private repo is never read: a pull
    request would make its name and figures public. A new repo that cannot be read is skipped, not a
    failure of the run: its publisher, not the family, has to fix it (or a rule ``exclude`` it).

    ``copies_only``: the repo was listed by a ``quantized_copies_of`` rule, so it is anyone's repo that
    says it is a copy; it is reported only as a GGUF copy, never proposed as a release of the family
    (which only an owner rule may do)."""
    title = f"{repo}@{listed.sha[:12]}"
    reason: str | None
    if listed.private:
        reason = "private: not proposed (a pull request would make its name and figures public)"
    else:
        try:
            info = reader.resolve(repo, listed.sha)
            reason = skip_reason(info.sizes)
        except SourceError as exc:
            reason = exc.problem if exc.access else f"could not be read ({failure(exc)})"
        else:
            if reason is not None or copies_only:  # unless a GGUF copy of a pinned repo, nothing to compare
                copy = quantized_copy(baseline, repo, info, sources)
                if copy is not None:
                    return copy
                if copies_only:
                    reason = _not_a_copy(reason)
    if reason is None:
        result = check_release(baseline, repo, listed.sha, sources)
        if result.kind in ("new release", "skipped") and not result.error:
            return result
        reason = (
            result.note
            if result.kind in ("gated", "vanished", "disabled")
            else f"could not be read ({result.error})"
        )
    return RepoResult(title, baseline=baseline.path, kind="skipped", note=reason, family=baseline.family)


def _not_a_copy(reason: str | None) -> str:
    """Why a repo the copies listing names is not read as a copy: hubdiff reads GGUF copies only, and
    only one whose card (at the revision read, not the listing's tag) names a repo the family pins."""
    if reason is None:
        return "listed as a quantized copy, but of safetensors weights: only a GGUF copy is read as one"
    if reason.startswith("GGUF only"):
        return (
            f"{reason}: its card does not name a repo this family pins as base_model with "
            "base_model_relation: quantized"
        )
    return reason


def _family_taking(repo: str, baselines: list[Baseline]) -> Baseline | None:
    """The one family a new repo belongs to when several families' rules take it: the first by name, so
    that shards running apart agree and the repo is proposed once."""
    return next((b for b in sorted(baselines, key=lambda b: b.family) if b.rule_for(repo)), None)


def _check_pinned(
    baselines: list[Baseline],
    listings: dict[str, Listing],
    reader: HubReader,
    sources: Sources,
    outcome: WatchOutcome,
) -> tuple[dict[str, str], dict[str, str]]:
    """Every pinned repo against its baseline when its sha moved, and a notice for one the Hub now
    answers under another name; returns repo -> the sha it moved to, and repo -> its new name."""
    moved_to: dict[str, str] = {}
    renamed: dict[str, str] = {}
    for baseline in baselines:
        for repo in baseline.repos:
            outcome.checked += 1
            title = f"{repo.repo}@{repo.revision}"
            results: list[RepoResult] = []
            now = _current(repo, listings, reader)
            if isinstance(now, Exception):
                outcome.results.setdefault(baseline.family, []).append(
                    failed(title, now, baseline.path, repo.line)
                )
                continue
            sha, name = now
            if name.lower() != repo.repo.lower():  # the Hub's ids ignore case: "Org/M" is org/m
                renamed[repo.repo] = name
                note = f"{repo.repo} → {name}"
                results.append(
                    RepoResult(title, baseline=baseline.path, line=repo.line, kind="renamed", note=note)
                )
            listed = listings.get(name.split("/")[0])
            gated = isinstance(listed, dict) and listed.get(name, ListedRepo("")).gated
            refused = reader.refusal(name, sha) if gated else None
            if refused is not None:
                results.append(failed(title, refused, baseline.path, repo.line))
            elif sha != repo.sha:
                moved_to[repo.repo] = sha
                result, _ = check_repo(baseline, replace(repo, revision=sha), sources)
                results.append(replace(result, title=title))
            elif name.lower() == repo.repo.lower():
                outcome.unchanged.append(repo.repo)
            if results:
                outcome.results.setdefault(baseline.family, []).extend(results)
    return moved_to, renamed


def _renamed_elsewhere(
    baselines: list[Baseline], everything: list[Baseline], listings: dict[str, Listing], reader: HubReader
) -> set[str]:
    """The names (lowercased) that repos pinned by other shards' families answer under now, when an
    owner's listing this run fetched no longer shows them: such a repo was renamed (or is gone), and
    its new name is that family's pin, not a new release here. One request per such repo; asked only
    when a listing holds a candidate release."""
    mine = {id(b) for b in baselines}
    names = set()
    for baseline in everything:
        if id(baseline) in mine:
            continue
        for repo in baseline.repos:
            listed = listings.get(repo.repo.split("/")[0])
            if repo.revision == "main" and isinstance(listed, dict) and repo.repo not in listed:
                now = _current(repo, listings, reader)
                if not isinstance(now, Exception):
                    names.add(now[1].lower())
    return names


def _find_releases(
    baselines: list[Baseline],
    everything: list[Baseline],
    listings: dict[str, Listing],
    reader: HubReader,
    sources: Sources,
    outcome: WatchOutcome,
    renamed: dict[str, str],
    copies: dict[str, Listing],
) -> dict[str, str]:
    """New repos the families' rules take, each read and compared; returns repo -> sha of those to add.

    A pinned repo renamed is listed under its new name: that name is the pin's (``renamed``, and what
    other shards' pins answer under), never a new release. A repo a copies listing names is reported
    once: not if pinned (it is checked as pinned), not if an owner rule takes it (reported there, as
    it always was), not twice for a card naming two pinned repos."""
    pinned_anywhere = {r.repo.lower() for b in everything for r in b.repos} | {
        n.lower() for n in renamed.values()
    }
    elsewhere: set[str] | None = None  # learnt once a candidate shows up
    released: dict[str, str] = {}
    for baseline in baselines:
        for owner in sorted({rule.owner for rule in baseline.discover}):
            listed = listings[owner]
            if isinstance(listed, Exception):
                result = RepoResult(f"{owner} (model listing)", error=failure(listed), baseline=baseline.path)
                outcome.results.setdefault(baseline.family, []).append(result)
                continue
            for repo, entry in sorted(listed.items()):
                if repo.lower() in pinned_anywhere or _family_taking(repo, everything) is not baseline:
                    continue  # nothing is fetched for a repo no rule takes, or one already pinned
                if elsewhere is None:
                    elsewhere = _renamed_elsewhere(baselines, everything, listings, reader)
                if repo.lower() in elsewhere:
                    continue
                result = _release_or_notice(baseline, repo, entry, reader, sources)
                outcome.results.setdefault(baseline.family, []).append(result)
                if _recordable(result):
                    released[repo] = entry.sha
    taking = _copies_rules(baselines, everything)
    reported: set[str] = set()
    for source, listed in sorted(copies.items()):
        baseline = taking[source]
        if isinstance(listed, Exception):
            title = f"{source} (quantized copies listing)"
            result = RepoResult(title, error=failure(listed), baseline=baseline.path)
            outcome.results.setdefault(baseline.family, []).append(result)
            continue
        for repo, entry in sorted(listed.items()):
            if repo.lower() in pinned_anywhere or repo.lower() in reported:
                continue
            if _family_taking(repo, everything) is not None:
                continue  # an owner rule's: found (and reported) from its owner's listing
            if elsewhere is None:
                elsewhere = _renamed_elsewhere(baselines, everything, listings, reader)
            if repo.lower() in elsewhere:
                continue
            reported.add(repo.lower())
            result = _release_or_notice(baseline, repo, entry, reader, sources, copies_only=True)
            outcome.results.setdefault(baseline.family, []).append(result)
    return released


def _write_reports(outcome: WatchOutcome, output_dir: Path, template_dir: Path | None) -> None:
    """Per family: the full report, the comment and, when there is something to record, the PR body."""
    from ._render.markdown import render, render_comment, workflow_run_url

    changed = set(outcome.changed_families)
    for family, results in sorted(outcome.results.items()):
        report = Report("watch", tuple(results))
        files = {"report": str(family_file(output_dir, family, ".md"))}
        files["comment"] = str(family_file(output_dir, family, ".comment.md"))
        atomic_write_text(Path(files["report"]), render(report, "report", template_dir))
        comment = render_comment(
            report, template_dir, files["report"], marker=family, run_url=workflow_run_url()
        )
        atomic_write_text(Path(files["comment"]), comment)
        if family in changed:
            files["pr_body"] = str(family_file(output_dir, family, ".pr.md"))
            atomic_write_text(Path(files["pr_body"]), comment)
        outcome.files[family] = files


def _repin(path: Path, names: dict[str, str]) -> dict[str, str]:
    """Pin renamed repos under the names the Hub answers under now: each entry keeps its place and all
    it holds, and a discover rule's ``reference`` and ``quantized_copies_of`` follow it. A new name the
    file already pins is left for a person to reconcile. Returns the renames made."""
    with edit(path) as editing:
        repos = editing.doc["repos"]
        names = {old: new for old, new in names.items() if new not in repos}
        editing.doc["repos"] = {names.get(name, name): entry for name, entry in repos.items()}
        for rule in editing.doc.get("discover") or []:
            if isinstance(rule, dict) and rule.get("reference") in names:
                rule["reference"] = names[rule["reference"]]
            if isinstance(rule, dict) and rule.get("quantized_copies_of") in names:
                rule["quantized_copies_of"] = names[rule["quantized_copies_of"]]
    return names


def _record(
    outcome: WatchOutcome,
    moved_to: dict[str, str],
    released: dict[str, str],
    renamed: dict[str, str],
    sources: Sources,
) -> None:
    """``--update``: re-pin the renamed repos, re-record the repos that moved and add the new
    releases, family by family."""
    for family in outcome.changed_families:
        path = outcome.baseline_files[family]
        recordable = [r for r in outcome.results[family] if _recordable(r)]
        renamed_here = {_repo_of(r) for r in recordable if r.kind == "renamed"}
        names = _repin(path, {old: renamed[old] for old in renamed_here}) if renamed_here else {}
        moved = {_repo_of(r) for r in recordable if r.kind == "revision"}
        if moved:
            revisions = {names.get(repo, repo): sha for repo, sha in moved_to.items()}
            update_baseline(
                path, sources, only={names.get(repo, repo) for repo in moved}, revisions=revisions
            )
        releases = {_repo_of(r): r for r in recordable if r.kind == "new release"}
        for repo, result in releases.items():
            assert result.sibling is not None
            add_release(path, repo, released[repo], result.sibling, result.note or "", sources)
        outcome.updated[family] = sorted(moved | set(releases) | set(names))


def run_watch(
    paths: list[Path],
    sources: Sources,
    *,
    update: bool = False,
    shard: tuple[int, int] = (0, 1),
    output_dir: Path = Path("reports"),
    template_dir: Path | None = None,
) -> WatchOutcome:
    everything = [load_baseline(p) for p in paths]  # every file validated before anything is fetched
    first_of: dict[str, Path] = {}
    for baseline in everything:  # a family's reports and pull request are named after it
        other = first_of.setdefault(baseline.family, baseline.path)
        if other != baseline.path:
            raise BaselineError(
                f"{baseline.path}:{baseline.family_line}: family: {baseline.family} is also the family of {other}"
            )
    baselines = [b for b in everything if in_shard(b.family, shard)]
    outcome = WatchOutcome(baseline_files={b.family: b.path for b in baselines})
    reader = HubReader(sources.settings, sources.cache)
    owners = {r.repo.split("/")[0] for b in baselines for r in b.repos if r.revision == "main"}
    owners |= {rule.owner for b in baselines for rule in b.discover}
    listings, copies = _listings(owners, set(_copies_rules(baselines, everything)), reader)
    moved_to, renamed = _check_pinned(baselines, listings, reader, sources, outcome)
    released = _find_releases(baselines, everything, listings, reader, sources, outcome, renamed, copies)
    _write_reports(outcome, output_dir, template_dir)
    if update:
        _record(outcome, moved_to, released, renamed, sources)
        if _relocate_claims(outcome, renamed):  # the PR body names lines of the file it proposes
            _write_reports(outcome, output_dir, template_dir)
    return outcome


def _relocate_claims(outcome: WatchOutcome, renamed: dict[str, str]) -> bool:
    """Point each result's claims (and the repo itself) at their lines in the baseline as ``--update``
    left it: re-recording one repo moves the lines of every entry after it, and the pull request's
    body must name the lines of the file it proposes. True if any line moved."""
    moved = False
    for family in outcome.updated:
        baseline = load_baseline(outcome.baseline_files[family])
        entries = {r.repo: r for r in baseline.repos}
        results = []
        for result in outcome.results[family]:
            repo = _repo_of(result)
            entry = entries.get(renamed.get(repo, repo))
            if entry is None or result.baseline != baseline.path:
                results.append(result)
                continue
            lines = {c.name: c.line for c in entry.claims}
            claims = tuple(
                replace(c, claim=replace(c.claim, line=lines.get(c.claim.name, c.claim.line)))
                for c in result.claims
            )
            before = [result.line, *(c.claim.line for c in result.claims)]
            moved |= before != [entry.line, *(c.claim.line for c in claims)]
            results.append(replace(result, claims=claims, line=entry.line))
        outcome.results[family] = results
    return moved


# -- GitHub Actions ----------------------------------------------------------------------------


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotations(outcome: WatchOutcome) -> list[str]:
    from ._render.headline import headline

    lines = []
    for results in outcome.results.values():
        for r in results:
            level = "error" if r.error or r.broken_claims else "warning"
            where = f"file={_escape_property(str(r.baseline))}" + (f",line={r.line}" if r.line else "")
            message = _escape_data(printable_lines(headline(r)))  # no terminal escapes into the Actions log
            lines.append(f"::{level} {where},title={_escape_property('hubdiff ' + r.status)}::{message}")
    if len(lines) > MAX_ANNOTATIONS:
        extra = len(lines) - (MAX_ANNOTATIONS - 1)
        lines = [
            *lines[: MAX_ANNOTATIONS - 1],
            f"::warning ::{extra} more hubdiff findings in the job summary",
        ]
    return lines


def github_outputs(outcome: WatchOutcome) -> dict[str, str]:
    return {
        "changed": "true" if outcome.changed_families else "false",
        "families": json.dumps(outcome.changed_families),
        "failed": json.dumps([r.title for r in outcome.failed]),
        "lost": json.dumps([r.title for r in outcome.lost]),
        "reports": json.dumps({f: files["report"] for f, files in outcome.files.items()}),
        "pr_bodies": json.dumps(
            {f: files["pr_body"] for f, files in outcome.files.items() if "pr_body" in files}
        ),
        "baselines": json.dumps({f: str(outcome.baseline_files[f]) for f in outcome.changed_families}),
        "summary": outcome.summary_line(),
    }


def _append(path: str, text: str) -> None:
    """Append ``text`` to a file Actions gave; one that cannot be written is hubdiff's WriteError (exit 2,
    one line naming it), not a traceback. Appended, not replaced: earlier steps' outputs are there."""
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise WriteError(path, f"cannot write: {exc.strerror or exc}") from None


def write_github_files(outcome: WatchOutcome, summary_markdown: str) -> None:
    """``$GITHUB_OUTPUT`` values and the job summary, when those files are given (they are in Actions)."""
    output = os.environ.get("GITHUB_OUTPUT")
    if output:
        _append(
            output,
            "".join(
                f"{key}={value}\n" if "\n" not in value else f"{key}<<HUBDIFF_EOF\n{value}\nHUBDIFF_EOF\n"
                for key, value in github_outputs(outcome).items()
            ),
        )
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        from ._render.markdown import STEP_SUMMARY_LIMIT, fit_summary

        try:  # the limit is the step's: what earlier commands of the step appended counts too
            used = os.path.getsize(step_summary)
        except OSError:
            used = 0
        _append(step_summary, fit_summary(summary_markdown, STEP_SUMMARY_LIMIT - used))
