"""The JSON Schemas shipped in the package describe what hubdiff really writes, and stay in step with
the code's own lists of keys and figures."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest
import yaml

from hubdiff._baseline.schema import _REPO_KEYS
from hubdiff._metrics.figures import FIGURE_UNITS
from hubdiff._metrics.options import OPTION_KEYS
from hubdiff.cli import main
from hubdiff.testing import CommitSpec, RepoSpec, load_repo_spec, write_checkpoint

ROOT = Path(__file__).parent.parent
EXAMPLE = ROOT / "src" / "hubdiff" / "testing" / "example"


def schema(name: str) -> dict:
    return json.loads(files("hubdiff.schemas").joinpath(f"{name}.json").read_text())


def valid(name: str, document: object) -> None:
    validator = jsonschema.Draft202012Validator(schema(name))
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message[:200]}" for e in errors[:5])


def invalid(name: str, document: object) -> None:
    assert not jsonschema.Draft202012Validator(schema(name)).is_valid(document)


def run_json(capsys, *args: str) -> dict:
    main([*args])
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """The example's GLM-5.3 and GLM-5.3-Flash written out as local folders (config and headers)."""
    root = tmp_path_factory.mktemp("example")
    for name in ("GLM-5.3", "GLM-5.3-Flash"):
        write_checkpoint(root / name, load_repo_spec(EXAMPLE / name / "repo.yaml").commits[-1])
    return root


def test_every_schema_is_a_valid_draft_2020_12_schema():
    for name in ("snapshot", "metrics", "report", "baseline"):
        jsonschema.Draft202012Validator.check_schema(schema(name))


def test_snapshot_and_metrics_json_follow_their_schemas(capsys, folders):
    flash = str(folders / "GLM-5.3-Flash")
    snapshot = run_json(capsys, "snapshot", flash, "--json")
    assert len(snapshot["tensors"]) > 2_000
    valid("snapshot", {**snapshot, "tensors": snapshot["tensors"][::50]})  # one row in 50: each is alike
    invalid("snapshot", {k: v for k, v in snapshot.items() if k != "format"})
    invalid("snapshot", {**snapshot, "tensors": [["a", "BF16", [4]]]})  # a row without its shard
    for extra in ([], ["--config-only"], ["--tp", "1,8", "--gpu-memory", "80GB"]):
        metrics = run_json(capsys, "metrics", flash, "--json", *extra)
        valid("metrics", metrics)
    invalid("metrics", {**metrics, "basis": "guess"})


def test_diff_and_check_json_follow_the_report_schema(capsys, folders, hub, tmp_path):
    diff = run_json(capsys, "diff", str(folders / "GLM-5.3"), str(folders / "GLM-5.3-Flash"), "--json")
    valid("report", diff)
    assert diff["kind"] == "diff" and diff["results"][0]["config"]
    invalid("report", {**diff, "exit_code": 7})
    config = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
              "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 100}  # fmt: skip
    rows = [(f"model.layers.{i}.self_attn.q_proj.weight", "BF16", (64, 64)) for i in range(2)]
    hub.add(RepoSpec("org/m", [CommitSpec({"config.json": json.dumps(config).encode()}, rows)]))
    common = ["--endpoint", hub.endpoint, "--cache-dir", str(tmp_path / "c")]
    args = ["baseline", "init", "org/m", "--family", "m", "--baseline-dir", str(tmp_path / "b"), *common]
    assert main(args) == 0
    capsys.readouterr()
    check = run_json(capsys, "check", str(tmp_path / "b" / "m.yaml"), "--json", *common)
    valid("report", check)
    assert check["kind"] == "check" and check["exit_code"] == 0
    valid("baseline", yaml.safe_load((tmp_path / "b" / "m.yaml").read_text()))


def test_the_shipped_baseline_follows_the_baseline_schema():
    data = yaml.safe_load((ROOT / "baselines" / "glm-5.yaml").read_text())
    valid("baseline", data)
    flash = data["repos"]["zai-org/GLM-5.3-Flash"]
    invalid("baseline", {**data, "repos": {"zai-org/GLM-5.3-Flash": {**flash, "claims": {"kv_bytes": 1}}}})
    invalid("baseline", {**data, "family": "GLM 5"})


def test_the_schemas_name_what_the_code_knows():
    repo = schema("baseline")["properties"]["repos"]["additionalProperties"]
    assert set(repo["properties"]) == _REPO_KEYS
    assert set(repo["properties"]["metrics_options"]["properties"]) == set(OPTION_KEYS)
    assert set(repo["properties"]["claims"]["propertyNames"]["anyOf"][0]["enum"]) == set(FIGURE_UNITS)
