"""The lock (.ci/constraints.txt) and what says when the newest versions moved from it (drift.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from .conftest import script_module

ROOT = Path(__file__).parent.parent
LOCK = ROOT / ".ci" / "constraints.txt"


def test_the_lock_pins_every_dependency_and_test_dependency_exactly():
    drift = script_module(ROOT / ".github" / "scripts" / "drift.py")
    pins = drift.locked(LOCK.read_text())
    text = (ROOT / "pyproject.toml").read_text()  # (tomllib is 3.11's; hubdiff runs on 3.10 too)
    lists = [re.search(rf"^{key} = \[(.*?)^\]", text, re.M | re.S)[1] for key in ("dependencies", "test")]
    wanted = re.findall(r'^\s*"([^"]+)"', "".join(lists), re.M)
    names = {drift.canonical(re.match(r"[A-Za-z0-9._-]+", w)[0]) for w in wanted}
    assert names <= set(pins), sorted(names - set(pins))
    assert "hubdiff" not in pins
    # the pin pyproject makes of transformers is the lock's, and the sweep's
    from hubdiff._metrics.proven import SWEPT_TRANSFORMERS

    assert f"transformers=={pins['transformers']}" in wanted
    assert pins["transformers"] == SWEPT_TRANSFORMERS


def test_the_ci_script_and_the_readme_install_through_the_lock():
    command = "-c .ci/constraints.txt -e '.[test]' && pytest -n auto"
    assert f"pip install -q {command}" in (ROOT / ".ci" / "run").read_text()
    assert f"pip install {command}" in (ROOT / "README.md").read_text()


def test_drift_names_what_moved_appeared_and_went():
    drift = script_module(ROOT / ".github" / "scripts" / "drift.py")
    lock = drift.locked("# comment\njinja2==3.1.6\nTorch==2.13.0\nold-thing==1.0\n\nnot a pin\n")
    assert lock == {"jinja2": "3.1.6", "torch": "2.13.0", "old-thing": "1.0"}
    now = {"jinja2": "3.1.7", "torch": "2.13.0+cpu", "new_thing": "0.1", "hubdiff": "0.1.0"}
    rows = drift.drift(lock, {drift.canonical(k): v for k, v in now.items()})
    assert rows == [("jinja2", "3.1.6", "3.1.7"), ("new-thing", "—", "0.1"), ("old-thing", "1.0", "—")]
    text = drift.markdown(rows)
    assert text.splitlines()[2] == "| `jinja2` | `3.1.6` | `3.1.7` |"
    assert "nothing moved" in drift.markdown([])


def test_drift_of_this_environment_runs_as_the_workflow_runs_it():
    done = subprocess.run(
        [sys.executable, str(ROOT / ".github" / "scripts" / "drift.py"), str(LOCK)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(("| package |", "The newest versions pyproject allows are the locked ones"))


def test_every_package_of_src_is_in_the_wheel():
    """setuptools' package list is explicit: a package missing from it imports from a clone (the
    editable install) and not from the wheel the workflows and the action install."""
    text = (ROOT / "pyproject.toml").read_text()
    listed = set(
        re.findall(
            r'^\s*"(hubdiff[\w.]*)",', re.search(r"^packages = \[(.*?)^\]", text, re.M | re.S)[1], re.M
        )
    )
    src = ROOT / "src"
    found = {
        ".".join(init.parent.relative_to(src).parts)
        for init in src.rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert found <= listed, sorted(found - listed)
