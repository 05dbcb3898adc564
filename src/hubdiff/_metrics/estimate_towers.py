"""Vision towers and projectors of further multimodal architectures, keyed by the outer model_type.

A tower is vouched for only beside the projector of the architecture it was read from: the same SigLIP
tower feeds Idefics3's pixel-shuffle connector, Aria's cross-attention projector and LFM2-VL's MLP, and
counting the tower without its projector would be a wrong figure with no word said. So an outer
model_type is modelled only when its entry names both, and the tower family in its vision config is
the one the entry was written from. Defaults of keys a config may leave out are the configuration
classes' own (transformers' configuration_*.py), as elsewhere in the estimate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .config import MAX_DIM, VISION_CONFIG_KEYS, ArchConfig
from .estimate_facts import Triple
from .estimate_fastvit import fast_vlm_vision, fastvit_architecture
from .estimate_mobilenet import gemma3n_architecture, gemma3n_vision
from .estimate_pe import pe_options, perception_lm_vision

DT = "BF16"


def _int(value: Any, default: int) -> int:
    """A size as the class reads it: the config's when it is a bounded whole number, else the default."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_DIM:
        return value
    return default


def _pair(cfg: ArchConfig, key: str, default: int) -> tuple[int, int]:
    """A size a tower may give as one number or as [height, width] (InternViT's image_size)."""
    tower = cfg.resolved_vision or next(
        (cfg.raw[k] for k in VISION_CONFIG_KEYS if isinstance(cfg.raw.get(k), dict)), {}
    )
    value = tower.get(key)
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return _int(value[0], default), _int(value[1], default)
    return _int(value, default), _int(value, default)


def _norm(name: str, width: int, bias: bool = True) -> list[Triple]:
    out: list[Triple] = [(name + ".weight", DT, (width,))]
    return out + ([(name + ".bias", DT, (width,))] if bias else [])


def _linear(name: str, out: int, into: int, bias: bool = True) -> list[Triple]:
    return [(name + ".weight", DT, (out, into))] + ([(name + ".bias", DT, (out,))] if bias else [])


def vit_block(
    b: str,
    d: int,
    mlp: int,
    dt: str = DT,
    o_proj: str = "out_proj",
    norms: tuple[str, str] = ("layer_norm1", "layer_norm2"),
) -> list[Triple]:
    """A CLIP-style vision block: biased q/k/v/o and fc1/fc2, layer norms with bias."""
    out: list[Triple] = []
    for proj in ("q_proj", "k_proj", "v_proj", o_proj):
        out += [(b + f"self_attn.{proj}.weight", dt, (d, d)), (b + f"self_attn.{proj}.bias", dt, (d,))]
    out += [
        (b + "mlp.fc1.weight", dt, (mlp, d)),
        (b + "mlp.fc1.bias", dt, (mlp,)),
        (b + "mlp.fc2.weight", dt, (d, mlp)),
        (b + "mlp.fc2.bias", dt, (d,)),
    ]
    for norm in norms:
        out += [(b + f"{norm}.weight", dt, (d,)), (b + f"{norm}.bias", dt, (d,))]
    return out


def _siglip(v: dict, e: str, *, linear_patch: bool = False) -> list[Triple]:
    """A SigLIP encoder (Idefics2/3, SmolVLM, PaddleOCR-VL and SigLIP 2 included): a biased patch
    embedding (a convolution, or SigLIP 2's linear map of flattened patches), a learned position per
    patch, CLIP-style blocks with biased out_proj, a final LayerNorm, and the attention-pooling head
    when vision_use_head is set."""
    d, mlp, depth = v["hidden_size"], v["intermediate_size"], v["num_hidden_layers"]
    patch, channels = _int(v.get("patch_size"), 16), _int(v.get("num_channels"), 3)
    if linear_patch:
        out: list[Triple] = [(e + "embeddings.patch_embedding.weight", DT, (d, channels * patch * patch))]
        positions = _int(v.get("num_patches"), 256)
    else:
        out = [(e + "embeddings.patch_embedding.weight", DT, (d, channels, patch, patch))]
        positions = (_int(v.get("image_size"), 224) // patch) ** 2
    out += [(e + "embeddings.patch_embedding.bias", DT, (d,))]
    out += [(e + "embeddings.position_embedding.weight", DT, (positions, d))]
    for i in range(depth):
        out += vit_block(f"{e}encoder.layers.{i}.", d, mlp)
    out += _norm(e + "post_layernorm", d)
    if v.get("vision_use_head") is True:
        p = e + "head."
        out += [(p + "probe", DT, (1, 1, d))]
        out += [
            (p + "attention.in_proj_weight", DT, (3 * d, d)),
            (p + "attention.in_proj_bias", DT, (3 * d,)),
        ]
        out += _linear(p + "attention.out_proj", d, d) + _norm(p + "layernorm", d)
        out += _linear(p + "mlp.fc1", mlp, d) + _linear(p + "mlp.fc2", d, mlp)
    return out


def _clip(v: dict, e: str) -> list[Triple]:
    """A CLIP encoder: an unbiased patch convolution, a class token and its position, a LayerNorm before
    and after the blocks."""
    d, mlp, depth = v["hidden_size"], v["intermediate_size"], v["num_hidden_layers"]
    patch, channels = _int(v.get("patch_size"), 32), _int(v.get("num_channels"), 3)
    positions = (_int(v.get("image_size"), 224) // patch) ** 2 + 1
    out: list[Triple] = [
        (e + "embeddings.class_embedding", DT, (d,)),
        (e + "embeddings.patch_embedding.weight", DT, (d, channels, patch, patch)),
        (e + "embeddings.position_embedding.weight", DT, (positions, d)),
    ]
    out += _norm(e + "pre_layrnorm", d) + _norm(e + "post_layernorm", d)
    for i in range(depth):
        out += vit_block(f"{e}encoder.layers.{i}.", d, mlp)
    return out


def _glm_ocr(cfg: ArchConfig, v: dict, text_hidden: int, context: int | None = None) -> list[Triple]:
    """GLM-OCR: GLM-4V's tower with per-head q/k RMS norms, a gated MLP intermediate_size wide (biased
    with the attention), no learned positions; the merger's gated MLP is out_hidden_size x in_channels
    wide, as the class builds it."""
    d, out_h, depth = v["hidden_size"], v["out_hidden_size"], _int(v.get("depth"), 24)
    mlp, heads = _int(v.get("intermediate_size"), 4096), _int(v.get("num_heads"), 16) or 1
    patch, temporal = _int(v.get("patch_size"), 14), _int(v.get("temporal_patch_size"), 2)
    channels, merge = _int(v.get("in_channels"), 3), _int(v.get("spatial_merge_size"), 2)
    bias = v.get("attention_bias", True) is not False
    e = "model.visual."
    out: list[Triple] = [(e + "patch_embed.proj.weight", DT, (d, channels, temporal, patch, patch))]
    out += [(e + "patch_embed.proj.bias", DT, (d,))]
    for i in range(depth):
        b = f"{e}blocks.{i}."
        out += _norm(b + "norm1", d, False) + _norm(b + "norm2", d, False)
        out += _linear(b + "attn.qkv", 3 * d, d, bias) + _linear(b + "attn.proj", d, d, bias)
        out += _norm(b + "attn.q_norm", d // heads, False) + _norm(b + "attn.k_norm", d // heads, False)
        out += _linear(b + "mlp.gate_proj", mlp, d, bias) + _linear(b + "mlp.up_proj", mlp, d, bias)
        out += _linear(b + "mlp.down_proj", d, mlp, bias)
    context = out_h * channels if context is None else context
    out += _linear(e + "merger.proj", out_h, out_h, False) + _norm(e + "merger.post_projection_norm", out_h)
    out += _linear(e + "merger.gate_proj", context, out_h, False)
    out += _linear(e + "merger.up_proj", context, out_h, False)
    out += _linear(e + "merger.down_proj", out_h, context, False)
    out += [(e + "downsample.weight", DT, (out_h, d, merge, merge)), (e + "downsample.bias", DT, (out_h,))]
    out += _norm(e + "post_layernorm", d, False)
    return out


def _glm5_next(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """GLM-5-Next: GLM-OCR's tower, its merger's gated MLP projection_intermediate_size wide (its
    swiglu_limit clamps activations, sizing nothing)."""
    return _glm_ocr(cfg, v, text_hidden, _int(v.get("projection_intermediate_size"), 10240))


def _window_sides(rate: Any) -> tuple[int, int] | None:
    """Granite 4 Vision's downsample_rate "q/w": the query window's side and the key window's."""
    parts = rate.split("/") if isinstance(rate, str) else []
    if len(parts) != 2 or not all(p.strip().isdigit() and int(p) > 0 for p in parts):
        return None
    return int(parts[0]), int(parts[1])


def _qformer_layers(cfg: ArchConfig, b: str, d: int) -> list[Triple]:
    """A query-only BLIP-2 Q-Former d wide (Granite 4 Vision sets its width, heads and encoder width from
    the tower's): its layers' self-attention, cross-attention every cross_attention_frequency layers, the
    queries' feed-forward, and a final LayerNorm; the defaults are the ones Granite 4 Vision gives it."""
    q = cfg.raw.get("qformer_config")
    q = q if isinstance(q, dict) else {}
    depth, mlp = _int(q.get("num_hidden_layers"), 1), _int(q.get("intermediate_size"), 3072)
    every = _int(q.get("cross_attention_frequency"), 1) or 1
    out: list[Triple] = _norm(b + "layernorm", d)
    for i in range(depth):
        x = f"{b}encoder.layer.{i}."
        for part in ("attention.", "crossattention.") if i % every == 0 else ("attention.",):
            for proj in ("query", "key", "value"):
                out += _linear(f"{x}{part}attention.{proj}", d, d)
            out += _linear(x + part + "output.dense", d, d) + _norm(x + part + "output.LayerNorm", d)
        out += _linear(x + "intermediate_query.dense", mlp, d) + _linear(x + "output_query.dense", d, mlp)
        out += _norm(x + "output_query.LayerNorm", d)
    return out


def _granite4_vision(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """Granite 4 Vision: a CLIP tower, LLaVA-NeXT's image_newline, and a window Q-Former downsampler for
    each deepstack_layer_map pair and for each of the four spatial offset groups: a LayerNorm, query
    tokens (the query window's area) and key-window positions, a Q-Former as wide as the tower, and a
    biased linear into the text width."""
    d = v["hidden_size"]
    sides = _window_sides(cfg.raw.get("downsample_rate"))
    query, window = sides or (1, 1)
    out = [*_clip(v, "model.vision_tower."), ("model.image_newline", DT, (text_hidden,))]
    pairs = cfg.raw.get("deepstack_layer_map")
    groups = [f"model.layerwise_projectors.{i}." for i in range(len(pairs) if isinstance(pairs, list) else 0)]
    for p in groups + [f"model.spatial_projectors.{i}." for i in range(4)]:
        out += [*_norm(p + "norm", d), (p + "query", DT, (1, query * query, d))]
        out += [(p + "image_positions", DT, (1, window * window, d))]
        out += _qformer_layers(cfg, p + "qformer.", d) + _linear(p + "out_linear", text_hidden, d)
    return out


def _git(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """GIT: a CLIP tower, a biased linear and a LayerNorm into the text width, and one learned offset per
    frame when num_image_with_embedding is set."""
    d = v["hidden_size"]
    out = _clip(v, "git.image_encoder.vision_model.")
    out += _linear("git.visual_projection.visual_projection.0", text_hidden, d)
    out += _norm("git.visual_projection.visual_projection.1", text_hidden)
    frames = cfg.raw.get("num_image_with_embedding")
    frames = frames if type(frames) is int and 0 < frames <= 4096 else 0
    return out + [(f"git.img_temporal_embedding.{i}", DT, (1, 1, d)) for i in range(frames)]


def _idefics3(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """Idefics3 and SmolVLM: SigLIP, then one unbiased projection of scale_factor² shuffled patches."""
    shuffled = v["hidden_size"] * _int(cfg.raw.get("scale_factor"), 2) ** 2
    return _siglip(v, "model.vision_model.") + _linear(
        "model.connector.modality_projection.proj", text_hidden, shuffled, False
    )


def _idefics2(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """Idefics2: SigLIP, a gated MLP into the text width (the text model's intermediate_size wide), and a
    perceiver resampler as wide as the text model (the class overrides the perceiver's own width)."""
    d, inner = v["hidden_size"], _int(cfg.get("intermediate_size"), 14336)
    p = cfg.raw.get("perceiver_config")
    p = p if isinstance(p, dict) else {}
    latents, depth = _int(p.get("resampler_n_latents"), 64), _int(p.get("resampler_depth"), 3)
    heads, head_dim = _int(p.get("resampler_n_heads"), 16), _int(p.get("resampler_head_dim"), 96)
    kv = _int(p.get("num_key_value_heads"), 4)
    c = "model.connector."
    out = _siglip(v, "model.vision_model.")
    out += _linear(c + "modality_projection.gate_proj", inner, d, False)
    out += _linear(c + "modality_projection.up_proj", inner, d, False)
    out += _linear(c + "modality_projection.down_proj", text_hidden, inner, False)
    r = c + "perceiver_resampler."
    out += [(r + "latents", DT, (latents, text_hidden)), *_norm(r + "norm", text_hidden, False)]
    for i in range(depth):
        b = f"{r}layers.{i}."
        for norm in ("input_latents_norm", "input_context_norm", "post_attention_layernorm"):
            out += _norm(b + norm, text_hidden, False)
        out += _linear(b + "self_attn.q_proj", heads * head_dim, text_hidden, False)
        out += _linear(b + "self_attn.k_proj", kv * head_dim, text_hidden, False)
        out += _linear(b + "self_attn.v_proj", kv * head_dim, text_hidden, False)
        out += _linear(b + "self_attn.o_proj", text_hidden, heads * head_dim, False)
        out += _linear(b + "mlp.gate_proj", 4 * text_hidden, text_hidden, False)
        out += _linear(b + "mlp.up_proj", 4 * text_hidden, text_hidden, False)
        out += _linear(b + "mlp.down_proj", text_hidden, 4 * text_hidden, False)
    return out


def _granite_docling(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """Granite-Docling: SigLIP whose connector lives in the vision model: a coarse path (scale_factor)
    and, with use_fine_route, a fine one (half the factor), each a projection and one DeepStack merger
    per tapped layer; LayerNorms in, between and out, and a shared output projection."""
    d, out_h = v["hidden_size"], _int(v.get("out_hidden_size"), 1024)
    taps = v.get("deepstack_visual_indexes")
    taps = len(taps) if isinstance(taps, list) else 0
    e = "model.vision_model."
    c = e + "connector."
    out = _siglip(v, e) + _norm(c + "ln_in", d)
    factor = _int(v.get("scale_factor"), 4)
    paths = [("coarse", factor)] + ([("fine", factor // 2)] if v.get("use_fine_route", True) else [])
    for path, f in paths:
        merged = d * f * f
        out += _linear(f"{c}{path}.projection", out_h, merged, False)
        for i in range(taps):
            m = f"{c}{path}.deepstack_mergers.{i}."
            out += _norm(m + "layer_norm", merged) + _linear(m + "linear_1", out_h, merged)
            out += _linear(m + "linear_2", out_h, out_h)
    out += (
        _norm(c + "ln_mid", out_h) + _linear(c + "mlp_fc2", out_h, out_h, False) + _norm(c + "ln_out", out_h)
    )
    return out


def _aria(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """Aria: SigLIP (Idefics3's), then learned queries cross-attending to the patches and an MLP into the
    text width."""
    d = v["hidden_size"]
    queries = _int(cfg.raw.get("max_value_projector_patch_to_query_dict"), 256)
    p = "multi_modal_projector."
    out = [*_siglip(v, "vision_tower."), (p + "query", DT, (queries, d))]
    out += [_linear(p + f"cross_attn.{x}", d, d, False)[0] for x in ("q_proj", "k_proj", "v_proj")]
    a = p + "cross_attn.multihead_attn."
    out += [(a + "in_proj_weight", DT, (3 * d, d)), (a + "in_proj_bias", DT, (3 * d,))]
    out += _linear(a + "out_proj", d, d) + _linear(p + "cross_attn.linear", d, d)
    out += _norm(p + "cross_attn.layer_norm", d) + _norm(p + "cross_attn.layer_norm_kv", d)
    out += _norm(p + "layer_norm", d)
    out += _linear(p + "feed_forward.linear_in", text_hidden, d, False)
    out += _linear(p + "feed_forward.linear_out", text_hidden, text_hidden, False)
    return out


def _cohere2_vision(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """Command A Vision: SigLIP, then a SwiGLU projector of downsample_factor² shuffled patches (its
    second layer takes half of alignment_intermediate_size)."""
    shuffled = v["hidden_size"] * _int(cfg.raw.get("downsample_factor"), 2) ** 2
    inner = _int(cfg.raw.get("alignment_intermediate_size"), 36864)
    p = "model.multi_modal_projector."
    return (
        _siglip(v, "model.vision_tower.")
        + _linear(p + "linear_1", inner, shuffled)
        + _linear(p + "linear_2", text_hidden, inner // 2)
    )


def _aya_vision(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """Aya Vision: SigLIP, then a LayerNorm and a SwiGLU projector of downsample_factor² shuffled patches
    (alignment_intermediate_size wide, the text width when unset)."""
    shuffled = v["hidden_size"] * _int(cfg.raw.get("downsample_factor"), 2) ** 2
    inner = _int(cfg.raw.get("alignment_intermediate_size"), text_hidden)
    p = "model.multi_modal_projector."
    return (
        _siglip(v, "model.vision_tower.")
        + _norm(p + "layernorm", shuffled)
        + _linear(p + "linear_1", inner, shuffled)
        + _linear(p + "linear_2", text_hidden, inner // 2)
    )


def _lfm2_vl(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """LFM2-VL: SigLIP 2 (linear patch embedding, num_patches positions), then an optional LayerNorm and
    two projector layers over downsample_factor² unshuffled patches."""
    shuffled = v["hidden_size"] * _int(cfg.raw.get("downsample_factor"), 2) ** 2
    inner = _int(cfg.raw.get("projector_hidden_size"), 2560)
    bias = cfg.raw.get("projector_bias", True) is not False
    p = "model.multi_modal_projector."
    out = _siglip(v, "model.vision_tower.", linear_patch=True)
    if cfg.raw.get("projector_use_layernorm", True) is not False:
        out += _norm(p + "layer_norm", shuffled)
    return (
        out
        + _linear(p + "linear_1", inner, shuffled, bias)
        + _linear(p + "linear_2", text_hidden, inner, bias)
    )


def _paddleocr_vl(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """PaddleOCR-VL: SigLIP, then a LayerNorm over the vision width and two layers over
    spatial_merge_size² merged patches."""
    d = v["hidden_size"]
    merged = d * _int(v.get("spatial_merge_size"), 2) ** 2
    return (
        _siglip(v, "visual.vision_model.")
        + _norm("mlp_AR.pre_norm", d)
        + _linear("mlp_AR.linear_1", merged, merged)
        + _linear("mlp_AR.linear_2", text_hidden, merged)
    )


def _video_llava(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """Video-LLaVA: two CLIP towers of one config (images and videos), one LLaVA projector."""
    taps = cfg.raw.get("vision_feature_layer", -2)
    tapped = v["hidden_size"] * (len(taps) if isinstance(taps, list) else 1)
    bias = cfg.raw.get("multimodal_projector_bias", True) is not False
    p = "multi_modal_projector."
    return (
        _clip(v, "image_tower.")
        + _clip(v, "video_tower.")
        + _linear(p + "linear_1", text_hidden, tapped, bias)
        + _linear(p + "linear_2", text_hidden, text_hidden, bias)
    )


def _internvl(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """InternVL: InternViT (a class token, learned positions, layer-scale vectors, q/k/v biased with
    attention_bias, optional full-width q/k RMS norms, LayerNorm or RMSNorm blocks, a final LayerNorm
    unless mean-pooled), then a LayerNorm and two layers over the (1 / downsample_ratio)² shuffled
    patches."""
    d, mlp, depth = v["hidden_size"], v["intermediate_size"], v["num_hidden_layers"]
    (ih, iw), (ph, pw) = _pair(cfg, "image_size", 448), _pair(cfg, "patch_size", 14)
    channels = _int(v.get("num_channels"), 3)
    layer_norm = v.get("norm_type", "layer_norm") == "layer_norm"
    bias = v.get("attention_bias") is True
    e = "vision_tower."
    out: list[Triple] = [(e + "embeddings.cls_token", DT, (1, 1, d))]
    if v.get("use_mask_token") is True:
        out.append((e + "embeddings.mask_token", DT, (1, 1, d)))
    if v.get("use_absolute_position_embeddings", True) is not False:
        positions = (ih // ph) * (iw // pw) + 1 if ph and pw else 1
        out.append((e + "embeddings.position_embeddings", DT, (1, positions, d)))
    out += [(e + "embeddings.patch_embeddings.projection.weight", DT, (d, channels, ph, pw))]
    out += [(e + "embeddings.patch_embeddings.projection.bias", DT, (d,))]
    for i in range(depth):
        b = f"{e}encoder.layer.{i}."
        out += [(b + "lambda_1", DT, (d,)), (b + "lambda_2", DT, (d,))]
        for proj in ("q_proj", "k_proj", "v_proj"):
            out += _linear(b + "attention." + proj, d, d, bias)
        out += _linear(b + "attention.projection_layer", d, d)
        if v.get("use_qk_norm") is True:
            out += _norm(b + "attention.q_norm", d, False) + _norm(b + "attention.k_norm", d, False)
        out += _linear(b + "mlp.fc1", mlp, d) + _linear(b + "mlp.fc2", d, mlp)
        out += _norm(b + "layernorm_before", d, layer_norm) + _norm(b + "layernorm_after", d, layer_norm)
    if v.get("use_mean_pooling", True) is False:
        out += _norm(e + "layernorm", d)
    ratio = cfg.raw.get("downsample_ratio", 0.5)
    factor = int(1 / ratio) if isinstance(ratio, (int, float)) and 0 < ratio <= 1 else 2
    shuffled = d * factor * factor
    p = "multi_modal_projector."
    out += _norm(p + "layer_norm", shuffled) + _linear(p + "linear_1", text_hidden, shuffled)
    return out + _linear(p + "linear_2", text_hidden, text_hidden)


def _got_ocr2(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """GOT-OCR 2.0: a SAM encoder (absolute positions, windowed blocks with relative positions sized by
    the window, global ones by the patch grid, a convolutional neck), then two strided convolutions
    and a linear layer into the text width."""
    neck = _int(v.get("output_channels"), 256)
    out = _sam_encoder(v, "vision_tower.")
    p = "multi_modal_projector."
    out += [(p + "conv_upsampler1.weight", DT, (2 * neck, neck, 3, 3))]
    out += [(p + "conv_upsampler2.weight", DT, (text_hidden, 2 * neck, 3, 3))]
    return out + _linear(p + "multimodal_projector", text_hidden, text_hidden)


def _pp_formulanet(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """PP-FormulaNet: GOT-OCR 2.0's SAM encoder stored as the model's encoder, its projector inside it: two
    strided unbiased convolutions (post_conv_in_channels to post_conv_mid_channels to
    post_conv_out_channels), a biased linear layer as wide and one into decoder_hidden_size, the width the
    decoder's cross-attention reads."""
    e = "model.encoder."
    out = _sam_encoder(v, e)
    into, mid = _int(v.get("post_conv_in_channels"), 256), _int(v.get("post_conv_mid_channels"), 512)
    wide, text = _int(v.get("post_conv_out_channels"), 1024), _int(v.get("decoder_hidden_size"), 512)
    p = e + "multi_modal_projector."
    out += [(p + "conv1.weight", DT, (mid, into, 3, 3)), (p + "conv2.weight", DT, (wide, mid, 3, 3))]
    return out + _linear(p + "linear_1", wide, wide) + _linear(p + "linear_2", text, wide)


def _sam_encoder(v: dict, e: str) -> list[Triple]:
    """A SAM encoder (GOT-OCR 2.0's, PP-FormulaNet's): absolute positions, windowed blocks with relative
    positions sized by the window, global ones by the patch grid, a convolutional neck."""
    d, depth = v["hidden_size"], v["num_hidden_layers"]
    mlp, heads = _int(v.get("mlp_dim"), 3072), _int(v.get("num_attention_heads"), 12) or 1
    patch, channels = _int(v.get("patch_size"), 16), _int(v.get("num_channels"), 3)
    grid, window = _int(v.get("image_size"), 1024) // (patch or 1), _int(v.get("window_size"), 14)
    neck = _int(v.get("output_channels"), 256)
    global_layers = v.get("global_attn_indexes")
    global_layers = global_layers if isinstance(global_layers, list) else []
    out: list[Triple] = []
    if v.get("use_abs_pos", True) is not False:
        out.append((e + "pos_embed", DT, (1, grid, grid, d)))
    out += [(e + "patch_embed.projection.weight", DT, (d, channels, patch, patch))]
    out += [(e + "patch_embed.projection.bias", DT, (d,))]
    for i in range(depth):
        b = f"{e}layers.{i}."
        out += _norm(b + "layer_norm1", d) + _norm(b + "layer_norm2", d)
        if v.get("use_rel_pos", True) is not False:
            size = grid if i in global_layers or window == 0 else window
            out += [(b + "attn.rel_pos_h", DT, (2 * size - 1, d // heads))]
            out += [(b + "attn.rel_pos_w", DT, (2 * size - 1, d // heads))]
        out += _linear(b + "attn.qkv", 3 * d, d, v.get("qkv_bias", True) is not False)
        out += (
            _linear(b + "attn.proj", d, d) + _linear(b + "mlp.lin1", mlp, d) + _linear(b + "mlp.lin2", d, mlp)
        )
    out += [(e + "neck.conv1.weight", DT, (neck, d, 1, 1)), *_norm(e + "neck.layer_norm1", neck)]
    out += [(e + "neck.conv2.weight", DT, (neck, neck, 3, 3)), *_norm(e + "neck.layer_norm2", neck)]
    return out


def _florence_stages(cfg: ArchConfig) -> list[tuple[int, int, int, bool]] | None:
    """Florence-2's DaViT stages as (width, depth, patch kernel, norm before the patch convolution), from
    the per-stage lists of its vision config (read unfiltered: lists are the sizes here), or None where a
    list is missing, of another length or not of bounded whole numbers."""
    raw = cfg.resolved_vision or cfg.raw.get("vision_config") or {}
    dims, depths, kernels, prenorm = (
        raw.get(k) for k in ("embed_dim", "depths", "patch_size", "patch_prenorm")
    )
    if not (
        isinstance(dims, list)
        and isinstance(depths, list)
        and isinstance(kernels, list)
        and isinstance(prenorm, list)
        and dims
        and len(dims) == len(depths) == len(kernels) == len(prenorm)
    ):
        return None
    if not all(_int(x, -1) >= 0 for x in (*dims, *depths, *kernels)) or not all(
        isinstance(p, bool) for p in prenorm
    ):
        return None
    return list(zip(dims, depths, kernels, prenorm, strict=True))


def _florence2(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """Florence-2 (modeling_florence2.py): a DaViT backbone, per stage a biased patch convolution from the
    previous width (in_channels first) with a LayerNorm before it (over the input width, patch_prenorm) or
    after, then depths[stage] blocks of a spatial block (window attention) and a channel block (channel
    attention), each a biased depthwise 3x3 convolution and LayerNorm before the attention (qkv biased
    when qkv_bias, a biased proj), the same before a biased fc1 / fc2 mlp_ratio x wide; the projector: an
    unbiased image_projection into projection_dim with its LayerNorm, learned row and column positions
    max_position_embeddings long splitting the last width, and the cosine temporal table kept as a buffer
    of max_temporal_embeddings rows."""
    stages = _florence_stages(cfg) or []
    raw = cfg.resolved_vision or cfg.raw.get("vision_config") or {}
    ratio = raw.get("mlp_ratio", 4.0)
    ratio = (
        ratio if isinstance(ratio, (int, float)) and not isinstance(ratio, bool) and 0 < ratio < 64 else 4.0
    )
    bias = raw.get("qkv_bias", True) is not False
    e = "model.vision_tower."
    out: list[Triple] = []
    into = _int(raw.get("in_channels"), 3)
    for s, (d, depth, kernel, prenorm) in enumerate(stages):
        out += [
            (f"{e}convs.{s}.conv.weight", DT, (d, into, kernel, kernel)),
            (f"{e}convs.{s}.conv.bias", DT, (d,)),
        ]
        out += _norm(f"{e}convs.{s}.norm", into if prenorm else d)
        mlp = int(d * ratio)
        for j in range(depth):
            for block, attn in (("spatial_block", "window_attn"), ("channel_block", "channel_attn")):
                b = f"{e}blocks.{s}.{j}.{block}."
                for conv in ("conv1", "conv2"):
                    out += [(b + conv + ".weight", DT, (d, 1, 3, 3)), (b + conv + ".bias", DT, (d,))]
                out += _norm(b + "norm1", d) + _norm(b + "norm2", d)
                out += _linear(f"{b}{attn}.qkv", 3 * d, d, bias) + _linear(f"{b}{attn}.proj", d, d)
                out += _linear(b + "ffn.fc1", mlp, d) + _linear(b + "ffn.fc2", d, mlp)
        into = d
    last = stages[-1][0] if stages else 0
    projection = _int(raw.get("projection_dim"), 1024)
    positions, temporal = (
        _int(raw.get("max_position_embeddings"), 50),
        _int(raw.get("max_temporal_embeddings"), 100),
    )
    p = "model.multi_modal_projector."
    out += _linear(p + "image_projection", projection, last, False) + _norm(p + "image_proj_norm", projection)
    out += [(p + "image_position_embed.row_embeddings.weight", DT, (positions, last // 2))]
    out += [(p + "image_position_embed.column_embeddings.weight", DT, (positions, last - last // 2))]
    out.append((p + "visual_temporal_embed.pos_idx_to_embed", DT, (temporal, last)))
    return out


def _llava_onevision1_5(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """LLaVA-OneVision-1.5: a RICE ViT (unbiased patch convolution, a class token with its own rotary
    frequencies, LayerNorm before the blocks, fused biased qkv, plain MLP), then a merger of
    spatial_merge_size² patches into out_hidden_size."""
    d, mlp, depth = v["hidden_size"], v["intermediate_size"], _int(v.get("depth"), 24)
    heads = _int(v.get("num_heads"), 16) or 1
    patch, channels = _int(v.get("patch_size"), 14), _int(v.get("in_channels"), 3)
    merged = d * _int(v.get("spatial_merge_size"), 2) ** 2
    out_h = _int(v.get("out_hidden_size"), text_hidden)
    e = "visual."
    out: list[Triple] = [(e + "patch_embed.proj.weight", DT, (d, channels, patch, patch))]
    out += [(e + "class_embedding", DT, (d,)), (e + "class_pos_emb", DT, (1, d // heads // 2))]
    out += _norm(e + "pre_layernorm", d)
    for i in range(depth):
        b = f"{e}blocks.{i}."
        out += _norm(b + "norm1", d) + _norm(b + "norm2", d)
        out += _linear(b + "attn.qkv", 3 * d, d) + _linear(b + "attn.proj", d, d)
        out += _linear(b + "mlp.fc1", mlp, d) + _linear(b + "mlp.fc2", d, mlp)
    m = e + "merger."
    return (
        out
        + _norm(m + "ln_q", d)
        + _linear(m + "mlp.0", merged, merged)
        + _linear(m + "mlp.2", out_h, merged)
    )


def _lfm3_vl(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """LFM3-VL: a linear patch embedding over temporal_patch_size frames, then LFM-style layers (a gated
    depthwise 2-D convolution or grouped-query attention with per-head q/k RMS norms, as layer_types
    says, and a SwiGLU MLP), and a projector of spatial_merge_size² patches normalized before merging."""
    d, mlp, depth = v["hidden_size"], v["intermediate_size"], v["num_hidden_layers"]
    heads = _int(v.get("num_attention_heads"), 16) or 1
    kv, hd = _int(v.get("num_key_value_heads"), heads), d // heads
    patch, temporal = _int(v.get("patch_size"), 16), _int(v.get("temporal_patch_size"), 2)
    channels, kernel = _int(v.get("in_channels"), 3), _int(v.get("conv_kernel_size"), 3)
    merged = d * _int(v.get("spatial_merge_size"), 2) ** 2
    types = v["layer_types"]
    e = "model.vision_tower."
    out = _linear(e + "patchifier", d, channels * temporal * patch * patch, False)
    out += _norm(e + "embedding_norm", d, False)
    for i in range(depth):
        b = f"{e}layers.{i}."
        if types[i] == "conv":
            out += _linear(b + "conv.in_proj", 3 * d, d, False) + _linear(b + "conv.out_proj", d, d, False)
            out += [(b + "conv.spatial_conv.weight", DT, (d, 1, kernel, kernel))]
        else:
            out += _linear(b + "self_attn.q_proj", heads * hd, d, False)
            out += _linear(b + "self_attn.k_proj", kv * hd, d, False)
            out += _linear(b + "self_attn.v_proj", kv * hd, d, False)
            out += _linear(b + "self_attn.out_proj", d, heads * hd, False)
            out += _norm(b + "self_attn.q_layernorm", hd, False) + _norm(
                b + "self_attn.k_layernorm", hd, False
            )
        out += _linear(b + "feed_forward.w1", mlp, d, False) + _linear(b + "feed_forward.w3", mlp, d, False)
        out += _linear(b + "feed_forward.w2", d, mlp, False)
        out += _norm(b + "operator_norm", d, False) + _norm(b + "ffn_norm", d, False)
    inner = _int(cfg.raw.get("projector_hidden_size"), 4096)
    bias = cfg.raw.get("projector_bias", True) is not False
    p = "model.multi_modal_projector."
    out += _norm(p + "layer_norm", d) + _linear(p + "linear_1", inner, merged, bias)
    return out + _linear(p + "linear_2", text_hidden, inner, bias)


def _gemma4(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """Gemma 4: a linear patch embedding and a learned position per axis (position_embedding_size
    each), blocks of Gemma's four RMS norms, per-head q/k norms (the v norm has no weight) and a gated
    MLP, every projection unbiased and, with use_clipped_linears, holding four scalar clip bounds; the
    standardizing bias and scale when standardize is set. The projector (embed_vision) is one unbiased
    projection into the text width after a weightless norm."""
    d, mlp, depth = v["hidden_size"], v["intermediate_size"], v["num_hidden_layers"]
    heads, kv = _int(v.get("num_attention_heads"), 12), _int(v.get("num_key_value_heads"), 12)
    hd, patch = _int(v.get("head_dim"), 64), _int(v.get("patch_size"), 16)
    clipped = v.get("use_clipped_linears") is True
    e = "model.vision_tower."
    out: list[Triple] = [(e + "patch_embedder.input_proj.weight", DT, (d, 3 * patch * patch))]
    positions = _int(v.get("position_embedding_size"), 10240)
    out += [(e + "patch_embedder.position_embedding_table", DT, (2, positions, d))]
    for i in range(depth):
        b = f"{e}encoder.layers.{i}."
        projections = (
            ("self_attn.q_proj", heads * hd, d),
            ("self_attn.k_proj", kv * hd, d),
            ("self_attn.v_proj", kv * hd, d),
            ("self_attn.o_proj", d, heads * hd),
            ("mlp.gate_proj", mlp, d),
            ("mlp.up_proj", mlp, d),
            ("mlp.down_proj", d, mlp),
        )
        for name, rows, cols in projections:
            out += _clippable(b + name, rows, cols, clipped)
        out += _norm(b + "self_attn.q_norm", hd, False) + _norm(b + "self_attn.k_norm", hd, False)
        for norm in (
            "input_layernorm",
            "post_attention_layernorm",
            "pre_feedforward_layernorm",
            "post_feedforward_layernorm",
        ):
            out += _norm(b + norm, d, False)
    if v.get("standardize") is True:
        out += [(e + "std_bias", DT, (d,)), (e + "std_scale", DT, (d,))]
    return out + _linear("model.embed_vision.embedding_projection", text_hidden, d, False)


def _clippable(name: str, out: int, into: int, clipped: bool) -> list[Triple]:
    """Gemma 4's linear layer: an unbiased ``linear`` and, when clipped, its input and output bounds
    (scalar buffers the checkpoint stores)."""
    bounds = ("input_min", "input_max", "output_min", "output_max") if clipped else ()
    return _linear(name + ".linear", out, into, False) + [(f"{name}.{b}", DT, ()) for b in bounds]


def _gemma4_unified(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """Gemma 4 Unified: no tower; merged patches (model_patch_size = patch_size x pooling_kernel_size,
    three channels) through a LayerNorm, a biased projection to mm_embed_dim and a LayerNorm, a learned
    position per axis (mm_posemb_size of them) and a LayerNorm, then Gemma 4's projector from
    output_proj_dims into the text width. Named as checkpoints store them (vision_embedder, and the
    projection as embed_vision's own), which transformers renames on loading."""
    merged = (_int(v.get("patch_size"), 16) * _int(v.get("pooling_kernel_size"), 3)) ** 2 * 3
    width, positions = _int(v.get("mm_embed_dim"), 3840), _int(v.get("mm_posemb_size"), 1120)
    into = _int(v.get("output_proj_dims"), 3840)
    e = "model.vision_embedder."
    out = (
        _norm(e + "patch_ln1", merged)
        + _linear(e + "patch_dense", width, merged)
        + _norm(e + "patch_ln2", width)
    )
    out += [(e + "pos_embedding", DT, (positions, 2, width)), *_norm(e + "pos_norm", width)]
    return out + _linear("model.embed_vision.embedding_projection", text_hidden, into, False)


def _nemotron_h_omni(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """Nemotron Omni: a C-RADIO tower (an unbiased linear patch embedder and, when
    video_temporal_patch_size is set, a second one over stacked frames; a position table for the
    largest image, max_img_size // patch_size squared; class and register tokens; ViT blocks with
    layer-scale vectors and q/k/v biased as qkv_bias says; the summary_idxs buffer), a LayerNorm after
    it when the text model has MTP layers, and a ReLU² projector of pixel-shuffled patches (an RMS norm,
    two unbiased layers)."""
    d, depth = v["hidden_size"], v["num_hidden_layers"]
    heads = _int(v.get("num_attention_heads"), 16) or 1
    inner = heads * (d // heads)
    patch, channels = _int(v.get("patch_size"), 16), _int(v.get("num_channels"), 3)
    ratio = v.get("mlp_ratio", 4.0)
    mlp = int(d * (ratio if isinstance(ratio, (int, float)) and not isinstance(ratio, bool) else 4.0))
    qkv_bias = v.get("qkv_bias", True) is not False
    e = "vision_model.radio_model."
    g = e + "model.patch_generator."
    side = _int(v.get("max_img_size"), 2048) // (patch or 1)
    tokens = _int(v.get("num_cls_tokens"), 3) + _int(v.get("num_registers"), 7)
    out: list[Triple] = [(g + "pos_embed", DT, (1, side * side, d)), (g + "cls_token.token", DT, (tokens, d))]
    out += _linear(g + "embedder", d, channels * patch * patch, False)
    frames = v.get("video_temporal_patch_size")
    if frames is not None:
        out += _linear(g + "video_embedder", d, _int(frames, 2) * channels * patch * patch, False)
    summary = v.get("summary_idxs")
    out += [(e + "summary_idxs", DT, (len(summary) if isinstance(summary, list) else 2,))]
    swiglu = v.get("use_swiglu_ffn") is True
    for i in range(depth):
        b = f"{e}model.blocks.{i}."
        out += _norm(b + "norm1", d) + _norm(b + "norm2", d)
        for proj in ("q_proj", "k_proj", "v_proj"):
            out += _linear(b + "attention." + proj, inner, d, qkv_bias)
        out += _linear(b + "attn.proj", d, inner)
        if swiglu:
            gated = (int(mlp * 2 / 3) + 7) // 8 * 8
            out += _linear(b + "mlp.gate_proj", gated, d) + _linear(b + "mlp.up_proj", gated, d)
            out += _linear(b + "mlp.down_proj", d, gated)
        else:
            out += _linear(b + "mlp.fc1", mlp, d) + _linear(b + "mlp.fc2", d, mlp)
        out += [(b + "layer_scale1.lambda1", DT, (d,)), (b + "layer_scale2.lambda1", DT, (d,))]
    width = _int(cfg.raw.get("vision_hidden_size"), 1280)
    if width == 1280:  # the class takes the released configs' older name while the field is its default
        width = _int(cfg.raw.get("vit_hidden_size"), width)
    mtp = cfg.raw_text.get("num_nextn_predict_layers")
    if isinstance(mtp, int) and mtp > 0:
        out += _norm("vision_projector.vision_final_layernorm", width)
    down = cfg.raw.get("downsample_ratio", 0.5)
    scale = int(1 / down) if isinstance(down, (int, float)) and not isinstance(down, bool) and down > 0 else 2
    shuffled = width * scale**2
    hidden = _int(cfg.raw.get("projector_hidden_size"), 4096)
    out += _norm("mlp1.0", shuffled, False) + _linear("mlp1.1", hidden, shuffled, False)
    return out + _linear("mlp1.3", text_hidden, hidden, False)


def _muse_glimmer(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """Muse Glimmer: an unbiased linear embedding of patch_temporal stacked patches, a learned position
    table pos_emb_height x pos_emb_width, LayerNorms before and after ViT blocks (biased q/k/v/proj and
    fc1/fc2; windowed and full layers hold the same tensors), then an unbiased two-layer adapter from
    out_hidden_size and a projection into the text width."""
    d, mlp, depth = v["hidden_size"], v["intermediate_size"], v["num_hidden_layers"]
    patch, frames = _int(v.get("patch_size"), 14), _int(v.get("patch_temporal"), 2)
    positions = _int(v.get("pos_emb_height"), 32) * _int(v.get("pos_emb_width"), 32)
    e = "model.vision_tower."
    out = _linear(e + "patch_embedder.patch_embedding", d, frames * 3 * patch * patch, False)
    out += [(e + "patch_embedder.position_embedding_table.weight", DT, (positions, d))]
    out += _norm(e + "ln_pre", d) + _norm(e + "ln_post", d)
    for i in range(depth):
        b = f"{e}layers.{i}."
        out += _norm(b + "norm1", d) + _norm(b + "norm2", d)
        for proj in ("q_proj", "k_proj", "v_proj", "proj"):
            out += _linear(b + "attn." + proj, d, d)
        out += _linear(b + "mlp.fc1", mlp, d) + _linear(b + "mlp.fc2", d, mlp)
    merged = _int(cfg.raw.get("out_hidden_size"), 6144)
    inner = _int(cfg.raw.get("projector_hidden_size"), 4096)
    out += _linear("model.vision_adapter.fc1", inner, merged, False)
    out += _linear("model.vision_adapter.fc2", inner, inner, False)
    return out + _linear("model.vision_projection", text_hidden, inner, False)


def _idefics(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """IDEFICS: a CLIP tower (embed_dim wide) whose patches every text token reaches through gated
    cross-attention layers, one per cross_layer_interval decoder layers: unbiased q/o over the text
    width and k/v from the tower's, per-head RMS norms on q and k when qk_layer_norms is set, a gated MLP
    intermediate_size wide, two RMS norms, and two tanh gates one number each or hidden_size wide as
    alpha_type says. Written here because they exist only beside the tower."""
    out = _clip({**v, "hidden_size": v["embed_dim"]}, "model.vision_model.")
    width, mlp = v["embed_dim"], _int(cfg.get("intermediate_size"), 11008)
    heads = _int(cfg.get("num_attention_heads"), 32) or 1
    hd = text_hidden // heads
    interval = _int(cfg.get("cross_layer_interval"), 1) or 1
    gate = (1, 1, text_hidden) if cfg.get("alpha_type") == "vector" else (1,)
    norms = cfg.get("qk_layer_norms") is True
    for i in range(_int(cfg.get("num_hidden_layers"), 32) // interval):
        b = f"model.gated_cross_attn_layers.{i}."
        out += [(b + "alpha_cross_attn", DT, gate), (b + "alpha_dense", DT, gate)]
        out += _linear(b + "cross_attn.q_proj", heads * hd, text_hidden, False)
        out += _linear(b + "cross_attn.k_proj", heads * hd, width, False)
        out += _linear(b + "cross_attn.v_proj", heads * hd, width, False)
        out += _linear(b + "cross_attn.o_proj", text_hidden, heads * hd, False)
        if norms:
            out += _norm(b + "cross_attn.q_layer_norm", hd, False)
            out += _norm(b + "cross_attn.k_layer_norm", hd, False)
        out += _linear(b + "mlp.gate_proj", mlp, text_hidden, False)
        out += _linear(b + "mlp.up_proj", mlp, text_hidden, False)
        out += _linear(b + "mlp.down_proj", text_hidden, mlp, False)
        out += _norm(b + "input_layernorm", text_hidden, False)
        out += _norm(b + "post_attention_layernorm", text_hidden, False)
    return out


def _dots3_note(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """Dots 3's tower (modeling_dots3_note.py: Dots3NoteVisionModel), its dense blocks: a biased patch
    convolution and an RMSNorm, blocks of an RMSNorm, a fused qkv and proj (biased with attention_bias)
    with per-head q/k RMS norms, an RMSNorm and a SwiGLU MLP (biased with mlp_bias), a final RMSNorm, and
    the merger (its checkpoints' adapter, counted with the tower): a LayerNorm over adapter_in_dim and two
    biased linears over adapter_merge_size² merged patches into adapter_out_dim (the text width)."""
    d, mlp, depth = v["hidden_size"], v["intermediate_size"], v["num_hidden_layers"]
    heads = _int(v.get("num_attention_heads"), 24) or 1
    patch, channels = _int(v.get("patch_size"), 14), _int(v.get("num_channels"), 3)
    bias, mlp_bias = v.get("attention_bias") is True, v.get("mlp_bias") is True
    e = "model.vision_tower."
    out: list[Triple] = [(e + "patch_embed.proj.weight", DT, (d, channels, patch, patch))]
    out += [(e + "patch_embed.proj.bias", DT, (d,)), *_norm(e + "patch_embed.norm", d, False)]
    for i in range(depth):
        b = f"{e}blocks.{i}."
        out += _norm(b + "norm1", d, False) + _norm(b + "norm2", d, False)
        out += _linear(b + "attn.qkv", 3 * d, d, bias) + _linear(b + "attn.proj", d, d, bias)
        out += _norm(b + "attn.q_norm", d // heads, False) + _norm(b + "attn.k_norm", d // heads, False)
        out += _linear(b + "mlp.gate_proj", mlp, d, mlp_bias) + _linear(b + "mlp.up_proj", mlp, d, mlp_bias)
        out += _linear(b + "mlp.down_proj", d, mlp, mlp_bias)
    out += _norm(e + "norm", d, False)
    width, merge = _int(v.get("adapter_in_dim"), d), _int(v.get("adapter_merge_size"), 2)
    merged = width * merge * merge
    out += _norm(e + "adapter.ln_q", width)
    out += _linear(e + "adapter.mlp.0", merged, merged)
    return out + _linear(e + "adapter.mlp.2", _int(v.get("adapter_out_dim"), text_hidden), merged)


def _kosmos_projection(cfg: ArchConfig, width: int, text_hidden: int, queries: int) -> list[Triple]:
    """Kosmos' image-to-text projection: the tower's output through a biased dense layer into the text
    width, then latent_query_num learned queries attending (biased q/k/v/out_proj, no inner norm) over it
    and themselves."""
    p = "image_to_text_projection."
    out: list[Triple] = [
        (p + "latent_query", DT, (_int(cfg.raw.get("latent_query_num"), queries), text_hidden))
    ]
    out += _linear(p + "dense", text_hidden, width)
    for proj in ("k_proj", "v_proj", "q_proj", "out_proj"):
        out += _linear(p + "x_attn." + proj, text_hidden, text_hidden)
    return out


def _kosmos2(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """Kosmos-2: a CLIP tower (patch 14 by its class's default) and its image-to-text projection."""
    out = _clip({**v, "patch_size": _int(v.get("patch_size"), 14)}, "vision_model.model.")
    return out + _kosmos_projection(cfg, v["hidden_size"], text_hidden, 64)


def _kosmos2_5(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """Kosmos-2.5: Pix2Struct's encoder and the image-to-text projection."""
    d, mlp, heads = v["hidden_size"], v["intermediate_size"], _int(v.get("num_attention_heads"), 24)
    inner, patches = heads * _int(v.get("head_dim"), 64), _int(v.get("max_num_patches"), 4096)
    out = _pix2struct_encoder(v, "vision_model.", mlp, inner, patches)
    return out + _kosmos_projection(cfg, d, text_hidden, 2048)


def _pix2struct(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """Pix2Struct's image encoder, stored as the model's encoder; its text decoder cross-attends to it in
    every layer, written with the decoder: there is no projector."""
    mlp, heads = _int(v.get("d_ff"), 2048), _int(v.get("num_attention_heads"), 12)
    inner, patches = heads * _int(v.get("d_kv"), 64), _int(v.get("seq_len"), 4096)
    return _pix2struct_encoder(v, "encoder.", mlp, inner, patches)


def _pix2struct_encoder(v: dict, e: str, mlp: int, inner: int, patches: int) -> list[Triple]:
    """Pix2Struct's encoder (Kosmos-2.5's too): a biased linear projection of flattened patches
    patch_embed_hidden_size wide, row and column embeddings one per patch position, T5-style blocks with
    unbiased query/key/value/output over heads x the head width, a gated MLP and two weight-only norms,
    a final norm."""
    d, depth = v["hidden_size"], v["num_hidden_layers"]
    out = _linear(e + "embeddings.patch_projection", d, _int(v.get("patch_embed_hidden_size"), 768))
    out += [(e + f"embeddings.{n}.weight", DT, (patches, d)) for n in ("row_embedder", "column_embedder")]
    for i in range(depth):
        b = f"{e}encoder.layer.{i}."
        out += [(b + f"attention.{n}.weight", DT, (inner, d)) for n in ("query", "key", "value")]
        out += _linear(b + "attention.output", d, inner, False)
        out += _linear(b + "mlp.wi_0", mlp, d, False) + _linear(b + "mlp.wi_1", mlp, d, False)
        out += _linear(b + "mlp.wo", d, mlp, False)
        out += _norm(b + "pre_mlp_layer_norm", d, False) + _norm(b + "pre_attention_layer_norm", d, False)
    return out + _norm(e + "layernorm", d, False)


def _blip(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """BLIP's ViT (modeling_blip.py): a class token and a position table as parameters, a biased patch
    convolution, blocks with one fused biased qkv and a biased projection, a final LayerNorm. Its text
    decoder cross-attends to it in every layer, written with the decoder: there is no projector."""
    d, mlp, depth = v["hidden_size"], v["intermediate_size"], v["num_hidden_layers"]
    patch, channels = _int(v.get("patch_size"), 16), _int(v.get("num_channels"), 3)
    e = "vision_model."
    out: list[Triple] = [(e + "embeddings.class_embedding", DT, (1, 1, d))]
    out += [
        (e + "embeddings.position_embedding", DT, (1, (_int(v.get("image_size"), 384) // patch) ** 2 + 1, d))
    ]
    out += [(e + "embeddings.patch_embedding.weight", DT, (d, channels, patch, patch))]
    out += [(e + "embeddings.patch_embedding.bias", DT, (d,))]
    for i in range(depth):
        b = f"{e}encoder.layers.{i}."
        out += _linear(b + "self_attn.qkv", 3 * d, d) + _linear(b + "self_attn.projection", d, d)
        out += _linear(b + "mlp.fc1", mlp, d) + _linear(b + "mlp.fc2", d, mlp)
        out += _norm(b + "layer_norm1", d) + _norm(b + "layer_norm2", d)
    return out + _norm(e + "post_layernorm", d)


def _gemma3n(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """Gemma 3n: timm's MobileNetV5 encoder of the config's architecture and embed_vision
    (estimate_mobilenet)."""
    return gemma3n_vision(v, text_hidden)


def _fast_vlm(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """FastVLM: timm's FastViT of the config's architecture and a two-layer projector (estimate_fastvit)."""
    return fast_vlm_vision(cfg.raw, v, text_hidden)


def _perception_lm(cfg: ArchConfig, v: dict, text_hidden: int) -> list[Triple]:
    """Perception LM: timm's Perception Encoder of the config's architecture and model_args, and a
    two-layer projector (estimate_pe)."""
    return perception_lm_vision(cfg.raw, v, text_hidden)


Tower = Callable[[ArchConfig, dict, int], list[Triple]]

# outer model_type -> (the vision config's model_type the entry was written from, its tower and projector)
TOWERS: dict[str, tuple[str, Tower]] = {
    "glm_ocr": ("glm_ocr_vision", _glm_ocr),
    "glm5_next": ("glm5_next_vision", _glm5_next),
    "idefics3": ("idefics3_vision", _idefics3),
    "smolvlm": ("smolvlm_vision", _idefics3),
    "idefics2": ("idefics2_vision", _idefics2),
    "granite_docling": ("granite_docling_vision", _granite_docling),
    "aria": ("idefics3_vision", _aria),
    "cohere2_vision": ("siglip_vision_model", _cohere2_vision),
    "aya_vision": ("siglip_vision_model", _aya_vision),
    "lfm2_vl": ("siglip2_vision_model", _lfm2_vl),
    "paddleocr_vl": ("paddleocr_vl_vision", _paddleocr_vl),
    "video_llava": ("clip_vision_model", _video_llava),
    "internvl": ("internvl_vision", _internvl),
    "got_ocr2": ("got_ocr2_vision", _got_ocr2),
    "pp_chart2table": ("pp_chart2table_vision", _got_ocr2),
    "pp_formulanet": ("pp_formulanet_vision", _pp_formulanet),
    "florence2": ("florence_vision", _florence2),
    "llava_onevision1_5": ("llava_onevision1_5_vision", _llava_onevision1_5),
    "lfm3_vl": ("lfm3_vl_vision", _lfm3_vl),
    "gemma4": ("gemma4_vision", _gemma4),
    "diffusion_gemma": ("gemma4_vision", _gemma4),  # Gemma 4's tower and projector, in its encoder
    "gemma4_unified": ("gemma4_unified_vision", _gemma4_unified),
    "gemma3n": ("gemma3n_vision", _gemma3n),
    "fast_vlm": ("timm_wrapper", _fast_vlm),
    "perception_lm": ("timm_wrapper", _perception_lm),
    "nemotron_h_omni": ("radio", _nemotron_h_omni),
    "muse_glimmer": ("muse_glimmer_vision", _muse_glimmer),
    "muse_spark": ("muse_spark_vision", _muse_glimmer),  # Muse Spark's tower and adapter are Muse Glimmer's
    "idefics": ("idefics_vision", _idefics),
    "granite4_vision": ("clip_vision_model", _granite4_vision),
    "git": ("git_vision_model", _git),
    "dots3_note": ("dots3_note_vision_encoder", _dots3_note),
    "kosmos-2": ("kosmos_2_vision_model", _kosmos2),
    "blip": ("blip_vision_model", _blip),
    "pix2struct": ("pix2struct_vision_model", _pix2struct),
    "kosmos-2.5": ("kosmos_2_5_vision_model", _kosmos2_5),
}

# further models of an outer config a tower above counts (Idefics2's perceiver resampler)
COUNTED_PARTS: dict[str, frozenset[str]] = {
    "idefics2": frozenset({"perceiver_config"}),
    "granite4_vision": frozenset({"qformer_config"}),
}


def counted_parts(cfg: ArchConfig) -> frozenset[str]:
    """The outer config's further models that are counted with its tower: none unless it is modelled."""
    kind = tower_kind(cfg)
    return COUNTED_PARTS.get(kind, frozenset()) if kind else frozenset()


# outer keys that add tensors no entry above writes: (outer model_type, key, what is not counted)
_NOT_COUNTED = (("granite_docling", "density_router_hidden_size", "Granite-Docling's density router"),)


def tower_doubts(cfg: ArchConfig) -> list[str]:
    """What a modelled tower's architecture adds that is not counted, said as reasons: the outer
    config's keys are not read for "not understood" marks as the text config's are."""
    outer = tower_kind(cfg)
    return [
        f"{key}: {what} not counted"
        for model_type, key, what in _NOT_COUNTED
        if outer == model_type and cfg.raw.get(key) is not None
    ]


def tower_kind(cfg: ArchConfig) -> str | None:
    """The outer model_type when its tower and projector are modelled here, else None."""
    v = cfg.vision
    outer = str(cfg.raw.get("model_type") or "")
    entry = TOWERS.get(outer)
    if not v or entry is None or str(v.get("model_type") or "") != entry[0]:
        return None
    sizes: tuple[str, ...] = ("hidden_size", "intermediate_size", "num_hidden_layers")
    if outer in ("glm_ocr", "glm5_next"):
        sizes = ("hidden_size", "out_hidden_size")
    elif outer == "llava_onevision1_5":
        sizes = ("hidden_size", "intermediate_size")
    elif outer == "idefics":  # its CLIP tower's width is embed_dim; a perceiver resampler is not modelled
        sizes = ("embed_dim", "intermediate_size", "num_hidden_layers")
        if cfg.raw.get("use_resampler") is True:
            return None
    elif (
        outer in ("got_ocr2", "pp_chart2table", "nemotron_h_omni", "pp_formulanet") or outer == "pix2struct"
    ):  # RADIO's MLP: mlp_ratio x width
        sizes = ("hidden_size", "num_hidden_layers")
    elif outer == "florence2":  # DaViT's sizes are per-stage lists
        if _florence_stages(cfg) is None:
            return None
        sizes = ()
    elif outer == "gemma4_unified":
        sizes = ()  # no tower: every size of the embedder has its class's default
    elif outer == "gemma3n":  # a timm tower: its layout is its architecture's, written out or not modelled
        if gemma3n_architecture(v) is None:
            return None
        sizes = ()
    elif outer == "fast_vlm":  # a timm tower, as Gemma 3n's: its architecture's, written out or not modelled
        if fastvit_architecture(v) is None:
            return None
        sizes = ()
    elif outer == "perception_lm":  # a timm tower sized by its architecture and model_args
        if pe_options(v) is None:
            return None
        sizes = ()
    elif outer == "granite4_vision":  # its downsamplers need a window and a deepstack map to be built
        q = cfg.raw.get("qformer_config")
        pairs = cfg.raw.get("deepstack_layer_map")
        if _window_sides(cfg.raw.get("downsample_rate")) is None or not isinstance(pairs, list):
            return None
        if isinstance(q, dict) and q.get("use_qformer_text_input") is True:
            return None  # a Q-Former with text embeddings and a text feed-forward: not written here
    if not all(isinstance(v.get(k), int) and not isinstance(v.get(k), bool) for k in sizes):
        return None
    types = v.get("layer_types")
    if outer == "lfm3_vl" and not (isinstance(types, list) and len(types) >= v["num_hidden_layers"]):
        return None  # each layer is a convolution or attention as layer_types says
    mlps = v.get("mlp_layer_types")
    if outer == "dots3_note" and not (isinstance(mlps, list) and set(mlps) <= {"dense"}):
        return None  # its MoE blocks (a pyramid of expert counts in per_layer_config) are not written out
    return outer


def tower(cfg: ArchConfig, kind: str, text_hidden: int) -> list[Triple]:
    v = cfg.vision
    return TOWERS[kind][1](cfg, v, text_hidden) if v else []
