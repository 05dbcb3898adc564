"""Evolla's protein side held to arithmetic written out from modeling_evolla.py, at the sizes
EvollaConfig documents as Evolla-10B's (westlake-repl/Evolla-10B-hf): a 33-layer SaProt-650M encoder,
a six-block resampler of 64 latents, and an aligner in every fourth of the 32 Llama layers."""

from __future__ import annotations

from typing import Any

from hubdiff._metrics.compute import compute_metrics
from hubdiff._metrics.options import MetricsOptions
from hubdiff.snapshot import Snapshot

SAPROT_650M = {
    "vocab_size": 446,
    "hidden_size": 1280,
    "num_hidden_layers": 33,
    "num_attention_heads": 20,
    "intermediate_size": 5120,
    "max_position_embeddings": 1026,
    "position_embedding_type": "rotary",
    "emb_layer_norm_before": False,
}
EVOLLA_10B = {
    "model_type": "evolla",
    "architectures": ["EvollaForProteinText2Text"],
    "vocab_size": 128256,
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "max_position_embeddings": 8192,
    "tie_word_embeddings": False,
    "aligner_ffn_mult": 4,
    "aligner_enable_bias": True,
    "aligner_num_add_layers": 8,
    "resampler_depth": 6,
    "resampler_dim_head": 64,
    "resampler_heads": 8,
    "resampler_num_latents": 64,
    "resampler_ff_mult": 4,
    "protein_encoder_config": SAPROT_650M,
}


def _metrics(config: dict[str, Any]) -> Any:
    return compute_metrics(
        Snapshot("x", "local", "", None, config, None, (), {}, ()), MetricsOptions(config_only=True)
    )


def test_evolla_10b_protein_side_by_hand() -> None:
    d, ff, h = 1280, 5120, 4096
    # SaProt: token embeddings, the rotary table (64-wide heads: 32 frequencies), per layer biased q/k/v
    # and output (4d^2 + 4d), two LayerNorms (4d), a biased MLP (2 d ff + ff + d); the final LayerNorm
    saprot = 446 * d + 32 + 33 * (4 * d * d + 4 * d + 4 * d + 2 * d * ff + ff + d) + 2 * d
    # resampler: latents; per block two LayerNorms, to_q / to_kv / to_out over 8 x 64 = 512 (4 x 512 d),
    # a LayerNorm and a 4d-wide unbiased feed-forward; then a biased projection to h and a LayerNorm there
    resampler = 64 * d + 6 * (4 * d + 4 * 512 * d + 2 * d + 8 * d * d) + (h * d + h) + 2 * h
    assert saprot == 649_928_992 and resampler == 99_755_008
    # an aligner in layers 3, 7, ..., 31: biased query, key_protein, value_protein and out_proj (4h^2 +
    # 4h), an RMS norm (h), a LayerNorm and a 4h-wide unbiased feed-forward (2h + 8h^2), two gates
    aligners = 8 * (4 * h * h + 4 * h + h + 2 * h + 8 * h * h + 2)
    # Llama 3 8B's decoder (8,030,261,248 parameters, its release's count): embeddings and an untied head, 32 layers of GQA attention (q, o: h^2; k, v:
    # h x 1024), a gated MLP and two RMS norms, a final norm
    llama = 2 * 128256 * h + 32 * (2 * h * h + 2 * 1024 * h + 3 * h * 14336 + 2 * h) + h
    assert llama == 8_030_261_248
    m = _metrics(EVOLLA_10B)
    assert m.params.by_component.get("vision_tower") == saprot + resampler
    assert m.params.total == llama + saprot + resampler + aligners
    # the protein's side runs once per protein; the aligners, in the decoder's layers, for every token
    assert m.active_params == llama + aligners
    assert not [r for r in m.unverified if "not understood" in r or "not counted" in r]


def test_saprot_switches_and_an_unbiased_aligner_output() -> None:
    """Learned positions with position_embedding_type absolute, an embedding LayerNorm with
    emb_layer_norm_before, and aligner_enable_bias off: out_proj loses its bias."""
    base = _metrics(EVOLLA_10B).params.total
    switched = {
        **EVOLLA_10B,
        "aligner_enable_bias": False,
        "protein_encoder_config": {
            **SAPROT_650M,
            "position_embedding_type": "absolute",
            "emb_layer_norm_before": True,
        },
    }
    assert _metrics(switched).params.total == base + 1026 * 1280 + 2 * 1280 - 8 * 4096


def test_the_model_type_evollas_release_names_is_read_the_same() -> None:
    """transformers maps model_type EvollaModel to EvollaConfig for the released checkpoints' config."""
    named = _metrics({**EVOLLA_10B, "model_type": "EvollaModel"})
    assert named.params.by_component == _metrics(EVOLLA_10B).params.by_component
