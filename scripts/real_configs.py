"""Every real ``config.json`` in the repository, read by hubdiff and by transformers' class on the meta device.

The sweep (``scripts/sweep.py``) proves hubdiff's layouts on each configuration class's defaults; this
table holds them to configs as they are really released: official repos, fine-tunes with legacy keys,
quantized repos, merges, from 2019 to now. For each config it records what a user would get:

- ``refused``: hubdiff stops on it (bounds, a reader's error): never acceptable;
- ``exact``: transformers' class built on the meta device holds, component by component, the parameters
  and tensor shapes hubdiff estimates from the config alone;
- ``marked``: they differ, and hubdiff says its figures are unverified (with the reason);
- ``wrong``: they differ and hubdiff says nothing: never acceptable;
- ``no class``: transformers ships no class for it (remote code): hubdiff must mark it, else ``wrong``;
- ``not built``: transformers' own class fails on the config, so there is nothing to hold hubdiff to.

Writes ``tests/data/real_configs.json`` (one row a config) and ``tests/data/real_configs.md`` (the totals
and the table). ``tests/test_real_configs.py`` checks that every config is in the table, that none is
refused or wrong, and re-runs a sample against the committed rows.

Usage: ``python scripts/real_configs.py [--processes N] [FOLDER ...]`` (folders relative to tests/data;
with some, only their rows are replaced).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
TABLE = DATA / "real_configs.json"
REPORT = DATA / "real_configs.md"
# the folders real configs live in: the seed's and real-models' copies, the publishers'-figures corpus,
# configs once refused by name, and the collected corpus (each has its source beside it)
PLACES = ("*/config.json", "corpus/*/config.json", "released/*/config.json", "configs/*/config.json")
MAX_LINES = 4
sys.path.insert(0, str(ROOT))


def folders() -> list[str]:
    """Every folder under tests/data holding a real config.json, relative to tests/data, sorted."""
    found = {str(p.parent.relative_to(DATA)) for place in PLACES for p in DATA.glob(place)}
    return sorted(found)


def row_of(folder: str) -> dict[str, Any]:
    """One config's row: hubdiff's reading and, where transformers can build it, the class's verdict."""
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    from hubdiff._metrics.compute import compute_metrics
    from hubdiff._metrics.options import MetricsOptions
    from hubdiff._source.config_bounds import check_config
    from hubdiff.snapshot import Snapshot
    from tests.oracle import cached_inventory
    from tests.test_oracle import _excepted, _side, compare, normalise

    raw = (DATA / folder / "config.json").read_text(encoding="utf-8")
    config = json.loads(raw)
    model_type = str(config.get("model_type") or "") if isinstance(config, dict) else ""
    row: dict[str, Any] = {"folder": folder, "model_type": model_type}
    try:
        check_config(config, "config.json")
        snapshot = Snapshot(folder, "main", "", None, config, None, (), {}, ())
        metrics = compute_metrics(snapshot, MetricsOptions(config_only=True))
    except Exception as exc:  # whatever stops hubdiff stops the user: the table says what
        return {**row, "verdict": "refused", "class": "", "total": None, "lines": [_line(exc)]}
    reasons = list(metrics.unverified)
    row["total"] = metrics.params.total
    inv = cached_inventory(config)
    if inv.tensors is None:
        built = inv.model_class is not None
        verdict = "not built" if built else "no class"
        if not built and not reasons:
            verdict = "wrong"  # no class to hold it to and hubdiff does not say so
        return {**row, "verdict": verdict, "class": inv.model_class or "", "lines": [inv.reason[:200]]}
    cfg, layers = metrics.cfg, list(metrics.layers)
    skip, count_only, drop = _excepted(model_type)
    tensors = [t for t in inv.tensors if not any(p.search(normalise(t[0])) for p in drop)]
    from hubdiff._metrics.estimate import synthesize

    oracle = _side(tensors, cfg, layers, skip)
    estimate = _side(synthesize(cfg, layers), cfg, layers, skip)
    disagreements = compare(folder, oracle, estimate, count_only)
    verdict = "exact" if not disagreements else "marked" if reasons else "wrong"
    lines = [headline.split(" / ", 1)[-1] for _, headline, _ in disagreements]
    return {
        **row,
        "verdict": verdict,
        "class": inv.model_class or "",
        "lines": [line[:200] for line in [*lines, *reasons][:MAX_LINES]],
    }


def _line(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:200]


def table_json(rows: list[dict[str, Any]], transformers_version: str) -> str:
    """The committed table's text: stable, one row a line, so that a change shows as a small diff."""
    body = ",\n".join("    " + json.dumps(r, sort_keys=True) for r in rows)
    return f'{{\n  "transformers": "{transformers_version}",\n  "rows": [\n{body}\n  ]\n}}\n'


def report(rows: list[dict[str, Any]], transformers_version: str) -> str:
    verdicts = Counter(r["verdict"] for r in rows)
    held = verdicts["exact"] + verdicts["marked"] + verdicts["wrong"]
    types = Counter(r["model_type"] or "(none)" for r in rows)
    lines = [
        "# Real configs: hubdiff against transformers' classes",
        "",
        "Written by `scripts/real_configs.py`; `tests/test_real_configs.py` checks it against the code.",
        "",
        f"- configs: {len(rows)}, of {len(types)} model_types; transformers {transformers_version}",
        "- " + ", ".join(f"{verdicts[v]} {v}" for v in sorted(verdicts)),
        f"- held to a class: {held}; exact: {verdicts['exact']} ({_share(verdicts['exact'], held)})",
        "",
        "| config | model_type | class | verdict | hubdiff total | what differs / why |",
        "| --- | --- | --- | --- | ---: | --- |",
    ]
    for r in rows:
        total = f"{r['total']:,}" if isinstance(r.get("total"), int) else ""
        why = "; ".join(r["lines"]).replace("|", "\\|")
        lines.append(
            f"| {r['folder']} | {r['model_type']} | {r['class']} | {r['verdict']} | {total} | {why} |"
        )
    return "\n".join(lines) + "\n"


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", help="folders under tests/data (default: all)")
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    from hubdiff._metrics.config import installed_transformers

    version = installed_transformers()
    wanted = args.folders or folders()
    start = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(args.processes, maxtasksperchild=10) as pool:
        new = {r["folder"]: r for r in pool.imap_unordered(row_of, wanted)}
    kept: dict[str, dict[str, Any]] = {}
    if args.folders and TABLE.is_file():
        old = json.loads(TABLE.read_text())
        if old.get("transformers") == version:
            kept = {r["folder"]: r for r in old["rows"]}
    kept.update(new)
    present = set(folders())
    rows = [kept[f] for f in sorted(kept) if f in present]
    TABLE.write_text(table_json(rows, version))
    REPORT.write_text(report(rows, version))
    verdicts = Counter(r["verdict"] for r in rows)
    print(f"{len(wanted)} configs read in {time.perf_counter() - start:.0f} s; table: {dict(verdicts)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
