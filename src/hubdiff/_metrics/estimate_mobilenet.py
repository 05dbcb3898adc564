"""Gemma 3n's vision tower, timm's MobileNetV5 encoder (``TimmWrapperModel``), and its multimodal embedders.

The vision config names its tower by a timm architecture (``architecture``), as a config names its layout
by a model_type; timm builds the tower from that architecture's block definitions, which no key of the
config states. So the definitions are written out here, keyed by the architecture, in timm's own string
notation (timm/models/mobilenetv5.py: ``_gen_mobilenet_v5``), with the parameter rules of its block kinds
(timm/models/_efficientnet_blocks.py, timm/layers): an architecture not in the table is not guessed, and
its tower is marked as not modelled. ``model_args`` (keyword arguments to ``timm.create_model``) can
change any of it: a key of it that is not known to size nothing is marked not understood.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .config import MAX_DIM
from .estimate_facts import Triple

DT = "BF16"


@dataclass(frozen=True)
class MobileNetV5:
    """One timm MobileNetV5 architecture: its stages of block strings, the stem's width and bias, and the
    multi-scale fusion adapter's taps (feature indices) and output width."""

    stages: tuple[tuple[str, ...], ...]
    stem_size: int = 64
    stem_bias: bool = True
    msfa_indices: tuple[int, ...] = (-2, -1)
    num_features: int = 2048


# timm's block strings: kind (er edge residual, uir universal inverted residual, mqa mobile multi-query
# attention), then r repeats, k kernel (uir: the middle depthwise one, 0 none), a / p the depthwise kernels
# before / after a uir's expansion, s stride, e expansion ratio, c output channels, h heads, d key and
# value width, v the keys' and values' stride
_UIR_640 = ("uir_r1_a0_k0_s1_e2_c640",)
_MQA_640 = ("mqa_r1_k3_h12_v2_s1_d64_c640",)
_UIR_1280 = ("uir_r1_a0_k0_s1_e2_c1280",)
_MQA_1280 = ("mqa_r1_k3_h16_s1_d96_c1280",)
MOBILENET_V5: dict[str, MobileNetV5] = {
    # Gemma 3n's encoder (mobilenetv5_300m_enc): a biased stem, the last two stages fused into 2048 channels
    "mobilenetv5_300m_enc": MobileNetV5(
        stages=(
            ("er_r1_k3_s2_e4_c128", "er_r1_k3_s1_e4_c128", "er_r1_k3_s1_e4_c128"),
            (
                "uir_r1_a3_k5_s2_e6_c256",
                "uir_r1_a5_k0_s1_e4_c256",
                "uir_r1_a3_k0_s1_e4_c256",
                "uir_r1_a5_k0_s1_e4_c256",
                "uir_r1_a3_k0_s1_e4_c256",
            ),
            (
                "uir_r1_a5_k5_s2_e6_c640",
                *("uir_r1_a5_k0_s1_e4_c640",) * 7,
                "uir_r1_a0_k0_s1_e1_c640",
                *(_MQA_640 + _UIR_640) * 14,
            ),
            ("uir_r1_a5_k5_s2_e6_c1280", *(_MQA_1280 + _UIR_1280) * 19),
        ),
    ),
}

# model_args keys that size nothing: regularisation, padding, activation, the adapter's output grid, and
# the heads the encoder's builder drops before building (kwargs_filter of _create_mnv5_encoder)
_SIZES_NOTHING = frozenset(
    {
        "drop_rate",
        "drop_path_rate",
        "pad_type",
        "act_layer",
        "msfa_output_resolution",
        "num_classes",
        "num_features",
        "head_conv",
        "head_bias",
        "head_norm",
        "global_pool",
    }
)


def _int(value: Any, default: int) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_DIM:
        return value
    return default


def _divisible(v: float, divisor: int = 8) -> int:
    """timm's make_divisible: the nearest multiple of divisor, never more than a tenth below v."""
    new = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new + divisor if new < 0.9 * v else new


def _block(text: str) -> tuple[str, dict[str, int | float]]:
    kind, *ops = text.split("_")
    options: dict[str, int | float] = {}
    for op in ops:
        key, value = re.match(r"([a-z]+)([\d.]*)", op).groups()  # type: ignore[union-attr]
        options[key] = float(value) if key == "e" else int(value)
    return kind, options


def _conv(name: str, out: int, into: int, k: int, bias: bool = False) -> list[Triple]:
    found: list[Triple] = [(name + ".weight", DT, (out, into, k, k))]
    return found + ([(name + ".bias", DT, (out,))] if bias else [])


def _conv_norm(name: str, out: int, into: int, k: int) -> list[Triple]:
    """timm's ConvNormAct with an RMSNorm2d: an unbiased convolution and a norm's scale."""
    return [*_conv(name + ".conv", out, into, k), (name + ".bn.weight", DT, (out,))]


def _uir(b: str, into: int, out: int, o: dict[str, int | float], scaled: bool) -> list[Triple]:
    """A universal inverted residual: optional depthwise convolutions before (a) and after (p) the 1x1
    expansion and projection and one (k) between them, each normed; a per-channel layer scale."""
    mid = _divisible(into * float(o.get("e", 1.0)))
    start, k, end = int(o.get("a", 0)), int(o.get("k", 0)), int(o.get("p", 0))
    found = _conv_norm(b + "dw_start", into, 1, start) if start else []
    found += _conv_norm(b + "pw_exp", mid, into, 1)
    found += _conv_norm(b + "dw_mid", mid, 1, k) if k else []
    found += _conv_norm(b + "pw_proj", out, mid, 1)
    found += _conv_norm(b + "dw_end", out, 1, end) if end else []
    return found + ([(b + "layer_scale.gamma", DT, (out,))] if scaled else [])


def _mqa(b: str, into: int, out: int, o: dict[str, int | float]) -> list[Triple]:
    """Mobile multi-query attention: a norm, queries for h heads, one key and one value head d wide (each
    after a normed depthwise downsampling convolution when v strides them), an output projection, a layer
    scale; every projection a 1x1 convolution without bias."""
    heads, d, k, stride = int(o["h"]), int(o["d"]), int(o.get("k", 3)), int(o.get("v", 1))
    a = b + "attn."
    found: list[Triple] = [(b + "norm.weight", DT, (into,)), *_conv(a + "query.proj", heads * d, into, 1)]
    for part in ("key", "value"):
        if stride > 1:
            found += [*_conv(f"{a}{part}.down_conv", into, 1, k), (f"{a}{part}.norm.weight", DT, (into,))]
        found += _conv(f"{a}{part}.proj", d, into, 1)
    return found + _conv(a + "output.proj", out, heads * d, 1) + [(b + "layer_scale.gamma", DT, (out,))]


def mobilenet_v5(arch: MobileNetV5, e: str) -> list[Triple]:
    """The encoder's tensors: the stem (a 3x3 convolution, biased as the architecture says, and a norm),
    the stages' blocks (an edge residual: a full k x k expansion and a 1x1 projection, each normed), and
    the multi-scale fusion adapter over the stage ends it taps (a universal inverted residual, 2x wide,
    without layer scale, and a norm)."""
    out = _conv(e + "conv_stem.conv", arch.stem_size, 3, 3, arch.stem_bias)
    out += [(e + "conv_stem.bn.weight", DT, (arch.stem_size,))]
    into = arch.stem_size
    blocks = [[_block(text) for text in stage] for stage in arch.stages]
    features = [into] if blocks and blocks[0] and blocks[0][0][1].get("s", 1) > 1 else []
    for s, stage in enumerate(blocks):
        index = 0
        for kind, o in stage:
            for _ in range(int(o.get("r", 1))):
                b, width = f"{e}blocks.{s}.{index}.", int(o["c"])
                if kind == "er":
                    mid = _divisible(into * float(o.get("e", 1.0)))
                    out += [*_conv(b + "conv_exp", mid, into, int(o["k"])), (b + "bn1.weight", DT, (mid,))]
                    out += [
                        *_conv(b + "conv_pwl", width, mid, int(o.get("p", 1))),
                        (b + "bn2.weight", DT, (width,)),
                    ]
                elif kind == "uir":
                    out += _uir(b, into, width, o, True)
                else:
                    out += _mqa(b, into, width, o)
                into, index = width, index + 1
        following = blocks[s + 1][0][1].get("s", 1) if s + 1 < len(blocks) and blocks[s + 1] else 2
        if following > 1:  # a stage's end is a feature where the next stage downsamples (or none follows)
            features.append(into)
    fused = sum(features[i] for i in arch.msfa_indices)
    out += _uir(e + "msfa.ffn.", fused, arch.num_features, {"e": 2.0}, False)
    return [*out, (e + "msfa.norm.weight", DT, (arch.num_features,))]


def gemma3n_embedder(e: str, m: dict[str, Any], width: int, text_hidden: int) -> list[Triple]:
    """Gemma 3n's multimodal embedder (Gemma3nMultimodalEmbedder): a table of the modality's vocab_size
    hard tokens in its own width (hidden_size), a norm each for hard and soft tokens, and an unbiased
    projection into the text width (the norm after it has no weight)."""
    width = _int(m.get("hidden_size"), width)
    found: list[Triple] = [(e + "embedding.weight", DT, (_int(m.get("vocab_size"), 128), width))]
    for norm in ("hard_embedding_norm", "soft_embedding_norm"):
        found.append((f"{e}{norm}.weight", DT, (width,)))
    return [*found, (e + "embedding_projection.weight", DT, (text_hidden, width))]


def gemma3n_architecture(v: dict[str, Any]) -> MobileNetV5 | None:
    """The table's definition of the vision config's timm architecture, or None when it has none."""
    return MOBILENET_V5.get(str(v.get("architecture") or ""))


def gemma3n_vision(v: dict[str, Any], text_hidden: int) -> list[Triple]:
    """The MobileNetV5 tower under TimmWrapperModel's timm_model, and embed_vision (hidden_size wide)."""
    arch = gemma3n_architecture(v)
    tower = mobilenet_v5(arch, "model.vision_tower.timm_model.") if arch else []
    return tower + gemma3n_embedder("model.embed_vision.", v, 2048, text_hidden)


# Gemma3nAudioConfig's keys that _gemma3n_audio (estimate_audio) reads or that size nothing (chunking,
# context, caps, clipping, the reduction of the output's frames, residual weights, epsilons, the offset
# of its token ids)
_AUDIO_KEYS = frozenset(
    {
        "hidden_size",
        "vocab_size",
        "vocab_offset",
        "input_feat_size",
        "conf_num_hidden_layers",
        "conf_num_attention_heads",
        "conf_conv_kernel_size",
        "conf_attention_chunk_size",
        "conf_attention_context_left",
        "conf_attention_context_right",
        "conf_attention_logit_cap",
        "conf_reduction_factor",
        "conf_residual_weight",
        "sscp_conv_channel_size",
        "sscp_conv_kernel_size",
        "sscp_conv_stride_size",
        "sscp_conv_group_norm_eps",
    }
)


def gemma3n_doubts(outer: str, v: dict[str, Any] | None, a: Any) -> list[str]:
    """What a modelled Gemma 3n tower may hold that is not applied, said: model_args keys that may change
    the MobileNetV5 tower, and keys of the conformer's own families (conf_*, sscp_*) or sizes of the
    audio config that its estimate does not read."""
    if outer != "gemma3n":
        return []
    out: list[str] = []
    arch = str(v.get("architecture")) if v else ""
    args = v.get("model_args") if v and arch in MOBILENET_V5 else None
    if isinstance(args, dict):
        out += [
            f"vision_config.model_args.{key} not understood: timm's {arch} taken as defined"
            for key in args
            if key not in _SIZES_NOTHING
        ]
    if isinstance(a, dict) and a.get("model_type") == "gemma3n_audio":
        out += [
            f"audio_config.{key} not understood"
            for key, value in a.items()
            if key not in _AUDIO_KEYS
            and value is not None
            and (key.startswith(("conf_", "sscp_")) or key in _AUDIO_SIZES)
        ]
    return out


# sizes another conformer's config names, which this one's class never reads: present, they are doubted
_AUDIO_SIZES = frozenset({"intermediate_size", "num_hidden_layers", "num_attention_heads", "head_dim"})
