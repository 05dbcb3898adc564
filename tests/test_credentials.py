"""Credentials in the environment: never printed, never sent where they do not belong, one line each.

Classes: a URL with userinfo anywhere hubdiff writes one (endpoint, redirect target, proxy), an
endpoint carrying a password, a token no HTTP header can carry, an endpoint spelled with fullwidth dots.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hubdiff._source.spec import HubSettings
from hubdiff.cli import main
from hubdiff.errors import UsageError
from hubdiff.testing import CommitSpec, Fault, HubReplica, RepoSpec
from hubdiff.visible import printable, redacted

from .test_fuzz import FUZZ

TOKEN = "hf_reader"
CONFIG = b'{"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10}'
TENSORS = [(f"model.layers.{i}.w", "F32", (2, 2)) for i in range(2)]

# what a password may hold and still sit in a URL's authority (no /, ?, # or space ends it first)
secrets = st.text(
    st.characters(blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc"), blacklist_characters="/?#"),
    min_size=4,
    max_size=24,
).filter(lambda s: not s.isspace())


@settings(max_examples=200, **FUZZ)
@given(
    scheme=st.sampled_from(["http", "https", "socks5", "socks5h", "HTTP"]),
    user=st.text("abcxyz_.-%40", max_size=8),
    secret=secrets,
    host=st.sampled_from(["127.0.0.1:9", "mirror.example", "[::1]:8080"]),
    around=st.sampled_from(
        ["{}", "cannot connect to {} (ConnectError)", "redirect to {!r}", "<{}>", "{}; x@y"]
    ),
)
def test_no_credential_of_a_url_survives_a_line(scheme, user, secret, host, around):
    url = f"{scheme}://{user}:{secret}@{host}/api/models?x=1"
    line = printable(around.format(url))
    assert f"{scheme}://***@{host}/api/models?x=1" in line
    assert secret not in line.replace(f"{host}/api/models?x=1", "")


def test_text_without_a_url_is_left_alone():
    for text in ("user@example.com", "org/m@main", "a://b", "ftp://host/x@y"):
        assert redacted(text) == text


def hubdiff(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hubdiff", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
    )


@pytest.mark.parametrize("how", ["HF_ENDPOINT", "--endpoint"])
def test_an_endpoint_with_a_password_is_refused_without_repeating_it(tmp_path, how):
    endpoint = "http://user:SECRET-1234@127.0.0.1:9"
    args = ("snapshot", "org/m", "--cache-dir", str(tmp_path))
    result = (
        hubdiff(*args, HF_ENDPOINT=endpoint)
        if how == "HF_ENDPOINT"
        else hubdiff(*args, "--endpoint", endpoint)
    )
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (
        f"hubdiff: {how} 'http://***@127.0.0.1:9' carries a user name or password: hubdiff sends only "
        "HF_TOKEN, as a bearer token; give the endpoint without them\n"
    )


def test_a_redirect_target_with_a_password_is_refused_and_not_printed(hub, tmp_path, capsys):
    sha = hub.add(RepoSpec("org/x", [CommitSpec({"config.json": CONFIG}, TENSORS)]))[0]
    path = f"/org/x/resolve/{sha}/config.json"
    hub.add_fault(Fault(path, status=302, headers={"Location": f"http://u:SECRET-99@127.0.0.1:1{path}"}))
    code = main(
        ["snapshot", "org/x", "--endpoint", hub.endpoint, "--cache-dir", str(tmp_path), "--retries", "0"]
    )
    out, err = capsys.readouterr()
    assert code == 3 and out == ""
    assert "SECRET-99" not in err and "http://***@127.0.0.1:1/org/x/resolve" in err
    assert len(err.splitlines()) == 1


@settings(max_examples=40, **FUZZ)
@given(
    bad=st.sampled_from(["é", "\u200b", "\u2028", "\r\n", " ", "\x7f", "\u00a0", "😀"]),
    at=st.integers(0, 8),
    how=st.sampled_from(["HF_TOKEN", "--token"]),
)
def test_a_token_no_header_can_carry_is_one_line(bad, at, how):
    token = "hf_abcdefgh"[:at] + bad + "hf_abcdefgh"[at:]
    with pytest.raises(UsageError) as caught:
        if how == "--token":
            HubSettings.from_env("http://127.0.0.1:9", token)
        else:
            os.environ["HF_TOKEN"] = token
            try:
                HubSettings.from_env("http://127.0.0.1:9")
            finally:
                del os.environ["HF_TOKEN"]
    line = caught.value.line()
    assert line.startswith(f"hubdiff: {how} holds U+") and "\n" not in line
    assert "abcdefgh"[max(0, at - 3) :] not in line  # nothing of the token is repeated


def test_a_non_ascii_token_end_to_end_is_exit_2(tmp_path):
    result = hubdiff(
        "snapshot",
        "org/m",
        "--cache-dir",
        str(tmp_path),
        HF_TOKEN="hf_sécret",
        HF_ENDPOINT="http://127.0.0.1:9",
    )
    assert (result.returncode, result.stdout) == (2, "")
    assert (
        result.stderr
        == "hubdiff: HF_TOKEN holds U+00E9, which an HTTP header cannot carry (a token is printable ASCII): copy it again\n"
    )


@pytest.mark.parametrize("dot", ["\u3002", "\uff0e", "\uff61"])
def test_an_endpoint_with_fullwidth_dots_gets_its_token(tmp_path, capsys, dot):
    """IDNA reads these as dots, so the request reaches 127.0.0.1: the token must go with it."""
    with HubReplica(tokens=frozenset({TOKEN})) as hub:
        hub.add(RepoSpec("org/x", [CommitSpec({"config.json": CONFIG}, TENSORS)], private=True))
        port = hub.endpoint.rsplit(":", 1)[1]
        endpoint = f"http://127{dot}0{dot}0{dot}1:{port}"
        assert HubSettings.from_env(endpoint).endpoint == hub.endpoint
        code = main(
            ["snapshot", "org/x", "--endpoint", endpoint, "--token", TOKEN, "--cache-dir", str(tmp_path)]
        )
        out, err = capsys.readouterr()
        assert (code, err) == (0, ""), err
        assert out.startswith("org/x @ main\ncommit ")
        # a private repo: read at all only with the token (without it: "repository not found")
        assert f"Bearer {TOKEN}" in {e.authorization for e in hub.log}
