"""Config changes, grouped to what a person reads: one row per key, lists summarised.

Two configs that are equal as JSON (a check of an unchanged release) are never walked. Two that
differ are compared whole by deepdiff (``ignore_numeric_type_changes``), every level of them: a key
at the top and its namesake in ``text_config`` are two keys, each reported where it changed.
Importing deepdiff and the numpy it loads costs 0.3 s, paid only when something changed.

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

from .._metrics.config import hidden

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
    # deepdiff's (report type, path) under this key, e.g. ("values_changed", "root['hidden_size']")
    deepdiff: tuple[tuple[str, str], ...] = ()
    moved_from: str = ""  # kind "moved": the key's path in the old config ("hidden_size")

    @property
    def label(self) -> str:
        """The key as a reader looks for it: both paths when it moved (``hidden_size → text_config.hidden_size``)."""
        return f"{self.moved_from} → {self.path}" if self.moved_from else self.path


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


MAX_REPORTED = 20  # deepdiff's own entries kept per changed key (a list of 10,000 entries differs in each)


def _deepdiff() -> tuple[Any, Any]:
    """deepdiff, imported only for configs that differ, and without numpy and pydantic unless this
    process has them: deepdiff imports both wherever they are installed (0.44 s of its 0.61 s here;
    ``hubdiff diff`` took 1.8 s of CPU warm), and a config is JSON, with no array or model in it."""
    with hidden("numpy", "pydantic"):
        from deepdiff import DeepDiff
        from deepdiff.helper import number_to_string
    return DeepDiff, number_to_string


def _deepdiff_keys(
    old: dict[str, Any], new: dict[str, Any]
) -> dict[tuple[Any, ...], tuple[str, list[tuple[str, str]]]]:
    """Key path -> ("added", "removed" or "changed", deepdiff's (report type, path) under it).

    deepdiff compares the two whole configs, every level of them: nothing is merged or flattened
    first, so a top-level key and its namesake in ``text_config`` are two keys. Numbers compare as
    numbers whatever their type (``ignore_numeric_type_changes``: 1 == 1.0, equal to 12 decimals). A
    path is cut at its first list index: a list that differs anywhere is a change of its key."""
    DeepDiff, number_to_string = _deepdiff()

    def as_text(number: Any, *args: Any, **kwargs: Any) -> Any:
        """deepdiff's own, except that an integer past a float's range stands for itself (deepdiff
        raises OverflowError formatting it)."""
        try:
            return number_to_string(number, *args, **kwargs)
        except OverflowError:
            return repr(number)

    tree = DeepDiff(
        old,
        new,
        ignore_numeric_type_changes=True,
        verbose_level=2,
        threshold_to_diff_deeper=0,
        number_to_string_func=as_text,
    ).tree
    grouped: dict[tuple[Any, ...], tuple[str, list[tuple[str, str]]]] = {}
    for report, levels in sorted(tree.items()):
        for level in levels:
            path = level.path(output_format="list")
            cut = next((i for i, part in enumerate(path) if isinstance(part, int)), len(path))
            key = tuple(path[:cut])
            if cut < len(path):
                kind = "changed"
            elif report.endswith("_added"):
                kind = "added"
            elif report.endswith("_removed"):
                kind = "removed"
            else:
                kind = "changed"
            was, said = grouped.get(key, (kind, []))
            if len(said) < MAX_REPORTED:
                said.append((report, str(level.path())))
            grouped[key] = ("changed" if cut < len(path) else was, said)
    return grouped


def diff_configs(old: dict[str, Any], new: dict[str, Any]) -> list[ConfigChange]:
    """Every key that differs between the two configs, at any level, classified.

    The two are compared whole: flattening ``text_config`` over the top level (``flatten_text``, for
    reading metrics) would hide a change of a top-level key that the nested one shadows."""
    if same_json(old, new):  # the common case of a check: nothing to compare, deepdiff not imported
        return []
    grouped = _deepdiff_keys(old, new)
    changes: list[ConfigChange] = []
    renamed_dtype = {k for k in DTYPE_KEYS if (k,) in grouped}
    dtype_same = (
        len(renamed_dtype) == 2
        and _lookup(old, ["torch_dtype"]) in (None, _lookup(new, ["dtype"]))
        and _lookup(old, ["dtype"]) in (None, _lookup(new, ["torch_dtype"]))
    )
    grouped = _leaves_of_whole_objects(grouped, old, new)
    for key, (kind, reported) in sorted(grouped.items(), key=lambda kv: [str(p) for p in kv[0]]):
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
            ConfigChange(
                path,
                kind,
                before,
                after,
                category,
                rule,
                _summarise_list(before, after),
                tuple(reported),
            )
        )
    return _pair_moves(changes)  # in path order; compare() orders them by category


def _pair_moves(changes: list[ConfigChange]) -> list[ConfigChange]:
    """A key removed at one level and added one object deeper or shallower (``hidden_size`` →
    ``text_config.hidden_size``, a flat config become multimodal) as one row of kind ``moved`` naming
    both paths: still every differing key, but read as a reviewer reads it, value beside value. A
    pair is made only where it is the one candidate on both sides; any other row stays as it is."""
    added = {c.path: c for c in changes if c.kind == "added"}
    removed = {c.path: c for c in changes if c.kind == "removed"}

    def one_level_apart(path: str, pool: dict[str, ConfigChange]) -> list[str]:
        deeper = [p for p in pool if p.endswith("." + path) and p.count(".") == path.count(".") + 1]
        shallower = path.split(".", 1)[1] if "." in path else ""
        return deeper + ([shallower] if shallower in pool else [])

    pairs: dict[str, str] = {}  # removed path -> added path
    for gone in removed:
        candidates = one_level_apart(gone, added)
        if len(candidates) == 1 and one_level_apart(candidates[0], removed) == [gone]:
            pairs[gone] = candidates[0]
    if not pairs:
        return changes
    arrived = {new: removed[old] for old, new in pairs.items()}
    out: list[ConfigChange] = []
    for c in changes:
        if c.kind == "removed" and c.path in pairs:
            continue
        if c.kind == "added" and c.path in arrived:
            was = arrived[c.path]
            if same_json(was.old, c.new):
                category, rule = "cosmetic", "moved, same value (metrics read it the same)"
            else:
                category, rule = classify(c.path, "changed", was.old, c.new)
            c = ConfigChange(
                c.path,
                "moved",
                was.old,
                c.new,
                category,
                rule,
                _summarise_list(was.old, c.new),
                was.deepdiff + c.deepdiff,
                moved_from=was.path,
            )
        out.append(c)
    return out


def _leaves_of_whole_objects(
    grouped: dict[tuple[Any, ...], tuple[str, list[tuple[str, str]]]],
    old: dict[str, Any],
    new: dict[str, Any],
) -> dict[tuple[Any, ...], tuple[str, list[tuple[str, str]]]]:
    """An object added or removed whole (a ``text_config`` a flat config did not have) as one row per
    key inside it, so that ``text_config.hidden_size`` added reads beside ``hidden_size`` removed."""
    out: dict[tuple[Any, ...], tuple[str, list[tuple[str, str]]]] = {}
    for key, (kind, reported) in grouped.items():
        value = _lookup(new if kind == "added" else old, list(key))
        if kind not in ("added", "removed") or not isinstance(value, dict) or not value:
            out[key] = (kind, reported)
            continue
        todo = [(key, value)]
        while todo:
            at, inner = todo.pop()
            for name, item in inner.items():
                if isinstance(item, dict) and item:
                    todo.append(((*at, name), item))
                else:
                    out[(*at, name)] = (kind, reported)
    return out


def _has(config: dict[str, Any], key: tuple[Any, ...]) -> bool:
    value: Any = config
    for part in key:
        if isinstance(value, dict) and part in value:
            value = value[part]
        else:
            return False
    return True
