"""New releases: discover rules find new repos of a family in the listings the watch already fetches,
compare each with its closest pinned sibling, recognise quantized copies, and skip what has no weights."""

import json
import os
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from hubdiff._baseline import load_baseline
from hubdiff._render.headline import headline
from hubdiff.errors import BaselineError
from hubdiff.testing import CommitSpec, RepoSpec, quantized_copy
from hubdiff.watch import run_watch

from .test_watch import record, sources_for, watch_cli


def model(layers: int, hidden: int, *, window: bool = False, **extra) -> CommitSpec:
    """A small Llama-like model; ``window`` makes it Mistral, every layer sliding-window."""
    config = {
        "model_type": "llama",
        "hidden_size": hidden,
        "intermediate_size": 2 * hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": 512,
        "max_position_embeddings": 4096,
        **extra,
    }
    if window:
        config |= {"model_type": "mistral", "sliding_window": 1024}
    tensors = [
        ("model.embed_tokens.weight", "BF16", (512, hidden)),
        ("lm_head.weight", "BF16", (512, hidden)),
    ]
    tensors.append(("model.norm.weight", "BF16", (hidden,)))
    for i in range(layers):
        p = f"model.layers.{i}"
        tensors += [
            (f"{p}.self_attn.q_proj.weight", "BF16", (hidden, hidden)),
            (f"{p}.self_attn.k_proj.weight", "BF16", (hidden // 2, hidden)),
            (f"{p}.self_attn.v_proj.weight", "BF16", (hidden // 2, hidden)),
            (f"{p}.self_attn.o_proj.weight", "BF16", (hidden, hidden)),
            (f"{p}.mlp.gate_proj.weight", "BF16", (2 * hidden, hidden)),
            (f"{p}.mlp.up_proj.weight", "BF16", (2 * hidden, hidden)),
            (f"{p}.mlp.down_proj.weight", "BF16", (hidden, 2 * hidden)),
            (f"{p}.input_layernorm.weight", "BF16", (hidden,)),
            (f"{p}.post_attention_layernorm.weight", "BF16", (hidden,)),
        ]
    return CommitSpec({"config.json": json.dumps(config).encode()}, tensors, shards=2)


def family_file(path: Path, rules: list[dict]) -> Path:
    data = yaml.safe_load(path.read_text())
    data["discover"] = rules
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.fixture
def family(hub, tmp_path):
    """acme's Nova family: Nova-S (4 layers, 64 wide) and Nova-L (8 layers, 128 wide), pinned."""
    hub.add(RepoSpec("acme/Nova-S", [model(4, 64)]))
    hub.add(RepoSpec("acme/Nova-L", [model(8, 128)]))
    sources = sources_for(hub, tmp_path)
    path = tmp_path / "nova.yaml"
    record(path, "nova", ["acme/Nova-S", "acme/Nova-L"], sources)
    rules = [{"owner": "acme", "match": "Nova-*", "exclude": ["*-GGUF"]}]
    return family_file(path, rules), sources


def test_new_releases_are_compared_with_their_closest_sibling(hub, tmp_path, family):
    path, sources = family
    hub.add(RepoSpec("acme/Nova-L-Instruct", [model(8, 128, rope_theta=1e6)]))  # closest: Nova-L
    hub.add(
        RepoSpec("acme/Nova-S-Long", [model(4, 64, window=True)])
    )  # every layer windowed; still nearest Nova-S
    hub.add(RepoSpec("acme/Nova-S-FP8", [quantized_copy(model(4, 64), "fp8", block=32)]))
    hub.add(RepoSpec("acme/Nova-L-GGUF", [CommitSpec({"nova-l.Q4_K_M.gguf": b"GGUF" + bytes(60)})]))
    hub.add(RepoSpec("acme/Nova-S-q4", [CommitSpec({"README.md": b"#", "nova.Q4_0.gguf": b"GGUF"})]))
    hub.add(
        RepoSpec(
            "acme/Nova-S-lora", [CommitSpec({"adapter_config.json": b"{}"}, [("a.lora_A", "BF16", (8, 64))])]
        )
    )
    hub.add(RepoSpec("acme/Orion-7B", [model(4, 64)]))  # matches no rule
    hub.add(RepoSpec("other/Nova-S", [model(4, 64)]))  # another owner
    hub.clear()

    outcome = run_watch([path], sources, output_dir=tmp_path / "reports")

    paths = [e.path for e in hub.log]
    for untouched in ("Orion-7B", "Nova-L-GGUF", "other/Nova-S", "/acme/Nova-S/", "/acme/Nova-L/"):
        assert not any(untouched in p for p in paths), (untouched, paths)
    assert sum(p.startswith("/api/models?") for p in paths) == 1  # one listing of acme
    by_repo = {r.title.split("@")[0]: r for r in outcome.results["nova"]}
    assert sorted(by_repo) == [
        "acme/Nova-L-Instruct",
        "acme/Nova-S-FP8",
        "acme/Nova-S-Long",
        "acme/Nova-S-lora",
        "acme/Nova-S-q4",
    ]
    assert {r: x.status for r, x in by_repo.items()} == {
        "acme/Nova-L-Instruct": "new release",
        "acme/Nova-S-FP8": "new release",
        "acme/Nova-S-Long": "new release",
        "acme/Nova-S-lora": "skipped",
        "acme/Nova-S-q4": "skipped",
    }
    assert by_repo["acme/Nova-L-Instruct"].sibling == "acme/Nova-L"
    assert by_repo["acme/Nova-S-Long"].sibling == "acme/Nova-S"
    assert (
        "4 of 4 layers differ in kind, hidden size 64, 213.57K parameters both"
        in by_repo["acme/Nova-S-Long"].note
    )
    assert by_repo["acme/Nova-L-Instruct"].variant is None and by_repo["acme/Nova-S-Long"].variant is None
    assert "rope_theta" in headline(by_repo["acme/Nova-L-Instruct"])
    assert by_repo["acme/Nova-S-lora"].note == "an adapter (adapter_config.json), not a model of its own"
    assert by_repo["acme/Nova-S-q4"].note == "GGUF only (1 .gguf files, no safetensors weights)"

    fp8 = by_repo["acme/Nova-S-FP8"]
    assert fp8.sibling == "acme/Nova-S" and fp8.variant is not None and fp8.variant.kind == "quantized"
    v = fp8.variant
    # the BF16 linear weights (4 layers x 7 projections) became FP8, one F32 scale per 32x32 tile
    linear = 4 * (64 * 64 * 2 + 32 * 64 * 2 + 128 * 64 * 3)
    tiles = 4 * (2 * 2 * 2 + 1 * 2 * 2 + 4 * 2 * 2 + 2 * 4)
    assert v.new_dtypes == {"BF16": v.old_dtypes["BF16"] - linear, "F32": tiles, "F8_E4M3": linear}
    # two bytes an element become one, and the scales add four bytes a tile
    assert (
        v.old_bytes - v.new_bytes == linear - 4 * tiles
        and v.new_scale_bytes == 4 * tiles
        and v.old_scale_bytes == 0
    )
    assert headline(fp8).startswith(
        "New release in nova: acme/Nova-S-FP8, compared with acme/Nova-S: a quantized copy of acme/Nova-S: "
        "same architecture, parameters equal"
    )
    report = (tmp_path / "reports" / "nova.md").read_text()
    assert "## New release in nova: acme/Nova-S-FP8, compared with acme/Nova-S" in report
    assert "### Storage" in report and "| F8\\_E4M3 elements | 0 | " in report
    assert "agrees with the headers" in report and "disagrees" not in report
    assert outcome.changed_families == ["nova"] and outcome.exit_code == 1
    assert "3 new releases, 2 skipped" in outcome.summary_line()


def test_update_adds_new_releases_to_the_baseline_and_the_next_poll_is_quiet(hub, tmp_path, family):
    path, sources = family
    hub.add(RepoSpec("acme/Nova-S-FP8", [quantized_copy(model(4, 64), "fp8", block=32)]))
    sha = hub.repos["acme/Nova-S-FP8"].branches["main"]

    outcome = run_watch([path], sources, update=True, output_dir=tmp_path / "reports")

    assert outcome.updated == {"nova": ["acme/Nova-S-FP8"]} and outcome.exit_code == 0
    baseline = load_baseline(path)
    entry = next(r for r in baseline.repos if r.repo == "acme/Nova-S-FP8")
    assert entry.sha == sha and entry.revision == "main" and not entry.claims
    assert entry.raw["notes"].startswith("New release found by hubdiff watch; compared with acme/Nova-S (")
    assert (
        entry.metrics["main_params"]
        == next(r for r in baseline.repos if r.repo == "acme/Nova-S").metrics["main_params"]
    )
    body = Path(outcome.files["nova"]["pr_body"]).read_text()
    assert "acme/Nova-S-FP8" in body and "main_params" in body  # figures a reviewer may claim
    hub.clear()
    again = run_watch([path], sources, output_dir=tmp_path / "reports2")
    assert not again.results and again.exit_code == 0
    assert [e.path.split("?")[0] for e in hub.log] == ["/api/models"]


def test_reference_rule_and_vanished_pinned_repo(hub, tmp_path, family):
    path, sources = family
    family_file(path, [{"owner": "acme", "match": ["Nova-*"], "reference": "acme/Nova-L"}])
    hub.add(RepoSpec("acme/Nova-S-Chat", [model(4, 64)]))
    hub.remove("acme/Nova-S")
    outcome = run_watch([path], sources, output_dir=tmp_path / "reports")
    by_repo = {r.title.split("@")[0]: r for r in outcome.results["nova"]}
    assert by_repo["acme/Nova-S-Chat"].sibling == "acme/Nova-L"
    assert "the family's reference" in by_repo["acme/Nova-S-Chat"].note
    gone = by_repo["acme/Nova-S"]
    assert gone.status == "vanished" and not gone.error and "repository not found" in headline(gone)
    assert not outcome.failed and outcome.exit_code == 1


def test_the_hubs_count_disagreeing_is_flagged(hub, tmp_path, family):
    """The replica's count comes from the headers it serves; a fault swaps in another figure."""
    from hubdiff.testing import Fault

    path, sources = family
    hub.add(RepoSpec("acme/Nova-S-2", [model(4, 64)]))
    body = json.dumps({"id": "acme/Nova-S-2", "safetensors": {"parameters": {"BF16": 5}, "total": 5}})
    hub.add_fault(Fault("expand=safetensors", body=body.encode()))
    outcome = run_watch([path], sources, output_dir=tmp_path / "reports")
    report = (tmp_path / "reports" / "nova.md").read_text()
    assert "**The Hub's own count for acme/Nova-S-2@" in report and "BF16 Hub 5, headers " in report
    (result,) = outcome.results["nova"]
    assert result.status == "new release"
    assert headline(result).endswith("; the Hub's own parameter count disagrees with the headers (BF16).")


@pytest.mark.parametrize(
    ("rules", "where", "problem"),
    [
        ("[{owner: acme}]", "discover.0.match", "match must be a repo-name glob"),
        ("[{owner: 'a/b', match: x}]", "discover.0.owner", "owner must be a user or organisation name"),
        ("[{owner: acme, match: x, exlude: y}]", "discover.0.exlude", "unknown key"),
        (
            "[{owner: acme, match: x, reference: acme/Nope}]",
            "discover.0.reference",
            "is not a repo of this baseline",
        ),
        ("[{owner: acme, match: 'a b'}]", "discover.0.match", "match must be"),
        ("{owner: acme}", "discover", "must be a list of rules"),
    ],
)
def test_discover_rules_are_validated_with_file_and_line(tmp_path, rules, where, problem):
    path = tmp_path / "f.yaml"
    path.write_text(f"family: f\nrepos:\n  acme/A: {{revision: main}}\ndiscover: {rules}\n")
    with pytest.raises(BaselineError) as info:
        load_baseline(path)
    assert str(info.value).startswith(f"{path}:4: {where}: ") and problem in str(info.value)


def test_cli_watch_reports_a_new_release(hub, tmp_path, family):
    path, _ = family
    (tmp_path / "baselines").mkdir()
    path.rename(tmp_path / "baselines" / "nova.yaml")
    hub.add(RepoSpec("acme/Nova-L-FP8", [quantized_copy(model(8, 128), "fp8", block=64)]))
    env = {**os.environ, "HF_ENDPOINT": hub.endpoint, "HUBDIFF_CACHE": str(tmp_path / "c")}
    env.pop("GITHUB_OUTPUT", None)
    run = watch_cli(tmp_path, env)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "New release in nova: acme/Nova-L-FP8, compared with acme/Nova-L: a quantized copy" in run.stdout
    assert run.stdout.strip().endswith("2 repos checked, 0 changed, 1 new releases")


def test_no_change_poll_with_discover_rules_costs_one_listing_page_per_owner_page(hub, tmp_path):
    """2 owners, each with 5 pinned repos and 20 repos no rule takes: ceil(25 / 10) pages each, nothing else."""
    from .test_watch import small

    hub.page_size = 10
    for org in ("acme", "zeta"):
        for i in range(5):
            hub.add(small(f"{org}/Nova-{i}"))
        for i in range(20):
            hub.add(small(f"{org}/draft-{i:02d}"))
    sources = sources_for(hub, tmp_path)
    files = []
    for org in ("acme", "zeta"):
        record(tmp_path / f"{org}.yaml", org, [f"{org}/Nova-{i}" for i in range(5)], sources)
        files.append(family_file(tmp_path / f"{org}.yaml", [{"owner": org, "match": "Nova-*"}]))
    hub.clear()
    outcome = run_watch(files, sources, output_dir=tmp_path / "reports")
    assert outcome.checked == 10 and not outcome.results and outcome.exit_code == 0
    assert len(hub.log) == 3 + 3 and all(e.path.startswith("/api/models?") for e in hub.log)


def test_a_renamed_copy_is_a_converted_copy(hub, tmp_path, family):
    path, sources = family
    base = model(4, 64)
    renamed = [(n.replace("model.", "model.language_model.", 1), d, s) for n, d, s in base.tensors]
    hub.add(RepoSpec("acme/Nova-S-resharded", [CommitSpec(base.files, renamed, shards=3)]))
    outcome = run_watch([path], sources, output_dir=tmp_path / "reports")
    (result,) = outcome.results["nova"]
    assert result.sibling == "acme/Nova-S" and result.variant is not None
    assert result.variant.kind == "converted" and result.variant.old_bytes == result.variant.new_bytes
    assert "a converted copy of acme/Nova-S: same architecture, parameters equal" in headline(result)


def test_a_repo_two_families_take_is_proposed_once_by_the_first(hub, tmp_path, family):
    path, sources = family
    hub.add(RepoSpec("acme/Other", [model(4, 64)]))
    record(tmp_path / "all.yaml", "all-acme", ["acme/Other"], sources)
    family_file(tmp_path / "all.yaml", [{"owner": "acme", "match": "*"}])
    hub.add(RepoSpec("acme/Nova-S-2", [model(4, 64)]))
    outcome = run_watch([path, tmp_path / "all.yaml"], sources, output_dir=tmp_path / "reports")
    assert list(outcome.results) == ["all-acme"]  # "all-acme" sorts before "nova"
    assert [r.title.split("@")[0] for r in outcome.results["all-acme"]] == ["acme/Nova-S-2"]


def test_an_nvfp4_copy_is_a_quantized_copy_with_its_scales(hub, tmp_path, family):
    path, sources = family
    hub.add(RepoSpec("acme/Nova-L-NVFP4", [quantized_copy(model(8, 128), "nvfp4")]))
    outcome = run_watch([path], sources, output_dir=tmp_path / "reports")
    (result,) = outcome.results["nova"]
    v = result.variant
    assert result.sibling == "acme/Nova-L" and v is not None and v.kind == "quantized"
    # per layer, 7 projections: q, o 128x128; k, v 64x128; gate, up 256x128; down 128x256
    linear = 8 * (2 * 128 * 128 + 2 * 64 * 128 + 3 * 256 * 128)
    assert v.new_dtypes["U8"] == linear // 2 and v.new_dtypes["F8_E4M3"] == linear // 16
    assert v.new_dtypes["F32"] == 8 * 7 * 2  # weight_scale_2 and input_scale, one value each
    assert v.new_scale_bytes == linear // 16 + 4 * 8 * 7 * 2


def test_hostile_ids_in_a_listing_are_never_fetched(hub, tmp_path, family):
    """A listing is Hub input: ids that are not owner/name as the Hub allows them are dropped."""
    from hubdiff.testing import Fault

    path, sources = family
    family_file(path, [{"owner": "acme", "match": "*"}])
    sha = "a" * 40
    listing = [{"id": i, "sha": sha} for i in ("acme/..", "acme/../../x", "acme/.hidden", "acme/<b>x</b>")]
    listing += [{"id": r, "sha": hub.repos[r].branches["main"]} for r in ("acme/Nova-S", "acme/Nova-L")]
    hub.add_fault(Fault("/api/models?", body=json.dumps(listing).encode()))
    hub.clear()
    outcome = run_watch([path], sources, output_dir=tmp_path / "reports")
    assert not outcome.results and outcome.exit_code == 0
    assert [e.path.split("?")[0] for e in hub.log] == ["/api/models"]


def test_same_layout_is_not_called_a_copy_and_ties_go_to_the_first_name(hub, tmp_path, family):
    """A fine-tune keeps its base's config and layout: hubdiff says so, and does not call it "the same
    model" (only headers are read)."""
    path, sources = family
    hub.add(RepoSpec("acme/Nova-A", [model(4, 64)]))
    data = yaml.safe_load(path.read_text())
    record(tmp_path / "a.yaml", "nova", ["acme/Nova-A"], sources)
    data["repos"]["acme/Nova-A"] = yaml.safe_load((tmp_path / "a.yaml").read_text())["repos"]["acme/Nova-A"]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    hub.add(RepoSpec("acme/Nova-S-Instruct", [model(4, 64)]))
    outcome = run_watch([path], sources, output_dir=tmp_path / "reports")
    (result,) = outcome.results["nova"]
    assert result.sibling == "acme/Nova-A"  # Nova-A and Nova-S tie: the first name
    assert result.variant is not None and result.variant.kind == "same layout"
    assert "same architecture and tensor layout as acme/Nova-A" in headline(result)
    assert "copy of" not in headline(result)
    assert "not a new model" not in (tmp_path / "reports" / "nova.md").read_text()


@contextmanager
def nova_hub(tmp_path: Path, token: str):
    """A replica serving acme/Nova-S that lets ``token`` read gated and private repos, and a function
    giving Sources with a token (or none) and a cache of their own."""
    from hubdiff._source import HubSettings, Sources
    from hubdiff._source.cache import SnapshotCache
    from hubdiff.testing import HubReplica

    with HubReplica(tokens=frozenset({token})) as hub:
        hub.start()
        hub.add(RepoSpec("acme/Nova-S", [model(4, 64)]))

        def sources(token: str | None, cache: str) -> Sources:
            return Sources(
                HubSettings(endpoint=hub.endpoint, token=token, retries=0), SnapshotCache(tmp_path / cache)
            )

        yield hub, sources


def test_private_and_unreadable_new_repos_are_skipped_without_failing_the_run(tmp_path):
    with nova_hub(tmp_path, "hf_org") as (hub, sources_with):
        sources = sources_with("hf_org", "c")
        record(tmp_path / "nova.yaml", "nova", ["acme/Nova-S"], sources)
        path = family_file(tmp_path / "nova.yaml", [{"owner": "acme", "match": "Nova-*"}])
        hub.add(RepoSpec("acme/Nova-XL-unreleased", [model(4, 64)], private=True))
        broken = CommitSpec(
            {"config.json": b'{"hidden_size": 99999999999999999999999}'}, [("w", "BF16", (4,))]
        )
        hub.add(RepoSpec("acme/Nova-broken", [broken]))
        hub.add(RepoSpec("acme/Nova-neg", [model(4, 64, hidden_size=-64)]))
        hub.clear()
        outcome = run_watch([path], sources, output_dir=tmp_path / "reports")
        by_repo = {r.title.split("@")[0]: r for r in outcome.results["nova"]}
        assert by_repo["acme/Nova-XL-unreleased"].status == "skipped"
        assert by_repo["acme/Nova-XL-unreleased"].note.startswith("private: not proposed")
        assert not any("Nova-XL-unreleased" in e.path for e in hub.log)  # never read
        assert by_repo["acme/Nova-broken"].status == "skipped"
        assert by_repo["acme/Nova-broken"].note.startswith("could not be read (acme/Nova-broken@")
        assert "internal error" not in headline(by_repo["acme/Nova-neg"])
        negative = by_repo["acme/Nova-neg"]  # a size out of range is refused as unreadable input
        assert negative.status == "skipped"
        assert negative.note.startswith("could not be read (acme/Nova-neg@")
        assert "config.json: hidden_size is -64: out of range" in negative.note
        assert not outcome.failed and outcome.exit_code == 0  # nothing was proposed


def test_a_pinned_repo_gated_for_this_token_is_a_notice_and_one_it_may_read_is_not(tmp_path):
    with nova_hub(tmp_path, "hf_granted") as (hub, sources_with):
        granted = sources_with("hf_granted", "c")
        record(tmp_path / "nova.yaml", "nova", ["acme/Nova-S"], granted)
        hub.set_access("acme/Nova-S", gated=True)
        assert run_watch([tmp_path / "nova.yaml"], granted, output_dir=tmp_path / "r1").results == {}
        anonymous = sources_with(None, "c2")
        outcome = run_watch([tmp_path / "nova.yaml"], anonymous, output_dir=tmp_path / "r2")
        (result,) = outcome.results["nova"]
        assert result.status == "gated" and not result.error and outcome.exit_code == 1
