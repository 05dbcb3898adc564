"""Inkling's decoder layers (transformers/models/inkling, inkling2, inkling2_loop), written whole: they
share no more with the common layer than their MoE's fused experts.

Inkling: attention whose keys and values pass a short causal convolution, with per-head q/k norms and
a relative position logit (r_proj mixes d_rel profiles of rel_extent distances, the window's length in
sliding layers); a short convolution on each sub-layer's output; a router scoring the shared experts too,
with a learned scale; shared experts stored as [n_shared, ...] tensors; a dense MLP's learned scale.

Inkling 2: each projection a module of its own (q with a learned per-head scale before its L2 clip, k/v
convolved, dynamically in full layers: per-token taps projected from the input beside static ones), the
output gated by the input, a sink logit per head and token, and the relative logits' own scale; before
attention and before the MLP a learned query attends over the residual blocks (attention residuals: three
queries for a full layer's q, k and v inputs, none before the first layer; one before the final norm),
full layers norm each input apart. Inkling 2 Loop runs its middle layers again: each of those has four
message gates (q, k, v, MLP inputs) and the model one query per gate and loop layer.
"""

from __future__ import annotations

import itertools
import math

from .config import ArchConfig
from .estimate_facts import ArchitectureFacts, Triple, layer_heads
from .estimate_towers import vit_block
from .layers import LayerInfo


def _kernel(cfg: ArchConfig) -> int:
    return cfg.number("conv_kernel_size", "sconv_kernel_size", default=4) or 4


def _rel_extent(cfg: ArchConfig, layer: LayerInfo) -> int:
    """Sliding layers weigh distances within their window, full ones rel_extent back."""
    if layer.attention == "swa":
        return cfg.number("sliding_window_size", "sliding_window", default=0) or 0
    return cfg.number("rel_extent", default=0) or 0


def _moe(cfg: ArchConfig, p: str, h: int, dt: str, shared_in_router: bool) -> list[Triple]:
    experts = cfg.num_experts or 0
    width = cfg.number("moe_intermediate_size", default=0) or 0
    shared = cfg.num_shared_experts
    out: list[Triple] = [
        (p + "mlp.gate.weight", dt, (experts + (shared if shared_in_router else 0), h)),
        (p + "mlp.gate.e_score_correction_bias", "F32", (experts,)),
        (p + "mlp.experts.gate_up_proj", dt, (experts, 2 * width, h)),
        (p + "mlp.experts.down_proj", dt, (experts, h, width)),
    ]
    if shared_in_router:  # Inkling: the router's learned scale, and its shared experts
        out.append((p + "mlp.gate.global_scale", "F32", (1,)))
        if shared:
            out += [
                (p + "mlp.shared_experts.gate_proj", dt, (shared, width, h)),
                (p + "mlp.shared_experts.up_proj", dt, (shared, width, h)),
                (p + "mlp.shared_experts.down_proj", dt, (shared, h, width)),
            ]
    return out


def _inkling1(cfg: ArchConfig, layer: LayerInfo, p: str, h: int, dt: str) -> list[Triple]:
    heads, kv, hd, _ = layer_heads(cfg, layer)
    rel, k = cfg.number("d_rel", default=0) or 0, _kernel(cfg)
    a = p + "self_attn."
    out: list[Triple] = [
        (p + "input_layernorm.weight", dt, (h,)),
        (p + "post_attention_layernorm.weight", dt, (h,)),
        (a + "q_proj.weight", dt, (heads * hd, h)),
        (a + "k_proj.weight", dt, (kv * hd, h)),
        (a + "v_proj.weight", dt, (kv * hd, h)),
        (a + "r_proj.weight", dt, (heads * rel, h)),
        (a + "o_proj.weight", dt, (h, heads * hd)),
        (a + "k_sconv.conv1d.weight", "F32", (kv * hd, 1, k)),
        (a + "v_sconv.conv1d.weight", "F32", (kv * hd, 1, k)),
        (a + "q_norm.weight", dt, (hd,)),
        (a + "k_norm.weight", dt, (hd,)),
        (a + "rel_logits_proj.proj", dt, (rel, _rel_extent(cfg, layer))),
        (p + "attn_sconv.conv1d.weight", "F32", (h, 1, k)),
        (p + "mlp_sconv.conv1d.weight", "F32", (h, 1, k)),
    ]
    if layer.mlp == "moe":
        return out + _moe(cfg, p, h, dt, shared_in_router=True)
    width = cfg.number("intermediate_size", default=0) or 0
    out += [
        (p + "mlp.gate_proj.weight", dt, (width, h)),
        (p + "mlp.up_proj.weight", dt, (width, h)),
        (p + "mlp.down_proj.weight", dt, (h, width)),
        (p + "mlp.global_scale", dt, (1,)),
    ]
    return out


def _looped(cfg: ArchConfig) -> range:
    """Inkling 2 Loop's layers run loop_num_passes times (none in Inkling 2)."""
    start = cfg.number("loop_layer_index_start", default=0) or 0
    end = cfg.number("loop_layer_index_end", default=0) or 0
    return range(start, end) if cfg.number("loop_num_passes") is not None else range(0)


def _inkling2(cfg: ArchConfig, layer: LayerInfo, p: str, h: int, dt: str) -> list[Triple]:
    heads, kv, hd, _ = layer_heads(cfg, layer)
    rel, k = cfg.number("d_rel", default=0) or 0, _kernel(cfg)
    full = layer.attention != "swa"
    a = p + "self_attn."
    out: list[Triple] = []
    if layer.index > 0:
        out.append((p + "attention_input.query", "F32", (3, h) if full else (h,)))
    out.append((p + "mlp_input.query", "F32", (h,)))
    out += [
        (a + "q_proj.linear.weight", dt, (heads * hd, h)),
        (a + "q_proj.norm.scale", dt, (heads, hd)),
        (a + "o_proj.gate_proj.weight", dt, (heads * hd, h)),
        (a + "o_proj.linear.weight", dt, (h, heads * hd)),
        (a + "sink_proj.weight", dt, (heads, h)),
        (a + "relative_position_bias.linear.weight", dt, (heads * rel, h)),
        (a + "relative_position_bias.norm.scale", dt, (heads, rel)),
        (a + "relative_position_bias.proj", dt, (rel, _rel_extent(cfg, layer))),
    ]
    for which in ("k_proj", "v_proj"):
        out.append((f"{a}{which}.linear.weight", dt, (kv * hd, h)))
        if full:  # dynamic taps: static ones per channel, per-token ones projected per KV head
            out += [
                (f"{a}{which}.sconv.static_weight", dt, (k, kv * hd)),
                (f"{a}{which}.sconv.weight_proj.weight", dt, (kv * k, h)),
            ]
        else:
            out.append((f"{a}{which}.sconv.conv1d.weight", "F32", (kv * hd, 1, k)))
    norms = ("q_input_layernorm", "k_input_layernorm", "v_input_layernorm") if full else ("input_layernorm",)
    out += [(f"{p}{n}.weight", dt, (h,)) for n in (*norms, "post_attention_layernorm")]
    out += [
        (f"{p}{n}.conv1d.weight", "F32", (h, 1, k))
        for n in ("post_attention_convolution", "post_mlp_convolution")
    ]
    out += _moe(cfg, p, h, dt, shared_in_router=False)
    if layer.index in _looped(cfg):
        rank = cfg.number("loop_gate_rank", default=0) or 0
        for gate in ("q_message_gate", "k_message_gate", "v_message_gate", "mlp_message_gate"):
            out += [
                (f"{p}{gate}.down_proj.weight", dt, (rank, 2 * h)),
                (f"{p}{gate}.forget_gate_proj.weight", "F32", (h, rank)),
                (f"{p}{gate}.message_gate_proj.weight", "F32", (h, rank)),
            ]
    return out


def inkling_layer(
    cfg: ArchConfig, arch: ArchitectureFacts, layer: LayerInfo, p: str, h: int, dt: str
) -> list[Triple]:
    return _inkling2(cfg, layer, p, h, dt) if arch.inkling == 2 else _inkling1(cfg, layer, p, h, dt)


def inkling_model_extras(cfg: ArchConfig, arch: ArchitectureFacts, h: int, dt: str) -> list[Triple]:
    """The embedding's RMS norm; Inkling 2's attention residual before the final norm, and the loop's
    message queries (one per gate of each loop layer)."""
    out: list[Triple] = [("model.embed_tokens.embed_norm.weight", dt, (h,))]
    if arch.inkling == 2:
        out.append(("model.final_input.query", "F32", (h,)))
        looped = len(_looped(cfg))
        if looped:
            out.append(("model.message_input.query", "F32", (looped, 4, h)))
            cfg.number(
                "loop_gate_rank"
            )  # sizes the gates of the loop layers, of which a config may build none
    return out


def inkling_head_rows(cfg: ArchConfig, arch: ArchitectureFacts, vocab: int) -> int:
    """Inkling 2's head holds unpadded_vocab_size rows (the padded ones are dropped on load); Inkling's
    is vocab_size wide, its logits cut to unpadded_vocab_size after it."""
    if arch.inkling != 2:
        return vocab
    return cfg.number("unpadded_vocab_size", default=vocab) or vocab


def inkling2_vision(cfg: ArchConfig, text_hidden: int, dt: str) -> list[Triple]:
    """Inkling 2's tower (Inkling2VisionModel): a linear patch embedding, a learned posemb_grid_size²
    position table interpolated to each image, a class token with its own position, a LayerNorm before
    CLIP-style blocks with a learned scale after attention and after the MLP (axial rotary positions, no
    weights), and a two-layer merger of spatial_merge_size² patches into the text width."""
    v = cfg.vision or {}
    d, depth = v.get("hidden_size") or 1024, v.get("num_hidden_layers") or 0
    mlp = v.get("intermediate_size") or int(d * (v.get("mlp_ratio") or 4.0))
    patch, channels = v.get("patch_size") or 20, v.get("num_channels") or 3
    grid, merge = v.get("posemb_grid_size") or 32, v.get("spatial_merge_size") or 2
    inner, biased = v.get("projection_hidden_dim") or 4096, v.get("projector_bias") is True
    width = v.get("text_hidden_size") or text_hidden
    e = "model.vision_tower."
    out: list[Triple] = [
        (e + "embeddings.patch_embedding.weight", dt, (d, channels * patch * patch)),
        (e + "embeddings.position_embedding.weight", dt, (grid * grid, d)),
        (e + "embeddings.class_embedding", dt, (d,)),
        (e + "embeddings.cls_position_embedding", dt, (d,)),
        (e + "pre_layernorm.weight", dt, (d,)),
        (e + "pre_layernorm.bias", dt, (d,)),
        (e + "merger.linear_1.weight", dt, (inner, merge * merge * d)),
        (e + "merger.linear_2.weight", dt, (width, inner)),
    ]
    if biased:
        out += [(e + "merger.linear_1.bias", dt, (inner,)), (e + "merger.linear_2.bias", dt, (width,))]
    for i in range(depth):
        b = f"{e}layers.{i}."
        out += vit_block(b, d, mlp, dt, norms=("layernorm_before", "layernorm_after"))
        out += [(b + "lambda_1", dt, (d,)), (b + "lambda_2", dt, (d,))]
    return out


def _prime_factors(number: int) -> list[int]:
    factors, p = [], 2
    while number > 1 and p * p <= number:
        while number % p == 0:
            factors.append(p)
            number //= p
        p += 1
    return factors + ([number] if number > 1 else [])


def _cumulative(values: list[int]) -> list[int]:
    out, product = [], 1
    for v in values:
        product *= v
        out.append(product)
    return out


def _hmlp_scales(v: dict) -> list[tuple[int, int, int, int]] | None:
    """Inkling's plan_out_scales: the (t, h, w, channels) grid after each of the tower's layers, from one
    pixel to a whole temporal_patch_size x patch_size² patch (spatial folds first, by the patch's prime
    factors, then temporal ones), each layer matched to the scale nearest its share of log(patch
    elements). None where the class solves an assignment instead (fewer layers than scales)."""
    patch, frames = v.get("patch_size") or 40, v.get("temporal_patch_size") or 2
    channels, layers = v.get("num_channels") or 3, v.get("num_hidden_layers") or 0
    sides, times = _cumulative(_prime_factors(patch)[::-1]), _cumulative(_prime_factors(frames)[::-1])
    if not sides or layers < 1:
        return None
    scales = [(1, 1, 1, channels)]
    scales += [(1, s, s, math.ceil(s * s * channels / 64) * 64) for s in sides]
    scales += [(t, sides[-1], sides[-1], sides[-1] ** 2 * channels * t * 64) for t in times]
    if layers < len(scales):
        return None
    top = math.log(patch * patch * frames * channels)
    logs = [math.log(t * h * w) for t, h, w, _ in scales]
    picks = []
    for i in range(layers + 1):
        ideal = top * i / layers
        costs = [abs(ideal - x) for x in logs]
        picks.append(costs.index(min(costs)))
    picks[0], picks[-1] = 0, len(scales) - 1
    return [scales[i] for i in picks]


def inkling_vision(cfg: ArchConfig, text_hidden: int, dt: str) -> list[Triple]:
    """Inkling's tower (InklingVisionModel): no attention, a stack of linear maps over space-to-depth
    folds of the patch, each but the last RMS-normed, the last into the text width, and a final norm."""
    v = cfg.vision or {}
    scales = _hmlp_scales(v)
    if scales is None:
        return []
    width = v.get("text_hidden_size") or text_hidden
    e = "model.vision_tower."
    out: list[Triple] = [(e + "final_norm.weight", dt, (width,))]
    last = len(scales) - 2
    for i, (start, end) in enumerate(itertools.pairwise(scales)):
        fold = (end[0] // start[0]) * (end[1] // start[1]) * (end[2] // start[2])
        rows = width if i == last else end[3]
        out.append((f"{e}encoder_layers.{i}.projection.weight", dt, (rows, start[3] * fold)))
        if i != last:
            out.append((f"{e}encoder_layers.{i}.layer_norm.weight", dt, (rows,)))
    return out


def inkling_doubts(cfg: ArchConfig) -> list[str]:
    """Inkling's tower with fewer layers than its scales: the class assigns them by a linear sum
    assignment hubdiff does not solve, so the tower is not counted."""
    if str(cfg.raw.get("model_type") or "") != "inkling_mm_model" or not cfg.vision:
        return []
    if _hmlp_scales(cfg.vision) is not None:
        return []
    return ["vision tower inkling_vision with fewer layers than its scales not modelled: not counted"]


def inkling_audio(a: dict, text_hidden: int) -> list[Triple]:
    """Inkling's audio tower: one embedding row per mel bin and quantized level (n_mel_bins x
    mel_vocab_size), summed over the bins of a frame, and an RMS norm in the text width."""
    bins, levels = a.get("n_mel_bins") or 80, a.get("mel_vocab_size") or 256
    return [
        (
            "model.audio_tower.embed_audio_tokens.embed_audio_tokens.weight",
            "BF16",
            (bins * levels, text_hidden),
        ),
        ("model.audio_tower.norm.weight", "BF16", (text_hidden,)),
    ]
