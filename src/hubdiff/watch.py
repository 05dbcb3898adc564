"""``hubdiff watch``: notice new revisions of every repo pinned in the baselines, report, re-record.

State lives in git: the pinned shas in the baselines. A poll costs one model listing per owner (and
page), which returns every repo's sha at once; per-repo requests are made only for repos the listing
does not cover (private ones, revisions other than main) and for repos that changed. A run that
crashes loses nothing and the next one redoes the work; baseline writes are atomic and serialised
with a lock (see ``_baseline.store``), so two runs at once cannot corrupt one.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from ._baseline import RepoBaseline, load_baseline, update_baseline
from ._source import Sources
from .errors import EXIT_CHANGED, EXIT_OK, EXIT_SOURCE, UsageError
from .jobs import RepoResult, Report, check_repo, failure

MAX_ANNOTATIONS = 10
STEP_SUMMARY_LIMIT = 1_000_000  # GitHub refuses job summaries over 1 MiB


@dataclass
class WatchOutcome:
    checked: int = 0
    unchanged: list[str] = field(default_factory=list)
    results: dict[str, list[RepoResult]] = field(default_factory=dict)  # family -> changed or failed repos
    updated: dict[str, list[str]] = field(default_factory=dict)  # family -> repos re-recorded
    files: dict[str, dict[str, str]] = field(default_factory=dict)  # family -> {report, comment, pr_body}
    baseline_files: dict[str, Path] = field(default_factory=dict)

    @property
    def failed(self) -> list[RepoResult]:
        return [r for rs in self.results.values() for r in rs if r.error]

    @property
    def changed_families(self) -> list[str]:
        return sorted(f for f, rs in self.results.items() if any(not r.error for r in rs))

    @property
    def exit_code(self) -> int:
        if self.failed:
            return EXIT_SOURCE
        pending = [
            r
            for f, rs in self.results.items()
            for r in rs
            if r.title.split("@")[0] not in self.updated.get(f, [])
        ]
        broken = [r for rs in self.results.values() for r in rs if r.broken_claims]
        return EXIT_CHANGED if pending or broken else EXIT_OK

    def summary_line(self) -> str:
        changed = sum(1 for rs in self.results.values() for r in rs if not r.error)
        parts = [f"{self.checked} repos checked", f"{changed} changed"]
        if self.failed:
            parts.append(f"{len(self.failed)} could not be read")
        if self.updated:
            parts.append(f"baselines updated: {', '.join(sorted(self.updated))}")
        return "hubdiff watch: " + ", ".join(parts)


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


def _current_shas(repos: list[RepoBaseline], sources: Sources) -> dict[str, str | Exception]:
    """The sha each repo's tracked revision points at now, with as few requests as the Hub allows."""
    from ._source.hub import HubReader

    reader = HubReader(sources.settings, sources.cache)
    out: dict[str, str | Exception] = {}
    by_owner: dict[str, list[RepoBaseline]] = defaultdict(list)
    for repo in repos:
        by_owner[repo.repo.split("/")[0]].append(repo)

    def listing(owner: str) -> dict[str, str]:
        try:
            return reader.main_shas(owner) if any(r.revision == "main" for r in by_owner[owner]) else {}
        except Exception:
            return {}  # fall back to one request per repo, each of which reports its own failure

    owners = sorted(by_owner)
    with ThreadPoolExecutor(max_workers=min(8, len(owners) or 1)) as pool:
        listings = dict(zip(owners, pool.map(listing, owners)))
    for owner in owners:
        listed = listings[owner]
        for repo in by_owner[owner]:
            if repo.revision == "main" and repo.repo in listed:
                out[repo.repo] = listed[repo.repo]
                continue
            try:
                out[repo.repo] = reader.resolve(repo.repo, repo.revision).sha
            except Exception as exc:
                out[repo.repo] = exc
    return out


def run_watch(
    paths: list[Path],
    sources: Sources,
    *,
    update: bool = False,
    shard: tuple[int, int] = (0, 1),
    output_dir: Path = Path("reports"),
    template_dir: Path | None = None,
) -> WatchOutcome:
    from ._files import atomic_write_text
    from ._render.markdown import render, render_comment, workflow_run_url

    baselines = [b for b in (load_baseline(p) for p in paths) if in_shard(b.family, shard)]
    outcome = WatchOutcome(baseline_files={b.family: b.path for b in baselines})
    pairs = [(b, r) for b in baselines for r in b.repos]
    outcome.checked = len(pairs)
    current = _current_shas([r for _, r in pairs], sources)
    for baseline, repo in pairs:
        now = current.get(repo.repo)
        if isinstance(now, Exception):
            result = RepoResult(
                f"{repo.repo}@{repo.revision}", error=failure(now), baseline=baseline.path, line=repo.line
            )
            outcome.results.setdefault(baseline.family, []).append(result)
            continue
        if now == repo.sha:
            outcome.unchanged.append(repo.repo)
            continue
        result, _ = check_repo(baseline, replace(repo, revision=now or repo.revision), sources)
        result = replace(result, title=f"{repo.repo}@{repo.revision}")
        outcome.results.setdefault(baseline.family, []).append(result)
    changed = set(outcome.changed_families)
    for family, results in sorted(outcome.results.items()):
        report = Report("watch", tuple(results))
        base = output_dir / family
        files = {"report": f"{base}.md", "comment": f"{base}.comment.md"}
        atomic_write_text(Path(files["report"]), render(report, "report", template_dir))
        comment = render_comment(
            report, template_dir, files["report"], marker=family, run_url=workflow_run_url()
        )
        atomic_write_text(Path(files["comment"]), comment)
        if family in changed:  # a pull request is opened only for families whose repos moved
            files["pr_body"] = f"{base}.pr.md"
            atomic_write_text(Path(files["pr_body"]), comment)
        outcome.files[family] = files
    if update:
        shas = {repo: sha for repo, sha in current.items() if isinstance(sha, str)}
        for family in outcome.changed_families:
            changed = {r.title.split("@")[0] for r in outcome.results[family] if not r.error}
            update_baseline(outcome.baseline_files[family], sources, only=changed, revisions=shas)
            outcome.updated[family] = sorted(changed)
    return outcome


# -- GitHub Actions ----------------------------------------------------------------------------


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotations(outcome: WatchOutcome) -> list[str]:
    lines = []
    for results in outcome.results.values():
        for r in results:
            level = "error" if r.error or r.broken_claims else "warning"
            where = f"file={_escape_property(str(r.baseline))}" + (f",line={r.line}" if r.line else "")
            lines.append(
                f"::{level} {where},title={_escape_property('hubdiff ' + r.status)}::{_escape_data(r.headline)}"
            )
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
        "reports": json.dumps({f: files["report"] for f, files in outcome.files.items()}),
        "pr_bodies": json.dumps(
            {f: files["pr_body"] for f, files in outcome.files.items() if "pr_body" in files}
        ),
        "baselines": json.dumps({f: str(outcome.baseline_files[f]) for f in outcome.changed_families}),
        "summary": outcome.summary_line(),
    }


def write_github_files(outcome: WatchOutcome, summary_markdown: str) -> None:
    """``$GITHUB_OUTPUT`` values and the job summary, when those files are given (they are in Actions)."""
    output = os.environ.get("GITHUB_OUTPUT")
    if output:
        with open(output, "a", encoding="utf-8") as fh:
            for key, value in github_outputs(outcome).items():
                fh.write(
                    f"{key}={value}\n" if "\n" not in value else f"{key}<<HUBDIFF_EOF\n{value}\nHUBDIFF_EOF\n"
                )
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        text = summary_markdown
        if len(text.encode()) > STEP_SUMMARY_LIMIT:
            cut = text.encode()[: STEP_SUMMARY_LIMIT - 200].decode(errors="ignore")
            text = cut + "\n\n… cut to GitHub's job-summary limit; see the report artifacts.\n"
        with open(step_summary, "a", encoding="utf-8") as fh:
            fh.write(text)
