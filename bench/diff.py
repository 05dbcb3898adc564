"""Comparing two 199,680-tensor revisions: hubdiff's pattern diff against plain DeepDiff, in process and
end to end.

    python bench/diff.py [--runs 3]

The new revision drops one expert projection in 13 layers and reshapes another in one layer. In
process: ``diff_tensors`` on the two snapshots against ``DeepDiff`` on flat ``{name: (dtype, shape)}``
dicts. End to end: ``hubdiff diff bench/moe-160@v1 bench/moe-160@main`` as its own process, cold (fresh
cache: both revisions read from the replica) and warm.
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import BIG_REPO, RemoteReplica, big_replica, big_tensors, edited, median_row, run_process, table

from hubdiff._compare.tensor_diff import diff_tensors
from hubdiff.snapshot import Snapshot, Tensor


def snapshot(rows: list[tuple[str, str, tuple[int, ...]]]) -> Snapshot:
    return Snapshot.of_tensors(
        "bench", "main", "", None, {}, None, (), {}, tensors=(Tensor(n, d, s, "") for n, d, s in rows)
    )


def in_process(runs: int) -> float:
    from deepdiff import DeepDiff

    old_rows, new_rows = big_tensors(), edited(big_tensors())
    old, new = snapshot(old_rows), snapshot(new_rows)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        result = diff_tensors(old, new)
        times.append(time.perf_counter() - start)
    ours = statistics.median(times)
    print(
        f"hubdiff diff_tensors: {ours:.3f} s (median of {runs}); {len(result.removed)} removed pattern(s) "
        f"({sum(p.count for p in result.removed)} tensors), {len(result.changed)} reshaped: "
        f"{result.removed[0].name}, {result.changed[0].pattern.name}"
    )
    flat_old = {n: (d, s) for n, d, s in old_rows}
    flat_new = {n: (d, s) for n, d, s in new_rows}
    start = time.perf_counter()
    plain = DeepDiff(flat_old, flat_new)
    theirs = time.perf_counter() - start
    print(
        f"plain DeepDiff on {{name: (dtype, shape)}}: {theirs:.3f} s (one run), {sum(len(v) for v in plain.values())} entries to read"
    )
    print(
        f"goal tensor diff >= 20x DeepDiff: {theirs / ours:.1f}x -> {'met' if theirs / ours >= 20 else 'NOT met'}"
    )
    return theirs


def end_to_end(runs: int) -> list[dict]:
    hub = RemoteReplica(functools.partial(big_replica, revisions=2))
    env = {"HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_XET": "1", "NO_PROXY": "127.0.0.1,localhost"}
    work = Path(tempfile.mkdtemp(prefix="hubdiff-bench-diff-"))
    rows: dict[str, list] = {}
    try:
        for run in range(runs):
            argv = [
                sys.executable,
                "-m",
                "hubdiff",
                "diff",
                f"{BIG_REPO}@v1",
                f"{BIG_REPO}@main",
                "--endpoint",
                hub.endpoint,
                "--format",
                "text",
            ]
            cache = {"HUBDIFF_CACHE": str(work / f"cache-{run}")}
            for label in ("hubdiff diff, cold (both revisions read)", "hubdiff diff, warm"):
                rows.setdefault(label, []).append(run_process(label, argv, hub, {**env, **cache}))
    finally:
        hub.stop()
        shutil.rmtree(work, ignore_errors=True)
    return [median_row(r) for r in rows.values()]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}")
    # end to end first: a child forked from a process holding 200,000 tensors would report its RSS
    rows = end_to_end(args.runs)
    deepdiff_s = in_process(args.runs)
    rows.append({"label": "DeepDiff alone (in process)", "seconds": deepdiff_s, "peak_rss_mib": float("nan")})
    table(rows, "hubdiff diff, cold (both revisions read)")
    warm = rows[1]["seconds"]
    print(
        f"goal end-to-end hubdiff diff warm <= 0.5 s: {warm:.3f} s -> {'met' if warm <= 0.5 else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
