"""A newcomer's first hour, each case tried as they would, through the CLI (``python -m hubdiff``): a
mistyped folder, a folder of baselines, the demo's paste lines run from a clone, a Hub that accepts and
never answers, a packed KV dtype, a mistyped claim, a report written to a file, and a witness without
torch. Each says what happened and what to do, in one line."""

from __future__ import annotations

import os
import re
import select
import shlex
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).parent.parent


def hubdiff(*args: str, cwd: Path, endpoint: str = "http://127.0.0.1:9", **env: str):
    return subprocess.run(
        [sys.executable, "-m", "hubdiff", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_ENDPOINT": endpoint, "HUBDIFF_CACHE": str(cwd / ".cache"), **env},
        cwd=cwd,
        timeout=300,
    )


def clone(tmp_path: Path) -> Path:
    """What a clone holds that the README's commands use: baselines, examples and checks."""
    here = tmp_path / "hubdiff"
    for folder in ("baselines", "examples", "checks"):
        shutil.copytree(ROOT / folder, here / folder)
    return here


def test_a_mistyped_folder_says_no_such_folder_as_well_as_no_such_repo(example_hub, tmp_path):
    here = clone(tmp_path)
    typo = hubdiff("snapshot", "examples/neww", cwd=here, endpoint=example_hub.endpoint)
    assert typo.returncode == 3
    assert typo.stderr == (
        "hubdiff: examples/neww@main: repository not found (or private: set HF_TOKEN); "
        "no folder examples/neww exists either\n"
    )
    hub_name = hubdiff("snapshot", "zai-org/GLM-9", cwd=here, endpoint=example_hub.endpoint)
    assert hub_name.returncode == 3  # no folder zai-org here: a Hub repo id, said as one
    assert hub_name.stderr == "hubdiff: zai-org/GLM-9@main: repository not found (or private: set HF_TOKEN)\n"
    # with no network (nothing listens on the endpoint), the path is as likely meant as the repo
    offline = hubdiff("snapshot", "examples/neww", "--retries", "0", cwd=here, endpoint="http://127.0.0.1:9")
    assert offline.returncode == 3
    assert offline.stderr.startswith("hubdiff: examples/neww@main: cannot connect to http://127.0.0.1:9")
    assert offline.stderr.endswith("; no folder examples/neww exists either\n")


def test_validate_and_check_take_a_folder_of_baselines(example_hub, example_cache, tmp_path):
    here = clone(tmp_path)
    example_cache(here / ".cache")
    files = sorted((here / "baselines").glob("*.yaml"))
    claims = sum(
        len(r.get("claims") or {}) for f in files for r in yaml.safe_load(f.read_text())["repos"].values()
    )
    valid = hubdiff("validate", "baselines/", cwd=here)
    assert (valid.returncode, valid.stderr) == (0, "")
    assert valid.stdout == f"{len(files)} baseline file(s), {claims} claim(s): valid\n"
    checked = hubdiff("check", "baselines/", "--format", "json", cwd=here, endpoint=example_hub.endpoint)
    assert checked.returncode == 0, checked.stderr
    (here / "empty").mkdir()
    empty = hubdiff("validate", "empty/", cwd=here)
    assert (empty.returncode, empty.stderr) == (2, "hubdiff: no baseline files (*.yaml, *.yml) in empty/\n")


def test_the_demo_paste_lines_run_as_written_from_a_clone(tmp_path):
    here = clone(tmp_path)
    demo = subprocess.Popen(
        [sys.executable, "-m", "hubdiff", "demo", "--serve", "--output-dir", str(tmp_path / "out")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=here,
    )  # fmt: skip
    try:
        lines: list[str] = []
        while not lines or not lines[-1].startswith("pytest "):
            line = demo.stdout.readline()
            assert line, "".join(lines) + demo.stderr.read()
            lines.append(line.rstrip("\n"))
        pasted = lines[lines.index("In another terminal, paste:") + 2 :]
        assert f"cd {shlex.quote(str(here))}" in pasted  # the clone, where the README runs every command
        assert any(re.fullmatch(r"export HF_ENDPOINT=http://127\.0\.0\.1:\d+", line) for line in pasted)
        assert any(line.startswith("export HUBDIFF_CACHE=") for line in pasted)
        env = dict(os.environ)
        ran = 0
        for line in pasted:
            words = shlex.split(line)
            if words[0] == "export":
                name, value = words[1].split("=", 1)
                env[name] = value
            elif words[0] == "cd":
                assert Path(words[1]) == here
            else:
                done = subprocess.run([sys.executable, "-m", *words], capture_output=True, text=True, env=env,
                                      cwd=here, timeout=300)  # fmt: skip
                expected = 1 if words[1] == "diff" else 0  # two sources that differ; the rest are unchanged
                assert done.returncode == expected, (line, done.stdout[-2000:], done.stderr[-2000:])
                if words[1:] == ["check"]:  # the replica stayed up, and serves what the baselines recorded
                    assert "zai-org/GLM-5.3-Flash@main: unchanged at" in done.stdout
                ran += 1
        assert ran >= 6 and "hubdiff diff examples/old examples/new" in pasted and "pytest checks/" in pasted
    finally:
        demo.terminate()
        demo.wait(timeout=30)


class Silent:
    """A server that accepts every connection and never answers a byte."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.held: list[socket.socket] = []
        self.first_at: float | None = None  # when the first connection was accepted (time.monotonic)
        self.endpoint = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.first_at = self.first_at or time.monotonic()
            self.held.append(conn)

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


@pytest.mark.parametrize("command", [["snapshot", "org/m"], ["metrics", "org/m"]])
def test_an_endpoint_that_never_answers_is_said_within_10_s_in_a_ci_log(tmp_path, command):
    """stderr a pipe, as in a CI log: the notice still comes, naming the server and the request, within
    10 s of the request (counted from the server's accept: starting Python on a busy machine is not the
    wait the user is told about), long before the retries give up."""
    server = Silent()
    proc = subprocess.Popen(
        [sys.executable, "-m", "hubdiff", *command, "--cache-dir", str(tmp_path / "c")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "HF_ENDPOINT": server.endpoint, "CI": "true"},
    )  # fmt: skip
    try:
        ready, _, _ = select.select([proc.stderr], [], [], 60.0)
        said = time.monotonic()
        assert ready and server.first_at is not None, "nothing on stderr"
        line = proc.stderr.readline()
        assert said - server.first_at < 10.0
        assert proc.poll() is None  # still waiting: the notice is not the failure
        assert re.fullmatch(
            rf"hubdiff: waiting for {re.escape(server.endpoint)}: no answer in [4-9] s to GET "
            r"/api/models/org/m/revision/main\S* \(an attempt gives up after 10 s without one: --timeout, "
            r"--retries\)\n",
            line,
        ), line
    finally:
        proc.kill()
        proc.wait(timeout=30)
        server.close()


def test_quiet_keeps_the_waiting_notice_off(tmp_path):
    server = Silent()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "hubdiff", "snapshot", "org/m", "-q", "--timeout", "6", "--retries", "0",
             "--cache-dir", str(tmp_path / "c")],
            capture_output=True, text=True, timeout=120, env={**os.environ, "HF_ENDPOINT": server.endpoint},
        )  # fmt: skip
    finally:
        server.close()
    assert done.returncode == 3
    assert "waiting for" not in done.stderr and done.stderr.count("\n") == 1, done.stderr


@pytest.mark.parametrize(
    ("spelling", "says"),
    [
        ("nvfp4", "--kv-dtype fp4 sizes the 4-bit values alone"),
        ("fp8_ds_mla", "--profile vllm --kv-dtype fp8 sizes that page"),
    ],
)
def test_a_packed_kv_dtype_says_why_it_is_refused_and_what_to_use(tmp_path, spelling, says):
    refused = hubdiff(
        "metrics", str(ROOT / "examples" / "new"), "--config-only", "--kv-dtype", spelling, cwd=tmp_path
    )
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.startswith(f"hubdiff: --kv-dtype: '{spelling}' ") and says in refused.stderr
    assert refused.stderr.count("\n") == 1


def test_fp4_as_suggested_sizes_the_4_bit_values(tmp_path):
    """examples/new: 2 layers x (K and V) x 16 dims x 1 KV head x 0.5 bytes = 32 bytes a token."""
    import json

    done = hubdiff("metrics", str(ROOT / "examples" / "new"), "--kv-dtype", "fp4", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["kv"]["bytes_per_token"] == 2 * 2 * 16 * 1 * 0.5


def test_a_mistyped_claim_names_the_closest_figure(tmp_path):
    data = yaml.safe_load((ROOT / "baselines" / "glm-5.yaml").read_text())
    repo = next(iter(data["repos"].values()))
    repo["claims"] = {"kv_bytes_per_tokn": "6.0 KB"}
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    done = hubdiff("validate", "b.yaml", cwd=tmp_path)
    assert done.returncode == 2
    assert "unknown figure 'kv_bytes_per_tokn': did you mean 'kv_bytes_per_token'?\n" in done.stderr
    assert "known:" not in done.stderr and done.stderr.count("\n") == 1


def test_check_says_where_it_wrote(example_hub, example_cache, tmp_path):
    here = clone(tmp_path)
    example_cache(here / ".cache")
    done = hubdiff("check", "--output", "out/check.md", "--summary", "summary.md", cwd=here,
                   endpoint=example_hub.endpoint)  # fmt: skip
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr == "hubdiff: wrote report out/check.md, summary summary.md\n"
    assert (here / "out" / "check.md").read_text().startswith("# hubdiff check")
    quiet = hubdiff("check", "--output", "out/check.md", "-q", cwd=here, endpoint=example_hub.endpoint)
    assert (quiet.returncode, quiet.stderr) == (0, "")


def test_a_witness_without_torch_names_the_extra_that_installs_it(tmp_path):
    """torch made unimportable in the process (as on a machine without it): the figures still come, and
    the witness line says which extra brings torch."""
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from hubdiff.cli import main\n"
        f"sys.exit(main(['metrics', {str(ROOT / 'examples' / 'new')!r}, '--config-only', '--witness']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "witness: none (torch is not installed: pip install 'hubdiff[witness]' adds it)" in done.stdout
