"""KV cache per token and recurrent state per sequence, split as serving engines split them.

Two profiles:

- ``naive``: stored elements x the KV dtype's bytes, nothing else (the arithmetic of a published
  header-level analysis). MLA stores ``kv_lora_rank + qk_rope_head_dim`` per layer; full attention
  ``kv_heads x (head_dim + v_head_dim)`` (keys and values, with each layer's own head counts); a DSA indexer ``index_head_dim`` keys in the layers that run their own
  indexer (divided by ``index_kpool`` when pooling shrinks what is stored).
- ``vllm``: vLLM's layouts (0.33.0). Sparse MLA (DSA) in FP8 stores the 512-wide latent in FP8, one
  float32 scale per 128 values and the RoPE part in BF16: 512 + 16 + 64 x 2 = 656 bytes per layer per
  token (fp8_ds_mla: v1/attention/backends/mla/flashmla_sparse.py); dense MLA in FP8 stores latent and
  RoPE as plain FP8 elements (576 bytes for DeepSeek-V3). Indexer keys in FP8 carry a float32 scale per
  128 values (128 + 4 = 132 bytes). Other attention: as naive.

Recurrent layers hold a fixed state per sequence: KDA's recurrent state is float32 in the engines
(heads x head_dim x head_dim x 4 bytes) plus a short-convolution state ((kernel - 1) x 3 x heads x
head_dim in the model dtype); Gated DeltaNet uses the model dtype for both (vLLM's default); Mamba's
SSM state takes ``mamba_ssm_cache_dtype`` when the config names one (Nemotron-H: float32), else the
model dtype; lightning (linear) attention holds a float32 heads x head_dim x head_dim matrix.
Sliding-window layers are capped at their window. MTP layers are not counted unless asked.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .config import ArchConfig
from .layers import LayerInfo, block_kv_heads

KV_DTYPE_BYTES = {
    "fp32": 4.0,
    "f32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "f16": 2.0,
    "fp8": 1.0,
    "f8": 1.0,
    "int8": 1.0,
    "fp4": 0.5,
}
PROFILES = ("naive", "vllm")
_MODEL_DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}


@dataclass(frozen=True)
class KVGroup:
    name: str  # "mla_latent", "dsa_indexer_keys", "full_attention", "sliding_window", "compressed"
    layers: int
    bytes_per_layer: float  # per token
    formula: str
    window_tokens: int | None = None  # a sliding window stores at most this many tokens

    @property
    def bytes_per_token(self) -> float:
        return self.layers * self.bytes_per_layer


@dataclass(frozen=True)
class StateGroup:
    name: str  # "kda_state", "kda_conv", "gdn_state", ...
    layers: int
    bytes_per_layer: int
    dtype: str
    formula: str

    @property
    def bytes_per_sequence(self) -> int:
        return self.layers * self.bytes_per_layer


@dataclass(frozen=True)
class KVReport:
    profile: str
    kv_dtype: str
    context_tokens: int
    groups: tuple[KVGroup, ...]
    states: tuple[StateGroup, ...]
    assumptions: tuple[str, ...] = field(default=())

    @property
    def bytes_per_token(self) -> int:
        """Bytes every further token adds (sliding windows counted until they are full)."""
        return round(sum(g.bytes_per_token for g in self.groups if g.window_tokens is None))

    @property
    def window_bytes_per_token(self) -> int:
        return round(sum(g.bytes_per_token for g in self.groups if g.window_tokens is not None))

    @property
    def state_bytes_per_sequence(self) -> int:
        return sum(s.bytes_per_sequence for s in self.states)

    def bytes_at(self, tokens: int) -> int:
        total = sum(
            g.bytes_per_token * (tokens if g.window_tokens is None else min(tokens, g.window_tokens))
            for g in self.groups
        )
        return round(total) + self.state_bytes_per_sequence

    @property
    def bytes_at_context(self) -> int:
        return self.bytes_at(self.context_tokens)


def kv_report(
    cfg: ArchConfig,
    layers: list[LayerInfo],
    *,
    profile: str = "naive",
    kv_dtype: str | None = None,
    context: int | None = None,
    count_mtp: bool = False,
    indexer_pooling: str = "auto",
) -> KVReport:
    # imported when figures are computed, not when cached ones are read
    from .estimate import facts, layer_heads
    from .estimate_facts import mla_layer_number, mla_rope_dim

    if profile not in PROFILES:
        raise ValueError(f"unknown KV profile {profile!r} (known: {', '.join(PROFILES)})")
    model_bytes = _MODEL_DTYPE_BYTES.get(cfg.dtype.replace("torch.", ""), 2)
    dtype = (kv_dtype or {4: "fp32", 2: "bf16"}.get(model_bytes, "bf16")).lower()
    if dtype not in KV_DTYPE_BYTES:
        raise ValueError(f"unknown KV dtype {dtype!r} (known: {', '.join(KV_DTYPE_BYTES)})")
    b = KV_DTYPE_BYTES[dtype]
    counted = [layer for layer in layers if count_mtp or not layer.mtp]
    assumptions = [
        f"profile {profile}",
        f"KV dtype {dtype} ({b:g} bytes per element)",
        f"{'MTP layers counted' if count_mtp else 'MTP layers not counted'}"
        + (f" ({sum(1 for x in layers if x.mtp)} in the checkpoint)" if any(x.mtp for x in layers) else ""),
    ]
    groups: list[KVGroup] = []
    by_kind: dict[str, list[LayerInfo]] = {}
    for layer in counted:
        by_kind.setdefault(layer.attention, []).append(layer)

    kv_lora = cfg.number("kv_lora_rank", default=0) or 0
    rope = cfg.number("qk_rope_head_dim", default=0) or 0
    mla_layers = by_kind.get("mla", []) + by_kind.get("dsa", [])
    per: float
    by_rope: dict[int, int] = {}  # NoPE layers of Mistral Large 4 cache no rope slice
    for layer in mla_layers:
        by_rope[mla_rope_dim(cfg, layer)] = by_rope.get(mla_rope_dim(cfg, layer), 0) + 1
    for rope, count in sorted(by_rope.items(), reverse=True):
        if profile == "vllm" and dtype in ("fp8", "f8") and by_kind.get("dsa"):  # fp8_ds_mla
            per = kv_lora + (kv_lora // 128) * 4 + rope * 2
            formula = f"{kv_lora} fp8 + {kv_lora // 128} × 4 scale + {rope} × 2 rope"
        else:
            per = (kv_lora + rope) * b
            formula = f"({kv_lora} + {rope}) × {b:g}"
        sublayers = facts(cfg)[0].sublayers  # LongCat-Flash: two attention sublayers a layer, a latent each
        groups.append(KVGroup("mla_latent", count * sublayers, per, formula))
    own_indexer = [x for x in by_kind.get("dsa", []) if x.indexer == "own"]
    if own_indexer:
        head = cfg.number("index_head_dim", default=0) or 0
        pool = cfg.number("index_kpool", default=1) or 1
        compress = cfg.get("index_kpool_compress")
        pooled = pool > 1 and (
            indexer_pooling == "stored" or (indexer_pooling == "auto" and compress is not False)
        )
        elements: float = head / pool if pooled else head
        if pool > 1:
            assumptions.append(
                f"indexer key pooling (index_kpool {pool}) "
                + ("shrinks the stored keys" if pooled else "shrinks only the scan, not what is stored")
            )
        if profile == "vllm" and dtype in ("fp8", "f8"):
            per = elements + (elements / 128) * 4
            formula = f"{elements:g} fp8 + scale"
        else:
            per = elements * b
            formula = f"{head}" + (f" / {pool}" if pooled else "") + f" × {b:g}"
        groups.append(KVGroup("dsa_indexer_keys", len(own_indexer), per, formula))
        shared = sum(1 for x in by_kind.get("dsa", []) if x.indexer == "shared")
        if shared:
            assumptions.append(f"{shared} DSA layers reuse an earlier layer's indexer keys and store none")
    # Qwen4-Exp's QSA indexer caches its keys (indexer_kv_heads of indexer_head_dim) for every token
    qsa = [x for x in counted if x.indexer == "own" and x.attention in ("mha", "gqa", "mqa")]
    if qsa:
        width = cfg.number("indexer_head_dim", default=0) or 0
        heads = cfg.number("indexer_kv_heads", default=1) or 1
        groups.append(KVGroup("qsa_indexer_keys", len(qsa), heads * width * b, f"{heads} × {width} × {b:g}"))
    # full and sliding attention, per layer: head counts may differ by layer kind (MiMo-V2's swa_* keys)
    # or by block (NAS block_configs); keys and values may differ in width (v_head_dim)
    nas_kv = block_kv_heads(cfg)
    shapes: dict[tuple[str, int | None, int, int, int], int] = {}
    reusing = 0
    for layer in (
        by_kind.get("mha", []) + by_kind.get("gqa", []) + by_kind.get("mqa", []) + by_kind.get("swa", [])
    ):
        if layer.kv_shared:
            reusing += 1
            continue
        _, kv, hd, vd = layer_heads(cfg, layer)
        if facts(cfg)[0].compressed_attention:  # DeepSeek-V4: one KV head whose keys are its values
            vd = 0
        if facts(cfg)[0].mla_layer_sizes:  # Dots 3's sliding MLA layers cache their latent and rope slice
            kv = 1
            hd = mla_layer_number(cfg, layer.index, "kv_lora_rank")
            vd = mla_layer_number(cfg, layer.index, "qk_rope_head_dim")
        if facts(cfg)[0].xlnet_attention:  # XLNet caches each layer's input (mems), heads x d_head wide
            vd = 0
        if nas_kv is not None and layer.index < len(nas_kv) and nas_kv[layer.index]:
            kv = nas_kv[layer.index] or kv
        name = "sliding_window" if layer.attention == "swa" else "full_attention"
        key = (name, layer.window if name == "sliding_window" else None, kv, hd, vd)
        shapes[key] = shapes.get(key, 0) + layer.cache_entries  # a layer run n times keeps n entries
    for (name, window, kv, hd, vd), count in sorted(
        shapes.items(), key=lambda x: (x[0][0], x[0][1] or 0, x[0][2:])
    ):
        widths = f"2 × {hd}" if hd == vd else f"({hd} + {vd})" if vd else f"{hd}"
        groups.append(
            KVGroup(
                name,
                count,
                kv * (hd + vd) * b,
                f"{widths} × {kv} × {b:g}" + (f", at most {window} tokens" if window else ""),
                window,
            )
        )
    types = cfg.get("layer_types")
    if isinstance(types, list) and "reference_sliding_attention" in types:
        assumptions.append(  # Unlimited-OCR's
            "sliding layers keeping every prompt token (reference sliding attention): counted at every "
            "token, as if all were prompt; generated tokens beyond the window are dropped, so this is an upper bound"
        )
    composite = cfg.raw.get("model_type") == "vision-encoder-decoder"  # its decoder's cross-attention
    if (facts(cfg)[0].encoder_attention or composite) and counted:
        assumptions.append(  # TrOCR's encoder_attn: transformers caches it apart, by encoder token
            "cross-attention into the encoder: its keys and values are per encoder token (cached once per "
            "input, not per generated token) and not counted here; a generated token adds the self-attention's only"
        )
    if reusing:
        assumptions.append(
            f"{reusing} attention layers reuse an earlier layer's keys and values and store none"
        )
    head_dim = cfg.head_dim or 0
    kv_heads = cfg.num_kv_heads or 0
    compressed = by_kind.get("compressed", [])
    if compressed:
        ratios: dict[int, int] = {}
        for layer in compressed:
            ratios[layer.compress_ratio or 1] = ratios.get(layer.compress_ratio or 1, 0) + 1
        for ratio, count in sorted(ratios.items()):
            groups.append(
                KVGroup(
                    f"compressed_1_in_{ratio}",
                    count,
                    kv_heads * head_dim * b / ratio,
                    f"{kv_heads} × {head_dim} × {b:g} / {ratio}",
                )
            )
        # DeepSeek-V4's sparse (CSA) layers: their indexer compresses keys of its own, index_head_dim wide
        indexed: dict[int, int] = {}
        for layer in compressed:
            if layer.indexer == "own":
                indexed[layer.compress_ratio or 1] = indexed.get(layer.compress_ratio or 1, 0) + 1
        index_dim = cfg.number("index_head_dim", default=0) or 0
        for ratio, count in sorted(indexed.items()) if index_dim else ():
            groups.append(
                KVGroup(
                    f"compressed_indexer_keys_1_in_{ratio}",
                    count,
                    index_dim * b / ratio,
                    f"{index_dim} × {b:g} / {ratio}",
                )
            )
        window = compressed[0].window
        if window:
            groups.append(
                KVGroup(
                    "sliding_window",
                    len(compressed),
                    kv_heads * head_dim * b,
                    f"{kv_heads} × {head_dim} × {b:g}, at most {window} tokens",
                    window,
                )
            )
        assumptions.append("compressed layers: one KV entry per compress_ratio tokens plus a sliding window")

    states = _states(cfg, by_kind, model_bytes)
    for s in states:
        assumptions.append(f"{s.name}: {s.dtype}")
    tokens = context or cfg.max_context or 0
    windows = [g.window_tokens for g in groups]
    if not tokens and windows and all(windows):  # every layer attends locally (RecurrentGemma)
        tokens = max(w for w in windows if w)
        assumptions.append(
            f"no context length in the config; every attention layer is windowed: {tokens:,} tokens"
        )
    return KVReport(profile, dtype, tokens, tuple(groups), tuple(states), tuple(assumptions))


def _states(cfg: ArchConfig, by_kind: dict[str, list[LayerInfo]], model_bytes: int) -> list[StateGroup]:
    from .estimate import mamba_shape

    out: list[StateGroup] = []
    model_dtype = {4: "float32", 2: "bfloat16"}.get(model_bytes, "bfloat16")
    kda = by_kind.get("kda", [])
    if kda:
        lin = cfg.linear_attn
        heads = lin.get("num_heads") or cfg.num_heads or 0
        dim = lin.get("head_dim") or cfg.head_dim or 0
        kernel = lin.get("short_conv_kernel_size") or 4
        out.append(
            StateGroup(
                "kda_state", len(kda), heads * dim * dim * 4, "float32", f"{heads} × {dim} × {dim} × 4"
            )
        )
        out.append(
            StateGroup(
                "kda_conv",
                len(kda),
                (kernel - 1) * 3 * heads * dim * model_bytes,
                model_dtype,
                f"({kernel} - 1) × 3 × {heads} × {dim} × {model_bytes}",
            )
        )
    gdn = by_kind.get("gdn", [])
    if gdn:
        nv = cfg.number("linear_num_value_heads", default=0) or 0
        nk = cfg.number("linear_num_key_heads", default=nv) or 0
        dk = cfg.number("linear_key_head_dim", default=0) or 0
        dv = cfg.number("linear_value_head_dim", default=0) or 0
        kernel = cfg.number("linear_conv_kernel_dim", default=4) or 4
        # the recurrent state in the dtype the config names (Qwen3.5: mamba_ssm_dtype float32)
        named = str(cfg.get("mamba_ssm_dtype", "mamba_ssm_cache_dtype", default=model_dtype)).replace(
            "torch.", ""
        )
        state_dtype = named if named in _MODEL_DTYPE_BYTES else model_dtype
        state_bytes = _MODEL_DTYPE_BYTES[state_dtype]
        out.append(
            StateGroup(
                "gdn_state",
                len(gdn),
                nv * dk * dv * state_bytes,
                state_dtype,
                f"{nv} × {dk} × {dv} × {state_bytes}",
            )
        )
        conv_dim = 2 * nk * dk + nv * dv
        out.append(
            StateGroup(
                "gdn_conv",
                len(gdn),
                (kernel - 1) * conv_dim * model_bytes,
                model_dtype,
                f"({kernel} - 1) × {conv_dim} × {model_bytes}",
            )
        )
    mamba = len(by_kind.get("mamba", [])) + sum(
        1 for layers in by_kind.values() for x in layers if x.parallel_ssm
    )
    if mamba:
        m = mamba_shape(cfg)
        # the SSM state in the dtype the config names (Nemotron-H: float32), else the model's (vLLM's "auto")
        ssm_dtype = str(cfg.get("mamba_ssm_cache_dtype", default=model_dtype)).replace("torch.", "")
        if ssm_dtype not in _MODEL_DTYPE_BYTES:
            ssm_dtype = model_dtype
        ssm_bytes = _MODEL_DTYPE_BYTES[ssm_dtype]
        if m.version == 2:
            state_formula = f"{m.heads} × {m.channels // max(m.heads, 1)} × {m.state} × {ssm_bytes}"
        else:
            state_formula = f"{m.channels} × {m.state} × {ssm_bytes}"
        out.append(
            StateGroup("mamba_state", mamba, m.channels * m.state * ssm_bytes, str(ssm_dtype), state_formula)
        )
        out.append(
            StateGroup(
                "mamba_conv",
                mamba,
                (m.kernel - 1) * m.conv_dim * model_bytes,
                model_dtype,
                f"({m.kernel} - 1) × {m.conv_dim} × {model_bytes}",
            )
        )
    rglru = by_kind.get("rglru", [])
    if rglru:  # RecurrentGemma: the RG-LRU's hidden state in float32, the convolution's last inputs
        width = cfg.number("lru_width", default=cfg.hidden_size or 0) or 0
        kernel = cfg.number("conv1d_width", default=4) or 4
        out.append(StateGroup("rglru_state", len(rglru), width * 4, "float32", f"{width} × 4"))
        out.append(
            StateGroup(
                "rglru_conv",
                len(rglru),
                (kernel - 1) * width * model_bytes,
                model_dtype,
                f"({kernel} - 1) × {width} × {model_bytes}",
            )
        )
    shortconv = by_kind.get("shortconv", [])
    if shortconv:  # LFM2: the convolution's last conv_L_cache - 1 inputs, hidden wide
        h = cfg.hidden_size or 0
        kernel = cfg.number("conv_L_cache", default=3) or 3
        out.append(
            StateGroup(
                "shortconv_state",
                len(shortconv),
                (kernel - 1) * h * model_bytes,
                model_dtype,
                f"({kernel} - 1) × {h} × {model_bytes}",
            )
        )
    out += _attention_convs(cfg, by_kind, model_bytes, model_dtype)
    rwkv = by_kind.get("rwkv", [])
    if rwkv:  # RWKV-4: two token-shift vectors and the WKV numerator, denominator and maximum, float32
        h = cfg.hidden_size or 0
        width = cfg.number("attention_hidden_size", default=h) or h
        out.append(
            StateGroup(
                "rwkv_state", len(rwkv), (2 * h + 3 * width) * 4, "float32", f"(2 × {h} + 3 × {width}) × 4"
            )
        )
    out += _cca_states(cfg, by_kind, model_bytes, model_dtype)
    out += _mlstm_states(cfg, by_kind)
    lightning = by_kind.get("lightning", [])
    if lightning:
        heads, dim = cfg.num_heads or 0, cfg.head_dim or 0
        out.append(
            StateGroup(
                "linear_attention_state",
                len(lightning),
                heads * dim * dim * 4,
                "float32",
                f"{heads} × {dim} × {dim} × 4",
            )
        )
    return out


def _attention_convs(
    cfg: ArchConfig, by_kind: dict[str, list[LayerInfo]], model_bytes: int, model_dtype: str
) -> list[StateGroup]:
    """Inkling: the short convolutions over each layer's keys, values, attention output and MLP output
    keep their last conv_kernel_size - 1 inputs, per sequence; full and sliding layers differ in KV
    width (the swa_* heads), so each kind is a group of its own. A looped layer keeps them once per pass."""
    from .estimate import layer_heads

    kernel = cfg.number("conv_kernel_size", "sconv_kernel_size", default=4) or 4
    h = cfg.hidden_size or 0
    out: list[StateGroup] = []
    for name, kinds in (("attention_conv", ("mha", "gqa", "mqa")), ("sliding_attention_conv", ("swa",))):
        layers = [x for kind in kinds for x in by_kind.get(kind, []) if x.attention_convs]
        if not layers:
            continue
        _, kv, hd, vd = layer_heads(cfg, layers[0])
        width = kv * (hd + vd) + 2 * h
        out.append(
            StateGroup(
                name,
                sum(x.cache_entries for x in layers),  # a looped layer's state once per pass
                (kernel - 1) * width * model_bytes,
                model_dtype,
                f"({kernel} - 1) × ({kv} × ({hd} + {vd}) + 2 × {h}) × {model_bytes}",
            )
        )
    return out


def _cca_states(
    cfg: ArchConfig, by_kind: dict[str, list[LayerInfo]], model_bytes: int, model_dtype: str
) -> list[StateGroup]:
    """ZAYA's compressed convolutional attention keeps, beside its keys and values, what its next token's
    q/k convolutions and delayed values read (modeling_zaya.py: ZayaCCAProjection): the last
    (cca_time0 - 1) + (cca_time1 - 1) inputs of its two chained convolutions, (heads + KV heads) x head_dim
    channels, and the previous token's delayed values, half of the KV heads' width; in the model dtype."""
    from .estimate import facts, layer_heads

    if not facts(cfg)[0].cca_attention:
        return []
    attention = [x for kind in ("mha", "gqa", "mqa", "swa") for x in by_kind.get(kind, [])]
    if not attention:
        return []
    heads, kv, hd, _ = layer_heads(cfg, attention[0])
    window = (cfg.number("cca_time0", default=2) or 2) - 1 + (cfg.number("cca_time1", default=2) or 2) - 1
    channels = (heads + kv) * hd
    return [
        StateGroup(
            "cca_conv",
            len(attention),
            window * channels * model_bytes,
            model_dtype,
            f"{window} × ({heads} + {kv}) × {hd} × {model_bytes}",
        ),
        StateGroup(
            "cca_state",
            len(attention),
            kv * hd // 2 * model_bytes,
            model_dtype,
            f"{kv} × {hd} / 2 × {model_bytes}",
        ),
    ]


def _mlstm_states(cfg: ArchConfig, by_kind: dict[str, list[LayerInfo]]) -> list[StateGroup]:
    """xLSTM's mLSTM keeps per head a qk_head_dim x v_head_dim memory, a qk_head_dim normaliser and one
    stabiliser (modeling_xlstm.py: xLSTMCache), each width rounded up to 64 as its config's qk_dim and
    v_dim are, in inference_state_dtype (float32 by default)."""
    layers = by_kind.get("mlstm", [])
    if not layers:
        return []
    h = cfg.hidden_size or 0
    heads = cfg.number("num_heads", default=0) or 0

    def rounded(factor: str, default: float) -> int:
        return int(((h * float(cfg.get(factor, default=default)) + 63) // 64) * 64)

    dk = rounded("qk_dim_factor", 0.5) // max(heads, 1)
    dv = rounded("v_dim_factor", 1.0) // max(heads, 1)
    dtype = str(cfg.get("inference_state_dtype", default="float32"))
    dtype = dtype if dtype in _MODEL_DTYPE_BYTES else "float32"
    size = _MODEL_DTYPE_BYTES[dtype]
    return [
        StateGroup(
            "mlstm_state",
            len(layers),
            heads * (dk * dv + dk + 1) * size,
            dtype,
            f"{heads} × ({dk} × {dv} + {dk} + 1) × {size}",
        )
    ]
