"""VisionEncoderDecoderModel (model_type vision-encoder-decoder): any image encoder under any decoder.

The composite builds its ``encoder`` sub-config with AutoModel and its ``decoder`` with
AutoModelForCausalLM (modeling_vision_encoder_decoder.py), so its layout is the two classes' side by side:
each half is written here only where hubdiff has an estimate of that sub-config's model_type as the
composite builds it, and is marked not modelled otherwise, never guessed. A decoder reads the encoder's
states through a cross-attention of its own in every layer (its keys and values are per image, cached once,
not per generated token); when the decoder gives no cross_attention_hidden_size and the two widths differ,
the composite adds enc_to_dec_proj, a biased linear map of the encoder's states into the decoder's width.

Beside it, the text encoders of other image-to-text encoder-decoders that the trunk's decoder does not
hold: Florence-2's BART encoder, and UDOP's two T5-style stacks, written whole. Everywhere here a
generated token's KV is the decoder's self-attention's; the cross-attention's keys and values are per
input (kv.py says so in its assumptions).
"""

from __future__ import annotations

from typing import Any

from .config import MAX_DIM, ArchConfig
from .estimate_facts import Triple

OUTER = "vision-encoder-decoder"


def _int(value: Any, default: int) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_DIM:
        return value
    return default


def _side(value: Any, default: int) -> tuple[int, int]:
    """An image or patch size given as one number or as [height, width] (ViTConfig accepts both)."""
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return _int(value[0], default), _int(value[1], default)
    return _int(value, default), _int(value, default)


def _linear(name: str, rows: int, cols: int, bias: bool = True) -> list[Triple]:
    return [(name + ".weight", "BF16", (rows, cols))] + ([(name + ".bias", "BF16", (rows,))] if bias else [])


def _vit(v: dict, e: str) -> list[Triple]:
    """ViTModel as AutoModel builds it (modeling_vit.py: a pooling layer, no mask token): a class token, a
    learned position per patch and one for it, a biased patch convolution; blocks of query/key/value
    (biased when qkv_bias) and a biased output dense layer, a biased intermediate / output MLP, LayerNorms
    before and after; a final LayerNorm and the pooler, a biased dense layer into pooler_output_size
    (hidden_size when unset)."""
    d, depth = _int(v.get("hidden_size"), 768), _int(v.get("num_hidden_layers"), 12)
    mlp, channels = _int(v.get("intermediate_size"), 3072), _int(v.get("num_channels"), 3)
    (ih, iw), (ph, pw) = _side(v.get("image_size"), 224), _side(v.get("patch_size"), 16)
    patches = (ih // ph) * (iw // pw) if ph and pw else 0
    bias = v.get("qkv_bias", True) is not False
    out: list[Triple] = [
        (e + "embeddings.cls_token", "BF16", (1, 1, d)),
        (e + "embeddings.position_embeddings", "BF16", (1, patches + 1, d)),
        (e + "embeddings.patch_embeddings.projection.weight", "BF16", (d, channels, ph, pw)),
        (e + "embeddings.patch_embeddings.projection.bias", "BF16", (d,)),
    ]
    for i in range(depth):
        b = f"{e}encoder.layer.{i}."
        for proj in ("query", "key", "value"):
            out += _linear(f"{b}attention.attention.{proj}", d, d, bias)
        out += _linear(b + "attention.output.dense", d, d)
        out += _linear(b + "intermediate.dense", mlp, d) + _linear(b + "output.dense", d, mlp)
        out += [
            (f"{b}{n}.{p}", "BF16", (d,))
            for n in ("layernorm_before", "layernorm_after")
            for p in ("weight", "bias")
        ]
    out += [(f"{e}layernorm.{p}", "BF16", (d,)) for p in ("weight", "bias")]
    return out + _linear(e + "pooler.dense", _int(v.get("pooler_output_size"), d), d)


# the encoder sub-config's model_type -> its writer and the key of its width (what the decoder reads)
ENCODERS = {"vit": (_vit, "hidden_size")}
# decoder model_types whose cross-attention into the encoder hubdiff writes as the composite builds it:
# BERT's crossattention (estimate._bert_decoder, when add_cross_attention) and TrOCR's encoder_attn
DECODERS = frozenset({"bert", "trocr"})


def _encoder(cfg: ArchConfig) -> dict[str, Any]:
    value = cfg.raw.get("encoder")
    return value if isinstance(value, dict) else {}


def is_composite(cfg: ArchConfig) -> bool:
    return cfg.raw.get("model_type") == OUTER


def vision_encoder_decoder(cfg: ArchConfig, text_hidden: int, dt: str) -> list[Triple]:
    """The composite's encoder (where modelled) and its enc_to_dec_proj, as the own tower of the outer type."""
    v = _encoder(cfg)
    entry = ENCODERS.get(str(v.get("model_type") or ""))
    if entry is None:
        return []
    writer, width_key = entry
    out = writer(v, "encoder.")
    width = _int(v.get(width_key), 768)
    if cfg.get("cross_attention_hidden_size") is None and width != text_hidden:
        out += _linear("enc_to_dec_proj", text_hidden, width)
    return out


def encoder_decoder_doubts(cfg: ArchConfig) -> list[str]:
    """What of the composite is not counted: an encoder or a decoder's cross-attention not written here;
    Florence-2's language model of another type than the BART written here."""
    if cfg.model_type == "udop" and _udop_biases(cfg, cfg.number("num_heads", default=8) or 0) is None:
        return ["relative_bias_args not understood: its relative bias tables not counted"]
    if cfg.raw.get("model_type") == "florence2" and cfg.model_type != "bart":
        return [f"language model {cfg.model_type or '(no model_type)'} not modelled: taken as BART's"]
    if not is_composite(cfg):
        return []
    out: list[str] = []
    encoder = str(_encoder(cfg).get("model_type") or "")
    if encoder not in ENCODERS:
        out.append(f"encoder {encoder or '(no model_type)'} not modelled: not counted")
    if cfg.model_type not in DECODERS:
        out.append(
            f"decoder {cfg.model_type or '(no model_type)'}: its cross-attention into the encoder not counted"
        )
    return out


def bert_cross_attention(cfg: ArchConfig) -> bool:
    """BertLMHeadModel builds a crossattention in every layer only when add_cross_attention is set (the
    composite's configuration class sets it on its decoder)."""
    return cfg.get("add_cross_attention") is True


def bart_encoder(cfg: ArchConfig, h: int, vocab: int, dt: str) -> list[Triple]:
    """BartModel's encoder (modeling_bart.py) beside the decoder the trunk writes: learned positions two rows
    longer than max_position_embeddings, layernorm_embedding, encoder_layers of biased q/k/v/out_proj and
    fc1 / fc2 encoder_ffn_dim wide, each followed by a biased LayerNorm of its own; no final norm. Tied,
    the encoder and decoder read the one shared table the trunk writes; untied, transformers keeps the
    shared table and the encoder's as tensors of their own beside the decoder's and the head."""
    depth = cfg.number("encoder_layers", default=12) or 0
    ffn = cfg.number("encoder_ffn_dim", default=4096) or 0
    e = "model.language_model.encoder."
    out: list[Triple] = [(e + "embed_positions.weight", dt, ((cfg.max_context or 0) + 2, h))]
    out += [(f"{e}layernorm_embedding.{p}", dt, (h,)) for p in ("weight", "bias")]
    for i in range(depth):
        b = f"{e}layers.{i}."
        for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
            out += _linear(f"{b}self_attn.{proj}", h, h)
        out += _linear(b + "fc1", ffn, h) + _linear(b + "fc2", h, ffn)
        out += [
            (f"{b}{n}.{p}", dt, (h,))
            for n in ("self_attn_layer_norm", "final_layer_norm")
            for p in ("weight", "bias")
        ]
    if not cfg.tied_embeddings:
        out += [
            ("model.language_model.shared.weight", dt, (vocab, h)),
            (e + "embed_tokens.weight", dt, (vocab, h)),
        ]
    return out


def _udop_biases(cfg: ArchConfig, heads: int) -> list[int] | None:
    """Rows of each relative_bias_args entry's table (modeling_udop.create_relative_bias): its own
    relative_attention_num_buckets (the bias class's 32 when unset, not the config's), two more with
    prefix_bucket unless expand; None where an entry is not one the class builds."""
    args = cfg.get("relative_bias_args")
    if args is None:
        return []
    if not isinstance(args, list):
        return None
    rows: list[int] = []
    for entry in args:
        if not isinstance(entry, dict) or entry.get("type") not in ("1d", "horizontal", "vertical"):
            return None
        if entry.get("num_heads", heads) != heads:
            return None
        buckets = entry.get("relative_attention_num_buckets", 32)
        if not isinstance(buckets, int) or isinstance(buckets, bool) or not 0 <= buckets <= MAX_DIM:
            return None
        rows.append(
            buckets + (2 if entry.get("prefix_bucket") is True and entry.get("expand") is not True else 0)
        )
    return rows


def udop(cfg: ArchConfig, depth: int, h: int, vocab: int, dt: str) -> list[Triple]:
    """UdopForConditionalGeneration (modeling_udop.py): a shared token table (the head and both stacks'
    embed_tokens tied to it) and a biased patch convolution (the encoder's embed_patches tied to it); two
    T5-style stacks of unbiased q/k/v/o num_heads x d_kv wide, a relative position bias in the first block's
    self-attention, an unbiased wi / wo MLP d_ff wide (wi_0 and wi_1 when feed_forward_proj is gated-*), a
    weight-only LayerNorm before each sub-layer and after the stack; the encoder (num_layers deep) adds the
    cell_2d_embedding's x and y tables, the decoder (num_decoder_layers) a cross-attention in every block and
    a patch convolution of its own (embed_patches, never tied); each stack holds the relative_bias_args
    tables, the first of which is tied to the encoder's first-block bias."""
    heads, d_kv = cfg.number("num_heads", default=8) or 0, cfg.number("d_kv", default=64) or 0
    inner, ff = heads * d_kv, cfg.number("d_ff", default=2048) or 0
    buckets = cfg.number("relative_attention_num_buckets", default=32) or 0
    # is_gated_act as the configuration class left it (derived from feed_forward_proj unless given)
    gated = cfg.get(
        "is_gated_act", default=str(cfg.get("feed_forward_proj", default="relu")).startswith("gated-")
    )
    gated = gated is True
    encoder_depth = cfg.number("num_layers", default=6) or 0
    channels = cfg.number("num_channels", default=3) or 0
    patch = _side(cfg.get("patch_size", default=16), 16)  # image_size only checks the input's size
    cells = cfg.number("max_2d_position_embeddings", default=1024) or 0
    biases = _udop_biases(cfg, heads) or []
    out: list[Triple] = [("shared.weight", dt, (vocab, h))]
    out += [("patch_embed.proj.weight", dt, (h, channels, *patch)), ("patch_embed.proj.bias", dt, (h,))]
    for stack, n in (("encoder", encoder_depth), ("decoder", depth)):
        parts = ("SelfAttention", "EncDecAttention") if stack == "decoder" else ("SelfAttention",)
        for i in range(n):
            b = f"{stack}.block.{i}.layer."
            for j, part in enumerate(parts):
                for proj in ("q", "k", "v"):
                    out += _linear(f"{b}{j}.{part}.{proj}", inner, h, False)
                out += [
                    *_linear(f"{b}{j}.{part}.o", h, inner, False),
                    (f"{b}{j}.layer_norm.weight", dt, (h,)),
                ]
            if i == 0:
                out.append((f"{b}0.SelfAttention.relative_attention_bias.weight", dt, (buckets, heads)))
            f = f"{b}{len(parts)}."
            for wi in ("wi_0", "wi_1") if gated else ("wi",):
                out += _linear(f"{f}DenseReluDense.{wi}", ff, h, False)
            out += [*_linear(f"{f}DenseReluDense.wo", h, ff, False), (f + "layer_norm.weight", dt, (h,))]
        out.append((f"{stack}.final_layer_norm.weight", dt, (h,)))
        out += [
            (f"{stack}.relative_bias.biases.{k}.relative_attention_bias.weight", dt, (rows, heads))
            for k, rows in enumerate(biases)
            if k
        ]
    out += [(f"encoder.cell_2d_embedding.{a}_position_embeddings.weight", dt, (cells, h)) for a in ("x", "y")]
    return [
        *out,
        ("decoder.embed_patches.proj.weight", dt, (h, channels, *patch)),
        ("decoder.embed_patches.proj.bias", dt, (h,)),
    ]
