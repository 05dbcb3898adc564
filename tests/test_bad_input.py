"""Hostile or broken Hub input: one clear line naming repo, revision and file; exit 3; cache untouched."""

import json
import struct
import time

import pytest

from hubdiff.cli import main
from hubdiff.errors import SourceError
from hubdiff.testing import CommitSpec, Fault, RepoSpec

GOOD = [(f"layers.{i}.w", "F32", (2, 2)) for i in range(4)]


def run_cli(hub, tmp_path, capsys, target, *extra):
    code = main(
        [
            "snapshot",
            target,
            "--endpoint",
            hub.endpoint,
            "--cache-dir",
            str(tmp_path / "cache"),
            "--retries",
            "0",
            "--timeout",
            "1",
            *extra,
        ]
    )
    out, err = capsys.readouterr()
    return code, out, err


def raw_shard(header: bytes, data: int = 0, length: int | None = None) -> bytes:
    return struct.pack("<Q", len(header) if length is None else length) + header + b"\0" * data


CASES = {
    "missing repo": ("org/none", None, "org/none@main: repository not found"),
    "missing revision": ("org/x@v9", {"config.json": b"{}"}, "org/x@v9: revision not found"),
    "missing config": ("org/x", {}, "config.json: not found"),
    "config not JSON": ("org/x", {"config.json": b"{oops"}, "config.json: not JSON"),
    "config not an object": ("org/x", {"config.json": b'"str"'}, "config.json: JSON but not an object (str)"),
    "config of 50 MB": (
        "org/x",
        {"config.json": b"{" + b" " * 50_000_000 + b"}"},
        "over the 10,000,000-byte limit",
    ),
    "header over 100 MB": (
        "org/x",
        {"model.safetensors": raw_shard(b"{}", length=150_000_000)},
        "model.safetensors: header claims 150,000,000 bytes (limit 100,000,000)",
    ),
    "header not JSON": (
        "org/x",
        {"model.safetensors": raw_shard(b"{{{{")},
        "model.safetensors: header is not JSON",
    ),
    "header not an object": (
        "org/x",
        {"model.safetensors": raw_shard(b"[1]   ")},
        "model.safetensors: header is JSON but not an object (list)",
    ),
    "overlapping offsets": (
        "org/x",
        {
            "model.safetensors": raw_shard(
                json.dumps(
                    {
                        "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                        "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]},
                    }
                ).encode(),
                12,
            )
        },
        "model.safetensors: tensors 'a' and 'b' overlap",
    ),
    "offsets past the file": (
        "org/x",
        {
            "model.safetensors": raw_shard(
                json.dumps({"a": {"dtype": "F32", "shape": [8], "data_offsets": [0, 32]}}).encode(), 16
            )
        },
        "run past the end of the file",
    ),
    "shard outside the repo": (
        "org/x",
        {"model.safetensors.index.json": json.dumps({"weight_map": {"a": "../../etc/passwd"}}).encode()},
        "model.safetensors.index.json: weight_map names a shard outside the repo: '../../etc/passwd'",
    ),
    "absolute shard": (
        "org/x",
        {"model.safetensors.index.json": json.dumps({"weight_map": {"a": "/abs.safetensors"}}).encode()},
        "outside the repo: '/abs.safetensors'",
    ),
    "shard not in repo": (
        "org/x",
        {"model.safetensors.index.json": json.dumps({"weight_map": {"a": "model-1.safetensors"}}).encode()},
        "names 'model-1.safetensors', which is not in the repo",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_bad_input_is_one_line_and_exit_3(hub, tmp_path, capsys, case):
    target, files, problem = CASES[case]
    if files is not None:
        files = {"config.json": b"{}", **files} if "config" not in case else files
        tensors = (
            [] if any(f.endswith((".safetensors", ".json")) and f != "config.json" for f in files) else GOOD
        )
        hub.add(RepoSpec("org/x", [CommitSpec(files, tensors)]))
    code, out, err = run_cli(hub, tmp_path, capsys, target)
    assert code == 3
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("hubdiff: org/"), err
    assert problem in err
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.json"))


def test_gated_and_private_repos(hub, tmp_path, capsys):
    hub.add(RepoSpec("org/gated", [CommitSpec({"config.json": b"{}"}, GOOD)], gated=True))
    hub.add(RepoSpec("org/private", [CommitSpec({"config.json": b"{}"}, GOOD)], private=True))
    code, _, err = run_cli(hub, tmp_path, capsys, "org/gated")
    assert code == 3 and "org/gated@" in err and "config.json: gated repo" in err
    code, _, err = run_cli(hub, tmp_path, capsys, "org/private")
    assert (
        code == 3
        and err.strip() == "hubdiff: org/private@main: repository not found (or private: set HF_TOKEN)"
    )


def test_token_from_environment_opens_gated_repo(hub, tmp_path, capsys, monkeypatch):
    hub.add(RepoSpec("org/gated", [CommitSpec({"config.json": b"{}"}, GOOD)], gated=True))
    monkeypatch.setenv("HF_TOKEN", "hf_reader")
    code, out, _ = run_cli(hub, tmp_path, capsys, "org/gated")
    assert code == 0 and "tensors: 4 in 1 patterns" in out


def test_429_and_503_are_retried_honouring_retry_after(hub, reader):
    hub.add(RepoSpec("org/x", [CommitSpec({"config.json": b"{}"}, GOOD)]))
    hub.add_fault(Fault("/api/models/org/x", status=429, retry_after="1", times=1))
    hub.add_fault(Fault("model.safetensors", status=503, times=2))
    start = time.perf_counter()
    snapshot = reader.snapshot("org/x")
    assert time.perf_counter() - start >= 1.0  # waited as Retry-After said
    assert len(snapshot.tensors) == 4
    statuses = [e.status for e in hub.log if "model.safetensors" in e.path]
    assert statuses == [503, 503, 206, 206] or statuses == [503, 503, 206]


def test_persistent_5xx_is_reported_after_bounded_attempts(hub, reader):
    hub.add(RepoSpec("org/x", [CommitSpec({"config.json": b"{}"}, GOOD)]))
    hub.add_fault(Fault("config.json", status=502))
    with pytest.raises(SourceError) as info:
        reader.snapshot("org/x")
    assert info.value.line().endswith(
        "org/x@" + hub.repos["org/x"].branches["main"] + " config.json: HTTP 502 after 3 attempts"
    )
    assert sum(1 for e in hub.log if e.path.endswith("config.json")) == 3


def test_a_stalled_server_times_out(hub, reader):
    hub.add(RepoSpec("org/x", [CommitSpec({"config.json": b"{}"}, GOOD)]))
    hub.add_fault(Fault("/api/models/org/x", delay_s=3.0))
    start = time.perf_counter()
    with pytest.raises(SourceError, match=r"org/x@main: no answer within 2 s after 3 attempts"):
        reader.snapshot("org/x")
    assert time.perf_counter() - start < 9


def test_resets_and_truncated_bodies_are_retried(hub, reader):
    hub.add(RepoSpec("org/x", [CommitSpec({"config.json": b'{"a": 1}'}, GOOD, shards=2)]))
    hub.add_fault(Fault("config.json", reset=True, times=1))
    hub.add_fault(Fault("model.safetensors.index.json", truncate_to=10, times=1))
    snapshot = reader.snapshot("org/x")
    assert snapshot.config == {"a": 1} and len(snapshot.tensors) == 4
