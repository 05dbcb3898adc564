"""What every checkpoint of an architecture has that its config does not say (``ARCHITECTURE_FACTS``,
keyed by ``model_type``): biases, norms, gated or plain MLPs, with the common layout for one not
listed; and the heads of each layer (``layer_heads``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .config import ArchConfig
from .layers import LayerInfo

Triple = tuple[str, str, tuple[int, ...]]


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

    # "head": [head_dim] each; "full": [heads x head_dim], [kv_heads x head_dim]; "heads": [heads, head_dim],
    # [kv_heads, head_dim]
    qk_norm: str | None = None
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
    # Gemma's per-layer stacks (4: Gemma 4, transformers/models/gemma4/modeling_gemma4.py): a per-layer
    # input embedding beside the token embedding, a learned scalar on each layer's output, q/k norms and a
    # weightless v norm, keys and values of the last num_kv_shared_layers layers reused from an earlier
    # layer (no k/v projections of their own), global layers with their own head sizes (per_layer_config,
    # or global_head_dim and num_global_key_value_heads) whose values may be their keys
    # (attention_k_eq_v), and an MoE block beside the dense MLP (enable_moe_block)
    gemma_stack: int = 0
    # a norm after each sub-layer's output as well, four a layer when on (HyperCLOVA X's use_post_norm)
    post_norms: Switch | None = None
    # only the last layer's attention output is biased (GPT-NeoX-Japanese's dense_bias)
    last_layer_o_bias: bool = False
    # the dense MLP is hidden_size times this key wide (GPT-NeoX-Japanese's intermediate_multiple_size)
    mlp_width_multiple: str | None = None
    # a sigmoid output gate per head, g_proj [heads, hidden], where this switch is on (LFM3's
    # use_attention_gate)
    head_gate_switch: Switch = NEVER
    # an output gate per channel, gate_proj [heads x head_dim, hidden], with one bias per head (Beam)
    channel_gate_head_bias: bool = False
    # lightning attention keeps its decay tables (per head, block_size long) as persistent buffers (MiniMax)
    lightning_decay_buffers: bool = False
    # a gate_proj beside q, k and v gates the attention output per channel (AFMoE)
    attention_gate_proj: bool = False
    # JetMoE: a mixture of attention experts (each a query and an output projection, routed top-k like
    # the MLP's experts) over one shared kv_proj; the MoE and the MoA each add a bias to their output
    mixture_of_attention: bool = False
    # DeepSeek-V4: every layer's attention a low-rank query over one KV head with a grouped output
    # projection, compressed layers adding a compressor (and the sparse ones an indexer); its first
    # MoE layers route by a token-id table (tid2eid) in place of a router bias
    compressed_attention: bool = False
    moe_post_norm: bool = False  # an RMSNorm on each MoE block's output, stored at the layer (A.X-K1)
    mla_output_gate: bool = False  # MLA's output gated per head and value channel by a gate_proj (HY-V4)
    # hyper-connections that mix only pre and post weights (2 x hc_mult, two scales: HY-V4), not DeepSeek-V4's
    # pre, post and (hc_mult x hc_mult) residual mixing
    hc_pre_post_only: bool = False
    # A.X-K2: one q_b_proj over [q_a_layernorm(q), q] (2 x q_lora_rank) writes queries and a per-head value
    # wide output gate; its norms before attention (every layer) and before an MoE block are gated by a
    # low-rank W_down / W_up of gated_norm_rank
    mla_query_gate: bool = False
    gated_norms: bool = False
    hc_mean_head: bool = False  # the streams collapse by an unweighted mean: no hc_head (GLM-5.3-Flash)
    # the DSA indexer pools its keys index_kpool at a time by a learned gate and position bias (GLM-5.3-Flash)
    indexer_kpool_compress: bool = False
    # Ring-2.5 (bailing_hybrid): KDA whose forget and output gates are full-rank f_proj / g_proj, and an
    # MLA whose output is gated per head by g_proj
    kda_full_rank_gates: bool = False
    mla_head_gate: bool = False
    # attention + MLP sublayers in every layer, beside its one shortcut MoE (LongCat-Flash: two; its
    # num_layers counts the layers, transformers' num_hidden_layers the sublayers)
    sublayers: int = 1
    # ZAYA: compressed convolutional attention (CCA: q/k convolved, values half current, half delayed)
    # with a learned key scale per KV head, and an MLP router (router_hidden_size wide) with a skip class
    cca_attention: bool = False
    # ZAYA: a learned scale and bias on the hidden states and on the residual after attention and after
    # the MLP, and on the input
    residual_scaling: bool = False
    # Mistral Large 4's attention: a learned per-frequency alpha in the rotary embedding (LeRoPE), a learned
    # per-head softmax scale and bias (SSMax) in attention and in the indexer, a LayerNorm before the
    # indexer's queries; its NoPE layers (no_rope_layers 0) fold the rope slice of q and k into the nope one
    lerope_ssmax: bool = False
    # experts apart by modality (ERNIE 4.5 VL): moe_intermediate_size [text, vision] sizes a text and a
    # vision set of routed experts, each with its own router; shared experts are text-expert wide
    modality_experts: bool = False
    dense_width_key: str | None = None  # the dense MLP's width where intermediate_size is the experts'
    # (layer type, keys): keys of a feature only that layer type has, which size nothing while no layer has
    # it (MiniMax-M3's lightning indexer, built only in minimax_m3_sparse layers)
    idle_unless_layer: tuple[str, tuple[str, ...]] | None = None
    # HY-V4's attention: an output gate (heads x v_head_dim wide) and a learned sink per head beside MLA;
    # its hyper-connections mix hc_mult streams with pre and post weights only (2 x hc_mult rows, 2 scales)
    hy_v4: bool = False
    swa_heads_key: str | None = None  # sliding layers' query heads (Step 3.7: num_sliding_attention_heads)
    extra_rows_key: str | None = None  # a key adding embedding rows beyond vocab_size (Molmo2)
    qk_norm_by_type: bool = False  # q/k norms always, per head for qk_norm_type "qwen3", else full width
    outer_head: bool = False  # the head is the outer config's vocab_size x hidden_size (Ovis 2's class)
    gating_default: bool | str | None = None  # head_gate's gating where the config names none (Step 3.7)
    # Doge: a dynamic mask over each KV head's keys (A, and dt_proj from the values, biased with the
    # attention), and a learned per-channel residual weight after attention and after the MLP
    dynamic_mask_attention: bool = False
    residual_weights: bool = False
    # (key, value) whose other values build a layout the class has but hubdiff does not write out (Doge's
    # is_moe: a CDMoE of a shared MLP and single-vector expert embeddings), so hubdiff cannot vouch for it
    models_only: tuple[tuple[str, object], ...] = ()
    # CPM-Ant: prompt_types x prompt_length prompt-token rows after the vocabulary, a segment embedding and
    # one relative position bias table (segment pairs and distance buckets, per head) for every layer
    cpm_embeddings: bool = False
    # Inkling's stack (1: Inkling, 2: Inkling 2; estimate_inkling.py): attention with relative position
    # logits and short convolutions over its keys, values and each sub-layer's output; Inkling 2 adds
    # attention residuals over blocks of layers, gated outputs, sinks and learned q/relative scales
    inkling: int = 0
    layer_names: tuple[str, ...] = ()  # layer_types words the architecture's own layout gives meaning to
    mtp_only_keys: tuple[str, ...] = ()  # keys that shape only MTP layers: idle while the config has none
    # a drafter of another model (Gemma 4's assistants): pre_projection from the target's embedding and
    # hidden state (2 x backbone_hidden_size) into its own width, post_projection back to the target's
    drafter_projections: bool = False
    # ModernBERT-decoder: every LayerNorm biased as this switch says (norm_bias), one more inside the
    # embeddings (stored with them), none before the first layer's attention (the embedding's stands in),
    # and a dense + norm transform before the vocabulary projection, its dense biased as its switch says
    norm_bias_switch: Switch | None = None
    embeddings_norm: bool = False
    no_first_attention_norm: bool = False
    prediction_head: Switch | None = None
    # BertGeneration: the head's bias is lm_head.bias and lm_head.decoder.bias, one tensor while the head is
    # tied to the embedding and two once it is not (transformers ties them with the embedding only)
    untied_head_bias_twice: bool = False
    # Chameleon: per-head q/k LayerNorms with biases beside RMS layer norms, and a VQ-VAE image tokenizer
    # (vq_config) in the checkpoint (estimate_vq)
    qk_norm_always_biased: bool = False
    unbiased_final_norm: bool = False  # the final norm has no bias whatever biases the others (xLSTM)
    # DiffusionGemma: a decoder stack sharing every weight of the encoder's (Gemma 4's layers with the MoE
    # block always on) but its own layer_scalar buffers, and a self-conditioning block (a norm and a gated
    # MLP intermediate_size wide) before it
    diffusion_decoder: bool = False
    global_k_eq_v: bool = False  # Gemma 4's attention_k_eq_v in every global layer, no key saying so
    # PI0: a whole vision-language model (vlm_config, built headless) and an action expert (dit_config, a
    # second Gemma-style stack writing into the same cache layers), with projections of the robot's state
    # and actions in and out of the expert's width and an MLP over the action and timestep embeddings
    action_expert: bool = False
    # PI0.5: the timestep embedding goes through its own MLP and modulates every norm of the action expert
    # (each a linear to scale, shift and gate, 3 x its width); no state projection, no token embedding
    adaptive_action_norms: bool = False
    vq_tokenizer: bool = False
    # Ergo: each routed expert's output RMS-normed by a weight of its own (experts x hidden, kept with the
    # experts), the shared expert's output by one more
    expert_output_norms: bool = False
    # a learned per-channel gate mixing attention's and the MLP's output into the residual: its two
    # vectors' names in a layer (Ergo, Muse Spark)
    residual_gates: tuple[str, ...] = ()
    # Muse Spark: the MoE pools hidden_size down to moe_hidden_size (pre_expert_proj, a norm) for its
    # experts, which run at that width and share one output norm, and back up (post_expert_proj)
    pooled_experts: bool = False
    # HRM: each layer the blocks at one depth of an L and an H stack (L_module / H_module), norms without
    # weights, an output gate biased with the attention, and a learned initial state of the L stream
    hrm_stacks: bool = False
    # Dory (nGPT): learned scales sqk and s_gate (heads x head_dim) in attention, suv_gate and suv_up
    # (intermediate) in the MLP, residual interpolation rates lambda_1 / lambda_2 (hidden) in every layer
    # and a logit_scale (vocab) on the head, tied or not; its norms are L2 norms without weights
    ngpt_scales: bool = False
    # Qwen4-Exp: hc_count residual streams, mixed by a gated residual before attention and before the MLP
    # (an RMSNorm over the hc_count x hidden streams, a low-rank input mix hc_lowrank wide down and up, an
    # injection weight a stream) and by one more without injection before the head, in place of every
    # other norm; its indexed layers select tokens by a QSA indexer (one qk projection, two norms)
    gated_residual_streams: bool = False
    # (list key, keys): keys of a feature only the layers a list names have, which size nothing while the
    # list is empty (Qwen4-Exp's per-layer n-gram embeddings, in the layers ple_layer_ids names)
    idle_unless_listed: tuple[str, tuple[str, ...]] | None = None
    # Dots 3: MLA in every layer, its sliding ones too, each layer sized as its per_layer_config entry says
    # (the sliding layers: fewer heads, a wider latent), an RMSNorm on the keys' rope slice
    # (k_rope_only_layernorm); its shared experts shared_experts_intermediate_size wide each
    mla_layer_sizes: bool = False
    shared_width_key: str | None = None
    # XLNet: two-stream relative attention, its q/k/v/o/r projections [hidden, heads, d_head] parameters,
    # three per-head biases and a segment embedding a layer; a learned mask embedding for the model
    xlnet_attention: bool = False
    ffn_sub_norm: bool = (
        False  # a norm inside the MLP, intermediate wide, before its down projection (Kosmos)
    )
    # BLIP's text decoder: BERT's layers (self-attention, cross-attention into the image when is_decoder,
    # intermediate / output dense layers, post-LayerNorms) and its prediction head, written as the class names them
    bert_decoder: bool = False
    # keys the configuration class reads under the names hubdiff reads (its attribute_map: Kosmos' embed_dim
    # as hidden_size): understood when the config was read through that class
    aliased_keys: tuple[str, ...] = ()
    # Pix2Struct's text decoder: T5-style layers of self-attention (a relative position bias in the first),
    # cross-attention into the image encoder and a gated MLP, each after a weight-only norm
    t5_decoder: bool = False
    segment_embeddings: int = 0  # rows of a segment embedding added to every position (Kosmos-2.5's two)
    # a BART-style cross-attention (encoder_attn: biased q/k/v/out_proj, keys and values read from
    # cross_attention_hidden_size wide encoder states, and its own LayerNorm) in every decoder layer, built
    # because the causal-LM class always sets is_decoder (TrOCR)
    encoder_attention: bool = False
    # switches for the learned position table and the embedding's LayerNorm where a key turns them off
    # (TrOCR's use_learned_position_embeddings: sinusoidal positions saved nowhere; layernorm_embedding)
    learned_positions_switch: Switch = ALWAYS
    embedding_norm_switch: Switch = NEVER
    # a BART text encoder beside the decoder (Florence-2's language model, BartModel: encoder_layers of
    # biased self-attention and fc1 / fc2 encoder_ffn_dim wide, its own positions and layernorm_embedding),
    # run over each input's tokens: estimate_encdec.bart_encoder
    bart_encoder: bool = False
    # UDOP's whole model (estimate_encdec.udop): a T5-style encoder over text, layout and image patches and a
    # T5-style decoder, written apart from the trunk
    udop_model: bool = False
    # MusicGen's decoder (modeling_musicgen.py, MusicgenForCausalLM): num_codebooks embeddings of vocab_size
    # + 1 rows (the pad / start token) and as many heads of vocab_size, never tied; unbiased q/k/v/out
    # projections, an unbiased fc1 / fc2 MLP ffn_dim wide, biased LayerNorms, sinusoidal positions saved
    # nowhere; with decoder_cross_attention every layer attends the text encoder's states (encoder_attn and
    # its norm, whatever add_cross_attention says); MusicGen Melody's prepends its conditioning instead
    codebook_decoder: bool = False
    decoder_cross_attention: bool = False


_QWEN2 = ArchitectureFacts(qkv_bias=ALWAYS, o_bias=NEVER)


_CLASSIC = ArchitectureFacts(gated_mlp=False, mlp_bias=ALWAYS, norm_bias=True)


_GPT2 = dataclasses.replace(_CLASSIC, qkv_bias=ALWAYS, o_bias=ALWAYS, learned_positions=0)


_QKV_ONLY = ArchitectureFacts(o_bias=NEVER)  # attention_bias biases q, k and v, never o (GLM, Helium)


_HEAD_NORM = ArchitectureFacts(qk_norm="head")


_FULL_NORM = ArchitectureFacts(qk_norm="full")


# Kosmos' text configs name the width, depth and heads as their classes' attribute_map reads them
_KOSMOS_ALIASES = ("embed_dim", "layers", "attention_heads")


ARCHITECTURE_FACTS: dict[str, ArchitectureFacts] = {
    "qwen2": _QWEN2,
    "qwen2_moe": ArchitectureFacts(qkv_bias=Switch(("qkv_bias",), True), o_bias=NEVER),
    "qwen2_vl_text": _QWEN2,
    "qwen2_5_vl_text": _QWEN2,
    "qwen2_5_omni_text": _QWEN2,
    "qwen3": _HEAD_NORM,
    "qwen3_moe": _HEAD_NORM,
    "qwen3_next": ArchitectureFacts(qk_norm="head", output_gate=True),
    "qwen3_5_text": ArchitectureFacts(qk_norm="head", output_gate=True, split_gdn_proj=True),
    "qwen3_5_moe_text": ArchitectureFacts(qk_norm="head", output_gate=True, split_gdn_proj=True),
    "dots3_note_text": ArchitectureFacts(
        mlp_bias=NEVER,  # its MLPs and shared experts are unbiased whatever mlp_bias says
        unused_keys=("mlp_bias",),
        mla_layer_sizes=True,
        mla_head_gate=True,
        router_bias=True,
        shared_width_key="shared_experts_intermediate_size",
    ),
    "qwen4_exp_text": ArchitectureFacts(
        qk_norm="head",
        output_gate=True,
        split_gdn_proj=True,
        norms_per_layer=0,
        final_norm=False,
        gated_residual_streams=True,
        # the indexer's token budget and key pooling select tokens at run time: its cache keeps every key
        unused_keys=("indexer_budget", "indexer_compress_ratio"),
        idle_unless_listed=(
            "ple_layer_ids",
            (
                "ple_embed_dim",
                "ple_conv_kernel_size",
                "ngram_size",
                "heads_per_ngram",
                "ngram_vocab_size_base",
                "make_ngram_vocab_size_divisible_by",
                "split_ngram_parts",
                "number_of_conv_states",  # 3 with PLE layers (their convolution and n-gram context), else 1
            ),
        ),
    ),
    "phi3": ArchitectureFacts(fused_qkv=True, fused_gate_up=True),
    "glm4_moe": ArchitectureFacts(router_bias=True, o_bias=NEVER),
    "param2moe": ArchitectureFacts(router_bias=True, o_bias=NEVER),  # built by GLM-4-MoE's classes
    "llama4_text": ArchitectureFacts(weightless_qk_norm=True),
    "qwen3_vl_text": _HEAD_NORM,
    "qwen3_vl_moe_text": _HEAD_NORM,
    "qwen3_omni_moe_text": _HEAD_NORM,
    "exaone4": _HEAD_NORM,
    "hunyuan_v1_moe": ArchitectureFacts(qk_norm="head", fixed_shared_experts=1),
    "hunyuan_v1_dense": _HEAD_NORM,
    "hunyuan_vl_text": _HEAD_NORM,
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
    # Apertus 1.5's text model: Apertus's layer (its norms named attention_ / feedforward_layernorm);
    # output_vocab_size (a pruned head) is left unread, so a config that sets it is marked
    "apertus1p5_text": ArchitectureFacts(qk_norm="head", gated_mlp=False, activation_params=4),
    # the classic layouts: LayerNorms with biases, plain (not gated) biased MLPs, from each modeling file
    # GPT-2 (and GPT-SW3, GPT-1) store q, k and v as one c_attn, and its bias
    "gpt2": dataclasses.replace(_GPT2, fused_qkv=True),
    "gpt-sw3": dataclasses.replace(_GPT2, fused_qkv=True),
    # GPT-Neo: GPT-2's layout without q/k/v biases; local layers attend within window_size; a null
    # intermediate_size means 4 x hidden; num_heads is read as num_attention_heads
    "gpt_neo": dataclasses.replace(
        _GPT2, qkv_bias=NEVER, nulls_mean_default=("intermediate_size",), unused_keys=("num_heads",)
    ),
    # GPT-NeoX, BLOOM and Persimmon store q, k and v as one query_key_value (and its bias)
    "gpt_neox": dataclasses.replace(_CLASSIC, fused_qkv=True),
    # GPT-NeoX-Japanese: one unbiased query_key_value and dense, a plain unbiased MLP
    # intermediate_multiple_size x hidden wide, and a dense_bias in the last layer alone
    "gpt_neox_japanese": ArchitectureFacts(
        gated_mlp=False,
        norm_bias=True,
        qkv_bias=NEVER,
        o_bias=NEVER,
        last_layer_o_bias=True,
        mlp_width_multiple="intermediate_multiple_size",
    ),
    "phi": dataclasses.replace(_CLASSIC, qkv_bias=ALWAYS, o_bias=ALWAYS, norms_per_layer=1, head_bias=ALWAYS),
    "gptj": dataclasses.replace(_CLASSIC, norms_per_layer=1, head_bias=ALWAYS),
    "codegen": dataclasses.replace(_CLASSIC, norms_per_layer=1, head_bias=ALWAYS, fused_qkv=True),
    "bloom": dataclasses.replace(
        _CLASSIC, qkv_bias=ALWAYS, o_bias=ALWAYS, embedding_norm=True, fused_qkv=True
    ),
    "persimmon": dataclasses.replace(_CLASSIC, qkv_bias=ALWAYS, o_bias=ALWAYS, fused_qkv=True),
    "stablelm": ArchitectureFacts(norm_bias=True, switched_qk_norm="full", qk_norm_bias=False),
    # Cohere: use_qk_norm norms each head's queries and keys with weights of their own ([heads, head_dim])
    "cohere": ArchitectureFacts(norms_per_layer=1, switched_qk_norm="heads"),
    "cohere2": ArchitectureFacts(norms_per_layer=1),
    "cohere2_moe": ArchitectureFacts(norms_per_layer=1),
    "cohere_compass_text": ArchitectureFacts(norms_per_layer=1),  # Cohere's parallel block, one norm
    "olmo": ArchitectureFacts(norms_per_layer=0, final_norm=False),
    "falcon": ArchitectureFacts(gated_mlp=False, norm_bias=True, falcon_switches=True, fused_qkv=True),
    "opt": ArchitectureFacts(gated_mlp=False, learned_positions=2, opt_switches=True),
    "nanochat": ArchitectureFacts(norms_per_layer=0, final_norm=False),  # weightless RMS norms
    "flex_olmo": _FULL_NORM,
    "hyperclovax": ArchitectureFacts(post_norms=Switch(("use_post_norm",), True)),
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
    # Beam: Gemma's four norms a layer, per-head q/k norms, a per-channel output gate biased per head, a
    # router keeping its e_score_correction_bias
    "beam": ArchitectureFacts(
        qk_norm="head", norms_per_layer=4, router_bias=True, channel_gate_head_bias=True
    ),
    # LFM3: LFM2's short convolutions and per-head q/k norms, an MLP as wide as intermediate_size, the
    # sandwich norms after each sub-layer (use_sandwich_norm) and a gate per head (use_attention_gate)
    "lfm3": ArchitectureFacts(
        qk_norm="head",
        post_norms=Switch(("use_sandwich_norm",), True),
        head_gate_switch=Switch(("use_attention_gate",), True),
    ),
    # LFM2-MoE: LFM2's mixers; num_dense_layers dense MLPs intermediate_size wide (not narrowed), then
    # experts routed with a sigmoid whose expert_bias buffer use_expert_bias keeps
    "lfm2_moe": ArchitectureFacts(qk_norm="head", unused_keys=("conv_bias", "conv_L_cache")),
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
    # XGLM: the classic layout with biased q/k/v/out_proj; its sinusoidal positions are a buffer saved
    # nowhere; cross-attention (add_cross_attention) is a layout it builds only for an encoder-decoder
    "xglm": dataclasses.replace(
        _CLASSIC, qkv_bias=ALWAYS, o_bias=ALWAYS, builds_only=(("add_cross_attention", False),)
    ),
    # BioGPT: GPT-2's layout (biased q/k/v/out_proj and fc1/fc2) with a position table two rows longer
    "biogpt": dataclasses.replace(_GPT2, learned_positions=2),
    # GLM-OCR's text model: GLM-4's four norms a layer and fused gate_up, no attention biases
    "glm_ocr_text": ArchitectureFacts(norms_per_layer=4, fused_gate_up=True),
    "openai-gpt": dataclasses.replace(
        _GPT2, final_norm=False, fused_qkv=True
    ),  # post-LN: no norm after the last layer
    "granitemoe_swa": ArchitectureFacts(sinks=True),
    # Gemma 4: null expert sizes with enable_moe_block off mean no experts (the class builds none); a
    # null num_global_key_value_heads, that global layers keep num_key_value_heads
    "gemma4_text": ArchitectureFacts(
        qk_norm="head",
        norms_per_layer=4,
        gemma_stack=4,
        nulls_mean_default=(
            "num_experts",
            "top_k_experts",
            "moe_intermediate_size",
            "num_global_key_value_heads",
        ),
    ),
    # Gemma 3n: Gemma 4's stack (per-layer inputs, reused keys and values) with AltUp and LAuReL in each
    # layer and an MLP width a layer; activation sparsity (a top-k of the gate's activations) and AltUp's
    # coefficient clip and active stream size nothing
    "gemma3n_text": ArchitectureFacts(
        qk_norm="head",
        norms_per_layer=4,
        gemma_stack=3,
        unused_keys=(
            "activation_sparsity_pattern",
            "altup_coef_clip",
            "altup_active_idx",
            "altup_correct_scale",
        ),
    ),
    "minimax": ArchitectureFacts(lightning_decay_buffers=True),
    "jetmoe": ArchitectureFacts(mixture_of_attention=True),
    # MiniCPM5-MoE: q_proj writes queries and a sigmoid output gate per channel; a DeepSeek-style router bias
    "minicpm5_moe": ArchitectureFacts(output_gate=True, router_bias=True),
    # HY-V4: DSA-style MLA with a sink logit and a sigmoid output gate per head, a router correction bias,
    # hyper-connections of pre and post weights only
    # GLM-5.3-Flash (glm5_next): KDA beside DSA layers whose indexer pools its keys; hyper-connections
    # collapsed by a mean; a router correction bias
    "glm5_next_text": ArchitectureFacts(router_bias=True, hc_mean_head=True, indexer_kpool_compress=True),
    # kda_safe_gate and the swiglu limits clamp activations; they size nothing
    "bailing_hybrid": ArchitectureFacts(
        router_bias=True,
        never_tied=True,
        kda_full_rank_gates=True,
        mla_head_gate=True,
        unused_keys=("kda_safe_gate", "expert_swiglu_limit_list", "share_expert_swiglu_limit_list"),
    ),
    # LongCat-Flash: two MLA + dense MLP sublayers a layer, and a shortcut MoE whose router also scores
    # zero_expert_num weightless (identity) experts, with a correction bias
    "longcat_flash": ArchitectureFacts(sublayers=2, router_bias=True),
    "zaya": ArchitectureFacts(cca_attention=True, residual_scaling=True, head_bias=Switch(("lm_head_bias",))),
    "axk2": ArchitectureFacts(router_bias=True, mla_query_gate=True, gated_norms=True),
    "hy_v4": ArchitectureFacts(sinks=True, mla_output_gate=True, router_bias=True, hc_pre_post_only=True),
    # DeepSeek-V4: mlp_bias biases the shared expert; attention_bias biases nothing
    "deepseek_v4": ArchitectureFacts(
        compressed_attention=True, router_bias=True, shared_expert_bias=True, unused_keys=("attention_bias",)
    ),
    # AFMoE: per-head q/k norms, a sigmoid gate_proj on the attention output, four norms a layer, an
    # expert_bias beside each router (modeling_afmoe.py)
    "afmoe": ArchitectureFacts(qk_norm="head", attention_gate_proj=True, norms_per_layer=4, router_bias=True),
    "mistral_large4_text": ArchitectureFacts(lerope_ssmax=True),
    # ERNIE 4.5's use_bias (q, k, v, o, dense and shared MLPs; never the head here), two expert sets
    "ernie4_5_vl_moe_text": ArchitectureFacts(
        router_bias=True,
        qkv_bias=Switch(("use_bias",)),
        o_bias=Switch(("use_bias",)),
        mlp_bias=Switch(("use_bias",)),
        shared_expert_bias=True,
        modality_experts=True,
    ),
    "hy_v4_vl_text": ArchitectureFacts(
        sinks=True, mla_output_gate=True, router_bias=True, hc_pre_post_only=True
    ),
    # Step 3.5 / 3.7: per-head q/k norms and output gate, a router bias, one shared expert share_expert_dim wide
    "step3p5": ArchitectureFacts(
        qk_norm="head",
        router_bias=True,
        head_gate=True,
        gating_default=True,
        fixed_shared_experts=1,
        shared_expert_bias=True,
        swa_heads_key="num_sliding_attention_heads",
    ),
    "ovis2": ArchitectureFacts(outer_head=True),
    # Molmo2: additional_vocab_size more embedding rows, q/k norms as qk_norm_type says, an unbiased o_proj;
    # norm_after moves the two norms after their sublayers and rope_scaling_layers picks the rotary one
    "molmo2_text": ArchitectureFacts(
        extra_rows_key="additional_vocab_size",
        qk_norm_by_type=True,
        o_bias=NEVER,
        never_tied=True,
        unused_keys=("norm_after", "rope_scaling_layers"),
    ),
    # Cosmos 3 Edge's image-text class ties nothing (_tied_weights_keys empty)
    "cosmos3_edge_text": ArchitectureFacts(never_tied=True),
    "minimax_m3_vl_text": ArchitectureFacts(
        qk_norm="head",
        router_bias=True,
        dense_width_key="dense_intermediate_size",
        idle_unless_layer=(
            "minimax_m3_sparse",
            (
                "index_n_heads",
                "index_head_dim",
                "index_block_size",
                "index_topk_blocks",
                "index_local_blocks",
            ),
        ),
    ),
    # Kolibri 1.1: Kolibri 1's layer; its indexer has no weights (index_* size nothing), and a layer whose
    # kv_source_layers entry names another layer reads that layer's keys and values (no k/v of its own)
    "kolibri1_1": ArchitectureFacts(
        qk_norm="head",
        norms_per_layer=4,
        router_bias=True,
        shared_expert_gate=False,
        unused_keys=(
            "index_layers",
            "index_topk",
            "index_pool_size",
            "index_compression",
            "index_num_heads",
            "index_num_local_tokens",
            "index_num_sink_tokens",
        ),
    ),
    "modernbert-decoder": ArchitectureFacts(
        norm_bias_switch=Switch(("norm_bias",)),
        embeddings_norm=True,
        no_first_attention_norm=True,
        prediction_head=Switch(("classifier_bias",)),
        head_bias=Switch(("decoder_bias",), True),
    ),
    # BERT as a decoder (BertGenerationDecoder): post-LN layers of biased query / key / value / output, a
    # plain biased MLP, biased LayerNorms, learned positions and a LayerNorm in the embeddings, no final
    # norm, a head biased tied or not; cross-attention (add_cross_attention) only for an encoder-decoder
    "bert-generation": dataclasses.replace(
        _CLASSIC,
        qkv_bias=ALWAYS,
        o_bias=ALWAYS,
        learned_positions=0,
        embeddings_norm=True,
        final_norm=False,
        head_bias=ALWAYS,
        untied_head_bias_twice=True,
        builds_only=(("add_cross_attention", False),),
    ),
    # Chameleon: model_parallel_size only names how training was sharded, vocabulary_map which tokens stand
    # for image codes, swin_norm the order of the same norms: none sizes anything
    "chameleon": ArchitectureFacts(
        qk_norm="heads",
        qk_norm_always_biased=True,
        vq_tokenizer=True,
        unused_keys=("model_parallel_size", "vocabulary_map", "swin_norm"),
    ),
    # xLSTM: use_bias biases its RMS norms (not the final one), the mLSTM and the MLP; embedding_dim and
    # num_blocks are its hidden_size and layer count (read where they agree); add_out_norm and the kernel
    # and precision switches size nothing (the final norm is always built)
    "xlstm": ArchitectureFacts(
        norm_bias_switch=Switch(("use_bias",)),
        unbiased_final_norm=True,
        never_tied=True,  # no tied-weights keys in the class
        unused_keys=(
            "add_out_norm",
            "norm_reduction_force_float32",
            "chunkwise_kernel",
            "sequence_kernel",
            "step_kernel",
            "return_last_states",
            "autocast_kernel_dtype",
            "max_inference_chunksize",
            "mode",
            "gate_soft_cap",
        ),
    ),
    "cpmant": ArchitectureFacts(
        cpm_embeddings=True, never_tied=True, unused_keys=("position_bias_max_distance",)
    ),
    "doge": ArchitectureFacts(
        qk_norm="head",
        dynamic_mask_attention=True,
        residual_weights=True,
        unused_keys=("keep_window_size",),  # the dynamic mask's top-k span: it sizes nothing
        models_only=(("is_moe", False),),
    ),
    # CTRL: biased Wq / Wk / Wv / dense, a plain ReLU MLP dff wide, biased LayerNorms, a head always biased
    # (tied to the embedding or not); its sinusoidal positions are a buffer saved nowhere
    "ctrl": dataclasses.replace(_CLASSIC, qkv_bias=ALWAYS, o_bias=ALWAYS, head_bias=ALWAYS),
    # Muse Glimmer: a gate_proj on the attention output, q/k norms without weights, four centered RMS
    # norms a layer (modeling_muse_glimmer.py)
    "muse_glimmer_text": ArchitectureFacts(attention_gate_proj=True, norms_per_layer=4),
    # Ergo (modeling_ergo.py): one qkv_proj, per-head q/k norms, four norms a layer, squared-ReLU MLPs
    # (not gated), its leading dense layers first_dense_intermediate_size wide, a sigmoid router with a
    # correction bias kept as a persistent buffer
    "hrm_text": ArchitectureFacts(
        hrm_stacks=True, attention_gate_proj=True, norms_per_layer=0, final_norm=False
    ),
    "dory": ArchitectureFacts(
        ngpt_scales=True, attention_gate_proj=True, norms_per_layer=0, final_norm=False
    ),
    "ergo": ArchitectureFacts(
        fused_qkv=True,
        qk_norm="head",
        norms_per_layer=4,
        gated_mlp=False,
        router_bias=True,
        dense_width_key="first_dense_intermediate_size",
        expert_output_norms=True,
        residual_gates=("attention_residual_gate.weight", "feedforward_residual_gate.weight"),
    ),
    # Muse Spark (modeling_muse_spark.py): an output gate_proj, weightless q/k and o norms, three norms a layer
    # with weights (the one after attention has none), a sigmoid router with its correction bias
    "muse_spark_text": ArchitectureFacts(
        attention_gate_proj=True,
        norms_per_layer=3,
        router_bias=True,
        pooled_experts=True,
        residual_gates=("post_attention_residual_gate.gate", "post_feedforward_residual_gate.gate"),
    ),
    # Kosmos-2 (modeling_kosmos2.py): biased q/k/v/out_proj with a LayerNorm on the attention output
    # (inner_attn_ln), a plain biased MLP ffn_dim wide with a LayerNorm before fc2, biased LayerNorms,
    # sinusoidal positions saved nowhere; add_cross_attention would give every layer an encoder_attn
    "kosmos_2_text_model": dataclasses.replace(
        _CLASSIC,
        qkv_bias=ALWAYS,
        o_bias=ALWAYS,
        sub_norms=True,
        builds_only=(("add_cross_attention", False),),
        aliased_keys=_KOSMOS_ALIASES,
    ),
    # Kosmos-2.5: Kosmos-2's text model without the attention's inner LayerNorm, with a segment embedding
    "kosmos_2_5_text_model": dataclasses.replace(
        _CLASSIC,
        qkv_bias=ALWAYS,
        o_bias=ALWAYS,
        ffn_sub_norm=True,
        segment_embeddings=2,
        builds_only=(("add_cross_attention", False),),
        aliased_keys=_KOSMOS_ALIASES,
    ),
    # BLIP's text decoder (modeling_blip_text.py); projection_dim is the retrieval model's, read by no
    # module of the captioning class
    "blip_text_model": ArchitectureFacts(bert_decoder=True, unused_keys=("projection_dim",)),
    # Moshi's text decoder (modeling_moshi.py, MoshiForCausalLM): a gated MLP whose fc1 holds gate and up
    # (ffn_dim rows) over fc2's ffn_dim / 2, one embedding row beyond the vocabulary, a head never tied
    "moshi": ArchitectureFacts(mlp_width_divisor=2, extra_embedding_rows=1, never_tied=True),
    # TrOCR's decoder (modeling_trocr.py, TrOCRForCausalLM): BART's decoder layers (biased self-attention,
    # a cross-attention into the image encoder, a plain biased fc1 / fc2 decoder_ffn_dim wide, a biased
    # LayerNorm after each of the three), learned positions two rows longer than max_position_embeddings or
    # sinusoidal ones saved nowhere, a LayerNorm on the embeddings when layernorm_embedding, no final norm;
    # the head is output_projection, tied to the embedding or not; scale_embedding only multiplies
    "trocr": dataclasses.replace(
        _CLASSIC,
        qkv_bias=ALWAYS,
        o_bias=ALWAYS,
        final_norm=False,
        learned_positions=2,
        learned_positions_switch=Switch(("use_learned_position_embeddings",), True),
        embedding_norm_switch=Switch(("layernorm_embedding",), True),
        encoder_attention=True,
        dense_width_key="decoder_ffn_dim",
        aliased_keys=("decoder_layers", "decoder_attention_heads"),
        nulls_mean_default=("cross_attention_hidden_size",),  # null: keys and values from d_model
    ),
    # PP-FormulaNet's text decoder (modeling_pp_formulanet.py, PPFormulaNetTextModel): MBart's decoder
    # layers (biased self-attention, a cross-attention into the projected vision tower whose keys and values
    # are d_model wide, a plain biased fc1 / fc2 decoder_ffn_dim wide, a biased LayerNorm after each of the
    # three), learned positions two rows longer, a LayerNorm on the embeddings and a final one; the head is
    # the model's own whatever tie_word_embeddings says (_tied_weights_keys is empty). Its encoder is the
    # vision tower: encoder_layers and encoder_attention_heads size nothing (the attribute_map's aliases
    # of num_hidden_layers and num_attention_heads, read as decoder_layers and decoder_attention_heads:
    # config_keys.DECODER_STACK_KEYS); scale_embedding only multiplies
    "pp_formulanet_text": dataclasses.replace(
        _CLASSIC,
        qkv_bias=ALWAYS,
        o_bias=ALWAYS,
        learned_positions=2,
        embedding_norm_switch=ALWAYS,
        encoder_attention=True,
        never_tied=True,
        dense_width_key="decoder_ffn_dim",
        aliased_keys=("decoder_layers", "decoder_attention_heads"),
        unused_keys=("encoder_layers", "encoder_attention_heads"),
    ),
    # Florence-2's language model (modeling_florence2.py: AutoModel of its text config, BART's BartModel):
    # the decoder as TrOCR's with layernorm_embedding always and encoder_attn keys and values d_model wide,
    # a BART encoder beside it (bart_encoder), the head tied to the shared embedding or not
    "florence2": dataclasses.replace(
        _CLASSIC,
        qkv_bias=ALWAYS,
        o_bias=ALWAYS,
        final_norm=False,
        learned_positions=2,
        embedding_norm_switch=ALWAYS,
        encoder_attention=True,
        bart_encoder=True,
        dense_width_key="decoder_ffn_dim",
        aliased_keys=(
            "decoder_layers",
            "decoder_attention_heads",
            "encoder_layers",
            "encoder_attention_heads",
            "encoder_ffn_dim",
        ),
    ),
    # UDOP (modeling_udop.py, UdopForConditionalGeneration): the head is always the shared table (its
    # configuration class sets tie_word_embeddings); the decoder's cross-attention keys and values are
    # per input, as TrOCR's; relative_attention_max_distance and dense_act_fn size nothing
    "udop": ArchitectureFacts(
        udop_model=True,
        encoder_attention=True,
        aliased_keys=("num_layers", "num_decoder_layers", "num_heads", "d_kv", "d_ff"),
        # dense_act_fn: derived by the class from feed_forward_proj, as is_gated_act (read with it); image_size
        # only checks the input image's size
        unused_keys=("relative_attention_max_distance", "dense_act_fn", "image_size"),
    ),
    # MusicGen's and MusicGen Melody's decoders, as their causal-LM classes build them (the text model of the
    # composite musicgen / musicgen_melody configs); audio_channels only says how the codebooks pair into
    # stereo streams, and cross_attention_hidden_size only whether the composite class projects the text
    # encoder's states (enc_to_dec_proj, not the decoder's)
    "musicgen_decoder": ArchitectureFacts(
        codebook_decoder=True,
        decoder_cross_attention=True,
        unused_keys=("audio_channels", "add_cross_attention", "cross_attention_hidden_size"),
    ),
    "musicgen_melody_decoder": ArchitectureFacts(
        codebook_decoder=True, unused_keys=("audio_channels", "add_cross_attention")
    ),
    # Pix2Struct's text decoder (modeling_pix2struct.py): its attention projections are hidden_size square
    # whatever d_kv says; relative_attention_max_distance only clips the buckets
    "pix2struct_text_model": ArchitectureFacts(
        t5_decoder=True,
        aliased_keys=("num_heads", "num_layers"),
        unused_keys=("d_kv", "relative_attention_max_distance"),
    ),
    # XLNet (modeling_xlnet.py): relative attention, a biased LayerNorm after it and after a plain biased
    # MLP d_inner wide, no final norm, a head tied to the embedding with a bias of its own; attn_type
    # ("bi" / "uni") only masks, and untie_r is read by no module of the class
    "xlnet": dataclasses.replace(
        _CLASSIC,
        xlnet_attention=True,
        final_norm=False,
        head_bias=ALWAYS,
        dense_width_key="d_inner",
        unused_keys=("attn_type", "untie_r"),
    ),
}


# DiffusionGemma's text model: Gemma 4's, its experts always built (a null size is a gap, not "none")
ARCHITECTURE_FACTS["diffusion_gemma_text"] = dataclasses.replace(
    ARCHITECTURE_FACTS["gemma4_text"],
    diffusion_decoder=True,
    global_k_eq_v=True,
    nulls_mean_default=("num_global_key_value_heads",),
)
ARCHITECTURE_FACTS["diffusion_gemma"] = ARCHITECTURE_FACTS["diffusion_gemma_text"]


# Gemma 4's assistants: the outer class around a Gemma 4 text model whose every layer reads the target's
# keys and values, with its projections from and to the target's width
for _outer in ("gemma4_assistant", "gemma4_unified_assistant"):
    ARCHITECTURE_FACTS[_outer] = dataclasses.replace(
        ARCHITECTURE_FACTS["gemma4_text"], drafter_projections=True
    )


# PaddleOCR-VL's text model is ERNIE 4.5's: use_bias biases q, k, v, o and the MLP
ARCHITECTURE_FACTS["paddleocr_vl_text"] = ARCHITECTURE_FACTS["ernie4_5"]


# multimodal releases name the outer model; their text model's facts apply (read without transformers)
for _outer, _text in (
    ("qwen2_vl", "qwen2_vl_text"),
    ("qwen2_5_vl", "qwen2_5_vl_text"),
    ("qwen3_vl", "qwen3_vl_text"),
    ("qwen3_vl_moe", "qwen3_vl_moe_text"),
    ("qwen2_5_omni_thinker", "qwen2_5_omni_text"),
    ("qwen3_omni_moe_thinker", "qwen3_omni_moe_text"),
    ("qwen3_5", "qwen3_5_text"),
    ("qwen3_5_moe", "qwen3_5_moe_text"),
    ("gemma3", "gemma3_text"),
    ("llama4", "llama4_text"),
    ("glm4v", "glm4v_text"),
    ("mllama", "mllama_text_model"),
    ("glm4v_moe", "glm4v_moe_text"),
    ("gemma4", "gemma4_text"),
    ("gemma3n", "gemma3n_text"),  # its MobileNetV5 and audio towers: estimate_mobilenet, estimate_audio
    ("gemma4_unified_text", "gemma4_text"),  # Gemma 4's stack without per-layer inputs and experts
    ("gemma4_unified", "gemma4_text"),
    ("glm_ocr", "glm_ocr_text"),
    ("paddleocr_vl", "paddleocr_vl_text"),
    ("glm5_next", "glm5_next_text"),
    ("hunyuan_vl", "hunyuan_vl_text"),
    ("mistral_large4", "mistral_large4_text"),
    ("ernie4_5_vl_moe", "ernie4_5_vl_moe_text"),
    ("minimax_m3_vl", "minimax_m3_vl_text"),
    ("hy_v4_vl", "hy_v4_vl_text"),
    ("step3p7", "step3p5"),
    ("cosmos3_edge", "cosmos3_edge_text"),
    ("molmo2", "molmo2_text"),
    ("muse_glimmer", "muse_glimmer_text"),
    ("muse_spark", "muse_spark_text"),
    ("qwen4_exp", "qwen4_exp_text"),
    ("dots3_note", "dots3_note_text"),
    ("kosmos-2", "kosmos_2_text_model"),
    ("blip", "blip_text_model"),
    ("pix2struct", "pix2struct_text_model"),
    ("pp_formulanet", "pp_formulanet_text"),
    ("kosmos-2.5", "kosmos_2_5_text_model"),
):
    ARCHITECTURE_FACTS[_outer] = ARCHITECTURE_FACTS[_text]


# Muse Spark's image-text class has no tied-weights keys: a head of its own whatever tie_word_embeddings says
ARCHITECTURE_FACTS["muse_spark"] = dataclasses.replace(ARCHITECTURE_FACTS["muse_spark"], never_tied=True)


# routers that always keep an e_score_correction_bias buffer, whatever topk_method says
# the DSA models' configs hold mlp_bias, which their MLPs ignore; DeepSeek-V2 biases its shared experts
for _model_type in ("deepseek_v32", "glm_moe_dsa"):
    ARCHITECTURE_FACTS[_model_type] = ArchitectureFacts(mlp_bias=NEVER, unused_keys=("mlp_bias",))


ARCHITECTURE_FACTS["deepseek_v2"] = ArchitectureFacts(shared_expert_bias=True)
# GIT's text model is BERT's, post-norm: biased query/key/value/output and a plain biased feed-forward,
# two biased LayerNorms a layer and none after the last, learned positions and a LayerNorm on the
# embeddings, a biased head tied or not
ARCHITECTURE_FACTS["git"] = ArchitectureFacts(
    qkv_bias=ALWAYS,
    o_bias=ALWAYS,
    gated_mlp=False,
    mlp_bias=ALWAYS,
    norm_bias=True,
    final_norm=False,
    head_bias=ALWAYS,
    learned_positions=0,
    embedding_norm=True,
)
# DeepSeek-OCR-2's text model: DeepSeek-V2's MoE with plain multi-head attention, its shared experts biased
# with mlp_bias too
for _model_type in ("deepseek_ocr2", "deepseek_ocr2_text"):
    ARCHITECTURE_FACTS[_model_type] = ArchitectureFacts(shared_expert_bias=True)


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


ARCHITECTURE_FACTS["axk1"] = dataclasses.replace(ARCHITECTURE_FACTS["axk1"], moe_post_norm=True)


for _model_type in ("nemotron_h", "mllama_text_model", "mllama"):  # no tied-weights keys in the class
    ARCHITECTURE_FACTS[_model_type] = dataclasses.replace(ARCHITECTURE_FACTS[_model_type], never_tied=True)


# Inkling: "hybrid" layers are full attention, "hybrid_sliding" ones sliding, with their own swa_* heads;
# the router's epsilon, its shared-expert sink and the class's fixed count of conv states size nothing;
# its class turns local_layer_ids into layer_types and a release's dense_intermediate_size into
# intermediate_size (its intermediate_size into moe_intermediate_size), which are read
_INKLING = ArchitectureFacts(
    inkling=1,
    never_tied=True,
    layer_names=("hybrid_sliding",),
    unused_keys=(
        "rms_norm_eps_moe_gate",
        "shared_expert_sink",
        "number_of_conv_states",
        "unpadded_vocab_size",
        "local_layer_ids",
        "dense_intermediate_size",
    ),
    mtp_only_keys=("mtp_hidden_states_first", "chain_hidden_post_norm", "mtp_local_layer_ids"),
)
ARCHITECTURE_FACTS["inkling_text"] = _INKLING
ARCHITECTURE_FACTS["inkling_mm_model"] = _INKLING
# Inkling 2: blocks of n_layers_per_attn_res_block layers only group the residuals the attention
# residuals read (one query per input whatever the grouping); the softcaps are constants
_INKLING2 = ArchitectureFacts(
    inkling=2,
    never_tied=True,
    layer_names=("hybrid_sliding",),
    unused_keys=("n_layers_per_attn_res_block", "mlp_gate_softcap", "number_of_conv_states"),
)
for _model_type in ("inkling2_text", "inkling2", "inkling2_loop_text", "inkling2_loop"):
    ARCHITECTURE_FACTS[_model_type] = _INKLING2
# PI0 and PI0.5: the action chunk's length, the denoising steps and the timestep's sampling and sinusoid
# constants (a non-persistent buffer) size no tensor and no cache entry a token keeps
_ACTION_CONSTANTS = ("chunk_size", "num_inference_steps", "time_sampling_offset", "min_period", "max_period")
ARCHITECTURE_FACTS["pi0"] = ArchitectureFacts(action_expert=True, unused_keys=_ACTION_CONSTANTS)
ARCHITECTURE_FACTS["pi05"] = ArchitectureFacts(
    action_expert=True, adaptive_action_norms=True, unused_keys=_ACTION_CONSTANTS
)
# Unlimited-OCR's text model: DeepSeek-V2's MoE with plain attention, its shared experts biased with mlp_bias
ARCHITECTURE_FACTS["unlimited_ocr_text"] = ArchitectureFacts(shared_expert_bias=True)


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
    if arch.qk_norm_by_type:
        return "head" if cfg.get("qk_norm_type") == "qwen3" else "full"
    return width if switched_on and not arch.weightless_qk_norm else None


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
    elif layer.attention == "swa" and facts(cfg)[0].swa_heads_key:
        heads = cfg.number(facts(cfg)[0].swa_heads_key or "", default=heads) or heads
    elif layer.attention == "swa":
        kv *= facts(cfg)[0].swa_kv_multiplier
    arch = facts(cfg)[0]
    if arch.gemma_stack == 4:
        override = gemma_layer_sizes(cfg, layer)
        hd = vd = override.get("head_dim", hd)
        kv = override.get("num_key_value_heads", kv)
    if arch.multi_query:  # GPT-BigCode: one KV head or as many as queries, whatever num_key_value_heads says
        kv = 1 if cfg.get("multi_query") is True else heads
    if arch.falcon_switches:
        kv = _falcon_kv_heads(cfg, heads)
    return heads, kv, hd, vd


def _falcon_kv_heads(cfg: ArchConfig, heads: int) -> int:
    """Falcon's KV heads as its attention sizes query_key_value: num_kv_heads under
    new_decoder_architecture, else one with multi_query, else one per query head. transformers 5.25
    also saves a derived num_key_value_heads, which need not agree once a switch is turned (the layout
    follows the switches and num_kv_heads, never that copy)."""
    if cfg.get("new_decoder_architecture") is True:
        return cfg.number("num_kv_heads", default=heads) or heads
    return 1 if cfg.get("multi_query") is not False else heads


# an MLA layer's sizes a per_layer_config entry may give (Dots 3); num_key_value_heads and head_dim follow
# the heads and nope + rope there, and size nothing of their own
MLA_LAYER_KEYS = (
    "num_attention_heads",
    "num_key_value_heads",
    "q_lora_rank",
    "kv_lora_rank",
    "qk_nope_head_dim",
    "qk_rope_head_dim",
    "v_head_dim",
    "head_dim",
)


def mla_layer_number(cfg: ArchConfig, index: int, key: str, default: int = 0) -> int:
    """One MLA size of a layer: its per_layer_config entry's (keyed "2" or 2) where the architecture reads
    them (Dots 3), else the config's."""
    table = cfg.get("per_layer_config") if facts(cfg)[0].mla_layer_sizes else None
    if isinstance(table, dict):
        entry = table.get(str(index), table.get(index))  # type: ignore[call-overload]
        value = entry.get(key) if isinstance(entry, dict) else None
        if type(value) is int and value >= 0:
            return value
    if key == "num_attention_heads":
        return cfg.num_heads or default
    return cfg.number(key, default=default) or default


def mla_latent_rows(cfg: ArchConfig, layers: list[LayerInfo]) -> set[int]:
    """kv_lora_rank + qk_rope_head_dim of every MLA layer (its sliding ones too) where layers have sizes
    of their own (Dots 3); empty otherwise."""
    if not facts(cfg)[0].mla_layer_sizes:
        return set()
    return {
        mla_layer_number(cfg, x.index, "kv_lora_rank") + mla_layer_number(cfg, x.index, "qk_rope_head_dim")
        for x in layers
        if not x.mtp and x.attention in ("mla", "dsa", "swa")
    }


def mla_rope_dim(cfg: ArchConfig, layer: LayerInfo) -> int:
    """The rope slice of an MLA layer's keys (in kv_a_proj_with_mqa and the cached latent): none in a
    NoPE layer of an architecture whose NoPE layers drop it (Mistral Large 4: no_rope_layers, 1 = RoPE)."""
    rope = cfg.number("qk_rope_head_dim", default=0) or 0
    if not facts(cfg)[0].lerope_ssmax:
        return rope
    uses = cfg.int_list("no_rope_layers")
    return rope if uses is None or layer.index >= len(uses) or uses[layer.index] else 0


def kv_shared(cfg: ArchConfig, layer: LayerInfo) -> bool:
    """Whether an MLA layer attends to an earlier layer's latent (kv_source_layers names another layer),
    and so has no kv_a_proj_with_mqa and no kv_a_layernorm of its own. kv_source_layers is read (taken as
    understood) only when no layer shares: the cache figures do not model the sharing."""
    sources = cfg.text.get("kv_source_layers")
    if not isinstance(sources, list):
        return False
    if sources == list(range(len(sources))):
        cfg.get("kv_source_layers")
    return layer.index < len(sources) and sources[layer.index] != layer.index


def _falcon_bias(cfg: ArchConfig, arch: ArchitectureFacts) -> bool:
    """Falcon's ``bias`` or OPT's ``enable_bias``: every projection biased."""
    if arch.opt_switches:
        return cfg.get("enable_bias") is not False
    return arch.falcon_switches and cfg.get("bias") is True


GEMMA_LAYER_KEYS = ("head_dim", "num_key_value_heads")


def gemma_layer_sizes(cfg: ArchConfig, layer: LayerInfo) -> dict[str, int]:
    """A Gemma 4 layer's own head sizes: transformers' per_layer_config (keyed "05" or 5), which its
    configuration class derives from global_head_dim and, with attention_k_eq_v, num_global_key_value_heads
    for the global layers; read from those keys where the config was not read through the class."""
    table = cfg.get("per_layer_config")
    global_dim = cfg.number("global_head_dim")
    global_kv = cfg.number("num_global_key_value_heads")
    if isinstance(table, dict):
        for key, entry in table.items():
            if str(key).isdigit() and int(key) == layer.index and isinstance(entry, dict):
                return {k: v for k, v in entry.items() if k in GEMMA_LAYER_KEYS and type(v) is int and v > 0}
        return {}
    if layer.attention == "swa":
        return {}
    out = {"head_dim": global_dim} if global_dim else {}
    if global_kv and (cfg.get("attention_k_eq_v") is True or facts(cfg)[0].global_k_eq_v):
        out["num_key_value_heads"] = global_kv
    return out


# Evolla (modeling_evolla.py): Llama's decoder; EvollaForProteinText2Text keeps its lm_head apart from the
# embedding whatever tie_word_embeddings says (it declares no tied weights). Its protein side is written by
# estimate_evolla, as a tower of its own
ARCHITECTURE_FACTS["evolla"] = ArchitectureFacts(never_tied=True)
ARCHITECTURE_FACTS["EvollaModel"] = ARCHITECTURE_FACTS["evolla"]  # the model_type its released config names
