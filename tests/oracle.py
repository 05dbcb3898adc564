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
import dataclasses
import functools
import json
import re
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


# -- the sweep: every model_type transformers ships, against hubdiff -----------------------------------
# Each configuration class's defaults (layer counts capped so a meta-device build stays fast, per-layer
# lists cut to match) and variations of them are built on the meta device; hubdiff's figures for the
# config alone and for a header-only skeleton of the model's own tensors are compared with what the
# model holds. A model_type every row of which agrees is "proven": hubdiff vouches for it; any other
# is marked unverified (``hubdiff._metrics.proven``, which the sweep writes).

MAX_SWEEP_LAYERS = 8
MAX_ROW_LINES = 6  # mismatches and reasons kept per row in the table
_LAYER_COUNT_KEYS = (
    "num_hidden_layers",
    "n_layer",
    "num_layers",
    "n_layers",
    "depth",
    "encoder_layers",
    "decoder_layers",
    "num_blocks",  # xLSTM's copy of its layer count, which its model reads
    "num_decoder_layers",
)
NOT_PROVEN = "not proven by the sweep"
# layout switches that real releases of one architecture set both ways (Falcon-7B / -40B / -180B,
# Persimmon and Phi's q/k LayerNorms): a "switched" variation turns them the other way, all at once
_SWITCHES = (
    "bias",
    "qk_layernorm",
    "new_decoder_architecture",
    "parallel_attn",
    "multi_query",
    "do_layer_norm_before",  # OPT-350M: post-LN, no final norm
    "enable_bias",
    "use_post_norm",  # HyperCLOVA X's Peri-LN norms after each sub-layer
    "use_sandwich_norm",  # LFM3's norms after each sub-layer
    "use_attention_gate",  # LFM3's sigmoid gate per head
    "use_learned_position_embeddings",  # TrOCR's: sinusoidal positions, saved nowhere, when off
    "layernorm_embedding",  # TrOCR's LayerNorm on the embeddings
)
# class names of recurrent mixers (case kept: "GptOssMLP" holds no SSM)
_RECURRENT_CLASS = re.compile(
    r"Mamba|DeltaNet|DeltaAttention|LinearAttention|Recurrent|R[Gg][Ll][Rr][Uu]|Lightning|SSM|Ssm(?![a-z])|Kda|KDA|Rwkv|"
    r"RWKV|Retention|ShortConv|Hyena|[LlMmSs]STM|[Xx]Lstm|Mixer(?![a-z])"
)
_MODEL_MAPPINGS = (
    "MODEL_FOR_CAUSAL_LM_MAPPING",
    "MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING",
    "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING",
    "MODEL_MAPPING",
)


@dataclass(frozen=True)
class Case:
    """One row of the sweep: a model_type, a variation of its defaults and the config.json it stands for."""

    model_type: str
    variation: str
    config: dict[str, Any]


def _shrunk(value: Any, limit: int) -> Any:
    """Layer counts capped at ``limit`` at every level, and lists sized by a count cut to match."""
    if isinstance(value, list):
        return [_shrunk(v, limit) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: _shrunk(v, limit) for k, v in value.items()}
    for key in _LAYER_COUNT_KEYS:
        n = out.get(key)
        if isinstance(n, int) and not isinstance(n, bool) and n > limit:
            out[key] = limit
            for k, v in list(out.items()):
                if isinstance(v, list) and len(v) == n:
                    out[k] = v[:limit]
            _shrunk_by_layer(out, n, limit)
    return out


def _shrunk_by_layer(out: dict[str, Any], n: int, limit: int) -> None:
    """What else counts layers, cut with them. A per_layer_config keyed by layer index with entries past
    the cap is dropped whole: the class that wrote it derives it again for the layers kept (Gemma 4's
    global layers, from global_head_dim; keeping the first entries would miss the last layer, which
    Gemma 4 turns global). The layers reusing another's KV cache (Gemma 3n, Gemma 4:
    num_kv_shared_layers, the last ones) shrink in proportion, while each layer type left among them
    still has a layer of its type before them that stores the cache (the classes refuse a config
    without one)."""
    overrides = out.get("per_layer_config")
    if isinstance(overrides, dict) and any(str(k).isdigit() and int(k) >= limit for k in overrides):
        del out["per_layer_config"]
    shared = out.get("num_kv_shared_layers")
    if not (isinstance(shared, int) and not isinstance(shared, bool) and shared > 0):
        return
    types = out.get("layer_types")
    if shared >= n:  # every layer reuses the KV of another model (Gemma 4's assistants): all of them still
        out["num_kv_shared_layers"] = limit
        return
    kept = min(shared * limit // n, limit - 1)
    while kept > 0 and isinstance(types, list):
        if set(types[: limit - kept]) == set(types[:limit]):
            break
        kept -= 1
    out["num_kv_shared_layers"] = kept


_LAYER_PART = re.compile(r"^n_\w+_layers$")  # Dory's n_input_layers + n_recurrent_layers + n_output_layers


def _fitted_to_layers(value: Any) -> Any:
    """A shrunk config whose layer-indexed keys are cut to its layer count too, for a class that checks
    them against it: lists of layer indices (Kolibri's index_layers) keep the layers that remain, maps
    keyed by layer index (Dots 3's per_layer_config) lose the others, and counts of consecutive parts of
    the stack (Dory's n_*_layers) are rescaled to add up to it. Tried only where the shrunk config is
    refused, so that no config that builds is changed."""
    if isinstance(value, list):
        return [_fitted_to_layers(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: _fitted_to_layers(v) for k, v in value.items()}
    counts = [
        out[k] for k in _LAYER_COUNT_KEYS if isinstance(out.get(k), int) and not isinstance(out[k], bool)
    ]
    if not counts:
        return out
    n = counts[0]
    for k, v in list(out.items()):
        if k.endswith("layers") and isinstance(v, list) and v and all(type(i) is int for i in v):
            if any(i >= n for i in v) and len(v) != n:
                out[k] = [i for i in v if 0 <= i < n]
        elif isinstance(v, dict) and v and all(str(i).isdigit() for i in v):
            out[k] = {i: c for i, c in v.items() if int(i) < n}
    parts = [k for k, v in out.items() if _LAYER_PART.match(k) and type(v) is int and v >= 0]
    total = sum(out[k] for k in parts)
    if len(parts) > 1 and total and total != n:
        shares = {k: out[k] * n / total for k in parts}
        fitted = {k: int(x) for k, x in shares.items()}
        for k in sorted(parts, key=lambda k: fitted[k] - shares[k])[: n - sum(fitted.values())]:
            fitted[k] += 1
        out.update(fitted)
    return out


def _reindexed(shrunk: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """Tapped vision layers (an adapter's vision_feature_layer) that a shrunk tower no longer has, counted
    from the tower's end instead, as far from it as before or at most the whole tower (Molmo2 taps layers
    24 and 18 of 25): the config stays one its class accepts; which layers are tapped sizes nothing."""
    before, after = base.get("vision_config"), shrunk.get("vision_config")
    if not isinstance(before, dict) or not isinstance(after, dict):
        return shrunk
    n, m = before.get("num_hidden_layers"), after.get("num_hidden_layers")
    if not isinstance(n, int) or not isinstance(m, int) or n == m:
        return shrunk
    for part in shrunk.values():
        taps = part.get("vision_feature_layer") if isinstance(part, dict) else None
        if isinstance(taps, list) and all(isinstance(x, int) for x in taps) and any(x >= m for x in taps):
            part["vision_feature_layer"] = [max(x - n, -m) if x >= m else x for x in taps]
    return shrunk


def _text_part(config: dict[str, Any]) -> dict[str, Any]:
    for key in ("text_config", "language_config", "llm_config"):
        if isinstance(config.get(key), dict):
            return config[key]
    return config


def _variants(model_type: str, base: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Variations of the defaults where they apply: another size, the head tied the other way, a
    sliding/full layer pattern."""
    out = [("default", _reindexed(_shrunk(base, MAX_SWEEP_LAYERS), base))]
    bigger = copy.deepcopy(base)
    text = _text_part(bigger)
    for key in ("intermediate_size", "moe_intermediate_size", "n_inner", "ffn_hidden_size", "d_ff"):
        if isinstance(text.get(key), int) and not isinstance(text.get(key), bool) and text[key] > 0:
            text[key] *= 2
    heads, kv = text.get("num_attention_heads"), text.get("num_key_value_heads")
    if isinstance(heads, int) and isinstance(kv, int) and kv > 1 and heads % kv == 0 and kv < heads:
        text["num_key_value_heads"] = 1
    elif isinstance(heads, int) and isinstance(kv, int) and kv == heads and heads % 2 == 0:
        text["num_key_value_heads"] = heads // 2
    for key in ("num_experts_per_tok", "moe_topk", "moe_k"):
        if key in text and text[key] is None:
            text[key] = 2
    out.append(("size", _reindexed(_shrunk(bigger, MAX_SWEEP_LAYERS - 3), bigger)))
    for _, shrunk in out:
        _fit_loop(shrunk)
    tied = copy.deepcopy(out[0][1])
    flag = tied.get("tie_word_embeddings", _text_part(tied).get("tie_word_embeddings"))
    if isinstance(flag, bool):
        tied["tie_word_embeddings"] = not flag
        if _text_part(tied) is not tied and "tie_word_embeddings" in _text_part(tied):
            _text_part(tied)["tie_word_embeddings"] = not flag
        out.append(("tied" if not flag else "untied", tied))
    switched = copy.deepcopy(out[0][1])
    text = _text_part(switched)
    flipped = [k for k in _SWITCHES if isinstance(text.get(k), bool)]
    for key in flipped:
        text[key] = not text[key]
    if isinstance(text.get("word_embed_proj_dim"), int) and isinstance(text.get("hidden_size"), int):
        text["word_embed_proj_dim"] = text["hidden_size"] // 2  # OPT-350M: a narrower embedding
        flipped.append("word_embed_proj_dim")
    if flipped:
        out.append(("switched", switched))
    biased = copy.deepcopy(out[0][1])
    text = _text_part(biased)
    bias_keys = [k for k, v in text.items() if isinstance(v, bool) and "bias" in k and k not in _SWITCHES]
    for key in bias_keys:
        text[key] = not text[key]
    if bias_keys:
        out.append(("biased", biased))
    conv = copy.deepcopy(out[0][1])
    text = _text_part(conv)
    if "conv_L_cache" in text and isinstance(text.get("layer_types"), list):  # LFM2's short convolutions
        text["layer_types"] = [
            "conv" if i % 2 == 0 else "full_attention" for i in range(len(text["layer_types"]))
        ]
        if "full_attn_idxs" in text:
            text["full_attn_idxs"] = [i for i, t in enumerate(text["layer_types"]) if t == "full_attention"]
        out.append(("conv", conv))
    varied = copy.deepcopy(out[0][1])
    text = _text_part(varied)
    heads, kv = text.get("num_attention_heads_per_layer"), text.get("num_key_value_heads")
    if isinstance(heads, list) and heads and isinstance(kv, int) and all(isinstance(x, int) for x in heads):
        # per-layer head counts (Laguna's): every other layer with half the query heads
        text["num_attention_heads_per_layer"] = [
            x // 2 if i % 2 and (x // 2) % kv == 0 else x for i, x in enumerate(heads)
        ]
        out.append(("per-layer heads", varied))
    taps = copy.deepcopy(out[0][1])
    text = _text_part(taps)
    if isinstance(text.get("cca_time0"), int) and isinstance(text.get("cca_time1"), int):
        # ZAYA's two chained q/k convolutions, of other lengths than its defaults (their cached window)
        text.update(cca_time0=text["cca_time0"] + 1, cca_time1=text["cca_time1"] + 2)
        out.append(("cca taps", taps))
    cross = copy.deepcopy(out[0][1])
    text = _text_part(cross)
    width = text.get("hidden_size", text.get("d_model"))
    # a decoder cross-attending to an encoder of another width (TrOCR under a ViT of its own width)
    if (
        "cross_attention_hidden_size" in text
        and text["cross_attention_hidden_size"] is None
        and isinstance(width, int)
        and not isinstance(width, bool)
    ):
        text["cross_attention_hidden_size"] = width * 3 // 4
        out.append(("cross width", cross))
    stacks = copy.deepcopy(out[0][1])
    text = stacks.get("text_config") if isinstance(stacks.get("text_config"), dict) else {}
    depth, heads = text.get("decoder_layers"), text.get("decoder_attention_heads")
    # a nested encoder-decoder text config whose decoder is deeper, with fewer heads, than its encoder
    # (PP-FormulaNet's, Florence-2's): which keys size the language model, the encoder's or the decoder's
    if (
        all(isinstance(text.get(k), int) for k in ("encoder_layers", "encoder_attention_heads"))
        and isinstance(depth, int)
        and isinstance(heads, int)
        and heads % 2 == 0
    ):
        text.update(decoder_layers=depth + 1, decoder_attention_heads=heads // 2)
        out.append(("decoder stack", stacks))
    fused = copy.deepcopy(out[0][1])
    if _text_part(fused).get("weight_mode") == "single":  # xLSTM's projections stored fused
        _text_part(fused)["weight_mode"] = "fused"
        out.append(("fused weights", fused))
    ordered = copy.deepcopy(out[0][1])
    if ordered.get("use_ordered_embeddings") is False:  # Gemma 4's assistants: a centroid head beside lm_head
        ordered["use_ordered_embeddings"] = True
        out.append(("ordered embeddings", ordered))
    out += _gemma_variants(out[0][1])
    out += _gemma_towers(model_type, out[0][1])
    out += _timm_towers(out[0][1])
    out += _inkling_variants(model_type, out[0][1])
    out += _action_expert_variants(out[0][1])
    out += _encoder_decoder_variants(out[0][1])
    out += _davit_variants(out[0][1])
    out += _udop_variants(out[0][1])
    sliding = copy.deepcopy(out[0][1])
    text = _text_part(sliding)
    types = text.get("layer_types")
    if "sliding_window" in text and isinstance(types, list) and set(types) == {"full_attention"}:
        text["sliding_window"] = 64
        text["layer_types"] = [
            "sliding_attention" if i % 2 == 0 else "full_attention" for i in range(len(types))
        ]
        out.append(("sliding", sliding))
    return out


def _encoder_decoder_variants(default: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """A VisionEncoderDecoder's other compositions: an encoder narrower than its decoder (the composite's
    enc_to_dec_proj), TrOCR's decoder reading the encoder's width itself (cross_attention_hidden_size), and
    an encoder hubdiff does not write (DeiT's: marked, never guessed)."""
    if default.get("model_type") != "vision-encoder-decoder" or not isinstance(default.get("encoder"), dict):
        return []
    narrow = copy.deepcopy(default)
    narrow["encoder"].update(hidden_size=384, intermediate_size=1536, num_attention_heads=6, image_size=96)
    trocr = copy.deepcopy(narrow)
    trocr["decoder"] = {
        "model_type": "trocr",
        "vocab_size": 1000,
        "d_model": 256,
        "decoder_layers": 3,
        "decoder_attention_heads": 4,
        "decoder_ffn_dim": 1024,
        "max_position_embeddings": 128,
        "cross_attention_hidden_size": 384,
        "is_decoder": True,
        "add_cross_attention": True,
    }
    deit = copy.deepcopy(default)
    deit["encoder"] = {**deit["encoder"], "model_type": "deit"}
    return [("encoder width", narrow), ("trocr decoder", trocr), ("deit encoder", deit)]


def _davit_variants(default: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Florence-2's DaViT of other per-stage lists than its defaults: widths, depths, kernels and where each
    patch convolution's LayerNorm sits, an MLP ratio and unbiased qkv."""
    vision = default.get("vision_config")
    if not isinstance(vision, dict) or vision.get("model_type") != "florence_vision":
        return []
    other = copy.deepcopy(default)
    other["vision_config"].update(
        embed_dim=[64, 96, 192, 384],
        depths=[1, 2, 3, 1],
        patch_size=[5, 3, 2, 3],
        patch_prenorm=[True, False, True, False],
        mlp_ratio=2.5,
        qkv_bias=False,
        max_position_embeddings=30,
        max_temporal_embeddings=40,
    )
    return [("davit stages", other)]


def _udop_variants(default: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """UDOP's other stacks: a deeper decoder than encoder, heads x d_kv narrower than d_model, a gated MLP,
    and relative biases of their own bucket counts, one with the prefix buckets."""
    if default.get("model_type") != "udop":
        return []
    other = copy.deepcopy(default)
    other.update(
        num_decoder_layers=int(other.get("num_layers") or 2) + 1,
        d_kv=48,
        feed_forward_proj="gated-gelu",
        is_gated_act=True,
        dense_act_fn="gelu",
        relative_attention_num_buckets=24,
        relative_bias_args=[
            {"type": "1d", "relative_attention_num_buckets": 40},
            {"type": "horizontal", "prefix_bucket": True},
        ],
        max_2d_position_embeddings=300,
        patch_size=8,
    )
    return [("udop stacks", other)]


def _action_expert_variants(default: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """An action expert (dit_config) beside a nested vision-language model (vlm_config) that the other
    variations, which vary a text part at the top, leave as it is: a narrower expert with biased
    attention, other state and action widths, and the language model's embedding untied (the nested
    model is built headless: no head appears)."""
    dit, vlm = default.get("dit_config"), default.get("vlm_config")
    if not isinstance(dit, dict) or not isinstance(vlm, dict):
        return []
    varied = copy.deepcopy(default)
    varied["dit_config"].update(hidden_size=512, intermediate_size=1536, attention_bias=True)
    for key, value in (("max_action_dim", 7), ("max_state_dim", 14)):
        if key in varied:
            varied[key] = value
    varied["vlm_config"]["tie_word_embeddings"] = False
    if isinstance(varied["vlm_config"].get("text_config"), dict):
        varied["vlm_config"]["text_config"]["tie_word_embeddings"] = False
    return [("expert", varied)]


def _fit_loop(config: dict[str, Any]) -> None:
    """A looped stack cut to fewer layers than its loop spans (Inkling 2 Loop's layers 6 to 17 of 24, cut to
    8) builds loop layers the forward cannot run (its later passes index cache layers for all twelve): the
    loop is fitted inside the cut stack, its blocks of residuals two layers long (the class wants the
    loop's ends on block boundaries; a block's length sizes nothing), so that layers run before, in and
    after the loop."""
    text = _text_part(config)
    n, end = text.get("num_hidden_layers"), text.get("loop_layer_index_end")
    if not (isinstance(n, int) and isinstance(end, int) and end > n and n >= 4):
        return
    text["n_layers_per_attn_res_block"] = 2
    text["loop_layer_index_start"] = 2
    text["loop_layer_index_end"] = (n - 1) // 2 * 2


def _inkling_variants(model_type: str, default: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Inkling's defaults make every layer MoE; its mlp_layer_types (a release's dense_mlp_idx) can make
    the first ones dense MLPs with their own width and learned scale: "dense layers"."""
    if model_type not in ("inkling_text", "inkling_mm_model"):
        return []
    dense = copy.deepcopy(default)
    text = _text_part(dense)
    types = text.get("mlp_layer_types")
    if not isinstance(types, list) or len(types) < 2:
        return []
    text["mlp_layer_types"] = ["dense", "dense", *types[2:]]
    return [("dense layers", dense)]


def _gemma_variants(default: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Gemma 4's switches that its defaults leave off, each as real releases set them (gemma-4-E2B: the
    last layers reuse the KV of earlier ones, their MLPs twice as wide; gemma-4-26B-A4B: the global
    layers' values are their keys, an MoE block beside every MLP): "kv shared" and "moe block"; Gemma 3n's
    per-layer MLP widths and AltUp / LAuReL sizes: "per-layer widths"."""
    out = []
    shared = copy.deepcopy(default)
    text = _text_part(shared)
    types, n = text.get("layer_types"), text.get("num_hidden_layers")
    if text.get("num_kv_shared_layers") == 0 and isinstance(types, list) and isinstance(n, int):
        kept = n // 2
        while kept > 0 and set(types[: n - kept]) != set(types):
            kept -= 1
        text["num_kv_shared_layers"] = kept
        for key in ("use_double_wide_mlp", "attention_k_eq_v"):
            if text.get(key) is False:
                text[key] = True
        out.append(("kv shared", shared))
    widths = copy.deepcopy(default)
    text = _text_part(widths)
    sizes = text.get("intermediate_size")
    if "altup_num_inputs" in text and isinstance(sizes, list) and all(type(x) is int for x in sizes):
        # Gemma 3n: an MLP width a layer (every other one half as wide), three AltUp streams, another rank
        text["intermediate_size"] = [x // 2 if i % 2 else x for i, x in enumerate(sizes)]
        text.update(altup_num_inputs=3, laurel_rank=32)
        out.append(("per-layer widths", widths))
    moe = copy.deepcopy(default)
    text = _text_part(moe)
    inter = text.get("intermediate_size")
    if text.get("enable_moe_block") is False and isinstance(inter, int):
        text.update(enable_moe_block=True, num_experts=8, top_k_experts=2, moe_intermediate_size=inter // 4)
        out.append(("moe block", moe))
    return out


def _timm_towers(default: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """A timm FastViT tower (FastVLM's) of another architecture than the defaults': "timm tower"
    (FastViT-MCi0's four stages, squeezed-and-excited downsampling, batch-normed attention blocks, in its
    training-time branches, under an unbiased projector from its 1024 channels); "model args", a timm
    keyword argument that changes the tower (5x5 RepMixer kernels), which hubdiff must mark."""
    vision = default.get("vision_config")
    if isinstance(vision, dict) and "vision_use_cls_token" in default:  # Perception LM's encoder
        tower = copy.deepcopy(default)
        tower["vision_config"] = {
            **vision,
            "architecture": "vit_pe_spatial_base_patch16_512",
            "model_args": {
                "embed_dim": 768,
                "depth": 3,
                "img_size": 224,
                "num_reg_tokens": 2,
                "global_pool": "map",
                "init_values": 0.1,
                "use_fc_norm": True,
                "drop_path_rate": 0.1,
            },
        }
        tower["projector_pooling_ratio"] = 2
        args = copy.deepcopy(default)
        args["vision_config"] = {
            **vision,
            "architecture": "vit_pe_core_large_patch14_336",
            "model_args": {**PERCEPTION_LM_1B_ENCODER, "qkv_fused": False},
        }
        return [("timm tower", tower), ("model args", args)]
    if not isinstance(vision, dict) or not str(vision.get("architecture") or "").startswith("fastvit_"):
        return []
    tower = copy.deepcopy(default)
    tower["vision_config"].update(
        architecture="fastvit_mci0",
        hidden_size=1024,
        model_args={"inference_mode": False, "drop_path_rate": 0.1},
    )
    if isinstance(tower.get("multimodal_projector_bias"), bool):
        tower["multimodal_projector_bias"] = not tower["multimodal_projector_bias"]
    args = copy.deepcopy(default)
    args["vision_config"]["model_args"] = {"inference_mode": True, "repmixer_kernel_size": 5}
    return [("timm tower", tower), ("model args", args)]


def _gemma_towers(model_type: str, default: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Gemma 4's vision and audio towers, which its defaults leave out (None): each filled with its
    configuration class's defaults, cut to two layers where it has layers, and the switches that add
    tensors (clipped linears, standardization) turned on: "vision tower" and "audio tower". Gemma 3n's,
    which its defaults hold, at other sizes: "towers"."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    if not isinstance(_text_part(default).get("num_kv_shared_layers"), int):
        return []
    subs = getattr(CONFIG_MAPPING[model_type], "sub_configs", {}) or {}
    out = []
    audio = default.get("audio_config")
    if isinstance(audio, dict) and "sscp_conv_channel_size" in audio:
        # Gemma 3n's USM conformer and embedders at other sizes: each subsampling convolution's own
        # kernel and stride, another mel width and depth, fewer heads, another embedder vocabulary
        towers = copy.deepcopy(default)
        towers["audio_config"].update(
            hidden_size=512,
            conf_num_attention_heads=4,
            conf_num_hidden_layers=2,
            conf_conv_kernel_size=7,
            input_feat_size=80,
            sscp_conv_channel_size=[64, 16],
            sscp_conv_kernel_size=[[3, 5], [3, 3]],
            sscp_conv_stride_size=[[2, 2], [2, 3]],
            vocab_size=64,
        )
        if isinstance(towers.get("vision_config"), dict):
            towers["vision_config"]["vocab_size"] = 96
        out = [("towers", towers)]
        vision = default.get("vision_config")
        if isinstance(vision, dict) and "architecture" in vision:
            # timm's keyword arguments: one that drops the stem's bias (hubdiff must mark it)
            # and one that sizes nothing
            args = copy.deepcopy(default)
            args["vision_config"]["model_args"] = {"stem_bias": False, "drop_path_rate": 0.1}
            out.append(("model args", args))
        return out
    for key, name in (("vision_config", "vision tower"), ("audio_config", "audio tower")):
        if key not in default or default[key] is not None or key not in subs:
            continue
        fields = set(subs[key]().to_dict())
        filled = {k: v for k, v in (("num_hidden_layers", 2), ("use_clipped_linears", True)) if k in fields}
        if "standardize" in fields:
            filled["standardize"] = True
        out.append((name, {**copy.deepcopy(default), key: filled}))
    return out


def sweep_cases(model_type: str) -> tuple[list[Case], str]:
    """The rows of one model_type, or none and why (no defaults, no class, a config that fails)."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    try:
        base = _validated_defaults(CONFIG_MAPPING[model_type])
    except Exception as exc:
        return [], f"no default configuration: {_one_line(exc, 160)}"
    base = _filled_layout(base)
    cases = []
    failures = []
    for variation, raw in _variants(model_type, base):
        raw = _per_stack_rederived({**raw, "model_type": model_type})
        cfg_obj, reason = build_config(raw)
        if cfg_obj is None:  # refused once shrunk: its layer-indexed keys cut to the layers kept too
            fitted = _fitted_to_layers(raw)
            if fitted != raw:
                again, refused = build_config(fitted)
                if again is not None:
                    raw, cfg_obj = fitted, again
                else:
                    reason = refused
        if cfg_obj is None:
            failures.append(f"{variation}: {reason}")
            continue
        with _quiet():
            config = cfg_obj.to_diff_dict()
        config["model_type"] = model_type
        cases.append(Case(model_type, variation, _clean(config)))
    for name, config in _corpus_configs().get(model_type, []):
        cases.append(Case(model_type, name, _clean(_shrunk(config, MAX_SWEEP_LAYERS))))
    return cases, "; ".join(failures)


_MUST_BE = re.compile(r"\b(\w+) must be (-?\d+|True|False), got ")


def _validated_defaults(config_class: Any) -> dict[str, Any]:
    """A configuration class's defaults, or, where its own validation refuses them (Gemma 4's assistant
    around Gemma 4's text defaults: "hidden_size_per_layer_input must be 0, got 256"), its defaults with
    each value the validation names set in the sub-config that holds the key, one refusal at a time."""
    import ast

    subs: dict[str, Any] = {}
    for _ in range(8):
        try:
            with _quiet():
                return config_class(**subs).to_diff_dict()
        except Exception as exc:
            match = _MUST_BE.search(str(exc))
            if match is None:
                raise
            key, value = match.group(1), ast.literal_eval(match.group(2))
            defaults = _sub_config_defaults(config_class)
            holders = [k for k, v in defaults.items() if key in v]
            if not holders or any(subs.get(k, {}).get(key) == value for k in holders):
                raise
            for k in holders:
                subs[k] = {**(subs.get(k) or defaults[k]), key: value}
    with _quiet():
        return config_class(**subs).to_diff_dict()


def _sub_config_defaults(config_class: Any) -> dict[str, dict[str, Any]]:
    """Each sub-config's own defaults (with its model_type), from the class's sub-config specs."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    out: dict[str, dict[str, Any]] = {}
    for key, spec in (getattr(config_class, "sub_configs_defaults", None) or {}).items():
        model_type = getattr(spec, "model_type", None)
        sub_class = spec.config_class
        if isinstance(model_type, str) and model_type in CONFIG_MAPPING:  # AutoConfig's default type
            sub_class = CONFIG_MAPPING[model_type]
        with contextlib.suppress(Exception), _quiet():
            sub = sub_class(**getattr(spec, "init_kwargs", {}))
            out[key] = {**sub.to_diff_dict(), "model_type": sub.model_type}
    return out


def _per_stack_rederived(config: dict[str, Any]) -> dict[str, Any]:
    """A per-stack layer count that a class derives from num_hidden_layers on first construction and then
    inflates num_hidden_layers from (HRM's num_layers_per_stack: num_hidden_layers becomes
    num_layers_per_stack x H_cycles x (L_cycles + 1), one cache slot per run of a block), left out once the
    shrunk num_hidden_layers is below it: the class derives both again from the shrunk count, as from a
    config that names none, and builds that many blocks a stack."""
    stack, n = config.get("num_layers_per_stack"), config.get("num_hidden_layers")
    if type(stack) is int and type(n) is int and stack > n:
        return {k: v for k, v in config.items() if k != "num_layers_per_stack"}
    return config


def _filled_layout(base: dict[str, Any]) -> dict[str, Any]:
    """A layer pattern the configuration class leaves None although its model indexes it: LFM2-MoE's
    layer_types (LFM2's own class derives it from full_attn_idxs). Short convolutions with attention in
    every fourth layer from the third, as LFM2's releases interleave them; the "conv" variation varies it."""
    text = _text_part(base)
    if "conv_L_cache" not in text or "layer_types" not in text or text["layer_types"] is not None:
        return base
    filled = copy.deepcopy(base)
    n = _text_part(filled).get("num_hidden_layers")
    if isinstance(n, int) and n > 0:
        _text_part(filled)["layer_types"] = ["full_attention" if i % 4 == 2 else "conv" for i in range(n)]
    return filled


@functools.cache
def _corpus_configs() -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """The real configs under tests/data (corpus included) by model_type: rows beside the defaults."""
    from pathlib import Path

    data = Path(__file__).parent / "data"
    out: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for path in sorted(data.glob("*/config.json")) + sorted((data / "corpus").glob("*/config.json")):
        config = json.loads(path.read_text())
        if isinstance(config.get("model_type"), str):
            out.setdefault(config["model_type"], []).append((path.parent.name, config))
    return out


def sweep_model_classes(config_obj: Any) -> list[type]:
    """The classes a checkpoint of this config may be saved from, the likeliest first: a language-model
    head, or for a config with sub-configs (a vision tower) the image-text class."""
    from transformers.models.auto import modeling_auto as auto

    order = list(_MODEL_MAPPINGS)
    if getattr(config_obj, "sub_configs", None):
        order.insert(0, order.pop(1))
    out: list[type] = []
    for mapping in order:
        with contextlib.suppress(KeyError, ValueError, AttributeError, ImportError):
            cls = getattr(auto, mapping)[type(config_obj)]
            cls = cls[0] if isinstance(cls, (tuple, list)) else cls
            if cls not in out:
                out.append(cls)
    return out


@dataclass(frozen=True)
class Truth:
    """What the model built from a config holds: the yardstick of hubdiff's figures."""

    tensors: list[Triple]
    total: int
    active: int  # per text token: the language model and its head, top-k of each layer's routed experts
    layers: int  # decoder layers of the language model
    moe_layers: frozenset[int]
    recurrent_layers: frozenset[int]
    sliding_layers: frozenset[int] | None  # from transformers' own layer_types, when it has one


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _decoder_layers(decoder: Any, towers: frozenset[int] = frozenset()) -> list[Any]:
    """The decoder's layer list: the longest ModuleList not inside another one, nor inside a vision tower
    the decoder holds (``towers``: GIT's CLIP stack is deeper than its text stack by default)."""
    import torch.nn as nn

    lists: list[Any] = []
    inner: set[int] = set()
    for _, module in decoder.named_modules():
        if id(module) in inner:
            continue
        if id(module) in towers:
            inner.update(id(m) for m in module.modules() if m is not module)
            continue
        if isinstance(module, nn.ModuleList):
            lists.append(module)
            inner.update(id(m) for m in module.modules() if m is not module)
    return max(lists, key=len) if lists else []


def _unrun_by_text(model: Any, decoder: Any, **inputs: Any) -> set[int]:
    """The tensors of ``_unrun_parts``."""
    return {
        id(t)
        for part in _unrun_parts(model, decoder, **inputs)
        for t in part.state_dict(keep_vars=True).values()
    }


def _unrun_parts(model: Any, decoder: Any, **inputs: Any) -> list[Any]:
    """The modules of the decoder's parts that a forward of text alone never calls, when the decoder
    holds a vision tower: what runs once per image beside it (GIT's visual_projection into the text
    width, Phi-4-multimodal's image and audio embedders inside its embedding module) is no more what a
    token uses than the tower is. Found by running four tokens through the model on the meta device: a
    part never called whose parent was, and nothing under it called; a model that will not run without
    an image (IDEFICS) gives none. ``inputs`` beside the tokens: a nested model's empty cache, without
    which its mask looks for packed sequences, which meta tensors cannot tell."""
    import torch

    called: set[int] = set()
    hooks = [m.register_forward_hook(lambda m, *_: called.add(id(m))) for m in decoder.modules()]
    try:
        with _quiet(), torch.no_grad():
            model(input_ids=torch.zeros(1, 4, dtype=torch.long, device="meta"), **inputs)
    except Exception:
        return []
    finally:
        for hook in hooks:
            hook.remove()
    out: list[Any] = []
    for parent in decoder.modules():
        if id(parent) not in called:
            continue
        for child in parent.children():
            if id(child) in called or any(id(m) in called for m in child.modules()):
                continue
            out.append(child)
    return out


def _get_decoder(model: Any) -> Any:
    """transformers' ``get_decoder``, unless what it finds is the output head: it returns any attribute
    named ``decoder``, and ModernBERT-decoder's class names its vocabulary projection so; its
    ``model`` is the decoder then (None where the class has none)."""
    decoder = None
    with contextlib.suppress(Exception):
        decoder = model.get_decoder()
    head = None
    with contextlib.suppress(Exception):
        head = model.get_output_embeddings()
    if decoder is not None and decoder is head:
        return getattr(model, "model", None)
    return decoder


def _top_k(block: Any, text_config: Any) -> int | None:
    for holder in (block, getattr(block, "gate", None), getattr(block, "router", None)):
        for name in ("top_k", "num_experts_per_tok", "topk"):
            value = getattr(holder, name, None) if holder is not None else None
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    for name in ("num_experts_per_tok", "moe_topk", "num_experts_per_token", "moe_k", "top_k_experts"):
        value = getattr(text_config, name, None)
        if isinstance(value, list):
            value = value[0] if value else None
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


# where a config with no text part of its own nests a whole vision-language model beside its other stacks
# (PI0's and PI0.5's PaliGemma beside their action expert)
_NESTED_MODEL_KEYS = ("vlm_config",)


def _nested_models(config_obj: Any) -> list[Any]:
    """The vision-language models nested in a config that is no text config itself: their towers run once
    per image as a top-level tower does, and every other stack beside them (an action expert sharing
    their cache) is a decoder stack, not another modality's encoder."""
    with contextlib.suppress(Exception):
        if config_obj.get_text_config() is not config_obj:
            return []
    parts = [getattr(config_obj, k, None) for k in _NESTED_MODEL_KEYS]
    return [p for p in parts if p is not None and getattr(p, "vision_config", None) is not None]


def _truth(model: Any, config_obj: Any, tensors: list[Triple]) -> Truth:
    """The figures from the model's modules (not from tensor names): which parameters are the language
    model's (``get_decoder`` and the output embeddings), which are routed experts and how many of them
    a token uses, which layers are recurrent or MoE."""
    import torch.nn as nn

    state = model.state_dict(keep_vars=True)
    total = sum(_numel(tuple(t.shape)) for t in {id(t): t for t in state.values()}.values())
    decoder = _get_decoder(model)
    if not isinstance(decoder, nn.Module) or decoder is model:
        decoder = (
            getattr(model, "model", None) if isinstance(getattr(model, "model", None), nn.Module) else model
        )
    text_ids = {id(t) for t in decoder.state_dict(keep_vars=True).values()}
    head = None
    with contextlib.suppress(Exception):
        head = model.get_output_embeddings()
    if isinstance(head, nn.Module):
        text_ids |= {id(t) for t in head.state_dict(keep_vars=True).values()}
    # a text stack of the encoder that a decoder shares (DiffusionGemma's: the prompt's tokens run through
    # it, the canvas's through the decoder): its own tensors (untied buffers) are the language model's too
    encoder = None
    with contextlib.suppress(Exception):
        encoder = model.get_encoder()
    language = getattr(encoder, "language_model", None) if encoder is not model else None
    stacks = [decoder]
    if isinstance(language, nn.Module) and language is not decoder:
        text_ids |= {id(t) for t in language.state_dict(keep_vars=True).values()}
        stacks.append(language)
    # the head's own modules beside the vocabulary projection (ModernBERT's and BERT's dense + norm
    # transform before it) run for every token as the projection does
    for name in ("lm_head", "cls"):
        part = getattr(model, name, None)
        if isinstance(part, nn.Module):
            text_ids |= {id(t) for t in part.state_dict(keep_vars=True).values()}
    # a vision tower inside the decoder (IDEFICS's model holds it beside its layers) runs once per image,
    # not per token: the submodules built from the vision config are not what a token uses
    towers: set[int] = set()
    # nor does an image tokenizer (Chameleon's VQ-VAE, built from vq_config inside its model)
    # nor does a protein encoder (Evolla's, built from protein_encoder_config): once per protein
    tower_configs = [
        getattr(config_obj, k, None) for k in ("vision_config", "vq_config", "protein_encoder_config")
    ]
    tower_configs = [c for c in tower_configs if c is not None]
    nested = _nested_models(config_obj)
    for part in nested:
        tower_configs += [c for c in (getattr(part, k, None) for k in ("vision_config", "vq_config")) if c]
    for vision_config in tower_configs:
        for module in decoder.modules():
            if module is not decoder and getattr(module, "config", None) is vision_config:
                towers.add(id(module))
                text_ids -= {id(t) for t in module.state_dict(keep_vars=True).values()}
    unrun: list[Any] = _unrun_parts(model, decoder) if towers else []
    if unrun:
        # a decoder layer's parts are a text token's, whatever a forward of text alone skips: a layer that
        # reads the other modality's features (Evolla's aligner, as Mllama's cross-attention layers where
        # the decoder holds no tower) runs them for every token once that modality is given. What runs
        # beside the layers (the encoder's resampler, GIT's visual_projection) is the tower's side
        kept = _decoder_layers(decoder, frozenset(towers | {id(m) for m in unrun}))
        in_layers = {id(t) for layer in kept for t in layer.state_dict(keep_vars=True).values()}
        text_ids -= {id(t) for m in unrun for t in m.state_dict(keep_vars=True).values()} - in_layers
    # a nested vision-language model runs text alone where the whole (PI0: it wants a robot state) will not
    for part in nested:
        for module in decoder.modules():
            if getattr(module, "config", None) is part:
                from transformers import DynamicCache

                text_ids -= _unrun_by_text(module, module, cache=DynamicCache(config=part.get_text_config()))
    # the layers of another modality's encoder held there too (Phi-4-multimodal's conformer, built from its
    # audio_config) are not the decoder's
    not_decoder = set(towers)
    text_config_obj = config_obj.get_text_config()
    for key in getattr(config_obj, "sub_configs", None) or {} if not nested else {}:
        sub = getattr(config_obj, key, None)
        if sub is None or any(sub is c for c in tower_configs) or sub is text_config_obj:
            continue
        not_decoder |= {
            id(m) for m in decoder.modules() if m is not decoder and getattr(m, "config", None) is sub
        }
    seen: set[int] = set()
    text = 0
    for t in state.values():
        if id(t) in text_ids and id(t) not in seen:
            seen.add(id(t))
            text += _numel(tuple(t.shape))
    text_config = config_obj.get_text_config()
    inactive = 0.0
    counted: set[int] = set()
    for _, block in (item for stack in stacks for item in stack.named_modules()):
        for name, child in block.named_children():
            if id(child) in counted:
                continue
            is_list = isinstance(child, nn.ModuleList) and name == "experts"
            if not (is_list or "Experts" in type(child).__name__):
                continue
            counted.update(id(m) for m in child.modules())
            if any(id(p) in counted for p in child.parameters()):  # a second stack's tied experts
                continue
            counted.update(id(p) for p in child.parameters())
            params = sum(p.numel() for p in child.parameters())
            n = len(child) if is_list else getattr(child, "num_experts", None)
            if not isinstance(n, int):
                n = max((p.shape[0] for p in child.parameters() if p.dim() == 3), default=0)
            k = _top_k(block, text_config)
            if n and k:
                inactive += params * (1 - min(k, n) / n)
    # nor are the stacks a forward of text alone never runs (Evolla's resampler, beside its protein encoder)
    layers = _decoder_layers(decoder, frozenset(not_decoder | {id(m) for m in unrun}))
    prefix = re.sub(r"(For[A-Z]\w*|LMHeadModel|Model)$", "", type(model).__name__)
    moe: set[int] = set()
    recurrent: set[int] = set()
    for i, layer in enumerate(layers):
        # the layer's parts, named without the model's own prefix ("RecurrentGemma", "FalconMamba")
        classes = [type(m).__name__.removeprefix(prefix) for m in layer.modules() if m is not layer]
        names = {name.rsplit(".", 1)[-1] for name, _ in layer.named_modules()}
        if "experts" in names or any("Experts" in c for c in classes):
            moe.add(i)
        # RWKV's parts are named after the model itself ("RwkvSelfAttention"): its WKV decay tells; so are
        # xLSTM's ("xLSTMLayer"): the mLSTM it holds (mlstm_layer) tells
        if (
            any(_RECURRENT_CLASS.search(c) for c in classes)
            or "time_decay" in {n.rsplit(".", 1)[-1] for n, _ in layer.named_parameters()}
            or any("lstm" in n.lower() for n in names)
        ):
            recurrent.add(i)
    types = getattr(text_config, "layer_types", None)
    sliding = None
    if isinstance(types, (list, tuple)) and len(types) >= len(layers):
        sliding = frozenset(
            i for i, t in enumerate(types[: len(layers)]) if "sliding" in str(t) or "chunked" in str(t)
        )
    return Truth(
        tensors, total, round(text - inactive), len(layers), frozenset(moe), frozenset(recurrent), sliding
    )


@dataclass(frozen=True)
class Row:
    """One line of the sweep's table."""

    model_type: str
    variation: str
    model_class: str
    verdict: str  # "exact", "unverified", "wrong" (set by ``judge_rows``), or "not built"
    mismatches: tuple[str, ...]  # where hubdiff's figures differ from the model's
    reasons: tuple[str, ...]  # why hubdiff says the figures are unverified (the sweep's own rule aside)
    total: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "model_type": self.model_type,
            "variation": self.variation,
            "model_class": self.model_class,
            "verdict": self.verdict,
            "total": self.total,
            "mismatches": list(self.mismatches),
            "reasons": list(self.reasons),
        }


def _compare_figures(metrics: Any, truth: Truth, label: str) -> list[str]:
    out = []
    main = truth.total
    got = metrics.params.total - metrics.params.by_component.get("mtp", 0)
    if got != main:
        out.append(f"{label} total {got:,} vs {main:,}")
    if metrics.active_params != truth.active:
        out.append(f"{label} active {metrics.active_params:,} vs {truth.active:,}")
    return out


def _census(metrics: Any, truth: Truth) -> list[str]:
    from hubdiff._metrics.layers import LINEAR_KINDS

    main = [x for x in metrics.layers if not x.mtp]
    out = []
    if len(main) != truth.layers:
        out.append(f"layers {len(main)} vs {truth.layers}")
        return out
    moe = frozenset(x.index for x in main if x.mlp == "moe")
    if moe != truth.moe_layers:
        out.append(f"MoE layers {sorted(moe)} vs {sorted(truth.moe_layers)}")
    recurrent = frozenset(
        x.index for x in main if x.attention in LINEAR_KINDS or x.parallel_ssm or x.attention_convs
    )
    if recurrent != truth.recurrent_layers:
        out.append(f"recurrent layers {sorted(recurrent)} vs {sorted(truth.recurrent_layers)}")
    if truth.sliding_layers is not None:
        sliding = frozenset(x.index for x in main if x.attention == "swa")
        if sliding != truth.sliding_layers:
            out.append(f"sliding layers {sorted(sliding)} vs {sorted(truth.sliding_layers)}")
    return out


# ZAYA splits its values in two projections, one of the current token and one of the previous, whose
# rows together are what a token stores
_KV_PROJECTION = re.compile(r"\.(\d+)\.(?:.+\.)?(k_proj|v_proj|v_proj_current|v_proj_delayed)\.weight$")


def _kv(metrics: Any, truth: Truth) -> list[str]:
    """KV cache per token against the model's own key and value projections: in every softmax-attention
    layer, the rows of k_proj and v_proj are what one token stores. Checked where every such layer has
    them apart (a fused qkv or a latent KV is not read here). A layer with a k_proj and no v_proj caches
    its keys twice over, once as the values (Gemma 4's attention_k_eq_v: the values are the key
    projection's output, normed apart and cached as their own tensor)."""
    from hubdiff._metrics.components import classify
    from hubdiff._metrics.kv import KV_DTYPE_BYTES

    by_layer = {x.index: x for x in metrics.layers}
    rows: dict[int, int] = {}
    values: set[int] = set()
    seen: set[str] = set()
    for name, _, shape in truth.tensors:
        match = _KV_PROJECTION.search(name)
        if ".cross_attn." in name:  # keys and values of the image's features, cached once per image
            continue
        if ".encoder_attn." in name:  # the encoder's states' keys and values: per encoder token, once
            continue
        if match and classify(name, shape, by_layer, metrics.cfg.num_layers)[0] == "attention":
            # a second stack's copy of a layer's projection (DiffusionGemma's decoder, untied) reads the
            # first stack's cache: one layer caches once
            if name[match.start(1) :] in seen:
                continue
            seen.add(name[match.start(1) :])
            layer = int(match.group(1))
            rows[layer] = rows.get(layer, 0) + shape[0]
            if match.group(2).startswith("v_proj"):  # ZAYA's current and delayed halves too
                values.add(layer)
    for layer in set(rows) - values:  # keys only: the values are the keys, cached again
        rows[layer] *= 2
    attention = [x for x in metrics.layers if not x.mtp and x.attention in ("mha", "gqa", "mqa", "swa")]
    if not attention or any(x.index not in rows for x in attention):
        return []
    expected = sum(rows[x.index] for x in attention)
    per_element = KV_DTYPE_BYTES[metrics.kv.kv_dtype]
    groups = [g for g in metrics.kv.groups if g.name in ("full_attention", "sliding_window")]
    got = round(sum(g.bytes_per_token for g in groups) / per_element)
    return (
        [] if got == expected else [f"KV elements per token {got:,} vs {expected:,} (k_proj + v_proj rows)"]
    )


# -- recurrent state and KV per token from transformers' own cache --------------------------------------
# transformers allocates a layer's recurrent state in its forward, from the shapes its mixer computes: a
# forward on the meta device (shapes propagate, nothing is computed) of a model built from the config
# leaves in the returned cache what a sequence holds, independently of hubdiff's formulas. Layers of one
# signature (class, parameter shapes, kind) hold the same state: only the first of each runs.

# hubdiff's recurrent layer kinds and their state groups (``kv.StateGroup``): (recurrent, convolution)
_STATE_GROUPS: dict[str, tuple[str | None, str | None]] = {
    "mamba": ("mamba_state", "mamba_conv"),
    "gdn": ("gdn_state", "gdn_conv"),
    "kda": ("kda_state", "kda_conv"),
    "rglru": ("rglru_state", "rglru_conv"),
    "shortconv": (None, "shortconv_state"),
    "rwkv": ("rwkv_state", None),
    "lightning": ("linear_attention_state", None),
    # Inkling's attention layers: short convolutions over keys, values and both sub-layers' outputs
    "attention_conv": (None, "attention_conv"),
    "sliding_attention_conv": (None, "sliding_attention_conv"),
    "mlstm": ("mlstm_state", None),
}
# the state an attention layer keeps beside its KV (ZAYA's CCA: the delayed values, the q/k convolutions'
# last inputs), where hubdiff holds one
_ATTENTION_STATE_GROUPS: tuple[str, str] = ("cca_state", "cca_conv")
_STATE_DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}
_CACHE_TOKENS = 2  # a prefill of two tokens: every key and value length is 2, every state its fixed size
# model_types whose recurrent state the cache check cannot measure, and why (a row of any other type
# whose forward fails is a mismatch, never a silent pass)
_STATE_CHECK_SKIPS: dict[str, str] = {}


@dataclass(frozen=True)
class CacheFigures:
    """Per decoder layer, what transformers' cache holds after the prefill."""

    recurrent: dict[int, int]  # elements of the recurrent state(s), per sequence
    conv: dict[int, int]  # elements of the convolution state(s) at kernel - 1 positions, per sequence
    kv: dict[int, int]  # key + value elements per token
    unrun: tuple[int, ...]  # layers of a signature that never ran (the forward failed before them)
    failure: str  # why the forward failed ("" when it ran through)


def _layer_signature(layer: Any, prefix: str = "", mixers_only: bool = False) -> tuple[Any, ...]:
    """Layers alike in class, parameter shapes and named kind (``attention_type`` and such strings) hold
    alike state and KV: only the first of each runs. With ``mixers_only``, a layer with recurrent mixers
    (by class name, without the model's own ``prefix``) is known by them alone: its state is theirs,
    whatever MLP or MoE follows them (Kimi-Linear's first dense layer holds what its MoE layers do)."""
    modules = [layer]
    if mixers_only:
        mixers = [
            m
            for m in layer.modules()
            if m is not layer and _RECURRENT_CLASS.search(type(m).__name__.removeprefix(prefix))
        ]
        modules = mixers or modules
    words = {(k, v) for m in modules for m2 in m.modules() for k, v in vars(m2).items() if isinstance(v, str)}
    shapes = tuple((type(m).__name__, n, tuple(p.shape)) for m in modules for n, p in m.named_parameters())
    return type(layer).__name__, shapes, tuple(sorted(words))


@contextlib.contextmanager
def _meta_nonzero() -> Iterator[None]:
    """Routing that indexes by ``nonzero`` (eager MoE, GLM-5-Next's) runs on meta tensors as if every
    element were selected: the routed outputs keep their shapes, which is all the cache needs."""
    import torch.fx.experimental._config as fx_config

    before = fx_config.meta_nonzero_assume_all_nonzero
    fx_config.meta_nonzero_assume_all_nonzero = True
    try:
        yield
    finally:
        fx_config.meta_nonzero_assume_all_nonzero = before


def _chained_window(layer: Any, channels: int, window: int) -> bool:
    """Whether a cached convolution window is that of several convolutions run one after another over the
    same channels (ZAYA's CCA: depthwise, then grouped), each reading (taps - 1) past inputs: the window
    is then their sum, all of it past inputs that the next token needs. A single convolution's window is
    its kernel, the new token's input included, of which the engines keep one fewer."""
    import torch.nn as nn

    for module in layer.modules():
        convs = [c for c in module.children() if isinstance(c, nn.Conv1d) and c.in_channels == channels]
        if len(convs) > 1 and sum(c.kernel_size[0] - 1 for c in convs) == window:
            return True
    return False


def _layer_cache(i: int, cache: Any, layer: Any, tokens: int) -> tuple[int, int, int]:
    """(recurrent, conv, KV per token) elements one layer holds: in the cache's layer (conv_states,
    recurrent_states, keys and values), a lightning cache's ``linear_cache``, or the layer's own modules
    (RecurrentGemma keeps ``conv1d_state`` and ``recurrent_states`` on them)."""
    import torch

    recurrent = conv = kv = 0
    entry = None
    with contextlib.suppress(Exception):
        entry = cache.layers[i] if cache is not None and i < len(cache.layers) else None
    for state_idx, t in (getattr(entry, "conv_states", None) or {}).items():
        if isinstance(t, torch.Tensor):
            # transformers keeps the kernel's last inputs, the serving engines one fewer (the new token's)
            kernel = (getattr(entry, "conv_kernel_size", None) or {}).get(state_idx) or t.shape[-1]
            kept = kernel if _chained_window(layer, t.shape[-2], kernel) else kernel - 1
            conv += t.numel() // t.shape[-1] * kept
    for t in (getattr(entry, "recurrent_states", None) or {}).values():
        if isinstance(t, torch.Tensor):
            recurrent += t.numel()
    keys, values = getattr(entry, "keys", None), getattr(entry, "values", None)
    if (
        isinstance(keys, torch.Tensor)
        and isinstance(values, torch.Tensor)
        and keys.numel()
        and keys.shape[-2] == tokens == values.shape[-2]
    ):
        kv = (keys.numel() + values.numel()) // tokens
    linear = getattr(cache, "linear_cache", None)
    if isinstance(linear, list) and i < len(linear) and isinstance(linear[i], torch.Tensor):
        recurrent += linear[i].numel()
    rnn = getattr(cache, "rnn_state", None)  # xLSTM's cache: per layer, the mLSTM's C, n and m
    if isinstance(rnn, dict) and isinstance(rnn.get(i), (tuple, list)):
        recurrent += sum(t.numel() for t in rnn[i] if isinstance(t, torch.Tensor))
    for module in layer.modules():
        for name, value in vars(module).items():
            if isinstance(value, torch.Tensor) and "state" in name:
                if "conv" in name:
                    conv += value.numel()  # kept at kernel - 1 positions already
                else:
                    recurrent += value.numel()
    return recurrent, conv, kv


# what a model's layers held, by the model class, its layers' signatures and those that had to run: the
# variations of one model_type often share them (a head tied the other way holds the same state)
_CACHE_FIGURES: dict[tuple[Any, ...], CacheFigures] = {}


def cache_figures(model: Any, needed: set[int] | None = None) -> CacheFigures:
    """Run the meta model (cast to bfloat16: grouped expert matmuls want it) over a two-token prefill
    with the cache on and read what each layer's cache holds. The first layer of each signature runs
    for real, later ones pass its output on; a layer outside ``needed`` (None: all) passes its input
    on, once a layer has shown the form of a layer's output. A forward that fails after the needed
    layers ran still leaves their states in the cache: they are read, and the failure said."""
    from collections import defaultdict

    import torch
    import torch.nn as nn
    from transformers.cache_utils import Cache

    decoder = _get_decoder(model)
    if not isinstance(decoder, nn.Module):
        decoder = model
    layers = _decoder_layers(decoder)
    # for the state alone a layer is known by its mixers, for the KV by the whole of it
    prefix = re.sub(r"(For[A-Z]\w*|LMHeadModel|Model)$", "", type(model).__name__)
    whole = [_layer_signature(layer) for layer in layers]
    signatures = whole if needed is None else [_layer_signature(x, prefix, True) for x in layers]
    wanted = {signatures[i] for i in (range(len(layers)) if needed is None else needed) if i < len(layers)}
    key = (type(model).__name__, tuple(signatures), frozenset(wanted))
    if key in _CACHE_FIGURES:
        return _CACHE_FIGURES[key]
    outputs: dict[tuple[Any, ...], Any] = {}
    first: dict[tuple[Any, ...], int] = {}
    seen: dict[str, Any] = {}
    # a looped model's later passes run a layer again with its cache layers elsewhere (Inkling 2 Loop's
    # cache_offset): each pass runs for real, and what its cache layers hold is the layer's too
    offsets: dict[int, set[int]] = defaultdict(set)

    def passed(hidden: Any) -> Any:
        """The input in the form of a layer's output (a tensor, or a tuple led by one), or None."""
        shown = next(iter(outputs.values()), None)
        if not isinstance(hidden, torch.Tensor) or shown is None:
            return None
        if isinstance(shown, torch.Tensor):
            return hidden
        if isinstance(shown, tuple) and shown and isinstance(shown[0], torch.Tensor):
            return (hidden, *shown[1:])
        return None

    def run_once(i: int, forward: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            for value in (*args, *kwargs.values()):
                if isinstance(value, Cache):
                    seen.setdefault("cache", value)
            signature = signatures[i]
            offset = kwargs.get("cache_offset")
            offset = offset if isinstance(offset, int) and not isinstance(offset, bool) else 0
            if (signature, offset) in outputs:
                return outputs[signature, offset]
            if signature not in wanted:
                hidden = args[0] if args else kwargs.get("hidden_states")
                skipped = passed(hidden)
                if skipped is not None:
                    return skipped
            first.setdefault(signature, i)
            if offset:
                offsets[i].add(offset)
            outputs[signature, offset] = forward(*args, **kwargs)
            return outputs[signature, offset]

        return wrapped

    for i, layer in enumerate(layers):
        layer.forward = run_once(i, layer.forward)
    failure = ""
    out: Any = None
    try:
        model.to(torch.bfloat16)
        ids = torch.zeros((1, _CACHE_TOKENS), dtype=torch.long, device="meta")
        for attempt in range(2):
            # a cache of linear-attention layers only cannot size an attention mask (transformers'
            # get_mask_sizes raises): a mask mapping the model passes through (None for every kind) does
            mask = None if attempt == 0 else defaultdict(lambda: None)
            try:
                with _quiet(), _meta_nonzero(), torch.no_grad():
                    out = model(input_ids=ids, attention_mask=mask, use_cache=True)
                failure = ""
                break
            except Exception as exc:
                failure = _one_line(exc, 160)
                if first or attempt:
                    break
    finally:
        for layer in layers:
            with contextlib.suppress(AttributeError):
                del layer.forward
    cache = seen.get("cache")
    for name in ("cache", "past_key_values", "cache_params"):
        if cache is None and out is not None:
            cache = getattr(out, name, None)
    recurrent: dict[int, int] = {}
    conv: dict[int, int] = {}
    kv: dict[int, int] = {}
    for signature, i in first.items():
        figures = _layer_cache(i, cache, layers[i], _CACHE_TOKENS)
        for offset in sorted(offsets.get(i, ())):  # the layer's later passes, in cache layers of their own
            again = _layer_cache(i + offset, cache, nn.Module(), _CACHE_TOKENS)
            figures = (figures[0] + again[0], figures[1] + again[1], figures[2] + again[2])
        for j, other in enumerate(signatures):
            if other == signature:
                recurrent[j], conv[j] = figures[:2]
                if whole[j] == whole[i]:
                    kv[j] = figures[2]
    state = getattr(out, "state", None) if out is not None else None  # RWKV: per-layer slices of a stack
    if isinstance(state, (list, tuple)) and all(
        isinstance(t, torch.Tensor) and t.shape[-1] == len(layers) for t in state
    ):
        for j in range(len(layers)):
            recurrent[j] = recurrent.get(j, 0) + sum(t.numel() // t.shape[-1] for t in state)
    unrun = tuple(i for i, s in enumerate(signatures) if s in wanted and s not in first)
    _CACHE_FIGURES[key] = CacheFigures(recurrent, conv, kv, unrun, failure)
    return _CACHE_FIGURES[key]


def _state_check(metrics: Any, figures: CacheFigures) -> list[str]:
    """hubdiff's state groups against the cache, per group: the elements transformers holds in the layers
    hubdiff gives that group, at the group's own dtype. The dtypes are hubdiff's (the serving engines'):
    transformers' cache dtype differs by design (float32 SSM states where vLLM uses the model's, a
    lightning state in the model's where the engines keep float32), so what is compared is elements, said
    in bytes. Convolution states are compared at kernel - 1 positions, what the engines keep."""
    out = []
    kinds = {}
    for x in metrics.layers:
        if not x.mtp:
            kinds[x.index] = "mamba" if x.parallel_ssm else x.attention
            if x.attention_convs:
                kinds[x.index] = "sliding_attention_conv" if x.attention == "swa" else "attention_conv"
    held: dict[str, int] = {}
    stray: list[int] = []
    # attention layers that keep a state of their own (ZAYA's CCA) where hubdiff gives them one
    attention_pair = (
        _ATTENTION_STATE_GROUPS
        if {g.name for g in metrics.kv.states} & set(_ATTENTION_STATE_GROUPS)
        else (None, None)
    )
    for part, figure in ((0, figures.recurrent), (1, figures.conv)):
        for i, elements in figure.items():
            kind = kinds.get(i, "")
            pair = attention_pair if kind in ("mha", "gqa", "mqa", "swa") else (None, None)
            group = _STATE_GROUPS.get(kind, pair)[part]
            if group is not None:
                held[group] = held.get(group, 0) + elements
            elif elements:
                stray.append(i)
    if stray:
        out.append(f"state in layers {sorted(set(stray))} (transformers' cache) that hubdiff holds none for")
    known = {g for pair in (*_STATE_GROUPS.values(), _ATTENTION_STATE_GROUPS) for g in pair if g}
    for group in metrics.kv.states:
        if group.name not in known:
            out.append(f"state group {group.name} not read by the cache check")
            continue
        width = _STATE_DTYPE_BYTES.get(group.dtype, 2)
        expected = held.pop(group.name, 0) * width
        if group.bytes_per_sequence != expected:
            out.append(
                f"{group.name} {group.bytes_per_sequence:,} vs {expected:,} bytes per sequence "
                f"(transformers' cache, in {group.dtype})"
            )
    for group, elements in sorted(held.items()):
        if elements:
            out.append(f"{group} none vs {elements:,} elements per sequence (transformers' cache)")
    return out


def _cache_kv(metrics: Any, figures: CacheFigures) -> list[str]:
    """KV per token against the keys and values the cache holds per token, where every full or sliding
    attention layer holds them: fused qkv projections included, which ``_kv`` cannot read. Latent KV
    (MLA) is not compared: some of transformers' MLA classes cache the latent, others the keys and
    values it expands to."""
    from hubdiff._metrics.kv import KV_DTYPE_BYTES

    attention = [x for x in metrics.layers if not x.mtp and x.attention in ("mha", "gqa", "mqa", "swa")]
    if not attention or any(not figures.kv.get(x.index) for x in attention):
        return []
    expected = sum(figures.kv[x.index] for x in attention)
    per_element = KV_DTYPE_BYTES[metrics.kv.kv_dtype]
    groups = [g for g in metrics.kv.groups if g.name in ("full_attention", "sliding_window")]
    got = round(sum(g.bytes_per_token for g in groups) / per_element)
    return [] if got == expected else [f"KV elements per token {got:,} vs {expected:,} (transformers' cache)"]


def _projections_unread(metrics: Any, truth: Truth) -> bool:
    """Whether some full or sliding attention layer has no k_proj and v_proj for ``_kv`` to read (a fused
    qkv): the cache is then the only witness of its KV per token."""
    from hubdiff._metrics.components import classify

    by_layer = {x.index: x for x in metrics.layers}
    read: set[int] = set()
    for name, _, shape in truth.tensors:
        match = _KV_PROJECTION.search(name)
        if match and classify(name, shape, by_layer, metrics.cfg.num_layers)[0] == "attention":
            read.add(int(match.group(1)))
    attention = [x for x in metrics.layers if not x.mtp and x.attention in ("mha", "gqa", "mqa", "swa")]
    return any(x.index not in read for x in attention)


def cache_checks(model: Any, model_type: str, metrics: Any, truth: Truth) -> list[str]:
    """The recurrent state (for a model with recurrent layers, by its modules or by hubdiff) and the KV
    per token (where ``_kv`` cannot read the projections) against transformers' cache. A model whose
    forward fails on meta keeps its KV unchecked, as before; its recurrent state is a mismatch unless
    ``_STATE_CHECK_SKIPS`` says why it cannot be measured. The model is cast to bfloat16 and run: call
    it last."""
    recurrent = set(truth.recurrent_layers) | {
        x.index
        for x in metrics.layers
        if not x.mtp and (x.parallel_ssm or x.attention_convs or x.attention in _STATE_GROUPS)
    }
    stated = bool(recurrent or metrics.kv.states) and model_type not in _STATE_CHECK_SKIPS
    # a sequence-to-sequence model's forward wants decoder inputs: its KV stays unchecked here
    unread = not getattr(model.config, "is_encoder_decoder", False) and (
        _projections_unread(metrics, truth) or any(".encoder_attn." in n for n, _, _ in truth.tensors)
    )  # a cross-attention's projections are passed over by ``_kv``: the cache says what a token holds
    if not stated and not unread:
        return []
    # every layer when the KV is to be read from the cache, else the recurrent ones (by either account)
    figures = cache_figures(model, None if unread or not recurrent else recurrent)
    out = []
    if stated:
        missed = sorted(recurrent & set(figures.unrun))
        if missed:
            return [f"state check: recurrent layers {missed} did not run on meta: {figures.failure}"]
        if figures.failure and not any(figures.recurrent.values()) and not any(figures.conv.values()):
            return [f"state check: the meta forward left no state: {figures.failure}"]
        # a layer recurrent by its modules whose state the cache does not show: read nowhere, never passed
        unseen = sorted(
            i for i in truth.recurrent_layers if not figures.recurrent.get(i) and not figures.conv.get(i)
        )
        if unseen:
            out.append(f"state check: no state found in transformers' cache for recurrent layers {unseen}")
        out += _state_check(metrics, figures)
    return out + _cache_kv(metrics, figures)


def whole_cache_kv(model: Any, metrics: Any, truth: Truth) -> list[str] | None:
    """KV per token against every entry of the cache a plain two-token prefill leaves, for a model whose
    cache holds more entries than its decoder has layers: a layer run several times, each run caching its
    keys and values apart (HRM's H and L cycles through its two stacks, Dory's recurrent loops), which the
    projections' rows (``_kv``: one entry a layer) cannot show. None for any other model, or when the
    forward fails on meta (the projections' yardstick then stands). Casts the model to bfloat16 and runs it."""
    import torch

    from hubdiff._metrics.kv import KV_DTYPE_BYTES

    try:
        model.to(torch.bfloat16)
        ids = torch.zeros((1, _CACHE_TOKENS), dtype=torch.long, device="meta")
        with _quiet(), _meta_nonzero(), torch.no_grad():
            out = model(input_ids=ids, use_cache=True)
    except Exception:
        return None
    cache = next(
        (getattr(out, n) for n in ("cache", "past_key_values") if getattr(out, n, None) is not None), None
    )
    entries = getattr(cache, "layers", None)
    if not isinstance(entries, list) or len(entries) <= truth.layers:
        return None
    expected = 0
    for entry in entries:
        keys, values = getattr(entry, "keys", None), getattr(entry, "values", None)
        if isinstance(keys, torch.Tensor) and isinstance(values, torch.Tensor) and keys.numel():
            if keys.shape[-2] != _CACHE_TOKENS or values.shape[-2] != _CACHE_TOKENS:
                return None
            expected += (keys.numel() + values.numel()) // _CACHE_TOKENS
    per_element = KV_DTYPE_BYTES[metrics.kv.kv_dtype]
    groups = [g for g in metrics.kv.groups if g.name in ("full_attention", "sliding_window")]
    got = round(sum(g.bytes_per_token for g in groups) / per_element)
    if got == expected:
        return []
    return [f"KV elements per token {got:,} vs {expected:,} (every entry of transformers' cache)"]


def _build_model(cfg_obj: Any) -> tuple[Any, list[str]]:
    """The model of the first class that builds on the meta device, or None and why each failed."""
    import torch

    failures: list[str] = []
    try:
        classes = sweep_model_classes(cfg_obj)
    except Exception as exc:  # a modeling module that fails to import (a missing optional package)
        return None, [_one_line(exc, 160)]
    for cls in classes:
        try:
            with _quiet(), torch.device("meta"), _no_torch_init():
                return cls(cfg_obj), failures
        except Exception as exc:
            failures.append(f"{cls.__name__}: {_one_line(exc, 160)}")
    return None, failures


def _build_from_part(cfg_obj: Any) -> Any:
    """A class registered for the composite config but built from one of its parts (MusicGen's causal LM
    takes the decoder's config, as its composite class builds it): the last resort, once no class takes
    the whole, its unset sizes filled or not (Emu3's causal LM takes its text part too, where its
    image-text class takes the whole once its vocabulary map is filled)."""
    import torch

    try:
        classes = sweep_model_classes(cfg_obj)
    except Exception:
        return None
    for cls in classes:
        try:
            wanted = getattr(cls, "config_class", None)
        except ImportError:  # a placeholder of a class whose optional package is missing
            continue
        for key in getattr(cfg_obj, "sub_configs", None) or {}:
            part = getattr(cfg_obj, key, None)
            if part is None or not isinstance(wanted, type) or type(part) is not wanted:
                continue
            with contextlib.suppress(Exception), _quiet(), torch.device("meta"), _no_torch_init():
                return cls(part)
    return None


def _filled_sizes(cfg_obj: Any) -> dict[str, Any]:
    """Sizes a configuration class leaves None by default although its model needs them (Ministral's and
    HunYuan's head_dim, Nemotron's num_key_value_heads), as the classes' docstrings define them: the
    head width hidden_size // num_attention_heads, and as many KV heads as heads."""
    hidden, heads = getattr(cfg_obj, "hidden_size", None), getattr(cfg_obj, "num_attention_heads", None)
    out: dict[str, Any] = {}
    if getattr(cfg_obj, "is_heterogeneous", False):  # per-layer sizes (Gemma 4): none left unset globally
        return out
    if isinstance(hidden, int) and isinstance(heads, int) and heads > 0:
        if hasattr(cfg_obj, "head_dim") and cfg_obj.head_dim is None:
            out["head_dim"] = hidden // heads
        if hasattr(cfg_obj, "num_key_value_heads") and cfg_obj.num_key_value_heads is None:
            out["num_key_value_heads"] = heads
    out.update(_rope_per_layer_type(cfg_obj))
    out.update(_divisible_heads(cfg_obj))
    out.update(_filled_indexer(cfg_obj))
    return out


_INDEXER_SIZES = (
    "indexer_n_heads",
    "indexer_kv_heads",
    "indexer_head_dim",
    "indexer_budget",
    "indexer_compress_ratio",
)


def _filled_indexer(cfg_obj: Any) -> dict[str, Any]:
    """A QSA indexer that a class builds in every indexed layer although its defaults leave every size of
    it None (Qwen4-Exp's indexer_*, which the class checks all set or none): one key head, as the class
    requires, as many query heads and as wide heads as the attention's (its RoPE must fit them), and a
    budget of one block of indexer_compress_ratio 4 tokens (which size no tensor)."""
    heads, head_dim = getattr(cfg_obj, "num_attention_heads", None), getattr(cfg_obj, "head_dim", None)
    if not all(hasattr(cfg_obj, k) and getattr(cfg_obj, k) is None for k in _INDEXER_SIZES):
        return {}
    if not (isinstance(heads, int) and isinstance(head_dim, int) and heads > 0 and head_dim > 0):
        return {}
    return dict(zip(_INDEXER_SIZES, (heads, 1, head_dim, 4, 4), strict=True))


def _divisible_heads(cfg_obj: Any) -> dict[str, Any]:
    """A sub-config whose default heads do not divide its width (Aya Vision's SigLIP: 1152 wide, 14
    heads), given its own configuration class's default head count where that divides the width: the
    head count sizes no tensor of these towers, and the class cannot be built otherwise."""
    out: dict[str, Any] = {}
    for key in getattr(cfg_obj, "sub_configs", None) or {}:
        sub = getattr(cfg_obj, key, None)
        hidden, heads = getattr(sub, "hidden_size", None), getattr(sub, "num_attention_heads", None)
        if not (isinstance(hidden, int) and isinstance(heads, int) and heads > 0 and hidden % heads):
            continue
        with contextlib.suppress(Exception):
            default = type(sub)().num_attention_heads
            if isinstance(default, int) and default > 0 and hidden % default == 0:
                out[key] = {**sub.to_diff_dict(), "num_attention_heads": default}
    return out


def _rope_per_layer_type(cfg_obj: Any) -> dict[str, Any]:
    """RoPE parameters for each layer type where a class reads them so but its defaults give none
    (Cohere Compass's text model: ``rope_parameters[layer_type]``): the default RoPE for each. RoPE
    keeps no tensor a checkpoint stores (its inv_freq is not persistent), so this sizes nothing."""
    rope, types = getattr(cfg_obj, "rope_parameters", None), getattr(cfg_obj, "layer_types", None)
    if not (isinstance(rope, dict) and not rope and isinstance(types, list) and types):
        out: dict[str, Any] = {}
        for key in getattr(cfg_obj, "sub_configs", None) or {}:  # Cohere Compass's own text_config
            sub = getattr(cfg_obj, key, None)
            filled = _rope_per_layer_type(sub) if sub is not None and hasattr(sub, "to_diff_dict") else {}
            if filled:
                out[key] = {**sub.to_diff_dict(), **filled}
        return out
    theta = getattr(cfg_obj, "default_theta", 10000.0)
    return {"rope_parameters": {t: {"rope_type": "default", "rope_theta": theta} for t in sorted(set(types))}}


def _filled_text_sizes(cfg_obj: Any, config: dict[str, Any]) -> dict[str, Any]:
    """``_filled_sizes`` of a text config nested in a multimodal one (HunYuan-VL's head_dim), written back
    into the config's own text_config."""
    text = getattr(cfg_obj, "text_config", None)
    nested = config.get("text_config")
    if text is None or text is cfg_obj or not isinstance(nested, dict):
        return {}
    try:
        filled = _filled_sizes(text)
    except Exception:  # a heterogeneous text config refuses global reads of per-layer sizes (head_dim)
        return {}
    return {"text_config": {**nested, **filled}} if filled else {}


def _filled_mlp_types(cfg_obj: Any, config: dict[str, Any]) -> dict[str, Any]:
    """A text config's mlp_layer_types the class leaves None although its layers index it (DeepSeek-OCR-2):
    its docstring's example, the first layer dense and the others sparse, written into the config's own
    text_config. Which layer is sparse is the config's to say; the estimate reads the list."""
    text, nested = getattr(cfg_obj, "text_config", None), config.get("text_config")
    n = getattr(text, "num_hidden_layers", None)
    if not isinstance(nested, dict) or getattr(text, "mlp_layer_types", ()) is not None:
        return {}
    if not isinstance(n, int) or n < 1:
        return {}
    return {"text_config": {**nested, "mlp_layer_types": ["dense"] + ["sparse"] * (n - 1)}}


def _filled_projector_maps(cfg_obj: Any) -> dict[str, Any]:
    """Granite 4 Vision's downsample_rate and deepstack_layer_map, None by default although its model
    builds one window Q-Former for each pair and splits the rate into its windows: the docstring's example
    rate "1/4", and two [vision_layer, llm_layer] pairs (the last two tower layers into the first two text
    layers), so that the count of downsamplers is seen to follow the map."""
    if not (hasattr(cfg_obj, "deepstack_layer_map") and hasattr(cfg_obj, "downsample_rate")):
        return {}
    out: dict[str, Any] = {}
    if cfg_obj.downsample_rate is None:
        out["downsample_rate"] = "1/4"
    if cfg_obj.deepstack_layer_map is None:
        out["deepstack_layer_map"] = [[-2, 0], [-1, 1]]
    return out


def _filled_experts(cfg_obj: Any, config: dict[str, Any]) -> dict[str, Any]:
    """Experts a text model builds in every layer while its configuration class leaves them unsized
    (DiffusionGemma's, beside each layer's MLP: num_experts, top_k_experts and moe_intermediate_size all
    None), sized as the "moe block" variation sizes Gemma 4's: 8 experts, 2 a token, a quarter of the
    MLP's width. Written into the config's own text_config where it has one."""
    text = getattr(cfg_obj, "text_config", None) or cfg_obj
    keys = ("num_experts", "top_k_experts", "moe_intermediate_size")
    inter = getattr(text, "intermediate_size", None)
    if hasattr(text, "enable_moe_block") or any(getattr(text, k, 0) is not None for k in keys):
        return {}  # Gemma 4's own switch leaves them unsized while off: nothing to fill
    if not isinstance(inter, int):
        return {}
    filled = {"num_experts": 8, "top_k_experts": 2, "moe_intermediate_size": inter // 4}
    nested = config.get("text_config")
    if text is not cfg_obj and isinstance(nested, dict):
        return {"text_config": {**nested, **filled}}
    return filled


# The Perception Encoder of facebook/Perception-LM-1B as transformers' conversion script writes it
# (convert_perception_lm_weights_to_hf.py: the release's width, depth, tile size, no post-transformer norm,
# layer scales, and no pooling, with the rotary grid of the tile)
PERCEPTION_LM_1B_ENCODER: dict[str, Any] = {
    "embed_dim": 1024,
    "depth": 23,
    "img_size": [448, 448],
    "global_pool": "",
    "use_post_transformer_norm": False,
    "init_values": 0.1,
    "ref_feat_shape": [32, 32],
}


def _filled_timm_tower(cfg_obj: Any, config: dict[str, Any]) -> dict[str, Any]:
    """Perception LM's vision config, whose class default is TimmWrapperConfig's (resnet50, no
    model_args) although its projector reads the encoder's width from model_args["embed_dim"] and its
    vision_use_cls_token strips a Perception Encoder's class token: the encoder its conversion script
    writes for Perception-LM-1B (vit_pe_core_large_patch14_336 with PERCEPTION_LM_1B_ENCODER)."""
    vision, nested = getattr(cfg_obj, "vision_config", None), config.get("vision_config")
    if not hasattr(cfg_obj, "vision_use_cls_token") or getattr(vision, "model_args", 0) is not None:
        return {}
    base = nested if isinstance(nested, dict) else {"model_type": "timm_wrapper"}
    filled = {"architecture": "vit_pe_core_large_patch14_336", "model_args": dict(PERCEPTION_LM_1B_ENCODER)}
    return {"vision_config": {**base, **filled}}


def _filled_maps(cfg_obj: Any) -> dict[str, Any]:
    """Tokenizer bookkeeping a model reads at construction although it sizes nothing: Chameleon's and
    Emu3's vocabulary_map (which BPE tokens stand for image codes), empty when the class leaves it None."""
    if hasattr(cfg_obj, "vocabulary_map") and cfg_obj.vocabulary_map is None:
        return {"vocabulary_map": {}}
    return {}


def sweep_row(case: Case) -> Row:
    """Build the case's model on the meta device and compare hubdiff's figures with it: the config-only
    estimate (total, every component, active, layer census) and the header path on a header-only
    skeleton of the model's own tensors (no tensor in ``other``, active right, no config-vs-tensors
    check raised)."""

    from hubdiff._metrics.compute import _checks, compute_metrics
    from hubdiff._metrics.options import MetricsOptions
    from hubdiff.snapshot import Snapshot, Tensor

    cfg_obj, reason = build_config(case.config)
    if cfg_obj is None:
        return Row(case.model_type, case.variation, "", "not built", (), (reason,))
    model, failures = _build_model(cfg_obj)
    filled = (
        {
            **_filled_sizes(cfg_obj),
            **_filled_text_sizes(cfg_obj, case.config),
            **_filled_maps(cfg_obj),
            **_filled_experts(cfg_obj, case.config),
            **_filled_timm_tower(cfg_obj, case.config),
        }
        if model is None
        else {}
    )
    if model is None:
        filled.update(_filled_mlp_types(cfg_obj, {**case.config, **filled}))
        filled.update(_filled_projector_maps(cfg_obj))
    if filled:  # defaults the class leaves unset but its model divides by: set as the class documents them
        again, _ = build_config({**case.config, **filled})
        if again is not None:
            built, _ = _build_model(again)
            if built is not None:
                case, cfg_obj, model = (
                    Case(case.model_type, case.variation, {**case.config, **filled}),
                    again,
                    built,
                )
    if model is None:
        model = _build_from_part(cfg_obj)
    if model is None:
        return Row(
            case.model_type,
            case.variation,
            "",
            "not built",
            (),
            (failures[0] if failures else "no model class",),
        )
    cls = type(model)
    # the part of a composite config the model was built from, where it was (MusicGen's decoder)
    built_from = cfg_obj if isinstance(getattr(model, "config", None), type(cfg_obj)) else model.config
    truth = _truth(model, built_from, _inventory(model, "checkpoint"))
    config = {**case.config, "architectures": [cls.__name__]}
    head = (f"sweep/{case.model_type}", "main", "", None, config, None, (), {})
    by_config = compute_metrics(Snapshot(*head), MetricsOptions(config_only=True))
    if not by_config.kv.context_tokens and by_config.kv.groups:
        # a model with no context length of its own (BLOOM's ALiBi): the user gives one (--context); the
        # per-token figures compared here do not depend on it
        by_config = compute_metrics(Snapshot(*head), MetricsOptions(config_only=True, context=2048))
    skeleton = Snapshot.of_tensors(
        *head, tensors=[Tensor(n, d, s, "model.safetensors") for n, d, s in truth.tensors]
    )
    by_headers = compute_metrics(skeleton, MetricsOptions())
    mismatches = _compare_figures(by_config, truth, "config")
    real = by_headers.params.by_component
    estimate = by_config.params.by_component
    for component in sorted(set(real) | set(estimate)):
        if component != "mtp" and real.get(component, 0) != estimate.get(component, 0):
            mismatches.append(
                f"config {component} {estimate.get(component, 0):,} vs {real.get(component, 0):,}"
            )
    mismatches += _census(by_config, truth)
    kv_lines = _kv(by_config, truth)
    mismatches += kv_lines
    mismatches += _compare_figures(by_headers, truth, "headers")
    if real.get("other"):
        names = ", ".join(by_headers.params.other_names[:3])
        mismatches.append(f"headers other {real['other']:,} ({names})")
    layers = list(by_headers.layers)
    for check in _checks(by_headers.cfg, layers, by_headers.params, by_config.params):
        mismatches.append(f"headers check: {check}")
    mismatches += cache_checks(model, case.model_type, by_config, truth)  # casts the model: last
    if kv_lines:  # the projections' yardstick holds one cache entry a layer; a looped model, the cache itself
        whole = whole_cache_kv(model, by_config, truth)
        if whole is not None:
            mismatches = [m for m in mismatches if m not in kv_lines] + whole
    reasons = tuple(r for r in by_config.unverified if NOT_PROVEN not in r)
    return Row(
        case.model_type,
        case.variation,
        cls.__name__,
        "",
        tuple(m[:160] for m in mismatches[:MAX_ROW_LINES]),
        reasons[:MAX_ROW_LINES],
        truth.total,
    )


def judge_rows(rows: list[Row]) -> list[Row]:
    """Verdicts by the sweep's rule: a model_type is proven when every row of it built agrees with the
    model; a row is exact when its type is proven and hubdiff names no other doubt, unverified when hubdiff
    names one (the unproven layout among them), wrong when it disagrees without a word."""
    proven = set(proven_types(rows))
    out = []
    for r in rows:
        if r.verdict == "not built":
            out.append(r)
            continue
        reasons = tuple(x for x in r.reasons if NOT_PROVEN not in x)
        if r.model_type not in proven:
            reasons = (f"layout of {r.model_type} {NOT_PROVEN}", *reasons)
        verdict = "unverified" if reasons else "wrong" if r.mismatches else "exact"
        out.append(dataclasses.replace(r, verdict=verdict, reasons=reasons))
    return out


def proven_types(rows: list[Row]) -> list[str]:
    """The model_types with a row that agrees with the model and no row that disagrees without a word:
    a row that hubdiff marks unverified for a reason of its own (a null top-k, a key it does not read)
    neither proves nor disproves the layout."""
    own = [(r, tuple(x for x in r.reasons if NOT_PROVEN not in x)) for r in rows if r.verdict != "not built"]
    bad = {r.model_type for r, reasons in own if r.mismatches and not reasons}
    good = {r.model_type for r, reasons in own if not r.mismatches and not reasons}
    return sorted(good - bad)


def generative_types() -> set[str]:
    """The model_types the proven share is of: those transformers maps to a causal-LM or an image-text-to-text
    class, the encoder-only families (the masked-LM mapping) and the encoder-decoders (the seq2seq and speech
    mappings) aside, as the installed transformers' auto mappings name them."""
    from transformers.models.auto import modeling_auto as auto

    generative = set(auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES) | set(
        auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES
    )
    return generative - (
        set(auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES)
        | set(auto.MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES)
        | set(auto.MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES)
    )


def sweep_type(model_type: str) -> list[Row]:
    """Every row of one model_type (unjudged), or one "not built" row saying why there is none."""
    cases, reason = sweep_cases(model_type)
    rows = [sweep_row(case) for case in cases]
    if reason:
        rows.append(Row(model_type, "(variations)", "", "not built", (), (reason[:200],)))
    return rows


def sweep_rows_json(rows: list[dict[str, Any]], transformers_version: str) -> str:
    """The committed table's text: stable, one row a line, so that a change shows as a small diff."""
    body = ",\n".join("    " + json.dumps(r, sort_keys=True) for r in rows)
    head = json.dumps({"format": 1, "transformers": transformers_version})[:-1]
    return head + ', "rows": [\n' + body + "\n]}\n"


def _wrapped(names: list[str], indent: str = "    ") -> str:
    lines, line = [], ""
    for name in names:
        if line and len(indent) + len(line) + len(name) + 1 > 100:
            lines.append(indent + line)
            line = ""
        line = f"{line} {name}".strip()
    return "\n".join([*lines, indent + line]) if line else ""


def proven_module(rows: list[dict[str, Any]], transformers_version: str) -> str:
    """The text of ``hubdiff/_metrics/proven.py`` for the judged rows of the table, swept with
    ``transformers_version``."""
    judged = [
        Row(**{**r, "mismatches": tuple(r["mismatches"]), "reasons": tuple(r["reasons"])}) for r in rows
    ]
    swept = sorted({r.model_type for r in judged})
    return (
        '"""The model_types the sweep (``scripts/sweep.py``) tried, and those whose layout it proved exact.\n\n'
        "Generated from tests/data/sweep.json by the sweep: do not edit. hubdiff vouches for the layout of a\n"
        "proven model_type; any other swept one (every model_type the installed transformers ships) is marked\n"
        "``layout of ... not proven by the sweep``, and a model_type it does not ship (remote code) is\n"
        "``not one transformers ships``. A proof is of SWEPT_TRANSFORMERS's classes: with another version\n"
        "installed, hubdiff says so and calls nothing proven. tests/test_sweep.py checks this file against\n"
        'the table."""\n\n'
        f"SWEPT_TRANSFORMERS = {json.dumps(transformers_version)}\n"
        f'PROVEN_TYPES: frozenset[str] = frozenset(\n    """\n{_wrapped(proven_types(judged))}\n    """.split()  # noqa: SIM905\n)\n'
        f'SWEPT_TYPES: frozenset[str] = frozenset(\n    """\n{_wrapped(swept)}\n    """.split()  # noqa: SIM905\n)\n'
    )
