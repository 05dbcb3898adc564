"""One outbound policy for both clients: the token only to the endpoint's origin, one deadline per attempt.

The main path (huggingface_hub's httpx session) and the warm lookup (the standard library) are tried
with the same redirects and the same trickling server. "Another origin" is a second replica on another
loopback port holding the same repo (so the same shas), which logs the Authorization it receives.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hubdiff._source import hub_http, quick
from hubdiff._source.hub import HubReader
from hubdiff._source.outbound import same_origin
from hubdiff.cli import main
from hubdiff.errors import SourceError
from hubdiff.testing import CommitSpec, Fault, HubReplica, RepoSpec

from .conftest import fast_settings
from .test_fuzz import FUZZ

TOKEN = "hf_reader"
CONFIG = b'{"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10}'
TENSORS = [(f"model.layers.{i}.w", "F32", (2, 2)) for i in range(4)]
SHARD = "model-00001-of-00002.safetensors"
WARM = "/api/models/org/x/revision/main?expand=sha"  # the warm lookup's one request
INFO = "/api/models/org/x/revision/main?blobs=True"  # the main path's model info
CODES = [301, 302, 307, 308]


def spec(repo_id: str = "org/x", private: bool = False) -> RepoSpec:
    return RepoSpec(repo_id, [CommitSpec({"config.json": CONFIG}, TENSORS, shards=2)], private=private)


@pytest.fixture
def other() -> Iterator[HubReplica]:
    """Another origin: the same repo on another port, as a CDN would hold it."""
    with HubReplica(tokens=frozenset({TOKEN})) as replica:
        yield replica


def redirect_away(hub: HubReplica, other: HubReplica, path: str, code: int) -> None:
    """``path`` on the endpoint answers ``code`` to the same path on the other origin."""
    hub.add_fault(Fault(path, status=code, headers={"Location": f"{other.endpoint}{path}"}))


def tokens_seen(replica: HubReplica) -> list[str]:
    return [e.authorization for e in replica.log if e.authorization is not None]


def run(
    capsys: pytest.CaptureFixture[str], hub: HubReplica, cache: Path, *extra: str
) -> tuple[int, str, str]:
    code = main(["snapshot", *extra, "--endpoint", hub.endpoint, "--cache-dir", str(cache), "--retries", "0"])
    out, err = capsys.readouterr()
    return code, out, err


# -- the origin rule ---------------------------------------------------------------------------------
E = "http://127.0.0.1:8000"


@pytest.mark.parametrize(
    ("url", "same"),
    [
        (f"{E}/api/models/a/b", True),
        ("http://127.0.0.1:8000", True),
        ("HTTP://127.0.0.1:8000/x", True),  # scheme and host are not case-sensitive
        ("http://hub.example/x", False),
        ("http://127.0.0.1:8001/x", False),  # another port
        ("https://127.0.0.1:8000/x", False),  # another scheme, same host and port
        ("http://127.0.0.1/x", False),  # port 80
        ("http://127.0.0.1:8000@evil.example/x", False),  # userinfo: the host is evil.example
        ("http://evil@127.0.0.1:8000/x", False),  # userinfo: parsers disagree, so never trusted
        ("http://127.0.0.1:8000\\@evil.example/x", False),
        ("http://127.0.0.1%3A8000/x", False),
        ("http://127.0.0.1:8000:8001/x", False),
        ("http://127.0.0.1:80000/x", False),  # no such port
        ("ftp://127.0.0.1:8000/x", False),
        ("/api/models/a/b", False),  # relative: resolved against the request before it is asked
        ("", False),
    ],
)
def test_the_token_goes_only_to_the_endpoints_scheme_host_and_port(url, same):
    assert same_origin(url, E) is same


def test_default_ports_are_the_same_origin_written_or_not():
    assert same_origin("https://hub.example:443/x", "https://hub.example")
    assert same_origin("http://HUB.example/x", "http://hub.example:80")
    assert not same_origin("http://hub.example/x", "https://hub.example")


# -- redirects, end to end -------------------------------------------------------------------------------
@pytest.mark.parametrize("code", CODES)
def test_redirects_to_another_origin_never_carry_the_token(hub, other, tmp_path, capsys, monkeypatch, code):
    """Cold run (main path) then warm run (the standard-library lookup), every kind of read redirected
    away: the other origin serves them, and never sees the token; the output is the clean one."""
    sha = hub.add(spec())[0]
    other.add(spec())
    clean = run(capsys, hub, tmp_path / "clean", "org/x")
    assert clean[0] == 0, clean[2]
    hub.clear()
    shard = f"/org/x/resolve/{sha}/{SHARD}"
    for path in (INFO, f"/org/x/resolve/{sha}/config.json", shard, WARM):
        redirect_away(hub, other, path, code)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    cache = tmp_path / "cache"

    assert run(capsys, hub, cache, "org/x") == clean
    followed = {e.path for e in other.log}
    assert {INFO, f"/org/x/resolve/{sha}/config.json", shard} <= followed  # so the redirects were followed
    assert all(e.range for e in other.log if e.path == shard)  # Range kept across the redirect
    assert [e.authorization for e in hub.log if e.path == INFO] == [f"Bearer {TOKEN}"]
    assert tokens_seen(other) == []

    other.clear()
    hub.clear()
    assert run(capsys, hub, cache, "org/x") == clean  # warm: the lookup declines, the main path reads
    assert WARM in [e.path for e in hub.log]
    assert tokens_seen(other) == []


def test_a_renamed_repo_is_followed_with_the_token_on_both_paths(hub, tmp_path, capsys, monkeypatch):
    """The Hub's rename answer (307, relative, same host): a private repo is read through it cold and warm."""
    hub.add(spec("org/x", private=True))
    hub.rename("org/x", "org/y")
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    cache = tmp_path / "cache"
    cold = run(capsys, hub, cache, "org/x")
    assert cold[0] == 0, cold[2]
    on_the_hub = [e for e in hub.log if e.host == "hub"]  # the CDN, another origin, is never sent it
    assert 307 in [e.status for e in on_the_hub] and None not in [e.authorization for e in on_the_hub]
    hub.clear()
    assert run(capsys, hub, cache, "org/x") == cold
    assert [(e.path, e.status) for e in hub.log] == [
        (WARM, 307),
        ("/api/models/org/y/revision/main?expand=sha", 200),  # private: answered only to the token
    ]


def test_without_the_token_the_renamed_private_repo_is_refused(hub, tmp_path, capsys):
    """The control: what the token bought above is real (the replica refuses a private repo without it)."""
    hub.add(spec("org/x", private=True))
    hub.rename("org/x", "org/y")
    code, out, err = run(capsys, hub, tmp_path / "cache", "org/x")
    assert (code, out) == (3, "") and err.count("\n") == 1 and "repository not found" in err


# -- hostile Locations, as a shape -----------------------------------------------------------------------
# {o}: the other origin's port, {h}: the endpoint's; each names the other origin in some spelling, or is
# a URL parsers read differently
AWAY = [
    "http://127.0.0.1:{o}{p}",
    "//127.0.0.1:{o}{p}",
    "HTTP://127.0.0.1:{o}{p}",
    "http://127.0.0.1:{h}@127.0.0.1:{o}{p}",
    "http://user:pass@127.0.0.1:{o}{p}",
    "http://localhost:{o}{p}",
    "http://127.1:{o}{p}",
    "http://0x7f000001:{o}{p}",
    "http://127.0.0.1.:{o}{p}",
    "http://127.0.0.1:0{o}{p}",
    "http://127.0.0.1:{o}\\@127.0.0.1:{h}{p}",
    "http://127.0.0.1:{o}#@127.0.0.1:{h}{p}",
    "http://127.0.0.1:{o}?@127.0.0.1:{h}{p}",
    "http://127.0.0.1:{h}:{o}{p}",
    "http://127.0.0.1:{o}/..{p}",
]


@settings(max_examples=30, **FUZZ)
@given(
    form=st.sampled_from(AWAY),
    code=st.sampled_from([*CODES, 303]),
    kind=st.sampled_from(["info", "config", "shard", "warm"]),
)
def test_no_spelling_of_another_origin_gets_the_token(form, code, kind):
    with HubReplica(tokens=frozenset({TOKEN})) as hub, HubReplica(tokens=frozenset({TOKEN})) as other:
        sha = hub.add(spec())[0]
        other.add(spec())
        path = {
            "info": INFO,
            "config": f"/org/x/resolve/{sha}/config.json",
            "shard": f"/org/x/resolve/{sha}/{SHARD}",
            "warm": WARM,
        }[kind]
        o, h = other.endpoint.rsplit(":", 1)[1], hub.endpoint.rsplit(":", 1)[1]
        hub.add_fault(Fault(path, status=code, headers={"Location": form.format(o=o, h=h, p=path)}))
        settings_ = fast_settings(hub.endpoint, token=TOKEN, retries=0, timeout_s=1.0)
        if kind == "warm":
            assert quick.current_sha(settings_, "org/x", "main") in (None, sha)
        else:
            try:
                assert HubReader(settings_).snapshot("org/x").sha == sha
            except SourceError as exc:
                assert "\n" not in exc.line()
        assert tokens_seen(other) == []


def test_the_warm_lookup_declines_a_redirect_to_another_origin(hub, other):
    """It does not follow at all (the main path will, without the token): nothing reaches the other origin."""
    sha = hub.add(spec())[0]
    other.add(spec())
    redirect_away(hub, other, WARM, 302)
    assert quick.current_sha(fast_settings(hub.endpoint, token=TOKEN), "org/x", "main") is None
    assert other.log == []
    hub.clear_faults()
    assert quick.current_sha(fast_settings(hub.endpoint, token=TOKEN), "org/x", "main") == sha


# -- deadlines -------------------------------------------------------------------------------------
TIMEOUT = 0.5
DEADLINE = 2 * TIMEOUT  # DEADLINE_TIMEOUTS made 2 below, so that the tests take a second, not ten
TRICKLE = {"trickle_s": 0.1, "trickle_bytes": 1}  # every read well within the timeout; the whole, never


@pytest.fixture
def short_deadline(monkeypatch):
    monkeypatch.setattr(quick, "DEADLINE_TIMEOUTS", 2)
    monkeypatch.setattr(hub_http, "DEADLINE_TIMEOUTS", 2)


@pytest.mark.parametrize("head", [True, False], ids=["headers", "body"])
def test_a_trickling_warm_lookup_is_abandoned_and_the_run_reads_as_usual(
    hub, tmp_path, capsys, short_deadline, head
):
    hub.add(spec())
    cache = tmp_path / "cache"
    cold = run(capsys, hub, cache, "org/x", "--timeout", str(TIMEOUT))
    assert cold[0] == 0, cold[2]
    hub.clear()
    hub.add_fault(Fault(WARM, trickle_head=head, times=1, **TRICKLE))  # 20 s or more to send
    start = time.monotonic()
    assert run(capsys, hub, cache, "org/x", "--timeout", str(TIMEOUT)) == cold
    assert time.monotonic() - start < DEADLINE + 3  # the deadline, then the ordinary path's reads
    assert sorted(e.path for e in hub.log) == [INFO, WARM]  # abandoned, then the ordinary path


@pytest.mark.parametrize("head", [True, False], ids=["headers", "body"])
def test_a_server_that_always_trickles_is_one_line_and_exit_3(hub, tmp_path, capsys, short_deadline, head):
    """Both paths trickled (warm lookup, then the model info): each attempt ends at its deadline."""
    hub.add(spec())
    cache = tmp_path / "cache"
    assert run(capsys, hub, cache, "org/x", "--timeout", str(TIMEOUT))[0] == 0
    hub.add_fault(Fault("/api/models/org/x/revision/main", trickle_head=head, **TRICKLE))
    start = time.monotonic()
    code, out, err = run(capsys, hub, cache, "org/x", "--timeout", str(TIMEOUT))
    elapsed = time.monotonic() - start
    part = "headers" if head else "body"
    assert (code, out) == (3, "")
    assert err == f"hubdiff: org/x@main: {part} still arriving after 2 x the timeout after 1 attempts\n"
    assert elapsed < 2 * DEADLINE + 2


def test_the_main_path_abandons_trickling_headers_at_the_deadline(hub, cache, short_deadline):
    """Headers trickled on a kept-alive connection too (the model info's one, reused for config.json)."""
    sha = hub.add(spec())[0]
    hub.add_fault(Fault(f"/org/x/resolve/{sha}/config.json", trickle_head=True, **TRICKLE))
    reader = HubReader(fast_settings(hub.endpoint, timeout_s=TIMEOUT, retries=1), cache)
    start = time.monotonic()
    with pytest.raises(SourceError) as info:
        reader.snapshot("org/x")
    assert info.value.line() == (
        f"hubdiff: org/x@{sha} config.json: headers still arriving after 2 x the timeout after 2 attempts"
    )
    assert time.monotonic() - start < 2 * DEADLINE + 1.5


def test_the_suite_reaches_only_loopback():
    """conftest refuses every connection off the loopback interface, so that no host a test names
    (the gh double's PR urls, a Hub web URL to parse, a recording's source) is ever reached."""
    import socket

    with pytest.raises(OSError, match="loopback"):
        socket.create_connection(("203.0.113.7", 443), timeout=1)  # TEST-NET-3: never routed either
