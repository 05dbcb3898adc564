"""A local 160-shard, 199,680-tensor checkpoint with DeepSeek-V3's released config.json:
``hubdiff snapshot DIR --json`` against huggingface_hub's ``get_local_safetensors_metadata``.

    python bench/local.py [--runs 3]

The checkpoint is written once with sparse shards (headers only on disk). Each tool is its own process:
interpreter start, imports, reading and, for hubdiff, the whole JSON on stdout.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import BIG_CONFIG, big_tensors, median_row, real_config, reference_command, run_process, table

from hubdiff.testing import CommitSpec, write_checkpoint

REFERENCE = "huggingface_hub get_local_safetensors_metadata"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--write", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write:
        write_checkpoint(
            Path(args.write), CommitSpec({"config.json": real_config()}, big_tensors(), shards=160)
        )
        return
    folder = Path(tempfile.mkdtemp(prefix="hubdiff-local-200k-"))
    try:
        # written by a child: a process forked from one holding 200,000 tensors would report its RSS
        subprocess.run([sys.executable, __file__, "--write", str(folder)], check=True)
        rows: dict[str, list] = {}
        for _ in range(args.runs):
            for label, argv in (
                (REFERENCE, reference_command("local", str(folder))),
                (
                    "hubdiff snapshot DIR --json",
                    [sys.executable, "-m", "hubdiff", "snapshot", str(folder), "--json"],
                ),
                ("hubdiff snapshot DIR (text)", [sys.executable, "-m", "hubdiff", "snapshot", str(folder)]),
            ):
                rows.setdefault(label, []).append(run_process(label, argv))
        print(
            f"local checkpoint, 160 shards, 199,680 tensors, {BIG_CONFIG}'s config.json;"
            f" {args.runs} runs, medians; load {os.getloadavg()[0]:.1f}"
        )
        result = [median_row(r) for r in rows.values()]
        table(result, REFERENCE)
        ratio = result[1]["seconds"] / result[0]["seconds"]
        print(f"goal local snapshot --json <= 1.0x: {ratio:.2f} -> {'met' if ratio <= 1.0 else 'NOT met'}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
