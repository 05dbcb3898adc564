"""The vllm profile's MLA page: 656 bytes only for sparse MLA (DSA), as vLLM 0.33.0's fp8_ds_mla;
dense MLA in FP8 is the latent and RoPE as plain FP8 elements."""

from __future__ import annotations

import json

from hubdiff.cli import main

from .conftest import DATA


def kv_of(capsys, source: str) -> dict:
    assert main(["metrics", source, "--config-only", "--json", "--profile", "vllm", "--kv-dtype", "fp8"]) == 0
    return json.loads(capsys.readouterr().out)["kv"]


def test_dense_mla_in_fp8_is_its_latent_and_rope_a_byte_each(capsys):
    kv = kv_of(capsys, str(DATA / "DeepSeek-V3"))
    assert kv["bytes_per_token"] == 61 * (512 + 64) * 1 == 35_136  # DeepSeek-V3: 61 MLA layers


def test_sparse_mla_in_fp8_is_vllms_656_byte_page(capsys):
    kv = kv_of(capsys, "src/hubdiff/testing/example/GLM-5.3")
    # GLM-5.3: 78 DSA layers of 512 fp8 + 4 float32 scales + 64 bf16 RoPE, 21 own indexers of 128 + 4
    assert kv["bytes_per_token"] == 78 * (512 + 4 * 4 + 64 * 2) + 21 * (128 + 4) == 53_940
