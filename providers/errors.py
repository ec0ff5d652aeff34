"""Provider failures: from an HTTP status or a transport problem to a ProviderError that says what to do."""
from __future__ import annotations

import email.utils
import time
from collections.abc import Iterable, Mapping

from veriguard.providers.types import ProviderError, Raw


MAX_BODY_BYTES = 16 * 1024 * 1024   # an answer (JSON of at most max_tokens) is kilobytes; synth's longest, well under 1 MiB


def capped_body(chunks: Iterable[bytes], where: str, raw: Raw, limit: int = MAX_BODY_BYTES) -> bytes:
    """The response body, read chunk by chunk and abandoned past `limit` bytes (decoded): a server that sends
    gigabytes would otherwise fill the process's memory, on a thread its caller has already left at the deadline."""
    parts, size = [], 0
    for chunk in chunks:
        size += len(chunk)
        if size > limit:
            raise fail("provider.malformed", f"{where} answered with a body over {limit} bytes; no answer is that "
                       "long: check base_url", raw)
        parts.append(chunk)
    return b"".join(parts)


def fail(code: str, message: str, raw: Raw) -> ProviderError:
    return ProviderError(code, message, raw_request=raw[0], raw_response=raw[1])


def retry_after(headers: Mapping[str, str]) -> float | None:
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return float(value) * scale
        except ValueError:
            parsed = email.utils.parsedate_tz(value)
            if parsed is not None:
                return max(0.0, email.utils.mktime_tz(parsed) - time.time())
    return None


def status_error(status: int, headers: Mapping[str, str], detail: str, where: str, raw: Raw) -> ProviderError:
    if status == 429:
        wait = retry_after(headers)
        when = f"retry after {wait:g}s" if wait is not None else "retry later"
        message = f"{where} rate-limited the request (HTTP 429: {detail}); {when}, or run fewer syntheses at once"
        error = fail("provider.rate_limited", message, raw)
        error.retry_after = wait
        return error
    if status in (401, 403):
        code, fix = "provider.auth", "check that the API key is valid and allowed to use this model"
    elif status >= 500:
        code, fix = "provider.server", "the service failed or is overloaded; retry later"
    else:
        code, fix = "provider.bad_request", "check the model name, max_tokens and the schema"
    return fail(code, f"{where} answered HTTP {status}: {detail}; {fix}", raw)
