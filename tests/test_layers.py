"""The house: every import of hubdiff's own modules goes down the stages, and no modules import each
other in a circle.

A run goes source -> metrics -> compare -> render, and the code stands the same way: a stage imports
the ones below it, never one above. The imports are read from the code (``ast``), every one of them:
at the top of a module, inside a function (the lazy ones that keep a warm run fast) and under
``TYPE_CHECKING``, so an import moved into a function to dodge a circle is still seen.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).parent.parent / "src"

# Lowest first. A module belongs to the stage of the longest prefix that names it (a package names
# every module under it). The Snapshot type is below the source: the source builds snapshots, every
# stage above reads them.
STAGES: list[tuple[str, tuple[str, ...]]] = [
    (
        "foundation",
        (
            "hubdiff",  # the package itself: __version__
            "hubdiff._files",
            "hubdiff._gc",
            "hubdiff._json",
            "hubdiff._say",
            "hubdiff._threads",
            "hubdiff.dtypes",
            "hubdiff.errors",
            "hubdiff.patterns",
            "hubdiff.snapshot",
            "hubdiff.units",
            "hubdiff.visible",
        ),
    ),
    ("source", ("hubdiff._source",)),
    ("metrics", ("hubdiff._metrics",)),
    ("compare", ("hubdiff._compare", "hubdiff._release")),
    ("baseline", ("hubdiff._baseline",)),
    ("results", ("hubdiff.results",)),
    ("render", ("hubdiff._render",)),
    ("jobs", ("hubdiff.jobs",)),
    (
        "commands",
        (
            "hubdiff.__main__",
            "hubdiff._entry",
            "hubdiff.cli",
            "hubdiff.demo",
            "hubdiff.pytest_plugin",
            "hubdiff.testing",
            "hubdiff.watch",
        ),
    ),
]

# Circles known and left for later, each with why; the test fails once one is gone, so the entry goes too.
KNOWN_CIRCLES: dict[frozenset[str], str] = {}


def modules() -> dict[str, tuple[Path, bool]]:
    """Every module of hubdiff: dotted name -> (file, is a package's __init__)."""
    out = {}
    for path in sorted((SRC / "hubdiff").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        package = parts[-1] == "__init__"
        if package:
            parts.pop()
        out[".".join(parts)] = (path, package)
    return out


def imports() -> dict[str, set[str]]:
    """Module -> the hubdiff modules it imports, wherever in the file the import stands."""
    known = modules()

    def owner(name: str) -> str | None:
        while name not in known and "." in name:
            name = name.rsplit(".", 1)[0]
        return name if name in known else None

    graph: dict[str, set[str]] = {}
    for module, (path, package) in known.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = module.split(".") if package else module.split(".")[:-1]
                    base = base[: len(base) - node.level + 1]
                    where = ".".join([*base, node.module] if node.module else base)
                else:
                    where = node.module or ""
                # ``from package import module`` imports the module; ``from module import name`` the module
                names = [f"{where}.{alias.name}" for alias in node.names] or [where]
                names = [n if n in known else where for n in names]
            for name in names:
                if name == "hubdiff" or name.startswith("hubdiff."):
                    target = owner(name)
                    if target is not None and target != module:
                        found.add(target)
        graph[module] = found
    return graph


def stage(module: str) -> int:
    best, rank = -1, None
    for i, (_, prefixes) in enumerate(STAGES):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), i
    assert rank is not None, f"{module} is in no stage: add it to STAGES"
    return rank


def circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(frozenset(component))
    return found


def test_every_module_is_in_a_stage():
    for module in modules():
        stage(module)


def test_no_module_imports_a_higher_stage():
    upward = [
        f"{module} ({STAGES[stage(module)][0]}) imports {target} ({STAGES[stage(target)][0]})"
        for module, targets in sorted(imports().items())
        for target in sorted(targets)
        if stage(target) > stage(module)
    ]
    assert not upward, "imports that go up a stage:\n" + "\n".join(upward)


def test_no_modules_import_each_other_in_a_circle():
    found = circles(imports())
    new = [sorted(c) for c in found if c not in KNOWN_CIRCLES]
    assert not new, f"modules that import each other in a circle: {new}"
    gone = [sorted(c) for c in KNOWN_CIRCLES if c not in found]
    assert not gone, f"no longer a circle, take it out of KNOWN_CIRCLES: {gone}"


def test_the_reader_sees_every_kind_of_import(tmp_path):
    """Top-level, relative, ``from package import module``, inside a function and under
    TYPE_CHECKING: each is an edge, and a circle through a function-level import is found."""
    graph = imports()
    assert "hubdiff._source.settings" in graph["hubdiff._source.quick"]  # from .settings import ...
    assert "hubdiff._source.hub" in graph["hubdiff._source.sources"]  # inside Sources.open
    assert "hubdiff.cli.metrics" in graph["hubdiff.cli"]  # from .metrics import register, in a function
    assert "hubdiff.cli.gguf" in graph["hubdiff.cli.snapshot"]  # from . import gguf
    assert "hubdiff._source.cache" in graph["hubdiff._metrics.compute"]  # under TYPE_CHECKING
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset("abc")]
    assert circles({"a": {"b"}, "b": set()}) == []
