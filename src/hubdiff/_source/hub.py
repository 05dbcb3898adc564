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
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit

import httpx2
from huggingface_hub import hf_hub_url
from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled
from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status, set_client_factory
from huggingface_hub.utils._http import hf_request_event_hook

from .. import __version__
from .._gc import gc_paused
from .._threads import each_in_threads
from ..errors import SourceError, reading
from ..patterns import ShardGroups
from ..snapshot import Snapshot
from .build import FIRST_GUESS_PER_ENTRY, HeaderHint, config_file_of, first_range_before_index, read_model
from .cache import SnapshotCache
from .header import HeaderProblem, header_length
from .jsonin import JSONProblem, load_json
from .layout import (
    INDEX_SUFFIX,
    MAX_CONFIG_BYTES,
    MAX_INDEX_BYTES,
    LayoutProblem,
    NameSizes,
    WeightLayout,
    choose_layout,
)
from .outbound import (
    DEADLINE_TIMEOUTS,
    DISABLED,
    GATE,
    MAX_REDIRECTS,
    RETRY_STATUS,
    WAITING,
    certificate_problem,
    origin,
    proxy_for,
    rate_limit,
    refusal,
    same_origin,
    tls_context,
    trusted_from,
    wait_asked,
)
from .parsing import HeaderParser
from .repo_id import is_repo_id
from .settings import STREAMS, HubSettings

T = TypeVar("T")
MAX_ERROR_BODY = 4_096  # enough for the Hub's error message; a hostile server may send gigabytes
MAX_INFO_BYTES = 64_000_000  # model info of a repo with some 300,000 files
MAX_PAGE_BYTES = 64_000_000  # one page of a model listing (1,000 models)
MAX_LISTING_PAGES = 100  # 100,000 repos of one owner
_SHA = re.compile(r"[0-9a-f]{40}")
_DTYPE = re.compile(r"[A-Z0-9_]{1,16}")
_BODY_HEADERS = frozenset({"content-length", "content-encoding", "transfer-encoding"})
_STREAMS = threading.BoundedSemaphore(STREAMS)  # header reads in flight, every repo of the process


@dataclass(frozen=True)
class RepoInfo:
    """What hubdiff uses of the Hub's model info, checked: the commit, its date, the files and their
    sizes, the name the Hub answers under (its ``id``: the new name of a repo read through a rename)
    and whether the Hub has disabled it."""

    sha: str
    last_modified: str | None
    sizes: dict[str, int | None]
    repo_id: str | None = None
    disabled: bool = False


@dataclass(frozen=True)
class ListedRepo:
    """A repo as its owner's model listing shows it: main's sha and whether it is gated or private."""

    sha: str
    gated: bool = False
    private: bool = False


@dataclass(frozen=True)
class _Answer:
    body: bytes
    size: int | None  # the whole file's size, when the answer says
    headers: httpx2.Headers
    url: str  # as finally requested, query included


class _Refused(Exception):
    """An answer that asking again would only repeat (a redirect to a URL with no plain origin)."""


class _Retryable(Exception):
    """An attempt worth repeating, after ``retry_after`` seconds if the answer said; a rate-limited one
    pauses every request of the process (``outbound.GATE``), not only this one."""

    def __init__(self, what: str, retry_after: float | None = None, rate_limited: bool = False) -> None:
        super().__init__(what)
        self.retry_after = retry_after
        self.rate_limited = rate_limited


def _retryable(response: httpx2.Response) -> _Retryable:
    status = response.status_code
    limit = rate_limit(response.headers) if status == 429 else None
    what = f"HTTP {status}"
    if limit is not None and limit.remaining == 0:
        what += f" (rate limited: the Hub's {limit.bucket} budget resets in {limit.reset_s} s)"
    return _Retryable(what, wait_asked(response.headers), status == 429)


class _PolicyTransport(httpx2.BaseTransport):
    """httpx's transport, with ``outbound``'s proxy and TLS policies instead of httpx's reading of the
    environment: each request goes direct or through the proxy ``proxy_for`` names for its URL."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._transports: dict[str | None, httpx2.HTTPTransport] = {}

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        proxy = proxy_for(str(request.url))
        with self._lock:
            transport = self._transports.get(proxy)
            if transport is None:
                transport = httpx2.HTTPTransport(verify=tls_context(), trust_env=False, proxy=proxy)
                self._transports[proxy] = transport
        return transport.handle_request(request)

    def close(self) -> None:
        with self._lock:
            for transport in self._transports.values():
                transport.close()


def _client() -> httpx2.Client:
    """huggingface_hub's default client (its request hook, no timeout of its own: hubdiff sets one per
    request), on ``_PolicyTransport``."""
    return httpx2.Client(
        event_hooks={"request": [hf_request_event_hook]},
        follow_redirects=True,
        timeout=None,
        trust_env=False,
        transport=_PolicyTransport(),
    )


set_client_factory(_client)


class HubReader:
    def __init__(self, settings: HubSettings, cache: SnapshotCache | None = None) -> None:
        self.settings = settings
        self.cache = cache.for_endpoint(settings.endpoint) if cache is not None else None
        if settings.endpoint.lower().startswith("https:"):
            tls_context()  # a certificate file that is not there: said before any request
        proxy_for(settings.endpoint)  # a proxy no client can use: said before any request
        self._headers = build_hf_headers(
            token=settings.token, library_name="hubdiff", library_version=__version__
        )

    # -- requests -------------------------------------------------------------------------------
    def _attempts(self, call: Callable[[], T], where: str, revision: str | None, file: str | None) -> T:
        s = self.settings
        for attempt in range(s.retries + 1):
            try:
                try:
                    return call()
                except HfHubHTTPError as exc:
                    if exc.response is not None and exc.response.status_code in RETRY_STATUS:
                        raise _retryable(exc.response) from None
                    raise
                except _Refused as exc:
                    raise SourceError(where, revision, file, str(exc)) from None
                except OfflineModeIsEnabled:  # huggingface_hub's own switch, read when it was imported
                    raise SourceError(
                        where,
                        revision,
                        file,
                        "HF_HUB_OFFLINE is set: no request is made (--offline reads from the snapshot cache)",
                    ) from None
                except (httpx2.ConnectError, httpx2.ConnectTimeout) as exc:
                    # no connection could be opened at all: retrying a network that is not there only
                    # makes the user wait, so this is said at once, with the way out
                    untrusted = certificate_problem(exc)
                    if untrusted is not None:
                        raise SourceError(
                            where,
                            revision,
                            file,
                            f"the certificate of {s.endpoint} is not trusted ({untrusted}); trusted: "
                            f"{trusted_from()}",
                        ) from None
                    raise SourceError(
                        where,
                        revision,
                        file,
                        f"cannot connect to {s.endpoint} ({type(exc).__name__}): no network? "
                        "--offline reads from the snapshot cache",
                    ) from None
                except httpx2.TimeoutException:
                    raise _Retryable(f"no answer within {s.timeout_s:g} s") from None
                except (httpx2.TransportError, httpx2.StreamError) as exc:
                    raise _Retryable(f"connection failed ({type(exc).__name__})") from None
                except (
                    httpx2.RequestError
                ) as exc:  # a redirect loop, an undecodable body: retrying won't help
                    raise SourceError(
                        where, revision, file, f"request failed ({type(exc).__name__})"
                    ) from None
            except _Retryable as exc:
                if attempt == s.retries:
                    raise SourceError(where, revision, file, f"{exc} after {attempt + 1} attempts") from None
                delay = exc.retry_after if exc.retry_after is not None else s.backoff_s * 2**attempt
                if exc.rate_limited:
                    GATE.pause(delay, s.max_wait_s)  # the next attempt, and every other request, waits
                else:
                    time.sleep(min(delay, s.max_wait_s))
            except HfHubHTTPError as exc:
                response = exc.response
                token_sent = response.request.headers.get("Authorization") is not None
                problem, access = refusal(response.status_code, response.headers, token_sent)
                if response.headers.get("X-Error-Code") == "RevisionNotFound":
                    problem += self._refs_hint(where)
                raise SourceError(where, revision, file, problem, access) from None
        raise AssertionError("unreachable")

    def _request(
        self, url: str, limit: int, byte_range: tuple[int, int] | None = None, params: Any = None
    ) -> _Answer:
        """One attempt: at most ``limit`` bytes of the body (of the range asked for), or a typed error.

        Redirects are followed here, not by httpx, so that ``outbound`` decides each hop: the token
        only on the endpoint's origin, Range on every hop, one deadline over all of them."""
        GATE.wait(url)
        deadline = time.monotonic() + DEADLINE_TIMEOUTS * self.settings.timeout_s
        waiting = WAITING.start(url, self.settings.timeout_s)
        try:
            response = _by_deadline(
                partial(self._final_response, url, byte_range, params, deadline), deadline
            )
            try:
                return _answer(response, limit, byte_range, deadline)
            finally:
                response.close()
        finally:
            WAITING.end(waiting)

    def _final_response(
        self, url: str, byte_range: tuple[int, int] | None, params: Any, deadline: float
    ) -> httpx2.Response:
        """The last hop's response, its body unread: every hop sent from one thread (``_by_deadline``'s),
        so that a read of two hops hands its work to another thread once, not once a hop."""
        session = get_session()
        timeout = self.settings.timeout_s
        target: str | httpx2.URL = url  # a redirect's is httpx's parsed URL: not parsed again (~0.3 ms)
        for hop in range(MAX_REDIRECTS + 1):
            if hop:
                if time.monotonic() > deadline:  # the waiting thread has given up: send nothing more
                    raise _Retryable(f"redirects still going after {DEADLINE_TIMEOUTS} x the timeout")
                GATE.wait(url)  # each hop is a request the Hub counts
            token_here = same_origin(url, self.settings.endpoint)
            headers = {k: v for k, v in self._headers.items() if token_here or k.lower() != "authorization"}
            if byte_range is not None:
                headers["Range"] = f"bytes={byte_range[0]}-{byte_range[1]}"
            request = session.build_request("GET", target, params=params, headers=headers, timeout=timeout)
            response = session.send(request, stream=True, follow_redirects=False)
            GATE.observe(response.headers, self.settings.max_wait_s, url)
            if response.next_request is None:
                return response
            try:
                _read_at_most(response, MAX_ERROR_BODY, deadline)  # read whole, the connection is kept
                target, params = response.next_request.url, None
                url = str(target)
                if origin(url) is None:  # userinfo (httpx would send it as a password) or worse
                    raise _Refused(f"redirect to an unusable URL {url[:100]!r}")
            finally:
                response.close()
        raise httpx2.TooManyRedirects("Exceeded maximum allowed redirects.", request=request)

    def _get(
        self, repo: str, sha: str, path: str, limit: int, byte_range: tuple[int, int] | None = None
    ) -> tuple[bytes, int | None]:
        """At most ``limit`` bytes of a file (or of a range of it), and the file's full size if known."""
        url = hf_hub_url(repo, path, revision=sha, endpoint=self.settings.endpoint)
        answer = self._attempts(lambda: self._request(url, limit, byte_range), repo, sha, path)
        return answer.body, answer.size

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
        """Every listed repo of ``author`` with its main-branch sha and access: one request per page.

        The ``Link`` to the next page is followed only on the endpoint's own origin and listing path,
        at most ``MAX_LISTING_PAGES`` times and never twice to the same URL.
        """
        endpoint = urlsplit(self.settings.endpoint)
        listing_path = endpoint.path.rstrip("/") + "/api/models"
        url: str | None = f"{self.settings.endpoint}/api/models"
        params: Any = {"author": author, "expand": ["sha", "lastModified", "gated", "private"]}
        seen: set[str] = set()
        out: dict[str, ListedRepo] = {}
        ambiguous: set[str] = set()  # repos listed twice, with two different entries
        while url is not None:
            if len(seen) == MAX_LISTING_PAGES:
                raise SourceError(author, None, "model listing", f"more than {MAX_LISTING_PAGES} pages")
            answer = self._attempts(
                partial(self._request, url, MAX_PAGE_BYTES, params=params),
                author,
                None,
                "model listing",
            )
            seen.add(answer.url)
            try:
                listed_repos(_json_body(answer.body, MAX_PAGE_BYTES), out, ambiguous)
            except JSONProblem as exc:
                raise SourceError(author, None, "model listing", str(exc)) from None
            url, params = _next_page(answer.headers), None
            if url is None:
                break
            if not same_origin(url, self.settings.endpoint) or urlsplit(url).path != listing_path:
                raise SourceError(
                    author,
                    None,
                    "model listing",
                    f"next-page link leaves the endpoint's listing: {url[:100]!r}",
                )
            if url in seen:
                raise SourceError(author, None, "model listing", "next-page link repeats a page")
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


def _close_if_answered(late: Future[Any]) -> None:
    """A response that came after its deadline: closed, so that its connection goes back to the pool."""
    if late.exception() is None:
        late.result().close()


def _in_a_thread(call: Callable[[], T], name: str) -> Future[T]:
    """``call`` run in a daemon thread of its own, its result or exception in the future: nothing waits
    for it that does not ask, neither a caller that has given up nor the interpreter's exit."""
    done: Future[T] = Future()

    def run() -> None:
        try:
            done.set_result(call())
        except BaseException as exc:  # handed to the thread that asks, which raises it
            done.set_exception(exc)

    threading.Thread(target=run, name=name, daemon=True).start()
    return done


def _by_deadline(send: Callable[[], httpx2.Response], deadline: float) -> httpx2.Response:
    """The answer's status line and headers, or ``_Retryable`` once the deadline has passed.

    httpx bounds each read, not the whole: a server sending a header byte every few seconds would
    hold the attempt for hours. So the request (every hop of it) is sent from a thread of its own
    and waited for until the deadline; an answer that comes after is closed unread."""
    sent = _in_a_thread(send, "hubdiff-request")
    try:
        return sent.result(timeout=max(0.0, deadline - time.monotonic()))
    except FutureTimeout:
        sent.add_done_callback(_close_if_answered)
        raise _Retryable(f"headers still arriving after {DEADLINE_TIMEOUTS} x the timeout") from None


def _answer(
    response: httpx2.Response, limit: int, byte_range: tuple[int, int] | None, deadline: float
) -> _Answer:
    """The final answer of an attempt: its body checked against the range asked for, or a typed error."""
    if response.status_code >= 400:
        head = _read_at_most(response, MAX_ERROR_BODY, deadline)
        hf_raise_for_status(
            httpx2.Response(
                response.status_code,
                # as received (bytes): a value beyond ASCII, such as a revision named in
                # X-Error-Message, would not encode again as text
                headers=[
                    (k, v)
                    for k, v in response.headers.raw
                    if k.decode("latin-1").lower() not in _BODY_HEADERS
                ],
                content=head,
                request=response.request,
            )
        )
    start, size = 0, None
    if response.status_code == 206:
        content_range = response.headers.get("Content-Range", "")
        try:
            span, _, total = content_range.removeprefix("bytes ").partition("/")
            start = int(span.split("-")[0])
            size = None if total == "*" else int(total)
        except ValueError:
            raise _Retryable(f"bad Content-Range {content_range[:60]!r}") from None
    elif response.headers.get("Content-Length", "").isdigit():
        size = int(response.headers["Content-Length"])
    want_from = byte_range[0] if byte_range else 0
    skip = want_from - start  # a server that ignored Range sends from 0
    if skip < 0:
        raise _Retryable(f"range starts at {start}, asked for {want_from}")
    body = _read_at_most(response, skip + limit + 1, deadline)
    return _Answer(body[skip : skip + limit + 1], size, response.headers, str(response.url))


def _is_sha(revision: str) -> bool:
    return len(revision) == 40 and all(c in "0123456789abcdef" for c in revision)


def _read_at_most(response: httpx2.Response, limit: int, deadline: float) -> bytes:
    """Up to ``limit`` bytes of the body, whatever the server would send, and before ``deadline``."""
    chunks: list[bytes] = []
    received = 0
    for chunk in response.iter_bytes():
        chunks.append(chunk)
        received += len(chunk)
        if received >= limit:
            break
        if time.monotonic() > deadline:
            raise _Retryable(f"body still arriving after {DEADLINE_TIMEOUTS} x the timeout")
    body = b"".join(chunks)  # one copy: an index of 200,000 names is 18 MB
    return body if len(body) <= limit else body[:limit]


def _json_body(body: bytes, limit: int) -> Any:
    if len(body) > limit:
        raise JSONProblem(f"is over {limit:,} bytes")
    return load_json(body)


def _field(data: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str = "") -> Any:
    value = data.get(key)
    if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
        raise JSONProblem(f"has {where}{key} of the wrong type ({type(value).__name__})")
    return value


def repo_info(data: Any) -> RepoInfo:
    """The Hub's model info (with ``blobs``) checked into a RepoInfo; wrong shapes are a JSONProblem."""
    if not isinstance(data, dict):
        raise JSONProblem(f"is JSON but not an object ({type(data).__name__})")
    sha = _field(data, "sha", str)
    if sha is None or not _SHA.fullmatch(sha):
        raise JSONProblem(f"gives no commit sha ({str(sha)[:60]!r})")
    siblings = _field(data, "siblings", list) or []
    sizes: dict[str, int | None] = {}
    for i, entry in enumerate(siblings):
        if not isinstance(entry, dict) or not isinstance(entry.get("rfilename"), str):
            raise JSONProblem(f"has siblings[{i}] without a file name")
        size = _field(entry, "size", int, f"siblings[{i}].")
        if size is not None and size < 0:
            raise JSONProblem(f"has siblings[{i}].size {size}")
        name = entry["rfilename"]
        if not name or name.startswith("/") or any(p in ("", ".", "..") for p in name.split("/")):
            raise JSONProblem(f"has siblings[{i}] named outside the repo ({name[:60]!r})")
        if "\\" in name or not name.isprintable():
            raise JSONProblem(f"has siblings[{i}] with an unusable file name ({name[:60]!r})")
        sizes[name] = size
    date = _field(data, "lastModified", str)
    if date is not None:
        try:
            date = datetime.fromisoformat(date).isoformat().replace("+00:00", "Z")
        except ValueError:
            raise JSONProblem(f"has lastModified that is not a date ({date[:40]!r})") from None
    named = data.get("id")
    disabled = data.get("disabled") is True
    return RepoInfo(
        sha, date, sizes, named if isinstance(named, str) and _usable_id(named) else None, disabled
    )


def listed_repos(
    data: Any, out: dict[str, ListedRepo] | None = None, ambiguous: set[str] | None = None
) -> dict[str, ListedRepo]:
    """One page of a model listing: repo id -> main sha and access (repos listed without a sha, or with
    an id that is not owner/name, are skipped), added to ``out`` (earlier pages). A repo listed twice
    with two different entries (a stale sha beside the real head) is dropped, and stays dropped for
    the later pages (``ambiguous``): the listing cannot say which is current, so the repo is asked
    for on its own, as a repo the listing does not show."""
    if not isinstance(data, list):
        raise JSONProblem(f"is JSON but not a list ({type(data).__name__})")
    out = {} if out is None else out
    ambiguous = set() if ambiguous is None else ambiguous
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            raise JSONProblem(f"item {i} is not an object")
        repo, sha = item.get("id"), item.get("sha")
        if isinstance(repo, str) and _usable_id(repo) and isinstance(sha, str) and _SHA.fullmatch(sha):
            gated = item.get("gated")
            entry = ListedRepo(sha, gated not in (None, False), item.get("private") is True)
            if repo in ambiguous:
                continue
            if out.get(repo, entry) != entry:
                del out[repo]
                ambiguous.add(repo)
            else:
                out[repo] = entry
    return out


def _usable_id(repo: str) -> bool:
    """owner/name as the Hub allows them (and huggingface_hub accepts): anything else in a listing is
    dropped rather than requested."""
    return "/" in repo and is_repo_id(repo)


def hub_parameter_counts(data: Any) -> dict[str, int] | None:
    """``safetensors.parameters`` of a model info, checked: dtype -> whole number of elements."""
    counts = data.get("safetensors") if isinstance(data, dict) else None
    counts = counts.get("parameters") if isinstance(counts, dict) else None
    if not isinstance(counts, dict) or not counts or len(counts) > 64:
        return None
    out = {}
    for dtype, n in counts.items():
        if not (
            isinstance(dtype, str)
            and _DTYPE.fullmatch(dtype)
            and isinstance(n, int)
            and not isinstance(n, bool)
        ):
            return None
        if not 0 <= n < 1 << 63:
            return None
        out[dtype] = n
    return dict(sorted(out.items()))


def _next_page(headers: httpx2.Headers) -> str | None:
    match = re.search(r'<([^>]*)>\s*;\s*rel="?next"?', headers.get("Link", ""))
    return match.group(1) if match else None


def _with_revision(snapshot: Snapshot, revision: str) -> Snapshot:
    return replace(snapshot, revision=revision)


def _progress(total: int, repo: str) -> Any:
    """A bar per repo, labelled with it: a check reads several repos at once."""
    from huggingface_hub.utils import tqdm

    return tqdm(total=total, unit="shard", desc=f"{repo} headers", file=sys.stderr, leave=False)
