"""The reference tools, each run as its own process that imports nothing of hubdiff or of the benchmarks:
what a user of huggingface_hub (or hf-mem) runs, measured exactly as hubdiff's own commands are.

    python bench/reference.py gsm ENDPOINT REPO        model_info, then get_safetensors_metadata
    python bench/reference.py diff ENDPOINT OLD NEW    what a diff reads: each side's sha and headers
    python bench/reference.py local DIR                get_local_safetensors_metadata
    python bench/reference.py hf-mem ENDPOINT REPO     hf-mem's run, its requests sent to the replica
"""

from __future__ import annotations

import sys
import tempfile
from typing import Any


def gsm(endpoint: str, repo: str) -> None:
    import huggingface_hub.constants as constants
    from huggingface_hub import HfApi

    constants.HF_HUB_CACHE = tempfile.mkdtemp()
    api = HfApi(endpoint=endpoint, token=False)
    api.get_safetensors_metadata(repo, revision=api.model_info(repo).sha)


def diff(endpoint: str, old: str, new: str) -> None:
    """By hand with huggingface_hub: each side's sha and headers, side by side."""
    from concurrent.futures import ThreadPoolExecutor

    import huggingface_hub.constants as constants
    from huggingface_hub import HfApi

    constants.HF_HUB_CACHE = tempfile.mkdtemp()
    api = HfApi(endpoint=endpoint, token=False)

    def read(source: str) -> Any:
        repo, _, revision = source.partition("@")
        sha = api.model_info(repo, revision=revision or None).sha
        return api.get_safetensors_metadata(repo, revision=sha)

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(read, (old, new)))


def local(folder: str) -> None:
    from huggingface_hub import get_local_safetensors_metadata

    get_local_safetensors_metadata(folder)


def hf_mem(endpoint: str, repo: str) -> None:
    import importlib

    import httpx2

    hf_mem_run = importlib.import_module("hf_mem.run")
    target = httpx2.URL(endpoint)

    class ToReplica(httpx2.AsyncHTTPTransport):
        """hf-mem has the Hub's host written into its code: its requests go to the replica instead."""

        async def handle_async_request(self, request: Any) -> Any:
            request.url = request.url.copy_with(scheme=target.scheme, host=target.host, port=target.port)
            return await super().handle_async_request(request)

    original = httpx2.AsyncClient

    def client(**kwargs: Any) -> Any:
        kwargs.pop("http2", None)
        return original(transport=ToReplica(), **kwargs)

    hf_mem_run.httpx2.AsyncClient = client
    hf_mem_run.run(repo)


TOOLS = {"gsm": gsm, "diff": diff, "local": local, "hf-mem": hf_mem}

if __name__ == "__main__":
    TOOLS[sys.argv[1]](*sys.argv[2:])
