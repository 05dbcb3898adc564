"""The embedded example: zai-org/GLM-5, GLM-5.3 and GLM-5.3-Flash as the founding comparison describes them.

GLM-5 and GLM-5.3 carry the real released configs and the real GLM-5.1 tensor census (GLM-5.3 with
indexer tensors only in its 21 "full" indexer layers and the MTP layer). GLM-5.3-Flash is built from
the published description; its config spells keys as the Kimi-K3 and DeepSeek-V4-Flash configs do.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from .replica import HubReplica, RateLimits
from .specs import RepoSpec, load_repo_spec

EXAMPLE_REPOS = ("zai-org/GLM-5", "zai-org/GLM-5.3", "zai-org/GLM-5.3-Flash")


def example_dir() -> Path:
    return Path(str(files("hubdiff.testing") / "example"))


def example_specs() -> list[RepoSpec]:
    root = example_dir()
    return [load_repo_spec(root / repo.split("/")[1] / "repo.yaml") for repo in EXAMPLE_REPOS]


def example_hub() -> HubReplica:
    """A started replica serving the example repos (stop it, or use it as a context manager).

    Its budgets are the Hub's largest plan's (hub-docs rate-limits.md, "Enterprise Plus": 10,000 API
    calls and 100,000 resolves per 5 minutes): one cold read of GLM-5 is some 300 resolves, and a
    session or a demo reads it many times, which the anonymous 3,000 would soon slow down."""
    hub = HubReplica(rate_limits=RateLimits(api=10_000, resolvers=100_000, pages=1_000)).start()
    for spec in example_specs():
        hub.add(spec)
    return hub
