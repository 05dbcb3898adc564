"""One real release per family, its figures as arithmetic written out from its config and model card.

The corpus test (test_corpus.py) checks every model against published totals; this file spells out,
for the families hubdiff once got wrong, where each number comes from.
"""

from __future__ import annotations

import json

from hubdiff._metrics.compute import compute_metrics
from hubdiff._metrics.options import MetricsOptions
from hubdiff.snapshot import Snapshot

from .conftest import DATA

CORPUS = DATA / "corpus"


def metrics(model: str, **options):
    config = json.loads((CORPUS / model / "config.json").read_text())
    snapshot = Snapshot(model, "local", "", None, config, None, (), {}, ())
    return compute_metrics(snapshot, MetricsOptions(config_only=True, kv_dtype="bf16", **options))


def test_llama4_scout_shared_expert_chunked_attention():
    m = metrics("llama-4-scout-17b-16e-instruct")
    assert m.unverified == ()
    # every 4th layer is NoPE and global, the other 36 attend within chunks of 8,192 tokens
    assert m.attention_layers() == {"gqa": 12, "swa": 36}
    assert {x.window for x in m.layers if x.attention == "swa"} == {8192}
    assert m.kv.bytes_per_token == 12 * 2 * 8 * 128 * 2 == 49_152
    assert m.kv.window_bytes_per_token == 36 * 2 * 8 * 128 * 2
    # 48 MoE layers: 16 routed experts and one always-on shared expert, both 3 x 5,120 x 8,192
    expert = 3 * 5120 * 8192
    assert m.params.by_component["routed_experts"] == 48 * 16 * expert
    assert m.params.by_component["shared_experts"] == 48 * expert
    # active: one routed expert and the shared one a layer; the vision side is not active for text
    vision = m.params.by_component["vision_tower"] + m.params.by_component["multimodal_projector"]
    assert m.active_params == m.params.total - vision - 48 * 15 * expert


def test_gemma3_defaults_four_norms_and_sliding_pattern():
    m = metrics("gemma-3-27b-it")
    assert m.unverified == ()
    assert "Gemma3TextConfig" in m.assumptions[0]
    # the released config has no vocab_size: Gemma3TextConfig's default 262,208 applies; tied head
    assert m.params.by_component["embeddings"] == 262_208 * 5376
    assert "output_head" not in m.params.by_component
    # five sliding (window 1,024) then one global layer, 62 layers
    assert m.attention_layers() == {"gqa": 10, "swa": 52}
    assert m.kv.bytes_per_token == 10 * 2 * 16 * 128 * 2 == 81_920
    assert m.kv.bytes_at(1_000_000) == 81_920 * 1_000_000 + 52 * 2 * 16 * 128 * 2 * 1024
    # four norms a layer and per-head q/k norms, plus the final norm (text side)
    assert m.params.by_component["norms"] == 62 * (4 * 5376 + 2 * 128) + 5376


def test_nemotron_h_mamba2_mixers_relu2_mlps_and_fp32_state():
    m = metrics("nemotron-h-56b-base-8k")
    assert m.unverified == ()
    pattern = json.loads((CORPUS / "nemotron-h-56b-base-8k" / "config.json").read_text())[
        "hybrid_override_pattern"
    ]
    mamba, attention, mlp = pattern.count("M"), pattern.count("*"), pattern.count("-")
    assert (mamba, attention, mlp) == (54, 10, 54)
    # one block a layer: a Mamba-2 mixer, an attention block or an MLP
    assert m.attention_layers() == {"gqa": attention, "mamba": mamba, "none": mlp}
    heads, head_dim, state, groups, hidden = 256, 64, 256, 8, 8192
    inner, conv = heads * head_dim, heads * head_dim + 2 * groups * state
    mixer = (
        (inner + conv + heads) * hidden  # in_proj: z, x B C, dt
        + conv * 4
        + conv  # conv1d weight and bias
        + 3 * heads  # dt_bias, A_log, D
        + inner  # gated RMSNorm
        + hidden * inner  # out_proj
    )
    assert m.params.by_component["linear_attention"] == mamba * mixer
    # relu² MLPs: up and down only
    assert m.params.by_component["dense_mlp"] == mlp * 2 * hidden * 32768
    assert m.kv.bytes_per_token == attention * 2 * 8 * 128 * 2
    # the SSM state in float32 (Nemotron-H's mamba_ssm_cache_dtype), the conv state in bf16
    states = {s.name: (s.bytes_per_layer, s.dtype) for s in m.kv.states}
    assert states["mamba_state"] == (heads * head_dim * state * 4, "float32")
    assert states["mamba_conv"] == ((4 - 1) * conv * 2, "bfloat16")


def test_jamba_periods():
    m = metrics("ai21-jamba-mini-1.5")
    assert m.unverified == ()
    # attention where i % 8 == 4, MoE where i % 2 == 1, 32 layers
    assert [x.index for x in m.layers if x.attention != "mamba"] == [4, 12, 20, 28]
    assert [x.index for x in m.layers if x.mlp == "moe"] == list(range(1, 32, 2))
    assert m.kv.bytes_per_token == 4 * 2 * 8 * 128 * 2 == 16_384
    inner = 2 * 4096
    states = {s.name: s.bytes_per_layer for s in m.kv.states}
    assert states["mamba_state"] == inner * 16 * 2  # Mamba-1: d_inner x d_state, model dtype
    assert states["mamba_conv"] == (4 - 1) * inner * 2


def test_gpt_oss_sinks_and_biases():
    m = metrics("gpt-oss-20b")
    assert m.unverified == ()
    h, heads, kv, hd = 2880, 64, 8, 64
    per_layer = (
        (heads * hd + 2 * kv * hd) * h  # q, k, v
        + h * heads * hd  # o
        + heads * hd
        + 2 * kv * hd
        + h  # their biases
        + heads  # one sink logit per head
    )
    assert m.params.by_component["attention"] == 24 * per_layer
    experts, inter = 32, 2880
    assert m.params.by_component["routed_experts"] == 24 * experts * (
        2 * inter * h + 2 * inter + h * inter + h
    )
    assert m.params.by_component["routers"] == 24 * (experts * h + experts)
    assert m.kv.bytes_per_token == 12 * 2 * kv * hd * 2 == 24_576


def test_nas_block_configs():
    config = json.loads((CORPUS / "llama-3_3-nemotron-super-49b-v1" / "config.json").read_text())
    blocks = config["block_configs"]
    m = metrics("llama-3_3-nemotron-super-49b-v1")
    # remote code (nemotron-nas): no sweep can prove the layout, and nothing else is in doubt
    assert len(m.unverified) == 1 and "nemotron-nas is not one transformers" in m.unverified[0]
    attending = [
        b for b in blocks if not b["attention"]["no_op"] and not b["attention"]["replace_with_linear"]
    ]
    heads, head_dim = config["num_attention_heads"], config["hidden_size"] // config["num_attention_heads"]
    expected = sum(2 * (heads // b["attention"]["n_heads_in_group"]) * head_dim * 2 for b in attending)
    assert m.kv.bytes_per_token == expected == 200_704
    assert sum(1 for x in m.layers if x.attention == "none") == len(blocks) - len(attending)


def test_mimo_v2_value_head_and_sliding_heads():
    m = metrics("mimo-v2-flash")
    assert m.unverified == ()
    # 9 global layers: 4 KV heads x (192 key + 128 value) x 2 bytes; 39 sliding ones have 8 KV heads
    assert m.kv.bytes_per_token == 9 * 4 * (192 + 128) * 2 == 23_040
    assert m.kv.window_bytes_per_token == 39 * 8 * (192 + 128) * 2


def test_qwen3_next_output_gate():
    m = metrics("qwen3-next-80b-a3b-thinking")
    assert m.unverified == ()
    # 12 full-attention layers: q_proj writes query and gate, 2 x 16 heads x 256
    h = 2048
    per_layer = 2 * 16 * 256 * h + 2 * (2 * 256 * h) + h * 16 * 256  # q (+gate), k, v (2 KV heads), o
    assert m.params.by_component["attention"] == 12 * per_layer
