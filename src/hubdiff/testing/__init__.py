"""hubdiff's Hub replica: a real HTTP server on 127.0.0.1 that serves model repos through the Hub's
own routes, for tests, benchmarks and the demo. Safetensors shards are virtual: their headers are
real, their payload is zeros generated on demand.
"""

from __future__ import annotations

from .replica import Fault, HubReplica, LoggedRequest
from .specs import CommitSpec, RepoSpec, load_census, load_repo_spec, quantized_copy, write_checkpoint

__all__ = [
    "CommitSpec",
    "Fault",
    "HubReplica",
    "LoggedRequest",
    "RepoSpec",
    "load_census",
    "load_repo_spec",
    "quantized_copy",
    "write_checkpoint",
]
