"""Headers parsed and grouped as they arrive, in worker processes when a checkpoint has many shards.

A header is let go once its tensors are grouped (``kept``), so no more than a shard's names are ever
held at once. Where that work runs matters for the largest checkpoints: reading a 160-shard,
200,000-tensor repo over a fast link is bound by one core, because the reading threads share the
interpreter's lock and parsing and grouping the headers is most of what they do. From
``HubSettings.processes_from_shards`` shards on, it goes to worker processes (one per core, at most
four) while the threads keep reading. Below that, starting them (~0.1 s of imports each) would cost
more than it saves, and the calling thread parses. They start with the read, before the index comes,
and are then shared by every read of the process. The index goes to a worker too (``index_sizes``):
the dict orjson builds of its 200,000 names (~70 MB at once, with the index's 17 MB) was this
process's peak, and what the read needs of it (the shards, and each one's names' sizes) is a table
of a few kilobytes.

The workers are plain subprocesses running ``serve``, not a multiprocessing pool: its workers import
the caller's ``__main__`` again (a script without a main guard would run twice), and forking a process
whose threads may hold locks is unsafe. A worker runs in isolated mode with this process's
``sys.path``, takes one task at a time over its stdin (a pickle naming the task and its arguments,
then the bytes it works on, each after its length) and answers over its stdout (a length, then a
pickle: both ends are this module). A worker that dies is dropped and its header parsed in the
caller; workers ignore Ctrl-C and end when their input closes; a forked child never uses its parent's.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import os
import pickle
import queue
import signal
import struct
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError
from typing import IO, Any

from ..patterns import ShardGroups
from .header import ParsedHeader, parse_header
from .layout import NameSizes, parse_index
from .settings import MANY_SHARDS  # from this many shards on, workers parse

MAX_PROCESSES = 4  # past four, the reading threads are the limit
_LENGTH = struct.Struct("<Q")


def kept(parsed: ParsedHeader, prefix: str = "") -> ShardGroups:
    """What is kept of a parsed header: its tensors grouped, names after ``prefix`` (the component's
    folder, in a multi-folder layout)."""
    names = [prefix + n for n in parsed.names] if prefix else parsed.names
    return ShardGroups.of(names, parsed.dtypes, parsed.shapes, parsed.unknown_dtypes, parsed.size)


def parse_and_keep(raw: bytes, file: str, file_size: int | None, prefix: str = "") -> ShardGroups:
    """``parse_header`` then ``kept``: what a worker does with one header's bytes."""
    return kept(parse_header(raw, file, file_size), prefix)


def default_processes() -> int:
    """One worker per core this process may use, at most ``MAX_PROCESSES``; none on a single core."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return min(cores, MAX_PROCESSES) if cores > 1 else 0


# -- the two ends of a worker's pipes ------------------------------------------------------------


def _send(stream: IO[bytes], *messages: bytes) -> None:
    """Each written whole, after its length: on this process's side the pipes are unbuffered (see
    ``_Worker``), where a write may take only part. The bytes are written as they are, never copied
    (an index is 17 MB)."""
    for data in messages:
        for part in (_LENGTH.pack(len(data)), data):
            view = memoryview(part)
            while view:
                written = stream.write(view)
                view = view[written or 0 :]
    stream.flush()


def _read_exactly(stream: IO[bytes], size: int) -> bytes:
    """``size`` bytes, or fewer at the end of the stream (a read of an unbuffered pipe may return less)."""
    chunks, left = [], size
    while left:
        chunk = stream.read(left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _receive(stream: IO[bytes]) -> bytes | None:
    """One message, or None at the end of the stream (the other end is gone)."""
    head = _read_exactly(stream, _LENGTH.size)
    if len(head) < _LENGTH.size:
        return None
    (length,) = _LENGTH.unpack(head)
    data = _read_exactly(stream, length)
    return data if len(data) == length else None


def index_sizes(raw: bytes, file: str, listing: set[str]) -> tuple[dict[str, Any], list[str], NameSizes]:
    """``parse_index`` with its names' sizes worked out: what a worker does with an index's bytes. The
    200,000-entry weight_map is built and let go here; only the per-shard table goes back."""
    metadata, shards, sizes = parse_index(raw, file, listing)
    sizes.table  # noqa: B018  # worked out now, and the weight_map let go
    return metadata, shards, sizes


# What a worker is asked to do with the bytes it is sent, and with what other arguments
_TASKS: dict[str, Callable[..., Any]] = {"header": parse_and_keep, "index": index_sizes}


def serve() -> None:
    """A worker's loop: a task's name and arguments, then the bytes it works on, in; ("ok", result) or
    ("raise", exception) out, until the input closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle
    requests = sys.stdin.buffer
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything else printed goes where stderr goes, never into an answer
    while (message := _receive(requests)) is not None and (raw := _receive(requests)) is not None:
        try:
            task, args = pickle.loads(message)
            answer: tuple[str, Any] = ("ok", _TASKS[task](raw, *args))
        except Exception as exc:
            answer = ("raise", exc)
        try:
            data = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # an answer that does not pickle: the caller does the work, and meets it there
            data = pickle.dumps(("unanswered", None))
        _send(answers, data)


# The worker imports exactly what this process would: its sys.path, given whole, in isolated mode (no
# PYTHON* variables, no user site, and no folder of its own added), so it can import from nowhere this
# process could not (a '' or a working directory this process has on its path, it has too). Without
# the site module (-S: ~20 ms of each worker's start, reading every .pth file to build a sys.path it is
# given anyway), so the folder holding this hubdiff comes last, for an editable install, whose path
# hook a .pth file sets up.
_SERVE = "import sys; sys.path[:] = sys.argv[1:]; from hubdiff._source.parsing import serve; serve()"
_HUBDIFF_FOLDER = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class _Worker:
    """One worker, asked by several threads at once: requests are written in turn and answered in
    the order they were written, so that the worker starts on the next header while this process
    takes the last answer (waking the thread that waits for it is a wait for the GIL, in a process
    whose reading threads all want it: answering one request at a time left the workers idle a
    third of the time)."""

    def __init__(self) -> None:
        # unbuffered pipes: a buffered one is closed under its lock, which a thread reading or writing
        # it holds, and which a forked child inherits held (``_forget_after_fork`` closes them there)
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _SERVE, *sys.path, _HUBDIFF_FOLDER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=0,
        )
        self.stopped = False
        self._writing = threading.Lock()  # one request written at a time, in the order of ``_waiting``
        self._waiting: collections.deque[Future[tuple[str, Any] | None]] = collections.deque()
        threading.Thread(target=self._answers, name="header-worker-answers", daemon=True).start()

    def call(self, request: bytes, raw: bytes) -> tuple[str, Any] | None:
        """The worker's answer, or None if it is gone or stopped answering (then it is stopped too)."""
        assert self.process.stdin is not None
        answer: Future[tuple[str, Any] | None] = Future()
        with self._writing:
            if self.stopped:
                return None
            self._waiting.append(answer)
            try:
                _send(self.process.stdin, request, raw)
            except Exception:  # gone: every request waiting on it gets no answer
                self.stop()
        try:
            return answer.result()
        except BaseException:  # Ctrl-C mid-answer: the pipe is out of step, the worker unusable
            self.stop()
            raise

    def _answers(self) -> None:
        """Each answer to the request written first and not yet answered; at the end, None to all."""
        assert self.process.stdout is not None
        try:
            while (message := _receive(self.process.stdout)) is not None:
                self._waiting.popleft().set_result(pickle.loads(message))
        except BaseException:  # not speaking this protocol, or closed under it
            pass
        self.stop()

    def stop(self) -> None:
        """Ended first, its pipes closed after: a thread may be reading or writing one of them (the
        answers' reader always is), and closing a pipe under it waits for that read or write."""
        self.stopped = True
        process = self.process
        process.kill()  # it holds nothing: its answers are what it has sent
        process.wait()
        for pipe in (process.stdin, process.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        while self._waiting:
            with contextlib.suppress(IndexError, InvalidStateError):
                self._waiting.popleft().set_result(None)


# Requests in flight to one worker: one parsed while the next waits in its pipe
IN_FLIGHT = 2


class _Workers:
    """The process's workers, each serving up to ``IN_FLIGHT`` callers at a time."""

    def __init__(self, count: int) -> None:
        self.all: list[_Worker] = []
        try:
            for _ in range(count):
                self.all.append(_Worker())
        except BaseException:  # no process to be had (a pids limit, no sys.executable): none at all
            self.stop()
            raise
        self.alive = count
        self._retired: set[int] = set()
        # per task, what the workers answered for (headers parsed or refused with the reason, indexes)
        self.answered: collections.Counter[str] = collections.Counter()
        self.idle: queue.Queue[_Worker | None] = queue.Queue()  # None: no worker is left
        for _ in range(IN_FLIGHT):  # the first in line is the first worker, then the next
            for worker in self.all:
                self.idle.put(worker)
        atexit.register(self.stop)

    def ask(self, task: str, raw: bytes, *args: Any) -> Any:
        """``_TASKS[task](raw, *args)`` done by a worker; None when none is left, or when the one asked
        died on these bytes (they are not handed to the next: a header that kills a worker would kill
        them all)."""
        request = pickle.dumps((task, args), protocol=pickle.HIGHEST_PROTOCOL)
        while True:
            worker = self.idle.get()
            if worker is None:
                self.idle.put(None)  # for the next caller
                return None
            if not worker.stopped:
                break
            self._retire(worker)  # a place in line of a worker that has stopped: dropped
        try:
            answer = worker.call(request, raw)
        finally:
            if worker.stopped:  # never asked again
                self._retire(worker)
            else:
                self.idle.put(worker)
        if answer is None or answer[0] == "unanswered":
            return None
        with _lock:
            self.answered[task] += 1
        kind, value = answer
        if kind == "raise":
            raise value
        return value

    def _retire(self, worker: _Worker) -> None:
        with _lock:
            if id(worker) not in self._retired:
                self._retired.add(id(worker))
                self.alive -= 1
                if not self.alive:
                    self.idle.put(None)

    def stop(self) -> None:
        for worker in self.all:
            worker.stop()


_workers: _Workers | None = None
_unavailable = False  # starting workers failed once: not tried again by this process
_lock = threading.Lock()


def _shared_workers(count: int) -> _Workers | None:
    global _workers, _unavailable
    with _lock:
        if _workers is None and count > 0 and not _unavailable:
            if not sys.executable or getattr(sys, "frozen", False):  # no interpreter to start
                _unavailable = True
                return None
            try:
                _workers = _Workers(count)
            except OSError:
                _unavailable = True
        return _workers


def _forget_after_fork() -> None:
    """In a forked child the workers are still the parent's: its copies of their pipes are closed and
    never used (two processes on one pipe would read each other's answers); it starts its own."""
    global _workers, _lock
    _lock = threading.Lock()
    if _workers is not None:
        atexit.unregister(_workers.stop)
        for worker in _workers.all:
            for pipe in (worker.process.stdin, worker.process.stdout):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()
        _workers = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


class HeaderParser:
    """Where the headers of one read are parsed: in the calling thread, or by the shared workers."""

    def __init__(self, shards: int, processes: int | None = None, from_shards: int = MANY_SHARDS) -> None:
        self.processes = default_processes() if processes is None else processes
        self.wanted = shards >= from_shards and self.processes > 0
        self._workers: _Workers | None = None

    @property
    def callers(self) -> int:
        """How many threads should call ``parse`` at once to keep every worker busy (1: no workers)."""
        return self.processes if self.wanted else 1

    def start(self) -> None:
        """Start the workers if this read wants them and none are running. The first read to start
        them sets their number for the process; a later read shares them, whatever it asks for."""
        if self.wanted:
            self._workers = _shared_workers(self.processes)

    def parse(self, raw: bytes, file: str, file_size: int | None, prefix: str = "") -> ShardGroups:
        """``parse_and_keep``, by a worker if there is one; a HeaderProblem comes back as raised."""
        if self._workers is not None:
            groups = self._workers.ask("header", raw, file, file_size, prefix)
            if groups is not None:
                return groups
        return parse_and_keep(raw, file, file_size, prefix)

    def index(self, raw: bytes, file: str, listing: set[str]) -> tuple[dict[str, Any], list[str], NameSizes]:
        """``parse_index``, by a worker if there is one (``index_sizes``): the index's bytes and the dict
        of its 200,000 names then never add to this process's peak memory. A LayoutProblem comes
        back as raised."""
        if self._workers is not None:
            answer = self._workers.ask("index", raw, file, listing)
            if answer is not None:
                return answer  # type: ignore[no-any-return]
        return parse_index(raw, file, listing)


__all__ = ["HeaderParser", "index_sizes", "kept", "parse_and_keep", "serve"]
