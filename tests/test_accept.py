"""Accepting the measured figures: ``hubdiff baseline accept`` (and ``update --accept-claims``) restates
each claim a new revision breaks, in its own unit and precision, comments kept, and a watch's pull
request names every such claim by the line of the file it proposes, with that command.

The model is a plain one the arithmetic can be written out for: multi-head attention, BF16, so the KV
cache per token is 2 (K and V) x layers x hidden x 2 bytes; parameters are the q_proj matrices only,
layers x hidden x hidden."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hubdiff.testing import CommitSpec, RepoSpec

BASELINE = """\
family: fam
notes: a family whose figures the tests know
repos:
  org/a:  # the one that moves
    revision: main
    claims:
      kv_bytes_per_token: 0.26 KB  # the model card, table 2
      layers: 2
      total_params: {value: 2K, tolerance: 10%}
      config.hidden_size: 32
      config.rope_theta: 10000  # dropped by the next revision
  org/b:
    revision: main
    claims:
      kv_bytes_per_token: 256
"""


def commit(hidden: int, layers: int, **extra: object) -> CommitSpec:
    config = {"hidden_size": hidden, "num_hidden_layers": layers, "num_attention_heads": 4, "vocab_size": 100}
    tensors = [(f"model.layers.{i}.self_attn.q_proj.weight", "BF16", (hidden, hidden)) for i in range(layers)]
    return CommitSpec(
        {"config.json": json.dumps({**config, **extra}).encode()}, tensors, title=f"{hidden}x{layers}"
    )


def kv_bytes(hidden: int, layers: int) -> int:
    return 2 * layers * hidden * 2  # K and V, every layer, hidden wide, BF16


def hubdiff(cwd: Path, hub, *args: str) -> subprocess.CompletedProcess[str]:
    endpoint = hub if isinstance(hub, str) else hub.endpoint
    env = {**os.environ, "HF_ENDPOINT": endpoint, "HUBDIFF_CACHE": str(cwd / "cache")}
    return subprocess.run(
        [sys.executable, "-m", "hubdiff", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def family(hub, tmp_path):
    """org/a and org/b recorded at 32 wide, 2 layers, where every claim holds; the file as people wrote it."""
    hub.add(RepoSpec("org/a", [commit(32, 2, rope_theta=10000)]))
    hub.add(RepoSpec("org/b", [commit(32, 2)]))
    path = tmp_path / "baselines" / "fam.yaml"
    path.parent.mkdir()
    path.write_text(BASELINE)
    recorded = hubdiff(tmp_path, hub, "baseline", "update")
    assert recorded.returncode == 0, recorded.stderr
    assert hubdiff(tmp_path, hub, "check").returncode == 0  # the claims hold, as stated
    return path


def claim_line(text: str, repo: str, name: str) -> int:
    """The line of ``name`` under ``repo``'s claims (a figure of the same name is under metrics too)."""
    lines = text.splitlines()
    start = (
        lines.index(f"  {repo}:")
        if f"  {repo}:" in lines
        else lines.index(f"  {repo}:  # the one that moves")
    )
    claims = lines.index("    claims:", start)
    return next(i for i, line in enumerate(lines[claims:], claims + 1) if line.startswith(f"      {name}:"))


def changed_lines(before: str, after: str) -> list[tuple[str, str]]:
    a, b = before.splitlines(), after.splitlines()
    assert len(a) == len(b)
    return [(x, y) for x, y in zip(a, b) if x != y]


def test_accept_restates_each_broken_claim_in_its_own_form_from_the_recorded_figures(hub, tmp_path, family):
    hub.push("org/a", commit(64, 3))  # no rope_theta any more
    assert hubdiff(tmp_path, hub, "baseline", "update").returncode == 0  # as the watch's --update does
    before = family.read_text()
    endpoint = hub.endpoint
    hub.stop()  # accept reads no Hub: the figures are the file's

    result = hubdiff(tmp_path, endpoint, "baseline", "accept")
    assert result.returncode == 1, result.stderr  # one claim cannot be accepted: its key is gone
    after = family.read_text()
    kv = kv_bytes(64, 3)
    assert kv == 768
    params = 3 * 64 * 64
    assert f"{params / 1000:.0f}K" == "12K"
    assert changed_lines(before, after) == [
        ("      kv_bytes_per_token: 0.26 KB  # the model card, table 2",
         "      kv_bytes_per_token: 0.77 KB  # the model card, table 2"),
        ("      layers: 2", "      layers: 3"),
        ("      total_params: {value: 2K, tolerance: 10%}", "      total_params: {value: 12K, tolerance: 10%}"),
        ("      config.hidden_size: 32", "      config.hidden_size: 64"),
    ]  # fmt: skip
    lines = after.splitlines()

    def line_of(text: str) -> int:
        return next(i for i, line in enumerate(lines, 1) if text in line)

    path = "baselines/fam.yaml"
    assert result.stdout.splitlines() == [
        f"{path}:{line_of('kv_bytes_per_token: 0.77 KB')}: org/a: kv_bytes_per_token: 0.26 KB → 0.77 KB",
        f"{path}:{line_of('layers: 3')}: org/a: layers: 2 → 3",
        f"{path}:{line_of('total_params:')}: org/a: total_params: {{value: 2K, tolerance: 10%}} → "
        "{value: 12K, tolerance: 10%}",
        f"{path}:{line_of('config.hidden_size')}: org/a: config.hidden_size: 32 → 64",
        f"{path}:{line_of('config.rope_theta')}: org/a: config.rope_theta: the file records no value for it; "
        "re-record the repo (hubdiff baseline update) or remove the claim",
    ]
    again = hubdiff(tmp_path, endpoint, "baseline", "accept")
    assert family.read_text() == after  # nothing more to accept: not a byte written
    assert again.returncode == 1 and "config.rope_theta" in again.stdout


def test_update_accept_claims_re_records_and_accepts_in_one_command(hub, tmp_path, family):
    hub.push("org/b", commit(32, 4))
    before = family.read_text()
    check = hubdiff(tmp_path, hub, "check", "--format", "json")
    assert check.returncode == 1
    (b,) = [r for r in json.loads(check.stdout)["results"] if r["title"] == "org/b@main"]
    assert b["changed"] and [c["accepted"] for c in b["claims"]] == [str(kv_bytes(32, 4))]

    result = hubdiff(tmp_path, hub, "baseline", "update", "--repo", "org/b", "--accept-claims")
    assert result.returncode == 0, result.stderr
    after = family.read_text()
    assert (
        "      kv_bytes_per_token: 512\n" in after and "      kv_bytes_per_token: 0.26 KB" in after
    )  # org/a kept
    assert result.stdout.splitlines()[-1].endswith("org/b: kv_bytes_per_token: 256 → 512")
    assert before.split("  org/b:")[0] == after.split("  org/b:")[0]  # org/a's entry untouched
    assert hubdiff(tmp_path, hub, "check").returncode == 0


def test_accept_on_claims_that_hold_writes_nothing(tmp_path, hub, family):
    before = family.read_bytes()
    result = hubdiff(tmp_path, hub, "baseline", "accept", "--repo", "org/a")
    assert result.returncode == 0 and family.read_bytes() == before
    assert (
        result.stdout == "baselines/fam.yaml: every claim holds on the recorded figures; nothing to accept\n"
    )
    unknown = hubdiff(tmp_path, hub, "baseline", "accept", "--repo", "org/zz")
    assert unknown.returncode == 2 and unknown.stderr == "hubdiff: no baseline tracks org/zz\n"


def test_a_watch_pull_request_names_the_lines_of_the_file_it_proposes(hub, tmp_path, family):
    """Both repos move; org/a's re-record adds config lines above org/b's claims. The body written
    before the update would name org/b's old line; it must name the line in the proposed file."""
    hub.push("org/a", commit(32, 2, rope_theta=10000, id2label={str(i): f"LABEL_{i}" for i in range(50)}))
    hub.push("org/b", commit(48, 2))
    output = tmp_path / "github_output"
    env_file = {"GITHUB_OUTPUT": str(output)}
    env = {**os.environ, "HF_ENDPOINT": hub.endpoint, "HUBDIFF_CACHE": str(tmp_path / "cache"), **env_file}
    old_line = claim_line(family.read_text(), "org/b", "kv_bytes_per_token")
    watch = subprocess.run([sys.executable, "-m", "hubdiff", "watch", "--update"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=120)  # fmt: skip
    assert watch.returncode == 1, watch.stderr  # org/b's claim no longer holds
    new_line = claim_line(family.read_text(), "org/b", "kv_bytes_per_token")
    assert new_line > old_line + 1  # org/a's re-record moved it (its new config key takes lines)
    body = (tmp_path / "reports" / "fam.pr.md").read_text()
    measured = kv_bytes(48, 2)
    row = (
        f"| `kv_bytes_per_token` | `baselines/fam.yaml:{new_line}` | `256` → {measured:,} | `{measured}` | "
        "255.5 ≤ x ≤ 256.5"
    )
    assert row in body
    assert (
        "accept the measured figures on this pull request's branch with `hubdiff baseline accept baselines/fam.yaml`"
        in body
    )
    assert "- **It is a regression**: do not merge; close this pull request." in body
    annotation = re.search(
        r"::error file=baselines/fam\.yaml,line=(\d+),title=hubdiff broken claims::org/b", watch.stdout
    )
    assert annotation and int(annotation[1]) == next(
        i for i, t in enumerate(family.read_text().splitlines(), 1) if t == "  org/b:"
    )
