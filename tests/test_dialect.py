"""The replica speaks the real Hub's dialect, and hubdiff handles it.

First a table: each route the replica answers, the status and headers it sends, beside what the real
Hub was recorded sending (``../shared/notes/hub-dialect.md`` and the recordings it names). Each header
has a shape (a regular expression); the replica's value must have it, and so must the recorded value
where one was recorded, which is what keeps the shape honest. Then hubdiff end to end through that
dialect: redirects with a token (the CDN never sees it), a rate-limit storm paused once for every
thread and repo, the cap, the bare 401 worded alike warm and cold, disabled repos, a rename in
``watch``, and ``HF_HUB_OFFLINE``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml

from hubdiff._baseline.record import entry_for
from hubdiff._baseline.store import write_baseline
from hubdiff._source import Sources, SourceSpec, hub_http, quick
from hubdiff._source import hub as hub_module
from hubdiff._source.cache import SnapshotCache
from hubdiff._source.hub import HubReader
from hubdiff._source.outbound import RateGate
from hubdiff.cli import main
from hubdiff.testing import CommitSpec, Fault, HubReplica, RepoSpec
from hubdiff.testing.replica import RateLimits

from .conftest import fast_settings

TOKEN = "hf_reader"  # granted by the replica of the ``hub`` fixture
CONFIG = {"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10}
TENSORS = [(f"model.layers.{i}.w", "F32", (2, 2)) for i in range(4)]


def spec(repo_id: str, shards: int = 2, hidden: int = 8, **kw: Any) -> RepoSpec:
    config = json.dumps({**CONFIG, "hidden_size": hidden}).encode()
    tensors = [(f"model.layers.{i}.w", "F32", (hidden, 2)) for i in range(max(4, shards))]
    return RepoSpec(repo_id, [CommitSpec({"config.json": config}, tensors, shards=shards)], **kw)


@pytest.fixture(autouse=True)
def gate(monkeypatch: pytest.MonkeyPatch) -> RateGate:
    """A rate-limit gate of this test's own: the process's one would carry a pause into the next test."""
    fresh = RateGate()
    monkeypatch.setattr(hub_module, "GATE", fresh)
    monkeypatch.setattr(hub_http, "GATE", fresh)
    monkeypatch.setattr(quick, "GATE", fresh)
    return fresh


# -- the table ------------------------------------------------------------------------------------------
HEX40, HEX64 = "[0-9a-f]{40}", "[0-9a-f]{64}"


@dataclass(frozen=True)
class Row:
    """One answer: how it is asked of the replica, and the real Hub's as recorded."""

    route: str
    ask: Callable[[HubReplica, httpx2.Client], httpx2.Response]
    status: int
    shapes: dict[str, str | None]  # header -> the shape of its value; None: the header is absent
    recorded: dict[str, str] = field(default_factory=dict)  # header -> the value recorded, where one was
    body: dict[str, Any] | None = None  # keys the JSON body holds, with their values
    source: str = ""


def _get(
    path: str, token: str | None = None, **headers: str
) -> Callable[[HubReplica, httpx2.Client], httpx2.Response]:
    def ask(hub: HubReplica, client: httpx2.Client) -> httpx2.Response:
        auth = {"Authorization": f"Bearer {token}"} if token else {}
        return client.get(
            hub.endpoint + path.format(sha=hub.repos["org/x"].branches["main"]), headers={**auth, **headers}
        )

    return ask


def _follow(path: str, **headers: str) -> Callable[[HubReplica, httpx2.Client], httpx2.Response]:
    """The answer to where ``path``'s redirect leads (a relative Location is on the endpoint)."""

    def ask(hub: HubReplica, client: httpx2.Client) -> httpx2.Response:
        location = _get(path)(hub, client).headers["Location"]
        return client.get(location if "://" in location else hub.endpoint + location, headers=headers)

    return ask


def _rate_limited(hub: HubReplica, client: httpx2.Client) -> httpx2.Response:
    hub.add_fault(Fault("/api/models/org/x/revision/main", rate_limited=52, times=1))
    return client.get(f"{hub.endpoint}/api/models/org/x/revision/main")


SHARD = "model-00001-of-00002.safetensors"
ROWS = [
    Row(
        "GET /{repo}/resolve/main/config.json",
        _get("/org/x/resolve/main/config.json"),
        307,
        {
            "Location": rf"/api/resolve-cache/models/[\w.-]+/[\w.-]+/{HEX40}/config\.json"
            rf"\?%2F[\w.%-]+%2Fresolve%2Fmain%2Fconfig\.json=&etag=%22{HEX40}%22",
            "Content-Type": r"text/plain; charset=utf-8",
            "X-Linked-Size": None,
        },
        {
            "Location": "/api/resolve-cache/models/Qwen/Qwen3-32B/9216db5781bf21249d130ec9da846c4624c16137/"
            "config.json?%2FQwen%2FQwen3-32B%2Fresolve%2Fmain%2Fconfig.json="
            "&etag=%22d66d65fbc7960c2b3c254293f74df73b47fef6d3%22",
            "Content-Type": "text/plain; charset=utf-8",
        },
        source="curl -sI https://huggingface.co/Qwen/Qwen3-32B/resolve/main/config.json, 2026-05-09 (stored transcript)",
    ),
    Row(
        "GET /api/resolve-cache/models/{repo}/{sha}/config.json?... (Range: bytes=0-3)",
        _follow("/org/x/resolve/main/config.json", Range="bytes=0-3"),
        206,
        {"Content-Range": r"bytes 0-3/\d+", "X-Repo-Commit": HEX40, "ETag": f'"{HEX40}"'},
        source='httpx logs, 2026: HEAD /api/resolve-cache/models/... "HTTP/1.1 200 OK" (status only)',
    ),
    Row(
        "GET /{repo}/resolve/main/{shard}.safetensors",
        _get(f"/org/x/resolve/main/{SHARD}"),
        302,
        {
            "Location": r"http://127\.0\.0\.1:\d+/xet-bridge-us/[0-9a-f]+/[0-9a-f]+\?.*X-Amz-Signature=[0-9a-f]+.*",
            "X-Linked-Size": r"\d+",
            "X-Linked-Etag": f'"{HEX64}"',
            "ETag": f'"{HEX64}"',
            "X-Repo-Commit": HEX40,
            "X-Xet-Hash": None,  # the real 302 has it; huggingface_hub would then use its Xet client
        },
        {
            "X-Linked-Size": "327212226",
            "X-Linked-Etag": '"496dba118d1a58f5f3db2efc88dbdc216e0483fc89fe6e47ee1f2c53f18ad1e4"',
            "ETag": '"0c0ac263f5ae91312df578d1b6adfb4c6dfda401cc3696ba97042f835619c52f"',
        },
        source="curl -sI https://huggingface.co/hexgrad/Kokoro-82M/resolve/main/kokoro-v1_0.pth (stored page); "
        "Location on cas-bridge.xethub.hf.co/xet-bridge-us/ or us.aws.cdn.hf.co, with X-Amz-Signature",
    ),
    Row(
        "GET {CDN}/xet-bridge-us/...?X-Amz-Signature=... (Range: bytes=0-7)",
        _follow(f"/org/x/resolve/main/{SHARD}", Range="bytes=0-7"),
        206,
        {
            "Content-Range": r"bytes 0-7/\d+",
            "ETag": f'"{HEX64}"',
            "X-Linked-Size": None,
            "X-Linked-Etag": None,
            "X-Repo-Commit": None,
            "RateLimit": None,
        },
        source="hub-dialect.md, Files (wget/curl logs of 2026); datasets issue #7931: Range on cas-bridge",
    ),
    Row(
        "GET /{gated repo}/resolve/main/config.json, no token",
        _get("/org/gated/resolve/main/config.json"),
        401,
        {
            "X-Error-Code": "GatedRepo",
            "X-Error-Message": r"Access to model \S+ is restricted\. You must have access to it and be "
            r"authenticated to access it\. Please log in\.",
            "WWW-Authenticate": r".+",
        },
        {
            "X-Error-Message": "Access to model black-forest-labs/FLUX.1-dev is restricted. You must have "
            "access to it and be authenticated to access it. Please log in."
        },
        source="hub-dialect.md, Errors; the message: ToTheBeginning/PuLID issue #97",
    ),
    Row(
        "GET /{gated repo}/resolve/main/config.json, a token not granted",
        _get("/org/gated/resolve/main/config.json", token="hf_other"),
        403,
        {
            "X-Error-Code": "GatedRepo",
            "X-Error-Message": r"Access to model \S+ is restricted and you are not in the authorized list\. "
            r"Visit \S+ to ask for access\.",
        },
        {
            "X-Error-Message": "Access to model google/gemma-3-4b-pt is restricted and you are not in the "
            "authorized list. Visit https://huggingface.co/google/gemma-3-4b-pt to ask for access."
        },
        source="hub-dialect.md, Errors; the message: ariG23498/gemma3-object-detection issue #5",
    ),
    Row(
        "GET /api/models/{missing repo}, no token",
        _get("/api/models/org/missing"),
        401,
        {"X-Error-Code": None, "X-Error-Message": r"Invalid username or password\."},
        {"X-Error-Message": "Invalid username or password."},
        body={"error": "Invalid username or password."},
        source="hub-dialect.md, Errors (anonymous GETs, 2026-10-02); SkyWorkAIGC/SkyText-Chinese-GPT3 issue #5",
    ),
    Row(
        "GET /api/models/{private repo}, no token",
        _get("/api/models/org/private"),
        401,
        {"X-Error-Code": None, "X-Error-Message": r"Invalid username or password\."},
        {"X-Error-Message": "Invalid username or password."},
        body={"error": "Invalid username or password."},
        source="hub-dialect.md, Errors",
    ),
    Row(
        "GET /api/models/{missing repo}, a token",
        _get("/api/models/org/missing", token=TOKEN),
        404,
        {"X-Error-Code": "RepoNotFound"},
        source="hub-dialect.md, Errors",
    ),
    Row(
        "GET /{repo}/resolve/main/{missing file}",
        _get("/org/x/resolve/main/nope.json"),
        404,
        {"X-Error-Code": "EntryNotFound", "Content-Type": r"text/plain.*", "X-Repo-Commit": HEX40},
        source="hub-dialect.md, Errors",
    ),
    Row(
        "GET /api/models/{disabled repo}",
        _get("/api/models/org/disabled"),
        200,
        {"Content-Type": r"application/json"},
        body={"disabled": True},
        source="hub-dialect.md, Errors",
    ),
    Row(
        "GET /{disabled repo}/resolve/main/config.json",
        _get("/org/disabled/resolve/main/config.json", token=TOKEN),
        401,
        {"X-Error-Code": "GatedRepo"},
        source="hub-dialect.md, Errors",
    ),
    Row(
        "GET /api/models/{old name}",
        _get("/api/models/org/old"),
        307,
        {"Location": r"/api/models/[\w.-]+/[\w.-]+", "Content-Type": r"text/plain; charset=utf-8"},
        {
            "Location": "/api/models/google-bert/bert-base-uncased",
            "Content-Type": "text/plain; charset=utf-8",
        },
        source="huggingface/huggingface_hub tests/cassettes/InferenceApiTest.test_simple_inference.yaml",
    ),
    Row(
        "GET /{old name}/resolve/main/config.json",
        _get("/org/old/resolve/main/config.json"),
        307,
        {"Location": r"/[\w.-]+/[\w.-]+/resolve/main/config\.json"},
        source="hub-dialect.md, Renames (API and resolve routes)",
    ),
    Row(
        "GET /api/models/{repo}/revision/main, budget spent",
        _rate_limited,
        429,
        {
            "RateLimit": r'"api";r=0;t=\d+',
            "RateLimit-Policy": r'"fixed window";"api";q=\d+;w=\d+',
            "Retry-After": None,
        },
        {"RateLimit": '"api";r=0;t=52', "RateLimit-Policy": '"fixed window";"api";q=500;w=300'},
        source="exo-explore/exo src/exo/download/tests/test_rate_limit_handling.py (a real 429, 2026-04-30)",
    ),
    Row(
        "GET /api/models/{repo}/revision/main",
        _get("/api/models/org/x/revision/main"),
        200,
        {"RateLimit": r'"api";r=499;t=\d+', "RateLimit-Policy": r'"fixed window";"api";q=500;w=300'},
        source="hub-docs docs/hub/rate-limits.md: both headers on every answer; anonymous: 500 API calls / 5 min",
    ),
]


@pytest.fixture
def dialect_hub(hub: HubReplica) -> HubReplica:
    hub.add(spec("org/x"))
    hub.add(spec("org/gated", gated=True))
    hub.add(spec("org/private", private=True))
    hub.add(spec("org/disabled"))
    hub.set_access("org/disabled", disabled=True)
    hub.add(spec("org/old"))
    hub.rename("org/old", "org/new")
    return hub


@pytest.mark.parametrize("row", ROWS, ids=[r.route for r in ROWS])
def test_the_replica_answers_as_the_hub_was_recorded(dialect_hub, row):
    with httpx2.Client(follow_redirects=False, timeout=5) as client:
        response = row.ask(dialect_hub, client)
    assert response.status_code == row.status, (response.status_code, response.text[:200])
    for header, shape in row.shapes.items():
        if shape is None:
            assert header not in response.headers, header
            continue
        assert re.fullmatch(shape, response.headers.get(header, "")), (header, response.headers.get(header))
        if header in row.recorded:  # the shape is the real one's
            assert re.fullmatch(shape, row.recorded[header]), (header, row.recorded[header])
    assert set(row.recorded) <= set(row.shapes)
    if row.body is not None:
        assert row.body.items() <= response.json().items()


def test_the_lfs_redirect_leaves_the_endpoints_origin_and_the_cdn_refuses_an_unsigned_url(dialect_hub):
    with httpx2.Client(follow_redirects=False, timeout=5) as client:
        location = _get(f"/org/x/resolve/main/{SHARD}")(dialect_hub, client).headers["Location"]
        assert (
            location.startswith(dialect_hub.cdn_endpoint + "/")
            and dialect_hub.cdn_endpoint != dialect_hub.endpoint
        )
        unsigned = location.replace("X-Amz-Signature=", "X-Amz-Signature=0")
        assert client.get(unsigned).status_code == 403
        assert client.get(location.split("?")[0]).status_code == 403


def test_gated_is_false_auto_or_manual_in_model_info_and_listings(hub):
    hub.add(spec("org/open"))
    hub.add(spec("org/auto", gated="auto"))
    hub.add(spec("org/manual", gated=True))
    with httpx2.Client(timeout=5) as client:
        listed = client.get(f"{hub.endpoint}/api/models", params={"author": "org"}).json()
        info = {
            r: client.get(f"{hub.endpoint}/api/models/{r}").json()["gated"]
            for r in ("org/open", "org/auto", "org/manual")
        }
    assert (
        {m["id"]: m["gated"] for m in listed}
        == info
        == {"org/open": False, "org/auto": "auto", "org/manual": "manual"}
    )


def test_the_budget_is_a_fixed_window_per_client():
    with HubReplica(rate_limits=RateLimits(api=3, window_s=1.5)) as hub, httpx2.Client(timeout=5) as client:
        hub.add(spec("org/x"))
        url = f"{hub.endpoint}/api/models/org/x"
        left = [client.get(url).headers["RateLimit"] for _ in range(3)]
        assert [re.sub(r";t=\d+", "", v) for v in left] == ['"api";r=2', '"api";r=1', '"api";r=0']
        refused = client.get(url)
        assert refused.status_code == 429 and "Retry-After" not in refused.headers
        assert (
            client.get(url, headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
        )  # its own budget
        time.sleep(int(refused.headers["RateLimit"].rsplit("=", 1)[1]))
        assert client.get(url).status_code == 200  # the next window


# -- hubdiff through the redirects ------------------------------------------------------------------------
def snapshot_cli(
    hub: HubReplica, cache: Path, capsys: pytest.CaptureFixture[str], repo: str = "org/x", *extra: str
):
    code = main(
        ["snapshot", repo, "--endpoint", hub.endpoint, "--cache-dir", str(cache), "--retries", "0", *extra]
    )
    out, err = capsys.readouterr()
    return code, out, err


def test_a_cold_and_a_warm_snapshot_through_the_redirects_with_a_token(hub, tmp_path, capsys, monkeypatch):
    """A gated repo, read with the token: every file by its redirect, the token on every request to the
    endpoint and on none to the CDN; warm, one lookup and the same output."""
    hub.add(spec("org/x", shards=3, gated=True))
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    cold = snapshot_cli(hub, tmp_path / "cache", capsys)
    assert cold[0] == 0, cold[2]
    log = hub.log
    statuses = {(e.host, e.status) for e in log}
    assert {("hub", 307), ("hub", 302), ("hub", 200), ("cdn", 206)} <= statuses  # 200: resolve-cache, whole
    cdn = [e for e in log if e.host == "cdn"]
    assert len(cdn) == 3 and all(e.range for e in cdn)  # one range per shard, kept across the redirect
    assert [e.authorization for e in cdn] == [None] * 3
    assert {e.authorization for e in log if e.host == "hub"} == {f"Bearer {TOKEN}"}
    hub.clear()
    assert snapshot_cli(hub, tmp_path / "cache", capsys) == cold
    assert [(e.path, e.status) for e in hub.log] == [("/api/models/org/x/revision/main?expand=sha", 200)]


def test_without_the_token_the_gated_files_are_refused_at_the_first_hop(hub, tmp_path, capsys):
    hub.add(spec("org/x", gated=True))
    code, out, err = snapshot_cli(hub, tmp_path / "cache", capsys)
    sha = hub.repos["org/x"].branches["main"]
    assert (code, out) == (3, "")
    assert (
        err == f"hubdiff: org/x@{sha} config.json: gated repo: accept its terms on the Hub and set HF_TOKEN\n"
    )
    assert not [e for e in hub.log if e.host == "cdn"]


# -- rate limits ------------------------------------------------------------------------------------------
def arrivals(hub: HubReplica) -> list[tuple[float, int, str]]:
    return sorted((e.at, e.status, e.path) for e in hub.log)


def test_a_429_pauses_every_thread_once_for_what_ratelimit_says(hub, tmp_path, capsys):
    """16 shards, every header after the first asked at once; one range answers 429 with t=2: for 2 s no
    thread sends anything, then the refused range is asked again; one pause, not one per thread, and no
    Retry-After needed. (How many of the other ranges were still unsent when the 429 came is timing.)"""
    hub.add(spec("org/x", shards=16))
    hub.add_fault(Fault("model-00004-of-00016", rate_limited=2, times=1))
    start = time.monotonic()
    code, _, err = snapshot_cli(hub, tmp_path / "cache", capsys, "org/x", "--retries", "2")
    took = time.monotonic() - start
    assert code == 0, err
    log = arrivals(hub)
    refused = [at for at, status, _ in log if status == 429]
    assert len(refused) == 1
    during = [p for at, _, p in log if refused[0] + 0.3 < at < refused[0] + 1.9]
    after = [p for at, _, p in log if at >= refused[0] + 1.9]
    assert during == [], during
    assert any("/resolve/" in p and "model-00004-of-00016" in p for p in after)  # asked again after it
    assert 2.0 <= took < 6.0  # waited once
    assert "rate limit" not in err  # within the cap: nothing to say


def test_one_pause_holds_every_repo_of_a_check(hub, tmp_path, capsys):
    """Two repos side by side: one's model info is refused (t=2) while the other's is still coming;
    the other's next request waits out the same pause."""
    for repo in ("org/a", "org/b"):
        hub.add(spec(repo))
    sources = Sources(fast_settings(hub.endpoint), SnapshotCache(tmp_path / "record"))
    entries = {r: entry_for(sources.open(SourceSpec("hub", r, "main"))) for r in ("org/a", "org/b")}
    for entry in entries.values():
        entry["sha"] = "0" * 40  # moved: each is read again
    write_baseline(tmp_path / "fam.yaml", {"family": "fam", "notes": "", "repos": entries})
    hub.clear()
    hub.add_fault(Fault("/api/models/org/a/revision/main", rate_limited=2, times=1))
    hub.add_fault(Fault("/api/models/org/b/revision/main?blobs", delay_s=0.5, times=1))
    code = main(
        ["check", str(tmp_path / "fam.yaml"), "--endpoint", hub.endpoint, "--cache-dir", str(tmp_path / "c")]
    )
    assert code in (0, 1), capsys.readouterr().err
    log = arrivals(hub)
    (refused,) = [at for at, status, _ in log if status == 429]
    b_after_info = [at for at, _, p in log if "org/b" in p and "blobs" not in p]
    assert b_after_info and min(b_after_info) >= refused + 1.9  # org/b answered at 0.5 s, then waited


def test_the_cap_is_said_once_on_stderr(hub, cache, capsys):
    hub.add(spec("org/x", shards=8))
    for shard in (2, 3, 4):  # read side by side, after the first: three threads refused at once
        hub.add_fault(Fault(f"model-0000{shard}-of-00008", rate_limited=290, times=1))
    reader = HubReader(fast_settings(hub.endpoint, max_wait_s=1.0, workers=8), cache)
    start = time.monotonic()
    assert len(reader.snapshot("org/x").tensors) == 8
    assert time.monotonic() - start < 4
    err = capsys.readouterr().err
    assert err == "hubdiff: the Hub's rate limit resets in 290 s; waiting at most 1 s\n"


def test_an_answer_showing_the_budget_nearly_spent_slows_the_requests_down(gate):
    """A budget of 10 calls per 2 s: once a tenth is left the rest of the window is shared among them,
    so 12 lookups go through without a 429; asked as fast as possible, the 11th is refused."""
    with HubReplica(rate_limits=RateLimits(api=10, window_s=2.0)) as hub:
        hub.add(spec("org/x"))
        settings = fast_settings(hub.endpoint)
        start = time.monotonic()
        shas = [quick.current_sha(settings, "org/x", "main") for _ in range(12)]
        took = time.monotonic() - start
        assert len(set(shas)) == 1 and shas[0] is not None
        assert [e.status for e in hub.log] == [200] * 12
        assert took >= 1.0
    with HubReplica(rate_limits=RateLimits(api=10, window_s=2.0)) as hub, httpx2.Client(timeout=5) as client:
        hub.add(spec("org/x"))
        statuses = [client.get(f"{hub.endpoint}/api/models/org/x").status_code for _ in range(11)]
        assert statuses == [200] * 10 + [429]  # the control: the budget is real


def test_retry_after_is_still_honoured(hub, reader):
    hub.add(spec("org/x"))
    hub.add_fault(Fault("/api/models/org/x/revision/main", status=429, retry_after="1", times=1))
    start = time.monotonic()
    assert reader.snapshot("org/x").sha == hub.repos["org/x"].branches["main"]
    assert time.monotonic() - start >= 1.0


# -- refusals, worded alike -------------------------------------------------------------------------------
@pytest.mark.parametrize("how", ["private", "deleted"])
def test_the_bare_401_is_worded_alike_warm_and_cold(hub, tmp_path, capsys, how):
    hub.add(spec("org/x"))
    warm = tmp_path / "warm"
    assert snapshot_cli(hub, warm, capsys)[0] == 0
    if how == "private":
        hub.set_access("org/x", private=True)
    else:
        hub.remove("org/x")
    hub.clear()
    warm_run = snapshot_cli(hub, warm, capsys)
    assert [e.path for e in hub.log] == [
        "/api/models/org/x/revision/main?expand=sha"
    ]  # the warm lookup said it
    cold_run = snapshot_cli(hub, tmp_path / "cold", capsys)
    assert (
        warm_run
        == cold_run
        == (3, "", "hubdiff: org/x@main: repository not found (or private: set HF_TOKEN)\n")
    )
    assert {e.status for e in hub.log} == {401}


def test_a_token_refused_outright_is_not_a_missing_repo(hub, tmp_path, capsys, monkeypatch):
    """With a token the Hub says RepoNotFound for a missing repo; a bare 401 then means the token."""
    hub.add(spec("org/x"))
    hub.add_fault(Fault("/api/models/org/x/revision/main", status=401))
    monkeypatch.setenv("HF_TOKEN", "hf_revoked")
    code, _, err = snapshot_cli(hub, tmp_path / "cache", capsys)
    assert (code, err) == (3, "hubdiff: org/x@main: access denied (set HF_TOKEN)\n")


def test_a_disabled_repo_has_its_own_word(hub, tmp_path, capsys):
    hub.add(spec("org/x"))
    sources = Sources(fast_settings(hub.endpoint), SnapshotCache(tmp_path / "record"))
    entry = entry_for(sources.open(SourceSpec("hub", "org/x", "main")))
    write_baseline(tmp_path / "fam.yaml", {"family": "fam", "notes": "", "repos": {"org/x": entry}})
    hub.set_access("org/x", disabled=True)
    hub.clear()
    assert snapshot_cli(hub, tmp_path / "cache", capsys) == (
        3,
        "",
        "hubdiff: org/x@main: disabled on the Hub\n",
    )
    assert [e.path.split("?")[0] for e in hub.log] == ["/api/models/org/x/revision/main"]  # no file asked for
    code = main(
        [
            "check",
            str(tmp_path / "fam.yaml"),
            "--endpoint",
            hub.endpoint,
            "--cache-dir",
            str(tmp_path / "c"),
            "--format",
            "text",
        ]
    )
    out = capsys.readouterr().out
    assert code == 3 and "org/x@main: disabled on the Hub" in out


# -- renames in watch -------------------------------------------------------------------------------------
def watch(tmp_path: Path, hub: HubReplica, *extra: str) -> tuple[int, str]:
    code = main(
        [
            "watch",
            "--baseline-dir",
            str(tmp_path / "baselines"),
            "--output-dir",
            str(tmp_path / "reports"),
            "--endpoint",
            hub.endpoint,
            "--cache-dir",
            str(tmp_path / "cache"),
            "--retries",
            "0",
            *extra,
        ]
    )
    return code, (tmp_path / "reports" / "fam.md").read_text() if (
        tmp_path / "reports" / "fam.md"
    ).exists() else ""


def test_a_renamed_pin_is_reported_re_pinned_with_update_and_never_a_new_release(hub, tmp_path, capsys):
    hub.add(spec("org/old"))
    hub.add(spec("org/keep", hidden=16))
    sources = Sources(fast_settings(hub.endpoint), SnapshotCache(tmp_path / "record"))
    entries = {r: entry_for(sources.open(SourceSpec("hub", r, "main"))) for r in ("org/old", "org/keep")}
    entries["org/old"]["notes"] = "the one that moves"
    path = tmp_path / "baselines" / "fam.yaml"
    path.parent.mkdir()
    rules = [{"owner": "org", "match": "*", "reference": "org/old"}]  # the rule takes the new name too
    write_baseline(path, {"family": "fam", "notes": "", "repos": entries, "discover": rules})
    hub.rename("org/old", "org/new")
    moved = hub.push("org/new", spec("org/new", hidden=12).commits[0])

    code, report = watch(tmp_path, hub)
    out = capsys.readouterr().out
    assert code == 1
    assert "org/old@main: renamed: org/old → org/new." in report
    assert "New release" not in report and "org/new@" not in report  # the pin's new name is not a release
    assert "1 renamed" in out and "new release" not in out and "1 changed" in out
    assert yaml.safe_load(path.read_text())["repos"].keys() == {"org/old", "org/keep"}  # nothing written

    code, _ = watch(tmp_path, hub, "--update")
    assert code == 0, capsys.readouterr()
    data = yaml.safe_load(path.read_text())
    assert list(data["repos"]) == ["org/new", "org/keep"]  # re-pinned in its place
    assert (
        data["repos"]["org/new"]["sha"] == moved and data["repos"]["org/new"]["notes"] == "the one that moves"
    )
    assert data["discover"][0]["reference"] == "org/new"
    capsys.readouterr()

    code, _ = watch(tmp_path, hub)
    out = capsys.readouterr().out
    assert (
        code == 0
        and "2 repos checked, 0 changed" in out
        and "renamed" not in out
        and "new release" not in out
    )


def test_a_pin_of_another_shard_renamed_is_not_a_new_release_here(hub, tmp_path):
    """Family "a" pins org/old; family "b" discovers org/*. Run as b's shard only, org/new is a's pin
    renamed, found by asking for org/old once, and not proposed."""
    from hubdiff.watch import in_shard, run_watch

    hub.add(spec("org/old"))
    hub.add(spec("other/seed"))
    sources = Sources(fast_settings(hub.endpoint), SnapshotCache(tmp_path / "record"))
    families = {"a": "org/old", "b": "other/seed"}
    paths = []
    for family, repo in families.items():
        data: dict[str, Any] = {
            "family": family,
            "notes": "",
            "repos": {repo: entry_for(sources.open(SourceSpec("hub", repo, "main")))},
        }
        if family == "b":
            data["discover"] = [{"owner": "org", "match": "*"}]
        write_baseline(tmp_path / f"{family}.yaml", data)
        paths.append(tmp_path / f"{family}.yaml")
    shard = next(
        (i, n) for n in range(2, 16) for i in range(n) if in_shard("b", (i, n)) and not in_shard("a", (i, n))
    )
    hub.rename("org/old", "org/new")
    hub.add(spec("org/fresh", hidden=16))
    outcome = run_watch(paths, sources, shard=shard, output_dir=tmp_path / "reports")
    titles = [r.title.split("@")[0] for r in outcome.results.get("b", [])]
    assert titles == ["org/fresh"]  # a new release indeed; org/new is not one


# -- HF_HUB_OFFLINE ---------------------------------------------------------------------------------------
def hubdiff(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hubdiff", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_hf_hub_offline_means_offline(hub, tmp_path, capsys):
    hub.add(spec("org/x"))
    cache = tmp_path / "cache"
    online = snapshot_cli(hub, cache, capsys)
    hub.clear()
    offline = hubdiff(
        "snapshot", "org/x", "--endpoint", hub.endpoint, "--cache-dir", str(cache), HF_HUB_OFFLINE="1"
    )
    assert (offline.returncode, offline.stdout, offline.stderr) == (0, online[1], "")
    assert hub.log == []
    cold = hubdiff(
        "snapshot",
        "org/x",
        "--endpoint",
        hub.endpoint,
        "--cache-dir",
        str(tmp_path / "none"),
        HF_HUB_OFFLINE="1",
    )
    assert cold.returncode == 3 and cold.stderr.startswith("hubdiff: org/x@main: offline: no cached sha")
    assert cold.stderr.count("\n") == 1 and "internal error" not in cold.stderr
    assert hub.log == []


def test_watch_refuses_hf_hub_offline(hub, tmp_path, capsys, monkeypatch):
    hub.add(spec("org/x"))
    sources = Sources(fast_settings(hub.endpoint), SnapshotCache(tmp_path / "record"))
    (tmp_path / "baselines").mkdir()
    write_baseline(
        tmp_path / "baselines" / "fam.yaml",
        {
            "family": "fam",
            "notes": "",
            "repos": {"org/x": entry_for(sources.open(SourceSpec("hub", "org/x", "main")))},
        },
    )
    hub.clear()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    code, _ = watch(tmp_path, hub)
    assert code == 2
    assert (
        capsys.readouterr().err
        == "hubdiff: hubdiff watch asks the Hub: not with --offline (or HF_HUB_OFFLINE)\n"
    )
    assert hub.log == []


@pytest.mark.parametrize("command", ["snapshot", "refs", "diff"])
def test_huggingface_hubs_own_offline_mode_is_never_an_internal_error(
    hub, tmp_path, capsys, monkeypatch, command
):
    """huggingface_hub read HF_HUB_OFFLINE when it was imported; set there but not in hubdiff's view of
    the environment, every request it would send raises OfflineModeIsEnabled: one line, exit 3."""
    import huggingface_hub.constants

    hub.add(spec("org/x"))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    args = {"snapshot": ["org/x"], "refs": ["org/x"], "diff": ["org/x", "org/x@main"]}[command]
    code = main(
        [command, *args, "--endpoint", hub.endpoint, "--cache-dir", str(tmp_path / "c"), "--retries", "0"]
    )
    err = capsys.readouterr().err
    assert code == 3 and err.count("\n") == 1 and "internal error" not in err
    assert "HF_HUB_OFFLINE is set: no request is made" in err
    assert hub.log == []


def test_threads_share_the_gate(gate):
    """The unit under the end-to-end tests: a pause set by one thread holds another's next request."""
    gate.pause(0.6, cap_s=10)
    released: list[float] = []
    start = time.monotonic()
    threads = [
        threading.Thread(
            target=lambda: (gate.wait("http://h/api/models/a"), released.append(time.monotonic()))
        )
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(released) == 4 and all(0.55 <= at - start < 1.5 for at in released)
