"""Reads and warm runs against their floors, as a user runs them (every command its own process).

    python bench/bench_floor.py [--runs 1] [--warm-runs 10] [--latency-ms 0 30 100]
                                [--parts reads warm check1000] [--src DIR]

reads      cold ``hubdiff metrics`` of ``bench/moe-160`` (160 shards, 199,680 tensors, DeepSeek-V3's
           released config) against ``get_safetensors_metadata`` at each latency, and the round trips
           each makes one after another, counted on a replica that answers in rounds
           (``HubReplica(rounds_s=...)``), against the floor: model info, then the index and beside it
           the first header (which sizes every other range with the index's names), then every other
           header at once, each a resolve and its redirect (1 + 2 + 2 = 5; 7 for a read that waits for
           the index before any header). "latency cost" is (time at L - time at 0 ms) / L: the round
           trips the user waits for, once what overlaps them is taken out.
warm       warm ``hubdiff metrics`` and warm ``hubdiff check`` (the bench repo's one-repo family, and
           the demo's GLM-5 family of three zai-org repos) against the floor of any warm run: the
           interpreter and one request with the standard library (``urllib.request``), interleaved
           run by run, medians of ``--warm-runs``.
check1000  ``hubdiff check`` of 1,000 pinned repos in 20 owners (each also holding 250 unpinned repos),
           nothing changed and then 5 changed, at 50 ms per request: requests and time.

``--src DIR`` runs hubdiff from another checkout's ``src`` (``PYTHONPATH``), for a before figure; the
replica is always this tree's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import (
    BENCH_LIMITS,
    BIG_REPO,
    HUBDIFF,
    RemoteReplica,
    big_tensors,
    init_big_baseline,
    real_config,
    reference_command,
    run_process,
)

from hubdiff.testing import CommitSpec, Fault, HubReplica, RepoSpec

ENV = {"HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_XET": "1", "NO_PROXY": "127.0.0.1,localhost"}
FLOOR_ROUNDS = 1 + 2 + 2
ROUNDS_S = 0.1  # a round ends once no request came for this long


def big(latency_s: float = 0.0, rounds_s: float = 0.0) -> HubReplica:
    hub = HubReplica(rate_limits=BENCH_LIMITS, rounds_s=rounds_s).start()
    files = {"config.json": real_config()}
    hub.add(RepoSpec(BIG_REPO, [CommitSpec(files, big_tensors(), shards=160)]))
    if latency_s:
        hub.add_fault(Fault("", delay_s=latency_s))
    return hub


def demo(latency_s: float = 0.0) -> HubReplica:
    from hubdiff.testing.example import example_hub

    hub = example_hub()
    if latency_s:
        hub.add_fault(Fault("", delay_s=latency_s))
    return hub


ORGS = [f"org{o:02d}" for o in range(20)]
PINNED = [f"{org}/model-{i:03d}" for org in ORGS for i in range(50)]
UNPINNED = [f"{org}/draft-{i:03d}" for org in ORGS for i in range(250)]
CHANGED = PINNED[7::200]  # 5 repos of 5 owners


def many(latency_s: float = 0.0, changed: bool = False) -> HubReplica:
    """6,000 repos; the shas are the same in every replica built so (a commit's sha is its content's)."""
    hub = HubReplica(rate_limits=BENCH_LIMITS).start()
    config = real_config("Llama-3.1-8B")
    for repo in PINNED + UNPINNED:
        hub.add(RepoSpec(repo, [CommitSpec({"config.json": config}, [("lm_head.weight", "BF16", (8, 4))])]))
    if changed:
        for repo in CHANGED:
            hub.push(
                repo, CommitSpec({"config.json": config}, [("lm_head.weight", "BF16", (8, 6))], title="b")
            )
    if latency_s:
        hub.add_fault(Fault("", delay_s=latency_s))
    return hub


def env_for(src: str | None, **extra: str) -> dict[str, str]:
    return {**ENV, **({"PYTHONPATH": src} if src else {}), **extra}


def run(label: str, argv: list[str], hub: Any, env: dict[str, str]) -> dict[str, Any]:
    row = run_process(label, argv, hub, env)
    if hub is not None:
        row["log"] = hub.log
    return row


# -- reads ----------------------------------------------------------------------------------------------
def reads(latencies: list[float], runs: int, src: str | None, work: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"rounds": {}, "seconds": {}}
    hub = RemoteReplica(lambda: big(rounds_s=ROUNDS_S))
    try:
        for label, argv, env in (
            (
                "hubdiff metrics, cold",
                [*HUBDIFF, "metrics", BIG_REPO, "--endpoint", hub.endpoint],
                {"HUBDIFF_CACHE": str(work / "r0")},
            ),
            ("get_safetensors_metadata", reference_command("gsm", hub.endpoint, BIG_REPO), {}),
        ):
            row = run(label, argv, hub, env_for(src, **env))
            log = row["log"]
            rounds = max(e.round for e in log)
            biggest = max(Counter(e.round for e in log).values())
            out["rounds"][label] = rounds
            print(
                f"{label:<28} {rounds:>3} round trips one after another ({rounds / FLOOR_ROUNDS:.2f}x the"
                f" floor of {FLOOR_ROUNDS}), {len(log)} requests, at most {biggest} in one round"
            )
    finally:
        hub.stop()
    for latency in latencies:
        hub = RemoteReplica(lambda latency=latency: big(latency / 1000))
        try:
            for i in range(runs):
                for label, argv, env in (
                    ("get_safetensors_metadata", reference_command("gsm", hub.endpoint, BIG_REPO), {}),
                    (
                        "hubdiff metrics, cold",
                        [*HUBDIFF, "metrics", BIG_REPO, "--endpoint", hub.endpoint],
                        {"HUBDIFF_CACHE": str(work / f"c{latency}-{i}")},
                    ),
                ):
                    row = run(label, argv, hub, env_for(src, **env))
                    out["seconds"].setdefault(label, {}).setdefault(latency, []).append(row["seconds"])
        finally:
            hub.stop()
    base = latencies[0]
    print(
        f"\n{'':<28}" + "".join(f"{f'{lat:g} ms':>12}" for lat in latencies) + "   latency cost (round trips)"
    )
    for label, by in out["seconds"].items():
        med = {lat: statistics.median(v) for lat, v in by.items()}
        cost = "  ".join(
            f"{(med[lat] - med[base]) / (lat / 1000):.1f} at {lat:g} ms" for lat in latencies if lat
        )
        print(f"{label:<28}" + "".join(f"{med[lat]:>11.2f}s" for lat in latencies) + f"   {cost}")
    hub_by = out["seconds"]["hubdiff metrics, cold"]
    ref_by = out["seconds"]["get_safetensors_metadata"]
    print(
        f"{'ratio to the reference':<28}"
        + "".join(
            f"{statistics.median(hub_by[lat]) / statistics.median(ref_by[lat]):>11.2f}x" for lat in latencies
        )
    )
    return out


# -- warm -----------------------------------------------------------------------------------------------
def interleaved(commands: dict[str, list[str]], env: dict[str, str], n: int) -> dict[str, list[float]]:
    """Each command ``n`` times, taking turns, so that a change in the machine's load hits all alike."""
    child = {**os.environ, **env}
    child.pop("PYTHONDONTWRITEBYTECODE", None)
    times: dict[str, list[float]] = {k: [] for k in commands}
    for _ in range(n):
        for label, argv in commands.items():
            start = time.perf_counter()
            done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=child)
            times[label].append(time.perf_counter() - start)
            if done.returncode not in (0, 1):
                raise RuntimeError(f"{label}: exit {done.returncode}: {done.stderr.decode()[-400:]}")
    return times


def warm(latencies: list[float], n: int, src: str | None, work: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for latency in latencies:
        for workload in ("bench", "demo"):
            factory = (
                (lambda lat=latency: big(lat / 1000))
                if workload == "bench"
                else (lambda lat=latency: demo(lat / 1000))
            )
            hub = RemoteReplica(factory)
            try:
                cache = work / f"warm-{workload}-{latency}"
                env = env_for(src, HUBDIFF_CACHE=str(cache))
                if workload == "bench":
                    repo, baselines = BIG_REPO, work / f"baselines-{latency}"
                    run(
                        "init",
                        init_big_baseline(baselines, hub.endpoint),
                        None,
                        env,
                    )
                    family = [str(baselines / "bench.yaml")]
                else:
                    repo = "zai-org/GLM-5.3"
                    family = [str(Path(__file__).parents[1] / "baselines" / "glm-5.yaml")]
                metrics = [*HUBDIFF, "metrics", repo, "--endpoint", hub.endpoint]
                check = [
                    *HUBDIFF,
                    "check",
                    *family,
                    "--endpoint",
                    hub.endpoint,
                    "--output",
                    str(work / "r.md"),
                ]
                run("cold metrics", metrics, None, env)
                run("cold check", check, None, env)
                revision = f"{hub.endpoint}/api/models/{repo}/revision/main?expand=sha"
                floor = [
                    sys.executable,
                    "-c",
                    f"import urllib.request; urllib.request.urlopen({revision!r}).read()",
                ]
                commands = {"floor": floor, "warm metrics": metrics, "warm check": check}
                times = interleaved(commands, env, n)
                requests = {}
                for label in ("warm metrics", "warm check"):
                    hub.clear()
                    subprocess.run(
                        commands[label],
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                        env={**os.environ, **env},
                    )
                    requests[label] = len(hub.log)
            finally:
                hub.stop()
            med = {k: statistics.median(v) for k, v in times.items()}
            out[(workload, latency)] = med
            print(
                f"{workload} at {latency:g} ms: floor {med['floor'] * 1000:.0f} ms;"
                f" warm metrics {med['warm metrics'] * 1000:.0f} ms = floor"
                f" {(med['warm metrics'] - med['floor']) * 1000:+.0f} ms ({requests['warm metrics']} requests);"
                f" warm check {med['warm check'] * 1000:.0f} ms = floor"
                f" {(med['warm check'] - med['floor']) * 1000:+.0f} ms ({requests['warm check']} requests)"
            )
    return out


# -- check of 1,000 repos -------------------------------------------------------------------------------
def record(baselines: Path, endpoint: str, cache: Path) -> None:
    """Every pinned repo read (the cache fills) and recorded into its owner's family, one write per file."""
    from hubdiff._baseline.record import record_entry
    from hubdiff._baseline.store import write_baseline
    from hubdiff._metrics.options import MetricsOptions
    from hubdiff._source import HubSettings, Sources, SourceSpec
    from hubdiff._source.cache import SnapshotCache

    sources = Sources(HubSettings(endpoint=endpoint), SnapshotCache(cache))
    options = MetricsOptions()
    baselines.mkdir(parents=True, exist_ok=True)

    def family(org: str) -> None:
        repos: dict[str, Any] = {}
        for repo in (r for r in PINNED if r.startswith(f"{org}/")):
            snapshot = sources.open(SourceSpec("hub", repo, "main"))
            record_entry(repos.setdefault(repo, {}), snapshot, options, sources.metrics(snapshot, options))
        write_baseline(baselines / f"{org}.yaml", {"family": org, "notes": "", "repos": repos})

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(family, ORGS))


def check1000(src: str | None, work: Path) -> dict[str, Any]:
    baselines, cache = work / "b1000", work / "c1000"
    setup = RemoteReplica(many)
    try:
        start = time.perf_counter()
        record(baselines, setup.endpoint, cache)
        print(f"(recorded 1,000 repos in {time.perf_counter() - start:.0f} s)")
    finally:
        setup.stop()
    out = {}
    # the first check after recording also computes the baselines' own figures once (then cached)
    for changed, label in (
        (False, "check, 1,000 repos, nothing changed (first after recording)"),
        (False, "check, 1,000 repos, nothing changed"),
        (True, "check, 1,000 repos, 5 changed"),
    ):
        hub = RemoteReplica(lambda changed=changed: many(0.05, changed))
        try:
            argv = [
                *HUBDIFF,
                "check",
                "--baseline-dir",
                str(baselines),
                "--endpoint",
                hub.endpoint,
                "--output",
                str(work / "r1000.md"),
            ]
            row = run(label, argv, hub, env_for(src, HUBDIFF_CACHE=str(cache)))
        finally:
            hub.stop()
        listings = sum(e.path.startswith("/api/models?") for e in row["log"])
        out[label] = {"requests": row["requests"], "listings": listings, "seconds": row["seconds"]}
        print(
            f"{label}: {row['requests']} requests ({listings} listing pages), {row['seconds']:.2f} s at 50 ms"
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--warm-runs", type=int, default=10)
    parser.add_argument("--latency-ms", type=float, nargs="+", default=[0, 30, 100])
    parser.add_argument("--parts", nargs="+", default=["reads", "warm", "check1000"])
    parser.add_argument("--src", help="run hubdiff from this checkout's src (a before figure)")
    args = parser.parse_args()
    if args.src:
        import compileall

        compileall.compile_dir(args.src, quiet=2)
    work = Path(tempfile.mkdtemp(prefix="hubdiff-floor-"))
    print(f"load average {os.getloadavg()[0]:.2f}; hubdiff from {args.src or 'this tree'}\n")
    results: dict[str, Any] = {}
    if "reads" in args.parts:
        print("-- reads: cold metrics, round trips and latency --")
        results["reads"] = reads(args.latency_ms, args.runs, args.src, work)
    if "warm" in args.parts:
        print("\n-- warm runs against the floor (interpreter + one urllib request) --")
        results["warm"] = {
            f"{w}@{lat:g}ms": v
            for (w, lat), v in warm(args.latency_ms, args.warm_runs, args.src, work).items()
        }
    if "check1000" in args.parts:
        print("\n-- check of 1,000 pinned repos in 20 owners --")
        results["check1000"] = check1000(args.src, work)
    print(f"\nload average {os.getloadavg()[0]:.2f}")
    print(json.dumps(results, default=str))


if __name__ == "__main__":
    main()
