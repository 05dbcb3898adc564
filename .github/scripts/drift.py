"""What the newest versions pyproject allows changed from the lock (.ci/constraints.txt), as markdown.

    python .github/scripts/drift.py .ci/constraints.txt > drift.md

Run in the environment that ``pip install --upgrade --upgrade-strategy eager -e '.[test]'`` made: every
installed distribution is compared with its locked version. Names and versions are shown only when they
have the shapes PyPI gives them, so the text is safe in an issue whatever the metadata says.
"""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+!_-]*")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def locked(text: str) -> dict[str, str]:
    """``name==version`` lines of a constraints file (comments and anything else skipped)."""
    pins = {}
    for line in text.splitlines():
        m = re.fullmatch(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([^\s;#]+)\s*(#.*)?", line)
        if m:
            pins[canonical(m[1])] = m[2]
    return pins


def installed() -> dict[str, str]:
    out = {}
    for dist in metadata.distributions():
        name, version = dist.metadata["Name"], dist.version
        if name and _NAME.fullmatch(name) and _VERSION.fullmatch(version or ""):
            out[canonical(name)] = version
    return out


def drift(
    lock: dict[str, str],
    now: dict[str, str],
    ignore: frozenset[str] = frozenset({"hubdiff", "pip", "setuptools", "wheel"}),
) -> list[tuple[str, str, str]]:
    """(name, locked, installed) for every distribution whose version moved, appeared or went."""
    rows = []
    for name in sorted((set(lock) | set(now)) - ignore):
        before, after = lock.get(name, "—"), now.get(name, "—")
        if before.split("+")[0] != after.split("+")[0]:
            rows.append((name, before, after))
    return rows


def markdown(rows: list[tuple[str, str, str]]) -> str:
    if not rows:
        return "The newest versions pyproject allows are the locked ones: nothing moved.\n"
    lines = ["| package | locked | newest allowed |", "| --- | --- | --- |"]
    lines += [f"| `{n}` | `{a}` | `{b}` |" for n, a, b in rows]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: drift.py CONSTRAINTS", file=sys.stderr)
        return 2
    print(markdown(drift(locked(Path(argv[0]).read_text(encoding="utf-8")), installed())), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
