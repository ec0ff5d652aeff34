"""What the two SDK integrations (anthropic_sdk, openai_agents) share: whether the arguments a tool function would
get after its SDK's validation are the data the model sent, which is what the policy decides; the JSON body of a
request their HTTP request hooks read."""
from __future__ import annotations

import datetime
import decimal
import enum
import functools
import json
import uuid
from pathlib import PurePath
from typing import Any, Callable, Mapping

import veriguard.contracts.strict_json as strict_json

VALIDATION_CHANGED = ("the SDK's validation of the arguments changes what {}() would get from what the model sent, which "
                      "is what the policy decides, so it does not run")


def changed_arguments(sent: Mapping[str, Any], got: Mapping[str, Any]) -> str:
    """Why the arguments a tool function gets (`got`: after its SDK's validation, which may run the tool's own
    validators: an alias resolved, dollars made cents) are not the ones the model sent (`sent`), which the policy
    decides; "" when each is the same data. Data is compared as JSON reads it: an enum by its value, a date by its ISO
    text, a pydantic model by its fields, a number by its value (5 and 5.0 are one number; true is not 1)."""
    changed = [f"{name!r} (the model sent {_short(sent[name])}, the function would get {_short(got[name])})"
               for name in sent if name in got and not same_data(sent[name], got[name])]
    return "; ".join(changed[:3])


def same_data(sent: Any, got: Any) -> bool:
    """Whether `got` (a validated value) is the data `sent` (JSON the model wrote) says."""
    if type(sent) is type(got) and type(sent) in PLAIN:   # the common case: a str, int or bool kept as it was
        return bool(sent == got)
    if isinstance(got, (datetime.date, datetime.time, datetime.timedelta)) and type(sent) is str:
        return read_as(type(got), sent) == got   # "…Z" and "…+00:00" are one time; "PT1H" and "01:00:00" one hour
    if isinstance(got, (set, frozenset)) and isinstance(sent, list):   # a set from a list: the same items, none twice
        left = list(got)
        for item in sent:
            match = next((i for i, g in enumerate(left) if same_data(item, g)), None)
            if match is None:
                return False
            left.pop(match)
        return not left
    if isinstance(got, decimal.Decimal) and type(sent) in (int, float, str):
        try:
            return decimal.Decimal(str(sent)) == got
        except decimal.InvalidOperation:
            return False
    got = as_data(got)
    if isinstance(sent, bool) or isinstance(got, bool):
        return type(sent) is type(got) and sent == got
    if isinstance(sent, (int, float)) and isinstance(got, (int, float)):
        return sent == got
    if isinstance(sent, Mapping) and isinstance(got, Mapping):
        return sent.keys() == got.keys() and all(same_data(v, got[k]) for k, v in sent.items())
    if isinstance(sent, (list, tuple)) and isinstance(got, (list, tuple)):
        return len(sent) == len(got) and all(map(same_data, sent, got))
    return type(sent) is type(got) and type(sent) in (str, type(None)) and sent == got


PLAIN = (str, int, float, bool, type(None))


def read_as(kind: type, text: str) -> Any:
    """`text` read as a date, time, datetime or timedelta by pydantic's own reading of JSON text (no validator of the
    tool's), or None when it cannot be: what the model's text says, to compare with what the tool's validation made."""
    try:
        return _adapter(kind).validate_json(json.dumps(text))
    except ValueError:
        return None


@functools.lru_cache(maxsize=8)
def _adapter(kind: type) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(kind)


def as_data(value: Any) -> Any:
    """A validated value as the JSON data it stands for (an enum's value, a UUID's or a path's text, a pydantic model's
    fields as set); a value of another kind is returned as it is, and compares unequal to what the model sent."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (uuid.UUID, PurePath)):
        return str(value)
    dump = getattr(type(value), "model_dump", None)   # a pydantic model: the fields it holds, as the model named them
    if callable(dump):
        return dump(value, exclude_unset=True, by_alias=True)
    return value


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def request_json(request: Any, refused: Callable[[str], BaseException]) -> Any:
    """The JSON body of a POST request (None for other requests, and for a body that is not JSON sent under another
    content type: a file upload); `refused(why)` is raised when a body said to be JSON cannot be read. A body that is
    JSON is read whatever its content type says: the API may read `text/plain` as JSON too."""
    if request.method != "POST":
        return None
    said_json = "json" in request.headers.get("content-type", "").lower()
    try:
        content = request.content or b"{}"
    except Exception:   # a streamed body not read yet
        if said_json:
            raise refused("a JSON request whose body cannot be read: what it enables is unknown") from None
        return None
    encoding = request.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):   # the SDK sends none; the server would decode it and read what is unread here
        raise refused(f"a request body under content-encoding {encoding[:40]!r} cannot be read here: what it enables "
                      "is unknown")
    if not said_json and content.lstrip().removeprefix(b"\xef\xbb\xbf").lstrip()[:1] not in (b"{", b"["):
        return None
    try:   # strictly: a duplicate key ({"tools": [server tool], "tools": []}) may be read otherwise by the server
        return strict_json.loads(content)
    except Exception:
        raise refused("a JSON request whose body cannot be read: what it enables is unknown") from None
