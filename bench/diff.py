"""Diffs end to end, as a user runs them: the founding comparison across two models, a revision diff of
the same size, and two revisions of the 199,680-tensor repo; cold and warm, against huggingface_hub.

    python bench/diff.py [--runs 3] [--latency-ms 0 100] [--deepdiff]

On the demo replica (``hubdiff demo --serve``: real GLM-5.3 and GLM-5.3-Flash configs, GLM-5.3 with the
real GLM-5.1 census, Flash with 79,145 tensors under ``language_model.``):

- ``hubdiff diff zai-org/GLM-5.3 zai-org/GLM-5.3-Flash``: two repos, a renamed prefix, different
  architectures (the founding comparison);
- ``hubdiff diff zai-org/GLM-5.3 zai-org/GLM-5.3@refs/pr/1``: the same repo against its pull request
  (a 2M context), 59,585 tensors each side: the revision diff the founding one is held to (<= 2x);

and ``hubdiff diff bench/moe-160@v1 bench/moe-160@main`` (DeepSeek-V3's config, 199,680 tensors; the
new revision drops one expert projection in 13 layers and reshapes another). Every command is its own
process, in the default (markdown) format, talking to the replica in another process; cold is a fresh
``HUBDIFF_CACHE``, warm the same command again. The reference reads what a diff needs by hand, both
sides at once: ``model_info`` and ``get_safetensors_metadata`` per side. In process: ``diff_tensors``
of the founding pair against ``diff_by_name`` (the name-by-name path it replaced) and, with
``--deepdiff``, of the 199,680-tensor pair against plain DeepDiff (~15 s).
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
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import (
    BIG_REPO,
    FOUNDING,
    REVISION,
    RemoteReplica,
    big_replica,
    big_tensors,
    demo_replica,
    edited,
    median_row,
    reference_command,
    run_process,
    table,
)

ENV = {"HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_XET": "1", "NO_PROXY": "127.0.0.1,localhost"}
REFERENCE = "huggingface_hub, both sides"


def two_revisions(latency_s: float) -> Any:
    return big_replica(latency_s, revisions=2)


# name -> (old, new, the replica serving them)
WORKLOADS = {
    "founding": (*FOUNDING, demo_replica),
    "revision": (*REVISION, demo_replica),
    "moe-160": (f"{BIG_REPO}@v1", f"{BIG_REPO}@main", two_revisions),
}


def end_to_end(runs: int, latency_s: float, names: list[str]) -> dict[str, dict[str, Any]]:
    """Each workload's rows (reference, cold, warm, warm text) on one replica in its own process."""
    factory = WORKLOADS[names[0]][2]
    hub = RemoteReplica(functools.partial(factory, latency_s))
    work = Path(tempfile.mkdtemp(prefix="hubdiff-bench-diff-"))
    rows: dict[str, list[dict[str, Any]]] = {}

    def add(label: str, argv: list[str], env: dict[str, str]) -> None:
        rows.setdefault(label, []).append(run_process(label, argv, hub, env))

    try:
        for run in range(runs):
            for name in names:
                old, new, _ = WORKLOADS[name]
                add(
                    f"{name}: {REFERENCE}",
                    reference_command("diff", hub.endpoint, old, new),
                    ENV,
                )
                argv = [sys.executable, "-m", "hubdiff", "diff", old, new, "--endpoint", hub.endpoint]
                cache = {**ENV, "HUBDIFF_CACHE": str(work / f"{name}-{run}")}
                add(f"{name}: hubdiff diff, cold", argv, cache)
                add(f"{name}: hubdiff diff, warm", argv, cache)
                add(f"{name}: hubdiff diff --format text, warm", [*argv, "--format", "text"], cache)
    finally:
        hub.stop()
        shutil.rmtree(work, ignore_errors=True)
    return {label: median_row(r) for label, r in rows.items()}


def in_process(runs: int, deepdiff: bool) -> None:
    """``diff_tensors`` on patterns against the name-by-name paths it replaced (no process, no I/O)."""
    sys.path.insert(0, str(Path(__file__).parent.parent))  # the repository: its tests hold the reference
    from hubdiff._compare.tensor_diff import diff_tensors
    from hubdiff.snapshot import Snapshot, Tensor
    from hubdiff.testing import load_census
    from hubdiff.testing.example import example_dir
    from tests.tensor_reference import diff_by_name

    def snapshot(rows: list[tuple[str, str, tuple[int, ...]]]) -> Snapshot:
        tensors = (Tensor(n, d, s, "") for n, d, s in rows)
        return Snapshot.of_tensors("bench", "main", "", None, {}, None, (), {}, tensors=tensors)

    def timed(call: Any) -> float:
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    old, new = (
        snapshot(load_census((example_dir() / n / "census.tsv").read_text()))
        for n in ("GLM-5.3", "GLM-5.3-Flash")
    )
    ours = timed(lambda: diff_tensors(old, new))
    theirs = timed(lambda: diff_by_name(old, new))
    print(
        f"founding pair, diff_tensors on patterns: {ours * 1000:.1f} ms; name by name (the path it replaced): "
        f"{theirs:.3f} s ({theirs / ours:,.0f}x)"
    )
    if not deepdiff:
        return
    from deepdiff import DeepDiff

    old_rows, new_rows = big_tensors(), edited(big_tensors())
    ours = timed(lambda: diff_tensors(snapshot(old_rows), snapshot(new_rows)))
    start = time.perf_counter()
    DeepDiff({n: (d, s) for n, d, s in old_rows}, {n: (d, s) for n, d, s in new_rows})
    theirs = time.perf_counter() - start
    print(
        f"199,680 tensors, diff_tensors (snapshots built included): {ours:.3f} s; plain DeepDiff: {theirs:.3f} s"
    )
    print(
        f"goal tensor diff >= 20x DeepDiff: {theirs / ours:.0f}x -> {'met' if theirs / ours >= 20 else 'NOT met'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--latency-ms", type=float, nargs="*", default=[0.0])
    parser.add_argument("--deepdiff", action="store_true", help="also time plain DeepDiff (~15 s)")
    args = parser.parse_args()
    started = time.perf_counter()
    print(f"{args.runs} run(s) each, medians; load average {os.getloadavg()[0]:.1f}")
    for latency in args.latency_ms:
        # end to end first: a child forked from a process holding 200,000 tensors would report its RSS
        rows = {
            **end_to_end(args.runs, latency / 1000, ["founding", "revision"]),
            **end_to_end(args.runs, latency / 1000, ["moe-160"]),
        }
        print(f"\n-- {latency:g} ms per request --")
        for name, (old, new, _) in WORKLOADS.items():
            print(f"\n{name}: hubdiff diff {old} {new}")
            table([r for label, r in rows.items() if label.startswith(f"{name}:")], f"{name}: {REFERENCE}")
        founding, revision = (
            rows["founding: hubdiff diff, warm"]["seconds"],
            rows["revision: hubdiff diff, warm"]["seconds"],
        )
        text = rows["founding: hubdiff diff --format text, warm"]["seconds"]
        print(
            f"\ngoal warm founding diff <= 0.5 s: {founding:.3f} s -> {'met' if founding <= 0.5 else 'NOT met'}"
        )
        print(f"  (--format text, no jinja2 template compiled: {text:.3f} s)")
        ratio = founding / revision
        print(
            f"goal warm founding diff <= 2x the same-size revision diff ({revision:.3f} s): {ratio:.2f}x"
            f" -> {'met' if ratio <= 2 else 'NOT met'}"
        )
        for name in WORKLOADS:
            cold, ref = (
                rows[f"{name}: hubdiff diff, cold"]["seconds"],
                rows[f"{name}: {REFERENCE}"]["seconds"],
            )
            print(f"cold {name} diff / reference: {cold / ref:.2f}x (not a goal)")
    print()
    in_process(args.runs, args.deepdiff)
    print(f"\nbench/diff.py took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
