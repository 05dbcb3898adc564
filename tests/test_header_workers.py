"""Header workers: a many-shard read parsed in worker processes gives what the reading threads give."""

from __future__ import annotations

import json
import os
import signal
import struct
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given, settings

from hubdiff._source import parsing
from hubdiff._source.hub import HubReader
from hubdiff._source.local import load_local
from hubdiff._threads import each_in_threads
from hubdiff.errors import SourceError
from hubdiff.testing import CommitSpec, Fault, RepoSpec, write_checkpoint

from ._fuzzdata import header_files
from .conftest import fast_settings
from .test_fuzz import FUZZ

TENSORS = [
    (f"model.layers.{layer}.mlp.experts.{e}.{w}.weight", "BF16", (16, 8))
    for layer in range(4)
    for e in range(16)
    for w in ("gate_proj", "up_proj", "down_proj")
]
SHARDS = 12


@pytest.fixture
def fresh_workers(monkeypatch):
    """Workers of this test's own, so that killing them leaves the session's as they were."""
    monkeypatch.setattr(parsing, "_workers", None)
    monkeypatch.setattr(parsing, "_unavailable", False)
    yield
    if parsing._workers is not None:
        parsing._workers.stop()


def read(hub, repo: str, processes: int):
    settings = fast_settings(hub.endpoint, processes=processes, processes_from_shards=2)
    hub.clear()
    snapshot = HubReader(settings).snapshot(repo)
    return snapshot, sorted((e.path, e.range, e.bytes_sent) for e in hub.log)


def test_workers_give_the_same_snapshot_with_the_same_requests(hub, fresh_workers):
    hub.add(RepoSpec("org/moe", [CommitSpec({"config.json": b"{}"}, TENSORS, shards=SHARDS)]))
    in_threads, requests_in_threads = read(hub, "org/moe", processes=0)
    assert parsing._workers is None  # processes=0: nothing was started
    in_workers, requests_in_workers = read(hub, "org/moe", processes=2)
    # the index, and every header but the first, which sizes the others' ranges and is parsed here
    assert parsing._workers is not None and parsing._workers.answered == {"index": 1, "header": SHARDS - 1}
    assert in_workers.compact() == in_threads.compact()
    assert in_workers.tensor_count == len(TENSORS) == 192
    assert requests_in_workers == requests_in_threads


def test_below_the_threshold_the_threads_parse(hub, fresh_workers):
    hub.add(RepoSpec("org/moe", [CommitSpec({"config.json": b"{}"}, TENSORS, shards=SHARDS)]))
    settings = fast_settings(hub.endpoint, processes=2, processes_from_shards=SHARDS + 1)
    HubReader(settings).snapshot("org/moe")
    assert parsing._workers is None


_BAD_HEADER = json.dumps({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 9]}}).encode()


@pytest.mark.parametrize(
    ("file", "body", "said", "task"),
    [
        (
            "model-00005-of-00012.safetensors",
            struct.pack("<Q", len(_BAD_HEADER)) + _BAD_HEADER,
            "tensor 'a': F32 [2] needs 8 bytes, offsets give 9",
            "header",
        ),
        (
            "model.safetensors.index.json",
            b'{"weight_map": {"a": "gone.safetensors"}}',
            "'gone.safetensors', which is not in the repo",
            "index",
        ),
    ],
)
def test_bad_bytes_are_the_same_line_from_a_worker(hub, fresh_workers, file, body, said, task):
    hub.add(RepoSpec("org/moe", [CommitSpec({"config.json": b"{}"}, TENSORS, shards=SHARDS)]))
    hub.add_fault(Fault(file, body=body))
    lines = []
    for processes in (0, 2):
        with pytest.raises(SourceError) as caught:
            read(hub, "org/moe", processes)
        lines.append(caught.value.line())
    assert lines[0] == lines[1]
    assert file in lines[0] and said in lines[0]
    assert parsing._workers is not None and parsing._workers.answered[task] >= 1


def test_killed_workers_leave_their_headers_to_the_threads(hub, fresh_workers):
    hub.add(RepoSpec("org/moe", [CommitSpec({"config.json": b"{}"}, TENSORS, shards=SHARDS)]))
    expected, _ = read(hub, "org/moe", processes=0)
    workers = parsing._shared_workers(2)
    assert workers is not None
    for worker in workers.all:
        worker.process.kill()
        worker.process.wait()
    snapshot, _ = read(hub, "org/moe", processes=2)
    assert snapshot.compact() == expected.compact()
    assert workers.alive == 0 and not workers.answered


def test_a_worker_that_dies_on_the_index_leaves_it_to_the_caller(hub, fresh_workers):
    hub.add(RepoSpec("org/moe", [CommitSpec({"config.json": b"{}"}, TENSORS, shards=SHARDS)]))
    expected, _ = read(hub, "org/moe", processes=0)
    workers = parsing._shared_workers(2)
    first = workers.all[0]  # first in line: the index, the first thing a read asks a worker for, goes to it
    os.kill(first.process.pid, signal.SIGSTOP)  # it is sent the index and never answers
    threading.Timer(0.5, first.process.kill).start()  # then dies on it
    snapshot, _ = read(hub, "org/moe", processes=2)
    assert snapshot.compact() == expected.compact()
    # the index is read here; the other worker answers every header but the first (which sizes the others)
    assert workers.alive == 1 and workers.answered == {"header": SHARDS - 1}


def test_bytes_a_worker_dies_on_go_back_to_their_caller_not_to_the_next(fresh_workers):
    """Two headers asked at once of two workers, the first of which never answers and is killed: its
    caller gets None (and parses the header itself); the other's answer is the other worker's alone."""
    workers = parsing._shared_workers(2)
    first = workers.all[0]
    os.kill(first.process.pid, signal.SIGSTOP)
    threading.Timer(0.5, first.process.kill).start()
    raw = json.dumps({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
    with ThreadPoolExecutor(2) as pool:
        size = 8 + len(raw) + 8  # the length, the header, one F32 [2]
        answers = list(
            pool.map(lambda _: workers.ask("header", raw, "model.safetensors", size, ""), range(2))
        )
    # which caller was given the stopped worker is the threads' race; that one caller, and one only, gets None
    assert sorted(answers, key=lambda a: a is not None) == [
        None,
        parsing.parse_and_keep(raw, "model.safetensors", size),
    ]
    assert workers.alive == 1 and workers.answered == {"header": 1}


def test_with_workers_this_process_never_parses_an_index(hub, fresh_workers, monkeypatch):
    """The index's 200,000-name dict is a worker's to build: this process's peak never holds it."""
    from hubdiff._source import layout

    hub.add(RepoSpec("org/moe", [CommitSpec({"config.json": b"{}"}, TENSORS, shards=SHARDS)]))
    here: list[str] = []
    real = layout.parse_index
    monkeypatch.setattr(
        parsing, "parse_index", lambda raw, file, listing: here.append(file) or real(raw, file, listing)
    )
    with_workers, _ = read(hub, "org/moe", processes=2)
    assert here == [] and parsing._workers.answered["index"] == 1
    in_process, _ = read(hub, "org/moe", processes=0)
    assert here == ["model.safetensors.index.json"]
    assert with_workers.compact() == in_process.compact()


def test_an_answer_that_does_not_pickle_leaves_the_work_to_the_caller(fresh_workers, monkeypatch):
    """A worker whose answer cannot be pickled (here: an exception holding a lock) says so, and the
    caller does the work itself, meeting the real exception or result there: no stand-in error."""
    boom = (
        "import threading\n"
        "class Unpicklable(Exception):\n"
        "    def __init__(self):\n"
        "        super().__init__('held'); self.lock = threading.Lock()\n"
        "def header(raw, *args):\n"
        "    raise Unpicklable()\n"
        "parsing._TASKS['header'] = header\n"
    )
    serve = (
        "import sys; sys.path[:] = sys.argv[1:]; from hubdiff._source import parsing\n"
        + boom
        + "parsing.serve()"
    )
    monkeypatch.setattr(parsing, "_SERVE", serve)
    workers = parsing._shared_workers(1)
    assert workers is not None
    assert workers.ask("header", b"{}", "model.safetensors", None, "") is None
    assert workers.alive == 1 and not workers.answered  # still serving; nothing answered for


def test_a_worker_known_stopped_is_not_asked(hub, fresh_workers):
    hub.add(RepoSpec("org/moe", [CommitSpec({"config.json": b"{}"}, TENSORS, shards=SHARDS)]))
    expected, _ = read(hub, "org/moe", processes=0)
    workers = parsing._shared_workers(2)
    workers.all[0].stop()
    snapshot, _ = read(hub, "org/moe", processes=2)
    assert snapshot.compact() == expected.compact()
    assert workers.alive == 1  # the other answers the index and every header but the first
    assert workers.answered == {"index": 1, "header": SHARDS - 1}


def test_no_interpreter_to_start_means_no_workers_and_the_same_snapshot(hub, fresh_workers, monkeypatch):
    hub.add(RepoSpec("org/moe", [CommitSpec({"config.json": b"{}"}, TENSORS, shards=SHARDS)]))
    expected, _ = read(hub, "org/moe", processes=0)
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    snapshot, _ = read(hub, "org/moe", processes=2)
    assert parsing._workers is None and parsing._unavailable
    assert snapshot.compact() == expected.compact()


def test_ctrl_c_while_waiting_for_an_answer_stops_that_worker_and_nothing_hangs(fresh_workers):
    workers = parsing._shared_workers(1)
    (worker,) = workers.all
    os.kill(worker.process.pid, signal.SIGSTOP)  # it takes the request and never answers
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a CLI process
    try:
        main = threading.main_thread().ident
        threading.Timer(0.3, signal.pthread_kill, (main, signal.SIGINT)).start()  # Ctrl-C, to this thread
        with pytest.raises(KeyboardInterrupt):
            workers.ask("header", b"{}", "model.safetensors", None, "")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert workers.alive == 0 and worker.process.returncode is not None
    assert workers.ask("header", b"{}", "model.safetensors", None, "") is None  # at once: none is left


def test_a_forked_child_never_uses_its_parents_workers(fresh_workers):
    parents = parsing._shared_workers(1)
    pid = os.fork()
    if pid == 0:  # the child: its own workers, or none, never the parent's pipes
        try:
            mine = parsing._shared_workers(1)
            os._exit(0 if mine is not None and mine is not parents else 1)
        finally:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert parsing._workers is parents and parents.alive == 1


def test_a_worker_ignores_ctrl_c(hub, fresh_workers):
    hub.add(RepoSpec("org/moe", [CommitSpec({"config.json": b"{}"}, TENSORS, shards=SHARDS)]))
    read(hub, "org/moe", processes=1)  # started and answering
    (worker,) = parsing._workers.all
    os.kill(worker.process.pid, signal.SIGINT)
    snapshot, _ = read(hub, "org/moe", processes=1)
    assert worker.process.poll() is None  # still running
    assert parsing._workers.answered == {"index": 2, "header": 2 * (SHARDS - 1)}
    assert snapshot.tensor_count == 192


def test_a_folder_reads_alike_with_workers(tmp_path, fresh_workers):
    write_checkpoint(tmp_path, CommitSpec({"config.json": b"{}"}, TENSORS, shards=SHARDS))
    in_thread = load_local(str(tmp_path), processes=0)
    assert parsing._workers is None
    in_workers = load_local(str(tmp_path), processes=2, processes_from_shards=2)
    assert parsing._workers is not None and parsing._workers.answered == {"header": SHARDS}
    assert in_workers.compact() == in_thread.compact() and in_workers.tensor_count == 192


def test_a_bad_header_in_a_folder_is_the_same_line_from_a_worker(tmp_path, fresh_workers):
    files = write_checkpoint(tmp_path, CommitSpec({"config.json": b"{}"}, TENSORS, shards=SHARDS))
    shard = "model-00007-of-00012.safetensors"
    with (tmp_path / shard).open("r+b") as fh:  # same length, same file size: one shape that lies
        fh.write(files[shard].head.replace(b'"shape":[16,8]', b'"shape":[16,9]', 1))
    lines = []
    for processes in (0, 2):
        with pytest.raises(SourceError) as caught:
            load_local(str(tmp_path), processes=processes, processes_from_shards=2)
        lines.append(caught.value.line())
    assert lines[0] == lines[1] and shard in lines[0], lines
    assert "BF16 [16, 9] needs 288 bytes, offsets give 256" in lines[0]


def test_the_first_failure_stops_the_reads_not_yet_started():
    started = []

    def call(item: str) -> str:
        started.append(item)
        if item == "003":
            raise ValueError("bad shard 003")
        time.sleep(0.01)
        return item.upper()

    items = [f"{i:03}" for i in range(100)]
    with pytest.raises(ValueError, match="bad shard 003"):
        each_in_threads(call, items, threads=2)
    assert "003" in started and len(started) < 20
    assert each_in_threads(str.upper, ["a", "b", "c"], threads=2) == {"a": "A", "b": "B", "c": "C"}


@settings(max_examples=150, **FUZZ)
@given(header_files())
def test_hostile_headers_read_alike_in_a_worker(blob):
    """Every answer a worker can give (groups, unknown dtypes, any refusal) comes back as it would be
    made here: the pickled round trip changes nothing."""
    if len(blob) < 8:
        return
    (length,) = struct.unpack("<Q", blob[:8])
    raw, size = blob[8 : 8 + length], len(blob)
    workers = parsing._shared_workers(1)
    assert workers is not None and workers.alive >= 1
    try:
        here: object = parsing.parse_and_keep(raw, "model.safetensors", size)
    except Exception as exc:
        here = (type(exc), str(exc))
    try:
        there: object = workers.ask("header", raw, "model.safetensors", size, "")
    except Exception as exc:
        there = (type(exc), str(exc))
    assert there == here
