"""``patterns.Grouping`` (one shard at a time, as a cold read feeds it) equals ``group`` of all names."""

from __future__ import annotations

from hubdiff.patterns import Grouping, ShardGroups, group

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
    return grouping.add(
        ShardGroups.of([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]), number
    )


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


def test_shard_groups_tell_the_names_in_the_header_order():
    rows = SHARDS[2] + SHARDS[0]
    grouped = ShardGroups.of([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])
    assert [name for name, _, _ in grouped.names()] == [r[0] for r in rows]


def test_shard_groups_equal_group_whatever_the_index_widths():
    cases = [
        [(f"layers.{i}.experts.{e}.w", "BF16", (2,)) for i in range(3) for e in range(4)],  # one group
        [(f"layers.{i}.{w}", "F32" if w == "a" else "U8", (i % 2,)) for i in range(5) for w in "ab"],
        [("embed", "F32", (3,)), ("head", "F32", (3,))],  # no index at all
        [("a.01.b", "I8", ()), ("a.1.b", "I8", ()), ("a.-1.b", "I8", ()), ("0.1.2", "I8", ())],
    ]
    for rows in cases:
        names, dtypes, shapes = [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]
        grouped = ShardGroups.of(names, dtypes, shapes)
        expected = group(names, dtypes, shapes)
        assert {k: dict.fromkeys(v, 0) for k, v in grouped.groups.items()} == dict(expected)
        assert [name for name, _, _ in grouped.names()] == names
