"""How each stage grows with the checkpoint: 40, 160 and 640 shards (49,152 to 798,720 tensors).

    python bench/scaling.py [--runs 1] [--hf-mem]

At each size, as their own processes against the replica: ``hubdiff snapshot`` cold (fresh cache),
``hubdiff metrics`` cold and warm, ``hubdiff diff`` of two revisions cold (both read) and warm; with
``--hf-mem``, hf-mem too (it merges shard dicts by copying, so it grows quadratically). Printed: time
and peak RSS per size, and the growth factor from 160 to 640 shards (4x the tensors: linear is 4.0).
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import RemoteReplica, big_replica, median_row, reference_command, run_process

SIZES = {40: 16, 160: 65, 640: 260}  # shards -> layers (x 1,024 experts x 3 projections)


def measure(shards: int, runs: int, hf_mem: bool) -> dict[str, dict[str, Any]]:
    repo = f"bench/moe-{shards}"
    hub = RemoteReplica(
        functools.partial(big_replica, shards=shards, layers=SIZES[shards], repo=repo, revisions=2)
    )
    env = {"HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_XET": "1", "NO_PROXY": "127.0.0.1,localhost"}
    work = Path(tempfile.mkdtemp(prefix="hubdiff-bench-scaling-"))
    hubdiff = [sys.executable, "-m", "hubdiff"]
    rows: dict[str, list[dict[str, Any]]] = {}
    try:
        for run in range(runs):

            def add(label: str, argv: list[str], cache: str, run: int = run) -> None:
                extra = {**env, "HUBDIFF_CACHE": str(work / f"{cache}-{run}")}
                rows.setdefault(label, []).append(run_process(label, argv, hub, extra))

            at = ["--endpoint", hub.endpoint]
            add("snapshot, cold", [*hubdiff, "snapshot", repo, *at], "snapshot")
            add("metrics, cold", [*hubdiff, "metrics", repo, *at], "metrics")
            add("metrics, warm", [*hubdiff, "metrics", repo, *at], "metrics")
            diff = [*hubdiff, "diff", f"{repo}@v1", f"{repo}@main", *at, "--format", "text"]
            add("diff of two revisions, cold", diff, "diff")
            add("diff of two revisions, warm", diff, "diff")
            if hf_mem:
                add("hf-mem", reference_command("hf-mem", hub.endpoint, repo), "hf-mem")
    finally:
        hub.stop()
        shutil.rmtree(work, ignore_errors=True)
    return {label: median_row(r) for label, r in rows.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--hf-mem", action="store_true")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}; {args.runs} run(s) per size, medians")
    results = {shards: measure(shards, args.runs, args.hf_mem) for shards in SIZES}
    labels = list(results[40])
    print(
        f"{'':<30}"
        + "".join(f"{f'{s} shards':>22}" for s in SIZES)
        + f"{'growth 160->640':>17}{'goal <= 4.4':>13}"
    )
    for label in labels:
        cells = "".join(
            f"{results[s][label]['seconds']:>9.2f} s {results[s][label]['peak_rss_mib']:>6.0f} MiB "
            for s in SIZES
        )
        growth = results[640][label]["seconds"] / results[160][label]["seconds"]
        verdict = "met" if growth <= 4.4 or label == "hf-mem" else "NOT met"
        print(f"{label:<30}{cells}{growth:>17.2f}{verdict if label != 'hf-mem' else '':>13}")
    print(
        "requests at 640 shards: "
        + ", ".join(f"{k} {v.get('requests', 0):.0f}" for k, v in results[640].items())
    )


if __name__ == "__main__":
    main()
