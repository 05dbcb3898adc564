"""Evolla's protein side (modeling_evolla.py): a SaProt protein encoder, a resampler compressing its
output into a fixed number of latents, and the aligners some decoder layers hold to read them.

The text model is Llama's and is written by the trunk; what is here is what its protein_encoder_config
and the outer config's aligner_* / resampler_* keys add. The aligners sit inside decoder layers (every
num_hidden_layers // aligner_num_add_layers-th), so their names carry the layer's index.
"""

from __future__ import annotations

from typing import Any

from .config import ArchConfig
from .estimate_facts import Triple


def _int(value: Any, default: int) -> int:
    return value if type(value) is int else default


def _linear(name: str, dt: str, rows: int, cols: int, bias: bool) -> list[Triple]:
    out: list[Triple] = [(name + ".weight", dt, (rows, cols))]
    return [*out, (name + ".bias", dt, (rows,))] if bias else out


def _layer_norm(name: str, dt: str, width: int) -> list[Triple]:
    return [(f"{name}.{part}", dt, (width,)) for part in ("weight", "bias")]


def _saprot(p: dict[str, Any], e: str, dt: str) -> list[Triple]:
    """SaProt (ESM-style, EvollaSaProtProteinEncoder): BERT-style biased attention and MLP, each after a
    LayerNorm, a final LayerNorm, and the rotary table kept as a persistent buffer (inv_freq, in the
    checkpoint); learned positions only when position_embedding_type is absolute, an embedding LayerNorm
    only with emb_layer_norm_before, a cross-attention of the same shapes only with add_cross_attention."""
    d = _int(p.get("hidden_size"), 1280)
    heads = max(_int(p.get("num_attention_heads"), 20), 1)
    ff = _int(p.get("intermediate_size"), 5120)
    head_dim = _int(p.get("head_dim"), 0) or d // heads
    out: list[Triple] = [(e + "embeddings.word_embeddings.weight", dt, (_int(p.get("vocab_size"), 446), d))]
    if p.get("emb_layer_norm_before"):
        out += _layer_norm(e + "embeddings.layer_norm", dt, d)
    if p.get("position_embedding_type", "rotary") == "absolute":
        positions = _int(p.get("max_position_embeddings"), 1026)
        out.append((e + "embeddings.position_embeddings.weight", dt, (positions, d)))
    out.append((e + "rotary_embeddings.inv_freq", "F32", ((head_dim + 1) // 2,)))
    attentions = ("attention", "crossattention") if p.get("add_cross_attention") else ("attention",)
    for i in range(_int(p.get("num_hidden_layers"), 33)):
        b = f"{e}encoder.layer.{i}."
        for part in attentions:
            for proj in ("query", "key", "value"):
                out += _linear(f"{b}{part}.self.{proj}", dt, d, d, True)
            out += _linear(f"{b}{part}.output.dense", dt, d, d, True)
            out += _layer_norm(f"{b}{part}.LayerNorm", dt, d)
        out += _linear(b + "intermediate.dense", dt, ff, d, True)
        out += _linear(b + "output.dense", dt, d, ff, True)
        out += _layer_norm(b + "LayerNorm", dt, d)
    return out + _layer_norm(e + "encoder.emb_layer_norm_after", dt, d)


def _feed_forward(f: str, dt: str, width: int, mult: int) -> list[Triple]:
    """EvollaFeedForward: a LayerNorm, then two unbiased linears int(width * mult) wide."""
    inner = int(width * mult)
    fc = [(f + "fc1.weight", dt, (inner, width)), (f + "fc2.weight", dt, (width, inner))]
    return [*_layer_norm(f + "norm", dt, width), *fc]


def evolla_protein(cfg: ArchConfig, text_hidden: int, dt: str) -> list[Triple]:
    """The protein encoder, its resampler (latents of the encoder's width, perceiver blocks of unbiased
    attention and feed-forward, a biased projection to the text width and a LayerNorm there) and the
    aligners: in each decoder layer whose index + 1 is a multiple of max(layers // aligner_num_add_layers,
    1), a cross-attention of biased query / key_protein / value_protein (the resampler's output is text
    wide), an RMS norm, an output projection biased as aligner_enable_bias says, a feed-forward
    aligner_ffn_mult wide, and a scalar gate on each."""
    p = cfg.raw.get("protein_encoder_config")
    p = p if isinstance(p, dict) else {}
    d = _int(p.get("hidden_size"), 1280)
    e = "model.protein_encoder."
    out = _saprot(p, e + "model.", dt)
    r = e + "sequence_compressor_resampler."
    latents = cfg.number("resampler_num_latents", default=64) or 0
    dim_head = cfg.number("resampler_dim_head", default=64) or 0
    inner = dim_head * (cfg.number("resampler_heads", default=8) or 0)
    ff_mult = cfg.number("resampler_ff_mult", default=4) or 0
    out.append((r + "latents", dt, (latents, d)))
    for i in range(cfg.number("resampler_depth", default=6) or 0):
        a = f"{r}layers.{i}.0."
        out += _layer_norm(a + "norm_media", dt, d) + _layer_norm(a + "norm_latents", dt, d)
        out += [(a + "to_q.weight", dt, (inner, d)), (a + "to_kv.weight", dt, (2 * inner, d))]
        out.append((a + "to_out.weight", dt, (d, inner)))
        out += _feed_forward(f"{r}layers.{i}.1.", dt, d, ff_mult)
    out += _layer_norm(r + "norm", dt, text_hidden)
    out += _linear(r + "protein_projector", dt, text_hidden, d, True)
    depth = cfg.num_layers or 0
    every = max(depth // max(cfg.number("aligner_num_add_layers", default=8) or 0, 1), 1)
    out_bias = cfg.get("aligner_enable_bias", default=True) is not False
    ffn_mult = cfg.number("aligner_ffn_mult", default=4) or 0
    h = text_hidden
    heads = max(cfg.num_heads or 1, 1)
    every_head = heads * (h // heads)  # all_head_size: the width the heads cover
    for i in range(depth):
        if (i + 1) % every:
            continue
        a = f"model.layers.{i}.adapter."
        for proj in ("query", "key_protein", "value_protein"):
            out += _linear(a + proj, dt, every_head, h, True)
        out.append((a + "attention_norm.weight", dt, (h,)))
        out += _linear(a + "out_proj", dt, h, h, out_bias)  # reads the heads' h-wide output
        out += _feed_forward(a + "ff.", dt, h, ffn_mult)
        out += [(a + "gate_attention", dt, (1,)), (a + "gate_ffw", dt, (1,))]
    return out
