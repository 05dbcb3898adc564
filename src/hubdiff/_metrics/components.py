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

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from .. import dtypes
from .config import ArchConfig
from .layers import LINEAR_KINDS, LayerInfo

COMPONENTS = (
    "embeddings",
    "output_head",
    "attention",
    "dsa_indexer",
    "linear_attention",
    "dense_mlp",
    "routed_experts",
    "shared_experts",
    "routers",
    "norms",
    "hyper_connections",
    "vision_tower",
    "multimodal_projector",
    "mtp",
    "other",
)

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
}
_PROJECTOR = {
    "mm_projector",
    "multi_modal_projector",
    "merger",
    "deepstack_merger_list",
    "connector",
    "projector",
    "mlp1",
    "vision_projection",
    "aligner",
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
    "wte",
    "word_embeddings",
    "tok_embeddings",
    "embedding",
    "embeddings",
    "wpe",
    "embed_positions",
}
_HEAD = {"lm_head", "embed_out", "output"}
_ATTN = {
    "self_attn",
    "attn",
    "attention",
    "self_attention",
    "mixer",
    "mamba",
    "linear_attn",
    "temporal_block",
    "cross_attn",
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
}
_MLP = {"mlp", "feed_forward", "ffn", "block_sparse_moe", "moe"}


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
        return elements * (32 // bits if bits in (2, 3, 4, 8) else 8)
    return elements


def _is_scale(segments: list[str]) -> bool:
    last = segments[-1]
    if last.startswith("hc_"):
        return False
    return (
        last.endswith(_SCALE_SUFFIXES)
        or last in ("scales", "scale", "zeros", "g_idx")
        or bool(_NUMBERED_SCALE.search(last))
    )


def classify(
    name: str, shape: tuple[int, ...], layers: dict[int, LayerInfo], num_layers: int
) -> tuple[str, int | None]:
    segments = name.split(".")
    segset = set(segments)
    if segset & _PROJECTOR and (
        segset & _VISION or set(segments[:2]) & _PROJECTOR or "multi_modal_projector" in segset
    ):
        return "multimodal_projector", None
    if segset & _VISION or segments[0] in ("vision", "image"):
        return "vision_tower", None
    layer = _layer_of(name)
    if "mtp" in segset or (layer is not None and num_layers and layer >= num_layers):
        return "mtp", layer
    if segset & _EMBED and not segset & _ATTN:
        return "embeddings", layer
    if (segset & _HEAD and (segments[-2] in _HEAD or segments[0] in _HEAD)) or (
        len(segments) == 2 and segments[0] == "head"
    ):
        return "output_head", layer
    last = segments[-1]
    if any(s.startswith("hc_") for s in segments):
        return "hyper_connections", layer
    if "experts" in segset or "routed_experts" in segset:
        return "routed_experts", layer
    if segset & {"shared_experts", "shared_expert", "shared_mlp"}:
        return "shared_experts", layer
    if (
        segset & {"gate", "router"} and segset & (_MLP | {"mixer"}) and "gate_proj" not in segset
    ) or segset & {"shared_expert_gate", "e_score_correction_bias"}:
        return "routers", layer
    if "indexer" in segset:
        return "dsa_indexer", layer
    info = layers.get(layer) if layer is not None else None
    in_attn = bool(segset & _ATTN)
    if in_attn and info is not None and info.attention == "none" and info.mlp != "none":
        # hybrid stacks (e.g. hybrid_override_pattern) name an MLP-only layer's block "mixer" too
        return ("norms" if len(shape) == 1 else "dense_mlp"), layer
    if (
        (in_attn and info is not None and info.attention in LINEAR_KINDS)
        or "linear_attn" in segset
        or (in_attn and segset & _LINEAR_NAMES and (info is None or info.attention in LINEAR_KINDS))
    ):
        return "linear_attention", layer
    if len(shape) == 1 and any(("norm" in s or s.startswith("ln")) for s in segments[-2:]):
        return "norms", layer
    if in_attn:
        return "attention", layer
    if segset & _MLP or last in ("w1", "w2", "w3", "c_fc", "c_proj"):
        return "dense_mlp", layer
    if len(shape) == 1 and any("norm" in s for s in segments):
        return "norms", layer
    return "other", layer


def count_parameters(
    tensors: Iterable[tuple[str, str, tuple[int, ...]]], cfg: ArchConfig, layers: list[LayerInfo]
) -> ParamReport:
    report = ParamReport()
    by_layer = {info.index: info for info in layers}
    n = cfg.num_layers
    bits = cfg.quant_bits
    configured_experts = cfg.num_experts or 0
    packed_u8 = cfg.four_bit_uint8_weights
    comp: Counter[str] = Counter()
    by_dtype: Counter[str] = Counter()
    expert_ids: dict[int, set[int]] = defaultdict(set)
    fused_experts: dict[int, int] = {}
    features: dict[str, set[int]] = defaultdict(set)
    for name, dtype, shape in tensors:
        segments = name.split(".")
        if _is_scale(segments):
            elements = 1
            for d in shape:
                elements *= d
            report.scale_elements += elements
            report.scale_bytes += dtypes.nbytes(dtype, elements) or 0
            continue
        params = _logical(name, dtype, shape, bits, packed_u8)
        component, layer = classify(name, shape, by_layer, n)
        comp[component] += params
        by_dtype[dtype] += params
        if component == "other" and len(report.other_names) < 20:
            report.other_names.append(name)
        if (
            component == "mtp"
            and set(segments) & (_EMBED | {"head"})
            and len(shape) == 2
            and cfg.vocab_size in shape
        ):
            report.mtp_embedding_copies += params
        if layer is None:
            continue
        segset = set(segments)
        if "indexer" in segset:
            features["indexer"].add(layer)
        if "kv_a_proj_with_mqa" in segset or "wkv_a" in segset:
            features["mla"].add(layer)
            if shape:
                report.kv_a_rows.add(shape[0])
        if "linear_attn" in segset or (segset & _ATTN and segset & _LINEAR_NAMES):
            features["linear_attention"].add(layer)
        if "experts" in segset:
            features["experts"].add(layer)
        if component == "routed_experts":
            report.routed_by_layer[layer] = report.routed_by_layer.get(layer, 0) + params
            position = segments.index("experts") if "experts" in segments else -1
            follower = segments[position + 1] if 0 <= position < len(segments) - 1 else ""
            if follower.isdigit():
                expert_ids[layer].add(int(follower))
            elif len(shape) >= 3:  # fused [experts, ...] tensors, packed blocks included
                fused_experts[layer] = shape[0]
            elif len(shape) == 2 and configured_experts and shape[0] % configured_experts == 0:
                # experts stacked into one [experts x width, hidden] matrix (DBRX's w1 / v1 / w2)
                fused_experts[layer] = configured_experts
    for layer in report.routed_by_layer:
        report.experts_by_layer[layer] = len(expert_ids[layer]) or fused_experts.get(layer, 0)
    report.by_component = {c: comp[c] for c in COMPONENTS if comp[c]}
    report.by_dtype = dict(sorted(by_dtype.items()))
    report.total = sum(comp.values())
    report.layer_features = dict(features)
    return report
