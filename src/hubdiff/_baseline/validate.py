"""``hubdiff validate``: the baselines checked with no network, as a pre-commit hook would.

Everything ``check`` would refuse before it asks the Hub (the schema, units, figure names, bounds)
is found here, plus what the file says against itself: a claim its own recorded figures contradict
(the edit that moved a claim or a figure by hand), and one family recorded in two files. Each problem
is one ``file:line:`` line; every file is read, so one run lists them all.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .._compare.claims import evaluate
from ..errors import BaselineError
from .schema import load_baseline, shown


@dataclass
class Validation:
    checked: int = 0
    claims: int = 0
    problems: list[str] = field(default_factory=list)  # schema and bounds: what check refuses (exit 2)
    contradicted: list[str] = field(default_factory=list)  # claims the file's own figures break (exit 1)


def validate_baselines(paths: Iterable[Path]) -> Validation:
    done = Validation()
    families: dict[str, str] = {}
    for path in paths:
        done.checked += 1
        try:
            baseline = load_baseline(path)
        except BaselineError as exc:
            done.problems.append(str(exc))
            continue
        first = families.setdefault(baseline.family, f"{path}:{baseline.family_line}")
        if first != f"{path}:{baseline.family_line}":
            done.problems.append(
                f"{path}:{baseline.family_line}: family: {shown(baseline.family)} is also the family of {first}"
            )
        for repo in baseline.repos:
            for claim in repo.claims:
                done.claims += 1
                result = evaluate(claim, repo.metrics, repo.config, (), repo.release, repo.release)
                if result.holds or result.measured is None:  # nothing recorded to hold it against
                    continue
                done.contradicted.append(
                    f"{path}:{claim.line}: {repo.repo}: {shown(claim.name)}: stated {shown(str(claim.stated))}, "
                    f"the file's recorded figure is {result.measured_text}"
                )
    return done
