"""Unlimited-OCR's towers (transformers/models/unlimited_ocr): SAM's ViT-B with its neck and two strided
convolutions, then a CLIP-L encoder that takes SAM's features as its patches (no patch embedding of its
own), one linear from both towers' features into the text width, and the learned image-newline and
view-separator rows. Its sub-configs (sam_config, encoder_config) are not resolved through transformers,
so a size a config leaves out takes its configuration class's default here."""

from __future__ import annotations

from typing import Any

from .config import ArchConfig
from .estimate_facts import Triple

# UnlimitedOcrSamVisionConfig's and UnlimitedOcrVisionEncoderConfig's defaults
_SAM = {
    "hidden_size": 768,
    "output_channels": 256,
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
    "num_channels": 3,
    "image_size": 1024,
    "patch_size": 16,
    "qkv_bias": True,
    "use_abs_pos": True,
    "use_rel_pos": True,
    "window_size": 14,
    "global_attn_indexes": [2, 5, 8, 11],
    "mlp_dim": 3072,
    "downsample_channels": [512, 1024],
}
_CLIP = {
    "hidden_size": 1024,
    "intermediate_size": 4096,
    "num_hidden_layers": 24,
    "image_size": 224,
    "patch_size": 14,
}


def _part(cfg: ArchConfig, key: str, defaults: dict[str, Any]) -> dict[str, Any]:
    vision = cfg.raw.get("vision_config")
    given = vision.get(key) if isinstance(vision, dict) else None
    given = given if isinstance(given, dict) else {}
    return {**defaults, **{k: v for k, v in given.items() if v is not None}}


def unlimited_ocr_vision(cfg: ArchConfig, text_hidden: int, dt: str) -> list[Triple]:
    from .estimate_vision import _sam_tower, _vit_block

    sam, clip = _part(cfg, "sam_config", _SAM), _part(cfg, "encoder_config", _CLIP)
    out_c, channels = sam["output_channels"], list(sam["downsample_channels"])
    s = "model.vision_tower.sam_encoder."
    out: list[Triple] = _sam_tower(sam, s, dt)
    out += [
        (s + "proj.conv1.weight", dt, (channels[0], out_c, 3, 3)),
        (s + "proj.conv2.weight", dt, (channels[1], channels[0], 3, 3)),
    ]
    d, mlp = clip["hidden_size"], clip["intermediate_size"]
    c = "model.vision_tower.vision_encoder."
    out += [
        (c + "embeddings.class_embedding", dt, (d,)),
        (
            c + "embeddings.position_embedding.weight",
            dt,
            ((clip["image_size"] // clip["patch_size"]) ** 2 + 1, d),
        ),
        (c + "pre_layrnorm.weight", dt, (d,)),
        (c + "pre_layrnorm.bias", dt, (d,)),
    ]
    for i in range(clip["num_hidden_layers"]):
        out += _vit_block(f"{c}encoder.layers.{i}.", d, mlp, dt, "out_proj", ("layer_norm1", "layer_norm2"))
    return [
        *out,
        ("model.multi_modal_projector.weight", dt, (text_hidden, channels[-1] + d)),
        ("model.multi_modal_projector.bias", dt, (text_hidden,)),
        ("model.view_separator", dt, (text_hidden,)),
        ("model.image_newline", dt, (text_hidden,)),
    ]
