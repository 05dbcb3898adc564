"""The shipped templates come compiled (``hubdiff._render.compiled``): fresh, used, and rendering
exactly what the sources render."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

import jinja2
from jinja2 import ModuleLoader

from hubdiff._metrics import MetricsOptions
from hubdiff._render import compiled
from hubdiff._render.markdown import environment, render, render_comment
from hubdiff._source import HubSettings, Sources
from hubdiff._source.cache import SnapshotCache
from hubdiff.jobs import run_diff
from hubdiff.testing import CommitSpec, RepoSpec

STALE = "stale: run python scripts/compile_templates.py after editing a template or upgrading jinja2"


def test_the_compiled_modules_are_what_this_jinja2_makes_of_the_templates_as_they_are():
    env = environment(None)
    for name in compiled.template_names():
        module = compiled.HERE / ModuleLoader.get_module_filename(name)
        assert module.is_file(), f"{name}: no compiled module; {STALE}"
        assert module.read_text(encoding="utf-8") == compiled.module_text(env, name), f"{name}: {STALE}"
    written = {p.name for p in compiled.HERE.glob("tmpl_*.py")}
    assert written == {ModuleLoader.get_module_filename(n) for n in compiled.template_names()}, STALE
    assert compiled.fresh(jinja2.__version__), STALE


def test_a_run_loads_them_and_a_template_folder_still_overrides_them(tmp_path):
    template = environment(None).get_template("report.md.j2")
    assert Path(template.filename).parent == compiled.HERE  # imported, not compiled
    (tmp_path / "report.md.j2").write_text("mine: {{ results | length }}\n")
    mine = environment(tmp_path).get_template("report.md.j2")
    assert Path(mine.filename) == tmp_path / "report.md.j2"
    # what the override does not replace still comes compiled
    assert Path(environment(tmp_path).get_template("summary.md.j2").filename).parent == compiled.HERE
    # and a template's source can still be had through the environment's loader (the compiled loader
    # holds none and passes)
    env = environment(None)
    assert env.loader.get_source(env, "report.md.j2")[0] == compiled.source_of("report.md.j2")


def test_compiled_and_source_templates_render_the_same(hub, tmp_path):
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
    shipped = Path(str(files("hubdiff.templates")))  # as a template folder: every template from source
    assert Path(environment(shipped).get_template("report.md.j2").filename).parent == shipped
    for form in ("report", "text", "summary", "changes"):
        assert render(report, form) == render(report, form, shipped), form
    assert render_comment(report) == render_comment(report, shipped)
