"""The held-back pair of issue 32, written out: two releases with the same weights and config where
the chat template gains a tools block and a ``<think>`` opener, ``eos_token`` goes from ``<|im_end|>`` to
``<|endoftext|>``, and generation_config's ``eos_token_id`` and ``temperature`` change.

The templates follow the ChatML layout Qwen2.5 releases use (``<|im_start|>role\\n...<|im_end|>``,
tools listed in the system turn inside ``<tools></tools>``, calls in ``<tool_call></tool_call>``), written
here for the test; the token ids are Qwen2's (151643 ``<|endoftext|>``, 151644 ``<|im_start|>``, 151645
``<|im_end|>``, as its tokenizer_config.json's added_tokens_decoder lists them).
"""

from __future__ import annotations

import json
from typing import Any

from hubdiff.testing import CommitSpec

OLD_TEMPLATE = """{%- for message in messages %}
{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}
{%- endfor %}
{%- if add_generation_prompt %}
{{- '<|im_start|>assistant\\n' }}
{%- endif %}
"""

NEW_TEMPLATE = """{%- if tools %}
{{- '<|im_start|>system\\n# Tools\\n\\nYou may call one or more functions.\\n<tools>' }}
{%- for tool in tools %}
{{- '\\n' + (tool | tojson) }}
{%- endfor %}
{{- '\\n</tools><|im_end|>\\n' }}
{%- endif %}
{%- for message in messages %}
{%- if message.tool_calls %}
{{- '<|im_start|>assistant\\n' }}
{%- for call in message.tool_calls %}
{{- '<tool_call>\\n' + (call.function | tojson) + '\\n</tool_call>' }}
{%- endfor %}
{{- '<|im_end|>\\n' }}
{%- else %}
{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
{{- '<|im_start|>assistant\\n<think>\\n' }}
{%- endif %}
"""

ADDED = {
    "151643": {"content": "<|endoftext|>", "special": True},
    "151644": {"content": "<|im_start|>", "special": True},
    "151645": {"content": "<|im_end|>", "special": True},
}
CONFIG = {"model_type": "qwen2", "hidden_size": 8, "num_hidden_layers": 1, "vocab_size": 151936}
TENSORS = [
    ("model.layers.0.mlp.down_proj.weight", "BF16", (8, 8)),
    ("model.embed_tokens.weight", "BF16", (16, 8)),
]


def tokenizer_config(template: str, eos: str, **extra: Any) -> bytes:
    return json.dumps(
        {
            "added_tokens_decoder": ADDED,
            "bos_token": None,
            "chat_template": template,
            "eos_token": eos,
            "pad_token": "<|endoftext|>",
            "model_max_length": 131072,
            "tokenizer_class": "Qwen2Tokenizer",
            **extra,
        },
        indent=2,
    ).encode()


def generation_config(eos_id: int, temperature: float) -> bytes:
    return json.dumps(
        {
            "bos_token_id": 151643,
            "do_sample": True,
            "eos_token_id": eos_id,
            "temperature": temperature,
            "top_p": 0.8,
            "transformers_version": "4.51.0",
        },
        indent=2,
    ).encode()


def release(template: str, eos: str, eos_id: int, temperature: float, **files: bytes) -> CommitSpec:
    return CommitSpec(
        {
            "config.json": json.dumps(CONFIG).encode(),
            "tokenizer_config.json": tokenizer_config(template, eos),
            "generation_config.json": generation_config(eos_id, temperature),
            **files,
        },
        TENSORS,
    )


def old_release() -> CommitSpec:
    return release(OLD_TEMPLATE, "<|im_end|>", 151645, 0.7)


def new_release() -> CommitSpec:
    return release(NEW_TEMPLATE, "<|endoftext|>", 151643, 0.6)
