"""The quick loop (``pytest -n auto -m "not slow"``) stays honest: every test it leaves out exists, and
every test module keeps tests in it, so a change to any part of hubdiff meets some test there."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from .conftest import slow_tests

TESTS = Path(__file__).parent


def _test_functions(module: Path) -> set[str]:
    tree = ast.parse(module.read_text())
    return {
        node.name
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_")
    }


def test_every_slow_test_exists_and_every_module_keeps_a_quick_one():
    """A module listed whole (its cheapest test alone costs 10 s: a season of workflow runs) is the
    exception, and it must hold one test only: a module of several keeps its cheapest."""
    slow = slow_tests()
    assert len(slow) > 50
    modules = {f"tests/{p.name}": _test_functions(p) for p in TESTS.glob("test_*.py")}
    whole = {node for node in slow if "::" not in node}
    for node in slow - whole:
        path, name = node.split("::")
        assert name in modules.get(path, set()), f"tests/slow_tests.txt: {node} is no test"
    for path in whole:
        assert len(modules.get(path, ())) == 1, f"tests/slow_tests.txt: {path} is not a module of one test"
    for path, names in modules.items():
        if names and path not in whole:
            assert names - {n.split("::")[1] for n in slow if n.startswith(path + "::")}, path


def test_the_marker_selects_what_the_list_says():
    """Collected for real: the slow tests of one module are deselected by -m 'not slow', the rest run."""
    module = "tests/test_accept.py"
    listed = {n.split("::")[1] for n in slow_tests() if n.startswith(module + "::")}
    assert listed
    run = subprocess.run(
        [sys.executable, "-m", "pytest", module, "-m", "not slow", "--collect-only", "-q"],
        cwd=TESTS.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    kept = {line.split("::")[1].split("[")[0] for line in run.stdout.splitlines() if "::" in line}
    assert kept and not kept & listed, run.stdout
    assert "deselected" in run.stdout.splitlines()[-1], run.stdout
