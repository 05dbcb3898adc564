"""A pytest plugin that writes what each test cost: its node id, the CPU seconds of its own process and
of the subprocesses it waited for, and its wall seconds, one tab-separated line per test.

    PYTHONPATH=scripts pytest -n auto -p pytest_costs            # writes test-costs.tsv (PYTEST_COSTS=...)
    python scripts/slow_tests.py test-costs.tsv > tests/slow_tests.txt

CPU rather than wall time chooses the quick loop's tests: on 2 cores the suite is CPU-bound, and a
test's wall time there says as much about its neighbours as about itself. Each xdist worker appends
to the same file (one ``write`` of one line each).
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Iterator

import pytest

OUT = os.environ.get("PYTEST_COSTS", "test-costs.tsv")


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    own, children = _cpu()
    start = time.monotonic()
    yield
    own_after, children_after = _cpu()
    line = f"{item.nodeid}\t{own_after - own:.2f}\t{children_after - children:.2f}\t{time.monotonic() - start:.2f}\n"
    with open(OUT, "a", encoding="utf-8") as out:
        out.write(line)
