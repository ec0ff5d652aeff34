"""The offline stage end to end with the real Nagini (one warm worker for the session). Syntheses go through
the session's proof cache, as `veriguard synth` does: a broken variant of a shipped policy re-verifies the
functions it changes (and those that see their bodies), and an identical source is proved once per session."""
import json

import pytest

from veriguard.enforce.loader import load_policy
from veriguard.enforce.monitor import Monitor
from veriguard.synth.compile import compile_policy
from veriguard.synth.freeze import write_build
from veriguard.synth.pipeline import synthesize
from veriguard.synth.specfile import load_spec
from tests.conftest import FIXTURES, SHIPPED
from veriguard.cli import main
from veriguard.verify.verdicts import Verdict, holds

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_spec_synthesizes_to_a_proved_certificate(path, shipped_synthesis, tmp_path):
    spec, result = shipped_synthesis(path.stem)
    failed = [g for g in result.gates if not holds(g.verdict)]
    assert not failed, [(g.name, g.verdict, g.summary) for g in failed]
    assert result.proof.verdict is Verdict.PROVED
    build, cert = write_build(result, tmp_path / "build", run_info={})
    assert cert["status"] == "PROVED" and cert["fully_proved"]
    assert all(p["nagini"] == "PROVED" and p["z3"] == "PROVED" for p in cert["properties"])
    assert cert["mutation"]["score"] >= spec.settings.mutation_threshold
    assert (build / "policy.py").read_text(encoding="utf-8") == result.frozen_source, "what was tested ships"
    policy = load_policy(build)
    for ex in spec.examples:
        assert policy.evaluate_checked(ex.args).allowed == ex.allowed
    monitor = Monitor.from_build(build)  # the proved build is enforceable: its extractors exist and load
    assert set(monitor.extractors) == {name for name, _ in policy.module.ARGUMENTS}


def refuted(result):
    assert result.proof.verdict is Verdict.REFUTED, (result.proof.detail, result.proof.diagnostics)
    return [d for d in result.proof.diagnostics if d.confirmed]


def inject(spec_name, old, new, count=1):
    spec = load_spec(next(p for p in SHIPPED if p.stem == spec_name))
    source = compile_policy(spec).source
    assert source.count(old) >= count, f"bug site not found: {old!r}"
    return spec, source.replace(old, new, count)


BUGS = {
    # kind of bug: (spec, code fragment, replacement, the rule the diagnosis must name, a value it must show)
    "boundary off by one": ("mind2web_sc", "return ((not task_hotel) or (user_age >= 18))",
                            "return ((not task_hotel) or (user_age > 18))", "hotel", "18"),
    "flag wired to the wrong rule": ("mind2web_sc", "not rule_hotel(task_hotel, user_age), not rule_job",
                                     "not rule_job(task_job, user_age), not rule_job", "hotel", "task_hotel"),
    "violation never reported": ("payments", "    if f_currency:\n        vg_out.append(6)\n", "", "currency", ""),
    "wrong rule number reported": ("payments", "vg_out.append(2)", "vg_out.append(3)", "daily_limit", ""),
    "loop skips the last item": ("eicu_ac", "    while vg_i < len(accessed):", "    while vg_i < len(accessed) - 1:",
                                 "access", "accessed"),
    "inverted item check": ("shell_agent", "        if not item_file_access(vg_p", None, "file_access", "touched"),
    "decision ignores the violations": ("payments", "return Decision(len(vg_violations) == 0,",
                                        "return Decision(True,", "", "payment_amount_cents"),
}


@pytest.mark.parametrize("kind", sorted(BUGS))
def test_broken_policy_is_refuted_with_rule_and_values(kind, nagini_worker, proof_cache, shipped_synthesis, tmp_path):
    spec_name, old, new, rule, value = BUGS[kind]
    shipped_synthesis(spec_name)  # its proof is in the cache: what the bug changes is verified again
    if new is None:  # invert the check in the toolbox loop
        spec = load_spec(next(p for p in SHIPPED if p.stem == spec_name))
        source = compile_policy(spec).source
        loop_if = "        if not item_file_access(command_kind, command_approved, touched[vg_i][0], touched[vg_i][1]):"
        assert loop_if in source
        source = source.replace(loop_if, loop_if.replace("if not ", "if "))
    else:
        spec, source = inject(spec_name, old, new)
    result = synthesize(spec, nagini_worker, source, workdir=tmp_path, mutant_limit=0, cache=proof_cache)
    confirmed = refuted(result)
    assert confirmed, "the refutation is backed by a concrete input"
    text = json.dumps([d.to_dict() for d in result.proof.diagnostics])
    if rule:
        assert f"rule {rule}" in text or f"'{rule}'" in text, text
    assert value in text
    assert not result.ok


def test_false_property_is_refuted_with_the_offending_values(nagini_worker, proof_cache, tmp_path):
    spec = load_spec(FIXTURES / "wrong_table" / "eicu_wrong_table.toml")
    result = synthesize(spec, nagini_worker, compile_policy(spec).source, workdir=tmp_path, mutant_limit=0,
                        cache=proof_cache)
    z3_gate = next(g for g in result.gates if g.name == "contract (z3)")
    assert z3_gate.verdict is Verdict.REFUTED and "nursing_no_diagnosis (REFUTED)" in z3_gate.summary
    confirmed = refuted(result)
    d = next(d for d in confirmed if d.clause == "property nursing_no_diagnosis")
    assert d.counterexample["role"] == "nursing"
    assert ("diagnosis", "icd9code") in d.counterexample["accessed"]["items"].values()
    build, cert = write_build(result, tmp_path / "b", run_info={})
    props = {p["id"]: (p["nagini"], p["z3"]) for p in cert["properties"]}
    # z3's input breaks the property on the policy: its lemma was not sent to Nagini (synth.pipeline), and says so
    assert props["nursing_no_diagnosis"] == ("NOT_CHECKED", "REFUTED") and d.code == "proof.not_sent"
    assert "property_nursing_no_diagnosis" in result.proof.cache["not_sent"]
    assert props["unknown_databases_denied"] == ("PROVED", "PROVED")
    assert cert["status"] == "FAILED"


def test_synth_cli_exit_code_for_a_refuted_property(nagini_worker, tmp_path, capsys):
    code = main(["synth", str(FIXTURES / "wrong_table" / "eicu_wrong_table.toml"), "--out", str(tmp_path),
                 "--quiet", "--mutants", "0", "--json"], worker=nagini_worker)
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and not out["ok"] and out["results"][0]["status"] == "FAILED"


def test_unprovable_but_correct_policy_is_unknown_not_refuted(nagini_worker, proof_cache, tmp_path):
    """A loop invariant removed: the code is unchanged (and right) but the proof cannot go through."""
    spec, source = inject("eicu_ac", "        Invariant(Forall(vg_out, lambda vg_p: (vg_p in accessed, [])))", "")
    result = synthesize(spec, nagini_worker, source, workdir=tmp_path, mutant_limit=0, cache=proof_cache)
    assert result.proof.verdict is Verdict.UNKNOWN, result.proof
    assert result.proof.diagnostics and all(d.confirmed is False for d in result.proof.diagnostics)
    assert "incompleteness" in result.proof.detail
    assert {g.name: g.verdict for g in result.gates} == {
        "contract (z3)": Verdict.PROVED, "proof (Nagini)": Verdict.UNKNOWN, "examples": Verdict.PASSED,
        "properties (Hypothesis)": Verdict.PASSED, "mutation": Verdict.NOT_CHECKED}  # --mutants 0: not run
    assert result.verdict is Verdict.UNKNOWN and not result.ok
