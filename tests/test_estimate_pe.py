"""Perception LM's tower without timm: the Perception Encoder table and model_args held to arithmetic
written out from timm's Eva, and what is marked.

The sweep builds Perception LM only where timm is installed (scripts/sweep.py); the suite's environment
has no timm, so the estimate is held here to its figure worked by hand.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from hubdiff._metrics.estimate_pe import pe_options, perception_encoder

from .oracle import PERCEPTION_LM_1B_ENCODER

# facebook/Perception-LM-1B's encoder as transformers' conversion script writes it, as the sweep fills it
PLM_1B_ARGS = PERCEPTION_LM_1B_ENCODER


def _encoder(vision: dict[str, Any]) -> list[tuple[str, str, tuple[int, ...]]]:
    options = pe_options(vision)
    assert options is not None
    return perception_encoder(options, "")


def test_perception_lm_1b_encoder_by_hand() -> None:
    d, depth, patches = 1024, 23, (448 // 14) ** 2
    # a block: two LayerNorms (4d), fused biased q/k/v (3d^2 + 3d), a biased output projection
    # (d^2 + d), a biased 4d-wide GELU MLP (8d^2 + 5d), two layer-scale vectors (2d)
    block = 12 * d * d + 15 * d
    # a class token, learned positions for every patch and it, an unbiased 14x14 patch embedding, the
    # pre-transformer LayerNorm; no pooling latent, no post norm, no fc norm
    embeddings = d + (patches + 1) * d + d * 3 * 14 * 14 + 2 * d
    tensors = _encoder({"architecture": "vit_pe_core_large_patch14_336", "model_args": PLM_1B_ARGS})
    assert sum(math.prod(shape) for _, _, shape in tensors) == depth * block + embeddings == 291_415_040
    names = {name for name, _, _ in tensors}
    assert (
        "norm.weight" not in names
        and "attn_pool.latent" not in names
        and "patch_embed.proj.bias" not in names
    )


def test_the_definition_alone_is_timms_core_encoder() -> None:
    """Without model_args, the core encoder keeps its attention pooling and post-transformer norm, and
    sizes its positions by its own 336-pixel input: 24 x 24 patches and the class token."""
    tensors = _encoder({"architecture": "vit_pe_core_large_patch14_336"})
    assert ("pos_embed", "BF16", (1, 577, 1024)) in tensors
    assert ("attn_pool.kv.weight", "BF16", (2048, 1024)) in tensors
    assert ("norm.weight", "BF16", (1024,)) in tensors


def _metrics(vision: dict[str, Any]) -> Any:
    pytest.importorskip("transformers")
    from hubdiff._metrics.compute import compute_metrics
    from hubdiff._metrics.options import MetricsOptions
    from hubdiff.snapshot import Snapshot

    config: dict[str, Any] = {
        "model_type": "perception_lm",
        "text_config": {"model_type": "llama", "hidden_size": 2048},
        "vision_config": {"model_type": "timm_wrapper", **vision},
    }
    return compute_metrics(
        Snapshot("x", "local", "", None, config, None, (), {}, ()), MetricsOptions(config_only=True)
    )


def test_perception_lm_counts_its_encoder_and_projector() -> None:
    m = _metrics({"architecture": "vit_pe_core_large_patch14_336", "model_args": PLM_1B_ARGS})
    assert m.params.by_component.get("vision_tower") == 291_415_040
    # two biased linears: 1024 -> 2048 -> 2048
    assert m.params.by_component.get("multimodal_projector") == 1024 * 2048 + 2048 + 2048 * 2048 + 2048
    assert not [r for r in m.unverified if "tower" in r or "not understood" in r]


def test_an_architecture_not_in_the_table_is_marked_never_guessed() -> None:
    m = _metrics({"architecture": "eva02_large_patch14_448", "model_args": {"embed_dim": 1024}})
    assert "vision tower timm_wrapper not modelled: not counted" in m.unverified
    assert not m.params.by_component.get("vision_tower")


def test_model_args_that_may_change_the_encoder_are_marked() -> None:
    m = _metrics(
        {
            "architecture": "vit_pe_core_large_patch14_336",
            "model_args": {**PLM_1B_ARGS, "swiglu_mlp": True, "qkv_bias": None, "drop_path_rate": 0.1},
        }
    )
    assert [r for r in m.unverified if "model_args" in r] == [
        "vision_config.model_args.swiglu_mlp not understood: timm's vit_pe_core_large_patch14_336 taken as defined"
    ]
