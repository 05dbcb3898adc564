"""Pausing the cyclic garbage collector while hundreds of thousands of small tuples are built.

Those objects hold no cycles, but every allocation burst triggers a collection that rescans them all;
pausing it makes reading and diffing a 200,000-tensor checkpoint about a third faster.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
