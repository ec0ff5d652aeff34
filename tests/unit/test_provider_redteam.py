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
