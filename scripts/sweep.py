"""The sweep: hubdiff's figures against every model_type the installed transformers can build.

For each model_type in transformers' configuration mapping, its configuration class's defaults and
variations of them are built on torch's meta device (``tests/oracle.py``: ``sweep_type``) and hubdiff's
config-only estimate and header path are compared with what the model holds. Writes:

- ``tests/data/sweep.json``: every row (model_type, variation, verdict, mismatches, reasons);
- ``tests/data/sweep.md``: the same as a table, with the totals;
- ``src/hubdiff/_metrics/proven.py``: the model_types proven exact, which hubdiff vouches for (any other
  model_type transformers ships is marked unverified).

Usage: ``python scripts/sweep.py [--processes N] [MODEL_TYPE ...]`` (no types: all of them; with some,
only their rows are replaced in the committed table). ``tests/test_sweep.py`` re-runs a sample and
checks the table is what the code produces.

A model whose tower is timm's (built by ``TimmWrapperModel``: Gemma 3n's MobileNetV5, FastVLM's FastViT,
Perception LM's Perception Encoder) is built only where timm, torchvision and Pillow are installed beside
torch and the locked transformers; without them its rows are "not built", with transformers' import error
as the reason, and the type falls out of the proven set (tests/test_sweep.py fails on it). Install them
with the ``sweep`` extra (``pip install -e '.[test,sweep]'``, as .github/workflows/sweep.yml does);
torchvision must be the build of the installed torch.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "tests" / "data" / "sweep.json"
REPORT = ROOT / "tests" / "data" / "sweep.md"
PROVEN = ROOT / "src" / "hubdiff" / "_metrics" / "proven.py"
sys.path.insert(0, str(ROOT))


def _rows_of(model_type: str) -> list[dict[str, Any]]:
    import os

    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    from tests.oracle import sweep_type

    return [r.to_json() for r in sweep_type(model_type)]


def all_types() -> list[str]:
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    return sorted(CONFIG_MAPPING_NAMES)


def judged(raw: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows with the sweep's verdicts (``tests.oracle.judge_rows``)."""
    from tests.oracle import Row, judge_rows

    rows = [Row(**{**r, "mismatches": tuple(r["mismatches"]), "reasons": tuple(r["reasons"])}) for r in raw]
    return [r.to_json() for r in judge_rows(rows)]


def _proven(rows: list[dict[str, Any]]) -> list[str]:
    from tests.oracle import Row, proven_types

    return proven_types(
        [Row(**{**r, "mismatches": tuple(r["mismatches"]), "reasons": tuple(r["reasons"])}) for r in rows]
    )


def summary(rows: list[dict[str, Any]]) -> list[str]:
    from tests.oracle import generative_types

    generative = generative_types()
    verdicts = Counter(r["verdict"] for r in rows)
    types = {r["model_type"] for r in rows}
    by_type = {t: {r["verdict"] for r in rows if r["model_type"] == t} for t in types}
    exact_types = sorted(t for t, v in by_type.items() if v <= {"exact", "not built"} and "exact" in v)
    reasons: Counter[str] = Counter()
    for r in rows:
        if r["verdict"] == "unverified":
            first = r["reasons"][0]
            reasons["layout not proven by the sweep" if "not proven by the sweep" in first else first] += 1
    lines = [
        f"model_types tried: {len(types)}; rows: {len(rows)}",
        f"rows: {verdicts['exact']} exact, {verdicts['unverified']} unverified, {verdicts['wrong']} wrong, "
        f"{verdicts['not built']} not built",
        f"model_types proven (a row agrees, none disagrees unmarked): {len(_proven(rows))}; "
        f"every row of them exact: {len(exact_types)}",
        f"of the {len(generative)} causal-LM and image-text-to-text model_types (masked-LM, seq2seq and speech "
        f"mappings aside): {len(generative & set(_proven(rows)))} proven "
        f"({len(generative & set(_proven(rows))) / max(len(generative), 1):.1%})",
        "unverified rows by first reason:",
        *(f"  {n:5d}  {reason}" for reason, n in reasons.most_common(15)),
    ]
    return lines


def write(rows: list[dict[str, Any]]) -> None:
    import transformers

    from tests.oracle import proven_module, sweep_rows_json

    TABLE.write_text(sweep_rows_json(rows, transformers.__version__))
    lines = [
        "# The sweep: hubdiff against every model_type transformers ships",
        "",
        "Written by `scripts/sweep.py`; `tests/test_sweep.py` checks a sample against the code.",
        "",
        *(f"- {line}" if not line.startswith("  ") else f"    - {line.strip()}" for line in summary(rows)),
        "",
        "| model_type | variation | class | verdict | mismatches / reasons |",
        "| --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        detail = "; ".join([*r["mismatches"][:3], *r["reasons"][:3]]).replace("|", "/")
        lines.append(
            f"| {r['model_type']} | {r['variation']} | {r['model_class']} | {r['verdict']} | {detail} |"
        )
    REPORT.write_text("\n".join(lines) + "\n")
    PROVEN.write_text(proven_module(rows, transformers.__version__))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("types", nargs="*", help="model_types to sweep (default: all)")
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    types = args.types or all_types()
    with multiprocessing.get_context("spawn").Pool(min(args.processes, 2), maxtasksperchild=50) as pool:
        raw = [row for rows in pool.imap(_rows_of, types, chunksize=4) for row in rows]
    if args.types and TABLE.is_file():
        kept = [r for r in json.loads(TABLE.read_text())["rows"] if r["model_type"] not in set(types)]
        raw = sorted(kept + raw, key=lambda r: r["model_type"])
    rows = judged(raw)
    write(rows)
    print("\n".join(summary(rows)))
    print(
        f"sweep time: {time.perf_counter() - start:.1f} s ({len(types)} model_types, {args.processes} processes)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
