"""A config-only estimate honours ``quantization_config``: its weights, weights a rank and tokens that fit
are the header path's figures for a checkpoint of the same layout, stored as each method's library
writes it (the layouts below are written out here, apart from ``_metrics/quantized.py``).

Configs: real ones where the corpus has the method (gpt-oss-120b MXFP4, DeepSeek-V3 FP8 blocks,
Qwen2-VL AWQ, Kimi-K2.5 compressed-tensors int4 groups, Command R7B's bitsandbytes NF4 derivative);
otherwise a real model config with the ``quantization_config`` its quantized releases carry (GPTQ,
ModelOpt NVFP4, compressed-tensors NVFP4, bitsandbytes 8-bit), as named in each case.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hubdiff._metrics.compute import compute_metrics
from hubdiff._metrics.config import ArchConfig
from hubdiff._metrics.estimate import synthesize
from hubdiff._metrics.layers import layer_census
from hubdiff._metrics.memory import total_memory
from hubdiff._metrics.options import MetricsOptions
from hubdiff._metrics.serving import serving_report
from hubdiff._metrics.serving_options import ServingOptions
from hubdiff.snapshot import Snapshot, Tensor

DATA = Path(__file__).parent / "data"
GB = 10**9


def _config(path: str) -> dict[str, Any]:
    return json.loads((DATA / path / "config.json").read_text())


LLAMA_1B = "corpus/llama-3.2-1b-instruct"
# quantization_config blocks as their releases carry them
GPTQ = {"bits": 4, "group_size": 128, "desc_act": False, "sym": True, "quant_method": "gptq"}
NVFP4 = {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16, "exclude_modules": ["lm_head"]}
CT_NVFP4 = {
    "quant_method": "compressed-tensors",
    "format": "nvfp4-pack-quantized",
    "ignore": ["lm_head"],
    "config_groups": {
        "group_0": {
            "targets": ["Linear"],
            "weights": {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16},
        }
    },
}
# Svngoku/c4ai-command-r7b-12-2024-4bit @aaf03b8 config.json (huggingface.co file page)
BNB_NF4 = {
    "_load_in_4bit": True,
    "_load_in_8bit": False,
    "bnb_4bit_compute_dtype": "float16",
    "bnb_4bit_quant_storage": "uint8",
    "bnb_4bit_quant_type": "nf4",
    "bnb_4bit_use_double_quant": True,
    "llm_int8_enable_fp32_cpu_offload": False,
    "llm_int8_has_fp16_weight": False,
    "llm_int8_skip_modules": None,
    "llm_int8_threshold": 6.0,
    "load_in_4bit": True,
    "load_in_8bit": False,
    "quant_method": "bitsandbytes",
}
BNB_INT8 = {"load_in_8bit": True, "load_in_4bit": False, "quant_method": "bitsandbytes"}

# name -> (config folder, quantization_config to set or None for the config's own, tensor-parallel sizes)
CASES: dict[str, tuple[str, dict[str, Any] | None, tuple[int, ...]]] = {
    "mxfp4 gpt-oss-120b": ("corpus/gpt-oss-120b", None, (1, 2)),
    "fp8 blocks DeepSeek-V3": ("DeepSeek-V3", None, (8,)),
    "awq Qwen2-VL-2B": ("corpus/qwen2-vl-2b-instruct-awq", None, (1, 2)),
    "compressed-tensors int4 Kimi-K2.5": ("corpus/kimi-k2.5", None, (8,)),
    "gptq Llama-3.2-1B": (LLAMA_1B, GPTQ, (1, 2)),
    "nvfp4 Llama-3.2-1B": (LLAMA_1B, NVFP4, (1, 2)),
    "compressed-tensors nvfp4 Llama-3.2-1B": (LLAMA_1B, CT_NVFP4, (1,)),
    "bnb nf4 Command R7B": ("released/command-r7b-abliterated", BNB_NF4, (1, 2)),
    "bnb int8 Llama-3.2-1B": (LLAMA_1B, BNB_INT8, (1,)),
}

_PROJECTION_WORDS = ("self_attn", "mlp", "experts", "shared_experts")


def _is_projection(name: str, shape: tuple[int, ...]) -> bool:
    segments = name.split(".")
    if "layers" not in segments or any(s in ("gate", "router", "visual") for s in segments):
        return False
    fused = len(shape) == 3 and "experts" in segments
    return (
        len(shape) == 2 and name.endswith(".weight") and any(w in segments for w in _PROJECTION_WORDS)
    ) or fused


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def as_released(
    method: str, config: dict[str, Any], name: str, dtype: str, shape: tuple[int, ...]
) -> list[tuple]:
    """One tensor of the estimate as the release's files hold it (each library's serialization)."""
    quant = config.get("quantization_config") or {}
    if not _is_projection(name, shape):
        return [(name, dtype, shape)]
    *lead, out, inn = shape
    lead = tuple(lead)
    base = name.removesuffix(".weight")
    n = math.prod(shape)
    if method.startswith("mxfp4"):  # gpt-oss: experts only, 90 blocks of 16 bytes for 2,880 inputs
        if "experts" not in name:
            return [(name, "BF16", shape)]
        return [
            (name + "_blocks", "U8", (*lead, out, inn // 32, 16)),
            (name + "_scales", "U8", (*lead, out, inn // 32)),
        ]
    if method.startswith("fp8"):
        return [
            (name, "F8_E4M3", shape),
            (name + "_scale_inv", "F32", (*lead, _ceil(out, 128), _ceil(inn, 128))),
        ]
    if method.startswith("awq"):
        g = quant["group_size"]
        return [
            (base + ".qweight", "I32", (*lead, inn, out // 8)),
            (base + ".qzeros", "I32", (*lead, inn // g, out // 8)),
            (base + ".scales", "F16", (*lead, inn // g, out)),
        ]
    if method.startswith("gptq"):
        g = quant["group_size"]
        return [
            (base + ".qweight", "I32", (inn // 8, out)),
            (base + ".qzeros", "I32", (inn // g, out // 8)),
            (base + ".scales", "F16", (inn // g, out)),
            (base + ".g_idx", "I32", (inn,)),
        ]
    if method.startswith("compressed-tensors int4"):  # Kimi-K2.5: routed experts only (its ignore list)
        if "experts" not in name or "shared_experts" in name:
            return [(name, "BF16", shape)]
        return [
            (base + ".weight_packed", "I32", (*lead, out, inn // 8)),
            (base + ".weight_scale", "BF16", (*lead, out, inn // 32)),
            (base + ".weight_shape", "I64", (2,)),
        ]
    if method.startswith("nvfp4"):
        return [
            (base + ".weight", "U8", (out, inn // 2)),
            (base + ".weight_scale", "F8_E4M3", (out, inn // 16)),
            (base + ".weight_scale_2", "F32", ()),
            (base + ".input_scale", "F32", ()),
        ]
    if method.startswith("compressed-tensors nvfp4"):
        return [
            (base + ".weight_packed", "U8", (out, inn // 2)),
            (base + ".weight_scale", "F8_E4M3", (out, inn // 16)),
            (base + ".weight_global_scale", "F32", (1,)),
            (base + ".input_global_scale", "F32", (1,)),
        ]
    if method.startswith("bnb nf4"):  # double quantization: U8 absmax per 64, F32 per 256 blocks
        blocks = _ceil(n, 64)
        return [
            (base + ".weight", "U8", (n // 2, 1)),
            (base + ".weight.absmax", "U8", (blocks,)),
            (base + ".weight.nested_absmax", "F32", (_ceil(blocks, 256),)),
            (base + ".weight.nested_quant_map", "F32", (256,)),
            (base + ".weight.quant_map", "F32", (16,)),
        ]
    if method.startswith("bnb int8"):
        return [(base + ".weight", "I8", shape), (base + ".SCB", "F32", (out,))]
    raise AssertionError(method)


def _case(method: str) -> tuple[dict[str, Any], Snapshot, Snapshot, tuple[int, ...]]:
    folder, quant, tps = CASES[method]
    config = _config(folder)
    if quant is not None:
        config["quantization_config"] = quant
    cfg = ArchConfig.read(config)
    layers = layer_census(cfg)
    rows = [
        r for name, dt, shape in synthesize(cfg, layers) for r in as_released(method, config, name, dt, shape)
    ]
    head = ("org/x", "main", "", None, config, None, (), {})
    headers = Snapshot.of_tensors(
        *head, tensors=[Tensor(n, d, tuple(s), "model.safetensors") for n, d, s in rows]
    )
    return config, Snapshot(*head), headers, tps


@pytest.mark.parametrize("method", CASES)
def test_config_only_is_the_header_path_of_the_same_layout(method):
    _, bare, headers, tps = _case(method)
    options = MetricsOptions(kv_dtype="bf16", config_only=True)
    estimate = compute_metrics(bare, options)
    counted = compute_metrics(headers, MetricsOptions(kv_dtype="bf16"))
    assert counted.basis == "headers" and estimate.basis == "config"
    # weights: the stored bytes of every tensor, scales included
    stored = headers.tensor_bytes()
    assert total_memory(estimate, None).weight_bytes == stored == total_memory(counted, stored).weight_bytes
    assert estimate.params.total == counted.params.total
    assert estimate.params.scale_bytes == counted.params.scale_bytes > 0
    assert any(a.startswith("weights ") and "quantization_config" in a for a in estimate.assumptions)
    bf16 = 2 * counted.params.total
    assert stored < 0.8 * bf16, (stored, bf16)  # a quantized release stores well under BF16
    for tp in tps:
        serving = ServingOptions(tp=tp, gpu_memory=80 * GB)
        ours = serving_report(estimate, (), serving)
        theirs = serving_report(counted, headers.patterns, serving)
        assert ours.weight_bytes_per_rank == theirs.weight_bytes_per_rank, tp
        assert ours.pool.tokens_that_fit == theirs.pool.tokens_that_fit, tp
        assert "quantization_config" in ours.basis


def test_gpt_oss_120b_experts_written_out():
    """gpt-oss-120b's routed experts in MXFP4, by hand: per layer 128 experts of gate_up [5,760 x 2,880]
    and down [2,880 x 2,880]; a byte per two values and a U8 scale per 32 values."""
    _, bare, _, _ = _case("mxfp4 gpt-oss-120b")
    estimate = compute_metrics(bare, MetricsOptions(kv_dtype="bf16", config_only=True))
    values = 36 * 128 * (5760 * 2880 + 2880 * 2880)
    biases = 36 * 128 * (5760 + 2880)  # BF16, not converted
    assert estimate.params.by_component["routed_experts"] == values + biases
    assert estimate.params.scale_bytes == values // 32 == 3_583_180_800
    report = serving_report(estimate, (), ServingOptions(tp=1, gpu_memory=80 * GB))
    experts = report.stages[0].by_component["routed_experts"]
    assert experts == values // 2 + values // 32 + 2 * biases


def test_gpt_oss_120b_fits_one_80_gb_gpu_end_to_end(tmp_path):
    """The release runs on one 80 GB GPU (its model card): config-only at --tp 1 says so."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "hubdiff",
            "metrics",
            str(DATA / "corpus" / "gpt-oss-120b"),
            "--config-only",
            "--tp",
            "1",
            "--gpu-memory",
            "80GB",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={"HUBDIFF_CACHE": str(tmp_path / "c"), "PATH": ""},
    )
    assert done.returncode == 0, done.stderr
    serving = json.loads(done.stdout)["serving"][0]
    assert serving["weights"]["per_rank"] < 80 * GB
    assert serving["weights"]["per_rank"] > 60 * GB  # the experts are still 61 GB
    assert serving["pool"]["tokens_that_fit"] > 0
