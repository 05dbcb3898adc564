"""Warm ``hubdiff metrics`` against its floor, as the bench runs it and as a user's shell may.

    python bench/bench_warm_forms.py [--runs 10]

The same warm run (``bench/moe-160`` on the replica, snapshot and metrics cached), interleaved with the
floor (the interpreter and one ``urllib`` request for the revision), in three forms:

- as ``bench_floor.py`` runs it: ``python -m hubdiff``, the bench's environment, bytecode written;
- as the ``hubdiff`` console script runs it (``from hubdiff._entry import run``), without the bench's
  ``HF_HUB_DISABLE_XET`` and ``NO_PROXY``;
- the same under ``PYTHONDONTWRITEBYTECODE=1`` from a tree that was never compiled: an editable install
  (``pip install -e`` writes no bytecode) in a shell that forbids writing it, as this machine's do.
  Every run then compiles hubdiff's modules again: that, not hubdiff's work, is what the third form
  adds, and an installed wheel (pip compiles it) never pays it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import BIG_REPO, RemoteReplica
from bench_floor import big

SRC = Path(__file__).resolve().parents[1] / "src"
SCRIPT = "import sys; from hubdiff._entry import run; sys.exit(run())"  # the console script's body


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    runs = parser.parse_args().runs
    work = Path(tempfile.mkdtemp(prefix="hubdiff-warm-forms-"))
    never_compiled = work / "src"
    shutil.copytree(SRC, never_compiled, ignore=shutil.ignore_patterns("__pycache__"))
    hub = RemoteReplica(lambda: big(0.0))
    try:
        endpoint, cache = hub.endpoint, str(work / "cache")
        base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
        bench = {
            **base,
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "HF_HUB_DISABLE_XET": "1",
            "NO_PROXY": "127.0.0.1,localhost",
            "PYTHONPATH": str(SRC),
            "HUBDIFF_CACHE": cache,
        }
        user = {**base, "PYTHONPATH": str(SRC), "HUBDIFF_CACHE": cache}
        metrics = ["metrics", BIG_REPO, "--endpoint", endpoint]
        revision = f"{endpoint}/api/models/{BIG_REPO}/revision/main?expand=sha"
        forms = {
            "floor": (
                [sys.executable, "-c", f"import urllib.request; urllib.request.urlopen({revision!r}).read()"],
                bench,
            ),
            "python -m hubdiff, bench environment": ([sys.executable, "-m", "hubdiff", *metrics], bench),
            "console script": ([sys.executable, "-c", SCRIPT, *metrics], user),
            "console script, never compiled, PYTHONDONTWRITEBYTECODE=1": (
                [sys.executable, "-c", SCRIPT, *metrics],
                {**user, "PYTHONPATH": str(never_compiled), "PYTHONDONTWRITEBYTECODE": "1"},
            ),
        }
        subprocess.run(
            [sys.executable, "-m", "hubdiff", *metrics], env=bench, capture_output=True, check=True
        )
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(SRC / "hubdiff")], check=True)
        times: dict[str, list[float]] = {k: [] for k in forms}
        for _ in range(runs):
            for label, (argv, env) in forms.items():
                start = time.perf_counter()
                done = subprocess.run(argv, env=env, capture_output=True)
                times[label].append(time.perf_counter() - start)
                if done.returncode:
                    raise SystemExit(f"{label}: exit {done.returncode}: {done.stderr.decode()[-300:]}")
    finally:
        hub.stop()
        shutil.rmtree(work, ignore_errors=True)
    floor = statistics.median(times["floor"])
    for label, taken in times.items():
        median = statistics.median(taken)
        print(f"{label:58s} {median * 1000:5.0f} ms = floor {(median - floor) * 1000:+4.0f} ms")


if __name__ == "__main__":
    main()
