"""The README's commands run as written, from a clone, against the example replica (what
``hubdiff demo --serve`` serves), and the example folders they name are what examples/make.py writes."""

from __future__ import annotations

import filecmp
import os
import re
import shlex
import shutil
from pathlib import Path

import pytest

from hubdiff.cli import main

ROOT = Path(__file__).parent.parent


def readme_commands() -> list[list[str]]:
    """Every ``hubdiff`` line of the shell blocks in the README's Commands section, in order."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    return [  # --witness builds the model with torch (seconds to import): tests/test_witness.py runs it
        shlex.split(line, comments=True)
        for b in blocks
        for line in b.splitlines()
        if line.startswith("hubdiff ") and "--witness" not in line
    ]


def test_the_example_folders_are_what_make_writes(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_examples", ROOT / "examples" / "make.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    for name in ("old", "new"):
        compared = filecmp.dircmp(tmp_path / name, ROOT / "examples" / name)
        assert not (compared.left_only or compared.right_only or compared.diff_files), name
        _, mismatch, errors = filecmp.cmpfiles(
            tmp_path / name, ROOT / "examples" / name, ["config.json", "model.safetensors"], shallow=False
        )
        assert not mismatch and not errors, name


def test_every_readme_command_runs_as_written(example_hub, example_cache, tmp_path, monkeypatch, capsys):
    commands = readme_commands()
    assert len(commands) >= 15 and all(c[0] == "hubdiff" for c in commands)
    for folder in ("baselines", "examples"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_ENDPOINT", example_hub.endpoint)
    monkeypatch.setenv("HUBDIFF_CACHE", str(example_cache(tmp_path / "cache")))
    expected = {"diff": 1}  # two sources that differ; everything else finds nothing wrong
    for argv in commands:
        code = main(argv[1:])
        out, err = capsys.readouterr()
        assert "internal error" not in err and "Traceback" not in err, (argv, err)
        assert code == expected.get(argv[1], 0), (shlex.join(argv), code, err[-500:])
        assert out or argv[1] == "baseline" or "--output" in argv, shlex.join(argv)


@pytest.mark.parametrize("command", ["diff examples/old examples/new --format text"])
def test_the_folder_diff_says_what_changed(command, capsys):
    assert main(shlex.split(command)) == 1
    out = capsys.readouterr().out
    assert "num_key_value_heads: 2 -> 1" in out and "rope_theta: 500,000 -> 1,000,000" in out
    # 2 layers x (K and V) x 16 dims x 2 KV heads x 2 bytes = 256 bytes a token, then 1 head: 128
    assert "KV cache per token 256 → 128 bytes" in out


def test_the_sample_output_is_what_the_command_prints():
    """The front page's sample is real: the command it shows, run from the clone, prints exactly it."""
    import subprocess
    import sys

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## What it says\n", 1)[1].split("\n## ", 1)[0]
    (sample,) = re.findall(r"```console\n\$ (.*?)\n(.*?)```", section, re.S)
    command, shown = sample
    assert command.startswith("hubdiff ")
    done = subprocess.run(
        [sys.executable, "-m", *shlex.split(command)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        env={**os.environ, "COLUMNS": "80"},  # the text form wraps its headline to the terminal's width
    )
    assert done.returncode == 1, done.stderr  # two folders that differ
    assert done.stdout.rstrip("\n") == shown.rstrip("\n")


def test_the_front_page_links_every_docs_page_and_every_link_resolves():
    """The README is the front page; the rest lives in docs/, every page reachable from it, and every
    relative link (README and docs alike) names a file that exists and, with #anchor, a heading in it."""
    pages = sorted((ROOT / "docs").glob("*.md"))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert pages and {f"docs/{p.name}" for p in pages} <= set(re.findall(r"\]\((docs/[\w.-]+\.md)\)", readme))
    assert len(readme.splitlines()) < 200  # a front page, read in two minutes
    for page in [ROOT / "README.md", *pages]:
        for target, anchor in re.findall(
            r"\]\(([\w./-]+\.md)(?:#([\w-]+))?\)", page.read_text(encoding="utf-8")
        ):
            linked = (page.parent / target).resolve()
            assert linked.is_file(), (page.name, target)
            if anchor:
                headings = re.findall(r"^#+ (.*)$", linked.read_text(encoding="utf-8"), re.M)
                slugs = {re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-") for h in headings}
                assert anchor in slugs, (page.name, target, anchor)
