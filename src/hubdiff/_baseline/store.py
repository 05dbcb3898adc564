"""Changing a baseline file in place: under its lock, validated first, written atomically, and only
where the data changed, so that a re-record's diff in a pull request is the change and nothing else.

A bot's pull request is force-pushed with whatever ``watch --update`` writes and reviewers read the
diff, so a rewrite that re-wraps lists, drops quotes, turns ``null`` into nothing or reorders keys
hides the one line that matters. No YAML emitter round-trips text it did not write (ruamel.yaml's
does not: it re-wraps long flow lists with trailing spaces), so the writer never re-emits what did not
change. It splices: the old text is composed once (PyYAML nodes carry their offsets), the new plain
data is walked against it, and only the keys whose value changed are rewritten, each at its own lines
(a one-line scalar in place, keeping its quoting and the comment after it), new keys after their
predecessor and vanished keys' lines removed. Everything else, comments, blank lines, hand wrapping,
flow or block style, stays byte for byte; data equal to what is on disk writes nothing at all.

What is re-emitted goes through one PyYAML dumper (what the shipped baselines were written with:
width 120, lists of scalars in flow style, mappings in block style, ``null`` for None), which speaks
YAML 1.1 like the reader, so a string ``no`` stays quoted. Every write is read back with
``yaml.safe_load`` and compared type for type with the data before it replaces the file.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .._files import atomic_write_text, locked
from ..errors import BaselineError
from .schema import Baseline, load_baseline

WIDTH = 120


class _Flow(list):  # type: ignore[type-arg]
    """A list to be written in flow style (``[a, b]``): what the old text had."""


class _Block(list):  # type: ignore[type-arg]
    """A list to be written in block style (``- a``): what the old text had."""


class _FlowMap(dict):  # type: ignore[type-arg]
    """A mapping to be written in flow style (``{a: 1}``): what the old text had."""


class _Literal(str):
    """Text to be written as a ``|`` block: what the old text had."""


class _Dumper(yaml.SafeDumper):
    """Lists of scalars in flow style, everything else in block style, unless the old text said otherwise."""

    def ignore_aliases(self, data: object) -> bool:
        """Never ``&id001``/``*id001``: the baseline reader refuses aliases, so a value shared in memory
        (two repos given one ``allow_changes`` list) is written out in full each time."""
        return True


class _IndentedDumper(_Dumper):
    """Block sequences indented under their key (``key:`` then ``  - item``), for a file written so."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _scalars_only(value: list[Any]) -> bool:
    return all(not isinstance(v, (dict, list)) for v in value)


def _represent_list(dumper: yaml.SafeDumper, value: list[Any]) -> yaml.Node:
    flow = isinstance(value, _Flow) or (not isinstance(value, _Block) and _scalars_only(value))
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=flow)


def _represent_dict(dumper: yaml.SafeDumper, value: dict[Any, Any]) -> yaml.Node:
    flow = isinstance(value, _FlowMap)
    return dumper.represent_mapping("tag:yaml.org,2002:map", value.items(), flow_style=flow)


def _represent_literal(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")


_Dumper.add_representer(_Literal, _represent_literal)
for _list in (list, _Flow, _Block):
    _Dumper.add_representer(_list, _represent_list)
for _map in (dict, _FlowMap):
    _Dumper.add_representer(_map, _represent_dict)


def dump(data: Any, width: int = WIDTH, indented_lists: bool = False) -> str:
    """A whole document (a new baseline file), or a fragment written ``width`` columns wide."""
    dumper = _IndentedDumper if indented_lists else _Dumper
    return yaml.dump(data, Dumper=dumper, sort_keys=False, allow_unicode=True, width=width, indent=2)


def same(a: Any, b: Any) -> bool:
    """Equal as plain data, type for type: ``1``, ``1.0`` and ``true`` are three values (Python's ``==``
    says they are one, which would leave a changed config value unwritten), a NaN equals a NaN (so a
    config holding one is not rewritten on every run), and key order does not count."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a) and math.isnan(b):
        return True
    return bool(a == b)


def plain(value: Any) -> Any:
    """A copy of ``value`` as plain dicts and lists, for comparing and for a report's before/after."""
    return copy.deepcopy(value)


# -- splicing ----------------------------------------------------------------------------------


class _Text:
    """The old text with its lines' start offsets, and the edits (start, end, replacement) to apply."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0]
        for i, ch in enumerate(text):
            if ch == "\n":
                self.starts.append(i + 1)
        self.edits: list[tuple[int, int, str]] = []

    def line_start(self, line: int) -> int:
        return self.starts[line] if line < len(self.starts) else len(self.text)

    def after_line(self, line: int) -> int:
        """Offset just past the newline that ends ``line`` (the end of the text on the last line)."""
        return self.line_start(line + 1)

    def apply(self) -> str:
        """The text with every edit made, new lines ending as the file's do (``\\r\\n`` or ``\\n``)."""
        newline = "\r\n" if "\r\n" in self.text else "\n"
        out, at = [], 0
        for start, end, replacement in sorted(self.edits, key=lambda e: (e[0], e[1])):
            out.append(self.text[at:start])
            out.append(replacement.replace("\n", newline))
            at = end
        out.append(self.text[at:])
        return "".join(out)


def _last_line(node: yaml.Node) -> int:
    """The last line holding ``node``'s own text (a block collection's end mark is the next token's)."""
    if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and not node.flow_style and node.value:
        last = node.value[-1]
        return _last_line(last[1] if isinstance(node, yaml.MappingNode) else last)
    end = node.end_mark
    return end.line - 1 if end.column == 0 and end.line > node.start_mark.line else end.line


def _indent(text: _Text, key: yaml.Node) -> int | None:
    """The column of the line ``key`` starts, if only indentation (or the ``?`` of a key too long to be
    simple) stands before it on that line; None for ``- key:`` or ``{key: ...``."""
    before = text.text[text.line_start(key.start_mark.line) : key.start_mark.index]
    if before.strip() not in ("", "?"):
        return None
    return len(before) - len(before.lstrip())


def _styled(old: yaml.Node, value: Any) -> Any:
    """``value`` marked with the style ``old`` was written in, where both are of a kind."""
    if isinstance(value, list) and isinstance(old, yaml.SequenceNode) and old.value:
        return _Flow(value) if old.flow_style else _Block(value)
    if isinstance(value, dict) and isinstance(old, yaml.MappingNode) and old.value and old.flow_style:
        return _FlowMap(value)
    if isinstance(value, str) and isinstance(old, yaml.ScalarNode) and old.style == "|" and "\n" in value:
        return _Literal(value)
    return value


def _indented_lists(text: _Text, node: yaml.Node, key_column: int) -> bool:
    """Whether the first block sequence in ``node`` has its dashes indented past its key's column."""
    if isinstance(node, yaml.SequenceNode) and not node.flow_style and node.value:
        first = node.value[0].start_mark
        dash = text.text.rfind("-", text.line_start(first.line), first.index)
        return dash - text.line_start(first.line) > key_column
    if isinstance(node, yaml.MappingNode) and not node.flow_style:
        for key_node, value_node in node.value:
            if isinstance(value_node, (yaml.MappingNode, yaml.SequenceNode)):
                return _indented_lists(text, value_node, key_node.start_mark.column)
    return False


def _fragment(key: Any, value: Any, column: int, indented_lists: bool = False) -> str:
    """``key: value`` as lines indented to ``column``, wrapped as if written at that depth."""
    text = dump({key: value}, width=max(WIDTH - column, 40), indented_lists=indented_lists)
    pad = " " * column
    return "".join(pad + line if line.strip() else line for line in text.splitlines(keepends=True))


def _scalar_in_place(old_node: yaml.ScalarNode, old: Any, new: Any) -> str | None:
    """``new`` as one line, quoted as ``old`` was where both are strings; None if it takes more."""
    if isinstance(new, (dict, list)):
        return None
    quoted = isinstance(new, str) and isinstance(old, str) and old_node.style in ("'", '"')
    text = yaml.dump(
        new, Dumper=_Dumper, default_style=old_node.style if quoted else None, allow_unicode=True, width=10**9
    )
    text = text.removesuffix("\n...\n").removesuffix("\n")  # a plain scalar alone ends its document
    return None if "\n" in text else text


class _CannotSplice(Exception):
    """This mapping's text is not laid out key per line; its parent rewrites it whole."""


def _keys(node: yaml.MappingNode, text: _Text) -> dict[Any, tuple[yaml.Node, yaml.Node]]:
    constructor = yaml.constructor.SafeConstructor()
    keys: dict[Any, tuple[yaml.Node, yaml.Node]] = {}
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or _indent(text, key_node) is None:
            raise _CannotSplice
        key = constructor.construct_object(key_node)
        if key in keys or key == "<<":  # a duplicate or a merge key: the data is not the text's keys
            raise _CannotSplice
        keys[key] = (key_node, value_node)
    return keys


def _splice_mapping(text: _Text, node: yaml.MappingNode, old: dict[Any, Any], new: dict[Any, Any]) -> None:
    """Edit the block mapping ``node`` (holding ``old``) so that it holds ``new``; raise _CannotSplice
    (before recording any edit of its own) if it cannot be done key by key."""
    if node.flow_style or not node.value or not new:
        raise _CannotSplice
    keys = _keys(node, text)
    if list(keys) != list(old):
        raise _CannotSplice
    kept = [k for k in new if k in old]
    if kept != [k for k in old if k in new]:  # the survivors were reordered
        raise _CannotSplice
    columns = {_indent(text, k) or 0 for k, _ in node.value}  # each is a number: _keys checked
    if len(columns) != 1:
        raise _CannotSplice
    column = columns.pop()
    edits: list[tuple[int, int, str]] = []
    for key, (key_node, value_node) in keys.items():
        start, end = text.line_start(key_node.start_mark.line), text.after_line(_last_line(value_node))
        if key not in new:
            edits.append((start, end, ""))
        elif not same(old[key], new[key]):
            edits.extend(_splice_value(text, key, key_node, value_node, old[key], new[key], column))
    previous = None
    for key, value in new.items():
        if key in old:
            previous = key
            continue
        if previous is None:
            at = text.line_start(node.value[0][0].start_mark.line)
        else:
            at = text.after_line(_last_line(keys[previous][1]))
        edits.append((at, at, _fragment(key, value, column)))
    text.edits.extend(edits)


def _splice_value(
    text: _Text, key: Any, key_node: yaml.Node, value_node: yaml.Node, old: Any, new: Any, column: int
) -> list[tuple[int, int, str]]:
    """The edits that make one changed entry hold ``new``: the finest that keeps its text's meaning."""
    if isinstance(value_node, yaml.MappingNode) and isinstance(old, dict) and isinstance(new, dict):
        mark = len(text.edits)
        try:
            _splice_mapping(text, value_node, old, new)
            return []
        except _CannotSplice:
            del text.edits[mark:]
    one_line = value_node.start_mark.line == value_node.end_mark.line
    if isinstance(value_node, yaml.ScalarNode) and one_line and value_node.style not in ("|", ">"):
        scalar = _scalar_in_place(value_node, old, new)
        if scalar is not None and value_node.end_mark.index > value_node.start_mark.index:
            return [(value_node.start_mark.index, value_node.end_mark.index, scalar)]
    start, end = text.line_start(key_node.start_mark.line), text.after_line(_last_line(value_node))
    fragment = _fragment(key, _styled(value_node, new), column, _indented_lists(text, value_node, column))
    rest = text.text[value_node.end_mark.index : end].rstrip("\r\n")
    if rest.strip().startswith("#") and _last_line(value_node) == value_node.end_mark.line:
        fragment = fragment.rstrip("\n") + rest + "\n"  # the comment after the value stays with it
    return [(start, end, fragment)]


def _has_anchors(text: str) -> bool:
    """Anchors and aliases tie one node's text to others: a splice there could change what they say."""
    return any(
        isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None
        for event in yaml.parse(text, Loader=yaml.SafeLoader)
    )


def splice(old_text: str, new: Any) -> str:
    """``old_text`` edited to hold ``new``: only the entries that changed are rewritten."""
    root = yaml.compose(old_text, Loader=yaml.SafeLoader)
    old = None if root is None else yaml.constructor.SafeConstructor().construct_document(root)
    if same(old, new):
        return old_text
    if not isinstance(root, yaml.MappingNode) or not isinstance(new, dict) or _has_anchors(old_text):
        return dump(new)
    assert isinstance(old, dict)
    text = _Text(old_text if old_text.endswith("\n") else old_text + "\n")
    try:
        _splice_mapping(text, root, old, new)
    except _CannotSplice:
        return dump(new)
    return text.apply()


def write(path: Path, data: dict[str, Any], old_text: str | None = None) -> bool:
    """Write ``data`` over ``old_text`` (the file as read under the lock) atomically, keeping the file's
    mode; False, writing nothing, when the file already holds ``data``. Anything ``yaml.safe_load``
    would read differently is refused."""
    text = dump(data) if old_text is None else splice(old_text, data)
    if text == old_text:
        return False
    if not same(yaml.safe_load(text), data):
        raise BaselineError(f"{path}: the rewritten file would not read back the same; nothing was written")
    atomic_write_text(path, text, stale_tmp_after_s=0)  # under the lock no other writer has a temp file
    return True


def write_baseline(path: Path, data: dict[str, Any]) -> None:
    """Write a whole baseline from plain data (a new file, a benchmark's or a test's), under the lock."""
    with locked(path):
        write(path, data)


@dataclass
class Editing:
    """A baseline opened for change: ``baseline`` as validated, ``doc`` its data to edit in place
    (plain dicts and lists, in the file's key order)."""

    baseline: Baseline
    doc: dict[str, Any]


@contextmanager
def edit(path: Path, create: dict[str, Any] | None = None) -> Iterator[Editing]:
    """Lock, read (validated), let the caller change ``doc``, write back what changed. With ``create``,
    a missing file starts as that mapping. The file is read under the lock: another run may have just
    written it."""
    with locked(path):
        if create is not None and not path.exists():
            old_text = None
            doc = plain(create)
            editing = Editing(Baseline(path, create["family"], create.get("notes", ""), (), create), doc)
        else:
            baseline = load_baseline(path)
            old_text = path.read_text(encoding="utf-8")
            editing = Editing(baseline, plain(baseline.raw))
        yield editing
        write(path, editing.doc, old_text)
