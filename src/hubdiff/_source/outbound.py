"""The rules every request hubdiff makes obeys, and what the Hub's answers mean, whichever client asks.

Two clients talk to the Hub: huggingface_hub's httpx session (``hub.HubReader``) and, for the one
lookup of a warm run, the standard library (``quick.current_sha``). Their defaults differ: urllib
copies ``Authorization`` to a redirect on any host, httpx keeps it on an http-to-https redirect of
the same host, and neither bounds how long a server may take to send its headers. So neither
client's redirects are trusted; both ask this module:

- the token is sent only to the endpoint's own origin (scheme, host, port), on the first request and
  on every redirect, each checked by ``same_origin`` (the Hub's renames answer 307 to a relative
  ``/api/...`` on the same host, which keeps it; its 302 to a CDN on another host does not);
- one deadline per attempt, ``DEADLINE_TIMEOUTS`` x the timeout, over every hop's connection, status
  line, headers and body: a server that answers each read in time but never finishes is abandoned;
- one rate-limit gate for the process (``GATE``), which every request waits on: a 429 pauses every
  thread and every repo of the run at once, for what the Hub's ``RateLimit`` header says (capped),
  and an answer whose ``RateLimit`` shows the window's budget nearly spent spaces the next requests
  over what is left of the window, so that the Hub is not asked until it refuses;
- one wording for the Hub's refusals (``refusal``), so that a warm run and a cold one say the same;
- one proxy policy (``proxy_for``: ``HTTPS_PROXY``/``HTTP_PROXY``/``ALL_PROXY`` and ``NO_PROXY``, any
  case) and one TLS policy (``tls_context``: ``SSL_CERT_FILE``/``SSL_CERT_DIR``, else the system's),
  which both clients are given instead of reading the environment each in its own way (urllib never
  read ``ALL_PROXY``; httpx did, and failed on a SOCKS one with an ImportError).

Standard library only: the warm run must not import huggingface_hub.
"""

from __future__ import annotations

import functools
import math
import os
import re
import ssl
import threading
import time
import urllib.request
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from .._say import notice
from ..errors import UsageError
from ..visible import printable, redacted

# statuses worth asking again (a timeout, the rate limit, the server's own trouble), whichever client asks
RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
DEADLINE_TIMEOUTS = 20  # an attempt still receiving after 20 x --timeout is abandoned (a trickling server)
MAX_REDIRECTS = 20  # as httpx: a loop is a one-line error, not a hang
LOW_BUDGET = 0.1  # requests are spaced once a tenth of a window's budget is left

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


# -- proxies and certificates ------------------------------------------------------------------------


def _bypassed(host: str, no_proxy: str) -> bool:
    """Whether ``NO_PROXY`` names ``host`` (curl's reading, as httpx's: ``*`` for every host, else a
    host and the hosts under it, a leading dot or not, a port ignored)."""
    for entry in (e.strip().lower() for e in no_proxy.split(",")):
        if entry == "*":
            return True
        entry = entry.lstrip(".")
        if entry.startswith("[") and "]" in entry:
            entry = entry[1 : entry.index("]")]
        elif entry.count(":") == 1:
            entry = entry.partition(":")[0]
        if entry and (host == entry or host.endswith("." + entry)):
            return True
    return False


def _named(kind: str) -> str:
    """The environment variable a proxy of ``kind`` came from, as urllib read it (lowercase first)."""
    return next(
        (name for name in (f"{kind}_proxy", f"{kind.upper()}_PROXY") if os.environ.get(name)),
        f"{kind.upper()}_PROXY",
    )


def proxy_for(url: str) -> str | None:
    """The proxy a request for ``url`` goes through, or None for a direct connection: the scheme's own
    variable (``HTTPS_PROXY`` for https), else ``ALL_PROXY``, unless ``NO_PROXY`` names the host. The
    one policy of both clients. A proxy neither can use (SOCKS) is a one-line UsageError naming the
    variable, its credentials redacted."""
    proxies = urllib.request.getproxies_environment()
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if _bypassed(host, proxies.get("no", "")):
        return None
    kind = parts.scheme.lower() if proxies.get(parts.scheme.lower()) else "all"
    proxy = proxies.get(kind)
    if not proxy:
        return None
    if "://" not in proxy:
        proxy = f"http://{proxy}"
    scheme = proxy.partition("://")[0].lower()
    if scheme not in ("http", "https"):
        raise UsageError(
            f"{_named(kind)}={redacted(proxy)!r}: hubdiff reaches the Hub through HTTP proxies only, "
            f"not {scheme}; set an http:// proxy, or name {host} in NO_PROXY"
        )
    return proxy


def tls_context() -> ssl.SSLContext:
    """The certificates both clients trust: ``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` when set (each must
    exist: one that does not is a one-line UsageError naming it), else the system's."""
    return _tls_context(os.environ.get("SSL_CERT_FILE") or None, os.environ.get("SSL_CERT_DIR") or None)


@functools.lru_cache(maxsize=4)
def _tls_context(cafile: str | None, capath: str | None) -> ssl.SSLContext:
    if cafile is not None and not os.path.isfile(cafile):
        raise UsageError(
            f"SSL_CERT_FILE names {cafile!r}, which is not a file: no certificate could be trusted"
        )
    if capath is not None and not os.path.isdir(capath):
        raise UsageError(
            f"SSL_CERT_DIR names {capath!r}, which is not a folder: no certificate could be trusted"
        )
    try:
        if cafile is None and capath is None:
            return ssl.create_default_context()
        return ssl.create_default_context(cafile=cafile, capath=capath)
    except (ssl.SSLError, OSError) as exc:
        raise UsageError(
            f"SSL_CERT_FILE {cafile!r} holds no certificate that can be read ({type(exc).__name__})"
        ) from None


def certificate_problem(exc: BaseException) -> str | None:
    """What was wrong with the server's certificate, when ``exc`` (or what caused it) says so."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, ssl.SSLCertVerificationError):
            return exc.verify_message or "verification failed"
        if "CERTIFICATE_VERIFY_FAILED" in str(exc):
            return "verification failed"
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return None


def trusted_from() -> str:
    """Where the trusted certificates came from, for a line about one that was not trusted."""
    cafile, capath = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
    if cafile or capath:
        return " and ".join(f"{n}={v}" for n, v in (("SSL_CERT_FILE", cafile), ("SSL_CERT_DIR", capath)) if v)
    return "the system's certificates (set SSL_CERT_FILE to a CA bundle that holds the server's issuer)"


# -- what the Hub's answers say -------------------------------------------------------------------------

NOT_FOUND = "repository not found (or private: set HF_TOKEN)"
DISABLED = "disabled on the Hub"
_DISABLED_MESSAGE = "Access to this resource is disabled."  # huggingface_hub's DisabledRepoError test
_PROBLEMS = {  # X-Error-Code -> (problem, access)
    "RevisionNotFound": ("revision not found", None),
    "GatedRepo": ("gated repo: accept its terms on the Hub and set HF_TOKEN", "gated"),
    "RepoNotFound": (NOT_FOUND, "missing"),
    "EntryNotFound": ("file not found", None),
}


def refusal(status: int, headers: Any, token_sent: bool) -> tuple[str, str | None]:
    """What a final 4xx answer means, and the access it denies ("gated", "missing", "disabled" or None).

    The Hub answers an anonymous request for a repo that does not exist, or is private, with a bare
    401: no ``X-Error-Code`` (hub-dialect.md, Errors). huggingface_hub types that as not-found only on
    an https endpoint; here it is not-found whatever the scheme, but only when no token was sent: with
    a token the Hub says ``RepoNotFound``, so a bare 401 means the token itself was refused."""
    if headers.get("X-Error-Message") == _DISABLED_MESSAGE:
        return DISABLED, "disabled"
    code = headers.get("X-Error-Code")
    if code in _PROBLEMS:
        return _PROBLEMS[code]
    if status == 401 and not token_sent and code is None:
        return NOT_FOUND, "missing"
    return ("access denied (set HF_TOKEN)" if status in (401, 403) else f"HTTP {status}"), None


_RATE_LIMIT = re.compile(
    r'"(?P<bucket>[A-Za-z0-9_|-]{1,32})"\s*;\s*r\s*=\s*(?P<r>\d{1,9})\s*;\s*t\s*=\s*(?P<t>\d{1,9})'
)
_QUOTA = re.compile(r";\s*q\s*=\s*(?P<q>\d{1,9})")


class RateLimit(NamedTuple):
    """An answer's ``RateLimit`` (IETF draft fields, as the Hub sends them: ``"api";r=0;t=52``) with the
    quota of its ``RateLimit-Policy`` (``"fixed window";"api";q=500;w=300``), when it says one."""

    bucket: str
    remaining: int
    reset_s: int
    quota: int | None


def rate_limit(headers: Any) -> RateLimit | None:
    """The answer's rate limit, or None when it carries none that parses (a hostile one included)."""
    match = _RATE_LIMIT.search(headers.get("RateLimit") or "")
    if match is None:
        return None
    quota = _QUOTA.search(headers.get("RateLimit-Policy") or "")
    return RateLimit(match["bucket"], int(match["r"]), int(match["t"]), int(quota["q"]) if quota else None)


def wait_asked(headers: Any) -> float | None:
    """The seconds a 429 or 503 asks to wait: ``RateLimit``'s reset when its budget is spent (the
    Hub's 429 has no ``Retry-After``: exo-explore/exo test_rate_limit_handling.py), else
    ``Retry-After`` in seconds; None when neither says."""
    limit = rate_limit(headers)
    if limit is not None and limit.remaining == 0:
        return float(max(1, limit.reset_s))
    value = headers.get("Retry-After")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def bucket_of(url: str) -> str:
    """The Hub's bucket a request counts in (hub-docs rate-limits.md): resolves, or API calls."""
    path = urlsplit(url).path
    return "resolvers" if "/resolve/" in path or path.startswith("/api/resolve-cache/") else "api"


# Two answers whose windows reset this close are of one window (the Hub's t= is in whole seconds)
SAME_WINDOW_S = 1.5


class RateGate:
    """Where every request of the process waits its turn: after a 429 until the pause ends, and, in a
    bucket whose budget is nearly spent, until its slot in the rest of the window.

    One for the process (``GATE``): the Hub counts a client's requests together, whichever thread or
    repo of a run makes them, so a pause that only the refused request honoured would let the others
    be refused in turn."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open_at = 0.0  # time.monotonic() before which no request is sent
        self._spacing: dict[str, float] = {}  # bucket -> seconds between requests
        self._last: dict[str, float] = {}  # bucket -> when its last request was let go
        self._said_until = 0.0  # when the Hub's window whose wait was capped, and said so, resets
        # bucket -> (requests left, when its window resets, the server that said so)
        self._left: dict[str, tuple[int, float, tuple[str, str, int] | None]] = {}

    def wait(self, url: str) -> None:
        """Return once ``url`` may be requested."""
        bucket = bucket_of(url)
        while True:
            with self._lock:
                now = time.monotonic()
                if now >= self._open_at:
                    slot = max(now, self._last.get(bucket, 0.0) + self._spacing.get(bucket, 0.0))
                    self._last[bucket] = slot
                    break
                pause = self._open_at - now
            time.sleep(pause)
        if slot > now:
            time.sleep(slot - now)

    def observe(self, headers: Any, cap_s: float, url: str = "") -> None:
        """Space the requests of the answer's bucket by what its ``RateLimit`` says is left: none while
        more than ``LOW_BUDGET`` of the quota is (or when no quota is said), else what is left of the
        window shared among the requests left (at most ``cap_s`` apart). None left is a pause until
        the window resets, as after a 429: the next window's budget is whole, and spaced by nothing."""
        limit = rate_limit(headers)
        if limit is None or limit.bucket not in ("api", "resolvers"):  # the buckets requests wait in
            return
        if limit.remaining == 0:
            self.pause(max(1, limit.reset_s), cap_s)
        server = origin(url)
        with self._lock:
            resets_at, remaining = time.monotonic() + limit.reset_s, limit.remaining
            said = self._left.get(limit.bucket)
            if said is not None and said[2] == server and abs(resets_at - said[1]) < SAME_WINDOW_S:
                # answers to requests sent side by side come in any order, and within one window of
                # one server the budget only falls: an answer saying more is left is the older
                remaining = min(remaining, said[0])
            low = limit.quota is not None and 0 < remaining <= limit.quota * LOW_BUDGET
            self._left[limit.bucket] = remaining, resets_at, server
            self._spacing[limit.bucket] = min(limit.reset_s / (remaining + 1), cap_s) if low else 0.0

    def left(self, bucket: str) -> int | None:
        """The requests the Hub last said were left in ``bucket``'s window, or None when no answer said
        (or that window has reset since): how many a read may send at once without being refused."""
        with self._lock:
            left, resets_at, _ = self._left.get(bucket, (0, 0.0, None))
        return left if time.monotonic() < resets_at else None

    def pause(self, seconds: float, cap_s: float) -> None:
        """No request for ``seconds`` (at most ``cap_s``), and one line on stderr when the Hub asked for
        longer than the cap, once for each of its windows."""
        with self._lock:
            now = time.monotonic()
            self._open_at = max(self._open_at, now + min(seconds, cap_s))
            say = seconds > cap_s and now >= self._said_until
            if say:
                self._said_until = now + seconds
        if say:
            notice(f"hubdiff: the Hub's rate limit resets in {seconds:.0f} s; waiting at most {cap_s:g} s")


GATE = RateGate()


NOTICE_AFTER_S = 4.0  # this long with requests out and nothing answered is said on stderr, well within 10 s


class Waiting:
    """The requests sent and not yet answered, and one watchdog thread that says on stderr what hubdiff
    is waiting for once requests are out and none has been answered for ``after_s``.

    A server that accepts the connection and never answers would otherwise be a minute of silence: each
    attempt runs to its timeout, then the retries and their backoff. Silence is counted from the last
    answer of any request, not per request: a run of hundreds of ranges on a busy machine waits for
    each in a queue, yet answers keep coming. The line names the server, the oldest request and what
    ends the wait; it is a notice (``-q`` drops it), so a CI log shows it too. At most one line every
    ``after_s``, each for requests not yet said. The thread is started once, by the process's first
    request, and sleeps while no request is out."""

    def __init__(self, after_s: float = NOTICE_AFTER_S) -> None:
        self.after_s = after_s
        self._changed = threading.Condition()
        self._sent: dict[int, tuple[float, str, float]] = {}  # key -> (sent at, url, timeout)
        self._said: set[int] = set()
        self._quiet_since = 0.0  # the last answer, or the first request sent since all were answered
        self._keys = 0
        self._watching = False

    def start(self, url: str, timeout_s: float) -> int:
        """A request is sent: the key to ``end`` it with."""
        with self._changed:
            now = time.monotonic()
            if not self._sent:
                self._quiet_since = now
            self._keys += 1
            self._sent[self._keys] = (now, url, timeout_s)
            if not self._watching:
                self._watching = True
                threading.Thread(target=self._watch, name="hubdiff-waiting", daemon=True).start()
            elif len(self._sent) == 1:
                self._changed.notify()
            return self._keys

    def end(self, key: int) -> None:
        """Its answer came (or the attempt was abandoned)."""
        with self._changed:
            self._sent.pop(key, None)
            self._said.discard(key)
            self._quiet_since = time.monotonic()

    def _watch(self) -> None:
        last_said = -math.inf
        while True:
            with self._changed:
                now = time.monotonic()
                unsaid = [at for key, (at, _, _) in self._sent.items() if key not in self._said]
                if not unsaid:
                    self._changed.wait()
                    continue
                due = max(min(unsaid), self._quiet_since, last_said) + self.after_s
                if now < due:
                    self._changed.wait(due - now)
                    continue
                at, url, timeout_s = min(self._sent.values())
                out = len(self._sent)
                self._said.update(self._sent)
                last_said = now
                quiet = now - max(at, self._quiet_since)
            notice(printable(waiting_line(url, quiet, timeout_s, out)))


def waiting_line(url: str, quiet_s: float, timeout_s: float, out: int = 1) -> str:
    """What hubdiff waits for after ``quiet_s`` without an answer (the oldest of ``out`` requests), and
    what ends the wait."""
    parts = urlsplit(url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    others = f" and {out - 1} more" if out > 1 else ""
    return (
        f"hubdiff: waiting for {parts.scheme}://{parts.netloc}: no answer in {quiet_s:.0f} s to GET "
        f"{path[:200]}{others} (an attempt gives up after {timeout_s:g} s without one: --timeout, --retries)"
    )


WAITING = Waiting()
