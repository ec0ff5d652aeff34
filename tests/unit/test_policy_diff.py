"""veriguard diff: z3 finds what a new build decides differently, the frozen modules confirm it, and logged
decisions are replayed against the new build (fake builds: no JVM)."""
import hashlib
import json
import shutil

import pytest
from veriguard.contracts.build_format import certificate_bytes
from veriguard.enforce.loader import load_policy
from veriguard.enforce.monitor import Monitor
from veriguard.synth.freeze import write_build
from veriguard.synth.specfile import load_spec
from veriguard.verify.policy_diff import Outcome, diff_policies
from veriguard.verify.verdicts import Verdict

from tests.conftest import MINIMAL, SPECS, write_spec
from tests.unit.test_compile_and_freeze import fake_result
from veriguard.cli import main
from veriguard.diff import diff_builds, load_build

LOOSER = MINIMAL.replace("age >= 18", "age >= 16").replace("age < 18 ==>", "age < 16 ==>")
TIGHTER = MINIMAL.replace("age >= 18", "age >= 21").replace("age < 18 ==>", "age < 21 ==>")


def build(tmp_path, name, body=MINIMAL, **kw):
    folder = tmp_path / name
    folder.mkdir()
    spec = load_spec(write_spec(folder, body, **kw))
    return write_build(fake_result(spec), folder / "out", run_info={})[0]


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


def test_identical_builds_differ_nowhere_and_z3_says_so(tmp_path, capsys):
    old, new = build(tmp_path, "a"), build(tmp_path, "b")
    found = diff_builds(load_build(old), load_build(new))
    assert found.same_decisions and found.verdict is Verdict.PROVED
    assert found.newly_allowed.verdict is Verdict.PROVED and "unsat" in found.newly_allowed.message
    assert not found.newly_allowed.witnesses and not found.newly_denied.witnesses
    assert {(p.owner, p.id, p.verdict) for p in found.properties} == {("old", "minors", Verdict.PROVED),
                                                                       ("new", "minors", Verdict.PROVED)}
    code, out, _ = run(capsys, "diff", old, new)
    assert code == 0 and "the same decisions" in out


def test_a_loosened_rule_is_newly_allowed_with_a_witness_the_frozen_modules_confirm(tmp_path, capsys):
    old, new = build(tmp_path, "a"), build(tmp_path, "b", LOOSER)
    found = diff_builds(load_build(old), load_build(new))
    assert found.newly_allowed.verdict is Verdict.REFUTED and found.newly_denied.verdict is Verdict.PROVED
    w = found.newly_allowed.witnesses[0]
    assert w.reasons == ("adult",) and not w.problem and 16 <= w.arguments["age"] < 18
    assert not load_policy(old).evaluate(w.arguments).allowed and load_policy(new).evaluate(w.arguments).allowed
    lost = {p.id for p in found.properties if p.owner == "old" and p.verdict is Verdict.REFUTED}
    assert lost == {"minors"}  # OLD's "minors are denied" (age < 18) fails for NEW
    code, out, _ = run(capsys, "diff", old, new, "--json")
    doc = json.loads(out)
    assert code == 1 and doc["newly_allowed"]["verdict"] == "REFUTED" and doc["same_decisions"] is False
    assert doc["newly_allowed"]["witnesses"][0]["old"]["violations"] == ["adult"]


def test_a_tightened_rule_is_newly_denied(tmp_path, capsys):
    old, new = build(tmp_path, "a"), build(tmp_path, "b", TIGHTER)
    found = diff_builds(load_build(old), load_build(new))
    assert found.newly_allowed.verdict is Verdict.PROVED and found.newly_denied.verdict is Verdict.REFUTED
    w = found.newly_denied.witnesses[0]
    assert w.reasons == ("adult",) and w.old.allowed and not w.new.allowed and 18 <= w.arguments["age"] < 21
    code, out, _ = run(capsys, "diff", old, new)
    assert code == 1 and "newly denied: REFUTED" in out and "newly allowed: PROVED" in out


def test_one_witness_per_rule_involved(tmp_path):
    """A table that permits more and a looser age rule: a witness for each OLD rule that denied."""
    old = build(tmp_path, "a")
    new = build(tmp_path, "b", LOOSER, table='{"admin": {"db": ["x", "y"]}, "user": {"db": ["x", "y"]}}')
    found = diff_builds(load_build(old), load_build(new))
    reasons = {r for w in found.newly_allowed.witnesses for r in w.reasons}
    assert reasons == {"adult", "access"} and all(not w.problem for w in found.newly_allowed.witnesses)
    access = next(w for w in found.newly_allowed.witnesses if "access" in w.reasons)
    assert access.arguments["role"] == "user" and ["db", "y"] in access.arguments["items"]
    assert set(access.old.denied) == {("db", "y")}


def test_a_frozen_policy_that_disagrees_with_z3_is_an_error_never_a_finding(tmp_path):
    old, new = load_spec(write_spec(tmp_path, MINIMAL)).contract, load_spec(write_spec(tmp_path, LOOSER)).contract

    def allows_everything(args):  # OLD's frozen module lies: z3 says OLD denies the witness
        return Outcome("decided", True)

    found = diff_policies(old, new, allows_everything, allows_everything)
    assert found.newly_allowed.verdict is Verdict.ERROR and "violates ['adult']" in found.newly_allowed.message
    refused = diff_policies(old, new, lambda a: Outcome("failed", reason="boom"), allows_everything)
    assert refused.newly_allowed.verdict is Verdict.ERROR and "boom" in refused.newly_allowed.message


@pytest.mark.parametrize("change,needle", [
    (('age = "int"', 'age = "str"'), "argument 'age' has type int in OLD and str in NEW"),
    (('age = "int"', 'years = "int"'), "'age' of OLD is 'years' in NEW"),
    (('Role = { enum = ["admin", "user"] }', 'Role = { enum = ["admin", "user", "guest"] }'), "'role' has type Role"),
])
def test_builds_with_different_arguments_are_refused_with_exit_2(tmp_path, capsys, change, needle):
    body = MINIMAL.replace(*change)
    if "years" in change[1]:
        body = body.replace("age >= 18", "years >= 18").replace("age < 18", "years < 18").replace("age = 30",
                                                                                                   "years = 30")
    if '"str"' in change[1]:
        body = body.replace("age >= 18", 'age != "0"').replace("age < 18 ==>", 'age == "0" ==>') \
            .replace("age = 30", 'age = "30"')
    old, new = build(tmp_path, "a"), build(tmp_path, "b", body)
    code, out, err = run(capsys, "diff", old, new)
    assert code == 2 and "error[diff.arguments]" in err and needle in err and not out


def test_a_tampered_build_is_refused(tmp_path, capsys):
    old, new = build(tmp_path, "a"), build(tmp_path, "b", LOOSER)
    spec = new / "spec" / "mini.toml"
    spec.write_text(spec.read_text().replace("age >= 16", "age >= 0"))
    code, _, err = run(capsys, "diff", old, new)
    assert code == 2 and "load.tampered" in err


def test_a_consistently_rewritten_spec_copy_is_refused(tmp_path, capsys):
    """A spec copy edited with every hash rewritten (an unsigned build) no longer matches policy.py: refused,
    never compared as if the frozen module implemented it."""
    old, new = build(tmp_path, "a"), build(tmp_path, "b")
    spec = new / "spec" / "mini.toml"
    spec.write_text(spec.read_text().replace("age >= 18", "age >= 0"))
    digest = hashlib.sha256(spec.read_bytes()).hexdigest()
    cert = json.loads((new / "certificate.json").read_text())
    cert["hashes"]["spec"] = cert["hashes"]["files"]["spec/mini.toml"] = digest
    (new / "certificate.json").write_bytes(certificate_bytes(cert))
    load_policy(new)  # the loader alone cannot tell
    code, _, err = run(capsys, "diff", old, new)
    assert code == 2 and "error[diff.inconsistent]" in err


# --- log replay ---------------------------------------------------------------------------------------
def observation(currency="USD", *, tool=True):
    call = {"recipient": "acme-supplies", "amount_cents": 45000, "currency": currency, "method": "ach"}
    content = [{"type": "tool_use", "id": "t1", "name": "send_payment", "input": call}] if tool else []
    return {"session": {"role": "clerk", "mfa": False}, "ledger": {"sent_today_cents": 0},
            "message": {"role": "assistant", "content": content}}


def payments_build(tmp_path, name, currencies='"USD", "EUR"'):
    folder = tmp_path / name
    shutil.copytree(SPECS / "payments", folder / "payments")
    text = (SPECS / "payments.toml").read_text(encoding="utf-8")
    (folder / "payments.toml").write_text(text.replace('payment.currency in {"USD", "EUR"}',
                                                       f"payment.currency in {{{currencies}}}"), encoding="utf-8")
    return write_build(fake_result(load_spec(folder / "payments.toml")), folder / "out", run_info={})[0]


def test_log_replay_lists_the_decisions_that_would_change(tmp_path, capsys):
    old, new = payments_build(tmp_path, "a"), payments_build(tmp_path, "b", '"USD", "EUR", "GBP"')
    log = tmp_path / "decisions.jsonl"
    monitor = Monitor.from_build(old, log=log)
    records = [monitor.check(o) for o in (observation(), observation("GBP"), observation(tool=False))]
    assert [r.allowed for r in records] == [True, False, False] and records[2].fail_closed
    code, out, _ = run(capsys, "diff", old, new, "--log", log, "--json")
    replay = json.loads(out)["log"]
    assert code == 1 and replay["records"] == 3 and replay["replayed"] == 2
    assert [c["line"] for c in replay["changed"]] == [2]
    changed = replay["changed"][0]
    assert changed["old"] == {"allowed": False, "violations": ["currency"], "fail_closed": ""}
    assert changed["new"]["allowed"] is True and changed["arguments"]["payment"]["currency"] == "GBP"
    assert [(u["line"], u["why"].split(":")[0]) for u in replay["not_replayable"]] == [(3, "arguments not recorded")]
    code, out, _ = run(capsys, "diff", old, new, "--log", log)
    assert "line 2: denied -> allowed" in out and "line 3: not replayable: arguments not recorded: payment" in out


def test_a_broken_log_is_refused(tmp_path, capsys):
    old = payments_build(tmp_path, "a")
    log = tmp_path / "decisions.jsonl"
    Monitor.from_build(old, log=log).check(observation())
    log.write_text(log.read_text().replace('"allowed":true', '"allowed":false'))
    code, _, err = run(capsys, "diff", old, old, "--log", log)
    assert code == 2 and "error[diff.log]" in err and "broken" in err


def test_bytecode_that_is_not_policy_py_compiled_is_refused(tmp_path, capsys):
    """policy.code with a specialised opcode (== to policy.py compiled, yet it runs other code) and re-hashed: diff
    refuses the build rather than reason about policy.py, whether or not the loader refuses it first."""
    from dataclasses import replace

    from veriguard.contracts.errors import VeriguardError
    from veriguard.diff import _code_of
    from tests.unit.test_audit import specialise

    old, new = build(tmp_path, "a"), build(tmp_path, "b")
    loaded = load_policy(new)
    specialise(new, None)
    code, _, err = run(capsys, "diff", old, new)
    assert code == 2 and ("error[diff.inconsistent]" in err or "error[load.exec]" in err)
    as_certified = replace(loaded, certificate=json.loads((new / "certificate.json").read_text()))
    with pytest.raises(VeriguardError) as e:
        _code_of(as_certified, (new / "policy.py").read_bytes())
    assert e.value.code == "diff.inconsistent" and "policy.code is not policy.py compiled" in e.value.message


@pytest.mark.parametrize("torn", ["not JSON", "JSON"])
def test_only_verified_records_are_replayed(tmp_path, capsys, torn):
    """An incomplete last line passes verify-log (an interrupted write) but was never verified: it is neither
    replayed nor counted, even when it is a whole JSON record that NEW would decide otherwise."""
    old, new = payments_build(tmp_path, "a"), payments_build(tmp_path, "b", '"USD", "EUR", "GBP"')
    log = tmp_path / "decisions.jsonl"
    monitor = Monitor.from_build(old, log=log)
    monitor.check(observation())
    forged = json.loads(log.read_text().splitlines()[0])
    forged["arguments"]["payment"]["currency"] = "GBP"
    forged["allowed"] = False
    with open(log, "a") as f:
        f.write(json.dumps(forged) if torn == "JSON" else '{"allowed":false,"argum')
    code, out, _ = run(capsys, "diff", old, new, "--log", log, "--json")
    replay = json.loads(out)["log"]
    assert code == 1 and replay["records"] == 1 and replay["replayed"] == 1 and replay["changed"] == []
    assert "incomplete last line" in replay["chain"]
