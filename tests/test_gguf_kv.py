"""The KV cache of a GGUF model as llama.cpp allocates it, from the header alone (``_metrics.gguf_kv``).

Every figure below is worked out by hand from llama.cpp's rules (llama-cpp-python 0.3.36's vendored
llama.cpp: ``llama_kv_cache`` makes a K tensor of type_k with n_embd_k_gqa x kv_size elements a layer
and a V likewise, none for MLA; a q8_0 row is n / 32 x 34 bytes, a q4_0 row n / 32 x 18; n_ctx is
padded to 256; the SWA cache has PAD(min(n_ctx, n_swa + n_ubatch), 256) cells; a recurrent layer keeps
(d_conv - 1) x (d_inner + 2 x n_group x d_state) + d_state x d_inner F32 values a sequence). The files
are written by gguf-py's GGUFWriter.
"""

from __future__ import annotations

import json

import pytest

from hubdiff._metrics.gguf_kv import KVSettings, KVUsage, kv_cache
from hubdiff._source.gguf import parse_gguf

from .gguf_files import write_model
from .test_cli import hubdiff


def _meta(tmp_path, arch, setup):
    path = write_model(tmp_path, arch, arch, setup)
    data = path.read_bytes()
    return parse_gguf(data, len(data)).metadata


def _gqa(w):
    """Llama-shaped: 4 layers, 512 wide, 8 query heads of 64, 2 KV heads: K and V 2 x 64 = 128 a layer."""
    w.add_block_count(4)
    w.add_context_length(8192)
    w.add_embedding_length(512)
    w.add_head_count(8)
    w.add_head_count_kv(2)


def test_gqa_bytes_a_token_in_f16_q8_0_and_q4_0(tmp_path):
    meta = _meta(tmp_path, "llama", _gqa)
    f16 = kv_cache(meta)
    # K 128 + V 128 elements x 2 bytes x 4 layers = 2,048 bytes a token
    assert f16.bytes_per_token == (128 + 128) * 2 * 4 == 2048
    assert f16.cells == 8192 and f16.kv_bytes == 2048 * 8192 == 16_777_216
    assert f16.k_bytes == f16.v_bytes == 128 * 2 * 4 * 8192
    # q8_0: 128 / 32 = 4 blocks of 34 bytes = 136 a row; (136 + 136) x 4 = 1,088
    assert kv_cache(meta, KVSettings("q8_0")).bytes_per_token == (4 * 34 + 4 * 34) * 4 == 1088
    # q4_0: 4 blocks of 18 = 72 a row; (72 + 72) x 4 = 576
    assert kv_cache(meta, KVSettings("q4_0")).bytes_per_token == (4 * 18 + 4 * 18) * 4 == 576
    # n_ctx 1000 is padded to 1,024 cells (GGML_PAD(n_ctx, 256))
    small = kv_cache(meta, KVSettings("f16", n_ctx=1000))
    assert small.n_ctx == small.cells == 1024 and small.kv_bytes == 2048 * 1024
    # two sequences, no unified cache: n_ctx_seq = PAD(1024 / 2, 256) = 512 cells in each of 2 streams
    two = kv_cache(meta, KVSettings("f16", n_ctx=1000, n_seq=2))
    assert (two.cells, two.streams, two.kv_bytes) == (512, 2, 2048 * 512 * 2)


def test_unknown_cache_type_is_refused():
    with pytest.raises(KVUsage, match="f32, f16, bf16, q8_0, q4_0"):
        kv_cache({"general.architecture": "llama"}, KVSettings("fp8"))


def _per_layer(w):
    """Per-layer KV heads [8, 4, 2, 1] with K heads of 128 and V heads of 64."""
    w.add_block_count(4)
    w.add_context_length(4096)
    w.add_embedding_length(1024)
    w.add_head_count(8)
    w.add_head_count_kv([8, 4, 2, 1])
    w.add_key_length(128)
    w.add_value_length(64)


def test_per_layer_head_counts(tmp_path):
    cache = kv_cache(_meta(tmp_path, "llama", _per_layer))
    # K: 128 x (8 + 4 + 2 + 1) = 1,920; V: 64 x 15 = 960; f16: (1,920 + 960) x 2 = 5,760 a token
    assert [layer.k_elements for layer in cache.layers] == [1024, 512, 256, 128]
    assert [layer.v_elements for layer in cache.layers] == [512, 256, 128, 64]
    assert cache.bytes_per_token == (1920 + 960) * 2 == 5760
    assert cache.kv_bytes == 5760 * 4096 and cache.computed
    # q4_0: V of the last layer is 64 = 2 blocks of 18; every row is whole blocks
    q4 = kv_cache(_meta(tmp_path, "llama", _per_layer), KVSettings("q4_0"))
    assert q4.bytes_per_token == (1920 + 960) // 32 * 18 == 1620


def test_a_per_layer_array_of_the_wrong_length_is_a_problem(tmp_path):
    def setup(w):
        _per_layer(w)

    meta = _meta(tmp_path, "llama", setup)
    meta["llama.attention.head_count_kv"] = [8, 4, 2]
    cache = kv_cache(meta)
    assert not cache.computed
    assert any("has 3 entries; llama.cpp wants block_count (4)" in p for p in cache.problems)


def _gemma3(window: int | None = 1024, pattern=None):
    def setup(w):
        """12 layers, 8 heads, 4 KV heads of 256: K = V = 1,024 elements a layer, 4,096 bytes in f16."""
        w.add_block_count(12)
        w.add_context_length(32768)
        w.add_embedding_length(2048)
        w.add_head_count(8)
        w.add_head_count_kv(4)
        w.add_key_length(256)
        w.add_value_length(256)
        if window is not None:
            w.add_sliding_window(window)
        if pattern is not None:
            w.add_sliding_window_pattern(pattern)

    return setup


def test_sliding_window_layers_hold_the_window_plus_a_ubatch(tmp_path):
    cache = kv_cache(_meta(tmp_path, "gemma3", _gemma3()))
    # gemma3's pattern 6: layers 5 and 11 attend fully, the other 10 through the window
    assert [layer.index for layer in cache.layers if layer.kind == "full"] == [5, 11]
    assert cache.count("swa") == 10 and cache.n_swa == 1024
    # full: 2 layers x 4,096 bytes = 8,192 a token, 32,768 cells
    assert cache.bytes_per_token == 2 * 4096 == 8192 and cache.cells == 32768
    # SWA cells: PAD(min(32,768, 1,024 x 1 + 512), 256) = 1,536
    assert cache.swa_cells == 1536 and cache.swa_bytes_per_cell == 10 * 4096
    assert cache.kv_bytes == 8192 * 32768 + 10 * 4096 * 1536 == 331_350_016
    # a context smaller than the window: PAD(min(1,024, 1,536), 256) = 1,024 cells in both caches
    small = kv_cache(_meta(tmp_path, "gemma3", _gemma3()), KVSettings(n_ctx=1000))
    assert small.swa_cells == small.cells == 1024
    # swa_full: the window cache is as large as the full one
    full = kv_cache(_meta(tmp_path, "gemma3", _gemma3()), KVSettings(swa_full=True))
    assert full.swa_cells == 32768 and full.kv_bytes == 12 * 4096 * 32768
    # a window of 1,000: PAD(1,000 + 512, 256) = 1,536 as well; of 1,100: PAD(1,612, 256) = 1,792
    assert kv_cache(_meta(tmp_path, "gemma3", _gemma3(1100))).swa_cells == 1792


def test_sliding_window_pattern_from_the_header(tmp_path):
    # a scalar pattern of 3: layers 2, 5, 8, 11 full
    cache = kv_cache(_meta(tmp_path, "gemma3", _gemma3(pattern=3)))
    assert [layer.index for layer in cache.layers if layer.kind == "full"] == [2, 5, 8, 11]
    # a per-layer array: the first and last layers full
    flags = [False] + [True] * 10 + [False]
    cache = kv_cache(_meta(tmp_path, "gemma3", _gemma3(pattern=flags)))
    assert [layer.index for layer in cache.layers if layer.kind == "full"] == [0, 11]
    # gemma3 without a window key has no sliding window (gemma3.cpp: swa_type NONE)
    plain = kv_cache(_meta(tmp_path, "gemma3", _gemma3(None)))
    assert plain.n_swa == 0 and plain.bytes_per_token == 12 * 4096


def _deepseek2(w):
    """DeepSeek-2 MLA as convert_hf_to_gguf writes it: one KV head of kv_lora_rank 512 + rope 64 = 576
    (key_length), 512 (value_length), the MHA head sizes in key_length_mla/value_length_mla; 3 blocks,
    the last an MTP (nextn) layer."""
    w.add_block_count(3)
    w.add_context_length(4096)
    w.add_embedding_length(2048)
    w.add_head_count(16)
    w.add_head_count_kv(1)
    w.add_key_length(576)
    w.add_value_length(512)
    w.add_key_length_mla(192)
    w.add_value_length_mla(128)
    w.add_kv_lora_rank(512)
    w.add_nextn_predict_layers(1)


def test_mla_is_a_k_only_cache(tmp_path):
    cache = kv_cache(_meta(tmp_path, "deepseek2", _deepseek2))
    assert cache.mla and cache.kv_lora_rank == 512
    # 2 layers (the MTP layer is filtered from the main cache) x 576 x 2 bytes = 2,304 a token, no V
    assert [layer.kind for layer in cache.layers] == ["full", "full", "mtp"]
    assert cache.bytes_per_token == 2 * 576 * 2 == 2304
    assert cache.v_bytes == 0 and cache.kv_bytes == 2304 * 4096
    # q8_0: 576 / 32 = 18 blocks x 34 = 612 a layer
    assert kv_cache(_meta(tmp_path, "deepseek2", _deepseek2), KVSettings("q8_0")).bytes_per_token == 2 * 612


def _granite_hybrid(w):
    """4 layers, the first three Mamba-2 (no KV heads), the last attention with 2 KV heads of 32."""
    w.add_block_count(4)
    w.add_context_length(8192)
    w.add_embedding_length(256)
    w.add_head_count(8)
    w.add_head_count_kv([0, 0, 0, 2])
    w.add_ssm_conv_kernel(4)
    w.add_ssm_inner_size(512)
    w.add_ssm_state_size(16)
    w.add_ssm_group_count(1)
    w.add_ssm_time_step_rank(8)


def test_hybrid_recurrent_layers_keep_state_a_sequence(tmp_path):
    cache = kv_cache(_meta(tmp_path, "granitehybrid", _granite_hybrid))
    assert [layer.kind for layer in cache.layers] == ["recurrent", "recurrent", "recurrent", "full"]
    # the attention layer: K = V = 2 x 32 = 64 elements, f16: 256 bytes a token
    assert cache.bytes_per_token == (64 + 64) * 2 == 256 and cache.kv_bytes == 256 * 8192
    # r: (4 - 1) x (512 + 2 x 1 x 16) = 1,632; s: 16 x 512 = 8,192; F32: 39,296 bytes a layer
    assert cache.state_bytes_per_sequence == 3 * (1632 + 8192) * 4 == 117_888
    # the state does not grow with the context
    assert (
        kv_cache(_meta(tmp_path, "granitehybrid", _granite_hybrid), KVSettings(n_ctx=512)).state_bytes
        == 117_888
    )


def test_architectures_not_modelled_say_so(tmp_path):
    cache = kv_cache({"general.architecture": "gemma3n", "gemma3n.block_count": 30})
    assert not cache.computed and "cache of its own kind" in (cache.reason or "")
    assert "no KV cache" in (kv_cache({"general.architecture": "bert"}).reason or "")


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ({"llama.block_count": 2**40}, "more than llama.cpp's 512 layers"),
        (
            {"llama.block_count": 4, "llama.context_length": 64, "llama.nextn_predict_layers": 9},
            "more than block_count 4",
        ),
        ({"llama.block_count": "4"}, "no llama.block_count"),
        ({"llama.block_count": 4}, "no llama.context_length"),
    ],
)
def test_hostile_metadata_is_refused_in_words(extra, says):
    cache = kv_cache({"general.architecture": "llama", **extra})
    assert not cache.computed and says in (cache.reason or "")


def test_hostile_values_are_problems_not_crashes():
    meta = {
        "general.architecture": "llama",
        "llama.block_count": 2,
        "llama.context_length": 1024,
        "llama.embedding_length": 64,
        "llama.attention.head_count": 4,
        "llama.attention.head_count_kv": [1, "x"],
        "llama.attention.key_length": -3,
    }
    cache = kv_cache(meta)
    assert not cache.computed
    assert any("not a whole number" in p for p in cache.problems)


def test_metrics_shows_the_kv_cache_end_to_end(tmp_path):
    write_model(tmp_path, "g3", "gemma3", _gemma3())
    result = hubdiff("metrics", str(tmp_path), "--json")
    assert result.returncode == 0, result.stderr
    (v,) = json.loads(result.stdout)["variants"]
    kv = v["kv_cache"]
    assert (kv["bytes_per_token"], kv["swa_cells"], kv["kv_bytes"]) == (8192, 1536, 331_350_016)
    assert kv["assumptions"] == {
        "kv_dtype": "f16",
        "n_ctx": 32768,
        "n_ctx_asked": None,
        "n_seq": 1,
        "n_ubatch": 512,
        "swa_full": False,
        "kv_unified": False,
        "flash_attention": True,
    }
    result = hubdiff("metrics", str(tmp_path), "--kv-dtype", "q8_0", "--context", "1000")
    assert result.returncode == 0, result.stderr
    # q8_0: 1,024 / 32 x 34 = 1,088 bytes a row, K + V = 2,176 a layer; 2 full layers = 4,352 a token
    assert "K and V q8_0; n_ctx 1,000 padded to 256 (1,024); n_seq 1; n_ubatch 512" in result.stdout
    assert "4,352 bytes a token (2 full-attention layer(s), 1,024 cells)" in result.stdout
    assert "sliding window 1,024: 10 layer(s), 21,760 bytes a cell x 1,024 cells" in result.stdout
    result = hubdiff("metrics", str(tmp_path), "--kv-dtype", "fp8")
    assert result.returncode == 2 and "llama.cpp's cache types" in result.stderr
    result = hubdiff("metrics", str(tmp_path), "--context", "0")
    assert result.returncode == 2 and "--context 0" in result.stderr


def _ssm(w, layers: int, kv_heads: int | list[int] = 2):
    w.add_block_count(layers)
    w.add_context_length(4096)
    w.add_embedding_length(256)
    w.add_head_count(8)
    w.add_head_count_kv(kv_heads)
    w.add_ssm_conv_kernel(4)
    w.add_ssm_inner_size(512)
    w.add_ssm_state_size(16)
    w.add_ssm_group_count(1)
    w.add_ssm_time_step_rank(8)


def test_qwen35_attends_every_fourth_layer_by_default(tmp_path):
    cache = kv_cache(_meta(tmp_path, "qwen35", lambda w: _ssm(w, 8)))
    # qwen35.cpp: recurrent unless (il + 1) % full_attention_interval (default 4) == 0: layers 3 and 7 attend
    assert [layer.index for layer in cache.layers if layer.kind == "full"] == [3, 7]
    assert cache.count("recurrent") == 6
    assert cache.bytes_per_token == 2 * (64 + 64) * 2 == 512
    assert cache.state_bytes_per_sequence == 6 * (1632 + 8192) * 4


def test_falcon_h1_layers_attend_and_keep_state_and_mamba_keeps_state_only(tmp_path):
    falcon = kv_cache(_meta(tmp_path, "falcon-h1", lambda w: _ssm(w, 2)))
    assert [layer.kind for layer in falcon.layers] == ["full+recurrent", "full+recurrent"]
    assert falcon.bytes_per_token == 2 * 256 and falcon.state_bytes_per_sequence == 2 * 39_296

    def mamba(w):
        w.add_block_count(3)
        w.add_context_length(2048)
        w.add_embedding_length(256)
        w.add_ssm_conv_kernel(4)
        w.add_ssm_inner_size(512)
        w.add_ssm_state_size(16)
        w.add_ssm_time_step_rank(16)

    state = kv_cache(_meta(tmp_path, "mamba", mamba))
    # Mamba 1: no groups: r (4 - 1) x 512 = 1,536, s 16 x 512 = 8,192; F32 = 38,912 a layer, no KV at all
    assert state.kv_bytes == 0 and state.state_bytes_per_sequence == 3 * (1536 + 8192) * 4 == 116_736


def test_windows_llama_cpp_does_not_use_or_requires_are_said(tmp_path):
    def qwen2(w):
        _gqa(w)
        w.add_sliding_window(4096)

    cache = kv_cache(_meta(tmp_path, "qwen2", qwen2))
    assert cache.n_swa == 0 and cache.computed
    assert any("every layer is counted as full attention" in n for n in cache.notes)

    def gpt_oss(w):
        _gqa(w)

    oss = kv_cache(_meta(tmp_path, "gpt-oss", gpt_oss))
    assert any("llama.cpp requires it for gpt-oss" in p for p in oss.problems) and not oss.computed
