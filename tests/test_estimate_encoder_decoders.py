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
