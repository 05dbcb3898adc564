"""The tensors of a vision tower and its projector a config implies (CLIP-like, Mllama's, and others)."""

from __future__ import annotations

from .config import ArchConfig
from .estimate_facts import Triple
from .estimate_mlp import _dense
from .estimate_towers import tower, tower_kind


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


def _vit_block(b: str, d: int, mlp: int, dt: str, o_proj: str, norms: tuple[str, str]) -> list[Triple]:
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


def _vision(cfg: ArchConfig, text_hidden: int) -> list[Triple]:
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
            out += _vit_block(
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
        return out
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
            out += _vit_block(
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
        return out
    return []
