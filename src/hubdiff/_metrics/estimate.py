"""Config-only estimates: the tensors a config implies, in canonical names.

When there are no headers (a config published before the weights, or ``--config-only``), hubdiff writes
out the tensors each layer would have and runs the same counting as on real headers. Experts are
written fused (one ``[E, ...]`` tensor per projection) so a 900-expert model stays small.

Most of what sizes a layer is in the config; a few facts are not, because every checkpoint of an
architecture has them (Qwen2's q/k/v biases, Qwen3's per-head q/k norms, Gemma's four norms a layer,
non-gated relu² MLPs). Those live in ``ARCHITECTURE_FACTS``, keyed by ``model_type`` like
transformers' own modeling files, and each one is checked against transformers' model classes on
torch's meta device in the test suite. An architecture missing from the table gets the common layout
(gated MLP, two norms a layer, no biases unless the config asks), stated as an assumption.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from .config import ArchConfig
from .layers import Block, LayerInfo, block_configs

Triple = tuple[str, str, tuple[int, ...]]

ASSUMPTIONS = (
    "MTP layers store their own embedding and output-head copies",
    "experts written fused; parameters per expert = (2 or 3) x hidden x moe_intermediate_size",
)


@dataclass(frozen=True)
class Switch:
    """Whether a projection is biased: fixed by the architecture (no keys), or set by the first of
    ``keys`` the config holds, ``default`` when it holds none (the configuration class's default).
    Which key biases which projection differs by architecture (transformers' modeling files:
    Llama's ``attention_bias`` biases q, k, v and o; Helium's and GLM's only q, k and v; Seed-OSS has
    ``attention_out_bias`` for o; ERNIE 4.5's ``use_bias`` biases every projection)."""

    keys: tuple[str, ...] = ()
    default: bool = False

    def on(self, cfg: ArchConfig) -> bool:
        value = cfg.get(*self.keys) if self.keys else None
        return value if isinstance(value, bool) else self.default


ALWAYS = Switch((), True)
NEVER = Switch()


@dataclass(frozen=True)
class ArchitectureFacts:
    """What every checkpoint of an architecture stores that no config key says."""

    qk_norm: str | None = None  # "head": [head_dim] each; "full": [heads x head_dim], [kv_heads x head_dim]
    # q/k/v biases (MLA: q_a_proj and kv_a_proj_with_mqa) and the output projection's
    qkv_bias: Switch = Switch(("attention_bias", "qkv_bias", "use_qkv_bias"))
    o_bias: Switch = Switch(("attention_bias",))
    norms_per_layer: int = 2
    gated_mlp: bool = True
    sinks: bool = False  # one learned logit per head in every attention layer
    router_bias: bool = False
    expert_bias: bool = False
    output_gate: bool = False  # q_proj also writes a per-channel output gate (Qwen3-Next)
    weightless_qk_norm: bool = False  # use_qk_norm is an L2 norm without weights (Llama 4)
    extra_embedding_rows: int = 0  # rows beyond vocab_size (mllama's 8 image-control tokens)
    fused_qkv: bool = False  # one qkv_proj (Phi-3, DBRX)
    stacked_experts: bool = False  # experts as [experts x width, hidden] matrices (DBRX)
    fused_gate_up: bool = False  # one gate_up_proj (Phi-3)
    split_gdn_proj: bool = False  # Gated DeltaNet's in_proj_qkv / _z / _b / _a stored apart (Qwen3.5)
    never_tied: bool = False  # the class keeps a separate head whatever tie_word_embeddings says
    mlp_bias: Switch = Switch(("mlp_bias",))  # the dense MLP's projections (GPT-2's c_fc / c_proj: always)
    shared_expert_bias: bool = False  # shared experts are biased with the dense MLP (Aria, HY-V3)
    norm_bias: bool = False  # LayerNorms with a bias: every layer norm, the final one, q/k norms
    final_norm: bool = True  # a norm after the last layer (OLMo's non-parametric norms: none)
    head_bias: Switch = NEVER  # the output head is biased (Phi, GPT-J: always), tied or not
    learned_positions: int | None = None  # a position table of max_position_embeddings + this many rows
    embedding_norm: bool = False  # a LayerNorm right after the embedding (BLOOM)
    activation_params: int = 0  # a learned activation's own parameters in each dense MLP (xIELU: 4)
    gated_any_activation: bool = False  # gated whatever the activation (BitNet's squared-ReLU GLU)
    # BitNet's sub-norms: attn_sub_norm (hidden wide) before o_proj, ffn_sub_norm (intermediate) before down_proj
    sub_norms: bool = False
    # Falcon's switches: ``bias`` biases every projection; ``multi_query`` means one KV head unless
    # ``new_decoder_architecture``; ``parallel_attn`` shares one norm (two with num_ln_in_parallel_attn 2)
    falcon_switches: bool = False
    # OPT's switches: enable_bias, layer_norm_elementwise_affine, do_layer_norm_before (a final norm),
    # word_embed_proj_dim (an embedding narrower than the model, projected in and out)
    opt_switches: bool = False
    shared_expert_gate: bool = True  # a sigmoid gate beside a shared expert sized by its own key (Qwen2-MoE)
    fixed_shared_experts: int = (
        0  # shared experts the class always builds, no key saying so (HunYuan's shared_mlp)
    )
    diff_lambdas: bool = False  # Differential attention's four lambda vectors of head_dim (DiffLlama)
    switched_qk_norm: str | None = None  # q/k norms' width when the config switches them on ("full")
    qk_norm_bias: bool = True  # with norm_bias: whether the q/k norms are biased too
    swa_kv_multiplier: int = 1  # sliding-window layers have this many times the KV heads (MiMo-V2)
    swa_sinks: bool = False  # sliding-window layers have one learned sink logit per head
    # keys the class holds but sizes nothing with (Nemotron-H's attention_bias)
    unused_keys: tuple[str, ...] = ()
    # (key, value) the class always builds: another value in the config is a layout it does not build
    # (MPT's no_bias, alibi, expansion_ratio 4), so hubdiff cannot vouch for what it writes out
    builds_only: tuple[tuple[str, object], ...] = ()
    multi_query: bool = False  # multi_query true means one KV head (GPT-BigCode)
    mlp_width_divisor: int = 1  # the dense MLP is intermediate_size / this wide (RecurrentGemma: 2)
    nulls_mean_default: tuple[str, ...] = ()  # keys whose null the class fills with its default
    head_gate: bool = False  # a g_proj output gate per head or per channel, as ``gating`` says (Laguna)
    ffn_auto_adjust: bool = False  # LFM2's block_auto_adjust_ff_dim: the MLP 2/3 as wide, rounded
    # Zamba's stack: a Mamba mixer in every layer and, in the "hybrid" ones, a shared transformer block
    # (attention over [hidden, embedding] and an MLP, stored once per block) through a per-layer linear;
    # 1: Zamba (Mamba-1 with heads, one block), 2: Zamba2 (Mamba-2, num_mem_blocks blocks, LoRA adapters)
    shared_blocks: int = 0
    conv_bias: Switch = Switch(("use_conv_bias", "mamba_conv_bias"), True)  # the Mamba convolution's bias
    mamba_norm: Switch = ALWAYS  # Mamba-2's gated norm before out_proj (Falcon-H1: mamba_rms_norm)
    mamba_out_bias: Switch | None = None  # out_proj's own bias switch (Falcon-H1: projectors_bias)


_QWEN2 = ArchitectureFacts(qkv_bias=ALWAYS, o_bias=NEVER)
_CLASSIC = ArchitectureFacts(gated_mlp=False, mlp_bias=ALWAYS, norm_bias=True)
_GPT2 = dataclasses.replace(_CLASSIC, qkv_bias=ALWAYS, o_bias=ALWAYS, learned_positions=0)
_QKV_ONLY = ArchitectureFacts(o_bias=NEVER)  # attention_bias biases q, k and v, never o (GLM, Helium)
_HEAD_NORM = ArchitectureFacts(qk_norm="head")
_FULL_NORM = ArchitectureFacts(qk_norm="full")
ARCHITECTURE_FACTS: dict[str, ArchitectureFacts] = {
    "qwen2": _QWEN2,
    "qwen2_moe": ArchitectureFacts(qkv_bias=Switch(("qkv_bias",), True), o_bias=NEVER),
    "qwen2_vl_text": _QWEN2,
    "qwen2_5_vl_text": _QWEN2,
    "qwen3": _HEAD_NORM,
    "qwen3_moe": _HEAD_NORM,
    "qwen3_next": ArchitectureFacts(qk_norm="head", output_gate=True),
    "qwen3_5_text": ArchitectureFacts(qk_norm="head", output_gate=True, split_gdn_proj=True),
    "qwen3_5_moe_text": ArchitectureFacts(qk_norm="head", output_gate=True, split_gdn_proj=True),
    "phi3": ArchitectureFacts(fused_qkv=True, fused_gate_up=True),
    "glm4_moe": ArchitectureFacts(router_bias=True, o_bias=NEVER),
    "llama4_text": ArchitectureFacts(weightless_qk_norm=True),
    "qwen3_vl_text": _HEAD_NORM,
    "qwen3_vl_moe_text": _HEAD_NORM,
    "exaone4": _HEAD_NORM,
    "hunyuan_v1_moe": ArchitectureFacts(qk_norm="head", fixed_shared_experts=1),
    "hunyuan_v1_dense": _HEAD_NORM,
    "gemma2": ArchitectureFacts(norms_per_layer=4),
    "gemma3_text": ArchitectureFacts(qk_norm="head", norms_per_layer=4),
    "olmo2": _FULL_NORM,
    "olmo3": _FULL_NORM,
    "olmo_hybrid": _FULL_NORM,  # its attention layers' q/k norms are OLMo 3's, full width
    "bitnet": ArchitectureFacts(gated_any_activation=True, sub_norms=True),
    "dots1": ArchitectureFacts(
        qk_norm="head", router_bias=True
    ),  # Dots1TopkRouter keeps its e_score_correction_bias
    "olmoe": _FULL_NORM,
    "minimax_m2": ArchitectureFacts(qk_norm="full", router_bias=True),
    "gpt_oss": ArchitectureFacts(sinks=True, router_bias=True, expert_bias=True),
    "nemotron": ArchitectureFacts(gated_mlp=False, norm_bias=True),  # LayerNorm1P: weight and bias
    # use_bias biases q, k, v, o, the dense and shared MLPs and the head (modeling_ernie4_5_moe.py)
    "ernie4_5_moe": ArchitectureFacts(
        router_bias=True,
        qkv_bias=Switch(("use_bias",)),
        o_bias=Switch(("use_bias",)),
        mlp_bias=Switch(("use_bias",)),
        shared_expert_bias=True,
        head_bias=Switch(("use_bias",)),
    ),
    "mllama_text_model": ArchitectureFacts(extra_embedding_rows=8),
    "dbrx": ArchitectureFacts(fused_qkv=True, stacked_experts=True),
    "glm4": ArchitectureFacts(norms_per_layer=4, o_bias=NEVER, fused_gate_up=True),
    "glm4v_text": ArchitectureFacts(
        qkv_bias=ALWAYS, o_bias=NEVER, norms_per_layer=4, fused_gate_up=True, unused_keys=("attention_bias",)
    ),
    "nemotron_h": ArchitectureFacts(
        gated_mlp=False,
        router_bias=True,
        qkv_bias=NEVER,
        o_bias=NEVER,
        shared_expert_bias=True,
        unused_keys=("attention_bias",),
    ),
    "starcoder2": ArchitectureFacts(
        gated_mlp=False,
        norm_bias=True,
        qkv_bias=Switch(("use_bias",), True),
        o_bias=Switch(("use_bias",), True),
        mlp_bias=Switch(("use_bias",), True),
        builds_only=(("mlp_type", "default"), ("norm_type", "layer_norm")),
    ),
    # GPT-2's layout with one fused c_attn, whose keys and values have one head under multi_query
    "gpt_bigcode": dataclasses.replace(_GPT2, fused_qkv=True, multi_query=True),
    # MPT as transformers builds it: ALiBi (no position table), one Wqkv, a plain 4x MLP, nothing biased
    # (LayerNorms included); the llm-foundry switches that build otherwise are not vouched for
    "mpt": ArchitectureFacts(
        fused_qkv=True,
        gated_mlp=False,
        qkv_bias=NEVER,
        o_bias=NEVER,
        mlp_bias=NEVER,
        unused_keys=("alibi_bias_max", "learned_pos_emb", "norm_type"),
        builds_only=(
            ("no_bias", True),
            ("alibi", True),
            ("qk_ln", False),
            ("attn_type", "multihead_attention"),
            ("expansion_ratio", 4),
        ),
    ),
    "mimo_v2_flash": ArchitectureFacts(router_bias=True, swa_kv_multiplier=2, swa_sinks=True, o_bias=NEVER),
    "apertus": ArchitectureFacts(qk_norm="head", gated_mlp=False, activation_params=4),
    # the classic layouts: LayerNorms with biases, plain (not gated) biased MLPs, from each modeling file
    "gpt2": _GPT2,
    "gpt-sw3": _GPT2,
    # GPT-Neo: GPT-2's layout without q/k/v biases; local layers attend within window_size; a null
    # intermediate_size means 4 x hidden; num_heads is read as num_attention_heads
    "gpt_neo": dataclasses.replace(
        _GPT2, qkv_bias=NEVER, nulls_mean_default=("intermediate_size",), unused_keys=("num_heads",)
    ),
    "gpt_neox": _CLASSIC,
    "phi": dataclasses.replace(_CLASSIC, qkv_bias=ALWAYS, o_bias=ALWAYS, norms_per_layer=1, head_bias=ALWAYS),
    "gptj": dataclasses.replace(_CLASSIC, norms_per_layer=1, head_bias=ALWAYS),
    "codegen": dataclasses.replace(_CLASSIC, norms_per_layer=1, head_bias=ALWAYS),
    "bloom": dataclasses.replace(_CLASSIC, qkv_bias=ALWAYS, o_bias=ALWAYS, embedding_norm=True),
    "persimmon": dataclasses.replace(_CLASSIC, qkv_bias=ALWAYS, o_bias=ALWAYS),
    "stablelm": ArchitectureFacts(norm_bias=True, switched_qk_norm="full", qk_norm_bias=False),
    "cohere": ArchitectureFacts(norms_per_layer=1),
    "cohere2": ArchitectureFacts(norms_per_layer=1),
    "cohere2_moe": ArchitectureFacts(norms_per_layer=1),
    "olmo": ArchitectureFacts(norms_per_layer=0, final_norm=False),
    "falcon": ArchitectureFacts(gated_mlp=False, norm_bias=True, falcon_switches=True),
    "opt": ArchitectureFacts(gated_mlp=False, learned_positions=2, opt_switches=True),
    "nanochat": ArchitectureFacts(norms_per_layer=0, final_norm=False),  # weightless RMS norms
    "flex_olmo": _FULL_NORM,
    "hyperclovax": ArchitectureFacts(norms_per_layer=4),
    "jais2": ArchitectureFacts(norm_bias=True, gated_mlp=False),
    "phimoe": ArchitectureFacts(norm_bias=True, head_bias=Switch(("lm_head_bias",))),
    "mellum": _HEAD_NORM,
    "exaone_moe": ArchitectureFacts(qk_norm="head", router_bias=True),
    "glm": _QKV_ONLY,
    "seed_oss": ArchitectureFacts(o_bias=Switch(("attention_out_bias",))),
    "granite_swa": ArchitectureFacts(sinks=True),
    "lara_mini": ArchitectureFacts(qk_norm="head", split_gdn_proj=True, shared_expert_gate=False),
    "flint": ArchitectureFacts(qk_norm="head", sinks=True, shared_expert_gate=False),
    "hy_v3": ArchitectureFacts(qk_norm="head", router_bias=True, shared_expert_bias=True),
    "kolibri1": ArchitectureFacts(
        qk_norm="head", norms_per_layer=4, router_bias=True, shared_expert_gate=False
    ),
    "diffllama": ArchitectureFacts(diff_lambdas=True),
    # Griffin: RG-LRU blocks and local attention (o_proj always biased), biased gated MLPs half as wide
    # as intermediate_size
    "recurrent_gemma": ArchitectureFacts(o_bias=ALWAYS, mlp_bias=ALWAYS, mlp_width_divisor=2),
    "zamba": ArchitectureFacts(shared_blocks=1, qkv_bias=NEVER, o_bias=NEVER, mlp_bias=NEVER),
    "zamba2": ArchitectureFacts(
        shared_blocks=2,
        qkv_bias=NEVER,
        o_bias=NEVER,
        mlp_bias=Switch(("add_bias_linear",)),
        fused_gate_up=True,
        conv_bias=ALWAYS,  # the Mamba-2 convolution is biased whatever use_conv_bias says
        unused_keys=("kv_channels", "num_query_groups", "use_conv_bias"),
    ),
    # RWKV-4: LayerNorms with biases, one more after the embedding (the first block's pre_ln)
    "rwkv": ArchitectureFacts(norm_bias=True, embedding_norm=True),
    # Kimi Linear: KDA beside MLA, a router bias in every MoE layer, a head of its own even when tied
    "kimi_linear": ArchitectureFacts(router_bias=True, never_tied=True),
    "laguna": ArchitectureFacts(qk_norm="head", router_bias=True, shared_expert_gate=False, head_gate=True),
    # LFM2: short-convolution layers beside attention with per-head q/k norms, gated MLPs whose width
    # block_auto_adjust_ff_dim narrows
    "lfm2": ArchitectureFacts(
        qk_norm="head", ffn_auto_adjust=True, unused_keys=("full_attn_idxs", "conv_bias", "conv_L_cache")
    ),
    # Falcon-H1: Mamba-2 beside attention in every layer; the gated norm only with mamba_rms_norm, the
    # out_proj bias with projectors_bias; muP multipliers scale activations, they size nothing
    "falcon_h1": ArchitectureFacts(
        mamba_norm=Switch(("mamba_rms_norm",)),
        mamba_out_bias=Switch(("projectors_bias",)),
        unused_keys=("mlp_multipliers", "ssm_multipliers", "mamba_norm_before_gate"),
    ),
    "helium": _QKV_ONLY,
    "solar_open": _QKV_ONLY,
    "sarvam_moe": _QKV_ONLY,
    "aria_text": ArchitectureFacts(shared_expert_bias=True),
    "ernie4_5": ArchitectureFacts(
        qkv_bias=Switch(("use_bias",)), o_bias=Switch(("use_bias",)), mlp_bias=Switch(("use_bias",))
    ),
    "glm4v_moe_text": ArchitectureFacts(router_bias=True, o_bias=NEVER),
    "openai-gpt": dataclasses.replace(_GPT2, final_norm=False),  # post-LN: no norm after the last layer
    "granitemoe_swa": ArchitectureFacts(sinks=True),
}
# multimodal releases name the outer model; their text model's facts apply (read without transformers)
for _outer, _text in (
    ("qwen2_vl", "qwen2_vl_text"),
    ("qwen2_5_vl", "qwen2_5_vl_text"),
    ("qwen3_vl", "qwen3_vl_text"),
    ("qwen3_vl_moe", "qwen3_vl_moe_text"),
    ("qwen3_5", "qwen3_5_text"),
    ("qwen3_5_moe", "qwen3_5_moe_text"),
    ("gemma3", "gemma3_text"),
    ("llama4", "llama4_text"),
    ("glm4v", "glm4v_text"),
    ("mllama", "mllama_text_model"),
    ("glm4v_moe", "glm4v_moe_text"),
):
    ARCHITECTURE_FACTS[_outer] = ARCHITECTURE_FACTS[_text]
# routers that always keep an e_score_correction_bias buffer, whatever topk_method says
# the DSA models' configs hold mlp_bias, which their MLPs ignore; DeepSeek-V2 biases its shared experts
for _model_type in ("deepseek_v32", "glm_moe_dsa"):
    ARCHITECTURE_FACTS[_model_type] = ArchitectureFacts(mlp_bias=NEVER, unused_keys=("mlp_bias",))
ARCHITECTURE_FACTS["deepseek_v2"] = ArchitectureFacts(shared_expert_bias=True)
for _model_type in (
    "deepseek_v3",
    "deepseek_v32",
    "glm_moe_dsa",
    "glm4_moe_lite",
    "kimi_k25",
    "sarvam_mla",
    "sarvam_moe",
    "solar_open",
    "axk1",
):
    ARCHITECTURE_FACTS[_model_type] = dataclasses.replace(
        ARCHITECTURE_FACTS.get(_model_type, ArchitectureFacts()), router_bias=True
    )
for _model_type in ("nemotron_h", "mllama_text_model", "mllama"):  # no tied-weights keys in the class
    ARCHITECTURE_FACTS[_model_type] = dataclasses.replace(ARCHITECTURE_FACTS[_model_type], never_tied=True)
_COMMON = ArchitectureFacts()
_NON_GATED_ACTS = frozenset({"relu2", "relu_squared", "squared_relu"})


def facts(cfg: ArchConfig) -> tuple[ArchitectureFacts, bool]:
    """The architecture's facts, and whether they came from the table (False: the common layout)."""
    for model_type in (cfg.model_type, str(cfg.raw.get("model_type") or "")):
        if model_type in ARCHITECTURE_FACTS:
            return ARCHITECTURE_FACTS[model_type], True
    return _COMMON, False


def _gated(cfg: ArchConfig, arch: ArchitectureFacts) -> bool:
    act = cfg.get("mlp_hidden_act", "hidden_act", "activation_function")
    if arch.gated_any_activation:
        return True
    return arch.gated_mlp and not (isinstance(act, str) and act.lower() in _NON_GATED_ACTS)


def _qk_norm(cfg: ArchConfig, arch: ArchitectureFacts) -> str | None:
    switched_on = cfg.get("use_qk_norm", "qk_layernorm", "qk_norm") is True
    width = "full" if cfg.get("qk_norm_type") == "per_layer" else arch.switched_qk_norm or "head"
    if arch.qk_norm:
        return arch.qk_norm
    return width if switched_on and not arch.weightless_qk_norm else None


def synthesize(cfg: ArchConfig, layers: list[LayerInfo]) -> list[Triple]:
    dt = "BF16"
    h = cfg.hidden_size or 0
    vocab = cfg.vocab_size or 0
    arch, _ = facts(cfg)
    for switch in (arch.qkv_bias, arch.o_bias, arch.mlp_bias, arch.head_bias):
        switch.on(
            cfg
        )  # read even where no layer of its kind is written (a Mamba-only stack's attention_bias)
    norm_parts: tuple[str, ...] = ("weight", "bias") if arch.norm_bias else ("weight",)
    width, final_norm = h, arch.final_norm
    if arch.opt_switches:
        affine = cfg.get("layer_norm_elementwise_affine") is not False
        norm_parts = ("weight", "bias") if affine else ()
        final_norm = cfg.get("do_layer_norm_before") is not False
        width = cfg.number("word_embed_proj_dim", default=h) or h
    out: list[Triple] = [("model.embed_tokens.weight", dt, (vocab + arch.extra_embedding_rows, width))]
    if width != h:
        out += [("model.project_in.weight", dt, (h, width)), ("model.project_out.weight", dt, (width, h))]
    if final_norm:
        out += [(f"model.norm.{part}", dt, (h,)) for part in norm_parts]
    if arch.learned_positions is not None:
        out.append(("model.embed_positions.weight", dt, ((cfg.max_context or 0) + arch.learned_positions, h)))
    if arch.embedding_norm:
        out += [(f"model.embed_layernorm.{part}", dt, (h,)) for part in ("weight", "bias")]
    if not cfg.tied_embeddings or arch.never_tied:
        out.append(("lm_head.weight", dt, (vocab, width)))
    if arch.head_bias.on(cfg):
        out.append(("lm_head.bias", dt, (vocab,)))
    blocks = block_configs(cfg)
    if arch.shared_blocks:
        out += _zamba(cfg, arch, layers, h, dt)
    for layer in layers if not arch.shared_blocks else ():
        p = f"model.layers.{layer.index}."
        block = blocks[layer.index] if blocks and layer.index < len(blocks) else None
        attn = _attention(cfg, arch, layer, p, h, dt, block)
        mlp = _mlp(cfg, arch, layer, p, h, dt, block)
        norms = _norms_per_layer(cfg, arch) if attn and mlp else 1 if attn or mlp else 0
        if block is not None:
            norms = int(bool(attn)) + int(bool(mlp))
        names = (
            "input_layernorm",
            "post_attention_layernorm",
            "pre_feedforward_layernorm",
            "post_feedforward_layernorm",
        )
        out += [(f"{p}{n}.{part}", dt, (h,)) for n in names[:norms] for part in norm_parts]
        out += attn + mlp
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


def layer_heads(cfg: ArchConfig, layer: LayerInfo) -> tuple[int, int, int, int]:
    """(query heads, KV heads, key head_dim, value head_dim) of one attention layer: sliding-window
    layers may have their own (MiMo-V2-style ``swa_*`` keys)."""
    heads = cfg.num_heads or 0
    kv = cfg.num_kv_heads or heads
    hd = cfg.head_dim or 0
    vd = cfg.v_head_dim or hd
    per_layer = cfg.int_list("num_attention_heads_per_layer")  # Laguna: query heads layer by layer
    if per_layer is not None and layer.index < len(per_layer) and per_layer[layer.index] > 0:
        heads = per_layer[layer.index]
    if (
        layer.attention == "swa"
        and cfg.number("swa_num_attention_heads", "swa_num_key_value_heads") is not None
    ):
        heads = cfg.number("swa_num_attention_heads", default=heads) or heads
        kv = cfg.number("swa_num_key_value_heads", default=kv) or kv
        hd = cfg.number("swa_head_dim", default=hd) or hd
        vd = cfg.number("swa_v_head_dim", default=vd) or vd
    elif layer.attention == "swa":
        kv *= facts(cfg)[0].swa_kv_multiplier
    arch = facts(cfg)[0]
    if arch.multi_query:  # GPT-BigCode: one KV head or as many as queries, whatever num_key_value_heads says
        kv = 1 if cfg.get("multi_query") is True else heads
    if (
        arch.falcon_switches
        and cfg.get("multi_query") is True
        and cfg.get("new_decoder_architecture") is not True
    ):
        kv = 1
    return heads, kv, hd, vd


def _falcon_bias(cfg: ArchConfig, arch: ArchitectureFacts) -> bool:
    """Falcon's ``bias`` or OPT's ``enable_bias``: every projection biased."""
    if arch.opt_switches:
        return cfg.get("enable_bias") is not False
    return arch.falcon_switches and cfg.get("bias") is True


def _norms_per_layer(cfg: ArchConfig, arch: ArchitectureFacts) -> int:
    if not arch.falcon_switches:
        return arch.norms_per_layer
    parallel = cfg.get("parallel_attn") is True
    two = cfg.get("num_ln_in_parallel_attn") == 2 or (
        cfg.get("num_ln_in_parallel_attn") is None and cfg.get("new_decoder_architecture") is True
    )
    return 1 if parallel and not two else 2


# -- attention and recurrent mixers ---------------------------------------------------------------
def _attention(
    cfg: ArchConfig, arch: ArchitectureFacts, layer: LayerInfo, p: str, h: int, dt: str, block: Block | None
) -> list[Triple]:
    a = p + "self_attn."
    kind = layer.attention
    if block is not None and block.attention != "attention":
        return [(p + "attn_linear.weight", dt, (h, h))] if block.attention == "linear" else []
    if kind in ("mla", "dsa"):
        return _mla(cfg, arch, layer, a, h, dt)
    if kind == "kda":
        return _kda(cfg, a, h, dt)
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
        return [
            (la + "qkv_proj.weight", dt, (3 * heads * hd, h)),
            (la + "output_gate.weight", dt, (heads * hd, h)),
            (la + "norm.weight", dt, (heads * hd,)),
            (la + "out_proj.weight", dt, (h, heads * hd)),
        ]
    if kind == "none":
        return []
    heads, kv, hd, vd = layer_heads(cfg, layer)
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
    if arch.o_bias.on(cfg) or _falcon_bias(cfg, arch):
        out.append((a + "o_proj.bias", dt, (h,)))
    gating = cfg.get("gating") if arch.head_gate else None
    if gating is True or gating == "per-head":  # Laguna's softplus output gate, one a head
        out.append((a + "g_proj.weight", dt, (heads, h)))
    elif gating == "per-element":
        out.append((a + "g_proj.weight", dt, (heads * hd, h)))
    if arch.diff_lambdas:
        out += [(a + f"lambda_{n}", dt, (hd,)) for n in ("q1", "k1", "q2", "k2")]
    norm = _qk_norm(cfg, arch)
    parts = ("weight", "bias") if arch.norm_bias and arch.qk_norm_bias else ("weight",)
    if norm == "head":
        out += [(a + f"{n}.{part}", dt, (hd,)) for n in ("q_norm", "k_norm") for part in parts]
    elif norm == "full":
        out += [(a + f"q_norm.{part}", dt, (heads * hd,)) for part in parts]
        out += [(a + f"k_norm.{part}", dt, (kv * hd,)) for part in parts]
    if (
        arch.sinks
        or (layer.attention == "swa" and cfg.get("add_swa_attention_sink_bias") is True)
        or (layer.attention == "swa" and arch.swa_sinks and cfg.get("add_swa_attention_sink_bias") is None)
        or (layer.attention != "swa" and cfg.get("add_full_attention_sink_bias") is True)
    ):
        out.append((a + "sinks", dt, (heads,)))
    if layer.parallel_ssm:
        out += _mamba(cfg, p + "mamba.", h, dt)
    return out


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
    heads = cfg.num_heads or 0
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
    if arch.qkv_bias.on(cfg):  # DeepSeek-V3: attention_bias biases the two down-projections and o_proj
        out += [(a + "kv_a_proj_with_mqa.bias", dt, (kv_lora + rope,))]
        out += [(a + "q_a_proj.bias", dt, (q_lora,))] if q_lora else []
    if arch.o_bias.on(cfg):
        out.append((a + "o_proj.bias", dt, (h,)))
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
    return out


def _kda(cfg: ArchConfig, a: str, h: int, dt: str) -> list[Triple]:
    lin = cfg.linear_attn
    nh = lin.get("num_heads") or cfg.num_heads or 0
    dim = lin.get("head_dim") or cfg.head_dim or 0
    kernel = lin.get("short_conv_kernel_size") or 4
    proj = nh * dim
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


def dense_intermediate(cfg: ArchConfig) -> int:
    """The dense MLP's width: Llama 4 names it intermediate_size_mlp, its intermediate_size being the experts'."""
    h = cfg.hidden_size or 0
    if cfg.num_experts and cfg.number("intermediate_size_mlp"):
        return cfg.number("intermediate_size_mlp") or 0
    return cfg.number("intermediate_size", "ffn_hidden_size", "n_inner", "ffn_dim", default=4 * h) or 0


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
        if arch.ffn_auto_adjust and cfg.get("block_auto_adjust_ff_dim") is not False:
            inter = _auto_adjusted(cfg, inter)
        if arch.sub_norms:
            norms = [
                (p + "self_attn.attn_sub_norm.weight", dt, (h,)),
                (m + "ffn_sub_norm.weight", dt, (inter,)),
            ]
            return _dense(m, h, inter, dt, gated, bias) + norms
        if arch.activation_params:
            act = [(m + "act_fn.parameters", dt, (arch.activation_params,))]
            return _dense(m, h, inter, dt, gated, bias) + act
        if arch.fused_gate_up and gated and not bias:
            return [(m + "gate_up_proj.weight", dt, (2 * inter, h)), (m + "down_proj.weight", dt, (h, inter))]
        return _dense(m, h, inter, dt, gated, bias)
    experts = cfg.num_experts or 0
    inter = (
        cfg.number("moe_intermediate_size", "expert_intermediate_size", "ffn_hidden_size", default=0)
        or cfg.number("intermediate_size", default=0)
        or 0
    )
    latent = cfg.number("moe_latent_size")
    eh = latent or cfg.number("routed_expert_hidden_size", default=h) or h
    out: list[Triple] = [(m + "gate.weight", dt, (experts, h))]
    router_bias = cfg.get("use_routing_bias", "moe_router_enable_expert_bias") is True or arch.router_bias
    if cfg.get("topk_method") == "noaux_tc" or (router_bias and not arch.expert_bias):
        out.append((m + "gate.e_score_correction_bias", "F32", (experts,)))
    if arch.router_bias and arch.expert_bias:  # gpt-oss: a plain linear router with a bias
        out.append((m + "gate.bias", dt, (experts,)))
    if eh != h:  # latent MoE: experts work in a narrower space entered and left by two projections
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
            default=0,
        )
        or (cfg.number("intermediate_size", default=0) if cfg.number("intermediate_size_mlp") else 0)
        or inter * n_shared
    )
    if shared_inter:
        out += _dense(m + "shared_experts.", h, shared_inter, dt, gated, bias and arch.shared_expert_bias)
        if cfg.number("shared_expert_intermediate_size") and arch.shared_expert_gate:
            out.append((m + "shared_expert_gate.weight", dt, (1, h)))
    return out


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
        family.startswith("qwen")
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
