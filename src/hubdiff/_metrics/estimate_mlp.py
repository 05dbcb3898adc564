"""The tensors of each layer's MLP a config implies: dense, gated or not, and experts written fused."""

from __future__ import annotations

from .config import ArchConfig
from .estimate_facts import ArchitectureFacts, Triple, _falcon_bias, _gated, facts
from .layers import Block, LayerInfo


# -- MLPs and experts -----------------------------------------------------------------------------
def _dense(m: str, h: int, inter: int, dt: str, gated: bool, bias: bool = False) -> list[Triple]:
    out: list[Triple] = [(m + "up_proj.weight", dt, (inter, h)), (m + "down_proj.weight", dt, (h, inter))]
    if gated:
        out.append((m + "gate_proj.weight", dt, (inter, h)))
    if bias:
        out += [(m + "up_proj.bias", dt, (inter,)), (m + "down_proj.bias", dt, (h,))]
        if gated:
            out.append((m + "gate_proj.bias", dt, (inter,)))
    return out


def _auto_adjusted(cfg: ArchConfig, inter: int) -> int:
    """LFM2's feed-forward width: two thirds of intermediate_size, times block_ffn_dim_multiplier and
    rounded up to block_multiple_of when a multiplier is set (Lfm2MLP)."""
    inter = int(2 * inter / 3)
    multiplier = cfg.get("block_ffn_dim_multiplier")
    if isinstance(multiplier, (int, float)) and not isinstance(multiplier, bool):
        inter = int(multiplier * inter)
        step = cfg.number("block_multiple_of", default=256) or 256
        inter = step * ((inter + step - 1) // step)
    return inter


def _mlp_router(cfg: ArchConfig, index: int, g: str, h: int, experts: int, dt: str) -> list[Triple]:
    """ZAYA's router (modeling_zaya.py: ZayaRouter): the hidden state projected down to router_hidden_size
    (every layer after the first adds the previous layer's router state, scaled), an RMSNorm and a
    two-layer MLP scoring the experts and one skip class, whose balancing biases are kept as a buffer."""
    r = cfg.number("router_hidden_size", default=h) or h
    out: list[Triple] = [(g + "down_proj.weight", dt, (r, h)), (g + "down_proj.bias", dt, (r,))]
    if index:
        out.append((g + "router_states_scale", dt, (r,)))
    mlp = g + "router_mlp."
    out += [
        (mlp + "norm.weight", dt, (r,)),
        (mlp + "fc1.weight", dt, (r, r)),
        (mlp + "fc1.bias", dt, (r,)),
        (mlp + "fc2.weight", dt, (r, r)),
        (mlp + "fc2.bias", dt, (r,)),
        (mlp + "out_proj.weight", dt, (experts + 1, r)),
        (g + "balancing_biases", "F32", (experts + 1,)),
    ]
    return out


def _hash_routed(cfg: ArchConfig, index: int) -> bool:
    """A DeepSeek-V4 MoE layer that routes by token id: "hash_moe" in transformers' mlp_layer_types,
    or one of the first num_hash_layers (the release's own key, which the class turns into that list)."""
    first = cfg.number("num_hash_layers", default=0) or 0
    types = cfg.str_list("mlp_layer_types")
    if types is not None and index < len(types):
        return types[index] == "hash_moe"
    return index < first


def dense_intermediate(cfg: ArchConfig) -> int:
    """The dense MLP's width: Llama 4 names it intermediate_size_mlp, its intermediate_size being the experts'."""
    h = cfg.hidden_size or 0
    key = facts(cfg)[0].dense_width_key
    if key and cfg.number(key):
        return cfg.number(key) or 0
    if cfg.num_experts and cfg.number("intermediate_size_mlp"):
        return cfg.number("intermediate_size_mlp") or 0
    if cfg.num_experts and cfg.number("mlp_only_intermediate_size"):  # Kolibri 1.1's mlp_only_layers
        return cfg.number("mlp_only_intermediate_size") or 0
    return (
        cfg.number(
            "intermediate_size", "ffn_hidden_size", "n_inner", "ffn_dim", "dff", "dim_ff", default=4 * h
        )
        or 0
    )


def _mlp(
    cfg: ArchConfig, arch: ArchitectureFacts, layer: LayerInfo, p: str, h: int, dt: str, block: Block | None
) -> list[Triple]:
    m = p + "mlp."
    gated = _gated(cfg, arch)
    bias = arch.mlp_bias.on(cfg) or _falcon_bias(cfg, arch)
    if block is not None:
        if block.mlp == "linear":
            return [(p + "mlp_linear.weight", dt, (h, h))]
        if block.mlp == "none" or not block.intermediate:
            return []
        return _dense(m, h, block.intermediate, dt, gated, bias)
    if layer.mlp == "none":
        return []
    if arch.gemma_stack:
        from .estimate_gemma import gemma_mlp  # estimate_gemma is above this module

        return gemma_mlp(cfg, layer, p, h, dt)
    if layer.mlp == "dense" and layer.attention == "mlstm":  # xLSTM's gated feed-forward
        return _xlstm_ffn(cfg, p + "ffn.", h, dt)
    if layer.mlp == "dense" and layer.attention == "rwkv":  # RWKV's channel mixing, a squared-ReLU MLP
        inter = dense_intermediate(cfg)
        f = p + "feed_forward."
        return [
            (f + "time_mix_key", dt, (1, 1, h)),
            (f + "time_mix_receptance", dt, (1, 1, h)),
            (f + "key.weight", dt, (inter, h)),
            (f + "receptance.weight", dt, (h, h)),
            (f + "value.weight", dt, (h, inter)),
        ]
    if layer.mlp == "dense":
        inter = dense_intermediate(cfg) // arch.mlp_width_divisor
        multiple = cfg.get(arch.mlp_width_multiple) if arch.mlp_width_multiple else None
        if isinstance(multiple, (int, float)) and not isinstance(multiple, bool):
            inter = int(h * multiple)
        if arch.ffn_auto_adjust and cfg.get("block_auto_adjust_ff_dim") is not False:
            inter = _auto_adjusted(cfg, inter)
        if arch.sub_norms or arch.ffn_sub_norm:  # biased as the layer's norms are (Kosmos' LayerNorms)
            parts = ("weight", "bias") if arch.norm_bias else ("weight",)
            norms = [(m + f"ffn_sub_norm.{part}", dt, (inter,)) for part in parts]
            if arch.sub_norms:
                norms += [(p + f"self_attn.attn_sub_norm.{part}", dt, (h,)) for part in parts]
            return _dense(m, h, inter, dt, gated, bias) + norms
        # the learned activation is the MLP's only with hidden_act xielu (Apertus: ACT2CLS["xielu"])
        if arch.activation_params and cfg.get("hidden_act", default="xielu") == "xielu":
            act = [(m + "act_fn.parameters", dt, (arch.activation_params,))]
            return _dense(m, h, inter, dt, gated, bias) + act
        if arch.fused_gate_up and gated and not bias:
            return [(m + "gate_up_proj.weight", dt, (2 * inter, h)), (m + "down_proj.weight", dt, (h, inter))]
        return _dense(m, h, inter, dt, gated, bias)
    widths = cfg.int_list("moe_intermediate_size") if arch.modality_experts else None
    if widths is not None and len(widths) == 2:
        return _modality_experts(cfg, m, h, dt, widths, gated, bias)
    experts = cfg.num_experts or 0
    inter = (
        cfg.number(
            "moe_intermediate_size",
            "expert_intermediate_size",
            "expert_ffn_hidden_size",  # LongCat-Flash, whose ffn_hidden_size is the dense MLPs'
            "ffn_hidden_size",
            default=0,
        )
        or cfg.number("intermediate_size", default=0)
        or 0
    )
    latent = cfg.number("moe_latent_size")
    eh = latent or cfg.number("routed_expert_hidden_size", default=h) or h
    if arch.pooled_experts:
        eh = cfg.number("moe_hidden_size", default=h) or h
    # a router may also score weightless experts (LongCat-Flash's zero_expert_num identity experts)
    scored = experts + (cfg.number("zero_expert_num", default=0) or 0)
    out: list[Triple] = [(m + "gate.weight", dt, (scored, h))]
    if arch.cca_attention:
        out = _mlp_router(cfg, layer.index, m + "gate.", h, experts, dt)
    router_bias = (
        cfg.get("use_routing_bias", "moe_router_enable_expert_bias", "use_expert_bias") is True
        or arch.router_bias
    )
    if arch.compressed_attention and _hash_routed(cfg, layer.index):
        # DeepSeek-V4's hash layers: each token id's experts looked up in a table, no bias to correct
        out.append((m + "gate.tid2eid", "I64", (cfg.vocab_size or 0, cfg.experts_per_token or 0)))
    elif cfg.get("topk_method") == "noaux_tc" or (router_bias and not arch.expert_bias):
        out.append((m + "gate.e_score_correction_bias", "F32", (scored,)))
    if arch.router_bias and arch.expert_bias:  # gpt-oss: a plain linear router with a bias
        out.append((m + "gate.bias", dt, (experts,)))
    if (
        arch.pooled_experts
    ):  # Muse Spark's MuseSparkMoE: its pooling in and out, a norm each side of the experts
        out += [(m + "pre_expert_proj.weight", dt, (eh, h)), (m + "post_expert_proj.weight", dt, (h, eh))]
        out += [(m + "pre_expert_norm.weight", dt, (eh,)), (m + "experts.post_expert_norm.weight", dt, (eh,))]
    elif eh != h:  # latent MoE: experts work in a narrower space entered and left by two projections
        out += [(m + "latent_down_proj.weight", dt, (eh, h)), (m + "latent_up_proj.weight", dt, (h, eh))]
    up_rows = (2 if gated else 1) * inter
    if arch.stacked_experts:  # [experts x width, hidden] matrices, one per projection
        names = ("w1", "v1", "w2") if gated else ("w1", "w2")
        out += [(m + f"experts.mlp.{n}", dt, (experts * inter, eh)) for n in names]
    else:
        out += [
            (m + "experts.gate_up_proj", dt, (experts, up_rows, eh)),
            (m + "experts.down_proj", dt, (experts, eh, inter)),
        ]
    if arch.moe_post_norm:
        out.append((p + "post_mlp_layernorm.weight", dt, (h,)))
    if arch.expert_output_norms:  # Ergo's ErgoExpertNorm: one RMSNorm weight per expert
        out.append((m + "experts.post_expert_norm.weight", "F32", (experts, eh)))
    if arch.mixture_of_attention:  # JetMoE's MoE adds one bias to its output, whichever experts ran
        out.append((m + "bias", dt, (h,)))
    if arch.expert_bias:
        out += [
            (m + "experts.gate_up_proj_bias", dt, (experts, up_rows)),
            (m + "experts.down_proj_bias", dt, (experts, eh)),
        ]
    n_shared = cfg.num_shared_experts or arch.fixed_shared_experts
    shared_inter = (
        cfg.number(
            "shared_expert_intermediate_size",
            "moe_shared_expert_intermediate_size",
            "shared_intermediate_size",
            "share_expert_dim",  # Step 3.5 / 3.7
            default=0,
        )
        or (cfg.number("intermediate_size", default=0) if cfg.number("intermediate_size_mlp") else 0)
        or inter * n_shared
    )
    if arch.shared_width_key and cfg.number(arch.shared_width_key):  # Dots 3: each shared expert's width
        shared_inter = (cfg.number(arch.shared_width_key) or 0) * max(n_shared, 1)
    if shared_inter:
        out += _dense(m + "shared_experts.", h, shared_inter, dt, gated, bias and arch.shared_expert_bias)
        if arch.expert_output_norms:
            out.append((m + "shared_experts.norm.weight", "F32", (h,)))
        if cfg.number("shared_expert_intermediate_size") and arch.shared_expert_gate:
            out.append((m + "shared_expert_gate.weight", dt, (1, h)))
    return out


def _modality_experts(
    cfg: ArchConfig, m: str, h: int, dt: str, widths: list[int], gated: bool, bias: bool
) -> list[Triple]:
    """ERNIE 4.5 VL's MoE block: a text and a vision set of routed experts (widths[0], widths[1]), each
    with a router and its correction bias; shared experts as wide as num_shared x the text experts'."""
    experts = cfg.num_experts or 0
    out: list[Triple] = []
    for part, inter in zip(("text_moe.", "vision_moe."), widths, strict=True):
        out += [
            (m + part + "gate.weight", "F32", (experts, h)),
            (m + part + "gate.moe_statics.e_score_correction_bias", "F32", (1, experts)),
            (m + part + "experts.gate_up_proj", dt, (experts, (2 if gated else 1) * inter, h)),
            (m + part + "experts.down_proj", dt, (experts, h, inter)),
        ]
    shared = widths[0] * (cfg.num_shared_experts or 0)
    if shared:
        out += _dense(m + "shared_experts.", h, shared, dt, gated, bias)
    return out


def _xlstm_ffn(cfg: ArchConfig, f: str, h: int, dt: str) -> list[Triple]:
    """xLSTM's feed-forward (modeling_xlstm.py: xLSTMFeedForward): a SiLU-gated MLP whose gate and up
    projections weight_mode "fused" stores as one proj_up_gate_z; use_bias biases all of it."""
    up = xlstm_widths(cfg, h)[2]
    fused = cfg.get("weight_mode") == "fused"
    rows = {"proj_up_gate_z": 2 * up} if fused else {"proj_up_gate": up, "proj_up": up}
    out: list[Triple] = [(f"{f}{n}.weight", dt, (r, h)) for n, r in rows.items()]
    out.append((f + "proj_down.weight", dt, (h, up)))
    if cfg.get("use_bias") is True:
        out += [(f"{f}{n}.bias", dt, (r,)) for n, r in rows.items()] + [(f + "proj_down.bias", dt, (h,))]
    return out


def xlstm_widths(cfg: ArchConfig, h: int) -> tuple[int, int, int]:
    """xLSTM's query/key and value widths as its layer builds them (int(hidden x qk_dim_factor), and
    v_dim_factor's), and its MLP's (hidden x ffn_proj_factor rounded up to ffn_round_up_to_multiple_of)."""
    qk = int(h * float(cfg.get("qk_dim_factor", default=0.5)))
    v = int(h * float(cfg.get("v_dim_factor", default=1.0)))
    multiple = cfg.number("ffn_round_up_to_multiple_of", default=64) or 64
    up = h * float(cfg.get("ffn_proj_factor", default=2.667))
    return qk, v, int(((up + multiple - 1) // multiple) * multiple)
