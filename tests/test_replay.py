"""A warm ``hubdiff metrics`` replays what the run before it printed (``cli/_replay.py``): the same output
byte for byte, after the one request that says the revision has not moved, and never where anything
the output depends on differs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hubdiff import _say
from hubdiff._source import cache_paths
from hubdiff.cli import _metrics_report, build_parser, main
from hubdiff.cli._replay import Replay
from hubdiff.testing import CommitSpec, RepoSpec

from .conftest import DATA

REPO = "org/replayed"
CONFIG = (DATA / "Llama-3.1-8B" / "config.json").read_bytes()
REVISION_LOOKUP = ("GET", f"/api/models/{REPO}/revision/main?expand=sha")


def _commit(title: str, config: bytes = CONFIG) -> CommitSpec:
    return CommitSpec(
        {"config.json": config}, [("model.embed_tokens.weight", "BF16", [128256, 4096])], 1, title=title
    )


def _hubdiff(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    return subprocess.run(
        [sys.executable, "-m", "hubdiff", *args],
        capture_output=True,
        text=True,
        env={**environment, **(env or {})},
    )


def _args(*words: str) -> object:
    words_list = ["metrics", *words]
    return build_parser("metrics").parse_args(words_list)


def test_a_moved_revision_is_computed_again_and_the_hub_asked_once(hub, tmp_path):
    hub.add(RepoSpec(REPO, [_commit("one")]))
    run = ["metrics", REPO, "--json", "--endpoint", hub.endpoint, "--cache-dir", str(tmp_path / "cache")]
    first = _hubdiff(*run)
    assert first.returncode == 0, first.stderr
    moved = json.loads(CONFIG)
    moved["num_hidden_layers"] = 16
    hub.push(REPO, _commit("two", json.dumps(moved).encode()))
    hub.clear()
    second = _hubdiff(*run)
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["layers"] != json.loads(first.stdout)["layers"]
    assert [(e.method, e.path) for e in hub.log].count(REVISION_LOOKUP) == 1  # the replay's, not asked again
    fresh = _hubdiff(*run[:-1], str(tmp_path / "fresh"))
    assert second.stdout == fresh.stdout
    hub.clear()
    third = _hubdiff(*run)  # the new commit's output, replayed
    assert (third.returncode, third.stdout, third.stderr) == (0, second.stdout, "")
    assert [(e.method, e.path) for e in hub.log] == [REVISION_LOOKUP]


def test_a_run_that_said_something_on_stderr_is_not_recorded(hub, tmp_path, capsys, monkeypatch):
    """A replay prints stdout only: a run with a notice is computed again next time, notice and all."""
    hub.add(RepoSpec(REPO, [_commit("one")]))
    cache = tmp_path / "cache"
    words = ["metrics", REPO, "--endpoint", hub.endpoint, "--cache-dir", str(cache)]
    real = _metrics_report.cached_metrics

    def with_a_notice(*args, **kwargs):
        _say.notice("hubdiff: something worth saying")
        return real(*args, **kwargs)

    monkeypatch.setattr(_metrics_report, "cached_metrics", with_a_notice)
    assert main(words) == 0
    assert "worth saying" in capsys.readouterr().err
    replays = cache_paths.hub_folder(cache, hub.endpoint) / "replay"
    assert not replays.exists()
    monkeypatch.setattr(_metrics_report, "cached_metrics", real)
    assert main(words) == 0
    printed, said = capsys.readouterr()
    assert said == ""
    (entry,) = replays.iterdir()
    assert json.loads(entry.read_text())["text"] == printed


def test_what_the_output_depends_on_is_in_the_key_and_nothing_else(tmp_path, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    common = ["org/m", "--cache-dir", str(tmp_path)]

    def key(*words: str) -> str:
        replay = Replay.of_run("metrics", _args(*common, *words))
        assert replay is not None
        return replay.key

    plain = key()
    for same in (["--token", "hf_x"], ["--timeout", "3"], ["--retries", "0"], ["-q"], ["-v"]):
        assert key(*same) == plain, same
    for other in (["--json"], ["--kv-dtype", "fp8"], ["--context", "4096"], ["--config-only"], ["--tp", "8"]):
        assert key(*other) != plain, other
    assert (
        Replay.of_run("metrics", _args("org/m", "--revision", "v2", "--cache-dir", str(tmp_path))).key
        != plain
    )
    monkeypatch.setenv("COLUMNS", "100")  # the width text is wrapped to
    assert key() != plain
    assert Replay.of_run("metrics", _args(str(tmp_path))) is None  # a folder is read, never replayed
    assert Replay.of_run("metrics", _args(*common, "--offline")) is None


def test_another_endpoint_has_its_own_replays(tmp_path):
    hub_a = Replay.of_run(
        "metrics", _args("org/m", "--cache-dir", str(tmp_path), "--endpoint", "http://a.test")
    )
    hub_b = Replay.of_run(
        "metrics", _args("org/m", "--cache-dir", str(tmp_path), "--endpoint", "http://b.test")
    )
    assert hub_a is not None and hub_b is not None
    assert hub_a.key == hub_b.key and hub_a.path != hub_b.path


def test_changed_code_is_another_key(monkeypatch):
    """An editable install changes its code and keeps its release: each module's size and time count."""
    before = cache_paths.code_versions.__wrapped__()
    module = Path(cache_paths.__file__)
    stat = module.stat()
    try:
        os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        assert cache_paths.code_versions.__wrapped__() != before
    finally:
        os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert cache_paths.code_versions.__wrapped__() == before


@pytest.mark.parametrize(
    "entry",
    [
        b"not json",
        b"[]",
        b'{"format": 1, "key": "another", "sha": "' + b"a" * 40 + b'", "text": "x"}',
        b'{"format": 2, "key": "KEY", "sha": "' + b"a" * 40 + b'", "text": "x"}',
        b'{"format": 1, "key": "KEY", "sha": "not a sha", "text": "x"}',
        b'{"format": 1, "key": "KEY", "sha": "' + b"a" * 40 + b'", "text": 7}',
        b" " * (17 << 20),
    ],
)
def test_a_damaged_or_planted_entry_is_a_miss(tmp_path, entry):
    replay = Replay.of_run("metrics", _args("org/m@" + "a" * 40, "--cache-dir", str(tmp_path)))
    assert replay is not None
    replay.path.parent.mkdir(parents=True)
    replay.path.write_bytes(entry.replace(b"KEY", replay.key.encode()))
    assert replay.replayed() is None


def test_a_planted_entry_is_printed_only_as_printable_text(hub, tmp_path, capsys):
    """An entry is disk input: terminal control sequences in it are shown, never sent to the terminal."""
    sha = "a" * 40
    words = ["metrics", f"{REPO}@{sha}", "--endpoint", hub.endpoint, "--cache-dir", str(tmp_path)]
    replay = Replay.of_run("metrics", _args(*words[1:]))
    assert replay is not None
    replay.record(sha, "total \x1b]0;owned\x07 7B\n")
    assert main(words) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "total" in out and "7B" in out
    assert hub.log == []  # a commit does not move: nothing asked
