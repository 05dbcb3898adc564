"""The KV cache of a GGUF model as llama.cpp allocates it, from the header's metadata alone.

Origin of every rule: llama.cpp as vendored by llama-cpp-python 0.3.36 (PyPI sdist,
``vendor/llama.cpp``), the same tree ``ggml_types`` cites. File by file:

- ``src/llama-kv-cache.cpp``, ``llama_kv_cache::llama_kv_cache``: a layer's K is a ggml tensor of
  ``type_k`` with ``n_embd_k_gqa(il)`` x ``kv_size`` x ``n_stream`` elements, its V likewise with
  ``n_embd_v_gqa(il)`` (flash attention on: V not transposed, so not padded to the largest layer's),
  and no V at all when ``hparams.is_mla()`` (``has_v = !is_mla``: the MLA cache holds K only).
  ``size_k_bytes``/``size_v_bytes`` are Σ ``ggml_nbytes``: a row of n elements is n / block x block
  bytes (``ggml_row_size``), which is what is computed here, exact to the byte.
- ``src/llama-hparams.cpp``: ``n_embd_k_gqa(il) = n_embd_head_k(il) x n_head_kv(il)`` (``_v`` likewise);
  ``n_embd_head_k(il)`` is the SWA head size on a sliding-window layer; ``set_swa_pattern``:
  a layer is SWA when ``n_pattern == 0 or il % n_pattern < n_pattern - 1`` (``dense_first``:
  ``il % n_pattern != 0``); ``n_layer() = n_layer_all - n_layer_nextn``; ``is_mla()`` when both MLA head
  sizes are set; ``n_embd_r() = (d_conv - 1) x (d_inner + 2 x n_group x d_state)`` and
  ``n_embd_s() = d_state x d_inner`` (Mamba's conv and ssm states).
- ``src/llama-model.cpp``, ``load_hparams``: ``{arch}.block_count``; ``head_count`` and
  ``head_count_kv`` scalar or per-layer array (an array must have ``block_count`` entries;
  ``head_count_kv`` defaults to ``head_count``); ``key_length``/``value_length`` default to
  ``embedding_length / head_count(0)``, ``key_length_swa``/``value_length_swa`` to those;
  ``load_swa_pattern``: ``{arch}.attention.sliding_window_pattern`` as a per-layer bool array, else as
  a scalar ``n_pattern``, else the architecture's default. ``create_memory``: which architectures have
  no memory, which have their own cache types, the recurrent and hybrid filters, and that MTP
  (``nextn``) layers are filtered out of the main context's cache.
- ``src/models/*.cpp`` (``load_arch_hparams``): each sliding-window architecture's window and pattern
  (``SWA_RULES`` below), DeepSeek-2's MLA keys, the hybrids' recurrent layers.
- ``src/llama-kv-cache-iswa.cpp``: the SWA cache has ``PAD(min(kv_size, n_swa x (unified ? n_seq : 1)
  + n_ubatch), 256)`` cells, or ``kv_size`` with ``swa_full``.
- ``src/llama-context.cpp``: ``n_ctx`` (0: the training context) is padded to 256; without a unified
  cache ``n_ctx_seq = PAD(n_ctx / n_seq, 256)`` and there is a stream per sequence; the defaults
  (``n_ubatch`` 512, ``n_seq_max`` 1, K and V f16, flash attention auto) and ``common/common.h``'s
  ``swa_full = false`` (what llama-cli and llama-server use).
- ``src/llama-memory-recurrent.cpp``: per recurrent layer an F32 ``r`` of ``n_embd_r`` and an F32 ``s``
  of ``n_embd_s``, each ``max(1, n_seq) x (1 + n_rs_seq)`` rows (``n_rs_seq`` defaults to 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._source.ggml_types import BY_NAME, GGMLType

# llama.cpp's --cache-type-k/-v choices (common/arg.cpp kv_cache_types), by the names hubdiff takes
KV_TYPES = ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1")
_SPELLINGS = {"fp16": "f16", "float16": "f16", "half": "f16", "fp32": "f32", "float32": "f32", "auto": "f16"}
_SPELLINGS |= {"bfloat16": "bf16"}

DEFAULT_UBATCH = 512
PAD_CELLS = 256  # GGML_PAD(n_ctx, 256) in llama_context; the SWA cache is padded to 256 too
MAX_LAYERS = 512  # LLAMA_MAX_LAYERS (llama-hparams.h): llama.cpp refuses a block_count above it

# architectures llama.cpp gives no memory (create_memory: res = nullptr)
NO_MEMORY = frozenset(
    {
        "bert",
        "jina-bert-v2",
        "jina-bert-v3",
        "nomic-bert",
        "nomic-bert-moe",
        "neo-bert",
        "eurobert",
        "wavtokenizer-dec",
        "modern-bert",
        "gemma-embedding",
        "dream",
        "llada",
        "llada-moe",
        "rnd1",
    }
)
# architectures with a cache of their own kind (indexer caches, layer reuse, KDA or RWKV states ...):
# hubdiff does not model them and says so rather than give a figure that is not llama.cpp's
OWN_CACHE = frozenset(
    {
        "minimax-m3",
        "glm-dsa",
        "deepseek32",
        "glm5-next",
        "hy_v4",
        "dots3note",
        "deepseek4",
        "dflash",
        "gemma3n",
        "gemma4",
        "gemma4-assistant",
        "qwen4exp",
        "kimi-linear",
        "kimi-k3",
        "bailingmoe3",
        "lfm2",
        "lfm2moe",
        "plamo2",
        "minimax-01",
        "rwkv6",
        "rwkv6qwen2",
        "rwkv7",
        "arwkv7",
        "graniteswitch",  # its router layer is attended though it is counted as a nextn layer
    }
)
RECURRENT = frozenset({"mamba", "mamba2"})  # llm_arch_is_recurrent, less RWKV (OWN_CACHE)
HYBRID = frozenset(
    {
        "jamba",
        "granitehybrid",
        "nemotron_h",
        "nemotron_h_moe",
        "falcon-h1",
        "qwen3next",
        "qwen35",
        "qwen35moe",
    }
)
MLA = frozenset({"deepseek2"})  # reads key_length_mla/value_length_mla and has the plain cache


@dataclass(frozen=True)
class SWARule:
    """How an architecture's ``load_arch_hparams`` sets its sliding window (src/models/NAME.cpp)."""

    pattern: int  # load_swa_pattern's default n_pattern
    dense_first: bool = False
    window: int | None = None  # the default n_swa (None: the key is required)
    needs_key: bool = False  # SWA only when {arch}.attention.sliding_window is present and > 0
    forced_window: int | None = None  # n_swa set in code, the key ignored (llama4's 8192 chunks)
    only_layers: int | None = None  # SWA only for this n_layer (exaone4: the 32B)
    chunked: bool = False


SWA_RULES: dict[str, SWARule] = {
    "gemma2": SWARule(2, window=4096),  # gemma2.cpp
    "gemma3": SWARule(6, needs_key=True),  # gemma3.cpp
    "cohere2": SWARule(4),  # cohere2.cpp
    "gpt-oss": SWARule(2),  # openai-moe.cpp
    "exaone4": SWARule(4, window=4096, only_layers=64),  # exaone4.cpp
    "llama4": SWARule(4, forced_window=8192, chunked=True),  # llama4.cpp: 3 chunked, 1 full
}
NO_SWA = frozenset({"phi3"})  # phi3.cpp: "Phi SWA is currently disabled"


class KVUsage(ValueError):
    """A --kv-dtype llama.cpp has no cache type for."""


def kv_type(name: str | None) -> GGMLType:
    """The ggml type of a --kv-dtype (llama.cpp's names; fp16/fp32/bfloat16/auto read as f16/f32/bf16)."""
    text = (name or "f16").lower()
    text = _SPELLINGS.get(text, text)
    if text not in KV_TYPES:
        raise KVUsage(f"{name!r}: a GGUF's KV cache is one of llama.cpp's cache types: {', '.join(KV_TYPES)}")
    return BY_NAME[text.upper()]


@dataclass(frozen=True)
class KVSettings:
    kv_dtype: str = "f16"
    n_ctx: int | None = None  # None: the model's context_length (llama.cpp's n_ctx 0)
    n_seq: int = 1
    n_ubatch: int = DEFAULT_UBATCH
    swa_full: bool = False
    unified: bool = False


@dataclass(frozen=True)
class LayerKV:
    index: int
    kind: str  # "full", "swa", "recurrent", "full+recurrent", "none" (no cache), "mtp" (filtered)
    k_elements: int = 0  # a cell's K elements (n_embd_k_gqa)
    v_elements: int = 0  # a cell's V elements (0 for MLA)
    k_bytes: int = 0  # a cell's K bytes in type_k
    v_bytes: int = 0
    state_bytes: int = 0  # recurrent r + s bytes a sequence (F32)


@dataclass
class KVCache:
    """The cache as llama.cpp would allocate it; ``reason`` says why not when it is not computed."""

    architecture: str | None
    settings: KVSettings
    kv_type: str
    reason: str | None = None
    layers: list[LayerKV] = field(default_factory=list)
    n_ctx: int = 0  # the context as llama.cpp pads it
    cells: int = 0  # kv_size: cells of the full-attention cache (a stream)
    swa_cells: int = 0
    n_swa: int = 0
    streams: int = 1
    mla: bool = False
    kv_lora_rank: int | None = None
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def computed(self) -> bool:
        return self.reason is None and not self.problems

    def _sum(self, kinds: tuple[str, ...], what: str) -> int:
        return sum(getattr(layer, what) for layer in self.layers if layer.kind in kinds)

    @property
    def bytes_per_token(self) -> int:
        """K + V bytes a token adds to the full-attention layers' cache (a cell of each)."""
        return self._sum(("full", "full+recurrent"), "k_bytes") + self._sum(
            ("full", "full+recurrent"), "v_bytes"
        )

    @property
    def swa_bytes_per_cell(self) -> int:
        return self._sum(("swa",), "k_bytes") + self._sum(("swa",), "v_bytes")

    @property
    def k_bytes(self) -> int:
        full = self._sum(("full", "full+recurrent"), "k_bytes") * self.cells
        return (full + self._sum(("swa",), "k_bytes") * self.swa_cells) * self.streams

    @property
    def v_bytes(self) -> int:
        full = self._sum(("full", "full+recurrent"), "v_bytes") * self.cells
        return (full + self._sum(("swa",), "v_bytes") * self.swa_cells) * self.streams

    @property
    def kv_bytes(self) -> int:
        return self.k_bytes + self.v_bytes

    @property
    def state_bytes_per_sequence(self) -> int:
        return self._sum(("recurrent", "full+recurrent"), "state_bytes")

    @property
    def state_bytes(self) -> int:
        return self.state_bytes_per_sequence * max(1, self.settings.n_seq)

    def count(self, *kinds: str) -> int:
        return sum(1 for layer in self.layers if layer.kind in kinds)

    def assumptions(self) -> list[str]:
        s = self.settings
        ctx = f"n_ctx {s.n_ctx:,}" if s.n_ctx else "n_ctx = context_length"
        out = [
            f"K and V {self.kv_type.lower()}",
            f"{ctx} padded to {PAD_CELLS} ({self.n_ctx:,})",
            f"n_seq {s.n_seq}",
            f"n_ubatch {s.n_ubatch}",
            "flash attention on (V not transposed)",
        ]
        if self.n_swa:
            out.append("swa_full" if s.swa_full else "swa_full off (llama-cli/llama-server default)")
        if s.n_seq > 1:
            out.append("unified cache" if s.unified else "a stream per sequence (kv_unified off)")
        return out

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "source": "llama.cpp llama_kv_cache rules (llama-cpp-python 0.3.36 vendor/llama.cpp)",
            "kv_type": self.kv_type.lower(),
            "assumptions": {
                "kv_dtype": self.kv_type.lower(),
                "n_ctx": self.n_ctx,
                "n_ctx_asked": self.settings.n_ctx,
                "n_seq": self.settings.n_seq,
                "n_ubatch": self.settings.n_ubatch,
                "swa_full": self.settings.swa_full,
                "kv_unified": self.settings.unified,
                "flash_attention": True,
            },
        }
        if self.reason is not None:
            out["not_computed"] = self.reason
            return out
        out |= {
            "bytes_per_token": self.bytes_per_token,
            "cells": self.cells,
            "layers_full": self.count("full", "full+recurrent"),
            "layers_swa": self.count("swa"),
            "layers_recurrent": self.count("recurrent", "full+recurrent"),
            "layers_without_cache": self.count("none", "mtp"),
            "k_bytes": self.k_bytes,
            "v_bytes": self.v_bytes,
            "kv_bytes": self.kv_bytes,
            "mla": self.mla,
            "notes": list(self.notes),
            "problems": list(self.problems),
        }
        if self.kv_lora_rank is not None:
            out["kv_lora_rank"] = self.kv_lora_rank
        if self.n_swa:
            out |= {
                "n_swa": self.n_swa,
                "swa_cells": self.swa_cells,
                "swa_bytes_per_cell": self.swa_bytes_per_cell,
            }
        if self.count("recurrent", "full+recurrent"):
            out |= {
                "state_bytes_per_sequence": self.state_bytes_per_sequence,
                "state_bytes": self.state_bytes,
            }
        return out


def _pad(n: int, to: int) -> int:
    return (n + to - 1) // to * to


def _uint(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


class _Meta:
    """The metadata read as llama.cpp's loader reads it: scalar or per-layer array, with problems."""

    def __init__(self, metadata: dict[str, Any], arch: str, n_layer_all: int) -> None:
        self.m, self.arch, self.n = metadata, arch, n_layer_all
        self.problems: list[str] = []

    def key(self, name: str) -> str:
        return f"{self.arch}.{name}"

    def has(self, name: str) -> bool:
        return self.key(name) in self.m

    def scalar(self, name: str, default: int | None = None) -> int | None:
        value = self.m.get(self.key(name))
        if value is None:
            return default
        number = _uint(value)
        if number is None:
            self.problems.append(f"{self.key(name)} is {value!r}, not a whole number")
            return default
        return number

    def per_layer(self, name: str, default: list[int]) -> list[int]:
        """get_key_or_arr: a scalar for every layer, or an array of exactly block_count entries."""
        value = self.m.get(self.key(name))
        if value is None:
            return default
        if isinstance(value, list):
            if len(value) != self.n:
                self.problems.append(
                    f"{self.key(name)} has {len(value)} entries; llama.cpp wants block_count ({self.n})"
                )
                return default
            numbers = [_uint(v) if not isinstance(v, bool) else int(v) for v in value]
            if any(v is None for v in numbers):
                self.problems.append(f"{self.key(name)} holds a value that is not a whole number")
                return default
            return [int(v) for v in numbers if v is not None]
        number = _uint(value) if not isinstance(value, bool) else int(value)
        if number is None:
            self.problems.append(f"{self.key(name)} is {value!r}, not a whole number")
            return default
        return [number] * self.n


def kv_cache(metadata: dict[str, Any], settings: KVSettings | None = None) -> KVCache:
    """The KV cache (and recurrent state) llama.cpp allocates for a model with this metadata."""
    settings = settings or KVSettings()
    kind = kv_type(settings.kv_dtype)
    arch_value = metadata.get("general.architecture")
    arch = arch_value if isinstance(arch_value, str) else None
    out = KVCache(arch, settings, kind.name)
    if arch is None:
        out.reason = "no general.architecture"
        return out
    if arch in NO_MEMORY:
        out.reason = (
            f"{arch}: llama.cpp keeps no KV cache for this architecture (an encoder or diffusion model)"
        )
        return out
    if arch in OWN_CACHE:
        out.reason = (
            f"{arch}: llama.cpp gives this architecture a cache of its own kind (llama-model.cpp "
            "create_memory); hubdiff does not model it"
        )
        return out
    n_layer_all = _uint(metadata.get(f"{arch}.block_count"))
    if not n_layer_all:
        out.reason = f"no {arch}.block_count"
        return out
    if n_layer_all > MAX_LAYERS:
        out.reason = f"{arch}.block_count {n_layer_all:,} is more than llama.cpp's {MAX_LAYERS} layers"
        return out
    meta = _Meta(metadata, arch, n_layer_all)
    ctx_train = meta.scalar("context_length")
    asked = settings.n_ctx if settings.n_ctx else ctx_train
    if not asked:
        out.reason = f"no {arch}.context_length and no --context"
        return out
    # llama_context: n_ctx padded to 256; a stream per sequence unless unified
    n_seq = max(1, settings.n_seq)
    out.n_ctx = _pad(asked, PAD_CELLS)
    out.cells = out.n_ctx if settings.unified else _pad(out.n_ctx // n_seq, PAD_CELLS)
    out.streams = 1 if settings.unified else n_seq

    n_nextn = meta.scalar("nextn_predict_layers", 0) or 0
    if n_nextn > n_layer_all:
        out.reason = f"{arch}.nextn_predict_layers {n_nextn} is more than block_count {n_layer_all}"
        return out
    n_layer = n_layer_all - n_nextn
    n_embd = meta.scalar("embedding_length", 0) or 0
    n_head = meta.per_layer("attention.head_count", [0] * n_layer_all)
    n_head_kv = meta.per_layer("attention.head_count_kv", list(n_head))
    n_ff = meta.per_layer("feed_forward_length", [0] * n_layer_all)
    head_k = head_v = 0
    if n_head[0] > 0:
        head_k = meta.scalar("attention.key_length", n_embd // n_head[0]) or 0
        head_v = meta.scalar("attention.value_length", n_embd // n_head[0]) or 0
    head_k_swa = meta.scalar("attention.key_length_swa", head_k) or 0
    head_v_swa = meta.scalar("attention.value_length_swa", head_v) or 0

    if arch in MLA and meta.scalar("attention.key_length_mla") and meta.scalar("attention.value_length_mla"):
        out.mla = True
        out.kv_lora_rank = meta.scalar("attention.kv_lora_rank")

    is_swa = _swa_layers(meta, n_layer, out)
    attn, recr = _recurrent_layers(meta, n_layer, n_head_kv, n_ff)
    state = 0
    if any(recr):
        state = _state_bytes(meta, out)

    for il in range(n_layer_all):
        has_attn = attn[il]
        if has_attn and n_nextn > 0 and n_layer > 0 and il >= n_layer and arch not in HYBRID:
            out.layers.append(LayerKV(il, "mtp"))  # create_memory filters nextn layers from the main cache
            continue
        swa = is_swa[il]
        k_el = (head_k_swa if swa else head_k) * n_head_kv[il]
        v_el = 0 if out.mla else (head_v_swa if swa else head_v) * n_head_kv[il]
        k_b = _row(kind, k_el, "K", il, out) if has_attn else 0
        v_b = _row(kind, v_el, "V", il, out) if has_attn else 0
        if has_attn and recr[il]:
            out.layers.append(LayerKV(il, "full+recurrent", k_el, v_el, k_b, v_b, state))
        elif has_attn:
            out.layers.append(LayerKV(il, "swa" if swa else "full", k_el, v_el, k_b, v_b))
        elif recr[il]:
            out.layers.append(LayerKV(il, "recurrent", state_bytes=state))
        else:
            out.layers.append(LayerKV(il, "none"))
    if out.n_swa:
        window = out.n_swa * (n_seq if settings.unified else 1) + settings.n_ubatch
        out.swa_cells = out.cells if settings.swa_full else _pad(min(out.cells, window), PAD_CELLS)
    out.problems += meta.problems
    if out.mla:
        out.notes.append(
            f"MLA: K only, {head_k} a token a layer (kv_lora_rank {out.kv_lora_rank} + the rope part); no V cache"
        )
    if n_nextn and arch not in HYBRID:
        out.notes.append(f"{n_nextn} MTP (nextn) layer(s) not in the main context's cache")
    return out


def _row(kind: GGMLType, elements: int, what: str, il: int, out: KVCache) -> int:
    if elements % kind.block_size:
        out.problems.append(
            f"layer {il}: a {what} row of {elements} is not whole {kind.name} blocks of {kind.block_size} "
            "(llama.cpp cannot make this cache)"
        )
        return 0
    return kind.nbytes(elements)


def _swa_layers(meta: _Meta, n_layer: int, out: KVCache) -> list[bool]:
    """Which layers use the sliding window, and n_swa, as the architecture's load_arch_hparams sets them."""
    none = [False] * meta.n
    rule = SWA_RULES.get(meta.arch)
    has_window_key = meta.has("attention.sliding_window")
    if rule is None:
        if (
            has_window_key
            and meta.arch not in NO_SWA
            and (meta.scalar("attention.sliding_window", 0) or 0) > 0
        ):
            out.notes.append(
                f"{meta.key('attention.sliding_window')} is given, but llama.cpp's {meta.arch} does not use a "
                "sliding window that hubdiff knows of: every layer is counted as full attention"
            )
        return none
    if rule.only_layers is not None and n_layer != rule.only_layers:
        return none
    window = meta.scalar("attention.sliding_window", rule.window)
    if rule.needs_key and not window:
        return none
    if rule.forced_window is not None:
        if has_window_key and window == 0:
            return none
        window = rule.forced_window
    if not window:
        out.problems.append(
            f"no {meta.key('attention.sliding_window')}: llama.cpp requires it for {meta.arch}"
        )
        return none
    out.n_swa = window
    pattern = meta.m.get(meta.key("attention.sliding_window_pattern"))
    if isinstance(pattern, list):
        if len(pattern) != meta.n:
            meta.problems.append(
                f"{meta.key('attention.sliding_window_pattern')} has {len(pattern)} entries; "
                f"llama.cpp wants block_count ({meta.n})"
            )
            return none
        layers = [bool(v) for v in pattern]
    else:
        n_pattern = _uint(pattern) if pattern is not None else rule.pattern
        if n_pattern is None:
            meta.problems.append(f"{meta.key('attention.sliding_window_pattern')} is {pattern!r}")
            return none
        layers = [
            n_pattern == 0 or (il % n_pattern != 0 if rule.dense_first else il % n_pattern < n_pattern - 1)
            for il in range(n_layer)
        ] + [False] * (meta.n - n_layer)
    if rule.chunked:
        out.notes.append(f"chunked attention: chunks of {window} held in the window cache")
    return layers


def _recurrent_layers(
    meta: _Meta, n_layer: int, n_head_kv: list[int], n_ff: list[int]
) -> tuple[list[bool], list[bool]]:
    """(has an attention cache, has a recurrent state) per layer: each hybrid's layer filters."""
    n, arch = meta.n, meta.arch
    everything, nothing = [True] * n, [False] * n
    if arch in RECURRENT:
        return nothing, everything
    if arch not in HYBRID:
        return everything, nothing
    if arch == "falcon-h1":  # every layer both attends and keeps a state
        return everything, everything
    if arch in ("jamba", "granitehybrid"):  # recurrent iff n_head_kv == 0
        recr = [n_head_kv[il] == 0 if il < n_layer else False for il in range(n)]
        return [not r for r in recr], recr
    if arch in ("nemotron_h", "nemotron_h_moe"):  # recurrent iff no KV heads and no FFN; MLP layers neither
        recr = [il < n_layer and n_head_kv[il] == 0 and n_ff[il] == 0 for il in range(n)]
        attn = [not recr[il] and n_ff[il] == 0 for il in range(n)]
        return attn, recr
    # qwen3next, qwen35, qwen35moe: attention.recurrent_layers, else every full_attention_interval-th attends
    given = meta.m.get(meta.key("attention.recurrent_layers"))
    if isinstance(given, list) and len(given) == n:
        recr = [bool(v) for v in given]
    else:
        interval = meta.scalar("full_attention_interval", 4) or 4
        recr = [il < n_layer and (il + 1) % interval != 0 for il in range(n)]
    attn = [il < n_layer and not recr[il] for il in range(n)]
    return attn, [il < n_layer and recr[il] for il in range(n)]


def _state_bytes(meta: _Meta, out: KVCache) -> int:
    """F32 r (conv) and s (ssm) states of one recurrent layer, one sequence (llama_memory_recurrent)."""
    d_conv = meta.scalar("ssm.conv_kernel")
    d_inner = meta.scalar("ssm.inner_size")
    d_state = meta.scalar("ssm.state_size")
    n_group = meta.scalar("ssm.group_count", 0) or 0
    if d_conv is None or d_inner is None or d_state is None:
        meta.problems.append(
            f"recurrent layers without {meta.key('ssm.conv_kernel')}, inner_size and state_size"
        )
        return 0
    n_embd_r = (d_conv - 1 if d_conv > 0 else 0) * (d_inner + 2 * n_group * d_state)
    n_embd_s = d_state * d_inner
    out.notes.append(
        f"recurrent state a layer: r {n_embd_r:,} + s {n_embd_s:,} F32 values a sequence, whatever the context"
    )
    return (n_embd_r + n_embd_s) * 4


def kv_text(cache: KVCache) -> list[str]:
    """The cache for ``hubdiff metrics`` (indented two spaces under the variant)."""
    lines = [f"  KV cache (llama.cpp): {'; '.join(cache.assumptions())}"]
    if cache.reason is not None:
        return [*lines, f"    not computed: {cache.reason}"]
    full = cache.count("full", "full+recurrent")
    if full:
        lines.append(
            f"    {cache.bytes_per_token:,} bytes a token ({full} full-attention layer(s), "
            f"{cache.cells:,} cells{' a stream' if cache.streams > 1 else ''})"
        )
    if cache.n_swa:
        lines.append(
            f"    sliding window {cache.n_swa:,}: {cache.count('swa')} layer(s), {cache.swa_bytes_per_cell:,} bytes a "
            f"cell x {cache.swa_cells:,} cells"
        )
    lines.append(
        f"    at n_ctx {cache.n_ctx:,}: K {cache.k_bytes:,} + V {cache.v_bytes:,} = {cache.kv_bytes:,} bytes "
        f"({cache.kv_bytes / 2**20:,.2f} MiB)"
    )
    if cache.count("recurrent", "full+recurrent"):
        lines.append(
            f"    recurrent state: {cache.state_bytes_per_sequence:,} bytes a sequence "
            f"({cache.count('recurrent', 'full+recurrent')} layer(s))"
        )
    idle = cache.count("none", "mtp")
    if idle:
        lines.append(f"    {idle} layer(s) without a cache")
    lines += [f"    note: {n}" for n in cache.notes]
    lines += [f"    PROBLEM: {p}" for p in cache.problems]
    return lines
