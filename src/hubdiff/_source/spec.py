"""What the user typed as a source: ``owner/name[@revision]`` on the Hub, or a folder on disk."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from ..errors import UsageError
from .repo_id import is_repo_id
from .settings import DEFAULT_ENDPOINT, MANY_SHARDS, STREAMS, HubSettings, usable_endpoint, usable_token

__all__ = [
    "DEFAULT_ENDPOINT",
    "MANY_SHARDS",
    "STREAMS",
    "HubSettings",
    "SourceSpec",
    "parse_source",
    "usable_endpoint",
    "usable_token",
]


class SourceSpec(NamedTuple):
    kind: str  # "hub" or "local"
    target: str  # repo id or folder path
    revision: str  # "main" by default; "local" for folders

    def __str__(self) -> str:
        return self.target if self.kind == "local" else f"{self.target}@{self.revision}"


def parse_source(text: str, revision: str | None = None) -> SourceSpec:
    """A folder if the text names one (or starts like a path), else a Hub repo with ``@revision``.

    ``hf://owner/name[@revision]`` and the Hub's web URLs are read by huggingface_hub's own parser
    (imported only for them: a plain repo id keeps the warm path free of it). ``revision`` is the
    hf CLI's ``--revision``: it may stand beside ``@revision`` only if the two agree.
    """
    if text.startswith(("hf://", "https://", "http://")):
        repo, in_text = _hub_uri(text)
    elif text.startswith((".", "/", "~")) or Path(text).is_dir():
        if revision is not None:
            raise UsageError(f"{text!r} is a folder: --revision names a revision on the Hub")
        return SourceSpec("local", os.path.expanduser(text), "local")
    else:
        repo, at, in_text = text.partition("@")
        if not is_repo_id(repo) or (at and not in_text):
            raise UsageError(f"{text!r} is neither a folder nor a Hub repo id (owner/name[@revision])")
    if revision is not None and in_text and revision != in_text:
        raise UsageError(f"{text!r} names revision {in_text!r} and --revision {revision!r}: give one")
    return SourceSpec("hub", repo, revision or in_text or "main")


def _hub_uri(text: str) -> tuple[str, str]:
    """The model repo and revision ('' for none) of an hf:// URI or a Hub web URL."""
    from huggingface_hub.errors import HfUriError
    from huggingface_hub.utils import parse_hf_uri

    try:
        uri = parse_hf_uri(text)
    except HfUriError:
        raise UsageError(
            f"{text!r} is not an hf:// URI of a model repo (hf://owner/name[@revision])"
        ) from None
    if uri.type != "model":
        raise UsageError(f"{text!r} is a {uri.type} repo: hubdiff reads model repos")
    if uri.path_in_repo:
        raise UsageError(f"{text!r} names a file in the repo: hubdiff reads a whole revision, drop the path")
    if not is_repo_id(uri.id) or "/" not in uri.id:
        raise UsageError(f"{text!r}: {uri.id!r} is not a Hub repo id (owner/name)")
    return uri.id, uri.revision or ""
