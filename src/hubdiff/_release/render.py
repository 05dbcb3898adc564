"""Chat templates rendered, not only compared: each on the same small conversations, in a sandboxed
child process (``render_child``), so that two templates are compared by the prompts they produce.

A template is hostile input. The child runs it in jinja2's ``ImmutableSandboxedEnvironment`` with the
conversation alone in scope, its values bounded, its memory (``RENDER_MEMORY``) and CPU time limited,
and is killed ``RENDER_SECONDS`` after it starts: what it rendered by then is kept, the rest is
"timed out". A template that fails is a result ("error", "refused", "bound", "timeout"), never a failed
run.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RENDER_SECONDS = 10.0  # a real template renders the four conversations in ~0.1 s, the child starts in ~0.1 s
RENDER_CPU_S = 8
RENDER_MEMORY = 1 << 30
MAX_OUTPUT = 100_000  # characters of one prompt; real ones here are < 3,000
_OUTPUT_LIMIT = 8 * MAX_OUTPUT * 8  # the child's whole answer, JSON-escaped

_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The current weather in a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string", "description": "the city's name"}},
                "required": ["city"],
            },
        },
    }
]
_CALL_ID = "call12345"  # nine alphanumerics: what Mistral's templates insist on

# The fixed conversations every template is rendered on: (name, messages, tools, add_generation_prompt)
CONVERSATIONS: tuple[dict[str, Any], ...] = (
    {
        "name": "plain turn",
        "messages": [
            {"role": "user", "content": "What is 2 + 2?"},
            {"role": "assistant", "content": "4."},
        ],
        "add_generation_prompt": False,
    },
    {
        "name": "system prompt",
        "messages": [
            {"role": "system", "content": "Answer in one word."},
            {"role": "user", "content": "The capital of France?"},
            {"role": "assistant", "content": "Paris."},
        ],
        "add_generation_prompt": False,
    },
    {
        "name": "tool call",
        "tools": _TOOLS,
        "messages": [
            {"role": "user", "content": "The weather in Paris?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": _CALL_ID,
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": _CALL_ID, "name": "get_weather", "content": "18 C, clear"},
        ],
        "add_generation_prompt": True,
    },
    {
        "name": "generation prompt",
        "messages": [{"role": "user", "content": "Hello"}],
        "add_generation_prompt": True,
    },
)
CONVERSATION_NAMES = tuple(c["name"] for c in CONVERSATIONS)


@dataclass(frozen=True)
class Rendered:
    """One template on one conversation: the prompt, or why there is none."""

    conversation: str
    text: str | None
    error: str | None = None
    kind: str = "ok"  # ok, error (the template's own), refused (sandbox), bound (size), timeout; recorded
    recorded: str | None = None  # kind "recorded": a baseline's key for it (the text is not kept)

    @property
    def sha256(self) -> str | None:
        return None if self.text is None else hashlib.sha256(self.text.encode()).hexdigest()

    @property
    def key(self) -> str:
        """What two renders are compared by, and what a baseline records: the prompt's sha256, or
        ``fails: KIND`` (a template that fails the same way on both sides renders the same)."""
        if self.recorded is not None:
            return self.recorded
        return self.sha256 or f"fails: {self.kind}"


def render_template(
    template: str, tokens: dict[str, str], seconds: float = RENDER_SECONDS
) -> tuple[Rendered, ...]:
    """``template`` on every conversation of CONVERSATIONS, with the release's special tokens in scope."""
    job = {
        "template": template,
        "tokens": {k: v for k, v in tokens.items() if k.endswith("_token")},
        "conversations": list(CONVERSATIONS),
        "max_output": MAX_OUTPUT,
        "memory": RENDER_MEMORY,
        "cpu_s": RENDER_CPU_S,
    }
    child = Path(__file__).with_name("render_child.py")  # run by path: jinja2 is the child's alone
    code = f"import runpy; runpy.run_path({str(child)!r}, run_name='__main__')"
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-c", code],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={"LC_ALL": "C.UTF-8"},
        )
    except OSError as exc:
        return tuple(
            Rendered(n, None, f"renderer did not start: {exc.strerror}", "error") for n in CONVERSATION_NAMES
        )
    timed_out = False
    try:
        out, _ = proc.communicate(json.dumps(job).encode(), timeout=seconds)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        timed_out = True
    return _results(out[:_OUTPUT_LIMIT], timed_out, proc.returncode, seconds)


def _results(out: bytes, timed_out: bool, returncode: int, seconds: float) -> tuple[Rendered, ...]:
    got: dict[str, Rendered] = {}
    for line in out.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            break
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or name not in CONVERSATION_NAMES or name in got:
            break
        text, error = entry.get("text"), entry.get("error")
        if isinstance(text, str):
            got[name] = Rendered(name, text)
        else:
            got[name] = Rendered(name, None, str(error)[:400], str(entry.get("kind", "error"))[:20])
    if timed_out:
        missing = Rendered("", None, f"still rendering after {seconds:g} s (stopped)", "timeout")
    elif returncode < 0:  # killed by its CPU limit (SIGXCPU) or another signal
        missing = Rendered("", None, f"stopped by signal {-returncode} (CPU or memory limit)", "bound")
    else:
        missing = Rendered("", None, f"the renderer ended without an answer (exit {returncode})", "error")
    out_list = []
    for name in CONVERSATION_NAMES:
        out_list.append(got.get(name) or Rendered(name, None, missing.error, missing.kind))
    return tuple(out_list)


@dataclass(frozen=True)
class PromptComparison:
    conversation: str
    old: Rendered | None
    new: Rendered | None
    line: int | None = None  # the first differing line, 1-based
    old_line: str | None = None
    new_line: str | None = None

    @property
    def same(self) -> bool:
        if self.old is None or self.new is None:
            return self.old is self.new
        return self.old.key == self.new.key


def compare_prompts(
    old: tuple[Rendered, ...] | None, new: tuple[Rendered, ...] | None
) -> tuple[PromptComparison, ...]:
    """Per conversation, whether the two templates produce the same prompt, and where they first differ."""
    olds = {r.conversation: r for r in old or ()}
    news = {r.conversation: r for r in new or ()}
    out = []
    for name in CONVERSATION_NAMES:
        a, b = olds.get(name), news.get(name)
        pc = PromptComparison(name, a, b)
        if not pc.same and a is not None and b is not None and a.text is not None and b.text is not None:
            pc = PromptComparison(name, a, b, *first_difference(a.text, b.text))
        out.append(pc)
    return tuple(out)


def first_difference(old: str, new: str) -> tuple[int, str | None, str | None]:
    """The first line (1-based) at which two prompts differ, and that line of each (None past the end)."""
    a, b = old.split("\n"), new.split("\n")
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else None
        y = b[i] if i < len(b) else None
        if x != y:
            return i + 1, x, y
    return 0, None, None
