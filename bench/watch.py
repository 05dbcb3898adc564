"""Polling 1,000 pinned repos of 20 orgs that also hold 5,000 unpinned ones, with 50 ms per request:
hubdiff watch (one listing page per 1,000 repos per org, discover rules on every family) vs one
model_info per pinned repo. Every repo holds Llama-3.1-8B's released config.json (a poll that finds nothing
changed reads none of them).

python bench/watch.py
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import BENCH_LIMITS, RemoteReplica, real_config, report

from hubdiff.testing import CommitSpec, Fault, HubReplica, RepoSpec

ORGS = [f"org{o:02d}" for o in range(20)]
REPOS = [f"{org}/model-{i:03d}" for org in ORGS for i in range(50)]
UNPINNED = [f"{org}/draft-{i:03d}" for org in ORGS for i in range(250)]  # no discover rule takes these


def replica() -> HubReplica:
    hub = HubReplica(rate_limits=BENCH_LIMITS).start()  # 1,000 model_info calls: over the anonymous 500
    config = real_config("Llama-3.1-8B")
    for repo in REPOS + UNPINNED:
        hub.add(RepoSpec(repo, [CommitSpec({"config.json": config}, [("w", "F16", (4,))])]))
    hub.add_fault(Fault("/", delay_s=0.05))  # 50 ms for every request, as over a real network
    return hub


def main() -> None:
    from huggingface_hub import HfApi

    from hubdiff._baseline.store import write_baseline
    from hubdiff._source import HubSettings, Sources
    from hubdiff._source.cache import SnapshotCache
    from hubdiff.watch import run_watch

    hub = RemoteReplica(replica)
    try:
        api = HfApi(endpoint=hub.endpoint, token=False)
        shas = {m.id: m.sha for org in ORGS for m in api.list_models(author=org, expand=["sha"])}
        work = Path(tempfile.mkdtemp())
        files = []
        for org in ORGS:
            entries = {
                repo: {"revision": "main", "sha": shas[repo]} for repo in REPOS if repo.startswith(org)
            }
            rules = [{"owner": org, "match": "model-*", "exclude": ["*-GGUF"]}]
            files.append(work / f"{org}.yaml")
            write_baseline(files[-1], {"family": org, "discover": rules, "repos": entries})
        sources = Sources(HubSettings(endpoint=hub.endpoint), SnapshotCache(work / "cache"))
        rows = []
        hub.clear()
        start = time.perf_counter()
        outcome = run_watch(files, sources, output_dir=work / "reports")
        assert not outcome.results, outcome.summary_line()
        rows.append(
            {
                "label": "hubdiff watch, 20 families with discover rules",
                "seconds": round(time.perf_counter() - start, 3),
                "requests": len(hub.log),
                "peak_rss_mib": 0,
            }
        )
        assert len(outcome.unchanged) == 1000
        hub.clear()
        start = time.perf_counter()
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda r: api.model_info(r).sha, REPOS))
        rows.append(
            {
                "label": "model_info per repo, 8 threads",
                "seconds": round(time.perf_counter() - start, 3),
                "requests": len(hub.log),
                "peak_rss_mib": 0,
            }
        )
        report(rows, "model_info per repo, 8 threads")
        print(json.dumps({r["label"]: r["requests"] for r in rows}))
    finally:
        hub.stop()


if __name__ == "__main__":
    main()
