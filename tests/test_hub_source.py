"""Snapshots over the replica through the real huggingface_hub client."""

import json
import time

import pytest

from hubdiff._source.build import FIRST_GUESS_PER_ENTRY, header_hints
from hubdiff._source.hub import HubReader
from hubdiff._source.layout import NameSizes
from hubdiff._source.local import load_local
from hubdiff.errors import SourceError
from hubdiff.testing import CommitSpec, Fault, RepoSpec, load_census, write_checkpoint

from .conftest import DATA, fast_settings

QWEN_VL = DATA / "Qwen3-VL-30B-A3B-Instruct"


def qwen_repo(repo_id="Qwen/VL", shards=13):
    tensors = load_census((QWEN_VL / "tensor_census.tsv").read_text())
    return RepoSpec(
        repo_id, [CommitSpec({"config.json": (QWEN_VL / "config.json").read_bytes()}, tensors, shards)]
    )


def expected_header_ranges(
    files: dict, index: str = "model.safetensors.index.json"
) -> list[tuple[str, str, int]]:
    """(file, Range, bytes sent) of every header request, worked out from the index and the real headers:
    the first shard's range from the index's size (it is asked beside the index), every other from its
    names in the index and what the first header showed."""
    weight_map = json.loads(files[index].head)["weight_map"]
    shards = sorted(set(weight_map.values()))
    hints = header_hints(NameSizes(weight_map, index), shards)
    out = []
    per_entry = FIRST_GUESS_PER_ENTRY
    for i, shard in enumerate(shards):
        f = files[shard]
        # twice the shard's share of the index, and the margin: 8 + ceil(2 x index bytes / shards) + 256
        first = (
            8 + -(-2 * files[index].size // len(shards)) + 256 if i == 0 else hints[shard].estimate(per_entry)
        )
        out.append((shard, f"bytes=0-{first - 1}", min(first, f.size)))
        if first < len(f.head):
            out.append((shard, f"bytes={first}-{len(f.head) - 1}", len(f.head) - first))
        if i == 0:
            per_entry = hints[shard].per_entry(len(f.head))
    return sorted(out)


def test_the_first_range_is_twice_its_share_of_the_index_and_bounded():
    from hubdiff._source.build import FIRST_RANGE_CAP, first_range_before_index

    # the bench repo's index, 17,391,277 bytes over 160 shards: 8 + ceil(2 x 17,391,277 / 160) + 256
    assert first_range_before_index(17_391_277, 160) == 8 + 217_391 + 256
    # a listing that says the index is 250 MB over two shards asks 16 MiB, not 250 MB
    assert first_range_before_index(250_000_000, 2) == FIRST_RANGE_CAP == 16 * 1024 * 1024


def logged_header_ranges(hub) -> list[tuple[str, str, int]]:
    return sorted(
        (e.path.rsplit("/", 1)[-1], e.range, e.bytes_sent) for e in hub.log if e.path.endswith(".safetensors")
    )


def test_hub_snapshot_equals_local_copy_and_reads_only_headers(hub, reader, tmp_path):
    hub.redirects = False  # one route per file, to count each read's bytes (the redirects: test_dialect.py)
    spec = qwen_repo()
    sha = hub.add(spec)[0]
    snapshot = reader.snapshot("Qwen/VL")
    assert snapshot.sha == sha and snapshot.revision == "main"
    assert snapshot.commit_date == "2026-01-01T00:00:00Z"
    assert len(snapshot.tensors) == 882
    assert sum(snapshot.parameters_by_dtype().values()) == 31_070_754_032
    local = load_local(str(write_checkpoint(tmp_path / "copy", spec.commits[0]) and tmp_path / "copy"))
    assert [t[:3] for t in snapshot.tensors] == [t[:3] for t in local.tensors]
    assert snapshot.config == local.config
    # the log: one model_info, config, index, and one range per shard: its header and a margin
    commit = hub.repos["Qwen/VL"].commits[sha]
    header_bytes = {path: len(f.head) for path, f in commit.files.items() if path.endswith(".safetensors")}
    small = {path: f.size for path, f in commit.files.items() if path.endswith(".json")}
    ranges = logged_header_ranges(hub)
    assert ranges == expected_header_ranges(commit.files)
    assert len(ranges) == len(header_bytes)  # one range per shard: every estimate covered its header
    header_sent = sum(sent for _, _, sent in ranges)
    files_sent = sum(e.bytes_sent for e in hub.log if not e.path.startswith("/api/"))
    assert files_sent == header_sent + sum(small.values())
    # the first shard's range is asked beside the index (twice its share of the index, as worked out
    # above); every other is sized by the index's names and the first header, within the margin
    first = min(header_bytes)
    after_first = sum(sent for file, _, sent in ranges if file != first)
    over_read = after_first - sum(n for file, n in header_bytes.items() if file != first)
    assert 0 <= over_read <= 0.10 * sum(header_bytes.values()), over_read


def test_second_run_on_same_sha_costs_one_request_and_a_sha_costs_none(hub, reader, cache):
    sha = hub.add(qwen_repo())[0]
    first = reader.snapshot("Qwen/VL")
    hub.clear()
    again = reader.snapshot("Qwen/VL")
    assert again == first
    assert [e.path.split("?")[0] for e in hub.log] == ["/api/models/Qwen/VL/revision/main"]
    hub.clear()
    assert reader.snapshot("Qwen/VL", sha).tensors == first.tensors
    assert hub.log == []
    offline = HubReader(fast_settings(hub.endpoint), cache).snapshot("Qwen/VL", "main", offline=True)
    assert offline.sha == sha and offline.tensors == first.tensors and hub.log == []
    # what this endpoint served is not another endpoint's, offline or not
    with pytest.raises(SourceError, match="offline: no cached sha"):
        HubReader(fast_settings("http://127.0.0.1:9"), cache).snapshot("Qwen/VL", "main", offline=True)
    with pytest.raises(SourceError, match="is not in the cache"):
        HubReader(fast_settings("http://127.0.0.1:9"), cache).snapshot("Qwen/VL", sha, offline=True)


def test_offline_says_what_is_missing(cache):
    reader = HubReader(fast_settings("http://127.0.0.1:9"), cache)
    with pytest.raises(SourceError, match=r"Qwen/VL@main: offline: no cached sha for this revision"):
        reader.snapshot("Qwen/VL", "main", offline=True)
    with pytest.raises(SourceError, match=r"offline: snapshot of commit a{40} is not in the cache"):
        reader.snapshot("Qwen/VL", "a" * 40, offline=True)


def test_revisions_tags_and_pull_requests_pin_to_one_sha(hub, reader):
    spec = qwen_repo()
    spec.tags = {"v1.0": 0}
    first = hub.add(spec)[0]
    tensors = [(f"w.{i}", "F16", (2,)) for i in range(3)]
    pr_sha = hub.push("Qwen/VL", CommitSpec({"config.json": b'{"pr": 1}'}, tensors), pr=1)
    snap = reader.snapshot("Qwen/VL", "refs/pr/1")
    assert snap.sha == pr_sha and snap.config == {"pr": 1} and len(snap.tensors) == 3
    assert all(pr_sha in e.path for e in hub.log if "/resolve/" in e.path)
    assert reader.snapshot("Qwen/VL", "v1.0").sha == first


def test_single_file_and_subfolder_layouts(hub, reader):
    tensors = [(f"blocks.{i}.w", "BF16", (8, 8)) for i in range(4)]
    hub.add(RepoSpec("org/single", [CommitSpec({"config.json": b"{}"}, tensors, shards=1)]))
    single = reader.snapshot("org/single")
    assert {t.file for t in single.tensors} == {"model.safetensors"}
    files = {
        "model_index.json": b'{"_class_name": "FluxPipeline"}',
        "transformer/config.json": b'{"num_layers": 4}',
    }
    commit = CommitSpec(
        files, tensors, shards=2, folder="transformer", weights_name="diffusion_pytorch_model"
    )
    hub.add(RepoSpec("org/diffusers", [commit]))
    sub = reader.snapshot("org/diffusers")
    assert sub.config == {"_class_name": "FluxPipeline"}
    assert {t.file for t in sub.tensors} == {
        "transformer/diffusion_pytorch_model-00001-of-00002.safetensors",
        "transformer/diffusion_pytorch_model-00002-of-00002.safetensors",
    }
    assert [t.name for t in sub.tensors] == [f"blocks.{i}.w" for i in range(4)]


def test_two_hundred_thousand_tensors_in_160_shards(hub, reader):
    hub.redirects = False  # one route per file, to count each read's bytes (the redirects: test_dialect.py)
    tensors = [
        (f"model.layers.{layer}.mlp.experts.{e}.{w}.weight", "BF16", (16, 8))
        for layer in range(65)
        for e in range(1024)
        for w in ("gate_proj", "up_proj", "down_proj")
    ]
    hub.add(RepoSpec("big/moe", [CommitSpec({"config.json": b"{}"}, tensors, shards=160)]))
    start = time.perf_counter()
    snapshot = reader.snapshot("big/moe")
    elapsed = time.perf_counter() - start
    assert len(snapshot.tensors) == 199_680
    assert len({t.file for t in snapshot.tensors}) == 160
    assert [p.name for p in snapshot.patterns] == [
        "model.layers.{0-64}.mlp.experts.{0-1023}.down_proj.weight",
        "model.layers.{0-64}.mlp.experts.{0-1023}.gate_proj.weight",
        "model.layers.{0-64}.mlp.experts.{0-1023}.up_proj.weight",
    ]
    commit = next(iter(hub.repos["big/moe"].commits.values()))
    ranges = logged_header_ranges(hub)
    assert ranges == expected_header_ranges(commit.files)
    # model info, the Hub's parameter count, config, index, and one range per shard
    assert len(ranges) == 160 and len(hub.log) == 160 + 4
    assert snapshot.hub_parameters == {"BF16": 199_680 * 16 * 8} == snapshot.parameters_by_dtype()
    header_bytes = sum(len(f.head) for p, f in commit.files.items() if p.endswith(".safetensors"))
    over_read = sum(sent for _, _, sent in ranges) - header_bytes
    assert 0 <= over_read <= 0.02 * header_bytes, over_read
    print(f"199,680 tensors / 160 shards: {elapsed:.2f} s")  # measured in bench/, not asserted


def test_a_failed_run_leaves_the_cache_as_it_was(hub, reader, cache):
    hub.add(qwen_repo())
    hub.add_fault(Fault("model-00005-of-00013.safetensors", status=500))
    with pytest.raises(SourceError, match=r"model-00005-of-00013\.safetensors: HTTP 500 after 3 attempts"):
        reader.snapshot("Qwen/VL")
    assert not cache.root.exists() or not any(cache.root.rglob("*.json"))


def test_index_json_is_cached_nowhere_else(hub, reader, tmp_path, monkeypatch):
    """The HF cache is not written: hubdiff reads files by range into memory, its own cache holds the result."""
    import os

    hub.add(qwen_repo())
    reader.snapshot("Qwen/VL")
    hf_home = os.environ["HF_HOME"]
    assert not any(p.name.endswith(".index.json") for p in __import__("pathlib").Path(hf_home).rglob("*"))


def test_json_form_round_trips(hub, reader):
    hub.add(qwen_repo())
    snapshot = reader.snapshot("Qwen/VL")
    from hubdiff.snapshot import Snapshot

    assert Snapshot.from_json(json.loads(snapshot.dumps())) == snapshot


# What a warm run never loads: the Hub client and transformers (~1 s), and what only computing figures,
# reading cached ones, serving flags or writing JSON need (each a few ms of a run that is otherwise the
# interpreter and a request)
NOT_WARM = (
    "transformers",
    "huggingface_hub",
    "orjson",
    "hubdiff._metrics.estimate",
    "hubdiff._metrics.unverified",
    "hubdiff._metrics.serving",
    "hubdiff._source.gguf_read",  # a Hub source is found to be GGUF by its read, not before it
    "hubdiff._source.hub",  # the cold reader, on huggingface_hub's client
    # a run whose output is replayed (cli/_replay.py) reads neither the snapshot nor the metrics cache
    "hubdiff.snapshot",
    "hubdiff._source.cache",
    "hubdiff._metrics.compute",
    "hubdiff._metrics.results",
    "hubdiff._render.text",
)


def test_a_warm_run_costs_one_plain_request_and_imports_neither_client_nor_transformers(hub, tmp_path):
    """Cached snapshot and metrics: one revision lookup, made without huggingface_hub, nothing computed."""
    import subprocess
    import sys

    hub.add(qwen_repo())
    cache = tmp_path / "cache"
    run = [
        sys.executable,
        "-m",
        "hubdiff",
        "metrics",
        "Qwen/VL",
        "--endpoint",
        hub.endpoint,
        "--cache-dir",
        str(cache),
    ]
    cold = subprocess.run(run, capture_output=True, text=True)
    assert cold.returncode == 0, cold.stderr
    hub.clear()
    code = (
        "import sys; from hubdiff.cli import main; code = main(sys.argv[1:]); "
        f"print(code, *[m for m in {NOT_WARM!r} if m in sys.modules], file=sys.stderr)"
    )
    warm = subprocess.run([sys.executable, "-c", code, *run[3:]], capture_output=True, text=True)
    assert warm.stdout == cold.stdout
    assert warm.stderr.splitlines()[-1] == "0", warm.stderr
    assert [(e.method, e.path) for e in hub.log] == [("GET", "/api/models/Qwen/VL/revision/main?expand=sha")]


def test_as_a_program_a_cold_read_leaves_trio_unimported(hub, tmp_path):
    """httpcore, under huggingface_hub's client, imports trio wherever it is installed (~40 ms of a cold
    run); hubdiff's command line never does, and ``main`` called with arguments by other code changes
    nothing of what its process imports."""
    import importlib.util
    import subprocess
    import sys

    hub.add(qwen_repo())
    installed = importlib.util.find_spec("trio") is not None
    answers = []
    for how in ("sys.argv[1:] = args; code = run()", "code = main(args)"):  # the command line; a caller
        cache = tmp_path / how[:4]
        args = ["metrics", "Qwen/VL", "--endpoint", hub.endpoint, "--cache-dir", str(cache)]
        code = (
            f"import sys; from hubdiff.cli import main, run; args = {args!r}; {how}; "
            "print(code, 'httpcore2' in sys.modules, 'trio._core' in sys.modules, file=sys.stderr)"
        )
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        answers.append(run.stderr.splitlines()[-1])
    assert answers == ["0 True False", f"0 True {installed}"]


def test_a_final_answer_to_the_warm_lookup_is_not_asked_again(hub, cache):
    from hubdiff._source import Sources, parse_source

    hub.add(qwen_repo())
    sources = Sources(fast_settings(hub.endpoint), cache)
    sources.open(parse_source("Qwen/VL"))
    hub.clear()
    hub.add_fault(Fault("/api/models/Qwen/VL", status=404, times=1))
    with pytest.raises(SourceError, match="HTTP 404"):
        sources.open(parse_source("Qwen/VL"))
    assert len(hub.log) == 1
    hub.add_fault(Fault("/api/models/Qwen/VL", status=503, times=1))
    assert sources.open(parse_source("Qwen/VL")).sha  # a retryable answer: the ordinary path asks again


def test_revisions_remembered_side_by_side_are_all_kept(cache):
    from hubdiff._threads import each_in_threads

    shas = {f"rev{i}": f"{i:040x}" for i in range(24)}
    each_in_threads(lambda rev: cache.remember_ref("org/x", rev, shas[rev]), list(shas), threads=8)
    assert cache.known_refs("org/x") == shas
