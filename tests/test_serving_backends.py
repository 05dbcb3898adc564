"""The attention backend vLLM picks decides the pool's block size, and the GPU class decides the backend
(vllm/platforms/cuda.py ``_get_backend_priorities``): MLA on sm90 runs FLASH_ATTN_MLA (kernel blocks any
multiple of 16: 16), with an FP8 cache FlashMLA (64); on sm100 FLASHINFER_MLA ([32, 64]: 32); sparse MLA
FLASHMLA_SPARSE (64). Gated DeltaNet's prefill exports checkpoints every 64 tokens on sm90 (FlashInfer) and
none with the Triton prefill of sm100. Each figure below is written out from the config."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest

from hubdiff._metrics.serving_options import ServingOptions, split_name
from hubdiff.errors import UsageError

from .test_serving import GB, QWEN3_NEXT, config, metrics_of, served

LATENT = 512 + 64  # DeepSeek-V3's kv_lora_rank + qk_rope_head_dim


@pytest.fixture(scope="module")
def deepseek():
    cfg = config("DeepSeek-V3")
    return metrics_of({k: v for k, v in cfg.items() if k != "quantization_config"})


@pytest.mark.parametrize(
    ("gpu_class", "kv_dtype", "backend", "block"),
    [
        ("sm90", "bf16", "FLASH_ATTN_MLA", 16),
        ("sm90", "fp8", "FLASHMLA", 64),
        ("sm100", "bf16", "FLASHINFER_MLA", 32),
        ("sm100", "fp8", "FLASHINFER_MLA", 32),
    ],
)
def test_mla_block_size_is_the_backends_for_the_gpu_class(deepseek, gpu_class, kv_dtype, backend, block):
    m = deepseek if kv_dtype == "bf16" else metrics_of(deepseek.cfg.raw, kv_dtype=kv_dtype)
    # BF16 weights are 170 GB a rank at tp 8: a GPU large enough to hold them and a pool
    r = served(m, tp=8, gpu_memory=400 * GB, gpu_class=gpu_class)
    p = r.pool
    assert p.block_size == block
    assert f"block size {block} ({backend} on {gpu_class}) [block_size]" in p.steps
    element = 2 if kv_dtype == "bf16" else 1
    assert p.bytes_per_block == block * 61 * LATENT * element  # one group of the 61 MLA layers
    pages = math.ceil(163_840 / block)  # max_position_embeddings
    assert p.pages_per_sequence == pages
    blocks = (math.ceil(400 * GB * 0.92) - r.weight_bytes_per_rank) // p.bytes_per_block
    assert blocks > pages
    assert p.tokens_that_fit == int(blocks / pages * 163_840)
    assert r.to_json()["gpu_class"] == gpu_class


def test_an_explicit_block_size_wins_over_the_backend(deepseek):
    p = served(deepseek, tp=8, block_size=64, gpu_class="sm90").pool
    assert p.block_size == 64 and "block size 64 (--block-size)" in p.steps


@pytest.mark.parametrize("gpu_class", ["sm90", "sm100"])
def test_sparse_mla_keeps_flashmla_sparse_blocks_of_64(gpu_class):
    r = served(metrics_of(config("GLM-5.1"), kv_dtype="fp8"), tp=8, gpu_class=gpu_class)
    assert r.pool.block_size == 64
    assert r.pool.bytes_per_block == 64 * 78 * (656 + 128 + 128 // 128 * 4)


def test_gdn_prefill_alignment_only_where_flashinfer_prefills():
    """sm90: FlashInfer's checkpoints every 64 tokens make the block a multiple of 64 and add a checkpoint
    page; sm100's Triton prefill: FlashAttention's multiple of 16 and no checkpoint page."""
    tp = 8
    conv = (4 - 1) * (128 * 16 * 2 + 128 * 32) // tp * 2
    ssm = 32 // tp * 128 * 128 * 2
    attn_1 = 2 * 256 * max(1, 2 // tp) * 2
    hopper = served(metrics_of(QWEN3_NEXT), tp=tp, gpu_class="sm90").pool
    assert hopper.block_size == 64 * math.ceil((conv + ssm) / (64 * attn_1)) == 192
    assert hopper.pages_per_sequence == math.ceil(262_144 / 192) + 3 * (2 + 1)
    blackwell = served(metrics_of(QWEN3_NEXT), tp=tp, gpu_class="sm100").pool
    assert blackwell.block_size == 16 * math.ceil((conv + ssm) / (16 * attn_1)) == 144
    assert blackwell.pages_per_sequence == math.ceil(262_144 / 144) + 3 * 2  # 2 state pages a group
    assert not any("prefill checkpoints" in s for s in blackwell.steps)


def test_the_gpu_class_is_part_of_a_figure_name():
    base, options = split_name("tokens_that_fit@tp8,sm100,80GB")
    assert base == "tokens_that_fit" and options.gpu_class == "sm100" and options.gpu_memory == 80 * GB
    assert options.spec("fit") == "tp8,sm100,80GB"
    assert ServingOptions(tp=8, gpu_memory=80 * GB).spec("fit") == "tp8,80GB"  # sm90 is the default
    with pytest.raises(UsageError, match="sm80"):
        split_name("tokens_that_fit@tp8,sm80,80GB")


def test_gpu_class_from_the_command_line(tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config("DeepSeek-V3")))
    env = {**os.environ, "HUBDIFF_CACHE": str(tmp_path / "c")}
    argv = [sys.executable, "-m", "hubdiff", "metrics", str(folder), "--config-only", "--tp", "8"]
    argv += ["--gpu-memory", "80GB", "--kv-dtype", "bf16"]
    blocks = {}
    for gpu_class in ("sm90", "sm100"):
        done = subprocess.run(
            [*argv, "--gpu-class", gpu_class, "--json"], capture_output=True, text=True, env=env, timeout=300
        )
        assert done.returncode == 0, done.stderr
        blocks[gpu_class] = json.loads(done.stdout)["serving"][0]["pool"]["block_size"]
    assert blocks == {"sm90": 16, "sm100": 32}
    bad = subprocess.run([*argv, "--gpu-class", "sm80"], capture_output=True, text=True, env=env, timeout=300)
    assert bad.returncode == 2 and "--gpu-class" in bad.stderr
