"""An independent oracle for hubdiff's config-only parameter model: transformers' own model classes.

hubdiff writes out the tensors a config implies (``_metrics.estimate.synthesize``) from its own reading
of the config. transformers' modeling code is a second, independently written reading of the same
config, and instantiated on torch's meta device it lists every parameter with its shape at no cost in
memory and without any download. Counting that inventory with hubdiff's classifier and comparing it with
the estimate, component by component, finds what the estimate misses or invents.

Only classes that ship with transformers are used (never ``trust_remote_code``): a model whose
``model_type`` transformers does not know gets ``None``, and the test reports it as not covered.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

Triple = tuple[str, str, tuple[int, ...]]

# Keys that configure loading, not the architecture: a quantizer cannot run on the meta device, and
# ``auto_map`` only points at remote code, which is never run.
_DROP_KEYS = ("quantization_config", "auto_map", "transformers_version", "_name_or_path")


@dataclass(frozen=True)
class Inventory:
    """What the oracle found for one config: the tensors, or why there are none."""

    tensors: list[Triple] | None
    model_class: str | None
    reason: str  # why tensors is None; empty when it is not
    seconds: float


def _clean(value: Any) -> Any:
    """The config without the loading-only keys, at every level (text_config carries them too)."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if k not in _DROP_KEYS}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """transformers warns about every unused or defaulted config key; none of it is a finding here."""
    import warnings

    from transformers.utils import logging

    level = logging.get_verbosity()
    logging.set_verbosity_error()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.set_verbosity(level)


_TORCH_INITS = (
    "uniform_",
    "normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "dirac_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "trunc_normal_",
    "orthogonal_",
    "sparse_",
)


@contextlib.contextmanager
def _no_torch_init() -> Iterator[None]:
    """``torch.nn.init`` as no-ops while a model is built: random init of meta tensors computes nothing
    but costs half the build time in Python (every ``nn.Linear`` runs kaiming_uniform_ through torch's
    decompositions). transformers' own ``no_init_weights()`` is not used: it also skips the step that
    ties a head to its embedding, which would then be listed twice."""
    import torch.nn.init as init

    originals = {name: getattr(init, name) for name in _TORCH_INITS if hasattr(init, name)}
    try:
        for name in originals:
            setattr(init, name, lambda tensor, *args, **kwargs: tensor)
        yield
    finally:
        for name, function in originals.items():
            setattr(init, name, function)


def _model_class(config: Any, architectures: list[str]) -> type | None:
    """The class the config names, else the auto class that maps its config type."""
    import transformers
    from transformers.models.auto import modeling_auto as auto

    for name in architectures:
        cls = None
        with contextlib.suppress(Exception):  # a lazy attribute whose module fails to import: fall back
            cls = getattr(transformers, name, None) if isinstance(name, str) else None
        if isinstance(cls, type):
            return cls
    for mapping in (
        auto.MODEL_FOR_CAUSAL_LM_MAPPING,
        auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING,
        auto.MODEL_MAPPING,
    ):
        with contextlib.suppress(KeyError, ValueError):
            return mapping[type(config)]
    return None


def _one_line(exc: Exception, limit: int = 300) -> str:
    """An exception as one report line (validation errors span several)."""
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def build_config(config: dict[str, Any]) -> tuple[Any | None, str]:
    """transformers' configuration object for a raw config.json, or None and the reason."""
    from transformers import AutoConfig
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    raw = _clean(copy.deepcopy(config))
    model_type = raw.pop("model_type", None)
    if not isinstance(model_type, str):
        return None, "config has no model_type"
    if model_type not in CONFIG_MAPPING_NAMES:
        remote = " (remote code only)" if "auto_map" in config else ""
        return None, f"model_type {model_type!r} unknown to transformers{remote}"
    try:
        with _quiet():
            return AutoConfig.for_model(model_type, **raw), ""
    except Exception as exc:  # a config transformers rejects is reported, not a crash of the suite
        return None, f"transformers rejects the config: {_one_line(exc)}"


def _checkpoint_names(model: Any) -> Callable[[str], str]:
    """transformers' own renaming from its module names back to the checkpoint's, as saving does.

    transformers renames some checkpoint keys on load (DeepSeek-V4's ``attn.wq_a`` becomes
    ``self_attn.q_a_proj``, ``hc_attn_fn`` becomes ``attn_hc.fn``, Mixtral's ``block_sparse_moe`` becomes
    ``mlp``); hubdiff's classifier reads checkpoint names, so the oracle hands it those. Only the
    renamings are reverted: layout converters (fusing experts, splitting a fused qkv) are not, so the
    layout stays the model class's, whose fused ``[experts, ...]`` tensors are also how hubdiff's estimate
    writes experts. Prefix changes are not reverted either (the comparison strips prefixes).
    """
    from transformers.conversion_mapping import get_model_conversion_mapping
    from transformers.core_model_loading import PrefixChange, WeightRenaming, apply_renamings

    try:
        conversions = get_model_conversion_mapping(model, add_legacy=False)
    except Exception:  # no mapping machinery for this model: its names are the checkpoint's
        return lambda name: name
    reverse = [c.reverse_transform() for c in reversed(conversions) if not isinstance(c, PrefixChange)]
    renamings = [r for r in reverse if isinstance(r, WeightRenaming) and not isinstance(r, PrefixChange)]
    return lambda name: apply_renamings(name, renamings) if renamings else name


def _inventory(model: Any, names: str) -> list[Triple]:
    """Parameters and persistent buffers (what a checkpoint stores), each tied tensor once.

    Persistent buffers are kept because checkpoints store them (DeepSeek's ``e_score_correction_bias``);
    non-persistent ones (rotary ``inv_freq``) are not in ``state_dict`` at all.
    ``state_dict(keep_vars=True)`` keeps the tensor objects, so a tied head and embedding (one object
    under two names) are seen as one and the first name, the embedding's, is kept.
    """
    rename = _checkpoint_names(model) if names == "checkpoint" else (lambda name: name)
    seen: set[int] = set()
    out: list[Triple] = []
    for name, tensor in model.state_dict(keep_vars=True).items():
        if id(tensor) in seen:
            continue
        seen.add(id(tensor))
        out.append((rename(name), "BF16", tuple(int(d) for d in tensor.shape)))
    return out


def inventory(config: dict[str, Any], names: str = "checkpoint") -> Inventory:
    """Instantiate the config's transformers class on the meta device and list its tensors.

    ``names``: "checkpoint" (transformers' load-time renamings reverted, see ``_checkpoint_names``) or
    "model" (the class's own ``state_dict`` names).
    """
    import torch

    start = time.perf_counter()
    cfg_obj, reason = build_config(config)
    if cfg_obj is None:
        return Inventory(None, None, reason, time.perf_counter() - start)
    architectures = config.get("architectures") or []
    cls = _model_class(cfg_obj, architectures if isinstance(architectures, list) else [])
    if cls is None:
        return Inventory(
            None, None, f"no transformers class for {architectures}", time.perf_counter() - start
        )
    try:
        with _quiet(), torch.device("meta"), _no_torch_init():
            model = cls(cfg_obj)
    except Exception as exc:
        return Inventory(
            None,
            cls.__name__,
            f"{cls.__name__} fails on this config: {_one_line(exc)}",
            time.perf_counter() - start,
        )
    return Inventory(_inventory(model, names), cls.__name__, "", time.perf_counter() - start)


@functools.cache
def _cached(config_json: str, names: str) -> Inventory:
    return inventory(json.loads(config_json), names)


def cached_inventory(config: dict[str, Any], names: str = "checkpoint") -> Inventory:
    """``inventory`` once per distinct config in a session (the tests ask for it several times)."""
    return _cached(json.dumps(config, sort_keys=True), names)


def meta_inventory(config: dict[str, Any], names: str = "checkpoint") -> list[Triple] | None:
    """Every tensor transformers' class for ``config`` has, as (name, "BF16", shape); None without one.

    Parameters and persistent buffers, tied tensors once, under checkpoint names by default.
    """
    return cached_inventory(config, names).tensors
