"""The spellings users bring from the hf CLI, vLLM and huggingface_hub mean what they mean there."""

from __future__ import annotations

import json
import re

import pytest

from hubdiff._source.spec import parse_source
from hubdiff.cli import main
from hubdiff.errors import UsageError
from hubdiff.testing import CommitSpec, RepoSpec

from .conftest import DATA

LLAMA = DATA / "Llama-3.1-8B" / "config.json"


def metrics_json(capsys, *args: str) -> dict:
    assert main(["metrics", str(LLAMA.parent), "--config-only", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    ("spelling", "bytes_per_token"),
    [
        # Llama-3.1-8B: 32 layers x (K and V) x 8 KV heads x 128 dims = 65,536 elements a token
        ("auto", 65_536 * 2),  # vLLM: "auto" is the model's dtype, bfloat16 here
        ("bfloat16", 65_536 * 2),
        ("float16", 65_536 * 2),
        ("float32", 65_536 * 4),
        ("fp8", 65_536),
        ("fp8_e4m3", 65_536),
        ("FP8_E5M2", 65_536),
        ("fp8_inc", 65_536),
    ],
)
def test_vllm_kv_cache_dtype_spellings(capsys, spelling, bytes_per_token):
    data = metrics_json(capsys, "--kv-dtype", spelling)
    assert data["kv"]["bytes_per_token"] == bytes_per_token


@pytest.mark.parametrize("spelling", ["fp8_ds_mla", "nvfp4", "fp7"])
def test_kv_dtypes_with_a_layout_of_their_own_are_refused_by_name(capsys, spelling):
    assert main(["metrics", str(LLAMA.parent), "--config-only", "--kv-dtype", spelling]) == 2
    err = capsys.readouterr().err
    said = "unknown KV dtype '" if spelling == "fp7" else "'"  # a packed layout says why, and what to use
    assert err.startswith(f"hubdiff: --kv-dtype: {said}{spelling}'") and err.count("\n") == 1


@pytest.mark.parametrize(
    ("text", "revision", "parsed"),
    [
        ("hf://org/m", None, "org/m@main"),  # huggingface_hub's HfFileSystem URLs (utils/_hf_uris.py)
        ("hf://org/m@v1", None, "org/m@v1"),
        ("hf://org/m@refs%2Fpr%2F1", None, "org/m@refs/pr/1"),  # a revision with "/" is URL-encoded there
        ("hf://models/org/m@refs/pr/1", None, "org/m@refs/pr/1"),
        ("https://huggingface.co/org/m/tree/v1", None, "org/m@v1"),  # a web URL copied from the Hub
        ("org/m", "v1", "org/m@v1"),  # the hf CLI's --revision
        ("org/m@v1", "v1", "org/m@v1"),
        ("hf://org/m", "refs/pr/2", "org/m@refs/pr/2"),
    ],
)
def test_hub_sources_as_the_hf_tools_spell_them(text, revision, parsed):
    assert str(parse_source(text, revision)) == parsed


@pytest.mark.parametrize(
    ("text", "revision", "says"),
    [
        ("org/m@v1", "v2", "names revision 'v1' and --revision 'v2': give one"),
        ("hf://datasets/org/d", None, "is a dataset repo: hubdiff reads model repos"),
        ("hf://org/m/config.json", None, "names a file in the repo"),
        ("hf://gpt2", None, "is not an hf:// URI of a model repo"),
        ("org/m@", None, "is neither a folder nor a Hub repo id"),
        ("./folder", "v1", "is a folder: --revision names a revision on the Hub"),
    ],
)
def test_source_spellings_that_cannot_mean_one_revision_are_refused(text, revision, says):
    with pytest.raises(UsageError, match=re.escape(says)):
        parse_source(text, revision)


def two_revisions(hub) -> None:
    """org/m with tag v1 at a 2-layer commit and main at a 3-layer one."""

    def commit(layers: int) -> CommitSpec:
        config = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": layers,
                  "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128,
                  "vocab_size": 100}  # fmt: skip
        rows = [(f"model.layers.{i}.self_attn.q_proj.weight", "BF16", (64, 64)) for i in range(layers)]
        return CommitSpec({"config.json": json.dumps(config).encode()}, rows)

    hub.add(RepoSpec("org/m", [commit(2), commit(3)], tags={"v1": 0}))


def cli(capsys, hub, tmp_path, *args: str) -> tuple[int, str, str]:
    code = main([*args, "--endpoint", hub.endpoint, "--cache-dir", str(tmp_path / "c"), "--retries", "0"])
    out, err = capsys.readouterr()
    return code, out, err


def test_revision_flag_hf_uris_and_json_on_the_replica(capsys, hub, tmp_path):
    two_revisions(hub)
    for source in (["org/m", "--revision", "v1"], ["hf://org/m@v1"], ["org/m@v1", "--revision", "v1"]):
        code, out, _ = cli(capsys, hub, tmp_path, "snapshot", *source, "--json")
        assert code == 0 and json.loads(out)["revision"] == "v1", source
        assert json.loads(out)["config"]["num_hidden_layers"] == 2
    code, _, err = cli(capsys, hub, tmp_path, "snapshot", "org/m@main", "--revision", "v1")
    assert code == 2 and err == "hubdiff: 'org/m@main' names revision 'main' and --revision 'v1': give one\n"
    code, out, _ = cli(capsys, hub, tmp_path, "diff", "hf://org/m@v1", "org/m", "--json")
    report = json.loads(out)
    assert code == 1 and report["kind"] == "diff" and report["format"] == 1
    assert [c for c in report["results"][0]["config"] if c["path"] == "num_hidden_layers"]
    code, out, _ = cli(capsys, hub, tmp_path, "metrics", "org/m", "--revision", "v1", "--format", "json")
    assert code == 0 and json.loads(out)["layers"]["count"] == 2


def test_quiet_keeps_errors_and_drops_notices(capsys, hub, tmp_path):
    two_revisions(hub)
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder would be")
    args = ("snapshot", "org/m", "--endpoint", hub.endpoint, "--cache-dir", str(blocked))
    assert main(list(args)) == 0
    assert "cache" in capsys.readouterr().err  # the cache it cannot use is a notice
    assert main([*args, "-q"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["snapshot", "org/none", "--endpoint", hub.endpoint, "--retries", "0", "-q"]) == 3
    assert capsys.readouterr().err.startswith("hubdiff: org/none@main")  # errors stay


def test_metrics_text_shows_the_layer_strip_and_fits_a_narrow_terminal(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    flash = "src/hubdiff/testing/example/GLM-5.3-Flash"
    assert main(["metrics", flash, "--config-only"]) == 0
    out = capsys.readouterr().out
    # 45 layers: KDA three in four, DSA every fourth (the founding comparison's 34 KDA + 11 DSA)
    assert "  attn  KKKDKKKDKK KDKKKDKKKD KKKDKKKDKK KDKKKDKKKD KKKDK" in out
    assert all(len(line) <= 60 for line in out.splitlines()), max(out.splitlines(), key=len)
    monkeypatch.delenv("COLUMNS")
    assert main(["metrics", flash, "--config-only"]) == 0  # piped: one finding a line, for grep
    assert any(
        line.startswith("assumptions: ") and len(line) > 300 for line in capsys.readouterr().out.splitlines()
    )
