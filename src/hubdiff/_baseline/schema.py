"""What a baseline file may hold, and reading it: validated on load, ``file:line: what is wrong``.

Reading uses ``yaml.safe_load`` only (a baseline may come from a fork's pull request); the round-trip
reader in ``store`` is used only after this validation passed, to keep comments and key order when
writing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import yaml

from .._compare.claims import Claim, ClaimError, validate
from .._metrics import FIGURE_UNITS, MetricsOptions
from .._metrics.options import OptionError, parse_options
from .._source.layout import LayoutProblem, check_config
from ..errors import BaselineError
from ..patterns import Pattern, format_index_set, ordered, parse_index_set
from ..snapshot import Snapshot

_SHA = re.compile(r"^[0-9a-f]{40}$")
_ROW = re.compile(r"^(\S+) \[([\d, ]*)\] x(\d+)$")
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
class Baseline:
    path: Path
    family: str
    notes: str
    repos: tuple[RepoBaseline, ...]
    raw: dict[str, Any]
    discover: tuple[DiscoverRule, ...] = ()

    def rule_for(self, repo: str) -> DiscoverRule | None:
        """The first rule that takes ``repo`` as a new release of this family (None: not one)."""
        return next((rule for rule in self.discover if rule.matches(repo)), None)


# -- pattern rows ------------------------------------------------------------------------------


def pattern_key(pattern: Pattern) -> str:
    """The pattern's name with literal braces doubled, so that any tensor name survives the round trip."""
    out = [pattern.parts[0].replace("{", "{{").replace("}", "}}")]
    for values, text in zip(pattern.index_sets, pattern.parts[1:]):
        out.append("{" + format_index_set(values) + "}")
        out.append(text.replace("{", "{{").replace("}", "}}"))
    return "".join(out)


def pattern_row(pattern: Pattern) -> str:
    return f"{pattern.dtype} [{', '.join(map(str, pattern.shape))}] x{pattern.count}"


def parse_pattern_row(key: str, row: str) -> Pattern:
    match = _ROW.match(row)
    if not match:
        raise ValueError(f"tensor row {row!r} is not 'DTYPE [d0, d1, ...] xCOUNT'")
    parts, sets, buf, i = [], [], [], 0
    while i < len(key):
        ch = key[i]
        if key.startswith("{{", i) or key.startswith("}}", i):
            buf.append(ch)
            i += 2
        elif ch == "{":
            end = key.index("}", i)
            parts.append("".join(buf))
            buf = []
            sets.append(parse_index_set(key[i + 1 : end]))
            i = end + 1
        else:
            buf.append(ch)
            i += 1
    parts.append("".join(buf))
    shape = tuple(int(d) for d in match.group(2).split(",") if d.strip())
    pattern = Pattern(tuple(parts), tuple(sets), match.group(1), shape)
    if pattern.count != int(match.group(3)):
        raise ValueError(f"{key} expands to {pattern.count} names, row says x{match.group(3)}")
    return pattern


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


def load_baseline(path: Path) -> Baseline:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BaselineError(f"{path}: no such baseline file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"{path}: cannot be read ({exc.__class__.__name__}: {exc})") from None
    try:
        data = yaml.safe_load(text)
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        raise BaselineError(f"{path}:{line}: not valid YAML ({getattr(exc, 'problem', exc)})") from None

    def fail(where: list[Any], problem: str) -> BaselineError:
        return BaselineError(
            f"{path}:{_line(root, where) or 1}: {'.'.join(map(str, where)) or 'file'}: {problem}"
        )

    if not isinstance(data, dict):
        raise fail([], "a baseline is a mapping with family, repos (and notes)")
    unknown = set(data) - {"family", "notes", "repos", "discover"}
    if unknown:
        raise fail([sorted(unknown)[0]], "unknown key (known: discover, family, notes, repos)")
    if not isinstance(data.get("family"), str) or not data["family"]:
        raise fail(["family"], "must be a non-empty string")
    if not isinstance(data.get("notes", ""), str):
        raise fail(["notes"], "must be text")
    repos = data.get("repos")
    if not isinstance(repos, dict) or not repos:
        raise fail(["repos"], "must map repo ids to their expectations")
    out = []
    for repo, entry in repos.items():
        where: list[Any] = ["repos", repo]
        if not isinstance(repo, str) or not re.fullmatch(r"[\w.-]+(/[\w.-]+)?", repo):
            raise fail(where, "not a repo id (owner/name)")
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
            key = [exc.key] if exc.key else []
            raise fail([*where, "metrics_options", *key], str(exc)) from None
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
        metrics = entry.get("metrics") or {}
        for key in metrics:
            if key not in FIGURE_UNITS:
                raise fail([*where, "metrics", key], "unknown figure")
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
            )
        )
    rules = _discover_rules(data.get("discover"), {r.repo for r in out}, root, fail)
    return Baseline(path, data["family"], data.get("notes", ""), tuple(out), data, rules)


_GLOB = re.compile(r"[\w.*?\[\]!-]{1,96}")


def _discover_rules(
    raw: Any, pinned: set[str], root: yaml.Node | None, fail: Callable[[list[Any], str], BaselineError]
) -> tuple[DiscoverRule, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise fail(["discover"], "must be a list of rules (owner, match, exclude, reference)")
    rules = []
    for i, rule in enumerate(raw):
        where: list[Any] = ["discover", i]
        if not isinstance(rule, dict):
            raise fail(where, "a rule is a mapping with owner and match")
        bad = set(rule) - {"owner", "match", "exclude", "reference"}
        if bad:
            raise fail([*where, sorted(bad)[0]], "unknown key (known: owner, match, exclude, reference)")
        owner = rule.get("owner")
        if not isinstance(owner, str) or not re.fullmatch(r"[\w.-]{1,96}", owner):
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
        if reference is not None and reference not in pinned:
            raise fail(
                [*where, "reference"], f"reference {str(reference)[:100]!r} is not a repo of this baseline"
            )
        rules.append(DiscoverRule(owner, globs["match"], globs["exclude"], reference, _line(root, where)))
    return tuple(rules)


def discover(paths: list[str] | None, root: Path = Path("baselines")) -> list[Path]:
    if paths:
        return [Path(p) for p in paths]
    return sorted(root.glob("*.yaml")) + sorted(root.glob("*.yml"))
