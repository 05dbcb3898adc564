"""What the user typed as a source: ``owner/name[@revision]`` on the Hub, or a folder on disk."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UsageError, reading
from ..snapshot import Snapshot
from .cache import SnapshotCache
from .repo_id import is_repo_id

DEFAULT_ENDPOINT = "https://huggingface.co"
# parsing.MANY_SHARDS, written out: importing parsing (subprocess, the header checks) cost a warm run,
# which parses nothing, ~5 ms (tests/test_round_trips.py checks that the two agree)
MANY_SHARDS = 24
# Header reads in flight at once, over the whole process (a check reads several repos side by side).
# Latency, not bandwidth, bounds a read of many small ranges: 8 at a time made 160 shards 20 round trips
# in sequence, where the Hub's budgets are per 5-minute window, not per connection (hub-docs
# rate-limits.md), so all of a repo's headers may go at once. The cap stays under the 100 connections
# of huggingface_hub's default client (httpx's default Limits), so no read waits for one.
STREAMS = 96


@dataclass(frozen=True)
class HubSettings:
    """How to talk to the Hub. Kept apart from the client so local-only runs never import it."""

    endpoint: str = DEFAULT_ENDPOINT
    token: str | None = None
    timeout_s: float = 10.0
    retries: int = 4  # attempts after the first
    backoff_s: float = 1.0  # 1, 2, 4, 8 ... seconds between attempts
    max_wait_s: float = 60.0  # cap on one wait, Retry-After included
    workers: int = STREAMS  # header reads of one repo at once (see STREAMS)
    progress: bool = False
    # processes that parse headers once a repo has this many shards (see parsing); None: one per core
    processes: int | None = None
    processes_from_shards: int = MANY_SHARDS

    @classmethod
    def from_env(
        cls, endpoint: str | None = None, token: str | None = None, **overrides: object
    ) -> HubSettings:
        """Endpoint and token from the arguments or ``HF_ENDPOINT`` / ``HF_TOKEN``, read now, not at
        import, and checked (``usable_endpoint``, ``usable_token``) before any request."""
        endpoint_from = "--endpoint" if endpoint else "HF_ENDPOINT"
        token_from = "--token" if token else "HF_TOKEN"
        return cls(
            endpoint=usable_endpoint(
                endpoint or os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT, endpoint_from
            ),
            token=usable_token(token or os.environ.get("HF_TOKEN") or None, token_from),
            **overrides,  # type: ignore[arg-type]
        )


def usable_endpoint(endpoint: str, named: str) -> str:
    """The endpoint with its host normalised once (lowercase ASCII, IDNA: fullwidth dots are dots), so
    that the origin every request is compared with is the one the request reaches. An endpoint with a
    user name or password is refused, its credentials not repeated: hubdiff sends the token, and only
    the token, to the endpoint's origin (a password in it would go out with every request)."""
    from urllib.parse import urlsplit, urlunsplit

    from ..visible import redacted

    endpoint = endpoint.rstrip("/")
    try:
        parts = urlsplit(endpoint)
        host = parts.hostname
    except ValueError:
        return endpoint  # not a URL: the first request says so, naming it
    if "@" in parts.netloc:
        raise UsageError(
            f"{named} {redacted(endpoint)!r} carries a user name or password: hubdiff sends only HF_TOKEN, "
            "as a bearer token; give the endpoint without them"
        )
    if host is None or host.isascii():
        return endpoint
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError:
        raise UsageError(f"{named} {endpoint!r}: {host!r} is not a host name") from None
    netloc = ascii_host if parts.port is None else f"{ascii_host}:{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc))


def usable_token(token: str | None, named: str) -> str | None:
    """The token, or a one-line refusal when it holds a character an HTTP header cannot carry (an
    accent, a zero-width space or line separator copied with it); the token itself is not repeated."""
    if token is None:
        return None
    bad = next((ch for ch in token if not "!" <= ch <= "~"), None)
    if bad is not None:
        raise UsageError(
            f"{named} holds U+{ord(bad):04X}, which an HTTP header cannot carry "
            "(a token is printable ASCII): copy it again"
        )
    return token


@dataclass(frozen=True)
class SourceSpec:
    kind: str  # "hub" or "local"
    target: str  # repo id or folder path
    revision: str  # "main" by default; "local" for folders

    def __str__(self) -> str:
        return self.target if self.kind == "local" else f"{self.target}@{self.revision}"


def parse_source(text: str, revision: str | None = None) -> SourceSpec:
    """A folder if the text names one (or starts like a path), else a Hub repo with ``@revision``.

    ``hf://owner/name[@revision]`` and the Hub's web URLs are read by huggingface_hub's own parser
    (imported only for them: a plain repo id keeps the warm path free of it). ``revision`` is the
    hf CLI's ``--revision``: it may stand beside ``@revision`` only if the two agree.
    """
    if text.startswith(("hf://", "https://", "http://")):
        repo, in_text = _hub_uri(text)
    elif text.startswith((".", "/", "~")) or Path(text).is_dir():
        if revision is not None:
            raise UsageError(f"{text!r} is a folder: --revision names a revision on the Hub")
        return SourceSpec("local", os.path.expanduser(text), "local")
    else:
        repo, at, in_text = text.partition("@")
        if not is_repo_id(repo) or (at and not in_text):
            raise UsageError(f"{text!r} is neither a folder nor a Hub repo id (owner/name[@revision])")
    if revision is not None and in_text and revision != in_text:
        raise UsageError(f"{text!r} names revision {in_text!r} and --revision {revision!r}: give one")
    return SourceSpec("hub", repo, revision or in_text or "main")


def _hub_uri(text: str) -> tuple[str, str]:
    """The model repo and revision ('' for none) of an hf:// URI or a Hub web URL."""
    from huggingface_hub.errors import HfUriError
    from huggingface_hub.utils import parse_hf_uri

    try:
        uri = parse_hf_uri(text)
    except HfUriError:
        raise UsageError(
            f"{text!r} is not an hf:// URI of a model repo (hf://owner/name[@revision])"
        ) from None
    if uri.type != "model":
        raise UsageError(f"{text!r} is a {uri.type} repo: hubdiff reads model repos")
    if uri.path_in_repo:
        raise UsageError(f"{text!r} names a file in the repo: hubdiff reads a whole revision, drop the path")
    if not is_repo_id(uri.id) or "/" not in uri.id:
        raise UsageError(f"{text!r}: {uri.id!r} is not a Hub repo id (owner/name)")
    return uri.id, uri.revision or ""


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
                spec.target, spec.revision, offline=self.offline, headers=headers, on_config=on_config
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
