"""Gemma 3n's towers without timm: the MobileNetV5 table held to timm's figure, and what is marked.

The sweep builds Gemma 3n only where timm is installed (scripts/sweep.py); the suite's environment has no
timm, so the tower's estimate is held here to a figure recorded from timm itself, and its audio encoder
and embedders to transformers' classes, which need no timm.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from hubdiff._metrics.estimate_mobilenet import MOBILENET_V5, mobilenet_v5

# timm 1.0.29 (the version the sweep's rows of Gemma 3n were recorded with):
# sum(p.numel() for p in timm.create_model("mobilenetv5_300m_enc", num_classes=0).state_dict().values()),
# built on torch's meta device, 548 tensors. Gemma 3n's vision config names this architecture
# (Gemma3nVisionConfig's default, and google/gemma-3n-E2B's and -E4B's config.json); no published
# per-tower figure of a release was found to hold it to instead.
MOBILENETV5_300M_ENC = 294_126_912
MOBILENETV5_300M_ENC_TENSORS = 548


def test_mobilenetv5_300m_enc_is_timms_encoder() -> None:
    tensors = mobilenet_v5(MOBILENET_V5["mobilenetv5_300m_enc"], "")
    assert len({name for name, _, _ in tensors}) == len(tensors) == MOBILENETV5_300M_ENC_TENSORS
    assert sum(math.prod(shape) for _, _, shape in tensors) == MOBILENETV5_300M_ENC
    names = {name for name, _, _ in tensors}
    # the fusion adapter reads the last two stages' ends (640 + 1280 channels) and has no layer scale
    assert ("msfa.ffn.pw_exp.conv.weight", "BF16", (3840, 1920, 1, 1)) in tensors
    assert "msfa.ffn.layer_scale.gamma" not in names
    assert "blocks.3.38.layer_scale.gamma" in names and "blocks.3.39.norm.weight" not in names


def _metrics(vision: dict[str, Any], audio: dict[str, Any] | None = None) -> Any:
    pytest.importorskip("transformers")
    from hubdiff._metrics.compute import compute_metrics
    from hubdiff._metrics.options import MetricsOptions
    from hubdiff.snapshot import Snapshot

    config: dict[str, Any] = {
        "model_type": "gemma3n",
        "vision_config": {"model_type": "gemma3n_vision", **vision},
    }
    if audio is not None:
        config["audio_config"] = {"model_type": "gemma3n_audio", **audio}
    return compute_metrics(
        Snapshot("x", "local", "", None, config, None, (), {}, ()), MetricsOptions(config_only=True)
    )


def test_the_default_gemma3n_counts_both_towers_and_their_embedders() -> None:
    """Gemma3nConfig's defaults (mobilenetv5_300m_enc, the 12-layer conformer): the tower's figure is timm's
    and the audio encoder's, counted with it, is transformers' class's on the meta device."""
    torch = pytest.importorskip("torch")
    from transformers import Gemma3nAudioConfig, Gemma3nTextConfig
    from transformers.models.gemma3n.modeling_gemma3n import Gemma3nAudioEncoder, Gemma3nMultimodalEmbedder

    with torch.device("meta"):
        audio = sum(p.numel() for p in Gemma3nAudioEncoder(Gemma3nAudioConfig()).state_dict().values())
        embedders = sum(
            p.numel()
            for config in (Gemma3nAudioConfig(),)
            for p in Gemma3nMultimodalEmbedder(config, Gemma3nTextConfig()).state_dict().values()
        )
    m = _metrics({"architecture": "mobilenetv5_300m_enc"}, {})
    assert m.params.by_component.get("vision_tower") == MOBILENETV5_300M_ENC + audio
    vision_embedder = 128 * 2048 + 2 * 2048 + Gemma3nTextConfig().hidden_size * 2048
    assert m.params.by_component.get("multimodal_projector") == vision_embedder + embedders
    assert not [r for r in m.unverified if "tower" in r or "not understood" in r or "further model" in r]


def test_an_architecture_not_in_the_table_is_marked_never_guessed() -> None:
    m = _metrics({"architecture": "mobilenetv5_base"})
    assert "vision tower gemma3n_vision not modelled: not counted" in m.unverified
    assert not m.params.by_component.get("vision_tower")


def test_model_args_that_may_change_the_tower_are_marked() -> None:
    m = _metrics(
        {
            "architecture": "mobilenetv5_300m_enc",
            "model_args": {"channel_multiplier": 0.5, "drop_path_rate": 0.1},
        }
    )
    marks = [r for r in m.unverified if "model_args" in r]
    assert marks == [
        "vision_config.model_args.channel_multiplier not understood: timm's mobilenetv5_300m_enc taken as defined"
    ]


def test_a_conformer_key_the_estimate_does_not_read_is_marked() -> None:
    m = _metrics(
        {"architecture": "mobilenetv5_300m_enc"}, {"conf_num_experts": 4, "conf_attention_chunk_size": 24}
    )
    assert [r for r in m.unverified if r.startswith("audio_config.")] == [
        "audio_config.conf_num_experts not understood"
    ]
