"""The code is ruff clean (lint and format) and mypy clean, as the README promises."""

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
    """The configuration in pyproject.toml ([tool.mypy]): src/hubdiff, generated templates aside.

    Incremental, with its cache in the user's own cache folder (the suite's XDG_CACHE_HOME is a fresh
    one per run): a clone checked again on the same machine costs ~3 s of CPU instead of ~20. mypy
    trusts a cached module only if its source hashes the same, and a lock keeps two runs from writing
    the cache at once."""
    from filelock import FileLock

    mypy = shutil.which("mypy")
    assert mypy, "mypy is installed by the test extra"
    cache = Path.home() / ".cache" / "hubdiff-tests" / "mypy"
    cache.mkdir(parents=True, exist_ok=True)
    with FileLock(cache.with_suffix(".lock")):
        checked = subprocess.run([mypy, "--cache-dir", str(cache)], cwd=ROOT, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout[-3000:]
