"""Snapshots from the Hub: one ``model_info`` to pin the revision, then config, index and header ranges.

Everything goes through huggingface_hub's own client (``HfApi`` and its shared HTTP session), built
with an explicit endpoint and token because the library reads its environment at import time. The
library retries none of these calls and ``model_info`` has no timeout of its own, so every request
here gets a timeout and bounded retries with backoff that honour ``Retry-After``.

Headers are read exactly: the first range of each shard is a lower bound of its header size worked
out from the tensor names the index lists for it, the second range is the rest of the header. Not one
byte of tensor data is requested.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from typing import Any, TypeVar

import httpx2
from huggingface_hub import HfApi, hf_hub_url
from huggingface_hub.errors import (
    EntryNotFoundError,
    GatedRepoError,
    HfHubHTTPError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

from .. import __version__
from .._gc import gc_paused
from ..errors import SourceError, reading
from ..snapshot import Snapshot
from .build import read_model
from .cache import SnapshotCache
from .header import HeaderProblem, ParsedHeader, header_length, parse_header
from .spec import HubSettings

T = TypeVar("T")
RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})


class _Retryable(Exception):
    def __init__(self, what: str, retry_after: float | None = None) -> None:
        super().__init__(what)
        self.retry_after = retry_after


def _retry_after(response: httpx2.Response | None) -> float | None:
    if response is None:
        return None
    value = response.headers.get("Retry-After")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


class HubReader:
    def __init__(self, settings: HubSettings, cache: SnapshotCache | None = None) -> None:
        self.settings = settings
        self.cache = cache
        self.api = HfApi(
            endpoint=settings.endpoint,
            token=settings.token,
            library_name="hubdiff",
            library_version=__version__,
        )
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
                    status = exc.response.status_code if exc.response is not None else None
                    if status in RETRY_STATUS:
                        raise _Retryable(f"HTTP {status}", _retry_after(exc.response)) from None
                    raise
                except httpx2.TimeoutException:
                    raise _Retryable(f"no answer within {s.timeout_s:g} s") from None
                except (httpx2.TransportError, httpx2.StreamError) as exc:
                    raise _Retryable(f"connection failed ({type(exc).__name__})") from None
            except _Retryable as exc:
                if attempt == s.retries:
                    raise SourceError(where, revision, file, f"{exc} after {attempt + 1} attempts") from None
                delay = exc.retry_after if exc.retry_after is not None else s.backoff_s * 2**attempt
                time.sleep(min(delay, s.max_wait_s))
            except RevisionNotFoundError:
                raise SourceError(where, revision, file, "revision not found") from None
            except GatedRepoError:
                raise SourceError(
                    where, revision, file, "gated repo: accept its terms on the Hub and set HF_TOKEN"
                ) from None
            except RepositoryNotFoundError:
                raise SourceError(
                    where, revision, file, "repository not found (or private: set HF_TOKEN)"
                ) from None
            except EntryNotFoundError:
                raise SourceError(where, revision, file, "file not found") from None
            except HfHubHTTPError as exc:
                status = exc.response.status_code if exc.response is not None else "?"
                problem = "access denied (set HF_TOKEN)" if status in (401, 403) else f"HTTP {status}"
                raise SourceError(where, revision, file, problem) from None
        raise AssertionError("unreachable")

    def _get(
        self, repo: str, sha: str, path: str, limit: int, byte_range: tuple[int, int] | None = None
    ) -> tuple[bytes, int | None]:
        """At most ``limit`` bytes of a file (or of a range of it), and the file's full size if known."""
        url = hf_hub_url(repo, path, revision=sha, endpoint=self.settings.endpoint)
        headers = dict(self._headers)
        if byte_range is not None:
            headers["Range"] = f"bytes={byte_range[0]}-{byte_range[1]}"

        def call() -> tuple[bytes, int | None]:
            with get_session().stream(
                "GET", url, headers=headers, timeout=self.settings.timeout_s, follow_redirects=True
            ) as response:
                if response.status_code >= 400:
                    response.read()
                    hf_raise_for_status(response)
                start, size = 0, None
                if response.status_code == 206:
                    content_range = response.headers.get("Content-Range", "")
                    try:
                        span, _, total = content_range.removeprefix("bytes ").partition("/")
                        start = int(span.split("-")[0])
                        size = None if total == "*" else int(total)
                    except ValueError:
                        raise _Retryable(f"bad Content-Range {content_range!r}") from None
                elif response.headers.get("Content-Length", "").isdigit():
                    size = int(response.headers["Content-Length"])
                want_from = byte_range[0] if byte_range else 0
                skip = want_from - start  # a server that ignored Range sends from 0
                if skip < 0:
                    raise _Retryable(f"range starts at {start}, asked for {want_from}")
                body = bytearray()
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > skip + limit:
                        break
                return bytes(body[skip : skip + limit + 1]), size

        return self._attempts(call, repo, sha, path)

    # -- pieces -----------------------------------------------------------------------------------
    def resolve(self, repo: str, revision: str) -> Any:
        return self._attempts(
            lambda: self.api.model_info(
                repo, revision=revision, files_metadata=True, timeout=self.settings.timeout_s
            ),
            repo,
            revision,
            None,
        )

    def main_shas(self, author: str) -> dict[str, str]:
        """Every listed repo of ``author`` with its main-branch sha: one request per page of the listing."""

        def call() -> dict[str, str]:
            models = self.api.list_models(author=author, expand=["sha", "lastModified"])
            return {m.id: m.sha for m in models if isinstance(m.sha, str)}

        return self._attempts(call, author, None, "model listing")

    def _header(self, repo: str, sha: str, path: str, lower_bound: int) -> ParsedHeader:
        with reading(repo, sha, path):
            return self._read_header(repo, sha, path, lower_bound)

    def _read_header(self, repo: str, sha: str, path: str, lower_bound: int) -> ParsedHeader:
        first = max(8, lower_bound)
        body, size = self._get(repo, sha, path, first, (0, first - 1))
        body = body[:first]
        try:
            length = header_length(body[:8], size)
            if len(body) < 8 + length:
                rest, _ = self._get(repo, sha, path, 8 + length - len(body), (len(body), length + 7))
                body += rest[: 8 + length - len(body)]
            if len(body) < 8 + length:
                raise HeaderProblem(f"file ends inside its header ({len(body)} of {8 + length} bytes)")
            return parse_header(body[8 : 8 + length], path, size)
        except HeaderProblem as exc:
            raise SourceError(repo, sha, path, str(exc)) from None

    # -- the snapshot --------------------------------------------------------------------------
    def snapshot(
        self, repo: str, revision: str = "main", offline: bool = False, headers: bool = True
    ) -> Snapshot:
        """``headers=False`` reads config and file list only; such a snapshot is never cached."""
        if offline:
            return self._offline(repo, revision)
        if not headers:
            info = self.resolve(repo, revision)
            return self._fetch(repo, revision, info.sha, info, headers=False)
        cache = self.cache
        if cache is not None and _is_sha(revision):
            cached = cache.load(repo, revision)
            if cached is not None:
                return cached
        info = self.resolve(repo, revision)
        sha = info.sha
        if not isinstance(sha, str) or not _is_sha(sha):
            raise SourceError(repo, revision, None, f"the Hub gave no commit sha ({sha!r})")
        if cache is not None:
            cached = cache.load(repo, sha)
            if cached is not None:
                cache.remember_ref(repo, revision, sha)
                return cached if cached.revision == revision else _with_revision(cached, revision)
        with gc_paused():
            snapshot = self._fetch(repo, revision, sha, info)
        if cache is not None:
            cache.store(snapshot)
            cache.remember_ref(repo, revision, sha)
        return snapshot

    def _offline(self, repo: str, revision: str) -> Snapshot:
        cache = self.cache or SnapshotCache()
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

    def _fetch(self, repo: str, revision: str, sha: str, info: Any, headers: bool = True) -> Snapshot:
        reader = self

        class _Files:
            def read(self, path: str, limit: int) -> bytes:
                return reader._get(repo, sha, path, limit)[0]

            def headers(self, bounds: dict[str, int]) -> dict[str, ParsedHeader]:
                return reader._headers_parallel(repo, sha, bounds)

        sizes = {s.rfilename: s.size for s in (info.siblings or [])}
        return read_model(
            _Files(),
            source=repo,
            revision=revision,
            error_revision=sha,
            sha=sha,
            commit_date=_iso(info.last_modified),
            sizes=sizes,
            headers=headers,
        )

    def _headers_parallel(self, repo: str, sha: str, bounds: dict[str, int]) -> dict[str, ParsedHeader]:
        shards = sorted(bounds)
        out: dict[str, ParsedHeader] = {}
        bar = _progress(len(shards)) if self.settings.progress and len(shards) > 4 else None
        lock = threading.Lock()

        def one(shard: str) -> None:
            parsed = self._header(repo, sha, shard, bounds[shard])
            with lock:
                out[shard] = parsed
                if bar is not None:
                    bar.update(1)

        pool = ThreadPoolExecutor(max_workers=max(1, min(self.settings.workers, len(shards))))
        try:
            futures = [pool.submit(one, shard) for shard in shards]
            done, _ = wait(futures, return_when=FIRST_EXCEPTION)
            for future in futures:
                if future in done and future.exception() is not None:
                    for other in futures:
                        other.cancel()
                    raise future.exception()  # type: ignore[misc]
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            if bar is not None:
                bar.close()
        return out


def _is_sha(revision: str) -> bool:
    return len(revision) == 40 and all(c in "0123456789abcdef" for c in revision)


def _iso(moment: Any) -> str | None:
    if moment is None:
        return None
    return moment.isoformat().replace("+00:00", "Z")


def _with_revision(snapshot: Snapshot, revision: str) -> Snapshot:
    from dataclasses import replace

    return replace(snapshot, revision=revision)


def _progress(total: int) -> Any:
    if not sys.stderr.isatty():
        return None
    from huggingface_hub.utils import tqdm

    return tqdm(total=total, unit="shard", desc="headers", file=sys.stderr, leave=False)
