"""Metrics on real configs and censuses, against published figures and written-out arithmetic."""

import json

import pytest

from hubdiff._metrics.compute import compute_metrics
from hubdiff._metrics.options import MetricsOptions
from hubdiff._source.local import load_local
from hubdiff.snapshot import Snapshot
from hubdiff.testing import CommitSpec, load_census, write_checkpoint

from .conftest import DATA


def config(model: str) -> dict:
    return json.loads((DATA / model / "config.json").read_text())


def config_only(cfg: dict, **kw):
    snapshot = Snapshot("x", "main", "", None, cfg, None, (), {}, ())
    return compute_metrics(snapshot, MetricsOptions(**kw))


def from_census(tmp_path, model: str, cfg: dict | None = None, **kw):
    tensors = load_census((DATA / model / "tensor_census.tsv").read_text())
    payload = json.dumps(cfg if cfg is not None else config(model)).encode()
    write_checkpoint(tmp_path, CommitSpec({"config.json": payload}, tensors, shards=4))
    return compute_metrics(load_local(str(tmp_path)), MetricsOptions(**kw))


def within(value: float, published: float, relative: float) -> bool:
    return abs(value - published) <= relative * published


def test_glm51_census_and_glm5_published_figures(tmp_path):
    m = from_census(tmp_path, "GLM-5.1")
    assert m.params.total == 753_864_139_008
    h = 6144
    mtp_layer = (
        2048 * h
        + 2048
        + 16384 * 2048
        + 576 * h
        + 512
        + 28672 * 512
        + h * 16384  # MLA attention
        + 4096 * 2048
        + 128 * h
        + 2 * 128
        + 32 * h  # its indexer
        + 2 * h  # layer norms
        + 256 * 3 * 2048 * h
        + 256 * h
        + 256
        + 3 * 2048 * h  # routed + router + shared expert
        + h * 2 * h
        + 3 * h  # eh_proj, enorm, hnorm, shared_head.norm
    )
    assert m.params.by_component["mtp"] == mtp_layer
    assert round(m.main_params / 1e9) == 744  # published: 744B
    # published: 40B active -- matches the count without embedding and output head (39.88B)
    assert within(m.active_without_embeddings_and_head, 40e9, 0.01)
    assert m.active_params == m.main_params - 75 * (256 - 8) * 3 * 2048 * h
    assert m.experts["params_per_routed_expert"] == 3 * 2048 * h


def test_deepseek_v3_config_only():
    m = config_only(config("DeepSeek-V3"))
    h, vocab = 7168, 129280
    attention = 7168 * 1536 + 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 + 512 * 128 * 256 + 128 * 128 * 7168
    expert = 3 * h * 2048
    moe = 256 * expert + expert + 256 * h + 256  # routed, shared, router, correction bias
    main = 2 * vocab * h + h + 61 * (attention + 2 * h) + 3 * 3 * h * 18432 + 58 * moe
    assert m.main_params == main
    assert round(main / 1e9) == 671  # published: 671B main model
    assert within(m.params.by_component["mtp"], 14e9, 0.05)  # published: 14B MTP module (685B - 671B)
    assert m.active_params == main - 58 * (256 - 8) * expert
    assert within(m.active_params, 37e9, 0.02)  # published: 37B activated
    assert m.kv.bytes_per_token == 61 * (512 + 64) * 2 == 70_272  # BF16, MTP not counted


def test_llama_31_8b():
    m = config_only(config("Llama-3.1-8B"))
    assert m.params.total == 16_060_522_496 // 2 == 8_030_261_248  # index total_size / 2 bytes
    assert m.kv.bytes_per_token == 32 * 8 * 128 * 2 * 2 == 131_072


def test_qwen3_30b_a3b():
    m = config_only(config("Qwen3-30B-A3B"))
    assert f"{m.params.total / 1e9:.1f}B" == "30.5B"
    assert (
        f"{(m.params.total - m.params.by_component['embeddings'] - m.params.by_component['output_head']) / 1e9:.1f}B"
        == "29.9B"
    )
    assert within(m.active_params, 3.3e9, 0.02)  # published: 3.3B activated
    assert m.active_params == m.params.total - 48 * (128 - 8) * (3 * 2048 * 768)
    assert m.kv.bytes_per_token == 48 * 4 * 128 * 2 * 2 == 98_304
    assert m.attention_layers() == {"gqa": 48}


def test_mixtral_config_and_headers_agree(tmp_path):
    from .test_local_source import mixtral_tensors

    m = config_only(config("Mixtral-8x7B-v0.1"))
    assert m.params.total == 93_405_585_408 // 2 == 46_702_792_704
    expert = 3 * 4096 * 14336
    assert m.active_params == 46_702_792_704 - 32 * (8 - 2) * expert
    assert f"{m.active_params / 1e9:.1f}B" == "12.9B"
    write_checkpoint(
        tmp_path,
        CommitSpec(
            {"config.json": json.dumps(config("Mixtral-8x7B-v0.1")).encode()}, mixtral_tensors(), shards=3
        ),
    )
    headers = compute_metrics(load_local(str(tmp_path)))
    assert headers.params.total == m.params.total and headers.active_params == m.active_params
    assert not headers.checks


def test_qwen3_vl_fused_experts_and_vision(tmp_path):
    m = from_census(tmp_path, "Qwen3-VL-30B-A3B-Instruct")
    assert m.params.total == 31_070_754_032
    assert m.experts["routed_per_layer"] == 128 and m.experts["moe_layers"] == 48
    assert m.routed_expert_params == 3 * 2048 * 768  # fused [128, ...] tensors counted per expert
    d, mlp, merged = 1152, 4304, 1152 * 4
    block = 2 * 2 * d + 3 * d * d + 3 * d + d * d + d + mlp * d + mlp + d * mlp + d
    assert m.params.by_component["vision_tower"] == d * 3 * 2 * 16 * 16 + d + 2304 * d + 27 * block
    merger = merged * merged + merged + 2048 * merged + 2048
    assert m.params.by_component["multimodal_projector"] == (2 * d + merger) + 3 * (2 * merged + merger)
    assert not m.checks  # the config-only estimate agrees with the headers within tolerance


def test_kimi_k3_one_based_layer_lists():
    cfg = config("Kimi-K3")
    m = config_only(cfg)
    lin = cfg["text_config"]["linear_attn_config"]
    assert m.attention_layers() == {"kda": len(lin["kda_layers"]), "mla": len(lin["full_attn_layers"])}
    assert (
        m.layers[3].attention == "mla" and m.layers[0].attention == "kda"
    )  # layer 4 (1-based) is full attention
    heads, dim = lin["num_heads"], lin["head_dim"]
    assert m.kv.state_bytes_per_sequence == len(lin["kda_layers"]) * (
        heads * dim * dim * 4 + 3 * 3 * heads * dim * 2
    )
    assert m.kv.bytes_per_token == len(lin["full_attn_layers"]) * (512 + 64) * 2


def test_deepseek_v4_compressed_layers_and_hyper_connections():
    m = config_only(config("DeepSeek-V4-Flash"))
    ratios = config("DeepSeek-V4-Flash")["compress_ratios"][:43]
    assert m.attention_layers() == {
        "compressed": sum(1 for r in ratios if r),
        "swa": sum(1 for r in ratios if not r),
    }
    hc = 43 * 2 * (24 * 4 * 4096 + 24 + 3) + 4 * 4 * 4096 + 4 + 1
    assert m.params.by_component["hyper_connections"] == hc
    assert m.kv.window_bytes_per_token > 0  # sliding windows are counted apart, capped at 128 tokens


def test_gated_deltanet_hybrid_state():
    cfg = {
        "hidden_size": 2048,
        "num_hidden_layers": 48,
        "num_attention_heads": 16,
        "num_key_value_heads": 2,
        "head_dim": 256,
        "vocab_size": 151936,
        "full_attention_interval": 4,
        "linear_num_value_heads": 32,
        "linear_num_key_heads": 16,
        "linear_key_head_dim": 128,
        "linear_value_head_dim": 128,
        "linear_conv_kernel_dim": 4,
        "num_experts": 512,
        "num_experts_per_tok": 10,
        "moe_intermediate_size": 512,
        "shared_expert_intermediate_size": 512,
        "torch_dtype": "bfloat16",
        "max_position_embeddings": 262144,
    }
    m = config_only(cfg)
    assert m.attention_layers() == {"gdn": 36, "gqa": 12}
    state = 32 * 128 * 128 * 2
    conv = (4 - 1) * (2 * 16 * 128 + 32 * 128) * 2
    assert m.kv.state_bytes_per_sequence == 36 * (state + conv)
    assert m.kv.bytes_per_token == 12 * 2 * 2 * 256 * 2


def test_sliding_window_is_capped():
    cfg = {
        "hidden_size": 1024,
        "num_hidden_layers": 12,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "head_dim": 128,
        "vocab_size": 1000,
        "sliding_window": 4096,
        "sliding_window_pattern": 6,
        "max_position_embeddings": 131072,
    }
    kv = config_only(cfg).kv
    per_layer = 2 * 4 * 128 * 2
    assert kv.bytes_per_token == 2 * per_layer and kv.window_bytes_per_token == 10 * per_layer
    assert kv.bytes_at(131072) == 2 * per_layer * 131072 + 10 * per_layer * 4096


def test_config_and_tensor_disagreements_are_reported(tmp_path):
    cfg = config("GLM-5.1")
    cfg["n_routed_experts"] = 288
    cfg["qk_rope_head_dim"] = 32
    m = from_census(tmp_path, "GLM-5.1", cfg)
    checks = {c.subject: (c.config_value, c.tensor_value) for c in m.checks}
    assert checks["routed experts per layer"] == ("288", "256")
    assert checks["kv_lora_rank + qk_rope_head_dim vs rows of kv_a_proj_with_mqa"] == ("544", "576")


def test_nothing_is_keyed_to_the_model_name(tmp_path):
    cfg = config("GLM-5.1")
    renamed = {**cfg, "model_type": "renamed", "architectures": ["SomethingElse"]}
    a = from_census(tmp_path / "a", "GLM-5.1", cfg).to_json()
    b = from_census(tmp_path / "b", "GLM-5.1", renamed).to_json()
    for key in ("params", "layers", "kv", "checks"):
        assert a[key] == b[key]


def test_packed_weights_count_logically_and_scales_apart(tmp_path):
    tensors = [
        ("model.layers.0.mlp.experts.0.w1.weight_packed", "U8", (2048, 2048)),  # 4096 columns of 4 bits
        ("model.layers.0.mlp.experts.0.w1.weight_scale", "U8", (2048, 128)),
        ("model.layers.0.hc_attn_scale", "F32", (3,)),  # a parameter, although its name ends in _scale
        ("model.layers.0.self_attn.kv_a_proj.weight_scale_inv", "F32", (4, 48)),
    ]
    cfg = {"hidden_size": 4096, "num_hidden_layers": 1, "num_experts": 1, "num_experts_per_tok": 1}
    write_checkpoint(tmp_path, CommitSpec({"config.json": json.dumps(cfg).encode()}, tensors))
    m = compute_metrics(load_local(str(tmp_path)))
    assert m.params.by_component["routed_experts"] == 2048 * 4096
    assert m.params.by_component["hyper_connections"] == 3
    assert m.params.scale_elements == 2048 * 128 + 4 * 48
    assert m.params.scale_bytes == 2048 * 128 + 4 * 48 * 4


@pytest.mark.parametrize(
    "model", ["DeepSeek-V3", "Llama-3.1-8B", "Qwen3-30B-A3B", "Kimi-K3", "DeepSeek-V4-Flash"]
)
def test_every_real_config_has_no_unclassified_parameters(model):
    m = config_only(config(model))
    assert "other" not in m.params.by_component
    assert m.params.total > 0 and m.kv.bytes_per_token > 0


def test_fused_packed_experts_and_sliding_layers_gpt_oss_style(tmp_path):
    """gpt-oss layout: MXFP4 expert blocks [E, out, blocks, 16] in U8 with U8 scales, a router, sinks."""
    h, inter, experts, layers = 64, 32, 4, 2
    cfg = {
        "hidden_size": h,
        "num_hidden_layers": layers,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "vocab_size": 100,
        "num_local_experts": experts,
        "experts_per_token": 2,
        "intermediate_size": inter,
        "sliding_window": 8,
        "layer_types": ["sliding_attention", "full_attention"],
        "quantization_config": {"quant_method": "mxfp4"},
    }
    tensors = [("model.embed_tokens.weight", "BF16", (100, h)), ("lm_head.weight", "BF16", (100, h))]
    for i in range(layers):
        p = f"model.layers.{i}."
        tensors += [
            (
                p + "mlp.experts.gate_up_proj_blocks",
                "U8",
                (experts, 2 * inter, h // 32, 16),
            ),  # 2 x 4 bits a byte
            (p + "mlp.experts.gate_up_proj_scales", "U8", (experts, 2 * inter, h // 32)),
            (p + "mlp.experts.gate_up_proj_bias", "BF16", (experts, 2 * inter)),
            (p + "mlp.experts.down_proj_blocks", "U8", (experts, h, inter // 32, 16)),
            (p + "mlp.experts.down_proj_scales", "U8", (experts, h, inter // 32)),
            (p + "mlp.experts.down_proj_bias", "BF16", (experts, h)),
            (p + "mlp.router.weight", "BF16", (experts, h)),
            (p + "mlp.router.bias", "BF16", (experts,)),
            (p + "self_attn.sinks", "BF16", (4,)),
            (p + "self_attn.q_proj.weight", "BF16", (64, h)),
        ]
    write_checkpoint(tmp_path, CommitSpec({"config.json": json.dumps(cfg).encode()}, tensors))
    m = compute_metrics(load_local(str(tmp_path)))
    per_expert = 2 * inter * h + 2 * inter + h * inter + h  # gate_up and down, with their biases
    assert m.experts["routed_per_layer"] == experts and m.routed_expert_params == per_expert
    assert m.params.scale_elements == layers * experts * (2 * inter * h // 32 + h * inter // 32)
    assert m.active_params == m.params.total - layers * (experts - 2) * per_expert
    assert m.attention_layers() == {"gqa": 1, "swa": 1} and m.kv.window_bytes_per_token == 2 * 2 * 16 * 2


def test_hybrid_override_pattern_mamba_attention_mlp(tmp_path):
    """Nemotron-H style: every block is a "mixer"; M = Mamba, * = attention, - = MLP only."""
    cfg = {
        "hidden_size": 32,
        "num_hidden_layers": 4,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 8,
        "vocab_size": 50,
        "hybrid_override_pattern": "M-*-",
        "mamba_num_heads": 4,
        "mamba_head_dim": 16,
        "ssm_state_size": 8,
        "n_groups": 2,
        "conv_kernel": 4,
        "torch_dtype": "bfloat16",
    }
    tensors = [
        ("backbone.embeddings.weight", "BF16", (50, 32)),
        ("lm_head.weight", "BF16", (50, 32)),
        ("backbone.layers.0.mixer.in_proj.weight", "BF16", (160, 32)),
        ("backbone.layers.0.mixer.A_log", "F32", (4,)),
        ("backbone.layers.0.mixer.norm.weight", "BF16", (64,)),
        ("backbone.layers.1.mixer.up_proj.weight", "BF16", (64, 32)),
        ("backbone.layers.1.mixer.down_proj.weight", "BF16", (32, 64)),
        ("backbone.layers.2.mixer.q_proj.weight", "BF16", (32, 32)),
        ("backbone.layers.3.mixer.up_proj.weight", "BF16", (64, 32)),
        ("backbone.layers.3.mixer.down_proj.weight", "BF16", (32, 64)),
    ]
    write_checkpoint(tmp_path, CommitSpec({"config.json": json.dumps(cfg).encode()}, tensors))
    m = compute_metrics(load_local(str(tmp_path)))
    assert m.attention_layers() == {"gqa": 1, "mamba": 1, "none": 2}
    assert m.params.by_component["linear_attention"] == 160 * 32 + 4 + 64
    assert m.params.by_component["dense_mlp"] == 2 * (64 * 32 + 32 * 64)
    assert m.params.by_component["attention"] == 32 * 32
    state = 4 * 16 * 8 * 2  # heads x head_dim x state x bf16
    conv = (4 - 1) * (4 * 16 + 2 * 2 * 8) * 2
    assert m.kv.state_bytes_per_sequence == state + conv
    assert m.kv.bytes_per_token == 2 * 2 * 8 * 2


def test_siglip_vision_tower_from_config():
    """SigLIP so400m-style tower: 27 layers of 1152 wide with a 4304 MLP, 14x14 patches of a 896 image."""
    cfg = {
        "text_config": {
            "hidden_size": 2560,
            "num_hidden_layers": 2,
            "num_attention_heads": 8,
            "vocab_size": 1000,
        },
        "vision_config": {
            "hidden_size": 1152,
            "intermediate_size": 4304,
            "num_hidden_layers": 27,
            "patch_size": 14,
            "image_size": 896,
        },
    }
    d, mlp = 1152, 4304
    layer = 4 * (d * d + d) + (mlp * d + mlp) + (d * mlp + d) + 2 * 2 * d
    tower = d * 3 * 14 * 14 + d + (896 // 14) ** 2 * d + 2 * d + 27 * layer
    assert config_only(cfg).params.by_component["vision_tower"] == tower


def test_nvfp4_uint8_weights_count_two_parameters_a_byte(tmp_path):
    """ModelOpt NVFP4: U8 `weight` of [out, in/2], F8 block scales, F32 `weight_scale_2` and `input_scale`."""
    cfg = {
        "hidden_size": 64,
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "vocab_size": 10,
        "quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4"},
    }
    p = "model.layers.0.mlp."
    tensors = [
        (p + "down_proj.weight", "U8", (64, 64)),
        (p + "down_proj.weight_scale", "F8_E4M3", (64, 8)),
        (p + "down_proj.weight_scale_2", "F32", ()),
        (p + "down_proj.input_scale", "F32", ()),
        ("model.norm.weight", "BF16", (64,)),
    ]
    write_checkpoint(tmp_path, CommitSpec({"config.json": json.dumps(cfg).encode()}, tensors))
    m = compute_metrics(load_local(str(tmp_path)))
    assert m.params.by_component["dense_mlp"] == 64 * 128  # 128 input features, two a byte
    assert m.params.total == 64 * 128 + 64
    assert m.params.scale_bytes == 64 * 8 + 4 + 4
    plain = {**cfg, "quantization_config": None}
    write_checkpoint(tmp_path / "plain", CommitSpec({"config.json": json.dumps(plain).encode()}, tensors))
    assert compute_metrics(load_local(str(tmp_path / "plain"))).params.by_component["dense_mlp"] == 64 * 64


def test_chunked_attention_layers_are_capped_at_their_chunk():
    """Llama 4 style: RoPE layers attend within 8,192-token chunks, every fourth (NoPE) layer globally."""
    cfg = {
        "hidden_size": 512,
        "num_hidden_layers": 8,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
        "head_dim": 64,
        "vocab_size": 100,
        "attention_chunk_size": 8192,
        "no_rope_layers": [1, 1, 1, 0, 1, 1, 1, 0],
        "max_position_embeddings": 1_048_576,
    }
    kv = config_only(cfg).kv
    per_layer = 2 * 2 * 64 * 2
    assert kv.bytes_per_token == 2 * per_layer and kv.window_bytes_per_token == 6 * per_layer
    assert kv.bytes_at(1_048_576) == 2 * per_layer * 1_048_576 + 6 * per_layer * 8192
    typed = {**cfg, "layer_types": ["chunked_attention", "full_attention"] * 4}
    typed.pop("no_rope_layers")
    assert config_only(typed).kv.window_bytes_per_token == 4 * per_layer


def test_qwen25_vl_style_tower_from_config():
    """Qwen2.5-VL: 32 blocks of 1280 with a biased SwiGLU MLP of 3420 and RMSNorm, merged 2x2 into 8192."""
    cfg = {
        "model_type": "qwen2_5_vl",
        "text_config": {
            "hidden_size": 8192,
            "num_hidden_layers": 2,
            "num_attention_heads": 8,
            "vocab_size": 10,
        },
        "vision_config": {
            "depth": 32,
            "hidden_size": 1280,
            "intermediate_size": 3420,
            "hidden_act": "silu",
            "out_hidden_size": 8192,
            "patch_size": 14,
            "temporal_patch_size": 2,
            "spatial_merge_size": 2,
            "in_channels": 3,
        },
    }
    d, mlp, merged = 1280, 3420, 1280 * 4
    block = 2 * d + (3 * d * d + 3 * d) + (d * d + d) + 2 * (mlp * d + mlp) + (d * mlp + d)
    m = config_only(cfg)
    assert m.params.by_component["vision_tower"] == d * 3 * 2 * 14 * 14 + 32 * block
    assert (
        m.params.by_component["multimodal_projector"] == d + merged * merged + merged + 8192 * merged + 8192
    )
    assert not any("vision" in reason for reason in m.unverified)
    # the same tower with no model_type anywhere: which family it is cannot be told, so it is not guessed
    anonymous = config_only({k: v for k, v in cfg.items() if k != "model_type"})
    assert "vision_tower" not in anonymous.params.by_component
    assert any("vision tower" in reason for reason in anonymous.unverified)


def test_jamba_style_mamba1_hybrid():
    """Jamba: layers_block_type lists mamba/attention; Mamba-1 state is d_inner x d_state; MoE every 2nd layer."""
    cfg = {
        "hidden_size": 4096,
        "num_hidden_layers": 8,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "vocab_size": 65536,
        "layers_block_type": ["mamba"] * 4 + ["attention"] + ["mamba"] * 3,
        "mamba_expand": 2,
        "mamba_d_state": 16,
        "mamba_d_conv": 4,
        "num_experts": 16,
        "num_experts_per_tok": 2,
        "expert_layer_period": 2,
        "expert_layer_offset": 1,
        "intermediate_size": 14336,
        "torch_dtype": "bfloat16",
    }
    m = config_only(cfg)
    assert m.attention_layers() == {"gqa": 1, "mamba": 7}
    assert [x.mlp for x in m.layers] == ["dense", "moe"] * 4
    d_inner = 2 * 4096
    assert m.kv.state_bytes_per_sequence == 7 * (d_inner * 16 * 2 + (4 - 1) * d_inner * 2)
    assert m.kv.bytes_per_token == 2 * 8 * 128 * 2


def _tiny_qwen3_next(gated_q_rows: int) -> tuple[dict, list]:
    """Two layers of a Qwen3-Next-style model, as its checkpoint stores them (q_proj rows given)."""
    h, heads, kv, hd = 2048, 16, 2, 256
    cfg = {
        "model_type": "qwen3_next",
        "hidden_size": h,
        "num_hidden_layers": 1,
        "num_attention_heads": heads,
        "num_key_value_heads": kv,
        "head_dim": hd,
        "vocab_size": 1000,
        "intermediate_size": 512,
        "num_experts": 0,
        "layer_types": ["full_attention"],
        "tie_word_embeddings": False,
    }
    a = "model.layers.0.self_attn."
    tensors = [
        ("model.embed_tokens.weight", "BF16", (1000, h)),
        ("lm_head.weight", "BF16", (1000, h)),
        ("model.norm.weight", "BF16", (h,)),
        ("model.layers.0.input_layernorm.weight", "BF16", (h,)),
        ("model.layers.0.post_attention_layernorm.weight", "BF16", (h,)),
        (a + "q_proj.weight", "BF16", (gated_q_rows, h)),
        (a + "k_proj.weight", "BF16", (kv * hd, h)),
        (a + "v_proj.weight", "BF16", (kv * hd, h)),
        (a + "o_proj.weight", "BF16", (h, heads * hd)),
        (a + "q_norm.weight", "BF16", (hd,)),
        (a + "k_norm.weight", "BF16", (hd,)),
        ("model.layers.0.mlp.gate_proj.weight", "BF16", (512, h)),
        ("model.layers.0.mlp.up_proj.weight", "BF16", (512, h)),
        ("model.layers.0.mlp.down_proj.weight", "BF16", (h, 512)),
    ]
    return cfg, tensors


def test_output_gated_attention_is_no_false_alarm_and_a_missing_gate_is_loud(tmp_path):
    # Qwen3-Next's q_proj writes the query and a per-channel output gate: 2 x 16 heads x 256 = 8,192 rows
    for rows, alarm in ((2 * 16 * 256, False), (16 * 256, True)):
        cfg, tensors = _tiny_qwen3_next(rows)
        folder = tmp_path / str(rows)
        write_checkpoint(folder, CommitSpec({"config.json": json.dumps(cfg).encode()}, tensors))
        m = compute_metrics(load_local(str(folder)))
        subjects = {c.subject for c in m.checks}
        assert ("attention parameters" in subjects) is alarm, m.checks
        if alarm:  # 16 x 256 rows x 2,048 columns of gate are missing: 8,388,608 parameters
            check = next(c for c in m.checks if c.subject == "attention parameters")
            assert (
                int(check.config_value.replace(",", "")) - int(check.tensor_value.replace(",", ""))
                == 4096 * 2048
            )


def _glm4v_vision(block_mlp: int) -> tuple[dict, list]:
    """A GLM-4.1V-style vision tower of one block: intermediate_size sizes the merger, not the blocks."""
    d, out_h, context, patch = 1536, 4096, 13696, 14
    vision = {
        "model_type": "glm4v_vision",
        "depth": 1,
        "hidden_size": d,
        "out_hidden_size": out_h,
        "intermediate_size": context,
        "patch_size": patch,
        "temporal_patch_size": 2,
        "spatial_merge_size": 2,
        "image_size": 336,
        "in_channels": 3,
    }
    e = "model.visual."
    tensors = [
        (e + "patch_embed.proj.weight", "BF16", (d, 3, 2, patch, patch)),
        (e + "patch_embed.proj.bias", "BF16", (d,)),
        (e + "embeddings.position_embedding.weight", "BF16", ((336 // patch) ** 2, d)),
        (e + "post_conv_layernorm.weight", "BF16", (d,)),
        (e + "post_layernorm.weight", "BF16", (d,)),
        (e + "downsample.weight", "BF16", (out_h, d, 2, 2)),
        (e + "downsample.bias", "BF16", (out_h,)),
        (e + "merger.proj.weight", "BF16", (out_h, out_h)),
        (e + "merger.post_projection_norm.weight", "BF16", (out_h,)),
        (e + "merger.post_projection_norm.bias", "BF16", (out_h,)),
        (e + "merger.gate_proj.weight", "BF16", (context, out_h)),
        (e + "merger.up_proj.weight", "BF16", (context, out_h)),
        (e + "merger.down_proj.weight", "BF16", (out_h, context)),
        (e + "blocks.0.norm1.weight", "BF16", (d,)),
        (e + "blocks.0.norm2.weight", "BF16", (d,)),
        (e + "blocks.0.attn.qkv.weight", "BF16", (3 * d, d)),
        (e + "blocks.0.attn.proj.weight", "BF16", (d, d)),
        (e + "blocks.0.mlp.gate_proj.weight", "BF16", (block_mlp, d)),
        (e + "blocks.0.mlp.up_proj.weight", "BF16", (block_mlp, d)),
        (e + "blocks.0.mlp.down_proj.weight", "BF16", (d, block_mlp)),
    ]
    text = {
        "hidden_size": 4096,
        "num_hidden_layers": 1,
        "num_attention_heads": 32,
        "num_key_value_heads": 2,
        "head_dim": 128,
        "intermediate_size": 128,
        "vocab_size": 8,
        "max_position_embeddings": 4096,
    }
    cfg = {"model_type": "glm4v", "text_config": text, "vision_config": vision, "tie_word_embeddings": True}
    t = "model.language_model."
    a = t + "layers.0.self_attn."
    language = [
        (t + "embed_tokens.weight", "BF16", (8, 4096)),
        (t + "norm.weight", "BF16", (4096,)),
        *[
            (t + f"layers.0.{n}.weight", "BF16", (4096,))
            for n in ("input_layernorm", "post_attention_layernorm")
        ],
        *[
            (t + f"layers.0.{n}.weight", "BF16", (4096,))
            for n in ("post_self_attn_layernorm", "post_mlp_layernorm")
        ],
        (a + "q_proj.weight", "BF16", (4096, 4096)),
        (a + "q_proj.bias", "BF16", (4096,)),
        (a + "k_proj.weight", "BF16", (256, 4096)),
        (a + "k_proj.bias", "BF16", (256,)),
        (a + "v_proj.weight", "BF16", (256, 4096)),
        (a + "v_proj.bias", "BF16", (256,)),
        (a + "o_proj.weight", "BF16", (4096, 4096)),
        (t + "layers.0.mlp.gate_up_proj.weight", "BF16", (256, 4096)),
        (t + "layers.0.mlp.down_proj.weight", "BF16", (4096, 128)),
    ]
    return cfg, [*tensors, *language]


def test_merger_sized_vision_config_is_no_false_alarm_and_a_wrong_block_is_loud(tmp_path):
    # the blocks' MLP is out_hidden_size (4,096) wide; a tower whose blocks were 13,696 wide would differ
    for block_mlp, alarm in ((4096, False), (13696, True)):
        cfg, tensors = _glm4v_vision(block_mlp)
        folder = tmp_path / str(block_mlp)
        write_checkpoint(folder, CommitSpec({"config.json": json.dumps(cfg).encode()}, tensors))
        m = compute_metrics(load_local(str(folder)))
        subjects = {c.subject for c in m.checks}
        assert ("vision_tower parameters" in subjects) is alarm, m.checks
        assert m.unverified == ()
