"""The embedded example: zai-org/GLM-5, GLM-5.3 and GLM-5.3-Flash as the founding comparison describes them.

GLM-5 and GLM-5.3 carry the real released configs and the real GLM-5.1 tensor census (GLM-5.3 with
indexer tensors only in its 21 "full" indexer layers and the MTP layer). GLM-5.3-Flash is built from
the published description; its config spells keys as the Kimi-K3 and DeepSeek-V4-Flash configs do.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from .replica import HubReplica
from .specs import RepoSpec, load_repo_spec

EXAMPLE_REPOS = ("zai-org/GLM-5", "zai-org/GLM-5.3", "zai-org/GLM-5.3-Flash")


def example_dir() -> Path:
    return Path(str(files("hubdiff.testing") / "example"))


def example_specs() -> list[RepoSpec]:
    root = example_dir()
    return [load_repo_spec(root / repo.split("/")[1] / "repo.yaml") for repo in EXAMPLE_REPOS]


def example_hub() -> HubReplica:
    """A started replica serving the example repos (stop it, or use it as a context manager)."""
    hub = HubReplica().start()
    for spec in example_specs():
        hub.add(spec)
    return hub
