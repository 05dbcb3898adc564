"""The pytest side: ``pytest checks/`` verifies every baseline and every claim before an analysis is published.

One test per repo layout and one per claim, with ids like ``glm-5.3-flash::kv_bytes_per_token``.
Options: ``--hub-offline`` (cache only), ``--hub-endpoint URL``, ``--baseline-dir DIR`` and
``--update-baselines`` (re-record changed repos and restate failing claims at the precision they are
written in, like ``--force-regen`` / ``--snapshot-update``). The session ends with a report of stale
baselines (repos, tensor patterns that no longer exist) and claims no test used.
"""

from __future__ import annotations

import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ._compare.claims import ClaimResult
from ._metrics import FIGURE_UNITS
from .baseline import Baseline, load_baseline, locked, update_baseline, write_baseline
from .errors import HubdiffError
from .jobs import RepoResult, check_repo, failure
from .units import UNITS_BY_KIND, human_bytes, human_count


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
    folder = _baseline_dir(config)
    paths = sorted(folder.glob("*.yaml")) + sorted(folder.glob("*.yml"))
    return [load_baseline(p) for p in paths]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "hubdiff_case" not in metafunc.fixturenames:
        return
    cases = [
        Case(b.path, r.repo, c)
        for b in _baselines(metafunc.config)
        for r in b.repos
        for c in (None, *[claim.name for claim in r.claims])
    ]
    metafunc.parametrize("hubdiff_case", cases, ids=str)


def _restate(stated: Any, measured: Any, unit: str) -> Any:
    """The measured value written the way the claim was: same unit, same number of decimals."""
    if isinstance(stated, dict):
        if "value" in stated:
            return {**stated, "value": _restate(stated["value"], measured, unit)}
        return dict(measured) if isinstance(measured, dict) else measured
    if isinstance(stated, bool) or not isinstance(measured, (int, float)):
        return measured
    if isinstance(stated, int):
        return round(measured)
    if isinstance(stated, float):
        decimals = len(repr(stated).split(".")[1]) if "." in repr(stated) else 0
        return round(float(measured), decimals)
    match = re.fullmatch(r"(\s*)([-+]?[\d,]*\.?\d+)(\s*)([A-Za-z]*)(\s*)", str(stated))
    if not match:
        return measured
    number, space, written = match.group(2), match.group(3), match.group(4)
    scale = UNITS_BY_KIND.get(unit, {}).get(written.upper(), 1)
    decimals = len(number.split(".")[1]) if "." in number else 0
    return (
        f"{measured / scale:,.{decimals}f}{space}{written}"
        if "," in number
        else (f"{measured / scale:.{decimals}f}{space}{written}")
    )


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

    def sources(self) -> Any:
        from ._source import HubSettings, Sources
        from ._source.cache import SnapshotCache

        settings = HubSettings.from_env(self.config.getoption("--hub-endpoint"))
        return Sources(settings, SnapshotCache(), offline=bool(self.config.getoption("--hub-offline")))

    def result(self, case: Case) -> RepoResult:
        key = (case.path, case.repo)
        if key not in self.results:
            baseline = load_baseline(case.path)
            repo = next(r for r in baseline.repos if r.repo == case.repo)
            result, _ = check_repo(baseline, repo, self.sources())
            self.results[key] = result
            if result.error and "not found" in result.error:
                self.stale.append(f"{case.path}: {case.repo} ({result.error})")
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
        if result.error:
            pytest.fail(f"{case}: could not be read: {result.error}", pytrace=False)
        if case.claim is None:
            if result.changed:
                if update:
                    self.to_rerecord.setdefault(case.path, set()).add(case.repo)
                    return
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
            unit = FIGURE_UNITS.get(claim.claim.name, "count")
            self.to_restate.setdefault(case.path, {})[(case.repo, claim.claim.name)] = _restate(
                claim.claim.stated, claim.measured, unit
            )
            return
        pytest.fail(_claim_message(case, claim, result), pytrace=False)

    def apply_updates(self) -> None:
        sources = None
        for path, claims in self.to_restate.items():
            with locked(path):
                data = dict(load_baseline(path).raw)
                for (repo, name), value in claims.items():
                    data["repos"][repo]["claims"][name] = value
                    self.updated.append(f"{path}: {repo} claim {name} restated as {value!r}")
                write_baseline(path, data)
        for path, repos in self.to_rerecord.items():
            sources = sources or self.sources()
            self.updated.extend(update_baseline(path, sources, only=repos))


def _measured_text(claim: ClaimResult) -> str:
    unit = FIGURE_UNITS.get(claim.claim.name)
    value = claim.measured
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        human = human_bytes(value) if unit == "bytes" else human_count(value) if unit == "params" else None
        return f"{value:,}" + (f" ({human})" if human and value >= 1000 else "")
    return repr(value)


def _changes(result: RepoResult) -> str:
    from ._render.markdown import render
    from .jobs import Report

    return render(Report("check", (result,)), "text").rstrip()


def _claim_message(case: Case, claim: ClaimResult, result: RepoResult) -> str:
    where = f"{case.path}:{claim.claim.line}" if claim.claim.line else str(case.path)
    lines = [
        f"{case}: the claim does not hold",
        f"  claim:    {claim.claim.name}: {claim.claim.stated}   ({where})",
        f"  checked:  {claim.rule}",
        f"  measured: {_measured_text(claim)}",
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


def pytest_sessionfinish(session: pytest.Session) -> None:
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
    try:
        for baseline in _baselines(config):
            if {r.repo for r in baseline.repos} <= state.gone.get(baseline.path, set()):
                state.stale.append(
                    f"{baseline.path}: every repo of this file is gone; the file can be removed"
                )
            for repo in baseline.repos:
                for claim in repo.claims:
                    case = Case(baseline.path, repo.repo, claim.name)
                    if f"{case.path}::{case}" not in state.used:
                        unused.append(f"{baseline.path}:{claim.line}: {case}")
    except HubdiffError:
        pass
    if state.stale or unused:
        terminalreporter.section("hubdiff: stale baselines and unused claims")
        for line in state.stale:
            write(f"stale: {line}")
        for line in unused:
            write(f"unused claim (no test ran it): {line}")


def _env_default() -> None:
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


_env_default()
