"""The Hub's answers checked into hubdiff's own types before anything uses them: model info
(``RepoInfo``), a page of an owner's model listing (``ListedRepo``), the Hub's parameter counts; a
wrong shape is a ``JSONProblem``, never an exception from deep inside."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .jsonin import JSONProblem, load_json
from .repo_id import is_repo_id

if TYPE_CHECKING:
    import httpx2

_SHA = re.compile(r"[0-9a-f]{40}")
_DTYPE = re.compile(r"[A-Z0-9_]{1,16}")


@dataclass(frozen=True)
class ModelCard:
    """What hubdiff uses of a model card's metadata (the Hub's ``cardData``, the README's YAML header):
    the repos it says it was made from and how. ``base_model_relation: quantized`` is what puts a repo
    under its source's "Quantizations" on the Hub's model tree; a card without it says nothing certain."""

    base_models: tuple[str, ...] = ()
    base_model_relation: str | None = None


MAX_BASE_MODELS = 16  # a merge names a few; more is not a card hubdiff reads


@dataclass(frozen=True)
class RepoInfo:
    """What hubdiff uses of the Hub's model info, checked: the commit, its date, the files and their
    sizes, the name the Hub answers under (its ``id``: the new name of a repo read through a rename),
    whether the Hub has disabled it, and what its card says it was made from."""

    sha: str
    last_modified: str | None
    sizes: dict[str, int | None]
    repo_id: str | None = None
    disabled: bool = False
    card: ModelCard = field(default_factory=ModelCard)


def model_card(data: Any) -> ModelCard:
    """``cardData`` read leniently: a card is its author's free text, so a field of another shape is not
    a malformed answer, only one that says nothing here."""
    if not isinstance(data, dict):
        return ModelCard()
    base = data.get("base_model")
    names = [base] if isinstance(base, str) else base if isinstance(base, list) else []
    usable = tuple(n for n in names[:MAX_BASE_MODELS] if isinstance(n, str) and _usable_id(n))
    relation = data.get("base_model_relation")
    return ModelCard(usable, relation if isinstance(relation, str) and relation.isidentifier() else None)


@dataclass(frozen=True)
class ListedRepo:
    """A repo as its owner's model listing shows it: main's sha and whether it is gated or private."""

    sha: str
    gated: bool = False
    private: bool = False


def _json_body(body: bytes, limit: int) -> Any:
    if len(body) > limit:
        raise JSONProblem(f"is over {limit:,} bytes")
    return load_json(body)


def _field(data: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str = "") -> Any:
    value = data.get(key)
    if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
        raise JSONProblem(f"has {where}{key} of the wrong type ({type(value).__name__})")
    return value


def repo_info(data: Any) -> RepoInfo:
    """The Hub's model info (with ``blobs``) checked into a RepoInfo; wrong shapes are a JSONProblem."""
    if not isinstance(data, dict):
        raise JSONProblem(f"is JSON but not an object ({type(data).__name__})")
    sha = _field(data, "sha", str)
    if sha is None or not _SHA.fullmatch(sha):
        raise JSONProblem(f"gives no commit sha ({str(sha)[:60]!r})")
    siblings = _field(data, "siblings", list) or []
    sizes: dict[str, int | None] = {}
    for i, entry in enumerate(siblings):
        if not isinstance(entry, dict) or not isinstance(entry.get("rfilename"), str):
            raise JSONProblem(f"has siblings[{i}] without a file name")
        size = _field(entry, "size", int, f"siblings[{i}].")
        if size is not None and size < 0:
            raise JSONProblem(f"has siblings[{i}].size {size}")
        name = entry["rfilename"]
        if not name or name.startswith("/") or any(p in ("", ".", "..") for p in name.split("/")):
            raise JSONProblem(f"has siblings[{i}] named outside the repo ({name[:60]!r})")
        if "\\" in name or not name.isprintable():
            raise JSONProblem(f"has siblings[{i}] with an unusable file name ({name[:60]!r})")
        sizes[name] = size
    date = _field(data, "lastModified", str)
    if date is not None:
        try:
            date = datetime.fromisoformat(date).isoformat().replace("+00:00", "Z")
        except ValueError:
            raise JSONProblem(f"has lastModified that is not a date ({date[:40]!r})") from None
    named = data.get("id")
    disabled = data.get("disabled") is True
    return RepoInfo(
        sha,
        date,
        sizes,
        named if isinstance(named, str) and _usable_id(named) else None,
        disabled,
        model_card(data.get("cardData")),
    )


def listed_repos(
    data: Any, out: dict[str, ListedRepo] | None = None, ambiguous: set[str] | None = None
) -> dict[str, ListedRepo]:
    """One page of a model listing: repo id -> main sha and access (repos listed without a sha, or with
    an id that is not owner/name, are skipped), added to ``out`` (earlier pages). A repo listed twice
    with two different entries (a stale sha beside the real head) is dropped, and stays dropped for
    the later pages (``ambiguous``): the listing cannot say which is current, so the repo is asked
    for on its own, as a repo the listing does not show."""
    if not isinstance(data, list):
        raise JSONProblem(f"is JSON but not a list ({type(data).__name__})")
    out = {} if out is None else out
    ambiguous = set() if ambiguous is None else ambiguous
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            raise JSONProblem(f"item {i} is not an object")
        repo, sha = item.get("id"), item.get("sha")
        if isinstance(repo, str) and _usable_id(repo) and isinstance(sha, str) and _SHA.fullmatch(sha):
            gated = item.get("gated")
            entry = ListedRepo(sha, gated not in (None, False), item.get("private") is True)
            if repo in ambiguous:
                continue
            if out.get(repo, entry) != entry:
                del out[repo]
                ambiguous.add(repo)
            else:
                out[repo] = entry
    return out


def _usable_id(repo: str) -> bool:
    """owner/name as the Hub allows them (and huggingface_hub accepts): anything else in a listing is
    dropped rather than requested."""
    return "/" in repo and is_repo_id(repo)


def hub_parameter_counts(data: Any) -> dict[str, int] | None:
    """``safetensors.parameters`` of a model info, checked: dtype -> whole number of elements."""
    counts = data.get("safetensors") if isinstance(data, dict) else None
    counts = counts.get("parameters") if isinstance(counts, dict) else None
    if not isinstance(counts, dict) or not counts or len(counts) > 64:
        return None
    out = {}
    for dtype, n in counts.items():
        if not (
            isinstance(dtype, str)
            and _DTYPE.fullmatch(dtype)
            and isinstance(n, int)
            and not isinstance(n, bool)
        ):
            return None
        if not 0 <= n < 1 << 63:
            return None
        out[dtype] = n
    return dict(sorted(out.items()))


def _next_page(headers: httpx2.Headers) -> str | None:
    match = re.search(r'<([^>]*)>\s*;\s*rel="?next"?', headers.get("Link", ""))
    return match.group(1) if match else None
