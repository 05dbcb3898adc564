"""The CLI never leaves a user guessing: typos are one line and exit 2, rewrites keep what people wrote,
terminals get text that fits, and the demo can keep its Hub running for the README's commands."""

import json
import os
import pty
import re
import select
import stat
import subprocess
import sys
import time
from pathlib import Path

import yaml

from hubdiff.testing import CommitSpec, RepoSpec

ROOT = Path(__file__).parent.parent


def hubdiff(*args, endpoint="http://127.0.0.1:9", cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "hubdiff", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_ENDPOINT": endpoint, "COLUMNS": "80"},
        cwd=cwd,
        timeout=300,
    )


def small_repo(hub, repo="org/m", hidden=16):
    tensors = [(f"model.layers.{i}.self_attn.q_proj.weight", "BF16", (hidden, hidden)) for i in range(2)]
    cfg = {"hidden_size": hidden, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10}
    spec = CommitSpec({"config.json": json.dumps(cfg).encode()}, tensors)
    if repo in hub.repos:
        hub.push(repo, spec)
    else:
        hub.add(RepoSpec(repo, [spec]))


def test_a_missing_baseline_file_is_one_line_and_exit_2(tmp_path):
    typo = tmp_path / "baselines" / "glm5.yaml"
    for args in (["check", str(typo)], ["watch", str(typo)], ["baseline", "update", str(typo)]):
        result = hubdiff(*args, cwd=tmp_path)
        assert result.returncode == 2, (args, result.stderr)
        assert result.stderr == f"hubdiff: {typo}: no such baseline file\n", args
        assert result.stdout == ""


def test_update_keeps_comments_order_and_mode_rejects_unknown_repos_and_says_what_changed(hub, tmp_path):
    small_repo(hub)
    cache = ["--cache-dir", str(tmp_path / "c")]
    assert (
        hubdiff(
            "baseline", "init", "org/m", "--family", "f", *cache, endpoint=hub.endpoint, cwd=tmp_path
        ).returncode
        == 0
    )
    path = tmp_path / "baselines" / "f.yaml"
    text = path.read_text()
    text = "# Reviewed by the model team; ask before editing.\n" + text.replace(
        "    allow_changes:", "    # keys a release may change freely\n    allow_changes:"
    )
    path.write_text(text)
    path.chmod(0o664)
    keys_before = list(yaml.safe_load(text)["repos"]["org/m"])

    typo = hubdiff("baseline", "update", "--repo", "org/mm", *cache, endpoint=hub.endpoint, cwd=tmp_path)
    assert typo.returncode == 2 and typo.stderr == "hubdiff: no baseline tracks org/mm (tracked: org/m)\n"
    assert path.read_text() == text

    small_repo(hub, hidden=32)
    update = hubdiff("baseline", "update", "--repo", "org/m", *cache, endpoint=hub.endpoint, cwd=tmp_path)
    assert update.returncode == 0, update.stderr
    sha = hub.repos["org/m"].branches["main"]
    assert re.fullmatch(
        rf"baselines/f\.yaml: org/m [0-9a-f]{{12}} -> {sha[:12]}: figures, config, tensor layout changed\n",
        update.stdout,
    )
    after = path.read_text()
    assert after.startswith("# Reviewed by the model team; ask before editing.\n")
    assert "    # keys a release may change freely\n    allow_changes:" in after
    assert list(yaml.safe_load(after)["repos"]["org/m"]) == keys_before
    assert stat.S_IMODE(path.stat().st_mode) == 0o664  # not mkstemp's 0600
    assert sorted(p.name for p in path.parent.iterdir()) == ["f.yaml"]  # no .lock, no .tmp left behind
    again = hubdiff("baseline", "update", *cache, endpoint=hub.endpoint, cwd=tmp_path)
    assert again.stdout.endswith(f"still {sha[:12]}: config, tensors and figures unchanged\n")


def test_a_killed_runs_temp_file_is_removed_by_the_next_write(tmp_path):
    from hubdiff._files import atomic_write_text

    target = tmp_path / "f.yaml"
    leftover = tmp_path / ".f.yaml.abc123.tmp"
    leftover.write_text("")
    old = time.time() - 3600
    os.utime(leftover, (old, old))
    fresh = tmp_path / ".f.yaml.def456.tmp"  # a concurrent writer's: too young to be a leftover
    fresh.write_text("")
    atomic_write_text(target, "x: 1\n")
    assert target.read_text() == "x: 1\n" and not leftover.exists() and fresh.exists()
    mask = os.umask(0o022)
    os.umask(mask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask


def test_init_records_every_metrics_option_so_check_agrees(example_hub, example_cache, tmp_path):
    cache = ["--cache-dir", str(example_cache(tmp_path / "c"))]
    init = hubdiff(
        "baseline", "init", "zai-org/GLM-5.3", "--family", "g", "--kv-dtype", "fp8", "--count-mtp",
        "--indexer-pooling", "scan", *cache, endpoint=example_hub.endpoint, cwd=tmp_path,
    )  # fmt: skip
    assert init.returncode == 0, init.stderr
    entry = yaml.safe_load((tmp_path / "baselines" / "g.yaml").read_text())["repos"]["zai-org/GLM-5.3"]
    assert entry["metrics_options"] == {
        "profile": "naive",
        "kv_dtype": "fp8",
        "count_mtp": True,
        "indexer_pooling": "scan",
        "config_reader": "auto",
    }
    check = hubdiff("check", "--format", "text", *cache, endpoint=example_hub.endpoint, cwd=tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "unchanged at" in check.stdout


def run_on_a_tty(args, env):
    """Run with stdout on a pseudo-terminal, as a user at a terminal would; return what it printed."""
    main, child = pty.openpty()
    proc = subprocess.Popen(args, stdout=child, stderr=subprocess.PIPE, env=env)
    os.close(child)
    out = b""
    while True:
        ready, _, _ = select.select([main], [], [], 120)
        if not ready:
            break
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=120)
    os.close(main)
    return proc.returncode, out.decode().replace("\r\n", "\n")


def test_diff_on_a_terminal_is_text_that_fits_80_columns(example_hub, example_cache, tmp_path):
    example_cache(tmp_path)
    env = {**os.environ, "HF_ENDPOINT": example_hub.endpoint, "COLUMNS": "80", "HUBDIFF_CACHE": str(tmp_path)}
    code, out = run_on_a_tty(
        [sys.executable, "-m", "hubdiff", "diff", "zai-org/GLM-5", "zai-org/GLM-5.3", "--kv-dtype", "fp8"],
        env,
    )
    assert code == 1
    assert "  config  architectural head_dim: 64 -> 192" in out
    assert "|---" not in out and "###" not in out  # not raw markdown
    assert [line for line in out.splitlines() if len(line) > 80] == []
    piped = subprocess.run(
        [sys.executable, "-m", "hubdiff", "diff", "zai-org/GLM-5", "zai-org/GLM-5.3"],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert piped.stdout.startswith("# hubdiff diff")  # a pipe or a file still gets markdown


def test_the_plugin_loads_and_locks_where_fcntl_does_not_exist(tmp_path):
    """Windows has no fcntl: importing the pytest plugin used to fail every pytest run there."""
    code = (
        "import sys; sys.modules['fcntl'] = None\n"
        "import hubdiff.pytest_plugin\n"
        "from pathlib import Path\n"
        "from hubdiff._files import locked\n"
        f"with locked(Path({str(tmp_path / 'b.yaml')!r})): print('locked')\n"
    )
    result = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "locked\n"


def test_no_network_is_one_line_at_once_with_the_way_out(tmp_path):
    """A connection that cannot be opened is not worth four retries: one line naming the endpoint."""
    start = time.monotonic()
    result = hubdiff("snapshot", "org/m", "--cache-dir", str(tmp_path / "c"), cwd=tmp_path)
    assert time.monotonic() - start < 20  # no 1 + 2 + 4 + 8 s of backoff
    assert result.returncode == 3
    assert result.stderr.strip().splitlines() == [
        "hubdiff: org/m@main: cannot connect to http://127.0.0.1:9 (ConnectError): no network? "
        "--offline reads from the snapshot cache"
    ]


def test_refs_lists_what_a_revision_can_be_and_a_wrong_one_names_them(hub, tmp_path):
    small_repo(hub)
    hub.push("org/m", CommitSpec({"config.json": b'{"hidden_size": 8}'}, []), branch="dev")
    refs = hubdiff("refs", "org/m", "--json", endpoint=hub.endpoint, cwd=tmp_path)
    assert refs.returncode == 0, refs.stderr
    listed = json.loads(refs.stdout)
    assert set(listed["branches"]) == {"main", "dev"} and listed["tags"] == {}
    wrong = hubdiff("snapshot", "org/m@v9", "--cache-dir", str(tmp_path / "c"), endpoint=hub.endpoint)
    assert wrong.returncode == 3
    assert "revision not found (branches: dev, main; see hubdiff refs org/m)" in wrong.stderr


def test_token_option_opens_a_gated_repo(hub, tmp_path):
    spec = CommitSpec({"config.json": b'{"hidden_size": 8}'}, [("w", "BF16", (2, 2))])
    hub.add(RepoSpec("org/gated", [spec], gated=True))
    denied = hubdiff("snapshot", "org/gated", "--cache-dir", str(tmp_path / "a"), endpoint=hub.endpoint)
    assert denied.returncode == 3 and "gated repo" in denied.stderr
    opened = hubdiff(
        "snapshot",
        "org/gated",
        "--token",
        "hf_reader",
        "--cache-dir",
        str(tmp_path / "b"),
        endpoint=hub.endpoint,
    )
    assert opened.returncode == 0, opened.stderr
    assert "hf_reader" not in opened.stdout + opened.stderr
