"""The Anthropic Python SDK: a guard for tool functions run by the tool runner
(`client.beta.messages.tool_runner` with `@beta_tool`), and one for the hand-written tool-use loop.

The check runs inside the tool function, so nothing that edits the runner's messages can reach the
tool unchecked. A refused call raises the SDK's `ToolError`: the model receives an `is_error`
tool_result with the reason. A terminated run raises `RunTerminated`, which the runner does not
catch (it turns only Exception into a tool result), so `until_done()` and iteration stop with it.

The runner hands a tool its input, not the tool_use id (SDK 2.12: `tool.call(tool_use.input)`), so
records made there carry no tool call id; `split_tool_uses` has the id and records it. The runner
validates that input with pydantic (lax: `true` becomes 1 for an int) before the tool function runs;
`guarded` annotates each parameter with a wrap validator that keeps the value the model sent beside
the validated one, so the policy reads what the model sent and the function gets what pydantic made of it; a call
whose validated data differ from what the model sent (the tool's own validators resolved an alias, made dollars cents)
is refused, recorded, since the policy did not decide what would run (arguments.changed_arguments).

Server tools (web search, web fetch, code execution, tool search...) and the MCP connector (`mcp_servers`, `mcp_toolset`)
run on Anthropic's side, inside the response: no guard in this process can decide them. `refuse_provider_tools`
(an HTTP request hook for the client, `refuse_provider_tools_async` for AsyncAnthropic) refuses to send a Messages
request that enables any, wherever the request defines it (`tools`, a `tool_addition` block of any message, a batch),
and reads a body that is JSON whatever its content type says; `split_tool_uses` records every provider-side call it
finds in a reply as a refusal of a call that ran undecided, and refuses every tool_use block whose id is empty or shared
with another block of the message (a loop that finds a block by its id could run another input than the one decided).
A runner with neither the hook nor require_guarded sends them: a guarded function it calls (the runner within a few
frames above it) reads the runner's request (its params, tools override, extra_body) and refuses the call, recorded,
when they enable provider-side tools (runner_provider_side): the first point that sees them, after the first request.

The runner runs every tool it is given. A request hook runs inside the runner's loop, so both hooks read the runner's
own table too (runner_on_stack) and refuse, recorded, a request of a runner that would run a tool no guard decides: a
plain `@beta_tool` beside the guarded ones, a guarded tool swapped for a plain one of the same definition, a tool
runner.add_tools gave it, a guarded function under another name than the policy sees (fail closed by default: name a
tool in require_guarded(unguarded=...) to let it run undecided). They also make each guarded tool of the table record
the calls the SDK refuses before the function runs (an unknown or missing key, an input that is not an object, NaN or
1e400 for an int): nothing runs, and the model is told the policy's refusal. The runner they find is also made to check
each tool as it is about to run (watch_runner, on that runner object only), so a tool put in its table after the
request (add_tools in the loop body, while a reply streams) stops the run, recorded, before it runs. The watched runner
also refuses, recorded, a streamed tool_use whose JSON input is not one complete object (the stream was cut: 45000999
read as 4; the one empty input_json_delta of a call with no input is {} once the stream has moved past it), and records each call it answers "not found" (a tool it does not have); a check that fails there refuses. The managed-agents
SessionToolRunner (`client.beta.sessions.events.tool_runner`), which runs a session's tool calls in tasks of its own,
is read and watched the same way; its refusal reaches the caller inside the runner's BaseExceptionGroup. `require_guarded(guard, tools)` refuses
a list in which one would run undecided before the runner is made, recorded, and returns copies that record those
refusals; the client's request hook `refuse_undecided_tools(guard)` (in place of refuse_provider_tools) also refuses,
recorded, to offer the model a tool it did not check. A client with no hook and a plain `@beta_tool` not passed
through require_guarded: a missing or unknown key and an input that is not an object are refused by the SDK before
any argument is read, with no record (nothing runs); a value one argument refuses is recorded.
"""
from __future__ import annotations

import copy
import functools
import inspect
import re
import sys
import weakref
from collections import Counter
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from types import FrameType
from typing import Annotated, Any, Callable, Collection, Iterable, Iterator, Mapping, TypeVar

from anthropic.lib.tools import BetaAsyncFunctionTool, BetaFunctionTool, ToolError
from pydantic import ValidationError, ValidatorFunctionWrapHandler, WrapValidator

import veriguard.contracts.strict_json as strict_json
from veriguard.enforce.guard import Context, Guard, GuardOutcome, RunTerminated
from veriguard.enforce.integrations.arguments import VALIDATION_CHANGED, changed_arguments, request_json

F = TypeVar("F", bound=Callable[..., Any])
# The names of the tools require_guarded let through, per guard: what refuse_undecided_tools lets a request offer.
CHECKED: "weakref.WeakKeyDictionary[Guard, set[str]]" = weakref.WeakKeyDictionary()
# The tools require_guarded let through undecided on purpose (`unguarded=`), and the guards that did.
LET_THROUGH: "weakref.WeakKeyDictionary[Any, weakref.WeakSet[Guard]]" = weakref.WeakKeyDictionary()
UNREADABLE = ("a content block that is neither a dict nor an Anthropic SDK model cannot be read, so it is refused: "
              "pass the message as the SDK returned it, or its model_dump()")
ENDED = ("the message ended with stop_reason {!r}, not 'tool_use': its tool_use blocks are not to be run (the SDK's "
         "tool runner runs none), and after max_tokens the last one's input may be cut short (45000999 read as 4)")
UNFINISHED = ("the message is not finished (its stop_reason is null: a snapshot of a stream still running), so this "
              "tool_use's input may be cut short (45000 read as 4); decide the finished message "
              "(stream.get_final_message())")
# Tools whose calls come back to the client as tool_use blocks (a tool of yours, or Anthropic-defined tools the client
# runs: bash, text editor, computer use, memory); every other tool type runs on the provider's side.
CLIENT_TOOL = re.compile(r"custom|(bash|text_editor|computer|memory)_\d{8}")
PROVIDER_CALL = re.compile(r".+_tool_use")   # server_tool_use, mcp_tool_use: a call the provider ran itself
PROVIDER_RESULT = re.compile(r".+_tool_result")   # its result (web_search_tool_result, mcp_tool_result...)


GUARD_ATTRIBUTE = "veriguard_guard"          # set on a guarded() function: which guard decides its calls
TOOL_ATTRIBUTE = "veriguard_tool"            # set on it too: the tool name the policy sees its calls under
REFUSE_ATTRIBUTE = "veriguard_refuse_unread"  # set on it too: records a call the runner refused before it ran
# Set by a tool require_guarded returned while the SDK runs one call: the guarded function marks it once it is entered,
# so an exception with no mark came from the SDK's own refusal of the input (pydantic's validation, a non-object input).
ENTERED: ContextVar[list[bool] | None] = ContextVar("veriguard_entered", default=None)


class UnguardedTools(ValueError):
    """A tool runner was to be given tools that no guard decides (require_guarded)."""


class ProviderToolsRefused(BaseException):
    """A Messages request enables tools that run on the provider's side, which no guard here can decide. A
    BaseException, like RunTerminated, so that the SDK does not take it for a connection error and retry."""
    recorded = False   # a guard has recorded it already


def provider_side_tools(body: Any, added: list[Any] | None = None) -> list[str]:
    """What in a Messages request body (or a batch's `requests`) runs on the provider's side: each tool whose type is
    not a client tool, each MCP server, and each skill of the `container`, wherever the request defines it (`tools`, a
    `tool_addition` block in any message or compaction block, a batch's params). An unknown tool type counts as
    provider-side. `added`: the body's added_tools, where the caller has them already (the walk covers the whole
    history)."""
    if not isinstance(body, Mapping):
        return []
    added = added_tools(body) if added is None else added
    found = [f"{t.get('type')} ({t.get('name', '?')})" for t in [*(body.get("tools") or ()), *added]
             if isinstance(t, Mapping) and t.get("type") is not None
             and not (type(t["type"]) is str and CLIENT_TOOL.fullmatch(t["type"]))]
    found += [f"mcp_servers ({s.get('name', '?') if isinstance(s, Mapping) else '?'})" for s in body.get("mcp_servers") or ()]
    container = body.get("container")   # skills run in Anthropic's code-execution container
    found += [f"container skills ({s.get('skill_id', '?') if isinstance(s, Mapping) else '?'})"
              for s in (container.get("skills") or () if isinstance(container, Mapping) else ())]
    for item in body.get("requests") or ():   # a message batch
        found += provider_side_tools(item.get("params") if isinstance(item, Mapping) else None)
    return found


def added_tools(body: Any) -> list[Any]:
    """The tools the `tool_addition` blocks of a request add, wherever they sit (a user or system message, a compaction
    block's tool_changes; not a batch's requests, read apart): an inline definition as itself, a reference to a tool
    the request declares elsewhere ({"type": "tool_reference"}) not at all (that tool is read where it is declared), any
    other reference (to an MCP server's tools) as it is, which counts as provider-side. The input of a tool_use block
    is the model's data, not a request field, and is not read."""
    found: list[Any] = []
    stack = [body.get("messages")] if isinstance(body, Mapping) else []
    while stack:   # a JSON body holds dicts and lists only; the strings and numbers (most of it) are not walked
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, (list, dict)))
        elif isinstance(node, dict):
            kind = node.get("type")
            if kind == "tool_addition":
                tool = node.get("tool")
                tool_kind = tool.get("type") if isinstance(tool, dict) else None
                if tool_kind == "tool_definition" and isinstance(tool, dict):
                    found.append(tool.get("definition"))
                elif tool_kind != "tool_reference":
                    found.append(tool if isinstance(tool, dict) and tool_kind is not None else {"type": "?"})
            said = type(kind) is str and "tool_use" in kind   # its input is the model's data
            stack.extend(v for k, v in node.items() if isinstance(v, (list, dict)) and not (said and k == "input"))
    return found


def refuse_provider_tools(request: Any) -> None:
    """An HTTP request hook (`Anthropic(http_client=httpx2.Client(event_hooks={"request": [refuse_provider_tools]}))`):
    raises ProviderToolsRefused for a JSON request (Messages, a batch, or the same body sent to Bedrock or Vertex
    under their own paths) that enables tools run on the provider's side; a JSON body that cannot be read is refused
    too, since what it enables is unknown. Requests of other content types (file uploads) pass. A request a tool runner
    sends is refused, recorded, when the runner would run a tool no guard decides (refuse_undecided_runner)."""
    if counts_tokens(request):
        return
    with refusing(None):
        refuse_provider_side(request_json(request, ProviderToolsRefused))
        refuse_undecided_runner(None)


def counts_tokens(request: Any) -> bool:
    """Whether the request only counts a Messages request's tokens (`messages.count_tokens`, beta too): nothing runs
    there, so the tools it names are not refused."""
    try:
        return request.method == "POST" and str(request.url.path).rstrip("/").endswith("/messages/count_tokens")
    except Exception:   # a request whose URL cannot be read is checked like any other
        return False


def refuse_provider_side(body: Any, added: list[Any] | None = None) -> None:
    """Raise ProviderToolsRefused when the request body enables tools run on the provider's side."""
    found = provider_side_tools(body, added)
    if found:
        raise ProviderToolsRefused(f"refused to send a Messages request that enables tools run on Anthropic's side, "
                                   f"which no guard in this process can decide: {', '.join(found[:5])}; give the model "
                                   "client tools only (put an MCP server behind `veriguard mcp-proxy` instead)")


async def refuse_provider_tools_async(request: Any) -> None:
    """refuse_provider_tools for an async HTTP client (AsyncAnthropic)."""
    refuse_provider_tools(request)


def offered_tools(body: Any, added: list[Any] | None = None) -> tuple[list[str], list[str]]:
    """The names of the tools a Messages request body offers the model: those of its `tools`, and those its
    `tool_addition` blocks add (added_tools; the tool runner's add_tools sends them)."""
    if not isinstance(body, Mapping):
        return [], []
    listed = [str(t.get("name")) for t in body.get("tools") or () if isinstance(t, Mapping)]
    added = added_tools(body) if added is None else added
    return listed, [str(t.get("name")) if isinstance(t, Mapping) else "?" for t in added]


def undecided_offers(body: Any, decided: frozenset[str], added: list[Any] | None = None) -> list[str]:
    """Why the tools a request offers may run undecided: a name require_guarded did not let through for the guard (a
    tool added to its list, or by the runner's add_tools, after the check), a name listed twice, or a tool added under
    the name of one the request lists (add_tools puts the new tool in the place of the checked one)."""
    listed, added_names = offered_tools(body, added)
    found = [f"{n!r} (not among the tools require_guarded checked)" for n in dict.fromkeys(listed + added_names)
             if n not in decided]
    found += [f"{n!r} (listed {listed.count(n)} times)" for n in dict.fromkeys(listed) if listed.count(n) > 1]
    found += [f"{n!r} (added in the place of the tool of that name)" for n in dict.fromkeys(added_names) if n in listed]
    return found


def refuse_undecided_tools(guard: Guard) -> Callable[[Any], None]:
    """An HTTP request hook for the client of a tool runner whose tools came through require_guarded(guard): it does
    what refuse_provider_tools does (with the runner's tools decided by `guard`), and refuses (recorded, Guard.refuse_run)
    to send a request that offers the model a tool require_guarded did not check (undecided_offers): the runner runs
    the tools it holds, and a tool added to the checked list, or by runner.add_tools, after the check would run undecided.

        client = Anthropic(http_client=httpx2.Client(event_hooks={"request": [refuse_undecided_tools(guard)]}))"""
    def hook(request: Any) -> None:
        if counts_tokens(request):
            return
        with refusing(guard):
            body = request_json(request, ProviderToolsRefused)
            added = added_tools(body)   # one walk of the history for both checks
            refuse_provider_side(body, added)
            found = undecided_offers(body, frozenset(CHECKED.get(guard, ())), added)
            if found:
                raise ProviderToolsRefused(f"refused to send a request offering the model tools that policy "
                                           f"{guard.policy_name} does not decide: {'; '.join(found[:5])}; pass every "
                                           "tool through require_guarded(guard, ...) before the runner gets it")
            refuse_undecided_runner(guard)
    return hook


@contextmanager
def refusing(guard: Guard | None) -> Iterator[None]:
    """Inside a request hook: a ProviderToolsRefused not recorded yet is recorded by `guard`, and any other failure (a
    body of an unexpected shape, `{"tools": 5}`) refuses the request the same way, recorded, instead of raising an
    error the SDK takes for a connection error and retries."""
    try:
        yield
    except ProviderToolsRefused as e:
        if guard is not None and not e.recorded:
            guard.refuse_run(str(e), integration="anthropic_sdk")
        raise
    except Exception as e:
        why = f"the request could not be checked ({type(e).__name__}: {e}"[:300] + "): what it enables is unknown"
        if guard is not None:
            guard.refuse_run(why, integration="anthropic_sdk")
        raise ProviderToolsRefused(why) from None


# The SDK's loops that run tools, and the method each runs one tool with (what watch_runner checks): the Messages tool
# runner (sync, async, streamed, eager), and the managed-agents session runner, which runs the tools of a session's
# agent.tool_use / agent.custom_tool_use events in tasks of its own and sends its requests from them.
# The Messages runner also makes each reply's tool results in one method, which is watched to record the calls it
# answers "not found" (a tool it does not have, or that remove_tools took away): no tool runs, and no guard saw them.
RUNNERS = {"BaseToolRunner": ("_run_tool", "_run_toolset_member", "_generate_tool_call_response"),
           "SessionToolRunner": ("_call_tool",)}
WATCH_ATTRIBUTE = "veriguard_watch"   # set on the per-runner wrapper of a method of RUNNERS
# The SDK's private names this module reads, what it reads them for; where one is missing (an SDK that renamed it),
# what the tools would run undecided on is unknown, so the request or the tool is refused, recorded (SdkChanged):
#   BaseToolRunner: _runnable_tools(), _toolsets_by_family, _run_tool, _run_toolset_member,
#     _generate_tool_call_response, _get_last_assistant_message_content(), _available_tool_names(), _last_message;
#   SessionToolRunner: _tools_by_name, _call_tool; BetaFunctionTool: _func_with_validate;
#   the message streams (BetaMessageStream, MessageStream and their async twins): __json_bufs (name-mangled);
#   BaseToolRunner's _params and _options (runner_provider_side);
#   CPython's sys._getframe (runner_on_stack, runner_provider_side).
SDK_VERSION_READ = "anthropic 2.14"


class SdkChanged(ProviderToolsRefused):
    """The Anthropic SDK no longer has a private name this module reads (SDK_VERSION_READ was the one read)."""


def private(owner: Any, name: str, what: str) -> Any:
    """`owner.<name>`, or SdkChanged saying what cannot be seen without it."""
    try:
        return getattr(owner, name)
    except AttributeError:
        raise sdk_changed(owner, f"has no {name} ({SDK_VERSION_READ} had it)", what) from None


def sdk_changed(owner: Any, lacks: str, what: str) -> SdkChanged:
    """SdkChanged saying that `owner`'s type `lacks` what veriguard reads to see `what`."""
    return SdkChanged(f"the Anthropic SDK's {type(owner).__name__} {lacks}, which veriguard reads to see {what}: "
                      "refused, since that is unknown now; update veriguard")


def runner_on_stack(kind: str = "", methods: Collection[str] = (), limit: int | None = None, above: int = 1) -> Any:
    """The Anthropic tool runner (RUNNERS) sending the request a hook is reading, or None (a request sent outside a
    runner). A request hook runs inside the runner's loop (sync or async: an awaiting coroutine's frame is the awaited
    one's caller; the session runner's requests leave from its own tasks, whose coroutines are its methods), so the
    runner is the `self` of a frame above it. Narrowed (runner_provider_side): a runner of that `kind` only, the `self`
    of a frame of one of `methods` only (found by the method's name, which costs less than reading a frame's locals),
    within `limit` frames; `above` is the frame the walk starts at (1: the caller's)."""
    frame: FrameType | None = sys._getframe(above)
    for _ in range(sys.maxsize if limit is None else limit):
        if frame is None:
            return None
        code = frame.f_code
        owner = frame.f_locals.get("self") if (code.co_name in methods if methods else "self" in code.co_varnames) \
            else None
        if owner is not None and (runner_kind(owner) == kind if kind else runner_kind(owner)):
            return owner
        frame = frame.f_back
    return None


RUNNER_PROVIDER = ("the tool runner running this call sends requests that enable tools run on Anthropic's side, which no "
                   "guard decides (they may have run there, undecided): {}; give the runner client tools only (require_guarded "
                   "refuses such a list, refuse_provider_tools such a request, before it is sent); not run")
RUNNER_FRAMES = 16   # a guarded function is called a few frames below the runner's _run_tool (validation, tool.call)
RUNNER_CALLS = frozenset(RUNNERS["BaseToolRunner"][:2])   # the Messages runner's methods that call a tool


def runner_provider_side() -> str:
    """Why a guarded call may not run (a refusal reason; "" when it may): the Messages tool runner calling it (a frame
    within RUNNER_FRAMES above) sends requests that enable provider-side tools (provider_side_tools of its request
    params, its tools override and extra_body). The request hook and require_guarded refuse those before anything is
    sent; a runner that has neither sent them, and the guarded function is the first to see it. Params that cannot be
    read refuse the call."""
    owner = runner_on_stack("BaseToolRunner", RUNNER_CALLS, RUNNER_FRAMES, above=2)   # 2: this function's caller
    if owner is None:
        return ""
    try:
        options = private(owner, "_options", "the request options the runner sends") or {}
        extra = options.get("extra_body")
        found = [*provider_side_tools(private(owner, "_params", "the request the runner sends")),
                 *provider_side_tools({"tools": options.get("tools") or ()}),
                 *provider_side_tools(extra if isinstance(extra, Mapping) else None)]
    except (Exception, SdkChanged) as e:
        return f"the tool runner's request cannot be read ({type(e).__name__}: {' '.join(str(e).split())[:200]}), so " \
               "what it runs on Anthropic's side is unknown; not run"
    return RUNNER_PROVIDER.format(", ".join(found[:5])) if found else ""


def runner_kind(owner: Any) -> str:
    """Which of RUNNERS `owner` is ("" when none)."""
    return next((c.__name__ for c in type(owner).__mro__ if c.__name__ in RUNNERS), "")


def runner_table(runner: Any) -> dict[str, Any]:
    """What the runner runs, by name (its toolsets as "toolset <family>"); ProviderToolsRefused when that cannot be
    read (an SDK whose runner keeps them elsewhere): then what would run is unknown."""
    try:
        if runner_kind(runner) == "SessionToolRunner":   # its registry, made from `tools` when it starts
            tools = {**{str(t.name): t for t in runner.tools},
                     **private(runner, "_tools_by_name", "the tools the session runner runs")}
            toolsets = {}
        else:
            tools = dict(private(runner, "_runnable_tools", "the tools the runner runs")())
            toolsets = dict(private(runner, "_toolsets_by_family", "the toolsets the runner runs") or {})
    except SdkChanged:
        raise
    except Exception as e:
        raise ProviderToolsRefused(f"the tool runner's tools cannot be read ({type(e).__name__}: {e}), so what it "
                                   "would run undecided is unknown") from None
    return {**{str(name): tool for name, tool in tools.items()},
            **{f"toolset {family}": toolset for family, toolset in toolsets.items()}}


def undecided_in_runner(table: Mapping[str, Any], guard: Guard | None) -> tuple[list[str], list[Guard]]:
    """Why tools of a runner's table would run undecided, and the guards deciding the others. A tool is decided when it
    is a @guarded function of `guard` (of any guard when None) under the name the runner runs it by, or one that
    require_guarded let through on purpose (`unguarded=`). Each decided @beta_tool is made to record the calls the SDK
    refuses before the function runs (recording), as the copies require_guarded returns do."""
    found: list[str] = []
    guards: list[Guard] = []
    for name, tool in table.items():
        func = getattr(tool, "func", None)
        owner = getattr(func, GUARD_ATTRIBUTE, None)
        if isinstance(owner, Guard) and (guard is None or owner is guard) and getattr(func, TOOL_ATTRIBUTE, "") == name \
                and runs_its_func(tool):
            guards += [] if owner in guards else [owner]
            if type(tool) in RECORDING:
                tool.__class__ = RECORDING[type(tool)]
            continue
        passed = LET_THROUGH.get(tool) if _weak(tool) else None
        if passed is not None and (len(passed) if guard is None else guard in passed):
            continue
        why = ("it would run another function than its guarded `func`" if not runs_its_func(tool) and isinstance(owner, Guard)
               else f"decided as {getattr(func, TOOL_ATTRIBUTE, '?')!r}" if isinstance(owner, Guard) and (guard is None or owner is guard)
               else "a guarded function of another guard" if isinstance(owner, Guard) else type(tool).__name__)
        found.append(f"{name!r} ({why})")
    return found, guards


def runs_its_func(tool: Any) -> bool:
    """Whether calling `tool` runs its `func`, the function the check looked at: a tool of the SDK's own classes (or
    their recording twins) with no `call` of its own, whose validated function (made from `func` when the tool was
    built) still wraps that `func`. A `func` set on a plain tool afterwards, or a subclass or instance with another
    `call`, would show the check a guarded function and run another."""
    if type(tool) not in RECORDING and type(tool) not in RECORDING.values() or "call" in vars(tool):
        return False
    validated = private(tool, "_func_with_validate", "the function a guarded tool runs")
    return getattr(validated, "__wrapped__", None) is getattr(tool, "func", None)


def refuse_undecided_runner(guard: Guard | None) -> None:
    """Refuse the request of a tool runner (runner_on_stack) whose own table holds a tool that would run undecided
    (undecided_in_runner): a guarded tool swapped for a plain one of the same definition, a plain @beta_tool beside the
    guarded ones, a tool runner.add_tools gave it. Recorded (Guard.refuse_run) by `guard`, else by every guard deciding
    one of its tools (none when no tool of the runner is guarded). A request sent outside a runner passes."""
    runner = runner_on_stack()
    if runner is None:
        return
    found, guards = undecided_in_runner(runner_table(runner), guard)
    watch_runner(runner, guard, guards)
    if found:
        refuse_runner("refused to send the tool runner's request", found, [guard] if guard is not None else guards)


def refuse_runner(what: str, found: list[str], owners: Iterable[Guard]) -> None:
    """Record (by each of `owners`) and raise the refusal of a runner holding tools no guard decides."""
    why = f"{what}: it would run tools no guard decides: {'; '.join(found[:5])}"
    for owner in owners:
        owner.refuse_run(why, integration="anthropic_sdk")
    refused = ProviderToolsRefused(f"{why}; decorate each tool function with @guarded(guard) under @beta_tool (under "
                                   "the same name), and pass the list through require_guarded(guard, ..., "
                                   "unguarded=[...]) to let a tool run undecided on purpose")
    refused.recorded = True
    raise refused


def watch_runner(runner: Any, guard: Guard | None, guards: list[Guard]) -> None:
    """Make this runner (this object only; the SDK's classes are left alone) check each tool as it is about to run,
    under the name it runs it by: a tool put in its table after the request was checked (runner.add_tools or a swap in
    the loop body, while a reply streams, between a reply and generate_tool_call_response) would otherwise run
    undecided before the next request shows it. Such a tool stops the run (ProviderToolsRefused, recorded by `guard`,
    else by the guards of the runner's guarded tools). A runner whose method cannot be found is refused."""
    for method in RUNNERS[runner_kind(runner)]:
        bound = getattr(runner, method, None)
        if getattr(bound, WATCH_ATTRIBUTE, False):
            continue
        if not callable(bound):
            raise ProviderToolsRefused(f"the tool runner has no {method}() to watch (another SDK version?), so what it "
                                       "would run undecided is unknown")
        setattr(runner, method, _watched(runner, bound, method, guard, guards))


def _watched(runner: Any, bound: Callable[..., Any], method: str, guard: Guard | None,
             guards: list[Guard]) -> Callable[..., Any]:
    # the runner's own method through a weak reference: a wrapper holding the bound method would keep the runner (and
    # its client) alive in a reference cycle until the garbage collector finds it
    own = getattr(bound, "__func__", None) if getattr(bound, "__self__", None) is runner else None
    other = bound if own is None else None   # a method set on the object before: kept as it is
    ref = weakref.ref(runner)

    def call(args: tuple[Any, ...]) -> Any:
        return own(ref(), *args) if own is not None else other(*args)  # type: ignore[misc]

    def owners(now: Iterable[Guard] = ()) -> list[Guard]:
        if guard is not None:
            return [guard]
        try:
            theirs = undecided_in_runner(runner_table(ref()), None)[1]
        except (Exception, ProviderToolsRefused):   # a table that cannot be read: the guards seen before record
            theirs = []
        return list(dict.fromkeys([*guards, *now, *theirs]))

    def check(args: tuple[Any, ...]) -> dict[str, Any] | None:
        """None to run the call; else the refusal's tool_result, recorded, which the runner sends in its place."""
        runner = ref()
        tool_use = args[0] if method == "_run_toolset_member" else args[1]
        if method == "_run_toolset_member":   # (tool_use): a toolset runs it
            entries = {k: v for k, v in runner_table(runner).items() if k.startswith("toolset ")}
        else:   # _run_tool(tool, tool_use) or _call_tool(tool, event, input): the tool, and the name it runs by
            entries = {str(getattr(tool_use, "name", "")): args[0]}
        found, now = undecided_in_runner(entries, guard)
        if found:
            refuse_runner(f"refused to run a tool of the tool runner ({method})", found, owners(now))
        why = cut_input(runner, tool_use) if method != "_call_tool" else ""   # a session's events come whole
        if not why:
            return None
        name, call_id = str(getattr(tool_use, "name", "")), str(getattr(tool_use, "id", ""))
        for owner in owners(now):
            owner.refuse_run(why, integration="anthropic_sdk", tool=name, action_id=call_id)
        return tool_error(call_id, why)

    def failing_closed(step: Callable[..., Any], *args: Any) -> Any:
        """`step(*args)`; a failure in it refuses the call, recorded (a check that raised decided nothing)."""
        try:
            return step(*args)
        except (ProviderToolsRefused, Exception) as e:
            refused = e if isinstance(e, ProviderToolsRefused) else ProviderToolsRefused(
                f"refused to run a tool of the tool runner ({method}): the check failed "
                f"({type(e).__name__}: {e}"[:400] + "), so what would run is unknown")
            if not refused.recorded:
                for owner in owners():
                    owner.refuse_run(str(refused), integration="anthropic_sdk")
                refused.recorded = True
            if refused is e:
                raise
            raise refused from None

    def content() -> Any:
        return private(ref(), "_get_last_assistant_message_content", "the reply whose tool calls it runs")()

    if method == "_generate_tool_call_response":
        if inspect.iscoroutinefunction(bound):
            async def answered_async(*args: Any) -> Any:
                failing_closed(record_unknown_calls, ref(), await failing_closed(content), owners)
                return await call(args)
            setattr(answered_async, WATCH_ATTRIBUTE, True)
            return answered_async

        def answered(*args: Any) -> Any:
            failing_closed(record_unknown_calls, ref(), failing_closed(content), owners)
            return call(args)
        setattr(answered, WATCH_ATTRIBUTE, True)
        return answered

    if inspect.iscoroutinefunction(bound):
        async def watched_async(*args: Any) -> Any:
            refused = failing_closed(check, args)
            return refused if refused is not None else await call(args)
        setattr(watched_async, WATCH_ATTRIBUTE, True)
        return watched_async

    def watched(*args: Any) -> Any:
        refused = failing_closed(check, args)
        return refused if refused is not None else call(args)
    setattr(watched, WATCH_ATTRIBUTE, True)
    return watched


def record_unknown_calls(runner: Any, content: Any, owners: Callable[[], list[Guard]]) -> None:
    """Record, by `owners()`, each tool_use of the reply that the runner answers "not found" without running anything:
    a tool it does not have (the model named one it was never given, or one remove_tools took away, which stays a
    hint to the model), a toolset it does not have, a toolset named without its toolset_name."""
    table = runner_table(runner)
    available = private(runner, "_available_tool_names", "the tools the runner still offers")()
    recorders: list[Guard] | None = None   # owners(), read at the first unknown call (its table is read once)
    for block in content or ():
        if getattr(block, "type", None) != "tool_use":
            continue
        name, family = str(getattr(block, "name", "")), getattr(block, "toolset_name", None)
        if (f"toolset {family}" in table) if family is not None else (name in table and name in available):
            continue
        why = (f"the model called {name!r}{f' of toolset {family!r}' if family is not None else ''}, which the tool "
               "runner does not have (never given to it, or taken away by remove_tools): the runner answers that it "
               "was not found, and nothing runs")
        if recorders is None:
            recorders = owners()
        for owner in recorders:
            owner.refuse_run(why, integration="anthropic_sdk", tool=name, action_id=str(getattr(block, "id", "")))


CUT = ("the streamed input of this tool_use is not one complete JSON object ({}): the stream was cut (the connection "
       "dropped, or the block ended early), so the part read (45000999 read as 4) is not what the model sent; not run")


def cut_input(runner: Any, tool_use: Any) -> str:
    """Why the runner's streamed reply cut `tool_use`'s input ("" when it did not, or the reply was not streamed: a
    JSON body is read whole or not at all)."""
    last = private(runner, "_last_message", "the reply whose tool calls it runs")
    if not callable(last):   # the reply itself: not streamed
        return ""
    stream = getattr(last, "__self__", last)   # a stream's get_final_message
    buffers, message = stream_buffers(stream), stream_message(stream)
    index = next((i for i, block in enumerate(getattr(message, "content", None) or ()) if block is tool_use), None)
    return "" if index is None else block_cut(buffers.get(index), tool_use, message, index)


def is_stream(value: Any) -> bool:
    """Whether `value` is one of the SDK's message streams (MessageStream, BetaMessageStream, their async twins)."""
    return any(c.__name__ in STREAMS for c in type(value).__mro__)


STREAMS = ("MessageStream", "BetaMessageStream", "AsyncMessageStream", "BetaAsyncMessageStream")


def stream_cuts(stream: Any) -> tuple[Any, dict[int, str]]:
    """The message a stream made, and why the streamed JSON input of each of its blocks that is not one complete JSON
    object is cut, by the block's index. SdkChanged when the stream's buffers cannot be read."""
    buffers, message = stream_buffers(stream), stream_message(stream)
    cut = {index: block_cut(buffers.get(index), block, message, index)
           for index, block in enumerate(getattr(message, "content", None) or ())}
    return message, {index: why for index, why in cut.items() if why}


def block_cut(text: bytes | None, block: Any, message: Any, index: int) -> str:
    """Why a streamed block's input is cut ("" when it is whole, or the block is not a tool_use): its JSON text is not
    one complete object, or no input_json_delta came at all (the API sends one, empty, first for every tool_use) and
    the block holds the empty input of its content_block_start. An empty text (the one input_json_delta, empty, the
    API sends for a call with no input) is the input {}, as the SDK reads it, once the stream has moved on from the
    block (`message` is the stream's snapshot, the block its `index`th); until then the call may be unfinished."""
    if getattr(block, "type", None) != "tool_use":
        return ""
    if text is None:
        return "" if getattr(block, "input", None) else CUT.format("no input was streamed: the stream was cut before "
                                                                   "its first input_json_delta, and {} is not the input")
    if not text and moved_on(message, index):
        return ""
    return cut_why(text)


def moved_on(message: Any, index: int) -> bool:
    """Whether a stream has gone past the `index`th block of its message (the SDK's rule for running a call eagerly):
    the message ended asking for tools (stop_reason tool_use), or a later block started; never when a fallback block
    follows (the refusal that led to it may have cut the call before it: the SDK waits for the reply's end)."""
    later = list(getattr(message, "content", None) or ())[index + 1:]
    if any(getattr(b, "type", None) == "fallback" for b in later):
        return False
    return getattr(message, "stop_reason", None) == "tool_use" or bool(later)


def stream_buffers(stream: Any) -> dict[int, bytes]:
    """The JSON text the stream read for each tool_use block, by index; SdkChanged when the SDK keeps it elsewhere."""
    buffers = next((b for c in type(stream).__mro__ if isinstance(
        b := getattr(stream, "__dict__", {}).get(f"_{c.__name__.lstrip('_')}__json_bufs"), dict)), None) \
        if is_stream(stream) else None
    if buffers is None:
        raise sdk_changed(stream, f"keeps no __json_bufs ({SDK_VERSION_READ}'s message streams kept each streamed tool "
                          "input's JSON text there)", "whether a streamed input was cut")
    return buffers


def stream_message(stream: Any) -> Any:
    try:
        return stream.current_message_snapshot
    except AssertionError:
        raise TypeError("the stream has no message yet: read it to its end before its tool calls are decided") from None


def cut_why(text: bytes) -> str:
    """Why a streamed tool input's JSON text is cut ("" when it is one complete JSON object)."""
    try:
        value = strict_json.loads(text)
        problem = "" if isinstance(value, dict) else f"a {type(value).__name__}, not an object"
    except Exception as e:
        problem = " ".join(str(e).split())[:120]
    return CUT.format(problem) if problem else ""


def _weak(tool: Any) -> bool:
    try:
        weakref.ref(tool)
    except TypeError:
        return False
    return True


def refuse_undecided_tools_async(guard: Guard) -> Callable[[Any], Any]:
    """refuse_undecided_tools for an async HTTP client (AsyncAnthropic)."""
    check = refuse_undecided_tools(guard)

    async def hook(request: Any) -> None:
        check(request)
    return hook


@dataclass(frozen=True)
class Sent:
    """One argument as the model sent it (`raw`) and as the SDK's validation made it (`value`), or why that validation
    refused it (`refused`: then the guarded function records the refusal and does not run)."""
    raw: Any
    value: Any
    refused: str = ""


def keep_sent(raw: Any, handler: ValidatorFunctionWrapHandler) -> Sent:
    """The value validated, or the validation's refusal kept for the guarded function to record: a value the SDK refuses
    (NaN or 1e400 for an int, an object for a string) reaches the function, which records it, even under a plain
    @beta_tool that require_guarded never saw."""
    try:
        return Sent(raw, handler(raw))
    except ValidationError as e:
        return Sent(raw, None, "; ".join(str(err.get("msg", "")) for err in e.errors()[:3]) or "invalid")


KEEP_SENT = WrapValidator(keep_sent)


def sent_raw(arg: Any) -> Any:
    return arg.raw if isinstance(arg, Sent) else arg


def sent_value(arg: Any) -> Any:
    return arg.value if isinstance(arg, Sent) else arg


def guarded(guard: Guard, *, context: Context = None, run: str | Callable[[], str] = "",
            name: str | None = None) -> Callable[[F], F]:
    """Decorate a tool function beneath `@beta_tool` (or `@beta_async_tool`):

        @beta_tool
        @guarded(guard, context=lambda: {"session": ..., "ledger": ...})
        def send_payment(recipient: str, amount_cents: int, currency: str, method: str) -> str: ...

    The policy sees the arguments as the model sent them (before the SDK's validation coerces them:
    `true` or `45000.0` for an int reach the policy as they are), with defaults filled in; a call the validation
    would change (changed_arguments: other data, not a date's or an enum's form of the same) is refused, recorded, as an
    Anthropic tool_use block named `name` (default: the function's name, which is also the tool's
    name unless `@beta_tool(name=...)` says otherwise: pass the same). The tool's input schema is the
    function's. `run` names the run whose halting state the call counts in; a function returning the
    name (read at every call, e.g. from a contextvar) serves a tool shared by several conversations."""
    def wrap(func: F) -> F:
        signature = inspect.signature(func)
        tool = name or func.__name__

        def refuse_unread(error: Exception) -> None:
            """Record a call the runner refused before the function ran (its input failed the SDK's validation), and
            raise what the model is told: the refusal, or in shadow mode the SDK's own error."""
            refused = guard.refuse(f"the tool runner refused the input before {tool}() ran, so the policy could not "
                                   f"read it: {type(error).__name__}: {_cause(error)}", run=run,
                                   integration="anthropic_sdk", tool=tool)
            if refused.allowed:   # shadow mode: not enforced, and the SDK refused it anyway
                raise error
            act(refused)
            raise ToolError(refused.message) from error

        def enforce(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
            """The run the allowed call counts in (raises to refuse it)."""
            entered = ENTERED.get()
            if entered is not None:
                entered.append(True)
            # the arguments the SDK's validation read, by name (pairs: a name given twice is refused by bind below)
            sent = [(k, a) for k, a in [*zip(signature.parameters, args), *kwargs.items()] if isinstance(a, Sent)]
            invalid = [f"{key}: {arg.refused}" for key, arg in sent if arg.refused]
            if invalid:   # the SDK's validation refused these values: recorded as the SDK's refusal, nothing runs
                refuse_unread(ValueError(f"Invalid arguments for function {tool}: {'; '.join(invalid)}"[:400]))
            try:
                bound = signature.bind(*map(sent_raw, args), **{k: sent_raw(v) for k, v in kwargs.items()})
            except TypeError as e:   # not a call of this function: refused (in shadow mode too), and recorded
                refused = guard.refuse(f"the arguments do not fit {tool}(): {e}", run=run, integration="anthropic_sdk",
                                       tool=tool)
                act(refused)
                raise ToolError(refused.message) from None
            changed = changed_arguments({k: a.raw for k, a in sent}, {k: a.value for k, a in sent})
            if changed:   # the policy would decide what the model sent, and the function would run on other data
                refused = guard.refuse(f"{VALIDATION_CHANGED.format(tool)}: {changed}", run=run,
                                       integration="anthropic_sdk", tool=tool)
                act(refused)   # shadow mode: not enforced, and the call runs
                return refused.run
            provider = runner_provider_side()
            if provider:   # the runner's requests run tools on Anthropic's side that no guard decides
                refused = guard.refuse(provider, run=run, integration="anthropic_sdk", tool=tool)
                act(refused)
                if not refused.allowed:
                    raise ToolError(refused.message)
            bound.apply_defaults()
            call = {"type": "tool_use", "name": tool, "input": dict(bound.arguments)}
            outcome = guard.check(call, context=context, run=run, integration="anthropic_sdk", tool=tool, exclusive=True)
            act(outcome)
            return outcome.run

        if inspect.iscoroutinefunction(func):
            @functools.wraps(func)
            async def run_async(*args: Any, **kwargs: Any) -> Any:
                counted = enforce(args, kwargs)
                try:
                    return await func(*map(sent_value, args), **{k: sent_value(v) for k, v in kwargs.items()})
                finally:   # its effects are in the facts now: the run's next call may be allowed
                    guard.finished(counted)
            return _marked(run_async, guard, refuse_unread, tool)  # type: ignore[return-value]

        @functools.wraps(func)
        def run_sync(*args: Any, **kwargs: Any) -> Any:
            counted = enforce(args, kwargs)
            try:
                return func(*map(sent_value, args), **{k: sent_value(v) for k, v in kwargs.items()})
            finally:
                guard.finished(counted)
        return _marked(run_sync, guard, refuse_unread, tool)  # type: ignore[return-value]
    return wrap


def require_guarded(guard: Guard, tools: Iterable[Any], *, unguarded: Iterable[str] = ()) -> list[Any]:
    """`tools` for a tool runner, once every one the runner would run is a `@guarded(guard)` function: a plain
    `@beta_tool` beside the guarded ones, a guarded function of another guard, a built-in tool or a toolset (an
    MCP toolset) would run undecided, and a tool definition that runs on the provider's side is never decided:
    UnguardedTools names them, unless `unguarded` names them. A custom tool given as a plain definition passes (the
    runner does not run it; decide its calls with split_tool_uses). The refusal is recorded (Guard.refuse_run), and
    each guarded tool comes back as a copy that records the calls the SDK refuses before the function runs.

        runner = client.beta.messages.tool_runner(..., tools=require_guarded(guard, [send_payment, lookup]))"""
    allowed, out, found, names = frozenset(unguarded), list(tools), [], []
    for tool in out:
        try:
            name, why = offered_as(tool, guard)
        except Exception as e:   # a tool whose name or function cannot be read: what would run is unknown
            name, why = "?", f"a {type(tool).__name__} that cannot be read: {type(e).__name__}: {str(e)[:100]}"
            found.append(f"{name!r} ({why})")
            continue
        names.append(name)
        if why and name not in allowed:
            found.append(f"{name!r} ({why})")
    if found:
        why = f"policy {guard.policy_name} does not decide these tools, which would run undecided: {'; '.join(found[:8])}"
        guard.refuse_run(f"refused to start a tool runner: {why}", integration="anthropic_sdk")
        raise UnguardedTools(f"{why}; decorate each tool function with @guarded(guard) under @beta_tool, or name it "
                             "in unguarded= to let it run undecided")
    CHECKED.setdefault(guard, set()).update(names)
    for tool, name in zip(out, names):   # the runner's table may hold them (refuse_undecided_runner)
        if not isinstance(tool, Mapping) and name in allowed and _weak(tool):
            LET_THROUGH.setdefault(tool, weakref.WeakSet()).add(guard)
    return [recording(tool) for tool in out]


def offered_as(tool: Any, guard: Guard) -> tuple[str, str]:
    """(the name a tool is offered under, why it would run undecided: "" when `guard` decides it)."""
    if isinstance(tool, Mapping):
        return str(tool.get("name", "?")), ", ".join(provider_side_tools({"tools": [tool]}))
    name = str(getattr(tool, "name", type(tool).__name__))
    return name, "" if getattr(getattr(tool, "func", None), GUARD_ATTRIBUTE, None) is guard else type(tool).__name__


def keeping_sent(wrapper: Callable[..., Any]) -> Callable[..., Any]:
    """The wrapper with each annotated parameter validated through KEEP_SENT (the JSON schema pydantic
    derives is unchanged: a wrap validator adds nothing to it)."""
    wrapper.__annotations__ = {key: hint if key == "return" else Annotated[hint, KEEP_SENT]
                               for key, hint in wrapper.__annotations__.items()}
    return wrapper


def _marked(wrapper: Callable[..., Any], guard: Guard, refuse_unread: Callable[[Exception], None],
            tool: str) -> Callable[..., Any]:
    setattr(wrapper, GUARD_ATTRIBUTE, guard)
    setattr(wrapper, TOOL_ATTRIBUTE, tool)
    setattr(wrapper, REFUSE_ATTRIBUTE, refuse_unread)
    return keeping_sent(wrapper)


def _cause(error: BaseException) -> str:
    """The error's message and its cause's (pydantic's list of what failed), on one line, cut short."""
    text = f"{error} ({error.__cause__})" if error.__cause__ is not None else str(error)
    return " ".join(text.split())[:400]


def _record_refusal(tool: Any, error: Exception, entered: list[bool]) -> None:
    """Record `error` as the SDK's refusal of the input when it was raised before the guarded function was entered."""
    if not entered:
        getattr(tool.func, REFUSE_ATTRIBUTE)(error)


class RecordingFunctionTool(BetaFunctionTool[Any]):
    """A guarded tool whose input the SDK refuses before the function runs gets a decision record (require_guarded)."""

    def call(self, input: object) -> Any:
        entered: list[bool] = []
        token = ENTERED.set(entered)
        try:
            return super().call(input)
        except Exception as e:
            _record_refusal(self, e, entered)
            raise
        finally:
            ENTERED.reset(token)


class RecordingAsyncFunctionTool(BetaAsyncFunctionTool[Any]):
    """RecordingFunctionTool for @beta_async_tool."""

    async def call(self, input: object) -> Any:
        entered: list[bool] = []
        token = ENTERED.set(entered)
        try:
            return await super().call(input)
        except Exception as e:
            _record_refusal(self, e, entered)
            raise
        finally:
            ENTERED.reset(token)


RECORDING: dict[type, type] = {BetaFunctionTool: RecordingFunctionTool, BetaAsyncFunctionTool: RecordingAsyncFunctionTool}


def recording(tool: Any) -> Any:
    """A copy of a guarded @beta_tool that records the calls the SDK refuses before the function runs (a tool of
    another class is returned as it is: its calls are decided, and such refusals stay unrecorded)."""
    if type(tool) not in RECORDING or not callable(getattr(getattr(tool, "func", None), REFUSE_ATTRIBUTE, None)):
        return tool
    twin = copy.copy(tool)
    twin.__class__ = RECORDING[type(tool)]
    return twin


def act(outcome: GuardOutcome) -> None:
    """Carry out an outcome inside a tool: return to run it, raise to refuse it or stop the run."""
    if outcome.action == "terminate":
        raise RunTerminated(outcome)
    if not outcome.allowed:
        raise ToolError(outcome.message)


def split_tool_uses(guard: Guard, message: Any, *, context: Context = None,
                    run: str = "") -> tuple[list[Any], list[dict[str, Any]]]:
    """For the hand-written loop: the response's tool_use blocks that may run, and an `is_error`
    tool_result for each refused one (send them with the results of the calls you run). Raises
    `RunTerminated` when the strategy terminates the run: then none of the calls may run; when one of them halts
    the run (tool_halt, replan_halt), none runs either: the allowed ones are refused as halted. Either way every
    tool_use block gets its record (those allowed, or after the one that stopped the run, as refused). A call the
    provider ran itself (server_tool_use, mcp_tool_use) is recorded as a refusal (it ran undecided) and counts like
    one: under terminate it raises RunTerminated, under a halt the message's calls are refused. A message whose
    stop_reason is null (a stream's snapshot) is not finished: its tool_use blocks are refused, recorded, and so are
    those of a message that ended with another stop_reason than tool_use (max_tokens may have cut the last input; the
    SDK's runner runs none of them). Content that
    is a string holds no tool use; a block that is neither a dict nor an SDK model cannot be read, so
    it is refused (fail closed) with the reason. A provider-side result block whose call block is not in the message
    (web_search_tool_result, bash_code_execution_tool_result, mcp_tool_result...) is recorded like that call.

    `message` may be the stream itself (`client.messages.stream(...)`, read to its end): then a tool_use whose
    streamed JSON input is not one complete object (the connection dropped, or the block ended early: 45000999 read as
    4) is refused, recorded. Pass the stream, not `stream.get_final_message()`: a final message alone cannot show a
    cut (the SDK's partial parse makes the cut text `{"amount_cents": 4` a complete dict {"amount_cents": 4})."""
    cut: dict[int, str] = {}
    if is_stream(message):
        message, cut = stream_cuts(message)
    content, stop = message_fields(guard, message)
    to_run: list[tuple[str, str, Any]] = []      # (id, tool, block) of each call allowed
    refused: list[dict[str, Any]] = []
    terminated: GuardOutcome | None = None
    stopped = False        # a block of this message was refused by a halt or a terminate
    # a snapshot of a stream still running (null), or a turn that ended without asking for tools (max_tokens: the last
    # input may be cut); a message without the field (a dict of blocks) is read as finished
    unfinished = UNFINISHED if stop is None else "" if stop in ("", "tool_use") else ENDED.format(str(stop)[:40])
    guard.finished(run)   # a new reply: the calls of the last one have run (the loop sent their results)
    if isinstance(content, str):
        return [], refused
    blocks = [(block, block_fields(block)) for block in content or ()]
    # every block's id, whatever its type: a loop that finds a tool_use by its id could find a provider-side call (an
    # mcp_tool_use, a server_tool_use) or another block of that id first, and run its input
    uses = Counter(str(b["id"]) for _, b in blocks if b is not None and b.get("id") is not None)
    provider_calls = {str(b.get("id", "")) for _, b in blocks if b is not None and type(b.get("type")) is str
                      and PROVIDER_CALL.fullmatch(b["type"])}
    for index, (block, b) in enumerate(blocks):
        kind = b.get("type") if b is not None else None
        ambiguous = ambiguous_id(str(b.get("id", "")), uses) if b is not None and kind == "tool_use" else ""
        cut_why = cut.get(index, "") if kind == "tool_use" else ""   # with the unfinished reason, when both hold
        ambiguous = "; and ".join(why for why in (ambiguous, unfinished if cut_why else "", cut_why) if why)
        if b is None:
            call_id = str(getattr(block, "id", ""))
            outcome = guard.refuse(f"{UNREADABLE} (a {type(block).__name__})", action_id=call_id, run=run,
                                   integration="anthropic_sdk")
        elif type(kind) is str and PROVIDER_CALL.fullmatch(kind):
            call_id, name = str(b.get("id", "")), str(b.get("name", ""))
            outcome = guard.refuse(f"a {kind} block: {name!r} ran on Anthropic's side, undecided; enable no server "
                                   "tools or MCP servers in the request (anthropic_sdk.refuse_provider_tools)",
                                   action_id=call_id, run=run, integration="anthropic_sdk", tool=name)
        elif type(kind) is str and PROVIDER_RESULT.fullmatch(kind) and str(b.get("tool_use_id")) not in provider_calls:
            call_id = str(b.get("tool_use_id", ""))
            outcome = guard.refuse(f"a {kind} block without its call: a tool ran on Anthropic's side, undecided; "
                                   "enable no server tools or MCP servers in the request "
                                   "(anthropic_sdk.refuse_provider_tools)", action_id=call_id, run=run,
                                   integration="anthropic_sdk", tool=kind)
        elif kind != "tool_use":
            continue
        elif ambiguous:   # refused in shadow mode too: which input would run under that id is the loop's guess
            call_id = str(b.get("id", ""))
            outcome = guard.refuse(ambiguous, action_id=call_id, run=run, integration="anthropic_sdk",
                                   tool=str(b.get("name")))
        elif unfinished:
            call_id = str(b.get("id", ""))
            outcome = guard.refuse(unfinished, action_id=call_id, run=run, integration="anthropic_sdk",
                                   tool=str(b.get("name")))
        else:
            call_id = str(b.get("id", ""))
            outcome = guard.check({"type": "tool_use", "id": call_id, "name": b.get("name"), "input": b.get("input")},
                                  context=context, action_id=call_id, run=run, integration="anthropic_sdk",
                                  tool=str(b.get("name")), exclusive=True)   # one allowed call per reply
        if outcome.action == "terminate":   # raised once every block has its record: the later ones are halted
            terminated = terminated or outcome
        stopped = stopped or outcome.action in ("halt", "terminate")
        if b is not None and kind == "tool_use" and outcome.allowed and not unfinished and not ambiguous:
            to_run.append((call_id, str(b.get("name")), block))
        elif kind == "tool_use" or b is None:   # unreadable, unfinished or ambiguous: refused in shadow mode too
            message_text = outcome.message if not (outcome.allowed and ambiguous) else f"fail closed: {ambiguous}"
            refused.append(tool_error(call_id, message_text or UNREADABLE))
        # a provider-side call gets no tool_result: the provider answered it itself
    if to_run and guard.mode == "enforce" and (stopped or guard.halted(run)):
        # a later block of this message halted the run: the allowed ones would run after the halt, so they are
        # refused too (each recorded as a refusal of the halted run), as a terminate stops them all
        refused += [tool_error(call_id, guard.refuse("its run was halted", action_id=call_id, run=run,
                                                     integration="anthropic_sdk", tool=tool).message)
                    for call_id, tool, _ in to_run]
        to_run = []
    if terminated is not None:
        raise RunTerminated(terminated)
    return [block for _, _, block in to_run], refused


def message_fields(guard: Guard, message: Any) -> tuple[Any, Any]:
    """The message's content and stop_reason; a message that cannot be read (a field that raises, content that is not
    a list of blocks or a string) is refused, recorded (Guard.refuse_run: its calls are unknown), with a TypeError."""
    try:
        if isinstance(message, dict):
            content, stop = message.get("content"), message.get("stop_reason", "")
        else:
            content, stop = getattr(message, "content", None), getattr(message, "stop_reason", "")
        if content is not None and not isinstance(content, (list, tuple, str)):
            raise TypeError(f"the message's content must be a list of content blocks or a string, not "
                            f"{type(content).__name__}")
    except Exception as e:
        why = f"the message cannot be read ({type(e).__name__}: {' '.join(str(e).split())[:200]}), so none of its " \
              "tool calls is run"
        guard.refuse_run(why, integration="anthropic_sdk")
        raise TypeError(why) from None
    return content, stop


def ambiguous_id(call_id: str, uses: Counter[str]) -> str:
    """Why a tool_use block's id does not name it alone ("" when it does): empty, or shared with another block of the
    message (a tool_use, a provider-side call, any block with an id). A loop that finds a block by its id (to run it, or
    to match its result) could run another block's input than the one decided, so every tool_use with such an id is
    refused."""
    if not call_id:
        return "a tool_use block without an id: its result could not be told from another's, so it is not run"
    if uses[call_id] > 1:
        return (f"{uses[call_id]} blocks of this message have the id {call_id[:60]!r}: a loop that finds a "
                "block by its id could run another one's input than the one decided, so none of them is run")
    return ""


def tool_error(call_id: str, message: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": message, "is_error": True}


def block_fields(block: Any) -> dict[str, Any] | None:
    """A content block's fields: the dict itself, or an SDK model's model_dump(); None when it is neither."""
    if isinstance(block, dict):
        return block
    try:
        dump = getattr(block, "model_dump", None)
        fields = dump() if callable(dump) else None
    except Exception:   # an object that cannot be read is refused like any other unreadable block
        return None
    return fields if isinstance(fields, dict) else None
