"""The cache knows which Hub it read: what one endpoint served is never answered for another, and
entries that name no endpoint (the layout before endpoints) are ignored, never trusted, never fatal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hubdiff._source import HubSettings, Sources
from hubdiff._source.cache import SnapshotCache
from hubdiff._source.cache_paths import endpoint_folder, endpoint_origin
from hubdiff._source.settings import DEFAULT_ENDPOINT
from hubdiff._source.spec import parse_source
from hubdiff.testing import CommitSpec, RepoSpec

REPO = "zai-org/GLM-5.3"


def hubdiff(*args: str, endpoint: str | None, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "HF_ENDPOINT"}
    if endpoint is not None:
        env["HF_ENDPOINT"] = endpoint
    return subprocess.run(
        [sys.executable, "-m", "hubdiff", *args, "--cache-dir", str(cache)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def _publish(hub, hidden: int = 16) -> str:
    cfg = {"hidden_size": hidden, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10}
    tensors = [(f"model.layers.{i}.self_attn.q_proj.weight", "BF16", (hidden, hidden)) for i in range(2)]
    hub.add(RepoSpec(REPO, [CommitSpec({"config.json": json.dumps(cfg).encode()}, tensors)]))
    return next(iter(hub.repos[REPO].commits))


def test_a_replicas_snapshot_is_never_served_for_the_default_hub(hub, tmp_path):
    """Read from the replica, then --offline against the default endpoint: not cached (exit 3)."""
    sha = _publish(hub)
    cache = tmp_path / "cache"
    read = hubdiff("snapshot", REPO, "--json", endpoint=hub.endpoint, cache=cache)
    assert read.returncode == 0, read.stderr
    assert json.loads(read.stdout)["sha"] == sha
    for source in (REPO, f"{REPO}@{sha}"):
        offline = hubdiff("snapshot", source, "--offline", "--json", endpoint=None, cache=cache)
        assert offline.returncode == 3, offline.stdout
        assert offline.stdout == ""
        assert "offline" in offline.stderr and len(offline.stderr.strip().splitlines()) == 1
    # the replica's own entry still answers for the replica
    again = hubdiff("snapshot", REPO, "--offline", "--json", endpoint=hub.endpoint, cache=cache)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["sha"] == sha


def test_two_endpoints_keep_their_own_refs_snapshots_and_metrics(hub, tmp_path):
    _publish(hub)
    root = tmp_path / "cache"
    here = Sources(HubSettings(endpoint=hub.endpoint, retries=0), SnapshotCache(root))
    spec = parse_source(REPO)
    snapshot = here.open(spec)
    from hubdiff._metrics.compute import cached_metrics
    from hubdiff._metrics.options import MetricsOptions

    cached_metrics(here.cache, snapshot, MetricsOptions())
    other = SnapshotCache(root, DEFAULT_ENDPOINT)  # the Hub's own cache, never asked
    assert other.known_refs(REPO) == {}
    assert other.load(REPO, snapshot.sha) is None
    assert not other.base.exists()
    mine = SnapshotCache(root).for_endpoint(hub.endpoint)
    assert mine.known_refs(REPO) == {"main": snapshot.sha}
    assert mine.load(REPO, snapshot.sha) == snapshot
    written = {p.relative_to(root).parts[:3] for p in root.rglob("*.json")}
    assert {parts[:2] for parts in written} == {("hubs", endpoint_folder(hub.endpoint))}
    assert {parts[2] for parts in written} == {"refs", "snapshots", "metrics"}


def test_entries_of_the_layout_without_endpoints_are_ignored(hub, tmp_path):
    """A cache written before endpoints were kept: its entries name no Hub, so none is read, and a run
    reads the Hub and carries on."""
    sha = _publish(hub, hidden=32)
    root = tmp_path / "cache"
    planted = {"fake": "planted by the older layout"}
    (root / "refs").mkdir(parents=True)
    (root / "refs" / f"{REPO.replace('/', '--')}.json").write_text(json.dumps({"main": "f" * 40}))
    (root / "snapshots" / REPO.replace("/", "--")).mkdir(parents=True)
    (root / "snapshots" / REPO.replace("/", "--") / f"{'f' * 40}.patterns.json").write_text(
        json.dumps(planted)
    )
    offline = hubdiff("snapshot", REPO, "--offline", endpoint=hub.endpoint, cache=root)
    assert offline.returncode == 3 and "no cached sha" in offline.stderr, offline.stderr
    online = hubdiff("snapshot", REPO, "--json", endpoint=hub.endpoint, cache=root)
    assert online.returncode == 0, online.stderr
    assert json.loads(online.stdout)["sha"] == sha


def test_one_hub_has_one_folder_however_its_endpoint_is_spelled():
    same = [
        "https://hub.example.invalid",
        "https://hub.example.invalid/",
        "HTTPS://Hub.Example.invalid:443",
        "https://user:secret@hub.example.invalid",
    ]
    assert {endpoint_origin(e) for e in same} == {"https://hub.example.invalid"}
    assert len({endpoint_folder(e) for e in same}) == 1
    assert "secret" not in endpoint_folder(same[-1])
    different = [
        "https://hub.example.invalid",
        "http://hub.example.invalid",
        "https://hf-mirror.example",
        "http://127.0.0.1:8080",
        "http://127.0.0.1:8081",
        "http://127.0.0.1:8080/mirror",
    ]
    assert len({endpoint_folder(e) for e in different}) == len(different)
