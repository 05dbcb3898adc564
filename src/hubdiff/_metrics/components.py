"""Parameters by component, from tensor names and shapes (never from a model's name).

Rules, first match wins: vision tower, multimodal projector, MTP layers (kept apart, with any copies of
the embedding or head they store), quantization scales (counted apart, never as parameters),
embeddings, output head, hyper-connections, routers, routed experts, shared experts, DSA indexer,
linear-attention blocks (KDA, Gated DeltaNet, Mamba), norms, attention, dense MLP, and "other" for
whatever matches none: nothing is dropped.

Packed low-bit weights (``weight_packed`` / ``*_blocks`` in U8, ``qweight`` in I32) count as the
logical parameters they hold; F4 tensors already have logical shapes.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .. import dtypes
from ..patterns import Pattern
from .config import ArchConfig
from .figures import COMPONENTS
from .layers import LINEAR_KINDS, LayerInfo

_LAYER = re.compile(r"(?:^|\.)(?:layers|h|layer|blocks|decoder_layers)\.(\d+)(?:\.|$)")
_VISION = {
    "visual",
    "vision_tower",
    "vision_model",
    "vision_encoder",
    "vit",
    "image_encoder",
    "vision",
    "vpm",
    "siglip",
    "image_newline",
    "image_tower",  # Video-LLaVA: a CLIP tower for images and one for videos
    "video_tower",
    "vision_embedder",  # Gemma 4 Unified: the encoder-free patch embedding in place of a tower
    "audio_tower",  # counted with the vision side: an encoder of another modality, not run by text tokens
    "audio_encoder",  # Dots 3's checkpoints: its audio tower and adapter
    "high_res_vision_neck",  # DeepSeek-VL hybrid: SAM's second neck, its downsampling, its mixing scalar
    "high_res_vision_proj",
    "high_res_vision_alpha",
    "vision_backbone",  # Molmo's own names: image_vit, image_pooling_2d, image_projector
    "vision_embed_tokens",  # Fuyu: patches go straight into the text width through one linear
    "vision_tokenizer",  # Apertus 1.5's VQGAN encoder and WavTokenizer encoder, whose codes are text tokens
    "audio_tokenizer",
    "vision_adapter",  # Muse Glimmer's MLP after its tower (Llama 4 keeps one inside its vision_model)
    "sam_model",  # Unlimited-OCR's and DeepSeek-OCR-2's checkpoints: SAM's tower
    "view_separator",  # the learned separator between an image's views (DeepSeek-OCR-2 spells it so:)
    "view_seperator",
    "qwen2_model",  # DeepSeek-OCR-2: a Qwen2 stack read over SAM's patches
    "embed_tokens_extend",  # Phi-4-multimodal: its image and audio encoders, inside its embeddings
    "vqmodel",  # an image tokenizer (Janus's VQ-GAN, Chameleon's and Emu3's VQ-VAE): images in and out, not text
    "img_temporal_embedding",  # GIT: one learned offset per frame (num_image_with_embedding)
    "protein_encoder",  # Evolla: a protein's SaProt encoder and the resampler of its output, run per protein
}
_PROJECTOR = {
    "mm_projector",
    "multi_modal_projector",
    "merger",
    "deepstack_merger_list",
    "merger_list",  # Qwen3-Omni's name for its deepstack mergers
    "connector",
    "projector",
    "mlp1",
    "vision_projection",
    "aligner",
    "mlp_AR",  # PaddleOCR-VL's projector, at the top level
    "embed_vision",  # Gemma 3n / 4: the multimodal embedders into the text width, beside the towers
    "embed_audio",
    "vit_large_projector",  # Step 3.7's linear from the downsampled tower into the text width
    "image_pooling_2d",
    "image_projector",
    "qformer",  # BLIP-2's Q-Former, its query tokens and projection into the text width
    "query_tokens",
    "language_projection",
    "visual_embeddings_table",  # Ovis: the visual vocabulary's embeddings, in the text width
    "patch_merge_mlp",  # MiniMax-M3 VL's MLP over merged patches, after its projector
    "resampler_model",  # ERNIE 4.5 VL's spatial and temporal merger
    "image_to_text_projection",  # Kosmos: latent queries cross-attending to the tower's output
    "vision_projector",  # HyperCLOVA X Vision's linear from the vision merger into the text width
    "generation_embeddings",  # Janus: image-code embeddings, their aligner into the text width, the head
    "generation_aligner",  # over the codebook; run for image tokens, not text ones
    "generation_head",
    "img_projection_up",  # Phi-4-multimodal's projections of image and audio features into the text width
    "img_projection_down",
    "up_proj_for_speech",
    "down_proj_for_speech",
    "up_proj_for_vision_speech",
    "down_proj_for_vision_speech",
    "visual_projection",  # GIT's linear and LayerNorm from its CLIP tower into the text width
    "layerwise_projectors",  # Granite 4 Vision's window Q-Former downsamplers, per deepstack layer pair
    "spatial_projectors",  # and per spatial offset group
}
# projector parts named at the top level (Mistral's consolidated checkpoints), a name that elsewhere may
# be a vision tower's own (a patch merger inside a tower)
# Gemma 4's assistants' pre_ / post_projection likewise take features of another model (the target's
# hidden states) into the text width and back, outside the decoder
_TOP_PROJECTOR = {
    "enc_to_dec_proj",  # VisionEncoderDecoder's map of the encoder's states into the decoder's width
    "patch_merger",
    "vision_language_adapter",
    "pre_mm_projector_norm",
    "pre_projection",
    "post_projection",
    # PI0's and PI0.5's projections of the robot's state and actions into the action expert's width and
    # out of it, and their timestep MLPs: another modality's side, not a text token's
    "action_in_proj",
    "state_proj",
    "action_time_mlp_in",
    "action_time_mlp_out",
    "time_mlp_in",
    "time_mlp_out",
    "action_out_proj",
}
_SCALE_SUFFIXES = (
    "_scale_inv",
    "_scales",
    "weight_scale",
    "input_scale",
    "weight_global_scale",
    "input_global_scale",
    "weight_shape",
    "weight_zero_point",
    "qzeros",
    "absmax",
    "quant_map",
    "quant_state",
    "k_scale",
    "v_scale",
    "q_scale",
    "scale_inv",
)
_NUMBERED_SCALE = re.compile(r"_scale_\d+$")  # e.g. NVFP4's per-tensor weight_scale_2
_EMBED = {
    "embed_tokens",
    "embed_in",
    "wte",
    "word_embeddings",
    "tok_embeddings",
    "embedding",
    "embeddings",
    "wpe",
    "embed_positions",
    "tokens_embed",  # GPT-1
    "positions_embed",
    "project_in",  # OPT: a narrower embedding projected in and out of the model's width
    "project_out",
    "embed_tokens_per_layer",  # Gemma 3n / 4: per-layer input embeddings, and their input from the hidden state
    "per_layer_model_projection",
    "input_embedding",  # CPM-Ant's tokens and prompt tokens, and its segments
    "segment_embedding",
    "embed",  # Inkling 2's checkpoint names (llm.embed, llm.embed_norm): the embedding and its own norm
    "embed_norm",
    "word_embedding",  # XLNet's tokens, and its masked-position embedding
    "mask_emb",
    "segment_emb",  # Kosmos-2.5's image / text segments
}
_HEAD = {"lm_head", "embed_out", "output", "unembed", "lm_loss"}  # unembed: Inkling 2's; lm_loss: XLNet's
_HEAD |= {"lm_heads"}  # MusicGen's: a head of each codebook
_ALTUP = {"altup", "altup_projections", "altup_unembed_projections"}
_ATTN = {
    "mlstm_layer",  # xLSTM's mLSTM
    "self_attn",
    "attn",
    "attention",
    "self_attention",
    "mixer",
    "mamba",
    "linear_attn",
    "temporal_block",
    "cross_attn",
    "conv",  # LFM2's short-convolution block, in place of attention
    "multi_head_attention",  # CTRL's
    "rel_attn",  # XLNet's relative attention
    "crossattention",  # BERT-style decoders' (BLIP's text decoder)
    "encoder_decoder_attention",  # Pix2Struct's decoder's cross-attention
    "encoder_attn",  # BART-style decoders' cross-attention into the encoder (TrOCR's, MusicGen's decoder)
    "position_bias",  # CPM-Ant's relative position bias, one table per head shared by every layer
}
_LINEAR_NAMES = {
    "A_log",
    "dt_bias",
    "D",
    "q_conv1d",
    "k_conv1d",
    "v_conv1d",
    "conv1d",
    "f_a_proj",
    "f_b_proj",
    "g_a_proj",
    "g_b_proj",
    "b_proj",
    "in_proj_qkvz",
    "in_proj_ba",
    "in_proj",
    "x_proj",
    "dt_proj",
    "rg_lru",  # RecurrentGemma's recurrent block
    "conv_1d",
    "time_decay",  # RWKV's time mixing
    "time_first",
    "output_gate",  # MiniMax's lightning attention: its gate and its persistent decay tables
    "slope_rate",
    "query_decay",
    "key_decay",
    "diagonal_decay",
}
# the names that show a recurrent mixer on their own: Doge's attention has a dt_proj too (its dynamic
# mask), and a Mamba mixer is told by its A_log, conv1d and in_proj beside its dt_proj
_LINEAR_WITNESSES = _LINEAR_NAMES - {"dt_proj"}
_MLP = {"mlp", "feed_forward", "ffn", "block_sparse_moe", "moe", "mlp_block", "mlps"}  # mlps: LongCat's
# Inkling's short convolutions on each sub-layer's output, beside attention's and the MLP's
_ATTN_OUTPUT_CONVS = {"attn_sconv", "post_attention_convolution"}
_MLP_OUTPUT_CONVS = {"mlp_sconv", "post_mlp_convolution"}
# Inkling 2's attention residuals (learned queries over the residual blocks) and its loop's message gates:
# mixings of residual streams, as hyper-connections are
_RESIDUAL_ATTENTION = {
    "attention_input",
    "mlp_input",
    "final_input",
    "message_input",
    "q_message_gate",
    "k_message_gate",
    "v_message_gate",
    "mlp_message_gate",
    "attn_res",  # their checkpoint names: llm.attn_res.attn_queries.{i}, mlp_queries.{i}, output_query
    "controllers",  # and the loop's: layers.{i}.controllers.{attn,k,v,mlp}.{down,forget,gain}_weight
}
# short convolutions over attention's keys and values (Inkling): no recurrent mixer
_KV_CONVS = {"k_sconv", "v_sconv", "sconv"}
_MLP |= {"self_conditioning"}  # DiffusionGemma's gated MLP of the previous step's soft embeddings
_MLP |= {"ff"}  # XLNet's layer_1 / layer_2
_ALIGNER_ATTENTION = frozenset({"query", "key_protein", "value_protein", "out_proj"})  # Evolla's
# MLP projections that sit in the layer itself, outside any "mlp" block (OPT, BART: fc1 / fc2)
_MLP_PROJECTIONS = {"fc1", "fc2", "fc_in", "fc_out", "dense_h_to_4h", "dense_4h_to_h"}
_MLP_PROJECTIONS |= {"per_layer_input_gate", "per_layer_projection"}  # Gemma 3n / 4: a gated per-layer input


@dataclass(frozen=True)
class TensorClass:
    component: str
    layer: int | None  # text-model layer index, when the name has one
    logical_params: int
    is_scale: bool


@dataclass
class ParamReport:
    total: int = 0  # logical parameters, scales excluded
    by_component: dict[str, int] = field(default_factory=dict)
    by_dtype: dict[str, int] = field(default_factory=dict)
    scale_elements: int = 0
    scale_bytes: int = 0
    stored_bytes: int = 0  # every tensor's bytes as stored, scales included (packed values as packed)
    mtp_embedding_copies: int = 0  # embedding / head copies stored inside MTP layers
    routed_by_layer: dict[int, int] = field(default_factory=dict)
    experts_by_layer: dict[int, int] = field(default_factory=dict)
    layer_features: dict[str, set[int]] = field(default_factory=dict)  # feature -> layers (MTP too) with it
    kv_a_rows: set[int] = field(default_factory=set)  # rows of kv_a_proj_with_mqa, one value when consistent
    other_names: list[str] = field(default_factory=list)


def _layer_of(name: str) -> int | None:
    match = _LAYER.search(name)
    return int(match.group(1)) if match else None


def _logical(name: str, dtype: str, shape: tuple[int, ...], bits: int, packed_u8_weights: bool) -> int:
    elements = 1
    for d in shape:
        elements *= d
    last = name.rsplit(".", 1)[-1]
    if dtype in ("U8", "I8") and (last == "weight_packed" or last.endswith("_blocks")):
        return elements * (8 // bits if bits in (1, 2, 4) else 2)
    if dtype == "U8" and last == "weight" and packed_u8_weights:  # NVFP4 / NF4: two 4-bit values a byte
        return elements * 2
    if dtype == "I32" and last in ("qweight", "weight_packed"):
        return elements * 32 // bits if bits in (2, 3, 4, 8) else elements * 8
    return elements


def _is_scale(segments: list[str]) -> bool:
    last = segments[-1]
    if last.startswith("hc_"):
        return False
    if last == "scale" and "router" in segments:  # Gemma 4's router scales its input, a learned vector
        return False
    if (
        last == "scale"
        and len(segments) > 1
        and (segments[-2] in _LEARNED_SCALES or segments[-2] == "norm" or segments[-2].endswith("l2_clip"))
    ):
        # Ergo's norm and residual modules' scales, and Inkling 2's learned per-head scale before an L2
        # clip (q_proj.norm.scale, checkpoint q_l2_clip.scale)
        return False
    return (
        last.endswith(_SCALE_SUFFIXES)
        or last in ("scales", "scale", "zeros", "g_idx", "SCB", "weight_format")
        or "quant_state" in segments  # bitsandbytes 4-bit: weight.quant_state.bitsandbytes__nf4
        or bool(_NUMBERED_SCALE.search(last))
    )


# modules whose learned vector a checkpoint names "scale" (Ergo's expert and shared-expert output norms and
# its residual gates): parameters, not quantization scales
_LEARNED_SCALES = frozenset(
    {"expert_output_norm", "shared_expert_output_norm", "post_attention_residual", "post_ffn_residual"}
)
# Ergo's residual gates, as transformers and as its checkpoints name them, and Muse Spark's: a learned
# per-channel mix
_RESIDUAL_GATES = frozenset(
    {"attention_residual_gate", "feedforward_residual_gate", "post_attention_residual", "post_ffn_residual"}
    | {"post_attention_residual_gate", "post_feedforward_residual_gate"}  # Muse Spark's
)


# a projection stored for every expert as one [experts, ...] tensor, named as the projection alone
_FUSED_EXPERT_PROJECTIONS = frozenset({"up_proj", "down_proj", "gate_proj", "gate_up_proj"})


_FLAT_VIT_PARTS = frozenset({"attn", "mlp", "norm1", "norm2"})


def _is_flat_vit(segments: list[str]) -> bool:
    """A ViT stored with no prefix of its own beside the text model's flat names (Cosmos3's unified
    checkpoints: ``patch_embed.*``, ``pos_embed.*``, ``blocks.{i}.attn.qkv``): text checkpoints name
    their blocks under a model prefix, and RWKV's bare ``blocks.{i}`` hold ``att``, ``ffn``, ``ln1``."""
    if segments[0] in ("patch_embed", "pos_embed"):
        return True
    return segments[0] == "blocks" and len(segments) > 2 and segments[2] in _FLAT_VIT_PARTS


# a T5-style encoder's own parts stored at the top beside its decoder (UDOP's: blocks, final norm, layout
# cell embeddings, relative biases): run once per input, as an encoder-decoder's encoder is
_UDOP_SHARED_BIAS = "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"
_T5_ENCODER_PARTS = (["block"], ["final_layer_norm"], ["cell_2d_embedding"], ["relative_bias"])


def _udop_part(name: str, shape: tuple[int, ...]) -> tuple[str, int | None] | None:
    """UDOP's T5-style names (modeling_udop.py), classified by its architecture only: T5's own checkpoints
    name theirs alike and are not held to this split. The decoder's decoder.block.N.layer.M.SelfAttention /
    EncDecAttention / DenseReluDense (N the layer, M the sub-layer), its relative_bias tables and its own
    patch embedding; the encoder's parts, run once per input (vision tower), but for its first-block
    relative bias, which the decoder's first relative_bias table is tied to and reads every token; the
    shared token table. None for any other name."""
    segments = name.split(".")
    if name == _UDOP_SHARED_BIAS:
        return "attention", None
    if name == "shared.weight" and len(shape) == 2:
        return "embeddings", None
    if segments[0] == "encoder" and segments[1:2] in _T5_ENCODER_PARTS:
        return "vision_tower", None
    if segments[0] != "decoder" or len(segments) < 3:
        return None
    if segments[1] == "relative_bias":
        return "attention", None
    if segments[1] == "embed_patches":
        return "embeddings", None
    if segments[1] != "block" or not segments[2].isdigit() or len(segments) < 6:
        return None
    layer = int(segments[2])
    if segments[5] == "layer_norm" and len(shape) == 1:
        return "norms", layer
    if segments[5] in ("SelfAttention", "EncDecAttention"):
        return "attention", layer
    if segments[5] == "DenseReluDense":
        return "dense_mlp", layer
    return None


# architectures whose checkpoints' names are classified by rules of their own before the common ones
ARCHITECTURE_CLASSIFIERS: dict[str, Callable[[str, tuple[int, ...]], tuple[str, int | None] | None]] = {
    "udop": _udop_part,
}


def _is_sam_part(rest: list[str]) -> bool:
    """A SAM encoder's own names below its prefix: its positions, patch embedding and neck, and its blocks'
    attn (fused qkv, proj, rel_pos_h / rel_pos_w), mlp.lin1 / lin2 and layer_norm1 / 2 (a text encoder's
    layers name theirs self_attn, fc1 / fc2)."""
    if rest[:1] in (["pos_embed"], ["patch_embed"], ["neck"]):
        return True
    if rest[:1] != ["layers"] or len(rest) < 4:
        return False
    part = rest[2:]
    sam_parts = (["attn"], ["mlp", "lin1"], ["mlp", "lin2"], ["layer_norm1"], ["layer_norm2"])
    return part[:1] in sam_parts or part[:2] in sam_parts


def classify(
    name: str, shape: tuple[int, ...], layers: dict[int, LayerInfo], num_layers: int
) -> tuple[str, int | None]:
    segments = name.split(".")
    segset = set(segments)
    if segset & _PROJECTOR and (
        segset & _VISION or set(segments[:2]) & _PROJECTOR or "multi_modal_projector" in segset
    ):
        return "multimodal_projector", None
    if segments[0] in _TOP_PROJECTOR or segments[:2] == ["visual_tokenizer", "head"]:  # Ovis 2.5's own names
        return "multimodal_projector", None
    if "visual" in segset and segments[segments.index("visual") + 1 :][:1] in (["proj_in"], ["proj_out"]):
        return "multimodal_projector", None  # Inkling 2's merger, as its checkpoints name it
    if segments[1:2] == ["encoder"] and set(segments[2:3]) & _PROJECTOR:  # DiffusionGemma's, in its encoder
        return "multimodal_projector", None
    if (
        segset & _VISION or segments[0] in ("vision", "image") or "audio" in segments[:2]
    ):  # model.audio: Inkling's
        return "vision_tower", None
    if _is_flat_vit(segments):
        return "vision_tower", None
    if (
        segments[0] == "encoder"
        and len(segments) > 2
        and segments[1] in ("embeddings", "encoder", "layernorm", "pooler")  # ViTModel's pooler too
    ):
        # an encoder stored at the top with embeddings, blocks and a norm of its own beside a "decoder"
        # (Pix2Struct's image encoder; an encoder-decoder's encoder): run once per input, not per token
        return "vision_tower", None
    if segments[:2] == ["model", "encoder"] and _is_sam_part(segments[2:]):
        # a SAM image encoder stored as an encoder-decoder's encoder (PP-FormulaNet's): run once per image
        return "vision_tower", None
    layer = _layer_of(name)
    # a text encoder's layers beside the decoder (Florence-2's BART) are numbered apart: no MTP beyond
    beyond = (
        layer is not None
        and num_layers
        and layer >= num_layers
        and segments[1:3] != ["language_model", "encoder"]
    )
    if "mtp" in segset or beyond:
        return "mtp", layer
    if len(shape) == 1 and segments[-3:-1] in (["embeddings", "LayerNorm"], ["embeddings", "norm"]):
        return (
            "norms",
            layer,
        )  # a LayerNorm on the embeddings (BERT's, GIT's, ModernBERT's), a norm as BLOOM's is
    if segset & _EMBED and not segset & _ATTN:
        return "embeddings", layer
    if segments[-3:] == ["language_model", "shared", "weight"] and len(shape) == 2:
        return "embeddings", layer  # Florence-2's BART token table, shared by its encoder and decoder
    if segments[:2] == ["transformer", "w"]:  # CTRL's token embedding
        return "embeddings", layer
    if segments[-1] == "z_L_init":  # HRM: the L stream's learned initial state, added to the input embeddings
        return "embeddings", layer
    if len(segments) > 2 and segments[-3] == "lm_heads":  # a head a codebook, under a composite's decoder
        return "output_head", layer  # (MusicGen's decoder.lm_heads.{i})
    if "cls" in segset and "predictions" in segset:  # BERT's prediction head: transform, decoder, bias
        return "output_head", layer
    if (segset & _HEAD and (segments[-2] in _HEAD or segments[0] in _HEAD)) or (
        len(segments) == 2
        and segments[0] in ("head", "output_projection", "decoder")  # BioGPT's head; ModernBERT-decoder's
    ):
        return "output_head", layer
    last = segments[-1]
    if any(s.startswith("hc_") for s in segments) or segset & _RESIDUAL_ATTENTION:
        return "hyper_connections", layer
    if segset & _ATTN_OUTPUT_CONVS:
        return "attention", layer
    if segset & _MLP_OUTPUT_CONVS:
        return "dense_mlp", layer
    if any(s.endswith("hyper_connection") or s == "hyper_connection_mixer" for s in segments):
        return "hyper_connections", layer  # Qwen4-Exp's gated residuals over its streams
    is_norm_weight = len(shape) == 1 and len(segments) > 1 and "norm" in segments[-2]
    if segset & _ALTUP and not is_norm_weight:
        return "hyper_connections", layer  # Gemma 3n's AltUp: further residual streams and their mixing
    if "laurel" in segset and not is_norm_weight:
        return "attention", layer  # Gemma 3n's LAuReL: a low-rank residual branch summed with attention
    if segments[-1] in (
        "e_score_correction_bias",
        "expert_bias",
        "router_bias",
    ):  # the router's, wherever kept (Laguna)
        return "routers", layer
    if "experts" in segset and "self_attention" in segset and len(shape) < 3:
        # JetMoE's mixture of attention: its router routes, its output bias is attention's
        return ("routers" if "router" in segset else "attention"), layer
    if "expert_output_norm" in segset:  # Ergo's checkpoints: each expert's output norm, with the experts
        return "routed_experts", layer
    if "shared_expert_output_norm" in segset:
        return "shared_experts", layer
    if "experts" in segset or "routed_experts" in segset:
        return "routed_experts", layer
    if "feed_forward" in segset and len(shape) == 3 and segments[-1] in _FUSED_EXPERT_PROJECTIONS:
        return "routed_experts", layer  # Ergo's checkpoints: fused [experts, ...] projections, no "experts"
    if segset & {"input_linear", "output_linear"} and segset & _MLP and len(shape) == 3:
        return "routed_experts", layer  # JetMoE's MoE: fused [experts, ...] projections under "mlp"
    if segset & {"block_sparse_moe", "moe"} and len(shape) == 3:  # fused [experts, ...] (GraniteMoE)
        return "routed_experts", layer
    if segset & {"shared_experts", "shared_expert", "shared_mlp", "share_expert"}:
        return "shared_experts", layer
    if "router" in segset and layer is not None and not segset & _ATTN:  # Gemma 4: beside the MLP
        return "routers", layer
    if last == "layer_scalar":  # Gemma 4: a learned scale of each layer's output, as a norm's weight
        return "norms", layer
    if (
        segset & {"gate", "router"} and segset & (_MLP | {"mixer"}) and "gate_proj" not in segset
    ) or segset & {"shared_expert_gate", "e_score_correction_bias", "expert_bias"}:
        return "routers", layer
    if "indexer" in segset:
        return "dsa_indexer", layer
    info = layers.get(layer) if layer is not None else None
    in_attn = bool(segset & _ATTN) or last.startswith("cross_attn_")  # mllama's cross_attn_attn_gate
    in_attn = in_attn or last == "alpha_cross_attn"  # IDEFICS's gate on its cross-attention's output
    if "adapter" in segset and layer is not None:  # Evolla's aligner in a decoder layer: a cross-attention
        # into the protein's latents (its gate, its projections: key_protein / value_protein read them), and
        # a feed-forward (ff) with a gate on its output
        in_attn = in_attn or last == "gate_attention" or segments[-2] in _ALIGNER_ATTENTION
        if last == "gate_ffw":
            return "dense_mlp", layer
    if in_attn and info is not None and info.attention == "none" and info.mlp != "none":
        # hybrid stacks (e.g. hybrid_override_pattern) name an MLP-only layer's block "mixer" too
        is_norm = len(shape) == 1 and any("norm" in x for x in segments[-2:])
        return ("norms" if is_norm else "dense_mlp"), layer
    if in_attn and info is not None and info.parallel_ssm and "mamba" in segset:
        return "linear_attention", layer  # the Mamba mixer beside a layer's attention (Falcon-H1, Zamba)
    if segments[-2:-1] == ["linear"] and layer is not None and info is not None and info.parallel_ssm:
        return "attention", layer  # Zamba: the linear map of the shared attention block's output
    if (
        (in_attn and info is not None and info.attention in LINEAR_KINDS)
        or "linear_attn" in segset
        or (in_attn and segset & _LINEAR_NAMES and (info is None or info.attention in LINEAR_KINDS))
    ):
        return "linear_attention", layer
    words = [s for s in segments if not s.isdigit()]  # StableLM's q_layernorm.norms.3.weight: per head
    if len(shape) == 1 and any(
        ("norm" in s or s.startswith("ln") or s.endswith("_ln") or s == "LayerNorm") for s in words[-2:]
    ):
        return "norms", layer
    if len(shape) == 1 and len(segments) > 1 and segments[-2] == "LayerNorm" and layer is not None:
        return "norms", layer  # BERT's, after attention (attention.output.LayerNorm) and after the MLP
    if len(shape) == 1 and any(
        s.endswith("residual_scale") or s.startswith("input_hidden_states_") for s in segments[-2:]
    ):
        return "norms", layer  # ZAYA's residual scaling: a learned per-channel affine, as a norm's
    if len(shape) == 1 and segments[-1] in ("input_residual", "post_attention_residual"):
        return "norms", layer  # Doge's residual weights: a learned per-channel scale, as a norm's
    if len(shape) == 1 and segments[-1] in ("lambda_1", "lambda_2"):
        return "norms", layer  # Dory's nGPT residual interpolation rates: per-channel, as a norm's
    if len(shape) == 1 and len(segments) > 1 and segments[-2] in _RESIDUAL_GATES:
        return "norms", layer  # Ergo's residual gates: a learned per-channel mix, as a norm's
    if len(segments) >= 3 and segments[-3].endswith("layernorm") and segments[-2] in ("W_down", "W_up"):
        return "norms", layer  # A.X-K2's gated norm: a low-rank gate inside the norm
    if (
        len(segments) >= 3
        and segments[-2] == "dense"
        and (segments[-3].endswith("layernorm") or segments[-3] == "norm")
    ):
        return "norms", layer  # PI0.5's adaptive norms: a linear from the timestep to scale, shift and gate
    if in_attn:
        return "attention", layer
    if segments[-3:-1] in (["intermediate", "dense"], ["output", "dense"]) and layer is not None:
        return "dense_mlp", layer  # BERT's feed-forward (GIT's text layers), beside attention.output.dense
    if segset & (_MLP | _MLP_PROJECTIONS) or last in ("w1", "w2", "w3", "c_fc", "c_proj", "alpha_dense"):
        return "dense_mlp", layer
    if layer is not None and ("intermediate" in segset or segments[-3:-1] == ["output", "dense"]):
        return "dense_mlp", layer  # BERT's MLP: intermediate.dense, then output.dense (outside attention)
    if len(shape) == 1 and any("norm" in s for s in segments):
        return "norms", layer
    if segments[-2:] in (["lerope", "alpha"], ["rotary_emb", "alpha"]):  # Mistral Large 4's learned RoPE
        return "attention", layer
    if segments[-2:] == ["gate", "weight"] and segments[-3:-2] == [str(layer)] and info and info.mlp == "moe":
        return "routers", layer  # a router kept in the layer itself (Mistral's consolidated names)
    return "other", layer


class _Tally:
    """What count_parameters accumulates; ``add`` takes one tensor name standing for ``copies`` tensors."""

    def __init__(self, cfg: ArchConfig, layers: list[LayerInfo]) -> None:
        self.cfg = cfg
        self.report = ParamReport()
        self.by_layer = {info.index: info for info in layers}
        self.bits = cfg.quant_bits
        self.packed_u8 = cfg.four_bit_uint8_weights
        self.configured_experts = cfg.num_experts or 0
        self.comp: Counter[str] = Counter()
        self.by_dtype: Counter[str] = Counter()
        self.expert_ids: dict[int, set[int]] = defaultdict(set)
        self.fused_experts: dict[int, int] = {}
        self.features: dict[str, set[int]] = defaultdict(set)

    def add(
        self,
        name: str,
        dtype: str,
        shape: tuple[int, ...],
        copies: int = 1,
        expert_ids: Iterable[int] | None = None,
        others: Callable[[], Iterable[str]] | None = None,
    ) -> None:
        """``name`` and ``copies - 1`` more tensors that classify alike; ``expert_ids`` are their
        expert numbers when those are an index of the pattern, ``others`` their names (for
        ``other_names``) when they are not all ``name``."""
        report = self.report
        segments = name.split(".")
        elements = 1
        for d in shape:
            elements *= d
        report.stored_bytes += (dtypes.nbytes(dtype, elements) or 0) * copies
        if _is_scale(segments):
            report.scale_elements += elements * copies
            report.scale_bytes += (dtypes.nbytes(dtype, elements) or 0) * copies
            return
        params = _logical(name, dtype, shape, self.bits, self.packed_u8)
        own = ARCHITECTURE_CLASSIFIERS.get(self.cfg.model_type)
        found = own(name, shape) if own is not None else None
        component, layer = found or classify(name, shape, self.by_layer, self.cfg.num_layers)
        self.comp[component] += params * copies
        self.by_dtype[dtype] += params * copies
        if component == "other" and len(report.other_names) < 20:
            names = others() if others is not None else [name]
            report.other_names.extend(itertools.islice(names, 20 - len(report.other_names)))
        if (
            component == "mtp"
            and set(segments) & (_EMBED | {"head"})
            and len(shape) == 2
            and self.cfg.vocab_size in shape
        ):
            report.mtp_embedding_copies += params * copies
        if layer is None:
            return
        features = self.features
        segset = set(segments)
        if "indexer" in segset:
            features["indexer"].add(layer)
        if "kv_a_proj_with_mqa" in segset or "wkv_a" in segset:
            features["mla"].add(layer)
            if shape:
                report.kv_a_rows.add(shape[0])
        if (
            "linear_attn" in segset
            or (segset & _ATTN and segset & _LINEAR_WITNESSES and not segset & _KV_CONVS)
            or "mlstm_layer" in segset
        ):
            features["linear_attention"].add(layer)
        if "experts" in segset or component == "routed_experts":
            features["experts"].add(layer)
        if component == "routed_experts":
            report.routed_by_layer[layer] = report.routed_by_layer.get(layer, 0) + params * copies
            position = segments.index("experts") if "experts" in segments else -1
            follower = segments[position + 1] if 0 <= position < len(segments) - 1 else ""
            if expert_ids is not None:
                self.expert_ids[layer].update(expert_ids)
            elif follower.isdigit():
                self.expert_ids[layer].add(int(follower))
            elif len(shape) >= 3:  # fused [experts, ...] tensors, packed blocks included
                self.fused_experts[layer] = shape[0]
            elif len(shape) == 2 and self.configured_experts and shape[0] % self.configured_experts == 0:
                # experts stacked into one [experts x width, hidden] matrix (DBRX's w1 / v1 / w2)
                self.fused_experts[layer] = self.configured_experts

    def result(self) -> ParamReport:
        report = self.report
        for layer in report.routed_by_layer:
            report.experts_by_layer[layer] = len(self.expert_ids[layer]) or self.fused_experts.get(layer, 0)
        report.by_component = {c: self.comp[c] for c in COMPONENTS if self.comp[c]}
        report.by_dtype = dict(sorted(self.by_dtype.items()))
        report.total = sum(self.comp.values())
        report.layer_features = dict(self.features)
        return report


def count_parameters(
    tensors: Iterable[tuple[str, str, tuple[int, ...]]], cfg: ArchConfig, layers: list[LayerInfo]
) -> ParamReport:
    """Tensor by tensor: the reference that ``count_patterns`` is tested against."""
    tally = _Tally(cfg, layers)
    for name, dtype, shape in tensors:
        tally.add(name, dtype, shape)
    return tally.result()


def count_patterns(patterns: Iterable[Pattern], cfg: ArchConfig, layers: list[LayerInfo]) -> ParamReport:
    """``count_parameters`` of the tensors the patterns stand for, one classification per pattern and layer.

    Only the layer index changes how a name classifies (``classify`` reads words, and a numeric segment
    is never one of them), so each pattern is classified once per value of its layer position (or once,
    when the layer is written out or absent) and counted times the tensors that share that value. When
    the segment after ``experts`` is an index of the pattern, its index set is the layer's expert numbers.
    """
    tally = _Tally(cfg, layers)
    for p in patterns:
        pieces = [p.parts[0]]
        starts = []  # where each index position starts in the representative name
        for values, text in zip(p.index_sets, p.parts[1:]):
            starts.append(len("".join(pieces)))
            pieces += [str(values[0]), text]
        name = "".join(pieces)
        match = _LAYER.search(name)
        layer_at = starts.index(match.start(1)) if match and match.start(1) in starts else None
        experts_at = None
        segments = name.split(".")
        if "experts" in segments:
            position = segments.index("experts")
            offset = sum(len(x) + 1 for x in segments[: position + 1])
            if offset in starts:
                experts_at = starts.index(offset)
        expert_ids = p.index_sets[experts_at] if experts_at is not None else None
        if layer_at is None:
            tally.add(name, p.dtype, p.shape, p.count, expert_ids, p.names)
            continue
        copies = p.count // len(p.index_sets[layer_at])
        for value in p.index_sets[layer_at]:
            sets = (*p.index_sets[:layer_at], (value,), *p.index_sets[layer_at + 1 :])
            one = Pattern(p.parts, sets, p.dtype, p.shape)
            tally.add(next(one.names()), p.dtype, p.shape, copies, expert_ids, one.names)
    return tally.result()
