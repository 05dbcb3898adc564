"""The names of the config keys that size a model: every spelling of the counts, and the roles of a
number by its name. The boundary (``config_bounds``) bounds exactly these before anything reads a
config, and the metrics' readers (``_metrics/config.py``) read them; kept here, below both.
"""

from __future__ import annotations

import re

# Keys that carry a number which sizes a tensor or the cache; anything larger than these bounds is
# refused before a single per-layer structure is built.
MAX_LAYERS = 1_024  # far above any release (Nemotron-H: 118); the boundary in _source refuses more
MAX_DIM = 1 << 40

# Every spelling of the counts that drive per-layer and per-expert work; the boundary that validates
# what comes from the Hub (_source/layout.py) bounds exactly these.
LAYER_KEYS = ("num_hidden_layers", "n_layer", "num_layers", "n_layers")
MTP_LAYER_KEYS = ("num_nextn_predict_layers", "mtp_num_hidden_layers", "num_mtp_layers")
EXPERT_KEYS = ("n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts", "n_experts")
SHARED_EXPERT_KEYS = ("n_shared_experts", "num_shared_experts", "moe_num_shared_experts")
EXPERTS_PER_TOKEN_KEYS = (
    "num_experts_per_tok",
    "moe_topk",
    "moe_k",
    "num_experts_per_token",
    "experts_per_token",
    "moe_top_k",
    "top_k_experts",
)

# The role of a number, by name: a size, count or multiplier (SIZE_KEY, MULTIPLIER_KEY), as opposed to
# an id, an epsilon or a dropout. The boundary (_source/config_bounds.check_config) bounds a key only when
# its role is one of these AND something uses it as a number: a configuration class of transformers
# declares it so (_source/numeric_keys, generated) or hubdiff's own readers read it (HUBDIFF_NUMERIC_KEYS).
SIZE_KEY = re.compile(
    r"(^|_)(size|dim|channels|heads|rank|depth|embd|layers|blocks|experts)$|^d_model$|^(n|num)_"
)
MULTIPLIER_KEY = re.compile(r"(^|_)(mult|multiplier|factor|expand)$|(^|(?<!aspect)_)ratio$")
# Sizes hubdiff's readers take as numbers that no configuration class of transformers declares (remote
# code's spellings: Nemotron-NAS block_configs, Kimi's linear_attn_config, DeepSeek-VL's vt_* tower...)
HUBDIFF_NUMERIC_KEYS = frozenset(
    {
        "block_auto_adjust_ff_dim",
        "expert_intermediate_size",
        "ffn_mult",
        "full_attn_layers",
        "ignored_layers",
        "kda_layers",
        "layers_num_experts",
        "n_heads_in_group",
        "num_bits",
        "padded_vocab_size",
        "routed_expert_hidden_size",
        "swa_v_head_dim",
        "vision_feature_layers",
        "vt_hidden_size",
        "vt_intermediate_size",
        "vt_num_hidden_layers",
        "weight_block_size",
    }
)

# Where multimodal configs nest the language model and the vision tower, in order of preference
TEXT_CONFIG_KEYS = ("text_config", "language_config", "llm_config")
VISION_CONFIG_KEYS = ("vision_config", "visual", "vision_tower_config")
# Composite configs whose language model (what their causal-LM class builds) is the sub-config under
# "decoder", beside a text encoder and an audio codec of their own (MusicGen): their configuration class
# cannot say which of its text parts is the text model without being asked for the decoder's; and
# VisionEncoderDecoder's, whose decoder is the language model under any image encoder
DECODER_TEXT_TYPES = frozenset({"musicgen", "musicgen_melody", "vision-encoder-decoder"})
# Text configs of encoder-decoders whose attribute_map points num_hidden_layers / num_attention_heads at an
# encoder the model does not build (PP-FormulaNet's: its encoder is the vision tower): the language
# model's layers and heads are the decoder's keys, read before the aliases
DECODER_STACK_KEYS: dict[str, tuple[str, str]] = {
    "pp_formulanet_text": ("decoder_layers", "decoder_attention_heads"),
    # Florence-2's BART (its text config's own type is bart's: the outer type is looked up after it)
    "florence2": ("decoder_layers", "decoder_attention_heads"),
    "udop": ("num_decoder_layers", "num_heads"),  # its attribute_map's num_hidden_layers is the encoder's
}
# where an architecture's attention head width is a key of its own (UDOP's T5-style d_kv: heads x d_kv
# wide projections, whatever d_model / heads is)
HEAD_DIM_KEYS: dict[str, str] = {"udop": "d_kv"}
# Where a config that is no text config itself nests a whole vision-language model beside other stacks
# (PI0's PaliGemma beside its action expert): its language model and tower are the text and vision read
NESTED_MODEL_KEYS = ("vlm_config",)
