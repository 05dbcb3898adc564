"""Round trips in sequence, counted on the replica: what a read waits for, not how long.

The replica's ``rounds_s`` holds each request until none has arrived for a while, then answers all it
holds together (``HubReplica._hold``): requests that do not wait for each other share a round, and the
last round's number is the count of round trips a read made one after another. Every figure is worked
out from the Hub's own routes: model info is one request; a small file is a ``resolve`` and its 307 to
``resolve-cache``; a header is a ``resolve`` and its 302 to the CDN.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator

import pytest

from hubdiff._source import Sources, hub_http, quick
from hubdiff._source import hub as hub_module
from hubdiff._source.cache import SnapshotCache
from hubdiff._source.hub import HubReader, streams, streams_for_latency
from hubdiff._source.outbound import RateGate, bucket_of
from hubdiff.errors import SourceError
from hubdiff.testing import CommitSpec, Fault, HubReplica, RepoSpec
from hubdiff.testing.replica import RateLimits

from .conftest import fast_settings

ROUND_S = 0.2  # a round ends once no request came for this long: far above the gaps within one
SHARDS = 30
CONFIG = {"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10}
# the floor of a read of many shards: model info (1); the index (resolve + resolve-cache: 2) and, beside
# it, the first header, which sizes every other range with the index's names (resolve + CDN: 2, its
# range guessed from the index's size in the listing); every other header at once (2). The config, the
# generation config and the Hub's count wait for nothing but model info, so they ride in the same rounds.
FLOOR = 1 + 2 + 2


@pytest.fixture(autouse=True)
def gate(monkeypatch: pytest.MonkeyPatch) -> RateGate:
    """A rate-limit gate of this test's own: what another test's replica said is left is not this one's."""
    fresh = RateGate()
    monkeypatch.setattr(hub_module, "GATE", fresh)
    monkeypatch.setattr(hub_http, "GATE", fresh)
    monkeypatch.setattr(quick, "GATE", fresh)
    return fresh


def replica(limits: RateLimits | None = None) -> HubReplica:
    tensors = [(f"model.layers.{i}.mlp.w{j}", "BF16", (8, 4)) for i in range(SHARDS) for j in range(3)]
    files = {
        "config.json": json.dumps(CONFIG).encode(),
        "generation_config.json": json.dumps({"max_length": 32}).encode(),
    }
    hub = HubReplica(rounds_s=ROUND_S, rate_limits=limits)
    hub.start()
    hub.add(RepoSpec("org/many", [CommitSpec(files, tensors, shards=SHARDS)]))
    return hub


@pytest.fixture
def many() -> Iterator[HubReplica]:
    hub = replica()
    yield hub
    hub.stop()


def test_a_cold_read_of_many_shards_is_the_round_trip_floor(many, tmp_path):
    reader = HubReader(fast_settings(many.endpoint, workers=64), SnapshotCache(tmp_path))
    snapshot = reader.snapshot("org/many")
    assert len(snapshot.shards) == SHARDS and len(snapshot.tensors) == SHARDS * 3
    log = many.log
    # nothing asked twice, nothing extra: model info, the Hub's count, three small files of two hops
    # each, and two hops a shard
    assert len(log) == 1 + 1 + 3 * 2 + SHARDS * 2
    assert max(e.round for e in log) == FLOOR
    rounds = Counter(e.round for e in log)
    # every header after the first goes out in one round, and its CDN hop in the next
    assert rounds[FLOOR - 1] == rounds[FLOOR] == SHARDS - 1
    small = [e.round for e in log if e.path.split("?")[0].endswith(".json")]
    assert max(small) == 3  # config, generation config and index side by side, right after model info
    # the first header beside them: its resolve with theirs, its CDN hop with their redirects
    first = sorted(
        e.round for e in log if "model-00001-of-" in e.path or (e.host == "cdn" and e.round < FLOOR - 1)
    )
    assert first == [2, 3]


def test_streams_bound_the_rounds_of_the_other_headers(many, tmp_path):
    """At 8 streams, as before, the 29 other headers took four waves of two hops each."""
    reader = HubReader(fast_settings(many.endpoint, workers=8), SnapshotCache(tmp_path))
    reader.snapshot("org/many")
    waves = -(-(SHARDS - 1) // 8)
    assert max(e.round for e in many.log) == 1 + 2 + 2 * waves


def test_a_burst_never_exceeds_the_budget_the_hub_said_is_left(tmp_path):
    """With 20 resolves a window, 7 are spent before the other headers (config, generation config and
    index: a resolve and its resolve-cache each; the first header's resolve: its CDN hop is not the
    Hub's), so 13 are left: the burst is 13, not 29, none refused, and the rest go once the window has
    reset (3 s: the read is about a second in by then)."""
    hub = replica(RateLimits(resolvers=20, window_s=3.0))
    try:
        reader = HubReader(fast_settings(hub.endpoint, workers=64, max_wait_s=5.0), SnapshotCache(tmp_path))
        snapshot = reader.snapshot("org/many")
        assert len(snapshot.shards) == SHARDS
        log = hub.log
    finally:
        hub.stop()
    assert not [e for e in log if e.status == 429]
    resolves = [e for e in log if e.host == "hub" and bucket_of(e.path) == "resolvers"]
    assert len(resolves) == 3 * 2 + SHARDS
    before_burst = 2 + 2 + 2 + 1
    burst = max(Counter(e.round for e in resolves).values())
    assert burst == 20 - before_burst


def test_a_listing_with_a_file_the_index_never_names_asks_the_indexs_first_shard(tmp_path):
    """A folder may hold weights the index never lists (Mistral's consolidated.safetensors beside its
    model-0000N-of-...): the header asked beside the index is the index's own first shard's, by the
    index's naming, and the other file is never asked for."""
    hub = replica()
    try:
        files = next(iter(hub.repos["org/many"].commits.values())).files
        files["consolidated.safetensors"] = files["model-00001-of-00030.safetensors"]  # listed, unindexed
        reader = HubReader(fast_settings(hub.endpoint, workers=64), SnapshotCache(tmp_path))
        assert len(reader.snapshot("org/many").shards) == SHARDS
        log = hub.log
    finally:
        hub.stop()
    assert not [e for e in log if "consolidated" in e.path]
    assert max(e.round for e in log) == FLOOR


def test_a_read_refused_before_its_headers_does_not_wait_for_the_first_one(tmp_path):
    """The first header goes beside the config and the index; a config refused first is said at once,
    not once that read has timed out (it runs on, unasked, in a thread of its own)."""
    with HubReplica() as hub:
        tensors = [(f"model.layers.{i}.mlp.w", "BF16", (8, 4)) for i in range(3)]
        hub.add(RepoSpec("org/x", [CommitSpec({"config.json": b"[1]"}, tensors, shards=3)]))
        hub.add_fault(Fault("model-00001-of-00003.safetensors", delay_s=5))
        reader = HubReader(fast_settings(hub.endpoint, timeout_s=3.0, retries=0), SnapshotCache(tmp_path))
        start = time.monotonic()
        with pytest.raises(SourceError, match=r"config\.json: JSON but not an object"):
            reader.snapshot("org/x")
        assert time.monotonic() - start < 2.0  # not the 3 s the first header's read may take


def test_a_late_answer_leaves_the_spacing_of_the_budget_it_saw_spent(gate):
    """Within one window, an answer saying more is left than an earlier one is the older: the spacing a
    nearly spent budget set is kept, not reset by it (4 left of 100 in a 2 s window: 0.4 s apart)."""
    url = "http://127.0.0.1:1/org/x/resolve/main/model.safetensors"
    gate.observe({"RateLimit": '"resolvers";r=4;t=2', "RateLimit-Policy": '"resolvers";q=100;w=2'}, 60.0, url)
    gate.observe(
        {"RateLimit": '"resolvers";r=60;t=2', "RateLimit-Policy": '"resolvers";q=100;w=2'}, 60.0, url
    )
    assert gate.left("resolvers") == 4
    start = time.monotonic()
    gate.wait(url)
    gate.wait(url)
    assert time.monotonic() - start >= 0.35


def test_streams_follow_the_budget_left(gate):
    assert streams(159, 96) == 96  # no answer said a budget yet
    gate.observe({"RateLimit": '"resolvers";r=40;t=200'}, 60.0)
    assert streams(159, 96) == 40
    assert streams(10, 96) == 10
    gate.observe({"RateLimit": '"resolvers";r=2999;t=500'}, 60.0)  # the next window: whole again
    assert streams(159, 96) == 96
    gate.observe({"RateLimit": '"api";r=1;t=200'}, 60.0)  # another bucket's budget is not the headers'
    assert streams(159, 96) == 96


def test_answers_out_of_order_leave_the_fewest_left_of_their_window(gate):
    """Answers to requests sent side by side (the index's and the first header's) come in any order:
    within one window the budget only falls, so an answer saying more is left than an earlier one is
    the older one, not a refill."""
    hub_url, other = (
        "https://huggingface.co/org/x/resolve/main/a",
        "http://127.0.0.1:8080/org/x/resolve/main/a",
    )
    gate.observe({"RateLimit": '"resolvers";r=13;t=200'}, 60.0, hub_url)
    gate.observe({"RateLimit": '"resolvers";r=15;t=200'}, 60.0, hub_url)
    assert gate.left("resolvers") == 13
    gate.observe({"RateLimit": '"resolvers";r=2999;t=500'}, 60.0, hub_url)  # a later window
    assert gate.left("resolvers") == 2999
    gate.observe({"RateLimit": '"resolvers";r=13;t=500'}, 60.0, hub_url)
    # another server's window is not this one's, whenever it resets (replicas' windows line up in time)
    gate.observe({"RateLimit": '"resolvers";r=2000;t=500'}, 60.0, other)
    assert gate.left("resolvers") == 2000


# -- check: one listing page per owner, not one request per repo ------------------------------------------
OWNERS = ("alpha", "beta", "gamma")
PINNED = 8  # repos pinned per owner
PAGE = 5  # listing page size: 8 pinned and 4 unpinned repos of an owner are three pages


@pytest.fixture(scope="module")
def owners(tmp_path_factory) -> Iterator[tuple[HubReplica, Sources, list]]:
    """Three owners' families, every repo recorded (which reads it, so the cache holds it). Shared by
    the tests below, in their order: the last one moves a repo."""
    tmp_path = tmp_path_factory.mktemp("owners")
    from hubdiff._baseline.record import init_repo
    from hubdiff._metrics.options import MetricsOptions
    from hubdiff._source import SourceSpec

    hub = HubReplica(page_size=PAGE).start()
    config = json.dumps(CONFIG).encode()
    for owner in OWNERS:
        for i in range(PINNED + 4):
            tensors = [(f"model.layers.{j}.w", "F16", (4, 2 + i)) for j in range(2)]
            hub.add(RepoSpec(f"{owner}/m{i}", [CommitSpec({"config.json": config}, tensors)]))
    sources = Sources(fast_settings(hub.endpoint), SnapshotCache(tmp_path / "cache"))
    paths = []
    for owner in OWNERS:
        paths.append(tmp_path / f"{owner}.yaml")
        for i in range(PINNED):
            init_repo(paths[-1], owner, SourceSpec("hub", f"{owner}/m{i}", "main"), sources, MetricsOptions())
    yield hub, sources, paths
    hub.stop()


def test_check_of_unchanged_repos_costs_one_listing_request_per_owner_page(owners):
    from hubdiff.jobs import run_check

    hub, sources, paths = owners
    hub.clear()
    report = run_check(paths, sources)
    assert [r.status for r in report.results] == ["ok"] * len(OWNERS) * PINNED
    log = hub.log
    pages = -(-(PINNED + 4) // PAGE)
    assert len(log) == len(OWNERS) * pages  # 9, where one request per repo was 24
    assert all(e.path.startswith("/api/models?author=") for e in log)


def test_check_falls_back_to_one_request_per_repo_when_the_listing_fails(owners):
    from hubdiff.jobs import run_check
    from hubdiff.testing import Fault

    hub, sources, paths = owners
    hub.add_fault(Fault("/api/models?author=beta", status=500))
    hub.clear()
    try:
        report = run_check(paths, sources)
    finally:
        hub.clear_faults()
    assert [r.status for r in report.results] == ["ok"] * len(OWNERS) * PINNED
    log = hub.log
    beta = [e for e in log if "author=beta" not in e.path and "beta/" in e.path]
    assert len(beta) == PINNED and all(e.path.endswith("/revision/main?expand=sha") for e in beta)


def test_check_reads_only_the_repo_that_moved(owners):
    from hubdiff.jobs import run_check

    hub, sources, paths = owners
    moved = "beta/m3"
    tensors = [(f"model.layers.{j}.w", "F16", (4, 9)) for j in range(3)]
    hub.push(moved, CommitSpec({"config.json": json.dumps(CONFIG).encode()}, tensors, title="grow"))
    hub.clear()
    report = run_check(paths, sources)
    assert [r.title for r in report.results if r.status != "ok"] == [f"{moved}@main"]
    log = hub.log
    listings = [e for e in log if e.path.startswith("/api/models?author=")]
    assert len(listings) == len(OWNERS) * -(-(PINNED + 4) // PAGE)
    # the moved repo's cold read, and nothing of any other: model info, the Hub's count, config.json
    # (resolve + resolve-cache) and its one file's header, which no index sizes: its first 9 bytes for
    # the length, then the rest (each a resolve + CDN)
    rest = [e for e in log if e not in listings]
    assert len(rest) == 1 + 1 + 2 + 2 * 2
    assert all(moved in e.path or e.host == "cdn" for e in rest)


def test_reads_in_flight_follow_how_long_the_first_read_took():
    """Four reads in flight per read that one read's wait overlaps (its time over READ_CPU_S, 6 ms), at
    least 8 and at most what the settings allow: near the Hub few threads, an ocean away every read."""
    assert hub_module.READ_CPU_S == 0.006
    assert streams_for_latency(0.012, 96) == 8  # loopback: 4 x 12 / 6 = 8
    assert streams_for_latency(0.070, 96) == 47  # 30 ms a request, two hops: ceil(4 x 70 / 6)
    assert streams_for_latency(0.210, 96) == 96  # 100 ms: 140, capped
    assert streams_for_latency(0.001, 96) == 8  # never fewer than 8
    assert streams_for_latency(0.050, 4) == 4  # nor more than the settings allow
