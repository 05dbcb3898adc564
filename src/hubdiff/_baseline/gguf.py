"""What a baseline keeps of a GGUF repo (its ``gguf:`` block), and the rules that block is read by.

A repo of ``.gguf`` files has no config.json and no safetensors weights, so its entry cannot hold
``config``/``tensors``/``metrics``: it holds, per variant (keyed by its quant name, ``Q4_K_M``, when
the file names say one unambiguously), the files, the tensor bytes, the bits per weight, the
parameters and how many tensors of each ggml type. Those catch a variant added, removed, re-shard or
requantized as a whole; they do not catch one tensor kind moved from Q6_K to Q4_K in a few layers
while another moves the other way. So the one variant the family depends on (``pin``, written by a
person and kept across updates) also keeps its strip: every tensor as hubdiff compresses tensor
patterns (``blk.{0-3,28-31}.attn_v.weight: Q6_K [1024, 4096] x8``), i.e. which ggml type each tensor
kind has in which layers, and its shape.

The block comes from a fork's pull request as readily as the rest of a baseline: ``gguf_problem``
checks every key, string and number and bounds every count before ``check`` trusts any of it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._source.ggml_types import BY_NAME
from .._source.gguf_read import SPLIT_NAME
from ..patterns import Pattern, compress
from .rows import parse_pattern_row, pattern_key, pattern_row

if TYPE_CHECKING:
    from .._metrics.gguf import Variant

GGUF_KEYS = ("pin", "variants")
VARIANT_KEYS = ("files", "bytes", "bits_per_weight", "parameters", "types", "strip")
REQUIRED = ("files", "bytes", "bits_per_weight", "parameters", "types")
# what a safetensors entry holds and a GGUF one cannot: refused beside ``gguf`` so that no check reads them
SAFETENSORS_ONLY = ("config", "tensors", "metrics", "claims", "release", "config_keys", "metrics_options")
MAX_VARIANTS = 1000  # the largest quant repos publish a few dozen
MAX_FILES = 10_000  # shards of one variant (gguf-split numbers them in five digits)
MAX_TEXT = 1000  # a file path or variant name
MAX_BITS = 64.0  # F64, the widest ggml type
# tensors a strip may stand for: a GGUF of the largest MoE holds a few thousand (experts stacked); a
# hostile row of two 4-million-value index sets would stand for 16 trillion, and be compared as such
MAX_STRIP_TENSORS = 1_000_000
MAX_INT = 2**63 - 1
BPW_DIGITS = 4

# the quant name at the end of a file stem, as llama.cpp's quantize, unsloth and bartowski write them:
# Q4_K_M, IQ2_XXS, Q8_0, F16, BF16, MXFP4_MOE, TQ1_0, UD-Q4_K_XL
_QUANT = re.compile(
    r"(?:^|[-_.])((?:UD-)?(?:I?Q[0-9](?:_[A-Z0-9]{1,4}){0,3}|B?F(?:16|32|64)|MXFP4(?:_MOE)?|TQ[0-9]_[0-9]))$",
    re.IGNORECASE,
)
_ROW_COUNT = re.compile(r" x([0-9]{1,18})$")
_BRACED = re.compile(r"\{([^{}]*)\}")
_ITEM = re.compile(r"^([0-9]{1,18})(?:-([0-9]{1,18})(?:/([0-9]{1,18}))?)?$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]")


def quant_name(stem: str) -> str | None:
    """``Llama-3-8B-Q4_K_M`` -> ``Q4_K_M`` (upper case), or None when the name ends in none."""
    base = stem.rsplit("/", 1)[-1]
    match = _QUANT.search(base)
    return match.group(1).upper() if match else None


def variant_keys(found: Sequence[Variant]) -> dict[str, Variant]:
    """Each variant under its quant name, or under its full name (the file stem) where two variants'
    names end in the same quant (a model and its ``mmproj-…-F16``) or in none: a key never stands
    for two variants."""
    quants = [quant_name(v.name) for v in found]
    taken = [q for q in quants if q is not None]
    out: dict[str, Variant] = {}
    for variant, quant in zip(found, quants):
        key = quant if quant is not None and taken.count(quant) == 1 else variant.name
        out[key if key not in out else variant.name] = variant
    return out


def pinned_key(pin: str | None, keys: dict[str, Variant]) -> str | None:
    """The key of the variant ``pin`` names (by key, by full name, or by one of its files), or None."""
    if pin is None:
        return None
    if pin in keys:
        return pin
    for key, variant in keys.items():
        if pin == variant.name or pin in (f.path for f in variant.files):
            return key
    folded = pin.upper()
    return next((k for k in keys if k.upper() == folded), None)


def _stem(path: str) -> str:
    """A file's variant name: the path less ``.gguf`` and a split's ``-0000K-of-0000N``."""
    match = SPLIT_NAME.fullmatch(path)
    return match.group("stem") if match else path.removesuffix(".gguf")


def pinned_record(pin: str | None, recorded: dict[str, Any]) -> str | None:
    """The key of the recorded variant ``pin`` names (by key, by full name or by one of its files), as
    ``pinned_key`` finds it among the variants read: the recorded strip is that variant's."""
    if pin is None:
        return None
    if pin in recorded:
        return pin
    for key, record in recorded.items():
        files = record.get("files") or [] if isinstance(record, dict) else []
        if pin in files or any(pin == _stem(f) for f in files):
            return key
    folded = pin.upper()
    return next((k for k in recorded if k.upper() == folded), None)


def parse_strip(rows: dict[str, str]) -> list[Pattern]:
    """A recorded strip's patterns (validated on load, so every row parses)."""
    return [parse_pattern_row(key, row) for key, row in rows.items()]


def strip_of(variant: Variant) -> dict[str, str]:
    """The variant's tensors as pattern rows: each tensor kind's ggml type and shape, layer by layer."""
    patterns = compress((t.name, t.type.name, tuple(t.shape)) for t, _ in variant.tensors())
    return {pattern_key(p): pattern_row(p) for p in patterns}


def variant_record(variant: Variant, with_strip: bool) -> dict[str, Any]:
    types: dict[str, int] = {}
    for t, _ in variant.tensors():
        types[t.type.name] = types.get(t.type.name, 0) + 1
    out: dict[str, Any] = {
        "files": [f.path for f in variant.files],
        "bytes": variant.tensor_bytes,
        "bits_per_weight": round(variant.bits_per_weight, BPW_DIGITS),
        "parameters": variant.parameters,
        "types": dict(sorted(types.items())),
    }
    if with_strip:
        out["strip"] = strip_of(variant)
    return out


def gguf_block(found: Sequence[Variant], pin: str | None) -> dict[str, Any]:
    """The ``gguf:`` block for these variants; the pinned one (if ``pin`` names one) with its strip."""
    keys = variant_keys(found)
    chosen = pinned_key(pin, keys)
    block: dict[str, Any] = {} if pin is None else {"pin": pin}
    block["variants"] = {k: variant_record(v, k == chosen) for k, v in sorted(keys.items())}
    return block


# -- validation ---------------------------------------------------------------------------------


def text_problem(value: Any) -> str | None:
    """Why ``value`` cannot be a variant name, a pin or a file path: each is quoted in reports and
    error lines, where a control or bidi character would hide or reorder what a reader sees."""
    if not isinstance(value, str) or not value or len(value) > MAX_TEXT or _CONTROL.search(value):
        return f"must be text of 1 to {MAX_TEXT} characters without control characters"
    return None


def _count_problem(value: Any, low: int = 0) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= MAX_INT:
        return f"must be a whole number from {low} to {MAX_INT:,}"
    return None


def gguf_problem(block: Any) -> tuple[list[Any], str] | None:
    """What is wrong with a ``gguf:`` block, and where under it (keys from ``gguf``); None if nothing."""
    if not isinstance(block, dict):
        return [], "must be a mapping with pin and variants"
    bad = set(block) - set(GGUF_KEYS)
    if bad:
        return [sorted(bad)[0]], f"unknown key (known: {', '.join(GGUF_KEYS)})"
    if "pin" in block:
        problem = text_problem(block["pin"])
        if problem:
            return ["pin"], problem + " (a variant's name or one of its files)"
    variants = block.get("variants", {})
    if not isinstance(variants, dict):
        return ["variants"], "must map variant names to what was recorded of them"
    if len(variants) > MAX_VARIANTS:
        return ["variants"], f"more than {MAX_VARIANTS} variants"
    paths: set[str] = set()
    for name, record in variants.items():
        where = ["variants", name]
        problem = text_problem(name)
        if problem:
            return where, problem
        found = _variant_problem(record, paths)
        if found:
            return [*where, *found[0]], found[1]
    return None


def _variant_problem(record: Any, paths: set[str]) -> tuple[list[Any], str] | None:
    if not isinstance(record, dict):
        return [], f"must be a mapping with {', '.join(REQUIRED)}"
    bad = set(record) - set(VARIANT_KEYS)
    if bad:
        return [sorted(bad)[0]], f"unknown key (known: {', '.join(VARIANT_KEYS)})"
    missing = [k for k in REQUIRED if k not in record]
    if missing:
        return [], f"{missing[0]} is missing"
    files = record["files"]
    if not isinstance(files, list) or not 1 <= len(files) <= MAX_FILES:
        return ["files"], f"must list the variant's 1 to {MAX_FILES:,} .gguf files"
    for i, path in enumerate(files):
        problem = text_problem(path)
        if problem or not path.endswith(".gguf"):
            return ["files", i], problem or "a file path must end in .gguf"
        if path in paths:
            return ["files", i], "file listed twice"
        paths.add(path)
    for key in ("bytes", "parameters"):
        problem = _count_problem(record[key])
        if problem:
            return [key], problem
    bpw = record["bits_per_weight"]
    if (
        isinstance(bpw, bool)
        or not isinstance(bpw, (int, float))
        or not math.isfinite(bpw)
        or not 0 <= bpw <= MAX_BITS
    ):
        return ["bits_per_weight"], f"must be a number from 0 to {MAX_BITS:g}"
    types = record["types"]
    if not isinstance(types, dict) or len(types) > len(BY_NAME):
        return ["types"], "must map ggml type names to tensor counts"
    for name, count in types.items():
        if name not in BY_NAME:
            return ["types", name], _unknown_type(name)
        problem = _count_problem(count, 1)
        if problem:
            return ["types", name], problem
    strip = record.get("strip")
    if strip is not None:
        if not isinstance(strip, dict) or not strip:
            return ["strip"], "must map tensor patterns to 'GGML_TYPE [d0, d1, ...] xCOUNT' rows"
        total = 0
        for key, row in strip.items():
            if not isinstance(row, str) or len(key) > MAX_TEXT or _CONTROL.search(key):
                return ["strip", key], "must be a 'GGML_TYPE [d0, d1, ...] xCOUNT' row under a tensor pattern"
            count = _ROW_COUNT.search(row)
            total += int(count.group(1)) if count else 0
            if total > MAX_STRIP_TENSORS:
                return ["strip", key], f"the strip stands for more than {MAX_STRIP_TENSORS:,} tensors"
            if count and any(n > int(count.group(1)) for n in _set_sizes(key)):
                return ["strip", key], f"expands to more names than the row's x{count.group(1)}"
            try:
                pattern = parse_pattern_row(key, row)
            except ValueError as exc:
                return ["strip", key], str(exc)
            if pattern.dtype not in BY_NAME:
                return ["strip", key], _unknown_type(pattern.dtype)
    return None


def _set_sizes(key: str) -> list[int]:
    """How many values each index set of a pattern key holds, counted from its text without making
    them (a malformed set counts 0: ``parse_pattern_row`` then says what is wrong with it)."""
    sizes = []
    for inner in _BRACED.findall(key.replace("{{", "").replace("}}", "")):
        size = 0
        for item in inner.split(","):
            match = _ITEM.match(item.strip())
            if match is None:
                break
            start = int(match.group(1))
            end = int(match.group(2)) if match.group(2) is not None else start
            step = int(match.group(3)) if match.group(3) is not None else 1
            size += (end - start) // step + 1 if end >= start and step >= 1 else 0
        sizes.append(size)
    return sizes


def _unknown_type(name: Any) -> str:
    return f"{str(name)[:40]!r} is not a ggml type hubdiff knows"
