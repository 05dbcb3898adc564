"""The one request a warm run makes, without huggingface_hub: which commit a revision points to now.

Importing huggingface_hub's client costs 0.6-0.8 s, more than everything else a warm run does (a
cached snapshot and its cached metrics are a few KB). So when the cache already holds this revision's
last-seen commit, its current sha is asked for with the standard library: one GET of
``/api/models/{repo}/revision/{revision}``, the route ``model_info`` uses. Anything but a clean answer
(no answer, a timeout, a retryable status, a body without a sha) returns None, and the caller takes
the ordinary path through ``HubReader``, with its retries. A final answer (404, 401, a gated repo) is
reported as the ordinary path would: asking again would be a retry that ``--retries 0`` forbids.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from urllib.parse import quote

from .. import __version__
from ..errors import SourceError
from .spec import HubSettings

# as hub.RETRY_STATUS, not imported from there: importing hub loads huggingface_hub
RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})

MAX_BODY = 10_000_000


# The ordinary path's words for the Hub's typed errors (hub.HubReader._attempts), by X-Error-Code
_PROBLEMS = {
    "RevisionNotFound": "revision not found",
    "GatedRepo": "gated repo: accept its terms on the Hub and set HF_TOKEN",
    "RepoNotFound": "repository not found (or private: set HF_TOKEN)",
    "EntryNotFound": "file not found",
}


def _problem(status: int, code: str | None) -> str:
    if code in _PROBLEMS:
        return _PROBLEMS[code]
    return "access denied (set HF_TOKEN)" if status in (401, 403) else f"HTTP {status}"


def current_sha(settings: HubSettings, repo: str, revision: str) -> str | None:
    url = f"{settings.endpoint}/api/models/{repo}/revision/{quote(revision, safe='')}?expand=sha"
    headers = {"User-Agent": f"hubdiff/{__version__}"}
    if settings.token:
        headers["Authorization"] = f"Bearer {settings.token}"
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=settings.timeout_s) as response:
            data = json.loads(response.read(MAX_BODY))
    except urllib.error.HTTPError as exc:
        if exc.code in RETRY_STATUS:
            return None  # the ordinary path retries as configured
        # the Hub answered: asking again would be a retry nobody asked for (--retries 0)
        raise SourceError(repo, revision, None, _problem(exc.code, exc.headers.get("X-Error-Code"))) from None
    except Exception:  # no answer, or not JSON: the ordinary path asks again and says what went wrong
        return None
    sha = data.get("sha") if isinstance(data, dict) else None
    return sha if isinstance(sha, str) and len(sha) == 40 else None
