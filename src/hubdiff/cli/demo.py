"""``hubdiff demo``: the whole loop on the embedded example, served by a local Hub replica."""

from __future__ import annotations

import argparse

from ..demo import run_demo
from ._arguments import describe


def register(name: str, parser: argparse.ArgumentParser) -> None:
    describe(
        parser,
        "Start the Hub replica on 127.0.0.1 with the embedded example and run the main job on it.",
        exit_codes=None,
    )
    parser.add_argument(
        "--output-dir", default="reports", help="where reports are written (default ./reports)"
    )
    parser.add_argument(
        "--serve",
        action="store_true",
        help="keep the replica running and print the HF_ENDPOINT=... lines to try every command on it",
    )
    parser.set_defaults(func=run_demo)
