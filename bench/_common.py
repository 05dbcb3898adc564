"""Shared pieces of the benchmarks: the replica workload and a way to measure a call in isolation."""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")

from hubdiff.testing import CommitSpec, Fault, HubReplica, RepoSpec
from hubdiff.testing.replica import RateLimits

BIG_REPO = "bench/moe-160"
HUBDIFF = [sys.executable, "-m", "hubdiff"]


def reference_command(tool: str, *args: str) -> list[str]:
    """A reference tool as its own process (``bench/reference.py``), importing nothing of hubdiff."""
    return [sys.executable, str(Path(__file__).with_name("reference.py")), tool, *args]


def init_big_baseline(baselines: Path, endpoint: str) -> list[str]:
    """The command that records the bench repo into ``baselines/bench.yaml``."""
    return [*HUBDIFF, "baseline", "init", BIG_REPO, "--family", "bench", "--baseline-dir", str(baselines),
            "--endpoint", endpoint]  # fmt: skip


# Released config.json files, byte for byte (copies in tests/data; origins in ../shared/real-models/SOURCES.md)
REAL_CONFIGS = Path(__file__).resolve().parents[1] / "tests" / "data"
BIG_CONFIG = "DeepSeek-V3"  # model_type deepseek_v3: transformers' DeepseekV3Config reads it
# The founding comparison and a revision diff of the same size, on the demo replica (hubdiff demo --serve)
FOUNDING = ("zai-org/GLM-5.3", "zai-org/GLM-5.3-Flash")
REVISION = ("zai-org/GLM-5.3", "zai-org/GLM-5.3@refs/pr/1")  # 59,585 tensors each side; a 2M context
# The Hub's largest plan's budgets per 5 minutes (hub-docs rate-limits.md, as example_hub has): a benchmark
# makes many cold reads of one repo in a window (~320 resolves each), and with the anonymous 3,000 the
# later ones would be spaced by hubdiff's rate-limit gate and measure the budget left, not the read
BENCH_LIMITS = RateLimits(api=10_000, resolvers=100_000, pages=1_000)


def real_config(name: str = BIG_CONFIG) -> bytes:
    """A released model's config.json as the Hub serves it: a real ``model_type``, so that hubdiff
    imports transformers and reads it with that model's configuration class, as on any real repo."""
    return (REAL_CONFIGS / name / "config.json").read_bytes()


def big_tensors(layers: int = 65, experts: int = 1024) -> list[tuple[str, str, tuple[int, ...]]]:
    """199,680 tensors: 65 layers x 1,024 experts x 3 projections, like a large fine-grained MoE."""
    return [
        (
            f"model.layers.{layer}.mlp.experts.{e}.{w}.weight",
            "BF16",
            (2048, 7168) if w != "down_proj" else (7168, 2048),
        )
        for layer in range(layers)
        for e in range(experts)
        for w in ("gate_proj", "up_proj", "down_proj")
    ]


def big_replica(
    latency_s: float = 0.0, shards: int = 160, layers: int = 65, repo: str = BIG_REPO, revisions: int = 1
) -> HubReplica:
    """The bench repo on a replica; ``latency_s`` delays every request (a CDN far away).

    Its config is DeepSeek-V3's as released (``real_config``); the tensors are the bench's own layout,
    DeepSeek-V3's expert shapes at 1,024 experts and ``layers`` layers (the config says 256 and 61:
    the report lists that under "config vs tensors"). With ``revisions=2`` a second commit drops one
    expert projection in 13 layers and reshapes another in one layer (the diff benchmark's change).
    """
    hub = HubReplica(rate_limits=BENCH_LIMITS).start()
    if latency_s:
        hub.add_fault(Fault("", delay_s=latency_s))
    files = {"config.json": real_config()}
    tensors = big_tensors(layers)
    commits = [CommitSpec(files, tensors, shards=shards)]
    if revisions == 2:
        commits.append(CommitSpec(files, edited(tensors), shards=shards, title="drop and reshape"))
    hub.add(RepoSpec(repo, commits, tags={"v1": 0}))
    return hub


def demo_replica(latency_s: float = 0.0) -> HubReplica:
    """The demo's replica (``hubdiff demo --serve``: GLM-5, GLM-5.3 with its pull request, GLM-5.3-Flash,
    real configs), every request delayed ``latency_s``."""
    from hubdiff.testing.example import example_hub

    hub = example_hub()
    if latency_s:
        hub.add_fault(Fault("", delay_s=latency_s))
    return hub


def edited(rows: list[tuple[str, str, tuple[int, ...]]]) -> list[tuple[str, str, tuple[int, ...]]]:
    """One expert projection dropped in every fifth layer, another reshaped in layer 3."""
    out = [
        r
        for r in rows
        if not (r[0].endswith("experts.7.up_proj.weight") and int(r[0].split(".")[2]) % 5 == 0)
    ]
    return [
        (n, d, (1024, 7168)) if n == "model.layers.3.mlp.experts.9.gate_proj.weight" else (n, d, s)
        for n, d, s in out
    ]


def _compile_hubdiff() -> None:
    """Write hubdiff's bytecode once, as ``pip install`` does for an installed package.

    The libraries every tool imports (huggingface_hub, httpx, transformers) have theirs; an editable
    checkout run with ``PYTHONDONTWRITEBYTECODE=1`` (as this machine's shells are) would otherwise
    compile hubdiff's ~50 modules again in every process, ~0.15 s that no installed hubdiff pays.
    """
    import compileall

    import hubdiff

    compileall.compile_dir(os.path.dirname(hubdiff.__file__), quiet=2)


def run_process(
    label: str, argv: list[str], hub: Any = None, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Run a command to its end: wall time, its own peak RSS (wait4), requests and bytes on the replica."""
    if hub is not None:
        hub.clear()
    _compile_hubdiff()
    child_env = {**os.environ, **(env or {})}
    child_env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode read, not compiled per run
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=child_env)
    sampler = TreeMemory(proc.pid)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    sampler.stop()
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise RuntimeError(f"{label}: exit {code}: {stderr.strip()[-500:]}")
    row: dict[str, Any] = {
        "label": label,
        "seconds": elapsed,
        "peak_rss_mib": usage.ru_maxrss / 1024,
        "tree_pss_mib": sampler.peak_kib / 1024,
    }
    if hub is not None:
        log = hub.log
        row["requests"] = len(log)
        row["redirects"] = sum(300 <= e.status < 400 for e in log)  # the Hub's resolve -> CDN hops
        row["bytes_received"] = sum(e.bytes_sent for e in log)
    return row


class TreeMemory:
    """The peak, sampled every 20 ms, of the memory a process and all its descendants hold together.

    wait4's peak RSS is that of the largest single process of the tree (what ``time -v`` reports):
    a command that hands work to worker processes holds more than that at once. Summing their
    proportional set sizes (``Pss`` in ``/proc/PID/smaps_rollup``: each shared page divided among the
    processes sharing it) counts every page once. Linux only; elsewhere the peak stays 0.
    """

    def __init__(self, pid: int, interval_s: float = 0.02) -> None:
        self.pid, self.interval_s, self.peak_kib = pid, interval_s, 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _tree(self) -> list[int]:
        pids, todo = [], [self.pid]
        while todo:
            pid = todo.pop()
            pids.append(pid)
            try:
                for task in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{task}/children") as fh:
                        todo.extend(int(child) for child in fh.read().split())
            except OSError:
                continue
        return pids

    def _sample(self) -> int:
        total = 0
        for pid in self._tree():
            try:
                with open(f"/proc/{pid}/smaps_rollup") as fh:
                    total += next(int(line.split()[1]) for line in fh if line.startswith("Pss:"))
            except (OSError, StopIteration, ValueError):
                continue  # gone, or not readable
        return total

    def _run(self) -> None:
        while not self._done.wait(self.interval_s):
            self.peak_kib = max(self.peak_kib, self._sample())

    def stop(self) -> None:
        self._done.set()
        self._thread.join()


def median_row(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The median of repeated runs, field by field (requests and bytes are the same every time)."""
    out = dict(rows[0])
    for key in ("seconds", "peak_rss_mib", "tree_pss_mib", "requests", "redirects", "bytes_received"):
        if key in out:
            out[key] = statistics.median(r[key] for r in rows)
    out["runs"] = len(rows)
    out["spread"] = (min(r["seconds"] for r in rows), max(r["seconds"] for r in rows))
    return out


def table(rows: list[dict[str, Any]], reference: str) -> None:
    """Rows with their ratio to ``reference``: time (x < 1 is faster), RSS, requests, MB received."""
    base = next(r for r in rows if r["label"] == reference)
    print(
        f"{'':<46} {'median s':>9} {'min-max':>11} {'time/ref':>8} {'RSS MiB':>8} {'RSS/ref':>7}"
        f" {'tree MiB':>8} {'tree/ref':>8} {'requests':>8} {'MB recv':>8}"
    )
    for r in rows:
        lo, hi = r.get("spread", (r["seconds"], r["seconds"]))
        mb = f"{r['bytes_received'] / 1e6:.2f}" if "bytes_received" in r else ""
        tree, base_tree = r.get("tree_pss_mib", 0), base.get("tree_pss_mib", 0)
        print(
            f"{r['label']:<46} {r['seconds']:>9.3f} {f'{lo:.2f}-{hi:.2f}':>11} {r['seconds'] / base['seconds']:>8.2f}"
            f" {r['peak_rss_mib']:>8.0f} {r['peak_rss_mib'] / base['peak_rss_mib']:>7.2f}"
            f" {tree:>8.0f} {tree / base_tree if base_tree else float('nan'):>8.2f}"
            f" {r.get('requests', ''):>8} {mb:>8}"
        )
    sys.stdout.flush()


class RemoteReplica:
    """The replica in its own process, so that the client under test has the interpreter to itself.

    The log is read back through a pipe; ``clear`` and ``log`` mirror HubReplica's.
    """

    def __init__(self, factory: Callable[[], HubReplica]) -> None:
        import multiprocessing

        self._conn, child = multiprocessing.Pipe()
        self._proc = multiprocessing.get_context("fork").Process(
            target=self._serve, args=(factory, child), daemon=True
        )
        self._proc.start()
        self.endpoint = self._conn.recv()

    @staticmethod
    def _serve(factory: Callable[[], HubReplica], conn: Any) -> None:
        hub = factory()
        conn.send(hub.endpoint)
        while True:
            command = conn.recv()
            if command == "log":
                conn.send(hub.log)
            elif command == "clear":
                hub.clear()
                conn.send(None)
            elif command == "stop":
                hub.stop()
                conn.send(None)
                return

    @property
    def log(self) -> list[Any]:
        self._conn.send("log")
        return self._conn.recv()

    def clear(self) -> None:
        self._conn.send("clear")
        self._conn.recv()

    def stop(self) -> None:
        self._conn.send("stop")
        self._conn.recv()
        self._proc.join(5)


def measure(label: str, call: Callable[[], Any], hub: Any = None) -> dict[str, Any]:
    """Time one call; requests and bytes from the replica's log; peak RSS of this process so far."""
    if hub is not None:
        hub.clear()
    start = time.perf_counter()
    call()
    elapsed = time.perf_counter() - start
    row: dict[str, Any] = {
        "label": label,
        "seconds": round(elapsed, 3),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }
    if hub is not None:
        log = hub.log
        row["requests"] = len(log)
        row["bytes_received"] = sum(e.bytes_sent for e in log)
    return row


def report(rows: list[dict[str, Any]], reference: str) -> None:
    base = next(r for r in rows if r["label"] == reference)
    for r in rows:
        ratio = base["seconds"] / r["seconds"] if r["seconds"] else float("inf")
        extra = "".join(f"  {k}={r[k]:,}" for k in ("requests", "bytes_received") if k in r)
        print(
            f"{r['label']:<44} {r['seconds']:>7.2f} s  x{ratio:>5.2f} vs {reference}{extra}  peak RSS {r['peak_rss_mib']} MiB"
        )
    sys.stdout.flush()
