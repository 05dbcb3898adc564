"""The names of hubdiff's figures and their units: the vocabulary the metrics, the serving report, the
baselines' claims and the reports share. Nothing here computes; everything that does imports it."""

from __future__ import annotations

# Parameters are counted by component: every tensor is named to one of these (``components.classify``).
COMPONENTS = (
    "embeddings",
    "output_head",
    "attention",
    "dsa_indexer",
    "linear_attention",
    "dense_mlp",
    "routed_experts",
    "shared_experts",
    "routers",
    "norms",
    "hyper_connections",
    "vision_tower",
    "multimodal_projector",
    "mtp",
    "other",
)

# The unit of every figure: "params" (written 25.17M, 0.56B), "bytes" (6.0 KB, 49.9 GB) or "count".
FIGURE_UNITS: dict[str, str] = {
    **{
        name: "params"
        for name in (
            "total_params",
            "main_params",
            "active_params",
            "active_params_without_embeddings",
            "active_params_without_embeddings_and_head",
            "routed_expert_params",
            "shared_expert_params",
        )
    },
    **{f"{component}_params": "params" for component in COMPONENTS},
    **{
        name: "bytes"
        for name in (
            "kv_bytes_per_token",
            "kv_window_bytes_per_token",
            "state_bytes_per_sequence",
            "kv_bytes_at_context",
            "quantization_scale_bytes",
        )
    },
    **{
        name: "count"
        for name in (
            "routed_experts_per_layer",
            "shared_experts_per_layer",
            "experts_per_token",
            "moe_layers",
            "layers",
            "mtp_layers",
            "attention_layers",
            "indexer_layers",
            "shared_indexer_layers",
            "layers_with_indexer_tensors",
            "context_tokens",
        )
    },
}
