"""Figures of a GGUF release, from its headers alone: variants, parameters, bytes by ggml type, bits
per weight overall and per tensor group, architecture and context from the metadata, split integrity.

A repo of quant files (``X-Q4_K_M.gguf``, ``X-Q8_0-00001-of-00002.gguf`` ...) is one release with
variants: a file, or the shards of one split (``NAME-0000K-of-0000N.gguf``, llama.cpp's ``gguf-split``
names). Bits per weight are llama.cpp's: Σ bytes × 8 / Σ elements, over the whole variant (as
``llama_model_loader`` prints "file size ... (x BPW)", less the header) and per tensor group (the
name with its ``blk.N.`` removed: ``attn_v.weight`` over every layer). A tensor's bytes are its
elements over the type's block size times the block's bytes (``ggml_types``), and the tensors'
bytes, each padded to the alignment as the writer pads them, must fill the data section exactly.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .._source.gguf import StringArray, TensorInfo, _pad
from .._source.gguf_read import SPLIT_NAME, GGUFFile, GGUFRelease
from .gguf_kv import KVSettings, kv_cache, kv_text

GGUF_FORMAT = 1
_BLOCK = re.compile(r"^blk\.\d+\.")
# metadata shown as the release's facts: per architecture (``{arch}.context_length`` ...) and general
ARCH_KEYS = (
    "context_length",
    "block_count",
    "embedding_length",
    "feed_forward_length",
    "attention.head_count",
    "attention.head_count_kv",
    "attention.key_length",
    "attention.value_length",
    "attention.sliding_window",
    "expert_count",
    "expert_used_count",
    "vocab_size",
)
GENERAL_KEYS = ("general.name", "general.file_type", "general.quantization_version", "general.size_label")


@dataclass(frozen=True)
class TypeBytes:
    tensors: int
    elements: int
    bytes: int

    @property
    def bits_per_weight(self) -> float:
        return self.bytes * 8 / self.elements if self.elements else 0.0


@dataclass(frozen=True)
class Variant:
    """One quant of the release: a file, or the shards of one split, in shard order."""

    name: str
    files: tuple[GGUFFile, ...]
    problems: tuple[str, ...] = field(default=())  # split integrity and data-section checks

    @property
    def metadata(self) -> dict[str, Any]:
        """The first shard's metadata: ``gguf-split`` writes the model's there."""
        return self.files[0].header.metadata

    def tensors(self) -> list[tuple[TensorInfo, int]]:
        return [(t, i) for i, f in enumerate(self.files) for t in f.header.tensors]

    @property
    def architecture(self) -> str | None:
        arch = self.metadata.get("general.architecture")
        return arch if isinstance(arch, str) else None

    def arch_value(self, key: str) -> Any:
        return self.metadata.get(f"{self.architecture}.{key}") if self.architecture else None

    @property
    def parameters(self) -> int:
        return sum(t.elements for t, _ in self.tensors())

    @property
    def tensor_bytes(self) -> int:
        return sum(t.nbytes for t, _ in self.tensors())

    @property
    def bits_per_weight(self) -> float:
        elements = self.parameters
        return self.tensor_bytes * 8 / elements if elements else 0.0

    def by_type(self) -> dict[str, TypeBytes]:
        return _sums((t.type.name, t) for t, _ in self.tensors())

    def by_group(self) -> dict[str, TypeBytes]:
        return _sums((_BLOCK.sub("", t.name), t) for t, _ in self.tensors())

    def types_by_group(self) -> dict[str, dict[str, int]]:
        """Per group, how many tensors of each ggml type (Q4_K_M keeps some attn_v layers in Q6_K)."""
        out: dict[str, Counter[str]] = defaultdict(Counter)
        for t, _ in self.tensors():
            out[_BLOCK.sub("", t.name)][t.type.name] += 1
        return {g: dict(sorted(c.items())) for g, c in sorted(out.items())}


def _sums(pairs: Iterable[tuple[str, TensorInfo]]) -> dict[str, TypeBytes]:
    tensors: Counter[str] = Counter()
    elements: Counter[str] = Counter()
    nbytes: Counter[str] = Counter()
    for key, t in pairs:
        tensors[key] += 1
        elements[key] += t.elements
        nbytes[key] += t.nbytes
    return {k: TypeBytes(tensors[k], elements[k], nbytes[k]) for k in sorted(tensors)}


def variants(release: GGUFRelease) -> list[Variant]:
    """The release's variants, each checked: split integrity (``split.count``, ``split.no``,
    ``split.tensors.count``, every shard present, no tensor twice) and each file's data section."""
    singles: list[Variant] = []
    splits: dict[str, list[GGUFFile]] = defaultdict(list)
    for f in release.ggufs:
        match = SPLIT_NAME.fullmatch(f.path)
        if match:
            splits[match.group("stem")].append(f)
        else:
            singles.append(Variant(f.path.removesuffix(".gguf"), (f,), tuple(_data_problems(f))))
    listed = {path for path, _ in release.files}
    for stem, shards in splits.items():
        shards.sort(key=lambda f: f.path)
        singles.append(Variant(stem, tuple(shards), tuple(_split_problems(stem, shards, listed))))
    return sorted(singles, key=lambda v: v.name)


def _data_problems(f: GGUFFile) -> list[str]:
    """The tensors, each padded to the alignment, must fill the data section (a header-only file,
    with no data section at all, describes a layout without its weights)."""
    h = f.header
    data = h.data_bytes
    if data is None or data <= 0 or not h.tensors:
        return []
    padded = sum(_pad(t.nbytes, h.alignment) for t in h.tensors)
    if padded != data:
        return [f"{f.path}: the tensors take {padded:,} bytes (padded) but the data section is {data:,}"]
    return []


def _split_problems(stem: str, shards: list[GGUFFile], listed: set[str]) -> list[str]:
    problems: list[str] = []
    for f in shards:
        problems += _data_problems(f)
    count_in_name = int(SPLIT_NAME.fullmatch(shards[0].path).group("count"))  # type: ignore[union-attr]
    first = shards[0].header.metadata
    count = first.get("split.count", count_in_name)
    if count != count_in_name:
        problems.append(f"{shards[0].path}: split.count {count} but the name says {count_in_name}")
    expected = [f"{stem}-{i:05d}-of-{count_in_name:05d}.gguf" for i in range(1, count_in_name + 1)]
    missing = [p for p in expected if p not in listed]
    if missing:
        problems.append(f"{len(missing)} of {count_in_name} shards missing: {', '.join(missing[:5])}")
    for f in shards:
        no = f.header.metadata.get("split.no")
        if no is not None and f.path in expected and no != expected.index(f.path):
            problems.append(f"{f.path}: split.no {no}, expected {expected.index(f.path)}")
    seen: dict[str, str] = {}
    for f in shards:
        for t in f.header.tensors:
            if t.name in seen:
                problems.append(f"tensor {t.name!r} is in {seen[t.name]} and {f.path}")
            seen[t.name] = f.path
    total = first.get("split.tensors.count")
    if total is not None and not missing and total != len(seen):
        problems.append(f"split.tensors.count {total} but the shards hold {len(seen)} tensors")
    return problems


def _value_json(value: Any) -> Any:
    """A metadata value for JSON: long arrays summarised (a tokenizer's 262k strings are not figures)."""
    if isinstance(value, StringArray) or (isinstance(value, list) and len(value) > 64):
        return {"array_of": len(value)}
    if isinstance(value, float) and value != value:
        return None
    return value


def release_json(
    release: GGUFRelease, with_tensors: bool = True, kv: KVSettings | None = None
) -> dict[str, Any]:
    """The release as JSON (``format`` 1): every variant with its figures, files and, for ``snapshot``,
    its tensors as [name, ggml type, shape (outermost first), shard number]; with ``kv`` (``metrics``),
    its KV cache as llama.cpp allocates it (``gguf_kv``)."""
    out = []
    for v in variants(release):
        entry: dict[str, Any] = {
            "name": v.name,
            "files": [
                {
                    "path": f.path,
                    "size": f.size,
                    "version": f.header.version,
                    "header_bytes": f.header.header_bytes,
                    "data_offset": f.header.data_offset,
                    "alignment": f.header.alignment,
                    "tensors": len(f.header.tensors),
                    "metadata_keys": len(f.header.metadata),
                }
                for f in v.files
            ],
            "architecture": v.architecture,
            "context_length": v.arch_value("context_length"),
            "facts": {k: _value_json(v.arch_value(k)) for k in ARCH_KEYS if v.arch_value(k) is not None},
            "general": {k: v.metadata[k] for k in GENERAL_KEYS if k in v.metadata},
            "parameters": v.parameters,
            "tensor_bytes": v.tensor_bytes,
            "bits_per_weight": round(v.bits_per_weight, 4),
            "by_type": {k: _type_json(t) for k, t in v.by_type().items()},
            "by_group": {k: _type_json(t) for k, t in v.by_group().items()},
            "types_by_group": v.types_by_group(),
            "split_problems": list(v.problems),
        }
        tokens = v.metadata.get("tokenizer.ggml.tokens")
        if tokens is not None:
            entry["vocab_tokens"] = len(tokens)
        if kv is not None and v.parameters:
            entry["kv_cache"] = kv_cache(v.metadata, kv).to_json()
        if with_tensors:
            entry["tensors"] = sorted([t.name, t.type.name, list(t.shape), shard] for t, shard in v.tensors())
        out.append(entry)
    return {
        "format": GGUF_FORMAT,
        "kind": "gguf",
        "source": release.source,
        "revision": release.revision,
        "sha": release.sha,
        "commit_date": release.commit_date,
        "files": [{"path": p, "size": s} for p, s in release.files],
        "variants": out,
    }


def _type_json(t: TypeBytes) -> dict[str, Any]:
    return {
        "tensors": t.tensors,
        "elements": t.elements,
        "bytes": t.bytes,
        "bits_per_weight": round(t.bits_per_weight, 4),
    }


def _count(n: int) -> str:
    for unit, size in (("T", 10**12), ("B", 10**9), ("M", 10**6), ("K", 10**3)):
        if n >= size:
            return f"{n / size:.2f}{unit}"
    return str(n)


def release_text(release: GGUFRelease, groups: bool = False, kv: KVSettings | None = None) -> str:
    """The release for a terminal: a block per variant (``groups``: bits per weight per tensor group;
    ``kv``: the KV cache as llama.cpp allocates it)."""
    lines = [f"{release.label}  GGUF, {len(release.ggufs)} file(s)"]
    for v in variants(release):
        files = f"{len(v.files)} shards" if len(v.files) > 1 else v.files[0].path
        lines.append("")
        lines.append(f"{v.name}  ({files})")
        arch, ctx = v.architecture or "?", v.arch_value("context_length")
        lines.append(f"  architecture {arch}, context {ctx if ctx is not None else '?'}")
        lines.append(
            f"  parameters {v.parameters:,} ({_count(v.parameters)}), tensors {len(v.tensors()):,}, "
            f"tensor bytes {v.tensor_bytes:,}, {v.bits_per_weight:.2f} BPW"
        )
        for name, t in v.by_type().items():
            lines.append(
                f"    {name:<8} {t.tensors:>6,} tensors {t.elements:>16,} elements {t.bytes:>16,} bytes "
                f"{t.bits_per_weight:6.2f} BPW"
            )
        if groups:
            lines.append("  by tensor group (blk.N. removed):")
            mixes = v.types_by_group()
            for name, t in v.by_group().items():
                mix = ", ".join(f"{k} x{n}" for k, n in mixes[name].items())
                lines.append(f"    {name:<28} {t.elements:>16,} elements {t.bits_per_weight:6.2f} BPW  {mix}")
        if kv is not None and v.parameters:
            lines += kv_text(kv_cache(v.metadata, kv))
        for problem in v.problems:
            lines.append(f"  PROBLEM: {problem}")
        if len(v.files) > 1 and not v.problems:
            lines.append(f"  split complete: {len(v.files)} shards, every tensor once")
    return "\n".join(lines) + "\n"
