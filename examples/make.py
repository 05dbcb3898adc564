"""Writes examples/old and examples/new: two small Llama-layout checkpoints (config.json and a real
safetensors file whose weights are zeros) for the README's local-folder commands.

    python examples/make.py

new differs from old as a release would: 1 KV head instead of 2 (k_proj and v_proj reshaped, half the
KV cache) and rope_theta 500,000 -> 1,000,000. tests/test_readme.py checks the committed files are
what this writes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from hubdiff.testing import CommitSpec, write_checkpoint

HERE = Path(__file__).parent
HIDDEN, LAYERS, HEADS, HEAD_DIM, FFN, VOCAB = 64, 2, 4, 16, 128, 256


def checkpoint(kv_heads: int, rope_theta: float) -> CommitSpec:
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": HIDDEN,
        "intermediate_size": FFN,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS,
        "num_key_value_heads": kv_heads,
        "head_dim": HEAD_DIM,
        "vocab_size": VOCAB,
        "max_position_embeddings": 8192,
        "rope_theta": rope_theta,
        "rms_norm_eps": 1e-05,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }
    rows = [("model.embed_tokens.weight", "BF16", (VOCAB, HIDDEN))]
    for i in range(LAYERS):
        layer = f"model.layers.{i}"
        rows += [
            (f"{layer}.input_layernorm.weight", "BF16", (HIDDEN,)),
            (f"{layer}.self_attn.q_proj.weight", "BF16", (HEADS * HEAD_DIM, HIDDEN)),
            (f"{layer}.self_attn.k_proj.weight", "BF16", (kv_heads * HEAD_DIM, HIDDEN)),
            (f"{layer}.self_attn.v_proj.weight", "BF16", (kv_heads * HEAD_DIM, HIDDEN)),
            (f"{layer}.self_attn.o_proj.weight", "BF16", (HIDDEN, HEADS * HEAD_DIM)),
            (f"{layer}.post_attention_layernorm.weight", "BF16", (HIDDEN,)),
            (f"{layer}.mlp.gate_proj.weight", "BF16", (FFN, HIDDEN)),
            (f"{layer}.mlp.up_proj.weight", "BF16", (FFN, HIDDEN)),
            (f"{layer}.mlp.down_proj.weight", "BF16", (HIDDEN, FFN)),
        ]
    rows += [("model.norm.weight", "BF16", (HIDDEN,)), ("lm_head.weight", "BF16", (VOCAB, HIDDEN))]
    return CommitSpec({"config.json": (json.dumps(config, indent=2) + "\n").encode()}, rows)


def main(root: Path = HERE) -> None:
    for name, spec in (("old", checkpoint(2, 500_000.0)), ("new", checkpoint(1, 1_000_000.0))):
        shutil.rmtree(root / name, ignore_errors=True)
        write_checkpoint(root / name, spec)


if __name__ == "__main__":
    main()
