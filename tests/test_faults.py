"""The fault matrix: every kind of request hubdiff makes x every way the Hub can fail, over the replica.

Each cell says what must happen: ``ok`` (retried or tolerated, and the snapshot is the clean one) or
the one line that names repo, revision (the sha once known) and file. Request counts are checked
where they prove a policy: one retry policy (exactly ``retries + 1`` attempts), no page fetched twice,
no request to another host, a huge error body never read.
"""

from __future__ import annotations

import json
import struct
import time
from pathlib import Path

import pytest

from hubdiff._source import hub as hub_module
from hubdiff._source import hub_http
from hubdiff._source.hub import HubReader, ListedRepo
from hubdiff.cli import main
from hubdiff.errors import SourceError
from hubdiff.testing import CommitSpec, Fault, HubReplica, RepoSpec

from .conftest import fast_settings

TIMEOUT = 0.5
RETRIES = 2
CONFIG = {"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10}
TENSORS = [(f"model.layers.{i}.w", "F32", (2, 2)) for i in range(4)]
SHARD = "model-00001-of-00002.safetensors"

# request kind -> the part of the request path that selects it
KINDS = {
    "model info": "/api/models/org/x/revision/",
    "config": "/config.json",
    "generation config": "/generation_config.json",
    "index": "/model.safetensors.index.json",
    "shard ranges": f"/{SHARD}",
    "listing": "/api/models?",
}
FILE_OF = {
    "model info": None,
    "config": "config.json",
    "generation config": "generation_config.json",
    "index": "model.safetensors.index.json",
    "shard ranges": SHARD,
    "listing": "model listing",
}
ATTEMPTS = f"after {RETRIES + 1} attempts"


def _header(entries: object, length: int | None = None) -> bytes:
    raw = json.dumps(entries).encode()
    return struct.pack("<Q", len(raw) if length is None else length) + raw


# fault -> (Fault arguments, expected outcome per kind; "*" for every kind not named)
FAULTS: dict[str, tuple[dict, dict[str, str]]] = {
    "500 once": ({"status": 500, "times": 1}, {"*": "ok"}),
    "500 always": ({"status": 500}, {"*": f"HTTP 500 {ATTEMPTS}"}),
    "503 Retry-After once": ({"status": 503, "retry_after": "0", "times": 1}, {"*": "ok"}),
    "429 Retry-After once": ({"status": 429, "retry_after": "0.1", "times": 1}, {"*": "ok"}),
    "reset once": ({"reset": True, "times": 1}, {"*": "ok"}),
    "reset always": ({"reset": True}, {"*": f"connection failed (RemoteProtocolError) {ATTEMPTS}"}),
    "truncated body once": ({"truncate_to": 3, "times": 1}, {"*": "ok"}),
    "stall past the timeout once": ({"delay_s": TIMEOUT + 0.4, "times": 1}, {"*": "ok"}),
    "stall past the timeout always": (
        {"delay_s": TIMEOUT + 0.4},
        {"*": f"no answer within {TIMEOUT:g} s {ATTEMPTS}"},
    ),
    "404": ({"status": 404}, {"*": "HTTP 404"}),
    "401": ({"status": 401}, {"*": "access denied (set HF_TOKEN)"}),
    "403": ({"status": 403}, {"*": "access denied (set HF_TOKEN)"}),
    "huge error body": ({"status": 500, "body_size": 1_000_000_000}, {"*": f"HTTP 500 {ATTEMPTS}"}),
    "malformed JSON": (
        {"body": b'{"oops'},
        {
            "model info": "model info not JSON",
            "listing": "not JSON",
            "shard ranges": "file too short for a safetensors header (6 bytes)",
            "*": "not JSON",
        },
    ),
    "malformed header JSON": (
        {"body": struct.pack("<Q", 5) + b"{oops"},
        {"shard ranges": "header is not JSON"},
    ),
    "wrong field types": (
        {},  # per kind, below
        {
            "model info": "model info has siblings of the wrong type (int)",
            "config": "num_hidden_layers is a string, not a whole number",
            "generation config": "JSON but not an object (list)",
            "index": "no weight_map object",
            "shard ranges": "tensor 'a' has no dtype",
            "listing": "not a list (dict)",
        },
    ),
    "listing items not objects": ({"body": b"[1, 2]"}, {"listing": "item 0 is not an object"}),
    "206 with the wrong range": (
        {"range_shift": 5},
        {"shard ranges": f"range starts at 5, asked for 0 {ATTEMPTS}"},
    ),
    "header length of 1 TB": (
        {"body": _header({}, length=10**12)},
        {"shard ranges": "header claims 1,000,000,000,000 bytes (limit 100,000,000)"},
    ),
    "self-referencing pagination": ({"link": "self"}, {"listing": "next-page link repeats a page"}),
    "off-host pagination": ({"link": "OTHER"}, {"listing": "next-page link leaves the endpoint's listing"}),
}
WRONG_TYPES = {
    "model info": None,  # built from the real sha in the test
    "config": json.dumps({**CONFIG, "num_hidden_layers": "2"}).encode(),
    "generation config": b"[1]",
    "index": b'{"weight_map": [1]}',
    "shard ranges": _header({"a": {"dtype": 5, "shape": [1], "data_offsets": [0, 4]}}),
    "listing": b'{"models": []}',
}
CELLS = [
    (kind, fault, expected.get(kind, expected.get("*")))
    for fault, (_, expected) in FAULTS.items()
    for kind in KINDS
    if kind in expected or "*" in expected
]


def _repo(hub: HubReplica) -> str:
    files = {"config.json": json.dumps(CONFIG).encode(), "generation_config.json": b'{"top_k": 5}'}
    return hub.add(RepoSpec("org/x", [CommitSpec(files, TENSORS, shards=2)]))[0]


@pytest.mark.parametrize(("kind", "fault", "expected"), CELLS, ids=[f"{k}-{f}" for k, f, _ in CELLS])
def test_fault_cell(hub, cache, kind, fault, expected):
    sha = _repo(hub)
    arguments = dict(FAULTS[fault][0])
    if fault == "wrong field types":
        arguments["body"] = WRONG_TYPES[kind] or json.dumps({"sha": sha, "siblings": 5}).encode()
    other = HubReplica(tokens=frozenset({"hf_secret"})).start() if fault == "off-host pagination" else None
    if other is not None:
        arguments["link"] = f"{other.endpoint}/api/models?author=org&cursor=1"
    hub.add_fault(Fault(KINDS[kind], **arguments))
    reader = HubReader(
        fast_settings(hub.endpoint, timeout_s=TIMEOUT, retries=RETRIES, token="hf_secret"), cache
    )
    start = time.monotonic()
    try:
        outcome = reader.listing("org") if kind == "listing" else reader.snapshot("org/x")
    except SourceError as exc:
        outcome = exc
    took = time.monotonic() - start
    requests = [e for e in hub.log if KINDS[kind] in e.path]
    if other is not None:
        assert other.log == [], "a request (with the token) went to another host"
        other.stop()
    if expected == "ok":
        if kind == "listing":
            assert outcome == {"org/x": ListedRepo(sha)}
        else:
            assert not isinstance(outcome, Exception), outcome
            assert len(outcome.tensors) == 4 and outcome.config == CONFIG and outcome.sha == sha
        return
    assert isinstance(outcome, SourceError), f"expected {expected!r}, got {outcome!r}"
    line = outcome.line()
    assert expected in line and "\n" not in line
    where = (
        "hubdiff: org" if kind == "listing" else f"hubdiff: org/x@{'main' if kind == 'model info' else sha}"
    )
    assert line.startswith(where), line
    if FILE_OF[kind]:
        assert f" {FILE_OF[kind]}: " in line, line
    if ATTEMPTS in expected:  # hubdiff's retries only: no library retries on top
        assert len(requests) == RETRIES + 1, requests
    if fault == "huge error body":
        assert all(e.bytes_sent < 64_000_000 for e in requests), requests
    if fault == "self-referencing pagination":
        assert len(requests) == 1
    assert took < 15


def test_listing_pages_are_bounded(hub, cache, monkeypatch):
    hub.page_size = 1
    for i in range(5):
        hub.add(RepoSpec(f"org/m{i}", [CommitSpec({"config.json": b"{}"}, TENSORS)]))
    reader = HubReader(fast_settings(hub.endpoint), cache)
    assert len(reader.listing("org")) == 5
    monkeypatch.setattr(hub_module, "MAX_LISTING_PAGES", 3)  # hubdiff's own bound, made small
    with pytest.raises(SourceError, match=r"org model listing: more than 3 pages"):
        reader.listing("org")


def test_a_trickling_body_is_abandoned_at_the_deadline(hub, cache, monkeypatch):
    """Each read arrives within the timeout, the whole body never does: the attempt has a deadline."""
    sha = _repo(hub)
    monkeypatch.setattr(hub_http, "DEADLINE_TIMEOUTS", 2)
    hub.add_fault(Fault("/config.json", trickle_s=0.2))
    reader = HubReader(fast_settings(hub.endpoint, timeout_s=TIMEOUT, retries=1), cache)
    start = time.monotonic()
    with pytest.raises(SourceError) as info:
        reader.snapshot("org/x")
    assert info.value.line() == (
        f"hubdiff: org/x@{sha} config.json: body still arriving after 2 x the timeout after 2 attempts"
    )
    assert time.monotonic() - start < 2 * (2 * TIMEOUT + 0.5)


def test_watch_survives_a_hostile_listing_and_never_sends_the_token_elsewhere(
    hub, tmp_path, capsys, monkeypatch
):
    """End to end: the listing links off-host; watch falls back to one request per repo and goes on."""
    from .test_watch import record, small, sources_for

    hub.add(small("org/a"))
    record(tmp_path / "b" / "fam.yaml", "fam", ["org/a"], sources_for(hub, tmp_path))
    with HubReplica() as other:
        hub.add_fault(Fault("/api/models?", link=f"{other.endpoint}/api/models?author=org&cursor=1"))
        monkeypatch.setenv("HF_TOKEN", "hf_reader")
        code = main(
            [
                "watch",
                "--baseline-dir",
                str(tmp_path / "b"),
                "--output-dir",
                str(tmp_path / "r"),
                "--endpoint",
                hub.endpoint,
                "--cache-dir",
                str(tmp_path / "c"),
                "--retries",
                "0",
            ]
        )
        assert other.log == []
    out = capsys.readouterr().out
    assert code == 0 and "1 repos checked, 0 changed" in out


def test_a_redirect_loop_is_one_line_and_not_retried(hub, cache):
    _repo(hub)
    hub.add_fault(
        Fault(
            "/api/models/org/x/revision/", status=302, headers={"Location": "/api/models/org/x/revision/main"}
        )
    )
    reader = HubReader(fast_settings(hub.endpoint), cache)
    with pytest.raises(SourceError) as info:
        reader.snapshot("org/x")
    assert info.value.line() == "hubdiff: org/x@main: request failed (TooManyRedirects)"
    assert len(hub.log) == 21  # httpx's 20 redirects, once: no retry on top


def test_readme_states_the_figures():
    readme = (Path(__file__).parents[1] / "docs" / "reliability.md").read_text()
    assert f"{len(KINDS)} request kinds" in readme and f"{len(FAULTS)} faults" in readme
    assert f"{len(CELLS)} cells" in readme
