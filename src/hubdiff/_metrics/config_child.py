"""transformers' reading of a config, in a child process started when a cold read of a Hub repo starts.

A cold ``metrics`` of a real repo imports transformers (~0.9 s of CPU, ~40 MiB) for one configuration
class (a few ms). In a thread of the reading process the import competes for the GIL with the header
workers, so at 0 ms per request it adds most of its cost to the run; in a child it runs on another
core, and the reading process never imports transformers at all. The child imports only the
configuration classes (``config._import_config_classes``, ~0.45 s of CPU), before its config is
known: it is started as the read starts (``prestart``) and sent the config when the Hub has sent it.
The child is isolated (``-I``: no user site, no environment hooks, not the working directory),
offline (``HF_HUB_OFFLINE``), and does what the in-process path does (``config._with_transformers``:
built-in classes only, ``auto_map`` dropped, never remote code). It hands back a plain answer (the
text and vision dicts and the reader line, or why the class could not be used) as tagged JSON
(``config.tagged``), which keeps tuples, int keys and floats exactly, so the figures are byte for
byte those of the in-process path.

The answer is input like any other: checked for its shape, and anything else (a child that failed,
timed out, printed something unexpected or could not encode its answer) is no answer, and the
in-process path reads the config as it always did.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import threading
from typing import Any

from . import config as _config

CHILD_SECONDS = 120.0  # transformers' import takes 1-3 s; a child that takes this long is stuck
_OUTPUT_LIMIT = 64 << 20  # the text config's dict of a real release is a few KB
_STARTING = threading.Lock()  # two repos read side by side with one config start one child


class _Child:
    """One child reading one config; ``answer()`` waits for it (at most ``CHILD_SECONDS``).

    It is started before the config is known (``prestart``): it imports transformers' configuration
    classes first and reads its stdin after, so the import runs on another core while this process
    still imports its own client and asks the Hub where the revision points."""

    def __init__(self) -> None:
        env = {
            **os.environ,
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "TRANSFORMERS_VERBOSITY": "error",
            "TOKENIZERS_PARALLELISM": "false",
        }
        # -I: the child imports nothing from the working directory, user site or PYTHON* variables
        # beyond the interpreter's own sys.path; it runs config.py by its path, not the package
        code = f"import runpy; runpy.run_path({_config.__file__!r}, run_name='__main__')"
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-c", code],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.out: bytes | None = None
        self.thread: threading.Thread | None = None

    def send(self, raw: dict[str, Any]) -> None:
        """Give the child its config; the answer is read in a thread."""
        payload = json.dumps(raw, allow_nan=True).encode()
        self.thread = threading.Thread(target=self._talk, args=(payload,), name="config-child", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        """A child never sent a config (a warm run, a config transformers is not asked for) ends now."""
        self.proc.kill()
        self.proc.communicate()

    def _talk(self, payload: bytes) -> None:
        try:
            out, _ = self.proc.communicate(payload, timeout=CHILD_SECONDS)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
            return
        except OSError:
            return
        if self.proc.returncode == 0 and len(out) <= _OUTPUT_LIMIT:
            self.out = out

    def answer(self) -> Any:
        """The child's answer, checked; None when there is none to trust."""
        if self.thread is not None:
            self.thread.join()
        if self.out is None:
            return None
        return parse_answer(self.out)


def parse_answer(out: bytes) -> Any:
    """The child's output as ``_with_transformers`` returns it, or None when it is not of that shape."""
    try:
        entry = json.loads(out)
        if type(entry) is not dict or entry.get("format") != _config.CHILD_FORMAT:
            return None
        answer = _config.untagged(entry.get("answer"))
    except (ValueError, TypeError, RecursionError):
        return None
    if type(answer) is str:
        # a child that could not import transformers may have another view of the installation
        # than this process: only the in-process path says it is not installed
        return None if answer.startswith("transformers not installed") else answer
    if type(answer) is not tuple or len(answer) != 3:
        return None
    text, vision, reader = answer
    if not _str_keyed(text) or not (vision is None or _str_keyed(vision)) or type(reader) is not str:
        return None
    if not reader.startswith("config read with transformers "):
        return None
    return text, vision, reader


def _str_keyed(value: Any) -> bool:
    return type(value) is dict and all(type(k) is str for k in value)


_spare: _Child | None = None  # started by prestart, not yet given a config
# Children a process sends configs to: each costs ~0.45 s of CPU and ~55 MiB, one importing transformers
# here ~0.7 s once for every config after. A check of many repos read cold (a CI job's first run) has the
# first two read by children and the rest here (``start`` says no; the caller imports in a thread).
MAX_CHILDREN = 2
_sent = 0


def _may_start() -> bool:
    """A child reads with torch hidden: not where this process has imported torch or transformers
    (their classes then read with torch present, and ``to_dict`` leaves out ``torch_dtype``), nor
    where an import already paid for leaves it nothing to save."""
    return "torch" not in sys.modules and "transformers" not in sys.modules


def prestart() -> None:
    """Start a child before any config is read, for the next ``start``: a cold read of a Hub repo
    sends its config about 0.2 s after the process starts, and the child imports meanwhile. One that
    is never used is stopped when this process exits."""
    global _spare
    with _STARTING:
        if _spare is None and _may_start():
            try:
                _spare = _Child()
            except (OSError, ValueError, subprocess.SubprocessError):
                return
            atexit.register(_stop_spare)


def _stop_spare() -> None:
    global _spare
    with _STARTING:
        if _spare is not None:
            _spare.stop()
            _spare = None


def start(raw: dict[str, Any]) -> bool:
    """Have a child read ``raw`` (the one ``prestart`` started, else a new one); ``ArchConfig.read`` of
    the same config takes its answer.

    False when no child could be started (the caller may then import transformers itself), and when
    this process has imported torch or transformers already (``_may_start``).
    """
    global _spare
    if not _may_start():
        return False
    key = _config.config_key(raw)
    if key is None:
        return False
    global _sent
    with _STARTING:
        if key in _config.PREREAD:
            return True
        if _sent >= MAX_CHILDREN:
            return False
        child, _spare = _spare, None
        try:
            if child is None:
                child = _Child()
            child.send(raw)
        except (OSError, ValueError, subprocess.SubprocessError):
            return False
        _sent += 1
        _config.PREREAD[key] = child.answer
    return True
