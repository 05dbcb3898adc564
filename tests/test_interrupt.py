"""Ctrl-C at any moment of a run: exit 130 and the one line "hubdiff: interrupted", never a traceback.

The run is kept busy by an endpoint that accepts connections and never answers, so it is still
running when the interrupt comes: during the imports of start-up, parsing, the request, the wait.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module")
def silent_endpoint() -> Iterator[str]:
    """A server that takes connections (the kernel's backlog) and never says a word."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(64)
        yield f"http://127.0.0.1:{server.getsockname()[1]}"


# seconds after hubdiff's first module has loaded (the interpreter's own start, before any of
# hubdiff's code, is Python's): during the imports of start-up, parsing, the request, the wait
MOMENTS = [0.005, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 0.8, 1.2, 2.0, 3.0]


@pytest.mark.parametrize("after_s", MOMENTS)
def test_ctrl_c_at_any_moment_is_one_line_and_130(silent_endpoint, tmp_path, after_s):
    proc = subprocess.Popen(
        [
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "hubdiff",
            "snapshot",
            "org/m",
            "--timeout",
            "60",
            "--retries",
            "0",
            "--cache-dir",
            str(tmp_path / "c"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HF_ENDPOINT": silent_endpoint},
    )
    said: list[str] = []
    started = threading.Event()

    def read() -> None:
        for line in proc.stderr:
            if not line.startswith("import time:"):
                said.append(line)
            elif line.rstrip().endswith("hubdiff._entry"):
                started.set()

    reader = threading.Thread(target=read)
    reader.start()
    assert started.wait(timeout=60)
    time.sleep(after_s)
    proc.send_signal(signal.SIGINT)
    out = proc.stdout.read()
    assert proc.wait(timeout=60) == 130
    reader.join(timeout=60)
    assert (out, said) == ("", ["hubdiff: interrupted\n"])


def test_ctrl_c_while_shutting_down_is_one_line_and_130():
    """After main has returned, the interpreter's exit (joining threads) interrupted."""
    code = (
        "import os, signal, sys, threading, time\n"
        "from hubdiff import _entry, cli\n"
        "def main():\n"
        "    threading.Thread(target=time.sleep, args=(30,)).start()  # joined at exit\n"
        "    threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()\n"
        "    return 0\n"
        "cli.run = main\n"
        "sys.exit(_entry.run())\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stdout, result.stderr) == (130, "", "hubdiff: interrupted\n")


@pytest.mark.parametrize("where", ["caught by main", "caught at the entry"])
def test_an_interrupt_inside_generated_code_is_still_130(tmp_path, where):
    """dataclasses and namedtuple build their methods with exec. CPython marks an interrupt that
    leaves such code as unhandled and, under ``python -m``, ends the process by SIGINT (-2 to its
    parent) although the interrupt was handled. Run as ``-m``, as ``python -m hubdiff`` is."""
    raised = "exec('raise KeyboardInterrupt')"
    body = (
        f"    try:\n        {raised}\n    except KeyboardInterrupt:\n"
        "        print('hubdiff: interrupted', file=sys.stderr)\n        return 130\n"
        if where == "caught by main"
        else f"    {raised}\n"
    )
    (tmp_path / "interrupted_run.py").write_text(
        "import sys\n"
        "from hubdiff import _entry, cli\n"
        f"def main():\n{body}"
        "cli.run = main\n"
        "sys.exit(_entry.run())\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "interrupted_run"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert (result.returncode, result.stdout, result.stderr) == (130, "", "hubdiff: interrupted\n")
