"""GGUF releases read by header: the parser, ggml's type sizes, real llama.cpp headers, files written by
gguf-py's GGUFWriter (whole and split), Hub reads through the replica, and the CLI end to end."""

from __future__ import annotations

import json
import struct
import time

import gguf
import pytest

from hubdiff._metrics.gguf import variants
from hubdiff._source.ggml_types import BY_NAME, GGML_TYPES
from hubdiff._source.gguf import GGUFParser, GGUFProblem, Incomplete, parse_gguf
from hubdiff._source.gguf_read import (
    FIRST_RANGE,
    PIECE,
    load_hub_gguf,
    load_local_gguf,
    read_header,
    stream_of,
)
from hubdiff.testing import CommitSpec, Fault, RepoSpec

from .conftest import DATA, fast_settings
from .gguf_files import CONTEXT, LAYERS, TENSORS, write_tiny
from .test_cli import hubdiff

REAL = DATA / "gguf"


# -- ggml's types -----------------------------------------------------------------------------------
def test_type_table_equals_gguf_py_for_every_type_it_knows():
    """gguf-py 0.19.0's GGML_QUANT_SIZES is the oracle, type by type. One documented difference: gguf-py
    0.19.0 still sizes Q8_1 as float d, s (4 + 4 + 32 = 40 bytes); ggml's block_q8_1 is two halves and
    32 int8 (static_assert sizeof == 2*sizeof(ggml_half) + QK8_1 = 36, ggml-common.h, llama.cpp as
    vendored by llama-cpp-python 0.3.36, whose own gguf-py says (32, 2 + 2 + 32))."""
    compared = 0
    for kind, (block, size) in gguf.GGML_QUANT_SIZES.items():
        ours = GGML_TYPES[int(kind)]
        assert ours.name == kind.name
        if kind.name == "Q8_1":
            assert (block, size) == (32, 40) and (ours.block_size, ours.type_size) == (32, 36)
            continue
        assert (ours.block_size, ours.type_size) == (block, size), kind.name
        compared += 1
    assert compared >= 33
    # NVFP4 and Q1_0 come from ggml as vendored: 4 e4m3 scales + 32 bytes of e2m1 pairs for 64 weights
    assert (BY_NAME["NVFP4"].block_size, BY_NAME["NVFP4"].type_size) == (64, 4 + 32)
    assert "Q2_0" not in {k.name for k in gguf.GGML_QUANT_SIZES}  # newer than gguf 0.19.0: ggml's sizeof
    assert (BY_NAME["Q2_0"].block_size, BY_NAME["Q2_0"].type_size) == (64, 2 + 16)


@pytest.mark.parametrize(
    ("name", "bits"),
    [
        ("Q4_0", (2 + 16) * 8 / 32),  # 4.5
        ("Q8_0", (2 + 32) * 8 / 32),  # 8.5
        ("Q4_K", 144 * 8 / 256),  # 4.5
        ("Q6_K", 210 * 8 / 256),  # 6.5625
        ("Q8_K", (4 + 256 + 16 * 2) * 8 / 256),  # 9.125: float d, 256 int8, 16 int16 sums
        ("MXFP4", (1 + 16) * 8 / 32),  # 4.25
        ("NVFP4", (4 + 32) * 8 / 64),  # 4.5
        ("TQ1_0", (2 + 4 * 13) * 8 / 256),  # 1.6875
        ("BF16", 16.0),
    ],
)
def test_bits_per_weight_by_hand(name, bits):
    assert BY_NAME[name].bits_per_weight == bits


# -- the parser on real llama.cpp headers ------------------------------------------------------------
def _real(name: str) -> tuple[bytes, object]:
    data = (REAL / f"ggml-vocab-{name}.gguf").read_bytes()
    return data, parse_gguf(data, len(data))


def test_real_llama_spm_header():
    """Llama's SentencePiece vocabulary: 32,000 tokens, <unk> <s> </s> then the 256 byte tokens."""
    data, h = _real("llama-spm")
    m = h.metadata
    assert h.header_bytes == len(data) and h.tensors == () and h.version == 3
    tokens = m["tokenizer.ggml.tokens"]
    assert len(tokens) == len(m["tokenizer.ggml.scores"]) == len(m["tokenizer.ggml.token_type"]) == 32000
    assert tokens[:3] == ["<unk>", "<s>", "</s>"] and tokens[3] == "<0x00>" and tokens[258] == "<0xFF>"
    assert (m["tokenizer.ggml.bos_token_id"], m["tokenizer.ggml.eos_token_id"]) == (1, 2)
    assert h.value_types["tokenizer.ggml.scores"] == "ARRAY[FLOAT32]"
    assert h.value_types["tokenizer.ggml.tokens"] == "ARRAY[STRING]"
    assert m["general.architecture"] == "llama"


def test_real_bert_and_bpe_headers():
    """BERT's uncased WordPiece vocabulary (30,522; [PAD] 0, [UNK] 100, [CLS] 101, [SEP] 102, [MASK] 103)
    and DeepSeek-Coder's BPE (32,256 tokens and their merges)."""
    _, bert = _real("bert-bge")
    tokens = bert.metadata["tokenizer.ggml.tokens"]
    assert len(tokens) == 30522
    assert [tokens[i] for i in (0, 100, 101, 102, 103)] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert bert.metadata["tokenizer.ggml.seperator_token_id"] == 102
    _, coder = _real("deepseek-coder")
    m = coder.metadata
    assert len(m["tokenizer.ggml.tokens"]) == len(m["tokenizer.ggml.token_type"]) == 32256
    merges = m["tokenizer.ggml.merges"]
    assert all(len(merge.split(" ")) == 2 for merge in merges)  # every merge is "left right"
    assert max(m["tokenizer.ggml.bos_token_id"], m["tokenizer.ggml.eos_token_id"]) < 32256


def test_real_header_equals_gguf_py_reader():
    """The smallest real header read by gguf-py's own GGUFReader too: the same keys, types and values."""
    path = REAL / "ggml-vocab-bert-bge.gguf"
    reader = gguf.GGUFReader(path)
    data = path.read_bytes()
    ours = parse_gguf(data, len(data))
    theirs = {f.name: f for f in reader.fields.values() if not f.name.startswith("GGUF.")}
    assert list(ours.metadata) == list(theirs)
    for key, field in theirs.items():
        value = field.contents()
        assert ours.metadata[key] == value or list(ours.metadata[key]) == list(value), key


def test_parsing_resumes_where_it_stopped_at_any_cut(tmp_path):
    """Fed in pieces of any size, the parser gives what one read gives; it keeps only unparsed bytes.
    Byte by byte over a GGUFWriter file's header, in ranges over a real tokenizer's."""
    (tiny,) = write_tiny(tmp_path)
    small = tiny.read_bytes()
    for data, pieces in (
        (small, (1, 7, 97)),
        ((REAL / "ggml-vocab-deepseek-coder.gguf").read_bytes(), (4096, 300_001)),
    ):
        whole = parse_gguf(data, len(data))
        for piece in pieces:
            parser = GGUFParser(len(data))
            result = parser.parse()
            while isinstance(result, Incomplete):
                assert result.resume_at <= result.have == parser.have
                parser.feed(data[parser.have : parser.have + piece])
                result = parser.parse()
            assert result == whole


def test_a_262k_token_tokenizer_header_parses_fast():
    """A 15 MiB header: 262,144 tokens of Gemma-like lengths, their scores and types, 514,906 merges.
    The issue asks for at most 0.3 s; measured as CPU time, bounded at 1.5 s here, since this machine's
    two cores are shared (the measured figure is in the report)."""
    n, merges = 262144, 514906
    body = b"".join(_gguf_string(f"tok{i:07d}" + "x" * (i % 9)) for i in range(n))
    merge_body = b"".join(_gguf_string(f"m{i % 4096} x{i:07d}") for i in range(merges))
    header = _header(
        0,
        [
            _kv_array_raw("tokenizer.ggml.tokens", 8, n, body),
            _kv_array_raw("tokenizer.ggml.scores", 6, n, bytes(4 * n)),
            _kv_array_raw("tokenizer.ggml.token_type", 5, n, bytes(4 * n)),
            _kv_array_raw("tokenizer.ggml.merges", 8, merges, merge_body),
        ],
    )
    assert len(header) > 15 << 20
    started = time.process_time()
    h = parse_gguf(header, len(header))
    took = time.process_time() - started
    assert (
        len(h.metadata["tokenizer.ggml.tokens"]) == n and len(h.metadata["tokenizer.ggml.merges"]) == merges
    )
    assert h.metadata["tokenizer.ggml.tokens"][n - 1] == f"tok{n - 1:07d}" + "x" * ((n - 1) % 9)
    assert took < 1.5, took


# -- hostile headers ----------------------------------------------------------------------------------
def _gguf_string(text: str | bytes) -> bytes:
    raw = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(raw)) + raw


def _kv(key: str, vtype: int, payload: bytes) -> bytes:
    return _gguf_string(key) + struct.pack("<I", vtype) + payload


def _kv_array_raw(key: str, etype: int, count: int, payload: bytes) -> bytes:
    return _kv(key, 9, struct.pack("<IQ", etype, count) + payload)


def _tensor_info(name: str, dims: tuple[int, ...], ggml_type: int, offset: int) -> bytes:
    return _gguf_string(name) + struct.pack(f"<I{len(dims)}QIQ", len(dims), *dims, ggml_type, offset)


def _header(n_tensors: int, kvs: list[bytes], infos: list[bytes] = (), n_kv: int | None = None) -> bytes:
    head = b"GGUF" + struct.pack("<IQQ", 3, n_tensors, len(kvs) if n_kv is None else n_kv)
    return head + b"".join(kvs) + b"".join(infos)


def _file(header: bytes, data: int) -> bytes:
    return header + bytes(-len(header) % 32) + bytes(data)


ARCH = _kv("general.architecture", 8, _gguf_string("llama"))
F32_4 = _tensor_info("a", (4,), 0, 0)  # 16 bytes


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (_header(0, [ARCH, _kv("general.name", 8, _gguf_string("x"))])[:-3], "needed but the file has"),
        (_header(0, [ARCH])[:40], "runs past the end of the file"),
        (_header(0, [_kv("k", 8, struct.pack("<Q", 10**9) + b"abc")]), "runs past the end of the file"),
        (_header(0, [_kv_array_raw("k", 4, 2**63, b"")]), "cannot fit in the file"),
        (_header(0, [_kv_array_raw("k", 8, 2**63, b"")]), "cannot fit in the file"),
        (_header(0, [], n_kv=2**63), "more than the file can hold"),
        (_header(2**63, [ARCH]), "more than the file can hold"),
        (_file(_header(1, [ARCH], [_tensor_info("a", (32,), 31, 0)]), 32), "unknown ggml type 31"),
        (_file(_header(1, [ARCH], [_tensor_info("a", (32,), 99, 0)]), 32), "unknown ggml type 99"),
        (_file(_header(1, [ARCH], [_tensor_info("a", (100,), 2, 0)]), 64), "not whole Q4_0 blocks of 32"),
        (
            _file(_header(2, [ARCH], [F32_4, _tensor_info("b", (8,), 0, 0)]), 64),
            "tensors 'a' and 'b' overlap",
        ),
        (_file(_header(1, [ARCH], [_tensor_info("a", (4,), 0, 8)]), 64), "not a multiple of the alignment"),
        (_file(_header(1, [ARCH], [_tensor_info("a", (64,), 0, 0)]), 32), "runs past the end of the file"),
        (_file(_header(1, [ARCH], [_tensor_info("a", (1, 1, 1, 1, 1), 0, 0)]), 32), "5 dimensions"),
        (_header(0, [ARCH, ARCH]), "given twice"),
        (_header(0, [_kv("k", 13, b"")]), "unknown value type 13"),
        (_header(0, [_kv("general.alignment", 4, struct.pack("<I", 48))]), "not a power of two"),
        (b"GGUF" + struct.pack("<IQQ", 3 << 24, 0, 0), "big-endian"),
        (b"\x00" * 24, "not a GGUF file"),
        (_header(1, [ARCH], [_tensor_info("x" * 64, (4,), 0, 0)]) + bytes(64), "at most 63"),
    ],
)
def test_hostile_headers_are_refused_with_what_is_wrong(data, says):
    with pytest.raises(GGUFProblem, match=says.replace("(", r"\(")):
        parse_gguf(data, len(data))


def test_hostile_gguf_in_a_folder_is_one_line_and_exit_3(tmp_path):
    (tmp_path / "m.gguf").write_bytes(_header(0, [_kv_array_raw("k", 8, 2**63, b"")]))
    result = hubdiff("snapshot", str(tmp_path))
    assert result.returncode == 3
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"hubdiff: {tmp_path} m.gguf: ") and "2^63" not in lines[0]
    assert "9,223,372,036,854,775,808 STRING" in lines[0]


# -- files written by llama.cpp's own writer -----------------------------------------------------------
def _by_hand() -> tuple[int, int, dict[str, tuple[int, int]]]:
    """Parameters, bytes and (elements, bytes) per ggml type of gguf_files.TENSORS, by hand."""
    per_block = {"Q4_K": (256, 144), "Q6_K": (256, 210), "F32": (1, 4)}
    by_type: dict[str, tuple[int, int]] = {}
    for shape, kind in TENSORS.values():
        elements = 1
        for d in shape:
            elements *= d
        block, size = per_block[kind.name]
        e, b = by_type.get(kind.name, (0, 0))
        by_type[kind.name] = (e + elements, b + elements // block * size)
    return sum(e for e, _ in by_type.values()), sum(b for _, b in by_type.values()), by_type


def test_written_release_figures(tmp_path):
    """Written out: token_embd 512x256 + output 512x256 + output_norm 256 = 262,400; a layer 2 norms of
    256, q and o 256x256, k and v 64x256, gate, up, down 512x256 = 557,568; 262,400 + 2 x 557,568 =
    1,377,536 parameters. Bytes: Q4_K 144 per 256, Q6_K 210 per 256, F32 4."""
    (path,) = write_tiny(tmp_path)
    release = load_local_gguf(str(tmp_path))
    (v,) = variants(release)
    params, nbytes, by_type = _by_hand()
    assert params == 262_400 + LAYERS * 557_568 == v.parameters
    # Q4_K: token_embd 512 blocks, per layer q 256 + k 64 + o 256 + gate 512 + up 512 = 1,600 blocks
    assert by_type["Q4_K"][1] == (512 + LAYERS * 1600) * 144
    assert {k: (t.elements, t.bytes) for k, t in v.by_type().items()} == by_type
    assert v.tensor_bytes == nbytes
    # the file's own total: the data section is the tensors' bytes (each a multiple of 32: no padding)
    header = v.files[0].header
    assert path.stat().st_size - header.data_offset == nbytes
    assert v.bits_per_weight == nbytes * 8 / params  # llama.cpp's BPW: Σ bytes x 8 / Σ elements
    assert v.architecture == "llama" and v.arch_value("context_length") == CONTEXT
    # per group, over every layer: attn_v is Q6_K, so 210 x 8 / 256 = 6.5625 bits a weight
    assert v.by_group()["attn_v.weight"].bits_per_weight == 6.5625
    assert v.types_by_group()["ffn_down.weight"] == {"Q6_K": LAYERS}
    assert v.problems == ()


def test_split_release_in_two_shards(tmp_path):
    """The same model split by GGUFWriter into two shards (split.count 2, split.tensors.count 21): the
    same figures as the whole file, every shard present and every tensor once."""
    whole = tmp_path / "whole"
    write_tiny(whole)
    shards = write_tiny(tmp_path / "split", "Tiny-Q4_K_M", split_max_tensors=12)
    assert [p.name for p in shards] == ["Tiny-Q4_K_M-00001-of-00002.gguf", "Tiny-Q4_K_M-00002-of-00002.gguf"]
    (split,) = variants(load_local_gguf(str(tmp_path / "split")))
    (one,) = variants(load_local_gguf(str(whole)))
    assert split.name == "Tiny-Q4_K_M" and len(split.files) == 2 and split.problems == ()
    assert split.metadata["split.count"] == 2 and split.metadata["split.tensors.count"] == len(TENSORS)
    assert (split.parameters, split.tensor_bytes, split.by_type()) == (
        one.parameters,
        one.tensor_bytes,
        one.by_type(),
    )
    # a shard missing, and a tensor in both shards, are named
    shards[1].unlink()
    (broken,) = variants(load_local_gguf(str(tmp_path / "split")))
    assert any("1 of 2 shards missing: Tiny-Q4_K_M-00002-of-00002.gguf" in p for p in broken.problems)


def test_snapshot_and_metrics_of_a_folder_end_to_end(tmp_path):
    write_tiny(tmp_path)
    write_tiny(tmp_path, "Tiny-Q4_K_M-split", split_max_tensors=12)
    params, nbytes, _ = _by_hand()
    result = hubdiff("metrics", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert f"parameters {params:,}" in result.stdout and f"{nbytes * 8 / params:.2f} BPW" in result.stdout
    assert "split complete: 2 shards, every tensor once" in result.stdout
    assert "attn_v.weight" in result.stdout and "architecture llama, context 4096" in result.stdout
    # KV heads 2 x 32 = 64 elements of K and of V a layer, f16, 2 layers: 512 bytes a token
    assert "512 bytes a token (2 full-attention layer(s), 4,096 cells)" in result.stdout
    result = hubdiff("snapshot", str(tmp_path), "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert [v["name"] for v in data["variants"]] == ["Tiny-Q4_K_M", "Tiny-Q4_K_M-split"]
    for v in data["variants"]:
        assert v["parameters"] == params and v["tensor_bytes"] == nbytes
        assert len(v["tensors"]) == len(TENSORS)
        rows = {name: (kind, shape) for name, kind, shape, _ in v["tensors"]}
        assert rows["blk.1.attn_k.weight"] == ("Q4_K", [64, 256])  # torch order: [kv dim, hidden]
    whole, split = data["variants"]
    assert {t[3] for t in whole["tensors"]} == {0} and {t[3] for t in split["tensors"]} == {0, 1}


# -- the Hub: header bytes only, grown from where parsing stopped -----------------------------------
def _gguf_reads(hub) -> dict[str, list[tuple[str, int]]]:
    out: dict[str, list[tuple[str, int]]] = {}
    for e in hub.log:
        if e.path.endswith(".gguf"):
            out.setdefault(e.path.rsplit("/", 1)[-1], []).append((e.range, e.bytes_sent))
    return out


def test_hub_reads_headers_only_in_ranges_that_grow_from_where_parsing_stopped(hub, tmp_path):
    hub.redirects = False  # one route per file, so each read is one logged request
    write_tiny(tmp_path)
    write_tiny(tmp_path, "Tiny-Q8", split_max_tensors=12)
    files = {p.name: p.read_bytes() for p in tmp_path.glob("*.gguf")}
    files |= {"tokenizer/llama-spm.gguf": (REAL / "ggml-vocab-llama-spm.gguf").read_bytes()}
    hub.add(RepoSpec("acme/Tiny-GGUF", [CommitSpec({"README.md": b"# tiny", **files})]))
    release = load_hub_gguf(fast_settings(hub.endpoint), "acme/Tiny-GGUF", "main")
    reads = _gguf_reads(hub)
    assert sorted(reads) == sorted(p.rsplit("/", 1)[-1] for p in files)
    by_name = {f.path.rsplit("/", 1)[-1]: f for f in release.ggufs}
    for name, ranges in reads.items():
        header = by_name[name].header.header_bytes
        sent = sum(n for _, n in ranges)
        starts = [int(r.removeprefix("bytes=").split("-")[0]) for r, _ in ranges]
        assert starts[0] == 0 and starts == [0, *list(_ends(ranges))[:-1]], name  # never from 0 again
        taken = by_name[name].ranges
        if header <= FIRST_RANGE:  # the model files: one range of 64 KiB (or the file) holds the header
            assert len(ranges) == len(taken) == 1 and sent <= header + FIRST_RANGE, name
        else:  # a 724 KB tokenizer header: the counts, then the rest read to its end and closed
            assert len(ranges) == len(taken) == 2, (name, ranges)
            assert header <= sum(n for _, n in taken) < header + PIECE, (name, taken)
    # the figures are the local read's
    local = {v.name: (v.parameters, v.tensor_bytes) for v in variants(load_local_gguf(str(tmp_path)))}
    assert {v.name: (v.parameters, v.tensor_bytes) for v in variants(release) if v.parameters} == local


def test_a_streamed_range_that_breaks_off_resumes_where_parsing_stopped(hub):
    """The file host closes the second range after 300,000 bytes, twice: each retry asks from where
    parsing stopped, so no byte is asked for twice and the header is read whole."""
    hub.redirects = False
    data = (REAL / "ggml-vocab-deepseek-coder.gguf").read_bytes()
    hub.add(RepoSpec("acme/Vocab-GGUF", [CommitSpec({"vocab.gguf": data + bytes(1 << 20)})]))
    hub.add_fault(Fault("vocab.gguf", truncate_to=300_000, times=2))
    release = load_hub_gguf(fast_settings(hub.endpoint), "acme/Vocab-GGUF", "main")
    (read,) = release.ggufs
    assert read.header.header_bytes == len(data)
    asked = [int(e.range.removeprefix("bytes=").split("-")[0]) for e in hub.log if e.path.endswith(".gguf")]
    sent = [e.bytes_sent for e in hub.log if e.path.endswith(".gguf")]
    assert asked[0] == 0 and len(asked) >= 3 and asked == sorted(set(asked)), asked
    # every retry starts where what was taken ends: within a piece of what the broken answer sent
    for i in range(1, len(asked) - 1):
        assert asked[i] < asked[i + 1] <= asked[i] + sent[i], (asked, sent)


def _ends(ranges: list[tuple[str, int]]):
    at = 0
    for r, n in ranges:
        at = int(r.removeprefix("bytes=").split("-")[0]) + n
        yield at


def test_hub_repo_end_to_end(hub, tmp_path):
    """``hubdiff metrics`` on a Hub repo of GGUF files: one model-info request (the safetensors path
    stops there and hands it over), then one range per file for these small headers."""
    hub.redirects = False
    write_tiny(tmp_path)
    files = {p.name: p.read_bytes() for p in tmp_path.glob("*.gguf")}
    sha = hub.add(RepoSpec("acme/Tiny-GGUF", [CommitSpec({"README.md": b"# tiny", **files})]))[0]
    params, nbytes, _ = _by_hand()
    cache = str(tmp_path / "c")
    result = hubdiff("metrics", "acme/Tiny-GGUF", "--json", "--endpoint", hub.endpoint, "--cache-dir", cache)
    assert result.returncode == 0, result.stderr
    (v,) = json.loads(result.stdout)["variants"]
    assert (v["parameters"], v["tensor_bytes"], v["architecture"]) == (params, nbytes, "llama")
    assert v["by_type"]["Q6_K"]["bits_per_weight"] == 6.5625
    # the KV cache from the header: 2 layers x (K 64 + V 64) x 2 bytes (f16) = 512 bytes a token
    assert (v["kv_cache"]["bytes_per_token"], v["kv_cache"]["kv_bytes"]) == (512, 512 * CONTEXT)
    paths = [e.path.split("?")[0] for e in hub.log]
    assert paths == [
        "/api/models/acme/Tiny-GGUF/revision/main",
        f"/acme/Tiny-GGUF/resolve/{sha}/Tiny-Q4_K_M.gguf",
    ]
    # a command that does not read GGUF says what the repo is, in one line, exit 3
    result = hubdiff(
        "diff", "acme/Tiny-GGUF", "acme/Tiny-GGUF", "--endpoint", hub.endpoint, "--cache-dir", cache
    )
    assert result.returncode == 3 and "config.json: not found: a GGUF repo" in result.stderr


def test_read_header_takes_the_header_and_at_most_one_piece_past_it():
    """On a real 1.16 MB tokenizer header: the first range is 64 KiB and the second starts where parsing
    stopped and is read only to the header's end; the first range's counts give an estimate generous
    enough that no third is needed."""
    data = (REAL / "ggml-vocab-deepseek-coder.gguf").read_bytes()
    padded = data + bytes(4 << 20)
    asked: list[tuple[int, int]] = []

    def fetch(start: int, length: int) -> bytes:
        asked.append((start, length))
        return padded[start : start + length]

    read = read_header(stream_of(fetch), len(padded))
    assert asked[0] == (0, FIRST_RANGE) and len(asked) == 2 and asked[1][0] == FIRST_RANGE
    assert [start for start, _ in read.ranges] == [0, FIRST_RANGE]
    assert read.header.header_bytes == len(data) <= read.bytes_read < len(data) + PIECE
