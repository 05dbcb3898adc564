"""hubdiff's figures on real configs of public releases, against the publishers' own figures.

Every folder of ``tests/data/corpus`` holds a real ``config.json`` and a ``source.yaml`` with where the
copy came from, the publisher's total and active parameters (quoted, with their source) and an
independent derivation of the layer census and the KV cache per token in BF16, arithmetic written out.
Each model is checked on all four; a model whose config holds what hubdiff's reading does not cover
must say so (``unverified``) instead of passing a confident number.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from hubdiff._metrics.compute import compute_metrics
from hubdiff._metrics.options import MetricsOptions
from hubdiff._metrics.results import Metrics
from hubdiff.snapshot import Snapshot

CORPUS = Path(__file__).parent / "data" / "corpus"
MODELS = sorted(
    p.name for p in CORPUS.iterdir() if (p / "config.json").is_file() and (p / "source.yaml").is_file()
)

# Models whose configs hold what hubdiff does not model: the reason it must name, and why.
EXPECTED_UNVERIFIED = {
    "chatglm3-6b": "multi_query_attention",  # remote code: ChatGLM's own spellings of MQA and biases
    "qwen2.5-omni-7b-awq": "talker_config",  # thinker's vision and audio towers, talker, token2wav
    "falcon-h1-0.5b-base": "mamba_d_head",  # parallel hybrid with muP multipliers: read as unsure
    "hunyuan-a13b-instruct": "not understood",  # remote code with cross-layer attention sharing
    "lfm2.5-vl-1.6b": "conv",  # LFM2's short-convolution layers
    "minicpm-v-2_6": "image_size",  # remote code: the vision side is not in a vision_config
    "minicpm3-4b": "no model_type",  # the vendored copy names no model_type (its muP keys change no count)
    "mamba-codestral-7b-v0.1": "rms_norm",  # Mamba-2's norm switch (transformers always builds the norm)
    "kimi-k3": "latent_moe_use_norm",  # Kimi Linear text model with a latent MoE and attention residuals
    "minimax-m1-80k": "shared_moe_mode",  # MiniMax's shared-expert switches
    "minimax-m2.5": "num_mtp_modules",  # MTP modules whose presence in the checkpoint the config does not fix
    "molmo-7b-d-0924": "embedding_size",  # remote code: padded embedding and its own norm type
    "voxtral-mini-3b-2507": "audio_config",  # the audio encoder is not counted
}
# Remote code (a model_type transformers does not ship): no sweep can prove hubdiff's layout for it, so
# the figures are marked unverified for that reason alone; they are still held to the publisher's.
REMOTE_CODE = "is not one transformers"
for _model in ("baichuan2-7b-chat", "kimi-k2-instruct", "ling-lite-base", "mimo-7b-base", "minicpm4-8b"):
    EXPECTED_UNVERIFIED[_model] = REMOTE_CODE
EXPECTED_UNVERIFIED["llama-3_3-nemotron-super-49b-v1"] = REMOTE_CODE  # nemotron-nas: NAS block_configs

# Where the publisher's figure and hubdiff's differ beyond its rounding: which is right, and why.
# hubdiff's per-component counts for these agree with transformers' model classes on the meta device
# (tests/test_oracle.py), so the difference is in what the publisher counted.
KNOWN_DIFFERENCES = {
    "glm-4.5": (
        "total_params",
        "355B lies between 352.80B without the MTP layer and 358.34B with it (its embedding and head "
        "copies are 2 x 151,552 x 5,120 = 1.55B); Z.ai does not say what it counts",
    ),
    "llama-4-scout-17b-16e-instruct": (
        "total_params",
        "the vendored copy has no vision_config, so transformers' default 768-wide vision tower is "
        "counted; the released tower is 1,408 wide, hence 108.23B against 109B",
    ),
    "nvidia-nemotron-3-super-120b-a12b-fp8": ("total_params", "120.67B without the MTP layer: 120B rounds"),
    "gemma-4-26b-a4b": (
        "total_params",
        "25.2B is the text model (25,233,141,790); the card names the ~550M vision encoder apart: its "
        "569,550,384 parameters and the 3,244,032 of its projector make 25.81B",
    ),
    "llama-3.2-11b-vision-instruct": (
        "total_params",
        "10,670,220,835 counted, as transformers' MllamaForConditionalGeneration counts (test_oracle.py); "
        "Meta's 10.6B truncates it",
    ),
    "deepseek-v2-lite": ("active_params", "2.45B active without the input embedding; 2.4B truncates"),
    "nvidia-nemotron-3-nano-30b-a3b-bf16": (
        "active_params",
        "3.58B active with embeddings, 3.23B without; the quoted 3.5B is the docs' rounding of the first",
    ),
}
# Totals published only as the size in the name although the source reads like a count
NAME_ONLY_TOTALS = {
    "phi-4": "the card's '14B parameters' is the size class of a 14.66B checkpoint",
    "nvidia-nemotron-3-nano-30b-a3b-bf16": "'30B' is the name; 31.58B counted",
}


def size_label(source: dict[str, Any]) -> bool:
    """A published "total" that is only the size in the model's name (no count was published)."""
    published = source.get("published") or {}
    words = f"{published.get('convention', '')} {published.get('source', '')}".lower()
    named = source.get("hub_repo", "").split("/")[-1].lower() in NAME_ONLY_TOTALS
    return named or any(w in words for w in ("size label", "size class", "model name", "name-level"))


# hubdiff counts what the engines cache; the derivation in source.yaml left this out.
KV_CORRECTIONS = {
    # DSA: beside the 576-element MLA latent, each layer's indexer caches its own 128-wide key
    "deepseek-v3.2": (61 * (512 + 64 + 128) * 2, "61 × (512 + 64 + 128 indexer key) × 2 = 85,888"),
}


@functools.cache  # read at collection by every worker, then by the tests: once each (nothing writes to them)
def _load(model: str) -> tuple[dict[str, Any], dict[str, Any]]:
    folder = CORPUS / model
    source = yaml.load(
        (folder / "source.yaml").read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    )
    return json.loads((folder / "config.json").read_text()), source


def metrics_of(config: dict[str, Any], reader: str = "auto") -> Metrics:
    snapshot = Snapshot("corpus", "local", "", None, config, None, (), {}, ())
    return compute_metrics(snapshot, MetricsOptions(kv_dtype="bf16", config_only=True, config_reader=reader))


_CACHE: dict[tuple[str, str], Metrics] = {}


def cached(model: str, reader: str = "auto") -> Metrics:
    if (model, reader) not in _CACHE:
        _CACHE[(model, reader)] = metrics_of(_load(model)[0], reader)
    return _CACHE[(model, reader)]


def published(text: Any) -> tuple[float, float] | None:
    """("109B") -> (109e9, 0.5e9): the value and half a unit of its last written digit."""
    if text is None:
        return None
    match = re.fullmatch(r"~?\s*([\d,]+(?:\.(\d+))?)\s*([TBMK])?", str(text).strip())
    if not match:
        return None
    scale = {"T": 1e12, "B": 1e9, "M": 1e6, "K": 1e3, None: 1.0}[match.group(3)]
    decimals = len(match.group(2) or "")
    return float(match.group(1).replace(",", "")) * scale, 0.5 * scale / 10**decimals


def census(metrics: Metrics) -> Counter[str]:
    """Attention kinds folded to the categories the derivations use."""
    fold = {"mha": "full", "gqa": "full", "mqa": "full", "mla": "full", "dsa": "full", "swa": "sliding"}
    fold |= {"kda": "linear", "gdn": "linear", "lightning": "linear", "mamba": "mamba", "none": "none"}
    fold |= {"cross": "cross"}
    return Counter(fold.get(x.attention, x.attention) for x in metrics.layers if not x.mtp)


def expected_census(written: dict[str, int]) -> Counter[str]:
    out: Counter[str] = Counter()
    for name, count in written.items():
        key = name.lower()
        if "cross" in key:
            kind = "cross"
        elif "mamba" in key:
            kind = "mamba"
        elif any(w in key for w in ("sliding", "chunk", "local", "swa")):
            kind = "sliding"
        elif any(w in key for w in ("linear", "kda", "gdn", "delta", "lightning")):
            kind = "linear"
        elif any(w in key for w in ("mlp", "moe", "ffn", "no_attention", "none", "no_op")):
            kind = "none"
        else:
            kind = "full"
        out[kind] += count
    return out


def test_corpus_is_broad() -> None:
    types = {_load(m)[1].get("model_type") for m in MODELS}
    assert len(MODELS) >= 40, MODELS
    assert len(types) >= 25, sorted(map(str, types))


@pytest.mark.parametrize("model", MODELS)
def test_origin_is_recorded(model: str) -> None:
    _, source = _load(model)
    origin = source.get("origin") or {}
    assert source.get("hub_repo") and origin.get("repo") and origin.get("path"), source
    assert re.fullmatch(r"[0-9a-f]{7,40}", str(origin.get("commit", ""))), origin


@pytest.mark.parametrize("model", MODELS)
def test_unverified_exactly_where_expected(model: str) -> None:
    metrics = cached(model)
    if model in EXPECTED_UNVERIFIED:
        assert any(EXPECTED_UNVERIFIED[model] in r for r in metrics.unverified), metrics.unverified
        assert metrics.to_json()["unverified"] == list(metrics.unverified)
    else:
        assert metrics.unverified == (), f"{model}: unexpectedly unverified: {metrics.unverified}"


def _remote_only(model: str) -> bool:
    """Unverified only because transformers does not ship the model_type."""
    reasons = cached(model).unverified
    return EXPECTED_UNVERIFIED.get(model) == REMOTE_CODE and all(REMOTE_CODE in r for r in reasons)


def _verified(model: str) -> Metrics:
    metrics = cached(model)
    if metrics.unverified:
        assert model in EXPECTED_UNVERIFIED  # such figures are checked only for saying so
        assert _remote_only(model) or model not in VERIFIED, metrics.unverified
    return metrics


VERIFIED = [m for m in MODELS if EXPECTED_UNVERIFIED.get(m, REMOTE_CODE) == REMOTE_CODE]
EXACT_TOTALS = [
    m
    for m in VERIFIED
    if not size_label(_load(m)[1]) and KNOWN_DIFFERENCES.get(m, ("",))[0] != "total_params"
]


@pytest.mark.parametrize("model", [m for m in VERIFIED if size_label(_load(m)[1])])
def test_size_labels_name_the_right_class(model: str) -> None:
    """Only a name was published: the count must still be of that size (the oracle checks it exactly)."""
    figure = published((_load(model)[1].get("published") or {}).get("total_params"))
    assert figure is not None
    assert 0.75 * figure[0] <= cached(model).main_params <= 1.3 * figure[0]


@pytest.mark.parametrize("model", sorted(KNOWN_DIFFERENCES))
def test_known_differences_are_small(model: str) -> None:
    """Each documented difference stays within 2.5% of what was published."""
    source = _load(model)[1].get("published") or {}
    metrics = cached(model)
    key = KNOWN_DIFFERENCES[model][0]
    counted = {
        "total_params": (metrics.main_params, metrics.params.total),
        "active_params": (
            metrics.active_params,
            metrics.active_without_embeddings,
            metrics.active_without_embeddings_and_head,
        ),
    }[key]
    figure = published(source.get(key))
    assert figure is not None
    assert any(abs(c - figure[0]) <= 0.025 * figure[0] for c in counted), (model, key, counted)


@pytest.mark.parametrize("model", EXACT_TOTALS)
def test_total_parameters_within_published_precision(model: str) -> None:
    metrics = _verified(model)
    _, source = _load(model)
    figure = published((source.get("published") or {}).get("total_params"))
    if figure is None:
        assert metrics.params.total > 0
        return
    value, half_unit = figure
    counted = {"without MTP": metrics.main_params, "with MTP": metrics.params.total}
    tolerance = max(half_unit, 0.005 * value)  # publishers round to two or three figures
    assert any(abs(c - value) <= tolerance for c in counted.values()), (
        f"{model}: published {value:,.0f} ± {half_unit:,.0f}, counted {counted}"
    )


@pytest.mark.parametrize(
    "model", [m for m in VERIFIED if KNOWN_DIFFERENCES.get(m, ("",))[0] != "active_params"]
)
def test_active_parameters_within_published_precision(model: str) -> None:
    metrics = _verified(model)
    _, source = _load(model)
    figure = published((source.get("published") or {}).get("active_params"))
    if figure is None:
        assert (
            metrics.active_params
            == metrics.params.total
            - sum(
                metrics.params.by_component.get(c, 0) for c in ("vision_tower", "multimodal_projector", "mtp")
            )
            or metrics.experts["moe_layers"]
        )
        return
    value, half_unit = figure
    # publishers differ in what they count as active: every token's embedding row and head or not
    conventions = {
        "all": metrics.active_params,
        "without embeddings": metrics.active_without_embeddings,
        "without embeddings and head": metrics.active_without_embeddings_and_head,
    }
    text, layers = metrics.cfg.text, [x for x in metrics.layers if not x.mtp]
    per_layer = (text.get("vocab_size_per_layer_input") or 0) * (text.get("hidden_size_per_layer_input") or 0)
    if per_layer:  # Gemma's "effective" parameters: all but the per-layer input embedding table
        conventions["without per-layer embeddings"] = metrics.active_params - per_layer * len(layers)
    tolerance = max(half_unit, 0.01 * value)
    assert any(abs(c - value) <= tolerance for c in conventions.values()), (
        f"{model}: published {value:,.0f} ± {half_unit:,.0f}, counted {conventions}"
    )


@pytest.mark.parametrize("model", VERIFIED)
def test_layer_census(model: str) -> None:
    metrics = _verified(model)
    expected = (_load(model)[1].get("expected") or {}).get("layer_census")
    assert expected, f"{model}: source.yaml has no layer census"
    assert census(metrics) == expected_census(expected)


@pytest.mark.parametrize("model", VERIFIED)
def test_kv_bytes_per_token(model: str) -> None:
    metrics = _verified(model)
    expected = (_load(model)[1].get("expected") or {}).get("kv_bytes_per_token_bf16")
    if model in KV_CORRECTIONS:
        expected = KV_CORRECTIONS[model][0]
    assert isinstance(expected, int), f"{model}: source.yaml has no KV figure"
    assert metrics.kv.kv_dtype == "bf16"
    assert metrics.kv.bytes_per_token == expected
