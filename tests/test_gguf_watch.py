"""GGUF copies found by the watch: a new repo of ``.gguf`` files whose card says it is a quantized copy
of a pinned repo (``base_model``, ``base_model_relation: quantized``: what lists it under the source's
"Quantizations" on the Hub) is read by header and set against the source's recorded tensors.

The replica's GGUF files are headers written by ``hubdiff.testing.gguf_head`` (checked here byte for
byte against gguf-py's GGUFWriter, llama.cpp's own writer), the data section zeros; its model info
carries ``cardData`` from the README's YAML header, as the Hub's does."""

from __future__ import annotations

import json
import os

import pytest
import yaml
from gguf import GGMLQuantizationType as Q

from hubdiff._source.hub_answers import repo_info
from hubdiff.testing import CommitSpec, RepoSpec
from hubdiff.testing.gguf_head import gguf_file, gguf_head

from .gguf_files import CONTEXT, EMBD, FF, HEADS, KV_HEADS, LAYERS, TENSORS, VOCAB, write_tiny
from .test_gguf_diff import _hf
from .test_watch import record, sources_for, watch_cli

TINY_METADATA = [
    ("general.architecture", "llama"),
    ("general.name", "Tiny"),
    ("llama.block_count", LAYERS),
    ("llama.context_length", CONTEXT),
    ("llama.embedding_length", EMBD),
    ("llama.feed_forward_length", FF),
    ("llama.attention.head_count", HEADS),
    ("llama.attention.head_count_kv", KV_HEADS),
    ("llama.attention.layer_norm_rms_epsilon", 1e-5),
    ("general.file_type", 15),
    ("tokenizer.ggml.model", "llama"),
    ("tokenizer.ggml.tokens", [f"t{i}" for i in range(VOCAB)]),
    ("tokenizer.ggml.token_type", [1] * VOCAB),
    ("tokenizer.chat_template", "{{ messages }}"),
]
TINY_TENSORS = [(name, Q(kind).name, shape) for name, (shape, kind) in TENSORS.items()]


def test_the_replicas_gguf_header_is_what_gguf_py_writes(tmp_path):
    written = write_tiny(tmp_path)[0].read_bytes()
    head, data = gguf_head(TINY_METADATA, TINY_TENSORS)
    assert written[: len(head)] == head and len(written) == len(head) + data


def _card(base_model: str, relation: str | None) -> bytes:
    meta = {"base_model": base_model, "library_name": "gguf"}
    if relation:
        meta["base_model_relation"] = relation
    return f"---\n{yaml.safe_dump(meta)}---\n\n# A GGUF of {base_model}\n".encode()


def _tiny_source() -> CommitSpec:
    """The safetensors release the GGUF was made from: the same tensors, in BF16."""
    config = {
        "model_type": "llama",
        "num_hidden_layers": LAYERS,
        "hidden_size": EMBD,
        "tie_word_embeddings": False,
    }
    tensors = [(_hf(name), "BF16", shape) for name, (shape, _) in TENSORS.items()]
    return CommitSpec({"config.json": json.dumps(config).encode()}, tensors)


def test_watch_reports_a_gguf_copy_its_card_names_and_skips_one_without_a_card(hub, tmp_path):
    hub.add(RepoSpec("acme/Tiny", [_tiny_source()]))
    baselines = tmp_path / "baselines"
    baselines.mkdir()
    path = baselines / "tiny.yaml"
    record(path, "tiny", ["acme/Tiny"], sources_for(hub, tmp_path))
    data = yaml.safe_load(path.read_text())
    data["discover"] = [{"owner": "acme", "match": "Tiny*"}]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    gguf = gguf_file(TINY_METADATA, TINY_TENSORS)
    (sha,) = hub.add(
        RepoSpec(
            "acme/Tiny-GGUF",
            [CommitSpec({"README.md": _card("acme/Tiny", "quantized"), "Tiny-Q4_K_M.gguf": gguf})],
        )
    )
    hub.add(
        RepoSpec("acme/Tiny-GGUF-2", [CommitSpec({"README.md": _card("acme/Tiny", None), "t.gguf": gguf})])
    )
    before = path.read_bytes()
    hub.clear()
    env = {**os.environ, "HF_ENDPOINT": hub.endpoint, "HUBDIFF_CACHE": str(tmp_path / "c")}
    env.pop("GITHUB_OUTPUT", None)
    run = watch_cli(tmp_path, env, "--update")
    assert run.returncode == 0, run.stdout + run.stderr  # reported, never a failure: nothing to record
    # the tiny Q4_K_M's bytes by hand (tests/gguf_files.py: Q4_K 144 bytes a 256, Q6_K 210, F32 4):
    # Q4_K token_embd 512x256, per layer q 256x256, k 64x256, o 256x256, gate and up 512x256;
    # Q6_K output 512x256, per layer v 64x256 and down 256x512; F32 three norms of 256
    q4k = 512 * 256 + 2 * (256 * 256 + 64 * 256 + 256 * 256 + 2 * 512 * 256)
    q6k = 512 * 256 + 2 * (64 * 256 + 256 * 512)
    f32 = 256 + 2 * 2 * 256
    elements = q4k + q6k + f32
    nbytes = q4k // 256 * 144 + q6k // 256 * 210 + f32 * 4
    assert (elements, nbytes) == (1_377_536, 889_088)
    bpw = nbytes * 8 / elements  # 5.16
    assert (
        f"acme/Tiny-GGUF@{sha[:12]}: a GGUF quantized copy of acme/Tiny (so its card "
        f"says): Tiny-Q4_K_M (1 file, 889.1 KB, {bpw:.2f} bits per weight); every tensor matches the "
        f"source's ({elements:,} parameters)." in run.stdout
    ), run.stdout
    assert "acme/Tiny-GGUF-2@" in run.stdout and "skipped (GGUF only (1 .gguf files" in run.stdout
    assert run.stdout.strip().endswith("1 repos checked, 0 changed, 1 skipped, 1 quantized copy")
    assert path.read_bytes() == before  # nothing recorded
    # one model info and the header's ranges for the copy: no second model-info request
    asked = [e.path for e in hub.log if e.path.startswith("/api/models/acme/Tiny-GGUF/")]
    assert len(asked) == 1, asked


@pytest.mark.parametrize(
    ("card", "expected"),
    [
        ({"base_model": "acme/Tiny", "base_model_relation": "quantized"}, (("acme/Tiny",), "quantized")),
        (
            {"base_model": ["acme/A", "acme/B"], "base_model_relation": "merge"},
            (("acme/A", "acme/B"), "merge"),
        ),
        ({"base_model": [7, None, "not an id", "acme/A"]}, (("acme/A",), None)),  # free text: what is usable
        ({"base_model": {"acme/A": 1}, "base_model_relation": ["quantized"]}, ((), None)),
        ({"base_model": ["o/m"] * 1000}, (("o/m",) * 16, None)),  # a bounded number of names
        ({"base_model_relation": "quantized; rm -rf"}, ((), None)),
        ("a card that is a string", ((), None)),
        (None, ((), None)),
    ],
)
def test_a_card_is_read_leniently_and_bounded(card, expected):
    """A card is its author's free text: a field of another shape says nothing, it is never a malformed
    answer that would stop the read of the repo."""
    read = repo_info({"sha": "a" * 40, "siblings": [], "cardData": card}).card
    assert (read.base_models, read.base_model_relation) == expected
