"""Accepting the measured figures: ``hubdiff baseline accept`` restates every claim that the baseline's
own recorded figures no longer support, in the form the claim was written in.

A bot pull request re-records a baseline (sha, figures, config) and leaves the claims as people wrote
them, so its checks fail on each claim the new revision breaks. What the reviewer decides is whether
the new figures are the truth: if so, each broken claim is rewritten from the figures that very
branch recorded, never from the Hub again (which may have moved on since the review), in its own unit
and precision (``6.0 KB`` becomes ``5.8 KB``, ``25.17M`` stays two decimals of M, a tolerance stays),
and the file is edited in place so that its comments and every other line stay as they were. A claim
whose figure the file does not hold (an unrecorded entry, a config key no longer there or not listed
under ``config_keys: listed``) cannot be accepted and is said so, with its ``file:line``.

``accept_commands`` is the same decision written for a reader: the one command a report names.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .._compare.claims import Claim, evaluate, restated
from .schema import shown


@dataclass
class Accepted:
    """What ``accept_claims`` did: one line per claim restated, one per broken claim it could not."""

    restated: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


def written(value: Any) -> str:
    """A claim's value as it reads in the file: ``6.0 KB``, ``78``, ``{kda: 34, dsa: 11}``."""
    if isinstance(value, str):
        return shown(value)
    text = yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=10**9)
    return shown(text.removesuffix("\n").removesuffix("\n...").strip())


def accept_claims(path: Path, only: set[str] | None = None) -> Accepted:
    """Restate the claims of ``path`` (of the repos in ``only``, when given) that its recorded figures
    and config no longer support; one atomic write under the lock, none when every claim holds. A
    restated value is checked again before it is written: one that would still not hold (a precision
    too coarse to say the figure) is refused rather than written."""
    from .record import merged  # the writers, imported when a file is written (see the package)
    from .store import edit, plain

    done = Accepted()
    with edit(path) as editing:
        for repo in editing.baseline.repos:
            if only is not None and repo.repo not in only:
                continue
            for claim in repo.claims:
                result = evaluate(claim, repo.metrics, repo.config, (), repo.release, repo.release)
                if result.holds:
                    continue
                where = f"{path}:{claim.line}: {repo.repo}: {shown(claim.name)}"
                if result.measured is None:
                    done.refused.append(
                        f"{where}: the file records no value for it; re-record the repo "
                        "(hubdiff baseline update) or remove the claim"
                    )
                    continue
                value = restated(claim, result.measured)
                if not evaluate(
                    Claim(claim.name, value), repo.metrics, repo.config, (), repo.release, repo.release
                ).holds:
                    done.refused.append(
                        f"{where}: {written(value)} would not hold either (measured {result.measured_text}); "
                        "state it with more precision or a tolerance"
                    )
                    continue
                claims = editing.doc["repos"][repo.repo]["claims"]
                claims[claim.name] = merged(claims[claim.name], plain(value))
                done.restated.append(f"{where}: {written(claim.stated)} → {written(value)}")
    return done


def accept_commands(kind: str, results: Iterable[Any]) -> list[str]:
    """The command that accepts the measured figures of ``results`` with broken claims, one per
    baseline file, for a report of ``kind``.

    A watch's pull request (``watch``) has re-recorded its baseline, so the figures are in the file:
    ``hubdiff baseline accept FILE``. A check of a baseline the Hub no longer matches must re-record
    first, which ``baseline update --accept-claims`` does in the same run (for those repos only)."""
    files: dict[str, set[str]] = {}
    for r in results:
        if r.baseline is not None and r.broken_claims:
            repos = files.setdefault(str(r.baseline), set())
            if kind != "watch" and r.changed:
                repos.add(r.title.split("@")[0])
    commands = []
    for path, moved in files.items():
        if moved:
            only = " ".join(f"--repo {shlex.quote(repo)}" for repo in sorted(moved))
            commands.append(f"hubdiff baseline update {shlex.quote(path)} {only} --accept-claims")
        else:
            commands.append(f"hubdiff baseline accept {shlex.quote(path)}")
    return commands
