"""The snapshot cache: one JSON file per (repo, commit sha), plus the last sha seen for each revision.

A snapshot never changes for a given sha, so a cached one is reused without asking the Hub for
anything but the revision's current sha. Writes are atomic (``_files.atomic_write_text``), so a run
that fails or is killed leaves the cache as it was.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from .._files import atomic_write_text
from ..snapshot import Snapshot
from .jsonin import MAX_DEPTH, load_json
from .layout import check_config

_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?$")


def default_cache_dir() -> Path:
    """``$HUBDIFF_CACHE``, else ``$HF_HOME/hubdiff``, else ``~/.cache/huggingface/hubdiff``."""
    if os.environ.get("HUBDIFF_CACHE"):
        return Path(os.environ["HUBDIFF_CACHE"])
    hf_home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "huggingface"
    )
    return Path(hf_home) / "hubdiff"


class SnapshotCache:
    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else default_cache_dir()

    @staticmethod
    def _slug(repo_id: str) -> str:
        if not _REPO_ID.match(repo_id) or ".." in repo_id:
            raise ValueError(f"not a repo id: {repo_id!r}")
        return repo_id.replace("/", "--")

    def _snapshot_path(self, repo_id: str, sha: str) -> Path:
        if not re.fullmatch(r"[0-9a-f]{40}", sha):
            raise ValueError(f"not a commit sha: {sha!r}")
        return self.root / "snapshots" / self._slug(repo_id) / f"{sha}.json"

    def _refs_path(self, repo_id: str) -> Path:
        return self.root / "refs" / f"{self._slug(repo_id)}.json"

    def load(self, repo_id: str, sha: str) -> Snapshot | None:
        """The cached snapshot, or None when there is none or it is not one hubdiff would have written.

        The cache is disk input like any other: it goes through the same JSON and config checks as
        what the Hub sends, so a damaged or planted entry is refetched, never trusted.
        """
        path = self._snapshot_path(repo_id, sha)
        try:
            snapshot = Snapshot.from_json(
                load_json(path.read_bytes(), max_depth=MAX_DEPTH + 2, infinity=True)
            )
            check_config(snapshot.config, "config.json")
        except FileNotFoundError:
            return None
        except (ValueError, KeyError, TypeError, IndexError, AttributeError):
            return None  # unreadable, planted or of an older format: refetch and overwrite
        if snapshot.source != repo_id or snapshot.sha != sha:
            return None
        return snapshot

    def store(self, snapshot: Snapshot) -> None:
        atomic_write_text(self._snapshot_path(snapshot.source, snapshot.sha), snapshot.dumps())

    def known_refs(self, repo_id: str) -> dict[str, str]:
        try:
            refs = json.loads(self._refs_path(repo_id).read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {}
        return refs if isinstance(refs, dict) else {}

    def remember_ref(self, repo_id: str, revision: str, sha: str) -> None:
        refs = self.known_refs(repo_id)
        if refs.get(revision) != sha:
            refs[revision] = sha
            atomic_write_text(self._refs_path(repo_id), json.dumps(refs, sort_keys=True, indent=1))
