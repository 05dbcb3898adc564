"""Total memory: weights + batch x (KV at the context + recurrent state), with arithmetic written out."""

from __future__ import annotations

import json

import pytest

from hubdiff.cli import main

from .conftest import DATA


def memory_of(capsys, *args: str) -> dict:
    assert main(["metrics", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["memory"]


def test_llama_8b_at_its_context_and_a_batch_of_4(capsys):
    memory = memory_of(capsys, str(DATA / "Llama-3.1-8B"), "--config-only", "--batch-size", "4")
    weights = 8_030_261_248 * 2  # the published 8.03B parameters in bf16
    kv_per_sequence = 32 * 2 * 8 * 128 * 2 * 131_072  # layers x K,V x KV heads x dims x bytes x tokens
    assert memory["weight_bytes"] == weights and memory["kv_bytes_per_sequence"] == kv_per_sequence
    assert memory["total_bytes"] == weights + 4 * kv_per_sequence == 84_779_999_232
    assert memory["state_bytes_per_sequence"] == 0 and memory["context_tokens"] == 131_072


def test_a_hybrid_adds_its_state_once_a_sequence(capsys, tmp_path):
    flash = "src/hubdiff/testing/example/GLM-5.3-Flash"
    memory = memory_of(
        capsys, flash, "--config-only", "--kv-dtype", "fp8", "--batch-size", "2", "--context", "1000"
    )
    # the founding comparison's figures: 5,984 B a token at fp8, 34 KDA layers of 2,170,880 B of state
    assert memory["kv_bytes_per_sequence"] == 5_984 * 1_000
    assert memory["state_bytes_per_sequence"] == 34 * (32 * 128 * 128 * 4 + 3 * 3 * 32 * 128 * 2)
    total = memory["weight_bytes"] + 2 * (5_984_000 + memory["state_bytes_per_sequence"])
    assert memory["total_bytes"] == total
    assert any("recurrent state" in a for a in memory["assumptions"])


def test_the_text_says_the_sum_and_what_it_rests_on(capsys):
    assert main(["metrics", "examples/new", "--batch-size", "4"]) == 0
    out = capsys.readouterr().out.replace("\n    ", " ")  # unwrapped, should the terminal be narrow
    # 102,720 parameters x 2 bytes + 4 x (128 bytes a token x 8,192 tokens) = 4,399,744 bytes
    assert "memory      4.4 MB = 205.4 KB weights + 4 × 1.0 MB KV at 8,192 tokens (4,399,744 bytes)" in out
    assert "weights: the stored bytes of every tensor (safetensors headers)" in out
    with pytest.raises(SystemExit) as refused:
        main(["metrics", "examples/new", "--batch-size", "0"])
    assert (
        refused.value.code == 2 and "--batch-size: must be a positive whole number" in capsys.readouterr().err
    )


def test_reports_show_the_memory_of_each_side(capsys):
    assert main(["diff", "examples/old", "examples/new", "--format", "markdown"]) == 1
    out = capsys.readouterr().out
    # old: 106,816 bf16 parameters (213,632 B) + 256 B a token x 8,192 = 2,310,784 B;
    # new: 102,720 (205,440 B) + 128 B x 8,192 = 1,254,016 B
    assert 106_816 * 2 + 256 * 8_192 == 2_310_784 and 102_720 * 2 + 128 * 8_192 == 1_254_016
    row = "| memory (weights + KV and state, one sequence) | 2.3 MB at 8,192 tokens | 1.3 MB at 8,192 tokens ◀ |"
    assert row in out
