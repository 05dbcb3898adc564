"""Hostile baselines (a fork's pull request may carry one) and where hubdiff writes.

Every case is run the four ways a baseline is read: ``hubdiff check``, ``hubdiff baseline update``,
``hubdiff watch --update`` and ``pytest checks/ --baseline-dir``. Each must end at once with one line
naming file:line and exit 2, leave the baseline as it was, and write nothing anywhere.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hubdiff import cli
from hubdiff._baseline import load_baseline
from hubdiff._baseline.schema import MAX_YAML_BYTES, MAX_YAML_DEPTH, family_file
from hubdiff._render.markdown import COMMENT_LIMIT, STEP_SUMMARY_LIMIT
from hubdiff._source.repo_id import is_repo_id
from hubdiff._source.spec import parse_source
from hubdiff.errors import BaselineError, UsageError
from hubdiff.watch import WatchOutcome, _write_reports

pytest_plugins = ["pytester"]

ROOT = Path(__file__).parent.parent
NOWHERE = ["--endpoint", "http://127.0.0.1:9", "--retries", "0"]
ENTRY = "family: fam\nrepos:\n  org/m:\n    revision: main\n"

# An alias bomb: nine levels of nine aliases, under 1 KB, would expand to 9**9 strings.
_BOMB = "".join(
    f"      l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9) if i else ', '.join(['lol'] * 9)}]"
    + ("  #<\n" if i == 1 else "\n")
    for i in range(9)
)


def _claim(stated: str) -> str:
    return ENTRY + f"    claims:\n      main_params: {stated}  #<\n"


# (id, the baseline's text with ``#<`` on the line the error must name, what the line must say)
CASES = [
    ("family-parent", "family: ../../x  #<\nrepos:\n  org/m: {revision: main}\n", "family: must be"),
    ("family-absolute", "family: /tmp/x  #<\nrepos:\n  org/m: {revision: main}\n", "family: must be"),
    ("family-space", "family: glm 5  #<\nrepos:\n  org/m: {revision: main}\n", "family: must be"),
    ("family-upper", "family: GLM-5  #<\nrepos:\n  org/m: {revision: main}\n", "family: must be"),
    ("family-dots", "family: a..b  #<\nrepos:\n  org/m: {revision: main}\n", "family: must be"),
    (
        "alias-config",
        ENTRY + "    config:\n" + _BOMB,
        "repos.org/m.config.l1.0: YAML aliases are not allowed",
    ),
    (
        "alias-claims",
        ENTRY + "    claims:\n      main_params: &x 744B\n      config.a: *x  #<\n",
        "repos.org/m.claims.config.a: YAML aliases are not allowed",
    ),
    ("merge-key", ENTRY + "    config:\n      <<: {a: 1}  #<\n", "YAML merge keys (<<) are not allowed"),
    ("repeated-key", ENTRY + "    revision: v2  #<\n", "repos.org/m.revision: repeated key"),
    (
        "repeated-repo",
        "family: fam\nrepos:\n  org/m: {revision: main}\n  org/m: {revision: v2}  #<\n",
        "repos.org/m: repeated key",
    ),
    ("timestamp", ENTRY + "    config:\n      date: 2024-01-01  #<\n", "config.date: a date or time"),
    (
        "binary",
        ENTRY + "    config:\n      blob: !!binary aGVsbG8=  #<\n",
        "YAML tag !!binary is not allowed",
    ),
    ("set", ENTRY + "    config:\n      s: !!set {a, b}  #<\n", "YAML tag !!set is not allowed"),
    (
        "python-tag",
        ENTRY + "    config:\n      x: !!python/object/apply:os.system [echo hi]  #<\n",
        "YAML tag !!python/object/apply:os.system is not allowed",
    ),
    ("local-tag", ENTRY + "    config:\n      x: !thing 1  #<\n", "YAML tag !thing is not allowed"),
    (
        "non-text-key",
        ENTRY + "    config:\n      1: one  #<\n",
        "repos.org/m.config: mapping keys must be text",
    ),
    ("nan-config", ENTRY + "    config:\n      ffn_mult: .nan  #<\n", "config.ffn_mult: NaN is not a number"),
    (
        "huge-ffn-mult",  # a finite float the metrics would overflow on: the config bounds refuse it
        ENTRY + "    config:  #<\n      ffn_mult: 1.0e+308\n",
        "repos.org/m.config: ffn_mult is 1e+308: out of range",
    ),
    ("inf-claim", _claim("1.0e+400"), "claims.main_params: number out of range"),
    ("huge-int-claim", _claim("1" + "0" * 400), "claims.main_params: integer out of range"),
    ("huge-text-claim", _claim('"1' + "0" * 400 + 'B"'), "claim main_params: out of range"),
    ("huge-int-config", ENTRY + f"    config:\n      vocab_size: {10**20}  #<\n", "integer out of range"),
    (
        "deep-config",
        ENTRY + "    config:\n      x: " + "[" * MAX_YAML_DEPTH + "]" * MAX_YAML_DEPTH + "  #<\n",
        f"nested more than {MAX_YAML_DEPTH} levels deep",
    ),
    ("two-documents", ENTRY + "---  #<\nfamily: other\n", "file: more than one YAML document"),
    ("repo-unicode", "family: fam\nrepos:\n  org/café: {revision: main}  #<\n", "not a repo id"),
    ("repo-dashes", "family: fam\nrepos:\n  org/a--b: {revision: main}  #<\n", "not a repo id"),
    ("repo-git", "family: fam\nrepos:\n  org/m.git: {revision: main}  #<\n", "not a repo id"),
    ("repo-long", "family: fam\nrepos:\n  org/" + "m" * 97 + ": {revision: main}  #<\n", "not a repo id"),
    (
        "owner-unicode",
        ENTRY + "discover:\n  - owner: orgé  #<\n    match: m*\n",
        "discover.0.owner: owner must be",
    ),
    (  # a GGUF entry's strip: counted from its text, never expanded to the 16 trillion names it claims
        "gguf-strip-bomb",
        ENTRY
        + "    gguf:\n      variants:\n        Q4_K_M:\n          files: [m-Q4_K_M.gguf]\n"
        + "          bytes: 1\n          bits_per_weight: 4.5\n          parameters: 2\n"
        + "          types: {Q4_K: 1}\n          strip:\n"
        + "            b.{0-3999999}.x.{0-3999999}: Q4_K [1] x4  #<\n",
        "expands to more names than the row's x4",
    ),
    (
        "gguf-beside-config",
        ENTRY + "    gguf: {pin: Q4_K_M}\n    config: {a: 1}  #<\n",
        "repos.org/m.config: a GGUF entry",
    ),
]


def _line_of(text: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if line.endswith("#<"))


def _files(root: Path) -> dict[str, bytes | str]:
    """Every file and link under ``root``, as its bytes or its target: to prove nothing was written."""
    out: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            out[str(path)] = os.readlink(path)
        elif path.is_file():
            out[str(path)] = path.read_bytes()
    return out


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], float]:
    """``hubdiff ARGV`` through the CLI's entry point: exit code, stderr lines, seconds taken."""
    started = time.perf_counter()
    code = cli.main(list(argv))
    elapsed = time.perf_counter() - started
    out, err = capsys.readouterr()
    if code == 2:
        assert out == ""  # the one line goes to stderr, and nothing else is said
    return code, err.splitlines(), elapsed


def _front_ends(work: Path, path: Path) -> list[list[str]]:
    cache = ["--cache-dir", str(work / "cache"), *NOWHERE]
    return [
        ["check", str(path), *cache, "--output", str(work / "out" / "r.md"), "--summary", str(work / "s.md")],
        ["baseline", "update", str(path), *cache],
        ["watch", str(path), "--update", "--output-dir", str(work / "out"), *cache],
        ["watch", "--baseline-dir", str(path.parent), "--output-dir", str(work / "out"), *cache],
    ]


@pytest.mark.parametrize(("text", "problem"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_hostile_baseline_is_one_file_line_and_exit_2(tmp_path, capsys, pytester, text, problem):
    work = tmp_path / "work"
    baselines = work / "baselines"
    baselines.mkdir(parents=True)
    path = baselines / "b.yaml"
    path.write_text(text)
    before = _files(tmp_path)
    expected = f"hubdiff: {path}:{_line_of(text)}: "
    for argv in _front_ends(work, path):
        code, lines, elapsed = _run(capsys, *argv)
        assert code == 2 and len(lines) == 1, (argv, lines)
        assert lines[0].startswith(expected) and problem in lines[0], (argv, lines)
        assert elapsed < 2, argv
    assert _files(tmp_path) == before  # the baseline as it was; no report, cache or summary anywhere

    started = time.perf_counter()
    result = pytester.runpytest_inprocess(
        str(ROOT / "checks"), "-p", "no:cacheprovider", "--baseline-dir", str(baselines), "--hub-offline"
    )
    assert time.perf_counter() - started < 3
    assert result.ret == 2
    shown = {line for line in result.outlines if line.startswith(f"{path}:")}
    assert len(shown) == 1, result.outlines  # the same one line (pytest prints it twice)
    (line,) = shown
    assert line.startswith(expected.removeprefix("hubdiff: ")) and problem in line
    assert _files(tmp_path) == before


def test_the_alias_bomb_ends_at_once_as_users_run_it(tmp_path):
    """The same through a real process: ``hubdiff check`` and ``pytest checks/`` each return in seconds."""
    (tmp_path / "baselines").mkdir()
    path = tmp_path / "baselines" / "b.yaml"
    text = ENTRY + "    config:\n" + _BOMB
    path.write_text(text)
    env = {**os.environ, "HF_ENDPOINT": "http://127.0.0.1:9", "HUBDIFF_CACHE": str(tmp_path / "c")}
    runs = [
        [sys.executable, "-m", "hubdiff", "check"],
        [sys.executable, "-m", "pytest", str(ROOT / "checks"), "-p", "no:cacheprovider", "-q"],
    ]
    for argv in runs:
        argv += ["--baseline-dir", str(tmp_path / "baselines")]
        started = time.perf_counter()
        result = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
        assert time.perf_counter() - started < 15  # interpreter start and imports included
        assert result.returncode == 2, result.stdout + result.stderr
        assert f"{path}:{_line_of(text)}: repos.org/m.config.l1.0: YAML aliases are not allowed" in (
            result.stdout + result.stderr
        )
    assert path.read_text() == text and not (tmp_path / "c").exists()


def test_a_symlink_out_of_the_tree_is_refused_without_quoting_its_target(tmp_path, capsys, pytester):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.yaml").write_text("ghp_SECRET_TOKEN_NAME: 1\n")
    baselines = tmp_path / "work" / "baselines"
    baselines.mkdir(parents=True)
    link = baselines / "b.yaml"
    link.symlink_to(outside / "secret.yaml")
    before = _files(tmp_path)
    expected = f"hubdiff: {link}: symlink points outside {baselines}"
    for argv in _front_ends(tmp_path / "work", link):
        code, lines, _ = _run(capsys, *argv)
        assert (code, lines) == (2, [expected]), argv
    result = pytester.runpytest_inprocess(
        str(ROOT / "checks"), "-p", "no:cacheprovider", "--baseline-dir", str(baselines), "--hub-offline"
    )
    assert result.ret == 2 and expected.removeprefix("hubdiff: ") in result.outlines
    assert "SECRET" not in "\n".join(result.outlines)
    assert _files(tmp_path) == before


def test_a_symlink_inside_the_tree_is_read(tmp_path):
    baselines = tmp_path / "baselines"
    (baselines / "shared").mkdir(parents=True)
    (baselines / "shared" / "real.yaml").write_text(ENTRY)
    (baselines / "b.yaml").symlink_to(baselines / "shared" / "real.yaml")
    assert load_baseline(baselines / "b.yaml").family == "fam"


def test_a_fifo_or_an_oversized_file_is_refused_without_reading_it(tmp_path, capsys, pytester):
    baselines = tmp_path / "baselines"
    baselines.mkdir()
    os.mkfifo(baselines / "pipe.yaml")  # opening it for reading the ordinary way would wait forever
    with pytest.raises(BaselineError, match=r"pipe.yaml: not a regular file$"):
        load_baseline(baselines / "pipe.yaml")
    result = pytester.runpytest_inprocess(
        str(ROOT / "checks"), "-p", "no:cacheprovider", "--baseline-dir", str(baselines), "--hub-offline"
    )
    assert result.ret == 2 and f"{baselines / 'pipe.yaml'}: not a regular file" in result.outlines
    (baselines / "pipe.yaml").unlink()
    capsys.readouterr()  # what the pytest run printed
    big = baselines / "big.yaml"
    big.write_text(ENTRY + "#" * MAX_YAML_BYTES + "\n")
    code, lines, elapsed = _run(capsys, "check", str(big), *NOWHERE)
    assert (code, lines) == (2, [f"hubdiff: {big}: over {MAX_YAML_BYTES:,} bytes, too large for a baseline"])
    assert elapsed < 2


def test_a_recorded_config_keeps_infinity_as_the_hub_reader_does(tmp_path):
    """Released configs hold Infinity (Nemotron-H's time_step_limit): the Hub's reader takes it, so a
    baseline recorded from one must load; NaN and infinity anywhere else are refused (see CASES)."""
    path = tmp_path / "b.yaml"
    path.write_text(
        ENTRY + "    config:\n      time_step_limit: [0.0, .inf]\n      initializer_range: 1.0e+308\n"
    )
    (repo,) = load_baseline(path).repos
    assert repo.config == {"time_step_limit": [0.0, float("inf")], "initializer_range": 1e308}
    path.write_text(ENTRY + "    metrics:\n      total_params: .inf\n")
    with pytest.raises(BaselineError, match=r":6: repos.org/m.metrics.total_params: number out of range$"):
        load_baseline(path)


def test_the_shipped_baseline_reads_as_before():
    """What the bounded reader gives is what yaml.safe_load gives, for a file that uses nothing refused."""
    path = ROOT / "baselines" / "glm-5.yaml"
    assert load_baseline(path).raw == yaml.safe_load(path.read_text())


# -- family names and the files named after them -----------------------------------------------

_NAME_CHARS = st.sampled_from([*"abz09._-/ A\\~é", "..", "../", "\x00"])
FAMILY_NAMES = st.one_of(
    st.lists(_NAME_CHARS, max_size=12).map("".join),
    st.from_regex(r"[a-z0-9][a-z0-9._-]{0,70}", fullmatch=True),
    st.text(max_size=10),
)


def _safe_family(name: str) -> bool:
    """The rule, stated apart from hubdiff's: a lowercase file name, at most 64 characters, no '..'."""
    return bool(re.fullmatch(r"[a-z0-9][a-z0-9._-]*", name)) and len(name) <= 64 and ".." not in name


@settings(
    max_examples=60,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(family=FAMILY_NAMES)
def test_a_family_is_taken_only_as_a_safe_file_name(capsys, family):
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "baselines").mkdir()
        path = work / "baselines" / "b.yaml"
        path.write_text(
            yaml.safe_dump({"family": family, "repos": {"org/m": {}}}, sort_keys=False, width=999)
        )
        before = _files(work)
        code, lines, _ = _run(
            capsys,
            "watch",
            str(path),
            "--output-dir",
            str(work / "out"),
            "--cache-dir",
            str(work / "c"),
            *NOWHERE,
        )
        if _safe_family(family):
            assert code != 2, lines
            report = family_file(work / "out", family, ".md")
            assert report.parent == work / "out" and os.path.commonpath([report, work / "out"]) == str(
                work / "out"
            )
        else:
            assert (
                code == 2 and len(lines) == 1 and lines[0].startswith(f"hubdiff: {path}:1: family: must be")
            )
            assert _files(work) == before
            with pytest.raises(UsageError):
                family_file(work / "out", family, ".md")


def test_reports_are_never_written_outside_the_output_dir(tmp_path):
    """Defence in depth: a family that did not come through validation still cannot name a path."""
    for family in ("../escape", "/tmp/escape", "a/b", "", "..", "Glm"):
        outcome = WatchOutcome(results={family: []})
        with pytest.raises(UsageError, match="family"):
            _write_reports(outcome, tmp_path / "out", None)
    assert not (tmp_path / "out").exists() and not (tmp_path / "escape").exists()


def test_baseline_init_refuses_a_family_that_is_not_a_file_name(tmp_path, capsys):
    for family in ("../x", "a b", "GLM"):
        code, lines, _ = _run(
            capsys, "baseline", "init", "org/m", "--family", family, "--baseline-dir", str(tmp_path), *NOWHERE
        )
        assert code == 2 and len(lines) == 1 and "must be 1 to 64 lowercase letters" in lines[0]
    assert list(tmp_path.iterdir()) == []


def test_two_baselines_of_one_family_are_refused_by_watch(tmp_path, capsys):
    """Their reports and pull request would be one file: the second would overwrite the first."""
    for name in ("a.yaml", "b.yaml"):
        (tmp_path / name).write_text(ENTRY)
    code, lines, _ = _run(
        capsys,
        "watch",
        str(tmp_path / "a.yaml"),
        str(tmp_path / "b.yaml"),
        "--output-dir",
        str(tmp_path / "out"),
        *NOWHERE,
    )
    assert (code, lines) == (
        2,
        [f"hubdiff: {tmp_path / 'b.yaml'}:1: family: fam is also the family of {tmp_path / 'a.yaml'}"],
    )
    assert not (tmp_path / "out").exists()


# -- repo ids: hubdiff's rule is huggingface_hub's ---------------------------------------------

_ID_CHARS = st.sampled_from([*"aZ09_-./", "--", "..", ".git", "é", "Ａ", " ", "\n"])
REPO_IDS = st.one_of(
    st.lists(_ID_CHARS, max_size=10).map("".join),
    st.builds(lambda a, b: "o" * a + "/" + "n" * b, st.integers(0, 100), st.integers(0, 100)),
    st.from_regex(r"[\w.-]{1,5}/[\w.-]{1,5}", fullmatch=True),
    st.text(max_size=12),
)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(repo=REPO_IDS)
def test_repo_ids_are_those_huggingface_hub_accepts(repo):
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(repo)
        accepted = True
    except HFValidationError:
        accepted = False
    assert is_repo_id(repo) == accepted


@settings(
    max_examples=40,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    repo=REPO_IDS.filter(
        lambda r: r and r.isprintable() and "@" not in r and not r.startswith((".", "/", "~"))
    )
)
def test_a_repo_id_is_refused_alike_in_a_baseline_and_on_the_command_line(capsys, repo):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "b.yaml"
        path.write_text(yaml.safe_dump({"family": "fam", "repos": {repo: {}}}, sort_keys=False, width=999))
        code, lines, _ = _run(capsys, "check", str(path), "--offline", "--cache-dir", str(Path(tmp) / "c"))
        refused = (
            code == 2
            and len(lines) == 1
            and lines[0].startswith(f"hubdiff: {path}:3: repos.")
            and "not a repo id" in lines[0]
        )
        assert refused == (not is_repo_id(repo)), lines
        assert code in (2, 3)
    if Path(repo).is_dir():
        return  # a folder of that name is a local source
    try:
        spec = parse_source(repo)
    except UsageError:
        assert not is_repo_id(repo)
    else:
        assert spec.kind == "hub" and is_repo_id(spec.target)


# -- what hubdiff writes for GitHub: within its limits ------------------------------------------


def test_check_summary_and_comment_of_thousands_of_repos_fit_githubs_limits(tmp_path):
    repos = "".join(f"  org{i % 7}/{'m' * 80}-{i:05d}: {{revision: main}}\n" for i in range(2500))
    path = tmp_path / "many.yaml"
    path.write_text("family: many\nrepos:\n" + repos)
    result = subprocess.run(
        [
            *(
                sys.executable,
                "-m",
                "hubdiff",
                "check",
                str(path),
                "--offline",
                "--cache-dir",
                str(tmp_path / "c"),
            ),
            *("--output", str(tmp_path / "r.md"), "--summary", str(tmp_path / "s.md")),
            *("--comment", str(tmp_path / "c.md")),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 3, result.stderr  # nothing cached: every repo could not be read
    summary = (tmp_path / "s.md").read_text()
    assert len(summary.encode()) <= STEP_SUMMARY_LIMIT and summary.endswith("see the report artifacts.\n")
    comment = (tmp_path / "c.md").read_text()
    assert len(comment) <= COMMENT_LIMIT and "cut to fit a comment" in comment
    assert len((tmp_path / "r.md").read_text().encode()) > STEP_SUMMARY_LIMIT  # the full report is whole


def test_watch_summary_counts_what_the_step_already_wrote(tmp_path, monkeypatch):
    from hubdiff.watch import write_github_files

    summary = tmp_path / "summary.md"
    summary.write_text("x" * 600_000)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.delenv("GITHUB_OUTPUT", raising=False)
    write_github_files(WatchOutcome(), "y" * 900_000)
    assert len(summary.read_bytes()) <= STEP_SUMMARY_LIMIT
    assert summary.read_text().endswith("see the report artifacts.\n")
