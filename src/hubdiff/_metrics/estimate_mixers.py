"""The tensors of each layer's token mixer a config implies: attention (MHA, GQA, MLA), and the
recurrent mixers (Mamba, GDN, KDA, RG-LRU, Zamba's shared blocks)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from .config import ArchConfig
from .estimate_facts import (
    ArchitectureFacts,
    Triple,
    _falcon_bias,
    _qk_norm,
    facts,
    kv_shared,
    layer_heads,
    mla_layer_number,
    mla_rope_dim,
)
from .estimate_gemma import gemma_attention
from .estimate_mlp import _dense, dense_intermediate, xlstm_widths
from .layers import Block, LayerInfo


# -- attention and recurrent mixers ---------------------------------------------------------------
def _xlnet_attention(cfg: ArchConfig, a: str, h: int, dt: str) -> list[Triple]:
    """XLNet's relative attention (modeling_xlnet.py, XLNetRelativeAttention): q, k, v, o and the
    position projection r as [hidden, heads, d_head] parameters, the content, position and segment
    biases, and a segment embedding of two rows per head."""
    heads = cfg.num_heads or 0
    hd = cfg.head_dim or 0
    out: list[Triple] = [(a + n, dt, (h, heads, hd)) for n in ("q", "k", "v", "o", "r")]
    out += [(a + n, dt, (heads, hd)) for n in ("r_r_bias", "r_s_bias", "r_w_bias")]
    return [*out, (a + "seg_embed", dt, (2, heads, hd))]


def _attention(
    cfg: ArchConfig, arch: ArchitectureFacts, layer: LayerInfo, p: str, h: int, dt: str, block: Block | None
) -> list[Triple]:
    a = p + "self_attn."
    kind = layer.attention
    if block is not None and block.attention != "attention":
        return [(p + "attn_linear.weight", dt, (h, h))] if block.attention == "linear" else []
    if arch.compressed_attention:
        return _compressed_attention(cfg, layer, p + "attn.", h, dt)
    if arch.mla_layer_sizes and kind in ("mla", "dsa", "swa"):  # Dots 3: its sliding layers are MLA too
        return _mla(cfg, arch, layer, a, h, dt)
    if arch.xlnet_attention:
        return _xlnet_attention(cfg, p + "rel_attn.", h, dt)
    if kind in ("mla", "dsa"):
        return _mla(cfg, arch, layer, a, h, dt)
    if kind == "kda":
        return _kda(cfg, a, h, dt, arch.kda_full_rank_gates)
    if kind == "gdn":
        return _gdn(cfg, p + "linear_attn.", h, dt, arch.split_gdn_proj)
    if kind == "mamba":
        return _mamba(cfg, p + "mixer.", h, dt)
    if kind == "shortconv":  # LFM2 (transformers/models/lfm2/modeling_lfm2.py: Lfm2ShortConv)
        c, kernel = p + "conv.", cfg.number("conv_L_cache", default=3) or 3
        conv: list[Triple] = [
            (c + "in_proj.weight", dt, (3 * h, h)),
            (c + "conv.weight", dt, (h, 1, kernel)),
            (c + "out_proj.weight", dt, (h, h)),
        ]
        if cfg.get("conv_bias") is True:
            conv += [
                (c + "in_proj.bias", dt, (3 * h,)),
                (c + "conv.bias", dt, (h,)),
                (c + "out_proj.bias", dt, (h,)),
            ]
        return conv
    if kind == "rglru":
        return _rglru(cfg, p + "temporal_block.", h, dt)
    if kind == "mlstm":
        return _mlstm(cfg, p + "mlstm_layer.", h, dt)
    if kind == "rwkv":  # RWKV-4's time mixing (transformers/models/rwkv/modeling_rwkv.py)
        width = cfg.number("attention_hidden_size", default=h) or h
        t = p + "attention."
        mix: list[Triple] = [(t + n, dt, (width,)) for n in ("time_decay", "time_first")]
        mix += [(t + f"time_mix_{n}", dt, (1, 1, h)) for n in ("key", "value", "receptance")]
        mix += [(t + f"{n}.weight", dt, (width, h)) for n in ("key", "value", "receptance")]
        return [*mix, (t + "output.weight", dt, (h, width))]
    if kind == "lightning":
        heads, hd = cfg.num_heads or 0, cfg.head_dim or 0
        la = p + "self_attn."
        lightning: list[Triple] = [
            (la + "qkv_proj.weight", dt, (3 * heads * hd, h)),
            (la + "output_gate.weight", dt, (heads * hd, h)),
            (la + "norm.weight", dt, (heads * hd,)),
            (la + "out_proj.weight", dt, (h, heads * hd)),
        ]
        if arch.lightning_decay_buffers:  # MiniMaxLightningAttention's slope and decay tables
            span = cfg.number("block_size", default=256) or 256
            lightning += [
                (la + "slope_rate", dt, (heads, 1, 1)),
                (la + "query_decay", dt, (heads, span, 1)),
                (la + "key_decay", dt, (heads, span, 1)),
                (la + "diagonal_decay", dt, (1, heads, span, span)),
            ]
        return lightning
    if kind == "none":
        return []
    if arch.gemma_stack and kind in ("mha", "gqa", "mqa", "swa"):
        return gemma_attention(cfg, layer, a, h, dt)
    heads, kv, hd, vd = layer_heads(cfg, layer)
    if arch.mixture_of_attention:
        return _mixture_of_attention(cfg, p + "self_attention.", h, kv * hd, dt)
    if arch.cca_attention:
        return _cca(cfg, arch, a, h, heads, kv, hd, dt)
    if kind == "cross":
        x = p + "cross_attn."
        return [
            (x + "q_proj.weight", dt, (heads * hd, h)),
            (x + "k_proj.weight", dt, (kv * hd, h)),
            (x + "v_proj.weight", dt, (kv * hd, h)),
            (x + "o_proj.weight", dt, (h, heads * hd)),
            (x + "q_norm.weight", dt, (hd,)),
            (x + "k_norm.weight", dt, (hd,)),
            (p + "cross_attn_attn_gate", dt, (1,)),
            (p + "cross_attn_mlp_gate", dt, (1,)),
        ]
    if block is not None and block.kv_heads:
        kv = block.kv_heads  # NAS: each block its own number of KV heads
    # output-gated attention (Qwen3-Next): q_proj also produces a per-channel gate
    gate = cfg.get("attn_output_gate", "use_output_gate") is True or arch.output_gate
    q_rows = heads * hd * (2 if gate else 1)
    if arch.fused_qkv:
        out: list[Triple] = [(a + "qkv_proj.weight", dt, (q_rows + kv * (hd + vd), h))]
    else:
        out = [
            (a + "q_proj.weight", dt, (q_rows, h)),
            (a + "k_proj.weight", dt, (kv * hd, h)),
            (a + "v_proj.weight", dt, (kv * vd, h)),
        ]
    out.append((a + "o_proj.weight", dt, (h, heads * vd)))
    if (arch.qkv_bias.on(cfg) or _falcon_bias(cfg, arch)) and arch.fused_qkv:
        out.append((a + "qkv_proj.bias", dt, (q_rows + kv * (hd + vd),)))
    elif arch.qkv_bias.on(cfg) or _falcon_bias(cfg, arch):
        out += [
            (a + "q_proj.bias", dt, (q_rows,)),
            (a + "k_proj.bias", dt, (kv * hd,)),
            (a + "v_proj.bias", dt, (kv * vd,)),
        ]
    last_biased = arch.last_layer_o_bias and layer.index == cfg.num_layers - 1
    if arch.o_bias.on(cfg) or _falcon_bias(cfg, arch) or last_biased:
        out.append((a + "o_proj.bias", dt, (h,)))
    gating = cfg.get("gating", default=arch.gating_default) if arch.head_gate else None
    if gating is True or gating == "per-head":  # Laguna's softplus output gate, one a head
        out.append((a + "g_proj.weight", dt, (heads, h)))
    elif gating == "per-element":
        out.append((a + "g_proj.weight", dt, (heads * hd, h)))
    elif arch.head_gate_switch.on(cfg):
        out.append((a + "g_proj.weight", dt, (heads, h)))
    if arch.channel_gate_head_bias:
        out += [(a + "gate_proj.weight", dt, (heads * hd, h)), (a + "gate_bias", dt, (heads,))]
    if arch.attention_gate_proj:
        out.append((a + "gate_proj.weight", dt, (heads * hd, h)))
    if arch.diff_lambdas:
        out += [(a + f"lambda_{n}", dt, (hd,)) for n in ("q1", "k1", "q2", "k2")]
    if arch.dynamic_mask_attention:  # Doge (modeling_doge.py: DogeAttention)
        out += [(a + "A", dt, (kv,)), (a + "dt_proj.weight", dt, (kv, kv * vd))]
        if arch.qkv_bias.on(cfg):
            out.append((a + "dt_proj.bias", dt, (kv,)))
    norm = _qk_norm(cfg, arch)
    parts = ("weight", "bias") if arch.norm_bias and arch.qk_norm_bias else ("weight",)
    if arch.qk_norm_always_biased:
        parts = ("weight", "bias")
    if norm == "head":
        out += [(a + f"{n}.{part}", dt, (hd,)) for n in ("q_norm", "k_norm") for part in parts]
    elif norm == "full":
        out += [(a + f"q_norm.{part}", dt, (heads * hd,)) for part in parts]
        out += [(a + f"k_norm.{part}", dt, (kv * hd,)) for part in parts]
    elif norm == "heads":
        out += [(a + f"q_norm.{part}", dt, (heads, hd)) for part in parts]
        out += [(a + f"k_norm.{part}", dt, (kv, hd)) for part in parts]
    if (
        arch.sinks
        or (layer.attention == "swa" and cfg.get("add_swa_attention_sink_bias") is True)
        or (layer.attention == "swa" and arch.swa_sinks and cfg.get("add_swa_attention_sink_bias") is None)
        or (layer.attention != "swa" and cfg.get("add_full_attention_sink_bias") is True)
    ):
        out.append((a + "sinks", dt, (heads,)))
    if layer.kv_shared and not arch.fused_qkv:  # it reads another layer's keys and values (Kolibri 1.1)
        out = [t for t in out if not t[0].startswith((a + "k_proj.", a + "v_proj.", a + "k_norm."))]
    if layer.parallel_ssm:
        out += _mamba(cfg, p + "mamba.", h, dt)
    return out


def _compressed_attention(cfg: ArchConfig, layer: LayerInfo, a: str, h: int, dt: str) -> list[Triple]:
    """DeepSeek-V4's attention (modeling_deepseek_v4.py), named as its checkpoints name it: in every layer
    a low-rank query, one KV head that keys and values share, a grouped low-rank output projection
    (o_groups groups of o_lora_rank) and a sink logit per head; a compressed layer adds a compressor of
    its keys (kv and gate projections, a learned position bias per compressed token), whose windows in a
    sparse (CSA) layer overlap, twice as wide, beside a lightning indexer compressing keys of its own."""
    heads, hd = cfg.num_heads or 0, cfg.head_dim or 0
    q_lora = cfg.number("q_lora_rank", default=0) or 0
    groups = cfg.number("o_groups", default=1) or 1
    o_rank = cfg.number("o_lora_rank", default=0) or 0
    out: list[Triple] = [
        (a + "attn_sink", "F32", (heads,)),
        (a + "wq_a.weight", dt, (q_lora, h)),
        (a + "q_norm.weight", dt, (q_lora,)),
        (a + "wq_b.weight", dt, (heads * hd, q_lora)),
        (a + "wkv.weight", dt, (hd, h)),
        (a + "norm.weight", dt, (hd,)),
        (a + "wo_a.weight", dt, (groups * o_rank, heads * hd // groups)),
        (a + "wo_b.weight", dt, (h, groups * o_rank)),
    ]
    ratio = layer.compress_ratio if layer.attention == "compressed" else None
    if not ratio:
        return out
    sparse = layer.indexer == "own"
    out += _compressor(a + "compressor.", ratio, hd, sparse, h, dt)
    if sparse:
        ih = cfg.number("index_n_heads", default=0) or 0
        idim = cfg.number("index_head_dim", default=0) or 0
        i = a + "indexer."
        out += _compressor(i + "compressor.", ratio, idim, True, h, dt)
        out += [(i + "wq_b.weight", dt, (ih * idim, q_lora)), (i + "weights_proj.weight", dt, (ih, h))]
    return out


def _compressor(c: str, ratio: int, hd: int, overlapping: bool, h: int, dt: str) -> list[Triple]:
    """One compressor of DeepSeek-V4: overlapping windows (CSA's) project to twice the head width."""
    width = 2 * hd if overlapping else hd
    return [
        (c + "ape", "F32", (ratio, width)),
        (c + "wkv.weight", dt, (width, h)),
        (c + "wgate.weight", dt, (width, h)),
        (c + "norm.weight", dt, (hd,)),
    ]


def _cca(
    cfg: ArchConfig, arch: ArchitectureFacts, a: str, h: int, heads: int, kv: int, hd: int, dt: str
) -> list[Triple]:
    """ZAYA's compressed convolutional attention (modeling_zaya.py: ZayaCCAProjection): q and k projected
    and mixed by a depthwise (cca_time0 taps) then a per-head grouped (cca_time1 taps) convolution, each
    biased; values half from the current token, half from the previous one; an L2 q/k norm with a learned
    temperature per KV head; attention_bias biases the four projections and o_proj."""
    q = a + "qkv_proj."
    channels = (heads + kv) * hd
    rows = {
        "q_proj": heads * hd,
        "k_proj": kv * hd,
        "v_proj_current": kv * hd // 2,
        "v_proj_delayed": kv * hd // 2,
    }
    out: list[Triple] = [(q + f"{n}.weight", dt, (r, h)) for n, r in rows.items()]
    out += [
        (q + "conv_qk_depthwise.weight", dt, (channels, 1, cfg.number("cca_time0", default=2) or 2)),
        (q + "conv_qk_depthwise.bias", dt, (channels,)),
        (q + "conv_qk_grouped.weight", dt, (channels, hd, cfg.number("cca_time1", default=2) or 2)),
        (q + "conv_qk_grouped.bias", dt, (channels,)),
        (a + "qk_norm.temp", dt, (kv,)),
        (a + "o_proj.weight", dt, (h, heads * hd)),
    ]
    if arch.qkv_bias.on(cfg):
        out += [(q + f"{n}.bias", dt, (r,)) for n, r in rows.items()]
    if arch.o_bias.on(cfg):
        out.append((a + "o_proj.bias", dt, (h,)))
    return out


def _mixture_of_attention(cfg: ArchConfig, a: str, h: int, width: int, dt: str) -> list[Triple]:
    """JetMoE's MoA (modeling_jetmoe.py: JetMoeMoA): every expert a query projection into, and an output
    projection out of, the kv_channels x num_key_value_heads wide space that one kv_proj shares; a token
    uses top-k of them, so they are counted with the routed experts, the router with the routers."""
    experts = cfg.num_experts or 0
    e = a + "experts."
    return [
        (e + "input_linear.weight", dt, (experts, width, h)),
        (e + "output_linear.weight", dt, (experts, h, width)),
        (e + "bias", dt, (h,)),
        (e + "router.layer.weight", dt, (experts, h)),
        (a + "kv_proj.weight", dt, (2 * width, h)),
    ]


def _zamba(
    cfg: ArchConfig, arch: ArchitectureFacts, layers: list[LayerInfo], h: int, dt: str
) -> list[Triple]:
    """Zamba and Zamba2 (transformers/models/zamba{,2}/modeling_zamba{,2}.py): every layer a Mamba
    mixer and its norm; a hybrid layer also a linear map of the shared block's output, and the shared
    blocks themselves once each (Zamba2: block b serves the hybrid layers i with i % num_mem_blocks == b,
    each with its own low-rank adapters)."""
    hybrid = [x.index for x in layers if x.parallel_ssm and not x.mtp]
    blocks = 1 if arch.shared_blocks == 1 else max(cfg.number("num_mem_blocks", default=1) or 1, 1)
    if not cfg.tied_embeddings:  # transformers ties the shared blocks only with the embeddings: a copy each
        blocks = len(hybrid)
    wide = cfg.number("attention_hidden_size", default=2 * h) or 2 * h  # [hidden, embedding]
    heads, kv, hd = cfg.num_heads or 0, cfg.num_kv_heads or 0, cfg.head_dim or 0
    inter = dense_intermediate(cfg)
    rank = cfg.number("adapter_rank", default=0) or 0
    bias = arch.mlp_bias.on(cfg)
    attention_adapters = cfg.get("use_shared_attention_adapter") is True
    served = len(cfg.int_list("hybrid_layer_ids") or hybrid)  # the class counts adapters by this list
    out: list[Triple] = []
    for layer in layers:
        p = f"model.layers.{layer.index}."
        m = p + ("mamba_decoder." if layer.parallel_ssm else "")
        out += [*_mamba(cfg, m + "mamba.", h, dt), (m + "input_layernorm.weight", dt, (h,))]
        if layer.parallel_ssm:
            out.append((p + "linear.weight", dt, (h, h)))
    for b, first in enumerate(hybrid[:blocks]):
        s = f"model.layers.{first}.shared_transformer."
        out += [
            (s + "self_attn.q_proj.weight", dt, (heads * hd, wide)),
            (s + "self_attn.k_proj.weight", dt, (kv * hd, wide)),
            (s + "self_attn.v_proj.weight", dt, (kv * hd, wide)),
            (s + "self_attn.o_proj.weight", dt, (h, heads * hd)),
            (s + "input_layernorm.weight", dt, (wide,)),
            (s + "pre_ff_layernorm.weight", dt, (h,)),
        ]
        f = s + "feed_forward."
        if arch.shared_blocks == 1:
            out += _dense(f, h, inter, dt, gated=True)
            continue
        out += [(f + "gate_up_proj.weight", dt, (2 * inter, h)), (f + "down_proj.weight", dt, (h, inter))]
        if bias:
            out += [(f + "gate_up_proj.bias", dt, (2 * inter,)), (f + "down_proj.bias", dt, (h,))]
        for i in range(b, served, blocks):  # the hybrid layers this block serves, an adapter each
            out += [
                (f + f"gate_up_proj_adapter_list.{i}.0.weight", dt, (rank, h)),
                (f + f"gate_up_proj_adapter_list.{i}.1.weight", dt, (2 * inter, rank)),
            ]
            for x in ("q", "k", "v") if attention_adapters else ():
                a = s + f"self_attn.linear_{x}_adapter_list.{i}."
                out += [(a + "0.weight", dt, (rank, wide)), (a + "1.weight", dt, (wide, rank))]
    return out


def _rglru(cfg: ArchConfig, t: str, h: int, dt: str) -> list[Triple]:
    """Griffin's recurrent block (RecurrentGemma): two input branches, a depthwise convolution and the
    RG-LRU, whose input and recurrence gates are block-diagonal, one block per head
    (transformers/models/recurrent_gemma/modeling_recurrent_gemma.py)."""
    width = cfg.number("lru_width", default=h) or h
    kernel = cfg.number("conv1d_width", default=4) or 4
    heads = cfg.num_heads or 1
    block = width // heads
    out: list[Triple] = []
    for name, shape in (("linear_y", (width, h)), ("linear_x", (width, h)), ("linear_out", (h, width))):
        out += [(t + f"{name}.weight", dt, shape), (t + f"{name}.bias", dt, (shape[0],))]
    out += [
        (t + "conv_1d.weight", dt, (width, 1, kernel)),
        (t + "conv_1d.bias", dt, (width,)),
        (t + "rg_lru.recurrent_param", dt, (width,)),
    ]
    for gate in ("input_gate", "recurrent_gate"):
        out += [
            (t + f"rg_lru.{gate}_weight", dt, (heads, block, block)),
            (t + f"rg_lru.{gate}_bias", dt, (heads, block)),
        ]
    return out


def _mla(cfg: ArchConfig, arch: ArchitectureFacts, layer: LayerInfo, a: str, h: int, dt: str) -> list[Triple]:
    """Multi-head latent attention, each size the layer's own where the architecture gives layers sizes of
    their own (Dots 3's per_layer_config, with an RMSNorm on the keys' rope slice), else the config's."""
    n = layer.index
    heads = mla_layer_number(cfg, n, "num_attention_heads")
    nope = mla_layer_number(cfg, n, "qk_nope_head_dim")
    rope = mla_layer_number(cfg, n, "qk_rope_head_dim")
    v = mla_layer_number(cfg, n, "v_head_dim", nope) if cfg.get("v_head_dim") != 0 else 0
    kv_lora = mla_layer_number(cfg, n, "kv_lora_rank")
    q_lora = mla_layer_number(cfg, n, "q_lora_rank")
    if arch.lerope_ssmax:
        return _mla_lerope(cfg, layer, a, h, dt, heads, nope, rope, v, kv_lora)
    out: list[Triple] = []
    if q_lora and arch.mla_query_gate:
        out += [
            (a + "q_a_proj.weight", dt, (q_lora, h)),
            (a + "q_a_layernorm.weight", dt, (q_lora,)),
            (a + "q_b_proj.weight", dt, (heads * (nope + rope + v), 2 * q_lora)),
        ]
    elif q_lora:
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
    if arch.mla_layer_sizes:
        out.append((a + "k_rope_only_layernorm.weight", dt, (rope,)))
    if arch.qkv_bias.on(cfg):  # DeepSeek-V3: attention_bias biases the two down-projections and o_proj
        out += [(a + "kv_a_proj_with_mqa.bias", dt, (kv_lora + rope,))]
        out += [(a + "q_a_proj.bias", dt, (q_lora,))] if q_lora else []
    if arch.o_bias.on(cfg):
        out.append((a + "o_proj.bias", dt, (h,)))
    if arch.mla_output_gate:
        out.append((a + "gate_proj.weight", dt, (heads * v, h)))
    if arch.mla_head_gate:
        out.append((a + "g_proj.weight", dt, (heads, h)))
    if arch.sinks:
        out.append((a + "sinks", "F32", (heads,)))
    if layer.attention == "dsa" and layer.indexer == "own":
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
        if arch.indexer_kpool_compress:
            pool = cfg.number("index_kpool", default=1) or 1
            out += [
                (i + "index_kpool_compress_ape", dt, (pool, idim)),
                (i + "index_kpool_compress_gate", dt, (idim, h)),
            ]
    return out


def _mla_lerope(
    cfg: ArchConfig,
    layer: LayerInfo,
    a: str,
    h: int,
    dt: str,
    heads: int,
    nope: int,
    rope: int,
    v: int,
    kv_lora: int,
) -> list[Triple]:
    """Mistral Large 4's DSA attention (modeling_mistral_large4.py): no q LoRA; a NoPE layer's keys have
    no rope slice (kv_a_proj_with_mqa narrower, kv_b_proj's nope part wider); a layer sharing an earlier
    layer's latent has no kv_a_proj_with_mqa nor kv_a_layernorm; SSMax's per-head scale and bias in the
    attention and in its indexer, whose queries are LayerNormed first."""
    kept = mla_rope_dim(cfg, layer)
    nope_l = nope + rope - kept
    out: list[Triple] = [
        (a + "q_proj.weight", dt, (heads * (nope + rope), h)),
        (a + "kv_b_proj.weight", dt, (heads * (nope_l + v), kv_lora)),
        (a + "o_proj.weight", dt, (h, heads * v)),
        (a + "ssmax_scaling.s", dt, (heads,)),
        (a + "ssmax_scaling.b", dt, (heads,)),
    ]
    bias = cfg.get("attention_bias") is True
    if not kv_shared(cfg, layer):
        out += [
            (a + "kv_a_proj_with_mqa.weight", dt, (kv_lora + kept, h)),
            (a + "kv_a_layernorm.weight", dt, (kv_lora,)),
        ]
        out += [(a + "kv_a_proj_with_mqa.bias", dt, (kv_lora + kept,))] if bias else []
    out += [(a + "o_proj.bias", dt, (h,))] if bias else []
    if layer.attention == "dsa" and layer.indexer == "own":
        ih = cfg.number("index_n_heads", default=0) or 0
        idim = cfg.number("index_head_dim", default=0) or 0
        i = a + "indexer."
        out += [
            (i + "wq_b.weight", dt, (ih * idim, h)),
            (i + "wk.weight", dt, (idim, h)),
            (i + "k_norm.weight", dt, (idim,)),
            (i + "k_norm.bias", dt, (idim,)),
            (i + "weights_proj.weight", dt, (ih, h)),
            (i + "q_input_norm.weight", dt, (h,)),
            (i + "q_input_norm.bias", dt, (h,)),
            (i + "ssmax_scaling.s", dt, (ih,)),
            (i + "ssmax_scaling.b", dt, (ih,)),
        ]
    return out


def _kda(cfg: ArchConfig, a: str, h: int, dt: str, full_rank: bool = False) -> list[Triple]:
    lin = cfg.linear_attn
    nh = lin.get("num_heads") or cfg.num_heads or 0
    dim = lin.get("head_dim") or cfg.head_dim or 0
    kernel = lin.get("short_conv_kernel_size") or 4
    proj = nh * dim
    if full_rank:  # Ring-2.5's KDA (modeling_bailing_hybrid.py): full-rank gates, one fused convolution
        kernel = cfg.number("short_conv_kernel_size", default=kernel) or kernel
        return [
            *[(a + f"{n}.weight", dt, (proj, h)) for n in ("q_proj", "k_proj", "v_proj")],
            (a + "conv1d.weight", dt, (3 * proj, 1, kernel)),
            (a + "A_log", "F32", (nh,)),
            (a + "dt_bias", "F32", (proj,)),
            (a + "f_proj.weight", dt, (proj, h)),
            (a + "b_proj.weight", dt, (nh, h)),
            (a + "g_proj.weight", dt, (proj, h)),
            (a + "o_norm.weight", dt, (dim,)),
            (a + "o_proj.weight", dt, (h, proj)),
        ]
    out: list[Triple] = [(a + f"{n}.weight", dt, (proj, h)) for n in ("q_proj", "k_proj", "v_proj")]
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


def _gdn(cfg: ArchConfig, la: str, h: int, dt: str, split: bool) -> list[Triple]:
    nv = cfg.number("linear_num_value_heads", default=0) or 0
    nk = cfg.number("linear_num_key_heads", default=nv) or 0
    dk = cfg.number("linear_key_head_dim", default=0) or 0
    dv = cfg.number("linear_value_head_dim", default=0) or 0
    kernel = cfg.number("linear_conv_kernel_dim", default=4) or 4
    if split:
        projections: list[Triple] = [
            (la + "in_proj_qkv.weight", dt, (2 * nk * dk + nv * dv, h)),
            (la + "in_proj_z.weight", dt, (nv * dv, h)),
            (la + "in_proj_b.weight", dt, (nv, h)),
            (la + "in_proj_a.weight", dt, (nv, h)),
        ]
    else:
        projections = [
            (la + "in_proj_qkvz.weight", dt, (2 * nk * dk + 2 * nv * dv, h)),
            (la + "in_proj_ba.weight", dt, (2 * nv, h)),
        ]
    return [
        *projections,
        (la + "conv1d.weight", dt, (2 * nk * dk + nv * dv, 1, kernel)),
        (la + "A_log", "F32", (nv,)),
        (la + "dt_bias", "F32", (nv,)),
        (la + "norm.weight", dt, (dv,)),
        (la + "out_proj.weight", dt, (h, nv * dv)),
    ]


@dataclass(frozen=True)
class MambaShape:
    """The sizes of a Mamba mixer, Mamba-2 (heads) or Mamba-1 (dt_rank), for parameters and state."""

    version: int
    channels: int  # d_inner
    state: int
    heads: int
    groups: int
    kernel: int
    dt_rank: int

    @property
    def conv_dim(self) -> int:
        return self.channels + 2 * self.groups * self.state if self.version == 2 else self.channels


def mamba_shape(cfg: ArchConfig) -> MambaShape:
    h = cfg.hidden_size or 0
    state = cfg.number("ssm_state_size", "state_size", "mamba_d_state", default=16) or 16
    kernel = cfg.number("conv_kernel", "mamba_d_conv", "mamba_conv_kernel", default=4) or 4
    expand = cfg.number("mamba_expand", "expand", default=2) or 2
    heads = cfg.number("mamba_num_heads", "mamba_n_heads", "n_mamba_heads", default=0) or 0
    if facts(cfg)[0].shared_blocks == 1:  # Zamba: Mamba-1, its n_mamba_heads only split the same weights
        heads = 0
    rank = cfg.get("mamba_dt_rank", "time_step_rank")  # Mamba-1 only; Mamba-2 has one dt per head
    if not heads and not cfg.num_heads:  # a pure Mamba-2 model calls its SSM heads num_heads
        heads = cfg.number("num_heads", default=0) or 0
    if heads:
        head_dim = (
            cfg.number("mamba_head_dim", "mamba_d_head", "mamba_headdim", default=0)
            or cfg.number("head_dim", default=0)
            or 0
        )
        channels = cfg.number("mamba_d_ssm", default=0) or heads * head_dim or expand * h
        groups = cfg.number("n_groups", "mamba_n_groups", "mamba_ngroups", default=1) or 1
        return MambaShape(2, channels, state, heads, groups, kernel, 0)
    # a pure Mamba-1 model (no attention heads) names its inner width intermediate_size
    inner = cfg.number("intermediate_size", default=0) if not cfg.num_heads else 0
    channels = cfg.number("mamba_d_inner", default=0) or inner or expand * h
    dt_rank = rank if isinstance(rank, int) and rank > 0 else math.ceil(h / 16)
    return MambaShape(1, channels, state, 0, 1, kernel, dt_rank)


def _mamba(cfg: ArchConfig, m: str, h: int, dt: str) -> list[Triple]:
    s = mamba_shape(cfg)
    proj_bias = cfg.get("mamba_proj_bias", "use_bias", "add_bias_linear") is True
    conv_bias = facts(cfg)[0].conv_bias.on(cfg)
    out: list[Triple] = []
    if s.version == 2:
        out += [
            (m + "in_proj.weight", dt, (s.channels + s.conv_dim + s.heads, h)),
            (m + "conv1d.weight", dt, (s.conv_dim, 1, s.kernel)),
            (m + "dt_bias", dt, (s.heads,)),
            (m + "A_log", dt, (s.heads,)),
            (m + "D", dt, (s.heads,)),
            (m + "out_proj.weight", dt, (h, s.channels)),
        ]
        arch = facts(cfg)[0]
        if arch.mamba_norm.on(cfg):  # the gated RMSNorm before out_proj
            out.append((m + "norm.weight", dt, (s.channels,)))
        if proj_bias:
            out.append((m + "in_proj.bias", dt, (s.channels + s.conv_dim + s.heads,)))
        if arch.mamba_out_bias.on(cfg) if arch.mamba_out_bias is not None else proj_bias:
            out.append((m + "out_proj.bias", dt, (h,)))
    else:
        out += [
            (m + "in_proj.weight", dt, (2 * s.channels, h)),
            (m + "conv1d.weight", dt, (s.channels, 1, s.kernel)),
            (m + "x_proj.weight", dt, (s.dt_rank + 2 * s.state, s.channels)),
            (m + "dt_proj.weight", dt, (s.channels, s.dt_rank)),
            (m + "dt_proj.bias", dt, (s.channels,)),
            (m + "A_log", dt, (s.channels, s.state)),
            (m + "D", dt, (s.channels,)),
            (m + "out_proj.weight", dt, (h, s.channels)),
        ]
        if proj_bias:
            out += [(m + "in_proj.bias", dt, (2 * s.channels,)), (m + "out_proj.bias", dt, (h,))]
        jamba = cfg.number("attn_layer_period") is not None and not facts(cfg)[0].shared_blocks
        if cfg.get("mamba_inner_layernorms") is not False and jamba:
            out += [
                (m + "dt_layernorm.weight", dt, (s.dt_rank,)),
                (m + "b_layernorm.weight", dt, (s.state,)),
                (m + "c_layernorm.weight", dt, (s.state,)),
            ]
    if conv_bias:
        out.append((m + "conv1d.bias", dt, (s.conv_dim,)))
    return out


def _mlstm(cfg: ArchConfig, m: str, h: int, dt: str) -> list[Triple]:
    """xLSTM's mLSTM (modeling_xlstm.py: xLSTMLayer): q and k qk_dim wide, v and the output gate v_dim
    wide, an input and a forget gate per head (always biased), a per-head norm of the values and out_proj;
    use_bias biases the rest; weight_mode "fused" stores q, k, v and the output gate as one qkv_opreact and
    the two gates as one ifgate_preact."""
    qk, v, _ = xlstm_widths(cfg, h)
    heads = cfg.number("num_heads", default=0) or 0
    for key, same in (("embedding_dim", h), ("num_blocks", cfg.num_layers)):
        if cfg.text.get(key) in (None, same):  # the class's own copy of a size read: understood
            cfg.get(key)
    bias = cfg.get("use_bias") is True
    if cfg.get("weight_mode") == "fused":
        rows = {"qkv_opreact": 2 * qk + 2 * v}
        gates = {"ifgate_preact": 2 * heads}
    else:
        rows = {"q": qk, "k": qk, "v": v, "ogate_preact": v}
        gates = {"igate_preact": heads, "fgate_preact": heads}
    out: list[Triple] = [(f"{m}{n}.weight", dt, (r, h)) for n, r in (rows | gates).items()]
    out += [(f"{m}{n}.bias", dt, (r,)) for n, r in gates.items()]
    out += [(f"{m}{n}.bias", dt, (r,)) for n, r in rows.items()] if bias else []
    out += [(m + "multihead_norm.weight", dt, (v,)), (m + "out_proj.weight", dt, (h, v))]
    out += [(m + "multihead_norm.bias", dt, (v,)), (m + "out_proj.bias", dt, (h,))] if bias else []
    return out
