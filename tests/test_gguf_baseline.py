"""A baseline that pins a GGUF repo: ``baseline init`` records its variants (and the pinned one's
per-layer quantization), ``check`` reads the headers again and names what moved, ``validate`` refuses a
hostile ``gguf:`` block, and ``watch`` checks a pinned copy as a pin rather than as a new copy.

Every run is the CLI against the Hub replica, whose GGUF files are headers written as llama.cpp's
writer writes them (``hubdiff.testing.gguf_head``) with zeros for data."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest
import yaml

from hubdiff.testing import CommitSpec, RepoSpec
from hubdiff.testing.gguf_head import gguf_file, gguf_split

from .gguf_files import LAYERS
from .test_gguf_watch import TINY_METADATA, TINY_TENSORS, _card, _tiny_source

Q8_TENSORS = [(n, "F32" if len(s) == 1 else "Q8_0", s) for n, _, s in TINY_TENSORS]


def _requantized(kind: str, to: str, layers: set[int]) -> list[tuple[str, str, tuple[int, ...]]]:
    """The tiny Q4_K_M with ``blk.N.KIND.weight`` of ``layers`` stored as ``to``."""
    names = {f"blk.{i}.{kind}.weight" for i in layers}
    return [(n, to if n in names else t, s) for n, t, s in TINY_TENSORS]


def hubdiff(tmp_path: Path, endpoint: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_ENDPOINT": endpoint, "HUBDIFF_CACHE": str(tmp_path / "c")}
    env.pop("GITHUB_OUTPUT", None)
    env.pop("GITHUB_STEP_SUMMARY", None)
    return subprocess.run(
        [sys.executable, "-m", "hubdiff", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _files(**extra: object) -> dict[str, object]:
    """The repo's files (a replica's commit holds every file, not a change): the tiny Q4_K_M and ``extra``."""
    return {"Tiny-Q4_K_M.gguf": gguf_file(TINY_METADATA, TINY_TENSORS), **extra}


def _tiny_gguf(**extra: object) -> RepoSpec:
    return RepoSpec("acme/Tiny-GGUF", [CommitSpec(_files(**extra))])  # type: ignore[arg-type]


def test_init_records_each_variant_and_the_pinned_strip_and_check_passes(hub, tmp_path):
    shards = gguf_split("Tiny-Q8_0", TINY_METADATA, Q8_TENSORS, 2)
    hub.add(_tiny_gguf(**shards))
    init = hubdiff(
        tmp_path, hub.endpoint, "baseline", "init", "acme/Tiny-GGUF", "--family", "tiny", "--pin", "Q4_K_M"
    )
    assert init.returncode == 0, init.stdout + init.stderr
    assert "acme/Tiny-GGUF none -> " in init.stdout and "new entry" in init.stdout
    path = tmp_path / "baselines" / "tiny.yaml"
    entry = yaml.safe_load(path.read_text())["repos"]["acme/Tiny-GGUF"]
    assert entry["revision"] == "main" and entry["sha"] == hub.repos["acme/Tiny-GGUF"].branches["main"]
    assert "recorded" in entry and "config" not in entry and "allow_changes" not in entry
    gguf = entry["gguf"]
    assert gguf["pin"] == "Q4_K_M" and list(gguf["variants"]) == ["Q4_K_M", "Q8_0"]
    q4 = gguf["variants"]["Q4_K_M"]
    # the tiny Q4_K_M's figures, by hand in test_gguf_watch: 1,377,536 weights in 889,088 bytes
    assert q4["files"] == ["Tiny-Q4_K_M.gguf"]
    assert (q4["parameters"], q4["bytes"], q4["bits_per_weight"]) == (1_377_536, 889_088, 5.1634)
    assert q4["types"] == {"F32": 1 + 2 * LAYERS, "Q4_K": 1 + 5 * LAYERS, "Q6_K": 1 + 2 * LAYERS}
    assert q4["strip"]["blk.{0-1}.attn_v.weight"] == "Q6_K [64, 256] x2"
    assert q4["strip"]["output.weight"] == "Q6_K [512, 256] x1"
    q8 = gguf["variants"]["Q8_0"]
    assert q8["files"] == ["Tiny-Q8_0-00001-of-00002.gguf", "Tiny-Q8_0-00002-of-00002.gguf"]
    assert "strip" not in q8  # only the pinned variant's layers are recorded
    schema = json.loads(files("hubdiff.schemas").joinpath("baseline.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(yaml.safe_load(path.read_text()))

    check = hubdiff(tmp_path, hub.endpoint, "check", "--format", "text")
    assert check.returncode == 0, check.stdout + check.stderr
    assert f"acme/Tiny-GGUF@main: unchanged at {entry['sha'][:12]}." in check.stdout
    assert hubdiff(tmp_path, hub.endpoint, "validate").returncode == 0

    # a new commit with the same files: moved, and passes
    hub.push("acme/Tiny-GGUF", CommitSpec(_files(**shards, **{"README.md": b"# Tiny GGUF\n"}), title="card"))  # type: ignore[arg-type]
    moved = hubdiff(tmp_path, hub.endpoint, "check", "--format", "text")
    assert moved.returncode == 0, moved.stdout + moved.stderr
    new_sha = hub.repos["acme/Tiny-GGUF"].branches["main"]
    assert f"acme/Tiny-GGUF@main: moved {entry['sha'][:12]} → {new_sha[:12]}; no differences." in moved.stdout

    # update re-records the sha and keeps the pin; the variants are the same values
    update = hubdiff(tmp_path, hub.endpoint, "baseline", "update")
    assert update.returncode == 0, update.stdout + update.stderr
    assert "GGUF variants unchanged" in update.stdout
    again = yaml.safe_load(path.read_text())["repos"]["acme/Tiny-GGUF"]
    assert again["sha"] == new_sha and again["gguf"] == gguf


def test_a_requantized_tensor_kind_in_the_pinned_variant_fails_the_check_naming_it(hub, tmp_path):
    hub.add(_tiny_gguf())
    assert (
        hubdiff(
            tmp_path,
            hub.endpoint,
            "baseline",
            "init",
            "acme/Tiny-GGUF",
            "--family",
            "tiny",
            "--pin",
            "Tiny-Q4_K_M.gguf",
        ).returncode
        == 0
    )
    # the publisher requantizes attn_v from Q6_K to Q4_K in layer 1
    requantized = gguf_file(TINY_METADATA, _requantized("attn_v", "Q4_K", {1}))
    hub.push("acme/Tiny-GGUF", CommitSpec({"Tiny-Q4_K_M.gguf": requantized}, title="requantize"))
    check = hubdiff(tmp_path, hub.endpoint, "check", "--format", "text")
    assert check.returncode == 1, check.stdout + check.stderr
    assert "Q4_K_M: requantized blk.1.attn_v.weight Q6_K → Q4_K (1 tensor)" in check.stdout
    assert "  retype  blk.1.attn_v.weight: Q6_K [64, 256] -> Q4_K [64, 256]" in check.stdout
    assert "Q4_K_M bytes 889.1 KB → " in check.stdout  # the variant's own figures moved too
    report = hubdiff(tmp_path, hub.endpoint, "check", "--format", "json")
    document = json.loads(report.stdout)
    schema = json.loads(files("hubdiff.schemas").joinpath("report.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(document)
    result = document["results"][0]
    assert result["status"] == "changed" and result["gguf"]["pinned"] == "Q4_K_M"
    assert result["gguf"]["strip"]["changed"] == [
        {"pattern": "blk.1.attn_v.weight", "old": ["Q6_K", [64, 256]], "new": ["Q4_K", [64, 256]], "count": 1}
    ]
    markdown = hubdiff(tmp_path, hub.endpoint, "check", "--format", "markdown")
    assert "| `blk.1.attn_v.weight` | `Q6_K` `[64, 256]` | `Q4_K` `[64, 256]` | 1 |" in markdown.stdout

    # allowed by name: the pinned variant's changes pass, and say so
    path = tmp_path / "baselines" / "tiny.yaml"
    data = yaml.safe_load(path.read_text())
    data["repos"]["acme/Tiny-GGUF"]["allow_changes"] = ["Q4_K_M"]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    allowed = hubdiff(tmp_path, hub.endpoint, "check", "--format", "text")
    assert allowed.returncode == 0 and "(1 tensor) (allowed)" in allowed.stdout, allowed.stdout


def test_a_variant_added_or_removed_is_reported(hub, tmp_path):
    hub.add(_tiny_gguf())
    assert (
        hubdiff(tmp_path, hub.endpoint, "baseline", "init", "acme/Tiny-GGUF", "--family", "tiny").returncode
        == 0
    )
    q8 = gguf_file(TINY_METADATA, Q8_TENSORS)
    hub.push("acme/Tiny-GGUF", CommitSpec(_files(**{"Tiny-Q8_0.gguf": q8}), title="Q8_0"))  # type: ignore[arg-type]
    check = hubdiff(tmp_path, hub.endpoint, "check", "--format", "text")
    assert check.returncode == 1, check.stdout + check.stderr
    assert "variant Q8_0 added (1 file, " in check.stdout
    assert "  gguf    Q8_0: added" in check.stdout
    hub.push("acme/Tiny-GGUF", CommitSpec({"Tiny-Q8_0.gguf": q8}, title="drop Q4_K_M"))
    check = hubdiff(tmp_path, hub.endpoint, "check", "--format", "text")
    assert check.returncode == 1 and "variant Q4_K_M removed" in check.stdout, check.stdout


def test_a_pin_that_names_no_variant_is_refused_and_nothing_is_written(hub, tmp_path):
    hub.add(_tiny_gguf())
    run = hubdiff(
        tmp_path, hub.endpoint, "baseline", "init", "acme/Tiny-GGUF", "--family", "tiny", "--pin", "Q5_K_M"
    )
    assert (
        run.returncode == 2
        and "--pin 'Q5_K_M': acme/Tiny-GGUF names no variant (it has Q4_K_M)" in run.stderr
    )
    assert not (tmp_path / "baselines" / "tiny.yaml").exists()


_VARIANT = {
    "files": ["m-Q4_K_M.gguf"],
    "bytes": 100,
    "bits_per_weight": 4.5,
    "parameters": 200,
    "types": {"Q4_K": 1},
}


def _with(**changes: object) -> dict[str, object]:
    """A recorded variant with ``changes``, sharing no list with another (YAML would write an alias)."""
    return json.loads(json.dumps({**_VARIANT, **changes}))


@pytest.mark.parametrize(
    ("block", "where", "problem"),
    [
        ("not a mapping", "repos.org/m.gguf", "must be a mapping"),
        ({"pin": 7}, "repos.org/m.gguf.pin", "must be text"),
        ({"pin": "Q4\x1b[2J"}, "repos.org/m.gguf.pin", "without control characters"),
        ({"pinned": "Q4_K_M"}, "repos.org/m.gguf.pinned", "unknown key"),
        ({"variants": ["Q4_K_M"]}, "repos.org/m.gguf.variants", "must map variant names"),
        ({"variants": {"Q4_K_M": _with(bytes=-1)}}, "repos.org/m.gguf.variants.Q4_K_M.bytes", "whole number"),
        (
            {"variants": {"Q4_K_M": _with(bytes=True)}},
            "repos.org/m.gguf.variants.Q4_K_M.bytes",
            "whole number",
        ),
        (
            {"variants": {"Q4_K_M": _with(parameters=2**63)}},
            "repos.org/m.gguf.variants.Q4_K_M.parameters",
            "whole number",
        ),
        (
            {"variants": {"Q4_K_M": _with(bits_per_weight=1e300)}},
            "repos.org/m.gguf.variants.Q4_K_M.bits_per_weight",
            "from 0 to 64",
        ),
        (
            {"variants": {"Q4_K_M": _with(bits_per_weight="4.5")}},
            "repos.org/m.gguf.variants.Q4_K_M.bits_per_weight",
            "from 0 to 64",
        ),
        ({"variants": {"Q4_K_M": _with(files=[])}}, "repos.org/m.gguf.variants.Q4_K_M.files", ".gguf files"),
        (
            {"variants": {"Q4_K_M": _with(files=["x.bin"])}},
            "repos.org/m.gguf.variants.Q4_K_M.files.0",
            "must end in .gguf",
        ),
        (
            {"variants": {"Q4_K_M": _with(files=["a" * 2000 + ".gguf"])}},
            "repos.org/m.gguf.variants.Q4_K_M.files.0",
            "1 to 1000 characters",
        ),
        (
            {"variants": {"Q4_K_M": _with(), "Q8_0": _with()}},
            "repos.org/m.gguf.variants.Q8_0.files.0",
            "file listed twice",
        ),
        (
            {"variants": {"Q4_K_M": _with(types={"Q9_X": 1})}},
            "repos.org/m.gguf.variants.Q4_K_M.types.Q9_X",
            "not a ggml type",
        ),
        (
            {"variants": {"Q4_K_M": _with(types={"Q4_K": 0})}},
            "repos.org/m.gguf.variants.Q4_K_M.types.Q4_K",
            "whole number from 1",
        ),
        (
            {"variants": {"Q4_K_M": {k: v for k, v in _VARIANT.items() if k != "types"}}},
            "repos.org/m.gguf.variants.Q4_K_M",
            "types is missing",
        ),
        (
            {"variants": {"Q4_K_M": _with(strip={"blk.{0-1}.attn_v.weight": "Q6_K [64, 256] x3"})}},
            "repos.org/m.gguf.variants.Q4_K_M.strip.blk.{0-1}.attn_v.weight",
            "expands to 2 names, row says x3",
        ),
        (
            {"variants": {"Q4_K_M": _with(strip={"blk.{0-99999999999}.x": "Q6_K [1] x100000000000"})}},
            "repos.org/m.gguf.variants.Q4_K_M.strip.blk.{0-99999999999}.x",
            "more than 1,000,000 tensors",
        ),
        (  # counted from the text, never made: 16 trillion names would take the check with them
            {"variants": {"Q4_K_M": _with(strip={"b.{0-3999999}.x.{0-3999999}": "Q6_K [1] x4"})}},
            "repos.org/m.gguf.variants.Q4_K_M.strip.b.{0-3999999}.x.{0-3999999}",
            "expands to more names than the row's x4",
        ),
        (
            {"variants": {"Q4_K_M": _with(strip={"output.weight": "BF17 [1] x1"})}},
            "repos.org/m.gguf.variants.Q4_K_M.strip.output.weight",
            "not a ggml type",
        ),
        (
            {"variants": {"Q4_K_M\u202e": _with()}},
            "repos.org/m.gguf.variants.Q4_K_M\\u202e",
            "control characters",
        ),
    ],
)
def test_validate_refuses_a_hostile_gguf_block_naming_file_and_line(tmp_path, block, where, problem):
    path = tmp_path / "baselines" / "fam.yaml"
    path.parent.mkdir()
    data = {"family": "fam", "repos": {"org/m": {"revision": "main", "gguf": block}}}
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    run = hubdiff(tmp_path, "http://127.0.0.1:9", "validate")
    assert run.returncode == 2, run.stdout + run.stderr
    (line,) = run.stderr.strip().splitlines()
    assert line.startswith("baselines/fam.yaml:") and f": {where}: " in line and problem in line, line


def test_a_gguf_entry_holds_no_safetensors_keys_and_is_no_reference(tmp_path):
    path = tmp_path / "baselines" / "fam.yaml"
    path.parent.mkdir()
    entry = {"revision": "main", "gguf": {"variants": {"Q4_K_M": _VARIANT}}}
    data = {"family": "fam", "repos": {"org/m-GGUF": {**entry, "config": {"a": 1}}}}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    run = hubdiff(tmp_path, "http://127.0.0.1:9", "validate")
    assert run.returncode == 2 and "repos.org/m-GGUF.config: a GGUF entry" in run.stderr
    data = {
        "family": "fam",
        "discover": [{"owner": "org", "match": "m*", "reference": "org/m-GGUF"}],
        "repos": {"org/m-GGUF": entry},
    }
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    run = hubdiff(tmp_path, "http://127.0.0.1:9", "validate")
    assert run.returncode == 2 and "discover.0.reference: a GGUF entry cannot be a reference" in run.stderr


def test_watch_checks_a_pinned_gguf_copy_as_a_pin_not_as_a_new_copy(hub, tmp_path):
    """A copy found through its card is reported on every poll until the family pins it; pinned, it is
    checked like any pinned repo: silent while unchanged, reported and re-recorded when it moves."""
    hub.add(RepoSpec("acme/Tiny", [_tiny_source()]))
    card = _card("acme/Tiny", "quantized")
    hub.add(_tiny_gguf(**{"README.md": card}))
    run = lambda *a: hubdiff(tmp_path, hub.endpoint, *a)  # noqa: E731
    assert run("baseline", "init", "acme/Tiny", "--family", "tiny").returncode == 0
    path = tmp_path / "baselines" / "tiny.yaml"
    data = yaml.safe_load(path.read_text())
    data["discover"] = [{"owner": "acme", "match": "Tiny*"}]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    copy = run("watch")
    assert copy.returncode == 0 and "1 quantized copy" in copy.stdout, copy.stdout + copy.stderr
    assert run("baseline", "init", "acme/Tiny-GGUF", "--family", "tiny", "--pin", "Q4_K_M").returncode == 0
    quiet = run("watch")
    assert quiet.returncode == 0, quiet.stdout + quiet.stderr
    assert quiet.stdout.strip().endswith("hubdiff watch: 2 repos checked, 0 changed"), quiet.stdout
    requantized = gguf_file(TINY_METADATA, _requantized("ffn_down", "Q4_K", {0, 1}))
    hub.push("acme/Tiny-GGUF", CommitSpec({"Tiny-Q4_K_M.gguf": requantized, "README.md": card}))
    moved = run("watch", "--update")
    assert moved.returncode == 0, moved.stdout + moved.stderr
    assert "requantized blk.{0-1}.ffn_down.weight Q6_K → Q4_K (2 tensors)" in moved.stdout
    assert "quantized copy" not in moved.stdout and "baselines updated: tiny" in moved.stdout
    strip = yaml.safe_load(path.read_text())["repos"]["acme/Tiny-GGUF"]["gguf"]["variants"]["Q4_K_M"]["strip"]
    assert strip["blk.{0-1}.ffn_down.weight"] == "Q4_K [256, 512] x2"
    assert "Q4_K_M" in (tmp_path / "reports" / "tiny.md").read_text()


def test_pytest_checks_runs_a_gguf_entry_as_its_layout_test_and_updates_it(hub, tmp_path):
    from .test_checks_plugin import pytest_checks

    hub.add(_tiny_gguf())
    init = hubdiff(
        tmp_path, hub.endpoint, "baseline", "init", "acme/Tiny-GGUF", "--family", "tiny", "--pin", "Q4_K_M"
    )
    assert init.returncode == 0, init.stdout + init.stderr
    assert pytest_checks(tmp_path, hub.endpoint, "-q").returncode == 0
    requantized = gguf_file(TINY_METADATA, _requantized("attn_v", "Q4_K", {0}))
    hub.push("acme/Tiny-GGUF", CommitSpec({"Tiny-Q4_K_M.gguf": requantized}))
    failed = pytest_checks(tmp_path, hub.endpoint, "-q")
    assert failed.returncode == 1, failed.stdout
    assert "tiny-gguf::layout: the Hub no longer matches" in failed.stdout
    assert "retype  blk.0.attn_v.weight: Q6_K [64, 256] -> Q4_K [64, 256]" in failed.stdout
    assert pytest_checks(tmp_path, hub.endpoint, "-q", "--update-baselines").returncode == 0
    assert pytest_checks(tmp_path, hub.endpoint, "-q").returncode == 0


@pytest.mark.parametrize(
    ("stem", "quant"),
    [
        ("Tiny-Q4_K_M", "Q4_K_M"),
        ("Q4_K_M/GLM-5-Q4_K_M", "Q4_K_M"),  # the folder is not the name
        ("Llama-3-8B.Q8_0", "Q8_0"),
        ("gemma-2b-it-f16", "F16"),
        ("m-UD-Q4_K_XL", "UD-Q4_K_XL"),
        ("m-IQ2_XXS", "IQ2_XXS"),
        ("m-MXFP4_MOE", "MXFP4_MOE"),
        ("llama-3-8b", None),
        ("Phi-3", None),
    ],
)
def test_a_variant_is_keyed_by_the_quant_its_file_name_ends_in(stem, quant):
    from hubdiff._baseline.gguf import quant_name

    assert quant_name(stem) == quant


def test_two_variants_ending_in_one_quant_keep_their_full_names():
    """A model's F16 and its vision projector's ``mmproj-…-F16`` both end in F16: neither may take the
    key, or a check would compare one with the other's record."""
    from types import SimpleNamespace

    from hubdiff._baseline.gguf import pinned_key, variant_keys

    found = [SimpleNamespace(name=n, files=()) for n in ("m-F16", "mmproj-m-F16", "m-Q4_K_M")]
    keys = variant_keys(found)  # type: ignore[arg-type]
    assert list(keys) == ["m-F16", "mmproj-m-F16", "Q4_K_M"]
    assert pinned_key("q4_k_m", keys) == "Q4_K_M" and pinned_key("F16", keys) is None
