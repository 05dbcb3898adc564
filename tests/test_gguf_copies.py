"""GGUF copies by any owner: a ``discover`` rule ``quantized_copies_of: OWNER/NAME`` makes the watch
list the models the Hub tags ``base_model:quantized:OWNER/NAME`` (one listing per rule and poll, of
every owner), since most GGUF copies are published by others than the model's owner. Run through the
CLI against the replica, which derives the tags from each README's front matter as the Hub does."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml

from hubdiff.testing import CommitSpec, RepoSpec
from hubdiff.testing.gguf_head import gguf_file

from .test_gguf_baseline import hubdiff
from .test_gguf_watch import TINY_METADATA, TINY_TENSORS, _card, _tiny_source
from .test_watch import record, sources_for, watch_cli


def _family(hub, tmp_path: Path, discover: list[dict[str, object]]) -> Path:
    hub.add(RepoSpec("acme/Tiny", [_tiny_source()]))
    baselines = tmp_path / "baselines"
    baselines.mkdir()
    path = baselines / "tiny.yaml"
    record(path, "tiny", ["acme/Tiny"], sources_for(hub, tmp_path))
    data = yaml.safe_load(path.read_text())
    if discover:
        data["discover"] = discover
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _copies(hub) -> dict[str, str]:
    """The repos around acme/Tiny, by their owners: name -> main's sha."""
    gguf = gguf_file(TINY_METADATA, TINY_TENSORS)
    source = _tiny_source()
    specs = {
        "other/Tiny-GGUF": {"README.md": _card("acme/Tiny", "quantized"), "Tiny-Q4_K_M.gguf": gguf},
        "third/Tiny-tuned": {"README.md": _card("acme/Tiny", "finetune"), "t.gguf": gguf},
        "fourth/Else-GGUF": {"README.md": _card("acme/Else", "quantized"), "e.gguf": gguf},
        "acme/Tiny-GGUF": {"README.md": _card("acme/Tiny", "quantized"), "Tiny-Q4_K_M.gguf": gguf},
    }
    shas = {name: hub.add(RepoSpec(name, [CommitSpec(files)]))[0] for name, files in specs.items()}
    awq = CommitSpec({**source.files, "README.md": _card("acme/Tiny", "quantized")}, source.tensors)
    shas["fifth/Tiny-AWQ"] = hub.add(RepoSpec("fifth/Tiny-AWQ", [awq]))[0]
    return shas


def _env(hub, tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "HF_ENDPOINT": hub.endpoint, "HUBDIFF_CACHE": str(tmp_path / "c")}
    env.pop("GITHUB_OUTPUT", None)
    env.pop("GITHUB_STEP_SUMMARY", None)
    return env


def _filters(hub) -> list[list[str]]:
    """The ``filter`` of each model listing the replica answered."""
    asked = [urlsplit(e.path) for e in hub.log if urlsplit(e.path).path == "/api/models"]
    return [parse_qs(url.query).get("filter", []) for url in asked]


def test_a_copy_by_another_owner_is_reported_from_one_filtered_listing(hub, tmp_path):
    rules = [{"owner": "acme", "match": "Tiny*"}, {"quantized_copies_of": "acme/Tiny"}]
    path = _family(hub, tmp_path, rules)
    shas = _copies(hub)
    before = path.read_bytes()
    for poll in range(2):
        hub.clear()
        run = watch_cli(tmp_path, _env(hub, tmp_path), "--update")
        assert run.returncode == 0, run.stdout + run.stderr  # copies and skips: nothing to record
        out = run.stdout
        copy = f"other/Tiny-GGUF@{shas['other/Tiny-GGUF'][:12]}: a GGUF quantized copy of acme/Tiny"
        assert copy in out, out
        # the owner rule's copy is reported once, from its owner's listing, as it always was
        assert out.count(f"acme/Tiny-GGUF@{shas['acme/Tiny-GGUF'][:12]}: a GGUF quantized copy") == 1, out
        # a copy of safetensors weights by another owner is never proposed as a release of the family
        awq = f"fifth/Tiny-AWQ@{shas['fifth/Tiny-AWQ'][:12]}"
        assert awq in out and "only a GGUF copy is read as one" in out, out
        assert "third/Tiny-tuned" not in out and "fourth/Else-GGUF" not in out, out
        assert out.strip().endswith("1 repos checked, 0 changed, 1 skipped, 2 quantized copies"), out
        assert path.read_bytes() == before
        # one listing per rule and poll: the owner's, and the copies' filtered on the Hub's tag
        assert sorted(_filters(hub)) == [[], ["base_model:quantized:acme/Tiny"]], poll
        # nothing asked of the repos the listing leaves out
        assert not [e for e in hub.log if "Tiny-tuned" in e.path or "Else-GGUF" in e.path]


def test_without_the_rule_a_copy_by_another_owner_is_not_looked_for(hub, tmp_path):
    _family(hub, tmp_path, [{"owner": "acme", "match": "Tiny*"}])
    _copies(hub)
    hub.clear()
    run = watch_cli(tmp_path, _env(hub, tmp_path))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "other/Tiny-GGUF" not in run.stdout and "fifth/Tiny-AWQ" not in run.stdout
    assert "acme/Tiny-GGUF@" in run.stdout  # the owner rule's copy, as before
    assert _filters(hub) == [[]]


def test_the_replica_lists_a_tag_only_for_the_relation_the_card_names(hub):
    _copies(hub)
    import requests

    def listed(tag: str) -> list[str]:
        answer = requests.get(f"{hub.endpoint}/api/models", params={"filter": tag}, timeout=10)
        return [m["id"] for m in answer.json()]

    assert listed("base_model:quantized:acme/Tiny") == ["acme/Tiny-GGUF", "fifth/Tiny-AWQ", "other/Tiny-GGUF"]
    assert listed("base_model:finetune:acme/Tiny") == ["third/Tiny-tuned"]
    assert len(listed("base_model:acme/Tiny")) == 4


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("acme/Tiny&author=x", "must be a repo id"),
        ("acme", "must be a repo id"),
        (7, "must be a repo id"),
        (["acme/Tiny"], "must be a repo id"),
        ("a" * 97 + "/b", "must be a repo id"),
        ("acme/Tiny\u202e", "must be a repo id"),
        ("acme/Other", "'acme/Other' is not a repo of this baseline"),
    ],
)
def test_validate_refuses_a_hostile_copies_rule_naming_file_and_line(tmp_path, value, problem):
    path = tmp_path / "baselines" / "fam.yaml"
    path.parent.mkdir()
    data = {
        "family": "fam",
        "discover": [{"owner": "acme", "match": "Tiny*"}, {"quantized_copies_of": value}],
        "repos": {"acme/Tiny": {"revision": "main"}},
    }
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    run = hubdiff(tmp_path, "http://127.0.0.1:9", "validate")
    assert run.returncode == 2, run.stdout + run.stderr
    (line,) = run.stderr.strip().splitlines()
    assert line.startswith("baselines/fam.yaml:") and ": discover.1.quantized_copies_of: " in line, line
    assert problem in line, line


def test_validate_refuses_a_copies_rule_with_other_keys_or_named_twice(tmp_path):
    path = tmp_path / "baselines" / "fam.yaml"
    path.parent.mkdir()
    repos = {"acme/Tiny": {"revision": "main"}}
    for rules, expected in (
        ([{"quantized_copies_of": "acme/Tiny", "match": "*"}], "discover.0.match: unknown key beside"),
        (
            [{"quantized_copies_of": "acme/Tiny"}, {"quantized_copies_of": "acme/Tiny"}],
            "discover.1.quantized_copies_of: names a repo an",
        ),
    ):
        path.write_text(yaml.safe_dump({"family": "fam", "discover": rules, "repos": repos}))
        run = hubdiff(tmp_path, "http://127.0.0.1:9", "validate")
        assert run.returncode == 2 and expected in run.stderr, run.stderr
    path.write_text(yaml.safe_dump({"family": "fam", "discover": rules[:1], "repos": repos}))
    assert hubdiff(tmp_path, "http://127.0.0.1:9", "validate").returncode == 0
