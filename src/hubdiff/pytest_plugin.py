"""The pytest side: ``pytest checks/`` verifies every baseline and every claim before an analysis is published.

One test per repo layout and one per claim, with ids like ``glm-5.3-flash::kv_bytes_per_token``.
Options: ``--hub-offline`` (cache only), ``--hub-endpoint URL``, ``--baseline-dir DIR`` and
``--update-baselines`` (re-record changed repos and restate failing claims at the precision they are
written in). That run passes and lists what it wrote, as syrupy's ``--snapshot-update`` does
(pytest-regressions' ``--force-regen`` fails each regenerated test instead, which would leave a bot's
run red after it fixed everything). A repo that cannot be read fails once, in its layout test, with
what fixes it; its claims are skipped, naming that test. The session ends with a report of stale
baselines (repos, tensor patterns that no longer exist), claims no test used, and one line of counts:
repos checked, claims checked, failures, updates written, unused claims; the re-record hint repeats
the run's own options.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ._baseline import Baseline, load_baseline
from ._baseline.record import restate_claims, update_baseline
from ._compare.claims import ClaimResult, restated
from ._source import HubSettings, Sources
from ._source.cache import SnapshotCache
from .errors import HubdiffError
from .jobs import check_repo, failure
from .results import RepoResult, Report


class UnverifiedFigure(UserWarning):
    """A claim holds, but on a figure hubdiff could not verify (see ``Metrics.unverified``)."""


@dataclass(frozen=True)
class Case:
    path: Path
    repo: str
    claim: str | None  # None: the repo's recorded layout, config and figures

    def __str__(self) -> str:
        return f"{self.repo.split('/')[-1].lower()}::{self.claim or 'layout'}"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("hubdiff", "hubdiff baselines and claims")
    group.addoption("--hub-offline", action="store_true", help="read snapshots from the hubdiff cache only")
    group.addoption("--hub-endpoint", help="Hub endpoint (default: $HF_ENDPOINT or https://huggingface.co)")
    group.addoption("--baseline-dir", help="folder of baseline YAML files (default: <rootdir>/baselines)")
    group.addoption(
        "--update-baselines",
        action="store_true",
        help="re-record changed repos and restate failing claims (like --force-regen)",
    )


def _baseline_dir(config: pytest.Config) -> Path:
    given = config.getoption("--baseline-dir")
    return Path(given) if given else Path(config.rootpath) / "baselines"


def _baselines(config: pytest.Config) -> list[Baseline]:
    """Every baseline of the folder, validated. A folder that is missing or holds no baseline is an
    error, not zero tests: a typo in --baseline-dir must not pass as "nothing to check"."""
    folder = _baseline_dir(config)
    if not folder.is_dir():
        raise HubdiffError(f"--baseline-dir {folder}: no such folder")
    paths = sorted(folder.glob("*.yaml")) + sorted(folder.glob("*.yml"))
    if not paths:
        raise HubdiffError(f"--baseline-dir {folder}: no baseline files (*.yaml) in it")
    return [load_baseline(p) for p in paths]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "hubdiff_case" not in metafunc.fixturenames:
        return
    try:
        baselines = _baselines(metafunc.config)
    except HubdiffError as exc:
        pytest.fail(str(exc), pytrace=False)  # one line, where the bad file or folder is named
    cases = [
        Case(b.path, r.repo, c)
        for b in baselines
        for r in b.repos
        for c in (None, *[claim.name for claim in r.claims])
    ]
    metafunc.config.stash[_CASES] = {str(c.path) + "::" + str(c) for c in cases}
    metafunc.parametrize("hubdiff_case", cases, ids=str)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Remember whether every case was selected: only then can a claim no test ran be called unused
    (with -k or a node id, most claims are left out on purpose)."""
    cases = session.config.stash.get(_CASES, None)
    if cases is None:
        return
    selected = {
        f"{item.callspec.params['hubdiff_case'].path}::{item.callspec.params['hubdiff_case']}"
        for item in session.items
        if hasattr(item, "callspec") and "hubdiff_case" in item.callspec.params
    }
    session.config.stash[_WHOLE_SET] = selected == cases


@dataclass
class HubdiffSession:
    config: pytest.Config
    results: dict[tuple[Path, str], RepoResult] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)
    to_rerecord: dict[Path, set[str]] = field(default_factory=dict)
    to_restate: dict[Path, dict[tuple[str, str], Any]] = field(default_factory=dict)
    stale: list[str] = field(default_factory=list)
    gone: dict[Path, set[str]] = field(default_factory=dict)  # baseline file -> repos no longer on the Hub
    updated: list[str] = field(default_factory=list)
    failed: int = 0  # failures --update-baselines can fix: a changed layout, a broken claim
    unreadable: int = 0  # repos that could not be read (each fails once, in its layout test)
    layouts: int = 0
    claims: int = 0
    claims_skipped: int = 0  # claims of a repo that could not be read: one failure per cause
    unreachable: str | None = None  # the first "cannot connect": every later repo fails with it at once

    def sources(self) -> Any:
        settings = HubSettings.from_env(self.config.getoption("--hub-endpoint"))
        return Sources(settings, SnapshotCache(), offline=bool(self.config.getoption("--hub-offline")))

    def result(self, case: Case) -> RepoResult:
        key = (case.path, case.repo)
        if key not in self.results:
            baseline = load_baseline(case.path)
            repo = next(r for r in baseline.repos if r.repo == case.repo)
            if self.unreachable is not None:
                self.results[key] = RepoResult(
                    f"{repo.repo}@{repo.revision}",
                    error=f"not tried: {self.unreachable}",
                    baseline=baseline.path,
                    line=repo.line,
                )
                return self.results[key]
            result, _ = check_repo(baseline, repo, self.sources())
            self.results[key] = result
            if result.error and "cannot connect to" in result.error:
                self.unreachable = result.error
            if result.kind == "vanished" or (result.error and "not found" in result.error):
                self.stale.append(f"{case.path}: {case.repo} ({result.error or result.note})")
                self.gone.setdefault(case.path, set()).add(case.repo)
            elif result.comparison is not None and result.comparison.tensors.removed:
                removed = result.comparison.tensors.removed
                self.stale.append(
                    f"{case.path}: {case.repo}: {len(removed)} recorded tensor patterns no longer exist "
                    f"(e.g. {removed[0].name})"
                )
        return self.results[key]

    def verify(self, case: Case) -> None:
        self.used.add(f"{case.path}::{case}")
        result = self.result(case)
        update = bool(self.config.getoption("--update-baselines"))
        if case.claim is None:
            self.layouts += 1
        else:
            self.claims += 1
        if result.error or (result.comparison is None and result.gguf is None):  # a failed read, gone, gated
            if case.claim is not None:  # the layout test of the repo says why, once
                self.claims_skipped += 1
                pytest.skip(f"{case}: {case.repo} could not be read (see {Case(case.path, case.repo, None)})")
            from ._render.headline import headline

            self.unreadable += 1
            pytest.fail(
                f"{case}: could not be read: {result.error or headline(result)}\n{_way_out(case, result)}",
                pytrace=False,
            )
        if case.claim is None:
            if result.changed:
                if update:
                    self.to_rerecord.setdefault(case.path, set()).add(case.repo)
                    return
                self.failed += 1
                pytest.fail(
                    f"{case}: the Hub no longer matches {case.path}\n{_changes(result)}", pytrace=False
                )
            return
        claim = next(c for c in result.claims if c.claim.name == case.claim)
        if claim.holds and claim.unverified:
            warnings.warn(
                f"{case}: holds, but rests on an unverified figure: {'; '.join(claim.unverified)}",
                UnverifiedFigure,
                stacklevel=1,
            )
        if claim.holds:
            return
        if update:
            self.to_restate.setdefault(case.path, {})[(case.repo, claim.claim.name)] = restated(
                claim.claim, claim.measured
            )
            return
        self.failed += 1
        pytest.fail(_claim_message(case, claim, result), pytrace=False)

    def apply_updates(self) -> None:
        sources = None
        for path, claims in self.to_restate.items():
            self.updated.extend(restate_claims(path, claims))
        for path, repos in self.to_rerecord.items():
            sources = sources or self.sources()
            self.updated.extend(update_baseline(path, sources, only=repos))


def _way_out(case: Case, result: RepoResult) -> str:
    """What fixes a repo that cannot be read; re-recording cannot, so it is never what is offered."""
    from ._render.headline import headline

    where = f"{case.path}:{result.line}" if result.line else str(case.path)
    text = f"{result.error or ''} {headline(result)} {result.kind}"
    if "vanished" in text or "not found" in text:
        return f"  the repo is gone: remove it from {where}, or point it at its new name"
    if "gated" in text or "401" in text or "403" in text:
        return "  the repo needs access: set HF_TOKEN to a token that has it"
    if "cannot connect" in text or "not tried" in text:
        return "  no Hub: --hub-offline reads from the snapshot cache"
    return f"  fix the source or {where}, then run again"


def _update_command(config: pytest.Config) -> str:
    """The run as it was typed, with --update-baselines: its --baseline-dir, -k and the rest kept."""
    import shlex

    args = [a for a in config.invocation_params.args if a != "--update-baselines"]
    return shlex.join(["pytest", *map(str, args), "--update-baselines"])


def _changes(result: RepoResult) -> str:
    """What changed behind a failure: config, tensors, figures; the claims are reported by their own tests."""
    from ._render.markdown import render

    return render(Report("check", (result,)), "changes").rstrip()


def _claim_message(case: Case, claim: ClaimResult, result: RepoResult) -> str:
    where = f"{case.path}:{claim.claim.line}" if claim.claim.line else str(case.path)
    lines = [
        f"{case}: the claim does not hold",
        f"  claim:    {claim.claim.name}: {claim.claim.stated}   ({where})",
        f"  checked:  {claim.rule}",
        f"  measured: {claim.measured_text}",
        "",
        _changes(result),
    ]
    return "\n".join(lines)


@pytest.fixture(scope="session")
def hubdiff_session(request: pytest.FixtureRequest) -> HubdiffSession:
    session = request.config.stash.get(_SESSION, None)
    if session is None:
        session = HubdiffSession(request.config)
        request.config.stash[_SESSION] = session
    return session


_SESSION = pytest.StashKey[HubdiffSession]()
_CASES = pytest.StashKey[set[str]]()
_WHOLE_SET = pytest.StashKey[bool]()
_STOPPED = pytest.StashKey[bool]()  # -x or --maxfail ended the run early: claims were left unrun


def pytest_sessionfinish(session: pytest.Session) -> None:
    session.config.stash[_STOPPED] = bool(session.shouldstop or session.shouldfail)
    state = session.config.stash.get(_SESSION, None)
    if state is not None and session.config.getoption("--update-baselines"):
        try:
            state.apply_updates()
        except Exception as exc:  # reported in the summary, not as pytest's internal error
            state.updated.append(f"update failed: {failure(exc)}")


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    state = config.stash.get(_SESSION, None)
    if state is None:
        return
    write = terminalreporter.write_line
    if state.updated:
        terminalreporter.section("hubdiff: baselines updated")
        for line in state.updated:
            write(line)
    unused = []
    whole_set = config.stash.get(_WHOLE_SET, False) and not config.stash.get(_STOPPED, False)
    try:
        for baseline in _baselines(config):
            if {r.repo for r in baseline.repos} <= state.gone.get(baseline.path, set()):
                state.stale.append(
                    f"{baseline.path}: every repo of this file is gone; the file can be removed"
                )
            for repo in baseline.repos:
                for claim in repo.claims:
                    case = Case(baseline.path, repo.repo, claim.name)
                    if whole_set and f"{case.path}::{case}" not in state.used:
                        unused.append(f"{baseline.path}:{claim.line}: {case}")
    except HubdiffError:
        pass
    if state.stale or unused:
        terminalreporter.section("hubdiff: stale baselines and unused claims")
        for line in state.stale:
            write(f"stale: {line}")
        for line in unused:
            write(f"unused claim (no test ran it): {line}")
    updating = bool(config.getoption("--update-baselines"))
    terminalreporter.section("hubdiff")
    broken = 0 if updating else state.failed
    write(
        f"{state.layouts} repo(s) checked: {state.unreadable} could not be read; "
        f"{state.claims} claim(s): {state.claims - state.claims_skipped} checked, {state.claims_skipped} "
        f"not checked (their repo could not be read); {broken} failure(s) a re-record can fix, "
        f"{len(state.updated)} update(s) written, {len(unused)} unused claim(s)"
    )
    if broken:
        write(f"If the change is expected, re-record after review with: {_update_command(config)}")


def _env_default() -> None:
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


_env_default()
