"""Tool calls: every recognised shape is parsed exactly, and anything else that looks like a call, or a
call inside a call, denies (finding 11: a reader must not see a benign call while the framework runs another)."""
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veriguard.enforce.extract_errors import ExtractionError
from veriguard.enforce.extractors import _ARGUMENT_KEYS, _NAME_KEYS, ToolCallExtractor, build_extractors, tool_calls
from tests.conftest import examples

ARGS = {"recipient": "acme", "amount_cents": 100}
ARGS_TEXT = json.dumps(ARGS)

RECOGNISED = {
    "anthropic tool_use": {"type": "tool_use", "id": "t1", "name": "pay", "input": ARGS},
    "anthropic server_tool_use": {"type": "server_tool_use", "id": "s1", "name": "pay", "input": ARGS},
    "anthropic mcp_tool_use": {"type": "mcp_tool_use", "id": "m1", "name": "pay", "server_name": "bank", "input": ARGS},
    "openai function call": {"id": "c1", "type": "function", "function": {"name": "pay", "arguments": ARGS_TEXT}},
    "openai function call, object arguments": {"type": "function", "function": {"name": "pay", "arguments": ARGS}},
    "openai tool_calls": {"role": "assistant", "content": None,
                          "tool_calls": [{"id": "c1", "type": "function", "index": 0,
                                          "function": {"name": "pay", "arguments": ARGS_TEXT}}]},
    "openai legacy function_call": {"role": "assistant", "function_call": {"name": "pay", "arguments": ARGS_TEXT}},
    "openai responses function_call": {"type": "function_call", "id": "fc1", "call_id": "c1", "status": "completed",
                                       "name": "pay", "arguments": ARGS_TEXT},
    "mcp tools/call": {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "pay", "arguments": ARGS}},
}


@pytest.mark.parametrize("name", RECOGNISED)
def test_recognised_shapes(name):
    obs = {"session": {"role": "clerk"}, "message": {"content": [{"type": "text", "text": "paying"},
                                                                  RECOGNISED[name]]}}
    (call,) = tool_calls(obs)
    assert call.name == "pay" and call.arguments == ARGS and call.where.startswith("message.content[1]")


def test_mcp_call_without_arguments_has_none():
    for params in ({"name": "ping"}, {"name": "ping", "arguments": None}):
        (call,) = tool_calls({"method": "tools/call", "params": params})
        assert call.arguments == {}
    for empty in ([], "", 0, False):
        with pytest.raises(ExtractionError, match="must be a JSON object"):
            tool_calls({"method": "tools/call", "params": {"name": "ping", "arguments": empty}})


NOT_CALLS = [
    {"type": "text", "text": 'done: {"title": "pay", "input": {}}'},  # JSON written in a string, holding no call
    {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "ok"}]},
    {"type": "function_call_output", "call_id": "c1", "output": "done"},
    {"role": "user", "content": "send 5 dollars"},
    {"name": "alice", "age": 30},
]


@pytest.mark.parametrize("obs", NOT_CALLS, ids=range(len(NOT_CALLS)))
def test_data_that_is_not_a_call(obs):
    assert tool_calls({"x": obs}) == []


def anthropic(**kw):
    return {"type": "tool_use", "id": "t1", "name": "pay", "input": ARGS} | kw


UNPARSEABLE = {
    # recognised shapes, malformed: never skipped
    "tool_use name not a string": anthropic(name=5),
    "tool_use without a name": {"type": "tool_use", "input": ARGS},
    "tool_use input a string": anthropic(input=ARGS_TEXT),
    "tool_use input a list": anthropic(input=[ARGS]),
    "tool_use without input": {"type": "tool_use", "name": "pay"},
    "tool_use with arguments too": anthropic(arguments={"amount_cents": 1}),
    "tool_use with a space in the name": anthropic(name="pay "),
    "tool_use with a look-alike letter": anthropic(name="p\u0430y"),
    "tool_use with an empty name": anthropic(name=""),
    "tool_use with a 200-character name": anthropic(name="p" * 200),
    "server_tool_use with server_name": {"type": "server_tool_use", "name": "pay", "input": ARGS, "server_name": "x"},
    "mcp params not an object": {"method": "tools/call", "params": "pay"},
    "mcp params without a name": {"method": "tools/call", "params": {"arguments": ARGS}},
    "mcp arguments a string": {"method": "tools/call", "params": {"name": "pay", "arguments": ARGS_TEXT}},
    "mcp params with args too": {"method": "tools/call", "params": {"name": "pay", "arguments": ARGS, "args": {}}},
    "mcp with extra top-level key": {"method": "tools/call", "params": {"name": "pay"}, "input": ARGS},
    "openai name not a string": {"type": "function", "function": {"name": ["pay"], "arguments": ARGS_TEXT}},
    "openai arguments not JSON": {"type": "function", "function": {"name": "pay", "arguments": "{amount: 5"}},
    "openai arguments a JSON list": {"type": "function", "function": {"name": "pay", "arguments": "[1, 2]"}},
    "openai arguments a JSON string": {"type": "function", "function": {"name": "pay", "arguments": '"x"'}},
    "openai duplicate keys": {"type": "function", "function": {
        "name": "pay", "arguments": '{"amount_cents": 1, "recipient": "acme", "amount_cents": 999999}'}},
    "openai nested duplicate keys": {"type": "function", "function": {
        "name": "pay", "arguments": '{"meta": {"a": 1, "a": 2}}'}},
    "openai NaN": {"type": "function", "function": {"name": "pay", "arguments": '{"amount_cents": NaN}'}},
    "openai overflowing float": {"type": "function", "function": {"name": "pay", "arguments": '{"a": 1e999}'}},
    "openai 5,000-digit integer": {"type": "function", "function": {"name": "pay",
                                                                    "arguments": '{"a": ' + "9" * 5000 + "}"}},
    "openai deep arguments": {"type": "function", "function": {"name": "pay", "arguments": "[" * 100_000}},
    "openai function without arguments (a tool definition)": {"type": "function", "function": {
        "name": "pay", "parameters": {"type": "object"}}},
    "openai function with an extra key": {"type": "function", "function": {"name": "pay", "arguments": "{}",
                                                                           "input": ARGS}},
    "openai call without type": {"id": "c1", "function": {"name": "pay", "arguments": ARGS_TEXT}},
    "tool_calls not a list": {"tool_calls": {"type": "function", "function": {"name": "pay", "arguments": "{}"}}},
    "tool_calls item not a call": {"tool_calls": [{"id": "c1"}]},
    "tool_calls item in another shape": {"tool_calls": [anthropic()]},
    "legacy function_call arguments bad": {"function_call": {"name": "pay", "arguments": "{"}},
    "legacy function_call a string": {"function_call": "pay"},
    "responses function_call name missing": {"type": "function_call", "arguments": ARGS_TEXT},
    # call-like, not a recognised shape
    "langchain tool_call": {"type": "tool_call", "name": "pay", "args": ARGS, "id": "c1"},
    "custom tool call": {"type": "custom_tool_call", "name": "pay", "input": "..."},
    "type invoke": {"type": "invoke", "target": "pay"},
    "bare name and arguments": {"name": "pay", "arguments": ARGS},
    "bare name and input": {"name": "pay", "input": ARGS},
    "tool and tool_input": {"tool": "pay", "tool_input": ARGS},
    "action and action_input": {"action": "pay", "action_input": ARGS},
    "capitalised keys": {"Name": "pay", "Arguments": ARGS},
    "function and parameters": {"function": "pay", "parameters": ARGS},
    "method tools/invoke": {"method": "tools/invoke", "params": {"name": "pay"}},
    "method call_tool": {"method": "call_tool", "params": {"name": "pay"}},
    # calls nested inside a call's arguments
    "tool_use inside tool_use": anthropic(input={"steps": [anthropic()]}),
    "tool_calls inside mcp arguments": {"method": "tools/call", "params": {"name": "run", "arguments": {
        "then": {"tool_calls": [{"type": "function", "function": {"name": "pay", "arguments": "{}"}}]}}}},
    "function_call inside openai JSON arguments": {"type": "function", "function": {"name": "run", "arguments": json.dumps(
        {"next": {"type": "function_call", "name": "pay", "arguments": "{}"}})}},
    "bare call inside tool_use": anthropic(input={"after": {"name": "pay", "arguments": ARGS}}),
    "legacy function_call key inside input": anthropic(input={"function_call": {"name": "pay", "arguments": "{}"}}),
}


@pytest.mark.parametrize("name", UNPARSEABLE)
def test_call_like_objects_that_cannot_be_parsed_deny(name):
    benign = {"type": "tool_use", "id": "t0", "name": "pay", "input": {"recipient": "acme", "amount_cents": 1}}
    obs = {"message": {"content": [benign, {"type": "text", "text": "x"}]}, "extra": [{"deep": UNPARSEABLE[name]}]}
    with pytest.raises(ExtractionError) as e:
        tool_calls(obs)
    assert e.value.code == "extract.tool_call"


def test_nesting_past_the_limit_denies():
    deep = {"a": 1}
    for _ in range(100):
        deep = {"x": [deep]}
    with pytest.raises(ExtractionError, match="nests deeper"):
        tool_calls(deep)


PAY_TYPE = {"kind": "record", "name": "Payment", "fields": [["recipient", {"kind": "str"}],
                                                             ["amount_cents", {"kind": "int"}]]}


def extractor(**kw):
    return ToolCallExtractor("pay", {"recipient": "recipient", "amount_cents": "amount_cents"}, PAY_TYPE, **kw)


def test_arguments_the_policy_does_not_see_deny_unless_ignored():
    obs = {"c": anthropic(input=ARGS | {"memo": "rent"})}
    with pytest.raises(ExtractionError, match="memo"):
        extractor().extract(obs)
    assert extractor(ignore=("memo",)).extract(obs).value == ARGS


def test_a_default_cannot_be_overridden_by_an_unmapped_argument():
    t = {"kind": "record", "name": "P", "fields": PAY_TYPE["fields"] + [["approved", {"kind": "bool"}]]}
    ex = ToolCallExtractor("pay", {"recipient": "recipient", "amount_cents": "amount_cents"}, t, {"approved": False})
    assert ex.extract({"c": anthropic()}).value["approved"] is False
    with pytest.raises(ExtractionError, match="approved"):
        ex.extract({"c": anthropic(input=ARGS | {"approved": True})})


@pytest.mark.parametrize("name", ["Pay", "PAY", "pay_", "p-ay", "p.ay"])
def test_a_call_of_a_look_alike_tool_name_denies(name):
    obs = {"a": anthropic(), "b": anthropic(name=name, input={"recipient": "evil", "amount_cents": 10 ** 9})}
    with pytest.raises(ExtractionError, match="differs from 'pay'"):
        extractor().extract(obs)


def test_the_same_tool_called_in_two_shapes_denies():
    obs = {"a": anthropic(), "b": RECOGNISED["mcp tools/call"]}
    with pytest.raises(ExtractionError, match="2 calls"):
        extractor().extract(obs)


@pytest.mark.parametrize("amount", ["\u0661\u0662\u0663", "\u00b2", "--5", "5" * 40, True, 1.0, "100", " 7", "007"])
def test_scalars_are_exact(amount):
    """A number written as text is refused too: the tool reads the text itself, and may read it otherwise."""
    with pytest.raises(ExtractionError) as e:
        extractor().extract({"c": anthropic(input={"recipient": "acme", "amount_cents": amount})})
    assert e.value.code == "extract.type"


@pytest.mark.parametrize("flag", ["false", "False", "0", "no", 0])
def test_a_truth_value_written_as_text_is_refused(flag):
    """"false" is true in JavaScript: a tool that tests `if (args.approved)` would act on what the policy read as
    false (red-team pass of 2026-11-23, evening)."""
    t = {"kind": "record", "name": "P", "fields": PAY_TYPE["fields"] + [["force", {"kind": "bool"}]]}
    ex = ToolCallExtractor("pay", {"recipient": "recipient", "amount_cents": "amount_cents", "force": "force"}, t)
    assert ex.extract({"c": anthropic(input=ARGS | {"force": False})}).value["force"] is False
    with pytest.raises(ExtractionError, match="expected true/false"):
        ex.extract({"c": anthropic(input=ARGS | {"force": flag})})


def test_an_int_subclass_is_not_an_int():
    class Sly(int):
        def __lt__(self, other):
            return True

    with pytest.raises(ExtractionError, match="expected an integer"):
        extractor().extract({"c": anthropic(input={"recipient": "acme", "amount_cents": Sly(10 ** 9)})})


def test_ignore_must_be_a_list_of_names():
    cfg = {"payment": {"from": "tool_call", "tool": "pay", "fields": {"recipient": "recipient"}, "ignore": "memo"}}
    with pytest.raises(ExtractionError, match="ignore"):
        build_extractors(cfg, [("payment", PAY_TYPE)], None)


ANY_TYPE = {"kind": "record", "name": "Call", "fields": [["tool", {"kind": "str"}], ["recipient", {"kind": "str"}]]}


def any_tool(**kw):
    return ToolCallExtractor("*", {"tool": "$name", "recipient": "recipient"}, ANY_TYPE, **kw)


@pytest.mark.parametrize("shape", sorted(RECOGNISED))
def test_any_tool_gives_the_called_tools_name(shape):
    got = any_tool(ignore=("amount_cents",)).extract({"m": RECOGNISED[shape]})
    assert got.value == {"tool": "pay", "recipient": "acme"} and "$name" in got.how


@pytest.mark.parametrize("obs,says", [
    ({"text": "no call here"}, "no tool call in the agent's output"),
    ({"a": anthropic(), "b": anthropic(name="other")}, "2 tool calls in one action"),
    ({"a": anthropic(input={"recipient": "acme", "amount_cents": 1, "memo": "x"})}, "memo"),
    ({"a": anthropic(name="pay me")}, "tool name 'pay me'"),
    ({"a": anthropic(input={"amount_cents": 1})}, "no argument 'recipient'"),
    ({"a": anthropic(input={"$name": "pay", "recipient": "acme", "amount_cents": 1})}, r"\$name"),
])
def test_any_tool_denies_what_it_cannot_read_whole(obs, says):
    with pytest.raises(ExtractionError, match=says):
        any_tool(ignore=("amount_cents",)).extract(obs)


def test_the_name_field_works_for_a_named_tool_too():
    ex = ToolCallExtractor("pay", {"tool": "$name", "recipient": "recipient"}, ANY_TYPE, ignore=("amount_cents",))
    assert ex.extract({"c": anthropic()}).value == {"tool": "pay", "recipient": "acme"}


def test_any_tool_needs_a_field_for_the_name():
    cfg = {"call": {"from": "tool_call", "tool": "*", "fields": {"recipient": "recipient"}}}
    with pytest.raises(ExtractionError, match=r"\$name"):
        build_extractors(cfg, [("call", ANY_TYPE)], None)
    cfg["call"]["fields"]["tool"] = "$name"
    assert isinstance(build_extractors(cfg, [("call", ANY_TYPE)], None)["call"], ToolCallExtractor)


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=6),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=15)


@settings(max_examples=examples(300), deadline=None, database=None)
@given(st.sampled_from(sorted(_NAME_KEYS)), st.sampled_from(sorted(_ARGUMENT_KEYS)), JSON, JSON,
       st.lists(st.integers(0, 3), max_size=4))
def test_any_name_and_arguments_pair_next_to_a_benign_call_denies(name_key, arg_key, name, args, path):
    hidden = {name_key: name, arg_key: args}
    obs = {"message": {"content": [anthropic()]}, "more": hidden}
    for i in path:  # bury it
        obs = {"level": [obs] * (i + 1)} if i % 2 else {"k": obs}
    with pytest.raises(ExtractionError):
        tool_calls(obs)


@settings(max_examples=examples(300), deadline=None, database=None)
@given(JSON)
def test_any_json_is_calls_or_an_extraction_error(obs):
    try:
        calls = tool_calls({"o": obs})
    except ExtractionError:
        return
    assert all(type(c.name) is str and type(c.arguments) is dict for c in calls)
