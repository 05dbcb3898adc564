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

from .config import ArchConfig
from .estimate_audio import audio
from .estimate_encdec import bart_encoder, bert_cross_attention, is_composite, udop
from .estimate_facts import ARCHITECTURE_FACTS, ArchitectureFacts, Triple, facts, layer_heads
from .estimate_gemma import gemma_layer_extras, gemma_model_extras
from .estimate_inkling import inkling_head_rows, inkling_layer, inkling_model_extras
from .estimate_mixers import _attention, _zamba, mamba_shape
from .estimate_mlp import _mlp, dense_intermediate
from .estimate_vision import _vision, vision_kind
from .estimate_vq import vq_tokenizer
from .layers import LayerInfo, block_configs, layer_census

# what other modules take from here, defined beside it
__all__ = [
    "ARCHITECTURE_FACTS",
    "ASSUMPTIONS",
    "Triple",
    "action_expert_parts",
    "facts",
    "layer_heads",
    "mamba_shape",
    "synthesize",
    "vision_kind",
]

ASSUMPTIONS = (
    "MTP layers store their own embedding and output-head copies",
    "experts written fused; parameters per expert = (2 or 3) x hidden x moe_intermediate_size",
)


def synthesize(cfg: ArchConfig, layers: list[LayerInfo]) -> list[Triple]:
    dt = "BF16"
    h = cfg.hidden_size or 0
    vocab = cfg.vocab_size or 0
    arch, _ = facts(cfg)
    outer_facts = ARCHITECTURE_FACTS.get(str(cfg.raw.get("model_type")))
    if outer_facts is not None and outer_facts.action_expert:
        return _action_expert_model(cfg, outer_facts, layers, dt)
    if arch.bert_decoder:
        return _bert_decoder(cfg, len(layers), h, vocab, dt) + _vision(cfg, h)
    if is_composite(cfg) and cfg.model_type == "bert":  # BertLMHeadModel under a VisionEncoderDecoder
        types = cfg.number("type_vocab_size", default=2) or 0
        cross = bert_cross_attention(cfg)
        return _bert_decoder(cfg, len(layers), h, vocab, dt, "decoder.", types, cross) + _vision(cfg, h)
    if arch.t5_decoder:
        return _t5_decoder(cfg, len(layers), h, vocab, dt) + _vision(cfg, h)
    if arch.udop_model:
        return udop(cfg, len(layers), h, vocab, dt)
    if arch.codebook_decoder:
        return _codebook_decoder(cfg, arch, len(layers), h, vocab, dt) + _vision(cfg, h)
    for switch in (arch.qkv_bias, arch.o_bias, arch.mlp_bias, arch.head_bias):
        switch.on(
            cfg
        )  # read even where no layer of its kind is written (a Mamba-only stack's attention_bias)
    norm_parts: tuple[str, ...] = ("weight", "bias") if arch.norm_bias else ("weight",)
    if arch.norm_bias_switch is not None:
        norm_parts = ("weight", "bias") if arch.norm_bias_switch.on(cfg) else ("weight",)
    width, final_norm = h, arch.final_norm
    if arch.opt_switches:
        affine = cfg.get("layer_norm_elementwise_affine") is not False
        norm_parts = ("weight", "bias") if affine else ()
        final_norm = cfg.get("do_layer_norm_before") is not False
        width = cfg.number("word_embed_proj_dim", default=h) or h
    rows = vocab + arch.extra_embedding_rows + (cfg.number(arch.extra_rows_key or "", default=0) or 0)
    out: list[Triple] = [("model.embed_tokens.weight", dt, (rows, width))]
    if width != h:
        out += [("model.project_in.weight", dt, (h, width)), ("model.project_out.weight", dt, (width, h))]
    if final_norm:
        out += [
            (f"model.norm.{part}", dt, (h,))
            for part in (("weight",) if arch.unbiased_final_norm else norm_parts)
        ]
    if arch.learned_positions is not None and arch.learned_positions_switch.on(cfg):
        out.append(("model.embed_positions.weight", dt, ((cfg.max_context or 0) + arch.learned_positions, h)))
    if arch.residual_scaling:  # ZAYA: a scale and a bias on the embedded input
        out += [(f"model.input_hidden_states_{n}", dt, (h,)) for n in ("scale", "bias")]
    if arch.lerope_ssmax:  # LeRoPE: one learned alpha per rotary frequency, for the whole model
        out.append(
            ("model.rotary_emb.alpha", "F32", ((cfg.number("qk_rope_head_dim", default=0) or 0) // 2,))
        )
    if arch.cpm_embeddings:
        prompts = (cfg.number("prompt_types", default=0) or 0) * (cfg.number("prompt_length", default=0) or 0)
        segments = cfg.number("segment_types", default=0) or 0
        buckets = cfg.number("position_bias_num_buckets", default=0) or 0
        out[0] = ("model.embed_tokens.weight", dt, (vocab + prompts, width))
        out += [
            ("model.segment_embedding.weight", dt, (segments, h)),
            (
                "model.position_bias.relative_attention_bias",
                dt,
                (segments * segments + buckets, cfg.num_heads or 0),
            ),
        ]
    if arch.segment_embeddings:
        out.append(("model.segment_emb.weight", dt, (arch.segment_embeddings, h)))
    if arch.xlnet_attention:  # the embedding of a masked (to-be-predicted) position
        out.append(("transformer.mask_emb", dt, (1, 1, h)))
    if arch.embedding_norm:
        out += [(f"model.embed_layernorm.{part}", dt, (h,)) for part in ("weight", "bias")]
    if arch.embedding_norm_switch.on(cfg):  # TrOCR's layernorm_embedding
        out += [(f"model.layernorm_embedding.{part}", dt, (h,)) for part in norm_parts]
    if arch.bart_encoder:  # Florence-2's text encoder
        out += bart_encoder(cfg, h, vocab, dt)
    if arch.embeddings_norm:
        out += [(f"model.embeddings.norm.{part}", dt, (h,)) for part in norm_parts]
    if arch.prediction_head is not None:
        out.append(("lm_head.dense.weight", dt, (h, h)))
        out += [("lm_head.dense.bias", dt, (h,))] if arch.prediction_head.on(cfg) else []
        out += [(f"lm_head.norm.{part}", dt, (h,)) for part in norm_parts]
    if arch.ngpt_scales:  # Dory's learned per-token logit scale, beside the head whether tied or not
        out.append(("lm_head.logit_scale", dt, (vocab,)))
    if arch.gated_residual_streams:  # Qwen4-Exp's streams mixed into one before the head
        out += _gated_residual(cfg, "model.hyper_connection_mixer.", h, dt, inject=False)
    if arch.hrm_stacks:  # the L stream's initial state, added to the input in every cycle
        out.append(("model.z_L_init", dt, (h,)))
    # a head sized by the outer config's keys (the outer model_type's facts: its text model has its own)
    outer = ARCHITECTURE_FACTS.get(str(cfg.raw.get("model_type")), arch)
    outer_head = outer.outer_head
    if (not cfg.tied_embeddings or arch.never_tied) and outer_head:
        outer_vocab, outer_width = cfg.raw.get("vocab_size"), cfg.raw.get("hidden_size")
        head_rows = outer_vocab if type(outer_vocab) is int and 0 < outer_vocab <= vocab * 4 else vocab
        head_cols = outer_width if type(outer_width) is int and 0 < outer_width <= width * 4 else width
        out.append(("lm_head.weight", dt, (head_rows, head_cols)))
    elif not cfg.tied_embeddings or arch.never_tied or outer.never_tied:  # Muse Spark's outer class: never
        out.append(("lm_head.weight", dt, (inkling_head_rows(cfg, arch, vocab), width)))
    if arch.head_bias.on(cfg):
        out.append(("lm_head.bias", dt, (vocab,)))
        if arch.untied_head_bias_twice and not cfg.tied_embeddings:
            out.append(("lm_head.decoder.bias", dt, (vocab,)))
    if ARCHITECTURE_FACTS.get(str(cfg.raw.get("model_type")), arch).drafter_projections:
        out += _drafter_projections(cfg, h, dt)
    blocks = block_configs(cfg)
    if arch.gemma_stack:
        out += gemma_model_extras(cfg, sum(1 for x in layers if not x.mtp), h, dt)
    if arch.shared_blocks:
        out += _zamba(cfg, arch, layers, h, dt)
    if arch.inkling:
        out += inkling_model_extras(cfg, arch, h, dt)
    for layer in layers if not arch.shared_blocks else ():
        p = f"model.layers.{layer.index}."
        block = blocks[layer.index] if blocks and layer.index < len(blocks) else None
        if arch.sublayers > 1 and not layer.mtp:
            out += _sublayers(cfg, arch, layer, p, h, dt, norm_parts)
            continue
        if arch.inkling and not layer.mtp:
            out += inkling_layer(cfg, arch, layer, p, h, dt)
            continue
        attn = _attention(cfg, arch, layer, p, h, dt, block)
        mlp = _mlp(cfg, arch, layer, p, h, dt, block)
        if arch.hrm_stacks:
            out += _hrm_blocks(cfg, arch, attn + mlp, p, dt)
            continue
        norms = _norms_per_layer(cfg, arch) if attn and mlp else 1 if attn or mlp else 0
        if block is not None:
            norms = int(bool(attn)) + int(bool(mlp))
        names: tuple[str, ...] = (
            "input_layernorm",
            "post_attention_layernorm",
            "pre_feedforward_layernorm",
            "post_feedforward_layernorm",
        )
        if arch.no_first_attention_norm and layer.index == 0 and attn:
            names = names[1:]  # the embedding's norm stands in for the first layer's
            norms -= 1
        out += [(f"{p}{n}.{part}", dt, (h,)) for n in names[:norms] for part in norm_parts]
        if arch.gated_norms:  # A.X-K2: the norm before attention, and before an MoE block, gated
            rank = cfg.number("gated_norm_rank", default=0) or 0
            for n in names[: 2 if layer.mlp == "moe" else 1]:
                out += [(f"{p}{n}.W_down.weight", dt, (rank, h)), (f"{p}{n}.W_up.weight", dt, (h, rank))]
        out += attn + mlp
        if arch.encoder_attention and attn:
            out += _encoder_attention(cfg, p, h, dt, norm_parts)
        if arch.ngpt_scales:
            out += _ngpt_scales(cfg, layer, p, h, dt, bool(attn), bool(mlp))
        if arch.gated_residual_streams:
            out += _qsa_indexer(cfg, layer, p, h, dt)
            for part in ("attn_hyper_connection.", "mlp_hyper_connection."):
                out += _gated_residual(cfg, p + part, h, dt, inject=True)
        if arch.gemma_stack:
            out += gemma_layer_extras(cfg, p, h, dt)
        if arch.residual_scaling:  # ZAYA's, after attention and after the MLP
            for where in ("post_attention_residual_scale.", "post_mlp_residual_scale."):
                out += [
                    (p + where + n, dt, (h,))
                    for n in ("hidden_states_scale", "hidden_states_bias", "residual_scale", "residual_bias")
                ]
        # Ergo's and Muse Spark's, after attention and after the MLP
        out += [(p + n, "F32", (h,)) for n in arch.residual_gates]
        if arch.residual_weights:  # Doge's, after attention and after the MLP
            out += [(p + n, dt, (h,)) for n in ("input_residual", "post_attention_residual")]
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
        mix, width = (2 if arch.hc_pre_post_only else 2 + hc) * hc, hc * h
        scales = 2 if arch.hc_pre_post_only else 3
        for layer in layers:
            if layer.mtp:
                continue
            p = f"model.layers.{layer.index}."
            for part in ("attn", "ffn"):
                out += [
                    (f"{p}hc_{part}_fn", "F32", (mix, width)),
                    (f"{p}hc_{part}_base", "F32", (mix,)),
                    (f"{p}hc_{part}_scale", "F32", (scales,)),
                ]
        out += (
            [
                ("model.hc_head_fn", "F32", (hc, width)),
                ("model.hc_head_base", "F32", (hc,)),
                ("model.hc_head_scale", "F32", (1,)),
            ]
            if not arch.hc_mean_head
            else []
        )
    out += _vision(cfg, h)
    out += audio(cfg, h)
    if arch.vq_tokenizer:
        out += vq_tokenizer(cfg)
    if arch.diffusion_decoder:
        out += _diffusion_decoder(cfg, layers, h, dt, out)
    return out


def _encoder_attention(cfg: ArchConfig, p: str, h: int, dt: str, norm_parts: tuple[str, ...]) -> list[Triple]:
    """A BART-style decoder layer's cross-attention (TrOCR's encoder_attn): its queries and output over the
    decoder's width, its keys and values from the encoder's states, cross_attention_hidden_size wide (the
    decoder's own width when null), every projection biased, a LayerNorm of its own before it."""
    encoder = cfg.number("cross_attention_hidden_size", default=h) or h
    a = p + "encoder_attn."
    out: list[Triple] = []
    for name, cols in (("q_proj", h), ("k_proj", encoder), ("v_proj", encoder), ("out_proj", h)):
        out += [(f"{a}{name}.weight", dt, (h, cols)), (f"{a}{name}.bias", dt, (h,))]
    return out + [(f"{p}encoder_attn_layer_norm.{part}", dt, (h,)) for part in norm_parts]


def _bert_decoder(
    cfg: ArchConfig,
    depth: int,
    h: int,
    vocab: int,
    dt: str,
    t: str = "text_decoder.",
    token_types: int = 0,
    cross: bool | None = None,
) -> list[Triple]:
    """BLIP's text decoder (modeling_blip_text.py): BERT's word and position embeddings with a LayerNorm;
    layers of biased query/key/value and an output dense layer with its LayerNorm, the same again as
    cross-attention whose keys and values come from encoder_hidden_size (when is_decoder, as the class
    builds it), a biased intermediate and output dense layer with a LayerNorm; no final norm. The head
    transforms (dense, LayerNorm), then projects with the embedding (or its own weight, untied) and a
    bias of its own, which the untied decoder keeps apart. BertLMHeadModel's (a VisionEncoderDecoder's
    decoder, under ``t``) adds token_types token-type rows and builds the cross-attention when ``cross``
    (add_cross_attention), its keys and values hidden_size wide."""
    inter = dense_intermediate(cfg)
    encoder = cfg.number("encoder_hidden_size", default=h) or h
    e = t + "bert.embeddings."
    out: list[Triple] = [
        (e + "word_embeddings.weight", dt, (vocab, h)),
        (e + "position_embeddings.weight", dt, (cfg.max_context or 0, h)),
    ]
    out += [(e + f"LayerNorm.{p}", dt, (h,)) for p in ("weight", "bias")]
    if token_types:
        out.append((e + "token_type_embeddings.weight", dt, (token_types, h)))

    def dense(name: str, rows: int, cols: int) -> list[Triple]:
        return [(name + ".weight", dt, (rows, cols)), (name + ".bias", dt, (rows,))]

    if cross is None:
        cross = cfg.get("is_decoder", default=True) is not False
    parts = ("attention", "crossattention") if cross else ("attention",)
    for i in range(depth):
        b = f"{t}bert.encoder.layer.{i}."
        for part in parts:
            width = encoder if part == "crossattention" else h
            out += dense(b + part + ".self.query", h, h)
            out += dense(b + part + ".self.key", h, width) + dense(b + part + ".self.value", h, width)
            out += dense(b + part + ".output.dense", h, h)
            out += [(b + part + f".output.LayerNorm.{p}", dt, (h,)) for p in ("weight", "bias")]
        out += dense(b + "intermediate.dense", inter, h) + dense(b + "output.dense", h, inter)
        out += [(b + f"output.LayerNorm.{p}", dt, (h,)) for p in ("weight", "bias")]
    c = t + "cls.predictions."
    out += dense(c + "transform.dense", h, h)
    out += [(c + f"transform.LayerNorm.{p}", dt, (h,)) for p in ("weight", "bias")]
    out.append((c + "bias", dt, (vocab,)))
    if not cfg.tied_embeddings:
        out += dense(c + "decoder", vocab, h)
    return out


def _t5_decoder(cfg: ArchConfig, depth: int, h: int, vocab: int, dt: str) -> list[Triple]:
    """Pix2Struct's text decoder (modeling_pix2struct.py): unbiased query/key/value/output projections
    hidden_size square in self-attention and in cross-attention into the image encoder, the first layer's
    self-attention with a relative position bias of relative_attention_num_buckets per head, a gated MLP
    d_ff wide, a weight-only norm before each of the three and after the last layer; the head tied to the
    embedding or its own."""
    heads = cfg.num_heads or 0
    ff = cfg.number("d_ff", default=2048) or 0
    buckets = cfg.number("relative_attention_num_buckets", default=32) or 0
    d = "decoder."
    out: list[Triple] = [
        (d + "embed_tokens.weight", dt, (vocab, h)),
        (d + "final_layer_norm.weight", dt, (h,)),
    ]
    for i in range(depth):
        b = f"{d}layer.{i}."
        for part in ("self_attention", "encoder_decoder_attention"):
            out += [
                (f"{b}{part}.attention.{p}.weight", dt, (h, h)) for p in ("query", "key", "value", "output")
            ]
            out.append((f"{b}{part}.layer_norm.weight", dt, (h,)))
        if i == 0:
            out.append((b + "self_attention.attention.relative_attention_bias.weight", dt, (buckets, heads)))
        out += [(f"{b}mlp.DenseReluDense.{p}.weight", dt, (ff, h)) for p in ("wi_0", "wi_1")]
        out += [(b + "mlp.DenseReluDense.wo.weight", dt, (h, ff)), (b + "mlp.layer_norm.weight", dt, (h,))]
    if not cfg.tied_embeddings:
        out.append((d + "lm_head.weight", dt, (vocab, h)))
    return out


def _codebook_decoder(
    cfg: ArchConfig, arch: ArchitectureFacts, depth: int, h: int, vocab: int, dt: str
) -> list[Triple]:
    """MusicGen's decoder (modeling_musicgen.py, modeling_musicgen_melody.py): a token is one code of each
    of num_codebooks codebooks, embedded each by its own table (one row beyond the vocabulary for the pad
    / start code) and summed, and predicted by a head of each; pre-LN layers of unbiased attention
    (and, in MusicGen's, cross-attention into the text encoder) and an unbiased fc1 / fc2 MLP, each after a
    biased LayerNorm, and one after the last layer."""
    books = cfg.number("num_codebooks", default=4) or 0
    ff = cfg.number("ffn_dim", "intermediate_size", default=4 * h) or 0
    d = "model.decoder."
    out: list[Triple] = [(f"{d}embed_tokens.{c}.weight", dt, (vocab + 1, h)) for c in range(books)]
    out += [(f"{d}layer_norm.{part}", dt, (h,)) for part in ("weight", "bias")]
    attentions = ("self_attn", "encoder_attn") if arch.decoder_cross_attention else ("self_attn",)
    for i in range(depth):
        b = f"{d}layers.{i}."
        for part in attentions:
            out += [(f"{b}{part}.{p}.weight", dt, (h, h)) for p in ("q_proj", "k_proj", "v_proj", "out_proj")]
            out += [(f"{b}{part}_layer_norm.{x}", dt, (h,)) for x in ("weight", "bias")]
        out += [(b + "fc1.weight", dt, (ff, h)), (b + "fc2.weight", dt, (h, ff))]
        out += [(f"{b}final_layer_norm.{x}", dt, (h,)) for x in ("weight", "bias")]
    out += [(f"lm_heads.{c}.weight", dt, (vocab, h)) for c in range(books)]
    return out


def _sublayers(
    cfg: ArchConfig,
    arch: ArchitectureFacts,
    layer: LayerInfo,
    p: str,
    h: int,
    dt: str,
    parts: tuple[str, ...],
) -> list[Triple]:
    """LongCat-Flash (modeling_longcat_flash.py): each layer ``arch.sublayers`` sublayers of attention and
    a dense MLP with their two norms (``self_attn.{i}``, ``mlps.{i}``, ``input_layernorm.{i}``), and one
    shortcut MoE beside them (``mlp``)."""
    out: list[Triple] = []
    dense = dataclasses.replace(layer, mlp="dense")
    for i in range(arch.sublayers):
        attn = _attention(cfg, arch, layer, p, h, dt, None)
        out += [(n.replace(p + "self_attn.", f"{p}self_attn.{i}.", 1), d, s) for n, d, s in attn]
        mlp = _mlp(cfg, arch, dense, p, h, dt, None)
        out += [(n.replace(p + "mlp.", f"{p}mlps.{i}.", 1), d, s) for n, d, s in mlp]
        out += [
            (f"{p}{n}.{i}.{part}", dt, (h,))
            for n in ("input_layernorm", "post_attention_layernorm")
            for part in parts
        ]
    return out + _mlp(cfg, arch, layer, p, h, dt, None)


def _hrm_blocks(
    cfg: ArchConfig, arch: ArchitectureFacts, block: list[Triple], p: str, dt: str
) -> list[Triple]:
    """HRM's layer (modeling_hrm_text.py): the block at its depth in the L stack and in the H stack, alike;
    its gate_proj is biased as q, k, v and o are (attention_bias)."""
    gate = [s for n, _, s in block if n == p + "self_attn.gate_proj.weight"]
    if gate and arch.qkv_bias.on(cfg):
        block = [*block, (p + "self_attn.gate_proj.bias", dt, (gate[0][0],))]
    return [
        (n.replace("model.layers.", f"model.{stack}.layers.", 1), d, s)
        for stack in ("L_module", "H_module")
        for n, d, s in block
    ]


def _ngpt_scales(
    cfg: ArchConfig, layer: LayerInfo, p: str, h: int, dt: str, attn: bool, mlp: bool
) -> list[Triple]:
    """Dory's nGPT scales (modeling_dory.py): sqk and s_gate in attention, suv_gate and suv_up in the MLP,
    lambda_1 and lambda_2 in the layer."""
    heads, _, hd, _ = layer_heads(cfg, layer)
    out: list[Triple] = [(p + n, dt, (h,)) for n in ("lambda_1", "lambda_2")]
    if attn:
        out += [(p + "self_attn." + n, dt, (heads * hd,)) for n in ("sqk", "s_gate")]
    if mlp:
        inter = dense_intermediate(cfg)
        out += [(p + "mlp." + n, dt, (inter,)) for n in ("suv_gate", "suv_up")]
    return out


def _gated_residual(cfg: ArchConfig, g: str, h: int, dt: str, *, inject: bool) -> list[Triple]:
    """Qwen4-Exp's gated residual over hc_count streams (Qwen4ExpTextGatedResidual): an RMSNorm over them
    all, a low-rank input mix (hc_lowrank) down and up, and, in a layer, one injection weight a stream."""
    streams = (cfg.number("hc_count", default=4) or 4) * h
    rank = cfg.number("hc_lowrank", default=320) or 0
    out: list[Triple] = [
        (g + "hc_norm.weight", dt, (streams,)),
        (g + "input_mix_weight_down.weight", dt, (rank, streams)),
        (g + "input_mix_weight_up.weight", dt, (streams, rank)),
    ]
    if inject:
        out.append((g + "block_inject_weight.weight", dt, (cfg.number("hc_count", default=4) or 4, streams)))
    return out


def _qsa_indexer(cfg: ArchConfig, layer: LayerInfo, p: str, h: int, dt: str) -> list[Triple]:
    """Qwen4-Exp's QSA indexer in an indexed layer (Qwen4ExpTextQSAIndexer): one projection to its query
    and key heads (indexer_n_heads + indexer_kv_heads, indexer_head_dim wide) and an RMSNorm on each."""
    if layer.indexer != "own" or layer.attention not in ("mha", "gqa", "mqa"):
        return []
    heads = (cfg.number("indexer_n_heads", default=0) or 0) + (cfg.number("indexer_kv_heads", default=1) or 0)
    width = cfg.number("indexer_head_dim", default=0) or 0
    x = p + "self_attn.indexer."
    return [
        (x + "index_qk_proj.weight", dt, (heads * width, h)),
        (x + "q_layernorm.weight", dt, (width,)),
        (x + "k_layernorm.weight", dt, (width,)),
    ]


def _norms_per_layer(cfg: ArchConfig, arch: ArchitectureFacts) -> int:
    if arch.post_norms is not None:
        return arch.norms_per_layer + 2 * arch.post_norms.on(cfg)
    if not arch.falcon_switches:
        return arch.norms_per_layer
    parallel = cfg.get("parallel_attn") is True
    two = cfg.get("num_ln_in_parallel_attn") == 2 or (
        cfg.get("num_ln_in_parallel_attn") is None and cfg.get("new_decoder_architecture") is True
    )
    return 1 if parallel and not two else 2


def _drafter_projections(cfg: ArchConfig, h: int, dt: str) -> list[Triple]:
    """A drafter's inputs are its target's token embedding and last hidden state side by side, and its
    output goes back into the target's width (modeling_gemma4_assistant.py: pre_projection,
    post_projection); the target's width is the outer config's backbone_hidden_size."""
    backbone = cfg.raw.get("backbone_hidden_size")
    if type(backbone) is not int or backbone <= 0:
        return []
    cfg.get("backbone_hidden_size")  # read: no longer a key hubdiff leaves uncounted
    return [("pre_projection.weight", dt, (h, 2 * backbone)), ("post_projection.weight", dt, (backbone, h))]


def _diffusion_decoder(
    cfg: ArchConfig, layers: list[LayerInfo], h: int, dt: str, text: list[Triple]
) -> list[Triple]:
    """What DiffusionGemma's decoder holds of its own beside the encoder's weights
    (modeling_diffusion_gemma.py: DiffusionGemmaDecoderModel): in its layers what the class's tie keys do
    not name (weights, scales and experts are tied; biases and each layer's output scalar, a buffer, are
    not), or with the head untied (tie_word_embeddings false unties every shared weight) a whole copy of
    the text stack; and the self-conditioning block (a norm, a gated MLP intermediate_size wide; its post
    norm has no weight)."""
    del layers  # the stack's own tensors, in ``text``, say which layers it has
    inter = cfg.number("intermediate_size", default=0) or 0
    d = "model.decoder."
    stack = ("model.layers.", "model.embed_tokens.", "model.norm.")
    tied = ("weight", "scale", "per_expert_scale", "gate_up_proj", "down_proj")
    out = [
        (d + n.removeprefix("model."), t, s)
        for n, t, s in text
        if n.startswith(stack) and not (cfg.tied_embeddings and n.rsplit(".", 1)[-1] in tied)
    ]
    s = d + "self_conditioning."
    return [
        *out,
        (s + "pre_norm.weight", dt, (h,)),
        (s + "gate_proj.weight", dt, (inter, h)),
        (s + "up_proj.weight", dt, (inter, h)),
        (s + "down_proj.weight", dt, (h, inter)),
    ]


def action_expert_parts(cfg: ArchConfig) -> tuple[ArchConfig, ArchConfig, list[LayerInfo]] | None:
    """PI0's two stacks, read once for the estimate and for the doubts: the vision-language model (its
    text and tower already read as the config's own, the keys read recorded with the config's) and the
    action expert, whose vocabulary the class sets to the language model's, with its layers."""
    cached = getattr(cfg, "_action_expert_parts", None)
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    vlm, dit = cfg.raw.get("vlm_config"), cfg.raw.get("dit_config")
    if not isinstance(vlm, dict) or not isinstance(dit, dict):
        return None
    inner = ArchConfig(vlm, cfg.resolved_text, cfg.resolved_vision, cfg.reader, cfg.read_keys)
    vocab = cfg.vocab_size
    expert = ArchConfig.read(
        {**dit, **({"vocab_size": vocab} if vocab else {})}, use_transformers=cfg.via_transformers
    )
    expert_arch = facts(expert)[0]
    parts = (inner, expert, layer_census(expert, expert_arch.sublayers, expert_arch.inkling > 0))
    object.__setattr__(cfg, "_action_expert_parts", parts)
    return parts


def _action_expert_model(
    cfg: ArchConfig, outer: ArchitectureFacts, layers: list[LayerInfo], dt: str
) -> list[Triple]:
    """PI0 and PI0.5 (modeling_pi0.py, modeling_pi05.py): the vision-language model built headless
    (AutoModel), the action expert beside it under the checkpoints' names, and the projections of the
    state, the noisy actions and the timestep into the expert's width and of its output to actions.
    PI0's expert is the Gemma model its config names, its token embedding stored as its lm_head; PI0.5's
    has none, and each of its norms is a linear from the timestep embedding to scale, shift and gate."""
    parts = action_expert_parts(cfg)
    if parts is None:
        return []
    inner, expert, expert_layers = parts
    out = [t for t in synthesize(inner, layers) if not t[0].startswith("lm_head.")]
    h = expert.hidden_size or 0
    e = "paligemma_with_expert.gemma_expert."
    for name, d, shape in synthesize(expert, expert_layers):
        if name.startswith("lm_head."):
            continue
        if name == "model.embed_tokens.weight":
            if not outer.adaptive_action_norms:
                out.append((e + "lm_head.weight", d, shape))
            continue
        if outer.adaptive_action_norms and name.endswith("norm.weight") and len(shape) == 1:
            norm = e + name.removesuffix("weight")
            out += [(norm + "dense.weight", d, (3 * h, h)), (norm + "dense.bias", d, (3 * h,))]
            continue
        out.append((e + name, d, shape))
    actions = cfg.number("max_action_dim", default=32) or 0

    def linear(name: str, rows: int, cols: int) -> list[Triple]:
        return [(name + ".weight", dt, (rows, cols)), (name + ".bias", dt, (rows,))]

    out += linear("action_in_proj", h, actions) + linear("action_out_proj", actions, h)
    if outer.adaptive_action_norms:
        return out + linear("time_mlp_in", h, h) + linear("time_mlp_out", h, h)
    state = cfg.number("max_state_dim", default=32) or 0
    return (
        out
        + linear("state_proj", h, state)
        + linear("action_time_mlp_in", h, 2 * h)
        + linear("action_time_mlp_out", h, h)
    )
