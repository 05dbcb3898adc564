"""A corpus of hostile strings, rendered through GitHub's markdown parser (cmark-gfm) and to the terminal.

Each string goes into a config key, a config value, a tensor name and the folder name of a diff; every
report form (full, PR comment, job summary, text) is rendered, the markdown forms through cmark-gfm
with raw HTML let through (so that anything hubdiff emits is seen), and the HTML is walked: no tag but
the report's own, no link, no mention, no HTML comment but the marker, and no invisible character
anywhere (the zero-width space hubdiff puts after an ``@`` to break mentions is the one allowed).
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options

from hubdiff._metrics.options import MetricsOptions
from hubdiff._render.markdown import render, render_comment
from hubdiff._source import HubSettings, Sources
from hubdiff._source.cache import SnapshotCache
from hubdiff.cli import main
from hubdiff.jobs import run_diff
from hubdiff.testing import CommitSpec, write_checkpoint
from hubdiff.visible import printable

CORPUS = [
    # GFM autolinks, in every spelling the extension knows
    "https://evil.example/x",
    "HTTPS://EVIL.EXAMPLE",
    "http://evil.example",
    "ftp://evil.example",
    "www.evil.example",
    "WWW.evil.example/path",
    "mailto:a@evil.example",
    "xmpp:a@evil.example",
    "a@evil.example",
    "first.last+tag@evil.example",
    "<https://evil.example>",
    "[click](https://evil.example)",
    "![img](https://evil.example/x.png)",
    "[ref]: https://evil.example",
    # mentions
    "@admin",
    "x.@user",
    "-@user",
    "+@user",
    "(@user)",
    "@org/team",
    "`@user`",
    "user@main",
    # HTML and entities
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    '<a href="https://evil.example">x</a>',
    "<!-- hubdiff:other -->",
    "--> <b>x</b>",
    "<details open>",
    "&lt;b&gt; &#64;admin &#x40;x",
    # table and code breakers
    "a|b||c",
    "line1\nline2\n\n# heading",
    "``` fence",
    "`a` ``b``",
    "*emph* _x_ ~~s~~ # h",
    "\\|escaped",
    # invisible and reordering characters, terminal escapes
    "rtl\u202eexe.txt",
    "iso\u2066x\u2069",
    "mark\u200f\u200e",
    "zero\u200bwidth\u200c\u200d\u2060",
    "bom\ufeff",
    "tag\U000e0041\U000e007f",
    "filler\u3164x",
    "sep\u2028x\u2029",
    "nbsp\u00a0x",
    "clear\x1b[2J\x1b[H",
    "osc8\x1b]8;;https://evil.example\x07link\x1b]8;;\x07",
    "bell\x07csi\x9b31m",
    "nul\x00x",
    "variation\ufe0fx",
]
OUR_TAGS = {
    "h1",
    "h2",
    "h3",
    "h4",  # the PR comment's per-result "what changed that matters" heading
    "p",
    "ul",
    "li",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "code",
    "pre",
    "details",
    "summary",
    "strong",
    "br",
    "blockquote",  # the report's own note on unverified figures
}
MENTION = re.compile(r"(?:^|[^A-Za-z0-9_`])@[A-Za-z0-9]")  # GitHub's rule, a superset of it
INVISIBLE_OK_AFTER_AT = "\u200b"


class _Walk(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.comments: list[str] = []
        self.texts: list[tuple[str, bool]] = []  # (text, inside code)
        self.open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append(tag)
        if tag not in ("br",):
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.open:
            while self.open and self.open.pop() != tag:
                pass

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)

    def handle_data(self, data: str) -> None:
        self.texts.append((data, "code" in self.open or "pre" in self.open))


def invisible(text: str) -> list[str]:
    bad = []
    for i, ch in enumerate(text):
        if ch == "\n" or (ch == INVISIBLE_OK_AFTER_AT and i and text[i - 1] == "@"):
            continue
        if printable(ch) != ch:
            bad.append(repr(ch))
    return bad


def assert_inert(markdown: str, marker: str | None = None) -> None:
    html = cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)
    walk = _Walk()
    walk.feed(html)
    assert set(walk.tags) <= OUR_TAGS, sorted(set(walk.tags) - OUR_TAGS)
    assert walk.comments == ([f" hubdiff:{marker} "] if marker else []), walk.comments
    for text, in_code in walk.texts:
        assert not invisible(text), (invisible(text), text[:200])
        if not in_code:
            assert not MENTION.search(text), text[:300]


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    base = {"hidden_size": 8, "num_hidden_layers": 2, "vocab_size": 10, "num_attention_heads": 2, "note": "a"}
    old_tensors = [(f"model.layers.{i}.self_attn.q_proj.weight", "BF16", (8, 8)) for i in range(2)]
    new_config = dict(base)
    new_tensors = list(old_tensors)
    for i, text in enumerate(CORPUS):
        new_config[text] = text
        new_config[f"value_{i}"] = text
        new_tensors.append((f"model.layers.0.{text}.weight", "BF16", (i + 1,)))
    new_config["note"] = " ".join(CORPUS)
    old = write_checkpoint(root / "old", CommitSpec({"config.json": json.dumps(base).encode()}, old_tensors))
    assert old
    new_dir = root / "new www.evil.example @admin \u202etxt.exe \x1b[2J"
    write_checkpoint(new_dir, CommitSpec({"config.json": json.dumps(new_config).encode()}, new_tensors))
    sources = Sources(HubSettings(endpoint="http://127.0.0.1:9"), SnapshotCache(root / "cache"))
    report = run_diff(str(root / "old"), str(new_dir), sources, MetricsOptions())
    return report, root, new_dir


@pytest.mark.parametrize("form", ["report", "summary"])
def test_every_markdown_form_is_inert_on_github(hostile_report, form):
    report, _, _ = hostile_report
    text = render(report, form)
    assert len(report.results[0].comparison.config) > len(CORPUS)  # the strings are in the report
    assert_inert(text)


@pytest.mark.parametrize("rows", [None, 0])
def test_the_pr_comment_is_inert_and_keeps_its_exact_marker(hostile_report, rows):
    report, _, _ = hostile_report
    text = render_comment(report, marker="pr_checks", limit=10_000 if rows == 0 else 1_000_000)
    assert text.startswith("<!-- hubdiff:pr_checks -->\n")
    assert_inert(text, marker="pr_checks")


def test_text_reports_and_the_terminal_see_only_visible_characters(hostile_report, capsys):
    report, root, new_dir = hostile_report
    for line in render(report, "text").splitlines():
        assert printable(line) == line, line
    code = main(["diff", str(root / "old"), str(new_dir), "--format", "text"])
    out, err = capsys.readouterr()
    assert code == 1 and err == ""
    assert "\\u202e" in out and "\\x1b" in out  # shown, not obeyed
    for line in out.splitlines():
        assert printable(line) == line, line
    code = main(["snapshot", str(new_dir)])
    out, _ = capsys.readouterr()
    assert code == 0 and all(printable(line) == line for line in out.splitlines())


@pytest.mark.parametrize("marker", ["pr checks", "a-->b", "x--y", "", "@admin", "m\u202e"])
def test_a_marker_that_cannot_be_written_verbatim_is_refused(hostile_report, marker, capsys):
    _, root, new_dir = hostile_report
    with pytest.raises(SystemExit) as info:
        main(["diff", str(root / "old"), str(new_dir), "--comment", str(root / "c.md"), "--marker", marker])
    assert info.value.code == 2 and "--marker" in capsys.readouterr().err
    assert not (root / "c.md").exists()


def test_corpus_size():
    """docs/reliability.md states how many hostile strings are rendered; keep it honest."""
    readme = (Path(__file__).parents[1] / "docs" / "reliability.md").read_text()
    assert f"{len(CORPUS)} hostile strings" in readme
