"""FastVLM's vision tower, timm's FastViT (``TimmWrapperModel``), and its projector.

As with Gemma 3n's MobileNetV5 (estimate_mobilenet), the vision config names its tower by a timm
architecture and timm builds it from that architecture's definition, which no key of the config states.
So the definitions are written out here, keyed by the architecture, from timm's own (timm/models/fastvit.py:
``fastvit_*``), with the parameter rules of its block kinds (MobileOne and RepMixer blocks, the large-kernel
patch embedding, the conditional positional encoding, attention blocks, the convolutional MLP). An
architecture not in the table is not guessed: its tower is marked as not modelled. ``model_args``
(keyword arguments to ``timm.create_model``) can change any of it: ``inference_mode`` (each re-parameterised
branch one biased convolution, as released checkpoints hold it, or the training-time branches with their
batch norms) is applied; a key not known to size nothing is marked not understood.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .config import MAX_DIM
from .estimate_facts import Triple

DT = "BF16"


@dataclass(frozen=True)
class FastViT:
    """One timm FastViT architecture: per stage its depth, width, MLP ratio, token mixer ("repmixer" or
    "attention"), whether a downsampling patch embedding opens it (also where the width changes), whether
    that embedding squeezes and excites, and whether a 7x7 conditional positional encoding follows it; the
    attention blocks' norm (batch norm or LayerNorm2d) and whether the stem has 1x1 scale branches."""

    layers: tuple[int, ...]
    embed_dims: tuple[int, ...]
    mlp_ratios: tuple[float, ...]
    token_mixers: tuple[str, ...]
    downsamples: tuple[bool, ...] = (False, True, True, True)
    se_downsamples: tuple[bool, ...] = (False, False, False, False)
    pos_embs: tuple[bool, ...] = (False, False, False, False)
    layer_norm: bool = False
    stem_use_scale_branch: bool = True


_REP4 = ("repmixer",) * 4
_SA = ("repmixer", "repmixer", "repmixer", "attention")
_MCI_LARGE = ("repmixer", "repmixer", "repmixer", "attention", "attention")
_PE_LAST = (False, False, False, True)
_PE_LAST2 = (False, False, False, True, True)
_MCI_SE = (False, False, True, True)
FASTVIT: dict[str, FastViT] = {
    "fastvit_t8": FastViT((2, 2, 4, 2), (48, 96, 192, 384), (3,) * 4, _REP4),
    "fastvit_t12": FastViT((2, 2, 6, 2), (64, 128, 256, 512), (3,) * 4, _REP4),
    "fastvit_s12": FastViT((2, 2, 6, 2), (64, 128, 256, 512), (4,) * 4, _REP4),
    "fastvit_sa12": FastViT((2, 2, 6, 2), (64, 128, 256, 512), (4,) * 4, _SA, pos_embs=_PE_LAST),
    "fastvit_sa24": FastViT((4, 4, 12, 4), (64, 128, 256, 512), (4,) * 4, _SA, pos_embs=_PE_LAST),
    "fastvit_sa36": FastViT((6, 6, 18, 6), (64, 128, 256, 512), (4,) * 4, _SA, pos_embs=_PE_LAST),
    "fastvit_ma36": FastViT((6, 6, 18, 6), (76, 152, 304, 608), (4,) * 4, _SA, pos_embs=_PE_LAST),
    "fastvit_mci0": FastViT(
        (2, 6, 10, 2), (64, 128, 256, 512), (3,) * 4, _SA, se_downsamples=_MCI_SE, pos_embs=_PE_LAST
    ),
    "fastvit_mci1": FastViT(
        (4, 12, 20, 4), (64, 128, 256, 512), (3,) * 4, _SA, se_downsamples=_MCI_SE, pos_embs=_PE_LAST
    ),
    "fastvit_mci2": FastViT(
        (4, 12, 24, 4), (80, 160, 320, 640), (3,) * 4, _SA, se_downsamples=_MCI_SE, pos_embs=_PE_LAST
    ),
    # FastVLM's towers (MobileCLIP 2's L and XL): five stages, LayerNorm2d attention blocks, no scale
    # branches in the stem
    "fastvit_mci3": FastViT(
        (2, 12, 24, 4, 2),
        (96, 192, 384, 768, 1536),
        (4,) * 5,
        _MCI_LARGE,
        downsamples=(False, True, True, True, True),
        se_downsamples=(False,) * 5,
        pos_embs=_PE_LAST2,
        layer_norm=True,
        stem_use_scale_branch=False,
    ),
    "fastvit_mci4": FastViT(
        (2, 12, 24, 4, 4),
        (128, 256, 512, 1024, 2048),
        (4,) * 5,
        _MCI_LARGE,
        downsamples=(False, True, True, True, True),
        se_downsamples=(False,) * 5,
        pos_embs=_PE_LAST2,
        layer_norm=True,
        stem_use_scale_branch=False,
    ),
}

# model_args keys that size nothing: regularisation, activations (parameter-free), the head's pooling
# (TimmWrapperModel builds no classifier), the re-parameterisation switch (applied)
_SIZES_NOTHING = frozenset(
    {
        "drop_rate",
        "drop_path_rate",
        "proj_drop_rate",
        "act_layer",
        "global_pool",
        "lkc_use_act",
        "inference_mode",
    }
)


def _batch_norm(name: str, width: int) -> list[Triple]:
    """A BatchNorm2d as a checkpoint stores it: scale, shift, running statistics, the batch counter."""
    found: list[Triple] = [(f"{name}.{part}", DT, (width,)) for part in ("weight", "bias")]
    found += [(f"{name}.{part}", DT, (width,)) for part in ("running_mean", "running_var")]
    return [*found, (name + ".num_batches_tracked", DT, ())]


def _conv(name: str, out: int, per_group: int, k: int, bias: bool) -> list[Triple]:
    found: list[Triple] = [(name + ".weight", DT, (out, per_group, k, k))]
    return found + ([(name + ".bias", DT, (out,))] if bias else [])


def _conv_bn(name: str, out: int, per_group: int, k: int) -> list[Triple]:
    """timm's ConvNormAct: an unbiased convolution and a batch norm."""
    return _conv(name + ".conv", out, per_group, k, False) + _batch_norm(name + ".bn", out)


def _se(name: str, width: int, ratio: float, divisor: int) -> list[Triple]:
    """timm's SEModule: two biased 1x1 convolutions through make_divisible(width * ratio) channels."""
    v = width * ratio
    reduced = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return _conv(name + ".fc1", reduced, width, 1, True) + _conv(name + ".fc2", width, reduced, 1, True)


def _mobileone(
    b: str,
    into: int,
    out: int,
    k: int,
    fused: bool,
    *,
    stride: int = 1,
    depthwise: bool = False,
    se: bool = False,
    scale_branch: bool = True,
    branches: int = 1,
) -> list[Triple]:
    """A MobileOne block: fused, one biased k x k convolution; else an identity batch norm where shape is
    kept, ``branches`` k x k convolution-norm branches and a 1x1 scale branch (k > 1); squeeze-excite
    over its output where asked (its tensors first, as timm defines it)."""
    per_group = 1 if depthwise else into
    found = _se(b + "se", out, 1 / 16, 1) if se else []
    if fused:
        return found + _conv(b + "reparam_conv", out, per_group, k, True)
    if out == into and stride == 1:
        found += _batch_norm(b + "identity", into)
    for i in range(branches):
        found += _conv_bn(f"{b}conv_kxk.{i}", out, per_group, k)
    if k > 1 and scale_branch:
        found += _conv_bn(b + "conv_scale", out, per_group, 1)
    return found


def _conv_mlp(b: str, d: int, ratio: float) -> list[Triple]:
    """The convolutional MLP: a normed 7x7 depthwise convolution, then two biased 1x1 convolutions."""
    hidden = int(d * ratio)
    return (
        _conv_bn(b + "conv", d, 1, 7)
        + _conv(b + "fc1", hidden, d, 1, True)
        + _conv(b + "fc2", d, hidden, 1, True)
    )


def _scale(name: str, d: int) -> list[Triple]:
    return [(name + ".gamma", DT, (d, 1, 1))]


def fastvit(arch: FastViT, e: str, fused: bool) -> list[Triple]:
    """The tower's tensors: a stem of three MobileOne blocks; per stage a patch embedding where it
    downsamples (a depthwise 7x7 large-kernel convolution with a 3x3 small one, optionally squeezed and
    excited, then a 1x1 MobileOne block), a positional encoding where asked, its RepMixer or attention
    blocks with their MLPs and layer scales; a final 3x3 depthwise MobileOne block to twice the last width,
    squeezed and excited (no classifier: TimmWrapperModel asks for none)."""
    d0 = arch.embed_dims[0]
    sb = arch.stem_use_scale_branch
    out = _mobileone(e + "stem.0.", 3, d0, 3, fused, stride=2, scale_branch=sb)
    out += _mobileone(e + "stem.1.", d0, d0, 3, fused, stride=2, depthwise=True, scale_branch=sb)
    out += _mobileone(e + "stem.2.", d0, d0, 1, fused, scale_branch=sb)
    prev = d0
    for i, (depth, d) in enumerate(zip(arch.layers, arch.embed_dims, strict=True)):
        s = f"{e}stages.{i}."
        if arch.downsamples[i] or prev != d:
            p = s + "downsample.proj."
            if fused:
                out += _conv(p + "0.reparam_conv", d, 1, 7, True)
            else:
                out += _conv_bn(p + "0.large_conv", d, 1, 7) + _conv_bn(p + "0.small_conv", d, 1, 3)
            out += _se(p + "0.se", d, 0.25, 8) if arch.se_downsamples[i] else []
            out += _mobileone(p + "1.", d, d, 1, fused)
        if arch.pos_embs[i]:
            out += _conv(s + ("pos_emb.reparam_conv" if fused else "pos_emb.pos_enc"), d, 1, 7, True)
        ratio = float(arch.mlp_ratios[i])
        for j in range(depth):
            b = f"{s}blocks.{j}."
            if arch.token_mixers[i] == "repmixer":
                t = b + "token_mixer."
                if fused:
                    out += _conv(t + "reparam_conv", d, 1, 3, True)
                else:
                    out += _mobileone(
                        t + "norm.", d, d, 3, False, depthwise=True, scale_branch=False, branches=0
                    )
                    out += _mobileone(t + "mixer.", d, d, 3, False, depthwise=True)
                    out += _scale(t + "layer_scale", d)
                out += _conv_mlp(b + "mlp.", d, ratio) + _scale(b + "layer_scale", d)
            else:
                n = b + "norm"
                out += (
                    [(n + ".weight", DT, (d,)), (n + ".bias", DT, (d,))]
                    if arch.layer_norm
                    else _batch_norm(n, d)
                )
                t = b + "token_mixer."
                out += [
                    (t + "qkv.weight", DT, (3 * d, d)),
                    (t + "proj.weight", DT, (d, d)),
                    (t + "proj.bias", DT, (d,)),
                ]
                out += (
                    _scale(b + "layer_scale_1", d)
                    + _conv_mlp(b + "mlp.", d, ratio)
                    + _scale(b + "layer_scale_2", d)
                )
        prev = d
    return out + _mobileone(e + "final_conv.", prev, 2 * prev, 3, fused, depthwise=True, se=True)


def _int(value: Any, default: int) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_DIM:
        return value
    return default


def fastvit_architecture(v: dict[str, Any]) -> FastViT | None:
    """The table's definition of the vision config's timm architecture, or None when it has none."""
    return FASTVIT.get(str(v.get("architecture") or ""))


def fast_vlm_vision(raw: dict[str, Any], v: dict[str, Any], text_hidden: int) -> list[Triple]:
    """The FastViT tower under TimmWrapperModel's timm_model, then FastVLM's projector: two linears from the
    vision config's hidden_size (the tower's output width, which the config states) to the text width,
    biased as multimodal_projector_bias says."""
    arch = fastvit_architecture(v)
    args = v.get("model_args")
    fused = isinstance(args, dict) and args.get("inference_mode") is True
    out = fastvit(arch, "model.vision_tower.timm_model.", fused) if arch else []
    width = _int(v.get("hidden_size"), 2 * arch.embed_dims[-1] if arch else 3072)
    bias = raw.get("multimodal_projector_bias", True) is not False
    p = "model.multi_modal_projector."
    out += [(p + "linear_1.weight", DT, (text_hidden, width))] + (
        [(p + "linear_1.bias", DT, (text_hidden,))] if bias else []
    )
    out += [(p + "linear_2.weight", DT, (text_hidden, text_hidden))]
    return out + ([(p + "linear_2.bias", DT, (text_hidden,))] if bias else [])


def fast_vlm_doubts(outer: str, v: dict[str, Any] | None) -> list[str]:
    """model_args keys that may change a modelled FastViT tower and are not applied, said."""
    if outer != "fast_vlm" or not v:
        return []
    arch = str(v.get("architecture"))
    args = v.get("model_args") if arch in FASTVIT else None
    if not isinstance(args, dict):
        return []
    return [  # timm.create_model drops a keyword argument that is None: it changes nothing
        f"vision_config.model_args.{key} not understood: timm's {arch} taken as defined"
        for key, value in args.items()
        if key not in _SIZES_NOTHING and value is not None
    ]
