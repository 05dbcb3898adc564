"""The shipped templates are compiled once per user, jinja2 and template text (``hubdiff._render.compiled``):
imported from a folder of the user's alone, rendering exactly what the sources render, never read back
from a folder someone else could have written, and never stale when jinja2 or a template changes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

import jinja2
import pytest
from jinja2 import ModuleLoader

from hubdiff._metrics.options import MetricsOptions
from hubdiff._render import compiled
from hubdiff._render.markdown import environment, render, render_comment
from hubdiff._source import HubSettings, Sources
from hubdiff._source.cache import SnapshotCache
from hubdiff.jobs import run_diff
from hubdiff.testing import CommitSpec, RepoSpec


@pytest.fixture
def code_home(tmp_path, monkeypatch):
    """A home of its own for compiled templates, and environments built afresh in it."""
    home = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    environment.cache_clear()
    yield home / "hubdiff" / "templates"
    environment.cache_clear()


def test_a_run_compiles_them_once_into_a_private_folder_and_imports_them(code_home, tmp_path):
    env = environment(None)
    template = env.get_template("report.md.j2")
    (folder,) = [p for p in code_home.iterdir() if not p.name.startswith(".")]
    assert Path(template.filename).parent == folder  # imported, not compiled from source
    assert folder.name == compiled.code_key(env)
    for name in compiled.template_names():
        module = folder / ModuleLoader.get_module_filename(name)
        assert module.read_text(encoding="utf-8") == compiled.module_text(env, name)
        assert not os.stat(module).st_mode & 0o022
    for path in (code_home, code_home.parent, folder):
        assert os.stat(path).st_mode & 0o077 == 0, path
    # a template folder still overrides a shipped template, and the rest still comes compiled
    (tmp_path / "report.md.j2").write_text("mine: {{ results | length }}\n")
    mine = environment(tmp_path)
    assert Path(mine.get_template("report.md.j2").filename) == tmp_path / "report.md.j2"
    assert Path(mine.get_template("summary.md.j2").filename).parent == folder
    # and a template's source can still be had through the loader (the compiled one passes)
    assert env.loader.get_source(env, "report.md.j2")[0] == compiled.source_of("report.md.j2")


def test_another_jinja2_or_an_edited_template_names_another_folder(code_home, monkeypatch):
    env = environment(None)
    key = compiled.code_key(env)
    with monkeypatch.context() as patched:
        patched.setattr(jinja2, "__version__", jinja2.__version__ + ".post1")  # whatever is installed
        assert compiled.code_key(env) != key
    assert compiled.code_key(env) == key
    digest = compiled.digest
    monkeypatch.setattr(
        compiled, "digest", lambda name: digest(name) + ("x" if name == "report.md.j2" else "")
    )
    assert compiled.code_key(env) != key
    env.trim_blocks = False
    assert compiled.code_key(env) != key


@pytest.mark.parametrize("planted", ["group-writable module", "group-writable folder", "symlinked folder"])
def test_a_folder_others_could_write_is_never_imported(code_home, tmp_path, planted):
    """Code is read back only from a folder of the user's alone: a planted module never runs, and the
    templates are compiled in memory instead."""
    env = environment(None)
    environment.cache_clear()
    folder = code_home / compiled.code_key(env)
    assert folder.is_dir()
    marker = tmp_path / "ran"
    module = folder / ModuleLoader.get_module_filename("report.md.j2")
    module.write_text(f"open({str(marker)!r}, 'w').close()\n" + module.read_text())
    if planted == "group-writable module":
        module.chmod(0o664)
    elif planted == "group-writable folder":
        folder.chmod(0o770)
    else:
        elsewhere = tmp_path / "elsewhere"
        folder.rename(elsewhere)
        folder.symlink_to(elsewhere)
    template = environment(None).get_template("report.md.j2")
    assert not marker.exists()
    assert Path(template.filename).parent == Path(str(files("hubdiff.templates")))  # from source


def test_without_a_writable_home_the_templates_compile_in_memory(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    environment.cache_clear()
    try:
        template = environment(None).get_template("report.md.j2")
        assert Path(template.filename).parent == Path(str(files("hubdiff.templates")))
    finally:
        environment.cache_clear()


def test_compiled_and_source_templates_render_the_same(hub, tmp_path, code_home):
    cfg = {"hidden_size": 8, "num_hidden_layers": 2, "vocab_size": 10, "num_attention_heads": 2}
    tensors = [(f"model.layers.{i}.self_attn.q_proj.weight", "BF16", (8, 8)) for i in range(2)]
    commits = [
        CommitSpec({"config.json": json.dumps(cfg).encode()}, tensors, title="a"),
        CommitSpec(
            {"config.json": json.dumps({**cfg, "hidden_size": 16}).encode()},
            [*tensors[:1], ("model.layers.1.self_attn.q_proj.weight", "BF16", (16, 8))],
            title="b",
        ),
    ]
    hub.add(RepoSpec("org/pair", commits))
    shas = list(hub.repos["org/pair"].commits)
    sources = Sources(HubSettings(endpoint=hub.endpoint, retries=0), SnapshotCache(tmp_path / "c"))
    report = run_diff(f"org/pair@{shas[0]}", f"org/pair@{shas[1]}", sources, MetricsOptions())
    assert Path(environment(None).get_template("report.md.j2").filename).parent.parent == code_home
    shipped = Path(str(files("hubdiff.templates")))  # as a template folder: every template from source
    assert Path(environment(shipped).get_template("report.md.j2").filename).parent == shipped
    for form in ("report", "text", "summary", "changes"):
        assert render(report, form) == render(report, form, shipped), form
    assert render_comment(report) == render_comment(report, shipped)


def test_runs_side_by_side_compile_one_folder(tmp_path):
    """Four processes rendering at once from an empty home: one folder, whole, and each process's
    output the same."""
    code = (
        "from hubdiff._render.markdown import environment\n"
        "print(environment(None).get_template('report.md.j2').filename)\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    runs = [
        subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    outputs = {run.communicate(timeout=120)[0].strip() for run in runs}
    root = tmp_path / "hubdiff" / "templates"
    (folder,) = [p for p in root.iterdir() if not p.name.startswith(".")]
    assert not [p for p in root.iterdir() if p.name.startswith(".draft-")]
    assert outputs == {str(folder / ModuleLoader.get_module_filename("report.md.j2"))}
