"""What a baseline file may hold, and reading it: validated on load, ``file:line: what is wrong``.

A baseline may come from a fork's pull request, so it is read as hostile input, by ``read_yaml``
only: one bounded reader for every YAML file hubdiff reads (the replica's repo specs too). It takes
what JSON can say and nothing else, so that what a baseline holds compares with what the Hub's JSON
reader gives. ``store`` edits a file's text only after this validation passed.
"""

from __future__ import annotations

import math
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import yaml

from .._compare.claims import Claim, ClaimError, validate
from .._metrics.figures import FIGURE_UNITS
from .._metrics.options import MetricsOptions, OptionError, parse_options
from .._metrics.serving_options import name_problem
from .._release.record import check_record
from .._source.config_bounds import check_config
from .._source.jsonin import INT_RANGE, MAX_DEPTH
from .._source.layout import LayoutProblem
from .._source.repo_id import is_repo_id
from ..errors import BaselineError, UsageError
from ..patterns import ordered
from ..snapshot import Snapshot
from .rows import parse_pattern_row

_SHA = re.compile(r"^[0-9a-f]{40}$")
_REPO_KEYS = {
    "revision",
    "sha",
    "recorded",
    "metrics_options",
    "allow_changes",
    "claims",
    "config",
    "tensors",
    "metrics",
    "notes",
    "config_keys",
    "release",
    "gguf",
}


@dataclass(frozen=True)
class RepoBaseline:
    repo: str
    revision: str
    sha: str | None
    options: MetricsOptions
    allow_changes: tuple[str, ...]
    claims: tuple[Claim, ...]
    config: dict[str, Any]
    tensors: dict[str, str]
    metrics: dict[str, Any]
    raw: dict[str, Any] = field(default_factory=dict)
    line: int | None = None
    release: dict[str, Any] | None = None  # the release files' record (_release.record); None: not recorded
    gguf: dict[str, Any] | None = None  # a GGUF repo's variants (_baseline.gguf); None: a safetensors repo

    @property
    def is_gguf(self) -> bool:
        return self.gguf is not None

    def expected_snapshot(self) -> Snapshot:
        """The recorded revision rebuilt from the baseline's patterns (lossless), never name by name."""
        patterns = ordered(parse_pattern_row(key, row) for key, row in self.tensors.items())
        return Snapshot(
            self.repo, self.revision, self.sha or "", None, self.config, None, (), {}, tuple(patterns)
        )


@dataclass(frozen=True)
class DiscoverRule:
    """Which new repos of ``owner`` belong to the family: names matching a ``match`` glob and no
    ``exclude`` glob (case-insensitive, as the Hub's repo names are); ``reference`` names the pinned repo
    every new release is compared with, instead of the closest sibling."""

    owner: str
    match: tuple[str, ...]
    exclude: tuple[str, ...] = ()
    reference: str | None = None
    line: int | None = None

    def matches(self, repo: str) -> bool:
        owner, _, name = repo.partition("/")
        if owner.lower() != self.owner.lower():
            return False
        name = name.lower()
        return any(fnmatchcase(name, g.lower()) for g in self.match) and not any(
            fnmatchcase(name, g.lower()) for g in self.exclude
        )


@dataclass(frozen=True)
class CopiesRule:
    """Look for quantized copies of the pinned ``repo`` by any owner: the Hub tags a model whose card
    names ``base_model: repo`` with ``base_model_relation: quantized`` as ``base_model:quantized:repo``,
    and one listing filtered on that tag finds them where no owner rule would (most GGUF copies are
    published by others than the model's owner)."""

    repo: str
    line: int | None = None


@dataclass(frozen=True)
class Baseline:
    path: Path
    family: str
    notes: str
    repos: tuple[RepoBaseline, ...]
    raw: dict[str, Any]
    discover: tuple[DiscoverRule, ...] = ()
    family_line: int = 1
    copies: tuple[CopiesRule, ...] = ()

    def rule_for(self, repo: str) -> DiscoverRule | None:
        """The first rule that takes ``repo`` as a new release of this family (None: not one)."""
        return next((rule for rule in self.discover if rule.matches(repo)), None)


# -- loading and validation --------------------------------------------------------------------


def _line(node: yaml.Node | None, path: list[Any]) -> int | None:
    """1-based line of the value at ``path`` (or of the closest enclosing node)."""
    best = node.start_mark.line + 1 if node is not None else None
    for part in path:
        if isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            best = node.start_mark.line + 1
            continue
        if not isinstance(node, yaml.MappingNode):
            break
        for key_node, value_node in node.value:
            if key_node.value == str(part):
                node, best = value_node, key_node.start_mark.line + 1
                break
        else:
            break
    return best


MAX_YAML_BYTES = 10_000_000  # the largest checkpoint's baseline is a few hundred KB
# a recorded config nests as deep as the Hub's JSON reader allows, three levels down (repos.<repo>.config)
MAX_YAML_DEPTH = MAX_DEPTH + 3
_JSON_TAGS = frozenset(
    f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "seq", "map")
)
_STR_TAG = "tag:yaml.org,2002:str"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C parser when PyYAML was built with it


def shown(part: Any, limit: int = 80) -> str:
    """A key or repo name from a file, as an error line quotes it: never more than ``limit`` characters."""
    text = str(part)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def where_text(where: list[Any]) -> str:
    return ".".join(map(shown, where)) or "file"


class _Refused(Exception):
    def __init__(self, mark: yaml.Mark | None, where: list[Any], problem: str) -> None:
        super().__init__(problem)
        self.line = mark.line + 1 if mark is not None else 1
        self.where = where
        self.problem = problem


class _Frame:
    """A mapping or sequence being composed; ``key``: a mapping's key whose value comes next."""

    __slots__ = ("key", "keys", "node")

    def __init__(self, node: yaml.CollectionNode) -> None:
        self.node = node
        self.key: yaml.ScalarNode | None = None
        self.keys: set[str] = set()


def _path(stack: list[_Frame]) -> list[Any]:
    """Where the next node goes: the keys and indices from the root."""
    out: list[Any] = []
    for frame in stack:
        if isinstance(frame.node, yaml.SequenceNode):
            out.append(len(frame.node.value))
        elif frame.key is not None:
            out.append(frame.key.value)
    return out


def _checked_scalar(
    loader: Any, node: yaml.ScalarNode, stack: list[_Frame], infinity_at: Callable[[list[Any]], bool]
) -> None:
    """Numbers as the Hub's JSON reader takes them: integers within 64 bits, no NaN, and infinity only
    where a config may hold it (Nemotron-H's ``time_step_limit``)."""
    if node.tag == "tag:yaml.org,2002:int":
        try:
            value = loader.construct_yaml_int(node)
        except ValueError:  # more digits than Python converts
            value = None
        if value is None or not INT_RANGE[0] <= value <= INT_RANGE[1]:
            raise _Refused(node.start_mark, _path(stack), "integer out of range (at most 64 bits)")
    elif node.tag == "tag:yaml.org,2002:float":
        value = loader.construct_yaml_float(node)
        if math.isnan(value):
            raise _Refused(node.start_mark, _path(stack), "NaN is not a number (JSON has none)")
        if math.isinf(value) and not infinity_at(_path(stack)):
            raise _Refused(node.start_mark, _path(stack), "number out of range")


def _refuse_tag(node: yaml.Node, stack: list[_Frame]) -> None:
    if node.tag in _JSON_TAGS:
        return
    if node.tag == "tag:yaml.org,2002:timestamp":
        problem = "a date or time is not allowed (quote it to keep it as text)"
    elif node.tag == "tag:yaml.org,2002:merge":
        problem = "YAML merge keys (<<) are not allowed"
    else:
        tag = shown(str(node.tag).replace("tag:yaml.org,2002:", "!!"), 40)
        problem = f"YAML tag {tag} is not allowed (only text, numbers, true/false, null, lists and mappings)"
    raise _Refused(node.start_mark, _path(stack), problem)


def _marks(event: Any) -> tuple[Any, Any]:
    """An event's marks: the C loader's and the Python loader's, which the stubs type apart."""
    return event.start_mark, event.end_mark


def _compose(loader: Any, infinity_at: Callable[[list[Any]], bool]) -> yaml.Node | None:
    """The document's node tree, built from the parser's events without recursion and refused at the
    first alias (a few hundred bytes of nested aliases expand without bound), container nested deeper
    than MAX_YAML_DEPTH, repeated key, non-text key or value JSON cannot hold."""
    loader.get_event()  # stream start
    if loader.check_event(yaml.StreamEndEvent):
        return None
    loader.get_event()  # document start
    stack: list[_Frame] = []
    while True:
        event = loader.get_event()
        start, end = _marks(event)
        node: yaml.Node
        if isinstance(event, yaml.AliasEvent):
            raise _Refused(start, _path(stack), "YAML aliases are not allowed")
        if isinstance(event, yaml.ScalarEvent):
            tag = event.tag
            if tag in (None, "!"):
                tag = loader.resolve(yaml.ScalarNode, event.value, event.implicit)
            node = yaml.ScalarNode(tag, event.value, start, end, event.style)
            if not (stack and isinstance(stack[-1].node, yaml.MappingNode) and stack[-1].key is None):
                _refuse_tag(node, stack)  # a key is checked as a key, below
                _checked_scalar(loader, node, stack, infinity_at)
        elif isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            kind = yaml.SequenceNode if isinstance(event, yaml.SequenceStartEvent) else yaml.MappingNode
            tag = event.tag
            if tag in (None, "!"):
                tag = loader.resolve(kind, None, event.implicit)
            collection = kind(tag, [], start, None, flow_style=event.flow_style)
            if stack and isinstance(stack[-1].node, yaml.MappingNode) and stack[-1].key is None:
                raise _Refused(start, _path(stack), "mapping keys must be text")
            _refuse_tag(collection, stack)
            if len(stack) >= MAX_YAML_DEPTH:
                raise _Refused(start, _path(stack), f"nested more than {MAX_YAML_DEPTH} levels deep")
            stack.append(_Frame(collection))
            continue
        else:  # the end of a sequence or mapping
            node = stack.pop().node
            node.end_mark = end
        if not stack:
            break
        parent = stack[-1]
        if isinstance(parent.node, yaml.SequenceNode):
            parent.node.value.append(node)
        elif parent.key is None:
            assert isinstance(node, yaml.ScalarNode)
            _refuse_tag(node, stack)
            if node.tag != _STR_TAG:
                raise _Refused(node.start_mark, _path(stack), "mapping keys must be text")
            if node.value in parent.keys:
                raise _Refused(node.start_mark, [*_path(stack), node.value], "repeated key")
            parent.keys.add(node.value)
            parent.key = node
        else:
            parent.node.value.append((parent.key, node))
            parent.key = None
    loader.get_event()  # document end
    if not loader.check_event(yaml.StreamEndEvent):
        raise _Refused(loader.peek_event().start_mark, [], "more than one YAML document")
    return node


def _read_text(path: Path) -> str:
    """The file's text, read only if it is a regular file (a FIFO would block, a device never end) of
    at most MAX_YAML_BYTES."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise BaselineError(f"{path}: no such baseline file") from None
    except OSError as exc:
        raise BaselineError(f"{path}: cannot be read ({exc.strerror or exc.__class__.__name__})") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise BaselineError(f"{path}: not a regular file")
        try:
            raw = fh.read(MAX_YAML_BYTES + 1)
        except OSError as exc:
            raise BaselineError(
                f"{path}: cannot be read ({exc.strerror or exc.__class__.__name__})"
            ) from None
    if len(raw) > MAX_YAML_BYTES:
        raise BaselineError(f"{path}: over {MAX_YAML_BYTES:,} bytes, too large for a baseline")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BaselineError(f"{path}: not UTF-8 text (invalid byte at offset {exc.start})") from None


def read_yaml(
    path: Path, infinity_at: Callable[[list[Any]], bool] = lambda where: False
) -> tuple[Any, yaml.Node | None]:
    """A YAML file's data and node tree (for line numbers), or a ``file:line:`` BaselineError.

    The file must lie in the folder it was named in: one reached through a symlink to anywhere else is
    refused before it is opened, so that no error line can quote a file that is not a baseline.
    ``infinity_at`` says where an infinite number may stand (a config's).
    """
    folder = path.parent
    if not path.resolve().is_relative_to(folder.resolve()):
        raise BaselineError(f"{path}: symlink points outside {folder}")
    text = _read_text(path)
    loader = _LOADER(text)
    try:
        root = _compose(loader, infinity_at)
        data = loader.construct_document(root) if root is not None else None
    except _Refused as exc:
        raise BaselineError(f"{path}:{exc.line}: {where_text(exc.where)}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        raise BaselineError(f"{path}:{line}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
    finally:
        loader.dispose()
    return data, root


# A family names its report files (reports/FAMILY.md) and baseline (baselines/FAMILY.yaml): lowercase
# only, so that two families never share a file on a case-insensitive disk.
_FAMILY = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")


def family_problem(family: object) -> str | None:
    """What makes ``family`` unusable as a file name (None: nothing)."""
    if not isinstance(family, str) or not _FAMILY.fullmatch(family) or ".." in family:
        return "must be 1 to 64 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit"
    return None


def family_file(folder: Path, family: str, suffix: str) -> Path:
    """``folder/FAMILY+suffix``, refused unless the family is a safe file name and the file is directly in
    ``folder``: every file hubdiff names after a family goes through here."""
    problem = family_problem(family)
    path = folder / f"{family}{suffix}"
    if problem is not None or path.parent != folder or path.name != f"{family}{suffix}":
        raise UsageError(f"family {shown(family)!r}: {problem or 'not a file name'}")
    return path


def _in_config(where: list[Any]) -> bool:
    return len(where) > 3 and where[0] == "repos" and where[2] == "config"


def load_baseline(path: Path) -> Baseline:
    data, root = read_yaml(path, infinity_at=_in_config)

    def fail(where: list[Any], problem: str) -> BaselineError:
        return BaselineError(f"{path}:{_line(root, where) or 1}: {where_text(where)}: {problem}")

    if not isinstance(data, dict):
        raise fail([], "a baseline is a mapping with family, repos (and notes)")
    unknown = set(data) - {"family", "notes", "repos", "discover"}
    if unknown:
        raise fail([sorted(unknown)[0]], "unknown key (known: discover, family, notes, repos)")
    problem = family_problem(data.get("family"))
    if problem is not None:
        raise fail(["family"], problem)
    if not isinstance(data.get("notes", ""), str):
        raise fail(["notes"], "must be text")
    repos = data.get("repos")
    if not isinstance(repos, dict) or not repos:
        raise fail(["repos"], "must map repo ids to their expectations")
    out = []
    for repo, entry in repos.items():
        where: list[Any] = ["repos", repo]
        if not is_repo_id(repo):
            raise fail(
                where, "not a repo id the Hub allows (owner/name: ASCII letters, digits, '_', '-', '.')"
            )
        if not isinstance(entry, dict):
            raise fail(where, "must be a mapping")
        bad = set(entry) - _REPO_KEYS
        if bad:
            raise fail([*where, sorted(bad)[0]], f"unknown key (known: {', '.join(sorted(_REPO_KEYS))})")
        sha = entry.get("sha")
        if sha is not None and (not isinstance(sha, str) or not _SHA.match(sha)):
            raise fail([*where, "sha"], "must be a 40-character commit sha")
        revision = entry.get("revision", "main")
        if not isinstance(revision, str):
            raise fail([*where, "revision"], "must be a string")
        try:
            options = parse_options(entry.get("metrics_options") or {})
        except OptionError as exc:
            option = [exc.key] if exc.key else []
            raise fail([*where, "metrics_options", *option], str(exc)) from None
        allow = entry.get("allow_changes") or []
        if not isinstance(allow, list) or not all(isinstance(a, str) for a in allow):
            raise fail([*where, "allow_changes"], "must be a list of config keys")
        claims = []
        raw_claims = entry.get("claims") or {}
        if not isinstance(raw_claims, dict):
            raise fail([*where, "claims"], "must map figure names to stated values")
        for name, stated in raw_claims.items():
            claim = Claim(str(name), stated, _line(root, [*where, "claims", name]))
            try:
                validate(claim)
            except ClaimError as exc:
                raise fail([*where, "claims", name], str(exc)) from None
            claims.append(claim)
        if "gguf" in entry:
            _check_gguf(entry, where, fail)
        for key in ("config", "tensors", "metrics"):
            if not isinstance(entry.get(key, {}) or {}, dict):
                raise fail([*where, key], "must be a mapping")
        tensors = entry.get("tensors") or {}
        for key, row in tensors.items():
            try:
                parse_pattern_row(str(key), str(row))
            except ValueError as exc:
                raise fail([*where, "tensors", key], str(exc)) from None
        try:  # a recorded config goes through the same bounds as one from the Hub: it may have been edited
            check_config(entry.get("config") or {}, "config")
        except LayoutProblem as exc:
            raise fail([*where, "config"], exc.problem) from None
        release = entry.get("release")
        if release is not None:
            problem = check_record(release)
            if problem:
                raise fail([*where, "release"], problem)
        metrics = entry.get("metrics") or {}
        for key in metrics:
            if key not in FIGURE_UNITS and ("@" not in str(key) or name_problem(str(key))):
                raise fail([*where, "metrics", key], name_problem(str(key)) or "unknown figure")
        out.append(
            RepoBaseline(
                repo,
                revision,
                sha,
                options,
                tuple(allow),
                tuple(claims),
                entry.get("config") or {},
                {str(k): str(v) for k, v in tensors.items()},
                metrics,
                entry,
                _line(root, where),
                release,
                entry.get("gguf"),
            )
        )
    gguf = {r.repo for r in out if r.is_gguf}
    rules, copies = _discover_rules(data.get("discover"), {r.repo for r in out}, gguf, root, fail)
    family_line = _line(root, ["family"]) or 1
    return Baseline(path, data["family"], data.get("notes", ""), tuple(out), data, rules, family_line, copies)


def _check_gguf(
    entry: dict[str, Any], where: list[Any], fail: Callable[[list[Any], str], BaselineError]
) -> None:
    """A GGUF entry's block, and none of a safetensors entry's keys beside it: ``check`` would read
    those as a config and tensors the repo has never had."""
    from .gguf import SAFETENSORS_ONLY, gguf_problem

    for key in SAFETENSORS_ONLY:
        if key in entry:
            raise fail(
                [*where, key], "a GGUF entry (gguf:) has no config.json or safetensors figures to hold"
            )
    problem = gguf_problem(entry["gguf"])
    if problem is not None:
        raise fail([*where, "gguf", *problem[0]], problem[1])


MAX_COPIES_RULES = 100  # a family's quantized_copies_of rules: each costs a listing per poll
_GLOB = re.compile(r"[\w.*?\[\]!-]{1,96}")


def _discover_rules(
    raw: Any,
    pinned: set[str],
    gguf: set[str],
    root: yaml.Node | None,
    fail: Callable[[list[Any], str], BaselineError],
) -> tuple[tuple[DiscoverRule, ...], tuple[CopiesRule, ...]]:
    """The owner rules, and the ``quantized_copies_of`` rules (each its own list item, so that an owner
    rule's keys never mean something else beside it)."""
    if raw is None:
        return (), ()
    if not isinstance(raw, list):
        raise fail(
            ["discover"], "must be a list of rules (owner, match, exclude, reference; or quantized_copies_of)"
        )
    rules = []
    copies: list[CopiesRule] = []
    for i, rule in enumerate(raw):
        where: list[Any] = ["discover", i]
        if not isinstance(rule, dict):
            raise fail(where, "a rule is a mapping with owner and match, or with quantized_copies_of")
        if "quantized_copies_of" in rule:
            copy = _copies_rule(rule, where, pinned, gguf, root, fail)
            if any(c.repo == copy.repo for c in copies):
                raise fail([*where, "quantized_copies_of"], "names a repo an earlier rule already names")
            if len(copies) == MAX_COPIES_RULES:
                raise fail(where, f"more than {MAX_COPIES_RULES} quantized_copies_of rules")
            copies.append(copy)
            continue
        bad = set(rule) - {"owner", "match", "exclude", "reference"}
        if bad:
            raise fail([*where, sorted(bad)[0]], "unknown key (known: owner, match, exclude, reference)")
        owner = rule.get("owner")
        if not isinstance(owner, str) or "/" in owner or not is_repo_id(owner):
            raise fail([*where, "owner"], "owner must be a user or organisation name")
        globs = {}
        for key in ("match", "exclude"):
            value = rule.get(key, [] if key == "exclude" else None)
            value = [value] if isinstance(value, str) else value
            if not isinstance(value, list) or not all(
                isinstance(g, str) and _GLOB.fullmatch(g) for g in value
            ):
                raise fail([*where, key], f'{key} must be a repo-name glob or a list of them (e.g. "GLM-5*")')
            globs[key] = tuple(value)
        if not globs["match"]:
            raise fail([*where, "match"], "match must name at least one glob")
        reference = rule.get("reference")
        if reference is not None and reference in gguf:
            raise fail(
                [*where, "reference"], "a GGUF entry cannot be a reference: it has no config to compare"
            )
        if reference is not None and reference not in pinned:
            raise fail(
                [*where, "reference"], f"reference {str(reference)[:100]!r} is not a repo of this baseline"
            )
        rules.append(DiscoverRule(owner, globs["match"], globs["exclude"], reference, _line(root, where)))
    return tuple(rules), tuple(copies)


def _copies_rule(
    rule: dict[Any, Any],
    where: list[Any],
    pinned: set[str],
    gguf: set[str],
    root: yaml.Node | None,
    fail: Callable[[list[Any], str], BaselineError],
) -> CopiesRule:
    """``quantized_copies_of`` names a safetensors repo the family pins: its recorded tensors are what
    a copy is set against, and the value goes into a listing's ``filter``, so it is a repo id or
    nothing."""
    bad = set(rule) - {"quantized_copies_of"}
    if bad:
        raise fail(
            [*where, sorted(bad, key=str)[0]], "unknown key beside quantized_copies_of (it stands alone)"
        )
    repo = rule["quantized_copies_of"]
    at = [*where, "quantized_copies_of"]
    if not isinstance(repo, str) or "/" not in repo or not is_repo_id(repo):
        raise fail(at, "must be a repo id, owner/name (ASCII letters, digits, '_', '-', '.')")
    if repo in gguf:
        raise fail(at, "a GGUF entry has no safetensors tensors to set a copy against")
    if repo not in pinned:
        raise fail(at, f"{repo!r} is not a repo of this baseline")
    return CopiesRule(repo, _line(root, where))
