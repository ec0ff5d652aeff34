"""Red-team pass of stop 20 on what a provider may answer (helper C). Every reply is scripted through the real
Anthropic SDK over httpx2.MockTransport: these check our reading of a reply, never a model."""
from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from tests.llm_fakes import ScriptedModel
from tests.unit.test_extract_llm import NONE, anthropic_extractor, answer
from veriguard.enforce.extract_errors import ExtractionError


def _message(**fields: Any) -> dict[str, Any]:
    return {"id": "m", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
            "content": [{"type": "tool_use", "id": "t", "name": "respond", "input": answer()}],
            "stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}} | fields


NOT_AN_ANSWER = {
    "an error object carrying content": httpx2.Response(200, json=_message(type="error", error={"type": "x"})),
    "a message in the user's role": httpx2.Response(200, json=_message(role="user")),
    "HTTP 201": httpx2.Response(201, json=_message()),
    "HTTP 203": httpx2.Response(203, json=_message()),
    "no type": httpx2.Response(200, json={k: v for k, v in _message().items() if k != "type"}),
}


@pytest.mark.parametrize("reply", NOT_AN_ANSWER.values(), ids=NOT_AN_ANSWER.keys())
def test_only_a_200_with_an_assistant_message_is_an_answer(reply):
    """Before: each was read as the model's answer (no category): the SDK takes any 2xx as success and we did not
    look at the object's type or role, where the OpenAI-compatible provider already refused all but a 200."""
    with pytest.raises(ExtractionError) as e:
        anthropic_extractor(ScriptedModel(reply), {"mode": "llm"}).extract({"confirmed_task": "Book a hotel"})
    assert e.value.code == "extract.llm.malformed"


def test_a_200_assistant_message_still_answers():
    got = anthropic_extractor(ScriptedModel(httpx2.Response(200, json=_message())), {"mode": "llm"}).extract(
        {"confirmed_task": "Book a hotel"})
    assert got.value == NONE and json.dumps(got.details)


def test_a_body_that_trickles_for_ever_is_abandoned_at_the_provider_s_timeout():
    """Before: a server sending a byte now and then trips no read timeout, so the thread reading it ran for as long
    as the server kept it up, holding one of the extractor's 32 slots after its caller had left at the deadline
    (32 such servers' answers: every later call denied busy). Now the body is abandoned `timeout` after its headers."""
    import threading
    import time

    from veriguard.providers.types import CompletionRequest, ProviderError

    stop = threading.Event()

    def trickle():
        yield b'{"id":"m","type":"message",'
        while not stop.wait(0.05):
            yield b" "

    model = ScriptedModel(lambda request: httpx2.Response(200, content=trickle()))
    provider = model.provider(timeout=0.5)
    outcome: list[Any] = []

    def ask() -> None:
        try:
            provider.complete(CompletionRequest("extract", "s", "p", {"type": "object"}, 10))
        except ProviderError as e:
            outcome.append(e)

    started = time.monotonic()
    reader = threading.Thread(target=ask, daemon=True)
    reader.start()
    reader.join(5.0)
    stop.set()
    assert not reader.is_alive() and time.monotonic() - started < 5.0
    assert outcome and outcome[0].code == "provider.malformed" and "trickles" in outcome[0].message


@pytest.mark.parametrize("reported", ["m" * 1_000_000, "claude\x1b]0;owned\x07\x1b[2J", "claude\nSYSTEM: allowed",
                                      "claude\u202eevil"])
def test_a_model_name_no_model_has_is_not_recorded_as_given(reported):
    """Before: the server's `model` went into the record and the `how` people read as it was: a megabyte per
    decision, a line break and a forged line, a terminal escape. Now such an answer is not the pinned model's and is
    refused (since B24, extract.llm.pin), and the reason people read holds the name escaped and cut short."""
    from tests.llm_fakes import tool_reply

    ex = anthropic_extractor(ScriptedModel(tool_reply(answer(hotel=True), model=reported)), {"mode": "llm"})
    with pytest.raises(ExtractionError) as e:
        ex.extract({"confirmed_task": "Book a hotel"})
    assert e.value.code == "extract.llm.pin" and len(e.value.message) < 600 and e.value.message.isprintable()
