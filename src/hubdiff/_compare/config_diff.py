"""Config changes, grouped to what a person reads: one row per key, lists summarised.

Configs are compared by a walk of their keys that reports what deepdiff reported with
``ignore_numeric_type_changes`` (tests/test_config_diff.py runs both on every real config and on
generated ones); importing deepdiff and the numpy it loads took 0.3 s, half of a warm ``diff``.

Each change is classified with the rule that decided it, shown in the report:
- ``cosmetic``: serialisation only (``transformers_version``, dtype key spelling, a key added or
  removed as null, training-only keys);
- ``behavioural``: token ids and generation settings, remote-code pointers (``auto_map``);
- ``architectural``: everything else, which is what a shape-, cache- or routing-relevant key is;
  an unknown key is treated as architectural rather than waved through.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

COSMETIC_KEYS = {
    "transformers_version": "library version stamp",
    "_name_or_path": "local path at save time",
    "_commit_hash": "save-time metadata",
    "_attn_implementation": "runtime kernel choice",
    "_attn_implementation_autoset": "runtime kernel choice",
    "use_cache": "runtime flag",
    "output_attentions": "runtime flag",
    "output_hidden_states": "runtime flag",
    "return_dict": "runtime flag",
    "torchscript": "runtime flag",
}
TRAINING_ONLY = {
    "initializer_range",
    "aux_loss_alpha",
    "router_aux_loss_coef",
    "seq_aux",
    "pretraining_tp",
    "ep_size",
    "attention_dropout",
    "hidden_dropout",
    "dropout",
    "router_jitter_noise",
    "output_router_logits",
    "z_loss_coef",
    "tie_encoder_decoder",
}
BEHAVIOURAL = {
    "bos_token_id",
    "eos_token_id",
    "pad_token_id",
    "sep_token_id",
    "decoder_start_token_id",
    "media_placeholder_token_id",
    "image_token_id",
    "video_token_id",
    "auto_map",
    "tokenizer_class",
    "chat_template",
    "temperature",
    "top_p",
    "top_k",
    "do_sample",
    "max_length",
    "max_new_tokens",
    "repetition_penalty",
}
DTYPE_KEYS = ("torch_dtype", "dtype")


@dataclass(frozen=True)
class ConfigChange:
    path: str  # dotted, e.g. "rope_parameters.rope_theta"
    kind: str  # "added", "removed", "changed"
    old: Any
    new: Any
    category: str  # "architectural", "behavioural", "cosmetic"
    rule: str
    summary: str = ""  # for lists: "57 of 78 entries full -> shared"


def flatten_text(config: dict[str, Any]) -> dict[str, Any]:
    """Text-model keys at the top, so a flat config and a nested ``text_config`` one compare key by key."""
    nested = config.get("text_config")
    if not isinstance(nested, dict):
        return config
    return {**{k: v for k, v in config.items() if k != "text_config"}, **nested}


def _lookup(config: dict[str, Any], path: list[Any]) -> Any:
    value: Any = config
    for part in path:
        try:
            value = value[part]
        except (KeyError, IndexError, TypeError):
            return None
    return value


def _summarise_list(old: Any, new: Any) -> str:
    if not isinstance(old, list) or not isinstance(new, list):
        if isinstance(new, list) and old is None:
            counts = Counter(map(str, new))
            return f"{len(new)} entries: " + ", ".join(f"{n} {v}" for v, n in counts.most_common())
        if isinstance(old, list) and new is None:
            return f"{len(old)} entries removed"
        return ""
    if len(old) == len(new) and len(old) <= 3:
        return ""
    if len(old) == len(new):
        moves = Counter((str(a), str(b)) for a, b in zip(old, new) if a != b)
        parts = [f"{n} of {len(old)} entries {a} -> {b}" for (a, b), n in moves.most_common()]
        return "; ".join(parts)
    return f"{len(old)} -> {len(new)} entries"


def classify(path: str, kind: str, old: Any, new: Any) -> tuple[str, str]:
    key = path.split(".")[-1]
    top = path.split(".")[0]
    if key in COSMETIC_KEYS or top in COSMETIC_KEYS:
        return "cosmetic", COSMETIC_KEYS.get(key) or COSMETIC_KEYS[top]
    if kind in ("added", "removed") and (old if kind == "removed" else new) is None:
        return "cosmetic", "null value, same as absent"
    if key in TRAINING_ONLY:
        return "cosmetic", "training-only key"
    if key in BEHAVIOURAL or top in BEHAVIOURAL:
        return "behavioural", "token ids, generation or remote-code pointer"
    return "architectural", "may change shapes, cache or routing"


def same_json(old: Any, new: Any) -> bool:
    """Equal as JSON, types included (``true`` is not ``1``, ``1`` is not ``1.0``)."""
    return json.dumps(old, sort_keys=True, default=repr) == json.dumps(new, sort_keys=True, default=repr)


def _number_text(value: int | float) -> str:
    """A number as deepdiff compares numbers of any type: rounded to 12 decimals, -0 as 0, formatted.

    A number too large to format (deepdiff raised OverflowError there) stands for itself."""
    rounded = round(value, 12)
    try:
        return f"{abs(rounded) if rounded == 0 else rounded:.12f}"
    except OverflowError:
        return repr(value)


def _same(old: Any, new: Any) -> bool:
    """Equal as deepdiff found them: numbers by ``_number_text`` whatever their type, except that an
    old boolean is compared by value (deepdiff's own order: ``False`` -> ``1e-13`` is a change, the
    reverse is not); dicts key by key, lists item by item in order; anything else by type and value."""
    numbers = (int, float)
    if isinstance(old, numbers) and isinstance(new, numbers):
        return old == new if isinstance(old, bool) else _number_text(old) == _number_text(new)
    if type(old) is not type(new):
        return False
    if isinstance(old, dict):
        return old.keys() == new.keys() and all(_same(old[k], new[k]) for k in old)
    if isinstance(old, list):
        return len(old) == len(new) and all(_same(a, b) for a, b in zip(old, new))
    return bool(old == new)


def _changed_keys(old: dict[str, Any], new: dict[str, Any]) -> dict[tuple[Any, ...], str]:
    """Key path -> "added", "removed" or "changed": nested dicts followed key by key, a list (or a
    value of another type) that differs anywhere is a change of its own key."""
    out: dict[tuple[Any, ...], str] = {}
    todo: list[tuple[tuple[Any, ...], dict[str, Any], dict[str, Any]]] = [((), old, new)]
    while todo:
        path, a, b = todo.pop()
        for key in a.keys() | b.keys():
            if key not in b:
                out[(*path, key)] = "removed"
            elif key not in a:
                out[(*path, key)] = "added"
            elif isinstance(a[key], dict) and isinstance(b[key], dict):
                todo.append(((*path, key), a[key], b[key]))
            elif not _same(a[key], b[key]):
                out[(*path, key)] = "changed"
    return out


def diff_configs(old: dict[str, Any], new: dict[str, Any]) -> list[ConfigChange]:
    if same_json(old, new):  # the common case of a check: nothing to walk
        return []
    old, new = flatten_text(old), flatten_text(new)
    grouped = _changed_keys(old, new)
    changes: list[ConfigChange] = []
    renamed_dtype = {k for k in DTYPE_KEYS if (k,) in grouped}
    dtype_same = (
        len(renamed_dtype) == 2
        and _lookup(old, ["torch_dtype"]) in (None, _lookup(new, ["dtype"]))
        and _lookup(old, ["dtype"]) in (None, _lookup(new, ["torch_dtype"]))
    )
    for key, kind in sorted(grouped.items(), key=lambda kv: [str(p) for p in kv[0]]):
        path = ".".join(str(p) for p in key)
        before, after = _lookup(old, list(key)), _lookup(new, list(key))
        if kind == "changed" and before is None and not _has(old, key):
            kind = "added"
        elif kind == "changed" and after is None and not _has(new, key):
            kind = "removed"
        if dtype_same and path in DTYPE_KEYS:
            category, rule = "cosmetic", "dtype key spelling (torch_dtype <-> dtype)"
        else:
            category, rule = classify(path, kind, before, after)
        changes.append(
            ConfigChange(path, kind, before, after, category, rule, _summarise_list(before, after))
        )
    return changes  # in path order; compare() orders them by category


def _has(config: dict[str, Any], key: tuple[Any, ...]) -> bool:
    value: Any = config
    for part in key:
        if isinstance(value, dict) and part in value:
            value = value[part]
        else:
            return False
    return True
