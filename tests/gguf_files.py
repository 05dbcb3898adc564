"""GGUF files for the tests, written by gguf-py's GGUFWriter (llama.cpp's own writer).

``write_tiny`` writes a two-layer Llama-shaped model quantized the way llama.cpp's Q4_K_M mix stores
one (Q4_K matrices, attn_v, ffn_down and the output in Q6_K, norms in F32), zeros for the weights.
Its figures are worked out by hand in ``TINY`` (the tests state the arithmetic).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType as Q
from gguf import GGUFWriter

EMBD, FF, HEADS, KV_HEADS, VOCAB, LAYERS, CONTEXT = 256, 512, 8, 2, 512, 2, 4096
HEAD_DIM = EMBD // HEADS  # 32
KV_DIM = KV_HEADS * HEAD_DIM  # 64

# name -> (torch shape, ggml type); block shapes written out so the tests can add them up by hand
TENSORS: dict[str, tuple[tuple[int, ...], Q]] = {
    "token_embd.weight": ((VOCAB, EMBD), Q.Q4_K),
    "output_norm.weight": ((EMBD,), Q.F32),
    "output.weight": ((VOCAB, EMBD), Q.Q6_K),
}
for _i in range(LAYERS):
    TENSORS |= {
        f"blk.{_i}.attn_norm.weight": ((EMBD,), Q.F32),
        f"blk.{_i}.attn_q.weight": ((EMBD, EMBD), Q.Q4_K),
        f"blk.{_i}.attn_k.weight": ((KV_DIM, EMBD), Q.Q4_K),
        f"blk.{_i}.attn_v.weight": ((KV_DIM, EMBD), Q.Q6_K),
        f"blk.{_i}.attn_output.weight": ((EMBD, EMBD), Q.Q4_K),
        f"blk.{_i}.ffn_norm.weight": ((EMBD,), Q.F32),
        f"blk.{_i}.ffn_gate.weight": ((FF, EMBD), Q.Q4_K),
        f"blk.{_i}.ffn_up.weight": ((FF, EMBD), Q.Q4_K),
        f"blk.{_i}.ffn_down.weight": ((EMBD, FF), Q.Q6_K),
    }

# bytes a block by hand, from ggml-common.h's structs: Q4_K half d, dmin + 12 scales + 128 nibble bytes
# = 144 for 256 weights; Q6_K 128 low + 64 high + 16 scales + half d = 210 for 256; F32 4 a weight
_BLOCK = {Q.Q4_K: (256, 2 + 2 + 12 + 128), Q.Q6_K: (256, 128 + 64 + 16 + 2), Q.F32: (1, 4)}


def _zeros(shape: tuple[int, ...], kind: Q) -> np.ndarray:
    block, size = _BLOCK[kind]
    if kind == Q.F32:
        return np.zeros(shape, dtype=np.float32)
    return np.zeros((*shape[:-1], shape[-1] // block * size), dtype=np.uint8)


def write_tiny(folder: Path, name: str = "Tiny-Q4_K_M", split_max_tensors: int = 0) -> list[Path]:
    """The tiny model as ``folder/name.gguf`` (or its shards, ``split_max_tensors`` tensors a shard)."""
    folder.mkdir(parents=True, exist_ok=True)
    writer = GGUFWriter(folder / f"{name}.gguf", "llama", split_max_tensors=split_max_tensors)
    writer.add_name("Tiny")
    writer.add_block_count(LAYERS)
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(EMBD)
    writer.add_feed_forward_length(FF)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(KV_HEADS)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(15)  # LlamaFileType.MOSTLY_Q4_K_M
    writer.add_tokenizer_model("llama")
    writer.add_token_list([f"t{i}" for i in range(VOCAB)])
    writer.add_token_types([1] * VOCAB)
    writer.add_chat_template("{{ messages }}")
    for tensor, (shape, kind) in TENSORS.items():
        writer.add_tensor(tensor, _zeros(shape, kind), raw_dtype=kind)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return sorted(folder.glob(f"{name}*.gguf"))


def write_model(folder: Path, name: str, arch: str, setup) -> Path:  # type: ignore[no-untyped-def]
    """A header for ``arch`` with the keys ``setup(writer)`` adds and one F32 tensor (token_embd, 32 x 4), so
    the release has parameters: the KV tests read the metadata, never the weights."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.gguf"
    writer = GGUFWriter(path, arch)
    writer.add_name(name)
    setup(writer)
    writer.add_tensor("token_embd.weight", np.zeros((4, 32), dtype=np.float32), raw_dtype=Q.F32)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
