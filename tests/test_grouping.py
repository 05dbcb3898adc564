"""``patterns.Grouping`` (one shard at a time, as a cold read feeds it) equals ``group`` of all names."""

from __future__ import annotations

from hubdiff.patterns import Grouping, group

SHARDS = [
    [("model.layers.0.mlp.experts.3.w", "BF16", (2, 4)), ("model.embed", "BF16", (9, 4))],
    [("model.layers.0.mlp.experts.4.w", "BF16", (2, 4)), ("model.layers.1.mlp.experts.3.w", "F32", (2, 4))],
    [
        ("model.layers.10.x", "U8", ()),
        ("odd\nname.1", "I8", (1,)),
        ("model.layers.1.mlp.experts.4.w", "BF16", (2, 4)),
    ],
]


def _add(grouping: Grouping, number: int, rows: list[tuple[str, str, tuple[int, ...]]]):
    return grouping.add([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], number)


def test_shard_by_shard_equals_all_at_once():
    grouping = Grouping()
    for number, rows in enumerate(SHARDS):
        assert _add(grouping, number, rows) is None
    rows = [r for shard in SHARDS for r in shard]
    numbers = [n for n, shard in enumerate(SHARDS) for _ in shard]
    expected = group([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], numbers)
    assert dict(grouping.groups) == dict(expected)


def test_a_name_in_two_shards_is_found_whatever_its_dtype_and_shape():
    for dtype, shape in (("BF16", (2, 4)), ("F32", (8,))):
        grouping = Grouping()
        assert _add(grouping, 0, SHARDS[0]) is None
        later = [
            ("model.new", "U8", ()),
            ("model.layers.0.mlp.experts.3.w", dtype, shape),
            ("model.embed", "U8", ()),
        ]
        assert _add(grouping, 1, later) == ("model.layers.0.mlp.experts.3.w", 0)
