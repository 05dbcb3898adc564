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
    hub.redirects = False  # the statuses of the file route itself (the redirects: test_dialect.py)
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


def _deep(n: int) -> str:
    return "[" * n + "]" * n


def _header_with(entries: str) -> bytes:
    return raw_shard(entries.encode(), 0)


# Inputs that once ended in a traceback and exit 1. (files, exit code, what the line says)
CLASS_CASES = {
    "config nested 1,000 deep": (
        {"config.json": f'{{"a": {_deep(1000)}}}'.encode()},
        3,
        "config.json: nested",
    ),
    "config nested 40 deep": ({"config.json": f'{{"a": {_deep(40)}}}'.encode()}, 3, "nested more than 32"),
    "header nested 1,000 deep": (
        {"model.safetensors": _header_with(f'{{"a": {{"x": {_deep(1000)}}}}}')},
        3,
        "model.safetensors: header is nested too deeply",
    ),
    "header of {}": ({"model.safetensors": _header_with("{}")}, 0, ""),
    "header of only __metadata__": (
        {"model.safetensors": _header_with('{"__metadata__": {"a": "b"}}')},
        0,
        "",
    ),
    "lone surrogate in a tensor name": (
        {
            "model.safetensors": _header_with(
                '{"\\ud800": {"dtype": "U8", "shape": [0], "data_offsets": [0, 0]}}'
            )
        },
        3,
        "lone UTF-16 surrogate",
    ),
    "lone surrogate in a dtype": (
        {
            "model.safetensors": _header_with(
                '{"a": {"dtype": "\\udfff", "shape": [0], "data_offsets": [0, 0]}}'
            )
        },
        3,
        "lone UTF-16 surrogate",
    ),
    "num_hidden_layers 1e9": (
        {"config.json": b'{"num_hidden_layers": 1000000000}'},
        3,
        "config.json: num_hidden_layers is 1,000,000,000: out of range (0 to 1,024)",
    ),
    "a huge MTP count": (
        {"config.json": b'{"text_config": {"num_nextn_predict_layers": 10000000}}'},
        3,
        "text_config.num_nextn_predict_layers is 10,000,000: out of range",
    ),
    "2**70": ({"config.json": f'{{"hidden_size": {2**70}}}'.encode()}, 3, "does not fit in 64 bits"),
    "layers x experts": (
        {"config.json": b'{"num_hidden_layers": 1000, "n_routed_experts": 60000}'},
        3,
        "1,000 layers x 60,000 experts is over the 1,048,576 hubdiff reads",
    ),
    "non-dict config_groups": (
        {"config.json": b'{"quantization_config": {"config_groups": {"g": 5}}}'},
        3,
        "quantization_config.config_groups.g is a whole number, not an object",
    ),
    "integer mlp_only_layers": (
        {"config.json": b'{"mlp_only_layers": 3}'},
        3,
        "mlp_only_layers is a whole number",
    ),
    "string compress_ratios": (
        {"config.json": b'{"compress_ratios": "4"}'},
        3,
        "compress_ratios is a string",
    ),
    "NaN in a config": ({"config.json": b'{"rope_theta": NaN}'}, 3, "NaN is not a JSON number"),
    "BOM before a config": ({"config.json": b'\xef\xbb\xbf{"a": 1}'}, 3, "byte-order mark"),
    "UTF-16 header": ({"model.safetensors": raw_shard("{}".encode("utf-16"))}, 3, "not UTF-8"),
    "bf16 as a dtype": (
        {
            "model.safetensors": raw_shard(
                b'{"a": {"dtype": "bf16", "shape": [1], "data_offsets": [0, 2]}}', 2
            )
        },
        3,
        "invalid dtype 'bf16'",
    ),
    "gap in data_offsets": (
        {"model.safetensors": raw_shard(b'{"a": {"dtype": "U8", "shape": [1], "data_offsets": [1, 2]}}', 2)},
        3,
        "data_offsets leave a gap of 1 bytes before the first tensor",
    ),
    "bytes after the data": (
        {"model.safetensors": raw_shard(b'{"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}}', 3)},
        3,
        "2 bytes after the last tensor's data",
    ),
    "non-string __metadata__ value": (
        {"model.safetensors": _header_with('{"__metadata__": {"a": 1}}')},
        3,
        "__metadata__ value of 'a' is not a string",
    ),
}


@pytest.mark.parametrize("case", CLASS_CASES)
@pytest.mark.parametrize("command", ["snapshot", "metrics"])
def test_the_class_of_unexpected_input_ends_in_one_line(hub, tmp_path, capsys, case, command):
    files, expected_code, problem = CLASS_CASES[case]
    files = {"config.json": b'{"hidden_size": 8}', **files}
    hub.add(RepoSpec("org/x", [CommitSpec(files)]))
    code = main(
        [command, "org/x", "--endpoint", hub.endpoint, "--cache-dir", str(tmp_path / "c"), "--retries", "0"]
    )
    out, err = capsys.readouterr()
    assert code == expected_code, err
    if expected_code == 3:
        assert out == "" and err.count("\n") == 1 and problem in err, err
        assert err.startswith(f"hubdiff: org/x@{hub.repos['org/x'].branches['main']} "), err
    else:
        assert err == "" and (command != "snapshot" or "tensors: 0 in 0 patterns" in out)


def test_an_unexpected_error_is_one_line_naming_what_was_read(tmp_path, capsys, monkeypatch):
    """Whatever escapes every check (here a planted bug in the metrics) is exit 3 and one line, never 1."""
    from hubdiff._metrics import compute

    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "config.json").write_text('{"hidden_size": 8}')

    def broken(*args, **kwargs):
        raise RecursionError

    monkeypatch.setattr(compute, "compute_metrics", broken)  # cached_metrics calls it when not cached
    code = main(["diff", str(folder), str(folder)])
    out, err = capsys.readouterr()
    assert code == 3 and out == ""
    assert err == (
        f"hubdiff: {folder} config.json: internal error: RecursionError "
        "(a hubdiff bug: please report it with this line)\n"
    )


def test_watch_update_goes_on_past_a_poisoned_repo(hub, tmp_path):
    """One repo's new revision is hostile: the others are still reported and re-recorded."""
    import yaml

    from hubdiff.watch import run_watch

    from .test_watch import commit, record, small, sources_for

    hub.add(small("org/good"))
    hub.add(small("org/bad"))
    sources = sources_for(hub, tmp_path)
    path = tmp_path / "fam.yaml"
    record(path, "fam", ["org/good", "org/bad"], sources)
    good_sha = hub.push("org/good", commit(64))
    poisoned = CommitSpec({"config.json": f'{{"a": {_deep(1000)}}}'.encode()}, GOOD, title="poison")
    bad_sha = hub.push("org/bad", poisoned)
    outcome = run_watch([path], sources, update=True, output_dir=tmp_path / "r")
    assert outcome.exit_code == 3 and outcome.updated == {"fam": ["org/good"]}
    (failed,) = outcome.failed
    assert failed.error == f"org/bad@{bad_sha} config.json: nested too deeply to read"
    after = yaml.safe_load(path.read_text())
    assert after["repos"]["org/good"]["sha"] == good_sha
    assert after["repos"]["org/bad"]["sha"] != bad_sha
    assert "could not be read" in (tmp_path / "r" / "fam.md").read_text()


def test_every_real_config_passes_the_boundary():
    """The boundary refuses hostile configs, not released ones (Infinity in Nemotron-H, per-layer top-k)."""
    from hubdiff._source.config_bounds import check_config
    from hubdiff._source.layout import parse_json_object

    from .conftest import DATA

    configs = sorted(DATA.rglob("config.json"))
    assert len(configs) > 50
    for path in configs:
        check_config(
            parse_json_object(path.read_bytes(), "config.json", 10_000_000, infinity=True), str(path)
        )
