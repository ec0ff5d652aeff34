"""The `llm` extractor's HTTP clients take nothing from the monitor's environment (SSL_CERT_FILE, SSL_CERT_DIR,
HTTPS_PROXY, ALL_PROXY, netrc), and every body they read, an error's included, is read capped (helper C, stop 20).
Every model answer is scripted: a real local TLS server process (tests/tls_fake_server.py) or the real Anthropic
SDK over httpx2.MockTransport."""
from __future__ import annotations

import gzip
import json
import ssl
import subprocess
import sys
import urllib.request
import zlib
from pathlib import Path
from typing import Any, Iterator

import httpx2
import pytest

from tests.conftest import ROOT, SPECS
from tests.llm_fakes import ScriptedModel
from tests.tls_fake_server import write_ca_and_server_cert
from tests.unit.test_extract_llm import CFG, NONE, TASK_T, anthropic_extractor, answer, chat
from veriguard.enforce.extract_errors import ExtractionError
from veriguard.enforce.extract_llm import build_llm_extractor

ENVIRONMENT = ("SSL_CERT_FILE", "SSL_CERT_DIR", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy",
               "HTTP_PROXY", "http_proxy", "NETRC", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NO_PROXY", "no_proxy")


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory) -> Iterator[tuple[str, Path]]:
    """(the https URL of a scripted OpenAI-compatible server on 127.0.0.1, the CA that signed its certificate)."""
    ca, cert, key = write_ca_and_server_cert(tmp_path_factory.mktemp("tls"))
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "tls_fake_server.py"), str(cert), str(key)],
                            stdout=subprocess.PIPE, text=True)
    try:
        port = int(proc.stdout.readline())
        yield f"https://127.0.0.1:{port}", ca
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _script(server: tuple[str, Path], *replies: dict[str, Any]) -> None:
    url, ca = server
    context = ssl.create_default_context(cafile=str(ca))
    request = urllib.request.Request(f"{url}/script", data=json.dumps(list(replies)).encode(), method="POST")
    urllib.request.urlopen(request, timeout=5, context=context).read()


def _extractor(url: str, **cfg: Any):
    config = {**CFG, "mode": "llm", "provider": "openai", "base_url": f"{url}/v1", "model": "qwen2.5-7b-instruct",
              "timeout": 2.0, **cfg}
    return build_llm_extractor("task", config, TASK_T, SPECS, check_pins=False)


@pytest.fixture
def clean_env(monkeypatch):
    for name in ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


# --- the environment's CA cannot vouch for a server that answers in the model's place --------------------------

@pytest.mark.parametrize("variable", ["SSL_CERT_FILE", "SSL_CERT_DIR"])
def test_a_ca_named_by_the_environment_is_not_trusted(tls_server, clean_env, variable, tmp_path):
    """Before: SSL_CERT_FILE (or SSL_CERT_DIR) naming a CA whoever set the environment holds made its server's
    certificate for the spec's host valid, and that server's answer ("no category") was trusted."""
    ca = tls_server[1]
    if variable == "SSL_CERT_DIR":
        folder = tmp_path / "certs"
        folder.mkdir()
        subject_hash = subprocess.run(["openssl", "x509", "-hash", "-noout", "-in", str(ca)], capture_output=True,
                                      text=True, check=True).stdout.strip()
        (folder / f"{subject_hash}.0").write_bytes(ca.read_bytes())
        clean_env.setenv(variable, str(folder))
    else:
        clean_env.setenv(variable, str(ca))
    _script(tls_server, chat(answer()))
    with pytest.raises(ExtractionError) as e:
        _extractor(tls_server[0]).extract({"confirmed_task": "Book a hotel in Rome"})
    assert e.value.code == "extract.llm.network" and "CERTIFICATE_VERIFY_FAILED" in e.value.message


@pytest.mark.parametrize("variable", ["REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"])
def test_other_tools_ca_variables_are_not_trusted_either(tls_server, clean_env, variable):
    clean_env.setenv(variable, str(tls_server[1]))
    _script(tls_server, chat(answer()))
    with pytest.raises(ExtractionError) as e:
        _extractor(tls_server[0]).extract({"confirmed_task": "Book a hotel in Rome"})
    assert e.value.code == "extract.llm.network"


def _headers(server: tuple[str, Path]) -> list[dict[str, str]]:
    context = ssl.create_default_context(cafile=str(server[1]))
    return json.loads(urllib.request.urlopen(f"{server[0]}/headers", timeout=5, context=context).read())


@pytest.fixture
def trusting_test_ca(tls_server, monkeypatch):
    """The extractor's TLS context trusts the test CA (as a spec naming its gateway's CA would): the proxy and
    netrc tests below then see what the client sends once the handshake succeeds."""
    from veriguard.providers import http

    monkeypatch.setattr(http, "tls_context", lambda: ssl.create_default_context(cafile=str(tls_server[1])))


def _listener():
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.setblocking(False)
    return sock


@pytest.mark.parametrize("variable", ["HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"])
def test_an_https_proxy_from_the_environment_is_not_used(tls_server, clean_env, trusting_test_ca, variable):
    """Before: HTTPS_PROXY or ALL_PROXY carried the extractor's requests to the proxy it named (here a socket that
    only records that it was reached: the extraction failed, and with a CA from the environment the proxy could have
    answered)."""
    proxy = _listener()
    try:
        _script(tls_server, chat(answer(hotel=True)))   # before: urllib takes the proxy too
        clean_env.setenv(variable, f"http://127.0.0.1:{proxy.getsockname()[1]}")
        got = _extractor(tls_server[0]).extract({"confirmed_task": "Book a hotel in Rome"})
        with pytest.raises(BlockingIOError):
            proxy.accept()
    finally:
        proxy.close()
    assert got.value == {**NONE, "hotel": True}


def test_netrc_credentials_are_not_sent(tls_server, clean_env, trusting_test_ca, tmp_path):
    """Before: a netrc file (NETRC, or ~/.netrc) with an entry for the model server's host sent its login and
    password to the server as Basic credentials with every extraction that had no api key."""
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login operator password secret-of-another-service\n")
    netrc.chmod(0o600)
    clean_env.setenv("NETRC", str(netrc))
    _script(tls_server, chat(answer(hotel=True)))
    assert _extractor(tls_server[0]).extract({"confirmed_task": "Book a hotel in Rome"}).value["hotel"] is True
    assert "authorization" not in _headers(tls_server)[-1]


# --- every body is read capped, an error's body too -------------------------------------------------------------

def _endless(sent: list[int], chunk: bytes = b" " * 16384, count: int = 10_000) -> Iterator[bytes]:
    for _ in range(count):             # 10,000 x 16 KiB = 160 MiB if read whole
        sent.append(1)
        yield chunk


@pytest.fixture
def small_cap(monkeypatch):
    from veriguard.providers import http

    monkeypatch.setattr(http, "MAX_BODY_BYTES", 64 * 1024)


@pytest.mark.parametrize("status", [400, 429, 500, 529])
def test_anthropic_an_error_body_is_abandoned_past_the_cap(small_cap, status):
    """Before: the SDK read an HTTP error's body whole (to build its APIStatusError) before our code saw it."""
    sent: list[int] = []

    def serve(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(status, headers={"content-type": "application/json"}, content=_endless(sent))

    ex = anthropic_extractor(ScriptedModel(serve), {"mode": "llm"})
    with pytest.raises(ExtractionError) as e:
        ex.extract({"confirmed_task": "Book a hotel in Rome"})
    assert e.value.code == "extract.llm.malformed" and "over 65536 bytes" in e.value.message and len(sent) < 10


@pytest.mark.parametrize("coding", ["gzip", "deflate"])
@pytest.mark.parametrize("status", [200, 500])
def test_anthropic_a_compressed_bomb_is_abandoned_as_it_inflates(small_cap, coding, status):
    """A few KiB on the wire that inflate to 100 MiB: the cap counts decoded bytes as they are produced."""
    plain = b" " * (100 * 1024 * 1024)
    bomb = gzip.compress(plain, 9) if coding == "gzip" else zlib.compress(plain, 9)
    served: list[int] = []

    def serve(request: httpx2.Request) -> httpx2.Response:
        chunks = (bomb[i:i + 4096] for i in range(0, len(bomb), 4096))
        return httpx2.Response(status, headers={"content-type": "application/json", "content-encoding": coding},
                               content=(served.append(len(c)) or c for c in chunks))

    ex = anthropic_extractor(ScriptedModel(serve), {"mode": "llm"})
    with pytest.raises(ExtractionError) as e:
        ex.extract({"confirmed_task": "Book a hotel in Rome"})
    assert e.value.code == "extract.llm.malformed" and "over 65536 bytes" in e.value.message
    assert sum(served) < len(bomb)


@pytest.mark.parametrize("coding", ["br", "zstd", "gzip, gzip", "x-custom"])
def test_an_encoding_not_asked_for_is_refused(coding):
    sent: list[int] = []
    seen: list[str] = []

    def serve(request: httpx2.Request) -> httpx2.Response:
        seen.append(request.headers.get("accept-encoding", ""))
        return httpx2.Response(200, headers={"content-type": "application/json", "content-encoding": coding},
                               content=_endless(sent, count=3))

    ex = anthropic_extractor(ScriptedModel(serve), {"mode": "llm"})
    with pytest.raises(ExtractionError) as e:
        ex.extract({"confirmed_task": "Book a hotel in Rome"})
    assert e.value.code == "extract.llm.malformed" and "not asked for" in e.value.message
    assert seen == ["gzip, deflate"]


def test_a_compressed_answer_still_reads():
    from tests.llm_fakes import tool_reply

    body = tool_reply(answer(hotel=True)).content

    def serve(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "application/json", "content-encoding": "gzip"},
                               content=iter([gzip.compress(body)]))

    got = anthropic_extractor(ScriptedModel(serve), {"mode": "llm"}).extract({"confirmed_task": "Book a hotel"})
    assert got.value == {**NONE, "hotel": True}


def test_openai_an_error_body_is_abandoned_past_the_cap(tls_server, clean_env, trusting_test_ca, small_cap):
    """The OpenAI-compatible provider read error bodies capped already; held here, over a real server."""
    _script(tls_server, {"status": 500, "text": " " * (1024 * 1024)})
    with pytest.raises(ExtractionError) as e:
        _extractor(tls_server[0]).extract({"confirmed_task": "Book a hotel in Rome"})
    assert e.value.code == "extract.llm.malformed" and "over 65536 bytes" in e.value.message
