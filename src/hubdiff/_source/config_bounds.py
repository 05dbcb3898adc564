"""The bounds on a config's values, checked before transformers or hubdiff's readers see one.

Apart from ``layout`` (which files make up the model, the index) because it needs the key names the
metrics read, which a header worker, reading an index, never imports.
"""

from __future__ import annotations

import math
import re
from typing import Any

from .config_keys import (
    EXPERT_KEYS,
    EXPERTS_PER_TOKEN_KEYS,
    HUBDIFF_NUMERIC_KEYS,
    LAYER_KEYS,
    MAX_DIM,
    MAX_LAYERS,
    MTP_LAYER_KEYS,
    MULTIPLIER_KEY,
    SHARED_EXPERT_KEYS,
    SIZE_KEY,
    TEXT_CONFIG_KEYS,
    VISION_CONFIG_KEYS,
)
from .layout import LayoutProblem
from .numeric_keys import TRANSFORMERS_NUMERIC_KEYS

# Config keys that something downstream turns into one object per layer or per expert: their values are
# bounded here, before anything is allocated, far above any released model (128 layers, 512 experts).
MAX_EXPERTS = 65_536
MAX_LAYER_EXPERTS = 1_048_576  # layers x experts: the tensors a config-only estimate writes out
LAYER_COUNT_KEYS = frozenset(
    {*LAYER_KEYS, *MTP_LAYER_KEYS, "vt_num_hidden_layers", "depth", "first_k_dense_replace"}
)
EXPERT_COUNT_KEYS = frozenset({*EXPERT_KEYS, *SHARED_EXPERT_KEYS, *EXPERTS_PER_TOKEN_KEYS})
PER_LAYER_LIST_KEYS = frozenset(
    {
        "layer_types",
        "mlp_only_layers",
        "compress_ratios",
        "no_rope_layers",
        "indexer_types",
        "mlp_layer_types",
        "layers_block_type",
        "deepstack_visual_indexes",
        "kda_layers",
        "full_attn_layers",
    }
)
OBJECT_KEYS = frozenset(
    {*TEXT_CONFIG_KEYS, *VISION_CONFIG_KEYS, "quantization_config", "config_groups", "linear_attn_config"}
    | {"rope_scaling", "rope_parameters"}
)

# What transformers' PretrainedConfig expands: num_labels into id2label and label2id (a dict entry per
# label, built before any validation: 10**9 labels is 5 GB), and per_layer_config into one config copy
# per layer; GPT-Neo's attention_types ([[kinds, repeat], ...]) into a list of kinds x repeat. A real
# classifier has at most some 20,000 labels (ImageNet-21k).
MAX_LABELS = 131_072
LABEL_MAP_KEYS = frozenset({"id2label", "label2id"})

# Sizes and multipliers: hubdiff's readers and transformers' classes multiply these (hidden x
# intermediate, embed_dim x patch_size^2 ...), so a string there is repeated (a 2.4 GB string from
# "embed_dim": "x"*1000 and a patch size), a huge float overflows (1e308 x hidden is inf, which int()
# refuses), and a huge count is looped over (mimi's num_residual_layers). Bounded by use: a key is sized
# only when something takes it as a number (USED_AS_NUMBER) and its role is a size, count or multiplier
# (SIZE_KEY, MULTIPLIER_KEY; not an id, epsilon or dropout). A key nobody reads as a number is compared
# as it is, whatever its name: Command R7B's "order_of_interleaved_layers": "local_attn_first", or
# polyglot-ko's "num_steps": "global_step100000" (training bookkeeping).
# The only strings so used in transformers' type hints are the "auto" of a Mamba dt rank and layer
# names in a list of layers.
USED_AS_NUMBER = TRANSFORMERS_NUMERIC_KEYS | HUBDIFF_NUMERIC_KEYS
LOOPED_KEY = re.compile(r"(^|_)(layers|blocks)$")  # counts something loops over, one step at a time
MAX_MULTIPLIER = 1 << 20  # x a size of at most MAX_DIM: at most 2**61, exact in a float


def _kind(value: Any) -> str:
    kinds = {bool: "a boolean", int: "a whole number", str: "a string", float: "a fraction", list: "a list"}
    return kinds.get(type(value), "an object")


def _size_limit(key: str) -> int:
    if key == "num_labels":
        return MAX_LABELS
    if MULTIPLIER_KEY.search(key):
        return MAX_MULTIPLIER
    if LOOPED_KEY.search(key):
        return MAX_LAYERS
    if key.endswith("experts"):
        return MAX_EXPERTS
    return MAX_DIM


def _check_size(file: str, path: str, key: str, value: Any) -> None:
    """A size or multiplier: a finite number within its limit, or a list of them; no string (bar the
    "auto" of a rank, and layer names in a list of layers), no number past the limit, at any depth."""
    limit = _size_limit(key)
    low = -limit if limit == MAX_MULTIPLIER else -1  # -1: "not set" (GPTQ's group_size)
    stack = [value]
    while stack:
        v = stack.pop()
        if v is None or type(v) is bool or type(v) is dict:  # not a number to anyone; objects are walked
            continue
        if type(v) is list:
            stack.extend(v)
        elif type(v) in (int, float):
            if not (math.isfinite(v) and low <= v <= limit):
                what = f"{v:,}" if type(v) is int else f"{v:g}"
                raise LayoutProblem(file, f"{path} is {what}: out of range ({low:,} to {limit:,})")
        elif type(v) is str:
            allowed = (v == "auto" and key.endswith("rank")) or (v is not value and key.endswith("layers"))
            if not allowed:
                where = "is a string" if v is value else "holds a string"
                raise LayoutProblem(file, f"{path} {where}, not a number")


def _check_attention_types(file: str, path: str, value: Any) -> None:
    """GPT-Neo's ``[[kinds, repeat], ...]``, which transformers writes out kinds x repeat times."""
    if type(value) is not list:
        return
    total = 0
    for item in value:
        if type(item) is list and len(item) >= 2 and type(item[1]) is int and hasattr(item[0], "__len__"):
            total += max(item[1], 0) * max(len(item[0]), 1)
            if total > MAX_LAYERS:
                raise LayoutProblem(file, f"{path} expands to more than {MAX_LAYERS:,} layers")


def check_config(config: dict[str, Any], file: str) -> None:
    """Refuse a config whose sizes or shapes would make the metrics allocate without bound or misread it.

    Checked at any nesting level (``text_config``, ``vision_config``, objects in lists such as
    ``block_configs``), before transformers or hubdiff's readers see a value: the keys that drive
    per-layer or per-expert work, what transformers expands (labels, per-layer configs), and every
    size or multiplier something reads as a number (``USED_AS_NUMBER``); every other key is compared as
    it is, never sized.
    """
    layers = experts = 0
    stack: list[tuple[str, dict[str, Any]]] = [("", config)]
    while stack:
        prefix, obj = stack.pop()
        for key, value in obj.items():
            path = prefix + key
            if value is None:
                continue
            if key in LABEL_MAP_KEYS or key == "per_layer_config":
                limit = MAX_LABELS if key in LABEL_MAP_KEYS else MAX_LAYERS
                if type(value) is not dict:
                    raise LayoutProblem(file, f"{path} is {_kind(value)}, not an object")
                if len(value) > limit:
                    raise LayoutProblem(file, f"{path} has {len(value):,} entries (at most {limit:,})")
                if key in LABEL_MAP_KEYS:
                    continue  # label names and numbers, not config keys: not walked
            elif key == "attention_types":
                _check_attention_types(file, path, value)
            if key in LAYER_COUNT_KEYS or key in EXPERT_COUNT_KEYS:
                limit = MAX_LAYERS if key in LAYER_COUNT_KEYS else MAX_EXPERTS
                # an expert count may be given per layer (Hunyuan's moe_topk: [8, 8, ...])
                values = value if type(value) is list and key in EXPERT_COUNT_KEYS else [value]
                if len(values) > MAX_LAYERS:
                    raise LayoutProblem(file, f"{path} has {len(values):,} entries (at most {MAX_LAYERS:,})")
                for v in values:
                    if type(v) is not int:
                        raise LayoutProblem(file, f"{path} is {_kind(value)}, not a whole number")
                    if not 0 <= v <= limit:
                        raise LayoutProblem(file, f"{path} is {v:,}: out of range (0 to {limit:,})")
                top = max(values, default=0)
                if key in LAYER_COUNT_KEYS:
                    layers = max(layers, top)
                else:
                    experts = max(experts, top)
            elif key in PER_LAYER_LIST_KEYS:
                if type(value) is not list:
                    raise LayoutProblem(file, f"{path} is {_kind(value)}, not a list")
                if len(value) > MAX_LAYERS:
                    raise LayoutProblem(file, f"{path} has {len(value):,} entries (at most {MAX_LAYERS:,})")
                if any(isinstance(v, (dict, list)) for v in value):
                    raise LayoutProblem(file, f"{path} holds lists or objects, not one value per layer")
            elif key == "hybrid_override_pattern":
                if type(value) is not str or len(value) > MAX_LAYERS:
                    raise LayoutProblem(file, f"{path} is not a string of at most {MAX_LAYERS:,} characters")
            elif key in OBJECT_KEYS and type(value) is not dict:
                raise LayoutProblem(file, f"{path} is {_kind(value)}, not an object")
            elif key in USED_AS_NUMBER and (SIZE_KEY.search(key) or MULTIPLIER_KEY.search(key)):
                _check_size(file, path, key, value)
            if type(value) is list:  # objects in lists are configs too (block_configs: one per layer)
                lists = [(path, value)]
                while lists:
                    where, items = lists.pop()
                    kinds = set(map(type, items))  # at C speed: a long list of numbers is not walked
                    if dict not in kinds and list not in kinds:
                        continue
                    for i, item in enumerate(items):
                        if type(item) is dict:
                            stack.append((f"{where}[{i}].", item))
                        elif type(item) is list:
                            lists.append((f"{where}[{i}]", item))
            if type(value) is dict:
                if key == "config_groups":
                    for name, group in value.items():
                        if group is not None and type(group) is not dict:
                            raise LayoutProblem(file, f"{path}.{name} is {_kind(group)}, not an object")
                stack.append((path + ".", value))
    if layers * max(experts, 1) > MAX_LAYER_EXPERTS:
        raise LayoutProblem(
            file, f"{layers:,} layers x {experts:,} experts is over the {MAX_LAYER_EXPERTS:,} hubdiff reads"
        )
