"""Requests to the Hub: one retry policy (``HubRequests._attempts``), a timeout on every attempt and a
deadline over its headers and body, redirects followed as ``outbound`` allows (the token only on the
endpoint's origin), and every body read only up to what it may hold (4 KB for an error).

Made through huggingface_hub's shared HTTP session, with its headers and typed errors; its client is
set here to one on ``outbound``'s proxy and TLS policies.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

import httpx2
from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled
from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status, set_client_factory
from huggingface_hub.utils._http import hf_request_event_hook

from .. import __version__
from ..errors import SourceError
from .outbound import (
    DEADLINE_TIMEOUTS,
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
from .settings import HubSettings

T = TypeVar("T")
# a body's bytes handed over as they arrive; True when the taker has what it needs and the rest is unread
Take = Callable[[bytes], bool]
STREAM_PIECE = 16 << 10  # bytes handed over at a time: what a streamed read may take past its need
MAX_ERROR_BODY = 4_096  # enough for the Hub's error message; a hostile server may send gigabytes
_BODY_HEADERS = frozenset({"content-length", "content-encoding", "transfer-encoding"})


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


class HubRequests:
    """Requests to the Hub at ``settings``: each with its attempts, its deadline and its redirects."""

    def __init__(self, settings: HubSettings) -> None:
        self.settings = settings
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
        self,
        url: str,
        limit: int,
        byte_range: tuple[int, int] | None = None,
        params: Any = None,
        take: Take | None = None,
    ) -> _Answer:
        """One attempt: at most ``limit`` bytes of the body (of the range asked for), or a typed error.
        With ``take``, the body is handed to it as it arrives instead (``_stream_into``), and the
        answer's own body is empty.

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
                return _answer(response, limit, byte_range, deadline, take)
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

    def _refs_hint(self, repo: str) -> str:
        """What a revision-not-found line adds (the reader names the repo's branches and tags)."""
        return ""


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
    response: httpx2.Response,
    limit: int,
    byte_range: tuple[int, int] | None,
    deadline: float,
    take: Take | None = None,
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
    if take is not None:
        _stream_into(response, skip, limit, take, deadline)
        return _Answer(b"", size, response.headers, str(response.url))
    body = _read_at_most(response, skip + limit + 1, deadline)
    return _Answer(body[skip : skip + limit + 1], size, response.headers, str(response.url))


def _stream_into(response: httpx2.Response, skip: int, limit: int, take: Take, deadline: float) -> None:
    """At most ``limit`` bytes of the body after its first ``skip``, handed to ``take`` in pieces of at
    most ``STREAM_PIECE`` as they arrive, until ``take`` says it has enough. The caller then closes the
    response unread: a GGUF header's end is known only once it is parsed, so it is read to its end and
    no further instead of in ranges guessed ahead (what the server has sent past it by then goes unread
    with the connection)."""
    given = 0
    for chunk in response.iter_bytes():
        if skip:
            dropped = min(skip, len(chunk))
            chunk, skip = chunk[dropped:], skip - dropped
        for at in range(0, len(chunk), STREAM_PIECE):
            piece = chunk[at : at + min(STREAM_PIECE, limit - given)]
            if not piece:
                return
            given += len(piece)
            if take(piece):
                return
        if time.monotonic() > deadline:
            raise _Retryable(f"body still arriving after {DEADLINE_TIMEOUTS} x the timeout")


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
