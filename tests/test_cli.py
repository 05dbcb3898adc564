"""The CLI as a user runs it: a real process, real arguments, real exit codes."""

import json
import os
import re
import subprocess
import sys

import yaml

from hubdiff.testing import CommitSpec, RepoSpec, load_census, write_checkpoint

from .conftest import DATA


def hubdiff(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "hubdiff", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


def test_snapshot_of_a_local_folder(tmp_path):
    census = DATA / "Qwen3-VL-30B-A3B-Instruct" / "tensor_census.tsv"
    write_checkpoint(tmp_path, CommitSpec({"config.json": b"{}"}, load_census(census.read_text()), shards=13))
    result = hubdiff("snapshot", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "tensors: 882 in " in result.stdout
    assert re.search(
        r"model\.language_model\.layers\.\{0-47\}\.mlp\.experts\.gate_up_proj\n\s+BF16\s+"
        r"\[128, 2048, 1536\]\s+×48\n",
        result.stdout,
    )
    as_json = json.loads(hubdiff("snapshot", str(tmp_path), "--json").stdout)
    assert len(as_json["tensors"]) == 882 and as_json["format"] == 1
    assert all(len(line) <= 80 for line in result.stdout.splitlines())  # laid out for an 80-column terminal


def test_snapshot_over_the_replica_then_offline(hub, tmp_path):
    tensors = [(f"model.layers.{i}.w", "BF16", (4, 4)) for i in range(3)]
    sha = hub.add(RepoSpec("org/m", [CommitSpec({"config.json": b'{"x": 1}'}, tensors)]))[0]
    env = {"HF_ENDPOINT": hub.endpoint, "HUBDIFF_CACHE": str(tmp_path / "c")}
    online = hubdiff("snapshot", "org/m@main", env=env)
    assert online.returncode == 0, online.stderr
    assert f"org/m @ main\ncommit {sha} (" in online.stdout
    assert re.search(r"model\.layers\.\{0-2\}\.w\s+BF16\s+\[4, 4\]\s+×3\n", online.stdout)
    assert "stored elements: 48 (48)\n" in online.stdout
    assert "the Hub's own count (safetensors.parameters): agrees\n" in online.stdout
    hub.stop()
    offline = hubdiff("snapshot", "org/m", "--offline", env=env)
    assert offline.returncode == 0 and offline.stdout == online.stdout
    missing = hubdiff("snapshot", "org/other", "--offline", env=env)
    assert missing.returncode == 3
    assert missing.stderr.startswith("hubdiff: org/other@main: offline: no cached sha")


def test_usage_errors_exit_2_and_help_explains():
    assert hubdiff("snapshot", "not a repo!").returncode == 2
    helped = hubdiff("--help")
    assert helped.returncode == 0 and "exit codes:" in helped.stdout and "snapshot" in helped.stdout


def test_demo_runs_the_whole_loop(tmp_path):
    out = tmp_path / "reports"
    result = hubdiff("demo", "--output-dir", str(out))
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "KV cache per token 47,616 → 5,984 bytes (−87.4%, 8.0× smaller)" in text
    assert "self_attn.indexer.* tensors leave 57 of 79 layers (79 → 22)" in text
    assert "2. hubdiff watch over baselines/glm-5.yaml\n   hubdiff watch: 3 repos checked, 0 changed" in text
    assert "claim kv_bytes_per_token: stated 6.0 KB, measured 5.81 KB (5,808)" in text
    assert "baselines updated: glm-5" in text
    for name in ("glm-5-vs-glm-5.3.md", "glm-5.3-vs-glm-5.3-flash.md", "glm-5.md", "glm-5.pr.md"):
        assert (out / name).exists()
    pr_body = (out / "glm-5.pr.md").read_text()
    assert "| KV cache per token | 5,984 (6.0 KB) | 5,808 (5.8 KB) | −2.9% |" in pr_body  # not "(1.0×)"
    assert "Layer stack unchanged (45 layers)." in pr_body
    assert "14 of 17 claims hold (7 on an unverified figure" in pr_body and "| `layers`" not in pr_body
    recorded = (out / "baselines" / "glm-5.yaml").read_text()
    assert (
        "index_kpool: 8" in recorded and "kv_bytes_per_token: 6.0 KB" in recorded
    )  # re-recorded, claims kept
    # 5. two new repos in the family, one GGUF repo the rule excludes
    assert (
        "New release in glm-5: zai-org/GLM-5.3-FP8, compared with zai-org/GLM-5.3: a quantized copy of "
        "zai-org/GLM-5.3: same architecture, parameters equal; weights 1.5 TB → 755.5 GB" in text
    )
    assert "New release in glm-5: zai-org/GLM-5.3-Flash-Lite, compared with zai-org/GLM-5.3-Flash: " in text
    assert (
        "hubdiff watch: 3 repos checked, 0 changed, 2 new releases, 1 quantized copy, baselines updated: glm-5"
        in text
    )
    # the GGUF copy, found through its card: its parameters are the source's main parameters (every
    # tensor but the MTP layer's, as recorded for zai-org/GLM-5.3 from its safetensors headers below)
    assert (
        "zai-org/GLM-5.3-GGUF@" in text
        and ": a GGUF quantized copy of zai-org/GLM-5.3 (so its card says): GLM-5.3-Q4_K_M (9 files, " in text
        and "every tensor matches the source's (743,377,019,904 parameters of its 753,329,940,480; left out "
        "as converters do: MTP layer (index 78 >= num_hidden_layers 78): not converted)."
        in text
    )
    added = yaml.safe_load(recorded)["repos"]
    assert (
        added["zai-org/GLM-5.3-FP8"]["metrics"]["main_params"]
        == added["zai-org/GLM-5.3"]["metrics"]["main_params"]
    )
    assert added["zai-org/GLM-5.3-Flash-Lite"]["metrics"]["routed_experts_per_layer"] == 144
    releases = (out / "releases" / "glm-5.pr.md").read_text()
    assert (
        "| F8\\_E4M3 elements | 0 | 751,306,014,720 |" in releases
        and "  main_params: 743377019904" in releases
    )


def test_metrics_command_text_and_json(tmp_path):
    root = "src/hubdiff/testing/example/GLM-5.3-Flash"
    from pathlib import Path

    base = Path(__file__).parent.parent / root
    write_checkpoint(
        tmp_path,
        CommitSpec(
            {"config.json": (base / "config.json").read_bytes()},
            load_census((base / "census.tsv").read_text()),
            shards=4,
        ),
    )
    text = hubdiff("metrics", str(tmp_path), "--kv-dtype", "fp8", "--context", "1048576")
    assert text.returncode == 0, text.stderr
    assert "KV cache    5,984 bytes per token (6.0 KB), profile naive, fp8" in text.stdout
    assert "at 1,048,576 tokens:" in text.stdout and "kda_state" in text.stdout
    data = json.loads(hubdiff("metrics", str(tmp_path), "--json", "--kv-dtype", "fp8").stdout)
    assert data["params"]["experts"]["params_per_routed_expert"] == 25_165_824
    assert data["kv"]["bytes_per_token"] == 5_984 and data["layers"]["attention"] == {"dsa": 11, "kda": 34}
    assert {"total", "active", "active_without_embeddings", "by_component", "by_dtype"} <= set(data["params"])
    estimate = json.loads(hubdiff("metrics", str(tmp_path), "--json", "--config-only").stdout)
    assert estimate["basis"] == "config" and estimate["params"]["total"] == data["params"]["total"]
    assert hubdiff("metrics", str(tmp_path), "--kv-dtype", "fp7").returncode == 2
