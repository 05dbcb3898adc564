"""FastVLM's tower without timm: the FastViT table held to published and recorded figures, and what is
marked.

The sweep builds FastVLM only where timm is installed (scripts/sweep.py); the suite's environment has no
timm, so the tower's estimate is held here to timm's published figure of a FastViT and to one recorded
from timm itself, and the projector to arithmetic.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from hubdiff._metrics.estimate_fastvit import FASTVIT, fastvit

_BUFFERS = ("running_mean", "running_var", "num_batches_tracked")


def _params(tensors: list[tuple[str, str, tuple[int, ...]]]) -> int:
    return sum(math.prod(shape) for name, _, shape in tensors if not name.endswith(_BUFFERS))


def test_fastvit_t8_is_timms_published_figure() -> None:
    """timm's model card of fastvit_t8.apple_in1k states 4.0 M parameters ("Params (M): 4.0",
    hub-blob:apple/coreml-FastViT-T8@refs/pr/1:README.md, the card of
    timm/fastvit_t8.apple_in1k): the training-time branches (as timm builds it by default), without the
    batch norms' running statistics, plus the ImageNet classifier over 2 x 384 channels."""
    tower = _params(fastvit(FASTVIT["fastvit_t8"], "", fused=False))
    classifier = 2 * 384 * 1000 + 1000
    assert round((tower + classifier) / 1e6, 1) == 4.0


# timm 1.0.29 (the version the sweep's rows of FastVLM were recorded with):
# sum(t.numel() for t in timm.create_model("fastvit_mci3", num_classes=0, inference_mode=True)
# .state_dict().values()), built on torch's meta device: FastVLM's default tower (FastVlmConfig's
# vision_config), re-parameterised as its model_args ask, its MLPs' batch-norm statistics included.
FASTVIT_MCI3_FUSED = 122_749_964
FASTVIT_MCI3_FUSED_TENSORS = 628


def test_fastvit_mci3_is_timms_tower() -> None:
    tensors = fastvit(FASTVIT["fastvit_mci3"], "", fused=True)
    assert len({name for name, _, _ in tensors}) == len(tensors) == FASTVIT_MCI3_FUSED_TENSORS
    assert sum(math.prod(shape) for _, _, shape in tensors) == FASTVIT_MCI3_FUSED
    # the final block: a depthwise 3x3 convolution to 2 x 1536 channels, squeezed to 3072 / 16
    assert ("final_conv.reparam_conv.weight", "BF16", (3072, 1, 3, 3)) in tensors
    assert ("final_conv.se.fc1.weight", "BF16", (192, 3072, 1, 1)) in tensors


def _metrics(vision: dict[str, Any], **outer: Any) -> Any:
    pytest.importorskip("transformers")
    from hubdiff._metrics.compute import compute_metrics
    from hubdiff._metrics.options import MetricsOptions
    from hubdiff.snapshot import Snapshot

    config: dict[str, Any] = {
        "model_type": "fast_vlm",
        "text_config": {"model_type": "qwen2", "hidden_size": 3584},
        "vision_config": {"model_type": "timm_wrapper", **vision},
        **outer,
    }
    return compute_metrics(
        Snapshot("x", "local", "", None, config, None, (), {}, ()), MetricsOptions(config_only=True)
    )


def test_the_default_fast_vlm_counts_its_tower_and_projector() -> None:
    m = _metrics(
        {"architecture": "fastvit_mci3", "hidden_size": 3072, "model_args": {"inference_mode": True}}
    )
    assert m.params.by_component.get("vision_tower") == FASTVIT_MCI3_FUSED
    # two biased linears: 3072 -> 3584 -> 3584
    assert m.params.by_component.get("multimodal_projector") == 3072 * 3584 + 3584 + 3584 * 3584 + 3584
    assert not [r for r in m.unverified if "tower" in r or "not understood" in r]


def test_an_architecture_not_in_the_table_is_marked_never_guessed() -> None:
    m = _metrics({"architecture": "fastvit_mci5", "hidden_size": 3072})
    assert "vision tower timm_wrapper not modelled: not counted" in m.unverified
    assert not m.params.by_component.get("vision_tower")


def test_model_args_that_may_change_the_tower_are_marked() -> None:
    m = _metrics(
        {
            "architecture": "fastvit_mci3",
            "hidden_size": 3072,
            "model_args": {
                "inference_mode": False,
                "repmixer_kernel_size": 5,
                "layer_scale_init_value": None,  # dropped by timm.create_model, as every None
                "drop_path_rate": 0.1,
            },
        }
    )
    assert [r for r in m.unverified if "model_args" in r] == [
        "vision_config.model_args.repmixer_kernel_size not understood: timm's fastvit_mci3 taken as defined"
    ]
