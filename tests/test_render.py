"""Rendered reports as text: snapshot files, hostile names, and a diff too large for one comment.

Set HUBDIFF_UPDATE_SNAPSHOTS=1 to re-record tests/snapshots/ after a reviewed change.
"""

import json
import os
import re
from pathlib import Path

import pytest

from hubdiff._metrics.options import MetricsOptions
from hubdiff._render.markdown import COMMENT_LIMIT, code, md, render, render_comment
from hubdiff._source import HubSettings, Sources
from hubdiff._source.cache import SnapshotCache
from hubdiff.jobs import run_diff
from hubdiff.testing import CommitSpec, RepoSpec

SNAPSHOTS = Path(__file__).parent / "snapshots"


def outside_code(text: str) -> str:
    """The markdown with code spans and fenced blocks removed: what GitHub would interpret."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", text)


def assert_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("HUBDIFF_UPDATE_SNAPSHOTS") == "1" or not path.exists():
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        if os.environ.get("HUBDIFF_UPDATE_SNAPSHOTS") != "1":
            pytest.fail(f"snapshot {name} was missing and has been written; review and commit it")
    assert text == path.read_text(), f"{name} differs; re-record with HUBDIFF_UPDATE_SNAPSHOTS=1 after review"


def test_md_escapes_everything_that_could_break_markdown():
    assert md("<script>alert(1)</script>") == "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert md("ping @octocat please") == "ping @&#8203;octocat please"
    assert md("x.@user -@user +@user") == "x.@&#8203;user -@&#8203;user +@&#8203;user"  # GitHub mentions
    assert md("a@b.example") == "a@&#8203;b.example"  # not an e-mail autolink either
    assert md("a|b\nc") == "a\\|b c"
    assert md("[x](javascript:1) *b* `c`") == "\\[x\\](javascript:1) \\*b\\* \\`c\\`"
    assert md("see https://x.example and www.x.example") == "see https\\://x.example and www\\.x.example"
    assert md("MailTo:a xmpp:b") == "MailTo\\:a xmpp\\:b"
    # shown as the escapes \u202e, \u200b, \x1b (their backslash escaped for markdown)
    assert md("rtl\u202eevil\u200b\x1b[2J") == "rtl\\\\u202eevil\\\\u200b\\\\x1b\\[2J"
    assert md("k" * 1000).endswith("…") and len(md("k" * 1000)) == 300


def test_code_spans_cannot_be_closed_early():
    assert code("a`b") == "``a`b``"
    assert code("``x``") == "``` ``x`` ```"
    assert code("a|b") == "`a\\|b`"
    assert code("line\nbreak") == "`line break`"
    assert code("a\u202eb\x07") == "`a\\u202eb\\x07`"  # visible in code spans too


@pytest.fixture
def hostile_sources(hub, tmp_path):
    evil = "<img src=x onerror=alert(1)>|@admin`"
    long_key = "k" * 5000
    old_cfg = {"hidden_size": 8, "num_hidden_layers": 2, "vocab_size": 10, "num_attention_heads": 2}
    new_cfg = {**old_cfg, evil: "@everyone <b>bold</b> | pipe", long_key: 1, "note": "line1\nline2 ``` fence"}
    tensors = [(f"model.layers.{i}.self_attn.q_proj.weight", "BF16", (8, 8)) for i in range(2)]
    bad = [*tensors, (f"model.layers.0.{evil}.weight", "BF16", (2,))]
    hub.add(
        RepoSpec(
            "org/evil",
            [
                CommitSpec({"config.json": json.dumps(old_cfg).encode()}, tensors, title="a"),
                CommitSpec({"config.json": json.dumps(new_cfg).encode()}, bad, title="b"),
            ],
        )
    )
    return Sources(HubSettings(endpoint=hub.endpoint, retries=0), SnapshotCache(tmp_path / "c"))


def test_hostile_names_are_inert(hub, hostile_sources):
    shas = list(hub.repos["org/evil"].commits)
    report = run_diff(f"org/evil@{shas[0]}", f"org/evil@{shas[1]}", hostile_sources, MetricsOptions())
    for form in ("report", "comment", "summary"):
        text = render(report, form) if form != "comment" else render_comment(report)
        live = outside_code(text)
        assert not re.search(r"<(img|b|script)\b", live)  # no HTML outside code spans
        assert not re.search(r"(^|[^\w.+-])@(admin|everyone)\b", live)  # no live mentions
        for line in text.splitlines():
            if line.startswith("|"):
                cells = re.split(r"(?<!\\)\|", line)
                assert len(cells) == line.count("|") - line.count("\\|") + 1
        assert "k" * 400 not in text
    assert_snapshot("hostile-report.md", render(report))


def test_large_diff_fits_one_comment(hub, tmp_path):
    big_old = {f"key_{i:05d}": i for i in range(6000)}
    big_new = {f"key_{i:05d}": i + 1 for i in range(6000)}
    tensors_old = [(f"blocks.{i}.w{j}.weight", "F16", (4,)) for i in range(300) for j in range(20)]
    tensors_new = [(f"other.{i}.v{j}.weight", "F16", (4,)) for i in range(300) for j in range(20)]
    hub.add(
        RepoSpec(
            "org/big",
            [
                CommitSpec({"config.json": json.dumps(big_old).encode()}, tensors_old, title="a"),
                CommitSpec({"config.json": json.dumps(big_new).encode()}, tensors_new, title="b"),
            ],
        )
    )
    shas = list(hub.repos["org/big"].commits)
    sources = Sources(HubSettings(endpoint=hub.endpoint), SnapshotCache(tmp_path / "c"))
    report = run_diff(f"org/big@{shas[0]}", f"org/big@{shas[1]}", sources, MetricsOptions())
    full = render(report)
    assert len(full) > COMMENT_LIMIT
    comment = render_comment(report, full_report="reports/big.md", marker="big-family")
    assert len(comment) <= COMMENT_LIMIT
    assert comment.startswith("<!-- hubdiff:big-family -->")
    assert "more in the full report (reports/big.md)" in comment


def test_example_reports_match_their_snapshots(example_hub, example_cache, tmp_path):
    sources = Sources(
        HubSettings(endpoint=example_hub.endpoint), SnapshotCache(example_cache(tmp_path / "c"))
    )
    seed = run_diff("zai-org/GLM-5.3", "zai-org/GLM-5.3-Flash", sources, MetricsOptions(kv_dtype="fp8"))
    assert_snapshot("glm-5.3-vs-flash.md", render(seed))
    assert_snapshot(
        "glm-5.3-vs-flash.comment.md", render_comment(seed, full_report="reports/glm-5.3-vs-flash.md")
    )
    release = run_diff("zai-org/GLM-5", "zai-org/GLM-5.3", sources, MetricsOptions(kv_dtype="fp8"))
    assert_snapshot("glm-5-vs-5.3.txt", render(release, "text"))
    assert_snapshot("glm-5-vs-5.3.summary.md", render(release, "summary"))


def test_terminal_output_shows_control_characters_escaped(tmp_path):
    from hubdiff._render.text import snapshot_text
    from hubdiff._source.local import load_local
    from hubdiff.testing import write_checkpoint

    name = "model.layers.0.\x1b[2J\x07evil.weight"
    write_checkpoint(tmp_path, CommitSpec({"config.json": b"{}"}, [(name, "F16", (2,))]))
    text = snapshot_text(load_local(str(tmp_path)))
    assert "\x1b" not in text and "\x07" not in text
    assert "model.layers.0.\\x1b[2J\\x07evil.weight" in text


def test_the_full_report_link_is_the_workflow_run_in_actions():
    from hubdiff._render.markdown import full_report_link, workflow_run_url

    env = {
        "GITHUB_SERVER_URL": "https://git.example.invalid",
        "GITHUB_REPOSITORY": "acme/models",
        "GITHUB_RUN_ID": "77",
    }
    url = workflow_run_url(env)
    assert url == "https://git.example.invalid/acme/models/actions/runs/77"
    assert full_report_link("reports/glm-5.md", url) == (
        f"[job summary and artifacts of the workflow run]({url}) (`glm-5.md` in its artifacts)"
    )
    assert workflow_run_url({**env, "GITHUB_SERVER_URL": "javascript:alert(1)//"}) is None  # goes into a link
    assert workflow_run_url({**env, "GITHUB_RUN_ID": "77) [x](y"}) is None
    assert workflow_run_url({}) is None and full_report_link("reports/a.md", None) == "reports/a.md"
