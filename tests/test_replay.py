"""A warm ``hubdiff metrics`` replays what the run before it printed (``cli/_replay.py``): the same output
byte for byte, after the one request that says the revision has not moved, and never where anything
the output depends on differs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hubdiff import _say
from hubdiff._source import cache_paths
from hubdiff.cli import _metrics_report, build_parser, main
from hubdiff.cli._outputs import Outputs
from hubdiff.cli._replay import Replay
from hubdiff.testing import CommitSpec, Fault, RepoSpec

from .conftest import DATA
from .test_hub_source import NOT_WARM

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
    assert json.loads(entry.read_text())["stdout"] == printed


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
    assert Replay.of_run("metrics", _args(*common, "--offline")) is None


def test_a_folder_is_read_never_replayed(tmp_path, capsys):
    cache = tmp_path / "cache"
    folder = str(DATA / "Llama-3.1-8B")
    printed = []
    for _ in range(2):
        assert main(["metrics", folder, "--config-only", "--cache-dir", str(cache)]) == 0
        printed.append(capsys.readouterr().out)
    assert printed[0] == printed[1] and "parameters" in printed[0]
    assert not [p for p in cache.rglob("*") if p.name == "replay"]


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


SHA = "a" * 40
GOOD = {"format": 2, "key": "KEY", "reads": [[REPO, SHA, SHA]], "stdout": "x", "files": {}, "exit": 0}


@pytest.mark.parametrize(
    "entry",
    [
        b"not json",
        b"[]",
        json.dumps({**GOOD, "key": "another"}).encode(),
        json.dumps({**GOOD, "format": 1}).encode(),
        json.dumps({**GOOD, "reads": [[REPO, SHA, "not a sha"]]}).encode(),
        json.dumps({**GOOD, "reads": [["../../etc", SHA, SHA]]}).encode(),
        json.dumps({**GOOD, "reads": []}).encode(),
        json.dumps({**GOOD, "stdout": 7}).encode(),
        json.dumps({**GOOD, "files": {"/etc/passwd": "x"}}).encode(),  # a form, never a path
        json.dumps({**GOOD, "files": {"report": 7}}).encode(),
        json.dumps({**GOOD, "exit": 3}).encode(),  # a run that could not read is never replayed
        b" " * (65 << 20),
    ],
)
def test_a_damaged_or_planted_entry_is_a_miss(tmp_path, entry):
    replay = Replay.of_run("metrics", _args(f"{REPO}@{SHA}", "--cache-dir", str(tmp_path)))
    assert replay is not None
    replay.path.parent.mkdir(parents=True)
    replay.path.write_bytes(entry.replace(b"KEY", replay.key.encode()))
    assert replay.replayed() is None
    replay.path.write_text(json.dumps(GOOD).replace("KEY", replay.key))  # the entry all others spoil
    assert replay.replayed() == Outputs("x")


def test_a_planted_entry_is_printed_only_as_printable_text(hub, tmp_path, capsys):
    """An entry is disk input: terminal control sequences in it are shown, never sent to the terminal."""
    sha = "a" * 40
    words = ["metrics", f"{REPO}@{sha}", "--endpoint", hub.endpoint, "--cache-dir", str(tmp_path)]
    replay = Replay.of_run("metrics", _args(*words[1:]))
    assert replay is not None
    replay.record([(REPO, sha, sha)], Outputs("total \x1b]0;owned\x07 7B\n"))
    assert main(words) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "total" in out and "7B" in out
    assert hub.log == []  # a commit does not move: nothing asked


# -- check --------------------------------------------------------------------------------------------
def _family(hub, tmp_path: Path, *repos: str) -> dict[str, str]:
    """``repos`` on the replica, recorded in baselines/fam.yaml under ``tmp_path``; the environment of a
    run there."""
    env = {"HF_ENDPOINT": hub.endpoint, "HUBDIFF_CACHE": str(tmp_path / "cache")}
    for repo in repos:
        hub.add(RepoSpec(repo, [_commit("one")]))
        init = subprocess.run(
            [sys.executable, "-m", "hubdiff", "baseline", "init", repo, "--family", "fam"],
            cwd=tmp_path,
            env={**os.environ, **env},
            capture_output=True,
            text=True,
        )
        assert init.returncode == 0, init.stderr
    return env


def _check(tmp_path: Path, env: dict[str, str], *words: str) -> subprocess.CompletedProcess[str]:
    forms = ["--output", "r.md", "--comment", "c.md", "--summary", "s.md", "--marker", "replayed"]
    environment = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "GITHUB_RUN_ID")}
    return subprocess.run(
        [sys.executable, "-m", "hubdiff", "check", *forms, *words],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**environment, **env},
    )


def _written(tmp_path: Path) -> dict[str, str]:
    """The report, comment and summary a run wrote, taken away so the next run must write them again."""
    out = {name: (tmp_path / name).read_text() for name in ("r.md", "c.md", "s.md")}
    for name in out:
        (tmp_path / name).unlink()
    return out


def _only_replays(tmp_path: Path, env: dict[str, str], endpoint: str) -> dict[str, str]:
    """The environment of a run whose cache holds the recorded outputs and nothing else (no snapshot,
    no metrics): a run that computed would have to read the repos' files again."""
    replays = cache_paths.hub_folder(Path(env["HUBDIFF_CACHE"]), endpoint) / "replay"
    bare = tmp_path / f"bare-{len(list(tmp_path.glob('bare-*')))}"
    shutil.copytree(replays, cache_paths.hub_folder(bare, endpoint) / "replay")
    return {**env, "HUBDIFF_CACHE": str(bare)}


def test_a_warm_check_writes_what_the_run_before_it_did_asking_only_where_revisions_point(hub, tmp_path):
    env = _family(hub, tmp_path, "org/a", "org/b", "other/c")
    first = _check(tmp_path, env)
    assert first.returncode == 0, first.stderr
    computed = _written(tmp_path)
    assert "org/b" in computed["r.md"] and "<!-- hubdiff:replayed -->" in computed["c.md"]
    hub.clear()
    second = _check(tmp_path, _only_replays(tmp_path, env, hub.endpoint))
    assert (second.returncode, second.stdout, second.stderr) == (0, first.stdout, first.stderr)
    assert "hubdiff: wrote report r.md, comment c.md, summary s.md" in second.stderr
    assert _written(tmp_path) == computed
    # org's two repos by its listing, other/c by itself, and no file read
    asked = sorted(e.path for e in hub.log)
    assert asked == ["/api/models/other/c/revision/main?expand=sha", "/api/models?author=org&expand=sha"]
    shutil.rmtree(cache_paths.hub_folder(tmp_path / "cache", hub.endpoint) / "replay")
    hub.clear()
    assert _check(tmp_path, env).returncode == 0  # computed from the snapshot cache: as many requests
    assert _written(tmp_path) == computed
    assert sorted(e.path for e in hub.log) == asked


def test_a_check_whose_repo_moved_is_computed_again_asking_the_hub_once(hub, tmp_path):
    env = _family(hub, tmp_path, "org/a", "org/b")
    assert _check(tmp_path, env).returncode == 0
    before = _written(tmp_path)
    moved = json.loads(CONFIG)
    moved["rope_theta"] = 8_000_000.0
    hub.push("org/b", _commit("two", json.dumps(moved).encode()))
    hub.clear()
    second = _check(tmp_path, env)
    assert second.returncode == 1, second.stderr  # a config change: not what the baseline recorded
    after = _written(tmp_path)
    assert after != before and "rope_theta" in after["r.md"]
    assert [e.path for e in hub.log].count("/api/models?author=org&expand=sha") == 1
    hub.clear()
    third = _check(tmp_path, _only_replays(tmp_path, env, hub.endpoint))  # replayed, with its exit code
    assert (third.returncode, third.stderr) == (1, second.stderr)
    assert _written(tmp_path) == after
    assert [e.path for e in hub.log] == ["/api/models?author=org&expand=sha"]


def test_what_a_check_report_depends_on_besides_commits_is_a_new_key(hub, tmp_path):
    """Edited baselines, another workflow run (its link in the comment), other templates: computed."""
    env = _family(hub, tmp_path, "org/a")
    assert _check(tmp_path, env).returncode == 0
    computed = _written(tmp_path)
    replays = cache_paths.hub_folder(tmp_path / "cache", hub.endpoint) / "replay"
    baseline = tmp_path / "baselines" / "fam.yaml"
    baseline.write_text(baseline.read_text() + "# a comment changes no figure, but the bytes\n")
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "summary.md.j2").write_text("custom summary\n")
    for extra_env, words in (
        ({}, []),
        (
            {
                "GITHUB_SERVER_URL": "https://git.example.invalid",
                "GITHUB_REPOSITORY": "o/r",
                "GITHUB_RUN_ID": "7",
            },
            [],
        ),
        ({}, ["--templates", str(templates)]),
    ):
        entries = len(list(replays.iterdir()))
        run = _check(tmp_path, {**env, **extra_env}, *words)
        assert run.returncode == 0, run.stderr
        assert len(list(replays.iterdir())) == entries + 1  # computed, and recorded under its own key
    assert _written(tmp_path)["s.md"] == "custom summary\n" != computed["s.md"]


def test_a_check_that_could_not_read_a_repo_is_never_replayed(hub, tmp_path):
    env = _family(hub, tmp_path, "org/a")
    hub.add_fault(Fault(path_contains="/api/models/org/a/revision/main", status=404))
    for _ in range(2):
        run = _check(tmp_path, env, "--retries", "0")
        assert run.returncode == 3, run.stderr
    assert not (cache_paths.hub_folder(tmp_path / "cache", hub.endpoint) / "replay").exists()


# What a replayed check never loads, beyond what no warm run does: reading baselines, the stages that
# check and compare, and rendering (each tens of ms)
NOT_REPLAYED_CHECK = (*NOT_WARM, "yaml", "jinja2", "hubdiff.jobs", "hubdiff._baseline", "hubdiff._compare")


def test_a_replayed_check_imports_no_stage(hub, tmp_path):
    env = _family(hub, tmp_path, "org/a", "org/b")
    assert _check(tmp_path, env).returncode == 0
    computed = _written(tmp_path)
    code = (
        "import sys; from hubdiff.cli import main; code = main(sys.argv[1:]); "
        f"print(code, *[m for m in {NOT_REPLAYED_CHECK!r} if m in sys.modules], file=sys.stderr)"
    )
    forms = ["--output", "r.md", "--comment", "c.md", "--summary", "s.md", "--marker", "replayed"]
    warm = subprocess.run(
        [sys.executable, "-c", code, "check", *forms],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, **env},
    )
    assert warm.stderr.splitlines()[-1] == "0", warm.stderr
    assert _written(tmp_path) == computed
