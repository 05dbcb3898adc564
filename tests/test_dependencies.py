"""hubdiff's declared dependencies are its true ones: deptry over src/ (pyproject's [tool.deptry]: the test
extra is the development environment) finds every import declared and every dependency imported."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import tomllib

ROOT = Path(__file__).parent.parent

# deptry clean: every import of src/ declared, every declared dependency imported (deepdiff by the
# config comparison, _compare/config_diff.py)
KNOWN: set[tuple[str, str]] = set()


def test_deptry_finds_every_import_declared_and_every_dependency_used(tmp_path):
    exe = shutil.which("deptry")
    assert exe, "deptry is installed by the test extra"
    out = tmp_path / "deptry.json"
    subprocess.run(
        [exe, "src", "--json-output", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    found = {(issue["error"]["code"], issue["module"]) for issue in json.loads(out.read_text())}
    assert found == KNOWN


def test_torch_is_the_witness_extra_and_ruamel_is_gone():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = [d.split(">")[0].split("=")[0].split("<")[0].strip() for d in project["dependencies"]]
    assert "ruamel.yaml" not in names and "torch" not in names and "httpx2" in names
    assert [d.split(">")[0] for d in project["optional-dependencies"]["witness"]] == ["torch"]
    pins = (ROOT / ".ci" / "constraints.txt").read_text().splitlines()
    assert not [p for p in pins if p.startswith("ruamel")]
    assert {p.split("==")[0] for p in pins} >= {"torch", "httpx2", "deptry"}
