"""Compile the shipped report templates to Python modules (``src/hubdiff/_render/compiled``).

    python scripts/compile_templates.py

Run after editing a template in ``templates/``, or after upgrading jinja2: until then hubdiff compiles
the templates on every run (correct, ~70 ms slower), and tests/test_compiled_templates.py fails.
"""

from __future__ import annotations

import jinja2
from jinja2 import ModuleLoader

from hubdiff._render import compiled
from hubdiff._render.markdown import environment


def main() -> None:
    env = environment(None)
    for old in compiled.HERE.glob("tmpl_*.py"):
        old.unlink()
    for name in compiled.template_names():
        (compiled.HERE / ModuleLoader.get_module_filename(name)).write_text(
            compiled.module_text(env, name), encoding="utf-8"
        )
    (compiled.HERE / "_manifest.py").write_text(compiled.manifest_text(jinja2.__version__), encoding="utf-8")
    print(f"compiled {len(compiled.template_names())} templates into {compiled.HERE}")


if __name__ == "__main__":
    main()
