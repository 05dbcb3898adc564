"""Write tests/slow_tests.txt, the tests the quick loop (``pytest -n auto -m "not slow"``) leaves out,
from what a full run cost (scripts/pytest_costs.py):

    PYTHONPATH=scripts pytest -n auto -p pytest_costs && python scripts/slow_tests.py test-costs.tsv > tests/slow_tests.txt
    PYTEST_COSTS=quick.tsv PYTHONPATH=scripts pytest -n auto -m "not slow" -p pytest_costs
    python scripts/slow_tests.py test-costs.tsv quick.tsv > tests/slow_tests.txt

A test function (every parameter together) is slow when it took CPU_S of CPU or more (its process's and
its subprocesses'), or WALL_S of waiting, in any of the runs given: a test that shares a fixture with
slow ones is cheap in the full run and pays for the fixture in the quick loop, hence the second run.
Each test module keeps its cheapest function in the loop, so a change anywhere meets some test there,
but for a module whose cheapest test costs WHOLE_MODULE_S or more (a season of workflow runs): it is
listed whole (tests/test_quick_loop.py holds these rules).
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

CPU_S = 1.5
WALL_S = 3.0
WHOLE_MODULE_S = 10.0

HEADER = f"""\
# The quick loop, `pytest -n auto -m "not slow"`: these tests are marked slow by tests/conftest.py.
# Written by scripts/slow_tests.py from a full run's costs (scripts/pytest_costs.py) on 2 cores: each
# took {CPU_S} s of CPU or more (its own and its subprocesses', every parameter together), or {WALL_S} s of
# wall time, in the full run or in the quick loop itself; every test module keeps its cheapest test out
# of the list unless that one took {WHOLE_MODULE_S} s or more (the module is then listed whole). The full
# suite is what CI runs.
"""


def slow_tests(runs: list[str]) -> list[str]:
    cpu: dict[str, float] = defaultdict(float)
    wall: dict[str, float] = defaultdict(float)
    for costs in runs:
        run_cpu: dict[str, float] = defaultdict(float)
        run_wall: dict[str, float] = defaultdict(float)
        for line in costs.splitlines():
            node, own, children, seconds = line.split("\t")
            function = node.split("[")[0]
            run_cpu[function] += float(own) + float(children)
            run_wall[function] += float(seconds)
        for function in run_cpu:
            cpu[function] = max(cpu[function], run_cpu[function])
            wall[function] = max(wall[function], run_wall[function])
    by_module: dict[str, list[str]] = defaultdict(list)
    for function in cpu:
        by_module[function.split("::")[0]].append(function)
    slow = []
    for module, functions in by_module.items():
        cheapest = min(functions, key=lambda f: (cpu[f], wall[f]))
        if cpu[cheapest] >= WHOLE_MODULE_S:
            slow.append(module)
            continue
        slow += [f for f in functions if f != cheapest and (cpu[f] >= CPU_S or wall[f] >= WALL_S)]
    return sorted(slow)


def main() -> None:
    sys.stdout.write(
        HEADER + "".join(f"{node}\n" for node in slow_tests([Path(p).read_text() for p in sys.argv[1:]]))
    )


if __name__ == "__main__":
    main()
