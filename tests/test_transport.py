"""One proxy and TLS policy for both clients (the warm run's standard-library lookup and the cold
path's httpx session): the same variables, the same NO_PROXY, the same certificates, and one line
for what neither can use (a SOCKS proxy, a certificate file that is not there, an untrusted server).
"""

from __future__ import annotations

import http.server
import os
import shutil
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from hubdiff.testing import CommitSpec, RepoSpec

CONFIG = b'{"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10}'
TENSORS = [(f"model.layers.{i}.w", "F32", (2, 2)) for i in range(2)]
WARM = "/api/models/org/x/revision/main?expand=sha"
COLD = "/api/models/org/x/revision/main?blobs=True"


class _Proxy(http.server.BaseHTTPRequestHandler):
    """A forward proxy that logs the absolute URL it is asked for and answers 503."""

    seen: list[str]

    def do_GET(self) -> None:
        self.seen.append(self.path)
        self.send_response(503)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def proxy() -> Iterator[tuple[str, list[str]]]:
    seen: list[str] = []
    handler = type("Logged", (_Proxy,), {"seen": seen})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def hubdiff(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    return subprocess.run(
        [sys.executable, "-m", "hubdiff", *args, "--retries", "0"],
        capture_output=True,
        text=True,
        env={**base, **env},
        timeout=120,
    )


@pytest.mark.parametrize("variable", ["ALL_PROXY", "all_proxy", "HTTP_PROXY", "http_proxy"])
def test_warm_and_cold_take_the_same_proxy_and_the_same_no_proxy(hub, proxy, tmp_path, variable):
    hub.add(RepoSpec("org/x", [CommitSpec({"config.json": CONFIG}, TENSORS)]))
    url, seen = proxy
    args = ("snapshot", "org/x", "--endpoint", hub.endpoint, "--cache-dir", str(tmp_path / "c"))
    assert hubdiff(*args, env={}).returncode == 0  # direct: the cache is warm now
    warm = hubdiff(*args, env={variable: url})
    assert warm.returncode == 3 and len(warm.stderr.splitlines()) == 1, warm.stderr
    # the warm lookup went through the proxy, was refused (503), and the cold path went the same way
    assert seen == [f"{hub.endpoint}{WARM}", f"{hub.endpoint}{COLD}"]
    seen.clear()
    bypassed = hubdiff(*args, env={variable: url, "NO_PROXY": "127.0.0.1"})
    assert (bypassed.returncode, bypassed.stderr, seen) == (0, "", [])
    cold = hubdiff(*args[:-1], str(tmp_path / "cold"), env={variable: url})
    assert cold.returncode == 3 and seen == [f"{hub.endpoint}{COLD}"]


@pytest.mark.parametrize("scheme", ["socks5", "socks5h", "socks4"])
def test_a_socks_proxy_is_one_line_on_both_paths(hub, tmp_path, scheme):
    hub.add(RepoSpec("org/x", [CommitSpec({"config.json": CONFIG}, TENSORS)]))
    args = ("snapshot", "org/x", "--endpoint", hub.endpoint, "--cache-dir", str(tmp_path / "c"))
    assert hubdiff(*args, env={}).returncode == 0
    for cache in (tmp_path / "c", tmp_path / "cold"):  # warm, then cold
        result = hubdiff(*args[:-1], str(cache), env={"ALL_PROXY": f"{scheme}://me:PW-77@127.0.0.1:1080"})
        assert (result.returncode, result.stdout) == (2, "")
        assert result.stderr == (
            f"hubdiff: ALL_PROXY='{scheme}://***@127.0.0.1:1080': hubdiff reaches the Hub through HTTP "
            f"proxies only, not {scheme}; set an http:// proxy, or name 127.0.0.1 in NO_PROXY\n"
        )


def test_a_missing_certificate_file_is_named(tmp_path):
    result = hubdiff(
        "snapshot",
        "org/x",
        "--endpoint",
        "https://127.0.0.1:1",
        "--cache-dir",
        str(tmp_path),
        env={"SSL_CERT_FILE": str(tmp_path / "gone.pem")},
    )
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"hubdiff: SSL_CERT_FILE names {str(tmp_path / 'gone.pem')!r}, which is not a file: "
        "no certificate could be trusted\n"
    )


@pytest.fixture
def untrusted_https(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """An HTTPS server with a self-signed certificate (made by the openssl command line)."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command line")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Proxy)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    _Proxy.seen = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}", cert
    finally:
        server.shutdown()
        server.server_close()


def test_an_untrusted_certificate_is_said_to_be_one(untrusted_https, tmp_path):
    endpoint, cert = untrusted_https
    bundle = tmp_path / "other.pem"
    shutil.copy(ssl.get_default_verify_paths().cafile or cert, bundle)
    for env, trusted in (
        ({"SSL_CERT_FILE": str(bundle)}, f"SSL_CERT_FILE={bundle}"),
        ({"SSL_CERT_FILE": "", "SSL_CERT_DIR": ""}, "the system's certificates"),
    ):
        result = hubdiff(
            "snapshot", "org/x", "--endpoint", endpoint, "--cache-dir", str(tmp_path / "c"), env=env
        )
        assert (result.returncode, result.stdout) == (3, ""), result.stderr
        line = result.stderr
        assert line.startswith(f"hubdiff: org/x@main: the certificate of {endpoint} is not trusted (")
        assert trusted in line and len(line.splitlines()) == 1
    trusting = hubdiff(
        "snapshot",
        "org/x",
        "--endpoint",
        endpoint,
        "--cache-dir",
        str(tmp_path / "c"),
        env={"SSL_CERT_FILE": str(cert)},
    )
    assert "HTTP 503" in trusting.stderr  # trusted once its own certificate is: it answered
