"""The command line's first and last moments: Ctrl-C at any of them is one line and exit 130.

``cli.main`` turns a KeyboardInterrupt into "hubdiff: interrupted" while it runs, after the stages'
writes have cleaned up after themselves (temp files removed). Before it (importing hubdiff's stages
takes a noticeable part of a second) and after it (the interpreter joining threads, flushing
streams), an interrupt would be a traceback: there nothing is being written, so the process simply
says so and ends. Standard library only, imported first.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

INTERRUPTED = "hubdiff: interrupted"
# Set by ``run``: this process is hubdiff's command line and nothing else runs in it, so transformers may
# be imported as its configuration classes alone, torch hidden meanwhile (``_metrics.config.owns_process``).
# ``cli.main`` called by other code in its own process leaves it unset.
OWNS_PROCESS = False
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command ended by Ctrl-C


def _end_now(signum: int, frame: Any) -> None:
    """Start-up or shut-down: nothing half-written to clean up, so the line and out."""
    os.write(2, f"{INTERRUPTED}\n".encode())
    os._exit(EXIT_INTERRUPTED)


def _forget_unhandled_interrupt() -> None:
    """CPython marks a KeyboardInterrupt that leaves code run by ``exec`` of a string as unhandled,
    even when a caller catches it, and at exit kills the process with SIGINT instead of exiting with
    its code (``run_eval_code_obj`` in Python/pythonrun.c). dataclasses build their methods with
    ``exec``, so a Ctrl-C during a lazy import of a module that defines one made a handled interrupt
    exit by signal (-2 to a parent, not 130). Each ``exec`` of a string clears the mark on entry."""
    exec("")


def run() -> int:
    """The ``hubdiff`` script and ``python -m hubdiff``."""
    global OWNS_PROCESS
    OWNS_PROCESS = True
    sigint = hasattr(signal, "SIGINT")
    if sigint:
        signal.signal(signal.SIGINT, _end_now)
    try:
        from .cli import run as cli_run

        if sigint:  # from here a Ctrl-C is an exception, so that what is being written is cleaned up
            signal.signal(signal.SIGINT, signal.default_int_handler)
        code = cli_run()
    except KeyboardInterrupt:  # between the handlers and main's own, or in its error handling
        print(INTERRUPTED, file=sys.stderr)
        code = EXIT_INTERRUPTED
    if code == EXIT_INTERRUPTED:
        _forget_unhandled_interrupt()
    if sigint:
        signal.signal(signal.SIGINT, _end_now)  # threads joined and streams flushed at exit
    return code
