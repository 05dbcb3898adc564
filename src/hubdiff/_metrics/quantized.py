"""How a quantized release stores its weights, read from its ``quantization_config``: the config-only
estimate's tensors as the release's files hold them (quantized values and their scales).

A config-only estimate is written in BF16 (``estimate.synthesize``); a release whose config carries a
``quantization_config`` stores most projections in fewer bits plus scale tensors. ``stored_tensors``
rewrites each projection the way the quantization method's own serialization writes it, so that
weights, per-rank weights and the tokens that fit follow the release (``serving``, ``memory``), and the
header path meets the same tensors when it reads the real files (``components`` counts packed values
as parameters and every scale apart). Each method, as its library writes it:

- ``fp8`` with ``weight_block_size`` [bo, bi] (DeepSeek-V3): F8_E4M3 values, a float32 ``_scale_inv``
  per bo x bi block; without a block size, one float32 ``weight_scale`` a tensor.
- ``mxfp4`` (gpt-oss; transformers' Mxfp4HfQuantizer converts the experts only): ``*_blocks`` U8
  [..., out, in / 32, 16] (two E2M1 values a byte) and ``*_scales`` U8 [..., out, in / 32] (one E8M0
  exponent per 32 values).
- NVFP4 (ModelOpt ``quant_algo`` NVFP4): ``weight`` U8 [out, in / 2], ``weight_scale`` F8_E4M3 per 16
  values, ``weight_scale_2`` and ``input_scale`` float32 scalars.
- ``compressed-tensors`` (llm-compressor): per ``config_groups`` scheme, ``weight_packed`` I32 (int
  values packed 32 / bits to a word) with ``weight_shape``, or ``weight`` in F8_E4M3 / I8, or NVFP4's
  ``weight_packed`` U8; ``weight_scale`` per group, channel, block or tensor (in the model's dtype, FP8
  for NVFP4, with float32 global scales); ``weight_zero_point`` when asymmetric.
- ``gptq`` (AutoGPTQ / GPTQModel): ``qweight`` I32 [in x bits / 32, out], ``qzeros`` I32 [groups, out x
  bits / 32], ``scales`` F16 [groups, out], ``g_idx`` I32 [in]; groups = in / group_size (1 for -1).
- ``awq`` (AutoAWQ GEMM): ``qweight`` I32 [in, out x bits / 32], ``qzeros`` I32 [groups, out x bits / 32],
  ``scales`` F16 [groups, out].
- ``bitsandbytes`` 4-bit: ``weight`` U8 [out x in / 2, 1], ``weight.absmax`` float32 per 64 values (U8
  with double quantization, plus ``nested_absmax`` float32 per 256 blocks and a 256-entry
  ``nested_quant_map``), ``weight.quant_map`` 16 float32; 8-bit: ``weight`` I8 with ``SCB`` float32 per
  row. The small ``quant_state`` JSON tensor of 4-bit is not counted.

What each converts: the projections (attention, MLP, experts, linear attention, indexer), never the
embeddings, head, norms or routers, nor a module ``modules_to_not_convert`` / ``ignore`` /
``exclude_modules`` names; mxfp4 the routed experts only. Biases stay in the model's dtype.
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from .components import classify
from .config import ArchConfig, _num
from .layers import LayerInfo

Tensor = tuple[str, str, tuple[int, ...]]

# The components a method converts (what DeepSeek's FP8 release stores in FP8, and every library's
# "Linear" target); embeddings, head, norms and routers stay in the model's dtype.
PROJECTIONS = frozenset(
    {"attention", "dense_mlp", "routed_experts", "shared_experts", "linear_attention", "dsa_indexer"}
)
MAX_BLOCK = 1 << 16


@dataclass(frozen=True)
class Scheme:
    """One quantization method as it stores a projection [..., out, in]."""

    method: str  # fp8, mxfp4, nvfp4, int (compressed-tensors / gptq / awq), float8, bnb4, bnb8
    layout: str  # which library's tensor names and packing: deepseek, gpt_oss, modelopt, ct, gptq, awq, bnb
    bits: int = 8
    group: int = 0  # values a scale covers along the input (0: a scale per row, -1: one per tensor)
    block: tuple[int, int] | None = None  # FP8's 2-D weight block
    symmetric: bool = True
    double_quant: bool = False
    experts_only: bool = False
    excluded: tuple[str, ...] = ()
    description: str = ""


def _int(value: Any, low: int, high: int) -> int | None:
    n = _num(value)
    return n if n is not None and low <= n <= high else None


def _names(quant: dict[str, Any], *keys: str) -> tuple[str, ...]:
    for key in keys:
        names = quant.get(key)
        if isinstance(names, list):
            return tuple(str(x) for x in names if isinstance(x, str) and x)[:1000]
    return ()


def scheme(cfg: ArchConfig) -> Scheme | None:
    """The config's quantization, when it is one hubdiff writes out (None: the estimate stays BF16)."""
    quant = cfg.quantization
    if not quant:
        return None
    method = str(quant.get("quant_method", "")).lower()
    algo = str(quant.get("quant_algo", "")).upper()
    excluded = _names(quant, "modules_to_not_convert", "ignored_layers", "ignore", "exclude_modules")
    if method == "fp8":
        block = quant.get("weight_block_size")
        if isinstance(block, list) and len(block) == 2 and all(_int(b, 1, MAX_BLOCK) for b in block):
            bo, bi = int(block[0]), int(block[1])
            text = f"projections FP8 with a float32 scale per {bo}×{bi} block"
            return Scheme("fp8", "deepseek", 8, block=(bo, bi), excluded=excluded, description=text)
        return Scheme(
            "fp8",
            "deepseek",
            8,
            -1,
            excluded=excluded,
            description="projections FP8 with a float32 scale a tensor",
        )
    if method == "mxfp4":
        text = "routed experts MXFP4: two 4-bit values a byte and a U8 exponent per 32 (their *_blocks and *_scales)"
        return Scheme("mxfp4", "gpt_oss", 4, 32, experts_only=True, excluded=excluded, description=text)
    if method == "modelopt" or algo.startswith("NVFP4") or algo == "FP8":
        if algo == "FP8":
            return Scheme(
                "fp8",
                "modelopt",
                8,
                -1,
                excluded=excluded,
                description="projections FP8 with a float32 scale a tensor",
            )
        group = _int(quant.get("group_size"), 1, MAX_BLOCK) or 16
        text = f"projections NVFP4: two 4-bit values a byte, an FP8 scale per {group} and a float32 scale a tensor"
        return Scheme("nvfp4", "modelopt", 4, group, excluded=excluded, description=text)
    if method == "compressed-tensors":
        return _compressed_tensors(quant, excluded)
    if method in ("gptq", "awq"):
        bits = _int(quant.get("bits", quant.get("w_bit")), 2, 8) or 4
        asked = _num(quant.get("group_size", quant.get("q_group_size")))
        group = asked if asked is not None and (asked == -1 or 1 <= asked <= MAX_BLOCK) else 128
        symmetric = quant.get("sym") is not False and quant.get("zero_point") is not True
        per = "a column" if group == -1 else f"{group} rows"
        text = f"projections {method.upper()} {bits}-bit in int32 words, an F16 scale and a packed zero per {per}"
        return Scheme("int", method, bits, group, symmetric=symmetric, excluded=excluded, description=text)
    if method == "bitsandbytes" or quant.get("load_in_4bit") is True or quant.get("load_in_8bit") is True:
        skip = excluded or _names(quant, "llm_int8_skip_modules")
        if quant.get("load_in_4bit") is True or quant.get("_load_in_4bit") is True:
            double = quant.get("bnb_4bit_use_double_quant") is True
            kind = str(quant.get("bnb_4bit_quant_type") or "fp4").upper()
            scale = (
                "a U8 absmax per 64 values, a float32 one per 256 blocks"
                if double
                else "a float32 absmax per 64 values"
            )
            text = f"projections bitsandbytes {kind}: two 4-bit values a byte, {scale}"
            return Scheme("bnb4", "bnb", 4, 64, double_quant=double, excluded=skip, description=text)
        if quant.get("load_in_8bit") is True or quant.get("_load_in_8bit") is True:
            text = "projections bitsandbytes LLM.int8: I8 values, a float32 scale (SCB) a row"
            return Scheme("bnb8", "bnb", 8, 0, excluded=skip, description=text)
    return None


def _compressed_tensors(quant: dict[str, Any], excluded: tuple[str, ...]) -> Scheme | None:
    """The scheme of the config group that targets every Linear (or the first group)."""
    groups = quant.get("config_groups")
    if not isinstance(groups, dict) or not groups:
        return None
    chosen = None
    for group in groups.values():
        if isinstance(group, dict) and isinstance(group.get("weights"), dict):
            targets = group.get("targets")
            if chosen is None or (isinstance(targets, list) and "Linear" in targets):
                chosen = group
    if chosen is None:
        return None
    weights = chosen["weights"]
    bits = _int(weights.get("num_bits"), 1, 16) or 8
    kind = str(weights.get("type", "int")).lower()
    strategy = str(weights.get("strategy", "tensor")).lower()
    fmt = str(quant.get("format", "")).lower()
    group_size = _int(weights.get("group_size"), 1, MAX_BLOCK)
    block = weights.get("block_structure")
    symmetric = weights.get("symmetric") is not False
    if kind == "float" and bits == 4 and "mxfp4" in f"{fmt} {chosen.get('format', '')}".lower():
        text = "projections MXFP4 (compressed-tensors): two 4-bit values a byte, a U8 exponent per 32"
        return Scheme("mxfp4", "ct", 4, group_size or 32, excluded=excluded, description=text)
    if kind == "float" and bits == 4:  # NVFP4: tensor_group strategy, 16 values a scale
        text = f"projections NVFP4 (compressed-tensors): two 4-bit values a byte, an FP8 scale per {group_size or 16}"
        return Scheme("nvfp4", "ct", 4, group_size or 16, excluded=excluded, description=text)
    if (
        strategy == "block"
        and isinstance(block, list)
        and len(block) == 2
        and all(_int(b, 1, MAX_BLOCK) for b in block)
    ):
        bo, bi = int(block[0]), int(block[1])
        where, group, two = f"per {bo}×{bi} block", 0, (bo, bi)
    elif strategy == "group" and group_size:
        where, group, two = f"per {group_size} values", group_size, None
    elif strategy == "channel":
        where, group, two = "a row", 0, None
    else:
        where, group, two = "a tensor", -1, None
    if kind == "float":
        text = f"projections FP8 (compressed-tensors), a scale {where}"
        return Scheme("float8", "ct", 8, group, block=two, excluded=excluded, description=text)
    packed = "pack-quantized" in fmt or bits < 8
    values = f"{bits}-bit packed in int32 words" if packed else f"{bits}-bit in I8"
    zeros = "" if symmetric else " and a zero point"
    text = f"projections int {values} (compressed-tensors), a scale{zeros} {where}"
    return Scheme(
        "int",
        "ct" if packed else "ct8",
        bits,
        group,
        block=two,
        symmetric=symmetric,
        excluded=excluded,
        description=text,
    )


_PLAIN = re.compile(r"[A-Za-z0-9_.]+")
_ONE_GROUP = re.compile(r"([A-Za-z0-9_.]*)\(([A-Za-z0-9_|]+)\)([A-Za-z0-9_.]*)")


def _regex_words(pattern: str) -> tuple[str, ...] | None:
    """compressed-tensors' ``re:`` patterns of the shape releases write (``re:.*self_attn.*``,
    ``re:.*mlp\\.(gate|up|down)_proj.*``) as the texts one of which a name contains; None for any other
    shape (no regex is ever compiled from a config's text)."""
    body = pattern[3:300]
    body = body.removeprefix("^").removeprefix(".*").removesuffix("$").removesuffix(".*")
    body = body.replace("\\.", ".")
    if _PLAIN.fullmatch(body):
        return (body,)
    group = _ONE_GROUP.fullmatch(body)
    if group:
        return tuple(group[1] + word + group[3] for word in group[2].split("|"))
    return None


def _contains_parts(segments: list[str], parts: list[str]) -> bool:
    """The pattern's dotted parts as consecutive whole parts of the name (globs part by part)."""
    n = len(parts)
    return any(
        all(map(fnmatch.fnmatchcase, segments[i : i + n], parts)) for i in range(len(segments) - n + 1)
    )


def _is_excluded(name: str, excluded: tuple[str, ...]) -> bool:
    """A module the config keeps unconverted: a module path or name, whole parts only, with globs
    (gpt-oss's ``model.layers.*.self_attn``, ``lm_head``, MiniMax's ``gate``, which is not
    ``gate_proj``), or compressed-tensors' ``re:`` patterns of the usual shapes (``_regex_words``)."""
    segments = name.split(".")
    for pattern in excluded:
        if pattern.startswith("re:"):
            words = _regex_words(pattern)
            if words and any(w in name for w in words):
                return True
        elif _contains_parts(segments, pattern[:300].split(".")):
            return True
    return False


def unread_exclusions(cfg: ArchConfig) -> tuple[str, ...]:
    """``re:`` exclusions of a shape hubdiff does not read (their modules are counted as converted)."""
    s = scheme(cfg)
    return tuple(p for p in (s.excluded if s else ()) if p.startswith("re:") and _regex_words(p) is None)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _convert(s: Scheme, name: str, shape: tuple[int, ...]) -> list[Tensor]:
    """One projection [..., out, in] (``name`` its weight, ``.weight`` or a fused experts tensor) as
    the scheme's library writes it."""
    lead, (out, inn) = shape[:-2], shape[-2:]
    base = name[: -len(".weight")] if name.endswith(".weight") else name
    n = math.prod(shape)
    per = _cdiv(inn, s.group) if s.group > 0 else 1
    if s.method == "fp8" and s.layout == "deepseek":
        if s.block is None:
            return [(name, "F8_E4M3", shape), (name + "_scale_inv", "F32", ())]
        bo, bi = s.block
        return [
            (name, "F8_E4M3", shape),
            (name + "_scale_inv", "F32", (*lead, _cdiv(out, bo), _cdiv(inn, bi))),
        ]
    if s.method == "fp8":  # ModelOpt FP8
        return [
            (name, "F8_E4M3", shape),
            (base + ".weight_scale", "F32", ()),
            (base + ".input_scale", "F32", ()),
        ]
    if s.method == "mxfp4" and s.layout == "ct":
        return [
            (base + ".weight_packed", "U8", (*lead, out, _cdiv(inn, 2))),
            (base + ".weight_scale", "U8", (*lead, out, per)),
        ]
    if s.method == "mxfp4":
        return [
            (name + "_blocks", "U8", (*lead, out, per, s.group // 2)),
            (name + "_scales", "U8", (*lead, out, per)),
        ]
    if s.method == "nvfp4":
        packed = (*lead, out, _cdiv(inn, 2))
        scales = (base + ".weight_scale", "F8_E4M3", (*lead, out, per))
        if s.layout == "ct":
            return [
                (base + ".weight_packed", "U8", packed),
                scales,
                (base + ".weight_global_scale", "F32", (*lead, 1)),
                (base + ".input_global_scale", "F32", (*lead, 1)),
            ]
        return [
            (base + ".weight", "U8", packed),
            scales,
            (base + ".weight_scale_2", "F32", lead),
            (base + ".input_scale", "F32", lead),
        ]
    if s.method == "bnb4":
        blocks = _cdiv(n, 64)
        out_t: list[Tensor] = [
            (base + ".weight", "U8", (_cdiv(n, 2), 1)),
            (base + ".weight.quant_map", "F32", (16,)),
        ]
        if s.double_quant:
            out_t += [
                (base + ".weight.absmax", "U8", (blocks,)),
                (base + ".weight.nested_absmax", "F32", (_cdiv(blocks, 256),)),
                (base + ".weight.nested_quant_map", "F32", (256,)),
            ]
        else:
            out_t.append((base + ".weight.absmax", "F32", (blocks,)))
        return out_t
    if s.method == "bnb8":
        return [(base + ".weight", "I8", shape), (base + ".SCB", "F32", (*lead, out))]
    if s.layout in ("gptq", "awq"):
        words = 32 // s.bits if 32 % s.bits == 0 else 0
        packed_in = _cdiv(inn, words) if words else _cdiv(inn * s.bits, 32)
        packed_out = _cdiv(out, words) if words else _cdiv(out * s.bits, 32)
        qweight = (*lead, packed_in, out) if s.layout == "gptq" else (*lead, inn, packed_out)
        tensors = [
            (base + ".qweight", "I32", qweight),
            (base + ".qzeros", "I32", (*lead, per, packed_out)),
            (base + ".scales", "F16", (*lead, per, out)),
        ]
        if s.layout == "gptq":
            tensors.append((base + ".g_idx", "I32", (*lead, inn)))
        return tensors
    # compressed-tensors int and float schemes
    if s.block is not None:
        scale_shape = (*lead, _cdiv(out, s.block[0]), _cdiv(inn, s.block[1]))
    elif s.group > 0:
        scale_shape = (*lead, out, per)
    elif s.group == 0:
        scale_shape = (*lead, out, 1)
    else:
        scale_shape = (*lead, 1)
    if s.method == "float8":
        tensors = [(base + ".weight", "F8_E4M3", shape), (base + ".weight_scale", "BF16", scale_shape)]
    elif s.layout == "ct":
        words = 32 // s.bits if 32 % s.bits == 0 else 0
        packed_in = _cdiv(inn, words) if words else _cdiv(inn * s.bits, 32)
        tensors = [
            (base + ".weight_packed", "I32", (*lead, out, packed_in)),
            (base + ".weight_scale", "BF16", scale_shape),
            (base + ".weight_shape", "I64", (2,)),
        ]
    else:
        tensors = [(base + ".weight", "I8", shape), (base + ".weight_scale", "BF16", scale_shape)]
    if not s.symmetric:
        tensors.append((base + ".weight_zero_point", "I8", scale_shape))
    return tensors


def stored_tensors(cfg: ArchConfig, tensors: Iterable[Tensor], layers: list[LayerInfo]) -> Iterator[Tensor]:
    """``tensors`` (the BF16 estimate) as the config's quantization stores them; unchanged without one."""
    s = scheme(cfg)
    if s is None:
        yield from tensors
        return
    by_layer = {x.index: x for x in layers}
    n = cfg.num_layers
    for name, dtype, shape in tensors:
        component, _ = classify(name, shape, by_layer, n)
        if component == "mtp":  # an MTP layer's projections are stored like the main layers' (DeepSeek-V3)
            component, _ = classify(name, shape, by_layer, 0)
        matrix = len(shape) == 2 and name.endswith(".weight")
        stacked = len(shape) == 3 and component == "routed_experts"  # [experts, out, in]
        wanted = "routed_experts" if s.experts_only else None
        if (
            (matrix or stacked)
            and component in PROJECTIONS
            and (wanted is None or component == wanted)
            and all(shape)
            and not _is_excluded(name, s.excluded)
        ):
            yield from _convert(s, name, shape)
        else:
            yield name, dtype, shape


def basis(cfg: ArchConfig) -> str:
    """What a config-only estimate is written in, for the output's basis line and assumptions."""
    s = scheme(cfg)
    if s is None:
        return "estimated from config.json in BF16 (a quantized release stores less: read its headers)"
    return f"estimated from config.json: {s.description}, the rest BF16 (quantization_config)"
