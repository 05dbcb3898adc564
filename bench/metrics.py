"""End to end, as a user runs it: ``hubdiff metrics`` (and ``check``) cold and warm, against
huggingface_hub's ``get_safetensors_metadata`` alone and hf-mem, on the 160-shard, 199,680-tensor repo
with DeepSeek-V3's released config (``model_type: deepseek_v3``: a cold run imports transformers and
reads it with ``DeepseekV3Config``, as on any real repo).

    python bench/metrics.py [--runs 3] [--latency-ms 0 30 100]

Every command is its own process (interpreter start and imports included, peak RSS its own), talking to
the replica in another process; with a latency every request the replica answers is delayed that long
(a CDN far away). Cold is a fresh ``HUBDIFF_CACHE``; warm is the same command again on that cache.
Medians of ``--runs`` runs; requests and bytes are the replica's count.
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import (
    BIG_CONFIG,
    BIG_REPO,
    HUBDIFF,
    RemoteReplica,
    big_replica,
    init_big_baseline,
    median_row,
    reference_command,
    run_process,
    table,
)

REFERENCE = "huggingface_hub get_safetensors_metadata"
INTERPRETER = "python -c pass (interpreter start)"
FLOOR = "python: urllib.request and one request"


def floor_bytes() -> int:
    """What any reader must receive: config, index and every header, byte for byte (no range margin)."""
    hub = big_replica()
    try:
        files = next(iter(hub.repos[BIG_REPO].commits.values())).files
        return sum(len(f.head) if path.endswith(".safetensors") else f.size for path, f in files.items())
    finally:
        hub.stop()


def hf_mem_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("hf_mem") is not None


def measure_latency(latency_s: float, runs: int) -> list[dict[str, Any]]:
    hub = RemoteReplica(functools.partial(big_replica, latency_s))
    env = {"HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_XET": "1", "NO_PROXY": "127.0.0.1,localhost"}
    work = Path(tempfile.mkdtemp(prefix="hubdiff-bench-"))
    rows: dict[str, list[dict[str, Any]]] = {}

    def add(label: str, argv: list[str], extra: dict[str, str] | None = None) -> None:
        rows.setdefault(label, []).append(run_process(label, argv, hub, {**env, **(extra or {})}))

    try:
        for run in range(runs):
            add(REFERENCE, reference_command("gsm", hub.endpoint, BIG_REPO))
            if hf_mem_installed():
                add(
                    "hf-mem (parameters and memory)",
                    reference_command("hf-mem", hub.endpoint, BIG_REPO),
                )
            cache = work / f"cache-{run}"
            metrics = [*HUBDIFF, "metrics", BIG_REPO, "--endpoint", hub.endpoint]
            add("hubdiff metrics, cold", metrics, {"HUBDIFF_CACHE": str(cache)})
            add("hubdiff metrics, warm", metrics, {"HUBDIFF_CACHE": str(cache)})
            add("hubdiff metrics --json, warm", [*metrics, "--json"], {"HUBDIFF_CACHE": str(cache)})
            baselines = work / f"baselines-{run}"
            check_cache = work / f"check-cache-{run}"
            run_process(
                "baseline init",
                init_big_baseline(baselines, hub.endpoint),
                None,
                {**env, "HUBDIFF_CACHE": str(work / f"init-cache-{run}")},
            )
            check = [
                *HUBDIFF,
                "check",
                "--baseline-dir",
                str(baselines),
                "--endpoint",
                hub.endpoint,
                "--output",
                str(work / "report.md"),
            ]
            add("hubdiff check, cold", check, {"HUBDIFF_CACHE": str(check_cache)})
            add("hubdiff check, warm", check, {"HUBDIFF_CACHE": str(check_cache)})
            revision_url = f"{hub.endpoint}/api/models/{BIG_REPO}/revision/main?expand=sha"
            # what any warm run pays before it reads a byte: the interpreter, and an HTTP client to ask
            # the Hub where the revision points now (the one request a warm run makes)
            add(INTERPRETER, [sys.executable, "-c", "pass"])
            add(
                FLOOR,
                [
                    sys.executable,
                    "-c",
                    f"import urllib.request; urllib.request.urlopen({revision_url!r}).read()",
                ],
            )
    finally:
        hub.stop()
        shutil.rmtree(work, ignore_errors=True)
    return [median_row(r) for r in rows.values()]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--latency-ms", type=float, nargs="*", default=[0.0, 30.0, 100.0])
    args = parser.parse_args()
    started = time.perf_counter()
    print(
        f"{BIG_REPO}: 160 shards, 199,680 tensors, {BIG_CONFIG}'s config.json as released;"
        f" {args.runs} runs each, medians; load average {os.getloadavg()[0]:.1f}"
    )
    results = {latency: measure_latency(latency / 1000, args.runs) for latency in args.latency_ms}
    # after the runs: building the replica here first would make every child report this process's RSS
    floor = floor_bytes()
    print(f"floor (config + index + every header, exactly): {floor:,} bytes")
    for latency, rows in results.items():
        print(f"\n-- {latency:g} ms per request --")
        table(rows, REFERENCE)
        by = {r["label"]: r for r in rows}
        ref, cold, warm = by[REFERENCE], by["hubdiff metrics, cold"], by["hubdiff metrics, warm"]
        check_cold, check_warm = by["hubdiff check, cold"], by["hubdiff check, warm"]
        warm_floor = by[FLOOR]["seconds"]
        goals = [
            ("cold metrics <= 0.7x get_safetensors_metadata", cold["seconds"] / ref["seconds"], 0.7),
            ("cold metrics peak RSS <= 0.6x", cold["peak_rss_mib"] / ref["peak_rss_mib"], 0.6),
            ("  the same for the whole process tree (PSS)", cold["tree_pss_mib"] / ref["tree_pss_mib"], 0.6),
            ("warm metrics - floor <= 0.060 s", warm["seconds"] - warm_floor, 0.060),
            ("warm check - floor <= 0.150 s", check_warm["seconds"] - warm_floor, 0.150),
        ]
        for what, value, limit in goals:
            print(f"goal {what}: {value:.3f} -> {'met' if value <= limit else 'NOT met'}")
        print(
            f"floor of any warm run (interpreter, stdlib HTTP client, one request): {warm_floor:.3f} s"
            f" = {warm_floor / cold['seconds']:.1%} of cold metrics,"
            f" {warm_floor / check_cold['seconds']:.1%} of cold check"
        )
        asked = cold["requests"] - cold["redirects"]
        print(
            f"requests: hubdiff cold {asked:.0f} = shards + {asked - 160:.0f} (goal <= shards + 4),"
            f" and {cold['redirects']:.0f} redirects (resolve -> CDN, as the Hub answers)"
        )
        ratio = cold["bytes_received"] / floor
        print(
            f"bytes: hubdiff cold {cold['bytes_received']:,.0f} = {ratio:.4f}x the floor (goal <= 1.10); "
            f"over-read {cold['bytes_received'] - floor:,.0f} bytes"
        )
    print(f"\nbench/metrics.py took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
