import random

import pytest

from hubdiff.patterns import compress, expand, format_index_set, parse_index_set, split_name


@pytest.mark.parametrize(
    ("values", "text"),
    [
        ([0, 1, 2, *range(6, 75, 4)], "0-2,6-74/4"),
        ([5], "5"),
        ([3, 4], "3-4"),
        ([1, 7], "1,7"),
        (range(0, 256), "0-255"),
        ([0, 2, 4, 5, 6], "0-4/2,5-6"),
    ],
)
def test_index_set_notation(values, text):
    assert format_index_set(values) == text
    assert parse_index_set(text) == tuple(sorted(set(values)))


@pytest.mark.parametrize("bad", ["", "a", "3-1", "0-5/2", "1,,2", "-1"])
def test_index_set_rejects_malformed(bad):
    with pytest.raises(ValueError):
        parse_index_set(bad)


def test_only_plain_numeric_segments_are_indices():
    assert split_name("model.layers.3.mlp.fc1.weight") == (("model.layers.", ".mlp.fc1.weight"), (3,))
    assert split_name("a.01.b") == (("a.01.b",), ())  # a leading zero would not round-trip
    assert split_name("3.x.4") == (("", ".x.", ""), (3, 4))


def test_expert_grid_is_one_pattern_and_shape_change_splits():
    names = [
        (f"model.layers.{layer}.mlp.experts.{e}.down_proj.weight", "BF16", (6144, 2048))
        for layer in range(3, 79)
        for e in range(256)
    ]
    names[-1] = (names[-1][0], "BF16", (6144, 1024))  # one expert of layer 78 differs
    patterns = compress(names)
    rendered = {(p.name, p.shape, p.count) for p in patterns}
    assert ("model.layers.{3-77}.mlp.experts.{0-255}.down_proj.weight", (6144, 2048), 75 * 256) in rendered
    assert ("model.layers.78.mlp.experts.{0-254}.down_proj.weight", (6144, 2048), 255) in rendered
    assert ("model.layers.78.mlp.experts.255.down_proj.weight", (6144, 1024), 1) in rendered
    assert sum(p.count for p in patterns) == len(names)


def test_random_names_round_trip_losslessly():
    rng = random.Random(20261129)
    words = ["model", "layers", "mlp", "experts", "w1", "fc1", "0x", "weight", "", "a.b", "é", "{x}"]
    names = set()
    for _ in range(5000):
        parts = []
        for _ in range(rng.randint(1, 6)):
            parts.append(str(rng.randint(0, 40)) if rng.random() < 0.4 else rng.choice(words))
        names.add(".".join(parts))
    triples = [(n, rng.choice(["BF16", "F32"]), (rng.randint(1, 3),)) for n in sorted(names)]
    patterns = compress(triples)
    assert sorted(expand(patterns)) == sorted(names)
    # every pattern keeps its dtype and shape
    lookup = {n: (d, s) for n, d, s in triples}
    for p in patterns:
        for name in p.names():
            assert lookup[name] == (p.dtype, p.shape)
    assert compress(reversed(triples)) == patterns  # deterministic whatever the input order
