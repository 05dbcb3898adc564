"""Real configs as released are read, not refused: bounds are decided by use, not by a key's name.

Command R7B's config (Cohere2) carries ``"order_of_interleaved_layers": "local_attn_first"`` and
EleutherAI's polyglot-ko-12.8b ``"num_steps": "global_step100000"``: neither key is read as a number by
transformers' classes or by hubdiff, so neither is sized, while a hostile value where one is read still
is (``tests/test_bounds.py``). The files and their origin: ``tests/data/released/README.md``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hubdiff._source.config_bounds import USED_AS_NUMBER, check_config
from hubdiff._source.config_keys import HUBDIFF_NUMERIC_KEYS
from hubdiff._source.layout import LayoutProblem
from hubdiff._source.numeric_keys import TRANSFORMERS_NUMERIC_KEYS, TRANSFORMERS_VERSION
from hubdiff.testing import CommitSpec, RepoSpec

RELEASED = Path(__file__).parent / "data" / "released"
# (folder, the key once refused, its value as released)
CASES = {
    "polyglot-ko-12.8b": ("num_steps", "global_step100000"),
    "command-r7b-abliterated": ("order_of_interleaved_layers", "local_attn_first"),
}


def _config(folder: str) -> dict:
    return json.loads((RELEASED / folder / "config.json").read_text())


def hubdiff(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HUBDIFF_CACHE": str(cwd / "cache")}
    return subprocess.run(
        [sys.executable, "-m", "hubdiff", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("folder", CASES)
def test_the_released_key_is_as_released_and_passes_the_bounds(folder):
    key, value = CASES[folder]
    config = _config(folder)
    assert config[key] == value
    assert key not in USED_AS_NUMBER
    check_config(config, "config.json")  # raises LayoutProblem when refused


@pytest.mark.parametrize("folder", CASES)
def test_metrics_config_only_and_snapshot_read_a_local_folder(tmp_path, folder):
    where = str(RELEASED / folder)
    metrics = hubdiff(tmp_path, "metrics", where, "--config-only", "--json")
    assert metrics.returncode == 0, metrics.stderr
    figures = json.loads(metrics.stdout)
    config = _config(folder)
    # an independent figure: the attention block's parameters, from the config alone, written out
    h, layers = config["hidden_size"], config["num_hidden_layers"]
    heads, kv = (
        config["num_attention_heads"],
        config.get("num_key_value_heads", config["num_attention_heads"]),
    )
    head_dim = config.get("head_dim", h // heads)
    biases = (heads + 2 * kv) * head_dim + h if config["model_type"] == "gpt_neox" else 0  # qkv and dense
    attention = layers * (h * heads * head_dim + 2 * h * kv * head_dim + heads * head_dim * h + biases)
    assert figures["params"]["by_component"]["attention"] == attention
    snapshot = hubdiff(tmp_path, "snapshot", where)
    assert snapshot.returncode == 0, snapshot.stderr
    assert "tensors: 0 in 0 patterns" in snapshot.stdout


@pytest.mark.parametrize("folder", CASES)
def test_snapshot_and_metrics_read_it_from_the_replica(hub, tmp_path, folder):
    raw = (RELEASED / folder / "config.json").read_bytes()
    tensors = [
        (
            "gpt_neox.embed_in.weight" if folder.startswith("polyglot") else "model.embed_tokens.weight",
            "F16",
            (8, 4),
        )
    ]
    hub.add(RepoSpec("org/released", [CommitSpec({"config.json": raw}, tensors)]))
    common = ("org/released", "--endpoint", hub.endpoint, "--cache-dir", str(tmp_path / "c"))
    for argv in (("snapshot", *common), ("metrics", *common, "--config-only")):
        done = hubdiff(tmp_path, *argv)
        assert done.returncode == 0, (argv, done.stderr)
        assert done.stderr == ""


def test_a_key_read_as_a_number_is_still_refused_as_a_string():
    """The same string where transformers or hubdiff reads a number: refused, one line."""
    for key in ("num_hidden_layers", "num_residual_layers", "ffn_mult", "hidden_size"):
        with pytest.raises(LayoutProblem, match=f"^{key} is a string, not a (whole )?number$"):
            check_config({key: "local_attn_first"}, "config.json")


def test_a_key_named_like_a_size_but_read_by_no_one_is_compared_as_it_is():
    for key in ("order_of_interleaved_layers", "num_steps", "checkpoint_num_layers_note", "my_dim"):
        assert key not in USED_AS_NUMBER
        check_config({key: "x" * 1000}, "config.json")
        check_config({key: 10**30}, "config.json")


def test_the_numeric_keys_are_the_installed_transformers_classes():
    """The committed table is what ``scripts/numeric_keys.py`` writes for the installed transformers
    (a class's numeric fields, by its type hints): a sample of classes checked here, the whole by the
    script. hubdiff's own keys are ones no class declares."""
    import transformers

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    try:
        import numeric_keys as script
    finally:
        sys.path.pop(0)
    assert transformers.__version__ == TRANSFORMERS_VERSION
    from hubdiff._metrics.config import _transformers

    mapping = _transformers().CONFIG_MAPPING
    for model_type in ("gpt_neox", "cohere2", "llama", "mimi", "mamba", "qwen2_vl", "gpt_oss", "deepseek_v3"):
        declared = {k for k, hint in script._hints(mapping[model_type]).items() if script._is_numeric(hint)}
        assert declared <= TRANSFORMERS_NUMERIC_KEYS, (
            model_type,
            sorted(declared - TRANSFORMERS_NUMERIC_KEYS),
        )
    assert "num_steps" not in TRANSFORMERS_NUMERIC_KEYS and "hidden_size" in TRANSFORMERS_NUMERIC_KEYS
    assert not HUBDIFF_NUMERIC_KEYS & TRANSFORMERS_NUMERIC_KEYS
