"""Reading a 160-shard, 199,680-tensor checkpoint's headers from the replica.

    python bench/fetch.py [hubdiff|huggingface_hub|hf-mem]

Each tool runs in its own process (peak RSS is per process); with no argument all three run and the
ratios are printed against huggingface_hub's own ``get_safetensors_metadata``. hf-mem (optional,
``pip install hf-mem``) reaches the replica through a transport that rewrites its fixed Hub host.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import BIG_REPO, RemoteReplica, big_replica, measure, report


def run_one(tool: str) -> dict:
    hub = RemoteReplica(big_replica)
    try:
        if tool == "hubdiff":
            from hubdiff._source import HubSettings
            from hubdiff._source.hub import HubReader

            reader = HubReader(HubSettings(endpoint=hub.endpoint))  # no cache: every header is read
            return measure("hubdiff (HubReader.snapshot)", lambda: reader.snapshot(BIG_REPO), hub)
        if tool == "huggingface_hub":
            from huggingface_hub import HfApi

            api = HfApi(endpoint=hub.endpoint, token=False)
            cache = tempfile.mkdtemp()

            def fetch() -> None:
                sha = api.model_info(BIG_REPO).sha
                import huggingface_hub.constants as constants

                constants.HF_HUB_CACHE = cache
                api.get_safetensors_metadata(BIG_REPO, revision=sha)

            return measure("huggingface_hub get_safetensors_metadata", fetch, hub)
        if tool == "hf-mem":
            import importlib

            import httpx2

            hf_mem_run = importlib.import_module("hf_mem.run")

            target = httpx2.URL(hub.endpoint)

            class ToReplica(httpx2.AsyncHTTPTransport):
                async def handle_async_request(self, request):  # type: ignore[no-untyped-def]
                    request.url = request.url.copy_with(
                        scheme=target.scheme, host=target.host, port=target.port
                    )
                    return await super().handle_async_request(request)

            original = httpx2.AsyncClient

            def client(**kwargs):  # type: ignore[no-untyped-def]
                kwargs.pop("http2", None)
                return original(transport=ToReplica(), **kwargs)

            hf_mem_run.httpx2.AsyncClient = client  # type: ignore[attr-defined]
            return measure("hf-mem 0.5.6 (parameters and memory)", lambda: hf_mem_run.run(BIG_REPO), hub)
        raise SystemExit(f"unknown tool {tool}")
    finally:
        hub.stop()


def main() -> None:
    if len(sys.argv) > 1:
        print(json.dumps(run_one(sys.argv[1])))
        return
    rows = []
    for tool in ("huggingface_hub", "hubdiff", "hf-mem"):
        done = subprocess.run([sys.executable, __file__, tool], capture_output=True, text=True)
        if done.returncode != 0:
            print(
                f"{tool}: not measured ({done.stderr.strip().splitlines()[-1] if done.stderr.strip() else 'failed'})"
            )
            continue
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    report(rows, "huggingface_hub get_safetensors_metadata")


if __name__ == "__main__":
    main()
