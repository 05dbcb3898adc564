"""Every benchmark once, one after the other, with the time each took and the total: a few minutes.

    python bench/all.py [--runs 1] [--scaling]

metrics (0, 30 and 100 ms per request), diff (the founding comparison, a revision diff of the same
size, the 199,680-tensor revisions), the local checkpoint, the header read in process and the watch;
``--scaling`` adds bench/scaling.py (40 to 640 shards, a few minutes more).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--scaling", action="store_true")
    args = parser.parse_args()
    runs = ["--runs", str(args.runs)]
    scripts = [
        ["metrics.py", *runs, "--latency-ms", "0", "30", "100"],
        ["diff.py", *runs],
        ["local.py", *runs],
        ["fetch.py"],
        ["watch.py"],
    ]
    if args.scaling:
        scripts.append(["scaling.py", *runs])
    started = time.perf_counter()
    took = []
    for script in scripts:
        print(f"\n===== python bench/{' '.join(script)}", flush=True)
        start = time.perf_counter()
        subprocess.run([sys.executable, str(HERE / script[0]), *script[1:]], check=True)
        took.append((script[0], time.perf_counter() - start))
    print("\n" + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in took))
    print(f"bench/all.py took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
