"""Writing files so that a failed or killed run never leaves a half-written or unreadable one.

Every file hubdiff writes (reports, cache entries, baselines) goes through ``atomic_write_text``: a
temporary sibling renamed over the target, so readers see the old file or the new one, never a mix.
The rename would otherwise give the file mkstemp's private 0600 mode, which breaks a baseline shared
in git or a report served by a web server, so the existing file's mode is kept and a new file gets
what ``open()`` would have given it (0666 less the umask). A run killed inside the write window
leaves a ``.NAME.*.tmp`` sibling; later writes of the same file remove those once they are old
enough that no live writer can own them.

A write that fails (a read-only file or folder, a full disk, a path that is a folder) raises
``WriteError``, one line naming the file; its temporary file is removed and the target left as it was.

``locked`` serialises read-modify-write of one file between processes by locking the folder the file
is in (``flock``): the lock is beside what it protects, so it is the same for every process whatever
its environment (a lock folder under ``TMPDIR`` was not: a cron job and a terminal took two), no
``.lock`` file is ever left next to a baseline in the repository, and nobody can plant one. Where
folders cannot be locked (Windows), ``filelock`` keeps a lock file per target in the user's own cache
folder, one nobody else can write.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from .errors import WriteError

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


FUTURE_SLACK_S = 60.0  # a temp file dated further ahead than this was not made by a live writer


def _remove_stale_tmp(path: Path, older_than_s: float) -> None:
    """Remove ``path``'s leftover temp files older than ``older_than_s`` (all of them at 0), and any
    dated in the future (a clock set back since, or a planted file): no writer now running made it."""
    now = time.time()
    for tmp in path.parent.glob(f".{path.name}.*.tmp"):
        try:
            modified = tmp.stat().st_mtime
            if older_than_s <= 0 or modified <= now - older_than_s or modified > now + FUTURE_SLACK_S:
                tmp.unlink()
        except OSError:
            pass  # another run removed or renamed it first


def atomic_write_text(path: Path, text: str | bytes, *, stale_tmp_after_s: float = STALE_TMP_S) -> None:
    """Replace ``path`` with ``text`` (UTF-8) or bytes in one rename; mode kept, or 0666 less the umask.

    ``stale_tmp_after_s=0`` removes every leftover temp file of ``path``: only safe while holding
    ``locked(path)``, since a concurrent writer's temp file would go too.
    """
    path = Path(path)
    data = text.encode() if isinstance(text, str) else text
    tmp: str | None = None
    try:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except FileExistsError:  # the folder's name is taken by a file: say so, not "File exists"
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR)) from None
        _remove_stale_tmp(path, stale_tmp_after_s)
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except FileNotFoundError:
            mode = 0o666 & ~_umask()
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException as exc:
        if tmp is not None:
            with suppress(OSError):
                os.unlink(tmp)
        if isinstance(exc, OSError):
            raise WriteError(path, f"cannot write: {exc.strerror or exc}") from None
        raise


_UID = os.getuid() if hasattr(os, "getuid") else None  # None on Windows


def _private_folder(folder: Path) -> bool:
    """Whether ``folder`` is (now) a real folder of this user's that no other user can write into."""
    with suppress(FileExistsError):
        folder.mkdir(mode=0o700, parents=True)
    info = os.lstat(folder)  # lstat: a symlink planted at the path is refused, not followed
    mine = _UID is None or (info.st_uid == _UID and not info.st_mode & 0o077)
    return stat.S_ISDIR(info.st_mode) and mine


def lock_folder() -> Path:
    """Where locks live where the folder itself cannot be locked (no ``fcntl``: Windows): the user's
    own cache folder, ``hubdiff-locks``, never the temporary folder, which ``TMPDIR`` (``TEMP``) moves
    from one process to the next."""
    home_cache = Path(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"))
    folder = home_cache / "hubdiff-locks"
    if not home_cache.is_absolute():  # without a home, "~" stays as it is: never a folder in the cwd
        raise OSError(errno.EACCES, "no home folder for the locks")
    if not _private_folder(folder):
        raise OSError(errno.EACCES, f"{folder} is not a folder of this user's alone")
    return folder


def lock_path(path: Path) -> Path:
    """The lock file of ``path`` where the folder itself cannot be locked (see ``lock_folder``)."""
    key = hashlib.sha256(str(Path(path).resolve()).encode()).hexdigest()[:32]
    return lock_folder() / f"{key}.lock"


def _folder_lock(path: Path) -> int:
    """``flock`` on the folder ``path`` is in (made if missing), and the descriptor that holds it.

    The lock is where what it protects is, so every process that writes there shares it, whatever
    its ``TMPDIR``, ``HOME`` or user; no file is made, and the kernel lets go of it when its holder
    dies (kill -9 included) or closes the descriptor."""
    import fcntl

    folder = path.resolve().parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # the folder's name is taken by a file: say so, not "File exists"
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR)) from None
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _can_lock_folders() -> bool:
    try:
        import fcntl
    except ImportError:
        return False
    return hasattr(fcntl, "flock")


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold the inter-process lock of ``path`` (two ``watch --update`` runs at once, say): its folder's.

    The lock is the folder ``path`` is in, so two writers of files in one folder take turns (a
    baseline folder, the cache's refs), and two processes with different environments take the same
    lock. Where folders cannot be locked, a lock file keyed by the path's absolute name in the user's
    cache folder (``lock_path``). A lock that cannot be taken raises ``WriteError`` naming ``path``,
    before anything is read or written.
    """
    path = Path(path)
    if _can_lock_folders():
        try:
            fd = _folder_lock(path)
        except OSError as exc:
            raise WriteError(path, f"cannot lock: {exc.strerror or exc}") from None
        try:
            yield
        finally:
            os.close(fd)
        return
    from filelock import FileLock  # here, not at the top: a run that only writes reports never locks

    try:
        file_lock = FileLock(str(lock_path(path)), mode=0o600)
        file_lock.acquire()
    except OSError as exc:
        raise WriteError(path, f"cannot lock: {exc.strerror or exc}") from None
    try:
        yield
    finally:
        file_lock.release()
