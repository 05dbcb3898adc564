"""The Hub replica: model info, commits, refs, tree, model listings (by author, by tag) and ``resolve``
with ranges.

It speaks the real Hub's dialect, as recorded (``../shared/notes/hub-dialect.md``; each rule below
names its recording): every ``resolve`` is a redirect (307 on the same host for small files, 302 to a
second listening socket, the CDN, for LFS files), errors carry the Hub's ``X-Error-Code`` or, for an
anonymous request to a missing or private repo, none at all, renamed repos answer 307 to their new
name, and every answer carries the ``RateLimit`` headers of a fixed-window budget. Every request is
logged (host, method, path, range, status, body bytes sent, the Authorization received, when it
arrived), faults can be injected per path, and commits can be pushed while it runs.

``redirects=False`` serves files straight from ``resolve``, for the tests that measure the requests
and bytes of hubdiff's own reads one route per file.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import math
import re
import secrets
import socket
import struct
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

import yaml

from .specs import CommitSpec, RepoSpec, VirtualFile, commit_sha, materialise


@dataclass
class Fault:
    """Misbehave on requests whose path contains ``path_contains`` (and method, if given), ``times`` times.

    ``status`` answers with that code (and ``retry_after``); ``rate_limited`` answers 429 as the Hub
    does when a budget is spent: ``RateLimit: "api";r=0;t=N`` and ``RateLimit-Policy``, no
    ``Retry-After``; ``delay_s`` stalls before answering; ``truncate_to`` sends only that many body
    bytes of a full Content-Length, then closes; ``reset`` closes the connection without an answer.
    ``body`` replaces the body (malformed JSON, wrong field types, a hostile header); ``body_size``
    sends that many zero bytes instead, without holding them (a 1 GB error body); ``range_shift``
    moves the start a 206 claims in Content-Range; ``link`` adds ``Link: <link>; rel="next"``
    (``"self"``: the request's own URL); ``headers`` adds any others (``Location`` for a redirect);
    ``trickle_s`` sends the body ``trickle_bytes`` bytes at a time with that pause between (each read
    is quick, the whole never ends in time), and with ``trickle_head`` the status line and headers
    too. The real Hub was never recorded trickling (hub-dialect.md records none); these stand for a
    hostile endpoint, proxy or redirect target, which a client must survive.

    A file read is a chain of hops (``resolve``, then ``resolve-cache`` or the CDN); each hop is
    matched on its own path and on the ``resolve`` path it serves. A fault that only alters a body or
    its range waits for the hop that sends the file; one that changes the answer (a status, a reset,
    a stall, trickled headers) is taken by the first hop it matches.
    """

    path_contains: str
    method: str | None = None
    status: int | None = None
    retry_after: str | None = None
    rate_limited: int | None = None
    delay_s: float = 0.0
    truncate_to: int | None = None
    reset: bool = False
    body: bytes | None = None
    body_size: int | None = None
    range_shift: int = 0
    link: str | None = None
    trickle_s: float = 0.0
    trickle_bytes: int = 16
    trickle_head: bool = False
    headers: dict[str, str] | None = None
    times: int = 1_000_000

    @property
    def changes_the_answer(self) -> bool:
        return (
            self.status is not None
            or self.rate_limited is not None
            or self.reset
            or self.delay_s > 0
            or self.trickle_head
        )


@dataclass(frozen=True)
class LoggedRequest:
    method: str
    path: str
    range: str | None
    status: int
    bytes_sent: int
    authorization: str | None = None  # as received: whether a token reached this server
    host: str = "hub"  # "hub", or "cdn" for the second host that serves LFS files
    at: float = 0.0  # time.monotonic() when the request arrived
    round: int = 0  # with ``HubReplica(rounds_s=...)``: the round trip it was answered in, from 1


@dataclass(frozen=True)
class RateLimits:
    """The Hub's budgets per client (token, or anonymous) and fixed window.

    hub-docs ``docs/hub/rate-limits.md`` (huggingface/hub-docs): three buckets (Hub APIs, resolvers,
    pages) over 5-minute fixed windows; anonymous users get 500 API calls, 3,000 resolves and 100
    pages per window. ``window_s`` is made small by tests that want a window to pass."""

    api: int = 500
    resolvers: int = 3_000
    pages: int = 100
    window_s: float = 300.0

    def quota(self, bucket: str) -> int:
        return {"api": self.api, "resolvers": self.resolvers}.get(bucket, self.pages)


@dataclass
class _Commit:
    sha: str
    title: str
    date: str
    parent: str | None
    files: dict[str, VirtualFile]
    parameters: dict[str, int] | None = None  # what model info's safetensors.parameters reports


@dataclass
class _Repo:
    repo_id: str
    gated: bool | str = False
    private: bool = False
    disabled: bool = False
    commits: dict[str, _Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    prs: dict[int, str] = field(default_factory=dict)

    def resolve(self, revision: str) -> _Commit | None:
        if revision in self.branches:
            return self.commits[self.branches[revision]]
        if revision in self.tags:
            return self.commits[self.tags[revision]]
        match = re.fullmatch(r"refs/pr/(\d+)", revision)
        if match and int(match.group(1)) in self.prs:
            return self.commits[self.prs[int(match.group(1))]]
        return self.commits.get(revision)

    @property
    def gated_json(self) -> bool | str:
        """``gated`` as the Hub writes it: false, "auto" or "manual" (huggingface_hub tests/test_hf_api.py,
        run against production; hub-dialect.md, JSON shapes)."""
        if isinstance(self.gated, str):
            return self.gated
        return "manual" if self.gated else False


@dataclass(frozen=True)
class _Signed:
    """A CDN URL the replica handed out in a 302: the file it serves and the resolve path it stands for."""

    path: str
    file: VirtualFile
    resolve_path: str


_RESOLVE = re.compile(r"/([^/]+/[^/]+)/resolve/([^/]+)/(.+)")
_RESOLVE_CACHE = re.compile(r"/api/resolve-cache/models/([^/]+/[^/]+)/([^/]+)/(.+)")
_SHA = re.compile(r"[0-9a-f]{40}")


def bucket_of(path: str) -> str:
    """The rate-limit bucket a request path counts in (hub-docs rate-limits.md: "Resolvers" are the URLs
    with a ``/resolve/`` segment, and the resolve-cache route they redirect to)."""
    if path.startswith("/api/resolve-cache/") or _RESOLVE.fullmatch(urlsplit(path).path):
        return "resolvers"
    return "api" if path.startswith("/api/") else "pages"


class HubReplica:
    """``with HubReplica() as hub: hub.add(spec); HfApi(endpoint=hub.endpoint)...``"""

    def __init__(
        self,
        page_size: int = 1000,
        tokens: frozenset[str] = frozenset(),
        redirects: bool = True,
        rate_limits: RateLimits | None = None,
        rounds_s: float = 0.0,
    ) -> None:
        self.repos: dict[str, _Repo] = {}
        self.renamed: dict[str, str] = {}  # old repo id -> new (see ``rename``)
        self.faults: list[Fault] = []
        self._log: list[LoggedRequest] = []
        self._in_flight = 0
        self._idle = threading.Condition(threading.Lock())
        self.page_size = page_size
        self.tokens = tokens  # tokens that may read gated and private repos; any other is "not granted"
        self.redirects = redirects  # False: resolve serves the file itself (one route per file)
        self.rate_limits = rate_limits or RateLimits()  # the anonymous budgets unless told otherwise
        self._used: dict[tuple[str, str, int], int] = {}  # (client, bucket, window) -> requests
        self._started = time.monotonic()
        self.rounds_s = rounds_s  # see ``_hold``
        self._round = 0
        self._round_open = False  # the current round's answers are still held
        self._last_arrival = 0.0
        self._rounds = threading.Condition(threading.Lock())
        self._signed: dict[str, _Signed] = {}  # CDN signature -> what it was issued for
        self._secret = secrets.token_bytes(16)  # signs them: the same file, the same URL, as reads repeat
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._cdn: ThreadingHTTPServer | None = None
        self._threads: list[threading.Thread] = []

    # -- state ---------------------------------------------------------------------------------
    def add(self, spec: RepoSpec) -> list[str]:
        """Create the repo from its spec; returns the commit shas, oldest first."""
        with self._lock:
            self.repos[spec.repo_id] = _Repo(spec.repo_id, gated=spec.gated, private=spec.private)
        shas = [self.push(spec.repo_id, commit) for commit in spec.commits]
        with self._lock:
            repo = self.repos[spec.repo_id]
            for tag, position in spec.tags.items():
                repo.tags[tag] = shas[position]
        for number, commit in spec.pull_requests.items():
            self.push(spec.repo_id, commit, pr=number)
        return shas

    def push(self, repo_id: str, commit: CommitSpec, branch: str = "main", pr: int | None = None) -> str:
        files = materialise(commit)
        parameters = spec_parameters(commit) if commit.tensors else safetensors_parameters(files)
        with self._lock:
            repo = self.repos[repo_id]
            parent = repo.branches.get(branch) if pr is None else repo.branches.get("main")
            sha = commit_sha(repo_id, parent or "", files, commit.title)
            repo.commits[sha] = _Commit(sha, commit.title, commit.date, parent, files, parameters)
            if pr is None:
                repo.branches[branch] = sha
            else:
                repo.prs[pr] = sha
        return sha

    def set_access(
        self,
        repo_id: str,
        *,
        gated: bool | str | None = None,
        private: bool | None = None,
        disabled: bool | None = None,
    ) -> None:
        """Gate a repo, make it private or disable it (or undo any of them) while the replica runs."""
        with self._lock:
            repo = self.repos[repo_id]
            repo.gated = repo.gated if gated is None else gated
            repo.private = repo.private if private is None else private
            repo.disabled = repo.disabled if disabled is None else disabled

    def remove(self, repo_id: str) -> None:
        """Delete a repo: it leaves the listings and every route answers as for a repo never made."""
        with self._lock:
            del self.repos[repo_id]

    def rename(self, old: str, new: str) -> None:
        """Rename a repo as the Hub does: the old name keeps answering, with a 307 to the new one.

        hub-dialect.md, Renames: a relative ``Location`` on the same host, on API and resolve routes
        (huggingface/huggingface_hub ``tests/cassettes/InferenceApiTest.test_simple_inference.yaml``:
        ``GET /api/models/bert-base-uncased`` -> 307, ``Location: /api/models/google-bert/bert-base-uncased``,
        text/plain body "Temporary Redirect. Redirecting to ..."); listings show the new name. The
        query is kept, as a redirect of the same route."""
        with self._lock:
            repo = self.repos.pop(old)
            repo.repo_id = new
            self.repos[new] = repo
            self.renamed[old] = new

    def add_fault(self, fault: Fault) -> Fault:
        with self._lock:
            self.faults.append(fault)
        return fault

    @property
    def log(self) -> list[LoggedRequest]:
        """The requests answered so far, in the order they arrived, once every request under way has been
        answered and logged. Arrival, not logging, orders them: a 307 is logged after its answer is sent,
        and the client's next request, on another thread, may be logged before it."""
        with self._idle:
            self._idle.wait_for(lambda: self._in_flight == 0, timeout=10)
        with self._lock:
            return sorted(self._log, key=lambda entry: entry.at)

    def clear(self) -> None:
        """Forget the log (faults stay; see ``clear_faults``)."""
        self.log  # noqa: B018 - let requests under way finish first
        with self._lock:
            self._log.clear()

    def clear_faults(self) -> None:
        with self._lock:
            self.faults.clear()

    def _begin(self) -> None:
        with self._idle:
            self._in_flight += 1

    def _end(self) -> None:
        with self._idle:
            self._in_flight -= 1
            self._idle.notify_all()

    def _take_fault(self, method: str, paths: tuple[str, ...], redirect_hop: bool) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if (
                    fault.times > 0
                    and any(fault.path_contains in p for p in paths)
                    and fault.method in (None, method)
                    and (fault.changes_the_answer or not redirect_hop)
                ):
                    fault.times -= 1
                    return fault
        return None

    def _hold(self) -> int:
        """With ``rounds_s``, hold each request until none has arrived for ``rounds_s``, then answer
        every held one together: the round trip it belongs to. A client's requests that do not wait
        for each other's answers arrive together and share a round; one sent after an answer arrives
        once that round was let go, and opens the next. So the last round's number is the count of
        round trips the client made one after another, a count that does not depend on the machine's
        speed as long as a round's requests are sent less than ``rounds_s`` apart."""
        if not self.rounds_s:
            return 0
        with self._rounds:
            if not self._round_open:
                self._round, self._round_open = self._round + 1, True
            mine = self._round
            self._last_arrival = time.monotonic()
            while self._round == mine and self._round_open:
                quiet = self._last_arrival + self.rounds_s - time.monotonic()
                if quiet <= 0:
                    self._round_open = False
                    self._rounds.notify_all()
                    break
                self._rounds.wait(quiet)
        return mine

    def _record(self, entry: LoggedRequest) -> None:
        with self._lock:
            self._log.append(entry)

    def _spend(self, client: str, bucket: str) -> tuple[int, int]:
        """Count one request of ``client`` in ``bucket``: (requests left in the window, seconds until it
        resets); -1 left when this one is over the budget."""
        limits = self.rate_limits
        now = time.monotonic() - self._started
        window = int(now // limits.window_s)
        reset = max(1, math.ceil((window + 1) * limits.window_s - now))
        with self._lock:
            used = self._used[(client, bucket, window)] = self._used.get((client, bucket, window), 0) + 1
        return limits.quota(bucket) - used, reset

    def _sign(self, resolve_path: str, f: VirtualFile, name: str) -> str:
        """A signed CDN URL for ``f``, as the Hub's 302 gives (a path by content hash and a query that
        only this replica accepts, naming the file for the download)."""
        signature = hmac.new(self._secret, f"{resolve_path}\0{f.etag}".encode(), "sha256").hexdigest()[:32]
        path = f"/xet-bridge-us/{hashlib.sha256(resolve_path.encode()).hexdigest()[:24]}/{f.etag}"
        with self._lock:
            self._signed[signature] = _Signed(path, f, resolve_path)
        disposition = quote(f"inline; filename*=UTF-8''{name}; filename=\"{name}\";", safe="")
        query = (
            f"X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=3600&X-Amz-Signature={signature}"
            f"&response-content-disposition={disposition}&x-id=GetObject"
        )
        return f"{self.cdn_endpoint}{path}?{query}"

    def _signed_for(self, path: str, query: dict[str, list[str]]) -> _Signed | None:
        signature = (query.get("X-Amz-Signature") or [""])[0]
        with self._lock:
            signed = self._signed.get(signature)
        return signed if signed is not None and signed.path == path else None

    # -- server --------------------------------------------------------------------------------
    @property
    def endpoint(self) -> str:
        assert self._server is not None, "replica not started"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def cdn_endpoint(self) -> str:
        """The second host, another port of 127.0.0.1: another origin, as the Hub's CDN is."""
        assert self._cdn is not None, "replica not started"
        host, port = self._cdn.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> HubReplica:
        replica = self

        class Handler(_Handler):
            hub = replica

        class CDNHandler(_CDNHandler):
            hub = replica

        self._server = _Server(("127.0.0.1", 0), Handler)
        self._cdn = _Server(("127.0.0.1", 0), CDNHandler)
        for server, name in ((self._server, "hub-replica"), (self._cdn, "hub-replica-cdn")):
            server.daemon_threads = True
            thread = threading.Thread(target=server.serve_forever, args=(0.02,), name=name, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self) -> None:
        for attribute in ("_server", "_cdn"):
            server = getattr(self, attribute)
            if server is not None:
                server.shutdown()
                server.server_close()
                setattr(self, attribute, None)

    def __enter__(self) -> HubReplica:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def spec_parameters(commit: CommitSpec) -> dict[str, int]:
    """Stored elements per dtype, from the spec's tensors (as the Hub computes them from the headers)."""
    counts: dict[str, int] = {}
    for _, dtype, shape in commit.tensors:
        counts[dtype] = counts.get(dtype, 0) + math.prod(shape)
    return dict(sorted(counts.items()))


def safetensors_parameters(files: dict[str, VirtualFile]) -> dict[str, int] | None:
    """What the Hub reports as ``safetensors.parameters``: stored elements per dtype over the weights the
    index lists (every ``.safetensors`` file when there is no index); None for a repo without any."""
    indexes = [p for p in files if p.endswith(".safetensors.index.json")]
    if indexes:
        folder = sorted(indexes)[0].rpartition("/")[0]
        try:
            weight_map = json.loads(files[sorted(indexes)[0]].head)["weight_map"]
            shards = sorted({(f"{folder}/" if folder else "") + s for s in weight_map.values()})
        except Exception:
            return None
    else:
        shards = sorted(p for p in files if p.endswith(".safetensors"))
    if not shards:
        return None
    counts: dict[str, int] = {}
    try:
        for shard in shards:
            head = files[shard].head
            (length,) = struct.unpack("<Q", head[:8])
            for name, entry in json.loads(head[8 : 8 + length]).items():
                if name != "__metadata__":
                    counts[entry["dtype"]] = counts.get(entry["dtype"], 0) + math.prod(entry["shape"])
    except Exception:
        return None  # a broken index or header: the Hub computes no count for such a repo
    return dict(sorted(counts.items()))


class _Abort(Exception):
    pass


class _Server(ThreadingHTTPServer):
    """socketserver listens with a backlog of 5: a client opening a hundred connections at once (as a
    read of many headers does, and the Hub's front end takes) had most of its SYNs dropped and resent a
    second later, a stall of the replica's, not of the client's."""

    request_queue_size = 1024


def _trickle(chunks: Iterable[bytes], pause_s: float, size: int = 16) -> Iterator[bytes]:
    for chunk in chunks:
        for i in range(0, len(chunk), size):
            time.sleep(pause_s)
            yield chunk[i : i + size]


def _span(requested: str | None, size: int) -> tuple[int, int] | str | None:
    """The [start, end) a Range header asks of a file of ``size`` bytes; None for the whole file (no
    Range, or one not understood, as servers do); "unsatisfiable" for a 416."""
    match = re.fullmatch(r"bytes=(\d*)-(\d*)", (requested or "").strip())
    if not match or (not match.group(1) and not match.group(2)):
        return None
    if match.group(1):
        start = int(match.group(1))
        end = min(int(match.group(2)) + 1, size) if match.group(2) else size
    else:
        start, end = max(0, size - int(match.group(2))), size
    if start >= size or end <= start:
        return "unsatisfiable"
    return start, end


class _Handler(BaseHTTPRequestHandler):
    hub: HubReplica
    host = "hub"
    _fault: Fault | None = None
    _rate: dict[str, str] | None = None  # this answer's RateLimit headers
    _round_trip = 0
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else every keep-alive request waits ~40 ms for a delayed ACK

    def log_message(self, format: str, *args: Any) -> None:
        return

    def handle(self) -> None:
        try:
            super().handle()
        except (ConnectionResetError, BrokenPipeError):
            # a client that closed the connection before the answer ended (a streamed read that had
            # what it needed): there is no one left to answer, as for any server
            self.close_connection = True

    # -- plumbing ------------------------------------------------------------------------------
    def flush_headers(self) -> None:
        fault = self._fault
        if fault is None or not fault.trickle_head or not getattr(self, "_headers_buffer", None):
            return super().flush_headers()
        buffer: list[bytes] = self._headers_buffer  # type: ignore[attr-defined]  # http.server's own
        head = b"".join(buffer)
        buffer.clear()
        try:
            for piece in _trickle(iter([head]), fault.trickle_s, fault.trickle_bytes):
                self.wfile.write(piece)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _log(self, status: int, sent: int) -> None:
        self.hub._record(
            LoggedRequest(
                self.command,
                self.path,
                self.headers.get("Range"),
                status,
                sent,
                self.headers.get("Authorization"),
                self.host,
                self._arrived,
                self._round_trip,
            )
        )

    def _send(
        self,
        status: int,
        body: bytes | VirtualFile = b"",
        headers: dict[str, str] | None = None,
        span: tuple[int, int] | None = None,
    ) -> None:
        fault = self._fault
        if fault is not None and fault.rate_limited is not None:
            bucket = bucket_of(self.path)
            status, body, span = 429, json.dumps({"error": "injected"}).encode(), None
            headers = {
                "Content-Type": "application/json",
                **_rate_headers(self.hub, bucket, 0, fault.rate_limited),
            }
        elif fault is not None and fault.status is not None:
            status, body, span = fault.status, json.dumps({"error": "injected"}).encode(), None
            headers = {"Content-Type": "application/json"}
            if fault.retry_after is not None:
                headers["Retry-After"] = fault.retry_after
        headers = {**(self._rate or {}), **(headers or {})}
        if fault is not None:
            if fault.body is not None:
                body, span = fault.body, None
                if "Content-Range" in headers:
                    headers["Content-Range"] = f"bytes 0-{max(0, len(body) - 1)}/{len(body)}"
            if fault.body_size is not None:
                body, span = VirtualFile(b"", fault.body_size, False), None
                headers.pop("Content-Range", None)
            if fault.range_shift and "Content-Range" in headers:
                first, _, rest = headers["Content-Range"].removeprefix("bytes ").partition("-")
                last, _, total = rest.partition("/")
                shifted = int(first) + fault.range_shift
                headers["Content-Range"] = f"bytes {shifted}-{int(last) + fault.range_shift}/{total}"
            if fault.link is not None:
                target = f"{self.hub.endpoint}{self.path}" if fault.link == "self" else fault.link
                headers["Link"] = f'<{target}>; rel="next"'
            headers.update(fault.headers or {})

        if isinstance(body, VirtualFile):
            start, end = span if span is not None else (0, body.size)
            length = end - start
            chunks = body.read(start, end) if self.command == "GET" else iter(())
        else:
            length = len(body)
            chunks = iter([body] if self.command == "GET" else [])
        self.send_response(status)
        headers.setdefault("Content-Type", "application/octet-stream")
        headers["Content-Length"] = str(length)
        for key, value in headers.items():
            # a value beyond Latin-1 (a revision named in X-Error-Message) goes as its UTF-8 bytes, as a
            # UTF-8 server writes it: http.server would raise UnicodeEncodeError and answer nothing
            self.send_header(key, value if value.isascii() else value.encode().decode("latin-1"))
        self.end_headers()
        sent = 0
        limit = fault.truncate_to if fault is not None and fault.truncate_to is not None else None
        if fault is not None and fault.trickle_s:
            chunks = _trickle(chunks, fault.trickle_s, fault.trickle_bytes)
        try:
            for chunk in chunks:
                if limit is not None and sent + len(chunk) > limit:
                    chunk = chunk[: limit - sent]
                self.wfile.write(chunk)
                sent += len(chunk)
                if limit is not None and sent >= limit:
                    self.close_connection = True
                    break
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        self._log(status, sent)

    def _json(self, data: Any, status: int = 200, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(data).encode(), {"Content-Type": "application/json", **(headers or {})})

    def _error(
        self, status: int, code: str | None, message: str, headers: dict[str, str] | None = None
    ) -> None:
        typed = {"X-Error-Code": code} if code else {}
        self._json({"error": message}, status, {**typed, "X-Error-Message": message, **(headers or {})})

    def _redirect(self, status: int, location: str, headers: dict[str, str] | None = None) -> None:
        """A redirect as the Hub sends one: the Location, and a text/plain body saying it (huggingface_hub
        cassette InferenceApiTest.test_simple_inference.yaml: "Temporary Redirect. Redirecting to ...")."""
        words = "Temporary Redirect" if status == 307 else "Found"
        body = f"{words}. Redirecting to {location}".encode()
        self._send(
            status,
            body,
            {"Location": location, "Content-Type": "text/plain; charset=utf-8", **(headers or {})},
        )

    def _token(self) -> str | None:
        auth = self.headers.get("Authorization", "")
        return auth[7:] if auth.startswith("Bearer ") and auth[7:] else None

    def _authorised(self) -> bool:
        return self._token() in self.hub.tokens

    def _repo(self, repo_id: str, files: bool = False) -> _Repo:
        repo = self.hub.repos.get(repo_id)
        if repo is None:  # repo ids are matched whatever their case; model info names the repo's own
            repo = next((r for name, r in self.hub.repos.items() if name.lower() == repo_id.lower()), None)
        token = self._token()
        if repo is None or (repo.private and token not in self.hub.tokens):
            if token is None:
                # hub-dialect.md, Errors: anonymous GETs of a missing or private repo answer 401 with
                # no X-Error-Code, body {"error":"Invalid username or password."} and X-Error-Message
                # (recorded 2026-10-02; the message shows in reports such as SkyWorkAIGC/SkyText-Chinese-GPT3
                # issue #5 and 01-ai/Yi issue #226: "401 Client Error ... Invalid username or password.")
                self._error(401, None, "Invalid username or password.")
            else:
                # with a token: 404 RepoNotFound (hub-dialect.md, Errors)
                self._error(404, "RepoNotFound", "Repository not found")
            raise _Abort
        if files and repo.disabled:
            # hub-dialect.md, Errors: a disabled repo's files answer 401 GatedRepo; the message is the
            # one huggingface_hub PR #1965 recorded for a disabled repo ("Access to this resource is
            # disabled.", there a 403 on the API route with a token)
            self._error(401, "GatedRepo", "Access to this resource is disabled.")
            raise _Abort
        if files and repo.gated and token not in self.hub.tokens:
            if token is None:
                # hub-dialect.md, Errors: 401 GatedRepo with a www-authenticate header (its value was not
                # recorded); the message as in ToTheBeginning/PuLID issue #97 and rendeirolab/LazySlide
                # issue #52 ("Access to model X is restricted. You must have access to it and be
                # authenticated to access it. Please log in.")
                message = (
                    f"Access to model {repo.repo_id} is restricted. You must have access to it and be "
                    "authenticated to access it. Please log in."
                )
                self._error(
                    401, "GatedRepo", message, {"WWW-Authenticate": 'Bearer realm="Authentication required"'}
                )
            else:
                # a token not granted: 403 GatedRepo (hub-dialect.md; ariG23498/gemma3-object-detection
                # issue #5: "... is restricted and you are not in the authorized list. Visit ... to ask")
                message = (
                    f"Access to model {repo.repo_id} is restricted and you are not in the authorized list. "
                    f"Visit {self.hub.endpoint}/{repo.repo_id} to ask for access."
                )
                self._error(403, "GatedRepo", message)
            raise _Abort
        return repo

    def _commit(self, repo: _Repo, revision: str) -> _Commit:
        commit = repo.resolve(revision)
        if commit is None:
            self._error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
            raise _Abort
        return commit

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        self.hub._begin()
        try:
            self._answer()
        finally:
            self.hub._end()

    def _paths(self) -> tuple[tuple[str, ...], bool]:
        """The paths a fault may name for this request (its own, and the resolve path it serves), and
        whether it is a redirect hop of a file read."""
        url = urlsplit(self.path)
        match = _RESOLVE_CACHE.fullmatch(url.path)
        if match:
            repo, sha, file = (unquote(g) for g in match.groups())
            return (self.path, f"/{repo}/resolve/{sha}/{file}"), False
        return (self.path,), self.hub.redirects and _RESOLVE.fullmatch(url.path) is not None

    def _answer(self) -> None:
        self._arrived = time.monotonic()
        self._round_trip = self.hub._hold()
        self._rate = None
        paths, redirect_hop = self._paths()
        self._fault = self.hub._take_fault(self.command, paths, redirect_hop)
        if self._fault is not None:
            if self._fault.delay_s:
                time.sleep(self._fault.delay_s)
            if self._fault.reset:
                self._log(0, 0)
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)
                return
        with contextlib.suppress(_Abort):
            self._budget()
            self._route()

    def _budget(self) -> None:
        """Count this request against its client's budget; every answer says what is left, and one over
        the budget is a 429.

        hub-dialect.md, Rate limits: ``RateLimit: "api";r=0;t=52`` and ``RateLimit-Policy: "fixed
        window";"api";q=500;w=300`` and no Retry-After on a real 429 (exo-explore/exo
        ``src/exo/download/tests/test_rate_limit_handling.py``, "captured from a real HF 429 on
        2026-04-30"); hub-docs rate-limits.md: the same two headers on every answer, so that a client
        can slow down before it is refused. What the 429's body says was not recorded."""
        bucket = bucket_of(self.path)
        left, reset = self.hub._spend(self.headers.get("Authorization") or "anonymous", bucket)
        self._rate = _rate_headers(self.hub, bucket, max(0, left), reset)
        if left < 0:
            self._json({"error": f"rate limited: the {bucket} budget of this window is spent"}, 429)
            raise _Abort

    # -- routes --------------------------------------------------------------------------------
    def _route(self) -> None:
        url = urlsplit(self.path)
        raw = url.path
        query = parse_qs(url.query)
        if raw == "/api/agent-harnesses":
            return self._json({"harnesses": {}, "standardEnvVars": []})
        if raw == "/api/models":
            return self._list_models(query)
        moved = re.fullmatch(r"(/api/models/|/)([^/]+/[^/]+)(/.*)?", raw)
        if moved and unquote(moved.group(2)) in self.hub.renamed:
            rest = moved.group(3) or ""
            if moved.group(1) != "/" or rest.startswith("/resolve/"):
                new = quote(self.hub.renamed[unquote(moved.group(2))], safe="/")
                return self._redirect(
                    307, moved.group(1) + new + rest + (f"?{url.query}" if url.query else "")
                )
        match = re.fullmatch(
            r"/api/models/([^/]+/[^/]+)(?:/(revision|commits|tree|refs)(?:/([^/]+)(/.*)?)?)?", raw
        )
        if match:
            repo_id, kind, revision, rest = match.group(1), match.group(2), match.group(3), match.group(4)
            repo = self._repo(unquote(repo_id))
            revision = unquote(revision) if revision else "main"
            if kind is None or kind == "revision":
                return self._model_info(repo, self._commit(repo, revision), query)
            if kind == "refs":
                return self._refs(repo)
            if kind == "commits":
                return self._commits(repo, self._commit(repo, revision), query)
            return self._tree(repo, self._commit(repo, revision), unquote(rest or "/")[1:])
        match = _RESOLVE.fullmatch(raw)
        if match:
            repo = self._repo(unquote(match.group(1)), files=True)
            revision = unquote(match.group(2))
            commit = self._commit(repo, revision)
            path = unquote(match.group(3))
            if not self.hub.redirects:
                return self._file(commit, path)
            return self._resolve(repo, revision, commit, path)
        match = _RESOLVE_CACHE.fullmatch(raw)
        if match:
            repo = self._repo(unquote(match.group(1)), files=True)
            if not _SHA.fullmatch(unquote(match.group(2))):
                return self._error(400, None, "resolve-cache takes a commit sha")
            return self._file(self._commit(repo, unquote(match.group(2))), unquote(match.group(3)))
        self._error(404, "EntryNotFound", "Not found")

    def _model_info(self, repo: _Repo, commit: _Commit, query: dict[str, list[str]]) -> None:
        expand = query.get("expand") or query.get("expand[]")
        if expand:  # as the Hub: only the fields asked for, and expand never with blobs
            if "blobs" in query:
                return self._error(400, "BadRequest", "expand cannot be used with blobs")
            fields: dict[str, Any] = {"_id": repo.repo_id, "id": repo.repo_id}
            for name in expand:
                if name == "safetensors":
                    counts = commit.parameters
                    if counts is not None:
                        fields["safetensors"] = {"parameters": counts, "total": sum(counts.values())}
                elif name == "sha":
                    fields["sha"] = commit.sha
                elif name == "lastModified":
                    fields["lastModified"] = commit.date
                elif name == "gated":
                    fields["gated"] = repo.gated_json
                elif name == "private":
                    fields["private"] = repo.private
                elif name == "disabled":
                    fields["disabled"] = repo.disabled
                elif name == "cardData":
                    if (card := _card_data(commit)) is not None:
                        fields["cardData"] = card
                else:
                    return self._error(400, "BadRequest", f"unknown expand property {name}")
            return self._json(fields)
        blobs = query.get("blobs") == ["True"] or query.get("blobs") == ["true"]
        siblings = []
        for path in sorted(commit.files):
            f = commit.files[path]
            entry: dict[str, Any] = {"rfilename": path}
            if blobs:
                entry.update(size=f.size, blobId=f.etag[:40])
                if f.lfs:
                    entry["lfs"] = {"size": f.size, "sha256": f.etag, "pointerSize": 134}
            siblings.append(entry)
        first = next(iter(repo.commits.values()))
        self._json(
            {
                "_id": repo.repo_id,
                "id": repo.repo_id,
                "modelId": repo.repo_id,
                "author": repo.repo_id.split("/")[0],
                "sha": commit.sha,
                "lastModified": commit.date,
                "createdAt": first.date,
                "private": repo.private,
                "gated": repo.gated_json,
                # hub-dialect.md, Errors: a disabled repo's model info is still 200, saying so here
                "disabled": repo.disabled,
                "tags": [],
                "siblings": siblings,
                **({"cardData": card} if (card := _card_data(commit)) is not None else {}),
            }
        )

    def _refs(self, repo: _Repo) -> None:
        self._json(
            {
                "branches": [
                    {"name": b, "ref": f"refs/heads/{b}", "targetCommit": s} for b, s in repo.branches.items()
                ],
                "converts": [],
                "tags": [
                    {"name": t, "ref": f"refs/tags/{t}", "targetCommit": s} for t, s in repo.tags.items()
                ],
            }
        )

    def _commits(self, repo: _Repo, commit: _Commit, query: dict[str, list[str]]) -> None:
        history = []
        current: _Commit | None = commit
        while current is not None:
            history.append(
                {
                    "id": current.sha,
                    "title": current.title,
                    "message": "",
                    "date": current.date,
                    "authors": [{"user": repo.repo_id.split("/")[0]}],
                }
            )
            current = repo.commits.get(current.parent) if current.parent else None
        self._page(history, query)

    def _tree(self, repo: _Repo, commit: _Commit, folder: str) -> None:
        prefix = f"{folder}/" if folder else ""
        entries = [
            {"type": "file", "oid": f.etag[:40], "size": f.size, "path": path}
            | ({"lfs": {"oid": f.etag, "size": f.size, "pointerSize": 134}} if f.lfs else {})
            for path, f in sorted(commit.files.items())
            if path.startswith(prefix)
        ]
        self._json(entries)

    def _list_models(self, query: dict[str, list[str]]) -> None:
        """``author`` keeps one owner's models; each ``filter`` keeps the models having that tag (all of
        them, when several are given), tags as ``_card_tags`` derives them from main's README."""
        author = (query.get("author") or [""])[0]
        wanted = set(query.get("filter") or [])
        models = []
        for repo in sorted(self.hub.repos.values(), key=lambda r: r.repo_id):
            if author and repo.repo_id.split("/")[0] != author:
                continue
            if wanted and not wanted <= _card_tags(repo.commits[repo.branches["main"]]):
                continue
            if repo.private and not self._authorised():
                continue
            head = repo.commits[repo.branches["main"]]
            models.append(
                {
                    "_id": repo.repo_id,
                    "id": repo.repo_id,
                    "sha": head.sha,
                    "lastModified": head.date,
                    "private": repo.private,
                    "gated": repo.gated_json,
                }
            )
        self._page(models, query)

    def _page(self, items: list[dict[str, Any]], query: dict[str, list[str]]) -> None:
        start = int((query.get("cursor") or ["0"])[0])
        size = self.hub.page_size
        headers = {}
        if start + size < len(items):
            url = urlsplit(self.path)
            params = "&".join(f"{k}={quote(v)}" for k, vs in query.items() if k != "cursor" for v in vs)
            next_url = f"{self.hub.endpoint}{url.path}?{params}{'&' if params else ''}cursor={start + size}"
            headers["Link"] = f'<{next_url}>; rel="next"'
        self._json(items[start : start + size], headers=headers)

    def _missing_file(self, commit: _Commit, path: str) -> None:
        """hub-dialect.md, Errors: a missing file is 404 text/plain, ``X-Error-Code: EntryNotFound``, with
        ``X-Repo-Commit``."""
        message = "Entry not found"
        self._send(
            404,
            message.encode(),
            {
                "Content-Type": "text/plain; charset=utf-8",
                "X-Error-Code": "EntryNotFound",
                "X-Error-Message": message,
                "X-Repo-Commit": commit.sha,
            },
        )

    def _resolve(self, repo: _Repo, revision: str, commit: _Commit, path: str) -> None:
        """``resolve`` as the Hub answers it: a redirect for every file.

        hub-dialect.md, Files. A small file: 307 to the same host, relative, as recorded by
        ``curl -sI https://huggingface.co/Qwen/Qwen3-32B/resolve/main/config.json`` (a stored
        transcript dated 2026-05-09): ``location: /api/resolve-cache/models/Qwen/Qwen3-32B/<sha>/
        config.json?%2FQwen%2FQwen3-32B%2Fresolve%2Fmain%2Fconfig.json=&etag=%22<oid>%22``, text/plain;
        httpx logs of 2026 show the follow-up ``HEAD /api/resolve-cache/...`` answered 200. An LFS
        file: 302 to a signed URL on another host (cas-bridge.xethub.hf.co or us.aws.cdn.hf.co), the
        302 carrying ``X-Linked-Size``, ``X-Linked-Etag`` and ``X-Repo-Commit`` (curl logs quoted in
        stored pages, e.g. ``x-linked-size: 327212226`` with an ``x-linked-etag`` sha256 and a distinct
        ``ETag``); the CDN answers 206 with Content-Range (datasets issue #7931: Range on cas-bridge).
        No ``X-Xet-Hash``: huggingface_hub would switch to its Xet client (huggingface_hub.md)."""
        f = commit.files.get(path)
        if f is None:
            return self._missing_file(commit, path)
        resolve_path = f"/{repo.repo_id}/resolve/{revision}/{path}"
        if not f.lfs:
            location = (
                f"/api/resolve-cache/models/{quote(repo.repo_id, safe='/')}/{commit.sha}/{quote(path)}"
                f"?{quote(resolve_path, safe='')}=&etag={quote(_etag(f))}"
            )
            return self._redirect(307, location)
        headers = {
            "X-Repo-Commit": commit.sha,
            "X-Linked-Etag": f'"{f.etag}"',
            "X-Linked-Size": str(f.size),
            "ETag": _etag(f),
        }
        self._redirect(302, self.hub._sign(resolve_path, f, path.rsplit("/", 1)[-1]), headers)

    def _file(self, commit: _Commit, path: str) -> None:
        """The file itself, whole or the range asked (resolve-cache; resolve with ``redirects=False``)."""
        f = commit.files.get(path)
        if f is None:
            return self._missing_file(commit, path)
        headers = {"X-Repo-Commit": commit.sha, "ETag": _etag(f), "Accept-Ranges": "bytes"}
        if f.lfs:
            headers |= {"X-Linked-Etag": f'"{f.etag}"', "X-Linked-Size": str(f.size)}
        self._ranged(f, headers)

    def _ranged(self, f: VirtualFile, headers: dict[str, str]) -> None:
        span = _span(self.headers.get("Range"), f.size)
        if span is None:
            return self._send(200, f, headers)
        if span == "unsatisfiable":
            return self._send(416, b"", {**headers, "Content-Range": f"bytes */{f.size}"})
        assert isinstance(span, tuple)
        headers["Content-Range"] = f"bytes {span[0]}-{span[1] - 1}/{f.size}"
        self._send(206, f, headers, span)


class _CDNHandler(_Handler):
    """The second host: it serves the signed URLs the 302s hand out, by content hash, to anyone who has
    one; it never looks at Authorization (hub-dialect.md, Files: httpx drops the token on a
    cross-origin redirect, and the CDN needs none). Its ETag is not the Hub's (there, the Xet hash)."""

    host = "cdn"

    def _paths(self) -> tuple[tuple[str, ...], bool]:
        url = urlsplit(self.path)
        signed = self.hub._signed_for(url.path, parse_qs(url.query))
        return ((self.path, signed.resolve_path) if signed else (self.path,)), False

    def _budget(self) -> None:
        return  # the CDN is not the Hub: its answers spend no Hub budget and carry no RateLimit

    def _route(self) -> None:
        url = urlsplit(self.path)
        signed = self.hub._signed_for(url.path, parse_qs(url.query))
        if signed is None:
            body = b"<?xml version='1.0' encoding='UTF-8'?><Error><Code>AccessDenied</Code></Error>"
            return self._send(403, body, {"Content-Type": "application/xml"})
        cdn_etag = hashlib.sha256(b"xet" + signed.file.etag.encode()).hexdigest()
        self._ranged(signed.file, {"ETag": f'"{cdn_etag}"', "Accept-Ranges": "bytes"})


def _etag(f: VirtualFile) -> str:
    """The Hub's ETag of a file: a small file's git blob id (40 hex, as the recorded Location's
    ``etag=`` and model info's ``blobId`` show), an LFS file's content hash."""
    return f'"{f.etag}"' if f.lfs else f'"{f.etag[:40]}"'


def _rate_headers(hub: HubReplica, bucket: str, left: int, reset: int) -> dict[str, str]:
    quota, window = hub.rate_limits.quota(bucket), hub.rate_limits.window_s
    return {
        "RateLimit": f'"{bucket}";r={left};t={reset}',
        "RateLimit-Policy": f'"fixed window";"{bucket}";q={quota};w={math.ceil(window)}',
    }


def _card_data(commit: _Commit) -> dict[str, Any] | None:
    """The Hub's ``cardData``: the YAML header of the revision's README.md (between its first two
    ``---`` lines), as model info gives it; no README or no header, no field. Where each rule comes
    from: the header as the card's metadata (hub-docs, model-cards.md: "Model card metadata");
    ``cardData`` the model-info field huggingface_hub reads it from (hf_api.py, ``ModelInfo.__init__``:
    ``kwargs.pop("cardData")`` into ``card_data``), and ``cardData`` one of its ``expand`` properties
    (``ExpandModelProperty_T``)."""
    readme = commit.files.get("README.md")
    if readme is None:
        return None
    text = readme.head.decode("utf-8", "replace")
    if not text.startswith("---\n"):
        return None
    end = text.find("\n---", 4)
    if end < 0:
        return None
    data = yaml.safe_load(text[4:end])
    return data if isinstance(data, dict) else None


def _card_tags(commit: _Commit) -> set[str]:
    """The tags the Hub derives from a card's ``base_model``: ``base_model:X`` for each model named,
    and ``base_model:<relation>:X`` when ``base_model_relation`` names one (``quantized``,
    ``finetune``, ``adapter``, ``merge``). Where the rule comes from: the tags the Hub shows on every
    such model's page and returns in its ``tags`` (e.g. ``base_model:quantized:meta-llama/...`` on a
    GGUF copy), the ``filter`` parameter of ``/api/models`` keeping the models having a tag (several
    ``filter`` values, all of them), and huggingface_hub's ``list_models(filter=...)`` sending it as
    ``filter`` (hf_api.py); the card fields from hub-docs model-cards.md ("Specifying a base model").

    The Hub infers a relation when the card names none (model-cards.md); the replica does not, and
    tags such a card ``base_model:X`` only. Tags are matched
    as written, case and all: what the real Hub does with another case was not recorded."""
    card = _card_data(commit) or {}
    named = card.get("base_model")
    models = [named] if isinstance(named, str) else named if isinstance(named, list) else []
    relation = card.get("base_model_relation")
    tags = set()
    for model in models:
        if isinstance(model, str):
            tags.add(f"base_model:{model}")
            if isinstance(relation, str):
                tags.add(f"base_model:{relation}:{model}")
    return tags
