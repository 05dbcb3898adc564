"""The tensors of Gemma's per-layer stacks a config implies (Gemma 4: ``gemma_stack`` 4 in the
architecture table, read from transformers/models/gemma4/modeling_gemma4.py; Gemma 3n: 3, from
models/gemma3n/modeling_gemma3n.py): what no other family has (per-layer inputs, layers reusing
another's keys and values, global layers with their own head sizes, an MoE block beside the dense MLP;
Gemma 3n's AltUp streams and LAuReL blocks), apart from the common layout the trunk writes."""

from __future__ import annotations

from .config import ArchConfig
from .estimate_facts import Triple, facts, layer_heads
from .layers import LayerInfo


def gemma_attention(cfg: ArchConfig, layer: LayerInfo, a: str, h: int, dt: str) -> list[Triple]:
    """q/k norms a head wide (the v norm has no weight); a layer reusing an earlier layer's keys and
    values keeps only its queries and output; a global layer whose values are its keys
    (attention_k_eq_v) has no v_proj."""
    heads, kv, hd, _ = layer_heads(cfg, layer)
    bias = cfg.get("attention_bias") is True
    out: list[Triple] = [
        (a + "q_proj.weight", dt, (heads * hd, h)),
        (a + "q_norm.weight", dt, (hd,)),
        (a + "o_proj.weight", dt, (h, heads * hd)),
    ]
    if bias:
        out += [(a + "q_proj.bias", dt, (heads * hd,)), (a + "o_proj.bias", dt, (h,))]
    if layer.kv_shared:
        return out
    k_eq_v = cfg.get("attention_k_eq_v") is True or facts(cfg)[0].global_k_eq_v
    values = not (k_eq_v and layer.attention != "swa")
    for name in ("k_proj", "v_proj") if values else ("k_proj",):
        out.append((a + f"{name}.weight", dt, (kv * hd, h)))
        if bias:
            out.append((a + f"{name}.bias", dt, (kv * hd,)))
    return [*out, (a + "k_norm.weight", dt, (hd,))]


def gemma_mlp(cfg: ArchConfig, layer: LayerInfo, p: str, h: int, dt: str) -> list[Triple]:
    """The dense gated MLP, twice as wide in a layer reusing keys and values when use_double_wide_mlp is
    set; in an MoE layer the experts beside it, entered through their own norm and router (a weightless
    norm, a scale a channel and a scale an expert) and leaving through two more norms."""
    inter = cfg.number("intermediate_size", default=0) or 0
    sizes = cfg.get("intermediate_size")
    if isinstance(sizes, list) and layer.index < len(sizes):  # Gemma 3n: one width a layer
        inter = _size(sizes[layer.index])
    if cfg.get("use_double_wide_mlp") is True and layer.kv_shared:
        inter *= 2
    m = p + "mlp."
    out: list[Triple] = [
        (m + "gate_proj.weight", dt, (inter, h)),
        (m + "up_proj.weight", dt, (inter, h)),
        (m + "down_proj.weight", dt, (h, inter)),
    ]
    if layer.mlp != "moe":
        return out
    experts = cfg.num_experts or 0
    width = cfg.number("moe_intermediate_size", default=0) or 0
    out += [
        (p + "router.proj.weight", dt, (experts, h)),
        (p + "router.scale", dt, (h,)),
        (p + "router.per_expert_scale", dt, (experts,)),
        (p + "experts.gate_up_proj", dt, (experts, 2 * width, h)),
        (p + "experts.down_proj", dt, (experts, h, width)),
    ]
    norms = ("post_feedforward_layernorm_1", "post_feedforward_layernorm_2", "pre_feedforward_layernorm_2")
    return out + [(p + f"{n}.weight", dt, (h,)) for n in norms]


def gemma_layer_extras(cfg: ArchConfig, p: str, h: int, dt: str) -> list[Triple]:
    """Each layer's output scalar (a persistent buffer, stored; Gemma 4) and its per-layer input: a gate
    from the hidden state to hidden_size_per_layer_input, a projection back and a norm. Gemma 3n has no
    scalar but AltUp (altup_num_inputs streams: a router to one coefficient a stream, prediction and
    correction coefficients, an output scale, a norm) and a LAuReL block (laurel_rank wide, normed)."""
    out: list[Triple] = []
    if facts(cfg)[0].gemma_stack == 3:
        n, rank = _altup_inputs(cfg), cfg.number("laurel_rank", default=64) or 0
        u = p + "altup."
        out += [
            (u + "correct_output_scale", dt, (h,)),
            (u + "correction_coefs.weight", dt, (n, n)),
            (u + "prediction_coefs.weight", dt, (n * n, n)),
            (u + "modality_router.weight", dt, (n, h)),
            (u + "router_norm.weight", dt, (h,)),
            (p + "laurel.linear_left.weight", dt, (rank, h)),
            (p + "laurel.linear_right.weight", dt, (h, rank)),
            (p + "laurel.post_laurel_norm.weight", dt, (h,)),
        ]
    else:
        out.append((p + "layer_scalar", dt, (1,)))
    per_layer = cfg.number("hidden_size_per_layer_input", default=0) or 0
    if per_layer:
        out += [
            (p + "per_layer_input_gate.weight", dt, (per_layer, h)),
            (p + "per_layer_projection.weight", dt, (h, per_layer)),
            (p + "post_per_layer_input_norm.weight", dt, (h,)),
        ]
    return out


def gemma_model_extras(cfg: ArchConfig, layers: int, h: int, dt: str) -> list[Triple]:
    """The per-layer input embedding: one table of every layer's hidden_size_per_layer_input slice by
    token (vocab_size_per_layer_input rows), a projection of the hidden state to the same width, and a
    norm of one slice."""
    per_layer = cfg.number("hidden_size_per_layer_input", default=0) or 0
    if not per_layer:
        return []
    rows = cfg.number("vocab_size_per_layer_input", default=cfg.vocab_size or 0) or 0
    out: list[Triple] = [
        ("model.embed_tokens_per_layer.weight", dt, (rows, layers * per_layer)),
        ("model.per_layer_model_projection.weight", dt, (layers * per_layer, h)),
        ("model.per_layer_projection_norm.weight", dt, (per_layer,)),
    ]
    if facts(cfg)[0].gemma_stack == 3:  # Gemma 3n: each further AltUp stream projected in and out
        for where in ("altup_projections", "altup_unembed_projections"):
            out += [(f"model.{where}.{i}.weight", dt, (h, h)) for i in range(_altup_inputs(cfg) - 1)]
    return out


def _altup_inputs(cfg: ArchConfig) -> int:
    return cfg.number("altup_num_inputs", default=4) or 0


def _size(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
