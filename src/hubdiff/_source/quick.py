"""The one request a warm run makes, without huggingface_hub: which commit a revision points to now.

Importing huggingface_hub's client costs 0.6-0.8 s, more than everything else a warm run does (a
cached snapshot and its cached metrics are a few KB). So when the cache already holds this revision's
last-seen commit, its current sha is asked for with the standard library: one GET of
``/api/models/{repo}/revision/{revision}``, the route ``model_info`` uses. Anything but a clean answer
(no answer, a timeout, a retryable status, a body without a sha) returns None, and the caller takes
the ordinary path through ``HubReader``, with its retries. A final answer (404, 401, a gated repo) is
reported as the ordinary path would: asking again would be a retry that ``--retries 0`` forbids.

A check of many repos asks each owner's model listing instead (``listing``): one request per page of
repos, every repo's main sha at once, as ``watch`` does, and again without huggingface_hub. Anything
wrong with it returns what it could not vouch for as missing, and those repos are asked one by one.

It obeys ``outbound`` as the ordinary path does: a redirect is followed only on the endpoint's own
origin (a renamed repo's 307), any other returns None; the answer, redirects included, must arrive
within the attempt's deadline, every read of the socket given only what is left of it.
"""

from __future__ import annotations

import functools
import http.client
import io
import json
import re
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote, urlsplit

from .. import __version__
from .._threads import each_in_threads
from ..errors import SourceError
from .outbound import (
    DEADLINE_TIMEOUTS,
    GATE,
    RETRY_STATUS,
    WAITING,
    proxy_for,
    refusal,
    same_origin,
    tls_context,
    wait_asked,
)
from .repo_id import is_repo_id
from .settings import HubSettings

MAX_BODY = 10_000_000
MAX_PAGE = 64_000_000  # one page of a model listing (1,000 models), as hub.MAX_PAGE_BYTES
_SHA = re.compile(r"[0-9a-f]{40}")
LISTING_THREADS = 8  # owners' listings asked at once
_NEXT = re.compile(r'<([^>]*)>\s*;\s*rel="?next"?')


def current_sha(settings: HubSettings, repo: str, revision: str) -> str | None:
    url = f"{settings.endpoint}/api/models/{repo}/revision/{quote(revision, safe='')}?expand=sha"
    try:
        data, _ = _get_json(settings, url, MAX_BODY)
    except urllib.error.HTTPError as exc:
        if exc.code in RETRY_STATUS or exc.code < 400:
            return None  # the ordinary path retries as configured, or follows what was not followed here
        # the Hub answered: asking again would be a retry nobody asked for (--retries 0)
        problem, access = refusal(exc.code, exc.headers, bool(settings.token))
        raise SourceError(repo, revision, None, problem, access) from None
    except Exception:  # no answer in time, or not JSON: the ordinary path asks again, says what went wrong
        return None
    sha = data.get("sha") if isinstance(data, dict) else None
    return sha if isinstance(sha, str) and len(sha) == 40 else None


def listed_on_main(settings: HubSettings, repos: Sequence[tuple[str, str]]) -> dict[str, str]:
    """Where the main branch of each (repo, revision) tracking main points now, from its owner's model
    listing: one request per page for every repo of an owner, as ``watch`` polls, where asking each repo
    is one request each.

    Only owners with at least two repos tracking main are listed, and over at most as many pages as
    they have such repos: past that, asking each repo costs no more. A repo the listing does not show
    (private to this token, renamed) is left out, to be asked for on its own."""
    owners: dict[str, int] = {}
    for repo in {repo for repo, revision in repos if revision == "main"}:
        owner = repo.split("/")[0]
        owners[owner] = owners.get(owner, 0) + 1
    listed = [owner for owner, count in sorted(owners.items()) if count >= 2]
    pages = each_in_threads(lambda owner: listing(settings, owner, owners[owner]), listed, LISTING_THREADS)
    return {repo: sha for owner in listed for repo, sha in pages[owner].items()}


def points_at(
    settings: HubSettings, reads: Sequence[tuple[str, str]], threads: int
) -> dict[tuple[str, str], str | None]:
    """Where each (repo, revision) points now, asked as a check asks: the owners' listings first, then
    each repo they do not show, ``threads`` at a time. None where no clean answer came (the ordinary
    path asks again); a final refusal (404, 401) raises, as ``current_sha`` does."""
    listed = listed_on_main(settings, reads)
    found: dict[tuple[str, str], str | None] = {
        (repo, revision): listed[repo] for repo, revision in reads if revision == "main" and repo in listed
    }
    rest = [read for read in dict.fromkeys(reads) if read not in found]
    found.update(each_in_threads(lambda read: current_sha(settings, *read), rest, threads))
    return found


def listing(settings: HubSettings, owner: str, max_pages: int) -> dict[str, str]:
    """Repo id -> main's sha of every repo ``owner``'s model listing shows, over at most ``max_pages``
    pages (past that, asking for each repo costs no more). Whatever goes wrong ends the listing with
    what it had: a repo it does not name is asked for on its own, by the ordinary path.

    The next page's ``Link`` is followed only on the endpoint's own origin and listing path, never
    twice to the same URL; entries without an owner/name id or a sha are skipped."""
    listing_path = urlsplit(settings.endpoint).path.rstrip("/") + "/api/models"
    url: str | None = f"{settings.endpoint}/api/models?author={quote(owner, safe='')}&expand=sha"
    seen: set[str] = set()
    out: dict[str, str] = {}
    ambiguous: set[str] = set()  # listed twice with two shas: asked for on its own (as hub.listed_repos)
    while url is not None and len(seen) < max_pages:
        seen.add(url)
        try:
            data, headers = _get_json(settings, url, MAX_PAGE)
        except Exception:  # an error answer, no answer, not JSON: the repos left are asked one by one
            return out
        if not isinstance(data, list):
            return out
        for item in data:
            repo = item.get("id") if isinstance(item, dict) else None
            sha = item.get("sha") if isinstance(item, dict) else None
            if (
                isinstance(repo, str)
                and is_repo_id(repo)
                and "/" in repo
                and isinstance(sha, str)
                and _SHA.fullmatch(sha)
                and repo not in ambiguous
            ):
                if out.get(repo, sha) != sha:
                    del out[repo]
                    ambiguous.add(repo)
                else:
                    out[repo] = sha
        match = _NEXT.search(headers.get("Link") or "")
        url = match.group(1) if match else None
        if url is not None and (
            not same_origin(url, settings.endpoint) or urlsplit(url).path != listing_path or url in seen
        ):
            return out
    return out


def _get_json(settings: HubSettings, url: str, limit: int) -> tuple[Any, Any]:
    """One GET of JSON with ``outbound``'s rules: its body (at most ``limit`` bytes) and headers. A 429
    pauses every request of the process as the ordinary path's would; an error answer is raised as
    urllib's HTTPError, anything else that goes wrong as itself."""
    headers = {"User-Agent": f"hubdiff/{__version__}"}
    if settings.token:
        headers["Authorization"] = f"Bearer {settings.token}"
    GATE.wait(url)
    deadline = time.monotonic() + DEADLINE_TIMEOUTS * settings.timeout_s
    proxy = proxy_for(url)  # the main path's policy: the same variables, the same NO_PROXY
    secure = _HTTPSHandler(deadline, settings.timeout_s)
    if url.lower().startswith("https:"):
        secure._context = tls_context()  # type: ignore[attr-defined]  # the main path's certificates
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({urlsplit(url).scheme: proxy} if proxy else {}),
        _SameOriginRedirects(settings.endpoint),
        _HTTPHandler(deadline, settings.timeout_s),
        secure,
    )
    waiting = WAITING.start(url, settings.timeout_s)
    try:
        with opener.open(
            urllib.request.Request(url, headers=headers), timeout=settings.timeout_s
        ) as response:
            GATE.observe(response.headers, settings.max_wait_s, url)
            body = response.read(limit + 1)
            if len(body) > limit:
                raise ValueError(f"answer over {limit:,} bytes")
            return json.loads(body), response.headers
    except urllib.error.HTTPError as exc:
        exc.close()
        GATE.observe(exc.headers, settings.max_wait_s, url)
        if exc.code == 429:  # the ordinary path's attempt waits with every other request
            GATE.pause(wait_asked(exc.headers) or settings.backoff_s, settings.max_wait_s)
        raise
    finally:
        WAITING.end(waiting)


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only on the endpoint's origin: urllib would copy the token to any host.

    Declining leaves the 3xx as the answer, and the lookup returns None. The redirect's own body is read
    by urllib before it follows; more than ``MAX_BODY`` of it is declined too."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
        if not same_origin(newurl, self.endpoint) or len(fp.read(MAX_BODY + 1)) > MAX_BODY:
            return None
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class _DeadlineReads(io.RawIOBase):
    """A socket's reads, each given what is left of the deadline (and at most the timeout), so that a
    status line, headers or body trickled a byte at a time end at the deadline, not never."""

    def __init__(self, sock: socket.socket, deadline: float, timeout_s: float) -> None:
        self._sock, self._deadline, self._timeout_s = sock, deadline, timeout_s
        self._file = sock.makefile("rb", buffering=0)  # holds the socket open until the answer is read

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"still receiving after {DEADLINE_TIMEOUTS} x the timeout")
        self._sock.settimeout(min(self._timeout_s, left))
        return self._file.readinto(buffer)

    def fileno(self) -> int:
        return self._file.fileno()

    def close(self) -> None:
        self._file.close()
        super().close()


class _DeadlineSocket:
    """What ``HTTPResponse`` is given instead of the socket: it only asks it for a file to read."""

    def __init__(self, sock: socket.socket, deadline: float, timeout_s: float) -> None:
        self._reads = _DeadlineReads(sock, deadline, timeout_s)

    def makefile(self, mode: str) -> io.BufferedReader:
        return io.BufferedReader(self._reads)


class _DeadlineResponse(http.client.HTTPResponse):
    def __init__(
        self, sock: socket.socket, *args: Any, deadline: float, timeout_s: float, **kwargs: Any
    ) -> None:
        super().__init__(_DeadlineSocket(sock, deadline, timeout_s), *args, **kwargs)  # type: ignore[arg-type]


def _bounded(connection_class: type[http.client.HTTPConnection], deadline: float, timeout_s: float) -> Any:
    """``connection_class`` whose answers (a proxy's CONNECT answer too) are read within the deadline."""

    def connect(*args: Any, **kwargs: Any) -> http.client.HTTPConnection:
        connection = connection_class(*args, **kwargs)
        connection.response_class = functools.partial(  # type: ignore[assignment]
            _DeadlineResponse, deadline=deadline, timeout_s=timeout_s
        )
        return connection

    return connect


class _Bounded(urllib.request.AbstractHTTPHandler):
    """A handler whose connections read their answers within the deadline (see ``_bounded``)."""

    def __init__(self, deadline: float, timeout_s: float) -> None:
        super().__init__()
        self._limits = deadline, timeout_s

    def do_open(self, http_class: Any, req: urllib.request.Request, **kwargs: Any) -> Any:
        return super().do_open(_bounded(http_class, *self._limits), req, **kwargs)


class _HTTPHandler(_Bounded, urllib.request.HTTPHandler):
    pass


class _HTTPSHandler(_Bounded, urllib.request.HTTPSHandler):
    pass
