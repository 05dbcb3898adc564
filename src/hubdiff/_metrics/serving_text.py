"""The serving figures as the terminal shows them after the metrics: a row per tensor-parallel size,
then each size's report (``ServingReport.text``)."""

from __future__ import annotations

from ..units import human_bytes
from .serving import ServingReport
from .serving_pool import Pool
from .serving_rules import _V


def table_text(reports: list[ServingReport]) -> str:
    """Several tensor-parallel sizes side by side, one row each, for ``--tp 1,2,4,8``."""
    rows = [
        [
            "tp",
            "weights a rank",
            "KV a token a rank",
            "engine a token",
            "state a sequence",
            "engine fixed a sequence",
            "tokens that fit",
        ]
    ]
    contexts = {r.pool.context for r in reports if isinstance(r.pool, Pool)}
    if len(contexts) == 1:
        rows[0][-1] += f" (max_model_len {contexts.pop():,})"
    for r in reports:
        p = r.pool
        fit = f"{p.tokens_that_fit:,}" if isinstance(p, Pool) and p.tokens_that_fit is not None else "-"
        rows.append(
            [
                str(r.options.tp),
                human_bytes(r.weight_bytes_per_rank),
                f"{r.kv_bytes_per_token_per_rank:,} B",
                f"{p.engine_bytes_per_token:,} B" if isinstance(p, Pool) else "-",
                f"{r.state_bytes_per_sequence_per_rank:,} B",
                human_bytes(p.fixed_bytes_per_sequence) if isinstance(p, Pool) else "-",
                fit,
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return (
        "\n".join(
            "  "
            + "  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths)))
            for row in rows
        )
        + "\n"
    )


def reports_text(reports: list[ServingReport]) -> str:
    """What ``hubdiff metrics --tp`` adds after the metrics: a row per size when several are asked, then
    each size's figures beside their rules."""
    if not reports:
        return ""
    out = [""]
    if len(reports) > 1:
        out += [
            f"serving     {_V} rules, one row per tensor-parallel size",
            table_text(reports).rstrip("\n"),
            "",
        ]
    for r in reports:
        out.append(r.text())
    return "\n".join(out)
