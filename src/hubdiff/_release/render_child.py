"""Renders one chat template on the fixed conversations, in a child process (run by its path, with
``python -I``): standard library and jinja2 only, nothing of hubdiff.

A chat template is a program from the Hub. It runs here in jinja2's ``ImmutableSandboxedEnvironment``
(no attribute starting with ``_``, no method that mutates a list or dict, ``range`` capped), set up as
transformers 5.25.0 sets up ``apply_chat_template`` (``chat_template_utils._compile_jinja_template``:
trim_blocks, lstrip_blocks, loop controls, a ``{% generation %}`` tag, ``tojson`` without HTML escapes,
``raise_exception``, ``dict``, a ``namespace`` that refuses ``_`` names), with one difference:
``strftime_now`` gives a fixed date, so that a prompt depends on the template alone. Nothing else is in
scope: the conversation, its tools, ``add_generation_prompt`` and the release's special tokens (strings).

Bounds: ``*``, ``**`` and ``+`` refuse results over ``MAX_VALUE`` characters or items; a prompt stops
at ``max_output`` characters; the child limits its own memory and CPU time before parsing, and the
parent kills it at its deadline. Each conversation's result is one JSON line on stdout, written as soon as it is rendered.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from typing import Any

import jinja2
import jinja2.ext
import jinja2.nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

MAX_VALUE = 1_000_000
FIXED_DATE = datetime(2026, 1, 1)


def _size(value: Any) -> int:
    return len(value) if isinstance(value, (str, list, tuple)) else 0


class _Bounded(ImmutableSandboxedEnvironment):
    intercepted_binops = frozenset({"*", "**", "+"})

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "**" and isinstance(right, (int, float)) and abs(right) > 64:
            raise jinja2.exceptions.SecurityError("exponent over 64 refused")
        if operator == "*":
            for seq, times in ((left, right), (right, left)):
                if _size(seq) and isinstance(times, int) and _size(seq) * times > MAX_VALUE:
                    raise jinja2.exceptions.SecurityError(f"a result over {MAX_VALUE:,} refused")
        if operator == "+" and _size(left) + _size(right) > MAX_VALUE:
            raise jinja2.exceptions.SecurityError(f"a result over {MAX_VALUE:,} refused")
        return super().call_binop(context, operator, left, right)


class _Generation(jinja2.ext.Extension):
    """``{% generation %}...{% endgeneration %}`` (transformers' assistant-mask tag): its body as is."""

    tags = {"generation"}  # noqa: RUF012 (jinja2 declares it on Extension)

    def parse(self, parser: Any) -> Any:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

    def _body(self, caller: Any) -> str:
        return str(caller())


class _Namespace(jinja2.utils.Namespace):
    def __init__(*args: Any, **kwargs: Any) -> None:
        self, args = args[0], args[1:]
        attrs = dict(*args, **kwargs)
        for name in attrs:
            _Namespace._check(name)
        jinja2.utils.Namespace.__init__(self, attrs)

    def __setitem__(self, name: str, value: Any) -> None:
        _Namespace._check(name)
        jinja2.utils.Namespace.__setitem__(self, name, value)

    @staticmethod
    def _check(name: Any) -> None:
        if isinstance(name, str) and name.startswith("_"):
            raise jinja2.exceptions.SecurityError("a namespace name starting with '_' refused")


class _Dict:
    def __call__(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict.fromkeys(*args, **kwargs)


def _raise_exception(message: Any) -> None:
    raise jinja2.exceptions.TemplateError(str(message)[:500])


def _tojson(
    x: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None, sort_keys: bool = False
) -> str:
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def environment() -> jinja2.Environment:
    env = _Bounded(trim_blocks=True, lstrip_blocks=True, extensions=[_Generation, jinja2.ext.loopcontrols])
    env.filters["tojson"] = _tojson
    env.globals.pop("lipsum", None)  # random text: a prompt would not depend on the template alone
    env.globals.update(
        raise_exception=_raise_exception,
        strftime_now=lambda fmt: FIXED_DATE.strftime(str(fmt)[:100]),
        dict=_Dict(),
        namespace=_Namespace,
    )
    return env


def render(template: Any, context: dict[str, Any], max_output: int) -> dict[str, Any]:
    out: list[str] = []
    size = 0
    try:
        for chunk in template.generate(**context):
            out.append(chunk)
            size += len(chunk)
            if size > max_output:
                return {"error": f"output over {max_output:,} characters", "kind": "bound"}
    except jinja2.exceptions.SecurityError as exc:
        return {"error": f"refused by the sandbox: {str(exc)[:300]}", "kind": "refused"}
    except jinja2.exceptions.TemplateError as exc:
        return {"error": f"{type(exc).__name__}: {str(exc)[:300]}", "kind": "error"}
    except MemoryError:
        return {"error": "ran out of its memory limit", "kind": "bound"}
    except RecursionError:
        return {"error": "recursion too deep", "kind": "bound"}
    except Exception as exc:  # a template's own error: a TypeError, a ZeroDivisionError ...
        return {"error": f"{type(exc).__name__}: {str(exc)[:300]}", "kind": "error"}
    return {"text": "".join(out)}


def _limit(memory: int, cpu_s: int) -> None:
    """This process's memory and CPU, before any template is parsed (POSIX; elsewhere the parent's
    deadline and the value bounds are what is left)."""
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    except (ImportError, ValueError, OSError):
        pass


def main() -> None:
    job = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    _limit(job["memory"], job["cpu_s"])
    env = environment()
    try:
        template = env.from_string(job["template"])
    except jinja2.exceptions.TemplateSyntaxError as exc:
        line = {"error": f"does not parse: {str(exc)[:300]} (line {exc.lineno})", "kind": "error"}
        for conversation in job["conversations"]:
            print(json.dumps({"name": conversation["name"], **line}), flush=True)
        return
    except Exception as exc:
        line = {"error": f"does not compile: {type(exc).__name__}", "kind": "error"}
        for conversation in job["conversations"]:
            print(json.dumps({"name": conversation["name"], **line}), flush=True)
        return
    for conversation in job["conversations"]:
        context = {
            **job["tokens"],
            "messages": conversation["messages"],
            "tools": conversation.get("tools"),  # None when there are none, as transformers passes it
            "documents": None,
            "add_generation_prompt": conversation["add_generation_prompt"],
        }
        result = render(template, context, job["max_output"])
        print(json.dumps({"name": conversation["name"], **result}), flush=True)


if __name__ == "__main__":
    main()
