"""The safetensors header: an 8-byte little-endian length N, then N bytes of JSON.

Everything here is hostile input. The rules are those of the safetensors library (0.8, checked
against ``safetensors.safe_open`` in the tests), applied up front so that a broken shard is reported
by name: N at most 100 MB and within the file; strict UTF-8 JSON (no BOM, NaN, Infinity, 1e400 or
lone surrogates) holding an object; ``__metadata__`` null or an object of strings; every other entry
an object with exactly one ``dtype`` (a safetensors dtype name), ``shape`` (unsigned 64-bit integers)
and ``data_offsets`` (two of them), extra fields ignored; elements and bits computed without
overflowing 64 bits, and whole bytes; byte counts equal to dtype x shape; offsets, sorted, that tile
the data section from 0 with no gap or overlap, and a data section that ends where the file ends.

Where hubdiff differs on purpose, the caller says so: a header-only skeleton (no data section) is
accepted for a local folder (``file_size=None``), and a well-formed dtype name hubdiff does not know
(``[A-Z][A-Z0-9_]*``) is recorded as unknown instead of refused, so a newer format still reads.
"""

from __future__ import annotations

import operator
import re
import struct
from dataclasses import dataclass
from typing import Any

from .. import dtypes
from .jsonin import JSONProblem, check_tree, load_json

MAX_HEADER_BYTES = 100_000_000
MAX_DEPTH = 127  # serde_json's recursion limit, as safetensors hits it
_U64 = 2**64 - 1
_FIELDS = frozenset({"dtype", "shape", "data_offsets"})
_DTYPE_NAME = re.compile(r"[A-Z][A-Z0-9_]*")


class HeaderProblem(ValueError):
    """What is wrong with a header, in words; the caller adds repo, revision and file."""


@dataclass(frozen=True)
class ParsedHeader:
    """The tensors as three parallel lists (names, dtypes, shapes): no object per tensor is built."""

    names: list[str]
    dtypes: list[str]
    shapes: list[tuple[int, ...]]
    metadata: dict[str, str]
    unknown_dtypes: set[str]
    size: int = 0  # bytes of the header in the file, the 8-byte length included


def header_length(prefix: bytes, file_size: int | None) -> int:
    if len(prefix) < 8:
        raise HeaderProblem(f"file too short for a safetensors header ({len(prefix)} bytes)")
    (length,) = struct.unpack("<Q", prefix[:8])
    if length >= 1 << 48:  # the first 8 bytes of text or of another format: never shown as a number
        raise HeaderProblem("not a safetensors file (header length out of range)")
    if length > MAX_HEADER_BYTES:
        raise HeaderProblem(f"header claims {length:,} bytes (limit {MAX_HEADER_BYTES:,})")
    if length < 2:
        raise HeaderProblem(f"header claims {length} bytes")
    if file_size is not None and 8 + length > file_size:
        raise HeaderProblem(f"header claims {length:,} bytes but the file has {file_size:,}")
    return length


class _Pairs(dict):  # type: ignore[type-arg]
    """An object that remembers which keys it held twice (serde refuses a repeated field)."""

    repeated: frozenset[str] = frozenset()


def _pairs(pairs: list[tuple[str, Any]]) -> _Pairs:
    out = _Pairs(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        out.repeated = frozenset(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
    return out


def _minus_zero(text: str) -> Any:
    """``-0`` is a float to serde, so not an offset or a dimension; Python would read it as 0."""
    return -0.0 if text == "-0" else int(text)


def _load(raw: bytes) -> Any:
    hooks: dict[str, Any] = {"parse_int": _minus_zero} if b"-0" in raw else {}
    try:
        data = load_json(raw, max_depth=None, **hooks)
        # A repeated field is only visible to a Python call per object, so the header is read again
        # that way only when a scan of the bytes says a field name occurs more often than entries do,
        # or an escape could spell one.
        if isinstance(data, dict):
            entries = len(data) - ("__metadata__" in data)
            if (
                b"\\u" in raw
                or raw.count(b'"__metadata__"') > 1
                or max(raw.count(b'"dtype"'), raw.count(b'"shape"'), raw.count(b'"data_offsets"')) > entries
            ):
                data = load_json(raw, max_depth=None, object_pairs_hook=_pairs, **hooks)
    except JSONProblem as exc:
        raise HeaderProblem(f"header is {exc}") from None
    return data


def _elements(shape: Any, name: str) -> int:
    if type(shape) is not list:
        raise HeaderProblem(f"tensor {name!r} has an invalid shape {_short(shape)}")
    elements = 1
    for d in shape:
        if type(d) is not int or not 0 <= d <= _U64:
            raise HeaderProblem(f"tensor {name!r} has an invalid shape {_short(shape)}")
        elements *= d
        if elements > _U64:  # safetensors multiplies in u64 and stops at the first overflow
            raise HeaderProblem(f"tensor {name!r}: shape {_short(shape)} overflows 64 bits")
    return elements


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:79] + "…"


def parse_header(raw: bytes, file: str, file_size: int | None) -> ParsedHeader:
    """Parse header JSON ``raw`` (without the 8-byte prefix) of shard ``file``.

    ``file_size`` None means the data section is not there to check against (a local skeleton).
    A header in the form safetensors writes is read by ``_canonical``; anything else (and anything
    wrong) by ``parse_strict``, which says what is wrong.
    """
    parsed = _canonical(raw, file_size)
    return parsed if parsed is not None else parse_strict(raw, file, file_size)


# The header as the safetensors library (and every writer built on it) lays it out: no whitespace but
# the trailing padding, ``__metadata__`` first, then entries of exactly dtype, shape and data_offsets
# in that order, no escapes and no control characters anywhere, integers of at most 19 digits (so
# within 64 bits) without sign or leading zero. Split at its quotes, such a text is ten pieces per
# entry, six of them fixed: checking those fixes its one reading. Anything else goes to parse_strict.
_NUMBER = r"(?:0|[1-9][0-9]{0,18})"
_SHAPE = re.compile(rf":\[((?:{_NUMBER}(?:,{_NUMBER})*)?)\],")
_OFFSETS = re.compile(rf":\[({_NUMBER}),({_NUMBER})\]\}},")
_METADATA = re.compile(rb'\{"__metadata__":(\{[^{}]*\}),')
_PRINTED = bytes(range(0x20, 0x100))  # in UTF-8 a byte below 0x20 is always a control character
_FIXED = ((2, ":{"), (3, "dtype"), (4, ":"), (6, ","), (7, "shape"), (9, "data_offsets"))


def _canonical(raw: bytes, file_size: int | None) -> ParsedHeader | None:
    """The header read at C speed, when it is in safetensors' own form and passes every check; else None.

    The strict reader builds a dict per tensor and checks it in Python (1.2 s per 200,000 tensors);
    here string splits take the text apart, and the checks run per distinct dtype and shape (a
    checkpoint has a handful) and as whole-list comparisons (0.3 s). It gives exactly what
    ``parse_strict`` gives (the tests compare both on fuzzed headers) and declines, rather than
    reports, anything unusual: a repeated name, an unknown dtype, a gap, a number of 20 digits.
    """
    body = raw.rstrip(b" \t\n\r")
    if body[:1] != b"{" or body[-1:] != b"}" or b"\\" in body or body.translate(None, _PRINTED):
        return None
    metadata: Any = {}
    start = 1
    head = _METADATA.match(body)
    if head is not None:
        try:
            metadata = load_json(head.group(1), max_depth=None)
        except JSONProblem:
            return None
        if not isinstance(metadata, dict) or any(type(v) is not str for v in metadata.values()):
            return None
        start = head.end()
    try:
        text = body[start:-1].decode("utf-8")
    except UnicodeDecodeError:
        return None
    pieces = text.split('"')
    count = len(pieces) // 10
    if not count or len(pieces) != 1 + 10 * count or pieces[0]:
        return None
    for at, fixed in _FIXED:
        if pieces[at::10].count(fixed) != count:
            return None
    names, dtype_texts, shape_texts = pieces[1::10], pieces[5::10], pieces[8::10]
    if len(set(names)) != len(names) or "__metadata__" in names:
        return None
    offsets = _OFFSETS.split("".join(pieces[10::10]) + ",")
    if any(offsets[0::3]):  # something between two entries' offsets that is not exactly one of them
        return None
    shape_of: dict[str, tuple[int, ...]] = {}
    for text_shape in set(shape_texts):
        match = _SHAPE.fullmatch(text_shape)
        if match is None:
            return None
        shape_of[text_shape] = tuple(map(int, match.group(1).split(","))) if match.group(1) else ()
    dtype_of = {d: d for d in set(dtype_texts)}  # one string object per dtype, not per tensor
    size_of: dict[tuple[str, str], int] = {}
    for dtype, text_shape in set(zip(dtype_texts, shape_texts)):
        bits = dtypes.BITS.get(dtype)
        if bits is None:  # unknown, or not a dtype name at all: parse_strict tells which
            return None
        elements = 1
        for d in shape_of[text_shape]:
            elements *= d
            if elements > _U64:
                return None
        total_bits = elements * bits
        if total_bits > _U64 or total_bits % 8:
            return None
        size_of[(dtype, text_shape)] = total_bits // 8
    begins = list(map(int, offsets[1::3]))
    ends = list(map(int, offsets[2::3]))
    if list(map(operator.sub, ends, begins)) != list(map(size_of.__getitem__, zip(dtype_texts, shape_texts))):
        return None
    starts, stops = zip(*sorted(zip(begins, ends)))
    if starts[0] != 0 or starts[1:] != stops[:-1]:
        return None
    if file_size is not None and stops[-1] != file_size - 8 - len(raw):
        return None
    return ParsedHeader(
        names,
        list(map(dtype_of.__getitem__, dtype_texts)),
        list(map(shape_of.__getitem__, shape_texts)),
        metadata,
        set(),
        8 + len(raw),
    )


def parse_strict(raw: bytes, file: str, file_size: int | None) -> ParsedHeader:
    """``parse_header`` by the standard library's JSON reader, every entry checked one by one."""
    data = _load(raw)
    if not isinstance(data, dict):
        raise HeaderProblem(f"header is JSON but not an object ({type(data).__name__})")
    if "__metadata__" in getattr(data, "repeated", ()):
        raise HeaderProblem("__metadata__ is given twice")
    metadata = data.pop("__metadata__", None)
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise HeaderProblem(f"__metadata__ is not an object ({type(metadata).__name__})")
    for key, value in metadata.items():
        if type(value) is not str:
            raise HeaderProblem(f"__metadata__ value of {key!r} is not a string ({type(value).__name__})")
    names: list[str] = []
    dtype_list: list[str] = []
    shapes: list[tuple[int, ...]] = []
    unknown: set[str] = set()
    spans: list[tuple[int, int, str]] = []
    bits_of = dtypes.BITS
    for name, entry in data.items():
        if not isinstance(entry, dict):
            raise HeaderProblem(f"entry {name!r} is not an object")
        if len(entry) != 3 or entry.keys() != _FIELDS:
            missing = _FIELDS - entry.keys()
            if missing:
                raise HeaderProblem(f"entry {name!r} lacks {', '.join(sorted(missing))}")
            for key in entry.keys() - _FIELDS:  # ignored, as safetensors ignores them, but still JSON
                try:
                    check_tree(entry[key], MAX_DEPTH - 2, "")
                except JSONProblem as exc:
                    raise HeaderProblem(f"tensor {name!r}: field {key!r} {exc}") from None
        repeated: frozenset[str] = getattr(entry, "repeated", frozenset()) & _FIELDS
        if repeated:
            raise HeaderProblem(f"tensor {name!r} gives {', '.join(sorted(repeated))} twice")
        dtype, offsets = entry["dtype"], entry["data_offsets"]
        if type(dtype) is not str or not dtype:
            raise HeaderProblem(f"tensor {name!r} has no dtype")
        elements = _elements(entry["shape"], name)
        if type(offsets) is not list or len(offsets) != 2:
            raise HeaderProblem(f"tensor {name!r} has invalid data_offsets {_short(offsets)}")
        begin, end = offsets
        if type(begin) is not int or type(end) is not int or not 0 <= begin <= end <= _U64:
            raise HeaderProblem(f"tensor {name!r} has invalid data_offsets {_short(offsets)}")
        bits = bits_of.get(dtype)
        if bits is None:
            if not _DTYPE_NAME.fullmatch(dtype):
                raise HeaderProblem(f"tensor {name!r} has an invalid dtype {_short(dtype)}")
            unknown.add(dtype)
        else:
            total_bits = elements * bits
            if total_bits > _U64:
                raise HeaderProblem(f"tensor {name!r}: {dtype} {entry['shape']} overflows 64 bits")
            if total_bits % 8:
                raise HeaderProblem(f"tensor {name!r}: {elements:,} elements of {dtype} are not whole bytes")
            if total_bits // 8 != end - begin:
                raise HeaderProblem(
                    f"tensor {name!r}: {dtype} {entry['shape']} needs {total_bits // 8:,} bytes, "
                    f"offsets give {end - begin:,}"
                )
        spans.append((begin, end, name))
        names.append(name)
        dtype_list.append(dtype)
        shapes.append(tuple(entry["shape"]))
    spans.sort()
    position, previous = 0, None
    for begin, end, name in spans:
        if begin != position:
            if begin < position:
                raise HeaderProblem(f"tensors {previous!r} and {name!r} overlap")
            where = f"after {previous!r}" if previous is not None else "before the first tensor"
            raise HeaderProblem(f"data_offsets leave a gap of {begin - position:,} bytes {where} ({name!r})")
        position, previous = end, name
    if file_size is not None:
        data_size = file_size - 8 - len(raw)
        if position > data_size:
            raise HeaderProblem(
                f"tensor {previous!r} data_offsets run past the end of the file (to {position:,}; "
                f"the data section is {data_size:,} bytes)"
            )
        if position < data_size:
            raise HeaderProblem(
                f"{data_size - position:,} bytes after the last tensor's data (safetensors refuses them)"
            )
    return ParsedHeader(names, dtype_list, shapes, dict(metadata), unknown, 8 + len(raw))
