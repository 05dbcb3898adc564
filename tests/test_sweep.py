"""The sweep (``scripts/sweep.py``) in the suite: a fixed sample of model_types, re-run and held to the
committed table.

Each sampled model_type's defaults and variations are built on the meta device and compared with
hubdiff's figures (``tests/oracle.py``: ``sweep_type``). The suite fails when a row is wrong (hubdiff
disagrees with the model and does not say its figures are unverified), when the committed table
(tests/data/sweep.json) is not what the code now produces for the sample, or when the generated
``hubdiff._metrics.proven`` is not what the table implies: neither can go stale silently.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from hubdiff._metrics.compute import compute_metrics
from hubdiff._metrics.options import MetricsOptions
from hubdiff._metrics.proven import PROVEN_TYPES, SWEPT_TRANSFORMERS, SWEPT_TYPES
from hubdiff.snapshot import Snapshot

from .oracle import NOT_PROVEN, Row, generative_types, judge_rows, proven_module, sweep_type

TABLE = Path(__file__).parent / "data" / "sweep.json"
PROVEN_MODULE = Path(__file__).parent.parent / "src" / "hubdiff" / "_metrics" / "proven.py"

# Every family of layer (full, sliding, MLA, DSA, cross-attention, Mamba-1/-2, Gated DeltaNet, KDA,
# lightning, RG-LRU, RWKV, short convolutions, parallel hybrids, shared blocks, per-layer heads, local
# windows) and of MLP (gated, plain, fused, MoE fused or stacked, shared experts, MLP-only blocks),
# text-only and with vision towers, proven and not.
SAMPLE = [
    "llama",
    "mistral",
    "mixtral",
    "qwen2",
    "qwen2_moe",
    "qwen3",
    "qwen3_moe",
    "qwen3_next",
    "qwen3_5_text",
    "qwen3_5_moe_text",
    "deepseek_v2",
    "deepseek_v3",
    "deepseek_v32",
    "glm_moe_dsa",
    "glm4_moe",
    "gemma",
    "gemma2",
    "gemma3_text",
    "gemma3",
    "llama4_text",
    "llama4",
    "mllama",
    "jamba",
    "mamba",
    "mamba2",
    "falcon_mamba",
    "nemotron_h",
    "falcon_h1",
    "bamba",
    "zamba2",
    "granitemoehybrid",
    "recurrent_gemma",
    "rwkv",
    "lfm2",
    "minimax",
    "kimi_linear",
    "gpt_oss",
    "mimo_v2_flash",
    "phi3",
    "phi",
    "phimoe",
    "gpt2",
    "gpt_neox",
    "gptj",
    "codegen",
    "bloom",
    "falcon",
    "opt",
    "mpt",
    "starcoder2",
    "gpt_bigcode",
    "cohere",
    "olmo",
    "olmo2",
    "olmoe",
    "dbrx",
    "qwen2_vl",
    "qwen2_5_vl",
    "qwen3_vl",
    "qwen3_vl_moe",
    "glm4v",
    "llava",
    "mistral3",
    "bert",
    "t5",
    "bart",
    "whisper",
    "ernie4_5_moe",
    "hunyuan_v1_moe",
    "granitemoe",
    "exaone4",
    "smollm3",
    "stablelm",
    "persimmon",
    "laguna",
    "zamba",
    "gpt_neo",
]


def _committed() -> list[dict]:
    return json.loads(TABLE.read_text())["rows"]


def sample_rows() -> list[Row]:
    start = time.perf_counter()
    rows = judge_rows([row for model_type in SAMPLE for row in sweep_type(model_type)])
    print(f"sweep sample: {len(SAMPLE)} model_types, {len(rows)} rows, {time.perf_counter() - start:.1f} s")
    return rows


def test_sample_is_broad() -> None:
    assert len(set(SAMPLE)) == len(SAMPLE) >= 60
    assert set(SAMPLE) <= SWEPT_TYPES
    assert set(SAMPLE) & PROVEN_TYPES and set(SAMPLE) - PROVEN_TYPES  # both kinds are exercised


def test_no_row_is_wrong_and_the_committed_table_is_what_the_code_produces() -> None:
    """One test, so the sample is swept once (a module fixture would be swept again by each worker that
    runs one of two tests). Re-run scripts/sweep.py (or ``scripts/sweep.py TYPE ...``) when the table
    differs after a change."""
    rows = sample_rows()
    wrong = [f"{r.model_type}/{r.variation}: {'; '.join(r.mismatches)}" for r in rows if r.verdict == "wrong"]
    assert not wrong, "\n".join(wrong)
    assert any(r.verdict == "exact" for r in rows)
    sampled = set(SAMPLE)
    committed = [r for r in _committed() if r["model_type"] in sampled]
    produced = [r.to_json() for r in sorted(rows, key=lambda r: r.model_type)]  # the table's order
    assert produced == committed


def test_the_table_is_of_the_installed_transformers() -> None:
    """The locked transformers (.ci/constraints.txt) is the one the table was swept with: a new release
    is proven by re-running scripts/sweep.py on it (.github/workflows/sweep.yml opens that pull request)."""
    from hubdiff._metrics.config import installed_transformers

    table = json.loads(TABLE.read_text())["transformers"]
    assert table == SWEPT_TRANSFORMERS == installed_transformers(), "re-run python scripts/sweep.py"


def test_proven_module_is_what_the_table_implies() -> None:
    assert PROVEN_MODULE.read_text() == proven_module(
        _committed(), json.loads(TABLE.read_text())["transformers"]
    )


# The architectures users watch, each named by the issue that asked for them to be proven
WATCHED = {
    "deepseek_v4", "gemma4", "gemma4_text", "gemma3n", "gemma3n_text", "minimax", "bloom", "xglm", "nemotron",
    "ernie4_5_moe", "dots1", "lfm2_moe", "hunyuan_v1_moe", "hunyuan_v1_dense", "longcat_flash", "afmoe",
    "bitnet", "cohere2_moe", "olmo_hybrid", "minicpm3", "jetmoe", "ministral", "glm_ocr",
}  # fmt: skip


def test_nineteen_in_twenty_generative_model_types_are_proven_and_every_watched_one() -> None:
    """Gemma 3n's composite class among them: its rows are recorded where timm, torchvision and Pillow
    are installed (scripts/sweep.py), for TimmWrapperModel builds its MobileNetV5 tower."""
    generative = generative_types()
    proven = generative & PROVEN_TYPES
    assert len(proven) / len(generative) >= 0.95, sorted(generative - PROVEN_TYPES)
    assert not WATCHED - PROVEN_TYPES, sorted(WATCHED - PROVEN_TYPES)
    rows = [r for r in json.loads(TABLE.read_text())["rows"] if r["model_type"] == "gemma3n"]
    assert rows and all(r["verdict"] == "exact" for r in rows if r["variation"] != "model args")
    # a timm keyword argument that changes the tower is not applied, and said to be not understood
    (marked,) = [r for r in rows if r["variation"] == "model args"]
    assert marked["verdict"] == "unverified" and "model_args.stem_bias not understood" in marked["reasons"][0]


def test_gemma3n_is_not_built_without_timm() -> None:
    """Where timm is missing (the suite's environment), the oracle does not build Gemma 3n and says why:
    its rows cannot be re-run here, and none is faked."""
    import importlib.util

    if importlib.util.find_spec("timm") is not None and importlib.util.find_spec("PIL") is not None:
        pytest.skip("timm and Pillow installed: Gemma 3n is built (scripts/sweep.py records its rows)")
    rows = sweep_type("gemma3n")
    assert rows and all(r.verdict == "not built" and "TimmWrapperModel" in r.reasons[0] for r in rows)


def test_every_table_row_is_exact_unverified_or_not_built() -> None:
    verdicts = {r["verdict"] for r in _committed()}
    assert verdicts <= {"exact", "unverified", "not built"}, verdicts
    for r in _committed():
        if r["verdict"] == "unverified":
            assert r["reasons"], r
        if r["verdict"] == "exact":
            assert not r["mismatches"] and not r["reasons"], r


@pytest.mark.parametrize("model_type", ["phi", "gpt_neox", "llama"])
def test_hubdiff_marks_an_unproven_layout_through_the_cli_path(model_type: str) -> None:
    """compute_metrics (what ``hubdiff metrics --config-only`` runs) names the unproven layout, and only
    for a model_type the table does not prove."""
    from transformers import CONFIG_MAPPING

    config = {**CONFIG_MAPPING[model_type]().to_diff_dict(), "model_type": model_type}
    snapshot = Snapshot(model_type, "main", "", None, config, None, (), {}, ())
    metrics = compute_metrics(snapshot, MetricsOptions(config_only=True))
    marked = f"layout of {model_type} {NOT_PROVEN}" in metrics.unverified
    assert marked == (model_type not in PROVEN_TYPES)


def test_a_model_type_transformers_does_not_ship_is_unverified() -> None:
    """Remote code cannot be swept (hubdiff never runs it): its figures rest on hubdiff's common layout,
    which nothing has proven for it, so they are unverified, with the reason; a config without any
    model_type likewise."""
    config = {
        "model_type": "brand_new_arch_of_tomorrow",
        "auto_map": {"AutoConfig": "configuration_new.NewConfig"},
        "hidden_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "intermediate_size": 128,
        "vocab_size": 1000,
        "max_position_embeddings": 512,
        "tie_word_embeddings": False,
    }

    def unverified(config: dict) -> tuple[str, ...]:
        snapshot = Snapshot("x", "main", "", None, config, None, (), {}, ())
        metrics = compute_metrics(snapshot, MetricsOptions(config_only=True))
        assert any("not sweepable" in a for a in metrics.assumptions), metrics.assumptions
        return metrics.unverified

    assert unverified(config) == (
        f"model_type brand_new_arch_of_tomorrow is not one transformers {SWEPT_TRANSFORMERS} ships (remote code named by "
        "auto_map): layout not proven by the sweep",
    )
    assert "unknown to it" in unverified({k: v for k, v in config.items() if k != "auto_map"})[0]
    assert "no model_type" in unverified({k: v for k, v in config.items() if k != "model_type"})[-1]


def test_a_proven_model_type_says_so_in_its_assumptions() -> None:
    """Without a second witness at run time, the figure rests on hubdiff's own model: the output says
    so, and what the sweep found for the type."""
    from transformers import CONFIG_MAPPING

    config = {**CONFIG_MAPPING["llama"]().to_diff_dict(), "model_type": "llama"}
    metrics = compute_metrics(
        Snapshot("x", "main", "", None, config, None, (), {}, ()), MetricsOptions(config_only=True)
    )
    line = next(a for a in metrics.assumptions if a.startswith("layout:"))
    assert "hubdiff's own model of llama" in line
    assert f"proven exact by the sweep against transformers {SWEPT_TRANSFORMERS}'s class" in line
    assert metrics.unverified == ()


# phi-2 and pythia-2.8b as published (non-gated MLPs, which the common gated layout overcounted by 30%)
PHI_2 = {
    "model_type": "phi",
    "architectures": ["PhiForCausalLM"],
    "hidden_size": 2560,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "intermediate_size": 10240,
    "vocab_size": 51200,
    "max_position_embeddings": 2048,
    "partial_rotary_factor": 0.4,
    "tie_word_embeddings": False,
    "hidden_act": "gelu_new",
    "torch_dtype": "float16",
}
PYTHIA_2_8B = {
    "model_type": "gpt_neox",
    "architectures": ["GPTNeoXForCausalLM"],
    "hidden_size": 2560,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "intermediate_size": 10240,
    "vocab_size": 50304,
    "max_position_embeddings": 2048,
    "rotary_pct": 0.25,
    "use_parallel_residual": True,
    "tie_word_embeddings": False,
    "hidden_act": "gelu",
    "torch_dtype": "float16",
}


def _cli_metrics(folder: Path, config: dict, *args: str) -> subprocess.CompletedProcess[str]:
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    return subprocess.run(
        [sys.executable, "-m", "hubdiff", "metrics", str(folder), "--config-only", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(("config", "published"), [(PHI_2, 2_779_683_840), (PYTHIA_2_8B, 2_775_208_960)])
def test_cli_config_only_counts_non_gated_models_exactly(
    tmp_path: Path, config: dict, published: int
) -> None:
    from .oracle import meta_inventory

    done = _cli_metrics(tmp_path / "model", config, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    tensors = meta_inventory(config)
    assert tensors is not None
    assert data["params"]["total"] == sum(math.prod(shape) for _, _, shape in tensors) == published
    assert data["unverified"] == []


def test_cli_config_only_says_an_unproven_layout_is_unverified(tmp_path: Path) -> None:
    from transformers import CONFIG_MAPPING

    unproven = sorted(SWEPT_TYPES - PROVEN_TYPES)
    model_type = "mpt" if "mpt" in unproven else unproven[0]
    config = {**CONFIG_MAPPING[model_type]().to_diff_dict(), "model_type": model_type}
    done = _cli_metrics(tmp_path / "model", config)
    assert done.returncode == 0, done.stderr
    assert f"layout of {model_type} {NOT_PROVEN}" in done.stdout


def test_the_kv_check_compares_with_the_models_key_and_value_projections() -> None:
    """The sweep's KV yardstick (k_proj + v_proj rows per attention layer) agrees on Llama and catches
    a layer whose keys are wider than hubdiff's cache figure."""
    import dataclasses

    import torch

    from .oracle import _inventory, _kv, _no_torch_init, _quiet, _truth, build_config, sweep_cases

    case = next(c for c in sweep_cases("llama")[0] if c.variation == "size")
    cfg_obj, _ = build_config(case.config)
    with _quiet(), torch.device("meta"), _no_torch_init():
        from transformers import LlamaForCausalLM

        model = LlamaForCausalLM(cfg_obj)
    truth = _truth(model, cfg_obj, _inventory(model, "checkpoint"))
    metrics = compute_metrics(
        Snapshot("x", "main", "", None, case.config, None, (), {}, ()), MetricsOptions(config_only=True)
    )
    assert _kv(metrics, truth) == []
    wider = [
        (n, d, (s[0] * 2, *s[1:]) if n.endswith("layers.0.self_attn.k_proj.weight") else s)
        for n, d, s in truth.tensors
    ]
    assert _kv(metrics, dataclasses.replace(truth, tensors=wider))


def test_the_state_check_compares_with_the_state_transformers_cache_holds() -> None:
    """The sweep's recurrent-state yardstick (what a meta-device prefill leaves in transformers' cache)
    agrees with hubdiff on Qwen3.5's Gated DeltaNet layers and catches a state group that is too big, a
    convolution state that is missing, and recurrent layers hubdiff holds no state for. Elements are
    compared, said in hubdiff's dtypes: transformers keeps its SSM states in float32 where the engines
    hold the model's dtype, by design; convolution states at kernel - 1 positions, as the engines do
    (transformers keeps the whole kernel)."""
    import dataclasses

    from .oracle import (
        _build_model,
        _inventory,
        _truth,
        build_config,
        cache_checks,
        cache_figures,
        sweep_cases,
    )

    case = next(c for c in sweep_cases("qwen3_5_text")[0] if c.variation == "default")
    cfg_obj, _ = build_config(case.config)
    model, _ = _build_model(cfg_obj)
    truth = _truth(model, cfg_obj, _inventory(model, "checkpoint"))
    metrics = compute_metrics(
        Snapshot("x", "main", "", None, case.config, None, (), {}, ()), MetricsOptions(config_only=True)
    )
    assert {g.name for g in metrics.kv.states} == {"gdn_state", "gdn_conv"}
    assert cache_checks(model, "qwen3_5_text", metrics, truth) == []
    figures = cache_figures(model, set(truth.recurrent_layers))
    assert sum(figures.recurrent.values()) and sum(figures.conv.values())

    def checked(states: tuple, layers: tuple | None = None) -> list[str]:
        kv = dataclasses.replace(metrics.kv, states=states)
        wrong = dataclasses.replace(metrics, kv=kv, layers=metrics.layers if layers is None else layers)
        return cache_checks(model, "qwen3_5_text", wrong, truth)

    state, conv = sorted(metrics.kv.states, key=lambda g: g.name != "gdn_state")
    bigger = dataclasses.replace(state, bytes_per_layer=state.bytes_per_layer * 2)
    assert any(m.startswith("gdn_state ") for m in checked((bigger, conv)))
    assert any(m.startswith("gdn_conv none vs ") for m in checked((state,)))
    as_attention = tuple(dataclasses.replace(x, attention="gqa") for x in metrics.layers)
    assert any("hubdiff holds none for" in m for m in checked((state, conv), as_attention))


def test_the_kv_check_reads_a_fused_qkv_from_transformers_cache() -> None:
    """Where no k_proj and v_proj can be read (GPT-2's fused c_attn), the keys and values a meta-device
    prefill leaves in transformers' cache are the yardstick: they agree, and a wider KV is caught."""
    import dataclasses

    from .oracle import _build_model, _inventory, _kv, _truth, build_config, cache_checks, sweep_cases

    case = next(c for c in sweep_cases("gpt2")[0] if c.variation == "default")
    cfg_obj, _ = build_config(case.config)
    model, _ = _build_model(cfg_obj)
    truth = _truth(model, cfg_obj, _inventory(model, "checkpoint"))
    metrics = compute_metrics(
        Snapshot("x", "main", "", None, case.config, None, (), {}, ()), MetricsOptions(config_only=True)
    )
    assert _kv(metrics, truth) == []  # nothing to read there
    assert cache_checks(model, "gpt2", metrics, truth) == []
    wider = tuple(dataclasses.replace(g, bytes_per_layer=g.bytes_per_layer * 2) for g in metrics.kv.groups)
    wrong = dataclasses.replace(metrics, kv=dataclasses.replace(metrics.kv, groups=wider))
    assert any("(transformers' cache)" in m for m in cache_checks(model, "gpt2", wrong, truth))


def _transformers_of_another_version(root: Path, version: str) -> Path:
    """The installed transformers as another release would stand: every file of the package linked,
    its ``__init__`` copied with ``version`` in place of its own. Returns the folder for PYTHONPATH."""
    import importlib.util
    import re

    spec = importlib.util.find_spec("transformers")
    assert spec is not None and spec.origin is not None
    real = Path(spec.origin).parent
    package = root / "transformers"
    package.mkdir(parents=True)
    for entry in real.iterdir():
        if entry.name not in ("__init__.py", "__pycache__"):
            (package / entry.name).symlink_to(entry)
    init = Path(spec.origin).read_text(encoding="utf-8")
    init, replaced = re.subn(r'^__version__ = "[^"]+"$', f'__version__ = "{version}"', init, flags=re.M)
    assert replaced == 1
    (package / "__init__.py").write_text(init, encoding="utf-8")
    return root


def test_with_a_transformers_the_sweep_never_saw_nothing_is_called_proven(tmp_path: Path) -> None:
    """hubdiff metrics names the installed version wherever it speaks of the sweep, and a proven
    model_type's figures are unverified: the proof was of another version's classes."""
    import os

    unseen = "5.99.0"
    assert unseen != SWEPT_TRANSFORMERS
    site = _transformers_of_another_version(tmp_path / "site", unseen)
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(PHI_2))
    assert "phi" in PROVEN_TYPES
    env = {**os.environ, "PYTHONPATH": str(site)}
    run = [sys.executable, "-m", "hubdiff", "metrics", str(folder), "--config-only"]
    text = subprocess.run(run, capture_output=True, text=True, timeout=120, env=env)
    data = subprocess.run([*run, "--json"], capture_output=True, text=True, timeout=120, env=env)
    assert text.returncode == data.returncode == 0, text.stderr + data.stderr
    metrics = json.loads(data.stdout)
    said = f"transformers {unseen} installed, which the sweep never ran on (it ran on transformers {SWEPT_TRANSFORMERS})"
    assert metrics["unverified"] == [
        f"layout of phi not proven by the sweep for the installed version: {said}"
    ]
    sweep_lines = [line for line in text.stdout.splitlines() if "sweep" in line]
    assert sweep_lines and all(f"transformers {unseen}" in line for line in sweep_lines), sweep_lines
    layout = next(a for a in metrics["assumptions"] if a.startswith("layout:"))
    assert (
        f"not proven for the installed transformers {unseen}, which the sweep never ran on (proven exact "
        f"by the sweep against transformers {SWEPT_TRANSFORMERS}'s class)"
    ) in layout
    assert any(f"config read with transformers {unseen}" in a for a in metrics["assumptions"])
    # and with the swept version, the same figures are proven and nothing is unverified
    same = subprocess.run([*run, "--json"], capture_output=True, text=True, timeout=120)
    assert same.returncode == 0, same.stderr
    assert json.loads(same.stdout)["unverified"] == []
    assert json.loads(same.stdout)["params"] == metrics["params"]


def test_a_per_layer_table_with_sizes_of_its_own_is_marked_where_nothing_reads_it() -> None:
    """A per_layer_config that gives a layer other sizes than the config's own changes counts that no
    layout of hubdiff's reads (outside Gemma's stacks): marked. One that repeats the config is not."""
    from transformers import CONFIG_MAPPING

    base = {**CONFIG_MAPPING["llama"]().to_diff_dict(), "model_type": "llama", "num_hidden_layers": 2}
    same = {"0": {"num_key_value_heads": base.get("num_key_value_heads", 32)}}
    other = {"1": {"num_key_value_heads": 1}}
    marked = []
    for table in (same, other):
        config = {**base, "num_key_value_heads": same["0"]["num_key_value_heads"], "per_layer_config": table}
        snapshot = Snapshot("t", "main", "", None, config, None, (), {}, ())
        reasons = compute_metrics(snapshot, MetricsOptions(config_only=True)).unverified
        marked.append(any(r.startswith("per_layer_config not understood") for r in reasons))
    assert marked == [False, True]
