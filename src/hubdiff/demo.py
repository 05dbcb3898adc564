"""``hubdiff demo``: the embedded example, end to end, against a Hub replica on 127.0.0.1."""

from __future__ import annotations

import argparse
import tempfile

from ._render.text import snapshot_text
from ._source import HubSettings, Sources, parse_source
from ._source.cache import SnapshotCache
from .errors import EXIT_OK
from .testing.example import EXAMPLE_REPOS, example_hub


def run_demo(args: argparse.Namespace) -> int:
    with example_hub() as hub, tempfile.TemporaryDirectory(prefix="hubdiff-demo-") as cache_dir:
        print(f"Hub replica serving {', '.join(EXAMPLE_REPOS)} at {hub.endpoint}\n")
        sources = Sources(HubSettings(endpoint=hub.endpoint, token=None), SnapshotCache(cache_dir))
        for repo in EXAMPLE_REPOS:
            snapshot = sources.open(parse_source(repo))
            print(snapshot_text(snapshot))
        sent = sum(r.bytes_sent for r in hub.log)
        print(f"{len(hub.log):,} requests, {sent:,} bytes received: configs, indexes and headers only")
    return EXIT_OK
