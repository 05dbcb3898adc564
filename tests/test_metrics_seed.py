"""The founding comparison's numbers, recomputed from the embedded GLM-5.3 and GLM-5.3-Flash.

Every expected value is written out as the arithmetic that produces it from the configs and the
published description, not copied from hubdiff's output.
"""

import shutil

import pytest

from hubdiff._metrics.compute import compute_metrics
from hubdiff._metrics.options import MetricsOptions
from hubdiff._source import HubSettings, Sources, parse_source
from hubdiff._source.cache import SnapshotCache
from hubdiff.units import human_count


@pytest.fixture(scope="module")
def snapshots(example_hub, _example_cache_seed, tmp_path_factory):
    cache = tmp_path_factory.mktemp("c")
    shutil.copytree(_example_cache_seed, cache, dirs_exist_ok=True)  # read once for the session
    sources = Sources(HubSettings(endpoint=example_hub.endpoint), SnapshotCache(cache))
    return {
        repo.split("/")[1]: sources.open(parse_source(repo))
        for repo in ("zai-org/GLM-5", "zai-org/GLM-5.3", "zai-org/GLM-5.3-Flash")
    }


def fp8(snapshot, **kw):
    return compute_metrics(snapshot, MetricsOptions(kv_dtype="fp8", **kw))


def test_kv_bytes_per_token_fp8(snapshots):
    glm = fp8(snapshots["GLM-5.3"]).kv
    flash = fp8(snapshots["GLM-5.3-Flash"]).kv
    assert glm.bytes_per_token == 78 * (512 + 64) + 21 * 128 == 47_616
    assert flash.bytes_per_token == 11 * 512 + 11 * 128 // 4 == 5_984
    scan_only = fp8(snapshots["GLM-5.3-Flash"], indexer_pooling="scan").kv
    assert scan_only.bytes_per_token == 11 * 512 + 11 * 128 == 7_040
    assert f"{glm.bytes_per_token / flash.bytes_per_token:.1f}" == "8.0"
    assert f"{glm.bytes_per_token / scan_only.bytes_per_token:.1f}" == "6.8"
    assert f"{flash.bytes_per_token / 1000:.1f} KB" == "6.0 KB"


def test_memory_at_one_million_tokens(snapshots):
    tokens = 1_048_576
    glm = fp8(snapshots["GLM-5.3"], context=tokens).kv
    flash = fp8(snapshots["GLM-5.3-Flash"], context=tokens).kv
    assert glm.bytes_at_context == 47_616 * tokens
    assert f"{glm.bytes_at_context / 1e9:.1f}" == "49.9"
    kda_state = 34 * (32 * 128 * 128 * 4)  # 34 KDA layers, 32 heads of 128 x 128 float32
    kda_conv = 34 * ((4 - 1) * 3 * 32 * 128 * 2)  # short conv (kernel 4) over q, k, v in bf16
    assert flash.state_bytes_per_sequence == kda_state + kda_conv
    assert f"{flash.state_bytes_per_sequence / 1e9:.2f}" == "0.07"
    assert flash.bytes_at_context == 5_984 * tokens + kda_state + kda_conv
    assert f"{5_984 * tokens / 1e9:.1f}" == "6.3"


def test_flash_architecture_facts(snapshots):
    m = fp8(snapshots["GLM-5.3-Flash"])
    assert m.attention_layers() == {"dsa": 11, "kda": 34}
    kda_layers = [x.index for x in m.layers if x.attention == "kda"]
    assert all((i + 1) % 4 for i in kda_layers)  # 3:1 -- every fourth layer (1-based) is DSA
    assert m.experts["routed_per_layer"] == 288 and m.experts["shared_per_layer"] == 1
    assert m.routed_expert_params == 3 * 4096 * 2048 == 25_165_824
    assert human_count(m.routed_expert_params) == "25.17M"
    hc_per_layer = 2 * ((2 + 4) * 4 * (4 * 4096) + (2 + 4) * 4 + 3)  # attn and ffn: fn, base, scale
    hc_head = 4 * (4 * 4096) + 4 + 1
    assert m.params.by_component["hyper_connections"] == 45 * hc_per_layer + hc_head
    assert round(m.params.by_component["hyper_connections"] / 1e6) == 35
    d, mlp = 1280, 6528
    tower = d * 3 * 2 * 14 * 14 + 32 * 32 * d + 24 * (2 * d + 3 * d * d + d * d + 2 * mlp * d) + d
    assert m.params.by_component["vision_tower"] == tower
    assert f"{tower / 1e9:.2f}B" == "0.56B"
    assert m.kv.groups[0].name == "mla_latent" and m.kv.groups[0].bytes_per_layer == 512  # rope dim 0
    assert not m.checks


def test_glm53_indexer(snapshots):
    m = fp8(snapshots["GLM-5.3"])
    assert m.indexer_summary() == {"own": 21, "shared": 57, "layers_with_indexer_tensors": 22}
    glm5 = fp8(snapshots["GLM-5"])
    assert glm5.indexer_summary() == {"own": 78, "shared": 0, "layers_with_indexer_tensors": 79}
    assert not m.checks and not glm5.checks
