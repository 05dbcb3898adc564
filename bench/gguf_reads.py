"""Reading one GGUF header by range: hubdiff's reader against the strategies other tools use.

    python bench/gguf_reads.py [--latency-ms 0 30 100] [--tokens 262144]

The replica serves a GGUF whose header is a large tokenizer's (``--tokens`` tokens, their types and
merges, as a 262k-token vocabulary is: ~11 MiB), then its tensor table. Each strategy reads it through
HTTP range requests to the replica (the redirect to the file host followed) until the header parses:

- hubdiff: ``gguf_read.load_hub_gguf``, its own Hub path: a first range of 64 KiB, then one from where
  parsing stopped, read only until the header is complete and then closed;
- doubling from zero (hf-mem 0.5.6): 1 MB from byte 0, then twice as much from byte 0 again;
- fixed steps of 2 MiB (huggingface.js's gguf reader) and of 4 MiB (gguf-parser-go): the next step
  from where the last ended, the whole parsed again after each.

For each: ranges asked, bytes taken by the reader, bytes the replica sent (its log: what went into the
connection, including what a closed read left unread in the transport's buffers), and seconds (median of
``--runs``), with the ratio of time to hubdiff's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from hubdiff._source.gguf import GGUFProblem, parse_gguf
from hubdiff._source.gguf_read import load_hub_gguf
from hubdiff._source.settings import HubSettings
from hubdiff.testing import CommitSpec, Fault, HubReplica, RepoSpec
from hubdiff.testing.gguf_head import gguf_file

REPO, FILE = "bench/Tok-GGUF", "Tok-Q4_K_M.gguf"
MiB = 1 << 20


def release(tokens: int) -> CommitSpec:
    metadata = [
        ("general.architecture", "llama"),
        ("general.name", "Tok"),
        ("llama.block_count", 32),
        ("tokenizer.ggml.model", "gpt2"),
        ("tokenizer.ggml.tokens", [f"\u0120tok{i}" for i in range(tokens)]),
        ("tokenizer.ggml.token_type", [1] * tokens),
        ("tokenizer.ggml.merges", [f"\u0120t ok{i}" for i in range(tokens)]),
    ]
    tensors = [("token_embd.weight", "Q4_K", (tokens, 4096))]
    for n in range(32):
        tensors += [(f"blk.{n}.{w}.weight", "Q4_K", (4096, 4096)) for w in ("attn_q", "attn_k", "attn_v")]
    return CommitSpec({FILE: gguf_file(metadata, tensors)})


class Counted:
    """One range request a call, through urllib (redirects followed), counted."""

    def __init__(self, url: str, size: int) -> None:
        self.url, self.size, self.requests, self.received = url, size, 0, 0

    def __call__(self, start: int, length: int) -> bytes:
        end = min(start + length, self.size) - 1
        request = urllib.request.Request(self.url, headers={"Range": f"bytes={start}-{end}"})
        with urllib.request.urlopen(request) as answer:
            body = answer.read()
        self.requests += 1
        self.received += len(body)
        return body


def hubdiff_reader(fetch: Counted) -> None:
    """hubdiff's own Hub path (model info, then the file's ranges), counted as the others are."""
    endpoint = fetch.url.split(f"/{REPO}/")[0]
    settings = HubSettings(endpoint=endpoint, token=None)
    release = load_hub_gguf(settings, REPO, "main")
    (read,) = release.ggufs
    fetch.requests += len(read.ranges)
    fetch.received += sum(n for _, n in read.ranges)


def doubling_from_zero(fetch: Counted) -> None:
    length = 1_000_000
    while True:
        try:
            parse_gguf(fetch(0, length), fetch.size)
            return
        except GGUFProblem:
            length *= 2


def fixed_steps(step: int) -> Callable[[Counted], None]:
    def read(fetch: Counted) -> None:
        data = b""
        while True:
            data += fetch(len(data), step)
            try:
                parse_gguf(data, fetch.size)
                return
            except GGUFProblem:
                continue

    return read


STRATEGIES = {
    "hubdiff": hubdiff_reader,
    "doubling from 0 (hf-mem)": doubling_from_zero,
    "2 MiB steps (huggingface.js)": fixed_steps(2 * MiB),
    "4 MiB steps (gguf-parser-go)": fixed_steps(4 * MiB),
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency-ms", type=float, nargs="*", default=[0, 30, 100])
    parser.add_argument("--tokens", type=int, default=262_144)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    spec = release(args.tokens)
    head = spec.files[FILE]
    assert not isinstance(head, bytes)
    header_bytes = parse_gguf(head.head, head.size).data_offset
    print(f"{FILE}: header {header_bytes / MiB:.2f} MiB of a {head.size / 2**30:.1f} GiB file")
    whole = b"".join(head.read(0, header_bytes + (1 << 16)))
    parse_times = []
    for _ in range(max(args.runs, 3)):
        started = time.perf_counter()
        parse_gguf(whole, head.size)
        parse_times.append(time.perf_counter() - started)
    print(f"parsing it from memory (hubdiff's parser): {statistics.median(parse_times):.3f} s (median)")
    for latency in args.latency_ms:
        with HubReplica() as hub:
            hub.add(RepoSpec(REPO, [spec]))
            if latency:
                hub.add_fault(Fault("", delay_s=latency / 1000))
            url = f"{hub.endpoint}/{REPO}/resolve/main/{FILE}"
            rows = {}
            for label, strategy in STRATEGIES.items():
                times, fetch, sent = [], Counted(url, head.size), 0
                for _ in range(args.runs):
                    hub.clear()
                    fetch = Counted(url, head.size)
                    start = time.perf_counter()
                    strategy(fetch)
                    times.append(time.perf_counter() - start)
                    sent = sum(e.bytes_sent for e in hub.log if e.status == 206)  # the file host's answers
                rows[label] = (fetch.requests, fetch.received, sent, statistics.median(times))
        ours = rows["hubdiff"]
        print(f"\nat {latency:g} ms a request (each range: the request and its redirect)")
        for label, (requests, received, sent, seconds) in rows.items():
            print(
                f"  {label:30s} {requests:3d} ranges, took {received / MiB:6.2f} MiB "
                f"({received / header_bytes:5.3f}x the header), sent {sent / MiB:6.2f} MiB "
                f"({sent / header_bytes:5.2f}x) {seconds:6.3f} s"
                + (f"  {seconds / ours[3]:5.2f}x hubdiff's time" if label != "hubdiff" else "")
            )


if __name__ == "__main__":
    main()
