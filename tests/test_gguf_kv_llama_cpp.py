"""hubdiff's GGUF KV-cache figures against what llama.cpp itself allocated (``scripts/llama_cpp_kv.py``).

Each row of ``tests/data/gguf/llama_cpp_kv.json`` is a header's metadata, the settings a context was
created with (cache type, n_ctx, sequences, swa_full, ubatch) and the K, V, recurrent r and s bytes
llama.cpp's own caches held, measured by ``tests/llama_cpp/kv_probe.cpp`` built against llama.cpp's
source. hubdiff must give every one to the byte from the metadata alone. The table is re-measured by
running the script with llama.cpp's source (opt-in: it builds llama.cpp); here it is only read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hubdiff._metrics.gguf_kv import KVSettings, kv_cache

from .conftest import script_module

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "tests" / "data" / "gguf" / "llama_cpp_kv.json"


SCRIPT = script_module(ROOT / "scripts" / "llama_cpp_kv.py")
TABLE_DATA = json.loads(TABLE.read_text(encoding="utf-8"))
ROWS = TABLE_DATA["rows"]


def _id(row: dict[str, Any]) -> str:
    s = row["settings"]
    return f"{row['case']}-{s['kv_dtype']}-ctx{s['n_ctx']}-seq{s['n_seq']}-ub{s['n_ubatch']}" + (
        "-swafull" if s["swa_full"] else ""
    )


def test_the_table_is_every_case_in_every_setting() -> None:
    """No case or setting of the script is left unmeasured, and nothing measured is not one of them."""
    expected = [
        (case, (kind, n_ctx, n_seq, swa_full, ubatch))
        for case in SCRIPT.CASES
        for kind, n_ctx, n_seq, swa_full, ubatch in SCRIPT.SETTINGS
    ]
    measured = [
        (r["case"], tuple(r["settings"][k] for k in ("kv_dtype", "n_ctx", "n_seq", "swa_full", "n_ubatch")))
        for r in ROWS
    ]
    assert measured == expected
    assert TABLE_DATA["llama_cpp"].startswith("llama-cpp-python ")


@pytest.mark.parametrize("row", ROWS, ids=[_id(r) for r in ROWS])
def test_hubdiff_allocates_what_llama_cpp_allocated(row: dict[str, Any]) -> None:
    s = row["settings"]
    settings = KVSettings(
        s["kv_dtype"], n_ctx=s["n_ctx"], n_seq=s["n_seq"], swa_full=s["swa_full"], n_ubatch=s["n_ubatch"]
    )
    cache = kv_cache(row["metadata"], settings)
    measured = row["llama_cpp"]
    assert cache.computed, cache.reason
    assert cache.n_ctx == measured["n_ctx"]
    assert (cache.k_bytes, cache.v_bytes) == (measured["k_bytes"], measured["v_bytes"])
    assert cache.state_bytes == measured["r_bytes"] + measured["s_bytes"]


def test_the_table_covers_every_kind_of_memory() -> None:
    """A plain KV cache, a sliding-window pair, a hybrid and a recurrent one were all measured, with K
    and V, K only (MLA) and state bytes."""
    kinds = {r["llama_cpp"]["memory"] for r in ROWS}
    assert {"kv", "iswa", "hybrid", "recurrent"} <= kinds
    assert any(r["llama_cpp"]["v_bytes"] == 0 < r["llama_cpp"]["k_bytes"] for r in ROWS)  # MLA: K only
    assert any(r["llama_cpp"]["s_bytes"] > 0 for r in ROWS)
