"""``hubdiff diff SOURCE GGUF``: a safetensors release against a GGUF of it (``_compare.gguf_diff``).

The GGUF files are written by gguf-py's GGUFWriter, the safetensors folders by hubdiff.testing; the
names follow gguf-py's TensorNameMap for llama-family models.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType as Q
from gguf import GGUFWriter

from hubdiff._compare.gguf_diff import VariantDiff, pair_tensors, strip
from hubdiff.snapshot import Tensor
from hubdiff.testing import CommitSpec, RepoSpec, write_checkpoint

from .gguf_files import TENSORS, write_tiny
from .test_cli import hubdiff

TEMPLATE = "{{ messages }}"  # the chat template write_tiny puts in the GGUF
_TOP = {"token_embd": "model.embed_tokens", "output": "lm_head", "output_norm": "model.norm"}
_LAYER = {
    "attn_norm": "input_layernorm",
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_norm": "post_attention_layernorm",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
}


def _hf(gguf_name: str) -> str:
    base = gguf_name.removesuffix(".weight")
    if base.startswith("blk."):
        _, n, group = base.split(".")
        return f"model.layers.{n}.{_LAYER[group]}.weight"
    return f"{_TOP[base]}.weight"


def _source(
    folder: Path, tensors: list[tuple[str, str, tuple[int, ...]]], config: dict, template: str | None
):
    files = {"config.json": json.dumps(config).encode()}
    if template is not None:
        files["tokenizer_config.json"] = json.dumps({"chat_template": template}).encode()
    write_checkpoint(folder, CommitSpec(files, tensors))
    return folder


def _tiny_source(folder: Path, template: str | None = TEMPLATE) -> Path:
    """The safetensors release write_tiny's GGUF was made from: the same tensors in BF16."""
    tensors = [(_hf(name), "BF16", shape) for name, (shape, _) in TENSORS.items()]
    config = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 256, "tie_word_embeddings": False}
    return _source(folder, tensors, config, template)


def test_name_map_stacks_experts_and_follows_gemma_norms():
    t = [
        Tensor("model.layers.0.mlp.experts.1.gate_proj.weight", "BF16", (16, 32), "a"),
        Tensor("model.layers.0.mlp.experts.0.gate_proj.weight", "BF16", (16, 32), "a"),
        Tensor("model.layers.0.block_sparse_moe.experts.0.w2.weight", "BF16", (32, 16), "a"),
        Tensor("model.language_model.layers.3.self_attn.o_proj.weight", "BF16", (8, 8), "a"),
        Tensor("model.layers.0.post_attention_layernorm.weight", "BF16", (32,), "a"),
        Tensor("model.layers.0.pre_feedforward_layernorm.weight", "BF16", (32,), "a"),
        Tensor("vision_tower.patch_embed.weight", "BF16", (3, 3), "a"),
    ]
    pairs, unmapped = pair_tensors(t)
    by_name = {p.gguf: p for p in pairs}
    # two experts of (16, 32) stacked as (2, 16, 32): the GGUF's ne [32, 16, 2] reversed
    assert by_name["blk.0.ffn_gate_exps.weight"].shape == (2, 16, 32)
    assert by_name["blk.0.ffn_down_exps.weight"].shape == (1, 32, 16)  # Mixtral's w2 is down
    assert "blk.3.attn_output.weight" in by_name  # a multimodal checkpoint's language_model prefix
    # with a pre_feedforward_layernorm, post_attention_layernorm is Gemma's attn_post_norm
    assert {"blk.0.attn_post_norm.weight", "blk.0.ffn_norm.weight"} <= set(by_name)
    assert [u.name for u in unmapped] == ["vision_tower.patch_embed.weight"]


def test_a_gguf_of_the_same_model_is_every_tensor_accounted_for(tmp_path):
    write_tiny(tmp_path / "gguf")
    source = _tiny_source(tmp_path / "src")
    result = hubdiff("diff", str(source), str(tmp_path / "gguf"))
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "Tiny-Q4_K_M: every tensor accounted for" in out
    # 262,400 + 2 x 557,568 elements on both sides: quantization changes bytes, not elements
    assert "parameters: 1,377,536 in both" in out
    assert "attn_v.weight: BF16 -> Q6_K x2" in out and "attn_q.weight: BF16 -> Q4_K x2" in out
    # the strip: a character a layer (4 Q4_K, 6 Q6_K, F F32)
    assert "quantization by layer (0-1; F F32, 4 Q4_K, 6 Q6_K; . none):" in out
    assert any(line.split() == ["attn_v.weight", "66"] for line in out.splitlines())
    assert "chat template: same" in out
    data = json.loads(hubdiff("diff", str(source), str(tmp_path / "gguf"), "--json").stdout)
    assert (data["format"], data["kind"]) == (1, "gguf_diff")
    (v,) = data["variants"]
    assert v["differs"] is False and v["parameters"] == {"source": 1_377_536, "gguf": 1_377_536}
    assert v["types"]["ffn_down.weight"] == [{"source": "BF16", "gguf": "Q6_K", "tensors": 2}]


def test_templates_that_differ_are_a_difference(tmp_path):
    write_tiny(tmp_path / "gguf")
    source = _tiny_source(tmp_path / "src", template="{{ messages }}\n{{ eos }}")
    result = hubdiff("diff", str(source), str(tmp_path / "gguf"))
    assert result.returncode == 1
    assert "chat template: differ: from line 2 (source '{{ eos }}', GGUF ends)" in result.stdout


def _write_gguf(
    folder: Path,
    tensors: dict[str, tuple[int, ...]],
    name: str = "Moe-F32",
    arch: str = "qwen3moe",
    blocks: int = 2,
) -> None:
    """An F32 GGUF of ``tensors`` (zeros), written by gguf-py."""
    folder.mkdir(parents=True, exist_ok=True)
    writer = GGUFWriter(folder / f"{name}.gguf", arch)
    writer.add_block_count(blocks)
    writer.add_context_length(4096)
    for name, shape in tensors.items():
        writer.add_tensor(name, np.zeros(shape, dtype=np.float32), raw_dtype=Q.F32)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def _moe_gguf_tensors() -> dict[str, tuple[int, ...]]:
    out = {"token_embd.weight": (64, 32), "output_norm.weight": (32,), "rope_freqs.weight": (8,)}
    for n in range(2):
        out |= {
            f"blk.{n}.attn_q.weight": (32, 32),
            f"blk.{n}.ffn_gate_inp.weight": (4, 32),
            f"blk.{n}.ffn_gate_exps.weight": (4, 16, 32),
            f"blk.{n}.ffn_up_exps.weight": (4, 16, 32),
            f"blk.{n}.ffn_down_exps.weight": (4, 32, 16),
        }
    return out


def _moe_source(folder: Path) -> Path:
    """Two layers of 4 experts, a tied lm_head stored anyway, and an MTP layer (index 2)."""
    tensors = [("model.embed_tokens.weight", "BF16", (64, 32)), ("lm_head.weight", "BF16", (64, 32))]
    tensors.append(("model.norm.weight", "BF16", (32,)))
    for n in range(3):
        tensors.append((f"model.layers.{n}.self_attn.q_proj.weight", "BF16", (32, 32)))
        if n == 2:
            continue
        tensors.append((f"model.layers.{n}.mlp.gate.weight", "BF16", (4, 32)))
        for e in range(4):
            tensors += [
                (f"model.layers.{n}.mlp.experts.{e}.gate_proj.weight", "BF16", (16, 32)),
                (f"model.layers.{n}.mlp.experts.{e}.up_proj.weight", "BF16", (16, 32)),
                (f"model.layers.{n}.mlp.experts.{e}.down_proj.weight", "BF16", (32, 16)),
            ]
    config = {"model_type": "qwen3_moe", "num_hidden_layers": 2, "tie_word_embeddings": True}
    return _source(folder, tensors, config, None)


def test_parameters_reconciled_rope_freqs_added_tied_head_and_mtp_dropped(tmp_path):
    _write_gguf(tmp_path / "gguf", _moe_gguf_tensors())
    source = _moe_source(tmp_path / "src")
    result = hubdiff("diff", str(source), str(tmp_path / "gguf"))
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    # a layer: q 32 x 32 = 1,024, router 4 x 32 = 128, experts 4 x (16 x 32 x 2 + 32 x 16) = 6,144: 7,296
    # source: embed 2,048 + lm_head 2,048 + norm 32 + 2 x 7,296 + MTP q 1,024 = 19,744
    # GGUF:   token_embd 2,048 + output_norm 32 + 2 x 7,296 + rope_freqs 8 = 16,680
    assert "parameters: source 19,744, GGUF 16,680 (-3,064), because:" in out
    assert "dropped lm_head.weight: -2,048 (tied to the embeddings (tie_word_embeddings)" in out
    assert (
        "dropped model.layers.2.self_attn.q_proj.weight: -1,024 (MTP layer (index 2 >= num_hidden_layers 2)"
        in out
    )
    assert "added rope_freqs.weight: +8 (rope frequency factors, computed by the converter" in out
    assert "ffn_gate_exps.weight: BF16 -> F32 x2" in out  # 4 experts a layer, stacked into one tensor


def test_missing_reshaped_and_unexplained_tensors_are_named(tmp_path):
    tensors = _moe_gguf_tensors()
    del tensors["blk.1.attn_q.weight"]
    tensors["blk.0.ffn_gate_inp.weight"] = (8, 32)
    tensors["blk.0.attn_qkv.weight"] = (96, 32)
    tensors["blk.1.nextn.eh_proj.weight"] = (32, 64)  # explained: an MTP tensor, not a difference
    _write_gguf(tmp_path / "gguf", tensors)
    source = _moe_source(tmp_path / "src")
    result = hubdiff("diff", str(source), str(tmp_path / "gguf"))
    assert result.returncode == 1
    out = result.stdout
    assert "Moe-F32: differs" in out
    assert "missing from the GGUF:\n    blk.N.attn_q.weight (N = 1)" in out
    assert "only in the GGUF:\n    blk.N.attn_qkv.weight (N = 0)\n" in out
    assert "added blk.1.nextn.eh_proj.weight: +2,048 (an MTP (nextn) tensor" in out
    assert "reshaped blk.0.ffn_gate_inp.weight: source [4, 32], GGUF [8, 32]" in out
    data = json.loads(hubdiff("diff", str(source), str(tmp_path / "gguf"), "--json").stdout)
    (v,) = data["variants"]
    assert v["missing"] == ["blk.1.attn_q.weight"]
    assert v["reshaped"] == [{"name": "blk.0.ffn_gate_inp.weight", "source": [4, 32], "gguf": [8, 32]}]


def test_fp8_scales_and_rope_buffers_are_dropped_not_differences(tmp_path):
    write_tiny(tmp_path / "gguf")
    tensors = [
        (_hf(name), "F8_E4M3" if len(shape) == 2 else "BF16", shape) for name, (shape, _) in TENSORS.items()
    ]
    tensors += [
        ("model.layers.0.self_attn.q_proj.weight_scale_inv", "F32", (2, 2)),
        ("model.layers.0.self_attn.rotary_emb.inv_freq", "F32", (16,)),
    ]
    config = {"model_type": "llama", "num_hidden_layers": 2, "tie_word_embeddings": False}
    source = _source(tmp_path / "src", tensors, config, TEMPLATE)
    result = hubdiff("diff", str(source), str(tmp_path / "gguf"))
    assert result.returncode == 0, result.stdout + result.stderr
    # 4 scale values and 16 frequencies dropped: the source has 1,377,556 elements, the GGUF 1,377,536
    assert "parameters: source 1,377,556, GGUF 1,377,536 (-20), because:" in result.stdout
    assert (
        "dropped model.layers.0.self_attn.q_proj.weight_scale_inv: -4 (a quantization scale" in result.stdout
    )
    assert "dropped model.layers.0.self_attn.rotary_emb.inv_freq: -16 (a RoPE buffer" in result.stdout
    assert "attn_q.weight: F8_E4M3 -> Q4_K x2" in result.stdout


def test_strip_names_mixed_quantization_a_layer():
    d = VariantDiff("x", type_layers={"attn_v.weight": {0: "Q6_K", 1: "Q4_K", 3: "Q6_K"}})
    assert strip(d) == [
        "  quantization by layer (0-3; 4 Q4_K, 6 Q6_K; . none):",
        "    attn_v.weight 64.6",
    ]


def test_a_hub_gguf_repo_against_a_local_source(hub, tmp_path):
    write_tiny(tmp_path / "gguf")
    files = {p.name: p.read_bytes() for p in (tmp_path / "gguf").glob("*.gguf")}
    hub.add(RepoSpec("acme/Tiny-GGUF", [CommitSpec({"README.md": b"# tiny", **files})]))
    source = _tiny_source(tmp_path / "src")
    cache = str(tmp_path / "c")
    args = ("--endpoint", hub.endpoint, "--cache-dir", cache)
    result = hubdiff("diff", str(source), "acme/Tiny-GGUF", *args)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Tiny-Q4_K_M: every tensor accounted for" in result.stdout
    # a hostile header in the GGUF repo: one line naming repo, revision and file, exit 3
    hub.add(RepoSpec("acme/Bad-GGUF", [CommitSpec({"m.gguf": b"GGUF" + bytes(20)})]))
    result = hubdiff("diff", str(source), "acme/Bad-GGUF", *args)
    assert result.returncode == 3
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("hubdiff: acme/Bad-GGUF@") and " m.gguf: " in line


def test_a_hostile_local_gguf_is_one_line_and_exit_3(tmp_path):
    source = _tiny_source(tmp_path / "src")
    (tmp_path / "gguf").mkdir()
    (tmp_path / "gguf" / "m.gguf").write_bytes(b"GGUF" + bytes(20))
    result = hubdiff("diff", str(source), str(tmp_path / "gguf"))
    assert result.returncode == 3
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"hubdiff: {tmp_path / 'gguf'} m.gguf: ") and "version 0" in line


def test_a_hub_source_against_a_local_gguf(hub, tmp_path):
    write_tiny(tmp_path / "gguf")
    tensors = [(_hf(name), "BF16", shape) for name, (shape, _) in TENSORS.items()]
    config = {"model_type": "llama", "num_hidden_layers": 2, "tie_word_embeddings": False}
    files = {
        "config.json": json.dumps(config).encode(),
        "tokenizer_config.json": json.dumps({"chat_template": TEMPLATE}).encode(),
    }
    hub.add(RepoSpec("acme/Tiny", [CommitSpec(files, tensors)]))
    args = ("--endpoint", hub.endpoint, "--cache-dir", str(tmp_path / "c"))
    result = hubdiff("diff", "acme/Tiny", str(tmp_path / "gguf"), *args)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("acme/Tiny@") and "chat template: same" in result.stdout


def _mla_source(folder: Path) -> Path:
    """One layer of multi-head latent attention with a DSA indexer: 2 heads, q_lora 12, kv_lora 8,
    qk_nope 4, qk_rope 2, v 3 (kv_b: 2 x (4 + 3) = 14 rows of 8)."""
    layer = "model.layers.0.self_attn."
    tensors = [
        ("model.embed_tokens.weight", "BF16", (64, 16)),
        (layer + "q_a_proj.weight", "BF16", (12, 16)),
        (layer + "q_a_layernorm.weight", "BF16", (12,)),
        (layer + "q_b_proj.weight", "BF16", (2 * 6, 12)),
        (layer + "kv_a_proj_with_mqa.weight", "BF16", (8 + 2, 16)),
        (layer + "kv_a_layernorm.weight", "BF16", (8,)),
        (layer + "kv_b_proj.weight", "BF16", (14, 8)),
        (layer + "o_proj.weight", "BF16", (16, 2 * 3)),
        (layer + "indexer.wq_b.weight", "BF16", (8, 12)),
        (layer + "indexer.wk.weight", "BF16", (4, 16)),
        (layer + "indexer.k_norm.weight", "BF16", (4,)),
        (layer + "indexer.k_norm.bias", "BF16", (4,)),
        (layer + "indexer.weights_proj.weight", "BF16", (2, 16)),
    ]
    config = {"model_type": "glm_moe_dsa", "num_hidden_layers": 1, "tie_word_embeddings": True}
    return _source(folder, tensors, config, None)


def _mla_gguf(folder: Path, v_b: tuple[int, ...]) -> None:
    """The GGUF llama.cpp's converter writes of it: the same names by the glm-dsa map, kv_b split into
    k_b (heads, kv_lora, nope), the K part transposed, and v_b (heads, v, kv_lora)."""
    tensors = {
        "token_embd.weight": (64, 16),
        "blk.0.attn_q_a.weight": (12, 16),
        "blk.0.attn_q_a_norm.weight": (12,),
        "blk.0.attn_q_b.weight": (12, 12),
        "blk.0.attn_kv_a_mqa.weight": (10, 16),
        "blk.0.attn_kv_a_norm.weight": (8,),
        "blk.0.attn_k_b.weight": (2, 8, 4),
        "blk.0.attn_v_b.weight": v_b,
        "blk.0.attn_output.weight": (16, 6),
        "blk.0.indexer.attn_q_b.weight": (8, 12),
        "blk.0.indexer.attn_k.weight": (4, 16),
        "blk.0.indexer.k_norm.weight": (4,),
        "blk.0.indexer.k_norm.bias": (4,),
        "blk.0.indexer.proj.weight": (2, 16),
    }
    _write_gguf(folder, tensors, "Mla-F32", "glm-dsa", blocks=1)


def test_latent_attention_and_the_indexer_map_and_kv_b_is_split_as_the_converter_splits_it(tmp_path):
    source = _mla_source(tmp_path / "src")
    _mla_gguf(tmp_path / "gguf", v_b=(2, 3, 8))
    result = hubdiff("diff", str(source), str(tmp_path / "gguf"), "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    (v,) = json.loads(result.stdout)["variants"]
    # 1,024 + 192 + 12 + 144 + 160 + 8 + 112 + 96 + 96 + 64 + 4 + 4 + 32 elements on both sides
    assert v["parameters"] == {"source": 1_948, "gguf": 1_948} and not v["missing"] and not v["only_in_gguf"]
    assert v["types"]["attn_k_b.weight"] == [{"source": "BF16", "gguf": "F32", "tensors": 1}]
    assert v["types"]["indexer.proj.weight"] == [{"source": "BF16", "gguf": "F32", "tensors": 1}]


def test_a_kv_b_split_that_does_not_add_up_is_named(tmp_path):
    source = _mla_source(tmp_path / "src")
    _mla_gguf(tmp_path / "gguf", v_b=(2, 3, 6))  # v_b's kv_lora 6, not k_b's and the source's 8
    result = hubdiff("diff", str(source), str(tmp_path / "gguf"), "--json")
    assert result.returncode == 1
    (v,) = json.loads(result.stdout)["variants"]
    assert v["missing"] == ["blk.0.attn_kv_b.weight"]
    assert [x["name"] for x in v["only_in_gguf"]] == ["blk.0.attn_k_b.weight", "blk.0.attn_v_b.weight"]
