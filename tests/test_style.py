"""The code is ruff clean (lint and format) and mypy clean, as the README promises."""

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).parent.parent


def test_ruff_lint_and_format():
    ruff = shutil.which("ruff")
    assert ruff, "ruff is installed by the test extra"
    lint = subprocess.run([ruff, "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout
    fmt = subprocess.run([ruff, "format", "--check", "."], cwd=ROOT, capture_output=True, text=True)
    assert fmt.returncode == 0, fmt.stdout


def test_mypy():
    """The configuration in pyproject.toml ([tool.mypy]): src/hubdiff, generated templates aside."""
    mypy = shutil.which("mypy")
    assert mypy, "mypy is installed by the test extra"
    checked = subprocess.run(
        [mypy, "--no-incremental", "--cache-dir", os.devnull], cwd=ROOT, capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout[-3000:]
