"""A snapshot: one model revision as hubdiff sees it, without the weights.

It is immutable per commit sha, which is what makes it cacheable. The JSON form is stable: keys are
sorted, tensors are listed in name order, and ``format`` is bumped whenever the layout changes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple

from . import dtypes
from .patterns import Pattern, compress

SNAPSHOT_FORMAT = 1


class Tensor(NamedTuple):
    name: str
    dtype: str
    shape: tuple[int, ...]
    file: str

    @property
    def elements(self) -> int:
        n = 1
        for dim in self.shape:
            n *= dim
        return n


@dataclass(frozen=True)
class FileEntry:
    path: str
    size: int | None


@dataclass(frozen=True)
class Snapshot:
    source: str  # "owner/name" for a Hub repo, the folder path for a local checkout
    revision: str  # as asked for: branch, tag, refs/pr/N or sha ("local" for a folder)
    sha: str  # the commit every request was pinned to ("" for a folder)
    commit_date: str | None
    config: dict[str, Any]
    generation_config: dict[str, Any] | None
    files: tuple[FileEntry, ...]
    index_metadata: dict[str, Any]
    tensors: tuple[Tensor, ...]
    unknown_dtypes: tuple[str, ...] = field(default=())

    @property
    def label(self) -> str:
        if not self.sha:
            return self.source
        return f"{self.source}@{self.sha[:12]}"

    @cached_property
    def patterns(self) -> list[Pattern]:
        return compress((t.name, t.dtype, t.shape) for t in self.tensors)

    def parameters_by_dtype(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for t in self.tensors:
            out[t.dtype] = out.get(t.dtype, 0) + t.elements
        return dict(sorted(out.items()))

    def tensor_bytes(self) -> int:
        return sum(dtypes.nbytes(t.dtype, t.elements) or 0 for t in self.tensors)

    def to_json(self) -> dict[str, Any]:
        shard_ids = {path: i for i, path in enumerate(sorted({t.file for t in self.tensors}))}
        return {
            "format": SNAPSHOT_FORMAT,
            "source": self.source,
            "revision": self.revision,
            "sha": self.sha,
            "commit_date": self.commit_date,
            "config": self.config,
            "generation_config": self.generation_config,
            "files": [{"path": f.path, "size": f.size} for f in self.files],
            "index_metadata": self.index_metadata,
            "shards": list(shard_ids),
            "tensors": [[t.name, t.dtype, list(t.shape), shard_ids[t.file]] for t in self.tensors],
            "unknown_dtypes": list(self.unknown_dtypes),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Snapshot:
        if data.get("format") != SNAPSHOT_FORMAT:
            raise ValueError(f"snapshot format {data.get('format')!r}, expected {SNAPSHOT_FORMAT}")
        shards = data["shards"]
        return cls(
            source=data["source"],
            revision=data["revision"],
            sha=data["sha"],
            commit_date=data["commit_date"],
            config=data["config"],
            generation_config=data["generation_config"],
            files=tuple(FileEntry(f["path"], f["size"]) for f in data["files"]),
            index_metadata=data["index_metadata"],
            tensors=tuple(Tensor(n, d, tuple(s), shards[i]) for n, d, s, i in data["tensors"]),
            unknown_dtypes=tuple(data.get("unknown_dtypes", ())),
        )

    def dumps(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))
