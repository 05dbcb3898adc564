"""Comparing two 199,680-tensor layouts: hubdiff's set-based diff (grouped into patterns) vs plain DeepDiff.

    python bench/diff.py

The new revision drops one expert projection in 13 layers and reshapes another in one layer.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import big_tensors, measure, report

from hubdiff._compare.tensor_diff import diff_tensors
from hubdiff.snapshot import Snapshot, Tensor


def snapshot(rows: list[tuple[str, str, tuple[int, ...]]]) -> Snapshot:
    return Snapshot(
        "bench", "main", "", None, {}, None, (), {}, tuple(Tensor(n, d, s, "") for n, d, s in sorted(rows))
    )


def main() -> None:
    from deepdiff import DeepDiff

    old_rows = big_tensors()
    new_rows = [
        r
        for r in old_rows
        if not (r[0].endswith("experts.7.up_proj.weight") and int(r[0].split(".")[2]) % 5 == 0)
    ]
    new_rows = [
        (n, d, (1024, 7168)) if n == "model.layers.3.mlp.experts.9.gate_proj.weight" else (n, d, s)
        for n, d, s in new_rows
    ]
    old, new = snapshot(old_rows), snapshot(new_rows)
    results: dict[str, object] = {}
    rows = [
        measure(
            "hubdiff diff_tensors (sets + patterns)", lambda: results.update(hubdiff=diff_tensors(old, new))
        )
    ]
    result = results["hubdiff"]
    print(
        f"hubdiff: {len(result.removed)} removed patterns ({sum(p.count for p in result.removed)} tensors), "
        f"{len(result.changed)} reshaped: {result.removed[0].name}, {result.changed[0].pattern.name}"
    )
    flat_old = {t.name: (t.dtype, t.shape) for t in old.tensors}
    flat_new = {t.name: (t.dtype, t.shape) for t in new.tensors}
    rows.append(
        measure(
            "plain DeepDiff on {name: (dtype, shape)}",
            lambda: results.update(plain=DeepDiff(flat_old, flat_new)),
        )
    )
    plain = results["plain"]
    print(f"DeepDiff: {sum(len(v) for v in plain.values())} entries to read")
    report(rows, "plain DeepDiff on {name: (dtype, shape)}")


if __name__ == "__main__":
    main()
