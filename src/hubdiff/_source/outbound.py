"""The rules every request hubdiff makes obeys, whichever client makes it.

Two clients talk to the Hub: huggingface_hub's httpx session (``hub.HubReader``) and, for the one
lookup of a warm run, the standard library (``quick.current_sha``). Their defaults differ: urllib
copies ``Authorization`` to a redirect on any host, httpx keeps it on an http-to-https redirect of
the same host, and neither bounds how long a server may take to send its headers. So neither
client's redirects are trusted; both ask this module:

- the token is sent only to the endpoint's own origin (scheme, host, port), on the first request and
  on every redirect, each checked by ``same_origin`` (the Hub's renames answer 307 to a relative
  ``/api/...`` on the same host, which keeps it; its 302 to a CDN on another host does not);
- one deadline per attempt, ``DEADLINE_TIMEOUTS`` x the timeout, over every hop's connection, status
  line, headers and body: a server that answers each read in time but never finishes is abandoned.

Standard library only: the warm run must not import huggingface_hub.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

DEADLINE_TIMEOUTS = 20  # an attempt still receiving after 20 x --timeout is abandoned (a trickling server)
MAX_REDIRECTS = 20  # as httpx: a loop is a one-line error, not a hang

_DEFAULT_PORTS = {"http": 80, "https": 443}
# host and port only: userinfo, percent-escapes, backslashes or spaces are where URL parsers disagree
# about the host a URL leads to, so a URL with any of them is no one's origin
_PLAIN_NETLOC = re.compile(r"[A-Za-z0-9._\-\[\]:]+")


def origin(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an http(s) URL, the default port filled in; None if it has no plain one."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # a port that is not a number, a bracket left open
        return None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname or not _PLAIN_NETLOC.fullmatch(parts.netloc):
        return None
    return parts.scheme, parts.hostname, port if port is not None else _DEFAULT_PORTS[parts.scheme]


def same_origin(url: str, endpoint: str) -> bool:
    """Whether ``url`` may be sent the token: it is on the endpoint's own scheme, host and port."""
    here = origin(url)
    return here is not None and here == origin(endpoint)
