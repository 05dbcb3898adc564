"""What a family's pull request proposes, for open_prs.sh: the Hub commits its baseline pins.

    proposal.py pins FILE          the repo@sha each repo of a baseline pins, sorted, one a line
    proposal.py marker BASE NEW    the hidden line naming the Hub commits NEW pins and BASE does not
    proposal.py body BODY MARKER OUT   BODY, then MARKER as its last line, cut to GitHub's body limit
    proposal.py prepare BASE NEW BODY OUT   the three for one family in one run: writes OUT (the body
                                   with NEW's marker) and prints NEW's pins (one interpreter, not three)

The pins, not the file's bytes, say whether two baselines propose the same thing: re-recording writes
the time it ran into the file, so the same Hub commits recorded twice differ in bytes. Both files were
written by hubdiff on this runner or are the default branch's own, and both are read as hubdiff reads
a baseline (bounded, plain data), not trusted for being ours.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from hubdiff._baseline.schema import read_yaml
from hubdiff.errors import HubdiffError
from hubdiff.visible import printable

BODY_LIMIT = 65_536  # characters GitHub takes in a pull request body
PIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*@[0-9a-f]{40}")
MARKER_PREFIX = "<!-- hubdiff:proposes "


def pins(path: str) -> list[str]:
    """Sorted repo@sha of every repo with a full sha; anything else (no sha yet, odd names) is left out,
    since it could not be told apart from another proposal anyway and must not reach the HTML comment."""
    data, _ = read_yaml(Path(path))
    repos = data.get("repos") if isinstance(data, dict) else None
    found = set()
    for repo, entry in (repos or {}).items():
        if isinstance(entry, dict) and PIN.fullmatch(pin := f"{repo}@{entry.get('sha')}"):
            found.add(pin)
    return sorted(found)


def marker(base: str, new: str) -> str:
    """The Hub commits a pull request asks to accept: pins of NEW that BASE lacks (all of NEW's when it
    adds none, so that the line still names what is proposed)."""
    proposed = sorted(set(pins(new)) - set(pins(base))) or pins(new)
    return MARKER_PREFIX + " ".join(proposed) + " -->"


def body(body_path: str, marker_line: str, out: str) -> None:
    text = Path(body_path).read_text(encoding="utf-8", errors="replace").rstrip("\n")
    tail = "\n\n" + marker_line + "\n"
    if len(text) + len(tail) > BODY_LIMIT:
        note = "\n\n… cut to fit a pull request body; the full report is in the workflow run's artifacts."
        text = text[: BODY_LIMIT - len(tail) - len(note)] + note
    Path(out).write_text(text + tail, encoding="utf-8")


def main(argv: list[str]) -> int:
    """One ``::error::`` line and exit 1 for a file that cannot be read as a baseline (a symlink, a
    folder, YAML hubdiff refuses), never a traceback in the job log."""
    try:
        return _run(argv)
    except HubdiffError as exc:
        print(f"::error::{exc.line()}", file=sys.stderr)  # stderr: stdout is the caller's data
    except OSError as exc:
        print(f"::error::proposal.py: {printable(exc.filename)}: {exc.strerror or exc}", file=sys.stderr)
    except Exception as exc:  # a bug here: still one line
        print(f"::error::proposal.py: internal error: {type(exc).__name__}", file=sys.stderr)
    return 1


def _run(argv: list[str]) -> int:
    if argv[:1] == ["pins"] and len(argv) == 2:
        print("\n".join(pins(argv[1])))
    elif argv[:1] == ["marker"] and len(argv) == 3:
        print(marker(argv[1], argv[2]))
    elif argv[:1] == ["body"] and len(argv) == 4:
        body(argv[1], argv[2], argv[3])
    elif argv[:1] == ["prepare"] and len(argv) == 5:
        body(argv[3], marker(argv[1], argv[2]), argv[4])
        print("\n".join(pins(argv[2])))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
