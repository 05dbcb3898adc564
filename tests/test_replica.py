"""The replica answers huggingface_hub's own client the way the Hub does."""

import json
from pathlib import Path

import pytest
from huggingface_hub import HfApi, hf_hub_download
from huggingface_hub.errors import (
    GatedRepoError,
    HfHubHTTPError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

from hubdiff.testing import CommitSpec, Fault, RepoSpec


def small_repo(repo_id="org/tiny", **kw):
    tensors = [(f"layers.{i}.w", "BF16", (4, 4)) for i in range(6)]
    return RepoSpec(
        repo_id,
        [
            CommitSpec({"config.json": b'{"hidden_size": 4}'}, tensors, shards=3, title="one"),
            CommitSpec({"config.json": b'{"hidden_size": 8}'}, tensors, shards=2, title="two"),
        ],
        **kw,
    )


def test_model_info_commits_refs_tree_through_hfapi(hub):
    first, second = hub.add(small_repo())
    api = HfApi(endpoint=hub.endpoint, token=False)
    info = api.model_info("org/tiny", files_metadata=True)
    assert info.sha == second
    sizes = {s.rfilename: s.size for s in info.siblings}
    assert set(sizes) == {
        "config.json",
        "model.safetensors.index.json",
        "model-00001-of-00002.safetensors",
        "model-00002-of-00002.safetensors",
    }
    assert api.model_info("org/tiny", revision=first).sha == first
    assert [c.commit_id for c in api.list_repo_commits("org/tiny")] == [second, first]
    refs = api.list_repo_refs("org/tiny")
    assert [(b.name, b.target_commit) for b in refs.branches] == [("main", second)]
    tree = {f.path: f.size for f in api.list_repo_tree("org/tiny", revision=first)}
    assert "model-00003-of-00003.safetensors" in tree


def test_hf_hub_download_and_typed_errors(hub, tmp_path):
    sha = hub.add(small_repo())[-1]
    path = hf_hub_download(
        "org/tiny", "config.json", revision=sha, endpoint=hub.endpoint, cache_dir=tmp_path, token=False
    )
    assert json.loads(Path(path).read_text()) == {"hidden_size": 8}
    api = HfApi(endpoint=hub.endpoint, token=False)
    with pytest.raises(HfHubHTTPError) as anonymous:  # the Hub's bare 401, typed by the library on https only
        api.model_info("org/missing")
    assert (
        anonymous.value.response.status_code == 401 and "X-Error-Code" not in anonymous.value.response.headers
    )
    with pytest.raises(RepositoryNotFoundError):
        HfApi(endpoint=hub.endpoint, token="hf_reader").model_info("org/missing")
    with pytest.raises(RevisionNotFoundError):
        api.model_info("org/tiny", revision="nope")
    hub.add(small_repo("org/gated", gated=True))
    with pytest.raises(GatedRepoError):
        hf_hub_download("org/gated", "config.json", endpoint=hub.endpoint, cache_dir=tmp_path, token=False)


def test_ranges_206_416_and_the_request_log(hub):
    from huggingface_hub.utils import get_session

    hub.redirects = False  # the file route itself (the Hub's redirects: tests/test_dialect.py)
    sha = hub.add(small_repo())[-1]
    url = f"{hub.endpoint}/org/tiny/resolve/{sha}/model-00001-of-00002.safetensors"
    r = get_session().get(url, headers={"Range": "bytes=0-7"})
    assert r.status_code == 206 and len(r.content) == 8
    size = int(r.headers["Content-Range"].split("/")[1])
    assert r.headers["X-Repo-Commit"] == sha and r.headers["ETag"].startswith('"')
    tail = get_session().get(url, headers={"Range": "bytes=-4"})
    assert tail.status_code == 206 and tail.content == b"\0" * 4
    assert get_session().get(url, headers={"Range": f"bytes={size}-"}).status_code == 416
    assert [(e.range, e.status, e.bytes_sent) for e in hub.log] == [
        ("bytes=0-7", 206, 8),
        ("bytes=-4", 206, 4),
        (f"bytes={size}-", 416, 0),
    ]


def test_listing_pages_with_absolute_links(hub):
    hub.page_size = 2
    for i in range(5):
        hub.add(small_repo(f"org/m{i}"))
    hub.add(small_repo("other/x"))
    api = HfApi(endpoint=hub.endpoint, token=False)
    listed = [m.id for m in api.list_models(author="org", expand=["sha", "lastModified"])]
    assert listed == [f"org/m{i}" for i in range(5)]
    assert sum(1 for e in hub.log if e.path.startswith("/api/models?")) == 3


def test_push_while_running_and_faults(hub):
    hub.add(small_repo())
    api = HfApi(endpoint=hub.endpoint, token=False)
    before = api.model_info("org/tiny").sha
    after = hub.push("org/tiny", CommitSpec({"config.json": b"{}"}, title="three"))
    assert api.model_info("org/tiny").sha == after != before
    hub.add_fault(Fault("/api/models/org/tiny", status=503, retry_after="3", times=1))
    with pytest.raises(Exception) as info:
        api.model_info("org/tiny")
    assert info.value.response.status_code == 503
    assert info.value.response.headers["Retry-After"] == "3"
    assert api.model_info("org/tiny").sha == after  # the fault was used up
