"""Hypothesis strategies for hostile safetensors files and configs (shared by the fuzz tests)."""

from __future__ import annotations

import json
import struct
from typing import Any

from hypothesis import strategies as st

from hubdiff.dtypes import BITS

HOSTILE_NAMES = [
    "model.layers.0.w",
    "a",
    "",
    "dtype",
    "__metadata__",
    "x\u202ey",
    "e\x1b[2J\x07",
    "w@user",
    "https://x.example",
    "z\u200bw",
    "<b>x</b>|`",
]
DTYPES = [*BITS, "bf16", "BF16\x00", " BF16", "BF16 ", "F3_NEW", "float32", "", "f32"]
ODD_SHAPES: list[Any] = [
    [2**40, 2**40],
    [2**63, 2**63, 0],
    [2**64],
    [-1],
    [1.0],
    [True],
    "x",
    None,
    [0, 2**64 - 1],
]
FIELD_MUTATIONS = ["gap", "overlap", "trailing", "short", "meta", "offsets3", "extra", "zero_meta"]
TEXT_MUTATIONS = [
    "nan",
    "infinity",
    "1e400",
    "minus_zero",
    "dup_field",
    "dup_meta",
    "dup_tensor",
    "surrogate",
    "surrogate_pair",
    "control",
    "deep",
    "bom",
    "utf16",
    "leading_space",
    "trailing_garbage",
    "trailing_nul",
    "not_object",
    "escaped_field",
]
FRAME_MUTATIONS = ["length_past_file", "length_huge", "length_short", "length_zero", "no_data"]


def _size(dtype: str, shape: Any) -> int:
    if not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape):
        return 0
    elements = 1
    for d in shape:
        elements *= d
    bits = BITS.get(dtype, 8)
    return (elements * bits + 7) // 8


@st.composite
def header_files(draw: st.DrawFn) -> bytes:
    """A safetensors file (8-byte length, header JSON, data) that is valid or broken in one chosen way."""
    names = st.one_of(st.sampled_from(HOSTILE_NAMES), st.text(st.characters(codec="utf-8"), max_size=8))
    shapes = st.one_of(st.lists(st.integers(0, 5), max_size=3), st.sampled_from(ODD_SHAPES))
    tensors = draw(
        st.lists(st.tuples(names, st.sampled_from(DTYPES), shapes), max_size=4, unique_by=lambda t: t[0])
    )
    header: dict[str, Any] = {}
    meta = draw(st.sampled_from(["absent", "pt", "null"]))
    if meta != "absent":
        header["__metadata__"] = {"format": "pt"} if meta == "pt" else None
    offset = 0
    for name, dtype, shape in tensors:
        size = _size(dtype, shape)
        if size > 1_000_000:
            size = 0  # the claim stays wrong; the file stays small
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    data_size = offset
    entries = [k for k in header if k != "__metadata__"]
    mutation = draw(st.sampled_from(["none", "none", *FIELD_MUTATIONS, *TEXT_MUTATIONS, *FRAME_MUTATIONS]))
    if mutation in ("gap", "overlap", "offsets3", "extra") and not entries:
        mutation = "none"
    if mutation == "gap":
        header[entries[-1]]["data_offsets"] = [o + 1 for o in header[entries[-1]]["data_offsets"]]
        data_size += 1
    elif mutation == "overlap" and len(entries) > 1:
        header[entries[1]]["data_offsets"][0] = max(0, header[entries[1]]["data_offsets"][0] - 1)
    elif mutation == "trailing":
        data_size += draw(st.integers(1, 9))
    elif mutation == "short":
        data_size = max(0, data_size - 1)
    elif mutation == "meta":
        header["__metadata__"] = draw(st.sampled_from([{"a": 1}, {"a": None}, [], "x", {"a": {"b": "c"}}, 0]))
    elif mutation == "offsets3":
        header[entries[0]]["data_offsets"] = [*header[entries[0]]["data_offsets"], 0]
    elif mutation == "extra":
        header[entries[0]]["x"] = draw(st.sampled_from([1, "s", None, [1], {"k": 1}, 2**70, 1.5, True]))
    elif mutation == "zero_meta":
        header = {"__metadata__": {}} if draw(st.booleans()) else {}
        data_size = 0
    text = json.dumps(header, ensure_ascii=draw(st.booleans()), separators=(",", ":"))
    first = f"{json.dumps(entries[0], ensure_ascii=True)}:{{" if entries else None
    if mutation in ("nan", "infinity", "1e400", "deep") and first:
        value = {"nan": "NaN", "infinity": "-Infinity", "1e400": "1e400"}.get(mutation)
        if value is None:
            depth = draw(st.sampled_from([30, 124, 125, 126, 200, 3000]))
            value = "[" * depth + "]" * depth
        text = text.replace(first, f'{first}"x":{value},', 1)
    elif mutation == "minus_zero":
        text = text.replace('"data_offsets":[0,', '"data_offsets":[-0,', 1)
    elif mutation == "dup_field":
        text = text.replace('"dtype":', '"dtype":"U8","dtype":', 1)
    elif mutation == "dup_meta":
        text = '{"__metadata__":{},' + text[1:] if len(text) > 2 else '{"__metadata__":{},"__metadata__":{}}'
    elif mutation == "dup_tensor" and first:
        entry = json.dumps(header[entries[0]], separators=(",", ":"))
        text = text[:-1] + ("," if len(text) > 2 else "") + json.dumps(entries[0]) + ":" + entry + "}"
    elif mutation in ("surrogate", "surrogate_pair") and first:
        escape = "\\ud800" if mutation == "surrogate" else "\\ud83d\\ude00"
        text = text.replace(first, f'"{escape}{first[1:]}', 1)
    elif mutation == "control" and first:
        text = text.replace(first, f'"\x01{first[1:]}', 1)
    elif mutation == "escaped_field":
        text = text.replace('"dtype":', '"\\u0064type":', 1)
    elif mutation == "leading_space":
        text = "  " + text
    elif mutation == "trailing_garbage":
        text += "x"
    elif mutation == "not_object":
        text = draw(st.sampled_from(["[]", '"x"', "1", "null"]))
    raw = text.encode("utf-8", "surrogatepass")
    if mutation == "bom":
        raw = b"\xef\xbb\xbf" + raw
    elif mutation == "utf16":
        raw = text.encode("utf-16")
    elif mutation == "trailing_nul":
        raw += b"\x00"
    if draw(st.booleans()):
        raw += b" " * (-len(raw) % 8)
    length = len(raw)
    if mutation == "length_past_file":
        length += data_size + 1
    elif mutation == "length_huge":
        length = draw(st.sampled_from([100_000_001, 10**12, 2**64 - 1]))
    elif mutation == "length_short":
        length = max(0, length - 1)
    elif mutation == "length_zero":
        length = 0
    elif mutation == "no_data":
        data_size = 0
    return struct.pack("<Q", length) + raw + bytes(data_size)


HOSTILE_KEYS = [
    "num_hidden_layers",
    "n_routed_experts",
    "num_experts_per_tok",
    "num_nextn_predict_layers",
    "layer_types",
    "mlp_only_layers",
    "compress_ratios",
    "quantization_config",
    "text_config",
    "vision_config",
    "hybrid_override_pattern",
    "full_attention_interval",
    "moe_layer_freq",
    "decoder_sparse_step",
    "first_k_dense_replace",
    "sliding_window",
    "kv_lora_rank",
    "hidden_size",
    "intermediate_size",
    "moe_intermediate_size",
    "head_dim",
    "num_key_value_heads",
    "linear_attn_config",
    "index_topk_freq",
    "torch_dtype",
    "max_position_embeddings",
    "rope_scaling",
    "model_type",
    "architectures",
    "x\u202e",
    "@everyone",
    "https://x.example",
    "\x1b]8;;http://x\x07",
]
MODEL_TYPES = [
    "llama",
    "qwen3_moe",
    "deepseek_v3",
    "qwen2_vl",
    "gemma3",
    "jamba",
    "mixtral",
    "glm4_moe",
    "x\u202e",
]
_SCALARS = st.one_of(
    st.sampled_from([0, 1, -1, 2, 7, 10**9, 2**63, 2**64, 2**70, -(2**70), 1e308, 0.5, True, False, None]),
    st.sampled_from(MODEL_TYPES),
    st.integers(-3, 80),
    st.text(max_size=6),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.sampled_from([*HOSTILE_KEYS, "weights", "num_bits", "group_0"]), inner, max_size=4
        ),
    ),
    max_leaves=12,
)


@st.composite
def hostile_configs(draw: st.DrawFn) -> bytes:
    """config.json bytes: a small real config with hostile keys, values, nesting or encoding."""
    config: dict[str, Any] = {
        "hidden_size": 8,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "vocab_size": 10,
    }
    if draw(st.booleans()):  # read through transformers' configuration class of that type
        config["model_type"] = draw(st.sampled_from(MODEL_TYPES))
    config.update(draw(st.dictionaries(st.sampled_from(HOSTILE_KEYS), _VALUES, max_size=5)))
    text = json.dumps(config, ensure_ascii=draw(st.booleans()))
    mutation = draw(st.sampled_from(["none", "none", "none", "nan", "deep", "surrogate", "bom", "garbage"]))
    if mutation == "nan":
        text = text[:-1] + ', "nan": NaN}'
    elif mutation == "deep":
        depth = draw(st.sampled_from([31, 33, 900, 5000]))
        text = text[:-1] + ', "deep": ' + "[" * depth + "]" * depth + "}"
    elif mutation == "surrogate":
        text = text[:-1] + ', "s\\udc00": 1}'
    elif mutation == "garbage":
        text += "}"
    raw = text.encode()
    return b"\xef\xbb\xbf" + raw if mutation == "bom" else raw
