"""When hubdiff is not sure, it says so: the reasons a model's figures are unverified.

A config can hold a key that changes shapes, the cache or routing that hubdiff's reading does not
use (a new release's ``index_topk_freq``, a NAS model's ``block_configs`` in a form not understood),
or ``null`` where a number is expected. Then the figures are still computed, but every one of them
carries the reason, in text, JSON, reports and claims: a guess is never presented as a fact.

Which keys count: every key of the text config that hubdiff never read, whose name says it sizes
something (``*_size``, ``*_dim``, ``num_*``, ``*_layers``, ``*_heads``, ``*_experts``, ``*_types``,
``*_pattern``, ...), unless it is known not to change shapes, the cache or the active parameters
(rotary and scaling constants, dropout, token ids, routing-group choices that keep top-k).
"""

from __future__ import annotations

import re
from typing import Any

from .config import (
    BLOCK_PARTS,
    TEXT_CONFIG_KEYS,
    VISION_CONFIG_KEYS,
    ArchConfig,
    absurd_layer_count,
    installed_transformers,
)
from .estimate import ARCHITECTURE_FACTS, action_expert_parts, facts, vision_kind
from .estimate_audio import audio_modelled
from .estimate_encdec import encoder_decoder_doubts
from .estimate_facts import MLA_LAYER_KEYS
from .estimate_fastvit import fast_vlm_doubts
from .estimate_inkling import inkling_doubts
from .estimate_mobilenet import gemma3n_doubts
from .estimate_pe import perception_lm_doubts
from .estimate_towers import counted_parts, tower_doubts
from .estimate_vision import OWN_PARTS
from .layers import KNOWN_LAYER_NAMES, PATTERN_KEYS, LayerInfo, block_configs, layer_types
from .proven import PROVEN_TYPES, SWEPT_TRANSFORMERS, SWEPT_TYPES

_SHAPE_WORDS = re.compile(
    r"(size|dim|heads?|layers?|experts?|rank|window|pattern|blocks?|types?|kernel|groups?|ratios?|freq|"
    r"period|offset|top_?k|chunk|lora|expand|state|^num_|^n_|_num_|configs?$|interval|mult|width|depth|"
    r"sinks?|share|latent|compress|index|mtp|nextn|vocab|gate|bias|norm)",
    re.IGNORECASE,
)
# Names of scalar constants (scales, epsilons, init ranges), which size nothing whatever they are called
_SCALAR = re.compile(
    r"_(alpha|beta|eps|epsilon|scale|scaling|factor|coef|theta|multiplier|dropout|std|range|temperature|iters)$"
)
# Keys that match the words above but change no shape, no cache and no count of active parameters.
_IRRELEVANT = frozenset(
    {
        "rms_norm_eps",
        "layer_norm_eps",
        "layer_norm_epsilon",
        "norm_eps",
        "norm_epsilon",
        "norm_topk_prob",
        "topk_group",
        "n_group",
        "num_expert_group",
        "topk_method",
        "scoring_func",
        "routed_scaling_factor",
        "router_aux_loss_coef",
        "router_jitter_noise",
        "router_z_loss_coef",
        "aux_loss_alpha",
        "seq_aux",
        "output_router_logits",
        "moe_router_enable_expert_bias",
        "num_logits_to_keep",
        "vocab_size_per_layer_input",
        "chunk_size",
        "mamba_chunk_size",
        "rope_scaling",
        "rope_parameters",
        "rope_theta",
        "partial_rotary_factor",
        "attention_dropout",
        "hidden_dropout",
        "initializer_range",
        "pretraining_tp",
        "tie_word_embeddings",
        "use_cache",
        "num_steps",  # training bookkeeping: the checkpoint's step ("global_step100000", polyglot-ko)
        "moe_norm_min",  # ERNIE 4.5's floor of the routing weights' sum
        "expert_selection_fn",  # Cohere2-MoE: softmax or sigmoid over the router's logits
        "shared_expert_combination_strategy",  # Cohere2-MoE: sum or average of shared and routed outputs
        "scale_depth",  # MiniCPM's residual scale, scale_depth / sqrt(layers)
        "dim_model_base",  # MiniCPM's logit scale, hidden_size / dim_model_base
        "bos_token_id",
        "eos_token_id",
        "pad_token_id",
        "max_position_embeddings",
        "original_max_position_embeddings",
        "sliding_window_size",
        "attention_value_scale",
        "query_pre_attn_scalar",
        "final_logit_softcapping",
        "attn_logit_softcapping",
        "use_bidirectional_attention",
        "time_step_limit",
        "time_step_min",
        "time_step_max",
        "time_step_floor",
        "residual_in_fp32",
        "rescale_prenorm_residual",
        "mamba_hidden_act",
        "use_mamba_kernels",
        "hidden_act",
        "moe_shared_expert_overlap",
        "mtp_layers_block_type",
        "index_topk",
        "index_topk_pattern",
        "num_experts_per_tok",
        "image_token_index",
        "image_token_id",
        "video_token_id",
        "vision_start_token_id",
        "vision_end_token_id",
        "boi_token_index",
        "eoi_token_index",
        "mm_tokens_per_image",
        "transformers_version",
        "layer_types_mtp",
        "mtp_hybrid_override_pattern",  # checked on its own above
        "model_type",
        "ep_size",
        "layernorm_epsilon",
        "rotary_dim",
        "swa_rope_theta",
        "rope_local_base_freq",
        "index_kpool_always_select_tail",  # which pooled keys are scanned, not what is stored
        "index_share_for_mtp_iteration",  # whether MTP steps reuse indexer results
        "indexer_rope_interleave",
        "moe_router_dtype",  # the router's compute dtype
        "moe_renormalize",
        "use_grouped_topk",
        "qk_head_dim",  # qk_nope_head_dim + qk_rope_head_dim, both read
        "norm_head",  # the head's rows normalised at run time: no parameter more
        "norm_before_gate",  # Mamba-2's gated norm: the order of two operations, no shape
        "intermediate_size",  # the dense MLP's width; sizes nothing in a model without dense layers
        # generic PretrainedConfig fields that a to_dict() dump writes into every config
        "chunk_size_feed_forward",
        "num_beams",
        "num_beam_groups",
        "no_repeat_ngram_size",
        "encoder_no_repeat_ngram_size",
        "num_return_sequences",
        "top_k",
        "cross_attention_hidden_size",
        "add_cross_attention",
        "tie_encoder_decoder",
        "is_encoder_decoder",
        "is_decoder",
        "decoder_start_token_id",
        "sep_token_id",
        "forced_bos_token_id",
        "forced_eos_token_id",
        "pruned_heads",
        "problem_type",
        "tokenizer_class",
        "use_bfloat16",
        # GPT-2's sequence-summary head (GPT2DoubleHeadsModel): no language-model checkpoint has it
        "n_ctx",  # CodeGen / GPT-J: the context length, beside n_positions
        "num_image_tokens",  # image tokens per image: a prompt length, no shape
        "summary_type",
        "summary_use_proj",
        "summary_proj_to_labels",
        "summary_first_dropout",
        "summary_activation",
        "freeze_text_layers",  # IDEFICS's training switches: which parameters are frozen, not which exist
        "freeze_vision_layers",
    }
)
# Keys whose null means "none of this" (no sliding window, no q LoRA, no shared expert), not a gap.
_NULL_MEANS_NONE = frozenset(
    {
        "sliding_window",
        "q_lora_rank",
        "n_shared_experts",
        "num_shared_experts",
        "attention_chunk_size",
        "moe_latent_size",
        "head_dim",
        "max_window_layers",
        "layer_types",
        "mlp_layer_types",
        "rope_scaling",
        "n_inner",  # GPT-2: 4 x n_embd
        "num_ln_in_parallel_attn",  # Falcon: two with new_decoder_architecture, else one
        # a null MTP count: no MTP layers, as the classes build them (ERNIE 4.5's num_mtp_layers: None)
        "num_nextn_predict_layers",
        "num_mtp_layers",
        "mtp_num_hidden_layers",
        # spellings of the context length: a null one beside another that is set hides nothing (and with
        # none set, "no context length" is said on its own)
        "max_sequence_length",
        "seq_length",
        "n_positions",
        "max_seq_len",
    }
)


# Keys a configuration class of transformers turns into its layer_types (Cohere2-MoE's pattern of the
# dense prefix layers): understood when the config was read through that class, whose layer_types are read
_RESOLVED_INTO_LAYER_TYPES = frozenset(
    # Cohere2-MoE; AFMoE; Ring-2.5
    {"prefix_dense_sliding_window_pattern", "global_attn_every_n_layers", "layer_group_size"}
    # Ergo: its layer_types and its mlp_layer_types (the leading dense layers)
    | {"global_attention_every_n_layers", "num_dense_blocks"}
)

# Keys of an outer config that size tensors hubdiff does not write, with what they size
_OUTER_NOT_MODELLED = {
    "backbone_hidden_size": "a drafter's projections from and to its target model's width (Gemma 4's assistants)",
    "num_chroma": "MusicGen Melody's projection of the melody's chroma into the decoder (audio_enc_to_dec_proj)",
}

# Switches of an outer config that, on, add tensors hubdiff does not write, with what they add
_OUTER_SWITCHES_NOT_MODELLED = {
    "use_ordered_embeddings": "a drafter's centroid head (masked_embedding: centroids, token_ordering)",
}

MAX_REASONS = 12
# Sub-configs hubdiff reads (or that hold no model); any other one with a model's keys is not counted
_MODELLED_PARTS = frozenset(
    {*TEXT_CONFIG_KEYS, *VISION_CONFIG_KEYS, *BLOCK_PARTS, "quantization_config", "linear_attn_config"}
    | {"rope_scaling", "rope_parameters"}
)
_MODEL_KEYS = frozenset(
    {
        "hidden_size",
        "d_model",
        "num_hidden_layers",
        "num_layers",
        "n_layer",
        "depth",
        "text_config",
        "encoder_layers",
    }
)


def unverified_reasons(cfg: ArchConfig, layers: list[LayerInfo]) -> tuple[str, ...]:
    """Call after every figure is computed: which keys were read is known only then."""
    reasons: list[str] = []
    raw = cfg.raw_text
    types = layer_types(cfg, cfg.num_layers) or []
    known_types = KNOWN_LAYER_NAMES | set(facts(cfg)[0].layer_names)  # Inkling's hybrid_sliding
    unknown_types = sorted({t for t in types if t not in known_types})
    if unknown_types:
        reasons.append(f"layer type {', '.join(unknown_types)} not understood")
    if "hybrid" in types and any(x.attention == "mamba" for x in layers) and not facts(cfg)[0].shared_blocks:
        reasons.append("hybrid layers beside Mamba layers (shared attention blocks) not modelled")
    blocks = block_configs(cfg)
    if raw.get("block_configs") is not None and blocks is None:
        reasons.append("block_configs not understood")
    absurd = absurd_layer_count(cfg.raw)
    if absurd:
        reasons.append(f"{absurd}: refused, no layers counted")
    elif cfg.num_layers == 0:
        reasons.append("no layer count in the config")
    if not cfg.hidden_size:
        reasons.append("no hidden size in the config")
    if not cfg.vocab_size:
        reasons.append("no vocabulary size in the config")
    if not cfg.num_heads and any(x.attention not in ("mamba", "rwkv", "mlstm", "none") for x in layers):
        reasons.append("no attention head count in the config")
    if any(x.mlp == "moe" for x in layers) and not cfg.experts_per_token:
        reasons.append("no experts-per-token count in the config: active parameters unknown")
    if not cfg.via_transformers:
        reasons += _guesses_of_the_key_reader(cfg)
    nulls_explained = {"num_key_value_heads", "intermediate_size"} if blocks is not None else set()
    nulls_explained |= set(facts(cfg)[0].nulls_mean_default)
    for key, value in raw.items():
        if type(value) is int and value < 0 and key in cfg.read_keys and not key.endswith("_token_id"):
            reasons.append(f"{key} is {value}: a negative size")  # no figure of it can be true
        if value is None and key in cfg.read_keys and key not in nulls_explained | _NULL_MEANS_NONE:
            resolved = cfg.text.get(key)
            if resolved is None:
                reasons.append(f"{key} is null")
    arch, _ = facts(cfg)
    for key, built in arch.builds_only:
        value = cfg.get(key)
        if value is not None and value != built:
            reasons.append(f"{key} {value!r}: a layout transformers' {cfg.model_type} class does not build")
    sources = cfg.int_list("kv_source_layers")
    if sources is not None and any(
        i < len(sources) and sources[i] != i and not x.kv_shared for i, x in enumerate(layers) if not x.mtp
    ):
        reasons.append("kv_source_layers not understood: a layer of this kind reading another's keys")
    for key, modelled in arch.models_only:
        value = cfg.get(key)
        if value is not None and value != modelled:
            reasons.append(f"{key} {value!r}: a layout of {cfg.model_type} hubdiff does not write out")
    understood = cfg.read_keys | set(PATTERN_KEYS) | _IRRELEVANT | set(arch.unused_keys)
    action_expert = ARCHITECTURE_FACTS.get(str(cfg.raw.get("model_type")))
    if action_expert is not None and action_expert.action_expert:  # the outer config's keys, scanned here
        understood |= set(action_expert.unused_keys)
    if cfg.via_transformers:  # the class has written these into the layer_types read
        understood |= _RESOLVED_INTO_LAYER_TYPES
        understood |= set(arch.aliased_keys)  # read through the class's attribute_map
    if not cfg.mtp_layers:  # no MTP layer for these keys to shape
        understood |= set(arch.mtp_only_keys)
    if arch.idle_unless_layer and arch.idle_unless_layer[0] not in types:  # no layer has the feature
        understood |= set(arch.idle_unless_layer[1])
    if arch.idle_unless_listed and not cfg.get(arch.idle_unless_listed[0]):  # no layer listed for it
        understood |= {arch.idle_unless_listed[0], *arch.idle_unless_listed[1]}
    for width_key in (arch.dense_width_key, arch.swa_heads_key):  # read by every layer of its kind, of
        if width_key:  # which this config may have none
            understood.add(width_key)
    parts = [raw.get(k) for k in BLOCK_PARTS]
    flat = dict(raw)
    for part in parts:
        if isinstance(part, dict):
            flat.update(part)
    for key, value in flat.items():
        if value is None or key in understood or _SCALAR.search(key) or not _SHAPE_WORDS.search(key):
            continue
        if key == "per_layer_config" and not arch.gemma_stack:  # Gemma's stacks read it (gemma_layer_sizes)
            if arch.mla_layer_sizes and isinstance(value, dict):  # Dots 3's MLA sizes are read layer by layer
                value = {
                    i: {k: v for k, v in e.items() if k not in MLA_LAYER_KEYS} if isinstance(e, dict) else e
                    for i, e in value.items()
                }
            if _sizes_of_their_own(value, flat):
                reasons.append(f"{key} not understood: layers with sizes of their own")
            continue
        if key.endswith("_config") and isinstance(value, dict) and key != "linear_attn_config":
            continue  # nested configs are reported below
        if value is False or value == 0 or key.startswith("_"):
            continue  # a feature switched off (or a private bookkeeping key) changes nothing
        reasons.append(f"{key} not understood")
    if cfg.vision and vision_kind(cfg) is None:
        kind = cfg.vision.get("model_type") or "of this kind"
        reasons.append(f"vision tower {kind} not modelled: not counted")
    reasons += tower_doubts(cfg)
    reasons += encoder_decoder_doubts(cfg)
    reasons += inkling_doubts(cfg)
    reasons += gemma3n_doubts(str(cfg.raw.get("model_type") or ""), cfg.vision, cfg.raw.get("audio_config"))
    reasons += fast_vlm_doubts(str(cfg.raw.get("model_type") or ""), cfg.vision)
    reasons += perception_lm_doubts(str(cfg.raw.get("model_type") or ""), cfg.vision)
    mtp_pattern = raw.get("mtp_hybrid_override_pattern")
    if mtp_pattern is not None and mtp_pattern != "*E":
        reasons.append(
            f"mtp_hybrid_override_pattern {mtp_pattern!r} not understood (MTP layers taken as attention + MoE)"
        )
    for key in _OUTER_NOT_MODELLED:  # outside the text config, so not among the keys scanned above
        if cfg.raw.get(key) is not None and cfg.raw_text is not cfg.raw and key not in cfg.read_keys:
            reasons.append(f"{key} not understood: {_OUTER_NOT_MODELLED[key]} not counted")
    for key in _OUTER_SWITCHES_NOT_MODELLED:
        if cfg.raw.get(key) is True and cfg.raw_text is not cfg.raw:
            reasons.append(f"{key} not understood: {_OUTER_SWITCHES_NOT_MODELLED[key]} not counted")
    counted = counted_parts(cfg)  # a resampler counted with its vision tower (Idefics2's perceiver)
    if audio_modelled(cfg):  # an audio tower counted with its projector (estimate_audio)
        counted |= {"audio_config"}
    counted |= OWN_PARTS.get(str(cfg.raw.get("model_type")), frozenset())  # counted with the tower
    if action_expert is not None and action_expert.action_expert:
        counted |= {"vlm_config", "dit_config"}
        reasons += _action_expert_doubts(cfg)
    for key, value in cfg.raw.items():  # an audio tower, a talker, a second model: not counted
        if value is cfg.raw_text:  # the part read as the text model (MusicGen's decoder)
            continue
        if key not in _MODELLED_PARTS | counted and isinstance(value, dict) and _MODEL_KEYS & set(value):
            reasons.append(f"{key}: a further model (audio tower, talker, ...) that is not counted")
    # key names come from the Hub: bounded in length and number, so a hostile config cannot flood a report
    reasons = [r if len(r) <= 160 else r[:157] + "..." for r in reasons]
    if len(reasons) > MAX_REASONS:
        reasons = [
            *reasons[: MAX_REASONS - 1],
            f"and {len(reasons) - MAX_REASONS + 1} more keys not understood",
        ]
    unproven = layout_unproven(cfg)
    return tuple(reasons) + ((unproven,) if unproven else ())


def sweep_versions() -> tuple[str, str | None]:
    """(the transformers the sweep ran on, the one installed): a proof is of one version's classes."""
    return SWEPT_TRANSFORMERS, installed_transformers()


def _installed_unswept() -> str | None:
    """Why the sweep's verdicts do not carry over to what is installed, or None when they do."""
    swept, installed = sweep_versions()
    if installed == swept:
        return None
    shown = f"transformers {installed}" if installed else "no transformers"
    return f"{shown} installed, which the sweep never ran on (it ran on transformers {swept})"


def layout_unproven(cfg: ArchConfig) -> str | None:
    """Unknown means unverified: the layout hubdiff writes out for a model_type the sweep
    (scripts/sweep.py) has not proven exact is a guess, and said to be one. That includes a model_type
    transformers does not ship (remote code, which hubdiff never runs): the sweep cannot build it, so
    hubdiff's common layout (gated MLP, two norms a layer, biases where the config sets them) or the
    table's facts for a model_type of that name are never more than an assumption for it. A proof is of
    the classes of the transformers the sweep ran on: with another installed, nothing is proven."""
    model_type = cfg.raw.get("model_type")
    if not isinstance(model_type, str) or not model_type:
        return "config has no model_type: no layout the sweep proved applies, hubdiff's common one assumed"
    shown = model_type if len(model_type) <= 60 else model_type[:57] + "..."  # renderers escape the rest
    unswept = _installed_unswept()
    if model_type not in SWEPT_TYPES:
        how = "remote code named by auto_map" if "auto_map" in cfg.raw else "unknown to it"
        return (
            f"model_type {shown} is not one transformers {SWEPT_TRANSFORMERS} ships ({how}): "
            "layout not proven by the sweep" + (f"; {unswept}" if unswept else "")
        )
    if model_type not in PROVEN_TYPES:
        return f"layout of {shown} not proven by the sweep" + (f": {unswept}" if unswept else "")
    if unswept:
        return f"layout of {shown} not proven by the sweep for the installed version: {unswept}"
    return None


def _guesses_of_the_key_reader(cfg: ArchConfig) -> list[str]:
    """What hubdiff's own readers assume where transformers' classes would know the architecture's
    default: said, so that a figure read without transformers is never more confident than it is."""
    out = []
    raw, text = cfg.raw, cfg.raw_text
    if "tie_word_embeddings" not in raw and "tie_word_embeddings" not in text:
        out.append("tie_word_embeddings not in the config: the output head is taken as separate")
    patterns = ("layer_types", "layers_block_type", "sliding_window_pattern", "use_sliding_window")
    if (
        cfg.number("sliding_window")
        and not any(k in text for k in patterns)
        and not cfg.get("hybrid_layer_pattern")
    ):
        out.append("sliding_window with no layer pattern: every layer taken as sliding")
    chunk_keys = ("no_rope_layers", "layer_types", "hybrid_layer_pattern")
    if cfg.number("attention_chunk_size") and not any(k in text for k in chunk_keys):
        out.append("attention_chunk_size with no no_rope_layers: every layer taken as global")
    return out


def architecture_assumption(cfg: ArchConfig) -> str:
    """What a config-only figure rests on: hubdiff's own model of the architecture (its table's facts,
    or the common layout), and what the sweep says of that model for this model_type."""
    model_type = str(cfg.raw.get("model_type") or "")
    text_type = cfg.model_type or model_type
    known = text_type in ARCHITECTURE_FACTS or model_type in ARCHITECTURE_FACTS
    own = (
        f"hubdiff's own model of {text_type} (norms, biases, q/k norms from its architecture table)"
        if known
        else f"hubdiff's own model of {text_type or '(no model_type)'} (its common layout: gated MLP, "
        "two norms a layer, biases where the config sets them)"
    )
    swept, installed = sweep_versions()
    if model_type in PROVEN_TYPES:
        status = f"proven exact by the sweep against transformers {swept}'s class"
    elif model_type in SWEPT_TYPES:
        status = f"not proven by the sweep against transformers {swept}'s class"
    else:
        status = (
            f"not sweepable: transformers {swept} does not ship {model_type or 'a config without model_type'}"
        )
    if installed != swept:
        shown = f"transformers {installed}" if installed else "no transformers"
        status = f"not proven for the installed {shown}, which the sweep never ran on ({status})"
    remote = (
        "; auto_map names remote code, never run: the layout is transformers' own class's"
        if "auto_map" in cfg.raw and model_type in SWEPT_TYPES
        else ""
    )
    return f"layout: {own}, {status}{remote}"


def _sizes_of_their_own(table: Any, config: dict[str, Any]) -> bool:
    """Whether a per-layer table (``per_layer_config``, keyed by layer index) gives some layer another
    value than the config's own for a key both name: a table that repeats the config changes no count,
    one that does not is read by nothing hubdiff models (Step 3.7's and Dots 3's heterogeneous layers)."""
    if not isinstance(table, dict):
        return False
    for entry in list(table.values())[:MAX_TABLE_ENTRIES]:
        if isinstance(entry, dict) and any(k in config and config[k] != v for k, v in entry.items()):
            return True
    return False


MAX_TABLE_ENTRIES = 4096  # layers a per-layer table is read for: a hostile one cannot make this slow


def _action_expert_doubts(cfg: ArchConfig) -> list[str]:
    """PI0's doubts about its two stacks, each read as its own config: the vision-language model's text
    config and tower, and the action expert's keys (whose reading a second stack makes no doubt of the
    first's)."""
    parts = action_expert_parts(cfg)
    if parts is None:
        return ["vlm_config or dit_config missing: the two stacks not counted"]
    inner, expert, expert_layers = parts
    out = [f"vlm_config: {r}" for r in unverified_reasons(inner, [])]
    # the weights' dtype is the outer config's (read and checked there), not the nested text config's
    out = [r for r in out if r != "vlm_config: dtype is null"]
    return out + [f"dit_config: {r}" for r in unverified_reasons(expert, expert_layers)]
