"""The GGUF header: metadata pairs and tensor infos, parsed from the bytes at the start of the file.

Layout (little-endian; ggml ``docs/gguf.md``, llama.cpp ``ggml/src/gguf.cpp``): ``GGUF``, u32 version,
u64 tensor count, u64 pair count; each pair a key (u64 length + UTF-8), a u32 value type and the
value (a string is u64 length + bytes, an array a u32 element type, a u64 count and the elements);
then per tensor its name, u32 dimension count, the dimensions (innermost first), u32 ggml type and
u64 offset from the start of the data section, which begins at the end of the tensor infos rounded up
to ``general.alignment`` (default 32).

A string array carries no total length, so the end of a header is found only by walking it: the
parser is resumable. ``GGUFParser.feed`` takes the next bytes of the file; ``parse`` goes on from where
it stopped and says, when the bytes run out, how far it got and how many more it expects
(``Incomplete``), so a reader asks for the next range from there, never again from 0. Parsing stops
inside a string array at an element, not at the start of the array: a tokenizer of 262,144 tokens is
walked once, whatever the ranges.

Everything here is hostile input, bounded as llama.cpp's own reader bounds it and by the file's size:
a length or count that cannot fit in what is left of the file is refused before anything is
allocated, as are duplicate keys or tensor names, unknown value or ggml types, more than 4
dimensions, a row that is not whole blocks, a misaligned or overlapping tensor and data past the end
of the file. Each refusal is a ``GGUFProblem`` (a ``HeaderProblem``: the caller names repo, revision
and file, exit 3).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

from .ggml_types import GGML_TYPES, GGMLType
from .header import HeaderProblem

MAGIC = b"GGUF"
DEFAULT_ALIGNMENT = 32
MAX_DIMS = 4  # GGML_MAX_DIMS
MAX_NAME = 64  # GGML_MAX_NAME: a tensor name is shorter
MAX_NESTING = 8  # arrays of arrays (gguf-py writes them; llama.cpp reads none)
# A header past this is refused, not read: the largest real ones (a 262k-token tokenizer) are ~15 MiB
MAX_HEADER_BYTES = 256 << 20
_I64 = (1 << 63) - 1

# value type -> (name, struct code, bytes) for the fixed-size ones
_FIXED: dict[int, tuple[str, str, int]] = {
    0: ("UINT8", "B", 1),
    1: ("INT8", "b", 1),
    2: ("UINT16", "H", 2),
    3: ("INT16", "h", 2),
    4: ("UINT32", "I", 4),
    5: ("INT32", "i", 4),
    6: ("FLOAT32", "f", 4),
    7: ("BOOL", "?", 1),
    10: ("UINT64", "Q", 8),
    11: ("INT64", "q", 8),
    12: ("FLOAT64", "d", 8),
}
STRING, ARRAY = 8, 9
TYPE_NAMES = {**{k: v[0] for k, v in _FIXED.items()}, STRING: "STRING", ARRAY: "ARRAY"}

_U32 = struct.Struct("<I").unpack_from
_U64 = struct.Struct("<Q").unpack_from
_HEAD = struct.Struct("<4sIQQ")


class GGUFProblem(HeaderProblem):
    """What is wrong with a GGUF header, in words; the caller adds repo, revision and file."""


class _Short(Exception):
    """The bytes ran out at ``at`` (a file offset), ``need`` more at least being wanted there."""

    def __init__(self, need: int) -> None:
        self.need = need


@dataclass(frozen=True)
class Incomplete:
    """Parsing stopped for want of bytes: it resumes at file offset ``resume_at`` (all bytes before it
    are used and need not be kept), and ``have`` bytes of the file were given. ``estimate`` is how many
    bytes past ``have`` the rest of the header is expected to take (from what was read so far), at
    least ``need``, the bytes the item it stopped in still needs for sure."""

    resume_at: int
    have: int
    need: int
    estimate: int


@dataclass(frozen=True)
class TensorInfo:
    name: str
    dims: tuple[int, ...]  # innermost first, as ggml stores them (the reverse of a torch shape)
    ggml_type: int
    offset: int  # from the start of the data section

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape as torch and safetensors write it (outermost first)."""
        return self.dims[::-1]

    @property
    def elements(self) -> int:
        n = 1
        for d in self.dims:
            n *= d
        return n

    @property
    def type(self) -> GGMLType:
        return GGML_TYPES[self.ggml_type]

    @property
    def nbytes(self) -> int:
        return self.type.nbytes(self.elements)


@dataclass(frozen=True)
class GGUFHeader:
    """A parsed header. ``metadata`` holds every pair's value (arrays as lists, nested arrays as lists
    of lists); ``value_types`` each key's type (``ARRAY[STRING]`` for an array). ``header_bytes`` is where
    the tensor infos end, ``data_offset`` where the data section starts."""

    version: int
    metadata: dict[str, Any]
    value_types: dict[str, str]
    tensors: tuple[TensorInfo, ...]
    alignment: int
    header_bytes: int
    data_offset: int
    file_size: int | None

    @property
    def tensor_bytes(self) -> int:
        return sum(t.nbytes for t in self.tensors)

    @property
    def data_bytes(self) -> int | None:
        """The data section's size: the file's size less the header and its padding (None if unknown)."""
        return None if self.file_size is None else self.file_size - self.data_offset


class StringArray(Sequence[str]):
    """An array of strings as stored: its bytes, decoded (UTF-8, errors replaced) only when read."""

    __slots__ = ("_count", "_offsets", "_raw")

    def __init__(self, raw: bytes, count: int) -> None:
        self._raw = raw
        self._count = count
        self._offsets: list[int] | None = None

    def __len__(self) -> int:
        return self._count

    def _spans(self) -> list[int]:
        if self._offsets is None:
            raw, unpack, p, out = self._raw, _U64, 0, []
            for _ in range(self._count):
                out.append(p)
                p += 8 + unpack(raw, p)[0]
            out.append(p)
            self._offsets = out
        return self._offsets

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._count))]
        if not -self._count <= i < self._count:
            raise IndexError(i)
        at = self._spans()[i % self._count]
        return self._raw[at + 8 : at + 8 + _U64(self._raw, at)[0]].decode("utf-8", "replace")

    def __iter__(self) -> Iterator[str]:
        raw, unpack, p = self._raw, _U64, 0
        for _ in range(self._count):
            q = p + 8 + unpack(raw, p)[0]
            yield raw[p + 8 : q].decode("utf-8", "replace")
            p = q

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StringArray):
            return self._count == other._count and self._raw == other._raw
        if isinstance(other, (list, tuple)):
            return len(other) == self._count and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"StringArray({self._count} strings, {len(self._raw):,} bytes)"


RECENT = 1024  # strings the estimate of an array's rest averages over: its last ones


def _recent(buf: bytes, first: int, end: int, walked: int) -> tuple[int, int]:
    """(bytes, strings) of the last ``RECENT`` strings walked in ``buf[first:end]``: tokenizers store
    longer strings further on (a BPE vocabulary and its merges by rank), so the last ones predict the
    rest better than the mean. Found by walking the stretch again, lengths only, past its head."""
    if walked <= RECENT:
        return end - first, walked
    p, skip = first, walked - RECENT
    for _ in range(skip):
        p += 8 + _U64(buf, p)[0]
    return end - p, RECENT


class _Walk:
    """A string array being walked: how many strings it has, how many are walked, their bytes."""

    __slots__ = ("count", "done", "pieces")

    def __init__(self, count: int) -> None:
        self.count = count
        self.done = 0
        self.pieces: list[bytes] = []

    def array(self) -> StringArray:
        return StringArray(b"".join(self.pieces), self.count)


def _pad(n: int, alignment: int) -> int:
    return (n + alignment - 1) // alignment * alignment


class GGUFParser:
    """Parses one header from bytes fed in order; resumable (see the module's docstring).

    ``file_size`` bounds every length and count (None: only ``MAX_HEADER_BYTES`` does, for a file of
    unknown size). The parser keeps only the bytes it has not used yet.
    """

    def __init__(self, file_size: int | None = None) -> None:
        self.file_size = file_size
        self._buf = b""
        self._base = 0  # file offset of self._buf[0]
        self._pos = 0  # file offset of the next byte to parse
        self._version = 0
        self._n_tensors = 0
        self._n_kv = 0
        self._metadata: dict[str, Any] = {}
        self._types: dict[str, str] = {}
        self._tensors: list[TensorInfo] = []
        self._names: set[str] = set()
        self._key: str | None = None  # the key of a pair whose value is not parsed yet
        self._array: _Walk | None = None  # a string array being walked
        self._started = False
        self._done: GGUFHeader | None = None
        # for the estimate of what is left: bytes and strings of the last stretch walked
        self._recent = (0, 0)  # (bytes, items) of the last stretch of the current string array

    @property
    def have(self) -> int:
        """Bytes of the file fed so far (the next feed starts here)."""
        return self._base + len(self._buf)

    def feed(self, chunk: bytes) -> None:
        """The next bytes of the file, from offset ``have``. Bytes parsing has used are let go."""
        keep = self._pos - self._base
        self._buf = self._buf[keep:] + chunk if keep else self._buf + chunk
        self._base = self._pos

    # -- reading primitives; each raises _Short when the buffer ends -------------------------------
    def _limit(self) -> int:
        """The largest file offset a header's length or count may reach: the file's end, or the header
        limit if that comes first (a 40 GB file still cannot hold a 10-billion-token tokenizer)."""
        return MAX_HEADER_BYTES if self.file_size is None else min(self.file_size, MAX_HEADER_BYTES)

    def _take(self, n: int) -> int:
        """Reserve n bytes at the cursor: their index in the buffer (the cursor moves past them)."""
        at = self._pos
        if at + n > self._limit():
            raise GGUFProblem(self._past_end(at, n))
        i = at - self._base
        if i + n > len(self._buf):
            raise _Short(i + n - len(self._buf))
        self._pos = at + n
        return i

    def _past_end(self, at: int, n: int) -> str:
        if self.file_size is not None and self.file_size <= MAX_HEADER_BYTES:
            return f"at byte {at:,}, {n:,} bytes are needed but the file has {self.file_size:,}"
        return f"at byte {at:,}, {n:,} bytes are needed: past the {MAX_HEADER_BYTES:,}-byte header limit"

    def _u32(self) -> int:
        return _U32(self._buf, self._take(4))[0]

    def _u64(self) -> int:
        return _U64(self._buf, self._take(8))[0]

    def _string(self, what: str) -> str:
        start = self._pos
        n = self._u64()
        if start + 8 + n > self._limit():
            self._pos = start
            raise GGUFProblem(
                f"{what}: a string of {n:,} bytes at byte {start:,} runs past the end of "
                + ("the file" if self._limit() == self.file_size else "the header limit")
            )
        try:
            i = self._take(n)
        except _Short:
            self._pos = start
            raise
        return self._buf[i : i + n].decode("utf-8", "replace")

    def _value(self, vtype: int, what: str, depth: int) -> Any:
        if vtype in _FIXED:
            _, code, size = _FIXED[vtype]
            return struct.unpack_from("<" + code, self._buf, self._take(size))[0]
        if vtype == STRING:
            return self._string(what)
        if vtype == ARRAY:
            start = self._pos
            try:
                etype, count = self._array_head(what, depth)
                return self._elements(etype, count, what, depth)
            except _Short:
                self._pos = start
                raise
        raise GGUFProblem(f"{what}: unknown value type {vtype}")

    def _array_head(self, what: str, depth: int) -> tuple[int, int]:
        if depth >= MAX_NESTING:
            raise GGUFProblem(f"{what}: arrays nested more than {MAX_NESTING} deep")
        etype = self._u32()
        count = self._u64()
        if etype not in _FIXED and etype not in (STRING, ARRAY):
            raise GGUFProblem(f"{what}: array of unknown value type {etype}")
        least = _FIXED[etype][2] if etype in _FIXED else (8 if etype == STRING else 12)
        if self._pos + count * least > self._limit():
            raise GGUFProblem(
                f"{what}: an array of {count:,} {TYPE_NAMES[etype]} at byte {self._pos:,} cannot fit in "
                + (f"the file ({self.file_size:,} bytes)" if self.file_size is not None else "a header")
            )
        return etype, count

    def _elements(self, etype: int, count: int, what: str, depth: int) -> Sequence[Any]:
        if etype in _FIXED:
            _, code, size = _FIXED[etype]
            i = self._take(count * size)
            return list(struct.unpack_from(f"<{count}{code}", self._buf, i))
        if etype == STRING:
            walk = _Walk(count)
            self._walk(walk, what)
            return walk.array()
        return [self._value(ARRAY, what, depth + 1) for _ in range(count)]

    def _walk(self, walk: _Walk, what: str) -> None:
        """Walk the array's next strings until all ``walk.count`` are walked, adding their bytes to
        ``walk.pieces``. The strings are not decoded here (that is ~4x the walk, and a 262k-token
        tokenizer with its merges is 777k strings): ``StringArray`` decodes them when asked. On a short
        buffer the cursor is left at the first string not walked, and ``walk`` says how far it got."""
        buf, base, limit = self._buf, self._base, self._limit()
        end = len(buf)
        first = p = self._pos - base
        unpack = _U64
        todo = walk.count - walk.done
        walked, short = todo, 0
        for k in range(todo):  # the hot loop: one unpack and one comparison a string
            try:
                q = p + 8 + unpack(buf, p)[0]
            except struct.error:  # fewer than 8 bytes left
                walked, short = k, p + 8 - end
                break
            if q > end:
                walked, short = k, q - end
                break
            p = q
        self._pos = base + p
        walk.done += walked
        if p > first:
            walk.pieces.append(buf[first:p])
        if short and p > first:  # only an unfinished array needs an estimate of its rest
            self._recent = _recent(buf, first, p, walked)
        if short:
            if base + p + short > limit:
                size = f"a string of {_U64(buf, p)[0]:,} bytes" if p + 8 <= end else "a string's length"
                raise GGUFProblem(
                    f"{what}: element {walk.done:,}, {size} at byte {base + p:,}, runs past the end of "
                    + ("the file" if limit == self.file_size else "the header limit")
                )
            raise _Short(short)

    # -- the header, item by item ----------------------------------------------------------------
    def parse(self) -> GGUFHeader | Incomplete:
        """The header, or how far parsing got (feed more bytes, then call again)."""
        if self._done is not None:
            return self._done
        try:
            self._run()
        except _Short as short:
            return self._incomplete(short.need)
        except struct.error as exc:  # cannot happen after _take; a bug if it does, said as one
            raise GGUFProblem(f"malformed header ({exc})") from None
        assert self._done is not None
        return self._done

    def _run(self) -> None:
        if not self._started:
            self._head()
            self._started = True
        while len(self._metadata) < self._n_kv:
            self._pair()
        while len(self._tensors) < self._n_tensors:
            self._tensor()
        self._done = self._finish()

    def _head(self) -> None:
        magic, version, n_tensors, n_kv = _HEAD.unpack_from(self._buf, self._take(_HEAD.size))
        if magic != MAGIC:
            self._pos = 0
            raise GGUFProblem(f"not a GGUF file (starts with {magic!r})")
        if version in (1 << 24, 2 << 24, 3 << 24):
            raise GGUFProblem("big-endian GGUF: only little-endian files are read")
        if version not in (2, 3):
            raise GGUFProblem(f"GGUF version {version} (versions 2 and 3 are read)")
        room = self._limit() - self._pos
        if n_kv > room // 12:  # a pair is at least a key's length, a type and a one-byte value
            raise GGUFProblem(f"header claims {n_kv:,} metadata pairs, more than the file can hold")
        if n_tensors > room // 24:  # a tensor info is at least 8 + 1 + 4 + 8 + 4 + 8 bytes... and a name
            raise GGUFProblem(f"header claims {n_tensors:,} tensors, more than the file can hold")
        self._version, self._n_tensors, self._n_kv = version, n_tensors, n_kv

    def _pair(self) -> None:
        if self._array is not None:  # a string array interrupted inside: go on with it
            self._walk(self._array, repr(self._key))
            self._store(self._key, self._array.array(), "ARRAY[STRING]")  # type: ignore[arg-type]
            return
        start = self._pos
        try:
            key = self._string(f"metadata pair {len(self._metadata)}'s key")
            if key in self._metadata:
                raise GGUFProblem(f"metadata key {key!r} is given twice")
            vtype = self._u32()
            if vtype == ARRAY:
                etype, count = self._array_head(repr(key), 0)
                if etype == STRING:
                    self._key, self._array = key, _Walk(count)
                    self._pair()
                    return
                value = self._elements(etype, count, repr(key), 0)
                self._store(key, value, f"ARRAY[{TYPE_NAMES[etype]}]")
            else:
                value = self._value(vtype, repr(key), 0)
                self._store(key, value, TYPE_NAMES.get(vtype, str(vtype)))
        except _Short:
            if self._array is None:
                self._pos = start  # the pair is read again whole when the bytes come
            raise

    def _store(self, key: str, value: Any, vtype: str) -> None:
        self._metadata[key] = value
        self._types[key] = vtype
        self._key, self._array = None, None

    def _tensor(self) -> None:
        start = self._pos
        number = len(self._tensors)
        try:
            name = self._string(f"tensor {number}'s name")
            n_dims = self._u32()
            if n_dims > MAX_DIMS:
                raise GGUFProblem(f"tensor {name!r} has {n_dims} dimensions (at most {MAX_DIMS})")
            dims = struct.unpack_from(f"<{n_dims}Q", self._buf, self._take(8 * n_dims))
            ggml_type = self._u32()
            offset = self._u64()
        except _Short:
            self._pos = start
            raise
        if len(name.encode()) >= MAX_NAME:
            raise GGUFProblem(
                f"tensor {name[:80]!r}: name of {len(name.encode())} bytes (at most {MAX_NAME - 1})"
            )
        if name in self._names:
            raise GGUFProblem(f"tensor {name!r} is given twice")
        elements = 1
        for d in dims:
            elements *= d
            if d > _I64 or elements > _I64:
                raise GGUFProblem(f"tensor {name!r}: dimensions {list(dims)} overflow 63 bits")
        kind = GGML_TYPES.get(ggml_type)
        if kind is None:
            raise GGUFProblem(f"tensor {name!r} has unknown ggml type {ggml_type}")
        if dims and dims[0] % kind.block_size:
            raise GGUFProblem(
                f"tensor {name!r}: a row of {dims[0]:,} is not whole {kind.name} blocks of {kind.block_size}"
            )
        self._names.add(name)
        self._tensors.append(TensorInfo(name, tuple(dims), ggml_type, offset))

    def _finish(self) -> GGUFHeader:
        alignment = self._metadata.get("general.alignment", DEFAULT_ALIGNMENT)
        if (
            self._types.get("general.alignment", "UINT32") != "UINT32"
            or alignment <= 0
            or alignment & (alignment - 1)
        ):
            raise GGUFProblem(f"general.alignment {alignment!r} is not a power of two (a UINT32)")
        header_bytes = self._pos
        data_offset = _pad(header_bytes, alignment)
        data_size = None if self.file_size is None else self.file_size - data_offset
        if data_size is not None and data_size < 0 and self._tensors:
            raise GGUFProblem(
                f"the data section would start at byte {data_offset:,}, past the end of the file"
            )
        spans = sorted((t.offset, t.offset + t.nbytes, t.name) for t in self._tensors)
        end, previous = 0, None
        for begin, stop, name in spans:
            if begin % alignment:
                raise GGUFProblem(
                    f"tensor {name!r}: offset {begin:,} is not a multiple of the alignment {alignment}"
                )
            if begin < end:
                raise GGUFProblem(f"tensors {previous!r} and {name!r} overlap")
            end, previous = stop, name
        # a header-only file (no data section at all) describes a layout without the weights
        if data_size is not None and data_size > 0 and end > data_size:
            raise GGUFProblem(
                f"tensor {previous!r} runs past the end of the file (to byte {data_offset + end:,}; "
                f"the file has {self.file_size:,})"
            )
        return GGUFHeader(
            self._version,
            self._metadata,
            self._types,
            tuple(self._tensors),
            alignment,
            header_bytes,
            data_offset,
            self.file_size,
        )

    # -- how much is left ----------------------------------------------------------------------
    def _incomplete(self, need: int) -> Incomplete:
        return Incomplete(self._pos, self.have, need, max(need, self._estimate()))

    def _estimate(self) -> int:
        """Bytes past ``have`` the rest of the header should take, from what was seen: the rest of an
        interrupted string array at its recent average a string (tokenizers store longer strings
        further on), pairs not read yet at the average of those read, and tensor infos at a typical
        size (``TENSOR_INFO_GUESS``). Only an estimate: the reader's margin and a further range make
        up for it."""
        left = -(self.have - self._pos)  # bytes fed but not yet used count against what is left
        if self._array is not None:
            recent_bytes, recent_items = self._recent
            per = recent_bytes / recent_items if recent_items else 16
            left += int((self._array.count - self._array.done) * per)
        pairs_done = len(self._metadata)
        pairs_left = self._n_kv - pairs_done - (self._array is not None)
        if pairs_left > 0:
            used = max(self._pos - _HEAD.size, 0)
            per_pair = used / max(pairs_done + (self._array is not None), 1)
            left += int(pairs_left * min(per_pair, 64 << 10))
        left += (self._n_tensors - len(self._tensors)) * TENSOR_INFO_GUESS
        return max(left, 0)


# A tensor info: an 8-byte length, a name (``blk.12.ffn_down_exps.weight``, ~24 bytes), 4 + 2 x 8 dims,
# type and offset: ~68 bytes; written generously, since tensor infos close the header
TENSOR_INFO_GUESS = 72


def parse_gguf(data: bytes, file_size: int | None = None) -> GGUFHeader:
    """The header of a file whose first bytes are ``data``; GGUFProblem if they do not hold it whole."""
    parser = GGUFParser(file_size if file_size is not None else None)
    parser.feed(data)
    result = parser.parse()
    if isinstance(result, Incomplete):
        raise GGUFProblem(
            f"file ends inside its GGUF header (at byte {result.have:,}"
            + (f" of a {file_size:,}-byte file)" if file_size is not None else ")")
        )
    return result
