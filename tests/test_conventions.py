"""The spellings users bring from the hf CLI, vLLM and huggingface_hub mean what they mean there."""

from __future__ import annotations

import json

import pytest

from hubdiff.cli import main

from .conftest import DATA

LLAMA = DATA / "Llama-3.1-8B" / "config.json"


def metrics_json(capsys, *args: str) -> dict:
    assert main(["metrics", str(LLAMA.parent), "--config-only", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    ("spelling", "bytes_per_token"),
    [
        # Llama-3.1-8B: 32 layers x (K and V) x 8 KV heads x 128 dims = 65,536 elements a token
        ("auto", 65_536 * 2),  # vLLM: "auto" is the model's dtype, bfloat16 here
        ("bfloat16", 65_536 * 2),
        ("float16", 65_536 * 2),
        ("float32", 65_536 * 4),
        ("fp8", 65_536),
        ("fp8_e4m3", 65_536),
        ("FP8_E5M2", 65_536),
        ("fp8_inc", 65_536),
    ],
)
def test_vllm_kv_cache_dtype_spellings(capsys, spelling, bytes_per_token):
    data = metrics_json(capsys, "--kv-dtype", spelling)
    assert data["kv"]["bytes_per_token"] == bytes_per_token


@pytest.mark.parametrize("spelling", ["fp8_ds_mla", "nvfp4", "fp7"])
def test_kv_dtypes_with_a_layout_of_their_own_are_refused_by_name(capsys, spelling):
    assert main(["metrics", str(LLAMA.parent), "--config-only", "--kv-dtype", spelling]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"hubdiff: --kv-dtype: unknown KV dtype '{spelling}'") and err.count("\n") == 1
