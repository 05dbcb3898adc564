"""Shared pieces of the benchmarks: the replica workload and a way to measure a call in isolation."""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")

from hubdiff.testing import CommitSpec, HubReplica, RepoSpec

BIG_REPO = "bench/moe-160"


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


def big_replica() -> HubReplica:
    hub = HubReplica().start()
    config = {
        "hidden_size": 7168,
        "num_hidden_layers": 65,
        "num_attention_heads": 128,
        "vocab_size": 129280,
        "n_routed_experts": 1024,
        "num_experts_per_tok": 8,
        "moe_intermediate_size": 2048,
    }
    hub.add(
        RepoSpec(
            BIG_REPO, [CommitSpec({"config.json": json.dumps(config).encode()}, big_tensors(), shards=160)]
        )
    )
    return hub


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
