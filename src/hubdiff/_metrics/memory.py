"""Total memory a deployment asks about: the weights, plus each sequence's KV cache and recurrent state
at a context, times a batch of sequences. Built from figures the metrics already hold, so it adds no
model of its own: weights are the stored bytes by dtype (the headers', or the estimate's dtype), the KV
cache is what ``KVReport.bytes_at`` counts (sliding windows capped, state included once a sequence).
Activations, the engine's workspace and fragmentation are not counted: a lower bound on one GPU's
worth of memory, the serving figures (``--tp``) split it per rank.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .results import Metrics


@dataclass(frozen=True)
class TotalMemory:
    weight_bytes: int
    kv_bytes_per_sequence: int  # KV cache at the context, windows capped, state excluded
    state_bytes_per_sequence: int
    context_tokens: int
    batch_size: int
    assumptions: tuple[str, ...]

    @property
    def total_bytes(self) -> int:
        return self.weight_bytes + self.batch_size * (
            self.kv_bytes_per_sequence + self.state_bytes_per_sequence
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "weight_bytes": self.weight_bytes,
            "kv_bytes_per_sequence": self.kv_bytes_per_sequence,
            "state_bytes_per_sequence": self.state_bytes_per_sequence,
            "context_tokens": self.context_tokens,
            "batch_size": self.batch_size,
            "total_bytes": self.total_bytes,
            "assumptions": list(self.assumptions),
        }


def total_memory(
    metrics: Metrics, stored_bytes: int | None, batch_size: int = 1, context: int | None = None
) -> TotalMemory:
    """``stored_bytes``: the checkpoint's tensor bytes when its headers were read (exact, packed dtypes
    included); without them the estimate's parameters are sized in the dtype they were estimated in."""
    kv = metrics.kv
    tokens = kv.context_tokens if context is None else context
    state = kv.state_bytes_per_sequence
    if stored_bytes is not None:
        weights, stored = stored_bytes, "weights: the stored bytes of every tensor (safetensors headers)"
    else:
        from .quantized import basis

        weights = metrics.params.stored_bytes
        stored = "weights: " + basis(metrics.cfg).removeprefix("estimated from config.json").lstrip(": ")
    assumptions = [
        stored,
        f"KV cache at {tokens:,} tokens a sequence in {kv.kv_dtype}, sliding windows capped",
        f"recurrent state {state:,} bytes a sequence" if state else "no recurrent state",
        f"a batch of {batch_size} sequence(s); activations and the engine's workspace not counted",
    ]
    return TotalMemory(weights, kv.bytes_at(tokens) - state, state, tokens, batch_size, tuple(assumptions))
