"""The layer census: what each layer is, read from every encoding configs use.

Attention kinds: ``mha``/``gqa``/``mqa`` (full attention, by KV heads), ``mla`` (latent KV),
``dsa`` (MLA with a sparse-attention indexer, own or shared with an earlier layer), ``swa``
(sliding window or chunked attention: the cache is capped at ``window`` tokens), ``compressed`` (a KV
stream compressed ``compress_ratio``:1 beside a window), the recurrent kinds ``kda`` (Kimi Delta
Attention), ``gdn`` (Gated DeltaNet), ``mamba`` (Mamba-1 or -2 mixer) and ``lightning`` (linear
attention with a matrix state), ``cross`` (cross-attention to image features: nothing cached per
text token), and ``none`` (a layer that is only an MLP block).
MLP kinds: ``dense``, ``moe``, ``none``. MTP layers follow the main layers and are marked.

transformers' configuration classes turn most encodings into one ``layer_types`` list (Gemma 3's
``sliding_window_pattern``, Llama 4's ``no_rope_layers``, Jamba's periods, Nemotron-H's pattern
string); hubdiff reads that list when it is there and the original keys when it is not. The list
says "linear_attention" for whatever recurrent mixer the architecture has, so which one is decided
from the keys that size it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .config import MAX_LAYERS, ArchConfig

LINEAR_KINDS = frozenset({"kda", "gdn", "mamba", "lightning", "rglru", "rwkv", "shortconv", "mlstm"})

# layer_types / layers_block_type vocabularies (transformers' and the releases' own)
FULL_NAMES = frozenset({"full_attention", "attention", "global", "global_attention", "full", "softmax"})
SLIDING_NAMES = frozenset({"sliding_attention", "sliding", "local", "local_attention", "swa"})
LINEAR_NAMES = frozenset(
    {
        "linear_attention",
        "linear",
        "mamba",
        "mamba1",
        "mamba2",
        "gated_deltanet",
        "kda",
        "kimi_delta_attention",
        "lightning",
        "lightning_attention",
    }
)
BLOCK_MLP_NAMES = {"mlp": "dense", "dense": "dense", "ffn": "dense", "moe": "moe"}
KNOWN_LAYER_NAMES = (
    FULL_NAMES
    | SLIDING_NAMES
    | LINEAR_NAMES
    | set(BLOCK_MLP_NAMES)
    | {"chunked_attention", "indexed_attention", "hybrid", "none", "no_op", "cross", "conv"}
    | {"compressed_sparse_attention", "heavily_compressed_attention"}
    | {"reference_sliding_attention"}
)
# DeepSeek-V4's compressed kinds (transformers' layer_types): each keeps a sliding window beside a KV
# stream compressed by its rate in compress_rates; the sparse one (CSA) also has a lightning indexer
COMPRESSED_NAMES = ("compressed_sparse_attention", "heavily_compressed_attention")

# Keys whose meaning the census takes in (directly, or through transformers' layer_types)
PATTERN_KEYS = (
    "layer_types",
    "layers_block_type",
    "hybrid_override_pattern",
    "attn_layer_period",
    "attn_layer_offset",
    "attn_layer_indices",
    "expert_layer_period",
    "expert_layer_offset",
    "sliding_window_pattern",
    "no_rope_layers",
    "no_rope_layer_interval",
    "attention_chunk_size",
    "moe_layers",
    "mlp_layer_types",
    "interleave_moe_layer_step",
    "full_attention_interval",
    "attn_type_list",
    "compress_ratios",
    "decoder_sparse_step",
    "mlp_only_layers",
    "first_k_dense_replace",
    "moe_layer_freq",
    "use_sliding_window",
    "max_window_layers",
    "sliding_window",
    "attention_window",
    "indexer_types",
    "index_topk_freq",
    "index_skip_topk_offset",
    "linear_attn_config",
    "hybrid_layer_pattern",
    "cross_attention_layers",
    "moe_layer_interval",
    "moe_layer_start_index",
    "moe_layer_end_index",
    "block_types",
    "attention_types",
    "attention_layers",
    "window_size",
)


@dataclass(frozen=True)
class LayerInfo:
    index: int
    attention: str
    mlp: str
    indexer: str | None = None  # "own" or "shared" for DSA layers
    window: int | None = None  # tokens, for sliding-window layers
    mtp: bool = False
    compress_ratio: int | None = None  # tokens per stored KV entry, for compressed-KV layers
    parallel_ssm: bool = False  # a Mamba mixer beside the attention (Falcon-H1, Zamba2 hybrid layers)
    kv_shared: bool = False  # reuses an earlier layer's keys and values: stores none (Gemma 3n, Gemma 4)
    # short convolutions over its keys, values and sub-layer outputs (Inkling): their last inputs are state
    attention_convs: bool = False
    # cache entries the layer writes per token: a layer run several times, each run caching its keys,
    # values and state apart (HRM's cycles through its two stacks, Inkling 2 Loop's passes); its
    # parameters are stored once
    cache_entries: int = 1


def full_kind(cfg: ArchConfig) -> str:
    if cfg.is_mla:
        return "dsa" if cfg.has_indexer else "mla"
    heads, kv = cfg.num_heads, cfg.num_kv_heads
    if kv == 1 and heads and heads > 1:
        return "mqa"
    if heads and kv and kv < heads:
        return "gqa"
    return "mha"


def linear_kind(cfg: ArchConfig) -> str:
    """Which recurrent mixer a "linear_attention" layer of this architecture is, from the keys that size it."""
    if cfg.linear_attn:
        return "kda"
    if cfg.number("lru_width") is not None:  # RecurrentGemma's RG-LRU blocks (Griffin)
        return "rglru"
    if not cfg.num_heads and cfg.number("attention_hidden_size") is not None:  # RWKV's time mixing
        return "rwkv"
    if not cfg.num_heads and cfg.get("qk_dim_factor") is not None:  # xLSTM's mLSTM
        return "mlstm"
    if cfg.number("linear_num_value_heads", "linear_key_head_dim") is not None:
        return "gdn"
    if (
        cfg.number(
            "ssm_state_size", "state_size", "mamba_d_state", "mamba_num_heads", "mamba_n_heads", "mamba_d_ssm"
        )
        is not None
    ):
        return "mamba"
    return "lightning"


def _one_based(values: object) -> set[int]:
    return {v - 1 for v in values if isinstance(v, int)} if isinstance(values, list) else set()


def layer_types(cfg: ArchConfig, n: int) -> list[str] | None:
    """The per-layer type list, when the config (or transformers, from it) gives one for every layer."""
    for key in ("layer_types", "layers_block_type"):
        values = cfg.get(key)
        if isinstance(values, list) and len(values) >= n and all(isinstance(v, str) for v in values):
            return [v.lower() for v in values[:n]]
    return None


def _attention_kinds(cfg: ArchConfig, n: int) -> tuple[list[str], list[int | None], list[bool]]:
    full = full_kind(cfg)
    window = cfg.number("sliding_window", "attention_window", "sliding_window_size", "attention_window_size")
    if window and cfg.max_context and window >= cfg.max_context:
        window = None  # a window as long as the context (Phi-3.5's 262,144) caps nothing
    chunk = cfg.number("attention_chunk_size")
    kinds = [full] * n
    windows: list[int | None] = [None] * n
    parallel = [False] * n
    lin = cfg.linear_attn
    types = layer_types(cfg, n)
    pattern = cfg.get("hybrid_override_pattern")
    ratios = compress_ratios(cfg, n)
    hybrid = cfg.int_list("hybrid_layer_pattern")  # MiMo-V2: 1 a sliding-window layer, 0 a global one
    if hybrid is not None and len(hybrid) >= n and "layer_types" not in cfg.raw_text:
        for i, sliding in enumerate(hybrid[:n]):
            if sliding:
                kinds[i], windows[i] = "swa", window
    elif isinstance(ratios, list) and len(ratios) >= n:
        # compressed attention: every layer keeps a sliding window, most also a compressed KV stream
        for i, ratio in enumerate(ratios[:n]):
            kinds[i], windows[i] = ("compressed" if ratio else "swa"), window
    elif types is not None:
        recurrent = linear_kind(cfg)
        for i, kind in enumerate(types):
            if kind == "conv":  # LFM2's gated short convolutions
                kinds[i] = "shortconv"
            elif kind in LINEAR_NAMES:
                kinds[i] = "kda" if kind in ("kda", "kimi_delta_attention") else recurrent
            elif kind == "reference_sliding_attention":  # Unlimited-OCR: every prompt token kept, the rest
                kinds[i] = "swa"  # within the window: no cap on what a sequence may keep
            elif kind == "chunked_attention":
                kinds[i], windows[i] = "swa", chunk or window
            elif kind in SLIDING_NAMES or "sliding" in kind:
                kinds[i], windows[i] = "swa", window
            elif kind in BLOCK_MLP_NAMES or kind in ("none", "no_op"):
                kinds[i] = "none"
            elif kind == "hybrid" and cfg.number("cca_time0") is None:  # ZAYA's are its CCA attention
                parallel[i] = True
    elif lin.get("kda_layers") or lin.get("full_attn_layers"):
        kda, full_layers = _one_based(lin.get("kda_layers")), _one_based(lin.get("full_attn_layers"))
        for i in range(n):
            if i in kda or (full_layers and i not in full_layers):
                kinds[i] = "kda"
    elif chunk and isinstance(cfg.get("no_rope_layers"), list):
        # Llama 4: layers that use RoPE attend within chunks of attention_chunk_size; NoPE layers globally
        for i, uses_rope in enumerate(cfg.get("no_rope_layers")[:n]):
            if uses_rope:
                kinds[i], windows[i] = "swa", chunk
    elif _neo_layers(cfg, n) is not None:  # GPT-Neo: global and local (windowed) attention layers
        for i, kind in enumerate(_neo_layers(cfg, n) or []):
            if kind == "local":
                kinds[i], windows[i] = "swa", cfg.number("window_size", default=256)
    elif isinstance(cfg.str_list("block_types"), list) and cfg.str_list("block_types"):
        # RecurrentGemma: block_types repeats over the layers; attention blocks attend locally
        cycle = cfg.str_list("block_types") or []
        for i in range(n):
            if cycle[i % len(cycle)] == "recurrent":
                kinds[i] = linear_kind(cfg)
            elif cycle[i % len(cycle)] == "attention":
                kinds[i], windows[i] = "swa", window
    elif isinstance(pattern, str) and len(pattern) >= n:
        for i, char in enumerate(pattern[:n]):
            kinds[i] = {"M": "mamba", "*": full}.get(char, "none")
    elif cfg.number("attn_layer_period"):  # Jamba: one attention layer per period, the rest Mamba
        period = cfg.number("attn_layer_period") or 1
        offset = cfg.number("attn_layer_offset", default=0) or 0
        kinds = [full if i % period == offset else "mamba" for i in range(n)]
    elif isinstance(cfg.get("attn_type_list"), list) and len(cfg.get("attn_type_list")) >= n:
        # MiniMax-Text-01: 1 softmax attention, 0 lightning (linear) attention
        kinds = [full if t == 1 else linear_kind(cfg) for t in cfg.get("attn_type_list")[:n]]
    elif cfg.number("full_attention_interval"):
        interval = cfg.number("full_attention_interval") or 1
        kinds = [full if (i + 1) % interval == 0 else "gdn" for i in range(n)]
    elif window and cfg.number("sliding_window_pattern"):
        every = cfg.number("sliding_window_pattern") or 1
        for i in range(n):
            if (i + 1) % every:
                kinds[i], windows[i] = "swa", window
    elif window and cfg.get("use_sliding_window") is True:
        start = cfg.number("max_window_layers", default=0) or 0
        for i in range(start, n):
            kinds[i], windows[i] = "swa", window
    elif window and cfg.get("use_sliding_window") is None and full in ("mha", "gqa", "mqa"):
        # Mistral-style: a sliding_window with no pattern applies to every layer
        kinds, windows = ["swa"] * n, [window] * n
    elif not cfg.num_heads and linear_kind(cfg) in ("mamba", "rwkv", "mlstm"):  # a pure recurrent model
        kinds = [linear_kind(cfg)] * n
    for i in cfg.int_list("cross_attention_layers") or []:
        if 0 <= i < n:  # mllama: attends to the image's keys and values, stores none per text token
            kinds[i] = "cross"
    return kinds, windows, parallel


def compress_ratios(cfg: ArchConfig, n: int) -> list[int] | None:
    """Tokens per compressed KV entry, layer by layer (0: the sliding window alone): DeepSeek-V4's own
    compress_ratios, or transformers' layer_types with the rate compress_rates gives each kind."""
    ratios = cfg.int_list("compress_ratios")
    if ratios is not None and len(ratios) >= n:
        return ratios[:n]
    types = layer_types(cfg, n)
    rates = cfg.get("compress_rates")
    if types is None or not isinstance(rates, dict) or not set(types) & set(COMPRESSED_NAMES):
        return None
    out = []
    for kind in types:
        rate = rates.get(kind) if kind in COMPRESSED_NAMES else 0
        if not isinstance(rate, int) or isinstance(rate, bool) or rate < 0:
            return None
        out.append(rate)
    return out


def sparse_compress_rate(cfg: ArchConfig) -> int:
    """The rate of DeepSeek-V4's sparse (CSA) layers, the ones with an indexer: compress_rates' entry,
    the legacy compress_rate_csa, else the class's default of 4."""
    rates = cfg.get("compress_rates")
    rate = rates.get(COMPRESSED_NAMES[0]) if isinstance(rates, dict) else None
    if not isinstance(rate, int) or isinstance(rate, bool):
        rate = cfg.number("compress_rate_csa", default=4)
    return rate or 4


def _neo_layers(cfg: ArchConfig, n: int) -> list[str] | None:
    """GPT-Neo's per-layer kinds: transformers' attention_layers, else attention_types expanded
    ([[["global", "local"], 12]]: the pair twelve times)."""
    listed = cfg.str_list("attention_layers")
    if listed is not None and len(listed) >= n:
        return listed[:n]
    spec = cfg.get("attention_types")
    out: list[str] = []
    if not isinstance(spec, list):
        return None
    for entry in spec:
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], list)):
            return None
        kinds, repeat = entry
        if not (isinstance(repeat, int) and 0 < repeat <= MAX_LAYERS and 0 < len(kinds) <= MAX_LAYERS):
            return None
        if not all(isinstance(k, str) for k in kinds):
            return None
        out += kinds * repeat
        if len(out) > MAX_LAYERS:
            return None
    return out[:n] if len(out) >= n else None


def _indexers(cfg: ArchConfig, kinds: list[str]) -> list[str | None]:
    out: list[str | None] = [("own" if k == "dsa" else None) for k in kinds]
    types = cfg.get("indexer_types")
    freq = cfg.number("index_topk_freq")
    dsa = [i for i, k in enumerate(kinds) if k == "dsa"]
    if isinstance(types, list) and len(types) >= len(kinds):
        for i in dsa:
            out[i] = "shared" if str(types[i]) == "shared" else "own"
    elif freq and freq > 1:
        skip = cfg.number("index_skip_topk_offset", default=0) or 0
        for i in dsa:
            out[i] = "own" if i < skip or (i - skip + 1) % freq == 0 else "shared"
    return out


def _mlp_kinds(cfg: ArchConfig, n: int, kinds: list[str]) -> list[str]:
    types = layer_types(cfg, n)
    if types is not None and any(t in BLOCK_MLP_NAMES for t in types):
        # one block a layer (Nemotron-H): a mixer layer has no MLP, an MLP layer no mixer
        return [BLOCK_MLP_NAMES.get(t, "none") for t in types]
    pattern = cfg.get("hybrid_override_pattern")
    if isinstance(pattern, str) and len(pattern) >= n:
        return [{"E": "moe", "-": "dense"}.get(c, "none") for c in pattern[:n]]
    # Gemma 4's enable_moe_block, Doge's is_moe: experts switched off (num_experts kept as their default)
    if not cfg.num_experts or cfg.get("enable_moe_block") is False or cfg.get("is_moe") is False:
        # a pure state-space model (no attention heads at all) has no MLP beside its mixers
        return ["none" if k == "mamba" and not cfg.num_heads else "dense" for k in kinds]
    freq = cfg.int_list("moe_layer_freq")  # a per-layer list (MiMo-V2): 1 an MoE layer
    if freq is not None and len(freq) >= n and "mlp_layer_types" not in cfg.raw_text:
        return ["moe" if f else "dense" for f in freq[:n]]
    mlp_types = cfg.get("mlp_layer_types")
    if isinstance(mlp_types, list) and len(mlp_types) >= n:
        return ["moe" if str(t) in ("sparse", "moe", "hash_moe") else "dense" for t in mlp_types[:n]]
    experts = cfg.int_list("layers_num_experts")  # Jamba, through transformers: 1 means a dense MLP
    if experts is not None and len(experts) >= n:
        return ["moe" if e > 1 else "dense" for e in experts[:n]]
    moe_layers = cfg.int_list("moe_layers")  # Llama 4, through transformers
    if moe_layers is not None:
        chosen = set(moe_layers)
        return ["moe" if i in chosen else "dense" for i in range(n)]
    interval = cfg.number("moe_layer_interval")
    if interval or cfg.number("moe_layer_start_index") is not None:  # ERNIE 4.5
        start = cfg.number("moe_layer_start_index", default=0) or 0
        end = cfg.number("moe_layer_end_index", default=-1)
        last = n - 1 if end is None or end < 0 else end
        every = interval or 1
        return ["moe" if (i + 1) % every == 0 and start <= i <= last else "dense" for i in range(n)]
    period = cfg.number("expert_layer_period")
    if period:  # Jamba: every period-th layer from expert_layer_offset is MoE
        offset = cfg.number("expert_layer_offset", default=0) or 0
        return ["moe" if i >= offset and (i - offset) % period == 0 else "dense" for i in range(n)]
    first_dense = cfg.number("first_k_dense_replace", "num_dense_layers", default=0) or 0  # AFMoE, LFM2-MoE
    moe_every = int(cfg.number("moe_layer_freq", default=1) or 1)
    step = cfg.number("decoder_sparse_step", "interleave_moe_layer_step", default=1) or 1
    only_dense = set(cfg.int_list("mlp_only_layers") or [])
    out = []
    for i in range(n):
        moe = i >= first_dense and i % moe_every == 0 and (i + 1) % step == 0 and i not in only_dense
        out.append("moe" if moe else "dense")
    return out


def hrm_stacks(cfg: ArchConfig) -> tuple[int, int] | None:
    """HRM's two stacks (modeling_hrm_text.py), as (blocks a stack, cache entries of each depth): an L and
    an H stack of num_layers_per_stack blocks each, the L stack run H_cycles x L_cycles times and the H stack
    H_cycles times, every run into cache slots of its own; its num_hidden_layers counts those slots. A
    config without num_layers_per_stack (a legacy one) gives the blocks a stack as num_hidden_layers."""
    high, low = cfg.number("H_cycles"), cfg.number("L_cycles")
    if high is None or low is None or high < 1 or low < 0:
        return None
    return cfg.number("num_layers_per_stack") or cfg.num_layers, high * (low + 1)


def paired_blocks(cfg: ArchConfig) -> bool:
    """Whether a looped config lists each layer as an attention block followed by an mlp block (Dory's
    released configs, as vLLM and llama.cpp read them: layer_types alternates the two, num_hidden_layers
    and n_*_layers count blocks; transformers' DoryConfig writes them so too): a layer is each pair."""
    types = layer_types(cfg, cfg.num_layers)
    if cfg.number("n_recurrent_loops") is None or not types or len(types) % 2:
        return False
    return all(t == "mlp" for t in types[1::2]) and "mlp" not in types[::2]


def _recurrent_loops(cfg: ArchConfig, n: int, per_pair: int) -> tuple[range, int] | None:
    """Dory's recurrent section (modeling_dory.py): the layers after the n_input_layers run once, run
    n_recurrent_loops times, each loop caching its keys and values apart ("per_loop"; "last_loop" keeps
    one entry a layer, written by the last loop). (the section's layers, entries each), counts in layers."""
    loops, first = cfg.number("n_recurrent_loops"), cfg.number("n_input_layers")
    if loops is None or first is None or loops < 1:
        return None
    last = cfg.number("n_output_layers", default=0) or 0
    count = cfg.number("n_recurrent_layers")
    count = (cfg.num_layers - first - last) if count is None else count
    start, stop = first // per_pair, min(n, (first + count) // per_pair)
    per_loop = cfg.get("recurrent_kv_cache_mode", default="per_loop") == "per_loop"
    return range(start, stop), loops if per_loop else 1


def layer_census(cfg: ArchConfig, sublayers: int = 1, attention_convs: bool = False) -> list[LayerInfo]:
    """The layers, MTP ones after; a layer of ``sublayers`` attention sublayers (LongCat-Flash's two)
    is one layer, counted by num_layers; HRM's layer is the pair of blocks at one depth of its stacks.
    With ``attention_convs`` (Inkling) every layer is attention with short convolutions: its "hybrid"
    layers are full attention, no Mamba beside it."""
    n = cfg.num_layers
    if sublayers > 1:
        n = cfg.number("num_layers", default=n // sublayers) or 0
    stacks = hrm_stacks(cfg)
    if stacks is not None:
        n = min(stacks[0], MAX_LAYERS)
    kinds, windows, parallel = _attention_kinds(cfg, n)
    indexers = _indexers(cfg, kinds)
    mlps = _mlp_kinds(cfg, n, kinds)
    blocks = block_configs(cfg)
    if blocks is not None:  # NAS: a block replaced by a linear map or skipped holds no cache, no MLP
        for i, block in enumerate(blocks[:n]):
            if block.attention != "attention":
                kinds[i] = "none"
            if block.mlp != "mlp":
                mlps[i] = "none"
    ratios = compress_ratios(cfg, n) or []
    if ratios:  # DeepSeek-V4: the sparse compressed layers each have their own indexer
        sparse = sparse_compress_rate(cfg)
        for i, ratio in enumerate(ratios[:n]):
            if kinds[i] == "compressed" and ratio == sparse:
                indexers[i] = "own"
    layers = [
        LayerInfo(
            i,
            kinds[i],
            mlps[i],
            indexers[i],
            windows[i],
            False,
            (ratios[i] or None) if i < len(ratios) and isinstance(ratios[i], int) else None,
            parallel[i],
        )
        for i in range(n)
    ]
    if attention_convs:
        layers = [dataclasses.replace(x, parallel_ssm=False, attention_convs=True) for x in layers]
    passes = cfg.number("loop_num_passes")
    if passes is not None and passes > 1:  # layers loop_layer_index_start to _end - 1 run passes times
        start = cfg.number("loop_layer_index_start", default=0) or 0
        end = cfg.number("loop_layer_index_end", default=0) or 0
        layers = [
            dataclasses.replace(x, cache_entries=passes) if start <= x.index < end else x for x in layers
        ]
    shared = cfg.number("num_kv_shared_layers", default=0) or 0
    if 0 < shared <= n:  # the last layers reuse the keys and values of an earlier layer of their type
        layers = [dataclasses.replace(x, kv_shared=x.index >= n - shared) for x in layers]
    # Kolibri 1.1: the layer whose keys and values each layer reads (Mistral Large 4's MLA layers read
    # another's latent, which is not modelled: unverified.py keeps a mark for those)
    sources = cfg.int_list("kv_source_layers")
    if sources is not None and len(sources) >= n:
        layers = [
            dataclasses.replace(x, kv_shared=True)
            if sources[x.index] != x.index and x.attention in ("mha", "gqa", "mqa", "swa")
            else x
            for x in layers
        ]
    if stacks is not None:
        layers = [dataclasses.replace(x, cache_entries=stacks[1]) for x in layers]
    types = layer_types(cfg, n) or []
    if cfg.number("indexer_head_dim") is not None:  # Qwen4-Exp: a QSA token indexer in each indexed layer
        layers = [
            dataclasses.replace(x, indexer="own")
            if x.index < len(types)
            and types[x.index] == "indexed_attention"
            and x.attention in ("mha", "gqa", "mqa")
            else x
            for x in layers
        ]
    per_pair = 2 if paired_blocks(cfg) else 1
    if per_pair == 2:  # each layer the attention of one block and the MLP of the next
        layers = [
            dataclasses.replace(a, index=i, mlp=b.mlp)
            for i, (a, b) in enumerate(zip(layers[::2], layers[1::2], strict=True))
        ]
        n = len(layers)
    section = _recurrent_loops(cfg, n, per_pair)
    if section is not None:
        looped, entries = section
        layers = [dataclasses.replace(x, cache_entries=entries) if x.index in looped else x for x in layers]
    full = full_kind(cfg)
    mtp_mlp = "moe" if cfg.num_experts else "dense"
    for j in range(cfg.mtp_layers):
        layers.append(LayerInfo(n + j, full, mtp_mlp, "own" if full == "dsa" else None, None, mtp=True))
    return layers


# -- NAS models: one entry a layer in block_configs ------------------------------------------------
@dataclass(frozen=True)
class Block:
    attention: str  # "attention", "linear" (replaced by one [h, h] matrix) or "none"
    kv_heads: int | None
    mlp: str  # "mlp", "linear" or "none"
    intermediate: int | None


def _ffn_mult_to_intermediate(mult: float, hidden: int) -> int:
    """The NAS models' rule: 2/3 of mult x hidden, rounded up to a multiple of 256."""
    size = int(2 * mult * hidden / 3)
    return size + (-size % 256)


def block_configs(cfg: ArchConfig) -> list[Block] | None:
    raw = cfg.get("block_configs")
    if not isinstance(raw, list) or len(raw) < cfg.num_layers:
        return None
    heads, h = cfg.num_heads or 0, cfg.hidden_size or 0
    out = []
    for entry in raw:
        attn = entry.get("attention") if isinstance(entry, dict) else None
        ffn = entry.get("ffn") if isinstance(entry, dict) else None
        if not isinstance(attn, dict) or not isinstance(ffn, dict):
            return None
        group = attn.get("n_heads_in_group")
        mult = ffn.get("ffn_mult")
        out.append(
            Block(
                "none" if attn.get("no_op") else "linear" if attn.get("replace_with_linear") else "attention",
                heads // group if isinstance(group, int) and group > 0 else None,
                "none" if ffn.get("no_op") else "linear" if ffn.get("replace_with_linear") else "mlp",
                _ffn_mult_to_intermediate(mult, h) if isinstance(mult, (int, float)) and mult > 0 else None,
            )
        )
    return out


def block_kv_heads(cfg: ArchConfig) -> list[int | None] | None:
    """KV heads per layer of a NAS model (None: no attention), for the KV cache."""
    blocks = block_configs(cfg)
    if blocks is None:
        return None
    return [b.kv_heads if b.attention == "attention" else None for b in blocks]


def attention_counts(layers: list[LayerInfo], include_mtp: bool = False) -> dict[str, int]:
    counts: dict[str, int] = {}
    for layer in layers:
        if layer.mtp and not include_mtp:
            continue
        counts[layer.attention] = counts.get(layer.attention, 0) + 1
    return dict(sorted(counts.items()))
