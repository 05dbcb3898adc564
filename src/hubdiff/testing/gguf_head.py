"""GGUF headers for the replica's GGUF releases: the layout gguf-py's ``GGUFWriter`` writes (magic,
version 3, tensor and key counts, the key/values, the tensor infos, padding to ``general.alignment``),
the data section left to ``VirtualFile``'s zeros. ``tests/test_gguf.py`` checks it byte for byte against
gguf-py writing the same release."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

from .._source.ggml_types import BY_NAME
from .specs import CommitSpec, VirtualFile

ALIGNMENT = 32  # GGUF_DEFAULT_ALIGNMENT

# a value's GGUF type, as gguf-py picks it for a Python value (GGUFValueType.get_type)
_UINT16, _UINT32, _INT32, _FLOAT32, _BOOL, _STRING, _ARRAY, _UINT64, _INT64 = 2, 4, 5, 6, 7, 8, 9, 10, 11
_CODES = {_UINT16: "H", _UINT32: "I", _INT32: "i", _FLOAT32: "f", _BOOL: "?", _UINT64: "Q", _INT64: "q"}
TYPED = {"UINT16": _UINT16, "INT32": _INT32, "UINT32": _UINT32, "UINT64": _UINT64}

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


def _pair(entry: tuple[Any, ...]) -> bytes:
    key, value = entry[0], entry[1]
    kind = TYPED[entry[2]] if len(entry) > 2 else _kind(value)
    return _string(key) + struct.pack("<I", kind) + _value(value, kind)


def gguf_head(
    metadata: Sequence[tuple[Any, ...]], tensors: Sequence[TensorSpec], alignment: int = ALIGNMENT
) -> tuple[bytes, int]:
    """The header bytes (padded to where the data starts) and the data section's size. A value takes
    the type llama.cpp's converter gives it (``_kind``), or the one named third (``TYPED``: gguf-split
    writes ``split.no`` as UINT16)."""
    kvs = b"".join(_pair(entry) for entry in metadata)
    infos, offset = [], 0
    for name, type_name, shape in tensors:
        ggml = BY_NAME[type_name]
        dims = shape[::-1]  # ggml's ne: innermost first
        elements = _elements(dims)
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
    metadata: Sequence[tuple[Any, ...]], tensors: Sequence[TensorSpec], alignment: int = ALIGNMENT
) -> VirtualFile:
    """A ``.gguf`` file for a ``CommitSpec``: its header stored, its data zeros, an LFS file as on the Hub."""
    head, data = gguf_head(metadata, tensors, alignment)
    return VirtualFile(head, len(head) + data, True)


def gguf_split(
    stem: str, metadata: Sequence[tuple[Any, ...]], tensors: Sequence[TensorSpec], shards: int
) -> dict[str, VirtualFile]:
    """``stem-0000i-of-0000n.gguf`` as llama.cpp's ``gguf-split`` writes them: the tensors in order, cut
    into ``shards`` runs of about equal bytes; the first file keeps the model's metadata, every file gets
    ``split.no`` and ``split.count`` (UINT16) and ``split.tensors.count`` (INT32) after it."""
    sizes = [BY_NAME[t].nbytes(_elements(shape)) for _, t, shape in tensors]
    runs: list[list[TensorSpec]] = [[] for _ in range(shards)]
    total, done = sum(sizes), 0
    for tensor, size in zip(tensors, sizes):
        runs[min(shards - 1, done * shards // total)].append(tensor)
        done += size
    files = {}
    for i, run in enumerate(runs):
        split = [("split.no", i, "UINT16"), ("split.count", shards, "UINT16")]
        split.append(("split.tensors.count", len(tensors), "INT32"))
        files[f"{stem}-{i + 1:05d}-of-{shards:05d}.gguf"] = gguf_file(
            [*(metadata if i == 0 else ()), *split], run
        )
    return files


def _elements(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def use_more_bits(layer: int, layers: int) -> bool:
    """llama.cpp's ``use_more_bits`` (src/llama-quant.cpp): the layers a K-quant mix gives more bits."""
    return layer < layers // 8 or layer >= 7 * layers // 8 or (layer - layers // 8) % 3 == 2


def q4_k_m_type(name: str, shape: tuple[int, ...], layers: int) -> str:
    """A Q4_K_M-like mix, after ``llama_tensor_get_type`` (src/llama-quant.cpp): vectors F32; the output
    and the ``use_more_bits`` layers' ``ffn_down`` and ``attn_v``/``attn_v_b`` Q6_K; the rest Q4_K. A row
    that is not whole 256-blocks falls back as llama.cpp's does: Q4_K to Q5_0, Q6_K to Q8_0."""
    if len(shape) == 1:
        return "F32"
    kind = "Q4_K"
    parts = name.split(".")
    layer = int(parts[1]) if parts[0] == "blk" else None
    if name == "output.weight":
        kind = "Q6_K"
    elif layer is not None and parts[2] in ("ffn_down", "ffn_down_exps", "attn_v", "attn_v_b"):
        kind = "Q6_K" if use_more_bits(layer, layers) else "Q4_K"
    if shape[-1] % 256:
        kind = {"Q4_K": "Q5_0", "Q6_K": "Q8_0"}[kind]
    return kind


def converted_tensors(source: CommitSpec, layers: int, heads: int, nope: int, v_dim: int) -> list[TensorSpec]:
    """The tensors llama.cpp's converter writes of ``source``, in the Q4_K_M-like mix: names by the map
    ``hubdiff diff SOURCE GGUF`` reads them with, experts stacked, MTP layers (index >= ``layers``) and
    what no rule maps left out, and MLA's ``kv_b`` split into ``attn_k_b`` (heads, kv_lora, nope) and
    ``attn_v_b`` (heads, v, kv_lora)."""
    from .._compare.gguf_diff import pair_tensors
    from ..snapshot import Tensor

    pairs, _ = pair_tensors(Tensor(name, dtype, tuple(shape), "") for name, dtype, shape in source.tensors)
    out: list[TensorSpec] = []
    for pair in pairs:
        parts = pair.gguf.split(".")
        if parts[0] == "blk" and int(parts[1]) >= layers:
            continue
        shapes = [(pair.gguf, pair.shape)]
        if pair.gguf.endswith(".attn_kv_b.weight"):
            lora = pair.shape[1]
            shapes = [
                (pair.gguf.replace("attn_kv_b", "attn_k_b"), (heads, lora, nope)),
                (pair.gguf.replace("attn_kv_b", "attn_v_b"), (heads, v_dim, lora)),
            ]
        out += [(name, q4_k_m_type(name, shape, layers), shape) for name, shape in shapes]
    return sorted(out, key=lambda t: _block_order(t[0]))


def _block_order(name: str) -> tuple[int, str]:
    parts = name.split(".")
    return (int(parts[1]) if parts[0] == "blk" else -1 if name.startswith("token_embd") else 1 << 20, name)
