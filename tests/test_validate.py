"""``hubdiff validate``: baselines checked with no network, every problem one ``file:line`` line."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from hubdiff.cli import main

SHIPPED = Path(__file__).parent.parent / "baselines" / "glm-5.yaml"


def copy_shipped(tmp_path: Path, name: str = "glm-5.yaml") -> Path:
    (tmp_path / "b").mkdir(exist_ok=True)
    return Path(shutil.copy(SHIPPED, tmp_path / "b" / name))


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_the_shipped_baselines_are_valid_and_nothing_asks_the_network():
    code = (
        "import sys; from hubdiff.cli import main; rc = main(['validate']);"
        "assert not {'huggingface_hub', 'httpx', 'transformers'} & set(sys.modules), sorted(sys.modules);"
        "sys.exit(rc)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=SHIPPED.parent.parent, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "1 baseline file(s), 32 claim(s): valid\n" and done.stderr == ""


def test_a_claim_its_own_figures_contradict_is_named_by_file_line(tmp_path, capsys):
    path = copy_shipped(tmp_path)
    path.write_text(
        path.read_text().replace("      kv_bytes_per_token: 6.0 KB\n", "      kv_bytes_per_token: 7.0 KB\n")
    )
    assert main(["validate", str(path)]) == 1
    out, err = capsys.readouterr()
    line = line_of(path, "kv_bytes_per_token: 7.0 KB")
    assert err.startswith(f"{path}:{line}: zai-org/GLM-5.3-Flash: kv_bytes_per_token: stated 7.0 KB, ")
    assert err.count("\n") == 1 and out == "1 baseline file(s), 32 claim(s): 1 problem(s)\n"


def test_schema_problems_in_every_file_are_listed_and_exit_2(tmp_path, capsys):
    good = copy_shipped(tmp_path, "a.yaml")
    bad_unit = copy_shipped(tmp_path, "b.yaml")
    bad_unit.write_text(
        bad_unit.read_text()
        .replace("family: glm-5\n", "family: glm-5b\n")
        .replace("kv_bytes_at_context: 6.3 GB", "kv_bytes_at_context: 6.3 parsecs")
    )
    unknown = tmp_path / "b" / "c.yaml"
    unknown.write_text("family: c\nrepos:\n  org/m:\n    sah: 0123\n")
    twin = copy_shipped(tmp_path, "d.yaml")  # the same family as a.yaml
    assert main(["validate", "--baseline-dir", str(tmp_path / "b")]) == 2
    out, err = capsys.readouterr()
    lines = err.splitlines()
    # claims are counted in the files that could be read: a.yaml and d.yaml, 32 each
    assert len(lines) == 3 and out == "4 baseline file(s), 64 claim(s): 3 problem(s)\n"
    assert lines[0].startswith(f"{bad_unit}:{line_of(bad_unit, 'parsecs')}: repos.zai-org/GLM-5.3-Flash")
    assert lines[1] == f"{unknown}:4: repos.org/m.sah: unknown key" + lines[1].split("unknown key")[1]
    assert lines[2] == f"{twin}:1: family: glm-5 is also the family of {good}:1"


def test_no_baselines_is_a_usage_error(tmp_path, capsys):
    assert main(["validate", "--baseline-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"hubdiff: no baselines given and none in {tmp_path}/\n"
