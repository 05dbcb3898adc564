"""Changing a baseline file in place: under its lock, validated first, written atomically, and
round-tripped so the comments, key order and quoting a person gave it survive a re-record.

Baselines are reviewed in pull requests, so a rewrite that drops the comments or reorders keys makes
every re-record a noisy diff; ruamel.yaml's round-trip mode keeps them. It writes YAML 1.1 (what
``yaml.safe_load`` reads: a string ``no`` must stay quoted) and every write is checked by reading it
back with ``yaml.safe_load`` before it replaces the file.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from .._files import atomic_write_text, locked
from ..errors import BaselineError
from .schema import Baseline, load_baseline

_DIRECTIVE = "%YAML 1.1\n---\n"


def _yaml() -> YAML:
    rt = YAML(typ="rt")
    rt.version = (1, 1)
    rt.width = 120
    rt.preserve_quotes = True
    rt.indent(mapping=2, sequence=4, offset=2)
    return rt


def to_yaml_node(value: Any) -> Any:
    """Plain data as round-trip nodes: lists of scalars in flow style (``[a, b]``), as people write them."""
    if isinstance(value, dict):
        node = CommentedMap()
        for k, v in value.items():
            node[k] = to_yaml_node(v)
        return node
    if isinstance(value, (list, tuple)):
        seq = CommentedSeq(to_yaml_node(v) for v in value)
        if all(not isinstance(v, (dict, list, tuple)) for v in value):
            seq.fa.set_flow_style()
        return seq
    return value


def plain(value: Any) -> Any:
    """Round-trip nodes as plain dicts and lists, for comparing with what ``yaml.safe_load`` reads."""
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    return value


def dump(doc: Any) -> str:
    out = io.StringIO()
    _yaml().dump(doc, out)
    return out.getvalue().removeprefix(_DIRECTIVE)


def write(path: Path, doc: Any) -> None:
    """Write ``doc`` atomically, keeping the file's mode; refuse anything ``yaml.safe_load`` would read differently."""
    text = dump(doc)
    if yaml.safe_load(text) != plain(doc):
        raise BaselineError(f"{path}: the rewritten file would not read back the same; nothing was written")
    atomic_write_text(path, text, stale_tmp_after_s=0)  # under the lock no other writer has a temp file


def write_baseline(path: Path, data: dict[str, Any]) -> None:
    """Write a whole baseline from plain data (a new file, a benchmark's or a test's), under the lock."""
    with locked(path):
        write(path, to_yaml_node(data))


@dataclass
class Editing:
    """A baseline opened for change: ``baseline`` as validated, ``doc`` the round-trip tree to edit."""

    baseline: Baseline
    doc: Any


@contextmanager
def edit(path: Path, create: dict[str, Any] | None = None) -> Iterator[Editing]:
    """Lock, read (validated), let the caller change ``doc``, write it back. With ``create``, a missing
    file starts as that mapping. The file is read under the lock: another run may have just written it."""
    with locked(path):
        if create is not None and not path.exists():
            doc = to_yaml_node(create)
            editing = Editing(Baseline(path, create["family"], create.get("notes", ""), (), create), doc)
        else:
            baseline = load_baseline(path)
            doc = _yaml().load(path.read_text(encoding="utf-8"))
            editing = Editing(baseline, doc)
        yield editing
        write(path, editing.doc)
