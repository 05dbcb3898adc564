"""Config-only estimates: the tensors a config implies, in canonical names.

When there are no headers (a config published before the weights, or ``--config-only``), hubdiff writes
out the tensors each layer would have and runs the same counting as on real headers. Experts are
written fused (one ``[E, ...]`` tensor per projection) so a 900-expert model stays small. Assumptions:
no biases unless the config asks for them; MTP layers store their own copy of the embedding and the
output head (as DeepSeek-V3's checkpoint does); vision towers follow the Qwen-VL (``depth``), MoonViT
(``vt_*``) or CLIP/SigLIP (``num_hidden_layers`` + ``image_size``) layouts; projectors are estimated
for the first two only.
"""

from __future__ import annotations

from .config import ArchConfig
from .layers import LayerInfo

Triple = tuple[str, str, tuple[int, ...]]

ASSUMPTIONS = (
    "no bias tensors unless the config sets attention_bias / qkv_bias / linear_bias",
    "MTP layers store their own embedding and output-head copies",
    "experts written fused; parameters per expert = 3 x hidden x moe_intermediate_size",
)


def synthesize(cfg: ArchConfig, layers: list[LayerInfo]) -> list[Triple]:
    dt = "BF16"
    h = cfg.hidden_size or 0
    vocab = cfg.vocab_size or 0
    out: list[Triple] = [("model.embed_tokens.weight", dt, (vocab, h)), ("model.norm.weight", dt, (h,))]
    if not cfg.tied_embeddings:
        out.append(("lm_head.weight", dt, (vocab, h)))
    for layer in layers:
        p = f"model.layers.{layer.index}."
        out += [(p + "input_layernorm.weight", dt, (h,)), (p + "post_attention_layernorm.weight", dt, (h,))]
        out += _attention(cfg, layer, p, h, dt)
        out += _mlp(cfg, layer, p, h, dt)
        if layer.mtp:
            out += [
                (p + "enorm.weight", dt, (h,)),
                (p + "hnorm.weight", dt, (h,)),
                (p + "eh_proj.weight", dt, (h, 2 * h)),
                (p + "shared_head.norm.weight", dt, (h,)),
                (p + "embed_tokens.weight", dt, (vocab, h)),
                (p + "shared_head.head.weight", dt, (vocab, h)),
            ]
    hc = cfg.number("hc_mult")
    if hc:
        mix, width = (2 + hc) * hc, hc * h
        for layer in layers:
            if layer.mtp:
                continue
            p = f"model.layers.{layer.index}."
            for part in ("attn", "ffn"):
                out += [
                    (f"{p}hc_{part}_fn", "F32", (mix, width)),
                    (f"{p}hc_{part}_base", "F32", (mix,)),
                    (f"{p}hc_{part}_scale", "F32", (3,)),
                ]
        out += [
            ("model.hc_head_fn", "F32", (hc, width)),
            ("model.hc_head_base", "F32", (hc,)),
            ("model.hc_head_scale", "F32", (1,)),
        ]
    out += _vision(cfg, h)
    return out


def _attention(cfg: ArchConfig, layer: LayerInfo, p: str, h: int, dt: str) -> list[Triple]:
    a = p + "self_attn."
    heads = cfg.num_heads or 0
    kind = layer.attention
    if kind in ("mla", "dsa"):
        nope = cfg.number("qk_nope_head_dim", default=0) or 0
        rope = cfg.number("qk_rope_head_dim", default=0) or 0
        v = cfg.number("v_head_dim", default=nope) or 0
        kv_lora = cfg.number("kv_lora_rank", default=0) or 0
        q_lora = cfg.number("q_lora_rank")
        out: list[Triple] = []
        if q_lora:
            out += [
                (a + "q_a_proj.weight", dt, (q_lora, h)),
                (a + "q_a_layernorm.weight", dt, (q_lora,)),
                (a + "q_b_proj.weight", dt, (heads * (nope + rope), q_lora)),
            ]
        else:
            out.append((a + "q_proj.weight", dt, (heads * (nope + rope), h)))
        out += [
            (a + "kv_a_proj_with_mqa.weight", dt, (kv_lora + rope, h)),
            (a + "kv_a_layernorm.weight", dt, (kv_lora,)),
            (a + "kv_b_proj.weight", dt, (heads * (nope + v), kv_lora)),
            (a + "o_proj.weight", dt, (h, heads * v)),
        ]
        if kind == "dsa" and layer.indexer == "own":
            ih = cfg.number("index_n_heads", default=0) or 0
            idim = cfg.number("index_head_dim", default=0) or 0
            i = a + "indexer."
            out += [
                (i + "wq_b.weight", dt, (ih * idim, q_lora or h)),
                (i + "wk.weight", dt, (idim, h)),
                (i + "k_norm.weight", dt, (idim,)),
                (i + "k_norm.bias", dt, (idim,)),
                (i + "weights_proj.weight", dt, (ih, h)),
            ]
        return out
    if kind == "kda":
        lin = cfg.linear_attn
        nh = lin.get("num_heads") or heads
        dim = lin.get("head_dim") or cfg.head_dim or 0
        kernel = lin.get("short_conv_kernel_size") or 4
        proj = nh * dim
        out = [(a + f"{n}.weight", dt, (proj, h)) for n in ("q_proj", "k_proj", "v_proj")]
        out += [(a + f"{n}.weight", dt, (proj, 1, kernel)) for n in ("q_conv1d", "k_conv1d", "v_conv1d")]
        out += [
            (a + "A_log", "F32", (1, 1, nh, 1)),
            (a + "dt_bias", "F32", (proj,)),
            (a + "f_a_proj.weight", dt, (dim, h)),
            (a + "f_b_proj.weight", dt, (proj, dim)),
            (a + "b_proj.weight", dt, (nh, h)),
            (a + "g_a_proj.weight", dt, (dim, h)),
            (a + "g_b_proj.weight", dt, (proj, dim)),
            (a + "o_norm.weight", dt, (dim,)),
            (a + "o_proj.weight", dt, (h, proj)),
        ]
        return out
    if kind == "gdn":
        la = p + "linear_attn."
        nv = cfg.number("linear_num_value_heads", default=0) or 0
        nk = cfg.number("linear_num_key_heads", default=nv) or 0
        dk = cfg.number("linear_key_head_dim", default=0) or 0
        dv = cfg.number("linear_value_head_dim", default=0) or 0
        kernel = cfg.number("linear_conv_kernel_dim", default=4) or 4
        return [
            (la + "in_proj_qkvz.weight", dt, (2 * nk * dk + 2 * nv * dv, h)),
            (la + "in_proj_ba.weight", dt, (2 * nv, h)),
            (la + "conv1d.weight", dt, (2 * nk * dk + nv * dv, 1, kernel)),
            (la + "A_log", "F32", (nv,)),
            (la + "dt_bias", "F32", (nv,)),
            (la + "norm.weight", dt, (dv,)),
            (la + "out_proj.weight", dt, (h, nv * dv)),
        ]
    if kind == "none" or kind == "mamba":
        return []
    hd = cfg.head_dim or 0
    kv = cfg.num_kv_heads or heads
    out = [
        (a + "q_proj.weight", dt, (heads * hd, h)),
        (a + "k_proj.weight", dt, (kv * hd, h)),
        (a + "v_proj.weight", dt, (kv * hd, h)),
        (a + "o_proj.weight", dt, (h, heads * hd)),
    ]
    if cfg.get("attention_bias") or cfg.get("qkv_bias"):
        out += [
            (a + "q_proj.bias", dt, (heads * hd,)),
            (a + "k_proj.bias", dt, (kv * hd,)),
            (a + "v_proj.bias", dt, (kv * hd,)),
        ]
    return out


def _mlp(cfg: ArchConfig, layer: LayerInfo, p: str, h: int, dt: str) -> list[Triple]:
    m = p + "mlp."
    if layer.mlp == "none":
        return []
    if layer.mlp == "dense":
        inter = cfg.number("intermediate_size", "ffn_hidden_size", "n_inner", default=4 * h) or 0
        return [
            (m + "gate_proj.weight", dt, (inter, h)),
            (m + "up_proj.weight", dt, (inter, h)),
            (m + "down_proj.weight", dt, (h, inter)),
        ]
    experts = cfg.num_experts or 0
    inter = (
        cfg.number("moe_intermediate_size", "expert_intermediate_size", default=0)
        or cfg.number("intermediate_size", default=0)
        or 0
    )
    eh = cfg.number("routed_expert_hidden_size", default=h) or h
    out: list[Triple] = [(m + "gate.weight", dt, (experts, h))]
    if cfg.get("topk_method") == "noaux_tc":
        out.append((m + "gate.e_score_correction_bias", "F32", (experts,)))
    if eh != h:  # latent MoE: experts work in a narrower space entered and left by two projections
        out += [(m + "latent_down_proj.weight", dt, (eh, h)), (m + "latent_up_proj.weight", dt, (h, eh))]
    out += [
        (m + "experts.gate_up_proj", dt, (experts, 2 * inter, eh)),
        (m + "experts.down_proj", dt, (experts, eh, inter)),
    ]
    shared_inter = cfg.number("shared_expert_intermediate_size", default=0) or inter * cfg.num_shared_experts
    if shared_inter:
        s = m + "shared_experts."
        out += [
            (s + "gate_proj.weight", dt, (shared_inter, h)),
            (s + "up_proj.weight", dt, (shared_inter, h)),
            (s + "down_proj.weight", dt, (h, shared_inter)),
        ]
        if cfg.number("shared_expert_intermediate_size"):
            out.append((m + "shared_expert_gate.weight", dt, (1, h)))
    return out


def _vision(cfg: ArchConfig, text_hidden: int) -> list[Triple]:
    v = cfg.vision
    if not v:
        return []
    dt = "BF16"
    if isinstance(v.get("vt_hidden_size"), int):
        d, mlp = v["vt_hidden_size"], v.get("vt_intermediate_size") or 4 * v["vt_hidden_size"]
        blocks = v.get("vt_num_hidden_layers") or 0
        bias = bool(v.get("linear_bias"))
        attn_bias = bool(v.get("attn_bias"))
        norm_bias = v.get("norm_type", "layernorm") != "rmsnorm"
        patch, channels = v.get("patch_size") or 14, v.get("in_channels") or 3
        temporal = v.get("temporal_patch_size")
        kernel = (d, channels, temporal, patch, patch) if temporal else (d, channels, patch, patch)
        out: list[Triple] = [
            ("vision_tower.patch_embed.proj.weight", dt, kernel),
            (
                "vision_tower.patch_embed.pos_emb.weight",
                dt,
                (v.get("init_pos_emb_height") or 64, v.get("init_pos_emb_width") or 64, d),
            ),
        ]
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
        merge = v.get("merge_kernel_size") or [2, 2]
        merged = d * merge[0] * merge[1]
        th = v.get("text_hidden_size") or text_hidden
        out += [
            ("mm_projector.pre_norm.weight", dt, (merged,)),
            ("mm_projector.proj.0.weight", dt, (th, merged)),
            ("mm_projector.proj.0.bias", dt, (th,)),
            ("mm_projector.proj.2.weight", dt, (th, th)),
            ("mm_projector.proj.2.bias", dt, (th,)),
        ]
        return out
    if isinstance(v.get("depth"), int) and isinstance(v.get("hidden_size"), int):
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
    if all(isinstance(v.get(k), int) for k in ("num_hidden_layers", "hidden_size", "intermediate_size")):
        # CLIP / SigLIP-style ViT: biased q, k, v, o and fc1, fc2; layer norms with bias; learned positions
        d, mlp, depth = v["hidden_size"], v["intermediate_size"], v["num_hidden_layers"]
        patch, channels = v.get("patch_size") or 14, v.get("num_channels") or v.get("in_channels") or 3
        positions = (v.get("image_size") or 224) // patch
        e = "vision_tower.vision_model."
        out = [
            (e + "embeddings.patch_embedding.weight", dt, (d, channels, patch, patch)),
            (e + "embeddings.patch_embedding.bias", dt, (d,)),
            (e + "embeddings.position_embedding.weight", dt, (positions * positions, d)),
            (e + "post_layernorm.weight", dt, (d,)),
            (e + "post_layernorm.bias", dt, (d,)),
        ]
        for i in range(depth):
            b = f"{e}encoder.layers.{i}."
            for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
                out += [
                    (b + f"self_attn.{proj}.weight", dt, (d, d)),
                    (b + f"self_attn.{proj}.bias", dt, (d,)),
                ]
            out += [
                (b + "mlp.fc1.weight", dt, (mlp, d)),
                (b + "mlp.fc1.bias", dt, (mlp,)),
                (b + "mlp.fc2.weight", dt, (d, mlp)),
                (b + "mlp.fc2.bias", dt, (d,)),
            ]
            for norm in ("layer_norm1", "layer_norm2"):
                out += [(b + f"{norm}.weight", dt, (d,)), (b + f"{norm}.bias", dt, (d,))]
        return out
    return []
