"""The shipped report templates compiled to Python ahead of time, as jinja2's ``compile_templates``
writes them, so that a run imports them (with their bytecode) instead of compiling them.

Compiling ``_macros.md.j2`` and a report template took ~70 ms of every ``hubdiff check``, more than the
rest of a warm run's own work. A bytecode cache on disk would spare that too, but it is code read back
from a cache folder, which can be planted (one restored in CI); these modules are part of the package,
as trusted as the rest of it. ``markdown.environment`` uses them only while they are fresh: compiled by
the installed jinja2 from the templates as they are now (``_manifest``: the version and each source's
sha256); otherwise it compiles the sources, as before. ``scripts/compile_templates.py`` writes them;
``tests/test_compiled_templates.py`` fails when they are stale.
"""

from __future__ import annotations

import hashlib
import re
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import jinja2

HERE = Path(__file__).parent
# A file-wide lint waiver and no formatting: the code is jinja2's, and its line table (``debug_info``)
# points template lines at these lines, moved down by the header.
HEADER = "# ruff: noqa\n# fmt: off\n"
_DEBUG_INFO = re.compile(r"^debug_info = '([0-9=&]*)'$", re.M)


def template_names() -> list[str]:
    """The shipped templates: every ``*.j2`` of ``hubdiff.templates``."""
    return sorted(p.name for p in files("hubdiff.templates").iterdir() if p.name.endswith(".j2"))


def source_of(name: str) -> str:
    return (files("hubdiff.templates") / name).read_text(encoding="utf-8")


def digest(name: str) -> str:
    return hashlib.sha256((files("hubdiff.templates") / name).read_bytes()).hexdigest()


def module_text(env: jinja2.Environment, name: str) -> str:
    """What ``compile_templates`` writes for ``name`` (``env.compile(..., raw=True, defer_init=True)``),
    with the header, the line table moved down by its lines, and a final newline."""
    code = env.compile(source_of(name), name, name, raw=True, defer_init=True)
    shift = HEADER.count("\n")

    def moved(match: re.Match[str]) -> str:
        pairs = [pair.split("=") for pair in match.group(1).split("&") if pair]
        return "debug_info = '" + "&".join(f"{t}={int(c) + shift}" for t, c in pairs) + "'"

    return HEADER + _DEBUG_INFO.sub(moved, code).rstrip("\n") + "\n"


def manifest_text(version: str) -> str:
    lines = [f"{name!r}: {digest(name)!r},".replace("'", '"') for name in template_names()]
    return (
        '"""Written by scripts/compile_templates.py: the jinja2 that compiled the modules beside this,\n'
        'and the sha256 of each template it compiled."""\n\n'
        f'JINJA2 = "{version}"\n'
        "SOURCES = {\n" + "".join(f"    {line}\n" for line in lines) + "}\n"
    )


def fresh(version: str) -> bool:
    """Whether the modules were compiled by this jinja2 from the templates as they are now."""
    try:
        from ._manifest import JINJA2, SOURCES
    except ImportError:
        return False
    return version == JINJA2 and {name: digest(name) for name in template_names()} == SOURCES
