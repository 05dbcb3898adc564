"""Real configs as released, held to transformers' classes (``scripts/real_configs.py``).

Every real ``config.json`` in tests/data (the collected corpus in ``tests/data/configs`` with its
``SOURCES.tsv``, the publishers'-figures corpus, the configs once refused by name, the real models'
copies) has a row in ``tests/data/real_configs.json``. None may be refused and none may be wrong (differ
from transformers' class on the meta device while hubdiff says nothing). The table is re-run here on a
sample, so it cannot drift from the code; the whole of it is re-run by the script.
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from .conftest import script_module

pytest.importorskip("torch")
pytest.importorskip("transformers")

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
COLLECTED = DATA / "configs"
SAMPLE_SIZE = 12
# where a file's bytes came from: a GitHub file at a commit, a Hub file page at a revision, a PyPI sdist
ORIGIN = re.compile(r"(?:github|hub-blob|hub-blame|hub-commit|pypi):[\w.-]+/[\w.-]+@[^\s@]+")


SCRIPT = script_module(ROOT / "scripts" / "real_configs.py")


def _table() -> dict[str, Any]:
    return json.loads(SCRIPT.TABLE.read_text(encoding="utf-8"))


def _rows() -> list[dict[str, Any]]:
    return _table()["rows"]


def sample(rows: list[dict[str, Any]], size: int = SAMPLE_SIZE) -> list[dict[str, Any]]:
    """Rows of every verdict and many model_types, the smallest of each first (a meta-device build of a
    large MoE takes seconds): what the suite can afford to re-run."""
    by_size = sorted(rows, key=lambda r: (r["total"] if isinstance(r.get("total"), int) else 0, r["folder"]))
    chosen: list[dict[str, Any]] = []
    for verdict in sorted({r["verdict"] for r in rows}):
        chosen += [r for r in by_size if r["verdict"] == verdict][:2]
    types = {r["model_type"] for r in chosen}
    for r in by_size:
        if len(chosen) >= size:
            break
        if r["model_type"] not in types and r not in chosen:
            chosen.append(r)
            types.add(r["model_type"])
    return chosen


def test_every_real_config_has_a_row_and_the_table_is_of_the_installed_transformers() -> None:
    from hubdiff._metrics.config import installed_transformers

    assert [r["folder"] for r in _rows()] == SCRIPT.folders()
    assert _table()["transformers"] == installed_transformers(), "re-run python scripts/real_configs.py"


def test_none_is_refused_and_none_is_silently_wrong() -> None:
    verdicts = Counter(r["verdict"] for r in _rows())
    bad = [
        f"{r['folder']}: {r['verdict']}: {'; '.join(r['lines'])}"
        for r in _rows()
        if r["verdict"] in ("refused", "wrong")
    ]
    assert not bad, "\n".join(bad)
    assert verdicts["exact"] > 0 and set(verdicts) <= {"exact", "marked", "no class", "not built"}


def test_every_config_passes_the_bounds_as_read() -> None:
    """The bounds alone, on every file (the cheap half of "read without refusal", for all of them)."""
    from hubdiff._source.config_bounds import check_config

    for folder in SCRIPT.folders():
        check_config(json.loads((DATA / folder / "config.json").read_text(encoding="utf-8")), "config.json")


def test_a_sample_is_what_the_code_produces() -> None:
    rows = _rows()
    chosen = sample(rows)
    assert len({r["verdict"] for r in chosen}) == len({r["verdict"] for r in rows})
    assert [SCRIPT.row_of(r["folder"]) for r in chosen] == chosen


def test_the_collected_configs_say_where_each_came_from() -> None:
    if not COLLECTED.is_dir():
        pytest.fail("tests/data/configs is missing")
    with (COLLECTED / "SOURCES.tsv").open(encoding="utf-8", newline="") as f:
        sources = list(csv.DictReader(f, delimiter="\t"))
    folders = sorted(p.parent.name for p in COLLECTED.glob("*/config.json"))
    assert sorted(s["slug"] for s in sources) == folders
    for s in sources:
        assert s["repo"].count("/") == 1 and ORIGIN.fullmatch(s["origin"]), s
        assert s["kind"] in ("official", "fine-tune", "quantized", "merge", "community"), s


def test_the_corpus_is_at_least_300_distinct_configs() -> None:
    """Byte-different copies of one config count once."""
    distinct = {
        json.dumps(json.loads((DATA / f / "config.json").read_text(encoding="utf-8")), sort_keys=True)
        for f in SCRIPT.folders()
    }
    assert len(distinct) >= 300, len(distinct)


def test_at_least_95_percent_of_the_configs_held_to_a_class_are_exact() -> None:
    """Of the configs transformers can build, hubdiff's estimate is exact for 95% or more; the rest are
    marked with what hubdiff does not model (none is silent: see above)."""
    verdicts = Counter(r["verdict"] for r in _rows())
    held = verdicts["exact"] + verdicts["marked"] + verdicts["wrong"]
    assert held >= 250
    assert verdicts["exact"] >= 0.95 * held, (verdicts["exact"], held)
