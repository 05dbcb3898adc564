"""Model specs: what a replica repo holds at each commit, written the way people describe checkpoints.

Tensors are given as census rows (``name_pattern<TAB>count<TAB>shape<TAB>dtype``, the notation of
published checkpoint inspections, where a dotted segment like ``0-78`` or ``0-2,6-74/4`` is an index
set). A commit turns them into real safetensors headers split over N shards plus the index; the
tensor payload is never materialised.
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from itertools import product
from pathlib import Path
from typing import Any

from .. import dtypes
from ..patterns import _natural_key, parse_index_set

_SET_SEGMENT = re.compile(r"^\d+(?:-\d+(?:/\d+)?)?(?:,\d+(?:-\d+(?:/\d+)?)?)*$")

_ZEROS = bytes(1 << 20)

TensorTriple = tuple[str, str, tuple[int, ...]]


def expand_name_pattern(pattern: str) -> list[str]:
    segments = pattern.split(".")
    choices: list[list[str]] = []
    for segment in segments:
        if _SET_SEGMENT.match(segment) and not (
            len(segment) > 1 and segment.startswith("0") and segment.isdigit()
        ):
            choices.append([str(i) for i in parse_index_set(segment)])
        else:
            choices.append([segment])
    return [".".join(combo) for combo in product(*choices)]


def load_census(text: str) -> list[TensorTriple]:
    """Census rows -> (name, dtype, shape) for every tensor; the stated counts are checked."""
    out: list[TensorTriple] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.rstrip("\n").split("\t")
        if len(fields) != 4:
            raise ValueError(f"census line {lineno}: expected 4 tab-separated fields, got {len(fields)}")
        pattern, count, shape_text, dtype = fields
        names = expand_name_pattern(pattern)
        if int(count) != len(names):
            raise ValueError(
                f"census line {lineno}: {pattern} expands to {len(names)} names, count says {count}"
            )
        shape = tuple(int(d) for d in shape_text.split(",")) if shape_text.strip() else ()
        dt = dtypes.canonical(dtype.strip())
        out.extend((name, dt, shape) for name in names)
    return out


@dataclass
class CommitSpec:
    """One commit: small files by content, weights by census, split over ``shards`` files."""

    files: Mapping[str, bytes | VirtualFile]  # a VirtualFile: a large file of which the head is stored
    tensors: list[TensorTriple] = field(default_factory=list)
    shards: int = 1
    folder: str = ""  # weights (and their index) live in this subfolder
    title: str = "update"
    date: str = "2026-01-01T00:00:00.000Z"
    weights_name: str = "model"  # "diffusion_pytorch_model" for diffusers components
    weight_map: dict[str, str] | None = None  # tensor -> shard file, to copy a real index's split


@dataclass
class RepoSpec:
    repo_id: str
    commits: list[CommitSpec]
    gated: bool | str = False  # True is the Hub's "manual"; "auto" and "manual" as the Hub says them
    private: bool = False
    tags: dict[str, int] = field(default_factory=dict)  # tag -> commit position
    pull_requests: dict[int, CommitSpec] = field(
        default_factory=dict
    )  # refs/pr/N, each off main's last commit


@dataclass(frozen=True)
class VirtualFile:
    """A file whose first ``len(head)`` bytes are stored and the remaining ``size - len(head)`` are zeros."""

    head: bytes
    size: int
    lfs: bool

    @cached_property
    def etag(self) -> str:
        return hashlib.sha256(self.head + str(self.size).encode()).hexdigest()

    def read(self, start: int, end: int) -> Iterable[bytes]:
        """Bytes [start, end) in chunks."""
        pos = start
        if pos < len(self.head):
            chunk = self.head[pos : min(end, len(self.head))]
            yield chunk
            pos += len(chunk)
        while pos < end:
            n = min(end - pos, len(_ZEROS))
            yield _ZEROS[:n]
            pos += n


def safetensors_head(tensors: list[TensorTriple]) -> tuple[bytes, int]:
    """The 8-byte length, the JSON header (space-padded to 8 bytes, as writers do) and the data size."""
    entries: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, dtype, shape in tensors:
        elements = 1
        for d in shape:
            elements *= d
        size = dtypes.nbytes(dtype, elements) or elements
        entries[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    header = json.dumps(entries, separators=(",", ":"), ensure_ascii=False).encode()
    header += b" " * (-len(header) % 8)
    return struct.pack("<Q", len(header)) + header, offset


def _tensor_bytes(t: TensorTriple) -> int:
    elements = 1
    for d in t[2]:
        elements *= d
    return dtypes.nbytes(t[1], elements) or elements


def materialise(spec: CommitSpec) -> dict[str, VirtualFile]:
    """The commit's files: small ones as they are, weights as virtual shards plus their index."""
    files = {
        path: content if isinstance(content, VirtualFile) else VirtualFile(content, len(content), False)
        for path, content in spec.files.items()
    }
    if not spec.tensors:
        return files
    ordered = sorted(spec.tensors, key=lambda t: _natural_key(t[0]))
    prefix = f"{spec.folder}/" if spec.folder else ""
    base = spec.weights_name
    if spec.weight_map is not None:
        by_shard: dict[str, list[TensorTriple]] = {}
        for t in ordered:
            by_shard.setdefault(spec.weight_map[t[0]], []).append(t)
        return files | _sharded(by_shard, prefix, base)
    sizes = [_tensor_bytes(t) for t in ordered]
    total = sum(sizes)
    wanted = max(1, min(spec.shards, len(ordered)))
    groups: list[list[TensorTriple]] = [[] for _ in range(wanted)]
    cumulative = 0
    for t, size in zip(ordered, sizes):
        slot = min(wanted - 1, cumulative * wanted // total) if total else 0
        groups[slot].append(t)
        cumulative += size
    groups = [g for g in groups if g]
    if len(groups) == 1 and spec.shards == 1:
        head, data = safetensors_head(groups[0])
        files[f"{prefix}{base}.safetensors"] = VirtualFile(head, len(head) + data, True)
        return files
    n = len(groups)
    return files | _sharded(
        {f"{base}-{i:05d}-of-{n:05d}.safetensors": g for i, g in enumerate(groups, 1)}, prefix, base
    )


def _sharded(by_shard: dict[str, list[TensorTriple]], prefix: str, base: str) -> dict[str, VirtualFile]:
    files: dict[str, VirtualFile] = {}
    weight_map: dict[str, str] = {}
    total = 0
    for shard, group in by_shard.items():
        head, data = safetensors_head(group)
        files[prefix + shard] = VirtualFile(head, len(head) + data, True)
        weight_map.update((t[0], shard) for t in group)
        total += data
    index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
    raw = json.dumps(index, indent=2).encode()
    files[f"{prefix}{base}.safetensors.index.json"] = VirtualFile(raw, len(raw), False)
    return files


QUANTIZATION_CONFIGS: dict[str, dict[str, Any]] = {
    "fp8": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8"},
    "nvfp4": {"quant_method": "modelopt", "quant_algo": "NVFP4", "kv_cache_quant_algo": None},
}
_UNQUANTIZED = re.compile(r"embed_tokens|lm_head|(^|\.)gate\.weight$|norm")


def quantized_copy(
    commit: CommitSpec, scheme: str = "fp8", block: int = 128, title: str = "quantized"
) -> CommitSpec:
    """The commit as quantized checkpoints are published: every 2-D BF16 linear weight (not the
    embeddings, head, routers or norms) quantized, and the config's ``quantization_config`` saying so.

    ``fp8``: F8_E4M3 weights with an F32 ``weight_scale_inv`` per ``block`` x ``block`` tile (DeepSeek's
    block FP8). ``nvfp4``: two 4-bit values packed per U8 byte, an F8_E4M3 ``weight_scale`` per 16
    values, and F32 ``weight_scale_2`` and ``input_scale`` scalars (ModelOpt's NVFP4)."""
    tensors: list[TensorTriple] = []
    for name, dtype, shape in commit.tensors:
        if not (
            dtype == "BF16" and len(shape) == 2 and name.endswith(".weight") and not _UNQUANTIZED.search(name)
        ):
            tensors.append((name, dtype, shape))
        elif scheme == "fp8":
            tensors.append((name, "F8_E4M3", shape))
            tensors.append((f"{name}_scale_inv", "F32", (-(-shape[0] // block), -(-shape[1] // block))))
        else:
            stem = name.removesuffix(".weight")
            tensors.append((name, "U8", (shape[0], shape[1] // 2)))
            tensors.append((f"{stem}.weight_scale", "F8_E4M3", (shape[0], shape[1] // 16)))
            tensors += [(f"{stem}.weight_scale_2", "F32", ()), (f"{stem}.input_scale", "F32", ())]
    files = dict(commit.files)
    raw = files["config.json"]
    config = json.loads(raw.head if isinstance(raw, VirtualFile) else raw)
    target = config.get("text_config", config)
    quantization = dict(QUANTIZATION_CONFIGS[scheme])
    if scheme == "fp8":
        quantization["weight_block_size"] = [block, block]
    else:
        quantization["group_size"] = 16
    target["quantization_config"] = quantization
    files["config.json"] = (json.dumps(config, indent=2) + "\n").encode()
    return CommitSpec(files, tensors, commit.shards, commit.folder, title, commit.date)


def commit_sha(repo_id: str, parent: str, files: dict[str, VirtualFile], title: str) -> str:
    digest = hashlib.sha1(f"{repo_id}\0{parent}\0{title}".encode())
    for path in sorted(files):
        digest.update(f"{path}\0{files[path].etag}\0".encode())
    return digest.hexdigest()


# -- YAML specs --------------------------------------------------------------------------------


def load_repo_spec(path: Path) -> RepoSpec:
    """A repo spec file: files are inline (``json:``/``text:``) or paths relative to the spec."""
    from .._baseline.schema import read_yaml  # the one bounded YAML reader

    data, _ = read_yaml(path)
    base = path.parent
    commits = [_commit_spec(c, base) for c in data["commits"]]
    pull_requests = {int(c["number"]): _commit_spec(c, base) for c in data.get("pull_requests") or []}
    tags = {str(name): int(position) for name, position in (data.get("tags") or {}).items()}
    return RepoSpec(
        data["repo"],
        commits,
        gated=data["gated"] if data.get("gated") in ("auto", "manual") else bool(data.get("gated")),
        private=bool(data.get("private")),
        tags=tags,
        pull_requests=pull_requests,
    )


def _commit_spec(c: dict[str, Any], base: Path) -> CommitSpec:
    files: dict[str, bytes] = {}
    for name, source in (c.get("files") or {}).items():
        if "path" in source:
            files[name] = (base / source["path"]).read_bytes()
        elif "json" in source:
            files[name] = (json.dumps(source["json"], indent=2) + "\n").encode()
        else:
            files[name] = source["text"].encode()
    tensors: list[TensorTriple] = []
    for census in c.get("census", []):
        tensors.extend(load_census((base / census).read_text(encoding="utf-8")))
    tensors.extend(load_census("\n".join(c.get("tensors", []))))
    return CommitSpec(
        files=files,
        tensors=tensors,
        shards=int(c.get("shards", 1)),
        folder=c.get("folder", ""),
        title=c.get("title", "update"),
        date=c.get("date", "2026-01-01T00:00:00.000Z"),
    )


def write_checkpoint(folder: Path, spec: CommitSpec) -> dict[str, VirtualFile]:
    """Write a commit to disk as a real checkpoint folder; the payload of each shard is a sparse hole."""
    written = materialise(spec)
    for path, f in written.items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("wb") as fh:
            fh.write(f.head)
            fh.truncate(f.size)
    return written
