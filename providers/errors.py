"""Provider failures: from an HTTP status or a transport problem to a ProviderError that says what to do."""
from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Mapping

from veriguard.providers.types import ProviderError, Raw


def fail(code: str, message: str, raw: Raw) -> ProviderError:
    return ProviderError(code, message, raw_request=raw[0], raw_response=raw[1])


def retry_after(headers: Mapping[str, str]) -> float | None:
    """The seconds a server asks to wait before a retry; None when it names no wait (a negative, NaN or infinite
    number is none: "retry after -5s" or "infs" is not advice)."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            date = _date_wait(value)
            if date is None:
                continue
            return date
        return seconds if math.isfinite(seconds) and seconds >= 0 else None
    return None


def _date_wait(value: str) -> float | None:
    """The seconds until an HTTP date; None when `value` is none (or a year no clock reaches: 99999999999)."""
    parsed = email.utils.parsedate_tz(value)
    try:
        return max(0.0, email.utils.mktime_tz(parsed) - time.time()) if parsed is not None else None
    except (OverflowError, ValueError):
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
