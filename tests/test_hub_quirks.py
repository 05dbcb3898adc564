"""What the Hub (or a disk) may hand hubdiff that is legal but odd: a pin spelled in another case, a
listing that names a repo twice, a revision beyond Latin-1 in an error header, a temp file dated in
the future beside a baseline."""

from __future__ import annotations

import json
import os
import time

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from hubdiff._baseline.record import entry_for
from hubdiff._baseline.store import write_baseline
from hubdiff._files import FUTURE_SLACK_S, STALE_TMP_S, atomic_write_text
from hubdiff._source import Sources, SourceSpec, quick
from hubdiff._source.cache import SnapshotCache
from hubdiff._source.hub import HubReader, listed_repos
from hubdiff.cli import main
from hubdiff.testing import CommitSpec, Fault, RepoSpec

from .conftest import fast_settings
from .test_fuzz import FUZZ

CONFIG = b'{"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10}'
TENSORS = [(f"model.layers.{i}.w", "F32", (2, 2)) for i in range(2)]


def spec(repo: str) -> RepoSpec:
    return RepoSpec(repo, [CommitSpec({"config.json": CONFIG}, TENSORS)])


# -- a pin in another case ---------------------------------------------------------------------------


@pytest.mark.parametrize("pinned", ["Org/Model", "org/MODEL", "ORG/model"])
def test_a_pin_differing_only_in_case_is_not_renamed(hub, tmp_path, capsys, pinned):
    hub.add(spec("org/model"))
    sources = Sources(fast_settings(hub.endpoint), SnapshotCache(tmp_path / "record"))
    entry = entry_for(sources.open(SourceSpec("hub", "org/model", "main")))
    path = tmp_path / "baselines" / "fam.yaml"
    path.parent.mkdir()
    write_baseline(path, {"family": "fam", "notes": "", "repos": {pinned: entry}})
    code = main(
        ["watch", "--baseline-dir", str(path.parent), "--output-dir", str(tmp_path / "reports"),
         "--endpoint", hub.endpoint, "--cache-dir", str(tmp_path / "cache"), "--retries", "0"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert "renamed" not in out and "1 repos checked, 0 changed" in out
    assert list(yaml.safe_load(path.read_text())["repos"]) == [pinned]


# -- a listing naming a repo twice -------------------------------------------------------------------

SHAS = ["a" * 40, "b" * 40, "c" * 40]


@settings(max_examples=60, **FUZZ)
@given(
    entries=st.lists(
        st.tuples(st.sampled_from(["org/x", "org/y", "org/z"]), st.sampled_from(SHAS)), max_size=8
    ),
    pages=st.integers(1, 3),
)
def test_a_repo_listed_twice_with_two_shas_is_asked_for_on_its_own(entries, pages):
    """Whatever order and pages: a repo listed with one sha only is taken, with two it is left out."""
    shas: dict[str, set[str]] = {}
    for repo, sha in entries:
        shas.setdefault(repo, set()).add(sha)
    expected = {repo: next(iter(s)) for repo, s in shas.items() if len(s) == 1}
    out: dict = {}
    ambiguous: set[str] = set()
    size = max(1, -(-len(entries) // pages))
    for start in range(0, max(1, len(entries)), size):
        page = [{"id": r, "sha": s} for r, s in entries[start : start + size]]
        listed_repos(page, out, ambiguous)
    assert {repo: entry.sha for repo, entry in out.items()} == expected


def test_both_clients_leave_out_a_repo_the_listing_names_twice(hub):
    sha = hub.add(spec("org/x"))[0]
    hub.add(spec("org/y"))
    stale = "0" * 40
    page = [{"id": "org/x", "sha": sha}, {"id": "org/y", "sha": "1" * 40}, {"id": "org/x", "sha": stale}]
    hub.add_fault(Fault("/api/models?", body=json.dumps(page).encode(), times=10))
    settings_ = fast_settings(hub.endpoint, retries=0)
    assert set(HubReader(settings_).listing("org")) == {"org/y"}
    assert quick.listing(settings_, "org", 5) == {"org/y": "1" * 40}


# -- a revision beyond Latin-1 -----------------------------------------------------------------------


@pytest.mark.parametrize("revision", ["версия", "修订", "v1\u2028", "é"])
def test_a_revision_beyond_latin_1_is_answered_and_said_to_be_missing(hub, tmp_path, capsys, revision):
    hub.add(spec("org/x"))
    code = main(["snapshot", f"org/x@{revision}", "--endpoint", hub.endpoint, "--cache-dir", str(tmp_path),
                 "--retries", "0"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 3 and "revision not found" in err and "internal error" not in err
    assert len(err.splitlines()) == 1
    assert [e.status for e in hub.log][-1:] in ([404], [200])  # answered, not a dropped connection


# -- a temp file dated in the future -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("ahead_s", "locked", "swept"),
    [
        (10 * 365 * 86400, False, True),  # years ahead: no live writer made it
        (FUTURE_SLACK_S * 2, False, True),
        (FUTURE_SLACK_S / 2, False, False),  # within a clock's slack of now: may be a live writer's
        (FUTURE_SLACK_S / 2, True, True),  # under the lock every leftover goes
        (-STALE_TMP_S * 2, False, True),  # old, as before
        (-STALE_TMP_S / 2, False, False),
    ],
)
def test_a_future_dated_temp_file_beside_a_baseline_is_swept(tmp_path, ahead_s, locked, swept):
    path = tmp_path / "fam.yaml"
    leftover = tmp_path / ".fam.yaml.abc123.tmp"
    leftover.write_text("half")
    when = time.time() + ahead_s
    os.utime(leftover, (when, when))
    atomic_write_text(path, "family: fam\n", **({"stale_tmp_after_s": 0} if locked else {}))
    assert leftover.exists() is not swept
    assert path.read_text() == "family: fam\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["fam.yaml"] + ([] if swept else [leftover.name])
    )
