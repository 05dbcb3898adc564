"""What hubdiff reads from and writes to disk: the cache is hostile input and only an optimisation,
locks live where no other user can reach them, and a file that cannot be written is one line, exit 2.

Run end to end through the CLI against the Hub replica: as a child process where the condition is
real (a cache path that is a file, a read-only folder, a planted file, a foreign lock folder), and
through ``cli.main`` in this process where it is simulated (a full disk: every write into a folder
fails with ENOSPC part way through). Read-only folders are made with ``chmod`` as a user and with
``chattr +i`` as root (whom permissions do not stop).
"""

from __future__ import annotations

import errno
import json
import os
import pickle
import re
import select
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import jinja2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hubdiff._files import atomic_write_text, lock_folder, locked
from hubdiff._metrics.results import Metrics
from hubdiff._render.markdown import environment
from hubdiff._source.cache import SnapshotCache, _reader, _to_json
from hubdiff.cli import main
from hubdiff.errors import WriteError
from hubdiff.testing import CommitSpec, HubReplica, RepoSpec

ROOT = Path(__file__).parent.parent
FUZZ: dict[str, Any] = dict(derandomize=True, deadline=None, database=None)
TEMPLATES = ("report.md.j2", "report.txt.j2", "comment.md.j2", "summary.md.j2", "_macros.md.j2")


def _commit(hidden: int, layers: int = 2) -> CommitSpec:
    tensors = [(f"model.layers.{i}.self_attn.q_proj.weight", "BF16", (hidden, hidden)) for i in range(layers)]
    cfg = {"hidden_size": hidden, "num_hidden_layers": layers, "num_attention_heads": 2, "vocab_size": 10}
    return CommitSpec({"config.json": json.dumps(cfg).encode()}, tensors)


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[HubReplica, str]]:
    """org/m with two commits that differ (a diff exits 1), org/n another repo; and the old sha."""
    with HubReplica() as hub:
        old, _ = hub.add(RepoSpec("org/m", [_commit(16), _commit(32)]))
        hub.add(RepoSpec("org/n", [_commit(8, layers=3)]))
        yield hub, old


def hubdiff(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "hubdiff", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        timeout=300,
    )


def diff_args(served: tuple[HubReplica, str], cache: Path) -> list[str]:
    hub, old = served
    return ["diff", f"org/m@{old}", "org/m@main", "--endpoint", hub.endpoint, "--cache-dir", str(cache)]


@pytest.fixture(scope="module")
def reference(served: tuple[HubReplica, str], tmp_path_factory: pytest.TempPathFactory) -> str:
    """The diff's markdown report from a fresh cache: what every degraded run must print too."""
    result = hubdiff(*diff_args(served, tmp_path_factory.mktemp("fresh") / "cache"))
    assert result.returncode == 1, result.stderr
    assert "# hubdiff diff" in result.stdout and result.stderr == ""
    return result.stdout


def in_process(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def only_whole_entries(cache: Path) -> None:
    """No temporary file left, and every entry plain JSON."""
    assert not [p for p in cache.rglob("*.tmp")]
    for path in cache.rglob("*"):
        if path.is_file():
            json.loads(path.read_bytes())


@contextmanager
def read_only(*folders: Path) -> Iterator[None]:
    """Folders no write can go into, for root too."""
    root = os.geteuid() == 0
    for folder in folders:
        if root:
            if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(folder)]).returncode:
                pytest.skip("root here, and chattr +i is not available to make a folder read-only")
        else:
            folder.chmod(0o555)
    try:
        yield
    finally:
        for folder in folders:
            if root:
                subprocess.run(["chattr", "-i", str(folder)], check=True)
            else:
                folder.chmod(0o755)


@contextmanager
def full_disk(monkeypatch: pytest.MonkeyPatch, under: Path) -> Iterator[None]:
    """Every file written below ``under`` fails part way with ENOSPC, as on a full disk."""
    real_mkstemp, real_fdopen = tempfile.mkstemp, os.fdopen
    doomed: set[int] = set()

    def mkstemp(*args: Any, **kwargs: Any) -> tuple[int, str]:
        fd, name = real_mkstemp(*args, **kwargs)
        if Path(name).resolve().is_relative_to(under.resolve()):
            doomed.add(fd)
        return fd, name

    class NoSpace:
        def __init__(self, fh: Any) -> None:
            self.fh = fh

        def __enter__(self) -> NoSpace:
            return self

        def __exit__(self, *exc: object) -> None:
            self.fh.close()

        def write(self, data: bytes) -> int:
            self.fh.write(data[: len(data) // 2])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def fdopen(fd: int, *args: Any, **kwargs: Any) -> Any:
        fh = real_fdopen(fd, *args, **kwargs)
        if fd in doomed:
            doomed.discard(fd)
            return NoSpace(fh)
        return fh

    with monkeypatch.context() as patch:
        patch.setattr(tempfile, "mkstemp", mkstemp)
        patch.setattr(os, "fdopen", fdopen)
        yield


def one_cache_warning(stderr: str, cache: Path) -> None:
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"hubdiff: cache {cache} not used: "), stderr


# -- nothing in the cache is ever run ----------------------------------------------------------------


def test_a_planted_jinja_bytecode_cache_is_never_run(served, reference, tmp_path):
    """Files where jinja2's FileSystemBytecodeCache kept the compiled templates (the cache's
    ``templates`` folder), each holding code that would make a marker file: the report comes out as
    always and the marker is never made."""
    cache, marker = tmp_path / "cache", tmp_path / "ran"
    planted = jinja2.FileSystemBytecodeCache(str(cache / "templates"))
    (cache / "templates").mkdir(parents=True)
    env = environment.__wrapped__()  # the same loaders, so the same bucket names
    for name in TEMPLATES:
        source, filename, _ = env.loader.get_source(env, name)
        bucket = planted.get_bucket(env, name, filename, source)
        bucket.code = compile(f"open({str(marker)!r}, 'w').close()", filename, "exec")
        planted.set_bucket(bucket)
    assert len(list((cache / "templates").iterdir())) == len(TEMPLATES)
    for form in ([], ["--comment", str(tmp_path / "c.md"), "--summary", str(tmp_path / "s.md")]):
        # where jinja2's cache was: under $HUBDIFF_CACHE whatever --cache-dir said
        result = hubdiff(*diff_args(served, cache), *form, env={"HUBDIFF_CACHE": str(cache)})
        wrote = f"hubdiff: wrote comment {tmp_path / 'c.md'}, summary {tmp_path / 's.md'}\n" if form else ""
        assert (result.returncode, result.stdout, result.stderr) == (1, reference, wrote)
        assert not marker.exists()


def test_a_planted_metrics_pickle_is_never_run(served, reference, tmp_path):
    """A pickle that runs a command, under the metrics entry's name and the name the unpickled cache
    used: never loaded; the metrics are computed again and stored as plain JSON."""
    cache, marker = tmp_path / "cache", tmp_path / "ran"
    assert hubdiff(*diff_args(served, cache)).returncode == 1
    entries = sorted((SnapshotCache(cache, served[0].endpoint).base / "metrics").rglob("*.json"))
    assert len(entries) == 2  # one per side

    class Payload:
        def __reduce__(self) -> tuple[Any, ...]:
            return os.system, (f"touch {marker}",)

    evil = pickle.dumps(Payload())
    for entry in entries:
        entry.write_bytes(evil)
        entry.with_suffix(".pickle").write_bytes(evil)
    result = hubdiff(*diff_args(served, cache))
    assert (result.returncode, result.stdout, result.stderr) == (1, reference, "")
    assert not marker.exists()
    for entry in entries:
        assert json.loads(entry.read_text())["key"] == entry.stem  # recomputed and rewritten


def test_a_metrics_entry_for_other_content_is_recomputed(served, tmp_path):
    """org/n's entry copied under org/m's key: it carries its own key, so it is not taken for org/m's."""
    hub, _ = served
    cache = tmp_path / "cache"
    common = ["--json", "--endpoint", hub.endpoint, "--cache-dir", str(cache)]
    clean = {repo: hubdiff("metrics", repo, *common) for repo in ("org/m", "org/n")}
    assert all(r.returncode == 0 for r in clean.values())
    assert clean["org/m"].stdout != clean["org/n"].stdout
    by_source = {
        json.loads(p.read_text())["metrics"]["source"]: p
        for p in (SnapshotCache(cache, hub.endpoint).base / "metrics").rglob("*.json")
    }
    (m_entry,) = (p for source, p in by_source.items() if source.startswith("org/m@"))
    (n_entry,) = (p for source, p in by_source.items() if source.startswith("org/n@"))
    shutil.copyfile(n_entry, m_entry)
    shutil.rmtree(SnapshotCache(cache, hub.endpoint).base / "replay")  # the metrics entry is under test
    again = hubdiff("metrics", "org/m", *common)
    assert (again.returncode, again.stdout, again.stderr) == (0, clean["org/m"].stdout, "")
    assert json.loads(m_entry.read_text())["key"] == m_entry.stem


def _json_values() -> st.SearchStrategy[Any]:
    scalars = (
        st.none()
        | st.booleans()
        | st.integers(-(2**63), 2**63)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text()
    )
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
        max_leaves=8,
    )


def _paths(tree: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield at
    children = tree.items() if type(tree) is dict else enumerate(tree) if type(tree) is list else ()
    for key, child in children:
        yield from _paths(child, (*at, key))


@pytest.fixture(scope="module")
def stored_entry(served, tmp_path_factory) -> tuple[Path, dict[str, Any]]:
    hub, _ = served
    cache = tmp_path_factory.mktemp("entry") / "cache"
    assert hubdiff("metrics", "org/n", "--endpoint", hub.endpoint, "--cache-dir", str(cache)).returncode == 0
    (path,) = (SnapshotCache(cache, hub.endpoint).base / "metrics").rglob("*.json")
    return cache, json.loads(path.read_text())


@settings(max_examples=60, **FUZZ)
@given(data=st.data())
def test_a_mangled_metrics_entry_is_a_miss_or_read_exactly(stored_entry, data):
    """Any one value of a stored entry replaced by any JSON value: the entry is a miss (None), or what
    is read back is of the result classes' types all through; reading never raises."""
    cache_dir, entry = stored_entry
    at = data.draw(st.sampled_from(list(_paths(entry))))
    mangled = json.loads(json.dumps(entry))
    value = data.draw(_json_values())
    if at:
        parent = mangled
        for key in at[:-1]:
            parent = parent[key]
        parent[at[-1]] = value
    else:
        mangled = value
    cache = SnapshotCache(Path(tempfile.mkdtemp(dir=cache_dir)))
    key = entry["key"]
    cache._metrics_path(key).parent.mkdir(parents=True)
    cache._metrics_path(key).write_text(json.dumps(mangled))
    loaded = cache.load_metrics(key, Metrics)
    if loaded is not None:  # well typed: stored again exactly (``_to_json`` raises on any stray type)
        assert isinstance(loaded, Metrics) and mangled["key"] == key
        assert _reader(Metrics)(_to_json(loaded, Metrics)) == loaded


# -- refs -----------------------------------------------------------------------------------------------


@settings(max_examples=60, **FUZZ)
@given(
    refs=_json_values()
    | st.dictionaries(st.text(), st.from_regex(r"[0-9a-fA-F]{39,41}", fullmatch=True) | _json_values())
)
def test_the_refs_file_gives_only_revisions_and_shas(tmp_path_factory, refs):
    cache = SnapshotCache(tmp_path_factory.mktemp("refs"))
    cache._refs_path("org/m").parent.mkdir(parents=True)
    cache._refs_path("org/m").write_text(json.dumps(refs))
    if type(refs) is not dict:
        assert cache.known_refs("org/m") == {}
    else:
        shas = {k: v for k, v in refs.items() if type(v) is str and re.fullmatch(r"[0-9a-f]{40}", v)}
        assert cache.known_refs("org/m") == shas


@pytest.mark.parametrize(
    "planted",
    [
        {"main": "../../../../etc/passwd"},
        {"main": "A" * 40},
        {"main": ["0" * 40]},
        ["main", "0" * 40],
        "[" * 100_000 + "]" * 100_000,
    ],
    ids=["path", "not-hex", "list", "not-a-dict", "nested-deep"],
)
def test_a_planted_refs_file_is_ignored(served, tmp_path, planted):
    """Offline, a revision whose refs entry is not a sha has no cached sha; online the run is normal."""
    hub, _ = served
    cache = tmp_path / "cache"
    assert hubdiff("snapshot", "org/m", "--endpoint", hub.endpoint, "--cache-dir", str(cache)).returncode == 0
    (refs,) = (SnapshotCache(cache, hub.endpoint).base / "refs").iterdir()
    refs.write_text(planted if isinstance(planted, str) else json.dumps(planted))
    offline = hubdiff("snapshot", "org/m", "--offline", "--endpoint", hub.endpoint, "--cache-dir", str(cache))
    assert offline.returncode == 3
    assert offline.stderr.startswith("hubdiff: org/m@main: offline: no cached sha"), offline.stderr
    online = hubdiff("snapshot", "org/m", "--endpoint", hub.endpoint, "--cache-dir", str(cache))
    assert online.returncode == 0 and online.stderr == ""
    assert list(SnapshotCache(cache, hub.endpoint).known_refs("org/m")) == ["main"]  # written whole again


# -- a cache that cannot be read or written is no cache -----------------------------------------------


def test_a_cache_path_that_is_a_file(served, reference, tmp_path):
    cache = tmp_path / "cache"
    cache.write_text("not a folder")
    result = hubdiff(*diff_args(served, cache))
    assert (result.returncode, result.stdout) == (1, reference)
    one_cache_warning(result.stderr, cache)
    assert cache.read_text() == "not a folder"


def test_a_read_only_cache(served, reference, tmp_path):
    """Empty: every write refused, said once. Filled by an earlier run: read as usual, nothing said."""
    empty, filled = tmp_path / "empty", tmp_path / "filled"
    empty.mkdir()
    assert hubdiff(*diff_args(served, filled)).returncode == 1
    folders = [filled, *(p for p in filled.rglob("*") if p.is_dir())]
    with read_only(empty, *folders):
        cold = hubdiff(*diff_args(served, empty))
        warm = hubdiff(*diff_args(served, filled))
    assert (cold.returncode, cold.stdout) == (1, reference)
    one_cache_warning(cold.stderr, empty)
    assert list(empty.iterdir()) == []
    assert (warm.returncode, warm.stdout, warm.stderr) == (1, reference, "")


def test_cache_entries_that_are_folders(served, reference, tmp_path):
    """Each entry replaced by a folder of its name: reading it is a miss, writing it fails (said once)."""
    cache = tmp_path / "cache"
    assert hubdiff(*diff_args(served, cache)).returncode == 1
    entries = [p for p in cache.rglob("*.json")]
    assert {p.parent.parent.name for p in entries} >= {"snapshots", "metrics"} and any(
        p.parent.name == "refs" for p in entries
    )
    for path in entries:
        path.unlink()
        path.mkdir()
    result = hubdiff(*diff_args(served, cache))
    assert (result.returncode, result.stdout) == (1, reference)
    one_cache_warning(result.stderr, cache)
    assert all(p.is_dir() for p in entries)


def test_a_full_disk_under_the_cache(served, reference, tmp_path, capsys, monkeypatch):
    cache = tmp_path / "cache"
    with full_disk(monkeypatch, cache):
        code, out, err = in_process(capsys, *diff_args(served, cache))
    assert (code, out) == (1, reference)
    one_cache_warning(err, cache)
    only_whole_entries(cache)
    assert not list(cache.rglob("*.json"))  # the first write failed; none was tried after it
    code, out, err = in_process(capsys, *diff_args(served, cache))  # space again: cached as usual
    assert (code, out, err) == (1, reference, "")
    assert len(list(cache.rglob("*.json"))) == 5  # two snapshots, two metrics, the refs
    only_whole_entries(cache)


# -- locks ----------------------------------------------------------------------------------------------


HOLD = (
    "import sys\n"
    "from pathlib import Path\n"
    "from hubdiff._files import locked\n"
    "print('taking', flush=True)\n"
    "with locked(Path(sys.argv[1])):\n"
    "    print('locked', flush=True)\n"
    "    sys.stdin.readline()\n"
    "print('released', flush=True)\n"
)


def _holder(path: Path, tmp_path: Path, name: str) -> subprocess.Popen[str]:
    """A process taking ``path``'s lock with its own TMPDIR, HOME and cache folder, holding it until a
    line arrives on its stdin."""
    own = tmp_path / name
    for sub in ("tmp", "home", "xdg"):
        (own / sub).mkdir(parents=True)
    env = {
        **os.environ,
        "TMPDIR": str(own / "tmp"),
        "HOME": str(own / "home"),
        "XDG_CACHE_HOME": str(own / "xdg"),
    }
    return subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_two_processes_with_different_tmpdirs_share_the_lock(tmp_path):
    """A terminal and a cron job (two TMPDIRs, two HOMEs): the second waits for the first."""
    target = tmp_path / "baselines" / "fam.yaml"
    first = _holder(target, tmp_path, "a")
    try:
        assert [first.stdout.readline() for _ in range(2)] == ["taking\n", "locked\n"]
        second = _holder(target, tmp_path, "b")
        try:
            assert second.stdout.readline() == "taking\n"
            ready, _, _ = select.select([second.stdout], [], [], 2.0)
            assert ready == [] and second.poll() is None  # blocked on the lock the first holds
            first.stdin.write("\n")
            first.stdin.flush()
            assert first.wait(timeout=30) == 0
            out, err = second.communicate("\n", timeout=30)
            assert (out, err, second.returncode) == ("locked\nreleased\n", "", 0)
        finally:
            second.kill()
    finally:
        first.kill()
    assert sorted(p.name for p in tmp_path.glob("[ab]/*/**/*")) == []  # no lock file anywhere
    assert list((tmp_path / "baselines").iterdir()) == []  # nor beside the baseline


def test_a_baseline_update_waits_for_a_lock_taken_with_another_tmpdir(served, tmp_path):
    """The campaign's case: the lock held with TMPDIR=a, ``TMPDIR=b hubdiff baseline update`` does not
    rewrite the baseline until it is released."""
    hub, _ = served
    cache = tmp_path / "cache"
    init = hubdiff(
        "baseline",
        "init",
        "org/m",
        "--family",
        "fam",
        "--endpoint",
        hub.endpoint,
        "--cache-dir",
        str(cache),
        cwd=tmp_path,
    )
    assert init.returncode == 0, init.stderr
    path = tmp_path / "baselines" / "fam.yaml"
    path.write_text(path.read_text() + "# a comment the update keeps\n")
    before = path.stat().st_mtime_ns
    holder = _holder(path, tmp_path, "a")
    try:
        assert [holder.stdout.readline() for _ in range(2)] == ["taking\n", "locked\n"]
        (tmp_path / "b").mkdir()
        update = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "hubdiff",
                "baseline",
                "update",
                str(path),
                "--endpoint",
                hub.endpoint,
                "--cache-dir",
                str(cache),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "TMPDIR": str(tmp_path / "b")},
        )
        with pytest.raises(subprocess.TimeoutExpired):
            update.communicate(timeout=3.0)
        assert path.stat().st_mtime_ns == before  # not rewritten while the lock is held
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.wait(timeout=30) == 0
        _out, err = update.communicate(timeout=120)
        assert update.returncode in (0, 1), err
    finally:
        holder.kill()


@pytest.fixture
def no_folder_locks(tmp_path, monkeypatch) -> Path:
    """Where folders cannot be locked (Windows): the lock file's folder in this test's user cache."""
    from hubdiff import _files

    home = tmp_path / "home-cache"
    monkeypatch.setattr(_files, "_can_lock_folders", lambda: False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home / "hubdiff-locks"


def test_without_folder_locks_lock_files_live_in_a_folder_of_this_users_alone(no_folder_locks, tmp_path):
    with locked(tmp_path / "baseline.yaml"):
        assert lock_folder() == no_folder_locks
    info = os.lstat(no_folder_locks)
    assert stat.S_IMODE(info.st_mode) == 0o700 and info.st_uid == os.getuid()
    assert len(list(no_folder_locks.iterdir())) == 1


def _another_users(folder: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("making a folder another user's takes root")
    folder.mkdir(mode=0o777, parents=True)
    os.chown(folder, os.getuid() + 4242, -1)


def _symlink_to_ours(folder: Path) -> None:
    target = folder.parent / "elsewhere"
    target.mkdir(mode=0o700, parents=True)
    folder.symlink_to(target)


def _open_to_all(folder: Path) -> None:
    folder.mkdir(parents=True)
    folder.chmod(0o777)


@pytest.mark.parametrize("plant", [_another_users, _symlink_to_ours, _open_to_all], ids=lambda f: f.__name__)
def test_a_planted_lock_folder_is_refused(no_folder_locks, tmp_path, plant):
    plant(no_folder_locks)
    before = sorted(p.name for p in no_folder_locks.parent.rglob("*"))
    with pytest.raises(WriteError, match="cannot lock"), locked(tmp_path / "baseline.yaml"):
        pass
    assert sorted(p.name for p in no_folder_locks.parent.rglob("*")) == before  # nothing made there


def test_a_folder_that_cannot_be_locked(served, tmp_path):
    """The baselines folder's name taken by a file: one line naming the baseline, exit 2, no file."""
    hub, _ = served
    (tmp_path / "baselines").write_text("a file where the baselines folder would be")
    init = hubdiff(
        "baseline",
        "init",
        "org/m",
        "--family",
        "fam",
        "--endpoint",
        hub.endpoint,
        "--cache-dir",
        str(tmp_path / "cache"),
        cwd=tmp_path,
    )
    path = Path("baselines") / "fam.yaml"
    assert init.returncode == 2 and init.stdout == ""
    assert init.stderr == f"hubdiff: {path}: cannot lock: Not a directory\n", init.stderr


# -- reports and baselines that cannot be written -------------------------------------------------------


def test_an_output_that_is_a_folder(served, tmp_path):
    out = tmp_path / "report.md"
    out.mkdir()
    for flag in ("--output", "--comment", "--summary"):
        result = hubdiff(*diff_args(served, tmp_path / "cache"), flag, str(out))
        assert result.returncode == 2, result.stderr
        assert result.stderr == f"hubdiff: {out}: cannot write: Is a directory\n"
        assert list(out.iterdir()) == []
    (tmp_path / "plain").write_text("")
    inside_a_file = tmp_path / "plain" / "r.md"
    result = hubdiff(*diff_args(served, tmp_path / "cache"), "--output", str(inside_a_file))
    assert (result.returncode, result.stderr) == (
        2,
        f"hubdiff: {inside_a_file}: cannot write: Not a directory\n",
    )
    assert (tmp_path / "plain").read_text() == ""


def test_an_output_on_a_full_disk_is_left_as_it_was(served, tmp_path, capsys, monkeypatch):
    out = tmp_path / "reports" / "report.md"
    out.parent.mkdir()
    out.write_text("last run's report\n")
    with full_disk(monkeypatch, out.parent):
        code, stdout, err = in_process(capsys, *diff_args(served, tmp_path / "cache"), "--output", str(out))
    assert (code, stdout, err) == (2, "", f"hubdiff: {out}: cannot write: No space left on device\n")
    assert out.read_text() == "last run's report\n"
    assert [p.name for p in out.parent.iterdir()] == ["report.md"]  # no temporary file left


def test_an_output_in_a_read_only_folder_is_left_as_it_was(served, tmp_path):
    out = tmp_path / "reports" / "report.md"
    out.parent.mkdir()
    out.write_text("last run's report\n")
    with read_only(out.parent):
        result = hubdiff(*diff_args(served, tmp_path / "cache"), "--output", str(out))
    assert result.returncode == 2 and result.stdout == ""
    assert re.fullmatch(
        rf"hubdiff: {re.escape(str(out))}: cannot write: (Permission denied|Operation not permitted)\n",
        result.stderr,
    )
    assert out.read_text() == "last run's report\n"
    assert [p.name for p in out.parent.iterdir()] == ["report.md"]


def test_a_baseline_that_cannot_be_written_is_left_as_it_was(tmp_path):
    """``baseline update`` after the repo moved, the baselines folder read-only: one line naming the
    file, exit 2, the file as it was; with the folder writable again the update goes through."""
    with HubReplica() as hub:
        hub.add(RepoSpec("org/m", [_commit(16)]))
        common = ["--endpoint", hub.endpoint, "--cache-dir", str(tmp_path / "cache")]
        assert hubdiff("baseline", "init", "org/m", "--family", "fam", *common, cwd=tmp_path).returncode == 0
        path = tmp_path / "baselines" / "fam.yaml"
        before = path.read_text()
        hub.push("org/m", _commit(32))
        with read_only(path.parent):
            result = hubdiff("baseline", "update", *common, cwd=tmp_path)
        assert result.returncode == 2 and result.stdout == ""
        name = re.escape(str(Path("baselines") / "fam.yaml"))
        assert re.fullmatch(
            rf"hubdiff: {name}: cannot write: (Permission denied|Operation not permitted)\n", result.stderr
        )
        assert path.read_text() == before and [p.name for p in path.parent.iterdir()] == ["fam.yaml"]
        assert hubdiff("baseline", "update", *common, cwd=tmp_path).returncode == 0
        assert path.read_text() != before


def test_write_error_is_a_hubdiff_error_with_exit_2(tmp_path):
    with pytest.raises(WriteError) as caught:
        atomic_write_text(tmp_path, "x")
    assert caught.value.exit_code == 2
    assert caught.value.line() == f"hubdiff: {tmp_path}: cannot write: Is a directory"
