"""The run-time witness (``hubdiff metrics --witness``): transformers' own class, built from the config on
the meta device in a child process, counted beside hubdiff's figures.

One child is started for the whole file (about five seconds, mostly importing torch); the header path
and the disagreements reuse its answer.
"""

from __future__ import annotations

import dataclasses
import math

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from hubdiff._metrics import witness as witness_module
from hubdiff._metrics.compute import compute_metrics
from hubdiff._metrics.options import MetricsOptions
from hubdiff._metrics.witness import Witness, witness
from hubdiff.snapshot import Snapshot, Tensor

# Llama with a narrow MLP, an untied head and two layers: every figure written out below
CONFIG = {
    "model_type": "llama",
    "architectures": ["LlamaForCausalLM"],
    "hidden_size": 256,
    "intermediate_size": 512,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 1000,
    "max_position_embeddings": 512,
    "tie_word_embeddings": False,
    "auto_map": {"AutoModel": "remote_modeling.Model"},  # never run: the witness drops it
}
H, INTER, HEADS, KV, HEAD_DIM, V, LAYERS = 256, 512, 4, 2, 64, 1000, 2
PER_LAYER = (
    H * HEADS * HEAD_DIM
    + 2 * H * KV * HEAD_DIM
    + HEADS * HEAD_DIM * H  # q, k, v, o
    + 3 * H * INTER  # gate, up, down
    + 2 * H  # two norms
)
TOTAL = 2 * V * H + LAYERS * PER_LAYER + H  # embedding, head, layers, final norm


def _snapshot(tensors: list[Tensor] | None = None) -> Snapshot:
    head = ("org/tiny-llama", "main", "", None, CONFIG, None, (), {})
    return Snapshot(*head) if tensors is None else Snapshot.of_tensors(*head, tensors=tensors)


@pytest.fixture(scope="module")
def found() -> Witness:
    return witness(CONFIG)


@pytest.fixture
def reuse(found: Witness, monkeypatch: pytest.MonkeyPatch) -> Witness:
    """compute_metrics's witness answers with the fixture's, instead of starting another child."""
    monkeypatch.setattr(witness_module, "witness", lambda config, timeout=0: found)
    return found


def test_the_witness_lists_the_models_own_tensors(found: Witness) -> None:
    assert found.model_class == "LlamaForCausalLM" and found.reason == ""
    assert found.tensors is not None
    assert sum(math.prod(shape) for _, shape in found.tensors) == TOTAL
    assert found.build_seconds < found.seconds


def test_config_only_says_the_two_counts_agree(reuse: Witness) -> None:
    metrics = compute_metrics(_snapshot(), MetricsOptions(config_only=True, witness=True))
    assert metrics.params.total == TOTAL
    line = next(a for a in metrics.assumptions if a.startswith("witness:"))
    assert "LlamaForCausalLM" in line and f"holds {TOTAL:,} parameters: agrees in every component" in line
    assert metrics.unverified == ()


def test_a_disagreeing_witness_makes_the_config_only_figures_unverified(
    reuse: Witness, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert reuse.tensors is not None
    fewer = dataclasses.replace(reuse, tensors=tuple(t for t in reuse.tensors if "layers.1.mlp" not in t[0]))
    monkeypatch.setattr(witness_module, "witness", lambda config, timeout=0: fewer)
    metrics = compute_metrics(_snapshot(), MetricsOptions(config_only=True, witness=True))
    (reason,) = metrics.unverified
    missing = 3 * H * INTER
    assert f"holds {TOTAL - missing:,} parameters, hubdiff counts {TOTAL:,}: disagrees" in reason
    assert f"dense_mlp {LAYERS * 3 * H * INTER - missing:,} vs {LAYERS * 3 * H * INTER:,}" in reason


def test_headers_the_witness_is_a_config_vs_tensors_check(reuse: Witness) -> None:
    assert reuse.tensors is not None
    tensors = [Tensor(n, "BF16", s, "model.safetensors") for n, s in reuse.tensors]
    same = compute_metrics(_snapshot(tensors), MetricsOptions(witness=True))
    assert same.checks == () and any("agrees in every component" in a for a in same.assumptions)
    # a checkpoint whose second layer has no MLP: the class the config names holds one
    short = compute_metrics(
        _snapshot([t for t in tensors if "layers.1.mlp" not in t.name]), MetricsOptions(witness=True)
    )
    subjects = {c.subject: c for c in short.checks}
    check = subjects["parameters of transformers' class for the config"]
    assert (check.config_value, check.tensor_value) == (f"{TOTAL:,}", f"{TOTAL - 3 * H * INTER:,}")


def test_no_witness_for_remote_code_nor_without_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither starts a child; the output says the figure rests on hubdiff's own model."""
    remote = {**CONFIG, "model_type": "brand_new_arch_of_tomorrow"}
    got = witness(remote)
    assert got.tensors is None and "remote code is never run" in got.reason
    monkeypatch.setattr(witness_module, "available", lambda: False)
    metrics = compute_metrics(_snapshot(), MetricsOptions(config_only=True, witness=True))
    line = next(a for a in metrics.assumptions if a.startswith("witness:"))
    assert "witness: none (transformers is not importable)" in line  # torch is there (the test extra)
    assert "the figures rest on hubdiff's own model" in line
    assert any("proven exact by the sweep" in a for a in metrics.assumptions)


def test_the_witness_is_bounded_in_time() -> None:
    got = witness(CONFIG, timeout=0.05)
    assert got.tensors is None and "not built within 0.05 s" in got.reason
