"""The OpenAI Agents SDK (`openai-agents`, an optional extra): a tool input guardrail that puts a
function tool behind the policy, and run hooks that refuse to let the model see a tool without it.

Attach the guardrail to each function tool: `@function_tool(tool_input_guardrails=[policy_guardrail(guard)])`.
A call refused under block or replan returns `reject_content(reason)`: the reason replaces the tool's
result and the run goes on, so the model can re-plan. A halt or terminate returns `raise_exception()`:
the Runner raises `ToolInputGuardrailTripwireTriggered`, whose `.output.output_info` is the
GuardOutcome. A call
the SDK's validation would hand the function as other data than the model sent (the tool's own pydantic validators:
an alias resolved, dollars made cents) is refused, recorded: the policy decides the arguments the model sent. The
guardrail hands the SDK the arguments it validated (validated once), which the SDK runs for the JSON text decided only.
policy_hooks put a DecidedInvoker in front of each guarded tool (its public on_invoke_tool, before the model is asked):
a call runs only for the data its guardrail allowed for that invocation, so a call whose text an on_tool_start hook or
a later guardrail rewrote after the decision does not run, recorded, and the model is told why, whether the tool was
made by function_tool or by hand, with or without the SDK's prepared arguments; the same JSON written otherwise (keys
reordered, spacing) runs the data decided. Without the hooks a tool made by hand is refused (nothing holds it to the
text decided). Once it allows a call, the guardrail hands the hooks and later guardrails a copy of the call (the
ToolContext's tool_call): a rewrite there, with the SDK's prepared arguments taken away or not, never reaches the text
the SDK runs, with or without the hooks; a call whose text to run differs from the text the guardrail reads (a guardrail
before it changed one) is refused. An on_tool_start hook (the agent's, or a PolicyHooks subclass's) that raises after
the allow is recorded as not run, and so is a call that a guardrail run after the policy's refuses (reject_content,
raise_exception, an error; another guard's policy guardrail): the policy's guardrail makes each later guardrail of the
tool record that, with or without the hooks. An on_invoke_tool of the user's that wears the attributes of the SDK's
invoker (functools.wraps, a copied __dict__, a subclass, a partial) runs code of its own on the text it is handed: it
counts as a tool made by hand. The check the SDK makes before it asks for a call's approval (pre_approval_tool_input_guardrails)
does not take the run's one running call (whatever the tool's needs_approval and namespace: the SDK marks a call
executed before the guardrails of the pass that runs it, and that mark is read): the approved call is decided again
before it runs; one whose approval is refused is recorded as not run by the hooks when its result reaches the model. At
each allow the guardrail makes the agent's own hooks, and the run's (Runner.run(hooks=...), found in the SDK's frame
that called it), record an on_tool_start that raises or is cancelled (with or without policy_hooks). A call allowed
before its approval was asked whose approval is refused with `reject(guard, state, item)` (in place of state.reject) is
recorded as not run at once, for a run that may never be resumed. The SDK's private names read are checked when a guardrail is made: another openai-agents than the one
tested (SDK_TESTED) that lacks one gets AgentsSdkUnsupported (env.agents_sdk).

The SDK runs a guardrail only where it is attached, and hosted tools (web search, file search, code interpreter,
hosted MCP, image generation), the shell, patch and computer tools, and the tools of `mcp_servers` take none: a
tool the guardrail was not attached to ran without a decision, in this agent, in an agent it hands off to, or in
an agent called as a tool. `Runner.run(agent, ..., hooks=policy_hooks(guard))` checks, before every model call,
every tool the model could call there and in every agent reachable through agents-as-tools and handoffs, and raises
UnguardedTools (the run stops before the model is asked) when one is not a function tool carrying a guardrail of this
guard, or is a handoff that passes the model's arguments to its on_handoff (`input_type=`) or whose on_invoke_handoff is not
the one handoff() makes (built by hand or replaced: it is handed the model's arguments), or tools an agent's model
settings send (`extra_body={"tools": [...]}`: a hosted tool beside the agent's list), unless `unguarded` names it; a
hosted call in an answer (web_search_call...) that `unguarded` does not name is recorded (it ran on the provider's side).
A RunConfig is not handed to the hooks: they find the run's among the loop's tasks (run_config_of: the SDK's function
that calls on_llm_start, whose hooks and context are theirs) and refuse, before the model is asked, a run whose
RunConfig's model settings send tools, unless `unguarded` names "model_settings" (which lets them through in that run
only). `refuse_hosted_tools(guard)`, a request hook for the OpenAI client of the run's models, refuses (recorded) a
request that enables a provider-side tool wherever it was set. Without hooks, the guardrail refuses each call of a run
whose RunConfig's model settings send tools (the first model request has gone out by then).
They check each tool again as it is about to run (on_tool_start, called for function, shell, patch, computer and local
shell tools alike), so a tool the run added that the agent's list did not show stops the run there. A SandboxAgent's
capabilities (files, a shell) add such tools, in this agent or in one called as a tool (a nested run, without the
hooks): the check before the model call refuses them unless `unguarded` names "sandbox". An agent called as a tool
runs in a nested run that gets no hooks unless it was made with `policy_agent_tool(agent, guard, ...)` (as_tool with
the hooks): there a tool added at run time (by a tool, by the agent's own hooks) ran undecided, so the hooks refuse
an agent tool made otherwise unless `unguarded` names "nested_runs". Such a refusal is recorded in the guard's log (Guard.refuse_run: a denial that counts in no run).
"""
from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import json
import sys
import types
import weakref
from types import FrameType, FunctionType
from typing import Any, Callable, Iterable, Iterator, Mapping

import agents
import agents.tool
from agents import Agent, FunctionTool, Handoff, RunHooks, ToolGuardrailFunctionOutput, ToolInputGuardrail, \
    ToolInputGuardrailData, UserError
from agents.tool import ToolOriginType, get_function_tool_origin
from agents.tool_context import ToolContext
from pydantic import ValidationError

import veriguard.contracts.strict_json as strict_json
from veriguard.contracts.errors import EnvironmentProblem
from veriguard.enforce.guard import Guard, RunName
from veriguard.enforce.integrations.arguments import VALIDATION_CHANGED, changed_arguments, request_json

try:   # openai-agents 0.24's own holder of a call's validated arguments (private): see sdk_unreadable
    from agents._function_tool_arguments import PreparedFunctionArguments
except ImportError:   # pragma: no cover - another SDK version: policy_guardrail refuses to be made
    PreparedFunctionArguments = None  # type: ignore[assignment,misc]

Facts = Callable[[ToolInputGuardrailData], Mapping[str, Any]]
GUARD_ATTRIBUTE = "veriguard_guard"   # set on the guardrail's function: which guard decides
# Guards whose runs have PolicyHooks, which report the end of each call (Guard.finished): their guardrails decide
# exclusively (one allowed call at a time when the policy reads facts a call may change, such as a ledger).
RELEASED: "weakref.WeakSet[Guard]" = weakref.WeakSet()
WRAPPED = "__agents_function_tool_wrapped_callable__"   # where a function tool keeps its function (openai-agents 0.24)
SANDBOX = "sandbox"   # named in unguarded: a SandboxAgent's capability tools may run undecided
NESTED = "nested_runs"   # named in unguarded: an agent called as a tool may run without policy hooks
HOOKS_ATTRIBUTE = "veriguard_hooks"   # set on a policy_agent_tool: the guard whose hooks its nested run has
PREPARED = "_function_tool_arguments"   # where a ToolContext keeps the arguments its invoker runs (openai-agents 0.24)
DECIDED = "veriguard_decided"   # set on a ToolContext: {guard: Decided}, what each guard's guardrail allowed
PASSED = "veriguard_passed"   # set on a ToolContext: {guard: (tool, text)}, the invocation a DecidedInvoker let run
SDK_TESTED = "openai-agents 0.24"   # the version whose private names this module reads (sdk_unreadable)
# The SDK's private names read here (openai-agents 0.24): an agent tool's `_agent_instance` (the agent its nested run
# runs; an agent tool is also known by `_is_agent_tool` and by its public tool origin, so one without the agent is
# refused), a Handoff's `_agent_ref` (without it the handoff's agent cannot be seen: refused), an MCP tool's
# `_mcp_tool_binding` (without it an MCP tool is not let through by "mcp_servers": refused); a function tool invoker's
# closure names `_prepare_arguments` and `schema`, and a ToolContext's `_function_tool_arguments` (the arguments the
# guardrail validated, which the SDK runs only for the JSON text they were made of; without the closure names the call
# is refused), agents.tool._get_function_tool_invoke_context (the context the SDK hands an invoker), a ToolContext's
# `_tool_invocations` and `_restored_unbound_approval_call_ids` (whether the SDK marked a call executed, approval_preview:
# unreadable, the call counts as one that runs); the names of the SDK's functions and locals that run_config_of reads
# (RUN_FUNCTIONS: hooks, context_wrapper, run_config; not found, the guardrail's check of the RunConfig stands) and
# run_hooks reads (TOOL_BODY's self.hooks; not found, the run's hooks are left as they are). What holds a
# call to what was decided is public: a FunctionTool's on_invoke_tool (DecidedInvoker); no public path hands the SDK
# arguments validated once, or its parameters model, so those stay private, checked by sdk_unreadable.


class UnguardedTools(UserError):
    """The model was about to be offered tools that no guardrail of the guard decides."""


class AgentsSdkUnsupported(EnvironmentProblem):
    """The installed openai-agents lacks a name the guardrail reads (SDK_TESTED had it)."""

    def __init__(self, lacks: str) -> None:
        version = getattr(agents, "__version__", "?")
        super().__init__("env.agents_sdk", f"openai-agents {version} {lacks}, which veriguard's guardrail reads to hold "
                         f"a call to the arguments it decided (it was tested with {SDK_TESTED})",
                         fix=f"install {SDK_TESTED} (pip install 'openai-agents==0.24.*'), or a veriguard that reads "
                         "this version")


@functools.lru_cache(maxsize=1)
def sdk_unreadable() -> str:
    """What of the SDK's private names this module reads is missing ("" when none): the holder of a call's validated
    arguments (PreparedFunctionArguments, kept on a ToolContext as `_function_tool_arguments`), and the SDK's choice of
    the context a tool's invoker is handed (agents.tool._get_function_tool_invoke_context). Without them a guardrail
    would set a field nothing reads, and a rewritten call would run: policy_guardrail refuses to be made."""
    if PreparedFunctionArguments is None:
        return "has no agents._function_tool_arguments.PreparedFunctionArguments"
    fields = {f.name for f in dataclasses.fields(PreparedFunctionArguments)}
    if not {"owner", "arguments", "args", "kwargs"} <= fields:
        return f"has a PreparedFunctionArguments without the fields owner, arguments, args, kwargs ({sorted(fields)})"
    if not callable(getattr(agents.tool, "_get_function_tool_invoke_context", None)):
        return "has no agents.tool._get_function_tool_invoke_context"
    try:
        held = hasattr(ToolContext(context=None, tool_name="t", tool_call_id="c", tool_arguments="{}"), PREPARED)
    except Exception as e:
        return f"makes a ToolContext otherwise ({type(e).__name__}: {str(e)[:120]})"
    return "" if held else f"keeps no {PREPARED} on a ToolContext"


@dataclasses.dataclass(frozen=True)
class Decided:
    """What a guardrail allowed for one invocation: the JSON text, the tool, the SDK's validated arguments of that text
    (None for a tool made by hand, or in shadow mode), and whether only that may run (enforce mode)."""
    text: str
    tool: Any
    prepared: Any
    held: bool
    invoker_held: bool = False   # a DecidedInvoker of the guard stood in front of the tool when the call was decided
    run: str = ""                # the run the call counts in
    claimed: bool = False        # the decision took the run's one running call (GuardOutcome.claimed)


UNDECIDED = ("no guardrail of policy {} allowed this invocation of {!r} (its decision is missing from the call's "
             "context, or was made for another tool): not run")
REWRITTEN = ("the arguments of {!r} were changed after policy {} allowed them (by a hook or a guardrail): {!r} in place "
             "of {!r}")


class DecidedInvoker:
    """The on_invoke_tool of a tool a guardrail of `guard` decides (policy_hooks put it there before the model is asked,
    never while calls are planned): it runs a call only for the data the guardrail allowed for that invocation. A call
    whose JSON text was changed after the decision (by an on_tool_start hook, a later guardrail, with or without the
    SDK's prepared arguments taken away; a tool made by hand, whose function reads the text) is not run and recorded,
    in enforce mode, and the model is told why; text of the same JSON data (keys reordered, other spacing) runs the
    arguments decided. Only a public field of the tool (on_invoke_tool) is replaced; `inner` is the SDK's invoker."""

    def __init__(self, inner: Any, guard: Guard, tool: Any) -> None:
        self.inner, self.guard, self.tool = inner, guard, tool
        self.whole: bool | None = None   # whether `inner` takes the call's context as it is (read at the first call)

    def __agents_bind_function_tool__(self, tool: Any) -> "DecidedInvoker":   # a copy of the tool: bound to the copy
        bind = getattr(self.inner, "__agents_bind_function_tool__", None)
        return DecidedInvoker(bind(tool) if callable(bind) else self.inner, self.guard, tool)

    def __getattr__(self, name: str) -> Any:   # the SDK reads markers of its own invoker (sync, wrapped callable)
        if name in ("inner", "guard", "tool", "whole"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    async def __call__(self, ctx: Any, input: str) -> Any:
        try:
            why = self._refusal(ctx, input)
            handed = None if why else ctx if self.whole else self._context(ctx)
        except Exception as e:   # a check that failed decided nothing
            why = f"the check of this invocation failed ({type(e).__name__}: {' '.join(str(e).split())[:200]}); not run"
        if why:
            self.guard.refuse_run(why, integration="openai_agents", tool=str(getattr(self.tool, "name", "")),
                                  action_id=str(getattr(ctx, "tool_call_id", "")))
            return f"Not run by policy {self.guard.policy_name}: {why}."
        return await self.inner(handed, input)

    def _context(self, ctx: Any) -> Any:
        """The context the SDK would hand `inner` (the call's ToolContext, or a plain RunContextWrapper for an invoker
        whose first parameter asks for one): fixed by `inner`'s signature, so read once."""
        handed = agents.tool._get_function_tool_invoke_context(types.SimpleNamespace(on_invoke_tool=self.inner), ctx)
        self.whole = handed is ctx
        return handed

    def _refusal(self, ctx: Any, input: str) -> str:
        """Why this invocation may not run ("" when it may); for a call that may, the SDK is handed the arguments
        decided (validated once) for the text it runs."""
        decided = (getattr(ctx, DECIDED, None) or {}).pop(self.guard, None)   # one invocation per decision
        name = str(getattr(self.tool, "name", ""))
        if not isinstance(decided, Decided) or decided.tool is not self.tool:
            tool, text = (getattr(ctx, PASSED, None) or {}).get(self.guard, (None, None))
            if tool is self.tool and text == input:   # inside an outer one of this guard (a wrapper of the user's
                return ""                              # between them) that let this invocation run with this text
            return UNDECIDED.format(self.guard.policy_name, name) if self.guard.mode == "enforce" else ""
        seen = call_text(ctx, input)   # the call as the hooks left it
        # the text seen, read once where it is the text run (the same string: its check would repeat that one)
        texts = (input,) if seen is input or (type(seen) is type(input) is str and seen == input) else (input, seen)
        other = next((text for text in texts if text != decided.text and not same_json(text, decided.text)), None)
        if other is None and decided.prepared is not None and (input != decided.text or getattr(ctx, PREPARED, None)
                                                               is not decided.prepared):
            # the SDK runs prepared arguments only for their own text: the data decided, for this text of it
            setattr(ctx, PREPARED, dataclasses.replace(decided.prepared, arguments=input))
        if other is None:
            passed = getattr(ctx, PASSED, None)
            if not isinstance(passed, dict):
                passed = {}
                setattr(ctx, PASSED, passed)
            passed[self.guard] = (self.tool, input)
            return ""
        why = REWRITTEN.format(name, self.guard.policy_name, str(other)[:200], decided.text[:200])
        if not decided.held:   # shadow mode: it runs, recorded
            self.guard.refuse_run(f"{why}; it ran", integration="openai_agents", tool=name,
                                  action_id=str(getattr(ctx, "tool_call_id", "")))
            return ""
        return f"{why}; not run"


def same_json(left: str, right: str) -> bool:
    """Whether two JSON texts are the same data (keys in any order, any spacing; 1 and 1.0 and true are not one value);
    False when either is not strict JSON (a duplicate key, NaN)."""
    try:
        return _same_value(strict_json.loads(left), strict_json.loads(right))
    except Exception:
        return False


def _same_value(left: Any, right: Any) -> bool:
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(_same_value(v, right[k]) for k, v in left.items())
    if isinstance(left, list):
        return len(left) == len(right) and all(map(_same_value, left, right))
    return bool(left == right)


def hold_to_decided(tool: Any, guard: Guard) -> None:
    """Put a DecidedInvoker of `guard` in front of a function tool a guardrail of `guard` decides (not an agent called
    as a tool: its nested run's own tools are decided, and the SDK resumes it without guardrails). Done once per tool
    and guard, and only before the model is asked: the SDK compares a tool's invoker with the one it planned with."""
    if guarded_by(tool, guard) and not agent_tool(tool)[0]:
        _hold(tool, guard)


def _hold(tool: Any, guard: Guard) -> None:
    """hold_to_decided for a tool the caller found guarded by `guard` and no agent tool."""
    invoker = getattr(tool, "on_invoke_tool", None)
    if invoker is None or held_by(invoker, guard):
        return
    tool.on_invoke_tool = DecidedInvoker(invoker, guard, tool)


def hold_tools(agent: Any, guard: Guard) -> None:
    """What policy_hooks do before each model call: hold every tool a guardrail of `guard` decides, in `agent` and the
    agents it reaches, to the data decided (hold_to_decided). Call it before resuming a run from a RunState with an agent
    made anew (`Runner.run(agent, state, ...)` runs the approved calls before any hook is called)."""
    unguarded_tools(agent, guard, hold=True)


def invoker_chain(invoker: Any) -> Iterator[Any]:
    """`invoker` (a tool's on_invoke_tool) and each invoker it wraps: the DecidedInvokers put in front of the tool,
    outermost first, then the invoker the tool had before any of them (the last one yielded)."""
    while isinstance(invoker, DecidedInvoker):
        yield invoker
        invoker = invoker.inner
    yield invoker


def held_by(invoker: Any, guard: Guard) -> bool:
    """Whether `invoker` (a tool's on_invoke_tool) is, or wraps, a DecidedInvoker of `guard`."""
    return any(isinstance(i, DecidedInvoker) and i.guard is guard for i in invoker_chain(invoker))


def sdk_invoker(invoker: Any) -> Any:
    """The invoker a tool had before any DecidedInvoker was put in front of it."""
    *_, original = invoker_chain(invoker)
    return original


def policy_guardrail(guard: Guard, *, context: Facts | None = None, run: Callable[[ToolInputGuardrailData], str] | None
                     = None, name: str = "veriguard") -> ToolInputGuardrail[Any]:
    """A tool input guardrail deciding each call with `guard`. `context(data)` gives the facts beside
    the call (default: the run's context object, `Runner.run(..., context=...)`, which must then be a
    mapping); `run(data)` names the run whose halting state the call counts in (default: one run; one that
    raises refuses the call, recorded)."""
    problem = sdk_unreadable()
    if problem:
        raise AgentsSdkUnsupported(problem)

    def check(data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        tool = data.context
        call = {"type": "function", "id": tool.tool_call_id,
                "function": {"name": tool.tool_name, "arguments": tool.tool_arguments}}
        facts = (lambda: context(data)) if context is not None else (lambda: tool.context)
        counted: RunName = (lambda: run(data)) if run else ""
        changed, prepared, found = validation_changes(data, check)
        invoker_held = held_by(getattr(found, "on_invoke_tool", None), guard)   # a DecidedInvoker of guard holds it
        if not changed and prepared is None and not invoker_held and \
                not agent_tool(found)[0]:   # an agent called as a tool: its input is a prompt, its tools decided apart
            changed = UNHELD.format(tool.tool_name)
        hooks = run_hooks()
        if not changed:
            changed = run_settings_tools(tool, guard, hooks)
        runs = call_text(tool, tool.tool_arguments)   # what the SDK runs (read before detach_call)
        if not changed and runs != tool.tool_arguments:
            changed = RUNS_OTHER.format(tool.tool_name, str(runs)[:200], tool.tool_arguments[:200])
        preview = approval_preview(tool, found)
        outcome = guard.refuse(changed, action_id=tool.tool_call_id, run=counted, integration="openai_agents",
                               tool=tool.tool_name) if changed else \
            guard.check(call, context=facts, action_id=tool.tool_call_id, run=counted, integration="openai_agents",
                        tool=tool.tool_name, exclusive=guard in RELEASED and not preview)
        held = guard.mode == "enforce"   # shadow mode refuses nothing
        awaiting(guard, tool.tool_call_id, tool.tool_name if outcome.allowed and not changed and held and preview else None)
        if outcome.allowed and not changed:
            decided = getattr(tool, DECIDED, None)
            if not isinstance(decided, dict):
                decided = {}
                setattr(tool, DECIDED, decided)
            decided[guard] = Decided(tool.tool_arguments, found, prepared if held else None, held, invoker_held,
                                     outcome.run, outcome.claimed)
            if held and prepared is not None:   # the SDK runs these, and only for the text decided
                setattr(tool, PREPARED, prepared)
            # the hooks see a copy: a change they make to it never reaches what runs (not for an agent called as a
            # tool; a tool a DecidedInvoker holds is none: _hold is reached only for a tool agent_tool says is no agent)
            if held and (invoker_held or not agent_tool(found)[0]):
                detach_call(tool)
            if held:
                record_later_refusals(found, check)
                record_hooks_raise(data.agent)
                wrap_on_tool_start(hooks)   # the user's run hooks too: without policy_hooks nothing else does
        elif not outcome.allowed:   # an earlier guardrail of another guard allowed it: that allow did not run
            not_run(tool, f"policy {guard.policy_name} refused the call after it was allowed")
        if outcome.action in ("halt", "terminate"):
            return ToolGuardrailFunctionOutput.raise_exception(output_info=outcome)
        if not outcome.allowed:
            return ToolGuardrailFunctionOutput.reject_content(outcome.message, output_info=outcome)
        return ToolGuardrailFunctionOutput.allow(output_info=outcome)

    setattr(check, GUARD_ATTRIBUTE, guard)
    return ToolInputGuardrail(guardrail_function=check, name=name)


def approval_preview(context: Any, tool: Any) -> bool:
    """Whether this is the SDK's check of a call before it asks for its approval (RunConfig(tool_execution=
    ToolExecutionConfig(pre_approval_tool_input_guardrails=True)); the tool's needs_approval True or a function that
    said so; any name or namespace): nothing runs in this pass, and the approved call is decided again before it runs,
    so this decision does not take the run's one running call (it took it, and the approved call was refused as busy).
    The SDK marks a call executed before the guardrails of the pass that runs it, never before this one: the mark is
    read (the call's invocation record, private to openai-agents 0.24), and a call whose record cannot be read, or is
    missing, or was restored unbound from a RunState (the SDK does not mark those), counts as a call that runs: its
    check takes the call."""
    config = getattr(getattr(context, "run_config", None), "tool_execution", None)
    if getattr(config, "pre_approval_tool_input_guardrails", False) is not True or \
            getattr(tool, "needs_approval", False) is False:
        return False
    try:
        call_id = context.tool_call_id
        invocation = context._tool_invocations.get(call_id)
        return invocation is not None and invocation.executed is False and \
            call_id not in context._restored_unbound_approval_call_ids
    except Exception:
        return False


# Per guard, the calls its guardrail allowed before their approval was asked (approval_preview), by call id: each is
# decided again once approved; one whose result comes back undecided (its approval was refused) is recorded by the
# hooks as not run. The oldest are forgotten past AWAITING_KEPT (a run never resumed).
AWAITING: "weakref.WeakKeyDictionary[Guard, dict[str, str]]" = weakref.WeakKeyDictionary()
AWAITING_KEPT = 1024


def awaiting(guard: Guard, call_id: str, tool: str | None) -> None:
    """Note that the call `call_id` of `tool` awaits its approval, allowed (`tool` given), or that it was decided now
    (None: any note of it is dropped)."""
    calls = AWAITING.get(guard)
    if tool is None:
        if calls:
            calls.pop(call_id, None)
        return
    calls = AWAITING.setdefault(guard, {})
    calls[call_id] = tool
    while len(calls) > AWAITING_KEPT:
        del calls[next(iter(calls))]


def reject(guard: Guard, state: Any, item: Any, **kw: Any) -> None:
    """`state.reject(item, **kw)` (a RunState's approval item refused), recorded now by `guard` when its guardrail allowed
    the call before its approval was asked: the run may never be resumed, and then that allow was the call's one record
    (the hooks record a refusal only when a resumed run asks the model again). The SDK gives no hook at rejection, so
    call this in place of state.reject. An item whose call id cannot be read is rejected, and nothing is recorded."""
    state.reject(item, **kw)
    raw = getattr(item, "raw_item", None)
    _refuse_awaiting(guard, raw.get("call_id") if isinstance(raw, Mapping) else getattr(raw, "call_id", None))


APPROVAL_REFUSED = "the call was allowed before its approval was asked, and its approval was refused: not run"


def _refuse_awaiting(guard: Guard, call_id: Any) -> None:
    """Record, by `guard`, that the call `call_id` allowed before its approval was asked (AWAITING) did not run: its
    approval was refused. Nothing when the id is not a string or the call is not awaiting."""
    calls = AWAITING.get(guard)
    if isinstance(call_id, str) and calls and call_id in calls:
        guard.refuse_run(APPROVAL_REFUSED, integration="openai_agents", tool=calls.pop(call_id), action_id=call_id)


def approval_refused(guard: Guard, items: Any) -> None:
    """Record, by `guard`, each call whose result is among the model's input `items` though it was allowed only before
    its approval and never decided after (its approval was refused): the allow was its one record."""
    calls = AWAITING.get(guard)
    if not calls:
        return
    for item in items if isinstance(items, list) else ():
        call_id = item.get("call_id") if isinstance(item, Mapping) else getattr(item, "call_id", None)
        kind = item.get("type") if isinstance(item, Mapping) else getattr(item, "type", None)
        if kind == "function_call_output":
            _refuse_awaiting(guard, call_id)


LATER = "veriguard_records_refusal"   # set on a guardrail function wrapped by refusal_recorded


def record_later_refusals(tool: Any, check: Callable[..., Any]) -> None:
    """Make each guardrail of `tool` after the policy's (`check`) record, when it refuses the call (reject_content,
    raise_exception, an error), that the allow did not run: the SDK runs them after the allow, and a refusal there left
    the allow as the call's one record. Each guardrail object is wrapped once (its guardrail_function, in place: the
    tool's list and the SDK's results keep the user's objects); a policy guardrail of another guard records itself."""
    guardrails = list(getattr(tool, "tool_input_guardrails", None) or ())
    mine = next((i for i, g in enumerate(guardrails) if g.guardrail_function is check), len(guardrails))
    for later in guardrails[mine + 1:]:
        function = getattr(later, "guardrail_function", None)
        if callable(function) and not getattr(function, LATER, False) and getattr(function, GUARD_ATTRIBUTE, None) \
                is None:
            try:
                later.guardrail_function = refusal_recorded(function, str(getattr(later, "name", "") or "?"))
            except Exception:   # an object that cannot be changed: its refusal stays unrecorded, the call unrun
                continue


def refusal_recorded(function: Callable[..., Any], name: str) -> Callable[..., Any]:
    """A guardrail function that records (not_run) the allows of the call it refuses, or fails on."""
    def refused(data: Any, out: Any) -> Any:
        behavior = getattr(out, "behavior", None)
        kind = behavior.get("type") if isinstance(behavior, Mapping) else None
        if kind != "allow":
            not_run(data.context, f"guardrail {name!r}, run after the policy's, refused the call after it was allowed "
                    f"({kind})")
        return out

    async def awaited(data: Any, pending: Any) -> Any:
        try:
            return refused(data, await pending)
        except BaseException as e:
            not_run(data.context, failed_after(name, e))
            raise

    @functools.wraps(function)
    def guardrail(data: Any) -> Any:
        try:
            out = function(data)
        except BaseException as e:
            not_run(data.context, failed_after(name, e))
            raise
        return awaited(data, out) if inspect.isawaitable(out) else refused(data, out)
    setattr(guardrail, LATER, True)
    return guardrail


def failed_after(name: str, e: BaseException) -> str:
    return (f"guardrail {name!r}, run after the policy's, failed after the call was allowed ({type(e).__name__}: "
            f"{' '.join(str(e).split())[:200]})")


RUNS_OTHER = ("the SDK would run {!r} with the text {!r}, not with the arguments {!r} this guardrail reads (changed before "
              "it, by another guardrail): not run")


def detach_call(context: Any) -> None:
    """Hand the hooks and later guardrails a copy of the call (the ToolContext's tool_call) in place of the object the SDK
    invokes the tool with: a hook that rewrites the call's arguments (and takes the SDK's prepared arguments away) then
    changes only the copy, with or without policy_hooks, so the text decided is what runs; DecidedInvoker still refuses
    such a call, recorded, where the hooks hold the tool. A call object that cannot be copied is left as it is."""
    call = getattr(context, "tool_call", None)
    copy = getattr(call, "model_copy", None)
    if callable(copy):
        context.tool_call = copy()


def call_text(context: Any, default: Any) -> Any:
    """The arguments text of the call of `context` (its tool_call's `arguments`; `default` when it has none): before
    detach_call, the text the SDK invokes the tool with; after it, the copy as the hooks and later guardrails left it."""
    return getattr(getattr(context, "tool_call", None), "arguments", default)


UNHELD = ("{!r} is a FunctionTool made by hand (its own on_invoke_tool), which runs the JSON text it is handed when it "
          "is invoked: a hook may change that text after this decision, and only policy_hooks(guard) on the run hold "
          "the tool to the text decided (a run resumed from a RunState with an agent made anew runs its approved calls "
          "before any hook: call hold_tools(agent, guard) first); not run")


def validation_changes(data: ToolInputGuardrailData, check: Callable[..., Any]) -> tuple[str, Any, Any]:
    """(why the function of the tool `check` (a guardrail's function) is attached to would get other data than the
    arguments the model sent, which the policy decides: "" when it would not; the SDK's prepared arguments of the call,
    None for a tool made by hand; the tool, None when not found). The SDK validates the arguments with a pydantic model
    of the function's parameters, which runs the tool's own validators (an alias resolved, dollars made cents). A tool
    that cannot be found in the agent, found twice, or whose validation cannot be read, is refused: what runs is
    unknown."""
    name, arguments = data.context.tool_name, data.context.tool_arguments
    try:
        tools = [t for t in getattr(data.agent, "tools", None) or () if isinstance(t, FunctionTool) and t.name == name
                 and any(g.guardrail_function is check for g in t.tool_input_guardrails or ())]
        if len(tools) != 1:
            found = "cannot find its tool" if not tools else f"finds {len(tools)} tools"
            return (f"the guardrail {found} {name!r} among the tools of agent {getattr(data.agent, 'name', '?')!r}, so "
                    "what the call would run is unknown"), None, None
        return (*prepared_call(tools[0], name, arguments), tools[0])
    except Exception as e:
        return (f"the arguments of {name!r} could not be compared with what its function would get ({type(e).__name__}:"
                f" {' '.join(str(e).split())[:200]}), so what the call would run is unknown"), None, None


def prepared_call(tool: FunctionTool, name: str, arguments: str) -> tuple[str, Any]:
    """(validation_changes for one function tool: why its function would get other data than `arguments` says, "" when
    it would not; the call's arguments validated once, as the SDK's invoker takes them: None when they are refused or
    the tool was made by hand). The SDK runs prepared arguments only for the JSON text they were made of, so a call
    whose text a hook (on_tool_start) or another guardrail changed after this decision does not run."""
    invoker = sdk_invoker(tool.on_invoke_tool)   # the SDK's invoker of function_tool's, or one made by hand
    made = getattr(invoker, "_invoke_tool_impl", invoker)
    if not made_by_function_tool(invoker, made):   # made by hand, or wearing the attributes of the SDK's (wraps)
        return "", None
    if getattr(made, WRAPPED, None) is None:
        if hasattr(made, "__agents_prepare_arguments__"):   # made by function_tool, its function no longer found
            raise LookupError(f"openai-agents keeps the function of a function tool no longer as {WRAPPED} (0.24 did)")
        return "", None   # function_tool's, of an SDK that keeps its function elsewhere (drift): nothing prepared
    # fixed per invoker (made_by_function_tool holds it to a plain function, equal only to itself): kept
    prepare, schema = sdk_preparer(made)
    sent = json.loads(arguments) if arguments else {}   # as the SDK reads it
    if not isinstance(sent, dict):
        return f"{REFUSED_BY_SDK.format(name)}: a JSON {type(sent).__name__}, not an object", None
    keys, why = parameter_keys(schema.params_pydantic_model)
    if why:
        raise LookupError(why)
    try:
        parsed = schema.params_pydantic_model(**sent) if sent else schema.params_pydantic_model()
    except ValidationError as e:   # the SDK refuses it too (ModelBehaviorError): nothing runs
        return f"{REFUSED_BY_SDK.format(name)}: {' '.join(str(e).split())[:300]}", None
    values = object.__getattribute__(parsed, "__dict__")
    changed = changed_arguments(sent, {key: values[field] for field, key in keys.items() if field in values})
    if changed:
        return f"{VALIDATION_CHANGED.format(name)}: {changed}", None
    args, kwargs = schema.to_call_args(parsed)
    return "", PreparedFunctionArguments(owner=prepare, arguments=arguments, args=args, kwargs=kwargs)


@functools.lru_cache(maxsize=1)
def _function_tool_invoker() -> tuple[type, Any]:
    """(the type of the on_invoke_tool function_tool() makes, the code its invocation runs): read from a tool made here,
    so no private name of the SDK is read."""
    def veriguard_probe() -> None:
        """Probe."""
    invoker = agents.function_tool(veriguard_probe).on_invoke_tool
    made = getattr(invoker, "_invoke_tool_impl", invoker)
    return type(invoker), getattr(made, "__code__", None)


def made_by_function_tool(invoker: Any, made: Any) -> bool:
    """Whether `invoker` (the one a tool had before any DecidedInvoker) is the one function_tool() makes, and `made`
    the invocation it runs: an invoker of the user's that copied the attributes of the SDK's (functools.wraps) shows
    the SDK's invocation but runs code of its own, which reads the text it is handed, as a tool made by hand does."""
    kind, code = _function_tool_invoker()
    return type(invoker) is kind and type(made) is FunctionType and made.__code__ is code


REFUSED_BY_SDK = "the SDK's validation refuses the arguments of {}(), so it does not run"


@functools.lru_cache(maxsize=256)
def sdk_preparer(made: Any) -> tuple[Callable[..., Any], Any]:
    """(the SDK's function that validates a call's arguments for `made`, a function_tool's invoker, and the FuncSchema
    it validates with): the names `_prepare_arguments` and `schema` its closure holds (openai-agents 0.24). Fixed per
    invoker, so kept (a LookupError is not kept: it is raised again at the next call)."""
    cells = dict(zip(getattr(getattr(made, "__code__", None), "co_freevars", ()), getattr(made, "__closure__", None)
                     or ()))
    try:
        prepare, schema = cells["_prepare_arguments"].cell_contents, cells["schema"].cell_contents
    except (KeyError, ValueError):
        prepare = schema = None
    if not callable(prepare) or not callable(getattr(schema, "to_call_args", None)):
        raise LookupError("openai-agents' function tool invoker holds no _prepare_arguments and schema (0.24's did)")
    return prepare, schema


@functools.lru_cache(maxsize=256)
def parameter_keys(model: Any) -> tuple[dict[str, str], str]:
    """The key the model sends each field of the SDK's parameters model by (its alias, else its name), and why those
    keys are unknown ("" when they are known): an alias that is not one key (AliasChoices, AliasPath)."""
    keys: dict[str, str] = {}
    for name, field in model.model_fields.items():
        alias = field.validation_alias if field.validation_alias is not None else field.alias
        if alias is not None and type(alias) is not str:
            return keys, f"the parameter {name!r} is read through {type(alias).__name__}"
        keys[name] = alias or name
    return keys, ""


def guarded_by(tool: Any, guard: Guard) -> bool:
    """Whether `tool` is a function tool with a guardrail of `guard` (policy_guardrail(guard)) attached."""
    return isinstance(tool, FunctionTool) and any(
        getattr(g.guardrail_function, GUARD_ATTRIBUTE, None) is guard for g in tool.tool_input_guardrails or ())


def _handoff_agents(agent: Any) -> Iterator[Any]:
    for h in getattr(agent, "handoffs", None) or ():
        if isinstance(h, Agent):
            yield h
        else:   # a Handoff object keeps its agent behind a weak reference; None when it cannot be seen
            ref = getattr(h, "_agent_ref", None)
            yield ref() if callable(ref) else None


def takes_model_input(h: Any) -> str:
    """Why a Handoff passes arguments the model wrote to code of the user's ("" when it does not): its on_handoff
    function (`handoff(..., input_type=...)`), or an on_invoke_handoff not made by the SDK's handoff() (a Handoff built
    by hand, or its invoker replaced), which is handed the model's arguments whatever its schema says. Such a handoff is
    a call of that code, and a tool input guardrail never sees it."""
    if isinstance(h, Agent):
        return ""
    if not made_by_handoff(getattr(h, "on_invoke_handoff", None)):
        return "its on_invoke_handoff is not the one handoff() makes: that code is handed the model's arguments"
    schema = getattr(h, "input_json_schema", None)
    takes = not isinstance(schema, Mapping) or bool(schema.get("properties") or schema.get("additionalProperties")
                                                    or schema.get("type") not in (None, "object"))
    return "it runs on_handoff with the model's arguments" if takes else ""


@functools.lru_cache(maxsize=1)
def _handoff_invoker() -> tuple[Any, Any]:
    """(the function handoff()'s invoker is a partial of, or None; the code of the function it wraps, or of the invoker
    itself): read from a handoff made here, so no private name of the SDK is read."""
    made = agents.handoff(Agent(name="veriguard")).on_invoke_handoff
    if isinstance(made, functools.partial):
        return made.func, getattr(made.args[0], "__code__", None) if made.args else None
    return None, getattr(made, "__code__", None)


def made_by_handoff(invoke: Any) -> bool:
    """Whether `invoke` (a Handoff's on_invoke_handoff) is one the SDK's handoff() made: it hands the model's arguments
    only to an on_handoff declared with input_type (whose schema then says so)."""
    func, code = _handoff_invoker()
    if code is None:
        return False
    if isinstance(invoke, functools.partial):
        return func is not None and invoke.func is func and len(invoke.args) == 1 and not invoke.keywords and \
            getattr(invoke.args[0], "__code__", None) is code
    return func is None and getattr(invoke, "__code__", None) is code


def sandbox_capabilities(agent: Any) -> list[str]:
    """The capabilities of a SandboxAgent that give the model tools (a shell, files), which the agent's `tools` never
    shows: the run adds them. A capability whose tools cannot be listed before its session is bound counts as one."""
    named = []
    for capability in getattr(agent, "capabilities", None) or ():
        try:
            tools = capability.tools()
        except Exception:
            tools = None
        if tools is None or tools:
            named.append(type(capability).__name__)
    return named


NOT_AGENT = "veriguard_not_agent_tool"   # set on a function tool read as no agent tool (its origin, read once per tool)


def agent_tool(tool: Any) -> tuple[bool, Any]:
    """(whether `tool` is an agent called as a tool, the agent its nested run runs: None when it cannot be seen)."""
    inner = getattr(tool, "_agent_instance", None)
    if inner is not None:
        return True, inner
    if getattr(tool, "__dict__", {}).get(NOT_AGENT) is True:   # what made it is fixed; its origin costs 15 us to read
        return False, None
    try:
        origin = get_function_tool_origin(tool) if isinstance(tool, FunctionTool) else None
    except Exception:   # an SDK that changed the origin's fields: read as an agent tool whose agent is unseen
        return True, None
    is_agent = getattr(tool, "_is_agent_tool", False) is True or getattr(origin, "type", None) == \
        ToolOriginType.AGENT_AS_TOOL
    if not is_agent and isinstance(tool, FunctionTool):
        tool.__dict__[NOT_AGENT] = True
    return is_agent, None


def unguarded_tools(agent: Any, guard: Guard, unguarded: frozenset[str] = frozenset(), *,
                    hold: bool = False) -> list[str]:
    """What the model could call, in `agent` and in every agent it reaches through
    handoffs and agents-as-tools (their nested runs get no hooks), that no guardrail of `guard` decides: not a
    function tool with one attached, MCP servers, a handoff whose agent cannot be seen. With `hold`, each tool of those
    agents that a guardrail of `guard` decides (not an agent called as a tool) is held to the data decided
    (hold_to_decided)."""
    found: list[str] = []
    seen: set[int] = set()

    def visit(owner: Any) -> None:
        seen.add(id(owner))
        label = getattr(owner, "name", "?")
        for tool in getattr(owner, "tools", None) or ():
            guarded = guarded_by(tool, guard)
            is_agent, inner = agent_tool(tool)
            if hold and guarded and not is_agent:   # hold_to_decided, its checks made once here
                _hold(tool, guard)
            name = str(getattr(tool, "name", type(tool).__name__))
            if name not in unguarded and not guarded:
                found.append(f"{type(tool).__name__} {name!r} of agent {label!r}")
            if is_agent and inner is None:
                found.append(f"agent tool {name!r} of agent {label!r}, whose agent cannot be seen (the SDK keeps it "
                             "no longer as _agent_instance), so the tools of its nested run are unknown")
            elif inner is not None:   # an agent called as a tool runs in a nested run, without these hooks
                if unhooked_nested(tool, guard, unguarded, is_agent=is_agent):
                    found.append(f"{NESTED_RUN.format(name, label, getattr(inner, 'name', '?'))} (make it with "
                                 f"policy_agent_tool(agent, guard, ...), or name \"{NESTED}\" in unguarded)")
                nested(inner)
        capabilities = sandbox_capabilities(owner)
        if capabilities and SANDBOX not in unguarded:
            found.append(f"the sandbox capabilities {capabilities} of agent {label!r} (their tools, a shell or files, "
                         f"take no guardrail; name \"{SANDBOX}\" in unguarded to let them run undecided)")
        extra = settings_tools(owner)
        if extra and SETTINGS not in unguarded:
            found.append(f"tools that the model settings of agent {label!r} send beside the agent's own ({extra}): "
                         "a hosted tool there runs on the provider's side and a function there is no tool of the agent "
                         f"(name \"{SETTINGS}\" in unguarded to let them through)")
        if getattr(owner, "mcp_servers", None) and "mcp_servers" not in unguarded:
            found.append(f"the MCP servers of agent {label!r} (put `veriguard mcp-proxy` in front of them and "
                         "name \"mcp_servers\" in unguarded)")

    def handoffs(owner: Any) -> None:
        for h in getattr(owner, "handoffs", None) or ():
            name = str(getattr(h, "tool_name", ""))
            takes = takes_model_input(h)
            if takes and name not in unguarded:
                found.append(f"handoff {name!r} of agent {getattr(owner, 'name', '?')!r} ({takes}, which no guardrail "
                             "decides)")
        for target in _handoff_agents(owner):
            if target is None:
                found.append(f"a handoff of agent {getattr(owner, 'name', '?')!r} whose agent cannot be seen")
            else:
                nested(target)

    def nested(inner: Any) -> None:
        if id(inner) not in seen:
            visit(inner)
            handoffs(inner)

    nested(agent)   # handoffs too: refused before the first model call, not after the handoff
    return found


SETTINGS = "model_settings"   # named in unguarded: an agent's model settings may send tools of their own


# Words of a model settings key that may enable tools: tools, tool_choice, mcp, chat's web_search_options, the legacy
# functions, file or vector search, plugins and connectors of compatible servers
SETTINGS_WORDS = ("tool", "mcp", "search", "function", "plugin", "connector", "retriev")


def settings_tools(agent: Any) -> str:
    """What in an agent's model settings would send the model tools the agent's list does not show ("" when nothing):
    a key naming tools, MCP, a search, functions (SETTINGS_WORDS) in extra_body, extra_args or extra_query
    (`extra_body={"tools": [{"type": "web_search"}]}`, `extra_args={"web_search_options": {}}` enable OpenAI's hosted web
    search, which no guardrail decides). Settings that cannot be read
    count as such."""
    settings = getattr(agent, "model_settings", None)
    named = []
    for field in ("extra_body", "extra_args", "extra_query"):
        extra = getattr(settings, field, None)
        if extra is None:
            continue
        if not isinstance(extra, Mapping):
            named.append(f"{field} of type {type(extra).__name__}")
            continue
        named += [f"{field}[{str(key)[:40]!r}]" for key in extra if any(w in str(key).lower() for w in SETTINGS_WORDS)]
    return ", ".join(named)


# Guards that have a refuse_hosted_tools hook (which reads each request its client sends, and lets through what its own
# unguarded names): their guardrails and hooks let a RunConfig's settings send tools (policy_hooks naming
# "model_settings" let them in their own run only: SETTINGS_RUNS)
SETTINGS_LET: "weakref.WeakSet[Guard]" = weakref.WeakSet()
RUN_SETTINGS = ("the run's RunConfig model settings send the model tools beside the agent's own ({}): a hosted tool there "
                "runs on the provider's side, undecided, at every model call of the run, and the hooks cannot see a "
                "RunConfig before the model is asked; remove them, put refuse_hosted_tools(guard) on the model's client, "
                "or name \"model_settings\" in policy_hooks(unguarded=...); not run")
HOOK_SETTINGS = ("the run's RunConfig model settings send the model tools beside the agents' own ({}): a hosted tool "
                 "there runs on the provider's side, undecided (name \"model_settings\" in unguarded to let them through)")


# Per guard, the runs (by the identity of their Usage, which the SDK shares between a run's context and the ToolContext
# of each of its calls, and makes anew for each run) whose policy_hooks name "model_settings": there the guardrail lets
# the RunConfig's settings send tools (the hooks read them before each model call)
SETTINGS_RUNS: "weakref.WeakKeyDictionary[Guard, weakref.WeakValueDictionary[int, Any]]" = weakref.WeakKeyDictionary()


def let_settings(guard: Guard, context: Any) -> None:
    usage = getattr(context, "usage", None)
    if usage is not None:
        SETTINGS_RUNS.setdefault(guard, weakref.WeakValueDictionary())[id(usage)] = usage


def settings_let_in(guard: Guard, context: Any) -> bool:
    """Whether the policy_hooks of the run of `context` (a ToolContext) name "model_settings" (let_settings)."""
    usage, runs = getattr(context, "usage", None), SETTINGS_RUNS.get(guard)
    return usage is not None and runs is not None and runs.get(id(usage)) is usage


# The SDK's functions that ask the model and call the run hooks' on_llm_start first, with their `hooks`, `context_wrapper`
# and `run_config` (openai-agents 0.24: get_new_response, and run_single_turn_streamed for Runner.run_streamed)
RUN_FUNCTIONS = frozenset({"get_new_response", "run_single_turn_streamed"})
AWAIT_DEPTH = 64   # coroutines awaiting one another from a task's own to the SDK's run function


def run_config_of(hooks: Any, context: Any) -> tuple[bool, Any]:
    """(whether it was found, the RunConfig) of the run whose `hooks` are asked before a model call with `context`. The
    hooks get no RunConfig, and the SDK runs on_llm_start in a task of its own (gather_with_cancel), so the run's function
    (RUN_FUNCTIONS) is looked for among the coroutines the loop's tasks await: the one whose `hooks` and
    `context_wrapper` are these objects. Not found (another SDK version): False, and the guardrail's check stands."""
    for task in asyncio.all_tasks():
        coro: Any = task.get_coro()
        for _ in range(AWAIT_DEPTH):
            frame = getattr(coro, "cr_frame", None) or getattr(coro, "ag_frame", None)
            if frame is not None and frame.f_code.co_name in RUN_FUNCTIONS:
                local = frame.f_locals
                if local.get("hooks") is hooks and local.get("context_wrapper") is context:
                    return True, local.get("run_config")
            coro = getattr(coro, "cr_await", None) or getattr(coro, "ag_await", None)
            if coro is None:
                break
    return False, None


def settings_let(guard: Guard, hooks: Any = None, context: Any = None) -> bool:
    """Whether `guard` lets a RunConfig's model settings send tools: it has a refuse_hosted_tools hook (SETTINGS_LET),
    or `hooks` are its policy_hooks naming "model_settings", or the run of `context` is one whose hooks named it
    (settings_let_in). The one decision of the hooks' check before a model call and of run_settings_tools."""
    return guard in SETTINGS_LET or settings_let_in(guard, context) or (
        isinstance(hooks, PolicyHooks) and hooks.guard is guard and SETTINGS in hooks.unguarded)


def run_settings_tools(context: Any, guard: Guard, hooks: Any = None) -> str:
    """Why a call may not run in a run whose RunConfig's model settings send tools (settings_tools; "" when they send
    none; the run's policy_hooks name "model_settings": `hooks`, the run's, or a note they made of the run before a
    model call, which a call checked before its approval needs; or the guard has a refuse_hosted_tools hook, which checks
    the requests of the client it is on, precisely): without hooks, the guardrail is the first point that sees the
    RunConfig (its ToolContext's run_config), so from the first function call of such a run on, each call is refused,
    recorded."""
    if settings_let(guard, hooks, context):
        return ""
    extra = settings_tools(getattr(context, "run_config", None))
    return RUN_SETTINGS.format(extra) if extra else ""


class HostedToolsRefused(BaseException):
    """A model request enables tools the provider runs itself, which no guardrail decides (refuse_hosted_tools). A
    BaseException, so that the OpenAI client does not take it for a connection error and retry."""


# Tool types whose calls come back to the client, where the hooks see them (a function, a custom tool, the computer,
# local shell, shell and patch tools, which policy_hooks refuse unless named); any other type runs on the provider's side
CLIENT_TOOL_TYPES = frozenset({"function", "custom", "computer", "computer_use", "computer_use_preview", "local_shell",
                               "shell", "apply_patch"})


def hosted_tools(body: Any) -> list[str]:
    """The provider-side tools a Chat Completions or Responses request body enables: each tool whose type is not a
    client tool's (web_search, file_search, code_interpreter, image_generation, mcp, an unknown type), and chat's
    web_search_options. A `tools` that is not a list of objects counts as one."""
    if not isinstance(body, Mapping):
        return []
    tools = body.get("tools")
    if tools is not None and not isinstance(tools, list):
        return [f"tools of type {type(tools).__name__}"]
    found = [str(t.get("type"))[:60] if isinstance(t, Mapping) else f"a tool of type {type(t).__name__}"
             for t in tools or () if not (isinstance(t, Mapping) and t.get("type") in CLIENT_TOOL_TYPES)]
    return found + (["web_search_options"] if body.get("web_search_options") is not None else [])


def refuse_hosted_tools(guard: Guard, *, unguarded: Iterable[str] = ()) -> Callable[[Any], Any]:
    """An HTTP request hook for the OpenAI client of the run's models (`AsyncOpenAI(http_client=httpx.AsyncClient(
    event_hooks={"request": [refuse_hosted_tools(guard)]}))`): it refuses (HostedToolsRefused, recorded) to send a
    request that enables a tool the provider runs itself, wherever it was set (the agent's tools, its model settings, a
    RunConfig's model settings, which the hooks cannot see before the model is asked), unless `unguarded` names its type
    ("hosted_mcp" for mcp). A JSON body that cannot be read is refused too; other requests (file uploads) pass."""
    let = frozenset(unguarded)
    SETTINGS_LET.add(guard)   # the hook reads what a RunConfig's settings send: run_settings_tools defers to it

    async def hook(request: Any) -> None:
        try:
            found = [t for t in hosted_tools(request_json(request, HostedToolsRefused)) if t not in let
                     and not (t == "mcp" and "hosted_mcp" in let)]
        except HostedToolsRefused as e:
            found = [str(e)]
        except Exception as e:   # a body of an unexpected shape: what it enables is unknown
            found = [f"a body that cannot be read ({type(e).__name__}: {' '.join(str(e).split())[:120]})"]
        if found:
            why = (f"refused to send a model request that enables tools the provider runs itself, which policy "
                   f"{guard.policy_name} does not decide: {', '.join(found[:5])}")
            guard.refuse_run(why, integration="openai_agents", tool=found[0][:80])
            raise HostedToolsRefused(f"{why}; remove them (from the agent, its model settings and the RunConfig's), or "
                                     "name their types in refuse_hosted_tools(unguarded=...) to let them run undecided")
    return hook


# Responses output items of a tool the SDK runs here (the on_tool_start check sees them); any other item named
# "..._call" is a tool the provider ran itself (web search, file search, code interpreter, image generation, hosted MCP)
CLIENT_CALLS = frozenset({"function_call", "computer_call", "local_shell_call", "shell_call", "apply_patch_call",
                          "custom_tool_call"})


def hosted_calls(response: Any) -> list[tuple[str, str]]:
    """(type, id) of each item of a model answer that is a call a tool ran on the provider's side."""
    return [(str(kind), str(getattr(item, "id", "") or "")) for item in getattr(response, "output", None) or ()
            if isinstance(kind := getattr(item, "type", None), str) and kind.endswith("_call")
            and kind not in CLIENT_CALLS]


RAISE_RECORDED = "veriguard_records_raise"   # set on an on_tool_start hook wrapped by recording_raise


def recording_raise(hook: Callable[..., Any]) -> Callable[..., Any]:
    """`hook` (an on_tool_start the SDK runs after a call's guardrails, before the call) that, when it raises (or is
    cancelled), records each decision that allowed the call as not run: the call never runs, and its one record would
    otherwise be the allow. A hook that replaced the tool's on_invoke_tool has the new invoker held to the data decided
    (hold_swapped)."""
    async def on_tool_start(context: Any, agent: Any, tool: Any) -> Any:
        before = getattr(tool, "on_invoke_tool", None)
        try:
            answer = await hook(context, agent, tool)
        except BaseException as e:
            not_run(context, f"an on_tool_start hook raised after the call was allowed ({type(e).__name__}: "
                    f"{' '.join(str(e).split())[:200]})", name=str(getattr(tool, "name", "")))
            raise
        if getattr(tool, "on_invoke_tool", None) is not before:
            hold_swapped(context, tool)
        return answer
    setattr(on_tool_start, RAISE_RECORDED, True)
    return on_tool_start


def hold_swapped(context: Any, tool: Any) -> None:
    """Put a DecidedInvoker of each guard that allowed the call of `context` in front of the on_invoke_tool a hook put on
    its tool after the allow: that invoker is code of the user's, run on the text it is handed, like a tool made by
    hand, so it runs the data decided or nothing, recorded (the hook may have rewritten the call too). Before, it ran
    (with or without policy_hooks, which recorded it only after it had run) and the allow stood."""
    decided = getattr(context, DECIDED, None)
    for guard, made in list(decided.items()) if isinstance(decided, dict) else ():
        if isinstance(made, Decided) and made.held and made.tool is tool:
            _hold(tool, guard)


def wrap_on_tool_start(hooks: Any) -> None:
    """Make `hooks` (an agent's or a run's) record an on_tool_start that raises or is cancelled after a call was
    allowed (recording_raise); hooks that cannot be changed are left as they are."""
    if hooks is not None and not getattr(getattr(hooks, "on_tool_start", None), RAISE_RECORDED, False):
        try:
            hooks.on_tool_start = recording_raise(hooks.on_tool_start)
        except Exception:   # hooks that cannot be changed (slots, frozen): a raise there stays unrecorded, the call unrun
            return


def record_hooks_raise(agent: Any) -> None:
    """Make the agent's own hooks (Agent(hooks=...), run beside the run's, after the guardrails) record an on_tool_start
    that raises or is cancelled (asyncio.wait_for around the run) after a call was allowed (recording_raise). Done by
    the hooks before each model call, and by the guardrail at each allow: without policy_hooks nothing else did, and
    the allow was the one record of a call that never ran."""
    wrap_on_tool_start(getattr(agent, "hooks", None))


# The SDK's method that runs a function tool's guardrails, then its run hooks' and agent hooks' on_tool_start, then the
# tool (openai-agents 0.24's _FunctionToolBatchExecutor._execute_single_tool_body, whose `self.hooks` are the run's)
TOOL_BODY = "_execute_single_tool_body"
TOOL_BODY_FRAMES = 8   # a guardrail function is called a few frames below it (ToolInputGuardrail.run, a wrapper)


def run_hooks() -> Any:
    """The run's hooks (Runner.run(hooks=...)) of the call a guardrail decides, called from the guardrail's function: the
    guardrail is not handed them; they are the `hooks` of the SDK's method that called it (TOOL_BODY, within
    TOOL_BODY_FRAMES frames above the guardrail's function). None when not found."""
    frame: FrameType | None = sys._getframe(2)
    for _ in range(TOOL_BODY_FRAMES):
        if frame is None:
            return None
        if frame.f_code.co_name == TOOL_BODY:
            return getattr(frame.f_locals.get("self"), "hooks", None)
        frame = frame.f_back
    return None


def not_run(context: Any, why: str, *, name: str | None = None) -> None:
    """Record, by each guard whose guardrail allowed the call of `context` (enforce mode), that it did not run (tool
    `name`, by default the one its ToolContext names: the SDK finds a function tool by the call's name and namespace,
    so it is the tool's name); its decision is taken away, so nothing runs it after, and the run's one running call it
    took is given back (another call of the run may be allowed now). recording_raise passes the tool's own name: the
    hook that raised may have changed the ToolContext."""
    decided = getattr(context, DECIDED, None)
    if not isinstance(decided, dict):
        return
    if name is None:
        name = str(getattr(context, "tool_name", ""))
    for guard, made in list(decided.items()):
        if isinstance(made, Decided) and made.held:
            del decided[guard]
            if made.claimed:
                guard.finished(made.run)
            guard.refuse_run(f"{why}: not run", integration="openai_agents", tool=name,
                             action_id=str(getattr(context, "tool_call_id", "")))


NESTED_RUN = ("agent tool {!r} of agent {!r}, which runs agent {!r} in a nested run without policy_hooks: a tool that run "
              "adds to its agents at run time (by a tool, an agent's hooks) would run undecided")


def unhooked_nested(tool: Any, guard: Guard, unguarded: frozenset[str], *, is_agent: bool) -> bool:
    """Whether `tool`, an agent called as a tool when `is_agent` (agent_tool(tool)[0]), has a nested run with no hooks
    of `guard` (it was not made with policy_agent_tool), and unguarded does not name "nested_runs"."""
    return is_agent and getattr(tool, HOOKS_ATTRIBUTE, None) is not guard and NESTED not in unguarded


class PolicyHooks(RunHooks[Any]):
    """Run hooks that refuse, before each model call, a run in which the model could call a tool no guardrail of
    `guard` decides (see unguarded_tools); `unguarded` names tools (or "mcp_servers") allowed to run undecided.
    They also report the end of each call to the guard, so that its guardrails decide one allowed call at a time when
    the policy reads facts beside the call (of parallel calls, the first allowed runs and the others are refused, to
    be sent again: each decided on the ledger the one before updated). Use them on every run of that guard: its
    guardrails wait for the end of an allowed call only the hooks report."""

    def __init__(self, guard: Guard, unguarded: Iterable[str] = (), run: str = "") -> None:
        self.guard, self.unguarded, self.run = guard, frozenset(unguarded), run
        RELEASED.add(guard)
        if type(self).on_tool_start is not PolicyHooks.on_tool_start:   # the user's own, built on these hooks
            self.on_tool_start = recording_raise(self.on_tool_start)  # type: ignore[method-assign]

    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        """The tool about to run, as the SDK holds it: one no guardrail of the guard decides stops the run here, recorded,
        though the check before the model call did not see it (a tool a SandboxAgent's capabilities add at run time:
        a shell, a patch tool; any tool the agent's own list did not show)."""
        self._failing_closed("refused to run a tool", lambda: self._tool_start(agent, tool))

    def _tool_start(self, agent: Any, tool: Any) -> None:
        name = str(getattr(tool, "name", type(tool).__name__))
        mcp = getattr(tool, "_mcp_tool_binding", None) is not None and "mcp_servers" in self.unguarded
        sandbox = SANDBOX in self.unguarded and bool(sandbox_capabilities(agent)) and \
            not any(t is tool for t in getattr(agent, "tools", None) or ())   # a tool the capabilities added
        is_agent, inner = agent_tool(tool)
        unhooked = unhooked_nested(tool, self.guard, self.unguarded, is_agent=is_agent)
        if (guarded_by(tool, self.guard) or name in self.unguarded or mcp or sandbox) and not unhooked:
            return
        why = (f"refused to run {type(tool).__name__} {name!r} of agent {getattr(agent, 'name', '?')!r}: " + (
            NESTED_RUN.format(name, getattr(agent, "name", "?"), getattr(inner, "name", "?"))
            if unhooked else f"policy {self.guard.policy_name} does not decide it (no guardrail of this guard is "
            "attached), and it was about to run"))
        self.guard.refuse_run(why, integration="openai_agents", tool=name)
        raise UnguardedTools(f"{why}. Attach policy_guardrail(guard) to it, remove it, or name it in "
                             "policy_hooks(unguarded=...) to let it run undecided")

    async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
        self.guard.finished(self.run)
        self._failing_closed("refused a tool call", lambda: self._changed_after(context, tool))

    def _changed_after(self, context: Any, tool: Any) -> None:
        """Record a call whose arguments were changed after its guardrail allowed them, where no DecidedInvoker held
        the tool (one the run gained after the model was asked): a function tool did not run it (the SDK runs the
        prepared arguments for the text decided only) and told the model of an error; in shadow mode it ran."""
        decided = (getattr(context, DECIDED, None) or {}).get(self.guard)
        if isinstance(decided, Decided) and decided.invoker_held:   # its DecidedInvoker would have taken the decision
            name = str(getattr(tool, "name", ""))
            self.guard.refuse_run(f"the on_invoke_tool of {name!r} was replaced after policy {self.guard.policy_name} "
                                  "allowed the call (by a hook): what ran was not held to the data decided",
                                  integration="openai_agents", tool=name,
                                  action_id=str(getattr(context, "tool_call_id", "")))
            return
        sent = call_text(context, None)
        if not isinstance(decided, Decided) or sent is None or sent == decided.text or same_json(sent, decided.text):
            return
        name = str(getattr(tool, "name", ""))
        self.guard.refuse_run(f"{REWRITTEN.format(name, self.guard.policy_name, str(sent)[:200], decided.text[:200])}"
                              f"; {'not run on them: the tool is handed the arguments decided or nothing' if decided.held else 'it ran'}",
                              integration="openai_agents", tool=name,
                              action_id=str(getattr(context, "tool_call_id", "")))

    async def on_llm_start(self, context: Any, agent: Any, system_prompt: Any, input_items: Any) -> None:
        self.guard.finished(self.run)   # the model is asked again: the calls of its last answer have ended
        self._failing_closed("refused to ask the model", lambda: self._llm_start(agent, context))
        self._failing_closed("refused to ask the model", lambda: approval_refused(self.guard, input_items))

    def _llm_start(self, agent: Any, context: Any) -> None:
        """Refuse a run that could call a tool undecided; hold each guarded tool to the data decided (hold_to_decided:
        here, before the model is asked, since the SDK compares a tool's invoker with the one it planned the call with).
        The run's RunConfig, found among the loop's tasks (run_config_of), is read too: model settings of its that send
        tools are refused here, before the first request leaves, unless `unguarded` names "model_settings", which lets
        them through in this run only (settings_let_in: the guardrails of the guard's other runs still refuse them), or
        the guard has a refuse_hosted_tools hook (SETTINGS_LET), which reads each request."""
        found = unguarded_tools(agent, self.guard, self.unguarded, hold=True)
        record_hooks_raise(agent)
        # the RunConfig is read only where it can matter: a guard with a refuse_hosted_tools hook (SETTINGS_LET) reads
        # each request itself, so unless "model_settings" is named (let_settings needs the run found) the search is skipped
        let = SETTINGS in self.unguarded
        seen, config = run_config_of(self, context) if let or not settings_let(self.guard, self) else (False, None)
        if seen and let:
            let_settings(self.guard, context)
        elif seen and not settings_let(self.guard, self) and (extra := settings_tools(config)):
            found.append(HOOK_SETTINGS.format(extra))
        if found:
            why = (f"refused to ask the model: it could call tools that policy {self.guard.policy_name} does not decide: "
                   f"{'; '.join(found[:5])}{' ...' if len(found) > 5 else ''}")
            self.guard.refuse_run(why, integration="openai_agents")
            raise UnguardedTools(f"{why}. Attach policy_guardrail(guard) to every function tool "
                                 "(tool_input_guardrails=[...]); hosted, shell, patch and computer tools take no "
                                 "guardrail: remove them, or name them in policy_hooks(unguarded=...) to let them run "
                                 "undecided")

    async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
        """Record each function call of the answer that names no tool or handoff of the agent: the SDK stops the run
        there (ModelBehaviorError, "Tool ... not found") and nothing runs, but no guardrail saw the call."""
        self._failing_closed("refused the model's answer", lambda: self._hosted_calls(agent, response))
        try:
            calls = any(getattr(item, "type", None) == "function_call" for item in getattr(response, "output", None)
                        or ())
        except Exception:   # an answer that cannot be read here: _unknown_calls reads it again and fails closed
            calls = True
        if not calls:   # nothing to read against what the agent offers: get_all_tools (a list_tools per MCP server,
            return      # every is_enabled run again) is not asked
        try:
            tools = await agent.get_all_tools(context)
        except Exception:   # what the agent offers cannot be listed: every call is read against its own list
            tools = getattr(agent, "tools", None) or []
        self._failing_closed("refused the model's answer", lambda: self._unknown_calls(agent, tools, response))

    def _hosted_calls(self, agent: Any, response: Any) -> None:
        """Record each call of the answer that a hosted tool ran on the provider's side, undecided, unless `unguarded`
        names that tool (its type without "_call": web_search, code_interpreter...; "hosted_mcp" for mcp_call): the
        check before the model call refuses such tools in the agent's list, so one ran from elsewhere (a RunConfig's
        model settings, which the hooks cannot see)."""
        for kind, item_id in hosted_calls(response):
            tool = kind.removesuffix("_call")
            if tool in self.unguarded or (tool == "mcp" and "hosted_mcp" in self.unguarded):
                continue
            self.guard.refuse_run(f"the model's answer holds a {kind} item: a hosted tool ran on the provider's side "
                                  f"for agent {getattr(agent, 'name', '?')!r}, which policy {self.guard.policy_name} "
                                  "did not decide (enabled outside the agent's tools, e.g. in a RunConfig's model "
                                  "settings)", integration="openai_agents", tool=kind, action_id=item_id)

    def _unknown_calls(self, agent: Any, tools: Iterable[Any], response: Any) -> None:
        known = {str(getattr(t, "name", "")) for t in tools} | {
            str(h.tool_name) if isinstance(h, Handoff) else Handoff.default_tool_name(h)
            for h in getattr(agent, "handoffs", None) or ()}
        for item in getattr(response, "output", None) or ():
            name = getattr(item, "name", None)
            if getattr(item, "type", None) == "function_call" and str(name) not in known:
                self.guard.refuse_run(f"the model called {name!r}, which agent {getattr(agent, 'name', '?')!r} has "
                                      "no tool or handoff of (never given, or not enabled): the run stops there and "
                                      "nothing runs", integration="openai_agents", tool=str(name),
                                      action_id=str(getattr(item, "call_id", "")))

    def _failing_closed(self, what: str, step: Callable[[], None]) -> None:
        """`step()`; a failure in it (a tool whose name cannot be read, a handoff whose schema raises) stops the run,
        recorded, since what the model could call is then unknown."""
        try:
            step()
        except UnguardedTools:
            raise
        except Exception as e:
            why = f"{what}: the policy hooks' check failed ({type(e).__name__}: {' '.join(str(e).split())[:200]})"
            self.guard.refuse_run(why, integration="openai_agents")
            raise UnguardedTools(f"{why}, so what could run undecided is unknown") from None


def policy_hooks(guard: Guard, *, unguarded: Iterable[str] = (), run: str = "") -> PolicyHooks:
    """Hooks for `Runner.run(..., hooks=policy_hooks(guard))` (see PolicyHooks); `run` is the run the guardrails
    count calls in (their `run=`, default one run)."""
    return PolicyHooks(guard, unguarded, run)


def policy_agent_tool(agent: Any, guard: Guard, *, unguarded: Iterable[str] = (), run: str = "",
                      **as_tool: Any) -> Any:
    """`agent.as_tool(**as_tool)` whose nested run has policy_hooks(guard, unguarded=..., run=...): each tool is
    checked as it is about to run there too, so a tool added at run time stops the nested run, recorded. The hooks of
    the outer run refuse an agent called as a tool made otherwise (its nested run has none), unless unguarded names
    "nested_runs"."""
    tool = agent.as_tool(**as_tool, hooks=policy_hooks(guard, unguarded=unguarded, run=run))
    setattr(tool, HOOKS_ATTRIBUTE, guard)
    return tool
