"""Terminal views of snapshots and patterns."""

from __future__ import annotations

from collections.abc import Sequence

from ..patterns import Pattern
from ..snapshot import Snapshot
from ..units import human_bytes, human_count


def table(rows: Sequence[Sequence[str]], align: str = "") -> str:
    """A plain column-aligned table; ``align`` has one letter per column, ``r`` for right-aligned."""
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            right = i < len(align) and align[i] == "r"
            cells.append(str(cell).rjust(widths[i]) if right else str(cell).ljust(widths[i]))
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def pattern_rows(patterns: Sequence[Pattern]) -> list[list[str]]:
    return [[p.name, p.dtype, "[" + ", ".join(map(str, p.shape)) + "]", f"×{p.count:,}"] for p in patterns]


def snapshot_text(snapshot: Snapshot) -> str:
    shards = sorted({t.file for t in snapshot.tensors})
    params = snapshot.parameters_by_dtype()
    total = sum(params.values())
    head = [
        f"{snapshot.source} @ {snapshot.revision}"
        + (f" -> {snapshot.sha}" if snapshot.sha else "")
        + (f" ({snapshot.commit_date})" if snapshot.commit_date else ""),
        f"files: {len(snapshot.files):,} ({len(shards):,} safetensors)",
        f"tensors: {len(snapshot.tensors):,} in {len(snapshot.patterns):,} patterns",
        f"stored elements: {total:,} ({human_count(total)}); tensor bytes {snapshot.tensor_bytes():,}"
        f" ({human_bytes(snapshot.tensor_bytes())})",
    ]
    if "total_size" in snapshot.index_metadata:
        head.append(f"index total_size: {snapshot.index_metadata['total_size']:,}")
    if snapshot.unknown_dtypes:
        head.append(f"unknown dtypes (bytes not counted): {', '.join(snapshot.unknown_dtypes)}")
    by_dtype = table([[d, f"{n:,}", human_count(n)] for d, n in params.items()], "lrr")
    patterns = table([["pattern", "dtype", "shape", "count"], *pattern_rows(snapshot.patterns)], "lllr")
    return "\n".join(head) + "\n\nelements by dtype\n" + by_dtype + "\n\n" + patterns + "\n"
