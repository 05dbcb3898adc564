"""Snapshots from the Hub: one model-info request to pin the revision, then config, index and header ranges.

Every request goes through huggingface_hub's shared HTTP session with its headers and its typed errors
(``X-Error-Code``), but is made here, not by ``HfApi``: the library's own retries multiply with
hubdiff's (30 requests for one failing listing), ``model_info`` has no timeout, the listing follows a
``Link`` to any host with the token, an error body is read whole, and model info of unexpected shape
raises from deep inside. So there is one retry policy (``_attempts``), every attempt has a timeout and
a deadline over its headers and body, its redirects are followed as ``outbound`` allows (the token
only on the endpoint's origin), every body is read only up to what it may hold (4 KB for an error),
and what comes back is checked into hubdiff's own types (``RepoInfo``) before anything uses it.

Headers are read with one range per shard in the common case: the first shard's is asked beside the
index, its range guessed from the index's size (``build.first_range_before_index``; where no index
comes first, from the names it lists and a generous size per entry); what that header shows about the
bytes an entry takes besides its name sizes the ranges of all the others, with the index's names and a
margin. Only when an estimate falls short does a second range fetch the rest. The margin and the first
guess are the over-read: a few hundred bytes of tensor data per shard, about 1% of what is read.
"""

from __future__ import annotations

import math
import re
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from functools import partial
from typing import Any
from urllib.parse import quote, urlsplit

from huggingface_hub import hf_hub_url

from .._gc import gc_paused
from .._threads import each_in_threads
from ..errors import SourceError, reading
from ..patterns import ShardGroups
from ..snapshot import Snapshot
from .build import FIRST_GUESS_PER_ENTRY, HeaderHint, config_file_of, first_range_before_index, read_model
from .cache import SnapshotCache
from .header import HeaderProblem, header_length
from .hub_answers import (
    _SHA,
    ListedRepo,
    RepoInfo,
    _json_body,
    _next_page,
    hub_parameter_counts,
    listed_repos,
    repo_info,
)
from .hub_http import HubRequests, Take, _in_a_thread
from .jsonin import JSONProblem
from .layout import (
    INDEX_SUFFIX,
    MAX_CONFIG_BYTES,
    MAX_INDEX_BYTES,
    LayoutProblem,
    NameSizes,
    WeightLayout,
    choose_layout,
)
from .outbound import DISABLED, GATE, same_origin
from .parsing import HeaderParser
from .settings import STREAMS, HubSettings

__all__ = ["HubReader", "ListedRepo", "RepoInfo", "listed_repos", "repo_info"]

MAX_INFO_BYTES = 64_000_000  # model info of a repo with some 300,000 files
MAX_PAGE_BYTES = 64_000_000  # one page of a model listing (1,000 models)
MAX_LISTING_PAGES = 100  # 100,000 repos of one owner
_STREAMS = threading.BoundedSemaphore(STREAMS)  # header reads in flight, every repo of the process


class HubReader(HubRequests):
    """Snapshots, refs, listings and model info of the Hub at ``settings``, through ``cache`` if given."""

    def __init__(self, settings: HubSettings, cache: SnapshotCache | None = None) -> None:
        self.cache = cache.for_endpoint(settings.endpoint) if cache is not None else None
        super().__init__(settings)

    def _get(
        self, repo: str, sha: str, path: str, limit: int, byte_range: tuple[int, int] | None = None
    ) -> tuple[bytes, int | None]:
        """At most ``limit`` bytes of a file (or of a range of it), and the file's full size if known."""
        url = hf_hub_url(repo, path, revision=sha, endpoint=self.settings.endpoint)
        answer = self._attempts(lambda: self._request(url, limit, byte_range), repo, sha, path)
        return answer.body, answer.size

    def _stream(
        self, repo: str, sha: str, path: str, start_at: Callable[[], int], end: int, take: Take
    ) -> None:
        """The bytes of ``path`` from ``start_at()`` to ``end`` (exclusive), handed to ``take`` as they
        arrive until it has enough. A retried attempt asks ``start_at`` again, so it resumes from what
        was taken, not from the start of the range."""
        url = hf_hub_url(repo, path, revision=sha, endpoint=self.settings.endpoint)

        def attempt() -> None:
            start = start_at()
            self._request(url, end - start, (start, end - 1), take=take)

        self._attempts(attempt, repo, sha, path)

    def _refs_hint(self, repo: str) -> str:
        """ " (branches: main; tags: v1.0)" for a revision-not-found line; nothing if the refs cannot be had."""
        try:
            refs = self.refs(repo)
        except Exception:  # the line it decorates is the error that matters
            return ""
        parts = [f"{kind}: {', '.join(sorted(names)[:10])}" for kind, names in refs.items() if names]
        return f" ({'; '.join(parts)}; see hubdiff refs {repo})" if parts else ""

    def refs(self, repo: str) -> dict[str, dict[str, str]]:
        """Branches, tags and converts of a repo, each name with its commit sha: one request."""
        url = f"{self.settings.endpoint}/api/models/{repo}/refs"
        answer = self._attempts(lambda: self._request(url, MAX_PAGE_BYTES), repo, None, None)
        try:
            data = _json_body(answer.body, MAX_PAGE_BYTES)
        except JSONProblem as exc:
            raise SourceError(repo, None, None, f"refs {exc}") from None
        out: dict[str, dict[str, str]] = {}
        for kind in ("branches", "tags", "converts"):
            entries = data.get(kind) if isinstance(data, dict) else None
            out[kind] = {
                e["name"]: e["targetCommit"]
                for e in (entries if isinstance(entries, list) else [])
                if isinstance(e, dict)
                and isinstance(e.get("name"), str)
                and isinstance(e.get("targetCommit"), str)
                and _SHA.fullmatch(e["targetCommit"])
            }
        return out

    # -- pieces -----------------------------------------------------------------------------------
    def resolve(self, repo: str, revision: str) -> RepoInfo:
        """The revision's commit sha, date and files with sizes, and the repo's name now: one request
        (a renamed repo's 307 followed). A disabled repo is a SourceError saying so."""
        url = f"{self.settings.endpoint}/api/models/{repo}/revision/{quote(revision, safe='')}"
        answer = self._attempts(
            lambda: self._request(url, MAX_INFO_BYTES, params={"blobs": "True"}), repo, revision, None
        )
        try:
            info = repo_info(_json_body(answer.body, MAX_INFO_BYTES))
        except JSONProblem as exc:
            raise SourceError(repo, revision, None, f"model info {exc}") from None
        if info.disabled:  # hub-dialect.md: model info still answers; the files do not
            raise SourceError(repo, revision, None, DISABLED, "disabled")
        return info

    def listing(self, author: str) -> dict[str, ListedRepo]:
        """Every listed repo of ``author`` with its main-branch sha and access: one request per page."""
        return self._listed({"author": author}, author)

    def quantized_copies(self, repo: str) -> dict[str, ListedRepo]:
        """Every listed repo, of any owner, the Hub tags ``base_model:quantized:<repo>`` (its card names
        ``repo`` as ``base_model`` with ``base_model_relation: quantized``): one request per page. The
        tag is the Hub's, so the listing is what the Hub says; each copy's own card is read again
        before it is reported."""
        return self._listed({"filter": f"base_model:quantized:{repo}"}, repo)

    def _listed(self, query: dict[str, str], subject: str) -> dict[str, ListedRepo]:
        """A model listing of ``query``, every page. The ``Link`` to the next page is followed only on
        the endpoint's own origin and listing path, at most ``MAX_LISTING_PAGES`` times and never twice
        to the same URL: a listing's answer is the Hub's, but its links could send the token anywhere
        and the pages on forever."""
        endpoint = urlsplit(self.settings.endpoint)
        listing_path = endpoint.path.rstrip("/") + "/api/models"
        url: str | None = f"{self.settings.endpoint}/api/models"
        params: Any = {**query, "expand": ["sha", "lastModified", "gated", "private"]}
        seen: set[str] = set()
        out: dict[str, ListedRepo] = {}
        ambiguous: set[str] = set()  # repos listed twice, with two different entries
        while url is not None:
            if len(seen) == MAX_LISTING_PAGES:
                raise SourceError(subject, None, "model listing", f"more than {MAX_LISTING_PAGES} pages")
            answer = self._attempts(
                partial(self._request, url, MAX_PAGE_BYTES, params=params),
                subject,
                None,
                "model listing",
            )
            seen.add(answer.url)
            try:
                listed_repos(_json_body(answer.body, MAX_PAGE_BYTES), out, ambiguous)
            except JSONProblem as exc:
                raise SourceError(subject, None, "model listing", str(exc)) from None
            url, params = _next_page(answer.headers), None
            if url is None:
                break
            if not same_origin(url, self.settings.endpoint) or urlsplit(url).path != listing_path:
                raise SourceError(
                    subject,
                    None,
                    "model listing",
                    f"next-page link leaves the endpoint's listing: {url[:100]!r}",
                )
            if url in seen:
                raise SourceError(subject, None, "model listing", "next-page link repeats a page")
        return out

    def refusal(self, repo: str, sha: str) -> SourceError | None:
        """Why this token may not read the repo's files (gated, gone), or None: one byte of config.json.

        The listing says a repo is gated, not whether this token was granted access; a repo that was
        always gated and whose terms the token accepted must not be reported at every poll."""
        try:
            self._get(repo, sha, "config.json", 1, (0, 0))
        except SourceError as exc:
            return exc if exc.access else None
        return None

    def hub_parameters(self, repo: str, sha: str) -> dict[str, int] | None:
        """The Hub's own count of stored elements per dtype (``safetensors.parameters``) at ``sha``: one
        request. None when the Hub gives none (no safetensors, not computed yet, or any failure): it is
        a cross-check, and a snapshot is never refused for it."""
        url = f"{self.settings.endpoint}/api/models/{repo}/revision/{sha}"
        try:
            answer = self._attempts(
                lambda: self._request(url, MAX_PAGE_BYTES, params={"expand": ["safetensors"]}),
                repo,
                sha,
                None,
            )
            return hub_parameter_counts(_json_body(answer.body, MAX_PAGE_BYTES))
        except Exception:
            return None

    def _header(
        self, repo: str, sha: str, path: str, first: int, parser: HeaderParser, prefix: str
    ) -> ShardGroups:
        raw, size = self._header_bytes(repo, sha, path, first)
        return self._parsed(repo, sha, path, raw, size, parser, prefix)

    def _header_bytes(self, repo: str, sha: str, path: str, first: int) -> tuple[bytes, int | None]:
        with reading(repo, sha, path), _STREAMS:  # held for the read, not the parse
            return self._read_header(repo, sha, path, first)

    def _timed_header_bytes(
        self, repo: str, sha: str, path: str, first: int
    ) -> tuple[bytes, int | None, float]:
        """``_header_bytes`` and the seconds it took (``streams_for_latency``)."""
        started = time.monotonic()
        raw, size = self._header_bytes(repo, sha, path, first)
        return raw, size, time.monotonic() - started

    @staticmethod
    def _parsed(
        repo: str, sha: str, path: str, raw: bytes, size: int | None, parser: HeaderParser, prefix: str
    ) -> ShardGroups:
        with reading(repo, sha, path):
            try:
                return parser.parse(raw, path, size, prefix)
            except HeaderProblem as exc:
                raise SourceError(repo, sha, path, str(exc)) from None

    def _read_header(self, repo: str, sha: str, path: str, first: int) -> tuple[bytes, int | None]:
        """The header's JSON bytes and the file's size, asking first for ``first`` bytes and then, if
        short, for the rest."""
        first = max(8, first)
        body, size = self._get(repo, sha, path, first, (0, first - 1))
        body = body[:first]
        try:
            length = header_length(body[:8], size)
            if len(body) < 8 + length:
                rest, _ = self._get(repo, sha, path, 8 + length - len(body), (len(body), length + 7))
                body += rest[: 8 + length - len(body)]
            if len(body) < 8 + length:
                raise HeaderProblem(f"file ends inside its header ({len(body)} of {8 + length} bytes)")
        except HeaderProblem as exc:
            raise SourceError(repo, sha, path, str(exc)) from None
        return body[8 : 8 + length], size

    # -- the snapshot --------------------------------------------------------------------------
    def snapshot(
        self,
        repo: str,
        revision: str = "main",
        offline: bool = False,
        headers: bool = True,
        on_config: Callable[[dict[str, Any]], None] | None = None,
        on_info: Callable[[str, RepoInfo], None] | None = None,
    ) -> Snapshot:
        """``headers=False`` reads config and file list only; such a snapshot is never cached.

        ``on_config`` sees the config when it has been read from the Hub (see ``read_model``);
        ``on_info`` sees the revision's model info in a read with headers, before the cache is asked
        for its sha or anything else is read, and may stop the read by raising (a repo of GGUF files).
        """
        if offline:
            return self._offline(repo, revision)
        if not headers:
            info = self.resolve(repo, revision)
            return self._fetch(repo, revision, info.sha, info, headers=False, on_config=on_config)
        cache = self.cache
        if cache is not None and _is_sha(revision):
            cached = cache.load(repo, revision)
            if cached is not None:
                return cached
        info = self.resolve(repo, revision)
        if on_info is not None:
            on_info(repo, info)  # the caller's look at the files before any is read (GGUF stops here)
        sha = info.sha
        if cache is not None:
            cached = cache.load(repo, sha)
            if cached is not None:
                cache.remember_ref(repo, revision, sha)
                return cached if cached.revision == revision else _with_revision(cached, revision)
        with gc_paused():
            snapshot = self._fetch(repo, revision, sha, info, on_config=on_config)
        if cache is not None:
            cache.store(snapshot)
            cache.remember_ref(repo, revision, sha)
        return snapshot

    def _offline(self, repo: str, revision: str) -> Snapshot:
        cache = self.cache or SnapshotCache(endpoint=self.settings.endpoint)
        sha = revision if _is_sha(revision) else cache.known_refs(repo).get(revision)
        if sha is None:
            known = ", ".join(sorted(cache.known_refs(repo))) or "none"
            raise SourceError(
                repo,
                revision,
                None,
                f"offline: no cached sha for this revision (cached revisions: {known}; cache {cache.root})",
            )
        cached = cache.load(repo, sha)
        if cached is None:
            raise SourceError(
                repo, revision, None, f"offline: snapshot of commit {sha} is not in the cache {cache.root}"
            )
        return _with_revision(cached, revision)

    def _fetch(
        self,
        repo: str,
        revision: str,
        sha: str,
        info: RepoInfo,
        headers: bool = True,
        on_config: Callable[[dict[str, Any]], None] | None = None,
    ) -> Snapshot:
        reader = self
        shards = sum(path.endswith(".safetensors") for path in info.sizes) if headers else 0
        parser = HeaderParser(shards, self.settings.processes, self.settings.processes_from_shards)
        parser.start()  # its workers import while the index is on its way: they parse it too
        small = small_files(info.sizes, headers)
        early: dict[str, tuple[int, Future[tuple[bytes, int | None]]]] = {}
        first = first_header(info.sizes) if headers else None
        early_first: tuple[str, Future[tuple[bytes, int | None, float]]] | None = None

        class _Files:
            def read(self, path: str, limit: int) -> bytes:
                limit_asked, future = early.pop(path, (None, None))
                if future is not None and limit_asked == limit:
                    return future.result()[0]  # a failure is raised here, where read_model reads it
                return reader._get(repo, sha, path, limit)[0]

            def index(
                self, raw: bytes, file: str, listing: set[str]
            ) -> tuple[dict[str, Any], list[str], NameSizes]:
                return parser.index(raw, file, listing)

            def headers(self, hints: dict[str, HeaderHint]) -> dict[str, ShardGroups]:
                return reader._headers_parallel(repo, sha, hints, parser, early_first)

        def read() -> Snapshot:
            return read_model(
                _Files(),
                source=repo,
                revision=revision,
                error_revision=sha,
                sha=sha,
                commit_date=info.last_modified,
                sizes=info.sizes,
                headers=headers,
                on_config=on_config,
            )

        # config, generation config and index asked for at once (each is two round trips on the Hub,
        # a resolve and its redirect), and the Hub's count and the first header beside them: only the
        # index and the first header are on the way to the other headers, and they go side by side
        with ThreadPoolExecutor(max_workers=len(small) + 1) as pool:
            for path, limit in small:
                early[path] = limit, pool.submit(self._get, repo, sha, path, limit)
            counted = pool.submit(self.hub_parameters, repo, sha) if headers else None
            if first is not None:  # not the pool's: a read that fails before its headers does not wait for it
                ahead = partial(self._timed_header_bytes, repo, sha, *first)
                early_first = first[0], _in_a_thread(ahead, "hubdiff-first-header")
            try:
                snapshot = read()
            finally:
                early.clear()  # what read_model did not ask for (it failed first) is not kept
        return snapshot if counted is None else replace(snapshot, hub_parameters=counted.result())

    def _headers_parallel(
        self,
        repo: str,
        sha: str,
        hints: dict[str, HeaderHint],
        parser: HeaderParser,
        early_first: tuple[str, Future[tuple[bytes, int | None, float]]] | None = None,
    ) -> dict[str, ShardGroups]:
        """Every header; ``early_first`` is the first shard's, asked beside the index (``first_header``)."""
        shards = sorted(hints)
        out: dict[str, ShardGroups] = {}
        bar = _progress(len(shards), repo) if self.settings.progress and len(shards) > 4 else None
        lock = threading.Lock()
        per_entry, most = FIRST_GUESS_PER_ENTRY, self.settings.workers
        if len(shards) > 1 and hints[shards[0]].entries:
            # one header first: what its entries take besides their names sizes every other range;
            # parsed here, where nothing else waits, since every other read waits for it
            hint, here = hints[shards[0]], HeaderParser(shards=0)
            if early_first is not None and early_first[0] == shards[0]:
                raw, size, took_s = early_first[1].result()  # a failure is raised here, with its file
            else:  # none asked ahead, or the listing's first shard is not the index's
                raw, size, took_s = self._timed_header_bytes(repo, sha, shards[0], hint.estimate(per_entry))
            first = self._parsed(repo, sha, shards[0], raw, size, here, hint.prefix)
            most = streams_for_latency(took_s, most)
            out[shards[0]] = first
            if bar is not None:
                bar.update(1)
            per_entry = hints[shards[0]].per_entry(first.size)
            shards = shards[1:]

        def one(shard: str) -> ShardGroups:
            hint = hints[shard]
            parsed = self._header(repo, sha, shard, hint.estimate(per_entry), parser, hint.prefix)
            if bar is not None:
                with lock:
                    bar.update(1)
            return parsed

        try:
            out.update(each_in_threads(one, shards, streams(len(shards), most)))
        finally:
            if bar is not None:
                bar.close()
        return out


# What one header read costs this process (its two hops, the body, the hand-off to a worker): ~6 ms
# of CPU on a 2-core machine for a 160 KB header, measured on the replica
READ_CPU_S = 0.006
# Reads in flight per read that one read's wait could overlap
IN_FLIGHT_PER_WAIT = 4
FEWEST_STREAMS = 8


def streams_for_latency(took_s: float, most: int) -> int:
    """Reads in flight enough to keep this process busy, given how long the first header's read took:
    about ``took_s / READ_CPU_S`` reads overlap one read's wait, times ``IN_FLIGHT_PER_WAIT`` for the
    workers' parsing beside this process and for latency that varies; at least ``FEWEST_STREAMS``.

    Near the Hub (or on loopback) a read waits little, and more threads than that only cost: every
    request walks the connection pool, one connection per stream and host (at 96 streams, 60,000
    connection checks for a 160-shard read, ~0.1 s of the run at 0 ms). An ocean away the first read
    takes ~35 times its CPU, and every read goes out at once, as before (``most``). The first read's
    own CPU is not measured: it goes beside the index, whose download shares the process."""
    return max(min(FEWEST_STREAMS, most), min(most, math.ceil(IN_FLIGHT_PER_WAIT * took_s / READ_CPU_S)))


def first_header(sizes: dict[str, int | None]) -> tuple[str, int] | None:
    """The first shard of a one-index layout and the range to ask of it before the index is read
    (``build.first_range_before_index``); None for any other layout, whose first header waits for
    what sizes it (the index's names, or nothing)."""
    try:
        layout = choose_layout(set(sizes))
    except LayoutProblem:
        return None
    if len(layout.components) != 1 or layout.components[0].index is None:
        return None
    folder, index = layout.components[0].folder, layout.components[0].index
    # the shards as the index's own writer names them (model.safetensors.index.json: model-00001-of-
    # 00163.safetensors ...); a folder may hold others the index never lists (consolidated.safetensors)
    stem = index.rpartition("/")[2].removesuffix(INDEX_SUFFIX)
    named = re.compile(rf"{re.escape(stem)}-(\d+)-of-(\d+)\.safetensors")
    shards = sorted(
        p for p in sizes if p.rpartition("/")[0] == folder and named.fullmatch(p.rpartition("/")[2])
    )
    index_bytes = sizes.get(index)
    if len(shards) < 2 or not index_bytes:
        return None
    return shards[0], first_range_before_index(index_bytes, len(shards))


def streams(reads: int, most: int) -> int:
    """How many of a repo's header reads go out at once: all of them, up to ``most`` and up to what the
    Hub last said is left of the window's resolver budget (``RateLimit``), so that a burst is never
    refused; the requests past the budget wait in ``outbound.GATE`` as every request does."""
    left = GATE.left("resolvers")
    return max(1, min(reads, most, left if left is not None else reads))


def small_files(sizes: dict[str, int | None], headers: bool) -> list[tuple[str, int]]:
    """The small files ``read_model`` reads before the headers, with the limits it reads them to: the
    config, the generation config and each index, asked for at once by a Hub read. Empty when the
    files make no layout it reads (it says why, with no request made)."""
    listing = set(sizes)
    try:
        layout = choose_layout(listing) if headers else WeightLayout(())
        files = [(config_file_of(listing, layout), MAX_CONFIG_BYTES)]
    except LayoutProblem:
        return []
    if "generation_config.json" in listing:
        files.append(("generation_config.json", MAX_CONFIG_BYTES))
    return files + [(c.index, MAX_INDEX_BYTES) for c in layout.components if c.index is not None]


def _is_sha(revision: str) -> bool:
    return len(revision) == 40 and all(c in "0123456789abcdef" for c in revision)


def _with_revision(snapshot: Snapshot, revision: str) -> Snapshot:
    return replace(snapshot, revision=revision)


def _progress(total: int, repo: str) -> Any:
    """A bar per repo, labelled with it: a check reads several repos at once."""
    from huggingface_hub.utils import tqdm

    return tqdm(total=total, unit="shard", desc=f"{repo} headers", file=sys.stderr, leave=False)
