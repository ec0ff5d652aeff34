"""The enforcement point every integration shares: decide one tool call with the monitor, then carry
out the spec's strategy as an outcome the integration acts on (run the call, refuse it and tell the
model why, halt the run's tools, or stop the run).

Fails closed: a context that cannot be read, a monitor that raises or answers anything but an allow
denies the call. A cancellation raised while the context is read (asyncio.CancelledError, any BaseException but
KeyboardInterrupt and SystemExit) is recorded as a refusal, then raised on: the caller is being stopped. Shadow mode decides and logs every call the same way but never refuses one; the
outcome says what enforcing would have done.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, Union

from veriguard.contracts.build_format import MODE_NAMES
from veriguard.contracts.errors import OperatorError
from veriguard.enforce.decision_log import SHA256_HEX, DecisionLog
from veriguard.enforce.extractors import tool_calls
from veriguard.enforce.monitor import ABANDONED, Abandoned, DecisionRecord, Monitor, Veto, gave_up

MODES = MODE_NAMES
DEFAULT_HALT_AFTER = 2        # replan_halt: "ask for another plan; halt if the next one is denied too"
CALL_KEY = "tool_call"        # where the call sits in the observation, beside the context's keys
BUSY = ("another allowed call of this run has not finished, and the policy decided on facts beside the call (a ledger) "
        "that it may change: calls are run one at a time")
HALTED = "halted"

Context = Union[Mapping[str, Any], Callable[[], Mapping[str, Any]], None]
RunName = Union[str, Callable[[], str]]


class GuardConfigError(OperatorError, ValueError):
    """The guard's settings (options or the spec's [enforcement] section) are invalid."""

    def __init__(self, message: str) -> None:
        super().__init__("guard.config", message, fix="give a known enforcement mode and strategy, and halt_after a "
                         "whole number of 1 or more")


@dataclass(frozen=True)
class GuardOutcome:
    allowed: bool                  # run the call
    action: str                    # what was done: allow, block, replan, halt, terminate (abandoned: see check)
    message: str                   # what the model is told instead of the tool's result ("" when it runs)
    record: DecisionRecord | None  # the logged record (of a refusal too); None only when not even that could be made
    would: str = ""                # shadow mode: the action enforcing would have taken
    run: str = ""                  # the run the call counted in (its name, read once)
    claimed: bool = False          # it took its run's one running call (exclusive): finished(run) gives it back


class RunTerminated(BaseException):
    """Stops the agent's run. A BaseException on purpose: agent SDKs catch Exception raised by a tool
    and hand it back to the model as a tool result (the Anthropic tool runner does), so the run
    would go on."""

    def __init__(self, outcome: GuardOutcome) -> None:
        super().__init__(outcome.message)
        self.outcome = outcome
        self.record = outcome.record


@dataclass
class _Run:
    denials: int = 0       # consecutive denials; an allowed call resets it
    halted: str = ""       # why the run's tool execution was halted ("" while it is not)
    running: bool = False  # an allowed exclusive call has not been reported finished (Guard.finished)


class Guard:
    """Monitor.check plus the strategy, with the per-run state halting needs.

    `run` names the agent run (conversation, session) a call belongs to; halting and the count of
    consecutive denials are kept per run. The strategy is the monitor's (the spec's [enforcement]
    strategy unless Monitor.from_build overrode it); mode and halt_after come from the options or the
    spec's [enforcement] `mode` and `halt_after`.
    """

    def __init__(self, monitor: Monitor, *, mode: str | None = None, halt_after: int | None = None) -> None:
        settings = monitor.policy.extraction.get("enforcement") or {}
        if not isinstance(settings, Mapping):
            raise GuardConfigError(f"[enforcement] must be a table, not {type(settings).__name__}")
        self.monitor = monitor
        self.strategy = monitor.strategy
        self.mode = _mode(mode if mode is not None else settings.get("mode", "enforce"))
        self.halt_after = _halt_after(halt_after if halt_after is not None
                                      else settings.get("halt_after", DEFAULT_HALT_AFTER))
        self.policy_name = monitor.policy.name
        # the policy reads facts beside the call (a context: a ledger, a session), which an allowed call may change
        self.reads_facts = any(getattr(e, "kind", "") != "tool_call" for e in monitor.extractors.values())
        self._runs: dict[str, _Run] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_build(cls, build: str | Path, *, strategy: str | None = None, mode: str | None = None,
                   halt_after: int | None = None, log: DecisionLog | str | Path | None = None,
                   expect_sha256: str | None = None, **monitor_options: Any) -> "Guard":
        """A guard over Monitor.from_build(build, strategy=..., log=..., expect_sha256=..., **monitor_options)."""
        return cls(Monitor.from_build(build, strategy=strategy, log=log, expect_sha256=expect_sha256,
                                      **monitor_options), mode=mode, halt_after=halt_after)

    def check(self, call: Mapping[str, Any], *, context: Context = None, action_id: str = "",
              run: RunName = "", integration: str = "", tool: str = "", exclusive: bool = False,
              abandoned: Abandoned | None = None) -> GuardOutcome:
        """Decide `call` (one tool call in its SDK's own shape) with `context` (the facts the policy needs
        beside the call: user, session, ledger; a mapping or a function returning one). `run` is the run's
        name or a function returning it (read once per call; one that fails refuses the call, recorded).

        `exclusive` (an integration that reports each allowed call's end with `finished`): when the policy reads
        facts beside the call, a call it allows while another allowed call of the run has not finished is refused
        (not counted as a denial): the facts it was decided on (a ledger) may not hold that call's effects yet, so six
        payments decided at once could each fit the daily limit and together pass it. Such a refusal, like that of a call
        whose run was halted while it was decided, is made before the decision is logged (Monitor.check's `veto`): the
        call's one record is the refusal, never an allow followed by one.

        `abandoned` (Monitor.check's): asked just before the decision is logged; when it answers why the caller gave
        up (a deadline, a cancellation), the record is a denial saying so, and the outcome (action "abandoned") is
        not counted in the run: the caller refused the call already, and that refusal is the one that counts."""
        meta = {"action_id": str(action_id), "integration": str(integration), "tool": str(tool)}
        name, problem = run_name(run)
        if problem:
            return self._outcome(lambda _: (self._refusal(problem, meta), f"fail closed: {problem}"), name, meta)
        given_up: list[str] = []

        def asked() -> str:
            why = gave_up(abandoned)
            given_up.extend([why] if why else [])
            return why
        return self._outcome(lambda veto: self._decide(call, context, meta, asked if abandoned is not None else None,
                                                       veto), name, meta, exclusive=exclusive and self.reads_facts,
                             given_up=given_up)

    def finished(self, run: str = "") -> None:
        """The run's allowed exclusive call has finished (its effects are in the facts now): the next may be allowed."""
        with self._lock:
            if run in self._runs:
                self._runs[run].running = False

    def refuse(self, reason: str, *, action_id: str = "", run: RunName = "", integration: str = "",
               tool: str = "") -> GuardOutcome:
        """Refuse a call the enforcement point cannot hand to the policy (it is malformed): recorded and
        logged with `reason`, and counted as a denial of its run like any other."""
        meta = {"action_id": str(action_id), "integration": str(integration), "tool": str(tool)}
        name, problem = run_name(run)
        why = f"{reason}; and {problem}" if problem else reason
        return self._outcome(lambda _: (self._refusal(why, meta), f"fail closed: {why}"), name, meta)

    def refuse_run(self, reason: str, *, integration: str = "", tool: str = "",
                   action_id: str = "") -> DecisionRecord | None:
        """Record a run refused before it started (the tools the model would be offered include one no guard decides),
        or a call refused outside any run's count (the SDK would not run it: a tool the runner does not have, an input
        the stream cut): a logged denial that counts in no run. None when even that failed."""
        return self._refusal(reason, {"action_id": str(action_id), "integration": str(integration), "tool": str(tool)})

    def record_unchecked(self, method: str, params_hash: str, *, action_id: str = "",
                         integration: str = "mcp_proxy") -> DecisionRecord | None:
        """Record a request the enforcement point forwards without a decision because the operator chose not to check
        its kind (the MCP proxy's `--unchecked resources`): `method` (resources/read...) and `params_hash` (the sha256,
        64 hex digits, of its params) go into an allowed record marked `unchecked: true`, which counts in no run. Pass
        the request only when the answer is allowed: a log that cannot be written, or a method or hash of another shape,
        makes it a logged denial saying why (None when even that failed)."""
        meta = {"action_id": str(action_id), "integration": str(integration)}
        if type(method) is not str or not method.strip():
            return self._refusal(f"an unchecked pass cannot be recorded: the method must be a non-empty string, not "
                                 f"{method!r}"[:300], {**meta, "tool": ""})
        if type(params_hash) is not str or not SHA256_HEX.fullmatch(params_hash):
            return self._refusal(f"an unchecked pass of {method[:100]!r} cannot be recorded: its params hash must be "
                                 f"a sha256 in 64 lowercase hex digits, not {params_hash!r}"[:300], {**meta, "tool": method})
        try:
            return self.monitor.unchecked(f"{method} forwarded without a decision, by the operator's choice",
                                          {"method": method, "params_sha256": params_hash}, mode=self.mode,
                                          tool=method, **meta)
        except Exception as e:   # nothing was recorded: refused
            return self._refusal(f"an unchecked pass of {method[:100]!r} could not be recorded ({type(e).__name__}: "
                                 f"{' '.join(str(e).split())[:200]})", {**meta, "tool": method})

    def _outcome(self, decide: Callable[[Veto], tuple[DecisionRecord | None, str]], run: str,
                 meta: dict[str, str], *, exclusive: bool = False, given_up: Sequence[str] = ()) -> GuardOutcome:
        """Decide with `decide(veto)`: the monitor asks `veto` before it logs an allow, so a call this guard refuses
        after the policy allowed it (its run was halted meanwhile, another allowed call of the run is still running)
        has one record, the refusal, and never an allow record for a call that did not run."""
        with self._lock:
            state = self._runs.setdefault(run, _Run())
            halted = state.halted
        if halted and self.mode == "enforce":  # refused unread, but recorded
            record = self._refusal(f"tool execution in this run was halted earlier ({halted})", meta)
            return GuardOutcome(False, "halt", self._halted_message(halted), record, run=run)
        held: list[str] = []   # what the veto did: "claimed" (this call runs alone), or why it refused the allow
        record, reasons = decide(self._veto(state, held, exclusive=exclusive))
        if "claimed" in held and not (record is not None and record.allowed is True):
            self._release(state)   # claimed, then denied by the monitor (its log failed): it will not run
        if given_up:   # the caller refused the call already: not run, and not counted in the run a second time
            return GuardOutcome(False, "abandoned", f"Not run: {given_up[0]}", record, run=run)
        if BUSY in held:   # allowed on facts another running call may still change: not run, not counted as a denial
            return GuardOutcome(False, "replan", f"Not run by policy {self.policy_name}: {BUSY}. Send this call again "
                                "once the other call's result is back.", record, run=run)
        allowed = record is not None and record.allowed is True
        with self._lock:  # `state` is this call's run even if end_run forgot it meanwhile
            halted = halted or state.halted
            action = "halt" if halted else self._next_action(state, reasons, allowed=allowed)
        if halted:
            message = self._halted_message(halted)
            if allowed and self.mode == "enforce":  # halted after the allow was logged, before the call could run
                self._release(state)
                record = self._refusal(f"tool execution in this run was halted after this call was allowed, before it "
                                       f"ran ({halted})", meta)
        else:
            message = "" if action == "allow" else self._message(action, reasons)
        if self.mode == "shadow":
            return GuardOutcome(True, "allow", f"shadow mode, not enforced: {message}" if message else "", record,
                                would=action, run=run)
        return GuardOutcome(action == "allow", action, message, record, run=run,
                            claimed="claimed" in held and action == "allow")

    def _veto(self, state: _Run, held: list[str], *, exclusive: bool) -> Veto:
        """The check made just before an allow is logged (enforce mode): the run halted while the call was decided, or
        (`exclusive`) another allowed call of the run still running, refuses it; otherwise an exclusive call claims the
        run's one running call."""
        def veto(record: DecisionRecord) -> str:
            if self.mode != "enforce":
                return ""
            with self._lock:
                if state.halted:
                    held.append(HALTED)
                    return f"tool execution in this run was halted while this call was decided ({state.halted})"
                if exclusive and state.running:
                    held.append(BUSY)
                    return BUSY
                if exclusive:
                    state.running = True
                    held.append("claimed")
            return ""
        return veto

    def _release(self, state: _Run) -> None:
        """The run's running call is over (or never ran)."""
        with self._lock:
            state.running = False

    def halted(self, run: str = "") -> str:
        """Why the run's tool execution is halted, or "" when it is not."""
        with self._lock:
            return self._runs[run].halted if run in self._runs else ""

    def end_run(self, run: str = "") -> None:
        """Forget a finished run's state: the next call with this name starts a new run. A call of the
        ended run still being decided counts in the ended run (its halt does not reach the new one)."""
        with self._lock:
            self._runs.pop(run, None)

    def _decide(self, call: Mapping[str, Any], context: Context, meta: dict[str, str],
                abandoned: Abandoned | None = None, veto: Veto | None = None) -> tuple[DecisionRecord | None, str]:
        try:
            record = self.monitor.check(observe(call, context), mode=self.mode, abandoned=abandoned, veto=veto, **meta)
        except (KeyboardInterrupt, SystemExit):   # they stop the process, as in Monitor.check
            raise
        except BaseException as e:  # a context that cannot be read, or a monitor that raises: nothing was decided
            reason = f"the call could not be checked: {type(e).__name__}: {e}"
            gone = gave_up(abandoned)   # asked before logging, as the monitor does
            reason = f"{ABANDONED}{gone}; and {reason}" if gone else reason
            refused = self._refusal(reason, meta)
            if not isinstance(e, Exception):   # a cancellation (asyncio.CancelledError) while the context was read:
                raise                           # recorded, then it goes on stopping the caller
            return refused, f"fail closed: {reason}"
        if not isinstance(record, DecisionRecord):
            reason = f"the monitor answered {type(record).__name__}, not a decision"
            return self._refusal(reason, meta), f"fail closed: {reason}"
        if record.allowed is True:
            return record, ""
        return record, record.enforcement.feedback or " / ".join(record.messages) or "denied by the policy"

    def _refusal(self, reason: str, meta: dict[str, str]) -> DecisionRecord | None:
        """The logged record of a call refused undecided; None when even that fails (the call is refused all the same)."""
        try:
            record = self.monitor.refuse(reason, mode=self.mode, **meta)
        except Exception:
            return None
        return record if isinstance(record, DecisionRecord) and not record.allowed else None

    def _next_action(self, state: _Run, reasons: str, *, allowed: bool) -> str:
        if allowed:
            state.denials = 0
            return "allow"
        state.denials += 1
        action = {"terminate": "terminate", "block": "block", "tool_halt": "halt", "replan": "replan",
                  "replan_halt": "halt" if state.denials >= self.halt_after else "replan"}[self.strategy]
        if action in ("halt", "terminate") and not state.halted:
            state.halted = reasons
        return action

    def _halted_message(self, halted: str) -> str:
        return f"Tool execution was halted in this run by policy {self.policy_name} ({halted}); this call was not run."

    def _message(self, action: str, reasons: str) -> str:
        name = self.policy_name
        return {
            "block": f"Blocked by policy {name}: {reasons}",
            "replan": f"Denied by policy {name}: {reasons}. Do not retry this call as it is: change the plan so that "
                      "it satisfies the rules, or tell the user why it cannot be done.",
            "halt": f"Denied by policy {name}: {reasons}. Tool execution is halted for the rest of this run.",
            "terminate": f"Task terminated by policy {name}: {reasons}",
        }[action]


def run_name(run: RunName) -> tuple[str, str]:
    """(the run's name, why it could not be had): a user's function that raises or answers something else than a
    string would otherwise raise inside the enforcement point before any record is made, and a name given as another
    object (whose __str__ may answer a new run each time) would escape its run's halt. Such a call counts in the run
    named "" (its own is unknown)."""
    if isinstance(run, str):   # a str subclass's own __str__ could name another run at every read
        return str.__str__(run), ""
    if not callable(run):   # an object's __str__ could too: halting and the count of denials would never reach it
        return "", f"the run's name must be a string or a function returning one, not {type(run).__name__}"
    try:
        name = run()
    except Exception as e:
        return "", f"the run's name could not be had: {type(e).__name__}: {e}"[:300]
    if type(name) is not str:
        return "", f"the run's name must be a string, not {type(name).__name__}"
    return name, ""


def observe(call: Mapping[str, Any], context: Context) -> dict[str, Any]:
    """The observation the monitor reads: the context's keys, and the call under CALL_KEY (so nothing
    the model wrote can stand in for a context fact). A context holding a tool call is refused: the policy,
    which finds calls anywhere in the observation, would decide on it while another call runs."""
    facts = context() if callable(context) else context
    if facts is None:
        facts = {}
    if not isinstance(facts, Mapping):
        raise TypeError(f"the context must be a mapping, not {type(facts).__name__}")
    if CALL_KEY in facts:
        raise ValueError(f"the context may not have a key {CALL_KEY!r}: it is where the tool call goes")
    held = tool_calls(facts)   # an ExtractionError for a call-like object in another shape: refused the same way
    if held:   # the policy reads the calls of the whole observation: it would decide this one instead
        raise ValueError(f"the context holds a tool call ({held[0].name!r} at {held[0].where}), which the policy "
                         "would read in place of the call being decided: keep tool calls (a history, a ledger of "
                         "calls) out of the context")
    return {**facts, CALL_KEY: call}


def _mode(value: Any) -> str:
    if value not in MODES:
        raise GuardConfigError(f"enforcement mode {value!r} is not one of {list(MODES)}")
    return str(value)


def _halt_after(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise GuardConfigError(f"halt_after {value!r} must be a whole number of denials, 1 or more")
    return value
