"""How to reach sources (``Sources``): the Hub settings, the cache, and whether to stay offline; it
opens a ``SourceSpec`` with the reader it calls for (a folder, the cache, the Hub)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import UsageError, reading
from ..snapshot import Snapshot
from .cache import SnapshotCache
from .settings import HubSettings
from .spec import SourceSpec

if TYPE_CHECKING:
    from .hub import RepoInfo


@dataclass(frozen=True)
class Sources:
    """How to reach sources: the Hub settings, the cache, and whether to stay offline."""

    settings: HubSettings
    cache: SnapshotCache
    offline: bool = False

    def __post_init__(self) -> None:
        # the cache of the endpoint these settings reach, whatever cache was handed in
        object.__setattr__(self, "cache", self.cache.for_endpoint(self.settings.endpoint))

    def open(
        self,
        spec: SourceSpec,
        headers: bool = True,
        on_config: Callable[[dict[str, Any]], None] | None = None,
        listed: str | None = None,
    ) -> Snapshot:
        """The snapshot of ``spec``; with ``headers=False`` only config and file list (never cached).

        ``on_config`` is called with the config when it is read from the Hub (not from the cache).
        ``listed`` is the sha the revision points at now, when an owner's model listing said (``check``
        of many repos): a snapshot of it in the cache is then had with no request at all.
        """
        with reading(spec.target, spec.revision if spec.kind == "hub" else None):
            if spec.kind == "local":
                from .local import load_local

                settings = self.settings
                return load_local(spec.target, headers, settings.processes, settings.processes_from_shards)
            if headers and not self.offline:
                cached = self._unchanged(spec, listed)
                if cached is not None:
                    return cached
            from .hub import HubReader

            reader = HubReader(self.settings, self.cache)
            return reader.snapshot(
                spec.target,
                spec.revision,
                offline=self.offline,
                headers=headers,
                on_config=on_config,
                on_info=_stop_at_gguf,
            )

    def refs(self, repo: str) -> dict[str, dict[str, str]]:
        """The repo's branches, tags and converts with their shas."""
        if self.offline:
            raise UsageError("hubdiff refs asks the Hub: not with --offline")
        from .hub import HubReader

        with reading(repo, None):
            return HubReader(self.settings, self.cache).refs(repo)

    def last_cached(self, spec: SourceSpec, listed: str | None = None) -> str | None:
        """The commit whose snapshot the cache holds for ``spec``'s revision as last seen (or as
        ``listed``), asking nothing: None means a read of it will be cold."""
        last: str | None
        if re.fullmatch(r"[0-9a-f]{40}", spec.revision):  # a commit: what it holds never changes
            last = spec.revision
        else:
            last = listed if listed is not None else self.cache.known_refs(spec.target).get(spec.revision)
        return last if last is not None and self.cache.has_snapshot(spec.target, last) else None

    def _unchanged(self, spec: SourceSpec, listed: str | None = None) -> Snapshot | None:
        """The cached snapshot, when the revision still points where it did last time (a warm run).

        Costs one plain request and no import of huggingface_hub, or none when a listing said where the
        revision points (``listed``); a revision never seen, or one that moved to a commit not cached,
        returns None and is read the ordinary way.
        """
        from dataclasses import replace

        from .quick import current_sha

        last = self.last_cached(spec, listed)
        if last is None:
            return None
        if listed is not None and last != spec.revision:
            self.cache.remember_ref(spec.target, spec.revision, last)  # for the next warm run
        elif last != spec.revision and current_sha(self.settings, spec.target, spec.revision) != last:
            return None
        snapshot = self.cache.load(spec.target, last)
        if snapshot is None:
            return None
        return snapshot if snapshot.revision == spec.revision else replace(snapshot, revision=spec.revision)


def _stop_at_gguf(repo: str, info: RepoInfo) -> None:
    """A repo of ``.gguf`` files and no config is read by ``gguf_read``, with the info already had."""
    from .gguf_read import GGUFRepo, is_gguf_listing

    if is_gguf_listing(info.sizes) and "config.json" not in info.sizes:
        raise GGUFRepo(repo, info)
