"""The MCP proxy for real: a payments MCP server written here (plain JSON-RPC lines) runs as the proxy's
child, the proxy runs as its own process (`python -m veriguard.enforce.integrations.mcp_proxy`), and a
real MCP client session talks to it. No JVM: the build is made without Nagini."""
import json
import subprocess
import sys
from contextlib import asynccontextmanager
from typing import Any, Literal

import anyio
import pytest

pytest.importorskip("mcp", reason="the MCP proxy needs the mcp SDK")
import mcp_types as types  # noqa: E402
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from veriguard.enforce.decision_log import DecisionLog  # noqa: E402
from veriguard.enforce.integrations.mcp_proxy import main  # noqa: E402
from tests.conftest import ROOT  # noqa: E402
from tests.unit.test_guard import CONTEXT, OVER_LIMIT, PAYMENT  # noqa: E402
from tests.unit.test_monitor import payments_build  # noqa: E402,F401  (fixture)

# The recipient picks how the server misbehaves, so that one server shows every failure (all are on the
# vendor allowlist, so the policy lets the call through to the server). The server speaks MCP's JSON-RPC lines
# itself, without the SDK (whose import costs the child 1.3 s of CPU in each of these tests); each tool call is
# answered on its own thread, so a call that hangs does not hold the next one. The proxy in front of a server
# built with the SDK is exercised by examples/mcp_server_behind_proxy.py (its server,
# examples/payments_mcp_server.py, is the SDK's MCPServer; tests/unit/test_examples.py).
CHILD = '''
import json, os, sys, threading, time

CALLS = sys.argv[1]
lock = threading.Lock()
PAYMENT = {"type": "object", "properties": {"recipient": {"type": "string"}, "amount_cents": {"type": "integer"},
                                            "currency": {"type": "string"}, "method": {"type": "string"}}}
ANSWERS = {
    "tools/list": {"tools": [{"name": "send_payment", "description": "Send a payment.", "inputSchema": PAYMENT}]},
    "resources/list": {"resources": [{"uri": "ledger://today", "name": "ledger"}]},
    "prompts/list": {"prompts": [{"name": "pay_invoice"}]},
    "prompts/get": {"messages": [{"role": "user", "content": {"type": "text", "text": "Pay the invoice."}}]},
    "ping": {},
}

def send(line):
    with lock:
        sys.stdout.write(line + "\\n")
        sys.stdout.flush()

def answer(request_id, result):
    send(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}))

def call_tool(request_id, params):
    args = params.get("arguments") or {}
    with open(CALLS, "a", encoding="utf-8") as f:
        f.write(repr(args) + "\\n")
    who = args.get("recipient")
    if who == "city-utilities":
        os._exit(3)
    if who == "initech-payroll":
        send("}{ this is not JSON-RPC")
        time.sleep(3600)
    if who == "umbrella-insurance":
        answer(request_id, {"content": "not a list"})
        time.sleep(3600)
    if who == "globex-logistics":
        time.sleep(3600)
    answer(request_id, {"content": [{"type": "text", "text": f"sent {args.get('amount_cents')}"}], "isError": False})

calls = []
for line in sys.stdin:
    message = json.loads(line)
    method, request_id, params = message.get("method"), message.get("id"), message.get("params") or {}
    if request_id is None:
        continue                                   # notifications: initialized, cancelled
    if method == "initialize":
        answer(request_id, {"protocolVersion": params["protocolVersion"],
                            "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
                            "serverInfo": {"name": "payments", "version": "1.0"}})
    elif method == "tools/call":
        calls.append(threading.Thread(target=call_tool, args=(request_id, params), daemon=True))
        calls[-1].start()
    elif method == "resources/read":
        answer(request_id, {"contents": [{"uri": params["uri"], "text": "sent today: 0"}]})
    elif method in ANSWERS:
        answer(request_id, ANSWERS[method])
    else:
        send(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": method}}))
for call in calls:                                 # the host is done: answer what is under way, as a server would
    call.join(timeout=5)
'''


class RawToolCall(types.Request[dict, Literal["tools/call"]]):
    """A tools/call with params the typed client would refuse to send."""

    method: Literal["tools/call"] = "tools/call"
    params: dict


@pytest.fixture
def setup(tmp_path, payments_build):
    (tmp_path / "child.py").write_text(CHILD, encoding="utf-8")
    (tmp_path / "context.json").write_text(json.dumps(CONTEXT), encoding="utf-8")
    return {"tmp": tmp_path, "build": payments_build, "calls": tmp_path / "calls.txt", "log": tmp_path / "log.jsonl"}


def proxy_argv(setup, *options: str) -> list[str]:
    return ["-m", "veriguard.enforce.integrations.mcp_proxy", "--build", str(setup["build"]), "--context",
            str(setup["tmp"] / "context.json"), "--log", str(setup["log"]), "--timeout", "1", *options, "--",
            sys.executable, str(setup["tmp"] / "child.py"), str(setup["calls"])]


@asynccontextmanager
async def proxied(setup, *options: str):
    params = StdioServerParameters(command=sys.executable, args=proxy_argv(setup, *options), cwd=str(ROOT),
                                   env={"PYTHONPATH": str(ROOT)})
    with open(setup["tmp"] / "proxy.stderr", "w", encoding="utf-8") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                with anyio.fail_after(60):
                    await session.initialize()
                yield session


def text(result: types.CallToolResult) -> str:
    return " ".join(c.text for c in result.content)


def reached_child(setup) -> list[str]:
    return setup["calls"].read_text().splitlines() if setup["calls"].exists() else []


def test_forwarding_allowed_denied_and_malformed_calls(setup):
    async def main() -> dict[str, Any]:
        async with proxied(setup, "--unchecked", "resources", "--unchecked", "prompts") as s:
            got = {"tools": [t.name for t in (await s.list_tools()).tools],
                   "resources": [r.uri for r in (await s.list_resources()).resources],
                   "read": (await s.read_resource("ledger://today")).contents[0].text,
                   "prompts": [p.name for p in (await s.list_prompts()).prompts],
                   "prompt": (await s.get_prompt("pay_invoice")).messages[0].content.text,
                   "allowed": await s.call_tool("send_payment", PAYMENT),
                   "denied": await s.call_tool("send_payment", OVER_LIMIT),
                   "mistyped": await s.call_tool("send_payment", {**PAYMENT, "amount_cents": "lots"}),
                   "missing": await s.call_tool("send_payment", {"recipient": "acme-supplies"}),
                   "no_arguments": await s.call_tool("send_payment"),
                   "other_tool": await s.call_tool("drop_ledger", {"confirm": True})}
            for case, params in [("string_arguments", {"name": "send_payment", "arguments": "all of it"}),
                                 ("list_arguments", {"name": "send_payment", "arguments": [PAYMENT]}),
                                 ("number_name", {"name": 7, "arguments": PAYMENT}),
                                 ("extra_params", {"name": "send_payment", "arguments": PAYMENT, "then": "drop_ledger"})]:
                got[case] = await s.send_request(RawToolCall(params=params), types.CallToolResult)
            setup["context_file"] = setup["tmp"] / "context.json"
            setup["context_file"].write_text(json.dumps({**CONTEXT, "ledger": {"sent_today_cents": 480000}}))
            got["near_daily_limit"] = await s.call_tool("send_payment", PAYMENT)
            setup["context_file"].unlink()
            got["no_context"] = await s.call_tool("send_payment", PAYMENT)
            return got

    got = anyio.run(main)
    assert got["tools"] == ["send_payment"] and got["resources"] == ["ledger://today"]
    assert got["read"] == "sent today: 0" and got["prompts"] == ["pay_invoice"] and got["prompt"] == "Pay the invoice."
    assert not got["allowed"].is_error and text(got["allowed"]) == "sent 45000"
    for case, says in [("denied", "per-payment limit"), ("mistyped", "extract.type"), ("missing", "fail closed"),
                       ("no_arguments", "fail closed"), ("other_tool", "fail closed"),
                       ("near_daily_limit", "daily limit"), ("no_context", "could not be checked"),
                       ("string_arguments", "the arguments must be an object, got 'all of it'"),
                       ("list_arguments", "the arguments must be an object, got list"),
                       ("number_name", "the tool name must be a string, got 7"),
                       ("extra_params", "params has ['then'], which the proxy does not forward")]:
        assert got[case].is_error and says in text(got[case]), (case, text(got[case]))
    assert reached_child(setup) == [repr(PAYMENT)]
    records = list(DecisionLog(setup["log"]).records())    # every call has its record, refusals unread too
    # each request passed unchecked has an allowed record marked so (M31; before, none)
    assert [(r["arguments"]["method"], r["allowed"]) for r in records if r.get("unchecked")] == [
        ("resources/list", True), ("resources/read", True), ("prompts/list", True), ("prompts/get", True)]
    records = [r for r in records if not r.get("unchecked")]
    assert [r["allowed"] for r in records] == [True] + [False] * 11
    assert all(r["action_id"].isdigit() and r["integration"] == "mcp_proxy" for r in records)
    assert "not valid MCP" in records[6]["fail_closed"] and "could not be checked" in records[-1]["fail_closed"]


class RawRequest(types.Request[dict, str]):
    method: str
    params: dict | None = None


def test_what_the_proxy_answers_itself(setup):
    async def main() -> dict[str, Any]:
        async with proxied(setup) as s:
            got: dict[str, Any] = {"init": s.initialize_result,
                                   "ping": await s.send_request(RawRequest(method="ping"), types.EmptyResult)}
            for method in ("resources/subscribe", "logging/setLevel", "server/discover", "sampling/createMessage"):
                with pytest.raises(MCPError) as refused:
                    await s.send_request(RawRequest(method=method, params={}), types.EmptyResult)
                got[method] = refused.value
            return got

    got = anyio.run(main)
    assert got["init"].server_info.name == "veriguard-proxy:payments"
    assert got["init"].capabilities.tools is not None
    for method in ("resources/subscribe", "logging/setLevel", "server/discover", "sampling/createMessage"):
        assert got[method].code == types.METHOD_NOT_FOUND and method in got[method].message
    assert reached_child(setup) == []


@pytest.mark.parametrize("unchecked", [(), ("prompts",)])
def test_what_the_policy_does_not_decide_is_withheld_unless_named(setup, unchecked):
    """The policy decides tools/call only: a resources/read (any file a filesystem server exposes), a prompts/get
    or a completion never reaches the server unchecked, unless the operator names its group."""
    async def main() -> dict[str, Any]:
        options = [o for group in unchecked for o in ("--unchecked", group)]
        async with proxied(setup, *options) as s:
            got: dict[str, Any] = {"init": s.initialize_result}
            for method, params in [("resources/list", {}), ("resources/read", {"uri": "file:///etc/shadow"}),
                                   ("resources/templates/list", {}), ("prompts/list", {}),
                                   ("prompts/get", {"name": "pay_invoice"})]:
                try:
                    got[method] = await s.send_request(RawRequest(method=method, params=params), types.EmptyResult)
                except MCPError as e:
                    got[method] = e
            return got

    got = anyio.run(main)
    caps = got["init"].capabilities
    assert caps.resources is None and (caps.prompts is not None) == ("prompts" in unchecked)
    for method in ("resources/list", "resources/read", "resources/templates/list"):
        assert isinstance(got[method], MCPError) and got[method].code == types.METHOD_NOT_FOUND
        assert "--unchecked resources" in got[method].message and "tool calls only" in got[method].message
    for method in ("prompts/list", "prompts/get"):
        assert isinstance(got[method], MCPError) != ("prompts" in unchecked), (method, got[method])
    assert reached_child(setup) == []


def test_raw_lines_from_the_host(setup):
    """Garbage from the host gets JSON-RPC errors; the session goes on."""
    argv = proxy_argv(setup)
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2024-11-05",
                                                                       "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        "this is not JSON",
        [1, 2],
        {"jsonrpc": "2.0", "id": [3], "method": "ping"},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "send_payment", "arguments": PAYMENT}},
    ]
    text_in = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    done = subprocess.run([sys.executable, *argv], cwd=ROOT, input=text_in, capture_output=True, text=True,
                          timeout=120, env={"PYTHONPATH": str(ROOT)})
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0, done.stderr
    assert answers[0]["id"] == 1 and answers[0]["result"]["protocolVersion"] == "2024-11-05"
    assert [a["error"]["code"] for a in answers[1:4]] == [types.PARSE_ERROR, types.INVALID_REQUEST,
                                                          types.INVALID_REQUEST]
    assert answers[4]["id"] == 4 and answers[4]["result"]["content"][0]["text"] == "sent 45000"


def test_a_failing_server_denies_and_the_proxy_says_why(setup):
    async def main() -> dict[str, types.CallToolResult]:
        async with proxied(setup) as s:
            got, stderr = {}, setup["tmp"] / "proxy.stderr"
            for who in ("globex-logistics", "initech-payroll", "umbrella-insurance", "city-utilities", "acme-supplies"):
                got[who] = await s.call_tool("send_payment", {**PAYMENT, "recipient": who})
                with anyio.fail_after(30):   # M26: a server still at a call --timeout after it timed out is restarted
                    while "did not answer within" in text(got[who]) and stderr.read_text().count(
                            "was started again") < sum("did not answer within" in text(x) for x in got.values()):
                        await anyio.sleep(0.05)
            return got

    got = anyio.run(main)
    expected = {"globex-logistics": "did not answer within 1 s",
                "initech-payroll": "wrote a line that is not MCP: '}{ this is not JSON-RPC'",
                "umbrella-insurance": "its answer is not valid MCP (content: Input should be a valid list)",
                "city-utilities": "the MCP server is gone",
                "acme-supplies": "the MCP server is gone"}
    for who, says in expected.items():
        assert got[who].is_error and says in text(got[who]), (who, text(got[who]))
        assert ("allowed by the policy but did not complete" in text(got[who])) is (who != "acme-supplies")   # M26
    assert len(reached_child(setup)) == 4
    assert "the MCP server is gone" in (setup["tmp"] / "proxy.stderr").read_text()


def test_terminate_refuses_the_call_and_every_later_one(setup):
    async def main() -> list[types.CallToolResult]:
        async with proxied(setup, "--strategy", "terminate") as s:
            return [await s.call_tool("send_payment", p) for p in (OVER_LIMIT, PAYMENT)]

    stopped, later = anyio.run(main)
    assert stopped.is_error and "Task terminated by policy payments" in text(stopped)
    assert later.is_error and "halted in this run" in text(later)
    assert reached_child(setup) == []


def test_shadow_mode_forwards_and_logs_the_would_be_denial(setup):
    async def main() -> tuple[types.CallToolResult, types.CallToolResult]:
        async with proxied(setup, "--mode", "shadow") as s:
            return (await s.call_tool("send_payment", OVER_LIMIT),
                    await s.send_request(RawToolCall(params={"name": "send_payment", "arguments": "x"}),
                                         types.CallToolResult))

    result, malformed = anyio.run(main)
    assert not result.is_error and text(result) == "sent 250000"
    assert malformed.is_error and "not valid MCP" in text(malformed)      # nothing to forward, shadow or not
    record, refused = DecisionLog(setup["log"]).records()
    assert record["allowed"] is False and record["violations"] == ["per_payment_limit"]
    assert refused["allowed"] is False and refused["mode"] == "shadow" and "not valid MCP" in refused["fail_closed"]
    assert reached_child(setup) == [repr(OVER_LIMIT)]
    assert "shadow mode, not enforced" in (setup["tmp"] / "proxy.stderr").read_text()


@pytest.mark.parametrize("change,says", [
    (lambda argv: argv[:argv.index("--")], "give the MCP server's command after `--`"),
    (lambda argv: argv[:argv.index("--") + 1] + ["no-such-server-binary"], "no executable 'no-such-server-binary'"),
    (lambda argv: [a if a != "1" else "0" for a in argv], "--timeout must be a positive number"),
    (lambda argv: [a.replace("payments", "nowhere") if a.endswith("payments") else a for a in argv],
     "error[load.missing]"),
    (lambda argv: [a if not a.endswith("context.json") else a + ".missing" for a in argv], "does not exist"),
    (lambda argv: ["--mode", "loud"] + argv, "invalid choice: 'loud'"),
    (lambda argv: ["--strategy", "shrug"] + argv, "unknown enforcement strategy 'shrug'"),
    (lambda argv: ["--halt-after", "0"] + argv, "halt_after 0"),
    (lambda argv: ["--log-key", "/nonexistent/veriguard.key"] + argv, "key"),
    (lambda argv: ["--expect-sha256", "0" * 64] + argv, "error[load.expected]"),
])
def test_bad_starts_exit_2_with_the_reason(setup, capsys, change, says):
    assert main(change(proxy_argv(setup)[2:])) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err, err


def test_help_exits_0(capsys):
    assert main(["--help"]) == 0 and "--build DIR [options] -- COMMAND [ARGS...]" in capsys.readouterr().out


def test_a_server_that_never_speaks_mcp_exits_2(setup):
    argv = proxy_argv(setup)
    argv = argv[:argv.index("--") + 1] + [sys.executable, "-c", "print('hello')"]
    done = subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, env={"PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and "did not complete the MCP handshake" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


class FakeStdin:
    def __init__(self):
        self.lines = []

    def write(self, data):
        self.lines.append(json.loads(data))

    def is_closing(self):   # an asyncio StreamWriter's: the proxy asks before each request (M33)
        return False


class FakeChild:
    def __init__(self):
        self.stdin = FakeStdin()


def relay(payments_build, steps, context=CONTEXT, log=None, strategy="block"):
    """A Proxy between a fake host and a fake child: `steps` are ("host" | "child", message or raw line) in order."""
    import asyncio
    import io

    from veriguard.enforce.integrations.mcp_proxy import Proxy
    from tests.unit.test_guard import guard

    init = types.InitializeResult.model_validate({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                                                  "serverInfo": {"name": "s", "version": "1"}})
    host_out, child = io.BytesIO(), FakeChild()

    async def run():
        proxy = Proxy(guard(payments_build, strategy, log=log), child, init, context, 5.0, host_out)
        for side, message in steps:
            line = message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"
            proxy.from_host(line) if side == "host" else proxy.from_child(line)
        return proxy

    proxy = asyncio.run(run())
    return proxy, [json.loads(x) for x in host_out.getvalue().splitlines()], child.stdin.lines


def test_the_childs_own_requests_and_notifications_go_no_further(payments_build):
    proxy, to_host, to_child = relay(payments_build, [
        ("child", {"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": {}}),
        ("child", {"jsonrpc": "2.0", "id": "p1", "method": "ping"}),
        ("child", {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
        ("child", {"jsonrpc": "2.0", "id": 99, "result": {"content": []}}),          # an answer to nothing
    ])
    assert to_host == []
    assert to_child[0]["id"] == "s1" and to_child[0]["error"]["code"] == types.METHOD_NOT_FOUND
    assert to_child[1] == {"jsonrpc": "2.0", "id": "p1", "result": {}}


def test_ids_are_renumbered_and_a_cancellation_follows_them(payments_build):
    call = {"name": "send_payment", "arguments": PAYMENT}
    proxy, to_host, to_child = relay(payments_build, [
        ("host", {"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": call}),
        ("host", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        ("host", {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "a", "reason": "x"}}),
        ("child", {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "late"}]}}),
        ("child", {"jsonrpc": "2.0", "id": 2, "error": {"code": -32000, "message": "busy"}}),
    ])
    assert [m.get("id") for m in to_child] == [1, 2, None]
    assert to_child[0]["params"] == call and to_child[2]["params"] == {"requestId": 1, "reason": "x"}
    assert to_host == [{"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": "busy"}}]   # the late answer is dropped
    assert proxy.pending == {}


def test_a_request_that_reuses_the_id_of_a_pending_one_is_refused_and_the_first_answered(payments_build):
    """Red team F8: an allowed slow call id 7, then a denied call id 7: the host got one answer for id 7 while the
    child ran the first. The second is refused as such, and nothing of it reaches the child."""
    over = {"name": "send_payment", "arguments": OVER_LIMIT}
    proxy, to_host, to_child = relay(payments_build, [
        ("host", {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "send_payment",
                                                                                 "arguments": PAYMENT}}),
        ("host", {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": over}),
        ("host", {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}),
        ("host", {"jsonrpc": "2.0", "id": "7", "method": "tools/list"}),   # "7" is 7 to a lenient client (M26)
        ("child", {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "paid"}]}}),
        ("host", {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": over}),   # free again: decided
    ])
    assert [(m.get("id"), m.get("method")) for m in to_child] == [(1, "tools/call")]
    paid, reused, listed, listed_too, denied = to_host   # M29: a reused id's answer after the answer holding the id
    assert listed_too["id"] == "7" and "still in use" in listed_too["error"]["message"]
    assert reused["id"] == 7 and reused["result"]["isError"] and "still in use" in reused["result"]["content"][0]["text"]
    assert listed["id"] == 7 and listed["error"]["code"] == types.INVALID_REQUEST and "still in use" in listed["error"]["message"]
    assert paid == {"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "paid"}]}}
    assert denied["result"]["isError"] and "still in use" not in denied["result"]["content"][0]["text"]
    assert list(proxy.pending) == []


@pytest.mark.parametrize("params", [{"requestId": 7, "reason": {"x": 1}}, {"requestId": 7, "reason": None},
                                    {"requestId": [7]}, {"requestId": True}, {"reason": "x"}, [7], None])
def test_a_malformed_cancellation_is_dropped(payments_build, params):
    call = {"name": "send_payment", "arguments": PAYMENT}
    proxy, to_host, to_child = relay(payments_build, [
        ("host", {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": call}),
        ("host", {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}),
    ])
    assert [m.get("method") for m in to_child] == ["tools/call"] and to_host == [] and list(proxy.pending) == [1]


def test_an_error_or_an_invalid_result_for_an_allowed_call_is_a_refusal(payments_build):
    call = {"name": "send_payment", "arguments": PAYMENT}
    _, to_host, _ = relay(payments_build, [
        ("host", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}),
        ("child", {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "db down"}}),
        ("host", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}),   # one at a time (a ledger)
        ("child", {"jsonrpc": "2.0", "id": 2}),
    ])
    assert [m["id"] for m in to_host] == [1, 2] and all(m["result"]["isError"] for m in to_host)
    assert "answered with error -32603: 'db down'" in to_host[0]["result"]["content"][0]["text"]
    assert "not valid MCP" in to_host[1]["result"]["content"][0]["text"]


def test_a_lone_surrogate_in_a_message_is_relayed_escaped_and_the_session_goes_on(payments_build):
    """JSON allows "\\ud800" (a lone surrogate, which UTF-8 cannot hold): relayed as the same escape, it
    neither cuts the host off nor fails a forward."""
    proxy, to_host, to_child = relay(payments_build, [
        ("host", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        ("child", {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "t\ud800", "inputSchema": {}}]}}),
        ("host", {"jsonrpc": "2.0", "id": 2, "method": "ping"}),
    ])
    assert not proxy.host_gone
    assert to_host[0]["result"]["tools"][0]["name"] == "t\ud800" and to_host[1] == {"jsonrpc": "2.0", "id": 2, "result": {}}


DEEP = b"[" * 5000 + b"]" * 5000 + b"\n"


def test_a_line_nested_too_deeply_is_not_json_and_the_session_goes_on(payments_build):
    """Deep nesting is a parse error from the host and a stray line from the child, never a RecursionError."""
    call = {"name": "send_payment", "arguments": PAYMENT}
    proxy, to_host, to_child = relay(payments_build, [
        ("host", DEEP),
        ("child", DEEP),
        ("host", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}),
        ("child", {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "sent"}]}}),
    ])
    assert to_host[0]["error"]["code"] == types.PARSE_ERROR and "nested too deeply" in to_host[0]["error"]["message"]
    assert to_host[1] == {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "sent"}]}}
    assert proxy.stray.startswith("'[[[") and not proxy.gone


class ChildOutput:
    def __init__(self, lines):
        self.lines = list(lines)

    async def readline(self):
        return self.lines.pop(0) if self.lines else b""


def test_a_failure_in_the_child_reader_stops_the_child_and_refuses_later_calls(payments_build, monkeypatch):
    import asyncio
    import io

    from veriguard.enforce.integrations.mcp_proxy import Proxy
    from tests.unit.test_guard import guard

    init = types.InitializeResult.model_validate({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                                                  "serverInfo": {"name": "s", "version": "1"}})
    child, host_out, killed = FakeChild(), io.BytesIO(), []
    child.stdout = ChildOutput([b'{"jsonrpc": "2.0", "id": 7, "result": {}}\n', b'{"jsonrpc": "2.0"}\n'])
    child.kill = lambda: killed.append(True)

    def broken(self, line):
        raise RuntimeError("reader bug")

    monkeypatch.setattr(Proxy, "from_child", broken)

    async def run():
        proxy = Proxy(guard(payments_build), child, init, CONTEXT, 5.0, host_out)
        await asyncio.wait_for(proxy.read_child(), 5)
        proxy.from_host(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                    "params": {"name": "send_payment", "arguments": PAYMENT}}).encode())
        return proxy

    proxy = asyncio.run(run())
    answer = json.loads(host_out.getvalue().splitlines()[-1])
    assert killed == [True] and "RuntimeError: reader bug" in proxy.gone
    assert answer["result"]["isError"] and "no later call goes to it" in answer["result"]["content"][0]["text"]
    assert child.stdin.lines == []


def test_a_deep_line_before_the_handshake_answer_is_skipped(tmp_path):
    import asyncio

    from veriguard.enforce.integrations.mcp_proxy import start_child, stop_child

    server = tmp_path / "server.py"
    server.write_text("import json, sys\n"
                      "sys.stdout.write('[' * 5000 + '\\n'); sys.stdout.flush()\n"
                      "request = json.loads(sys.stdin.readline())\n"
                      "print(json.dumps({'jsonrpc': '2.0', 'id': request['id'], 'result': {\n"
                      "    'protocolVersion': '2025-11-25', 'capabilities': {}, 'serverInfo': {'name': 's', 'version': '1'}}}),\n"
                      "      flush=True)\n"
                      "sys.stdin.read()\n", encoding="utf-8")

    async def run():
        child, init = await start_child(sys.executable, [str(server)], 60, None)
        await stop_child(child)
        return init

    assert asyncio.run(run()).server_info.name == "s"


@pytest.mark.parametrize("replace", ["fifo", "directory"])
def test_a_context_file_that_is_no_longer_a_regular_file_refuses_the_call_without_blocking(payments_build, tmp_path,
                                                                                          replace):
    """The context is read at every call: a FIFO put in its place blocked the proxy on that read (red team B)."""
    import os
    import threading

    from veriguard.enforce.integrations.mcp_proxy import context_file

    path = tmp_path / "context.json"
    os.mkfifo(path) if replace == "fifo" else path.mkdir()
    got = []
    steps = [("host", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "send_payment", "arguments": PAYMENT}})]
    worker = threading.Thread(target=lambda: got.append(relay(payments_build, steps, context_file(path))), daemon=True)
    worker.start()
    worker.join(60)
    if worker.is_alive():   # unblock the reader so that the test process can end
        with open(path, "wb"):
            pass
        pytest.fail("the proxy blocked on the context file")
    _, to_host, to_child = got[0]
    assert to_child == [] and to_host[0]["result"]["isError"] is True
    assert "not a regular file" in to_host[0]["result"]["content"][0]["text"]


def test_a_tools_call_without_a_usable_id_is_never_forwarded_and_is_recorded(payments_build, tmp_path):
    """A tools/call sent as a notification, with an id that is null, a boolean or a number that is not an integer,
    or in a batch, has no answer and is not run: it still gets its refusal record (it was dropped unrecorded)."""
    log = tmp_path / "log.jsonl"
    call = {"name": "send_payment", "arguments": OVER_LIMIT}
    proxy, to_host, to_child = relay(payments_build, [
        ("host", {"jsonrpc": "2.0", "method": "tools/call", "params": call}),
        ("host", {"jsonrpc": "2.0", "id": None, "method": "tools/call", "params": call}),
        ("host", {"jsonrpc": "2.0", "id": 1.5, "method": "tools/call", "params": call}),
        ("host", json.dumps([{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}]).encode() + b"\n"),
    ], log=log)
    assert to_child == [] and [a["error"]["code"] for a in to_host] == [types.INVALID_REQUEST] * 3
    records = list(DecisionLog(log).records())
    assert [(r["allowed"], r["tool"], r["integration"]) for r in records] == [(False, "send_payment", "mcp_proxy")] * 4
    assert "batch" in records[3]["fail_closed"]
    assert "notification" in records[0]["fail_closed"] and "None" in records[1]["fail_closed"]


@pytest.mark.parametrize("strategy", ["tool_halt", "terminate"])
def test_a_halt_cancels_the_tool_calls_still_running_in_the_child(payments_build, tmp_path, strategy):
    """tool_halt stops the tool execution in flight: an allowed call the child has not answered yet is cancelled
    there, refused to the host and recorded so; its late answer goes nowhere (it was relayed as a success)."""
    log = tmp_path / "log.jsonl"
    sent = {"content": [{"type": "text", "text": "sent"}]}
    proxy, to_host, to_child = relay(payments_build, [
        ("host", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "send_payment",
                                                                              "arguments": PAYMENT}}),
        ("host", {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        ("host", {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "send_payment",
                                                                              "arguments": OVER_LIMIT}}),
        ("child", {"jsonrpc": "2.0", "id": 1, "result": sent}),
        ("child", {"jsonrpc": "2.0", "id": 2, "result": {"tools": []}}),
    ], log=log, strategy=strategy)
    assert [m.get("method") for m in to_child] == ["tools/call", "tools/list", "notifications/cancelled"]
    assert to_child[2]["params"]["requestId"] == to_child[0]["id"]
    assert [m["id"] for m in to_host] == [3, 1, 2] and to_host[2]["result"] == {"tools": []}
    assert to_host[1]["result"]["isError"] is True and "was cancelled" in to_host[1]["result"]["content"][0]["text"]
    records = [(r["action_id"], r["allowed"]) for r in DecisionLog(log).records()]
    assert records == [("1", True), ("3", False), ("1", False)]


def test_what_the_host_wrote_goes_to_stderr_escaped(payments_build, capsys):
    """A method or id with a newline must not write a line of its own to the proxy's stderr (a forged 'allowed')."""
    forged = "x\nveriguard mcp-proxy: shadow tools/call 'send_payment' (id 9): allowed"
    call = {"name": "send_payment", "arguments": OVER_LIMIT}
    relay(payments_build, [
        ("host", {"jsonrpc": "2.0", "id": forged, "method": "tools/call", "params": call}),
        ("host", {"jsonrpc": "2.0", "id": 1, "method": "resources/list"}),
        ("host", {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        ("host", {"jsonrpc": "2.0", "id": 2, "method": forged}),
    ])
    lines = capsys.readouterr().err.splitlines()
    assert lines and all(line.startswith("veriguard mcp-proxy: refused") for line in lines), lines
