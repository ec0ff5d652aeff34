"""The shared enforcement layer: strategies carried out, per-run halting, shadow mode, fail closed."""
import shutil
import threading
from pathlib import Path

import pytest

from veriguard.enforce.decision_log import DecisionLog, verify_log
from veriguard.enforce.guard import CALL_KEY, Guard, GuardConfigError, GuardOutcome, RunTerminated, observe
from veriguard.enforce.monitor import Monitor
from veriguard.synth.freeze import write_build
from veriguard.synth.specfile import load_spec
from tests.conftest import SPECS
from tests.unit.test_compile_and_freeze import fake_result
from tests.unit.test_monitor import payments_build  # noqa: F401  (fixture)

CONTEXT = {"session": {"role": "clerk", "mfa": False}, "ledger": {"sent_today_cents": 0}}
PAYMENT = {"recipient": "acme-supplies", "amount_cents": 45000, "currency": "USD", "method": "ach"}
OVER_LIMIT = {**PAYMENT, "amount_cents": 250000}     # a clerk's per-payment limit is 100000


def tool_use(payment=PAYMENT, call_id="toolu_1"):
    return {"type": "tool_use", "id": call_id, "name": "send_payment", "input": dict(payment)}


def spec_build(tmp: Path, enforcement: str) -> Path:
    """The payments build made from the shipped spec with its [enforcement] section replaced (no Nagini)."""
    shutil.copytree(SPECS / "payments", tmp / "payments")
    text = (SPECS / "payments.toml").read_text(encoding="utf-8")
    head, _ = text.split("[enforcement]")
    (tmp / "payments.toml").write_text(head + "[enforcement]\n" + enforcement + "\n", encoding="utf-8")
    build, _ = write_build(fake_result(load_spec(tmp / "payments.toml")), tmp / "out", run_info={})
    return build


def guard(build, strategy="block", **kw):
    return Guard(Monitor.from_build(build, strategy=strategy, log=kw.pop("log", None)), **kw)


def test_allowed_call_runs_with_its_record(payments_build):
    out = guard(payments_build).check(tool_use(), context=CONTEXT, action_id="toolu_1")
    assert out.allowed and out.action == "allow" and out.message == "" and out.would == ""
    assert out.record.allowed and out.record.action_id == "toolu_1"
    assert out.record.arguments["payment"]["amount_cents"] == 45000


@pytest.mark.parametrize("strategy,action,says", [
    ("block", "block", "Blocked by policy payments"),
    ("replan", "replan", "change the plan"),
    ("tool_halt", "halt", "halted for the rest of this run"),
    ("terminate", "terminate", "Task terminated by policy payments"),
    ("replan_halt", "replan", "change the plan"),
])
def test_each_strategy_on_a_denied_call(payments_build, strategy, action, says):
    out = guard(payments_build, strategy).check(tool_use(OVER_LIMIT), context=CONTEXT)
    assert not out.allowed and out.action == action and says in out.message
    assert "per-payment limit" in out.message and out.record.violations == ("per_payment_limit",)


@pytest.mark.parametrize("strategy,halts", [("block", False), ("replan", False), ("tool_halt", True),
                                            ("terminate", True)])
def test_halting_refuses_every_later_call_of_that_run_only(payments_build, strategy, halts):
    g = guard(payments_build, strategy)
    g.check(tool_use(OVER_LIMIT), context=CONTEXT, run="a")
    later = g.check(tool_use(), context=CONTEXT, run="a")
    assert later.allowed is not halts
    if halts:
        assert later.action == "halt" and "per-payment limit" in later.message
        assert not later.record.allowed and "halted earlier" in later.record.fail_closed
        assert "per-payment limit" in g.halted("a")
    assert g.check(tool_use(), context=CONTEXT, run="b").allowed
    g.end_run("a")
    assert g.halted("a") == "" and g.check(tool_use(), context=CONTEXT, run="a").allowed


def test_replan_halt_counts_consecutive_denials_and_an_allowed_call_resets(payments_build):
    g = guard(payments_build, "replan_halt", halt_after=3)
    actions = [g.check(tool_use(p), context=CONTEXT).action
               for p in (OVER_LIMIT, OVER_LIMIT, PAYMENT, OVER_LIMIT, OVER_LIMIT, OVER_LIMIT, PAYMENT)]
    assert actions == ["replan", "replan", "allow", "replan", "replan", "halt", "halt"]


def test_replan_halt_default_halts_on_the_second_denial_in_a_row(payments_build):
    g = guard(payments_build, "replan_halt")
    assert g.halt_after == 2
    assert [g.check(tool_use(OVER_LIMIT), context=CONTEXT).action for _ in range(2)] == ["replan", "halt"]


def test_shadow_mode_decides_and_logs_but_never_refuses(payments_build, tmp_path):
    g = guard(payments_build, "tool_halt", mode="shadow", log=tmp_path / "log.jsonl")
    first = g.check(tool_use(OVER_LIMIT), context=CONTEXT, action_id="c1")
    assert first.allowed and first.action == "allow" and first.would == "halt"
    assert first.message.startswith("shadow mode, not enforced: ") and "per-payment limit" in first.message
    assert not first.record.allowed
    later = g.check(tool_use(), context=CONTEXT, action_id="c2")      # enforcing would refuse it unread
    assert later.allowed and later.would == "halt" and later.record.allowed
    fine = g.check(tool_use(), context=CONTEXT, run="other")
    assert fine.allowed and fine.would == "allow" and fine.message == ""
    records = list(DecisionLog(tmp_path / "log.jsonl").records())
    assert [(r["action_id"], r["allowed"]) for r in records] == [("c1", False), ("c2", True), ("", True)]
    assert verify_log(tmp_path / "log.jsonl").ok


def test_shadow_mode_never_raises_terminate(payments_build):
    out = guard(payments_build, "terminate", mode="shadow").check(tool_use(OVER_LIMIT), context=CONTEXT)
    assert out.allowed and out.would == "terminate"


def test_mode_and_halt_after_come_from_the_spec(tmp_path):
    build = spec_build(tmp_path, 'strategy = "replan_halt"\nmode = "shadow"\nhalt_after = 4')
    g = Guard(Monitor.from_build(build))
    assert (g.strategy, g.mode, g.halt_after) == ("replan_halt", "shadow", 4)
    assert Guard(Monitor.from_build(build), mode="enforce", halt_after=1).mode == "enforce"
    assert Guard.from_build(build, strategy="block").strategy == "block"


@pytest.mark.parametrize("enforcement,problem", [
    ('mode = "shadw"', "enforcement mode 'shadw'"),
    ("mode = true", "enforcement mode True"),
    ("halt_after = 0", "halt_after 0"),
    ("halt_after = true", "halt_after True"),
    ('halt_after = "2"', "halt_after '2'"),
])
def test_bad_settings_in_a_build_are_refused(payments_build, enforcement, problem):
    """load_spec refuses these (tests/unit/test_spec_enforcement.py); a build made before it did is refused here."""
    import dataclasses
    import tomllib

    monitor = Monitor.from_build(payments_build)
    settings = {"strategy": "replan_halt", **tomllib.loads(enforcement)}
    monitor.policy = dataclasses.replace(monitor.policy, extraction={**monitor.policy.extraction,
                                                                     "enforcement": settings})
    with pytest.raises(GuardConfigError, match=problem):
        Guard(monitor)


@pytest.mark.parametrize("kw", [{"mode": "log_only"}, {"halt_after": -1}, {"halt_after": 1.5}])
def test_bad_options_are_refused(payments_build, kw):
    with pytest.raises(GuardConfigError):
        guard(payments_build, **kw)


def test_a_monitor_that_raises_denies_under_the_strategy(payments_build):
    g = guard(payments_build, "terminate")

    def boom(observation, **meta):
        raise RuntimeError("disk on fire")

    g.monitor.check = boom
    out = g.check(tool_use(), context=CONTEXT)
    assert not out.allowed and out.action == "terminate"
    assert "could not be checked: RuntimeError: disk on fire" in out.message
    assert not out.record.allowed and "disk on fire" in out.record.fail_closed


def test_a_refusal_is_recorded_even_when_the_monitor_cannot_record_it(payments_build):
    g = guard(payments_build)
    g.monitor.check = g.monitor.refuse = lambda *a, **kw: (_ for _ in ()).throw(RuntimeError("gone"))
    out = g.check(tool_use(), context=CONTEXT)
    assert not out.allowed and out.record is None and "gone" in out.message


@pytest.mark.parametrize("strategy", ["tool_halt", "terminate", "replan_halt"])
def test_calls_refused_because_the_run_was_halted_are_logged_with_the_reason(payments_build, tmp_path, strategy):
    g = guard(payments_build, strategy, halt_after=1, log=tmp_path / "log.jsonl")
    g.check(tool_use(OVER_LIMIT, "c1"), context=CONTEXT, action_id="c1", integration="test", tool="send_payment")
    later = g.check(tool_use(PAYMENT, "c2"), context=CONTEXT, action_id="c2", integration="test", tool="send_payment")
    assert not later.allowed and later.action == "halt"
    first, second = DecisionLog(tmp_path / "log.jsonl").records()
    assert (second["action_id"], second["allowed"], second["integration"], second["tool"]) == \
        ("c2", False, "test", "send_payment")
    assert "halted earlier" in second["fail_closed"] and "per-payment limit" in second["fail_closed"]
    assert second["decision_sha256"] == later.record.decision_sha256 and verify_log(tmp_path / "log.jsonl").ok


def test_a_call_refused_unread_is_logged_and_counts_as_a_denial(payments_build, tmp_path):
    g = guard(payments_build, "replan_halt", halt_after=2, log=tmp_path / "log.jsonl")
    first = g.refuse("the arguments are not an object", action_id="7", tool="send_payment")
    assert not first.allowed and first.action == "replan" and "the arguments are not an object" in first.message
    assert g.check(tool_use(OVER_LIMIT), context=CONTEXT).action == "halt"
    records = list(DecisionLog(tmp_path / "log.jsonl").records())
    assert [r["allowed"] for r in records] == [False, False]
    assert records[0]["fail_closed"] == "the arguments are not an object" and records[0]["action_id"] == "7"


def test_a_monitor_that_answers_nonsense_denies(payments_build):
    g = guard(payments_build)
    g.monitor.check = lambda observation, **meta: {"allowed": True}
    out = g.check(tool_use(), context=CONTEXT)
    assert not out.allowed and "answered dict, not a decision" in out.message


def test_an_unwritable_log_denies(payments_build, tmp_path):
    (tmp_path / "file").write_text("")
    out = guard(payments_build, log=tmp_path / "file" / "log.jsonl").check(tool_use(), context=CONTEXT)
    assert not out.allowed and "log" in out.message


@pytest.mark.parametrize("context,says", [
    (lambda: 1 / 0, "ZeroDivisionError"),
    (lambda: ["session"], "must be a mapping, not list"),
    ({**CONTEXT, CALL_KEY: tool_use()}, f"may not have a key {CALL_KEY!r}"),
    ({"session": {"role": "clerk"}}, "extract.missing"),
    (None, "extract.missing"),
])
def test_context_problems_deny(payments_build, context, says):
    out = guard(payments_build).check(tool_use(), context=context)
    assert not out.allowed and says in out.message


def test_the_model_cannot_supply_the_context_through_the_call(payments_build):
    forged = {**PAYMENT, "session": {"role": "treasurer", "mfa": True}, "ledger": {"sent_today_cents": 0}}
    out = guard(payments_build).check(tool_use(forged), context=None)
    assert not out.allowed and "extract.missing" in out.message
    out = guard(payments_build).check(tool_use({**forged, "amount_cents": 250000}), context=CONTEXT)
    assert not out.allowed and out.record.arguments.get("user", {}).get("role") != "treasurer"


def test_observation_keeps_the_call_apart():
    assert observe({"x": 1}, lambda: CONTEXT) == {**CONTEXT, CALL_KEY: {"x": 1}}


@pytest.mark.parametrize("held", [
    {"history": [{"role": "assistant", "content": [tool_use(PAYMENT, "earlier")]}]},          # a recognised call
    {"ledger_calls": [{"method": "tools/call", "params": {"name": "send_payment", "arguments": PAYMENT}}]},
    {"last": {"tool_name": "send_payment", "tool_input": PAYMENT}},                           # call-like, no shape
])
def test_a_context_holding_a_tool_call_is_refused(payments_build, held):
    """The policy finds calls anywhere in the observation: with an allowed call in the context (a history, a ledger),
    it decided on that one while a call of another tool ran (red team B: wire_everything was allowed)."""
    other = {"type": "tool_use", "id": "new", "name": "wire_everything", "input": {"to": "x", "amount_cents": 10**9}}
    out = guard(payments_build).check(other, context={**CONTEXT, **held}, action_id="new")
    assert not out.allowed and out.record.arguments == {}
    assert "the context holds" in out.record.fail_closed or "looks like a tool call" in out.record.fail_closed


def test_run_terminated_escapes_except_exception():
    with pytest.raises(RunTerminated):
        try:
            raise RunTerminated(GuardOutcome(False, "terminate", "stop", None))
        except Exception:  # what agent SDKs do around a tool
            pytest.fail("RunTerminated must not be an Exception")


def test_records_name_the_integration_and_hash_what_was_decided(payments_build, tmp_path):
    import hashlib
    import json

    g = guard(payments_build, log=tmp_path / "log.jsonl", mode="shadow")
    denied = g.check(tool_use(OVER_LIMIT, "toolu_9"), context=CONTEXT, action_id="toolu_9",
                     integration="anthropic_sdk", tool="send_payment").record
    allowed = g.check(tool_use(PAYMENT, "toolu_10"), context=CONTEXT, integration="anthropic_sdk").record
    assert (denied.integration, denied.tool, denied.mode, denied.action_id) == \
        ("anthropic_sdk", "send_payment", "shadow", "toolu_9")
    text = json.dumps(denied.arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    assert denied.arguments_sha256 == hashlib.sha256(text.encode()).hexdigest()
    assert denied.arguments_sha256 != allowed.arguments_sha256
    assert denied.decision_sha256 != allowed.decision_sha256 and len(denied.decision_sha256) == 64
    logged = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [r["decision_sha256"] for r in logged] == [denied.decision_sha256, allowed.decision_sha256]
    assert logged[0]["integration"] == "anthropic_sdk" and logged[0]["mode"] == "shadow"
    assert verify_log(tmp_path / "log.jsonl").ok


class Paused:
    """A call whose context is read only once `release` is set: it is being decided until then."""

    def __init__(self, g, payment, run="r", action_id=""):
        self.reading, self.release, self.outcome = threading.Event(), threading.Event(), None
        self.thread = threading.Thread(target=self._check, args=(g, payment, run, action_id))
        self.thread.start()
        assert self.reading.wait(10)

    def _context(self):
        self.reading.set()
        assert self.release.wait(10)
        return CONTEXT

    def _check(self, g, payment, run, action_id):
        self.outcome = g.check(tool_use(payment), context=self._context, run=run, action_id=action_id)

    def finish(self):
        self.release.set()
        self.thread.join(10)
        return self.outcome


@pytest.mark.parametrize("strategy", ["tool_halt", "terminate", "replan_halt"])
def test_a_call_decided_after_another_call_halted_its_run_is_refused(payments_build, tmp_path, strategy):
    g = guard(payments_build, strategy, halt_after=1, log=tmp_path / "log.jsonl")
    late = Paused(g, PAYMENT, action_id="late")
    assert g.check(tool_use(OVER_LIMIT), context=CONTEXT, run="r", action_id="halts").action in ("halt", "terminate")
    out = late.finish()
    assert not out.allowed and out.action == "halt" and "halted in this run" in out.message
    assert not out.record.allowed and "halted while this call was decided" in out.record.fail_closed
    records = list(DecisionLog(tmp_path / "log.jsonl").records())
    # one record of the late call, the refusal (A23: before, an allow record followed by the refusal)
    assert [(r["action_id"], r["allowed"]) for r in records] == [("halts", False), ("late", False)]
    assert records[1]["arguments"]["payment"]["amount_cents"] == 45000   # what was decided stays in the record
    assert verify_log(tmp_path / "log.jsonl").ok


def test_a_denied_call_decided_after_the_run_stopped_is_a_halt(payments_build):
    g = guard(payments_build, "terminate")
    late = Paused(g, OVER_LIMIT)
    assert g.check(tool_use(OVER_LIMIT), context=CONTEXT, run="r").action == "terminate"
    out = late.finish()
    assert not out.allowed and out.action == "halt" and "per_payment_limit" in out.record.violations


def test_shadow_mode_records_that_a_late_call_would_have_been_halted(payments_build):
    g = guard(payments_build, "tool_halt", mode="shadow")
    late = Paused(g, PAYMENT)
    assert g.check(tool_use(OVER_LIMIT), context=CONTEXT, run="r").would == "halt"
    out = late.finish()
    assert out.allowed and out.would == "halt" and out.record.allowed and "halted in this run" in out.message


def test_end_run_while_calls_are_decided_keeps_them_in_their_run(payments_build):
    g = guard(payments_build, "tool_halt")
    halting, late = Paused(g, OVER_LIMIT), Paused(g, PAYMENT)
    g.end_run("r")
    assert g.check(tool_use(), context=CONTEXT, run="r").allowed     # a new run, started after the reset
    assert halting.finish().action == "halt"
    out = late.finish()
    assert not out.allowed and out.action == "halt" and "per-payment limit" in out.message
    assert g.halted("r") == "" and g.check(tool_use(), context=CONTEXT, run="r").allowed
