"""Where the cache lives, and what every cached result depends on besides its input: light enough for
a warm run to find its entry before importing anything that computes one.

Every entry lives under the endpoint it was read from (``hubs/<host>-<digest>/``): a repo id names
different things on the Hub, a mirror and a local replica, so what one served is never answered for
another.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from .. import __version__


def default_cache_dir() -> Path:
    """``$HUBDIFF_CACHE``, else ``$HF_HOME/hubdiff``, else ``~/.cache/huggingface/hubdiff``."""
    if os.environ.get("HUBDIFF_CACHE"):
        return Path(os.environ["HUBDIFF_CACHE"])
    hf_home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "huggingface"
    )
    return Path(hf_home) / "hubdiff"


def endpoint_origin(endpoint: str) -> str:
    """The endpoint as one spelling of the server it reaches: scheme and host in lower case (IDNA for a
    host that is not ASCII), no default port, no credentials, no trailing slash."""
    from urllib.parse import urlsplit

    parts = urlsplit(endpoint.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".")
    with contextlib.suppress(UnicodeError):  # kept as it is: the digest still tells it apart
        host = host.encode("idna").decode("ascii")
    port = None
    with contextlib.suppress(ValueError):
        port = parts.port
    default = {"http": 80, "https": 443}.get(scheme)
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and port != default:
        netloc += f":{port}"
    return f"{scheme}://{netloc}{parts.path.rstrip('/')}"


def endpoint_folder(endpoint: str) -> str:
    """The cache folder's name for an endpoint: its host, readable, and a digest of its whole origin."""
    origin = endpoint_origin(endpoint)
    host = re.sub(r"[^a-z0-9.-]", "_", origin.split("://", 1)[-1].split("/", 1)[0].lower())[:64]
    return f"{host or 'none'}-{hashlib.sha256(origin.encode()).hexdigest()[:16]}"


def hub_folder(root: Path, endpoint: str) -> Path:
    """The cache folder of ``endpoint``'s entries under ``root``."""
    return root / "hubs" / endpoint_folder(endpoint)


@cache
def code_versions() -> list[Any]:
    """The code a cached result was computed by: hubdiff's release, and each of its modules' size and
    modification time (an editable install changes its code without changing its release), and
    transformers' package file (a stat; reading its metadata costs ~50 ms)."""
    package = Path(__file__).resolve().parents[1]
    modules = []
    folders = [package]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                if entry.is_dir() and entry.name != "__pycache__":
                    folders.append(Path(entry.path))
                elif entry.name.endswith(".py"):
                    stat = entry.stat()
                    modules.append((os.path.relpath(entry.path, package), stat.st_size, stat.st_mtime_ns))
    transformers = None
    spec = find_spec("transformers")
    if spec is not None and spec.origin:
        stat = os.stat(spec.origin)
        transformers = [spec.origin, stat.st_size, stat.st_mtime_ns]
    return [__version__, hashlib.sha256(repr(sorted(modules)).encode()).hexdigest(), transformers]
