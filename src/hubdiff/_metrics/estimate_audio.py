"""Audio towers and their projectors a config implies, keyed by the outer model_type.

As with vision towers (estimate_towers), an audio tower is vouched for only beside the projector of the
architecture it was read from, and only when its config's model_type is the one the entry was written
from. Audio configs are not resolved through transformers as vision configs are, so every size a
config may leave out takes its configuration class's default here (transformers' configuration_*.py).
The tower's tensors are named under ``audio_tower``, which the classifier counts with the vision side:
neither is part of what a text token runs through.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .config import ArchConfig
from .estimate_facts import Triple
from .estimate_inkling import inkling_audio
from .estimate_mobilenet import gemma3n_embedder
from .estimate_towers import _clippable, _int, _linear, _norm

DT = "BF16"


def _gemma4_audio(a: dict[str, Any], text_hidden: int) -> list[Triple]:
    """Gemma 4's conformer (modeling_gemma4.py): two strided 3x3 convolutions (subsampling_conv_channels,
    each with a bias-free LayerNorm) and a projection of their flattened output, then layers of two
    half-step feed-forward blocks (4x wide), chunked attention with a relative-key projection and a
    per-dimension query scale, a light convolution (a GLU projection, a depthwise causal convolution
    conv_kernel_size wide) and three norms; every linear of the blocks clippable as in the vision tower.
    A biased output projection to output_proj_dims, and embed_audio from it into the text width."""
    h, depth = _int(a.get("hidden_size"), 1024), _int(a.get("num_hidden_layers"), 12)
    heads = _int(a.get("num_attention_heads"), 8) or 1
    channels = a.get("subsampling_conv_channels")
    if not (isinstance(channels, (list, tuple)) and len(channels) == 2):
        channels = (128, 32)
    c0, c1 = _int(channels[0], 128), _int(channels[1], 32)
    kernel, out_dims = _int(a.get("conv_kernel_size"), 5), _int(a.get("output_proj_dims"), 1536)
    clipped = a.get("use_clipped_linears", True) is not False
    hd = h // heads
    e = "model.audio_tower."
    s = e + "subsample_conv_projection."
    out: list[Triple] = [(s + "layer0.conv.weight", DT, (c0, 1, 3, 3)), *_norm(s + "layer0.norm", c0, False)]
    out += [(s + "layer1.conv.weight", DT, (c1, c0, 3, 3)), *_norm(s + "layer1.norm", c1, False)]
    out += _linear(s + "input_proj_linear", h, (c0 // 4) * c1, False)
    for i in range(depth):
        b = f"{e}layers.{i}."
        for ff in ("feed_forward1.", "feed_forward2."):
            out += _clippable(b + ff + "ffw_layer_1", 4 * h, h, clipped)
            out += _clippable(b + ff + "ffw_layer_2", h, 4 * h, clipped)
            out += _norm(b + ff + "pre_layer_norm", h, False) + _norm(b + ff + "post_layer_norm", h, False)
        for proj in ("q_proj", "k_proj", "v_proj"):
            out += _clippable(b + "self_attn." + proj, heads * hd, h, clipped)
        out += _clippable(b + "self_attn.post", h, h, clipped)
        out += _linear(b + "self_attn.relative_k_proj", heads * hd, h, False)
        out += [(b + "self_attn.per_dim_scale", DT, (hd,))]
        out += _clippable(b + "lconv1d.linear_start", 2 * h, h, clipped)
        out += _clippable(b + "lconv1d.linear_end", h, h, clipped)
        out += [(b + "lconv1d.depthwise_conv1d.weight", DT, (h, 1, kernel))]
        out += _norm(b + "lconv1d.pre_layer_norm", h, False) + _norm(b + "lconv1d.conv_norm", h, False)
        for norm in ("norm_pre_attn", "norm_post_attn", "norm_out"):
            out += _norm(b + norm, h, False)
    out += _linear(e + "output_proj", out_dims, h)
    return out + _linear("model.embed_audio.embedding_projection", text_hidden, out_dims, False)


def _gemma4_unified_audio(a: dict[str, Any], text_hidden: int) -> list[Triple]:
    """Gemma 4 Unified: no tower; raw waveform frames (audio_embed_dim samples) projected into the text
    width after a weightless norm."""
    width = _int(a.get("audio_embed_dim"), 640)
    return _linear("model.embed_audio.embedding_projection", text_hidden, width, False)


def _ints(value: Any, default: tuple[int, ...]) -> tuple[int, ...]:
    """A per-stage list of sizes as the class reads it, its default where the config's is no such list."""
    if isinstance(value, (list, tuple)) and value and all(_int(x, -1) >= 0 for x in value):
        return tuple(_int(x, 0) for x in value)
    return default


def _muse_spark_audio(a: dict[str, Any], text_hidden: int) -> list[Triple]:
    """Muse Spark's convolutional pyramid (modeling_muse_spark.py): a stage per entry of hidden_sizes, each
    a biased linear patch embedding of patch_sizes[i] frames of the previous stage (the waveform's one
    channel first) with an RMSNorm, then depths[i] blocks of a biased depthwise causal convolution
    (conv_kernel_size), an RMSNorm and a biased MLP mlp_ratio x wide; a final RMSNorm, a biased projection
    to out_hidden_size (the text width: the audio is scattered onto the text embeddings, no projector) and
    an RMSNorm after it."""
    widths = _ints(a.get("hidden_sizes"), (256, 512, 1024, 2048))
    patches = _ints(a.get("patch_sizes"), (16, 6, 5, 4))
    depths = _ints(a.get("depths"), (2, 2, 2, 2))
    kernel, out_width = _int(a.get("conv_kernel_size"), 7), _int(a.get("out_hidden_size"), text_hidden)
    ratio = a.get("mlp_ratio", 4.0)
    ratio = ratio if isinstance(ratio, (int, float)) and not isinstance(ratio, bool) and ratio > 0 else 4.0
    e = "model.audio_tower."
    out: list[Triple] = []
    for i, (width, patch, depth) in enumerate(zip(widths, patches, depths)):
        b = f"{e}layers.{i}."
        into = 1 if i == 0 else widths[i - 1]
        out += _linear(b + "patch_embedder.proj", width, into * patch) + _norm(
            b + "patch_embedder.norm", width, False
        )
        inner = int(width * ratio)
        for j in range(depth):
            c = f"{b}conv_blocks.{j}."
            out += [(c + "conv.weight", DT, (width, 1, kernel)), (c + "conv.bias", DT, (width,))]
            out += _norm(c + "norm", width, False)
            out += _linear(c + "mlp.fc1", inner, width) + _linear(c + "mlp.fc2", width, inner)
    last = widths[len(patches[: len(widths)]) - 1] if widths else 0
    out += _norm(e + "norm", last, False) + _linear(e + "proj", out_width, last)
    return out + _norm(e + "post_proj_norm", out_width, False)


def _dots3_note_audio(a: dict[str, Any], text_hidden: int) -> list[Triple]:
    """Dots 3's audio tower (modeling_dots3_note.py: Dots3NoteAudioModel): three biased stride-2 3x3
    convolutions to downsample_hidden_size channels and a linear from their flattened output, layers of
    an attention (q, v and out biased with attention_bias, k never), a GLU MLP (one biased gate_up
    projection, a biased down projection) and two RMSNorms, a final RMSNorm, and an adapter (a LayerNorm,
    two biased linears into adapter_out_dim, the text width)."""
    h, depth = _int(a.get("hidden_size"), 1280), _int(a.get("num_hidden_layers"), 32)
    mlp, down = _int(a.get("intermediate_size"), 5120), _int(a.get("downsample_hidden_size"), 480)
    mels = _int(a.get("feature_size"), 128)
    bias = a.get("attention_bias", True) is not False
    out_width = _int(a.get("adapter_out_dim"), text_hidden)
    e = "model.audio_tower."
    out: list[Triple] = []
    for i, into in enumerate((1, down, down)):
        out += [
            (f"{e}conv_stem.convs.{i}.weight", DT, (down, into, 3, 3)),
            (f"{e}conv_stem.convs.{i}.bias", DT, (down,)),
        ]
    out += _linear(e + "conv_stem.conv_out", h, down * ((mels + 7) // 8), False)
    for i in range(depth):
        b = f"{e}layers.{i}."
        out += _linear(b + "self_attn.q_proj", h, h, bias) + _linear(b + "self_attn.k_proj", h, h, False)
        out += _linear(b + "self_attn.v_proj", h, h, bias) + _linear(b + "self_attn.o_proj", h, h, bias)
        out += _linear(b + "mlp.gate_up_proj", 2 * mlp, h) + _linear(b + "mlp.down_proj", h, mlp)
        out += _norm(b + "input_layernorm", h, False) + _norm(b + "post_attention_layernorm", h, False)
    out += _norm(e + "layer_norm", h, False)
    width = _int(a.get("adapter_input_size"), h)
    out += _norm(e + "adapter.norm", width) + _linear(e + "adapter.fc1", out_width, width)
    return out + _linear(e + "adapter.fc2", out_width, out_width)


def _whisper_layers(e: str, a: dict[str, Any], h: int, k_bias: bool) -> list[Triple]:
    """Whisper-style encoder layers of the Qwen Omni towers: q/v/out projections biased, k biased only
    where the class says so, a biased GELU MLP encoder_ffn_dim wide and two biased LayerNorms."""
    ffn, depth = _int(a.get("encoder_ffn_dim"), 5120), _int(a.get("encoder_layers"), 32)
    out: list[Triple] = []
    for i in range(depth):
        b = f"{e}layers.{i}."
        out += _linear(b + "self_attn.k_proj", h, h, k_bias)
        for proj in ("v_proj", "q_proj", "out_proj"):
            out += _linear(b + "self_attn." + proj, h, h)
        out += _norm(b + "self_attn_layer_norm", h) + _norm(b + "final_layer_norm", h)
        out += _linear(b + "fc1", ffn, h) + _linear(b + "fc2", h, ffn)
    return out + _norm(e + "ln_post", h)


def _qwen2_5_omni_audio(a: dict[str, Any], text_hidden: int) -> list[Triple]:
    """Qwen2.5-Omni's audio encoder (modeling_qwen2_5_omni.py): two biased 1-D convolutions over
    num_mel_bins (kernel 3), Whisper layers with an unbiased k_proj, the audio BOS/EOS embedding and a
    biased projection to output_dim; its sinusoidal positions are a buffer saved nowhere."""
    h, mels, out_dim = (
        _int(a.get("d_model"), 1280),
        _int(a.get("num_mel_bins"), 128),
        _int(a.get("output_dim"), 3584),
    )
    e = "audio_tower."
    out: list[Triple] = [(e + "conv1.weight", DT, (h, mels, 3)), (e + "conv1.bias", DT, (h,))]
    out += [(e + "conv2.weight", DT, (h, h, 3)), (e + "conv2.bias", DT, (h,))]
    out += [(e + "audio_bos_eos_token.weight", DT, (2, out_dim))]
    out += _whisper_layers(e, a, h, False)
    return out + _linear(e + "proj", out_dim, h)


def _qwen3_omni_audio(a: dict[str, Any], text_hidden: int) -> list[Triple]:
    """Qwen3-Omni's audio encoder (modeling_qwen3_omni_moe.py): three biased stride-2 3x3 convolutions
    downsample_hidden_size wide, an unbiased conv_out from their flattened output (the mel bins halved
    three times), Whisper layers with every projection biased, then proj1 and proj2 to output_dim."""
    h, mels, out_dim = (
        _int(a.get("d_model"), 1280),
        _int(a.get("num_mel_bins"), 128),
        _int(a.get("output_dim"), 3584),
    )
    c = _int(a.get("downsample_hidden_size"), 480)
    e = "audio_tower."
    out: list[Triple] = [(e + "conv2d1.weight", DT, (c, 1, 3, 3)), (e + "conv2d1.bias", DT, (c,))]
    for conv in ("conv2d2", "conv2d3"):
        out += [(e + conv + ".weight", DT, (c, c, 3, 3)), (e + conv + ".bias", DT, (c,))]
    out += _linear(e + "conv_out", h, c * ((((mels + 1) // 2 + 1) // 2 + 1) // 2), False)
    out += _whisper_layers(e, a, h, True)
    return out + _linear(e + "proj1", h, h) + _linear(e + "proj2", out_dim, h)


def _wavtokenizer(a: dict[str, Any], text_hidden: int) -> list[Triple]:
    """Apertus 1.5's audio tokenizer, WavTokenizer's encoder (modeling_wavtokenizer.py): SEANet's
    convolutions (num_filters from audio_channels, then per reversed upsampling ratio
    num_residual_layers residual blocks of a residual_kernel_size and a 1x1 convolution through
    dim / compress, a 1x1 shortcut with use_conv_shortcut, and a strided convolution doubling the width),
    an LSTM of num_lstm_layers, a last convolution to hidden_size, every convolution weight-normed (a
    gain and a direction) or group-normed as norm_type says; and the codebook's buffers (inited,
    cluster sizes, embeddings and their running average). Its codes are text tokens: no projector."""
    filters, channels = _int(a.get("num_filters"), 32), _int(a.get("audio_channels"), 1)
    ratios = a.get("upsampling_ratios")
    ratios = [r for r in ratios if type(r) is int] if isinstance(ratios, (list, tuple)) else [8, 5, 4, 2]
    residual, compress = _int(a.get("num_residual_layers"), 1), _int(a.get("compress"), 2) or 1
    shortcut = a.get("use_conv_shortcut", True) is not False
    weight_norm = a.get("norm_type", "weight_norm") == "weight_norm"
    codebook, dim = _int(a.get("codebook_size"), 4096), _int(a.get("codebook_dim"), 512)
    e = "model.audio_tokenizer."

    def conv(name: str, cout: int, cin: int, k: int) -> list[Triple]:
        out: list[Triple] = [(name + ".conv.bias", DT, (cout,))]
        if weight_norm:
            w = name + ".conv.parametrizations.weight."
            return [*out, (w + "original0", DT, (cout, 1, 1)), (w + "original1", DT, (cout, cin, k))]
        out += [(name + ".conv.weight", DT, (cout, cin, k))]
        return [*out, (name + ".norm.weight", DT, (cout,)), (name + ".norm.bias", DT, (cout,))]

    x = e + "encoder.layers."
    out = conv(x + "0", filters, channels, _int(a.get("kernel_size"), 7))
    index, width = 1, filters
    for ratio in reversed(ratios):
        for _ in range(residual):
            out += conv(
                f"{x}{index}.block.1", width // compress, width, _int(a.get("residual_kernel_size"), 3)
            )
            out += conv(f"{x}{index}.block.3", width, width // compress, 1)
            out += conv(f"{x}{index}.shortcut", width, width, 1) if shortcut else []
            index += 1
        out += conv(f"{x}{index + 1}", 2 * width, width, 2 * ratio)
        index, width = index + 2, 2 * width
    for layer in range(_int(a.get("num_lstm_layers"), 2)):
        lstm = f"{x}{index}.lstm."
        out += [(lstm + f"weight_{g}_l{layer}", DT, (4 * width, width)) for g in ("ih", "hh")]
        out += [(lstm + f"bias_{g}_l{layer}", DT, (4 * width,)) for g in ("ih", "hh")]
    out += conv(f"{x}{index + 2}", _int(a.get("hidden_size"), 512), width, _int(a.get("last_kernel_size"), 7))
    q = e + "quantizer.codebook."
    out += [(q + "inited", DT, (1,)), (q + "cluster_size", DT, (codebook,))]
    return [*out, (q + "embed", DT, (codebook, dim)), (q + "embed_avg", DT, (codebook, dim))]


def _pairs(value: Any, default: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    """Per-convolution (time, frequency) sizes as the class reads them, its default where the config's
    are no such pairs."""
    if isinstance(value, (list, tuple)) and len(value) == len(default):
        pairs = tuple(
            tuple(_int(x, 0) for x in p) for p in value if isinstance(p, (list, tuple)) and len(p) == 2
        )
        if len(pairs) == len(default) and all(all(pair) for pair in pairs):
            return pairs  # type: ignore[return-value]
    return default


def _gemma3n_audio(a: dict[str, Any], text_hidden: int) -> list[Triple]:
    """Gemma 3n's USM conformer (modeling_gemma3n.py: Gemma3nAudioEncoder): two unbiased 2-D convolutions
    (sscp_conv_channel_size, kernels and strides as (time, frequency) pairs, the frequency axis padded by
    one either side), each with a cumulative group norm's scale, and a projection of the second's channels
    times the frequencies left of input_feat_size; then conf_num_hidden_layers blocks of two half-step
    feed-forwards 4x wide, chunked attention (q/k/v, a relative-position projection, a per-dimension query
    scale, an output projection, norms before and after), a light convolution (a GLU projection, a
    depthwise convolution conf_conv_kernel_size wide, a norm, a projection) and a closing norm; every
    linear unbiased, every norm an RMSNorm with a scale. embed_audio holds a table of vocab_size hard
    tokens, their and the soft tokens' norms and a projection into the text width (whose norm has no
    weight)."""
    h, depth = _int(a.get("hidden_size"), 1536), _int(a.get("conf_num_hidden_layers"), 12)
    heads = _int(a.get("conf_num_attention_heads"), 8) or 1
    channels = _ints(a.get("sscp_conv_channel_size"), (128, 32))
    channels = channels if len(channels) == 2 else (128, 32)
    kernels = _pairs(a.get("sscp_conv_kernel_size"), ((3, 3), (3, 3)))
    strides = _pairs(a.get("sscp_conv_stride_size"), ((2, 2), (2, 2)))
    kernel, hd = _int(a.get("conf_conv_kernel_size"), 5), h // heads
    e = "model.audio_tower."
    s = e + "subsample_conv_projection."
    out: list[Triple] = []
    freq, into = _int(a.get("input_feat_size"), 128), 1
    for i in range(2):
        (kh, kw), (_, sw) = kernels[i], strides[i]
        out += [
            (f"{s}conv_{i}.conv.weight", DT, (channels[i], into, kh, kw)),
            (f"{s}conv_{i}.norm.weight", DT, (channels[i],)),
        ]
        freq, into = (freq + 2 - kw) // sw + 1, channels[i]
    out += _linear(s + "input_proj_linear", h, into * freq, False)
    for i in range(depth):
        b = f"{e}conformer.{i}."
        for ff in ("ffw_layer_start.", "ffw_layer_end."):
            out += _norm(b + ff + "pre_layer_norm", h, False) + _norm(b + ff + "post_layer_norm", h, False)
            out += _linear(b + ff + "ffw_layer_1", 4 * h, h, False)
            out += _linear(b + ff + "ffw_layer_2", h, 4 * h, False)
        t = b + "attention."
        out += [(t + "attn.per_dim_scale", DT, (hd,))]
        out += _linear(t + "attn.relative_position_embedding.pos_proj", heads * hd, h, False)
        for proj in ("q_proj", "k_proj", "v_proj"):
            out += _linear(t + "attn." + proj, heads * hd, h, False)
        out += _norm(t + "pre_attn_norm", h, False) + _norm(t + "post_norm", h, False)
        out += _linear(t + "post", h, h, False)
        c = b + "lconv1d."
        out += _norm(c + "pre_layer_norm", h, False) + _linear(c + "linear_start", 2 * h, h, False)
        out += [(c + "depthwise_conv1d.weight", DT, (h, 1, kernel))]
        out += _norm(c + "conv_norm", h, False) + _linear(c + "linear_end", h, h, False)
        out += _norm(b + "norm", h, False)
    return out + gemma3n_embedder("model.embed_audio.", a, 1536, text_hidden)


Audio = Callable[[dict[str, Any], int], list[Triple]]

# outer model_type -> (the audio config's model_type the entry was written from, its tower and projector)
AUDIO: dict[str, tuple[str, Audio]] = {
    "gemma4": ("gemma4_audio", _gemma4_audio),
    "gemma3n": ("gemma3n_audio", _gemma3n_audio),
    "gemma4_unified": ("gemma4_unified_audio", _gemma4_unified_audio),
    "inkling_mm_model": ("inkling_audio", inkling_audio),
    "muse_spark": ("muse_spark_audio", _muse_spark_audio),
    "dots3_note": ("dots3_note_audio_encoder", _dots3_note_audio),
    "qwen2_5_omni_thinker": ("qwen2_5_omni_audio_encoder", _qwen2_5_omni_audio),
    "qwen3_omni_moe_thinker": ("qwen3_omni_moe_audio_encoder", _qwen3_omni_audio),
    "apertus1p5": ("wavtokenizer_encoder", _wavtokenizer),
}


def _audio_config(cfg: ArchConfig) -> dict[str, Any] | None:
    value = cfg.raw.get("audio_config")
    return value if isinstance(value, dict) and value else None


def audio_modelled(cfg: ArchConfig) -> bool:
    """Whether the config's audio tower and projector are counted: its outer model_type has an entry and
    its audio config names the family the entry was written from."""
    a = _audio_config(cfg)
    entry = AUDIO.get(str(cfg.raw.get("model_type") or ""))
    return a is not None and entry is not None and str(a.get("model_type") or "") == entry[0]


def audio(cfg: ArchConfig, text_hidden: int) -> list[Triple]:
    a = _audio_config(cfg)
    if a is None or not audio_modelled(cfg):
        return []
    return AUDIO[str(cfg.raw.get("model_type"))][1](a, text_hidden)
