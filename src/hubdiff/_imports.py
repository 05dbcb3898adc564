"""Imports made with optional packages hidden from them, under the process's one lock for it.

``sys.modules[name] = None`` makes an import of ``name`` fail as if the package were not installed. The
entry is process-wide: a thread importing ``name`` meanwhile would fail too. So every hidden import, and
every import that could want a package another one hides (transformers' classes, which use numpy and
would load torch), holds ``LOCK``; repos checked side by side do both at once.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

LOCK = threading.RLock()


@contextmanager
def hidden(*names: str) -> Iterator[None]:
    """``names`` reported absent for the duration, unless this process has imported them already;
    restored after, so that code beside hubdiff in the process can still import them."""
    with LOCK:
        hide = [name for name in names if name not in sys.modules]
        for name in hide:
            sys.modules[name] = None  # type: ignore[assignment]  # import machinery: "not installed"
        try:
            yield
        finally:
            for name in hide:
                if sys.modules.get(name, 0) is None:
                    del sys.modules[name]
