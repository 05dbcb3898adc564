"""The shipped report templates compiled to Python once per user, jinja2 release and template text.

Compiling ``_macros.md.j2`` and a report template takes ~70 ms, more than the rest of a warm
``hubdiff check``'s own work. So the first run that renders compiles every shipped template, as jinja2's
``compile_templates`` writes them, into a folder of this user's (``code_folder``), and later runs
import them from there. The folder's name is a digest of everything the code depends on: the installed
jinja2's version, the environment's options and each template's sha256. Another jinja2, an edited
template or a changed option names another folder, so nothing compiled can go stale, and nothing
generated is committed.

The modules are code, so they are read back only from a folder no one else can have written:
``~/.cache/hubdiff/templates`` (or under ``$XDG_CACHE_HOME``), never the data cache (``HUBDIFF_CACHE``,
which CI restores from other runs), each folder on the way this user's own and closed to others, each
module a regular file of this user's that no one else can write. Anything else (another owner, a
symlink, a group-writable file, a folder that cannot be made) and the templates are compiled in memory,
as correct and ~70 ms slower.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import jinja2

# A file-wide lint waiver and no formatting: the code is jinja2's, and its line table (``debug_info``)
# points template lines at these lines, moved down by the header.
HEADER = "# ruff: noqa\n# fmt: off\n"
_DEBUG_INFO = re.compile(r"^debug_info = '([0-9=&]*)'$", re.M)
_OPTIONS = (
    "block_start_string",
    "variable_start_string",
    "comment_start_string",
    "trim_blocks",
    "lstrip_blocks",
    "keep_trailing_newline",
    "autoescape",
    "newline_sequence",
    "optimized",
)
_UID = os.getuid() if hasattr(os, "getuid") else None


def template_names() -> list[str]:
    """The shipped templates: every ``*.j2`` of ``hubdiff.templates``."""
    return sorted(p.name for p in files("hubdiff.templates").iterdir() if p.name.endswith(".j2"))


def source_of(name: str) -> str:
    return (files("hubdiff.templates") / name).read_text(encoding="utf-8")


def digest(name: str) -> str:
    return hashlib.sha256((files("hubdiff.templates") / name).read_bytes()).hexdigest()


def module_text(env: jinja2.Environment, name: str) -> str:
    """What ``compile_templates`` writes for ``name`` (``env.compile(..., raw=True, defer_init=True)``),
    with the header, the line table moved down by its lines, and a final newline."""
    code = env.compile(source_of(name), name, name, raw=True, defer_init=True)
    shift = HEADER.count("\n")

    def moved(match: re.Match[str]) -> str:
        pairs = [pair.split("=") for pair in match.group(1).split("&") if pair]
        return "debug_info = '" + "&".join(f"{t}={int(c) + shift}" for t, c in pairs) + "'"

    return HEADER + _DEBUG_INFO.sub(moved, code).rstrip("\n") + "\n"


def code_key(env: jinja2.Environment) -> str:
    """What the compiled modules are a function of: jinja2's version, the environment's options (and
    whether it finalizes) and every shipped template's text."""
    import jinja2

    what = [
        jinja2.__version__,
        {option: repr(getattr(env, option)) for option in _OPTIONS},
        env.finalize is not None,
        # how each filter is called is settled at compile time (context, environment or value alone)
        {name: str(getattr(f, "jinja_pass_arg", "")) for name, f in sorted(env.filters.items())},
        {name: digest(name) for name in template_names()},
    ]
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:32]


def code_root() -> Path | None:
    """``$XDG_CACHE_HOME/hubdiff/templates`` (``~/.cache`` by default): the folder of compiled templates,
    apart from the data cache. None without an absolute home for it, or on a system without user ids."""
    if _UID is None:
        return None
    home_cache = Path(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"))
    return home_cache / "hubdiff" / "templates" if home_cache.is_absolute() else None


def _mine(path: Path, kind: int) -> bool:
    """A real ``kind`` (folder or file) of this user's that no other user can write (lstat: a symlink
    is not followed, and is refused)."""
    info = os.lstat(path)
    return stat.S_IFMT(info.st_mode) == kind and info.st_uid == _UID and not info.st_mode & 0o022


def _private_chain(root: Path) -> bool:
    """``root`` and its parent (``hubdiff``, both hubdiff's to make) made if need be, each this user's
    and closed to others' writes (a group-writable one of this user's, as a umask of 002 makes it, is
    closed first)."""
    root.parent.parent.mkdir(parents=True, exist_ok=True)  # the user's cache home, as it is
    for folder in (root.parent, root):
        folder.mkdir(mode=0o700, exist_ok=True)
        info = os.lstat(folder)
        if stat.S_ISDIR(info.st_mode) and info.st_uid == _UID and info.st_mode & 0o022:
            os.chmod(folder, stat.S_IMODE(info.st_mode) & ~0o022)
    return all(_mine(folder, stat.S_IFDIR) for folder in (root.parent, root))


def _usable(folder: Path, names: list[str]) -> bool:
    """Every module there, and the bytecode Python keeps beside them (``__pycache__``), this user's alone."""
    from jinja2 import ModuleLoader

    try:
        bytecode = folder / "__pycache__"
        return (
            _mine(folder, stat.S_IFDIR)
            and all(_mine(folder / ModuleLoader.get_module_filename(name), stat.S_IFREG) for name in names)
            and _mine(bytecode, stat.S_IFDIR)
            and all(_mine(p, stat.S_IFREG) for p in bytecode.iterdir())
        )
    except OSError:
        return False


def code_folder(env: jinja2.Environment) -> Path | None:
    """The folder of ``env``'s compiled templates, compiled now if no run has yet; None where no folder
    of this user's alone can hold them (then the caller compiles in memory)."""
    from jinja2 import ModuleLoader

    root = code_root()
    if root is None:
        return None
    names = template_names()
    folder = root / code_key(env)
    try:
        if not _private_chain(root):
            return None
        if os.path.lexists(folder):
            return folder if _usable(folder, names) else None
        # written whole into a folder of its own, then renamed into place: a run sees all of it or none
        draft = Path(tempfile.mkdtemp(dir=root, prefix=".draft-"))
        try:
            (draft / "__pycache__").mkdir(mode=0o700)
            for name in names:
                (draft / ModuleLoader.get_module_filename(name)).write_text(
                    module_text(env, name), encoding="utf-8"
                )
            try:
                os.rename(draft, folder)
            except OSError:  # another run put its own there first: use that one
                shutil.rmtree(draft, ignore_errors=True)
        except BaseException:
            shutil.rmtree(draft, ignore_errors=True)
            raise
        return folder if _usable(folder, names) else None
    except OSError:
        return None  # a home that is read-only, full or not ours: compiled in memory
