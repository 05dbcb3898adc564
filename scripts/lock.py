"""Write the lock (``.ci/constraints.txt``): the exact versions CI and the README's test command install.

    python scripts/lock.py                         # the lock from this environment's versions
    python scripts/lock.py --transformers newest   # move to transformers' newest release (or a version)

Run it in a venv made for the purpose (``pip install -e '.[test]'`` takes the newest versions pyproject
allows). ``--transformers`` also pins pyproject's ``transformers==`` to that release and installs it here:
hubdiff's dependency range is what the sweep has proven (``scripts/sweep.py``, run next), so a new
release moves the range, the lock and the proof together (``.github/workflows/sweep.yml``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / ".ci" / "constraints.txt"
PYPROJECT = ROOT / "pyproject.toml"
HEADER = (
    "# The versions CI and the README's test command install (pip install -c .ci/constraints.txt -e '.[test]').\n"
    "# Written by scripts/lock.py; .github/workflows/latest.yml tries the newest versions pyproject allows.\n"
)
_PIN = re.compile(r'"transformers==([^"]+)"')
# the project itself and the installers are not pinned
_SKIP = {"hubdiff", "pip", "setuptools", "wheel"}


def lock_text(versions: dict[str, str]) -> str:
    lines = [
        f"{name}=={version.split('+')[0]}"
        for name, version in sorted(versions.items(), key=lambda i: i[0].lower())
    ]
    return HEADER + "\n".join(lines) + "\n"


def installed() -> dict[str, str]:
    return {
        d.metadata["Name"]: d.version
        for d in metadata.distributions()
        if d.metadata["Name"] and d.metadata["Name"].lower() not in _SKIP
    }


def newest(package: str) -> str:
    """The newest release on the index pip is set up for."""
    out = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", package],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = re.search(rf"^{re.escape(package)} \(([^)]+)\)", out, re.M | re.I)
    if not found:
        raise SystemExit(f"lock.py: pip found no release of {package}")
    return found[1]


def pin_transformers(version: str) -> str | None:
    """Pin pyproject's transformers to ``version``; the pin it had."""
    text = PYPROJECT.read_text(encoding="utf-8")
    old = _PIN.search(text)
    if old is None:
        raise SystemExit("lock.py: pyproject.toml has no transformers== pin")
    PYPROJECT.write_text(_PIN.sub(f'"transformers=={version}"', text, count=1), encoding="utf-8")
    return old[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transformers", help="a version, or 'newest'")
    args = parser.parse_args(argv)
    if args.transformers:
        version = newest("transformers") if args.transformers == "newest" else args.transformers
        before = pin_transformers(version)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", f"transformers=={version}"], check=True)
        print(f"transformers {before} -> {version}")
        if os.environ.get("GITHUB_OUTPUT"):
            with open(os.environ["GITHUB_OUTPUT"], "a", encoding="utf-8") as out:
                out.write(f"version={version}\nchanged={json.dumps(before != version)}\n")
    LOCK.write_text(lock_text(installed()), encoding="utf-8")
    print(f"wrote {LOCK.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
