"""transformers' reading of a config, in a child process started as soon as the Hub sends the config.

A cold ``metrics`` of a real repo imports transformers (~0.9 s of CPU, ~40 MiB) for one configuration
class (a few ms). In a thread of the reading process the import competes for the GIL with the header
workers, so at 0 ms per request it adds most of its cost to the run; in a child it runs on another
core, and the reading process never imports transformers at all. The child is isolated (``-I``: no
user site, no environment hooks, not the working directory), offline (``HF_HUB_OFFLINE``), and does
what the in-process path does (``config._with_transformers``: built-in classes only, ``auto_map``
dropped, never remote code). It hands back a plain answer (the text and vision dicts and the reader
line, or why the class could not be used) as tagged JSON (``config.tagged``), which keeps tuples, int
keys and floats exactly, so the figures are byte for byte those of the in-process path.

The answer is input like any other: checked for its shape, and anything else (a child that failed,
timed out, printed something unexpected or could not encode its answer) is no answer, and the
in-process path reads the config as it always did.
"""

from __future__ import annotations

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
    """One child reading one config; ``answer()`` waits for it (at most ``CHILD_SECONDS``)."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self.payload = json.dumps(raw, allow_nan=True).encode()
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
        self.thread = threading.Thread(target=self._talk, name="config-child", daemon=True)
        self.thread.start()

    def _talk(self) -> None:
        try:
            out, _ = self.proc.communicate(self.payload, timeout=CHILD_SECONDS)
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


def start(raw: dict[str, Any]) -> bool:
    """Start reading ``raw`` in a child; ``ArchConfig.read`` of the same config takes its answer.

    False when no child could be started (the caller may then import transformers itself), and when
    this process has imported torch or transformers already: transformers' classes then read with
    torch present (``to_dict`` leaves out ``torch_dtype``), which a child hiding torch would not match,
    and an import already paid for leaves a child nothing to save.
    """
    if "torch" in sys.modules or "transformers" in sys.modules:
        return False
    key = _config.config_key(raw)
    if key is None:
        return False
    with _STARTING:
        if key in _config.PREREAD:
            return True
        try:
            child = _Child(raw)
        except (OSError, ValueError, subprocess.SubprocessError):
            return False
        _config.PREREAD[key] = child.answer
    return True
