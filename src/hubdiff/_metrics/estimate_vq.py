"""An image tokenizer inside a model's checkpoint: Chameleon's VQ-VAE encoder (``vq_config``), which turns an
image into codebook indices that the language model reads as tokens (modeling_chameleon.py: ChameleonVQVAE).
It runs once per image, not per token: counted with the vision side."""

from __future__ import annotations

from typing import Any

from .config import ArchConfig
from .estimate_facts import Triple


def _int(value: Any, default: int) -> int:
    return value if type(value) is int and value > 0 else default


def vq_tokenizer(cfg: ArchConfig, prefix: str = "model.vqmodel.", dt: str = "BF16") -> list[Triple]:
    """A convolutional encoder (resolution levels of channel_multiplier x base_channels, num_res_blocks
    GroupNorm + 3x3 residual blocks each, a 1x1 shortcut where the width changes, vanilla attention at
    attn_resolutions, a strided 3x3 downsampling between levels; a middle of two blocks around one
    attention), its output convolution to latent_channels (twice with double_latent), a codebook of
    num_embeddings x embed_dim and the 1x1 convolutions into and out of it. Every convolution and norm is
    biased."""
    vq = cfg.raw.get("vq_config")
    if not isinstance(vq, dict):
        return []
    base = _int(vq.get("base_channels"), 128)
    mults = vq.get("channel_multiplier", [1, 1, 2, 2, 4])
    if not isinstance(mults, list) or not mults or any(type(m) is not int or m <= 0 for m in mults):
        return []
    blocks = _int(vq.get("num_res_blocks"), 2)
    latent = _int(vq.get("latent_channels"), 256)
    embed = _int(vq.get("embed_dim"), 256)
    codes = _int(vq.get("num_embeddings"), 8192)
    channels = _int(vq.get("in_channels"), 3)
    resolution = _int(vq.get("resolution"), 512)
    attn_at = vq.get("attn_resolutions") or []
    vanilla = vq.get("attn_type", "vanilla") == "vanilla"
    e = prefix + "encoder."
    out: list[Triple] = _conv(e + "conv_in", base, channels, 3, dt)
    width, res = base, resolution
    for level, mult in enumerate(mults):
        for i in range(blocks):
            out += resnet_block(f"{e}down.{level}.block.{i}.", width, base * mult, dt)
            width = base * mult
            if vanilla and isinstance(attn_at, list) and res in attn_at:
                out += attention_block(f"{e}down.{level}.attn.{i}.", width, dt)
        if level != len(mults) - 1:
            out += _conv(f"{e}down.{level}.downsample.conv", width, width, 3, dt)
            res //= 2
    out += resnet_block(e + "mid.block_1.", width, width, dt)
    if vanilla:
        out += attention_block(e + "mid.attn_1.", width, dt)
    out += resnet_block(e + "mid.block_2.", width, width, dt)
    out += [(f"{e}norm_out.{part}", dt, (width,)) for part in ("weight", "bias")]
    out += _conv(e + "conv_out", 2 * latent if vq.get("double_latent") is True else latent, width, 3, dt)
    out.append((prefix + "quantize.embedding.weight", dt, (codes, embed)))
    out += _conv(prefix + "quant_conv", embed, latent, 1, dt)
    out += _conv(prefix + "post_quant_conv", latent, embed, 1, dt)
    return out


def _conv(name: str, out_channels: int, in_channels: int, kernel: int, dt: str) -> list[Triple]:
    return [
        (name + ".weight", dt, (out_channels, in_channels, kernel, kernel)),
        (name + ".bias", dt, (out_channels,)),
    ]


def resnet_block(p: str, width: int, out_width: int, dt: str) -> list[Triple]:
    """A VQ-GAN ResNet block: two GroupNorms and 3x3 convolutions, a 1x1 shortcut where the width changes."""
    out: list[Triple] = [(f"{p}norm1.{part}", dt, (width,)) for part in ("weight", "bias")]
    out += _conv(p + "conv1", out_width, width, 3, dt)
    out += [(f"{p}norm2.{part}", dt, (out_width,)) for part in ("weight", "bias")]
    out += _conv(p + "conv2", out_width, out_width, 3, dt)
    if width != out_width:
        out += _conv(p + "nin_shortcut", out_width, width, 1, dt)
    return out


def attention_block(p: str, width: int, dt: str) -> list[Triple]:
    """A VQ-GAN attention block: a GroupNorm and 1x1 q, k, v and output convolutions."""
    out: list[Triple] = [(f"{p}norm.{part}", dt, (width,)) for part in ("weight", "bias")]
    for n in ("q", "k", "v", "proj_out"):
        out += _conv(p + n, width, width, 1, dt)
    return out
