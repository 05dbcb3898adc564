"""Safetensors dtypes: how many bits one stored element takes.

Sizes are in bits so that sub-byte formats (F4, F6) are exact. A dtype that hubdiff does not know is
kept as it is and reported; its size is then unknown (``None``), never guessed.
"""

from __future__ import annotations

BITS: dict[str, int] = {
    "BOOL": 8,
    "U8": 8,
    "I8": 8,
    "F8_E4M3": 8,
    "F8_E5M2": 8,
    "F8_E8M0": 8,
    "F8_E4M3FNUZ": 8,
    "F8_E5M2FNUZ": 8,
    "F6_E2M3": 6,
    "F6_E3M2": 6,
    "F4": 4,
    "I16": 16,
    "U16": 16,
    "F16": 16,
    "BF16": 16,
    "I32": 32,
    "U32": 32,
    "F32": 32,
    "C64": 64,
    "I64": 64,
    "U64": 64,
    "F64": 64,
}

# Spellings found in configs, torch and published censuses, mapped to the safetensors name.
ALIASES: dict[str, str] = {
    "bool": "BOOL",
    "uint8": "U8",
    "int8": "I8",
    "float8_e4m3fn": "F8_E4M3",
    "float8_e4m3": "F8_E4M3",
    "fp8": "F8_E4M3",
    "float8_e5m2": "F8_E5M2",
    "float8_e8m0fnu": "F8_E8M0",
    "float8_e8m0": "F8_E8M0",
    "float4_e2m1fn_x2": "U8",
    "fp4": "F4",
    "float4_e2m1": "F4",
    "int16": "I16",
    "uint16": "U16",
    "float16": "F16",
    "half": "F16",
    "fp16": "F16",
    "bfloat16": "BF16",
    "bf16": "BF16",
    "int32": "I32",
    "uint32": "U32",
    "float32": "F32",
    "float": "F32",
    "fp32": "F32",
    "int64": "I64",
    "uint64": "U64",
    "float64": "F64",
    "double": "F64",
}


def canonical(name: str) -> str:
    """The safetensors spelling of a dtype name; unknown names come back unchanged."""
    if name in BITS:
        return name
    return ALIASES.get(name.lower(), name)


def is_known(dtype: str) -> bool:
    return dtype in BITS


def nbytes(dtype: str, elements: int) -> int | None:
    """Bytes that ``elements`` values of ``dtype`` occupy on disk, or None for an unknown dtype."""
    bits = BITS.get(dtype)
    if bits is None:
        return None
    return (elements * bits + 7) // 8
