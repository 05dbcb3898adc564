"""Property-based fuzzing of safetensors headers and configs (hypothesis, derandomized: CI reproduces it).

Two properties:

- hubdiff accepts a file exactly when ``safetensors.safe_open`` (the format's own library) does, but
  for the differences the README documents (an unknown but well-formed dtype name is recorded, not
  refused; a header-only skeleton in a local folder is read);
- through ``snapshot``, ``metrics`` and ``diff`` every file and config ends in exit 0 (1 for a diff
  that found changes) or 3 with one line on stderr, prints nothing invisible, within seconds and
  without runaway memory.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import resource
import struct
import tempfile
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from safetensors import safe_open

from hubdiff.cli import main
from hubdiff.dtypes import BITS
from hubdiff.visible import printable

from ._fuzzdata import header_files, hostile_configs

HEADER_CASES = 300
PIPELINE_CASES = 60
CONFIG_CASES = 80
FUZZ = dict(
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
BASE_CONFIG = {"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10}


def safetensors_accepts(path: Path) -> tuple[bool, str]:
    try:
        with safe_open(str(path), "np") as f:
            f.keys()
        return True, ""
    except Exception as exc:  # the oracle's verdict, whatever its error type
        return False, str(exc)


def hubdiff_reads(path: Path) -> tuple[bool, str]:
    """hubdiff's verdict on a file as the Hub serves it: the file size known, no skeleton exception."""
    from hubdiff._source.header import HeaderProblem, header_length, parse_header

    data = path.read_bytes()
    try:
        length = header_length(data[:8], len(data))
        parse_header(data[8 : 8 + length], "model.safetensors", len(data))
        return True, ""
    except HeaderProblem as exc:
        return False, str(exc)


def documented_difference(path: Path, oracle_error: str) -> bool:
    """An unknown dtype of the safetensors name form, which hubdiff records instead of refusing."""
    match = re.search(r"unknown variant `([^`]*)`", oracle_error)
    return bool(match and re.fullmatch(r"[A-Z][A-Z0-9_]*", match.group(1)) and match.group(1) not in BITS)


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(*argv: str) -> tuple[int, str, str, float]:
    out, err = io.StringIO(), io.StringIO()
    start = time.monotonic()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue(), time.monotonic() - start


def assert_one_clean_outcome(argv: tuple[str, ...], allowed: tuple[int, ...]) -> str:
    """Exit code allowed, under 5 s, the process's peak memory up by less than 500 MB, one line if 3."""
    peak = _peak_mb()
    code, out, err, took = run(*argv)
    assert code in allowed, (argv, code, err)
    assert took < 5, (argv, took)
    assert _peak_mb() - peak < 500, (argv, _peak_mb() - peak)
    if code == 3:
        assert out == "" and err.count("\n") == 1 and err.startswith("hubdiff: "), (argv, err)
    for line in (out + err).splitlines():
        assert printable(line) == line, (argv, line)
    return err


def _folder(root: Path, config: bytes, shard: bytes | None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_bytes(config)
    if shard is not None:
        (root / "model.safetensors").write_bytes(shard)
    return root


def _good_folder(root: Path) -> Path:
    header = json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
    return _folder(root, json.dumps(BASE_CONFIG).encode(), struct.pack("<Q", len(header)) + header + bytes(8))


@settings(max_examples=HEADER_CASES, **FUZZ)
@given(header_files())
def test_hubdiff_agrees_with_the_safetensors_library(blob):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "model.safetensors")
        path.write_bytes(blob)
        ours, why = hubdiff_reads(path)
        theirs, oracle_error = safetensors_accepts(path)
    if ours and not theirs:
        assert documented_difference(path, oracle_error), (
            f"hubdiff accepts what safetensors refuses: {oracle_error}"
        )
    else:
        assert ours == theirs, f"hubdiff refuses what safetensors accepts: {why}"


@settings(max_examples=PIPELINE_CASES, **FUZZ)
@given(header_files())
def test_any_header_through_snapshot_metrics_and_diff(blob):
    with tempfile.TemporaryDirectory() as tmp:
        folder = _folder(Path(tmp, "x"), json.dumps(BASE_CONFIG).encode(), blob)
        good = _good_folder(Path(tmp, "good"))
        for argv, allowed in (
            (("snapshot", str(folder)), (0, 3)),
            (("metrics", str(folder)), (0, 3)),
            (("diff", str(good), str(folder), "--format", "text"), (0, 1, 3)),
        ):
            err = assert_one_clean_outcome(argv, allowed)
            assert "internal error" not in err, (argv, err)


@settings(max_examples=CONFIG_CASES, **FUZZ)
@given(hostile_configs())
def test_any_config_through_metrics_and_diff(config):
    with tempfile.TemporaryDirectory() as tmp:
        folder = _folder(Path(tmp, "x"), config, None)
        good = _good_folder(Path(tmp, "good"))
        assert_one_clean_outcome(("metrics", str(folder), "--config-only"), (0, 3))
        assert_one_clean_outcome(("diff", str(good), str(folder)), (0, 1, 3))


def test_readme_states_the_figures():
    readme = (Path(__file__).parents[1] / "docs" / "reliability.md").read_text()
    total = HEADER_CASES + PIPELINE_CASES + CONFIG_CASES
    assert f"{HEADER_CASES} + {PIPELINE_CASES} + {CONFIG_CASES} = {total} fuzz cases" in readme
