"""The Hub replica: model info, commits, refs, tree, model listings and ``resolve`` with ranges.

It answers the routes huggingface_hub calls, with the Hub's headers (``X-Repo-Commit``, ``ETag``,
``X-Linked-Etag``, ``X-Linked-Size``, ``Content-Range``) and its typed errors (``X-Error-Code``).
Every request is logged (method, path, range, status, body bytes sent), faults can be injected per
path, and commits can be pushed while it runs.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import socket
import struct
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from .specs import CommitSpec, RepoSpec, VirtualFile, commit_sha, materialise


@dataclass
class Fault:
    """Misbehave on requests whose path contains ``path_contains`` (and method, if given), ``times`` times.

    ``status`` answers with that code (and ``retry_after``); ``delay_s`` stalls before answering;
    ``truncate_to`` sends only that many body bytes of a full Content-Length, then closes; ``reset``
    closes the connection without an answer. ``body`` replaces the body (malformed JSON, wrong field
    types, a hostile header); ``body_size`` sends that many zero bytes instead, without holding them
    (a 1 GB error body); ``range_shift`` moves the start a 206 claims in Content-Range; ``link`` adds
    ``Link: <link>; rel="next"`` (``"self"``: the request's own URL); ``headers`` adds any others
    (``Location`` for a redirect); ``trickle_s`` sends the body ``trickle_bytes`` bytes at a time with
    that pause between (each read is quick, the whole never ends in time), and with ``trickle_head``
    the status line and headers too. The real Hub was never recorded trickling (hub-dialect.md records
    none); these stand for a hostile endpoint, proxy or redirect target, which a client must survive.
    """

    path_contains: str
    method: str | None = None
    status: int | None = None
    retry_after: str | None = None
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


@dataclass(frozen=True)
class LoggedRequest:
    method: str
    path: str
    range: str | None
    status: int
    bytes_sent: int
    authorization: str | None = None  # as received: whether a token reached this server


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
    gated: bool = False
    private: bool = False
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


class HubReplica:
    """``with HubReplica() as hub: hub.add(spec); HfApi(endpoint=hub.endpoint)...``"""

    def __init__(self, page_size: int = 1000, tokens: frozenset[str] = frozenset()) -> None:
        self.repos: dict[str, _Repo] = {}
        self.renamed: dict[str, str] = {}  # old repo id -> new (see ``rename``)
        self.faults: list[Fault] = []
        self._log: list[LoggedRequest] = []
        self._in_flight = 0
        self._idle = threading.Condition(threading.Lock())
        self.page_size = page_size
        self.tokens = tokens  # tokens that may read gated and private repos
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

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

    def set_access(self, repo_id: str, *, gated: bool | None = None, private: bool | None = None) -> None:
        """Gate a repo or make it private (or undo either) while the replica runs."""
        with self._lock:
            repo = self.repos[repo_id]
            repo.gated = repo.gated if gated is None else gated
            repo.private = repo.private if private is None else private

    def remove(self, repo_id: str) -> None:
        """Delete a repo (or rename it away): it leaves the listings and every route answers 404."""
        with self._lock:
            del self.repos[repo_id]

    def rename(self, old: str, new: str) -> None:
        """Rename a repo as the Hub does: the old name keeps answering, with a 307 to the new one.

        hub-dialect.md, Renames: a relative ``Location`` on the same host, on API and resolve routes
        (huggingface_hub's cassette ``InferenceApiTest.test_simple_inference.yaml``); listings show
        the new name. The query is kept, as a redirect of the same route."""
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
        """The requests answered so far, once every request under way has been answered and logged."""
        with self._idle:
            self._idle.wait_for(lambda: self._in_flight == 0, timeout=10)
        with self._lock:
            return list(self._log)

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

    def _take_fault(self, method: str, path: str) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault.times > 0 and fault.path_contains in path and fault.method in (None, method):
                    fault.times -= 1
                    return fault
        return None

    def _record(self, entry: LoggedRequest) -> None:
        with self._lock:
            self._log.append(entry)

    # -- server --------------------------------------------------------------------------------
    @property
    def endpoint(self) -> str:
        assert self._server is not None, "replica not started"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> HubReplica:
        replica = self

        class Handler(_Handler):
            hub = replica

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.02,), name="hub-replica", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

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


def _trickle(chunks: Iterator[bytes], pause_s: float, size: int = 16) -> Iterator[bytes]:
    for chunk in chunks:
        for i in range(0, len(chunk), size):
            time.sleep(pause_s)
            yield chunk[i : i + size]


class _Handler(BaseHTTPRequestHandler):
    hub: HubReplica
    _fault: Fault | None = None
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else every keep-alive request waits ~40 ms for a delayed ACK

    def log_message(self, format: str, *args: Any) -> None:
        return

    # -- plumbing ------------------------------------------------------------------------------
    def flush_headers(self) -> None:
        fault = self._fault
        if fault is None or not fault.trickle_head or not getattr(self, "_headers_buffer", None):
            return super().flush_headers()
        head, self._headers_buffer = b"".join(self._headers_buffer), []
        try:
            for piece in _trickle(iter([head]), fault.trickle_s, fault.trickle_bytes):
                self.wfile.write(piece)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _send(
        self,
        status: int,
        body: bytes | VirtualFile = b"",
        headers: dict[str, str] | None = None,
        span: tuple[int, int] | None = None,
    ) -> None:
        fault = self._fault
        if fault is not None and fault.status is not None:
            status, body, span = fault.status, json.dumps({"error": "injected"}).encode(), None
            headers = {"Content-Type": "application/json"}
            if fault.retry_after is not None:
                headers["Retry-After"] = fault.retry_after
        headers = dict(headers or {})
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
            self.send_header(key, value)
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
        self.hub._record(
            LoggedRequest(
                self.command,
                self.path,
                self.headers.get("Range"),
                status,
                sent,
                self.headers.get("Authorization"),
            )
        )

    def _json(self, data: Any, status: int = 200, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(data).encode(), {"Content-Type": "application/json", **(headers or {})})

    def _error(self, status: int, code: str, message: str) -> None:
        self._json({"error": message}, status, {"X-Error-Code": code, "X-Error-Message": message})

    def _authorised(self) -> bool:
        auth = self.headers.get("Authorization", "")
        return auth.startswith("Bearer ") and auth[7:] in self.hub.tokens

    def _repo(self, repo_id: str, files: bool = False) -> _Repo:
        repo = self.hub.repos.get(repo_id)
        if repo is None or (repo.private and not self._authorised()):
            self._error(401 if repo is not None else 404, "RepoNotFound", "Repository not found")
            raise _Abort
        if files and repo.gated and not self._authorised():
            self._error(403, "GatedRepo", "Access to this gated repo is restricted")
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

    def _answer(self) -> None:
        self._fault = self.hub._take_fault(self.command, self.path)
        if self._fault is not None:
            if self._fault.delay_s:
                time.sleep(self._fault.delay_s)
            if self._fault.reset:
                self.hub._record(
                    LoggedRequest(
                        self.command,
                        self.path,
                        self.headers.get("Range"),
                        0,
                        0,
                        self.headers.get("Authorization"),
                    )
                )
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)
                return
        with contextlib.suppress(_Abort):
            self._route()

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
                location = moved.group(1) + new + rest + (f"?{url.query}" if url.query else "")
                return self._send(307, b"", {"Location": location})
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
        match = re.fullmatch(r"/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", raw)
        if match:
            repo = self._repo(unquote(match.group(1)), files=True)
            commit = self._commit(repo, unquote(match.group(2)))
            return self._resolve(repo, commit, unquote(match.group(3)))
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
                    fields["gated"] = "manual" if repo.gated else False
                elif name == "private":
                    fields["private"] = repo.private
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
                "gated": "manual" if repo.gated else False,
                "disabled": False,
                "tags": [],
                "siblings": siblings,
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
        author = (query.get("author") or [""])[0]
        models = []
        for repo in sorted(self.hub.repos.values(), key=lambda r: r.repo_id):
            if author and repo.repo_id.split("/")[0] != author:
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
                    "gated": "manual" if repo.gated else False,
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

    def _resolve(self, repo: _Repo, commit: _Commit, path: str) -> None:
        f = commit.files.get(path)
        if f is None:
            return self._error(404, "EntryNotFound", f"{path} does not exist at {commit.sha}")
        headers = {"X-Repo-Commit": commit.sha, "ETag": f'"{f.etag}"', "Accept-Ranges": "bytes"}
        if f.lfs:
            headers |= {"X-Linked-Etag": f'"{f.etag}"', "X-Linked-Size": str(f.size)}
        requested = self.headers.get("Range")
        if not requested:
            return self._send(200, f, headers)
        match = re.fullmatch(r"bytes=(\d*)-(\d*)", requested.strip())
        if not match or (not match.group(1) and not match.group(2)):
            return self._send(200, f, headers)
        if match.group(1):
            start = int(match.group(1))
            end = min(int(match.group(2)) + 1, f.size) if match.group(2) else f.size
        else:
            start, end = max(0, f.size - int(match.group(2))), f.size
        if start >= f.size or end <= start:
            return self._send(416, b"", {**headers, "Content-Range": f"bytes */{f.size}"})
        headers["Content-Range"] = f"bytes {start}-{end - 1}/{f.size}"
        self._send(206, f, headers, (start, end))
