"""SIGKILL inside the cache's write window: aimed at each step of both atomic writes, and at random times.

A child ``hubdiff snapshot`` reads a 13-shard repo from the replica and is killed. Whatever point it
died at, the cache must hold only whole entries: every snapshot file loads, the refs file is JSON,
``--offline`` either answers exactly or says what is missing, and the next run gives the clean result.
The aimed kills are made by wrapping the standard library calls of the write (``mkstemp``, the write
itself, ``os.replace``) in the child; each must fire (the child dies by SIGKILL), so a change in how
the cache writes cannot make the test pass without killing anything.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hubdiff._source.cache import SnapshotCache
from hubdiff._source.hub import HubReader
from hubdiff.errors import SourceError
from hubdiff.snapshot import Snapshot
from hubdiff.testing import CommitSpec, RepoSpec, load_census

from .conftest import DATA, fast_settings

QWEN_VL = DATA / "Qwen3-VL-30B-A3B-Instruct"
AIMED = [
    f"{step}-{n}"
    for n in (1, 2)
    for step in ("after-mkstemp", "mid-write", "before-replace", "after-replace")
]
RANDOM_KILLS = 8

CHILD = r"""
import os, signal, sys, tempfile

point, n = os.environ["KILL_AT"].rsplit("-", 1)
n = int(n)
calls = {"mkstemp": 0, "write": 0, "replace": 0}

def die():
    os.kill(os.getpid(), signal.SIGKILL)

real_mkstemp, real_fdopen, real_replace = tempfile.mkstemp, os.fdopen, os.replace

def mkstemp(*args, **kwargs):
    result = real_mkstemp(*args, **kwargs)
    calls["mkstemp"] += 1
    if point == "after-mkstemp" and calls["mkstemp"] == n:
        die()
    return result

class HalfWriter:
    def __init__(self, fh):
        self.fh = fh
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        self.fh.close()
    def write(self, text):
        calls["write"] += 1
        if point == "mid-write" and calls["write"] == n:
            self.fh.write(text[: len(text) // 2])
            self.fh.flush()
            die()
        return self.fh.write(text)

def fdopen(fd, *args, **kwargs):
    return HalfWriter(real_fdopen(fd, *args, **kwargs))

def replace(src, dst):
    calls["replace"] += 1
    if point == "before-replace" and calls["replace"] == n:
        die()
    real_replace(src, dst)
    if point == "after-replace" and calls["replace"] == n:
        die()

if point != "none":
    tempfile.mkstemp, os.fdopen, os.replace = mkstemp, fdopen, replace
from hubdiff.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.fixture(scope="module")
def served():
    from hubdiff.testing import HubReplica

    tensors = load_census((QWEN_VL / "tensor_census.tsv").read_text())
    spec = RepoSpec(
        "Qwen/VL", [CommitSpec({"config.json": (QWEN_VL / "config.json").read_bytes()}, tensors, 13)]
    )
    with HubReplica() as hub:
        sha = hub.add(spec)[0]
        clean = HubReader(fast_settings(hub.endpoint), None).snapshot("Qwen/VL")
        yield hub, sha, clean


def _child(hub, cache_dir, kill_at: str) -> subprocess.Popen:
    env = {**os.environ, "KILL_AT": kill_at, "PYTHONPATH": os.pathsep.join(sys.path)}
    argv = ["snapshot", "Qwen/VL", "--endpoint", hub.endpoint, "--cache-dir", str(cache_dir), "--json"]
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, *argv], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )


def assert_cache_whole(hub, sha: str, clean: Snapshot, cache_dir) -> None:
    cache = SnapshotCache(cache_dir, hub.endpoint)
    for path in cache_dir.rglob("*.json"):  # only whole entries under their final names
        data = json.loads(path.read_text())
        if path.parent.name == "refs":
            assert data == {"main": sha}, data
        else:
            assert Snapshot.from_compact(data) == clean  # the cache keeps the pattern form
    offline = HubReader(fast_settings(hub.endpoint), cache)
    try:
        assert offline.snapshot("Qwen/VL", "main", offline=True).tensors == clean.tensors
    except SourceError as exc:
        assert "offline: " in str(exc), exc
    again = HubReader(fast_settings(hub.endpoint), cache).snapshot("Qwen/VL")
    assert again == clean
    assert cache.load("Qwen/VL", sha) == clean


@pytest.mark.parametrize("kill_at", AIMED)
def test_aimed_kill_leaves_only_whole_cache_entries(served, tmp_path, kill_at):
    hub, sha, clean = served
    child = _child(hub, tmp_path / "cache", kill_at)
    _, err = child.communicate(timeout=60)
    assert child.returncode == -signal.SIGKILL, (child.returncode, err[-500:])  # the kill point was reached
    assert_cache_whole(hub, sha, clean, tmp_path / "cache")


def test_random_kills_leave_only_whole_cache_entries(served, tmp_path):
    hub, sha, clean = served
    start = time.monotonic()
    child = _child(hub, tmp_path / "timing", "none-0")
    assert child.wait(timeout=60) == 0
    duration = time.monotonic() - start
    rng = random.Random(10)  # fixed: CI reproduces the same kill times
    killed = 0
    for i in range(RANDOM_KILLS):
        cache_dir = tmp_path / f"cache{i}"
        child = _child(hub, cache_dir, "none-0")
        time.sleep(rng.uniform(0.3, 1.0) * duration)
        child.send_signal(signal.SIGKILL)
        killed += child.wait(timeout=60) == -signal.SIGKILL
        assert_cache_whole(hub, sha, clean, cache_dir)
    assert killed >= RANDOM_KILLS // 2  # most kills landed while the child was still running


def test_readme_states_the_figures():
    readme = (Path(__file__).parents[1] / "docs" / "reliability.md").read_text()
    assert f"{len(AIMED)} aimed + {RANDOM_KILLS} random kill points" in readme
