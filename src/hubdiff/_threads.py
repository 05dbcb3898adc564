"""Calls side by side in threads, for work that mostly waits: the Hub's answers, header workers.

One way to fan out, shared by the sources (a repo's headers) and the check (a baseline's repos): the
results come back keyed by item whatever the order they finished in, the first failure is raised once
the calls under way have ended, and nothing not yet started is started after it, or after Ctrl-C.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


def each_in_threads(call: Callable[[K], T], items: Sequence[K], threads: int) -> dict[K, T]:
    """``call`` of every item from up to ``threads`` threads (in this one if a single thread would do).
    The first failure, in the items' order among those done, is raised; the rest are never started."""
    if threads <= 1 or len(items) <= 1:
        return {item: call(item) for item in items}
    # the pool is loaded only for calls side by side: concurrent.futures imports logging (~9 ms), a
    # third of what a warm run that asks one revision costs beyond the interpreter and its request
    from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

    pool = ThreadPoolExecutor(max_workers=min(threads, len(items)))
    try:
        futures = [pool.submit(call, item) for item in items]
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        for future in futures:
            if future in done and future.exception() is not None:
                pool.shutdown(wait=True, cancel_futures=True)
                raise future.exception()  # type: ignore[misc]
        return {item: future.result() for item, future in zip(items, futures)}
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # Ctrl-C: only the calls under way finish
