"""The proof cache (verify.proof_cache) with a stand-in for Nagini that records what it was asked:
an unchanged source never reaches the verifier, an entry that cannot be trusted is ignored and the
proof runs again, only real verdicts are stored, and per-function keys re-verify exactly what an
edit can change. The real verifier behind the cache: tests/integration/test_verifier.py."""
import json
from pathlib import Path

import pytest

from veriguard.audit import prove_fresh
from veriguard.cli import main
from veriguard.synth import jobs, pipeline
from veriguard.synth.compile import compile_policy
from veriguard.synth.freeze import write_build
from veriguard.synth.specfile import load_spec
from veriguard.verify import proof_cache
from veriguard.verify.nagini import verify_explained
from veriguard.verify.proof_cache import ProofCache, function_keys, key_base, verify_cached
from veriguard.verify.verdicts import Verdict
from tests.conftest import FIXTURES, MINIMAL, write_spec
from tests.unit.test_compile_and_freeze import fake_result

FAST = MINIMAL + "\n[verify]\nhypothesis_examples = 20\nmutants_per_nagini = 3\n"
PROVED = {"status": "proved", "errors": []}
FAILED = {"status": "failed", "errors": [{"code": "postcondition.violated:assertion.false", "message": "no",
                                          "function": "decide", "line": 3, "source": "Ensures(x)"}]}


class Recorder:
    """Stands in for the Nagini worker: answers `reply` (or reply(select)) and records each call."""

    def __init__(self, reply=PROVED):
        self.reply, self.calls, self.models = reply, [], []

    def verify_file(self, path, *, timeout=60, counterexample=True, wall_limit=None, select=()):
        self.calls.append((Path(path).name, tuple(select)))
        self.models.append(counterexample)
        reply = self.reply(select) if callable(self.reply) else self.reply
        return dict(reply, seconds=1.5)


@pytest.fixture
def policy(tmp_path):
    return compile_policy(load_spec(write_spec(tmp_path))).source


def run(worker, cache, source, tmp_path, name="policy_mini.py", timeout=60):
    path = tmp_path / name
    path.write_text(source)
    return verify_cached(worker, path, source, timeout=timeout, cache=cache)


def entries(cache):
    return sorted(cache.directory.rglob("*.json"))


def test_an_unchanged_source_is_answered_from_the_cache_with_its_key(tmp_path, policy):
    cache, worker = ProofCache(tmp_path / "c"), Recorder()
    first = run(worker, cache, policy, tmp_path)
    assert worker.calls == [("policy_mini.py", ())] and first["cache"]["hit"] is None
    again = run(worker, cache, policy, tmp_path)
    assert len(worker.calls) == 1 and again["status"] == "proved"
    assert again["cache"]["hit"] == "file" and again["cache"]["key"] == first["cache"]["key"]
    assert again["cache"]["seconds_then"] == 1.5 and again["cache"]["stored_at"]


def test_the_certificate_and_the_gate_say_cached_with_the_key(tmp_path):
    spec = load_spec(write_spec(tmp_path, FAST))
    source = compile_policy(spec).source
    cache, worker = ProofCache(tmp_path / "c"), Recorder()
    pipeline.synthesize(spec, worker, source, workdir=tmp_path / "w1", mutant_limit=0, cache=cache)
    result = pipeline.synthesize(spec, worker, source, workdir=tmp_path / "w2", mutant_limit=0, cache=cache)
    assert len(worker.calls) == 1
    gate = next(g for g in result.gates if g.name == "proof (Nagini)")
    assert gate.verdict is Verdict.PROVED and gate.summary.startswith("PROVED (cached): cached:")
    _, cert = write_build(result, tmp_path / "out", run_info={})
    assert cert["proof"]["verdict"] == "PROVED" and cert["proof"]["cache"]["hit"] == "file"
    assert cert["proof"]["cache"]["key"] in {p.stem for p in entries(cache)}
    assert cert["proof"]["cache"]["key"][:16] in cert["proof"]["detail"]


def damage_truncate(path):
    path.write_text(path.read_text()[:40])


def damage_flip_verdict(path):
    path.write_text(path.read_text().replace('"failed"', '"proved"'))


def rehashed(path, change):
    """A well-formed entry with a correct self-hash, changed by `change`: only its key binding can refuse it."""
    entry = json.loads(path.read_text())
    change(entry)
    body = {k: v for k, v in entry.items() if k != "sha256"}
    entry["sha256"] = proof_cache._sha(proof_cache._canonical(body))
    path.write_text(json.dumps(entry))


def damage_other_key(path):
    rehashed(path, lambda e: e.update(key="0" * 64))  # another key's entry, copied under this key's name


def damage_rehashed_timeout(path):
    rehashed(path, lambda e: e["reply"].update(status="timeout"))


def damage_other_verifier(path):
    rehashed(path, lambda e: e["verifier"].update(nagini="0.0.1"))


@pytest.mark.parametrize("damage, why", [
    (damage_truncate, "not JSON"), (damage_flip_verdict, "sha256 does not match"),
    (damage_other_key, "another key"), (damage_rehashed_timeout, "never stored"),
    (damage_other_verifier, "another verifier"), (lambda p: p.write_bytes(b"\x00\xff" * 50), "not JSON")])
def test_an_entry_that_cannot_be_trusted_is_ignored_and_the_proof_runs_again(tmp_path, policy, damage, why):
    cache = ProofCache(tmp_path / "c")
    run(Recorder(FAILED), cache, policy, tmp_path)  # stored: a failure (no function entries)
    [entry] = entries(cache)
    damage(entry)
    worker = Recorder(FAILED)
    again = run(worker, cache, policy, tmp_path)
    assert worker.calls == [("policy_mini.py", ()), ("policy_mini.py", ("decide",))], "the damaged entry must not answer"
    assert worker.models == [False, True]  # proved without models, the failing function again with them
    assert again["status"] == "failed" and again["cache"]["hit"] is None
    assert any(why in p for p in cache.problems), cache.problems
    assert json.loads(entry.read_text())["reply"]["status"] == "failed"  # rewritten from the new run


@pytest.mark.parametrize("status", ["timeout", "killed", "crash"])
def test_only_the_verifiers_real_verdicts_are_stored(tmp_path, policy, status):
    cache = ProofCache(tmp_path / "c")
    run(Recorder({"status": status, "errors": []}), cache, policy, tmp_path)
    assert entries(cache) == []
    worker = Recorder()
    assert run(worker, cache, policy, tmp_path)["status"] == "proved" and len(worker.calls) == 1


def test_the_key_binds_the_source_the_file_name_the_timeout_and_the_verifier(tmp_path, policy, monkeypatch):
    cache, worker = ProofCache(tmp_path / "c"), Recorder(FAILED)
    run(worker, cache, policy, tmp_path)
    run(worker, cache, policy + "\n", tmp_path)
    run(worker, cache, policy, tmp_path, name="policy_other.py")
    run(worker, cache, policy, tmp_path, timeout=61)
    identity = dict(proof_cache.verifier_identity(), nagini="9.9.9")
    monkeypatch.setattr(proof_cache, "verifier_identity", lambda: identity)
    run(worker, cache, policy, tmp_path)
    assert len(worker.calls) == 5 * 2  # each a first run and the failing function again with models


def edit(source, old, new):
    assert source.count(old) == 1, old
    return source.replace(old, new)


def test_editing_one_rule_reverifies_only_what_can_see_its_body(tmp_path, policy):
    """Rules are opaque: `decide` and the violators see their names only; a lemma sees the bodies it reveals."""
    cache, worker = ProofCache(tmp_path / "c"), Recorder()
    run(worker, cache, policy, tmp_path)
    run(worker, cache, edit(policy, "return (age >= 18)", "return (age >= 21)"), tmp_path)
    assert worker.calls[-1][1] == ("property_minors", "rule_adult")
    run(worker, cache, edit(policy, "vg_i += 1", "vg_i = vg_i + 1"), tmp_path)
    assert worker.calls[-1][1] == ("violators_access",)  # callers see its contract only
    run(worker, cache, edit(policy, "(a2 == 'x' or a2 == 'y')", "(a2 == 'x')"), tmp_path)
    assert worker.calls[-1][1] == ("item_access", "table_ok")  # no lemma reveals the item rule: minors needs adult only
    contract = edit(policy, "    Ensures(Acc(list_pred(ResultT(List[int]))))\n",
                    "    Ensures(Acc(list_pred(ResultT(List[int])), 1/2))\n")
    run(worker, cache, contract, tmp_path)
    assert worker.calls[-1][1] == (), "a changed contract is seen by every function: all of it is verified"


def test_layout_and_comments_do_not_change_a_functions_key_but_code_does(policy):
    base = key_base(60)
    keys = function_keys(policy, base).keys
    moved = edit(policy, "    vg_i = 0\n", "    vg_i = 0  # start\n\n")
    assert function_keys(moved, base).keys == keys
    assert function_keys(policy, key_base(61)).keys["decide"] != keys["decide"]
    assert function_keys("def broken(:\n", base) is None


def test_function_proofs_are_stored_only_from_a_proved_run(tmp_path, policy):
    cache = ProofCache(tmp_path / "c")
    run(Recorder(), cache, policy, tmp_path)
    changed = edit(policy, "return (age >= 18)", "return (age >= 21)")
    run(Recorder(FAILED), cache, changed, tmp_path, name="mutant_1.py")
    worker = Recorder()
    run(worker, cache, changed, tmp_path, name="mutant_2.py")  # another file name: the file entry does not answer
    assert worker.calls == [("mutant_2.py", ("property_minors", "rule_adult"))]
    third = run(Recorder(), cache, changed, tmp_path, name="mutant_3.py")
    assert third["cache"]["hit"] == "functions" and third["status"] == "proved"


def test_a_mutant_reverifies_only_the_function_it_changes(tmp_path):
    spec = load_spec(write_spec(tmp_path, MINIMAL + "\n[verify]\nhypothesis_examples = 0\nmutants_per_nagini = 3\n"))
    worker = Recorder(lambda select: FAILED if select else PROVED)
    result = pipeline.synthesize(spec, worker, compile_policy(spec).source, workdir=tmp_path / "w",
                                 mutant_limit=30, cache=ProofCache())
    mutant_calls = [c for c in worker.calls if c[0].startswith("mutant_")]
    assert worker.calls[0] == ("policy_mini.py", ()) and mutant_calls
    assert all(select and len(select) < 7 for _, select in mutant_calls)
    assert result.mutation["by_proof"] == len(mutant_calls)


def spec_in(folder, body=MINIMAL):
    folder.mkdir()
    return write_spec(folder, body)


def test_synth_cli_cache_flags_and_jobs(tmp_path, monkeypatch, capsys):
    seen = []

    def synthesize(spec, worker, source, **kw):
        seen.append((spec.name, kw["cache"].directory))
        return fake_result(spec)

    monkeypatch.setattr(pipeline, "synthesize", synthesize)
    monkeypatch.setenv("VERIGUARD_CACHE", str(tmp_path / "vgcache"))
    a, b = spec_in(tmp_path / "a"), spec_in(tmp_path / "b", MINIMAL.replace('name = "mini"', 'name = "other"'))
    assert main(["synth", str(a), str(b), "--out", str(tmp_path / "o"), "--quiet", "--jobs", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["policy"] for r in out["results"]] == ["mini", "other"]
    assert sorted(seen) == [("mini", tmp_path / "vgcache"), ("other", tmp_path / "vgcache")]
    seen.clear()
    assert main(["synth", str(a), "--out", str(tmp_path / "o2"), "--quiet", "--no-cache"]) == 0
    assert seen == [("mini", None)]
    assert main(["synth", str(a), "--out", str(tmp_path / "o3"), "--quiet", "--jobs", "0"]) == 2
    assert "error[synth.jobs]" in capsys.readouterr().err


def test_jobs_give_each_thread_its_own_worker_and_close_them_all(tmp_path, monkeypatch):
    made = []

    class Worker:
        def __init__(self):
            self.closed = False
            made.append(self)

        def close(self):
            self.closed = True

    monkeypatch.setattr(pipeline, "synthesize", lambda spec, worker, source, **kw: fake_result(spec))
    paths = [str(spec_in(tmp_path / str(n), MINIMAL.replace('"mini"', f'"mini{n}"'))) for n in range(4)]
    runner = jobs.SpecRunner(paths, jobs=2, make_worker=Worker, cache=None, mutant_limit=0, progress=lambda m: None)
    names = [runner.done(p).spec.name for p in paths]
    runner.close()
    assert names == ["mini0", "mini1", "mini2", "mini3"]
    assert 1 <= len(made) <= 2 and all(w.closed for w in made)


def test_a_proof_without_models_serves_a_run_that_wants_them_but_a_failure_does_not(tmp_path, policy):
    """Function proofs do not depend on counterexample models; a file's stored failures do (with or without)."""
    cache = ProofCache(tmp_path / "c")
    path = tmp_path / "policy_mini.py"
    path.write_text(policy)
    verify_cached(Recorder(), path, policy, timeout=60, cache=cache, models="never")
    worker = Recorder()
    assert verify_cached(worker, path, policy, timeout=60, cache=cache)["cache"]["hit"] == "functions"
    assert worker.calls == []
    failing = edit(policy, "return (age >= 18)", "return (age >= 21)")
    path.write_text(failing)
    verify_cached(Recorder(FAILED), path, failing, timeout=60, cache=cache, models="never")
    worker = Recorder(FAILED)
    assert verify_cached(worker, path, failing, timeout=60, cache=cache)["cache"]["hit"] is None
    assert worker.models == [False, True]


def test_models_are_asked_for_only_what_failed():
    path = FIXTURES / "wrong_table" / "eicu_wrong_table.toml"  # any file: the recorder does not read it
    proved = Recorder()
    assert verify_explained(proved, path, timeout=60)["status"] == "proved" and proved.models == [False]
    failed = Recorder(FAILED)
    assert verify_explained(failed, path, timeout=60, models="never")["status"] == "failed" and failed.models == [False]
    expected_to_fail = Recorder(FAILED)
    verify_explained(expected_to_fail, path, timeout=60, models="always")
    assert expected_to_fail.models == [True]


def test_a_failure_is_verified_again_with_models_on_its_functions(tmp_path, policy):
    path = tmp_path / "policy_mini.py"
    path.write_text(policy)
    with_model = {"status": "failed", "errors": [dict(FAILED["errors"][0], counterexample={"age": 3})]}
    worker = Recorder(lambda select: with_model if select else FAILED)
    reply = verify_explained(worker, path, timeout=60)
    assert worker.calls == [("policy_mini.py", ()), ("policy_mini.py", ("decide",))] and worker.models == [False, True]
    assert reply["errors"][0]["counterexample"] == {"age": 3} and reply["seconds"] == 3.0
    # the second run does not fail as the first did: the first reply stands, without models, and says so
    worker = Recorder(lambda select: PROVED if select else FAILED)
    reply = verify_explained(worker, path, timeout=60)
    assert reply["status"] == "failed" and "counterexample" not in reply["errors"][0] and "'proved'" in reply["models"]
    # a failure outside any function of the file: the whole selection again
    nowhere = {"status": "failed", "errors": [dict(FAILED["errors"][0], function="")]}
    worker = Recorder(nowhere)
    verify_explained(worker, path, timeout=60, select=("rule_adult",))
    assert [s for _, s in worker.calls] == [("rule_adult",), ("rule_adult",)]


@pytest.mark.parametrize("prop, models", [("age < 18 ==> not allowed", [False, True]),   # z3 proves it: expected
                                          ("age < 21 ==> not allowed", [True])])         # z3 refutes it: models at once
def test_synth_asks_for_models_at_once_only_when_z3_expects_a_failure(tmp_path, prop, models):
    body = MINIMAL.replace("age < 18 ==> not allowed", prop) + "\n[verify]\nhypothesis_examples = 0\n"
    spec = load_spec(write_spec(tmp_path, body))
    worker = Recorder(FAILED)
    pipeline.synthesize(spec, worker, compile_policy(spec).source, workdir=tmp_path / "w", mutant_limit=0)
    assert worker.models == models


def test_models_are_not_asked_for_a_failure_a_test_already_shows(tmp_path, policy):
    path = tmp_path / "policy_mini.py"
    path.write_text(policy)
    worker = Recorder(FAILED)
    reply = verify_explained(worker, path, timeout=60, explained=lambda: "the example 'x' fails")
    assert worker.models == [False] and reply["unexplained"] and reply["models"] == "not asked: the example 'x' fails"
    cache = ProofCache(tmp_path / "c")
    verify_cached(worker, path, policy, timeout=60, cache=cache, explained=lambda: "a test fails")
    # Nagini's first run is kept apart: it answers again only when a test again explains the failure
    again = Recorder(FAILED)
    reply = verify_cached(again, path, policy, timeout=60, cache=cache, explained=lambda: "the example 'y' fails")
    assert again.calls == [] and reply["status"] == "failed" and reply["cache"]["hit"] == "file"
    assert reply["unexplained"] and reply["models"] == "not asked: the example 'y' fails"
    # it is not the file's answer (it lacks the models): with no failing test, Nagini runs and is asked for them
    unexplained = Recorder(FAILED)
    assert run(unexplained, cache, policy, tmp_path)["cache"]["hit"] is None and unexplained.models == [False, True]
    # an entry under that key that says "proved" (written by hand) is never taken
    forged = ProofCache(tmp_path / "forged")
    forged.put(proof_cache.file_key(policy, path.name, key_base(60) + proof_cache.FIRST_RUN), "file", PROVED)
    checked = Recorder(FAILED)
    verify_cached(checked, path, policy, timeout=60, cache=forged, explained=lambda: "a test fails")
    assert checked.calls
    # the tests (run while Nagini proves) are asked only once the proof has failed
    asked = []
    verify_explained(Recorder(), path, timeout=60, explained=lambda: asked.append(1) or "never asked")
    assert asked == []


def test_a_broken_policy_a_spec_example_catches_is_refuted_by_its_input_without_models(tmp_path):
    spec = load_spec(write_spec(tmp_path, MINIMAL + "\n[verify]\nhypothesis_examples = 0\n"))
    broken = edit(compile_policy(spec).source, "return (age >= 18)", "return (age >= 40)")
    worker = Recorder(FAILED)
    result = pipeline.synthesize(spec, worker, broken, workdir=tmp_path / "w", mutant_limit=0)
    assert worker.models == [False]  # the example's input explains the failure: Nagini is not run again
    assert result.proof.verdict is Verdict.REFUTED and "not asked: the example 'adult admin'" in result.proof.detail
    d = next(d for d in result.proof.diagnostics if d.code == "test.failure")
    assert d.confirmed and d.counterexample["age"] == 30 and d.counterexample["role"] == "admin"
    # the same failure with passing tests: Nagini is asked for models of the failing function
    worker = Recorder(FAILED)
    pipeline.synthesize(spec, worker, compile_policy(spec).source, workdir=tmp_path / "w2", mutant_limit=0)
    assert worker.models == [False, True]


def test_the_audit_confirms_a_failed_proof_by_an_example_without_asking_for_models(tmp_path):
    spec = load_spec(write_spec(tmp_path, MINIMAL))
    broken = edit(compile_policy(spec).source, "return (age >= 18)", "return (age >= 40)")
    worker = Recorder(FAILED)
    verdict, summary = prove_fresh(spec, broken, lambda _: None, worker=worker)
    assert worker.models == [False] and verdict is Verdict.REFUTED, summary
    assert "a test input reproduces the failure" in summary and "not asked: the example 'adult admin'" in summary
    # no example fails on the correct policy: Nagini is asked for models, and one that does not reproduce is UNKNOWN
    worker = Recorder(FAILED)
    verdict, summary = prove_fresh(spec, compile_policy(spec).source, lambda _: None, worker=worker)
    assert worker.models == [False, True] and verdict is Verdict.UNKNOWN, summary


def test_a_property_z3_refutes_on_the_policy_is_not_sent_to_nagini(tmp_path):
    body = MINIMAL.replace("age < 18 ==> not allowed", "age < 21 ==> not allowed") + "\n[verify]\nhypothesis_examples = 0\n"
    spec = load_spec(write_spec(tmp_path, body))
    worker = Recorder()
    result = pipeline.synthesize(spec, worker, compile_policy(spec).source, workdir=tmp_path / "w", mutant_limit=0)
    names = set(function_keys(result.verified_source, "b").keys)
    assert [select for _, select in worker.calls] == [tuple(sorted(names - {"property_minors"}))]
    assert result.proof.verdict is Verdict.REFUTED and not result.ok
    d = next(d for d in result.proof.diagnostics if d.function == "property_minors")
    assert d.confirmed and d.code == "proof.not_sent" and 18 <= d.counterexample["age"] < 21
    assert "not sent to Nagini" in result.proof.detail and "Nagini on the rest: PROVED" in result.proof.detail
    _, cert = write_build(result, tmp_path / "b", run_info={})
    (row,) = cert["properties"]
    assert (row["nagini"], row["z3"]) == ("NOT_CHECKED", "REFUTED") and "z3's input" in row["detail"]
    assert cert["status"] != "PROVED"
    # Nagini's own failure on the rest is kept beside it, and the worst verdict is still REFUTED
    worker = Recorder(FAILED)
    result = pipeline.synthesize(spec, worker, compile_policy(spec).source, workdir=tmp_path / "w2", mutant_limit=0)
    assert result.proof.verdict is Verdict.REFUTED
    assert {d.function for d in result.proof.diagnostics} == {"decide", "property_minors"}


def test_a_skipped_function_is_never_verified_and_the_file_is_not_stored(tmp_path, policy):
    cache = ProofCache(tmp_path / "c")
    path = tmp_path / "policy_mini.py"
    path.write_text(policy)
    worker = Recorder()
    reply = verify_cached(worker, path, policy, timeout=60, cache=cache, skip=("property_minors",))
    assert "property_minors" not in worker.calls[0][1] and reply["cache"]["not_sent"] == ["property_minors"]
    assert verify_cached(worker, path, policy, timeout=60, cache=cache)["cache"]["hit"] is None  # no file entry
    assert worker.calls[-1][1] == ("property_minors",)  # the rest came from the cache: only the lemma is verified


def test_synth_never_mutates_a_domain_predicate(tmp_path):
    import ast

    spec = load_spec(write_spec(tmp_path, FAST))
    result = pipeline.synthesize(spec, Recorder(), compile_policy(spec).source, workdir=tmp_path / "w", mutant_limit=200)
    (domain,) = [f for f in ast.parse(result.verified_source).body
                 if isinstance(f, ast.FunctionDef) and f.name.startswith("vg_domain_")]
    rows = result.mutation["mutants"]
    assert rows and not [r for r in rows if domain.lineno <= r["line"] <= domain.end_lineno]
