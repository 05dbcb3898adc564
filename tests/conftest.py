"""Shared fixtures. The environment is fixed before anything imports huggingface_hub (it reads it once)."""

from __future__ import annotations

import contextlib
import importlib.util
import ipaddress
import os
import socket
import tempfile

os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
os.environ["HF_HUB_DISABLE_XET"] = "1"
os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
os.environ["NO_PROXY"] = "127.0.0.1,localhost"
os.environ["no_proxy"] = "127.0.0.1,localhost"
os.environ.pop("HF_TOKEN", None)
# text output is fitted to $COLUMNS when set; pytest-xdist's workers get COLUMNS=80 from it, and a
# developer's shell may export one: tests that want a width set it themselves
os.environ.pop("COLUMNS", None)
os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="hubdiff-test-hf-home-")
# compiled templates (hubdiff._render.compiled) in a home of the run's own, not the user's
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="hubdiff-test-xdg-cache-")
os.environ["HF_ENDPOINT"] = "http://127.0.0.1:9"  # a closed port: nothing may fall back to the real Hub
# The suite starts hubdiff and pytest as subprocesses some thousand times. Where the environment forbids
# writing bytecode (PYTHONDONTWRITEBYTECODE), each would compile hubdiff's sources, and pytest-xdist's
# workers the test modules' rewritten assertions, from scratch again: 0.2 s of CPU per start. The
# suite's own processes write their caches (__pycache__/, git-ignored) as an ordinary Python would.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

from hubdiff._source import HubSettings
from hubdiff._source.cache import SnapshotCache
from hubdiff._source.hub import HubReader
from hubdiff.testing import HubReplica
from hubdiff.testing.example import example_hub as _example_hub

# No network but loopback: a connection anywhere else fails the test that made it, whatever host a
# string in a test names (a PR's url in the gh double, a Hub web URL to parse, a recording's source)
_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address: object) -> None:
    if self.family in (socket.AF_INET, socket.AF_INET6):
        host = str(address[0]) if isinstance(address, tuple) else ""  # type: ignore[index]
        if not ipaddress.ip_address(host.split("%")[0]).is_loopback:
            raise OSError(f"tests reach only the loopback interface, not {address!r}")
    _connect(self, address)  # type: ignore[arg-type]


socket.socket.connect = _loopback_only  # type: ignore[method-assign]

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="session")
def example_hub() -> Iterator[HubReplica]:
    hub = _example_hub()
    yield hub
    hub.stop()


@pytest.fixture(scope="session")
def _example_cache_seed(example_hub: HubReplica, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example repos read once per worker: a cold read of them is some 1,700 requests and a few
    seconds of CPU, which tests about what comes after the read (claims, reports, updates) need not
    pay again. The cold read itself is tested where it is the point (test_compare, test_first_hour)."""
    from hubdiff._source import Sources
    from hubdiff._source.spec import parse_source
    from hubdiff.testing.example import example_specs

    root = tmp_path_factory.mktemp("example-cache")
    sources = Sources(HubSettings(endpoint=example_hub.endpoint), SnapshotCache(root))
    for spec in example_specs():
        sources.open(parse_source(spec.repo_id))
    return root


@pytest.fixture
def example_cache(example_hub: HubReplica, _example_cache_seed: Path) -> Callable[..., Path]:
    """``example_cache(folder, endpoint=None)``: a cache at ``folder`` already holding the example repos'
    snapshots, filed under ``endpoint`` (the session's ``example_hub`` by default; the cache keys its
    entries by endpoint). Every replica of the example repos serves the same commits, so another
    one's (a test's own, to push to) may be given."""

    def copy_to(folder: Path, endpoint: str | None = None) -> Path:
        read = SnapshotCache(_example_cache_seed, example_hub.endpoint).base
        shutil.copytree(
            read, SnapshotCache(folder, endpoint or example_hub.endpoint).base, dirs_exist_ok=True
        )
        return folder

    return copy_to


@pytest.fixture
def hub() -> Iterator[HubReplica]:
    with HubReplica(tokens=frozenset({"hf_reader"})) as replica:
        yield replica


@pytest.fixture
def cache(tmp_path: Path) -> SnapshotCache:
    return SnapshotCache(tmp_path / "cache")


def script_module(path: Path) -> ModuleType:
    """A script of the repo (``scripts/``, ``.github/scripts/``: not a package) imported by its path, so a
    test can hold the script's own tables and functions to what the suite checks."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fast_settings(endpoint: str, **overrides: object) -> HubSettings:
    """Retries that wait milliseconds, so fault tests stay fast."""
    values: dict[str, object] = {
        "endpoint": endpoint,
        "token": None,
        "timeout_s": 2.0,
        "retries": 2,
        "backoff_s": 0.01,
        "max_wait_s": 2.0,
        "workers": 4,
    }
    values.update(overrides)
    return HubSettings(**values)  # type: ignore[arg-type]


@pytest.fixture
def reader(hub: HubReplica, cache: SnapshotCache) -> HubReader:
    return HubReader(fast_settings(hub.endpoint), cache)


SLOW_TESTS = Path(__file__).with_name("slow_tests.txt")


def slow_tests() -> frozenset[str]:
    """``tests/slow_tests.txt``'s node ids (parameters left off) and whole modules: what the quick loop
    leaves out."""
    lines = SLOW_TESTS.read_text().splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks the slow tests, and runs them first: a minute-long test started last would leave the other
    workers idle at the end of the run, while quick ones fill the gaps whenever they come."""
    slow = slow_tests()
    for item in items:
        if item.nodeid.split("[")[0] in slow or item.nodeid.split("::")[0] in slow:  # a test, or its module
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: file order kept within


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # optional: `pytest -p no:xdist` knows no such hook
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: a worker more than the CPUs. A third of the suite's time is spent waiting (on the
    replica's threads, on subprocesses starting, on deadlines), which a spare worker fills; measured
    on 2 cores, with work stealing (``--dist worksteal``) unless another mode is asked for.
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still decides the count when set."""
    if config.option.dist == "no":  # not asked for: idle workers steal queued tests
        config.option.dist = "worksteal"
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cpus + 1


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """hubdiff hides torch from transformers (config classes need none; the import costs seconds) unless
    the process already has it. The meta-device oracle (test_oracle.py) needs transformers to see torch,
    so a process that runs tests imports it first, before any test module is collected, when it is
    installed. xdist's controller runs none: it skips the 3 s, which every worker waits for."""
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        return
    with contextlib.suppress(ImportError):
        import torch  # noqa: F401
