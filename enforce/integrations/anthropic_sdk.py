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
the validated one, so the policy reads what the model sent and the function gets what pydantic made of it.
"""
from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from typing import Annotated, Any, Callable, TypeVar

from anthropic.lib.tools import ToolError
from pydantic import ValidatorFunctionWrapHandler, WrapValidator

from veriguard.enforce.guard import Context, Guard, GuardOutcome, RunTerminated

F = TypeVar("F", bound=Callable[..., Any])
UNREADABLE = ("a content block that is neither a dict nor an Anthropic SDK model cannot be read, so it is refused: "
              "pass the message as the SDK returned it, or its model_dump()")


@dataclass(frozen=True)
class Sent:
    """One argument as the model sent it (`raw`) and as the SDK's validation made it (`value`)."""
    raw: Any
    value: Any


def keep_sent(raw: Any, handler: ValidatorFunctionWrapHandler) -> Sent:
    return Sent(raw, handler(raw))


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
    `true` or `45000.0` for an int reach the policy as they are), with defaults filled in, as an
    Anthropic tool_use block named `name` (default: the function's name, which is also the tool's
    name unless `@beta_tool(name=...)` says otherwise: pass the same). The tool's input schema is the
    function's. `run` names the run whose halting state the call counts in; a function returning the
    name (read at every call, e.g. from a contextvar) serves a tool shared by several conversations."""
    def wrap(func: F) -> F:
        signature = inspect.signature(func)
        tool = name or func.__name__

        def enforce(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            bound = signature.bind(*map(sent_raw, args), **{k: sent_raw(v) for k, v in kwargs.items()})
            bound.apply_defaults()
            call = {"type": "tool_use", "name": tool, "input": dict(bound.arguments)}
            act(guard.check(call, context=context, run=run() if callable(run) else run, integration="anthropic_sdk",
                            tool=tool))

        if inspect.iscoroutinefunction(func):
            @functools.wraps(func)
            async def run_async(*args: Any, **kwargs: Any) -> Any:
                enforce(args, kwargs)
                return await func(*map(sent_value, args), **{k: sent_value(v) for k, v in kwargs.items()})
            return keeping_sent(run_async)  # type: ignore[return-value]

        @functools.wraps(func)
        def run_sync(*args: Any, **kwargs: Any) -> Any:
            enforce(args, kwargs)
            return func(*map(sent_value, args), **{k: sent_value(v) for k, v in kwargs.items()})
        return keeping_sent(run_sync)  # type: ignore[return-value]
    return wrap


def keeping_sent(wrapper: Callable[..., Any]) -> Callable[..., Any]:
    """The wrapper with each annotated parameter validated through KEEP_SENT (the JSON schema pydantic
    derives is unchanged: a wrap validator adds nothing to it)."""
    wrapper.__annotations__ = {key: hint if key == "return" else Annotated[hint, KEEP_SENT]
                               for key, hint in wrapper.__annotations__.items()}
    return wrapper


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
    tool_use block gets its record (those allowed, or after the one that stopped the run, as refused). Content that
    is a string holds no tool use; a block that is neither a dict nor an SDK model cannot be read, so
    it is refused (fail closed) with the reason."""
    content = message.get("content") if isinstance(message, dict) else getattr(message, "content", None)
    to_run: list[tuple[str, str, Any]] = []      # (id, tool, block) of each call allowed
    refused: list[dict[str, Any]] = []
    terminated: GuardOutcome | None = None
    stopped = False        # a block of this message was refused by a halt or a terminate
    if isinstance(content, str):
        return [], refused
    if content is not None and not isinstance(content, (list, tuple)):
        raise TypeError(f"the message's content must be a list of content blocks or a string, not "
                        f"{type(content).__name__}")
    for block in content or ():
        b = block_fields(block)
        if b is None:
            call_id = str(getattr(block, "id", ""))
            outcome = guard.refuse(f"{UNREADABLE} (a {type(block).__name__})", action_id=call_id, run=run,
                                   integration="anthropic_sdk")
        elif b.get("type") != "tool_use":
            continue
        else:
            call_id = str(b.get("id", ""))
            outcome = guard.check({"type": "tool_use", "id": call_id, "name": b.get("name"), "input": b.get("input")},
                                  context=context, action_id=call_id, run=run, integration="anthropic_sdk",
                                  tool=str(b.get("name")))
        if outcome.action == "terminate":   # raised once every block has its record: the later ones are halted
            terminated = terminated or outcome
        stopped = stopped or outcome.action in ("halt", "terminate")
        if b is not None and outcome.allowed:
            to_run.append((call_id, str(b.get("name")), block))
        else:   # an unreadable block is refused in shadow mode too: there is no call to run
            refused.append(tool_error(call_id, outcome.message or UNREADABLE))
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


def tool_error(call_id: str, message: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": message, "is_error": True}


def block_fields(block: Any) -> dict[str, Any] | None:
    """A content block's fields: the dict itself, or an SDK model's model_dump(); None when it is neither."""
    if isinstance(block, dict):
        return block
    dump = getattr(block, "model_dump", None)
    fields = dump() if callable(dump) else None
    return fields if isinstance(fields, dict) else None
