"""A normalised view of a model config: one place that knows every spelling of a field.

Configs nest the language model under ``text_config`` (multimodal releases) and spell the same field
several ways (``n_routed_experts``, ``num_experts``, ``num_local_experts``...). Values are read here and
nowhere else, so a new spelling is one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def _num(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class ArchConfig:
    raw: dict[str, Any]

    @property
    def text(self) -> dict[str, Any]:
        for key in ("text_config", "language_config", "llm_config"):
            nested = self.raw.get(key)
            if isinstance(nested, dict) and nested:
                return nested
        return self.raw

    @property
    def vision(self) -> dict[str, Any] | None:
        for key in ("vision_config", "visual", "vision_tower_config"):
            nested = self.raw.get(key)
            if isinstance(nested, dict) and nested:
                return nested
        return None

    def get(self, *keys: str, default: Any = None) -> Any:
        """The first of ``keys`` set (not None) in the text config, then the top level."""
        for source in (self.text, self.raw):
            for key in keys:
                if source.get(key) is not None:
                    return source[key]
        return default

    def number(self, *keys: str, default: int | None = None) -> int | None:
        value = _num(self.get(*keys))
        return default if value is None else value

    # -- shape of the language model --------------------------------------------------------
    @property
    def hidden_size(self) -> int | None:
        return self.number("hidden_size", "d_model", "n_embd", "dim")

    @property
    def num_layers(self) -> int:
        return self.number("num_hidden_layers", "n_layer", "num_layers", "n_layers", default=0) or 0

    @property
    def vocab_size(self) -> int | None:
        return self.number("vocab_size", "padded_vocab_size")

    @property
    def num_heads(self) -> int | None:
        return self.number("num_attention_heads", "n_head", "n_heads")

    @property
    def num_kv_heads(self) -> int | None:
        return self.number("num_key_value_heads", "n_kv_heads", "num_kv_heads", default=self.num_heads)

    @property
    def head_dim(self) -> int | None:
        explicit = self.number("head_dim", "attention_head_dim")
        if explicit:
            return explicit
        if self.hidden_size and self.num_heads:
            return self.hidden_size // self.num_heads
        return None

    @property
    def is_mla(self) -> bool:
        return self.number("kv_lora_rank") is not None

    @property
    def has_indexer(self) -> bool:
        return self.number("index_head_dim") is not None and self.number("index_n_heads") is not None

    @property
    def num_experts(self) -> int | None:
        return self.number(
            "n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts", "n_experts"
        )

    @property
    def experts_per_token(self) -> int | None:
        return self.number(
            "num_experts_per_tok",
            "moe_topk",
            "num_experts_per_token",
            "experts_per_token",
            "moe_top_k",
            "top_k_experts",
        )

    @property
    def num_shared_experts(self) -> int:
        return self.number("n_shared_experts", "num_shared_experts", default=0) or 0

    @property
    def mtp_layers(self) -> int:
        return (
            self.number("num_nextn_predict_layers", "mtp_num_hidden_layers", "num_mtp_layers", default=0) or 0
        )

    @property
    def max_context(self) -> int | None:
        return self.number("max_position_embeddings", "max_sequence_length", "seq_length", "n_positions")

    @property
    def dtype(self) -> str:
        value = self.get("torch_dtype", "dtype", default="bfloat16")
        return value if isinstance(value, str) else "bfloat16"

    @property
    def tied_embeddings(self) -> bool:
        return bool(self.get("tie_word_embeddings", default=False))

    @property
    def linear_attn(self) -> dict[str, Any]:
        value = self.get("linear_attn_config")
        return value if isinstance(value, dict) else {}

    @property
    def four_bit_uint8_weights(self) -> bool:
        """The quantization config says weights are 4-bit values packed two to a U8 (NVFP4, MXFP4, NF4, ...)."""
        quant = self.get("quantization_config")
        if not isinstance(quant, dict):
            return False
        if quant.get("load_in_4bit") is True:
            return True
        text = " ".join(
            str(quant.get(k, "")) for k in ("quant_algo", "format", "quant_method", "bnb_4bit_quant_type")
        )
        return any(tag in text.lower() for tag in ("fp4", "nvfp4", "mxfp4", "nf4", "w4a")) or (
            self.quant_bits == 4
            and bool(quant.get("config_groups") or quant.get("bits") or quant.get("num_bits"))
        )

    @property
    def quant_bits(self) -> int:
        """Bits of packed weights, from the quantization config (4 when it does not say)."""
        quant = self.get("quantization_config")
        if isinstance(quant, dict):
            for group in (quant.get("config_groups") or {}).values():
                bits = _num(((group or {}).get("weights") or {}).get("num_bits"))
                if bits:
                    return bits
            bits = _num(quant.get("bits")) or _num(quant.get("num_bits"))
            if bits:
                return bits
        return 4
