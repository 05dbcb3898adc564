"""The safetensors header: an 8-byte little-endian length N, then N bytes of JSON.

Everything here is hostile input. The checks are the ones a loader would hit later, done up front so
that a broken shard is reported by name: a length that is absurd or runs past the file, JSON that is
not an object, entries without a dtype or shape, offsets that overlap, leave gaps outside the data
section or run past the end of the file, and byte counts that disagree with dtype x shape.
"""

from __future__ import annotations

import itertools
import json
import struct
from dataclasses import dataclass

from .. import dtypes
from ..snapshot import Tensor

MAX_HEADER_BYTES = 100_000_000


class HeaderProblem(ValueError):
    """What is wrong with a header, in words; the caller adds repo, revision and file."""


@dataclass(frozen=True)
class ParsedHeader:
    tensors: list[Tensor]
    metadata: dict[str, str]
    unknown_dtypes: set[str]


def header_length(prefix: bytes, file_size: int | None) -> int:
    if len(prefix) < 8:
        raise HeaderProblem(f"file too short for a safetensors header ({len(prefix)} bytes)")
    (length,) = struct.unpack("<Q", prefix[:8])
    if length > MAX_HEADER_BYTES:
        raise HeaderProblem(f"header claims {length:,} bytes (limit {MAX_HEADER_BYTES:,})")
    if length < 2:
        raise HeaderProblem(f"header claims {length} bytes")
    if file_size is not None and 8 + length > file_size:
        raise HeaderProblem(f"header claims {length:,} bytes but the file has {file_size:,}")
    return length


def parse_header(raw: bytes, file: str, file_size: int | None) -> ParsedHeader:
    """Parse header JSON ``raw`` (without the 8-byte prefix) of shard ``file``."""
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        raise HeaderProblem(f"header is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise HeaderProblem(f"header is JSON but not an object ({type(data).__name__})")
    data_size = None if file_size is None else file_size - 8 - len(raw)
    metadata = data.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict):
        raise HeaderProblem("__metadata__ is not an object")
    tensors: list[Tensor] = []
    unknown: set[str] = set()
    spans: list[tuple[int, int, str]] = []
    nbytes = dtypes.nbytes
    for name, entry in data.items():
        try:
            dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
        except (TypeError, KeyError):
            what = "is not an object" if not isinstance(entry, dict) else "lacks dtype, shape or data_offsets"
            raise HeaderProblem(f"entry {name!r} {what}") from None
        if type(dtype) is not str or not dtype:
            raise HeaderProblem(f"tensor {name!r} has no dtype")
        if type(shape) is not list:
            raise HeaderProblem(f"tensor {name!r} has an invalid shape {shape!r}")
        elements = 1
        for d in shape:
            if type(d) is not int or d < 0:
                raise HeaderProblem(f"tensor {name!r} has an invalid shape {shape!r}")
            elements *= d
        if type(offsets) is not list or len(offsets) != 2:
            raise HeaderProblem(f"tensor {name!r} has invalid data_offsets {offsets!r}")
        begin, end = offsets
        if type(begin) is not int or type(end) is not int or not 0 <= begin <= end:
            raise HeaderProblem(f"tensor {name!r} has invalid data_offsets {offsets!r}")
        if data_size is not None and end > data_size:
            raise HeaderProblem(
                f"tensor {name!r} data_offsets [{begin}, {end}] run past the end of the file "
                f"(data section is {data_size:,} bytes)"
            )
        expected = nbytes(dtype, elements)
        if expected is None:
            unknown.add(dtype)
        elif expected != end - begin:
            raise HeaderProblem(
                f"tensor {name!r}: {dtype} {shape} needs {expected:,} bytes, offsets give {end - begin:,}"
            )
        spans.append((begin, end, name))
        tensors.append(Tensor(name, dtype, tuple(shape), file))
    spans.sort()
    for (_, prev_end, prev_name), (begin, _, name) in itertools.pairwise(spans):
        if begin < prev_end:
            raise HeaderProblem(f"tensors {prev_name!r} and {name!r} overlap")
    return ParsedHeader(tensors, {str(k): str(v) for k, v in metadata.items()}, unknown)
