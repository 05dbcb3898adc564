"""Metrics options (``MetricsOptions``) as people write them (a baseline's ``metrics_options``, the
CLI's flags): the one validation, and the entry a recording writes.

It lives with the metrics, not the baselines, so that ``hubdiff metrics`` checks its flags without
importing YAML and the baseline machinery (a tenth of a warm run).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .kv import KV_DTYPE_BYTES, PROFILES

CONFIG_READERS = ("auto", "keys")


@dataclass(frozen=True)
class MetricsOptions:
    profile: str = "naive"
    kv_dtype: str | None = None  # default: the model dtype
    context: int | None = None  # default: max_position_embeddings
    count_mtp: bool = False
    indexer_pooling: str = "auto"  # "auto" (as index_kpool_compress says), "stored" or "scan"
    config_only: bool = False
    config_reader: str = "auto"  # "auto": transformers' configuration classes first; "keys": hubdiff's own
    witness: bool = False  # also build transformers' class on the meta device and compare (``witness``)


OPTION_KEYS = (
    "profile",
    "kv_dtype",
    "context",
    "count_mtp",
    "indexer_pooling",
    "config_reader",
)  # MetricsOptions but config_only
INDEXER_POOLING = ("auto", "stored", "scan")


class OptionError(ValueError):
    """A metrics option that cannot be used; ``key`` names it, so each front end can say where."""

    def __init__(self, key: str | None, problem: str) -> None:
        super().__init__(problem)
        self.key = key


def parse_options(raw: Any) -> MetricsOptions:
    """The one validation of metrics options, for a baseline's ``metrics_options`` and the CLI's flags alike."""
    if not isinstance(raw, dict):
        raise OptionError(None, "must be a mapping")
    bad = set(raw) - set(OPTION_KEYS)
    if bad:
        raise OptionError(sorted(bad)[0], f"unknown option (known: {', '.join(OPTION_KEYS)})")
    values = {k: v for k, v in raw.items() if v is not None}
    if "kv_dtype" in values:
        values["kv_dtype"] = kv_dtype_of(values["kv_dtype"])
        if values["kv_dtype"] is None:
            del values["kv_dtype"]
    if "profile" in values and values["profile"] not in PROFILES:
        raise OptionError("profile", f"unknown profile (known: {', '.join(PROFILES)})")
    context = values.get("context")
    if "context" in values and (isinstance(context, bool) or not isinstance(context, int) or context <= 0):
        raise OptionError("context", "must be a positive whole number of tokens")
    if "count_mtp" in values and not isinstance(values["count_mtp"], bool):
        raise OptionError("count_mtp", "must be true or false")
    if "indexer_pooling" in values and values["indexer_pooling"] not in INDEXER_POOLING:
        raise OptionError(
            "indexer_pooling", f"must be {', '.join(INDEXER_POOLING[:-1])} or {INDEXER_POOLING[-1]}"
        )
    if "config_reader" in values and values["config_reader"] not in CONFIG_READERS:
        raise OptionError("config_reader", f"must be one of {', '.join(CONFIG_READERS)}")
    return MetricsOptions(**values)


# vLLM's --kv-cache-dtype spellings (vllm/config/cache.py, CacheDType, read at 002f10e0) that are one
# element size: "auto" is the model's dtype; fp8 is fp8_e4m3, and e5m2 and Gaudi's fp8_inc are a byte too.
VLLM_KV_DTYPES = {
    "auto": None,
    "float32": "fp32",
    "float16": "fp16",
    "half": "fp16",
    "bfloat16": "bf16",
    "fp8_e4m3": "fp8",
    "fp8_e5m2": "fp8",
    "fp8_inc": "fp8",
}


# vLLM's --kv-cache-dtype spellings whose pages are not elements of one size: why each is refused, and
# the option that sizes what hubdiff can say of it.
VLLM_PACKED_KV = {
    "fp8_ds_mla": (
        "is vLLM's page for sparse MLA (FP8 latent, float32 scales, BF16 RoPE: 656 bytes per layer), "
        "not elements of one size: for sparse MLA, --profile vllm --kv-dtype fp8 sizes that page"
    ),
    "nvfp4": (
        "packs 4-bit values with an FP8 scale per 16 in a layout vLLM chooses per model, not elements of one "
        "size: --kv-dtype fp4 sizes the 4-bit values alone (half a byte an element; add 1/16 of a byte an "
        "element for the scales)"
    ),
}


def kv_dtype_of(text: object) -> str | None:
    """A KV dtype as hubdiff names it (None: the model's), from its own or vLLM's spelling.

    vLLM's packed layouts (fp8_ds_mla, nvfp4, the per-token-head and turboquant ones) carry scales in a
    layout of their own per model: refused by name rather than sized as plain elements."""
    name = str(text).strip().lower()
    if name in KV_DTYPE_BYTES:
        return name
    if name in VLLM_KV_DTYPES:
        return VLLM_KV_DTYPES[name]
    if name in VLLM_PACKED_KV:
        raise OptionError("kv_dtype", f"{name!r} {VLLM_PACKED_KV[name]}")
    known = ", ".join([*KV_DTYPE_BYTES, *VLLM_KV_DTYPES])
    raise OptionError("kv_dtype", f"unknown KV dtype {str(text)[:40]!r} (known: {known})")


def options_entry(options: MetricsOptions) -> dict[str, Any]:
    """Every option a figure depends on, so that ``check`` later measures exactly what was recorded
    (an option left out would fall back to a default the recording did not use)."""
    entry = {key: getattr(options, key) for key in OPTION_KEYS}
    return {k: v for k, v in entry.items() if v is not None}
