"""The fast readers give exactly what the checked ones give, or decline.

Headers in the form safetensors writes are read by string splits (``header._canonical``), everything
else by the standard library's reader with its checks (``parse_strict``); JSON documents are read by
orjson where that is certainly the same (``jsonin._fast``). A fast reader may decline anything, but
what it accepts must be read the same way by the checked reader.
"""

from __future__ import annotations

import contextlib
import json
import struct

import pytest
from hypothesis import given, settings

from hubdiff._source.header import HeaderProblem, _canonical, parse_header, parse_strict
from hubdiff._source.jsonin import JSONProblem, _fast, load_json
from hubdiff.testing.specs import safetensors_head

from ._fuzzdata import header_files, hostile_configs
from .test_fuzz import FUZZ


def _split(blob: bytes) -> tuple[bytes, int]:
    (length,) = struct.unpack("<Q", blob[:8])
    return blob[8 : 8 + length], len(blob)


def _agree(raw: bytes, size: int | None) -> bool:
    """Whether the fast reader took ``raw`` (and, if so, it agreed with the strict one)."""
    fast = _canonical(raw, size)
    if fast is None:
        return False
    assert fast == parse_strict(raw, "model.safetensors", size)
    return True


@settings(max_examples=600, **FUZZ)
@given(header_files())
def test_fast_reader_agrees_with_the_strict_one(blob):
    if len(blob) < 8:
        return
    raw, size = _split(blob)
    if len(raw) + 8 > size:
        return
    _agree(raw, size)
    _agree(raw, None)


def test_what_writers_write_is_read_fast():
    tensors = [(f"model.layers.{i}.mlp.experts.{e}.w", "BF16", (4, 2)) for i in range(3) for e in range(5)]
    tensors += [("lm_head.weight", "F32", (3,)), ("scalar", "F8_E4M3", ()), ("empty", "I64", (0, 7))]
    head, data = safetensors_head(tensors)
    raw, _ = _split(head)
    assert _agree(raw, len(head) + data)
    assert parse_header(raw, "x", len(head) + data).names == [t[0] for t in tensors]


def _header(entries: str, metadata: str = '"__metadata__":{"format":"pt"},') -> bytes:
    return ("{" + metadata + entries + "}").encode()


E = '"{name}":{{"dtype":"U8","shape":[{n}],"data_offsets":[{b},{e}]}}'


@pytest.mark.parametrize(
    "raw",
    [
        _header(E.format(name='a":{', n=1, b=0, e=1)),  # a name that looks like structure
        _header(E.format(name="a,b:{}[]", n=1, b=0, e=1)),
        _header(E.format(name="é.ü", n=1, b=0, e=1)),
        _header(E.format(name="a", n=1, b=0, e=1), '"__metadata__":{"k":"}"},'),
        _header(E.format(name="a", n=1, b=0, e=1), '"__metadata__":{"k":"v\\u00e9"},'),
        _header(E.format(name="a", n=1, b=0, e=1), '"__metadata__":{"k":1},'),
        _header(E.format(name="a", n=1, b=0, e=1), '"__metadata__":{"k":"a","k":"b"},'),
        _header(E.format(name="a", n=1, b=0, e=1) + "," + E.format(name="a", n=1, b=1, e=2)),
        _header(E.format(name="a", n=1, b=0, e=1) + ",," + E.format(name="b", n=1, b=1, e=2)),
        _header(E.format(name="a", n=1, b=0, e=1) + E.format(name="b", n=1, b=1, e=2)),
        _header(E.format(name="a", n="1,1", b=0, e=1) + "," + E.format(name="b", n="", b=1, e=2)),
        _header(E.format(name="a", n=1, b=0, e=1) + "," + E.format(name="b", n=1, b=2, e=3)),
        _header(E.format(name="a", n=1, b=1, e=2) + "," + E.format(name="b", n=1, b=0, e=1)),
        _header(E.format(name="a", n=1, b=0, e=1) + "," + E.format(name="b", n=1, b=0, e=1)),
        _header(E.format(name="a", n="01", b=0, e=1)),
        _header(E.format(name="a", n=1, b="-0", e=1)),
        _header(E.format(name="a", n=10**19, b=0, e=10**19)),
        _header(E.format(name="a", n="18446744073709551615", b=0, e=1)),
        _header(E.format(name="a", n=1, b=0, e=1), ""),
        _header(E.format(name="__metadata__", n=1, b=0, e=1), ""),
        _header(E.format(name="a", n=1, b=0, e=1)) + b"  \n",
        b" " + _header(E.format(name="a", n=1, b=0, e=1)),
        _header(E.format(name="a\x01", n=1, b=0, e=1)),
        _header(E.format(name="a\\u0062", n=1, b=0, e=1)),
        _header(E.format(name="a", n=1, b=0, e=1).replace('"U8"', '"X9"')),
        _header(E.format(name="a", n=1, b=0, e=1).replace('"U8"', '"u8"')),
        _header('"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":1}'),
        _header('"a":{"shape":[1],"dtype":"U8","data_offsets":[0,1]}'),
        _header('"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1,2]}'),
        _header(
            '"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}'
        ),
    ],
)
def test_near_canonical_headers_agree_or_are_declined(raw):
    """Whatever the fast reader takes, the strict one reads the same; for the rest, it says why."""
    for size in (None, 8 + len(raw) + 1, 8 + len(raw) + 2):
        if not _agree(raw, size):
            with contextlib.suppress(HeaderProblem):
                parse_strict(raw, "model.safetensors", size)


@pytest.mark.parametrize("name", ["a,b:{}[]", "é.ü", "x y", ""])
def test_names_with_structure_characters_are_read_fast(name):
    raw = _header(E.format(name=name, n=1, b=0, e=1))
    assert _agree(raw, 8 + len(raw) + 1)


def test_a_repeated_name_is_declined():
    raw = _header(E.format(name="a", n=1, b=0, e=1) + "," + E.format(name="a", n=1, b=1, e=2))
    assert _canonical(raw, None) is None


def test_json_the_standard_way_is_still_read():
    header = {"__metadata__": {"format": "pt"}, "w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}
    raw = json.dumps(header).encode()  # spaces after separators: not the canonical form
    assert _canonical(raw, None) is None
    assert parse_header(raw, "x", None).names == ["w"]


def _json_agrees(raw: bytes, max_depth: int | None) -> None:
    fast = _fast(raw, max_depth)
    if fast is None:
        return
    # the checked reader, not load_json's own fast path
    assert fast == load_json(raw, max_depth=max_depth, object_pairs_hook=dict)


@settings(max_examples=300, **FUZZ)
@given(hostile_configs())
def test_orjson_agrees_with_the_checked_reader_on_hostile_configs(raw):
    for max_depth in (None, 3, 32):
        _json_agrees(raw, max_depth)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"a":18446744073709551615,"b":-9223372036854775808}',
        b'{"a":18446744073709551616}',
        b'{"a":-9223372036854775809}',
        b'{"a":1e400}',
        b'{"a":1.0}',
        b'{"a":-0}',
        b'{"a":1,"a":2,"b":3}',
        b'{"a":"\\ud83d\\ude00","b":"\\u0000"}',
        b'{"a":"\\ud800"}',
        b'{"a":NaN}',
        b"\xef\xbb\xbf{}",
        b'{"a":"\xff"}',
        b"[[[[[1]]]]]",
        b'{"a":"x\x01"}',
        b'  {"a" : [ 1 , 2 ] }  ',
        b'{"weight_map":{"a.0.w":"m-1.safetensors","a.1.w":"m-2.safetensors"},"metadata":{"total_size":9}}',
    ],
)
def test_orjson_agrees_with_the_checked_reader(raw):
    for max_depth in (None, 2, 32):
        _json_agrees(raw, max_depth)
        try:
            expected = load_json(raw, max_depth=max_depth, object_pairs_hook=dict)
        except JSONProblem:
            with pytest.raises(JSONProblem):
                load_json(raw, max_depth=max_depth)
        else:
            assert load_json(raw, max_depth=max_depth) == expected
