"""The tensors of a vision tower and its projector a config implies (CLIP-like, Mllama's, and others)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .config import ArchConfig
from .estimate_encdec import vision_encoder_decoder
from .estimate_evolla import evolla_protein
from .estimate_facts import Triple
from .estimate_inkling import inkling2_vision, inkling_vision
from .estimate_mlp import _dense
from .estimate_towers import _siglip, tower, tower_kind, vit_block
from .estimate_vq import attention_block, resnet_block


def _mllama_vision(v: dict, text_hidden: int, dt: str) -> list[Triple]:
    """Llama 3.2 Vision: tiled ViT with gated tile/position embeddings, a local and a gated global stack,
    and a projector from the last layer plus the intermediate layers it taps."""
    d, mlp = v["hidden_size"], v.get("intermediate_size") or 4 * v["hidden_size"]
    patch, channels = v.get("patch_size") or 14, v.get("num_channels") or 3
    patches = ((v.get("image_size") or 560) // patch) ** 2 + 1
    tiles, ratios = v["max_num_tiles"], len(v.get("supported_aspect_ratios") or []) + 1
    e = "vision_model."
    out: list[Triple] = [
        (e + "patch_embedding.weight", dt, (d, channels, patch, patch)),
        (e + "class_embedding", dt, (d,)),
        (e + "gated_positional_embedding.embedding", dt, (patches, d)),
        (e + "gated_positional_embedding.gate", dt, (1,)),
        (e + "gated_positional_embedding.tile_embedding.weight", dt, (ratios, tiles * patches * d)),
    ]
    for where in ("pre", "post"):
        out += [
            (e + f"{where}_tile_positional_embedding.embedding.weight", dt, (ratios, tiles * d)),
            (e + f"{where}_tile_positional_embedding.gate", dt, (1,)),
            (e + f"layernorm_{where}.weight", dt, (d,)),
            (e + f"layernorm_{where}.bias", dt, (d,)),
        ]
    stacks = (
        ("transformer", v.get("num_hidden_layers") or 0),
        ("global_transformer", v.get("num_global_layers") or 0),
    )
    for stack, depth in stacks:
        for i in range(depth):
            b = f"{e}{stack}.layers.{i}."
            out += [
                (b + f"self_attn.{p}.weight", dt, (d, d)) for p in ("q_proj", "k_proj", "v_proj", "o_proj")
            ]
            out += [
                (b + "mlp.fc1.weight", dt, (mlp, d)),
                (b + "mlp.fc1.bias", dt, (mlp,)),
                (b + "mlp.fc2.weight", dt, (d, mlp)),
                (b + "mlp.fc2.bias", dt, (d,)),
            ]
            out += [
                (b + f"{n}.{w}", dt, (d,))
                for n in ("input_layernorm", "post_attention_layernorm")
                for w in ("weight", "bias")
            ]
            if stack == "global_transformer":
                out += [(b + "gate_attn", dt, (1,)), (b + "gate_ffn", dt, (1,))]
    tapped = d * (len(v.get("intermediate_layers_indices") or []) + 1)
    out += [
        ("multi_modal_projector.weight", dt, (text_hidden, tapped)),
        ("multi_modal_projector.bias", dt, (text_hidden,)),
    ]
    return out


_LLAVA_PROJECTOR = frozenset({"llava", "llava_next", "llava_next_video", "llava_onevision", "vipllava"})


_CLIP_KINDS = frozenset({"", "clip_vision_model", "siglip_vision_model", "siglip"})


def vision_kind(cfg: ArchConfig) -> str | None:
    """Which of the modelled vision towers the config describes; None when it has none we model."""
    v = cfg.vision
    if not v:
        return None
    further = tower_kind(cfg)  # a tower modelled with its architecture's projector (estimate_towers)
    if further is not None:
        return further
    if str(cfg.raw.get("model_type") or "") in _OWN_TOWERS:
        return str(cfg.raw["model_type"])
    if isinstance(v.get("vt_hidden_size"), int):
        return "moonvit"
    if isinstance(v.get("vision_output_dim"), int) and v.get("pixel_shuffle_ratio"):
        return "llama4"
    # a vision config without its own model_type belongs to the outer model's
    family = str(v.get("model_type") or cfg.raw.get("model_type") or "")
    if family == "pixtral" and isinstance(v.get("hidden_size"), int):
        return "pixtral"
    if family.startswith("mllama") and isinstance(v.get("max_num_tiles"), int):
        return "mllama"
    if family.startswith("glm4v") and isinstance(v.get("out_hidden_size"), int):
        return "glm4v"
    if (
        # Cohere Compass's tower is Qwen3-VL's (blocks, learned positions, merger and deepstack mergers)
        (family.startswith("qwen") or family == "cohere_compass_vision")
        and isinstance(v.get("depth"), int)
        and isinstance(v.get("hidden_size"), int)
    ):
        return "qwen-vl"
    kind = str(v.get("model_type") or "")
    if kind in _CLIP_KINDS and all(
        isinstance(v.get(k), int) for k in ("num_hidden_layers", "hidden_size", "intermediate_size")
    ):
        return "clip"
    return None


def _after_clip(cfg: ArchConfig, width: int, text_hidden: int, dt: str) -> list[Triple]:
    """What an outer model puts after a CLIP / SigLIP tower: DeepSeek-VL's aligner, two biased linears
    (GELU between) from the tower's width into the text width."""
    if cfg.raw.get("model_type") == "deepseek_vl_hybrid":
        return _deepseek_vl_hybrid(cfg, width, text_hidden, dt)
    if cfg.raw.get("model_type") == "deepseek_vl":
        return [
            ("model.aligner.linear1.weight", dt, (text_hidden, width)),
            ("model.aligner.linear1.bias", dt, (text_hidden,)),
            ("model.aligner.linear2.weight", dt, (text_hidden, text_hidden)),
            ("model.aligner.linear2.bias", dt, (text_hidden,)),
        ]
    return []


def _sam_neck(n: str, d: int, out_c: int, dt: str) -> list[Triple]:
    return [
        (n + "conv1.weight", dt, (out_c, d, 1, 1)),
        (n + "conv2.weight", dt, (out_c, out_c, 3, 3)),
        *[(n + f"layer_norm{i}.{w}", dt, (out_c,)) for i in (1, 2) for w in ("weight", "bias")],
    ]


def _sam_tower(h: dict, e: str, dt: str, original_names: bool = False) -> list[Triple]:
    """SAM's ViT (high_res_vision_config): windowed attention with relative positions (global in
    global_attn_indexes), an absolute position grid when use_abs_pos, and a convolutional neck. In
    transformers' names, or with ``original_names`` in SAM's own (patch_embed.proj, blocks, norm1, a neck
    of four numbered modules), as DeepSeek-OCR-2's checkpoints keep them."""
    embed, blocks, norms = (
        ("patch_embed.proj", "blocks", ("norm1", "norm2"))
        if original_names
        else ("patch_embed.projection", "layers", ("layer_norm1", "layer_norm2"))
    )
    d, depth = h.get("hidden_size") or 768, h.get("num_hidden_layers") or 0
    patch, channels, image = (
        h.get("patch_size") or 16,
        h.get("num_channels") or 3,
        h.get("image_size") or 1024,
    )
    heads, out_c = h.get("num_attention_heads") or 12, h.get("output_channels") or 256
    mlp = h.get("mlp_dim") or int(d * (h.get("mlp_ratio") or 4.0))
    grid, window = image // patch, h.get("window_size") or 0
    wide = h.get("global_attn_indexes") or []
    out: list[Triple] = [
        (e + f"{embed}.weight", dt, (d, channels, patch, patch)),
        (e + f"{embed}.bias", dt, (d,)),
    ]
    if h.get("use_abs_pos", True) is not False:
        out.append((e + "pos_embed", dt, (1, grid, grid, d)))
    for i in range(depth):
        b = f"{e}{blocks}.{i}."
        out += [(b + "attn.qkv.weight", dt, (3 * d, d)), (b + "attn.proj.weight", dt, (d, d))]
        out += [(b + "attn.qkv.bias", dt, (3 * d,))] if h.get("qkv_bias", True) is not False else []
        side = grid if i in wide or not window else window
        if h.get("use_rel_pos", True) is not False:
            out += [(b + f"attn.rel_pos_{x}", dt, (2 * side - 1, d // heads)) for x in ("h", "w")]
        out += [
            (b + "attn.proj.bias", dt, (d,)),
            (b + "mlp.lin1.weight", dt, (mlp, d)),
            (b + "mlp.lin1.bias", dt, (mlp,)),
            (b + "mlp.lin2.weight", dt, (d, mlp)),
            (b + "mlp.lin2.bias", dt, (d,)),
        ]
        out += [(b + f"{n}.{w}", dt, (d,)) for n in norms for w in ("weight", "bias")]
    if not original_names:
        return out + _sam_neck(e + "neck.", d, out_c, dt)
    out += [(e + "neck.0.weight", dt, (out_c, d, 1, 1)), (e + "neck.2.weight", dt, (out_c, out_c, 3, 3))]
    return out + [(e + f"neck.{i}.{w}", dt, (out_c,)) for i in (1, 3) for w in ("weight", "bias")]


def _deepseek_vl_hybrid(cfg: ArchConfig, width: int, text_hidden: int, dt: str) -> list[Triple]:
    """DeepSeek-VL hybrid: beside the SigLIP tower, SAM's high-resolution one, a second neck, two strided
    convolutions widening it four times, a learned mixing scalar, and an aligner that projects each tower
    to half the text width and the two together into it."""
    h = cfg.raw.get("high_res_vision_config")
    h = h if isinstance(h, dict) else {}
    d, out_c = h.get("hidden_size") or 768, h.get("output_channels") or 256
    a = "model.aligner."
    return [
        *_sam_tower(h, "model.high_res_vision_model.vision_encoder.", dt),
        *_sam_neck("model.high_res_vision_neck.", d, out_c, dt),
        ("model.high_res_vision_proj.conv1.weight", dt, (2 * out_c, out_c, 3, 3)),
        ("model.high_res_vision_proj.conv2.weight", dt, (4 * out_c, 2 * out_c, 3, 3)),
        ("model.high_res_vision_alpha", dt, (1,)),
        (a + "vision_proj.weight", dt, (text_hidden // 2, width)),
        (a + "vision_proj.bias", dt, (text_hidden // 2,)),
        (a + "high_res_vision_proj.weight", dt, (text_hidden // 2, 4 * out_c)),
        (a + "high_res_vision_proj.bias", dt, (text_hidden // 2,)),
        (a + "proj.weight", dt, (text_hidden, text_hidden)),
        (a + "proj.bias", dt, (text_hidden,)),
    ]


def _after_qwen_vl(cfg: ArchConfig, width: int, text_hidden: int, dt: str) -> list[Triple]:
    """What an outer model puts after a Qwen-VL tower's merger: HyperCLOVA X Vision V2 maps the merger's
    output into the text width with one more biased linear."""
    if cfg.raw.get("model_type") == "hyperclovax_vision_v2":
        return [
            ("model.vision_projector.weight", dt, (text_hidden, width)),
            ("model.vision_projector.bias", dt, (text_hidden,)),
        ]
    return []


def _vision(cfg: ArchConfig, text_hidden: int) -> list[Triple]:
    own = _OWN_TOWERS.get(str(cfg.raw.get("model_type") or ""))
    if own is not None:
        return own(cfg, text_hidden, "BF16")
    v = cfg.vision
    kind = vision_kind(cfg)
    if not v or kind is None:
        return []
    if kind == tower_kind(cfg):
        return tower(cfg, kind, text_hidden)
    dt = "BF16"
    if kind == "llama4":
        # Llama 4: CLIP-like blocks, a linear patch embedding, a pixel-shuffle adapter MLP, one projector
        d, mlp, depth = (
            v["hidden_size"],
            v.get("intermediate_size") or 4 * v["hidden_size"],
            v.get("num_hidden_layers") or 0,
        )
        patch, channels = v.get("patch_size") or 14, v.get("num_channels") or 3
        positions = ((v.get("image_size") or 448) // patch) ** 2 + 1
        e = "vision_model."
        out: list[Triple] = [
            (e + "patch_embedding.linear.weight", dt, (d, channels * patch * patch)),
            (e + "class_embedding", dt, (d,)),
            (e + "positional_embedding_vlm", dt, (positions, d)),
        ]
        out += [(e + f"layernorm_{w}.{p}", dt, (d,)) for w in ("pre", "post") for p in ("weight", "bias")]
        for i in range(depth):
            out += vit_block(
                f"{e}model.layers.{i}.", d, mlp, dt, "o_proj", ("input_layernorm", "post_attention_layernorm")
            )
        p_in, p_out = v.get("projector_input_dim") or mlp, v.get("projector_output_dim") or mlp
        out += [
            (e + "vision_adapter.mlp.fc1.weight", dt, (p_in, mlp)),
            (e + "vision_adapter.mlp.fc2.weight", dt, (p_out, p_in)),
            ("multi_modal_projector.linear_1.weight", dt, (text_hidden, v["vision_output_dim"])),
        ]
        return out
    if kind == "mllama":
        return _mllama_vision(v, text_hidden, dt)
    if kind == "pixtral":
        # Pixtral: RMS norms, a gated MLP, no biases, 2-D RoPE (no position table); Mistral 3's projector
        # merges spatial_merge_size² patches, then two linear layers into the text width
        d, mlp, depth = (
            v["hidden_size"],
            v.get("intermediate_size") or 4 * v["hidden_size"],
            v.get("num_hidden_layers") or 0,
        )
        patch, channels = v.get("patch_size") or 14, v.get("num_channels") or 3
        merge = cfg.raw.get("spatial_merge_size") or 2
        e = "vision_tower."
        out = [(e + "patch_conv.weight", dt, (d, channels, patch, patch)), (e + "ln_pre.weight", dt, (d,))]
        for i in range(depth):
            b = f"{e}transformer.layers.{i}."
            out += [
                (b + f"attention.{p}.weight", dt, (d, d)) for p in ("q_proj", "k_proj", "v_proj", "o_proj")
            ]
            out += [(b + "attention_norm.weight", dt, (d,)), (b + "ffn_norm.weight", dt, (d,))]
            out += _dense(b + "feed_forward.", d, mlp, dt, gated=True)
        p = "multi_modal_projector."
        out += [
            (p + "norm.weight", dt, (d,)),
            (p + "patch_merger.merging_layer.weight", dt, (d, d * merge * merge)),
            (p + "linear_1.weight", dt, (text_hidden, d)),
            (p + "linear_2.weight", dt, (text_hidden, text_hidden)),
        ]
        if cfg.raw.get("multimodal_projector_bias") is True:
            out += [(p + "linear_1.bias", dt, (text_hidden,)), (p + "linear_2.bias", dt, (text_hidden,))]
        return out
    if kind == "glm4v":
        # GLM-4.xV: the blocks' MLP is out_hidden_size wide; intermediate_size is the merger's
        d, out_h, depth = v["hidden_size"], v["out_hidden_size"], v.get("depth") or 0
        patch, temporal, channels = (
            v.get("patch_size") or 14,
            v.get("temporal_patch_size") or 2,
            v.get("in_channels") or 3,
        )
        merge, context = v.get("spatial_merge_size") or 2, v.get("intermediate_size") or 4 * out_h
        bias = v.get("attention_bias") is True
        e = "model.visual."
        out = [
            (e + "patch_embed.proj.weight", dt, (d, channels, temporal, patch, patch)),
            (e + "patch_embed.proj.bias", dt, (d,)),
            (
                e + "embeddings.position_embedding.weight",
                dt,
                (((v.get("image_size") or 336) // patch) ** 2, d),
            ),
            (e + "post_conv_layernorm.weight", dt, (d,)),
            (e + "post_layernorm.weight", dt, (d,)),
            (e + "downsample.weight", dt, (out_h, d, merge, merge)),
            (e + "downsample.bias", dt, (out_h,)),
            (e + "merger.proj.weight", dt, (out_h, out_h)),
            (e + "merger.post_projection_norm.weight", dt, (out_h,)),
            (e + "merger.post_projection_norm.bias", dt, (out_h,)),
            (e + "merger.gate_proj.weight", dt, (context, out_h)),
            (e + "merger.up_proj.weight", dt, (context, out_h)),
            (e + "merger.down_proj.weight", dt, (out_h, context)),
        ]
        for i in range(depth):
            b = f"{e}blocks.{i}."
            out += [
                (b + "norm1.weight", dt, (d,)),
                (b + "norm2.weight", dt, (d,)),
                (b + "attn.qkv.weight", dt, (3 * d, d)),
                (b + "attn.proj.weight", dt, (d, d)),
                (b + "mlp.gate_proj.weight", dt, (out_h, d)),
                (b + "mlp.up_proj.weight", dt, (out_h, d)),
                (b + "mlp.down_proj.weight", dt, (d, out_h)),
            ]
            if bias:
                out.append((b + "attn.qkv.bias", dt, (3 * d,)))
        return out
    if kind == "moonvit":
        d, mlp = v["vt_hidden_size"], v.get("vt_intermediate_size") or 4 * v["vt_hidden_size"]
        blocks = v.get("vt_num_hidden_layers") or 0
        # MoonViT is biased throughout; a config that names none of the switches keeps that default
        biased = not any(k in v for k in ("linear_bias", "attn_bias", "patch_embed_proj_bias"))
        bias = bool(v.get("linear_bias", biased))
        attn_bias = bool(v.get("attn_bias", biased))
        patch_bias = bool(v.get("patch_embed_proj_bias", biased))
        norm_bias = v.get("norm_type", "layernorm") != "rmsnorm"
        patch, channels = v.get("patch_size") or 14, v.get("in_channels") or 3
        temporal = v.get("temporal_patch_size")
        kernel = (d, channels, temporal, patch, patch) if temporal else (d, channels, patch, patch)
        out = [
            ("vision_tower.patch_embed.proj.weight", dt, kernel),
            (
                "vision_tower.patch_embed.pos_emb.weight",
                dt,
                (v.get("init_pos_emb_height") or 64, v.get("init_pos_emb_width") or 64, d),
            ),
        ]
        if patch_bias:
            out.append(("vision_tower.patch_embed.proj.bias", dt, (d,)))
        for i in range(blocks):
            b = f"vision_tower.encoder.blocks.{i}."
            out += [
                (b + "norm0.weight", dt, (d,)),
                (b + "norm1.weight", dt, (d,)),
                (b + "attn.wqkv.weight", dt, (3 * d, d)),
                (b + "attn.wo.weight", dt, (d, d)),
                (b + "mlp.fc0.weight", dt, (mlp, d)),
                (b + "mlp.fc1.weight", dt, (d, mlp)),
            ]
            if norm_bias:
                out += [(b + "norm0.bias", dt, (d,)), (b + "norm1.bias", dt, (d,))]
            if attn_bias:
                out += [(b + "attn.wqkv.bias", dt, (3 * d,)), (b + "attn.wo.bias", dt, (d,))]
            if bias:
                out += [(b + "mlp.fc0.bias", dt, (mlp,)), (b + "mlp.fc1.bias", dt, (d,))]
        out.append(("vision_tower.encoder.final_layernorm.weight", dt, (d,)))
        if norm_bias:
            out.append(("vision_tower.encoder.final_layernorm.bias", dt, (d,)))
        merge = v.get("merge_kernel_size") or [2, 2]
        merged = d * merge[0] * merge[1]
        th = v.get("text_hidden_size") or text_hidden
        if v.get("mm_projector_type") == "patchmerger":
            # a LayerNorm over the vision width before merging, then merged -> merged -> text width
            return [
                *out,
                ("mm_projector.pre_norm.weight", dt, (d,)),
                ("mm_projector.pre_norm.bias", dt, (d,)),
                ("mm_projector.proj.0.weight", dt, (merged, merged)),
                ("mm_projector.proj.0.bias", dt, (merged,)),
                ("mm_projector.proj.2.weight", dt, (th, merged)),
                ("mm_projector.proj.2.bias", dt, (th,)),
            ]
        out += [  # patchmergerv2: an RMSNorm over the merged width, then merged -> text -> text
            ("mm_projector.pre_norm.weight", dt, (merged,)),
            ("mm_projector.proj.0.weight", dt, (th, merged)),
            ("mm_projector.proj.0.bias", dt, (th,)),
            ("mm_projector.proj.2.weight", dt, (th, th)),
            ("mm_projector.proj.2.bias", dt, (th,)),
        ]
        return out
    if kind == "qwen-vl":
        # Qwen-VL towers. Qwen2-VL: width embed_dim, hidden_size is the output; Qwen2.5-VL: SwiGLU MLP
        # and RMSNorm (hidden_act silu); Qwen3-VL: learned positions, deepstack mergers.
        d = v.get("embed_dim") or v["hidden_size"]
        out_h = v["hidden_size"] if v.get("embed_dim") else (v.get("out_hidden_size") or text_hidden)
        mlp = v.get("intermediate_size") or int(d * (v.get("mlp_ratio") or 4))
        gated = v.get("hidden_act") == "silu"
        patch, temporal, channels = (
            v.get("patch_size") or 14,
            v.get("temporal_patch_size") or 1,
            v.get("in_channels") or 3,
        )
        merged = d * (v.get("spatial_merge_size") or 2) ** 2
        learned_positions = bool(v.get("num_position_embeddings"))
        out = [("model.visual.patch_embed.proj.weight", dt, (d, channels, temporal, patch, patch))]
        if learned_positions:
            out += [
                ("model.visual.patch_embed.proj.bias", dt, (d,)),
                ("model.visual.pos_embed.weight", dt, (v["num_position_embeddings"], d)),
            ]
        for i in range(v["depth"]):
            b = f"model.visual.blocks.{i}."
            out += [
                (b + "norm1.weight", dt, (d,)),
                (b + "norm2.weight", dt, (d,)),
                (b + "attn.qkv.weight", dt, (3 * d, d)),
                (b + "attn.qkv.bias", dt, (3 * d,)),
                (b + "attn.proj.weight", dt, (d, d)),
                (b + "attn.proj.bias", dt, (d,)),
            ]
            if not gated:
                out += [
                    (b + "norm1.bias", dt, (d,)),
                    (b + "norm2.bias", dt, (d,)),
                    (b + "mlp.linear_fc1.weight", dt, (mlp, d)),
                    (b + "mlp.linear_fc1.bias", dt, (mlp,)),
                    (b + "mlp.linear_fc2.weight", dt, (d, mlp)),
                    (b + "mlp.linear_fc2.bias", dt, (d,)),
                ]
            else:
                for proj, shape in (("gate_proj", (mlp, d)), ("up_proj", (mlp, d)), ("down_proj", (d, mlp))):
                    out += [(b + f"mlp.{proj}.weight", dt, shape), (b + f"mlp.{proj}.bias", dt, (shape[0],))]
        mergers = [("model.visual.merger.", d)] + [
            (f"model.visual.deepstack_merger_list.{i}.", merged)
            for i in range(len(v.get("deepstack_visual_indexes") or []))
        ]
        for prefix, norm in mergers:
            out.append((prefix + "norm.weight", dt, (norm,)))
            if not gated:
                out.append((prefix + "norm.bias", dt, (norm,)))
            out += [
                (prefix + "linear_fc1.weight", dt, (merged, merged)),
                (prefix + "linear_fc1.bias", dt, (merged,)),
                (prefix + "linear_fc2.weight", dt, (out_h, merged)),
                (prefix + "linear_fc2.bias", dt, (out_h,)),
            ]
        return out + _after_qwen_vl(cfg, out_h, text_hidden, dt)
    if kind == "clip":
        # CLIP / SigLIP-style ViT: biased q, k, v, o and fc1, fc2; layer norms with bias; learned positions
        d, mlp, depth = v["hidden_size"], v["intermediate_size"], v["num_hidden_layers"]
        patch, channels = v.get("patch_size") or 14, v.get("num_channels") or v.get("in_channels") or 3
        positions = (v.get("image_size") or 224) // patch
        e = "vision_tower.vision_model."
        # CLIP: a class token (one more position), an unbiased patch convolution, a norm before the blocks
        clip = v.get("model_type") == "clip_vision_model"
        out = [
            (e + "embeddings.patch_embedding.weight", dt, (d, channels, patch, patch)),
            (e + "embeddings.position_embedding.weight", dt, (positions * positions + int(clip), d)),
            (e + "post_layernorm.weight", dt, (d,)),
            (e + "post_layernorm.bias", dt, (d,)),
        ]
        if clip:
            out += [
                (e + "embeddings.class_embedding", dt, (d,)),
                (e + "pre_layrnorm.weight", dt, (d,)),
                (e + "pre_layrnorm.bias", dt, (d,)),
            ]
        else:
            out.append((e + "embeddings.patch_embedding.bias", dt, (d,)))
        for i in range(depth):
            out += vit_block(
                f"{e}encoder.layers.{i}.", d, mlp, dt, "out_proj", ("layer_norm1", "layer_norm2")
            )
        if v.get("vision_use_head") is True:  # SigLIP's attention-pooling head
            p = e + "head."
            out += [
                (p + "probe", dt, (1, 1, d)),
                (p + "attention.in_proj_weight", dt, (3 * d, d)),
                (p + "attention.in_proj_bias", dt, (3 * d,)),
                (p + "attention.out_proj.weight", dt, (d, d)),
                (p + "attention.out_proj.bias", dt, (d,)),
                (p + "layernorm.weight", dt, (d,)),
                (p + "layernorm.bias", dt, (d,)),
                (p + "mlp.fc1.weight", dt, (mlp, d)),
                (p + "mlp.fc1.bias", dt, (mlp,)),
                (p + "mlp.fc2.weight", dt, (d, mlp)),
                (p + "mlp.fc2.bias", dt, (d,)),
            ]
        if str(cfg.raw.get("model_type")) in _LLAVA_PROJECTOR:
            # LLaVA: two linear layers from the tapped vision layers into the text width
            taps = cfg.raw.get("vision_feature_layers", cfg.raw.get("vision_feature_layer"))
            tapped = d * (len(taps) if isinstance(taps, list) else 1)
            bias = cfg.raw.get("multimodal_projector_bias", True) is not False
            p = "multi_modal_projector."
            if cfg.raw.get("model_type") == "vipllava":  # a LayerNorm over the tapped layers first
                out += [(p + f"projector_layernorm.{part}", dt, (tapped,)) for part in ("weight", "bias")]
            out += [
                (p + "linear_1.weight", dt, (text_hidden, tapped)),
                (p + "linear_2.weight", dt, (text_hidden, text_hidden)),
            ]
            if bias:
                out += [(p + "linear_1.bias", dt, (text_hidden,)), (p + "linear_2.bias", dt, (text_hidden,))]
            if cfg.raw.get("model_type") not in ("llava", "vipllava"):
                out.append(("image_newline", dt, (text_hidden,)))  # LLaVA-NeXT's row separator
        if cfg.raw.get("model_type") == "paligemma":  # one biased projection into projection_dim
            width = cfg.raw.get("projection_dim") or (cfg.vision or {}).get("projection_dim") or text_hidden
            out += [
                ("multi_modal_projector.linear.weight", dt, (width, d)),
                ("multi_modal_projector.linear.bias", dt, (width,)),
            ]
        if isinstance(cfg.raw.get("mm_tokens_per_image"), int):  # Gemma 3: a norm and one projection
            out += [
                ("multi_modal_projector.mm_input_projection_weight", dt, (d, text_hidden)),
                ("multi_modal_projector.mm_soft_emb_norm.weight", dt, (d,)),
            ]
        return out + _after_clip(cfg, d, text_hidden, dt)
    return []


# -- towers of their own, by the outer model_type ------------------------------------------------------


def _fuyu(cfg: ArchConfig, text_hidden: int, dt: str) -> list[Triple]:
    """Fuyu has no vision tower: one biased linear takes each flattened patch into the text width."""
    patch, channels = cfg.raw.get("patch_size") or 30, cfg.raw.get("num_channels") or 3
    return [
        ("vision_embed_tokens.weight", dt, (text_hidden, patch * patch * channels)),
        ("vision_embed_tokens.bias", dt, (text_hidden,)),
    ]


def _hunyuan_vit(v: dict, dt: str) -> list[Triple]:
    """HunYuan's SigLIP-like tower: biased q/k/v/o, LayerNorms, a class-token position table over the
    largest image (max_image_size)."""
    d, mlp, depth = (
        v.get("hidden_size") or 1152,
        v.get("intermediate_size") or 4304,
        v.get("num_hidden_layers") or 0,
    )
    patch, channels = v.get("patch_size") or 16, v.get("num_channels") or 3
    positions = ((v.get("max_image_size") or 2048) // patch) ** 2 + 1
    e = "model.vision_tower."
    out: list[Triple] = [
        (e + "embeddings.patch_embedding.weight", dt, (d, channels, patch, patch)),
        (e + "embeddings.patch_embedding.bias", dt, (d,)),
        (e + "embeddings.position_embedding.weight", dt, (positions, d)),
    ]
    for i in range(depth):
        out += vit_block(f"{e}layers.{i}.", d, mlp, dt, "o_proj", ("layer_norm1", "layer_norm2"))
    return out


def _hunyuan_vl(cfg: ArchConfig, text_hidden: int, dt: str) -> list[Triple]:
    """HunYuan-VL: HunYuan's tower, then a merger: RMS norm, a strided convolution to twice the width, a
    1x1 one to four times, one linear into the text width, an RMS norm, and four learned markers."""
    v = cfg.vision or {}
    d, merge = v.get("hidden_size") or 1152, v.get("spatial_merge_size") or 2
    out_h = v.get("text_hidden_size") or text_hidden
    m = "model.vision_tower.patch_merger."
    out = [
        *_hunyuan_vit(v, dt),
        (m + "before_rms.weight", dt, (d,)),
        (m + "proj_conv.weight", dt, (2 * d, d, merge, merge)),
        (m + "proj_conv.bias", dt, (2 * d,)),
        (m + "proj_out.weight", dt, (4 * d, 2 * d, 1, 1)),
        (m + "proj_out.bias", dt, (4 * d,)),
        (m + "mlp.weight", dt, (out_h, 4 * d)),
        (m + "mlp.bias", dt, (out_h,)),
        (m + "after_rms.weight", dt, (out_h,)),
        (m + "image_newline", dt, (4 * d,)),
    ]
    return out + [(m + marker, dt, (out_h,)) for marker in ("image_begin", "image_end", "image_sep")]


def _hy_v4_vl(cfg: ArchConfig, text_hidden: int, dt: str) -> list[Triple]:
    """HY-V4 VL: HunYuan's tower, then a merger whose strided convolution widens by spatial_merge_size²
    and whose 1x1 convolution goes straight to out_hidden_size (no linear, no markers but the newline)."""
    v = cfg.vision or {}
    d, merge = v.get("hidden_size") or 1536, v.get("spatial_merge_size") or 2
    wide, out_h = d * merge * merge, v.get("out_hidden_size") or text_hidden
    m = "model.vision_tower.patch_merger."
    return [
        *_hunyuan_vit(v, dt),
        (m + "before_rms.weight", dt, (d,)),
        (m + "proj_conv.weight", dt, (wide, d, merge, merge)),
        (m + "proj_conv.bias", dt, (wide,)),
        (m + "proj_out.weight", dt, (out_h, wide, 1, 1)),
        (m + "proj_out.bias", dt, (out_h,)),
        (m + "image_newline", dt, (out_h,)),
    ]


def _ernie4_5_vl(cfg: ArchConfig, text_hidden: int, dt: str) -> list[Triple]:
    """ERNIE 4.5 VL: a ViT with a linear patch embedding (no bias), biased fused qkv and plain MLPs,
    LayerNorms; then a resampler: an MLP over spatial_merge_size² patches, one over temporal_merge_size
    frames of those, a linear into the text width and an RMS norm."""
    v = cfg.vision or {}
    d, depth = v.get("hidden_size") or 1280, v.get("depth") or 0
    mlp = v.get("intermediate_size") or 4 * d
    patch, channels = v.get("patch_size") or 14, v.get("in_channels") or 3
    spatial = d * (v.get("spatial_merge_size") or 2) ** 2
    temporal = spatial * (v.get("temporal_merge_size") or 2)
    e, r = "model.vision_tower.", "model.resampler_model."
    out: list[Triple] = [
        (e + "patch_embed.proj.weight", dt, (d, channels * patch * patch)),
        (e + "ln.weight", dt, (d,)),
        (e + "ln.bias", dt, (d,)),
    ]
    for i in range(depth):
        b = f"{e}blocks.{i}."
        for name, shape in (
            ("attn.qkv", (3 * d, d)),
            ("attn.proj", (d, d)),
            ("mlp.fc1", (mlp, d)),
            ("mlp.fc2", (d, mlp)),
        ):
            out += [(b + name + ".weight", dt, shape), (b + name + ".bias", dt, (shape[0],))]
        out += [(b + f"{n}.{w}", dt, (d,)) for n in ("norm1", "norm2") for w in ("weight", "bias")]
    for name, wide in (("spatial_linear.", spatial), ("temporal_linear.", temporal)):
        out += [
            (r + name + "fc1.weight", dt, (spatial, wide)),
            (r + name + "fc1.bias", dt, (spatial,)),
            (r + name + "fc2.weight", dt, (spatial, spatial)),
            (r + name + "fc2.bias", dt, (spatial,)),
            (r + name + "ln.weight", dt, (spatial,)),
            (r + name + "ln.bias", dt, (spatial,)),
        ]
    out += [
        (r + "mlp.weight", dt, (text_hidden, spatial)),
        (r + "mlp.bias", dt, (text_hidden,)),
        (r + "after_norm.weight", dt, (text_hidden,)),
    ]
    return out


def _minimax_m3_vl(cfg: ArchConfig, text_hidden: int, dt: str) -> list[Triple]:
    """MiniMax-M3 VL: a CLIP-like tower with a 3-D patch convolution (no bias), 3-D RoPE (no position
    table), a norm before the blocks and none after; a two-layer projector into the text width, then a
    two-layer MLP over spatial_merge_size² merged tokens (widths from projector_hidden_size)."""
    v = cfg.vision or {}
    d, mlp, depth = (
        v.get("hidden_size") or 1280,
        v.get("intermediate_size") or 5120,
        v.get("num_hidden_layers") or 0,
    )
    patch, temporal = v.get("patch_size") or 14, v.get("temporal_patch_size") or 2
    channels, merge = v.get("num_channels") or 3, v.get("spatial_merge_size") or 2
    mid = cfg.raw.get("projector_hidden_size") or text_hidden
    e = "vision_tower.vision_model."
    out: list[Triple] = [
        (e + "embeddings.patch_embedding.weight", dt, (d, channels, temporal, patch, patch)),
        (e + "pre_layrnorm.weight", dt, (d,)),
        (e + "pre_layrnorm.bias", dt, (d,)),
    ]
    for i in range(depth):
        out += vit_block(f"{e}encoder.layers.{i}.", d, mlp, dt, "out_proj", ("layer_norm1", "layer_norm2"))
    for prefix, wide in (("multi_modal_projector.", d), ("patch_merge_mlp.", text_hidden * merge * merge)):
        out += [
            (prefix + "linear_1.weight", dt, (mid, wide)),
            (prefix + "linear_1.bias", dt, (mid,)),
            (prefix + "linear_2.weight", dt, (text_hidden, mid)),
            (prefix + "linear_2.bias", dt, (text_hidden,)),
        ]
    return out


def _step3p7(cfg: ArchConfig, text_hidden: int, dt: str) -> list[Triple]:
    """Step 3.7: a CLIP-like tower (unbiased patch convolution, a position table over the image's patches,
    a norm before the blocks, a learned scale after attention and MLP in each), two strided convolutions
    widening it four times, one linear into the text width (biased when projector_bias)."""
    v = cfg.vision or {}
    d, mlp, depth = (
        v.get("hidden_size") or 1536,
        v.get("intermediate_size") or 8960,
        v.get("num_hidden_layers") or 0,
    )
    patch, channels = v.get("patch_size") or 14, v.get("num_channels") or 3
    e = "model.vision_model."
    out: list[Triple] = [
        (e + "embeddings.patch_embedding.weight", dt, (d, channels, patch, patch)),
        (e + "embeddings.position_embedding.weight", dt, (((v.get("image_size") or 728) // patch) ** 2, d)),
        (e + "pre_layernorm.weight", dt, (d,)),
        (e + "pre_layernorm.bias", dt, (d,)),
        (e + "downsampler1.weight", dt, (2 * d, d, 3, 3)),
        (e + "downsampler1.bias", dt, (2 * d,)),
        (e + "downsampler2.weight", dt, (4 * d, 2 * d, 3, 3)),
        (e + "downsampler2.bias", dt, (4 * d,)),
        ("model.multi_modal_projector.weight", dt, (text_hidden, 4 * d)),
    ]
    if cfg.raw.get("projector_bias") is True:
        out.append(("model.multi_modal_projector.bias", dt, (text_hidden,)))
    for i in range(depth):
        b = f"{e}layers.{i}."
        out += vit_block(b, d, mlp, dt, "out_proj", ("layernorm_before", "layernorm_after"))
        out += [(b + "lambda_1", dt, (d,)), (b + "lambda_2", dt, (d,))]
    return out


def _exaone4_5(cfg: ArchConfig, text_hidden: int, dt: str) -> list[Triple]:
    """EXAONE 4.5: Qwen2.5-VL's tower (3-D patch convolution, RMS norms, biased SwiGLU MLPs, the patch
    merger) with grouped-query attention: the fused qkv holds num_key_value_heads keys and values."""
    v = cfg.vision or {}
    d, mlp, depth = v.get("hidden_size") or 3584, v.get("intermediate_size") or 3420, v.get("depth") or 0
    heads = v.get("num_heads") or 16
    kv = (v.get("num_key_value_heads") or heads) * (d // heads)
    patch, temporal, channels = (
        v.get("patch_size") or 14,
        v.get("temporal_patch_size") or 2,
        v.get("in_channels") or 3,
    )
    merged, out_h = d * (v.get("spatial_merge_size") or 2) ** 2, v.get("out_hidden_size") or text_hidden
    e = "model.visual."
    out: list[Triple] = [(e + "patch_embed.proj.weight", dt, (d, channels, temporal, patch, patch))]
    for i in range(depth):
        b = f"{e}blocks.{i}."
        out += [(b + "norm1.weight", dt, (d,)), (b + "norm2.weight", dt, (d,))]
        for name, shape in (
            ("attn.qkv", (d + 2 * kv, d)),
            ("attn.proj", (d, d)),
            ("mlp.gate_proj", (mlp, d)),
            ("mlp.up_proj", (mlp, d)),
            ("mlp.down_proj", (d, mlp)),
        ):
            out += [(b + name + ".weight", dt, shape), (b + name + ".bias", dt, (shape[0],))]
    m = e + "merger."
    return [
        *out,
        (m + "ln_q.weight", dt, (d,)),
        (m + "mlp.0.weight", dt, (merged, merged)),
        (m + "mlp.0.bias", dt, (merged,)),
        (m + "mlp.2.weight", dt, (out_h, merged)),
        (m + "mlp.2.bias", dt, (out_h,)),
    ]


def _video_llama_3(cfg: ArchConfig, text_hidden: int, dt: str) -> list[Triple]:
    """VideoLLaMA 3: a SigLIP tower without a position table (2-D RoPE), then a two-layer MLP readout from
    the tower's width into the text width."""
    v = cfg.vision or {}
    d, mlp, depth = (
        v.get("hidden_size") or 768,
        v.get("intermediate_size") or 3072,
        v.get("num_hidden_layers") or 0,
    )
    patch, channels = v.get("patch_size") or 16, v.get("num_channels") or 3
    e, r = "model.vision_model.", "model.projector.readout."
    out: list[Triple] = [
        (e + "embeddings.patch_embedding.weight", dt, (d, channels, patch, patch)),
        (e + "embeddings.patch_embedding.bias", dt, (d,)),
        (e + "post_layernorm.weight", dt, (d,)),
        (e + "post_layernorm.bias", dt, (d,)),
        (r + "0.weight", dt, (text_hidden, d)),
        (r + "0.bias", dt, (text_hidden,)),
        (r + "2.weight", dt, (text_hidden, text_hidden)),
        (r + "2.bias", dt, (text_hidden,)),
    ]
    for i in range(depth):
        out += vit_block(f"{e}encoder.layers.{i}.", d, mlp, dt, "out_proj", ("layer_norm1", "layer_norm2"))
    return out


def _side(value: object, default: int) -> tuple[int, int]:
    """A size given as one number or as [height, width] (InternViT-style configs)."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value, value
    if isinstance(value, list) and len(value) == 2 and all(isinstance(x, int) and x > 0 for x in value):
        return value[0], value[1]
    return default, default


def _qianfan_ocr(cfg: ArchConfig, text_hidden: int, dt: str) -> list[Triple]:
    """Qianfan-OCR: an InternViT-style tower (class token, a position table when
    use_absolute_position_embeddings, layer scales, LayerNorms or RMS norms as norm_type says, q/k norms when
    use_qk_norm, a final LayerNorm unless use_mean_pooling), then InternVL's projector over pixel-shuffled
    patches (1 / downsample_ratio squared of them): LayerNorm, two linears."""
    v = cfg.vision or {}
    whole = cfg.resolved_vision or cfg.raw.get("vision_config") or {}  # sizes may be [height, width]
    d, mlp, depth = (
        v.get("hidden_size") or 1024,
        v.get("intermediate_size") or 4096,
        v.get("num_hidden_layers") or 0,
    )
    ph, pw = _side(whole.get("patch_size", v.get("patch_size")), 14)
    ih, iw = _side(whole.get("image_size", v.get("image_size")), 448)
    channels = v.get("num_channels") or 3
    norm = ("weight", "bias") if v.get("norm_type", "layer_norm") == "layer_norm" else ("weight",)
    e = "model.vision_tower."
    out: list[Triple] = [
        (e + "embeddings.cls_token", dt, (1, 1, d)),
        (e + "embeddings.patch_embeddings.projection.weight", dt, (d, channels, ph, pw)),
        (e + "embeddings.patch_embeddings.projection.bias", dt, (d,)),
    ]
    if v.get("use_mask_token") is True:
        out.append((e + "embeddings.mask_token", dt, (1, 1, d)))
    if v.get("use_absolute_position_embeddings", True) is not False:
        out.append((e + "embeddings.position_embeddings", dt, (1, (ih // ph) * (iw // pw) + 1, d)))
    if v.get("use_mean_pooling", True) is False:
        out += [(e + "layernorm.weight", dt, (d,)), (e + "layernorm.bias", dt, (d,))]
    for i in range(depth):
        b = f"{e}layers.{i}."
        for proj in ("q_proj", "k_proj", "v_proj"):
            out.append((b + f"attention.{proj}.weight", dt, (d, d)))
            out += [(b + f"attention.{proj}.bias", dt, (d,))] if v.get("attention_bias") is True else []
        out += [
            (b + "attention.projection_layer.weight", dt, (d, d)),
            (b + "attention.projection_layer.bias", dt, (d,)),
            (b + "mlp.fc1.weight", dt, (mlp, d)),
            (b + "mlp.fc1.bias", dt, (mlp,)),
            (b + "mlp.fc2.weight", dt, (d, mlp)),
            (b + "mlp.fc2.bias", dt, (d,)),
            (b + "lambda_1", dt, (d,)),
            (b + "lambda_2", dt, (d,)),
        ]
        if v.get("use_qk_norm") is True:
            out += [(b + "attention.q_norm.weight", dt, (d,)), (b + "attention.k_norm.weight", dt, (d,))]
        out += [(b + f"{n}.{w}", dt, (d,)) for n in ("layernorm_before", "layernorm_after") for w in norm]
    ratio = cfg.raw.get("downsample_ratio")
    shuffled = d * int(1 / ratio) ** 2 if isinstance(ratio, (int, float)) and 0 < ratio <= 1 else 4 * d
    p = "model.multi_modal_projector."
    return [
        *out,
        (p + "layer_norm.weight", dt, (shuffled,)),
        (p + "layer_norm.bias", dt, (shuffled,)),
        (p + "linear_1.weight", dt, (text_hidden, shuffled)),
        (p + "linear_1.bias", dt, (text_hidden,)),
        (p + "linear_2.weight", dt, (text_hidden, text_hidden)),
        (p + "linear_2.bias", dt, (text_hidden,)),
    ]


def _minicpm_v46(cfg: ArchConfig, text_hidden: int, dt: str) -> list[Triple]:
    """MiniCPM-V 4.6 / 4.7 / MiniCPM-OCR: a SigLIP tower with a window-attention merger inserted among its
    blocks (attention, then an MLP over window_kernel_size patches back to the tower's width), then
    merger_times MLPs over 2x2 merged patches, the last one into the text width."""
    v = cfg.vision or {}
    whole = cfg.resolved_vision or cfg.raw.get("vision_config") or {}  # window_kernel_size is a list
    d, mlp, depth = (
        v.get("hidden_size") or 768,
        v.get("intermediate_size") or 3072,
        v.get("num_hidden_layers") or 0,
    )
    patch, channels = v.get("patch_size") or 16, v.get("num_channels") or 3
    kh, kw = _side(list(whole.get("window_kernel_size") or [2, 2]), 2)
    e, w = "model.vision_tower.", "model.vision_tower.vit_merger."
    out: list[Triple] = [
        (e + "embeddings.patch_embedding.weight", dt, (d, channels, patch, patch)),
        (e + "embeddings.patch_embedding.bias", dt, (d,)),
        (e + "embeddings.position_embedding.weight", dt, (((v.get("image_size") or 224) // patch) ** 2, d)),
        (e + "post_layernorm.weight", dt, (d,)),
        (e + "post_layernorm.bias", dt, (d,)),
    ]
    for i in range(depth):
        out += vit_block(f"{e}encoder.layers.{i}.", d, mlp, dt, "out_proj", ("layer_norm1", "layer_norm2"))
    for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
        out += [(w + f"self_attn.{proj}.weight", dt, (d, d)), (w + f"self_attn.{proj}.bias", dt, (d,))]
    window, wide = d * kh * kw, mlp * kh * kw
    out += [
        (w + "layer_norm1.weight", dt, (d,)),
        (w + "layer_norm1.bias", dt, (d,)),
        (w + "pre_norm.weight", dt, (window,)),
        (w + "pre_norm.bias", dt, (window,)),
        (w + "linear_1.weight", dt, (wide, window)),
        (w + "linear_1.bias", dt, (wide,)),
        (w + "linear_2.weight", dt, (d, wide)),
        (w + "linear_2.bias", dt, (d,)),
    ]
    times = cfg.raw.get("merger_times")
    times = times if isinstance(times, int) and 0 < times <= 8 else 1
    merged = 4 * d  # the downsample MLP merges 2x2 patches whatever merge_kernel_size says
    for i in range(times):
        m, last = f"model.merger.mlp.{i}.", text_hidden if i == times - 1 else d
        out += [
            (m + "pre_norm.weight", dt, (merged,)),
            (m + "pre_norm.bias", dt, (merged,)),
            (m + "linear_1.weight", dt, (merged, merged)),
            (m + "linear_1.bias", dt, (merged,)),
            (m + "linear_2.weight", dt, (last, merged)),
            (m + "linear_2.bias", dt, (last,)),
        ]
    return out


def _cosmos3_edge(cfg: ArchConfig, text_hidden: int, dt: str) -> list[Triple]:
    """Cosmos 3 Edge: a SigLIP 2 tower (a linear patch embedding, num_patches positions), then a patch
    merger: a LayerNorm, an MLP over spatial_merge_size² patches projector_hidden_size wide."""
    v = cfg.vision or {}
    d, mlp, depth = (
        v.get("hidden_size") or 1152,
        v.get("intermediate_size") or 4304,
        v.get("num_hidden_layers") or 0,
    )
    patch, channels = v.get("patch_size") or 16, v.get("num_channels") or 3
    merged = d * (v.get("spatial_merge_size") or 2) ** 2
    mid = cfg.raw.get("projector_hidden_size") or merged
    e, p = "model.visual.", "model.projector."
    out: list[Triple] = [
        (e + "embeddings.patch_embedding.weight", dt, (d, channels * patch * patch)),
        (e + "embeddings.patch_embedding.bias", dt, (d,)),
        (e + "embeddings.position_embedding.weight", dt, (v.get("num_patches") or 256, d)),
        (e + "post_layernorm.weight", dt, (d,)),
        (e + "post_layernorm.bias", dt, (d,)),
        (p + "norm.weight", dt, (d,)),
        (p + "norm.bias", dt, (d,)),
        (p + "linear_fc1.weight", dt, (mid, merged)),
        (p + "linear_fc1.bias", dt, (mid,)),
        (p + "linear_fc2.weight", dt, (text_hidden, mid)),
        (p + "linear_fc2.bias", dt, (text_hidden,)),
    ]
    for i in range(depth):
        out += vit_block(f"{e}encoder.layers.{i}.", d, mlp, dt, "out_proj", ("layer_norm1", "layer_norm2"))
    return out


def _ovis2(cfg: ArchConfig, text_hidden: int, dt: str) -> list[Triple]:
    """Ovis 2: an AIMv2-style tower (RMS norms, SwiGLU MLPs, biases as qkv_bias and mlp_bias say), a head
    into the visual vocabulary (less its indicator tokens) over hidden_stride² patches with a LayerNorm,
    and the visual embedding table, vocab_size rows of the outer config's hidden_size."""
    v = cfg.vision or {}
    d, mlp, depth = (
        v.get("hidden_size") or 1024,
        v.get("intermediate_size") or 2816,
        v.get("num_hidden_layers") or 0,
    )
    patch, channels = v.get("patch_size") or 14, v.get("num_channels") or 3
    visual_vocab, stride = v.get("vocab_size") or 16384, v.get("hidden_stride") or 1
    words = visual_vocab - (v.get("num_visual_indicator_tokens") or 0)
    qkv_bias, mlp_bias = v.get("qkv_bias") is True, v.get("mlp_bias") is True
    e = "model.vision_tower.transformer."
    out: list[Triple] = [
        (e + "embeddings.patch_embedding.weight", dt, (d, channels, patch, patch)),
        (e + "embeddings.patch_embedding.bias", dt, (d,)),
        (e + "embeddings.position_embedding.weight", dt, (((v.get("image_size") or 224) // patch) ** 2, d)),
        (e + "embeddings.rms_norm.weight", dt, (d,)),
        (e + "rms_norm.weight", dt, (d,)),
        ("model.vision_tower.head_linear.weight", dt, (words, d * stride * stride)),
        ("model.vision_tower.head_norm.weight", dt, (words,)),
        ("model.vision_tower.head_norm.bias", dt, (words,)),
        (
            "model.visual_embeddings_table.weight",
            dt,
            (visual_vocab, cfg.raw.get("hidden_size") or text_hidden),
        ),
    ]
    for i in range(depth):
        b = f"{e}encoder.layers.{i}."
        for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
            out.append((b + f"attention.{proj}.weight", dt, (d, d)))
            out += [(b + f"attention.{proj}.bias", dt, (d,))] if qkv_bias else []
        out += _dense(b + "ffn.", d, mlp, dt, gated=True, bias=mlp_bias)
        out += [(b + "rms_norm1.weight", dt, (d,)), (b + "rms_norm2.weight", dt, (d,))]
    return out


def _ovis2_5(cfg: ArchConfig, text_hidden: int, dt: str) -> list[Triple]:
    """Ovis 2.5: a SigLIP tower with a position table over the image's patches; the projector maps
    spatial_merge_size² patches to the visual vocabulary (less its indicator tokens) with a LayerNorm, and
    that vocabulary's embeddings into the text width."""
    v = cfg.vision or {}
    d, mlp, depth = (
        v.get("hidden_size") or 1152,
        v.get("intermediate_size") or 4304,
        v.get("num_hidden_layers") or 0,
    )
    patch, channels = v.get("patch_size") or 16, v.get("num_channels") or 3
    merged = d * (v.get("spatial_merge_size") or 2) ** 2
    visual_vocab = v.get("vocab_size") or 65536
    words = visual_vocab - (v.get("num_visual_indicator_tokens") or 0)
    e, p = "model.vision_tower.", "model.multi_modal_projector."
    out: list[Triple] = [
        (e + "embeddings.patch_embedding.weight", dt, (d, channels, patch, patch)),
        (e + "embeddings.patch_embedding.bias", dt, (d,)),
        (e + "embeddings.position_embedding.weight", dt, (((v.get("image_size") or 512) // patch) ** 2, d)),
        (e + "post_layernorm.weight", dt, (d,)),
        (e + "post_layernorm.bias", dt, (d,)),
        (p + "visual_tokenizer.linear.weight", dt, (words, merged)),
        (p + "visual_tokenizer.norm.weight", dt, (words,)),
        (p + "visual_tokenizer.norm.bias", dt, (words,)),
        (p + "visual_embeddings_table.weight", dt, (text_hidden, visual_vocab)),
    ]
    for i in range(depth):
        out += vit_block(f"{e}layers.{i}.", d, mlp, dt, "out_proj", ("layer_norm1", "layer_norm2"))
    return out


def _qformer_part(cfg: ArchConfig, key: str, default: int) -> int:
    q = cfg.raw.get("qformer_config")
    value = q.get(key) if isinstance(q, dict) else None
    return value if type(value) is int and value > 0 else default


def _blip2(cfg: ArchConfig, text_hidden: int, dt: str) -> list[Triple]:
    """BLIP-2 / InstructBLIP (-Video): BLIP's ViT (a class token, a position table, a fused qkv biased as
    qkv_bias says), then the Q-Former: query tokens, BERT-like layers with cross-attention into the tower
    every cross_attention_frequency layers and a feed-forward for the queries (and one for text, with text
    embeddings, where InstructBLIP's or use_qformer_text_input has them), and a projection into the text
    width. The Q-Former's sizes are qformer_config's, its class's defaults where absent."""
    v = cfg.vision or {}
    d, mlp, depth = (
        v.get("hidden_size") or 1408,
        v.get("intermediate_size") or 6144,
        v.get("num_hidden_layers") or 0,
    )
    patch = v.get("patch_size") or 14
    e = "vision_model."
    out: list[Triple] = [
        (e + "embeddings.class_embedding", dt, (1, 1, d)),
        (e + "embeddings.patch_embedding.weight", dt, (d, 3, patch, patch)),
        (e + "embeddings.patch_embedding.bias", dt, (d,)),
        (e + "embeddings.position_embedding", dt, (1, ((v.get("image_size") or 224) // patch) ** 2 + 1, d)),
        (e + "post_layernorm.weight", dt, (d,)),
        (e + "post_layernorm.bias", dt, (d,)),
    ]
    for i in range(depth):
        b = f"{e}encoder.layers.{i}."
        out += [(b + "self_attn.qkv.weight", dt, (3 * d, d)), (b + "self_attn.projection.weight", dt, (d, d))]
        out += [(b + "self_attn.qkv.bias", dt, (3 * d,))] if v.get("qkv_bias", True) is not False else []
        out += [
            (b + "self_attn.projection.bias", dt, (d,)),
            (b + "mlp.fc1.weight", dt, (mlp, d)),
            (b + "mlp.fc1.bias", dt, (mlp,)),
            (b + "mlp.fc2.weight", dt, (d, mlp)),
            (b + "mlp.fc2.bias", dt, (d,)),
        ]
        out += [
            (b + f"{n}.{w}", dt, (d,)) for n in ("layer_norm1", "layer_norm2") for w in ("weight", "bias")
        ]
    qh, qmlp = _qformer_part(cfg, "hidden_size", 768), _qformer_part(cfg, "intermediate_size", 3072)
    encoder = _qformer_part(cfg, "encoder_hidden_size", d)
    every = _qformer_part(cfg, "cross_attention_frequency", 2)
    q = cfg.raw.get("qformer_config")
    instruct = str(cfg.raw.get("model_type")) != "blip-2"
    text_input = instruct or (isinstance(q, dict) and q.get("use_qformer_text_input") is True)
    queries = cfg.raw.get("num_query_tokens")
    out += [
        ("query_tokens", dt, (1, queries if type(queries) is int and queries > 0 else 32, qh)),
        ("language_projection.weight", dt, (text_hidden, qh)),
        ("language_projection.bias", dt, (text_hidden,)),
    ]
    out += [(f"qformer.layernorm.{w}", dt, (qh,)) for w in ("weight", "bias")] if not instruct else []
    if text_input and instruct:  # InstructBLIP's Q-Former embeds the instruction's tokens
        out += [
            ("qformer.embeddings.word_embeddings.weight", dt, (_qformer_part(cfg, "vocab_size", 30522), qh)),
            (
                "qformer.embeddings.position_embeddings.weight",
                dt,
                (_qformer_part(cfg, "max_position_embeddings", 512), qh),
            ),
            ("qformer.embeddings.layernorm.weight", dt, (qh,)),
            ("qformer.embeddings.layernorm.bias", dt, (qh,)),
        ]
    for i in range(_qformer_part(cfg, "num_hidden_layers", 12)):
        b = f"qformer.encoder.layer.{i}."
        parts = [("attention.", qh)] + ([("crossattention.", encoder)] if i % every == 0 else [])
        for part, width in parts:
            for proj, cols in (("query", qh), ("key", width), ("value", width)):
                out += [
                    (b + f"{part}attention.{proj}.weight", dt, (qh, cols)),
                    (b + f"{part}attention.{proj}.bias", dt, (qh,)),
                ]
            out += [
                (b + f"{part}output.dense.weight", dt, (qh, qh)),
                (b + f"{part}output.dense.bias", dt, (qh,)),
            ]
            out += [(b + f"{part}output.LayerNorm.{w}", dt, (qh,)) for w in ("weight", "bias")]
        for suffix in ("_query", "") if text_input else ("_query",):
            out += [
                (b + f"intermediate{suffix}.dense.weight", dt, (qmlp, qh)),
                (b + f"intermediate{suffix}.dense.bias", dt, (qmlp,)),
                (b + f"output{suffix}.dense.weight", dt, (qh, qmlp)),
                (b + f"output{suffix}.dense.bias", dt, (qh,)),
                (b + f"output{suffix}.LayerNorm.weight", dt, (qh,)),
                (b + f"output{suffix}.LayerNorm.bias", dt, (qh,)),
            ]
    return out


def _molmo2(cfg: ArchConfig, text_hidden: int, dt: str) -> list[Triple]:
    """Molmo2: a SigLIP-like ViT (a linear patch embedding, num_position_embeddings positions, grouped
    heads of head_dim, no final norm); the adapter pools the tapped layers (vision_feature_layer, concatenated)
    with one attention and maps them with a SwiGLU MLP into text_hidden_size."""
    v = cfg.vision or {}
    a = cfg.raw.get("adapter_config")
    a = a if isinstance(a, dict) else {}
    d, mlp, depth = (
        v.get("hidden_size") or 1152,
        v.get("intermediate_size") or 4304,
        v.get("num_hidden_layers") or 0,
    )
    patch, channels = v.get("patch_size") or 14, v.get("num_channels") or 3
    out: list[Triple] = []

    def attention(b: str, width: int, c: dict, out_width: int) -> list[Triple]:
        heads, hd = c.get("num_attention_heads") or 16, c.get("head_dim") or 72
        kv = c.get("num_key_value_heads") or heads
        shapes = (("q_proj", heads * hd, width), ("k_proj", kv * hd, width), ("v_proj", kv * hd, width))
        rows: list[Triple] = [
            (b + f"{p}.weight", dt, (r, cols)) for p, r, cols in (*shapes, ("o_proj", out_width, heads * hd))
        ]
        if c.get("attention_bias", True) is not False:
            rows += [(b + f"{p}.bias", dt, (r,)) for p, r, _ in (*shapes, ("o_proj", out_width, 0))]
        return rows

    e = "model.vision_tower."
    out += [
        (e + "positional_embedding", dt, (v.get("num_position_embeddings") or 729, d)),
        (e + "patch_embedding.weight", dt, (d, channels * patch * patch)),
        (e + "patch_embedding.bias", dt, (d,)),
    ]
    for i in range(depth):
        b = f"{e}layers.{i}."
        out += attention(b + "self_attn.", d, v, d)
        out += [
            (b + "mlp.fc1.weight", dt, (mlp, d)),
            (b + "mlp.fc1.bias", dt, (mlp,)),
            (b + "mlp.fc2.weight", dt, (d, mlp)),
            (b + "mlp.fc2.bias", dt, (d,)),
        ]
        out += [
            (b + f"{n}.{w}", dt, (d,)) for n in ("layer_norm1", "layer_norm2") for w in ("weight", "bias")
        ]
    taps = a.get("vision_feature_layer")
    ad = a.get("hidden_size") or d
    tapped = d * (len(taps) if isinstance(taps, list) and taps else 2)
    p = "model.multi_modal_projector."
    out += attention(p + "image_pooling_2d.", tapped, a, ad)
    inner, th = a.get("intermediate_size") or 18944, a.get("text_hidden_size") or text_hidden
    for name in ("gate_proj", "up_proj"):
        out.append((p + f"image_projector.{name}.weight", dt, (inner, ad)))
        out += [(p + f"image_projector.{name}.bias", dt, (inner,))] if a.get("mlp_bias") is True else []
    out.append(
        (p + "image_projector.down_proj.weight", dt, (th, inner))
    )  # never biased, into text_hidden_size
    return out


# UnlimitedOcrSamVisionConfig's and UnlimitedOcrVisionEncoderConfig's defaults
_UNLIMITED_OCR_SAM = {
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
_UNLIMITED_OCR_CLIP = {
    "hidden_size": 1024,
    "intermediate_size": 4096,
    "num_hidden_layers": 24,
    "image_size": 224,
    "patch_size": 14,
}


def _unlimited_ocr_part(cfg: ArchConfig, key: str, defaults: dict[str, Any]) -> dict[str, Any]:
    vision = cfg.raw.get("vision_config")
    given = vision.get(key) if isinstance(vision, dict) else None
    given = given if isinstance(given, dict) else {}
    return {**defaults, **{k: v for k, v in given.items() if v is not None}}


def unlimited_ocr_vision(cfg: ArchConfig, text_hidden: int, dt: str) -> list[Triple]:
    """Unlimited-OCR's towers (transformers/models/unlimited_ocr): SAM's ViT-B with its neck and two strided
    convolutions, then a CLIP-L encoder that takes SAM's features as its patches (no patch embedding of its
    own), one linear from both towers' features into the text width, and the learned image-newline and
    view-separator rows. Its sub-configs (sam_config, encoder_config) are not resolved through transformers,
    so a size a config leaves out takes its configuration class's default here."""
    sam, clip = (
        _unlimited_ocr_part(cfg, "sam_config", _UNLIMITED_OCR_SAM),
        _unlimited_ocr_part(cfg, "encoder_config", _UNLIMITED_OCR_CLIP),
    )
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
        out += vit_block(f"{c}encoder.layers.{i}.", d, mlp, dt, "out_proj", ("layer_norm1", "layer_norm2"))
    return [
        *out,
        ("model.multi_modal_projector.weight", dt, (text_hidden, channels[-1] + d)),
        ("model.multi_modal_projector.bias", dt, (text_hidden,)),
        ("model.view_separator", dt, (text_hidden,)),
        ("model.image_newline", dt, (text_hidden,)),
    ]


def _deepseek_ocr2(cfg: ArchConfig, text_hidden: int, dt: str) -> list[Triple]:
    """DeepSeek-OCR-2, in its checkpoints' names: SAM's ViT (windowed attention with relative positions,
    global in global_attn_indexes), its neck and two strided convolutions to downsample_channels, then a
    Qwen2 decoder stack without embeddings (encoder_config) read over the patches and 144 or 256 learned
    queries, a biased projector into the text width and the separator between views. Defaults are the
    configuration classes'."""
    v = cfg.raw.get("vision_config")
    v = v if isinstance(v, dict) else {}
    s, q = v.get("sam_config"), v.get("encoder_config")
    s, q = (s if isinstance(s, dict) else {}), (q if isinstance(q, dict) else {})
    # SamVisionConfig's defaults where the config leaves a size out
    sam = {**s, "num_hidden_layers": s.get("num_hidden_layers") or 12}
    sam["global_attn_indexes"] = s.get("global_attn_indexes", (2, 5, 8, 11)) or ()
    out_c, down = s.get("output_channels") or 256, s.get("downsample_channels") or [512, 896]
    e = "model.sam_model."
    out = _sam_tower(sam, e, dt, original_names=True)
    out += [
        (e + "net_2.weight", dt, (down[0], out_c, 3, 3)),
        (e + "net_3.weight", dt, (down[1], down[0], 3, 3)),
    ]
    w, layers = q.get("hidden_size") or 4096, q.get("num_hidden_layers") or 32
    qh = q.get("num_attention_heads") or 32
    kv, hd = q.get("num_key_value_heads") or qh, w // qh
    qmlp = q.get("intermediate_size") or 22016
    e = "model.qwen2_model."
    for i in range(layers):
        b = f"{e}model.model.layers.{i}."
        for proj, width in (("q_proj", qh * hd), ("k_proj", kv * hd), ("v_proj", kv * hd)):
            out += [
                (b + f"self_attn.{proj}.weight", dt, (width, w)),
                (b + f"self_attn.{proj}.bias", dt, (width,)),
            ]
        out += [(b + "self_attn.o_proj.weight", dt, (w, qh * hd))]
        out += _dense(b + "mlp.", w, qmlp, dt, gated=True)
        out += [(b + f"{n}.weight", dt, (w,)) for n in ("input_layernorm", "post_attention_layernorm")]
    out += [(e + "model.model.norm.weight", dt, (w,))]
    out += [(e + "query_768.weight", dt, (144, w)), (e + "query_1024.weight", dt, (256, w))]
    out += [
        ("model.projector.layers.weight", dt, (text_hidden, w)),
        ("model.projector.layers.bias", dt, (text_hidden,)),
    ]
    return [*out, ("model.view_seperator", dt, (text_hidden,))]


def _vq_mid(b: str, c: int, dt: str) -> list[Triple]:
    return (
        resnet_block(b + "block_1.", c, c, dt)
        + attention_block(b + "attn_1.", c, dt)
        + resnet_block(b + "block_2.", c, c, dt)
    )


def _janus_vqgan(q: dict, e: str, dt: str) -> list[Triple]:
    """Janus's VQ-GAN (vq_config): an encoder of num_res_blocks ResNet blocks per channel_multiplier level
    (attention after each on the last level, a strided convolution between levels), a middle block, the
    quantizer's codebook and its 1x1 convolutions, and a decoder mirroring it with one more block a level."""
    base, mults = q.get("base_channels") or 128, list(q.get("channel_multiplier") or (1, 1, 2, 2, 4))
    blocks, latent = q.get("num_res_blocks") or 2, q.get("latent_channels") or 256
    embed, codes = q.get("embed_dim") or 8, q.get("num_embeddings") or 16384
    n, c_in = len(mults), q.get("in_channels") or 3
    out: list[Triple] = [
        (e + "encoder.conv_in.weight", dt, (base, c_in, 3, 3)),
        (e + "encoder.conv_in.bias", dt, (base,)),
    ]
    width = base
    for level, mult in enumerate(mults):
        for i in range(blocks):
            out += resnet_block(f"{e}encoder.down.{level}.block.{i}.", width, base * mult, dt)
            width = base * mult
            if level == n - 1:
                out += attention_block(f"{e}encoder.down.{level}.attn.{i}.", width, dt)
        if level != n - 1:
            b = f"{e}encoder.down.{level}.downsample.conv."
            out += [(b + "weight", dt, (width, width, 3, 3)), (b + "bias", dt, (width,))]
    out += _vq_mid(e + "encoder.mid.", width, dt)
    out += [(e + f"encoder.norm_out.{w}", dt, (width,)) for w in ("weight", "bias")]
    doubled = 2 * latent if q.get("double_latent") is True else latent
    out += [
        (e + "encoder.conv_out.weight", dt, (doubled, width, 3, 3)),
        (e + "encoder.conv_out.bias", dt, (doubled,)),
    ]
    out += [(e + "quantize.embedding.weight", dt, (codes, embed))]
    out += [(e + "quant_conv.weight", dt, (embed, latent, 1, 1)), (e + "quant_conv.bias", dt, (embed,))]
    out += [
        (e + "post_quant_conv.weight", dt, (latent, embed, 1, 1)),
        (e + "post_quant_conv.bias", dt, (latent,)),
    ]
    width = base * mults[-1]
    out += [
        (e + "decoder.conv_in.weight", dt, (width, latent, 3, 3)),
        (e + "decoder.conv_in.bias", dt, (width,)),
    ]
    out += _vq_mid(e + "decoder.mid.", width, dt)
    for j, level in enumerate(reversed(range(n))):
        for i in range(blocks + 1):
            out += resnet_block(f"{e}decoder.up.{j}.block.{i}.", width, base * mults[level], dt)
            width = base * mults[level]
            if level == n - 1:
                out += attention_block(f"{e}decoder.up.{j}.attn.{i}.", width, dt)
        if level != 0:
            b = f"{e}decoder.up.{j}.upsample.conv."
            out += [(b + "weight", dt, (width, width, 3, 3)), (b + "bias", dt, (width,))]
    out += [(e + f"decoder.norm_out.{w}", dt, (width,)) for w in ("weight", "bias")]
    out_c = q.get("out_channels") or 3
    out += [(e + "decoder.conv_out.weight", dt, (out_c, width, 3, 3))]
    return [*out, (e + "decoder.conv_out.bias", dt, (out_c,))]


def _janus(cfg: ArchConfig, text_hidden: int, dt: str) -> list[Triple]:
    """Janus: a SigLIP-like tower (biased patch convolution, a position per patch, q/k/v biased as
    attention_bias says with LayerNorm q/k norms when use_qk_norm, a biased projection_layer, an MLP
    mlp_ratio wide), an aligner MLP of depth linears into projection_dim; for generation a VQ-GAN, a
    codebook-sized embedding, an aligner of num_hidden_layers linears and a head over the codebook.
    Defaults are the configuration classes'."""
    v, q = cfg.raw.get("vision_config"), cfg.raw.get("vq_config")
    v, q = (v if isinstance(v, dict) else {}), (q if isinstance(q, dict) else {})
    d, depth = v.get("hidden_size") or 1024, v.get("num_hidden_layers") or 24
    mlp = int(d * (v.get("mlp_ratio") or 4.0))
    patch, channels, image = v.get("patch_size") or 16, v.get("num_channels") or 3, v.get("image_size") or 384
    biased = v.get("attention_bias", True) is not False
    e = "model.vision_model."
    out: list[Triple] = [
        (e + "embeddings.patch_embedding.weight", dt, (d, channels, patch, patch)),
        (e + "embeddings.patch_embedding.bias", dt, (d,)),
        (e + "embeddings.position_embedding.weight", dt, ((image // patch) ** 2, d)),
        (e + "post_layernorm.weight", dt, (d,)),
        (e + "post_layernorm.bias", dt, (d,)),
    ]
    for i in range(depth):
        b = f"{e}encoder.layers.{i}."
        for proj in ("q_proj", "k_proj", "v_proj"):
            out += [(b + f"self_attn.{proj}.weight", dt, (d, d))]
            out += [(b + f"self_attn.{proj}.bias", dt, (d,))] if biased else []
        out += [
            (b + "self_attn.projection_layer.weight", dt, (d, d)),
            (b + "self_attn.projection_layer.bias", dt, (d,)),
        ]
        if v.get("use_qk_norm") is True:
            out += [
                (b + f"self_attn.{n}.{w}", dt, (d,)) for n in ("q_norm", "k_norm") for w in ("weight", "bias")
            ]
        out += [(b + "mlp.fc1.weight", dt, (mlp, d)), (b + "mlp.fc1.bias", dt, (mlp,))]
        out += [(b + "mlp.fc2.weight", dt, (d, mlp)), (b + "mlp.fc2.bias", dt, (d,))]
        out += [
            (b + f"{n}.{w}", dt, (d,)) for n in ("layer_norm1", "layer_norm2") for w in ("weight", "bias")
        ]
    aligned = v.get("projection_dim") or 2048
    out += [("model.aligner.fc1.weight", dt, (aligned, d)), ("model.aligner.fc1.bias", dt, (aligned,))]
    for i in range((v.get("depth") or 2) - 1):
        out += [(f"model.aligner.hidden_layers.{i}.weight", dt, (aligned, aligned))]
        out += [(f"model.aligner.hidden_layers.{i}.bias", dt, (aligned,))]
    out += _janus_vqgan(q, "model.vqmodel.", dt)
    embed, codes = q.get("embed_dim") or 8, q.get("num_embeddings") or 16384
    gproj, gin = q.get("projection_dim") or 2048, q.get("image_token_embed_dim") or 2048
    out += [("model.generation_embeddings.weight", dt, (codes, embed))]
    g = "model.generation_aligner."
    out += [(g + "fc1.weight", dt, (gproj, embed)), (g + "fc1.bias", dt, (gproj,))]
    for i in range((q.get("num_hidden_layers") or 2) - 1):
        out += [
            (g + f"hidden_layers.{i}.weight", dt, (gproj, gproj)),
            (g + f"hidden_layers.{i}.bias", dt, (gproj,)),
        ]
    h = "model.generation_head."
    out += [(h + "proj_out.weight", dt, (gproj, gin)), (h + "proj_out.bias", dt, (gproj,))]
    out += [(h + "vision_head.weight", dt, (codes, gproj))]
    return [*out, (h + "vision_head.bias", dt, (codes,))]


def _lin(name: str, out: int, into: int, dt: str) -> list[Triple]:
    return [(name + ".weight", dt, (out, into)), (name + ".bias", dt, (out,))]


def _phi4_audio(a: dict, e: str, dt: str) -> list[Triple]:
    """Phi-4-multimodal's conformer (audio_config): global mean / inverse-std buffers, NeMo's subsampling
    (a strided convolution, then a depthwise and a pointwise one per further halving of time_reduction,
    and a linear from the flattened channels), a relative attention bias table, and num_blocks layers of
    two half-step feed-forwards, biased attention and a GLU / depthwise-separable convolution module."""
    h, inter, heads = (
        a.get("hidden_size") or 1024,
        a.get("intermediate_size") or 1536,
        a.get("num_attention_heads") or 16,
    )
    c, feats, reduction = (
        a.get("nemo_conv_channels") or 1024,
        a.get("input_size") or 80,
        a.get("time_reduction") or 8,
    )
    ext, sep = a.get("ext_pw_out_channel") or 1024, a.get("depthwise_separable_out_channel") or 1024
    mult, kernel = a.get("depthwise_multiplier") or 1, a.get("kernel_size") or 3
    halvings, final = max(reduction.bit_length() - 1, 1), feats
    for _ in range(halvings):
        final = (final - 1) // 2 + 1
    out: list[Triple] = [(e + f"encoder_embedding.global_{b}", dt, (feats,)) for b in ("mean", "invstd")]
    out += [(e + "embed.conv.0.weight", dt, (c, 1, 3, 3)), (e + "embed.conv.0.bias", dt, (c,))]
    for k in range(1, halvings):
        out += [
            (e + f"embed.conv.{3 * k - 1}.weight", dt, (c, 1, 3, 3)),
            (e + f"embed.conv.{3 * k - 1}.bias", dt, (c,)),
        ]
        out += [
            (e + f"embed.conv.{3 * k}.weight", dt, (c, c, 1, 1)),
            (e + f"embed.conv.{3 * k}.bias", dt, (c,)),
        ]
    out += _lin(e + "embed.out", h, c * final, dt)
    buckets = (a.get("bias_max_distance") or 1000) * (1 if a.get("bias_symmetric") is True else 2)
    out += [(e + "relative_attention_bias_layer.bias_values.weight", dt, (buckets, heads))]
    hd = heads * (h // heads)
    for i in range(a.get("num_blocks") or 24):
        b = f"{e}encoders.{i}."
        for proj in ("q_proj", "k_proj", "v_proj"):
            out += _lin(b + "self_attn." + proj, hd, h, dt)
        out += _lin(b + "self_attn.o_proj", h, hd, dt)
        for ff in ("feed_forward_in.", "feed_forward_out."):
            out += _lin(b + ff + "gate_up_proj", 2 * inter, h, dt) + _lin(b + ff + "down_proj", h, inter, dt)
            out += [(b + ff + f"layer_norm.{w}", dt, (h,)) for w in ("weight", "bias")]
        m = b + "conv."
        out += [(m + f"layer_norm.{w}", dt, (h,)) for w in ("weight", "bias")]
        out += [
            (m + "glu.ext_pw_conv_1d.weight", dt, (2 * ext, h, 1)),
            (m + "glu.ext_pw_conv_1d.bias", dt, (2 * ext,)),
        ]
        out += [(m + "glu.b1", dt, (1, ext, 1)), (m + "glu.b2", dt, (1, ext, 1))]
        out += [(m + "dw_sep_conv_1d.dw_conv.weight", dt, (h * mult, 1, kernel))]
        out += [(m + "dw_sep_conv_1d.dw_conv.bias", dt, (h * mult,))]
        out += [
            (m + "dw_sep_conv_1d.pw_conv.weight", dt, (sep, h * mult, 1)),
            (m + "dw_sep_conv_1d.pw_conv.bias", dt, (sep,)),
        ]
        out += [(m + "ext_pw_conv_1d.weight", dt, (ext, h, 1)), (m + "ext_pw_conv_1d.bias", dt, (ext,))]
        out += [
            (b + f"{n}.{w}", dt, (h,)) for n in ("layer_norm_att", "layer_norm") for w in ("weight", "bias")
        ]
    return out


def _phi4_multimodal(cfg: ArchConfig, text_hidden: int, dt: str) -> list[Triple]:
    """Phi-4-multimodal's embeddings of other modalities (embed_tokens_extend): a SigLIP tower with its
    attention-pooling head, the learned global / sub-image separators and two biased projections into the
    text width; the conformer audio encoder and two pairs of biased projections (speech alone, speech
    beside vision) from its width times downsample_rate. Defaults are the configuration classes'."""
    v, a = cfg.raw.get("vision_config"), cfg.raw.get("audio_config")
    v, a = (v if isinstance(v, dict) else {}), (a if isinstance(a, dict) else {})
    defaults = {"hidden_size": 1152, "intermediate_size": 4304, "num_hidden_layers": 27}
    tower_cfg = {**defaults, "image_size": 448, "patch_size": 14, **v, "vision_use_head": True}
    if not all(type(tower_cfg[k]) is int for k in defaults):
        tower_cfg.update(defaults)
    e = "model.embed_tokens_extend.image_embed."
    d = tower_cfg["hidden_size"]
    out = _siglip(tower_cfg, e + "img_processor.")
    out += [
        (e + "global_img_feature_extensor", dt, (1, 1, d)),
        (e + "sub_img_feature_extensor", dt, (1, 1, 1, d)),
    ]
    out += _lin(e + "img_projection_up", text_hidden, d, dt) + _lin(
        e + "img_projection_down", text_hidden, text_hidden, dt
    )
    e = "model.embed_tokens_extend.audio_embed."
    out += _phi4_audio(a, e + "encoder.", dt)
    width = (a.get("hidden_size") or 1024) * (a.get("downsample_rate") or 1)
    for mode in ("speech", "vision_speech"):
        out += _lin(e + f"up_proj_for_{mode}", text_hidden, width, dt)
        out += _lin(e + f"down_proj_for_{mode}", text_hidden, text_hidden, dt)
    return out


def _emu3_vq(cfg: ArchConfig, text_hidden: int, dt: str) -> list[Triple]:
    """Emu3's VQ-VAE (modeling_emu3.py), the image tokenizer its checkpoints carry: an encoder (a
    convolution in, num_res_blocks ResNet blocks a level of channel_multiplier, attention with its
    GroupNorm on the levels in attn_resolutions, downsampling convolutions, a middle block, a norm and a
    convolution out to latent_channels, log2(temporal_downsample_factor) temporal 3-D convolutions and
    num_res_blocks temporal ResNet blocks with BatchNorms and their running statistics), the codebook,
    the 3-D quant convolutions, and a decoder mirroring it whose norms are spatial (a GroupNorm and two
    1x1 convolutions from the quantized embed_dim). Sizes not in vq_config are its class's defaults."""
    q = cfg.raw.get("vq_config")
    q = q if isinstance(q, dict) else {}

    def size(key: str, default: int) -> int:
        value = q.get(key)
        return value if type(value) is int and 0 < value <= 1 << 20 else default

    mults = q.get("channel_multiplier")
    mults = [m for m in mults if type(m) is int] if isinstance(mults, (list, tuple)) else [1, 2, 2, 4]
    attn_levels = q.get("attn_resolutions")
    attn_levels = set(attn_levels) if isinstance(attn_levels, (list, tuple)) else {3}
    base, blocks, d = size("base_channels", 256), size("num_res_blocks", 2), size("hidden_size", 1024)
    latent, embed = size("latent_channels", 4), size("embed_dim", 4)
    latent_out = 2 * latent if q.get("double_latent") is True else latent
    temporal = int(math.log2(size("temporal_downsample_factor", 4)))
    e = "vqmodel."

    def conv(name: str, cout: int, cin: int, *kernel: int) -> list[Triple]:
        return [(name + ".weight", dt, (cout, cin, *kernel)), (name + ".bias", dt, (cout,))]

    def norm(name: str, c: int, quant: bool) -> list[Triple]:
        out: list[Triple] = [(name + ".weight", dt, (c,)), (name + ".bias", dt, (c,))]
        if not quant:
            return out
        out = [(name + ".norm_layer.weight", dt, (c,)), (name + ".norm_layer.bias", dt, (c,))]
        return out + conv(name + ".conv_y", c, embed, 1, 1) + conv(name + ".conv_b", c, embed, 1, 1)

    def resnet(name: str, cin: int, cout: int, quant: bool) -> list[Triple]:
        out = norm(name + ".norm1", cin, quant) + norm(name + ".norm2", cout, quant)
        out += conv(name + ".conv1", cout, cin, 3, 3) + conv(name + ".conv2", cout, cout, 3, 3)
        return out + (conv(name + ".nin_shortcut", cout, cin, 1, 1) if cin != cout else [])

    def attention(name: str) -> list[Triple]:
        return [t for p in ("q_proj", "k_proj", "v_proj", "out_proj") for t in conv(f"{name}.{p}", d, d)]

    def middle(name: str, c: int, quant: bool) -> list[Triple]:
        out = resnet(name + ".block_1", c, c, quant) + attention(name + ".attn_1")
        return out + norm(name + ".attn_norm", c, quant) + resnet(name + ".block_2", c, c, quant)

    def temporal_resnet(name: str, c: int) -> list[Triple]:
        out: list[Triple] = []
        for n in ("norm1", "norm2"):
            out += [(f"{name}.{n}.{p}", dt, (c,)) for p in ("weight", "bias", "running_mean", "running_var")]
            out.append((f"{name}.{n}.num_batches_tracked", dt, ()))
        return out + conv(name + ".conv1.conv", c, c, 3, 3, 3) + conv(name + ".conv2.conv", c, c, 3, 3, 3)

    top = base * (mults[-1] if mults else 1)
    x = e + "encoder."
    out = conv(x + "conv_in", base, size("in_channels", 3), 3, 3)
    for level, mult in enumerate(mults):
        c_in, c_out = base * ([1, *mults][level]), base * mult
        for i in range(blocks):
            out += resnet(f"{x}down_block.down.{level}.block.{i}", c_in if i == 0 else c_out, c_out, False)
            if level in attn_levels:
                out += attention(f"{x}down_block.down.{level}.attn.{i}")
                out += norm(f"{x}down_block.down.{level}.attn_norms.{i}", c_out, False)
        if level != len(mults) - 1:
            out += conv(f"{x}down_block.down.{level}.downsample.conv", c_out, c_out, 3, 3)
    out += middle(x + "middle_block", top, False) + norm(x + "norm_out", top, False)
    out += conv(x + "conv_out", latent_out, top, 3, 3)
    out += [
        t
        for i in range(temporal)
        for t in conv(f"{x}time_conv.{i}.conv.conv", latent_out, latent_out, 4, 3, 3)
    ]
    out += [t for i in range(blocks) for t in temporal_resnet(f"{x}time_res_stack.{i}", latent_out)]
    out += [(e + "quantize.embedding.weight", dt, (size("codebook_size", 32768), embed))]
    out += conv(e + "quant_conv.conv", embed, latent, 3, 1, 1) + conv(
        e + "post_quant_conv.conv", latent, embed, 3, 1, 1
    )
    y = e + "decoder."
    out += [t for i in range(blocks) for t in temporal_resnet(f"{y}time_res_stack.{i}", latent)]
    out += [t for i in range(temporal) for t in conv(f"{y}time_conv.{i}.conv.conv", latent, latent, 3, 3, 3)]
    out += conv(y + "conv_in", top, latent, 3, 3) + middle(y + "middle_block", top, True)
    c_in = top
    for level in reversed(range(len(mults))):
        c_out = base * mults[level]
        for i in range(blocks + 1):
            out += resnet(f"{y}up_block.up.{level}.block.{i}", c_in, c_out, True)
            c_in = c_out
            if level in attn_levels:
                out += attention(f"{y}up_block.up.{level}.attn.{i}")
                out += norm(f"{y}up_block.up.{level}.attn_norms.{i}", c_out, True)
        if level != 0:
            out += conv(f"{y}up_block.up.{level}.upsample.conv", c_out, c_out, 3, 3)
    bottom = base * (mults[0] if mults else 1)
    out += norm(y + "norm_out", bottom, True)
    return out + conv(y + "conv_out", size("out_channels", 3), bottom, 3, 3)


def _apertus1p5(cfg: ArchConfig, text_hidden: int, dt: str) -> list[Triple]:
    """Apertus 1.5's vision tokenizer (modeling_apertus1p5.py): a VQGAN encoder (a convolution in, stages
    of channel_multiplier with num_res_blocks ResNet blocks each, attention blocks of 1x1 convolutions
    where the stage's resolution is in attn_resolutions, downsampling convolutions but after the last, a
    middle block, a norm and a convolution out to latent_channels), a 1x1 quant convolution to embed_dim
    and an unbiased codebook scoring of codebook_size. Its codes are text tokens: no projector."""
    v = cfg.vision or {}

    def size(key: str, default: int) -> int:
        value = v.get(key)
        return value if type(value) is int and 0 < value <= 1 << 20 else default

    mults = v.get("channel_multiplier")
    mults = [m for m in mults if type(m) is int] if isinstance(mults, (list, tuple)) else [1, 1, 2, 2, 4]
    attn_at = v.get("attn_resolutions")
    attn_at = set(attn_at) if isinstance(attn_at, (list, tuple)) else {16}
    base, blocks, resolution = size("base_channels", 256), size("num_res_blocks", 4), size("resolution", 256)
    latent, embed = size("latent_channels", 256), size("embed_dim", 256)
    e = "model.vision_tokenizer."

    def conv(name: str, cout: int, cin: int, k: int) -> list[Triple]:
        return [(name + ".weight", dt, (cout, cin, k, k)), (name + ".bias", dt, (cout,))]

    def norm(name: str, c: int) -> list[Triple]:
        return [(name + ".weight", dt, (c,)), (name + ".bias", dt, (c,))]

    def resnet(name: str, cin: int, cout: int) -> list[Triple]:
        out = norm(name + ".norm1", cin) + conv(name + ".conv1", cout, cin, 3)
        out += norm(name + ".norm2", cout) + conv(name + ".conv2", cout, cout, 3)
        return out + (conv(name + ".nin_shortcut", cout, cin, 1) if cin != cout else [])

    def attention(name: str, c: int) -> list[Triple]:
        return norm(name + ".norm", c) + [
            t for p in ("q", "k", "v", "proj_out") for t in conv(f"{name}.{p}", c, c, 1)
        ]

    x = e + "encoder."
    out = conv(x + "conv_in", base, size("in_channels", 3), 3)
    for stage, mult in enumerate(mults):
        c_in, c_out = base * (1 if stage == 0 else mults[stage - 1]), base * mult
        for i in range(blocks):
            out += resnet(f"{x}stages.{stage}.layers.{i}.resnet", c_in if i == 0 else c_out, c_out)
            if resolution // 2**stage in attn_at:
                out += attention(f"{x}stages.{stage}.layers.{i}.attention", c_out)
        if stage < len(mults) - 1:
            out += conv(f"{x}stages.{stage}.downsample.conv", c_out, c_out, 3)
    top = base * (mults[-1] if mults else 1)
    out += (
        resnet(x + "mid.block_1", top, top)
        + attention(x + "mid.attn_1", top)
        + resnet(x + "mid.block_2", top, top)
    )
    out += norm(x + "norm_out", top) + conv(x + "conv_out", latent, top, 3)
    out += [(e + "quantize.embedding.weight", dt, (size("codebook_size", 131072), embed))]
    return out + conv(e + "quant_conv", embed, latent, 1)


_OWN_TOWERS: dict[str, Callable[[ArchConfig, int, str], list[Triple]]] = {
    "fuyu": _fuyu,
    "hunyuan_vl": _hunyuan_vl,
    "hy_v4_vl": _hy_v4_vl,
    "step3p7": _step3p7,
    "exaone4_5": _exaone4_5,
    "video_llama_3": _video_llama_3,
    "qianfan_ocr": _qianfan_ocr,
    "minicpmv4_6": _minicpm_v46,
    "minicpmv4_7": _minicpm_v46,
    "minicpm_ocr": _minicpm_v46,
    "cosmos3_edge": _cosmos3_edge,
    "ovis2": _ovis2,
    "ovis2_5": _ovis2_5,
    "molmo2": _molmo2,
    "blip-2": _blip2,
    "instructblip": _blip2,
    "instructblipvideo": _blip2,
    "ernie4_5_vl_moe": _ernie4_5_vl,
    "minimax_m3_vl": _minimax_m3_vl,
    "inkling2": inkling2_vision,
    "inkling2_loop": inkling2_vision,
    "inkling_mm_model": inkling_vision,
    "unlimited_ocr": unlimited_ocr_vision,
    "deepseek_ocr2": _deepseek_ocr2,
    "janus": _janus,
    "phi4_multimodal": _phi4_multimodal,
    "emu3": _emu3_vq,
    "apertus1p5": _apertus1p5,
    "vision-encoder-decoder": vision_encoder_decoder,  # its encoder, where modelled (estimate_encdec)
    "evolla": evolla_protein,  # its protein encoder, resampler and aligners (estimate_evolla)
    "EvollaModel": evolla_protein,  # the model_type Evolla's released config names (transformers maps it)
}


# further sub-configs an own tower models (not "a further model that is not counted")
OWN_PARTS: dict[str, frozenset[str]] = {
    "blip-2": frozenset({"qformer_config"}),
    "instructblip": frozenset({"qformer_config"}),
    "instructblipvideo": frozenset({"qformer_config"}),
    "deepseek_vl_hybrid": frozenset({"high_res_vision_config"}),
    "molmo2": frozenset({"adapter_config"}),
    "janus": frozenset({"vq_config"}),
    "phi4_multimodal": frozenset({"audio_config"}),
    "emu3": frozenset({"vq_config"}),
    "vision-encoder-decoder": frozenset({"encoder"}),  # or marked not modelled (estimate_encdec)
    "evolla": frozenset({"protein_encoder_config"}),
    "EvollaModel": frozenset({"protein_encoder_config"}),
}
