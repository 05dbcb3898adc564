"""What the jobs return and the renderers show: one result per repo (``RepoResult``) and the report
that holds them (``Report``), with what decides whether a result fails. Its wording (the headline) is
the renderers' (``_render/headline.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ._compare import Comparison
from ._compare.claims import ClaimResult
from ._compare.config_diff import ConfigChange
from ._compare.release import Variant
from ._metrics.options import MetricsOptions
from ._release.diff import ReleaseDiff
from .errors import EXIT_CHANGED, EXIT_OK, EXIT_SOURCE

if TYPE_CHECKING:
    from ._baseline.gguf_check import GGUFCheck

# watch results that are not a comparison
NOTICES = ("vanished", "gated", "disabled", "renamed", "skipped", "quantized copy")
# reported on every run and never a failure: there is nothing a baseline could record of them
INFORMATIONAL = ("skipped", "quantized copy")


@dataclass(frozen=True)
class KVVariant:
    """The KV comparison under another reading of an ambiguous config (e.g. indexer key pooling)."""

    label: str
    old_bytes: int
    new_bytes: int


@dataclass(frozen=True)
class RepoResult:
    title: str
    comparison: Comparison | None = None
    claims: tuple[ClaimResult, ...] = ()
    error: str | None = None
    allowed: tuple[str, ...] = ()
    baseline: Path | None = None
    line: int | None = None
    kv_variants: tuple[KVVariant, ...] = ()
    fail_on_any_change: bool = False  # diff: any difference counts; check: cosmetic and allowed do not
    kind: str = "revision"  # or "new release", and for what the watch saw instead: NOTICES
    note: str | None = None  # a new release: its sibling and why; a notice: what was seen
    variant: Variant | None = None  # a new release that is a sibling stored differently
    sibling: str | None = None  # the pinned repo a new release was compared with
    family: str | None = None
    release: ReleaseDiff | None = None  # chat template, tokens, generation and processor settings
    gguf: GGUFCheck | None = None  # a GGUF entry's variants against its record (no comparison then)
    # (repo, revision, commit) a check read: what a replay of its report asks the Hub again (``cli._replay``)
    read: tuple[str, str, str] | None = None

    @property
    def release_changed(self) -> bool:
        """The release files changed: any difference for diff, what a user would notice for check."""
        r = self.release
        return r is not None and (r.differs if self.fail_on_any_change else r.changed)

    @property
    def broken_claims(self) -> list[ClaimResult]:
        return [c for c in self.claims if not c.holds]

    def blocking_config(self) -> list[ConfigChange]:
        if self.comparison is None:
            return []
        if self.fail_on_any_change:
            return list(self.comparison.config)
        return [
            c
            for c in self.comparison.config
            if c.category != "cosmetic"
            and c.path not in self.allowed
            and c.path.split(".")[0] not in self.allowed
        ]

    @property
    def changed(self) -> bool:
        if self.gguf is not None and self.gguf.blocking(self.allowed):
            return True
        c = self.comparison
        if c is None:
            return False
        return bool(self.blocking_config() or not c.tensors.empty or c.metrics or self.release_changed)

    @property
    def status(self) -> str:
        if self.error:
            return "error"
        if self.kind != "revision":
            return self.kind
        if self.broken_claims:
            return "broken claims"
        if self.changed:
            return "changed"
        return "ok"


@dataclass(frozen=True)
class Report:
    kind: str  # "diff" or "check"
    results: tuple[RepoResult, ...]
    options: MetricsOptions = field(default_factory=MetricsOptions)

    @property
    def exit_code(self) -> int:
        # check and diff: a repo that is gone or gated could not be read; the watch reports them as news
        unread = ("vanished", "gated", "disabled") if self.kind != "watch" else ()
        if any(r.error or r.kind in unread for r in self.results):
            return EXIT_SOURCE
        if any(r.status not in ("ok", *INFORMATIONAL) for r in self.results):
            return EXIT_CHANGED
        return EXIT_OK
