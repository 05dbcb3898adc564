"""Local folders built from real censuses and a real index: counts and totals must be exact."""

import json
import math
import struct
from pathlib import Path

import pytest

from hubdiff._source.local import load_local
from hubdiff.errors import SourceError
from hubdiff.patterns import expand
from hubdiff.testing import CommitSpec, load_census, write_checkpoint

from .conftest import DATA


def census_folder(tmp_path: Path, census: Path, config: Path, shards: int) -> Path:
    tensors = load_census(census.read_text())
    write_checkpoint(tmp_path, CommitSpec({"config.json": config.read_bytes()}, tensors, shards=shards))
    return tmp_path


@pytest.mark.parametrize(
    ("model", "tensors", "parameters", "shards"),
    [
        ("GLM-5.1", 59_870, 753_864_139_008, 282),  # census header: 59,870 tensors in 282 files
        ("Qwen3-VL-30B-A3B-Instruct", 882, 31_070_754_032, 13),
    ],
)
def test_real_census_folder_gives_real_counts(tmp_path, model, tensors, parameters, shards):
    census = DATA / model / "tensor_census.tsv"
    folder = census_folder(tmp_path, census, DATA / model / "config.json", shards)
    snapshot = load_local(str(folder))
    assert len(snapshot.tensors) == tensors
    assert sum(snapshot.parameters_by_dtype().values()) == parameters
    assert len({t.file for t in snapshot.tensors}) == shards
    names = sorted(t.name for t in snapshot.tensors)
    assert sorted(expand(snapshot.patterns)) == names
    assert names == sorted(n for n, _, _ in load_census(census.read_text()))


def mixtral_tensors() -> list[tuple[str, str, tuple[int, ...]]]:
    """Shapes written out from Mixtral's config: hidden 4096, 32 layers, 8 experts of 14336, GQA 32/8 x 128."""
    cfg = json.loads((DATA / "Mixtral-8x7B-v0.1" / "config.json").read_text())
    h, inter, vocab = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    kv = cfg["num_key_value_heads"] * (h // cfg["num_attention_heads"])
    out = [
        ("model.embed_tokens.weight", "BF16", (vocab, h)),
        ("lm_head.weight", "BF16", (vocab, h)),
        ("model.norm.weight", "BF16", (h,)),
    ]
    for layer in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        out += [
            (p + "input_layernorm.weight", "BF16", (h,)),
            (p + "post_attention_layernorm.weight", "BF16", (h,)),
            (p + "self_attn.q_proj.weight", "BF16", (h, h)),
            (p + "self_attn.k_proj.weight", "BF16", (kv, h)),
            (p + "self_attn.v_proj.weight", "BF16", (kv, h)),
            (p + "self_attn.o_proj.weight", "BF16", (h, h)),
            (p + "block_sparse_moe.gate.weight", "BF16", (cfg["num_local_experts"], h)),
        ]
        for e in range(cfg["num_local_experts"]):
            q = f"{p}block_sparse_moe.experts.{e}."
            out += [
                (q + "w1.weight", "BF16", (inter, h)),
                (q + "w2.weight", "BF16", (h, inter)),
                (q + "w3.weight", "BF16", (inter, h)),
            ]
    return out


def test_mixtral_with_its_real_index_matches_total_size_and_shard_sizes(tmp_path):
    index = json.loads((DATA / "Mixtral-8x7B-v0.1" / "model.safetensors.index.json").read_text())
    tensors = mixtral_tensors()
    assert {n for n, _, _ in tensors} == set(
        index["weight_map"]
    )  # the config explains every real tensor name
    spec = CommitSpec(
        {"config.json": (DATA / "Mixtral-8x7B-v0.1" / "config.json").read_bytes()},
        tensors,
        weight_map=index["weight_map"],
    )
    write_checkpoint(tmp_path, spec)
    snapshot = load_local(str(tmp_path))
    assert len(snapshot.tensors) == 995
    assert snapshot.tensor_bytes() == index["metadata"]["total_size"] == 93_405_585_408
    # each real shard file is 8 bytes + its header + the data of the tensors the index puts in it
    sizes_text = (DATA / "Mixtral-8x7B-v0.1" / "shard_sizes.tsv").read_text()
    real_sizes = dict(line.split("\t") for line in sizes_text.splitlines() if line)
    assert set(real_sizes) == {t.file for t in snapshot.tensors}
    for shard, real_size in real_sizes.items():
        data_bytes = sum(math.prod(t.shape) * 2 for t in snapshot.tensors if t.file == shard)
        header_bytes = int(real_size) - data_bytes
        assert 8 < header_bytes < 20_000, shard


def write_raw(folder: Path, header: bytes | dict, data_size: int = 0, prefix: bytes | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text("{}")
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    with (folder / "model.safetensors").open("wb") as fh:
        fh.write(prefix if prefix is not None else struct.pack("<Q", len(raw)))
        fh.write(raw)
        fh.write(b"\0" * data_size)
    return folder


@pytest.mark.parametrize(
    ("header", "data_size", "prefix", "problem"),
    [
        (b"[1, 2]", 0, None, "header is JSON but not an object"),
        (b"{not json", 0, None, "header is not JSON"),
        (b"{}", 0, struct.pack("<Q", 200_000_000), "header claims 200,000,000 bytes (limit 100,000,000)"),
        (b"{}", 0, struct.pack("<Q", 5000), "header claims 5,000 bytes but the file has"),
        (
            {
                "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]},
            },
            12,
            None,
            "overlap",
        ),
        (
            {"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}},
            8,
            None,
            "run past the end of the file",
        ),
        (
            {"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 8]}},
            8,
            None,
            "needs 16 bytes, offsets give 8",
        ),
        ({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 0]}}, 0, None, "invalid shape"),
        ({"a": "x"}, 0, None, "is not an object"),
    ],
    ids=[
        "list",
        "not-json",
        "huge-length",
        "length-past-file",
        "overlap",
        "past-end",
        "size-mismatch",
        "bad-shape",
        "entry-not-object",
    ],
)
def test_hostile_headers_get_one_clear_line(tmp_path, header, data_size, prefix, problem):
    folder = write_raw(tmp_path / "ckpt", header, data_size, prefix)
    with pytest.raises(SourceError) as info:
        load_local(str(folder))
    line = info.value.line()
    assert "\n" not in line
    assert line.startswith(f"hubdiff: {folder} model.safetensors: ")
    assert problem in line


def test_unknown_dtype_is_recorded_not_fatal(tmp_path):
    folder = write_raw(
        tmp_path / "ckpt",
        {
            "a": {"dtype": "F3_NEW", "shape": [4], "data_offsets": [0, 3]},
            "b": {"dtype": "F8_E8M0", "shape": [4], "data_offsets": [3, 7]},
            "c": {"dtype": "F4", "shape": [6], "data_offsets": [7, 10]},
        },
        10,
    )
    snapshot = load_local(str(folder))
    assert snapshot.unknown_dtypes == ("F3_NEW",)
    assert (
        snapshot.tensor_bytes() == 4 + 3
    )  # E8M0: 1 byte each; F4: 6 x 4 bits -> 3 bytes; unknown: not counted


def test_shard_names_that_escape_the_folder_are_refused(tmp_path):
    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (tmp_path / "secret.safetensors").write_bytes(b"x")
    for bad in ("../secret.safetensors", "/etc/passwd", "a/../../secret.safetensors"):
        (folder / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {"w": bad}}))
        with pytest.raises(SourceError, match="outside the repo"):
            load_local(str(folder))


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        (b"{nope", "config.json: not JSON"),
        (b"[]", "config.json: JSON but not an object (list)"),
        (50_000_000, "over the 10,000,000-byte limit"),
    ],
    ids=["not-json", "not-object", "50MB"],
)
def test_bad_configs(tmp_path, config, problem):
    folder = write_raw(tmp_path / "ckpt", {"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}}, 1)
    (folder / "config.json").write_bytes(b"{" + b" " * config + b"}" if isinstance(config, int) else config)
    with pytest.raises(SourceError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        load_local(str(folder))


def test_header_only_skeletons_are_read_but_partial_files_are_not(tmp_path):
    header = {"a": {"dtype": "BF16", "shape": [1024, 1024], "data_offsets": [0, 2 * 1024 * 1024]}}
    skeleton = write_raw(tmp_path / "skeleton", header, data_size=0)
    snapshot = load_local(str(skeleton))
    assert sum(snapshot.parameters_by_dtype().values()) == 1024 * 1024
    partial = write_raw(tmp_path / "partial", header, data_size=1000)
    with pytest.raises(SourceError, match="run past the end of the file"):
        load_local(str(partial))
