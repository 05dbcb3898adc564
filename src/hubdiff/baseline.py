"""Baselines: one YAML file per model family with what each repo is expected to be.

A baseline pins each repo to the commit it was recorded at and keeps its config, its tensor patterns
and its derived figures, plus what people add by hand: claims, keys allowed to change, notes. It is
validated on load (``file:line: what is wrong``), read with ``yaml.safe_load`` only, and written
atomically; re-recording keeps claims, notes and allowed changes.
"""

from __future__ import annotations

import fcntl
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml

from ._compare.claims import Claim, ClaimError, validate
from ._metrics import CONFIG_READERS, FIGURE_UNITS, Metrics, MetricsOptions
from ._metrics.kv import KV_DTYPE_BYTES, PROFILES
from ._source.cache import atomic_write_text
from .errors import BaselineError
from .patterns import Pattern, format_index_set, parse_index_set
from .snapshot import Snapshot, Tensor

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
_OPTION_KEYS = {"profile", "kv_dtype", "context", "count_mtp", "indexer_pooling", "config_reader"}


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
        """The recorded revision rebuilt from the baseline (patterns are lossless)."""
        tensors: list[Tensor] = []
        for key, row in self.tensors.items():
            pattern = parse_pattern_row(key, row)
            tensors.extend(Tensor(name, pattern.dtype, pattern.shape, "") for name in pattern.names())
        tensors.sort(key=lambda t: t.name)
        return Snapshot(
            self.repo, self.revision, self.sha or "", None, self.config, None, (), {}, tuple(tensors)
        )


@dataclass(frozen=True)
class Baseline:
    path: Path
    family: str
    notes: str
    repos: tuple[RepoBaseline, ...]
    raw: dict[str, Any]


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
    text = path.read_text(encoding="utf-8")
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
    unknown = set(data) - {"family", "notes", "repos"}
    if unknown:
        raise fail([sorted(unknown)[0]], "unknown key (known: family, notes, repos)")
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
        options = _options(
            entry.get("metrics_options") or {}, lambda k, p, w=where: fail([*w, "metrics_options", *k], p)
        )
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
    return Baseline(path, data["family"], data.get("notes", ""), tuple(out), data)


def _options(raw: Any, fail: Any) -> MetricsOptions:
    if not isinstance(raw, dict):
        raise fail([], "must be a mapping")
    bad = set(raw) - _OPTION_KEYS
    if bad:
        raise fail([sorted(bad)[0]], f"unknown option (known: {', '.join(sorted(_OPTION_KEYS))})")
    if "kv_dtype" in raw and str(raw["kv_dtype"]).lower() not in KV_DTYPE_BYTES:
        raise fail(["kv_dtype"], f"unknown KV dtype (known: {', '.join(KV_DTYPE_BYTES)})")
    if "profile" in raw and raw["profile"] not in PROFILES:
        raise fail(["profile"], f"unknown profile (known: {', '.join(PROFILES)})")
    if "context" in raw and (not isinstance(raw["context"], int) or raw["context"] <= 0):
        raise fail(["context"], "must be a positive whole number of tokens")
    if "indexer_pooling" in raw and raw["indexer_pooling"] not in ("auto", "stored", "scan"):
        raise fail(["indexer_pooling"], "must be auto, stored or scan")
    if "config_reader" in raw and raw["config_reader"] not in CONFIG_READERS:
        raise fail(["config_reader"], f"must be one of {', '.join(CONFIG_READERS)}")
    values = {k: (str(v).lower() if k == "kv_dtype" else v) for k, v in raw.items()}
    return MetricsOptions(**values)  # type: ignore[arg-type]  # keys and types checked just above


def discover(paths: list[str] | None, root: Path = Path("baselines")) -> list[Path]:
    if paths:
        return [Path(p) for p in paths]
    return sorted(root.glob("*.yaml")) + sorted(root.glob("*.yml"))


# -- recording ---------------------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    pass


def _represent_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
    flow = all(not isinstance(v, (dict, list)) for v in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


_Dumper.add_representer(list, _represent_list)


def record_repo(snapshot: Snapshot, metrics: Metrics, previous: dict[str, Any] | None) -> dict[str, Any]:
    """The YAML mapping for one repo; claims, notes, options and allowed changes carry over."""
    previous = previous or {}
    entry: dict[str, Any] = {
        "revision": previous.get("revision", snapshot.revision),
        "sha": snapshot.sha,
        "recorded": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    for key in ("notes", "metrics_options", "allow_changes", "claims", "config_keys"):
        if key in previous:
            entry[key] = previous[key]
    if "allow_changes" not in entry:
        entry["allow_changes"] = ["transformers_version"]
    entry["metrics"] = {k: v for k, v in metrics.figures().items()}
    config = snapshot.config
    if previous.get("config_keys") == "listed":
        config = {k: v for k, v in config.items() if k in (previous.get("config") or {})}
    entry["config"] = config
    entry["tensors"] = {pattern_key(p): pattern_row(p) for p in snapshot.patterns}
    return entry


def dump_baseline(data: dict[str, Any]) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120)


def write_baseline(path: Path, data: dict[str, Any]) -> None:
    text = dump_baseline(data)
    yaml.safe_load(text)  # never write what we could not read back
    atomic_write_text(path, text)


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Serialise read-modify-write of one baseline between processes (two watch runs at once)."""
    lock = path.with_name(f".{path.name}.lock")
    with lock.open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def update_baseline(
    path: Path, sources: Any, only: set[str] | None = None, revisions: dict[str, str] | None = None
) -> list[str]:
    """Re-record the repos of one baseline (all, or ``only``) at their tracked revision, or at the sha in
    ``revisions``; claims, notes, options and allowed changes are kept. One atomic write, under a lock."""
    from ._metrics import compute_metrics
    from ._source import SourceSpec

    lines = []
    with locked(path):
        baseline = load_baseline(path)  # read under the lock: another run may have just written it
        data = dict(baseline.raw)
        entries = dict(data["repos"])
        for repo in baseline.repos:
            if only is not None and repo.repo not in only:
                continue
            revision = (revisions or {}).get(repo.repo, repo.revision)
            snapshot = sources.open(SourceSpec("hub", repo.repo, revision))
            entries[repo.repo] = record_repo(snapshot, compute_metrics(snapshot, repo.options), repo.raw)
            lines.append(f"{path}: {repo.repo} {(repo.sha or 'none')[:12]} -> {snapshot.sha[:12]}")
        data["repos"] = entries
        write_baseline(path, data)
    return lines
