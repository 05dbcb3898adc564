"""Image-to-text encoder-decoders held to figures written out by hand from their modeling files.

The sweep compares each with the model transformers builds on the meta device; these hold the estimate
of the configuration class's own defaults to arithmetic done apart from both, so that a change of the
estimate and of the class at once cannot pass unseen.
"""

from __future__ import annotations

from typing import Any

import pytest


def _metrics(config: dict[str, Any]) -> Any:
    pytest.importorskip("transformers")
    from hubdiff._metrics.compute import compute_metrics
    from hubdiff._metrics.options import MetricsOptions
    from hubdiff.snapshot import Snapshot

    return compute_metrics(
        Snapshot("x", "local", "", None, config, None, (), {}, ()), MetricsOptions(config_only=True)
    )


def test_pp_formulanet_defaults_count_the_sam_encoder_projector_and_decoder() -> None:
    """PPFormulaNetConfig()'s defaults (modeling_pp_formulanet.py, transformers 5.25.0): its text config
    says encoder_layers 12 but builds no text encoder; the decoder is decoder_layers (8) deep."""
    d, grid = 768, 512 // 16
    sam_layer = (
        4 * d  # layer_norm1, layer_norm2
        + (3 * d * d + 3 * d)  # attn.qkv
        + (d * d + d)  # attn.proj
        + (3072 * d + 3072)  # mlp.lin1
        + (d * 3072 + d)  # mlp.lin2
    )
    rel_pos = 8 * 2 * (2 * 14 - 1) * 64 + 4 * 2 * (2 * grid - 1) * 64  # 8 windowed, 4 global layers
    neck = 256 * d + 2 * 256 + 256 * 256 * 9 + 2 * 256
    tower = grid * grid * d + (d * 3 * 16 * 16 + d) + 12 * sam_layer + rel_pos + neck
    assert tower == 87_278_848
    projector = 512 * 256 * 9 + 1024 * 512 * 9 + (1024 * 1024 + 1024) + (512 * 1024 + 512)
    h = 512
    decoder_layer = 2 * 4 * (h * h + h) + (2048 * h + 2048) + (h * 2048 + h) + 3 * 2 * h
    decoder = 50_000 * h + (2560 + 2) * h + 8 * decoder_layer + 2 * 2 * h  # + layernorm_embedding, layer_norm
    head = 50_000 * h  # never tied
    m = _metrics({"model_type": "pp_formulanet"})
    assert m.params.by_component["vision_tower"] == tower
    assert m.params.by_component["multimodal_projector"] == projector == 7_472_640
    assert m.params.total == tower + projector + decoder + head == 180_897_536
    assert len(m.layers) == 8
    assert not [r for r in m.unverified if "not understood" in r or "not modelled" in r]
    # a generated token's keys and values: the self-attention's, 2 x 512 wide at 2 bytes, in 8 layers
    assert m.kv.bytes_per_token == 8 * 2 * h * 2
    assert any("cross-attention into the encoder" in a for a in m.kv.assumptions)


def test_vision_encoder_decoder_defaults_count_vit_and_the_bert_decoder() -> None:
    """VisionEncoderDecoderConfig's sub-config defaults (ViTConfig(), BertConfig(is_decoder=True,
    add_cross_attention=True)), written out from modeling_vit.py and modeling_bert.py."""
    d = 768
    block = 4 * (d * d + d) + (3072 * d + 3072) + (d * 3072 + d) + 2 * 2 * d
    vit = (d + (224 // 16) ** 2 * d + d) + (d * 3 * 16 * 16 + d) + 12 * block + 2 * d + (d * d + d)
    assert vit == 86_389_248  # ViT-B/16 at 224 with its pooler
    # self-attention and crossattention (q/k/v/output dense, a LayerNorm each), the MLP and its LayerNorm
    bert_layer = 2 * (4 * (d * d + d) + 2 * d) + (3072 * d + 3072) + (d * 3072 + d) + 2 * d
    bert = (30_522 + 512 + 2) * d + 2 * d + 12 * bert_layer + (d * d + d) + 2 * d + 30_522  # head tied
    m = _metrics(
        {
            "model_type": "vision-encoder-decoder",
            "encoder": {"model_type": "vit"},
            "decoder": {"model_type": "bert", "is_decoder": True, "add_cross_attention": True},
        }
    )
    assert m.params.by_component["vision_tower"] == vit
    assert m.params.total == vit + bert == 224_270_394
    assert not [r for r in m.unverified if "not understood" in r or "not counted" in r]
    assert m.kv.bytes_per_token == 12 * 2 * d * 2  # the self-attention's keys and values, 2 bytes each
    assert any("cross-attention into the encoder" in a for a in m.kv.assumptions)


def test_vision_encoder_decoder_marks_what_it_does_not_write() -> None:
    m = _metrics(
        {
            "model_type": "vision-encoder-decoder",
            "encoder": {"model_type": "deit"},
            "decoder": {"model_type": "gpt2", "is_decoder": True, "add_cross_attention": True},
        }
    )
    assert "encoder deit not modelled: not counted" in m.unverified
    assert "decoder gpt2: its cross-attention into the encoder not counted" in m.unverified
    assert not m.params.by_component.get("vision_tower")


def test_florence2_defaults_count_davit_the_projector_and_both_bart_stacks() -> None:
    """Florence2Config()'s defaults (modeling_florence2.py, transformers 5.25.0): a DaViT of four stages
    (widths 128..1024, depths 1, 1, 9, 1) and BART-large's width with 12 encoder and 12 decoder layers."""

    def block(d: int) -> int:  # a spatial and a channel block: two depthwise convolutions, two LayerNorms,
        half = 2 * (9 * d + d) + 2 * 2 * d + (3 * d * d + 3 * d) + (d * d + d)  # qkv and proj,
        return 2 * (half + (4 * d * d + 4 * d) + (d * 4 * d + d))  # and fc1 / fc2 at mlp_ratio 4

    convs = (128 * 3 * 7 * 7 + 128 + 2 * 128) + sum(
        d * into * 3 * 3 + d + 2 * into for into, d in ((128, 256), (256, 512), (512, 1024))
    )  # the first convolution's LayerNorm after it (its width), the others' before it (their input's)
    tower = convs + block(128) + block(256) + 9 * block(512) + block(1024)
    projector = (
        1024 * 1024 + 2 * 1024 + 50 * 512 * 2 + 100 * 1024
    )  # image_projection, norm, rows, columns, temporal
    d, ffn = 1024, 4096
    mlp = (ffn * d + ffn) + (d * ffn + d)
    encoder = (1024 + 2) * d + 2 * d + 12 * (4 * (d * d + d) + mlp + 2 * 2 * d)
    decoder = (1024 + 2) * d + 2 * d + 12 * (8 * (d * d + d) + mlp + 3 * 2 * d)
    shared = 50_265 * d  # the head tied to it
    m = _metrics({"model_type": "florence2"})
    assert m.params.by_component["vision_tower"] == tower
    assert m.params.by_component["multimodal_projector"] == projector
    assert m.params.total == tower + projector + shared + encoder + decoder == 497_863_680
    assert len(m.layers) == 12
    assert not [r for r in m.unverified if "not understood" in r or "not modelled" in r]
    assert m.kv.bytes_per_token == 12 * 2 * d * 2  # the decoder's self-attention only
    assert any("cross-attention into the encoder" in a for a in m.kv.assumptions)


def test_udop_defaults_count_both_t5_stacks_the_layout_and_patch_tables() -> None:
    """UdopConfig()'s defaults (modeling_udop.py, transformers 5.25.0): d_model 1024, 16 heads of d_kv 64,
    d_ff 4096 (relu, not gated), 24 encoder and 24 decoder blocks, three relative_bias_args tables."""
    d, inner, ff, vocab = 1024, 16 * 64, 4096, 33_201
    attention = 3 * inner * d + d * inner  # q, k, v, o: unbiased
    mlp = 2 * ff * d  # wi, wo: unbiased
    encoder = 24 * (attention + mlp + 2 * d) + 32 * 16 + d  # the first block's relative bias, final norm
    encoder += 2 * 1024 * d + 2 * 32 * 16  # cell_2d_embedding x / y; horizontal and vertical biases
    decoder = 24 * (2 * attention + mlp + 3 * d) + 32 * 16 + d + 2 * 32 * 16  # its "1d" table is tied
    patches = d * 3 * 16 * 16 + d  # patch_embed (the encoder's, tied) and the decoder's own
    m = _metrics({"model_type": "udop"})
    assert m.params.total == vocab * d + 2 * patches + encoder + decoder == 742_440_960
    assert len(m.layers) == 24
    assert not [r for r in m.unverified if "not understood" in r or "not modelled" in r]
    assert m.kv.bytes_per_token == 24 * 2 * inner * 2  # the decoder's self-attention only
    assert any("cross-attention into the encoder" in a for a in m.kv.assumptions)
    bad = _metrics({"model_type": "udop", "relative_bias_args": [{"type": "2d"}]})
    assert "relative_bias_args not understood: its relative bias tables not counted" in bad.unverified
