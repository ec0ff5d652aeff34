"""The HTTP clients of the providers: what they may take from the environment, and how much of a body they read.

`isolated_client()` is the `llm` extractor's (the online path): it takes nothing from the monitor's environment,
no proxy (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY), no netrc credentials and no CA (SSL_CERT_FILE, SSL_CERT_DIR): the
server's certificate is checked against certifi's bundle when certifi is installed, else against the system store
at OpenSSL's compiled-in paths. Whoever sets the monitor's environment could otherwise name a CA of their own and
answer in the model's place. `environment_client(url)` is synth's (an engineer's machine, whose proxy is theirs):
the environment is honoured for https, never for plain http (which may only go to this machine).

Every client the providers use reads bodies through `cap_bodies`: at most MAX_BODY_BYTES on the wire and
MAX_BODY_BYTES decoded, an HTTP error's body included (the SDK reads that one itself), gzip and deflate decoded
here with the cap applied as they inflate, any other content encoding refused (only gzip and deflate are asked
for), and a body still arriving the provider's `timeout` after its headers abandoned (a server that trickles a byte
now and then trips no read timeout). Past the cap the body is abandoned with BodyRefused, which the providers report
as `provider.malformed`. The wait a server asks for before a retry is capped at the same `timeout` (_WaitCap).
"""
from __future__ import annotations

import ssl
import time
import zlib
from collections.abc import Iterator

import httpx2

MAX_BODY_BYTES = 16 * 1024 * 1024   # an answer (JSON of at most max_tokens) is kilobytes; synth's longest, well under 1 MiB
ACCEPTED_ENCODINGS = "gzip, deflate"
_INFLATE_STEP = 64 * 1024            # decoded bytes produced per step, so a bomb never inflates past the cap at once


class BodyRefused(Exception):
    """A response body that is not read: over the cap, or in a content encoding not asked for."""


def tls_context() -> ssl.SSLContext:
    """A client TLS context whose trusted CAs come from no environment variable: certifi's bundle when certifi is
    installed, else the system store at OpenSSL's compiled-in paths (ssl.create_default_context() and
    load_default_certs() read SSL_CERT_FILE and SSL_CERT_DIR)."""
    try:
        import certifi
    except ImportError:
        import httpcore2

        return httpcore2.default_ssl_context(_trust_env=False)
    return ssl.create_default_context(cafile=certifi.where())


def isolated_client() -> httpx2.Client:
    """The online extractor's client: no proxy, netrc or CA from the environment (the provider caps its bodies)."""
    return httpx2.Client(trust_env=False, verify=tls_context())


def environment_client(url: str) -> httpx2.Client:
    """Synth's client: the environment's proxies and CAs for https (the engineer's machine), none for plain http,
    which may only go to this machine and must not be carried in the clear elsewhere."""
    return httpx2.Client(trust_env=httpx2.URL(url).scheme != "http")


def cap_bodies(client: httpx2.Client, seconds: float) -> httpx2.Client:
    """`client`, which from now on asks for gzip or deflate only and reads every body capped (see the module), and
    abandons a body still arriving `seconds` after its headers: a server that trickles its answer (a byte now and
    then, so no read times out) would otherwise hold the reading thread, and with it one of the extractor's slots,
    long after the caller had left at its deadline."""
    hooks = client.event_hooks
    kept = [h for h in hooks["response"] if not isinstance(h, (_BodyCap, _WaitCap))]
    plain = [h for h in hooks["request"] if h is not _ask_plain_encodings]
    client.event_hooks = {"request": [*plain, _ask_plain_encodings],
                          "response": [*kept, _BodyCap(seconds), _WaitCap(seconds)]}
    return client


class _WaitCap:
    """The response hook that caps the wait a server asks for before a retry (Retry-After, retry-after-ms) at
    `seconds`, the provider's timeout: the SDK honours up to 4,294,967 s (50 days), on a thread the caller left at
    its deadline, which held one of the extractor's slots for that long. A value that is no wait (negative, not a
    number, no date) is removed: the SDK then waits its own short backoff."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def __call__(self, response: httpx2.Response) -> None:
        from veriguard.providers.errors import retry_after

        if "retry-after" not in response.headers and "retry-after-ms" not in response.headers:
            return
        wait = retry_after(response.headers)
        for name in ("retry-after", "retry-after-ms"):
            if name in response.headers:
                del response.headers[name]
        if wait is not None:
            response.headers["retry-after"] = f"{min(wait, self.seconds):g}"


def not_json(headers: httpx2.Headers) -> str:
    """What is wrong with a response's Content-Type as an answer's ("" when it is one JSON media type:
    application/json or a +json type, parameters allowed). A body a server labels HTML, text, an event stream, two
    types or none is not the JSON answer the request asked for, however its bytes parse."""
    types = headers.get_list("content-type", split_commas=True)
    media = [t.split(";", 1)[0].strip().lower() for t in types]
    if len(media) == 1 and (media[0] == "application/json" or
                            media[0].startswith("application/") and media[0].endswith("+json")):
        return ""
    shown = ", ".join(t[:60] for t in types[:3]) or "none"
    return f"Content-Type {shown!r}, not one JSON media type (application/json): a body labelled otherwise is no answer"


def _ask_plain_encodings(request: httpx2.Request) -> None:
    request.headers["Accept-Encoding"] = ACCEPTED_ENCODINGS


class _BodyCap:
    """The response hook that puts every body read off the wire behind a _CappedStream."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def __call__(self, response: httpx2.Response) -> None:
        if hasattr(response, "_content"):  # already in memory (a response built in the process, not off the wire)
            return
        codings = [c.strip().lower() for c in response.headers.get("content-encoding", "").split(",")]
        codings = [c for c in codings if c and c != "identity"]
        response.stream = _CappedStream(response.stream, codings, str(response.request.url),
                                        time.monotonic() + self.seconds)
        for name in ("content-encoding", "content-length"):  # the stream now yields the decoded body
            if name in response.headers:
                del response.headers[name]


class _CappedStream(httpx2.SyncByteStream):
    def __init__(self, raw: httpx2.SyncByteStream, codings: list[str], where: str, ends: float) -> None:
        self._raw, self._codings, self._where, self._ends = raw, codings, where, ends

    def __iter__(self) -> Iterator[bytes]:
        if len(self._codings) > 1 or (self._codings and self._codings[0] not in ("gzip", "deflate")):
            raise BodyRefused(f"{self._where} answered in content encoding {', '.join(self._codings)!r}, which was "
                              f"not asked for (Accept-Encoding: {ACCEPTED_ENCODINGS})")
        limit = MAX_BODY_BYTES
        decoded = _inflated(self._wire(limit), self._codings[0]) if self._codings else self._wire(limit)
        size = 0
        for chunk in decoded:
            size += len(chunk)
            if size > limit:
                raise BodyRefused(f"{self._where} answered with a body over {limit} bytes decoded; no answer is "
                                  "that long")
            yield chunk

    def _wire(self, limit: int) -> Iterator[bytes]:
        size = 0
        for chunk in self._raw:
            size += len(chunk)
            if size > limit:
                raise BodyRefused(f"{self._where} sent a body over {limit} bytes; no answer is that long")
            if time.monotonic() > self._ends:
                raise BodyRefused(f"{self._where} was still sending its body past the provider's timeout (a server "
                                  "that trickles its answer)")
            yield chunk

    def close(self) -> None:
        self._raw.close()


def _inflated(chunks: Iterator[bytes], coding: str) -> Iterator[bytes]:
    """The gzip or deflate (zlib, or raw as some servers send it) body of `chunks`, decoded a step at a time."""
    inflater: zlib._Decompress | None = None
    for chunk in chunks:
        if inflater is None:
            raw_deflate = coding == "deflate" and not _zlib_header(chunk)
            inflater = zlib.decompressobj(-zlib.MAX_WBITS if raw_deflate else zlib.MAX_WBITS | 32)
        data = chunk
        while data:
            try:
                piece = inflater.decompress(data, _INFLATE_STEP)
            except zlib.error as e:
                raise BodyRefused(f"the {coding} body does not decode ({e})") from None
            yield piece
            data = inflater.unconsumed_tail
            if inflater.eof:
                break
        if inflater.eof and (inflater.unused_data or data):
            raise BodyRefused(f"the {coding} body goes on after its end (a second member, or bytes a reader that "
                              "reads them would take as part of the answer)")
    if inflater is not None:
        yield inflater.flush()
        if not inflater.eof:   # cut short: its end (a gzip CRC and length, a zlib checksum) never came
            raise BodyRefused(f"the {coding} body was cut short before its end, so it is not known to be whole")


def _zlib_header(chunk: bytes) -> bool:
    return len(chunk) >= 2 and chunk[0] & 0x0F == 8 and (chunk[0] << 8 | chunk[1]) % 31 == 0
