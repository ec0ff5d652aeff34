"""A scripted model behind the real Anthropic SDK: httpx2.MockTransport serves Messages API replies."""
from __future__ import annotations

import json
from typing import Any

import httpx2

from veriguard.providers.anthropic_api import AnthropicProvider

FORMAL = {
    "types": {"Profile": {"record": {"age": "int"}}, "Task": {"record": {"hotel": "bool", "job": "bool"}}},
    "arguments": {"user": {"type": "Profile", "doc": "the user"}, "task": {"type": "Task", "doc": "what the task does"}},
    "tables": {},
    "rules": ('assume sane "Ages are between 0 and 130": user.age >= 0 and user.age <= 130\n'
              'rule hotel "Nobody under 18 may book a hotel": task.hotel ==> user.age >= 18\n'
              'rule job "Nobody under 15 may apply for a job": task.job ==> user.age >= 15\n'),
    "properties": 'property minors "A 17-year-old never books a hotel": task.hotel and user.age == 17 ==> not allowed\n',
    "notes": "",
}
TESTS = {"examples": [
    {"name": "minor hotel", "args": {"user": {"age": 17}, "task": {"hotel": True, "job": False}}, "allowed": False,
     "violations": ["hotel"]},
    {"name": "adult hotel", "args": {"user": {"age": 18}, "task": {"hotel": True, "job": False}}, "allowed": True,
     "violations": []},
    {"name": "child job", "args": {"user": {"age": 14}, "task": {"hotel": False, "job": True}}, "allowed": False,
     "violations": ["job"]},
    {"name": "both", "args": {"user": {"age": 10}, "task": {"hotel": True, "job": True}}, "allowed": False,
     "violations": ["hotel", "job"]},
]}
GOOD_BODY = {"helpers": "", "body": (
    "vg_denied: List[str] = []\n"
    "violations = violation_list(not rule_hotel(task_hotel, user_age), not rule_job(task_job, user_age))\n"
    "return Decision(len(violations) == 0, violations, vg_denied)\n")}
# Off by one at the boundary: 18-year-olds are denied a hotel.
BUGGY_BODY = {"helpers": "", "body": (
    "vg_denied: List[str] = []\n"
    "violations = violation_list(task_hotel and user_age <= 18, not rule_job(task_job, user_age))\n"
    "return Decision(len(violations) == 0, violations, vg_denied)\n")}
QUESTIONS = {"questions": [
    {"id": "inclusive", "question": "Is 18 itself allowed to book a hotel?", "options": ["yes", "no"],
     "suggested": "yes", "why": "'under 18' excludes 18"},
]}
NO_QUESTIONS: dict[str, Any] = {"questions": []}


def reply(data: Any, stop_reason: str = "end_turn", usage: tuple[int, int] = (1000, 200)) -> httpx2.Response:
    text = data if isinstance(data, str) else json.dumps(data)
    return httpx2.Response(200, json={
        "id": "msg_test", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5",
        "content": [{"type": "text", "text": text}] if text else [], "stop_reason": stop_reason,
        "stop_sequence": None, "usage": {"input_tokens": usage[0], "output_tokens": usage[1]}})


def tool_reply(data: Any, model: str = "claude-haiku-4-5", usage: Any = (400, 30),
               name: str = "respond") -> httpx2.Response:
    """A Messages API reply that calls the forced tool with `data` as its input (`usage` as message takes it)."""
    return message([tool_use(data, name)], model=model, usage=usage)


def raw_reply(body: str, status: int = 200) -> httpx2.Response:
    """A reply whose body is the JSON text as written: it can hold what json.dumps never writes (a key twice)."""
    return httpx2.Response(status, content=body.encode(), headers={"content-type": "application/json"})


def api_error(status: int, kind: str, message: str, headers: dict[str, str] | None = None) -> httpx2.Response:
    return httpx2.Response(status, json={"type": "error", "error": {"type": kind, "message": message}},
                           headers=headers or {})


class ScriptedModel:
    """Answers each Messages API call with the next scripted reply; records what was asked."""

    def __init__(self, *replies: Any) -> None:
        self.replies = list(replies)
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.bodies.append(json.loads(request.content))
        if not self.replies:
            raise AssertionError("the loop asked the model more often than scripted")
        nxt = self.replies.pop(0)
        if isinstance(nxt, Exception):
            raise nxt
        if callable(nxt):  # a reply built from the request (a streamed body, a header echoed)
            return nxt(request)
        return nxt if isinstance(nxt, httpx2.Response) else reply(nxt)

    def provider(self, **kw: Any) -> AnthropicProvider:
        return AnthropicProvider(api_key="sk-ant-test", **{"max_retries": 0, **kw},
                                 http_client=httpx2.Client(transport=httpx2.MockTransport(self)))

    def prompt(self, i: int) -> str:
        return "\n".join(m["content"] if isinstance(m["content"], str) else json.dumps(m["content"])
                         for m in self.bodies[i]["messages"])


# --- shared by the LLM extractor's red-team tests (one helper, not one per pass) ---------------------------------

def message(content: list[dict[str, Any]], stop: Any = "tool_use", *, model: str = "claude-haiku-4-5",
            usage: Any = (5, 5), headers: dict[str, str] | None = None) -> httpx2.Response:
    """A Messages API reply with these content blocks and stop reason; `usage` a pair of counts, or the `usage`
    value as sent (None: left out)."""
    body: dict[str, Any] = {"id": "m", "type": "message", "role": "assistant", "model": model, "content": content,
                            "stop_reason": stop, "stop_sequence": None}
    if usage is not None:
        body["usage"] = ({"input_tokens": usage[0], "output_tokens": usage[1]} if isinstance(usage, tuple) else usage)
    return httpx2.Response(200, content=json.dumps(body).encode(),
                           headers={"content-type": "application/json"} if headers is None else headers)


def tool_use(data: Any, name: str = "respond") -> dict[str, Any]:
    """A tool_use block calling `name` with `data` as its input."""
    return {"type": "tool_use", "id": "toolu_1", "name": name, "input": data}


def agent_text(request: httpx2.Request) -> str:
    """The agent's text an `llm` extractor sent in this request (the JSON string between its marker lines)."""
    return agent_text_in(json.loads(request.content))


def agent_text_of(model: ScriptedModel, i: int) -> str:
    """The agent's text of the `i`-th call `model` answered."""
    return agent_text_in(model.bodies[i])


def agent_text_in(body: dict[str, Any]) -> str:
    """The agent's text in the body of a request an `llm` extractor sent (Anthropic's or OpenAI's: its last message)."""
    return json.loads(body["messages"][-1]["content"].split("\n")[2])


def reading_model(read: Any, calls: int = 8) -> ScriptedModel:
    """A scripted model that answers each of up to `calls` calls with `read(the agent's text)` through the forced
    tool: a script of how a model reads each text, never a model's accuracy."""
    return ScriptedModel(*[lambda request: tool_reply(read(agent_text(request)))] * calls)


def obeying_reader(withdrawal: str, request: str, asked: Any, nothing: Any) -> Any:
    """How a model that obeys a withdrawing clause reads each text it is sent, as a `read` for reading_model:
    `nothing` when the text holds `withdrawal`, else `asked` when it holds `request`, else `nothing`. A script of a
    model that the agent's text steers, never a model's accuracy."""
    def read(text: str) -> Any:
        return asked if request in text and withdrawal not in text else nothing
    return read
