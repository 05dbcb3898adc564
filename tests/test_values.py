"""One rule for whether a recorded value changed (``hubdiff.values``), used by figures, release settings,
GGUF metadata and release claims alike."""

import pytest

from hubdiff.values import same_value


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (5, 5.0, True),  # a YAML 5 is a recorded 5.0
        (1e6, 1_000_000, True),
        (True, 1, False),  # a flag is no number
        (False, 0.0, False),
        ("5", 5, False),
        (None, 0, False),
        (2**60 + 1, float(2**60), False),  # exactly, as Python compares int and float: no rounding to float
        ({"a": 1, "b": [1, 2.0]}, {"b": [1.0, 2], "a": 1.0}, True),
        ({"a": 1}, {"a": 1, "b": None}, False),
        ([1, True], [1, 1], False),  # inside a list too
        ([1, 2], (1, 2), True),  # a YAML sequence read as a list, a recorded tuple
        ([1, 2], [1, 2, 3], False),
        ("bf16", "bf16", True),
    ],
)
def test_same_value(a, b, same):
    assert same_value(a, b) is same
    assert same_value(b, a) is same
