"""transformers' reading of a config in a child process: the same answer as in process, or none.

A cold ``metrics`` reads the config with transformers' class in a child (``_metrics.config_child``)
so that the reading process never imports it. The figures must stay byte for byte those of the
in-process path, so the answer's round trip through the child's JSON is checked on every corpus
config and every released config of tests/data; a real cold `metrics` is compared on configs with and
without a vision tower; and what a child may hand back that is not an answer (garbage, another
shape, a failed child) must leave the in-process path to read the config.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from hubdiff._metrics import config as config_module
from hubdiff._metrics import config_child
from hubdiff._metrics.config import tagged, untagged
from hubdiff.testing import CommitSpec, RepoSpec

DATA = Path(__file__).parent / "data"
CORPUS = DATA / "corpus"


def _configs() -> list[dict[str, Any]]:
    folders = [*DATA.iterdir(), *CORPUS.iterdir()]
    return [json.loads((f / "config.json").read_text()) for f in folders if (f / "config.json").is_file()]


def _same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down (repr tells 1 from 1.0, a tuple from a list, and
    NaN equals itself there)."""
    return repr(a) == repr(b)


def _in_process(raw: dict[str, Any]) -> Any:
    saved = dict(config_module.PREREAD)
    config_module.PREREAD.clear()
    try:
        return config_module._with_transformers(raw)
    finally:
        config_module.PREREAD.update(saved)


@pytest.fixture(autouse=True)
def _no_prereads() -> Any:
    config_module.PREREAD.clear()
    yield
    config_module.PREREAD.clear()


def test_answers_read_back_exactly() -> None:
    """Every answer transformers' classes give for a released config, through the child's JSON and
    back, is what it was."""
    raws = _configs()
    checked = unplain = 0
    for raw in raws:
        answer = _in_process(raw)
        try:
            text = json.dumps({"format": config_module.CHILD_FORMAT, "answer": tagged(answer)})
        except TypeError:  # the child exits without an answer: the in-process path reads it
            unplain += 1
            continue
        back = config_child.parse_answer(text.encode())
        assert _same(back, answer), raw.get("model_type")
        checked += 1
    assert checked >= 80  # the corpus and the released configs of tests/data
    assert unplain <= checked // 20  # the child must be the path of nearly every config


def _cli(argv: list[str], env: dict[str, str], child: bool) -> tuple[str, bool]:
    """``hubdiff argv`` in a fresh interpreter (torch not imported), the child on or off; its output
    and whether the process itself imported transformers."""
    off = "" if child else "import hubdiff._metrics.config_child as c; c.start = lambda raw: False; "
    code = (
        f"import sys; {off}from hubdiff.cli import main; code = main({argv!r}); "
        "sys.stderr.write('imported:%s' % ('transformers' in sys.modules)); sys.exit(code)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr.endswith("imported:True")


@pytest.mark.parametrize("folder", ["DeepSeek-V3", "Qwen3-VL-30B-A3B-Instruct"])
def test_a_cold_metrics_reads_in_a_child_as_in_process(hub: Any, tmp_path: Path, folder: str) -> None:
    """The report of a cold ``metrics`` is byte for byte the in-process one, and the reading process
    never imported transformers (its class was read in the child)."""
    config = (DATA / folder / "config.json").read_bytes()
    tensors = [(f"model.layers.{i}.mlp.gate.weight", "BF16", (8, 16)) for i in range(3)]
    hub.add(RepoSpec("org/m", [CommitSpec({"config.json": config}, tensors)]))
    outputs = {}
    for child in (True, False):
        env = {"HF_ENDPOINT": hub.endpoint, "HUBDIFF_CACHE": str(tmp_path / f"cache-{child}")}
        text, imported = _cli(["metrics", "org/m", "--json"], env, child)
        assert imported is not child
        assert '"config read with transformers ' in text
        outputs[child] = text
    assert outputs[True] == outputs[False]


def test_reading_a_config_leaves_it_as_the_hub_sent_it() -> None:
    """transformers' classes write into the objects they are given (the rope standardization adds
    rope_theta and rope_type to rope_scaling): read in this process, the snapshot's own config came out
    with keys the release does not have, and a baseline recorded in process differed from a check read
    in a child by exactly those keys. Every released config is read and must be left as it was."""
    raws = _configs()
    for raw in raws:
        sent = json.loads(json.dumps(raw, allow_nan=True))
        _in_process(raw)
        assert _same(raw, sent), raw.get("model_type")
    assert len(raws) >= 80


def test_a_cold_check_reads_in_a_child_as_in_process(hub: Any, tmp_path: Path) -> None:
    """A baseline recorded with the child and without: the same file; checked cold with the child and
    without: the same report, nothing changed; with the child, neither process imported transformers."""
    config = (DATA / "DeepSeek-V3" / "config.json").read_bytes()
    tensors = [(f"model.layers.{i}.mlp.gate.weight", "BF16", (8, 16)) for i in range(3)]
    hub.add(RepoSpec("org/m", [CommitSpec({"config.json": config}, tensors)]))
    recorded = {}
    for child in (True, False):  # baseline init reads its cold config in the child too: the same file
        env = {"HF_ENDPOINT": hub.endpoint, "HUBDIFF_CACHE": str(tmp_path / f"record-{child}")}
        folder = tmp_path / f"baselines-{child}"
        _, imported = _cli(
            ["baseline", "init", "org/m", "--family", "f", "--baseline-dir", str(folder)], env, child
        )
        assert imported is not child
        recorded[child] = (folder / "f.yaml").read_text()
    when = re.compile(r"recorded: '\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ'")  # the time of recording
    assert when.sub("", recorded[True]) == when.sub("", recorded[False]) and when.search(recorded[True])
    (tmp_path / "f.yaml").write_text(recorded[False])
    outputs = {}
    for child in (True, False):
        env["HUBDIFF_CACHE"] = str(tmp_path / f"cache-{child}")
        text, imported = _cli(["check", str(tmp_path / "f.yaml"), "--format", "text"], env, child)
        assert imported is not child
        outputs[child] = text
    assert outputs[True] == outputs[False]


def test_past_its_children_a_process_reads_configs_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two children at most (each ~0.45 s of CPU and ~55 MiB): a check of many repos read cold has the
    rest read here, the import started in a thread as soon as their config comes."""
    from hubdiff._metrics import compute
    from hubdiff._metrics.options import MetricsOptions

    raw = json.loads((DATA / "Mixtral-8x7B-v0.1" / "config.json").read_text())
    imported: list[str] = []
    monkeypatch.setattr(config_child, "_sent", config_child.MAX_CHILDREN)
    monkeypatch.setattr(compute, "prepare_transformers", lambda: imported.append("here"))
    assert config_child.start(raw) is False
    early = compute.EarlyConfigRead(MetricsOptions())
    early(raw)
    early.join()
    assert imported == ["here"] and not config_module.PREREAD


def test_an_answer_is_for_its_own_config_only() -> None:
    raw = json.loads((DATA / "DeepSeek-V3" / "config.json").read_text())
    planted = ({"hidden_size": 1}, None, "config read with transformers 0 Planted")
    config_module.PREREAD[config_module.config_key(raw) or ""] = lambda: planted
    other = {**json.loads(json.dumps(raw)), "hidden_size": raw["hidden_size"] * 2}
    assert config_module._with_transformers(other) != planted
    assert config_module._with_transformers(raw) == planted  # what the key was registered for


def test_a_failed_child_leaves_the_config_to_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    raw = json.loads((DATA / "Mixtral-8x7B-v0.1" / "config.json").read_text())
    with monkeypatch.context() as m:  # as in a CLI process: neither imported yet
        m.delitem(sys.modules, "torch", raising=False)
        m.delitem(sys.modules, "transformers", raising=False)
        m.setattr(sys, "executable", "/bin/false")  # starts, exits 1, prints nothing
        assert config_child.start(raw)
    assert config_module._preread(raw) is None
    assert _same(config_module._with_transformers(raw), _in_process(raw))


@pytest.mark.parametrize(
    "out",
    [
        b"",
        b"not json",
        b"[]",
        b'{"format": 2, "answer": "x"}',
        b'{"format": 1}',
        b'{"format": 1, "answer": ["tuple", ["dict"], null]}',  # two parts, not three
        b'{"format": 1, "answer": ["tuple", ["list"], null, "config read with transformers 5"]}',
        b'{"format": 1, "answer": ["tuple", ["dict", 1, 2], null, "config read with transformers 5"]}',
        b'{"format": 1, "answer": ["tuple", ["dict"], null, "read from config keys"]}',
        b'{"format": 1, "answer": ["tuple", ["dict"], ["dict", ["list"], 1], "config read with transformers 5"]}',
        b'{"format": 1, "answer": ["set", 1]}',
        b'{"format": 1, "answer": "transformers not installed: read from config keys"}',
        b'{"format": 1, "answer": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    ],
)
def test_what_is_not_an_answer_is_none(out: bytes) -> None:
    assert config_child.parse_answer(out) is None


def test_no_child_where_this_process_has_imported_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    raw = json.loads((DATA / "Mixtral-8x7B-v0.1" / "config.json").read_text())
    monkeypatch.setitem(sys.modules, "torch", sys.modules.get("torch") or types.ModuleType("torch"))
    assert not config_child.start(raw)
    assert config_module.PREREAD == {}


def test_tagged_values_keep_their_types() -> None:
    value = {"a": (1, 2.0), 3: [None, True, float("inf")], "n": -0.0}
    back = untagged(json.loads(json.dumps(tagged(value))))
    assert _same(back, value)
    with pytest.raises(TypeError):
        tagged({"x": object()})
    with pytest.raises(ValueError):
        untagged(["frozenset", 1])


# Reads every given config in a fresh interpreter as a child does (torch hidden, config.py by its path),
# with the child's light import of the configuration classes or with transformers' full import.
_READ_ALL = """
import json, runpy, sys
ns = runpy.run_path(sys.argv[2], run_name="hubdiff_config_check")
ns["_import_config_classes"].__globals__["_CHILD"] = True  # read as the config child reads
if sys.argv[1] == "light":
    ns["_import_config_classes"]()
    live = ns["_import_config_classes"].__globals__  # run_path returns a copy of the module's globals
    assert live["_TRANSFORMERS"] not in (False, None), "the light import failed"
else:
    ns["_import_transformers"](whole=True)
raws = json.load(sys.stdin)
if sys.argv[1] != "one":
    raws = [{"model_type": t} for t in sorted(ns["_transformers"]().CONFIG_MAPPING)] + raws
out = []
for raw in raws:
    try:
        answer = ns["_with_transformers"](raw)
    except Exception as exc:
        answer = "raised " + type(exc).__name__
    try:
        out.append(ns["tagged"](answer))
    except TypeError:
        out.append("not plain")
print(json.dumps(out))
"""


def _read_all(mode: str, raws: list[dict[str, Any]]) -> list[Any]:
    done = subprocess.run(
        [sys.executable, "-I", "-c", _READ_ALL, mode, config_module.__file__],
        input=json.dumps(raws),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return json.loads(done.stdout)


def _unordered(value: Any) -> Any:
    """A tagged answer with each dict's items in one order: some classes build a dict from a set
    (dots3_note's ``rope_parameters`` by layer type), whose order changes with every interpreter's
    string hashes, either import."""
    if isinstance(value, list) and value and value[0] == "dict":
        pairs = sorted(zip(value[1::2], value[2::2]), key=lambda kv: json.dumps(kv[0]))
        return ["dict", *(_unordered(x) for pair in pairs for x in pair)]
    if isinstance(value, list):
        return [_unordered(x) for x in value]
    return value


def test_the_light_import_reads_every_model_type_as_the_full_one() -> None:
    """Every model_type transformers ships (its defaults) and every released config of tests/data, read
    through the child's light import and through ``import transformers``: the same answer, or, for the
    few classes that need transformers' own namespace, a failure the child answers with the full import."""
    raws = _configs()
    light, full = _read_all("light", raws), _read_all("full", raws)
    assert len(light) == len(full) > 800
    differ = [(a, b) for a, b in zip(light, full) if _unordered(a) != _unordered(b)]
    for a, _ in differ:
        assert isinstance(a, str) and (a.startswith("raised ") or " rejected the config " in a), a
    assert len(differ) <= len(full) // 100


def test_a_class_the_light_import_cannot_read_is_read_by_the_full_one() -> None:
    """gpt-sw3's configuration module asks the package ``transformers`` for GPT2Config: the child reads it
    after the full import, and answers what transformers does."""
    raw = {"model_type": "gpt-sw3"}
    code = f"import runpy; runpy.run_path({config_module.__file__!r}, run_name='__main__')"
    done = subprocess.run(
        [sys.executable, "-I", "-c", code], input=json.dumps(raw), capture_output=True, text=True, check=True
    )
    answer = config_child.parse_answer(done.stdout.encode())
    assert answer is not None and answer[2].endswith(" GPT2Config")
    assert [tagged(answer)] == _read_all("one", [raw])


def test_a_child_started_ahead_reads_the_config_it_is_sent_later(monkeypatch: pytest.MonkeyPatch) -> None:
    """``prestart`` starts the child before any config is known; ``start`` hands the config to that
    child, not a new one, and its answer is what a fresh interpreter reads (torch hidden, as in a CLI
    process: this one may have imported torch). A spare never sent a config is ended."""
    raw = json.loads((DATA / "Mixtral-8x7B-v0.1" / "config.json").read_text())
    with monkeypatch.context() as m:  # as in a CLI process: neither imported yet
        m.delitem(sys.modules, "torch", raising=False)
        m.delitem(sys.modules, "transformers", raising=False)
        m.setattr(config_child, "_spare", None)
        config_child.prestart()
        spare = config_child._spare
        assert spare is not None and spare.proc.poll() is None
        assert config_child.start(raw)
        assert config_child._spare is None  # taken
        answer = config_module._preread(raw)
        assert spare.proc.returncode == 0
        config_child.prestart()
        unused = config_child._spare
        assert unused is not None
        config_child._stop_spare()
        assert config_child._spare is None and unused.proc.returncode is not None
    assert answer is not None and [tagged(answer)] == _read_all("one", [raw])


HOST = """
import json, sys
from pathlib import Path
from hubdiff._metrics.compute import compute_metrics
from hubdiff._metrics.options import MetricsOptions
from hubdiff.snapshot import Snapshot
config = json.loads(Path(sys.argv[1]).read_text())
metrics = compute_metrics(Snapshot("x", "local", "", None, config, None, (), {}, ()), MetricsOptions(config_only=True))
assert "transformers" in metrics.cfg.reader, metrics.cfg.reader
from transformers import AutoConfig
from transformers.utils import is_torch_available
from transformers.models.llama.modeling_llama import LlamaForCausalLM
print(AutoConfig.__name__, is_torch_available(), LlamaForCausalLM.__name__)
"""


def test_a_host_process_keeps_transformers_and_torch_as_they_are() -> None:
    """hubdiff read in another program's process (the pytest plugin's session, a library user): the
    program imports transformers and its torch classes afterwards as if hubdiff had not run. Only hubdiff's
    own command line and config child import the configuration classes alone with torch hidden."""
    pytest.importorskip("torch")
    done = subprocess.run(
        [sys.executable, "-c", HOST, str(DATA / "Llama-3.1-8B" / "config.json")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["AutoConfig", "True", "LlamaForCausalLM"]


def test_the_command_line_reads_configs_with_torch_hidden(tmp_path: Path) -> None:
    """Its own process: the configuration classes alone, and torch never imported (2-4 s)."""
    pytest.importorskip("torch")
    code = (
        "import sys; from hubdiff._entry import run; sys.argv[0] = 'hubdiff'; code = run(); "
        "print(code, 'torch' in sys.modules and sys.modules['torch'] is not None, "
        "hasattr(sys.modules.get('transformers'), 'AutoConfig'), file=sys.stderr)"
    )
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "config.json").write_bytes((DATA / "Llama-3.1-8B" / "config.json").read_bytes())
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "metrics",
            str(folder),
            "--config-only",
            "--cache-dir",
            str(tmp_path / "c"),
        ],
        capture_output=True,
        text=True,
    )
    assert done.stderr.splitlines()[-1] == "0 False False", done.stderr[-2000:]
