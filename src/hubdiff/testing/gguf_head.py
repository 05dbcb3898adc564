"""GGUF headers for the replica's GGUF releases: the layout gguf-py's ``GGUFWriter`` writes (magic,
version 3, tensor and key counts, the key/values, the tensor infos, padding to ``general.alignment``),
the data section left to ``VirtualFile``'s zeros. ``tests/test_gguf.py`` checks it byte for byte against
gguf-py writing the same release."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

from .._source.ggml_types import BY_NAME
from .specs import VirtualFile

ALIGNMENT = 32  # GGUF_DEFAULT_ALIGNMENT

# a value's GGUF type, as gguf-py picks it for a Python value (GGUFValueType.get_type)
_UINT32, _INT32, _FLOAT32, _BOOL, _STRING, _ARRAY, _UINT64, _INT64 = 4, 5, 6, 7, 8, 9, 10, 11
_CODES = {_UINT32: "I", _INT32: "i", _FLOAT32: "f", _BOOL: "?", _UINT64: "Q", _INT64: "q"}

TensorSpec = tuple[str, str, tuple[int, ...]]  # name, ggml type name, shape outermost first (as torch)


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def _kind(value: Any, in_array: bool = False) -> int:
    """A key's ints are UINT32 (the typed adders the converter uses for counts and ``file_type``), an
    array's INT32 (``add_array`` takes gguf-py's ``GGUFValueType.get_type``, as token types are)."""
    if isinstance(value, bool):
        return _BOOL
    if isinstance(value, str):
        return _STRING
    if isinstance(value, float):
        return _FLOAT32
    if isinstance(value, int):
        if in_array:
            return _INT32
        return _UINT32 if 0 <= value < 1 << 32 else _UINT64 if value >= 0 else _INT64
    if isinstance(value, (list, tuple)):
        return _ARRAY
    raise TypeError(f"no GGUF type for {type(value).__name__}")


def _value(value: Any, kind: int) -> bytes:
    if kind == _STRING:
        return _string(value)
    if kind == _ARRAY:
        inner = _kind(value[0], in_array=True) if value else _INT32
        return struct.pack("<IQ", inner, len(value)) + b"".join(_value(v, inner) for v in value)
    return struct.pack("<" + _CODES[kind], value)


def gguf_head(
    metadata: Sequence[tuple[str, Any]], tensors: Sequence[TensorSpec], alignment: int = ALIGNMENT
) -> tuple[bytes, int]:
    """The header bytes (padded to where the data starts) and the data section's size. Values take
    the types llama.cpp's converter gives them (``_kind``)."""
    kvs = b"".join(_string(key) + struct.pack("<I", _kind(v)) + _value(v, _kind(v)) for key, v in metadata)
    infos, offset = [], 0
    for name, type_name, shape in tensors:
        ggml = BY_NAME[type_name]
        dims = shape[::-1]  # ggml's ne: innermost first
        elements = 1
        for d in dims:
            elements *= d
        infos.append(
            _string(name)
            + struct.pack("<I", len(dims))
            + b"".join(struct.pack("<Q", d) for d in dims)
            + struct.pack("<IQ", ggml.id, offset)
        )
        offset += ggml.nbytes(elements)
        offset += -offset % alignment
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(metadata)) + kvs + b"".join(infos)
    head += b"\0" * (-len(head) % alignment)
    return head, offset


def gguf_file(
    metadata: Sequence[tuple[str, Any]], tensors: Sequence[TensorSpec], alignment: int = ALIGNMENT
) -> VirtualFile:
    """A ``.gguf`` file for a ``CommitSpec``: its header stored, its data zeros, an LFS file as on the Hub."""
    head, data = gguf_head(metadata, tensors, alignment)
    return VirtualFile(head, len(head) + data, True)
