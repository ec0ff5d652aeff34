"""A message without tool calls, as the OpenAI SDK dumps it (`"tool_calls": null`, `"function_call": null`), holds no
call: it was refused as a call in an unrecognised shape, so a monitor fed `message.model_dump()` denied every plain
answer. A null is no call; a real call beside or inside it is still read or refused."""
import pytest
from openai.types.chat import ChatCompletionMessage

from veriguard.enforce.extract_errors import ExtractionError
from veriguard.enforce.extractors import tool_calls

CALL = {"id": "c1", "type": "function", "function": {"name": "transfer", "arguments": '{"to": "bob", "amount": 5}'}}


def test_a_plain_answer_dumped_by_the_sdk_holds_no_call():
    dumped = ChatCompletionMessage(role="assistant", content="Done.").model_dump()
    assert dumped["tool_calls"] is None and dumped["function_call"] is None
    assert tool_calls({"message": dumped}) == []


def test_a_call_dumped_by_the_sdk_is_read():
    dumped = ChatCompletionMessage.model_validate({"role": "assistant", "content": None, "tool_calls": [CALL]}).model_dump()
    [call] = tool_calls({"message": dumped})
    assert (call.name, call.arguments) == ("transfer", {"to": "bob", "amount": 5})


def test_a_dumped_history_in_an_argument_is_data_unless_it_holds_a_call():
    plain = ChatCompletionMessage(role="assistant", content="ok").model_dump()
    outer = {"id": "c0", "type": "function", "function": {"name": "summarise", "arguments": {"history": [plain]}}}
    assert [c.name for c in tool_calls({"tool_calls": [outer]})] == ["summarise"]
    calling = ChatCompletionMessage.model_validate({"role": "assistant", "tool_calls": [CALL]}).model_dump()
    outer["function"]["arguments"] = {"history": [calling]}
    with pytest.raises(ExtractionError, match="nested inside the arguments"):
        tool_calls({"tool_calls": [outer]})


@pytest.mark.parametrize("value", [{}, "", 0, False, []])
def test_a_container_key_that_is_not_null_is_still_a_call_container(value):
    with pytest.raises(ExtractionError):
        tool_calls({"message": {"role": "assistant", "function_call": value}})
