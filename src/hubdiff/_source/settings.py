"""How to talk to the Hub: the endpoint, the token and the limits of every request (``HubSettings``),
kept apart from the client so local-only runs never import it, and below every module that asks."""

from __future__ import annotations

import os
from typing import NamedTuple
from urllib.parse import urlsplit, urlunsplit

from ..errors import UsageError
from ..visible import redacted

DEFAULT_ENDPOINT = "https://huggingface.co"
# From this many shards on, headers are parsed by worker processes (``parsing.HeaderParser``); here, in
# the module every warm run imports anyway, so that parsing (subprocess, the header checks) is not.
MANY_SHARDS = 24
# Header reads in flight at once, over the whole process (a check reads several repos side by side).
# Latency, not bandwidth, bounds a read of many small ranges: 8 at a time made 160 shards 20 round trips
# in sequence, where the Hub's budgets are per 5-minute window, not per connection (hub-docs
# rate-limits.md), so all of a repo's headers may go at once. The cap stays under the 100 connections
# of huggingface_hub's default client (httpx's default Limits), so no read waits for one.
STREAMS = 96


class HubSettings(NamedTuple):
    """How to talk to the Hub. Kept apart from the client so local-only runs never import it. A
    NamedTuple, as every value a warm run builds: ``dataclasses`` imports ``inspect`` (~10 ms of it)."""

    endpoint: str = DEFAULT_ENDPOINT
    token: str | None = None
    timeout_s: float = 10.0
    retries: int = 4  # attempts after the first
    backoff_s: float = 1.0  # 1, 2, 4, 8 ... seconds between attempts
    max_wait_s: float = 60.0  # cap on one wait, Retry-After included
    workers: int = STREAMS  # header reads of one repo at once (see STREAMS)
    progress: bool = False
    # processes that parse headers once a repo has this many shards (see parsing); None: one per core
    processes: int | None = None
    processes_from_shards: int = MANY_SHARDS

    @classmethod
    def from_env(
        cls, endpoint: str | None = None, token: str | None = None, **overrides: object
    ) -> HubSettings:
        """Endpoint and token from the arguments or ``HF_ENDPOINT`` / ``HF_TOKEN``, read now, not at
        import, and checked (``usable_endpoint``, ``usable_token``) before any request."""
        endpoint_from = "--endpoint" if endpoint else "HF_ENDPOINT"
        token_from = "--token" if token else "HF_TOKEN"
        return cls(
            endpoint=usable_endpoint(
                endpoint or os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT, endpoint_from
            ),
            token=usable_token(token or os.environ.get("HF_TOKEN") or None, token_from),
            **overrides,  # type: ignore[arg-type]
        )


def usable_endpoint(endpoint: str, named: str) -> str:
    """The endpoint with its host normalised once (lowercase ASCII, IDNA: fullwidth dots are dots), so
    that the origin every request is compared with is the one the request reaches. An endpoint with a
    user name or password is refused, its credentials not repeated: hubdiff sends the token, and only
    the token, to the endpoint's origin (a password in it would go out with every request)."""
    endpoint = endpoint.rstrip("/")
    try:
        parts = urlsplit(endpoint)
        host = parts.hostname
    except ValueError:
        return endpoint  # not a URL: the first request says so, naming it
    if "@" in parts.netloc:
        raise UsageError(
            f"{named} {redacted(endpoint)!r} carries a user name or password: hubdiff sends only HF_TOKEN, "
            "as a bearer token; give the endpoint without them"
        )
    if host is None or host.isascii():
        return endpoint
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError:
        raise UsageError(f"{named} {endpoint!r}: {host!r} is not a host name") from None
    netloc = ascii_host if parts.port is None else f"{ascii_host}:{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc))


def usable_token(token: str | None, named: str) -> str | None:
    """The token, or a one-line refusal when it holds a character an HTTP header cannot carry (an
    accent, a zero-width space or line separator copied with it); the token itself is not repeated."""
    if token is None:
        return None
    bad = next((ch for ch in token if not "!" <= ch <= "~"), None)
    if bad is not None:
        raise UsageError(
            f"{named} holds U+{ord(bad):04X}, which an HTTP header cannot carry "
            "(a token is printable ASCII): copy it again"
        )
    return token
