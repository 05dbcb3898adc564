"""Writing files so that a failed or killed run never leaves a half-written or unreadable one.

Every file hubdiff writes (reports, cache entries, baselines) goes through ``atomic_write_text``: a
temporary sibling renamed over the target, so readers see the old file or the new one, never a mix.
The rename would otherwise give the file mkstemp's private 0600 mode, which breaks a baseline shared
in git or a report served by a web server, so the existing file's mode is kept and a new file gets
what ``open()`` would have given it (0666 less the umask). A run killed inside the write window
leaves a ``.NAME.*.tmp`` sibling; later writes of the same file remove those once they are old
enough that no live writer can own them.

``locked`` serialises read-modify-write of one file between processes with ``filelock`` (portable,
unlike fcntl). Its lock file lives in the temporary folder, keyed by the target's absolute path, so
no ``.lock`` file is ever left next to a baseline in the repository.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

STALE_TMP_S = 600.0  # no write of a text file takes this long; an older temp file is a killed run's
_UMASK_LOCK = threading.Lock()


def _umask() -> int:
    """The process's umask. Linux tells it in /proc/self/status; elsewhere it can only be read by
    setting it, which for an instant changes it for every thread (a folder made then gets 0755)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def _remove_stale_tmp(path: Path, older_than_s: float) -> None:
    cutoff = time.time() - older_than_s
    for tmp in path.parent.glob(f".{path.name}.*.tmp"):
        try:
            if tmp.stat().st_mtime <= cutoff:
                tmp.unlink()
        except OSError:
            pass  # another run removed or renamed it first


def atomic_write_text(path: Path, text: str | bytes, *, stale_tmp_after_s: float = STALE_TMP_S) -> None:
    """Replace ``path`` with ``text`` (UTF-8) or bytes in one rename; mode kept, or 0666 less the umask.

    ``stale_tmp_after_s=0`` removes every leftover temp file of ``path``: only safe while holding
    ``locked(path)``, since a concurrent writer's temp file would go too.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_tmp(path, stale_tmp_after_s)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode() if isinstance(text, str) else text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def lock_path(path: Path) -> Path:
    """Where the lock of ``path`` lives: outside the repository, the same for every process."""
    key = hashlib.sha256(str(Path(path).resolve()).encode()).hexdigest()[:32]
    folder = Path(tempfile.gettempdir()) / "hubdiff-locks"
    folder.mkdir(mode=0o777, exist_ok=True)
    return folder / f"{key}.lock"


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold the inter-process lock of ``path`` (two ``watch --update`` runs at once, say)."""
    from filelock import FileLock  # here, not at the top: a run that only writes reports never locks

    with FileLock(str(lock_path(path)), mode=0o666):
        yield
