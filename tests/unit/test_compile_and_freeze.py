import ast
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from veriguard.contracts.runtime_support import ArgumentError, flatten_arguments
from veriguard.contracts.schema import argument_schema
from veriguard.contracts.to_python import compile_checker
from veriguard.enforce.loader import ArgumentError as LoadedArgumentError, PolicyLoadError, load_policy
from veriguard.synth.compile import compile_policy
from veriguard.contracts.build_format import CERTIFIED_GATES
from veriguard.synth.freeze import frozen_module, sha256, write_build
from veriguard.synth.pipeline import Gate, SynthResult, contract_gate
from veriguard.synth.specfile import load_spec
from tests.conftest import SHIPPED, SPECS, write_spec
from veriguard.verify import mutation
from veriguard.verify.runnable import contract_functions, runnable_policy, strip_contracts
from veriguard.verify.verdicts import ProofResult, Verdict
from veriguard.verify.z3check import check_contract


def fake_result(spec, *, passed=True, z3=False):
    """A result as if every gate had run (PASSED, Nagini PROVED) or had failed (REFUTED); no gate runs but z3's, with
    `z3` (as `audit` re-runs it and compares its findings: seconds per spec, so only builds audited ask it). It records
    each gate synthesis records (synth.freeze.CERTIFIED_GATES), so that a certificate missing one means something; the
    mutation figures are made up (one mutant, killed, under a limit of one, so that the count `audit` makes again
    agrees; `audit --mutation` re-derives them)."""
    compiled = compile_policy(spec)
    runnable = runnable_policy(spec.contract, compiled.source)
    verdict = Verdict.PASSED if passed else Verdict.REFUTED
    proved = Verdict.PROVED if passed else Verdict.REFUTED
    figures = {"score": 1.0, "killed": 1, "total": 1}
    rows = [{"name": e.name, "line": e.pos.line, "verdict": "PASSED", "error": ""} for e in spec.examples]
    made = {   # each gate's summary and figures as synth.pipeline writes them (`veriguard audit` derives them again)
        "contract (z3)": ("0/0 checks proved (lists up to 3 items)", {"bound": 3, "findings": []}),
        "proof (Nagini)": ("PROVED", {}),
        "examples": (f"{len(rows)}/{len(rows)} spec examples pass", {"passed": len(rows), "total": len(rows),
                                                                      "results": rows}),
        "properties (Hypothesis)": ("100 random + 0 systematic inputs decided as the contract says",
                                    {"examples_run": 100, "systematic": 0, "rejected": 0, "failure": None}),
        "mutation": (f"1/1 mutants killed (score 1.00, threshold {spec.settings.mutation_threshold:.2f})", figures)}
    if z3:
        found = z3_gate(spec)
        made["contract (z3)"] = (found.summary, found.details)
    gates = [Gate(name, proved if name in ("contract (z3)", "proof (Nagini)") else verdict, made[name][0],
                  details=made[name][1]) for name in CERTIFIED_GATES]
    mutation = {**figures, "threshold": spec.settings.mutation_threshold, "by_tests": 1, "by_proof": 0,
                "survivors": [], "proofs_run": 0, "limit": 1}
    return SynthResult(spec, compiled.source, runnable, frozen_module(spec, runnable), gates, ProofResult(proved), None,
                       None, mutation)


_Z3_GATES = {}


def z3_gate(spec):
    """z3's gate for `spec`, once per spec and tables in a process."""
    key = (spec.sha256, spec.files, spec.settings.z3_bound)
    if key not in _Z3_GATES:
        _Z3_GATES[key] = contract_gate(check_contract(spec.contract, bound=spec.settings.z3_bound))
    return _Z3_GATES[key]


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_compiled_policy_is_valid_python_and_stdlib_only_once_frozen(path):
    spec = load_spec(path)
    compiled = compile_policy(spec)
    ast.parse(compiled.source)
    frozen = frozen_module(spec, strip_contracts(compiled.source))
    imports = {n.module or n.names[0].name for n in ast.walk(ast.parse(frozen))
               if isinstance(n, (ast.Import, ast.ImportFrom))}
    assert imports <= {"typing", "dataclasses"}, imports
    assert "nagini" not in frozen and "Ensures(" not in frozen


def test_each_enum_domain_is_one_predicate_that_the_requirements_name_and_mutants_leave_alone():
    spec = load_spec(SPECS / "os_agent.toml")
    source = compile_policy(spec).source
    tree = ast.parse(source)
    domains = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name.startswith("vg_domain_")}
    assert set(domains) == {"vg_domain_CommandClass", "vg_domain_Access", "vg_domain_Zone", "vg_domain_Identity"}
    zone = ast.unparse(domains["vg_domain_Zone"].body[-1])
    assert zone.startswith("return x == 'task' or") and zone.count(" == ") == 10
    assert [d.id for d in domains["vg_domain_Zone"].decorator_list] == ["Pure"]  # visible: its body is the domain
    decide = next(f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "decide")
    text = ast.unparse(decide)
    assert "Requires(vg_domain_CommandClass(command_kind))" in text and "vg_domain_Zone(touched[vg_j][1])" in text
    assert "command_kind == 'privilege'" not in text  # the disjunction is written once, in the predicate
    assert set(contract_functions(spec.contract)) == set(domains) | {f"property_{d.id}" for d in spec.contract.properties}
    def mutated(skip):  # the top-level functions holding a mutable site
        return {tree.body[path[0]].name for _, path, _ in mutation._sites(tree, set(skip))}
    assert set(domains) <= mutated(())
    assert not set(domains) & mutated(contract_functions(spec.contract)) and "decide" in mutated(contract_functions(spec.contract))
    runnable = runnable_policy(spec.contract, source)  # what runs and ships: the contract's functions left out
    assert "vg_domain_" not in runnable and "def property_" not in runnable and "def decide(" in runnable


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_examples_hold_on_the_runnable_policy_and_the_checker(path):
    spec = load_spec(path)
    namespace = {}
    exec(frozen_module(spec, strip_contracts(compile_policy(spec).source)), namespace)
    checker = compile_checker(spec.contract)
    schema = argument_schema(spec.signature)
    for ex in spec.examples:
        d = namespace["evaluate_checked"](ex.args)
        assert d.allowed == ex.allowed, ex.name
        if ex.violations is not None:
            assert set(d.violations) == set(ex.violations), ex.name
        if ex.denied is not None:
            assert set(d.denied) == {tuple(x) for x in ex.denied}, ex.name
        allowed, violations, _ = checker.spec_decision(**flatten_arguments(schema, ex.args))
        assert allowed == ex.allowed


def test_compile_rejects_two_item_rules(tmp_path):
    from veriguard.contracts.errors import SpecError
    from tests.conftest import MINIMAL
    body = MINIMAL.replace('rule access "Items must be permitted": forall (a, b) in items: ok(role, a, b)',
                           'rule access "Items must be permitted": forall (a, b) in items: ok(role, a, b)\n'
                           'rule other "No secrets": forall (a, b) in items: a != "secret"')
    spec = load_spec(write_spec(tmp_path, body))
    with pytest.raises(SpecError) as e:
        compile_policy(spec)
    assert e.value.code == "compile.shape" and e.value.pos.line > 0 and "merge" in e.value.fix


def test_flatten_arguments_rejects_bad_input():
    spec = load_spec(SHIPPED[[p.stem for p in SHIPPED].index("mind2web_sc")])
    schema = argument_schema(spec.signature)
    good = spec.examples[0].args
    assert flatten_arguments(schema, good)["user_age"] == 16
    for bad, needle in [({}, "missing"), ({**good, "extra": 1}, "not an argument"),
                        ({**good, "user": {**good["user"], "age": "16"}}, "integer"),
                        ({**good, "user": {**good["user"], "age": True}}, "integer"),
                        ({**good, "task": {**good["task"], "car": 1}}, "true/false"),
                        ({**good, "user": {k: v for k, v in good["user"].items() if k != "vaccine"}}, "missing")]:
        with pytest.raises(ArgumentError, match=needle):
            flatten_arguments(schema, bad)


def test_write_build_then_load(tmp_path):
    spec = load_spec(write_spec(tmp_path))
    build, cert = write_build(fake_result(spec), tmp_path / "out", run_info={"seconds": 1.0})
    assert {p.name for p in build.iterdir()} >= {"policy.py", "policy_verified.py", "certificate.json", "report.md",
                                                 "run.json", "extraction.json", "spec"}
    assert cert["hashes"]["policy"] == sha256((build / "policy.py").read_bytes())
    policy = load_policy(build)
    assert policy.evaluate({"role": "admin", "age": 30, "items": [["db", "y"]]}).allowed
    d = policy.evaluate({"role": "user", "age": 30, "items": [["db", "y"]]})
    assert not d.allowed and d.violations == ("access",) and d.denied == (("db", "y"),)
    with pytest.raises(LoadedArgumentError) as e:  # the frozen module's own class, turned into ours by the loader
        policy.evaluate({"role": "user", "age": 30})
    assert e.value.argument == "items" and e.value.code == "policy.argument"
    out = subprocess.run([sys.executable, "-I", "-c", f"import runpy; m = runpy.run_path({str(build / 'policy.py')!r}); "
                          "print(m['evaluate']({'role': 'user', 'age': 9, 'items': []}).violations)"],
                         capture_output=True, text=True)
    assert out.stdout.strip() == "('adult',)", out.stderr  # runs in a bare interpreter: stdlib only


def test_loader_refuses_tampered_and_unproved_builds(tmp_path):
    spec = load_spec(write_spec(tmp_path))
    build, _ = write_build(fake_result(spec), tmp_path / "out", run_info={})
    policy_py = build / "policy.py"
    text = policy_py.read_text()
    assert text.count("return public_decision(decide(**arguments(args)), rule_ids)") == 1
    policy_py.write_text(text.replace("return public_decision(decide(**arguments(args)), rule_ids)",
                                      "return PolicyDecision(True, (), ())"))
    with pytest.raises(PolicyLoadError) as e:
        load_policy(build)
    assert e.value.code == "load.tampered"
    with pytest.raises(PolicyLoadError):
        load_policy(build, accept_unproved=True)  # a hash mismatch is never accepted
    unproved, _ = write_build(fake_result(spec, passed=False), tmp_path / "out2", run_info={})
    with pytest.raises(PolicyLoadError) as e:
        load_policy(unproved)
    assert e.value.code == "load.unproved"
    assert not load_policy(unproved, accept_unproved=True).trusted
    with pytest.raises(PolicyLoadError) as e:
        load_policy(tmp_path / "nowhere")
    assert e.value.code == "load.missing"


def test_interrupted_write_leaves_nothing_half_written(tmp_path, monkeypatch):
    spec = load_spec(write_spec(tmp_path))
    out = tmp_path / "out"
    first, _ = write_build(fake_result(spec), out, run_info={"n": 1})
    before = {p.name: p.read_bytes() for p in first.iterdir() if p.is_file()}

    write_bytes = Path.write_bytes

    def interrupted(self, data):
        if "spec" in self.parts[-2:]:  # halfway: policy.py is written, the copy of the spec is not
            raise KeyboardInterrupt
        return write_bytes(self, data)

    monkeypatch.setattr(Path, "write_bytes", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_build(fake_result(spec), out, run_info={"n": 2})
    assert sorted(p.name for p in out.iterdir()) == ["mini"], "no temporary directory is left behind"
    assert {p.name: p.read_bytes() for p in first.iterdir() if p.is_file()} == before, "the old build is intact"


def test_certificate_is_deterministic(tmp_path):
    spec = load_spec(write_spec(tmp_path))
    _, a = write_build(fake_result(spec), tmp_path / "a", run_info={}, synthesized_at="2026-01-01T00:00:00+00:00")
    _, b = write_build(fake_result(spec), tmp_path / "b", run_info={"other": 1}, synthesized_at="2026-01-01T00:00:00+00:00")
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_freeze_checks_every_generated_part_before_writing(tmp_path):
    from veriguard.contracts.errors import GeneratedCodeError
    from veriguard.contracts.generated import check_composed

    spec = load_spec(write_spec(tmp_path))
    result = fake_result(spec)
    marker = tmp_path / "PWNED"
    result.runnable_source += f"\nimport os\nos.system('touch {marker}')\n"
    with pytest.raises(GeneratedCodeError) as e:
        write_build(result, tmp_path / "out", run_info={})
    assert e.value.code == "internal.generated_code" and "Import" in e.value.message
    assert not marker.exists() and not (tmp_path / "out").exists(), "checked before anything is written"
    for whole, parts in (('x = 1\ny = """\n', ['x = 1\n', 'y = """\n']), ("x = 1\n", ["x = 2\n"])):
        with pytest.raises(GeneratedCodeError):
            check_composed(whole, parts)
    check_composed("x = 1\n\ny = 2\n", ["x = 1\n", "y = 2\n"])


def test_the_entry_code_ships_verbatim_from_a_real_module(tmp_path):
    from veriguard.contracts import frozen_entry

    spec = load_spec(write_spec(tmp_path))
    frozen = fake_result(spec).frozen_source
    entry = Path(frozen_entry.__file__).read_text(encoding="utf-8")
    body = entry[entry.index('"""', 3) + 3:].lstrip("\n")  # all but the module docstring
    assert body in frozen and frozen.index(body) > frozen.index("def vg_spec_decision(")
    assert {n.module for n in ast.walk(ast.parse(entry)) if isinstance(n, ast.ImportFrom)} <= {"typing", "dataclasses"}


def test_the_entry_points_fail_closed_on_a_malformed_or_contested_decision():
    from types import SimpleNamespace as Answer

    from veriguard.contracts.frozen_entry import PolicyDecision, PolicyMismatch, entry_points

    def build(answer, contract=(True, [], [])):
        return entry_points(lambda args: dict(args), lambda **flat: [], lambda **flat: answer,
                            lambda **flat: contract, ("adult", "access"), ArgumentError)

    evaluate, checked = build(Answer(allowed=False, violations=[1], denied=[["db", "x"]]),
                              contract=(False, ["access"], [("db", "x")]))
    assert evaluate({}) == checked({}) == PolicyDecision(False, ("access",), (("db", "x"),))
    for bad in (Answer(allowed=1, violations=[], denied=[]), Answer(allowed=None, violations=[], denied=[]),
                Answer(allowed=False, violations=[2], denied=[]), Answer(allowed=False, violations=[-1], denied=[]),
                Answer(allowed=False, violations=[True], denied=[]), Answer(allowed=False, violations=["0"], denied=[])):
        for entry in build(bad):
            with pytest.raises(PolicyMismatch):
                entry({})
    evaluate, checked = build(Answer(allowed=True, violations=[], denied=[]), contract=(False, ["adult"], []))
    assert evaluate({}).allowed
    with pytest.raises(PolicyMismatch, match="contract says allowed=False"):
        checked({})
    assumed = entry_points(lambda args: dict(args), lambda **flat: ["age_known"], lambda **flat: 1 / 0,
                           lambda **flat: (True, [], []), (), ArgumentError)
    for entry in assumed:
        with pytest.raises(ArgumentError, match="outside the domain"):
            entry({})


BROKEN_ENTRIES = {
    "evaluate allows everything": ("return public_decision(decide(**arguments(args)), rule_ids)",
                                   "return PolicyDecision(True, (), ())"),
    "evaluate_checked answers its own decision": ("        return decision\n\n    return evaluate, evaluate_checked",
                                                  "        return PolicyDecision(True, (), ())\n\n"
                                                  "    return evaluate, evaluate_checked"),
}


@pytest.fixture(scope="module")
def mini(tmp_path_factory):
    spec = load_spec(write_spec(tmp_path_factory.mktemp("m")))
    result = fake_result(spec)
    return spec, result.runnable_source, result.frozen_source


def test_the_tests_run_in_a_child_on_the_module_that_ships(mini, tmp_path, monkeypatch):
    from veriguard.verify.testing import run_tests

    spec, runnable, frozen = mini
    monkeypatch.setenv("VERIGUARD_CACHE", str(tmp_path / "cache"))
    report = run_tests(spec, spec.examples, runnable, frozen, hypothesis_examples=30)
    # Hypothesis's Unicode table is kept in veriguard's cache folder, not in the child's temporary working folder
    assert list((tmp_path / "cache" / "hypothesis" / "unicode_data").glob("*/charmap.json.gz"))
    assert not report.error and [e["verdict"] for e in report.examples] == ["PASSED"]
    assert report.hypothesis["verdict"] == "PASSED" and report.hypothesis["examples_run"] > 0
    assert report.seconds["hypothesis"] > 0 and set(report.seconds) >= {"load", "examples", "mutants", "total"}
    other = run_tests(spec, spec.examples, runnable, frozen + "\n", hypothesis_examples=30)
    assert other.error == "the frozen policy does not load: ValueError: the module to test differs from the frozen " \
        "module of this policy" and other.error_verdict is Verdict.ERROR


def test_without_a_home_folder_the_tests_still_run(mini, monkeypatch):
    from veriguard.verify import testing

    def no_home():
        raise RuntimeError("Could not determine home directory.")

    spec, runnable, frozen = mini
    monkeypatch.setattr(testing, "cache_dir", no_home)
    report = testing.run_tests(spec, spec.examples, runnable, frozen, hypothesis_examples=5)
    assert not report.error and report.hypothesis["verdict"] == "PASSED"


@pytest.mark.parametrize("bug", sorted(BROKEN_ENTRIES))
def test_the_tests_run_the_entry_code_that_ships(mini, bug, monkeypatch):
    """A bug in the frozen module's own entry code (not in the policy) fails the gates."""
    from veriguard.verify import testrun

    spec, runnable, frozen = mini
    old, new = BROKEN_ENTRIES[bug]
    assert frozen.count(old) == 1
    broken = frozen.replace(old, new)
    monkeypatch.setattr(testrun, "frozen_module", lambda spec, runnable: broken)  # as if frozen_entry.py had the bug
    out = testrun.run(testrun.TestRequest(spec, spec.examples, runnable, broken, (), 30))
    assert out["hypothesis"]["verdict"] == "REFUTED", out["hypothesis"]
    expected = "evaluate_checked answers" if "evaluate_checked" in bug else "but the rules say allowed=False"
    assert expected in out["hypothesis"]["failure"]["problem"]


def test_a_mutant_is_frozen_and_checked_before_it_runs(mini, tmp_path):
    from veriguard.verify import testrun

    spec, runnable, frozen = mini
    marker = tmp_path / "PWNED"
    req = testrun.TestRequest(spec, spec.examples, runnable, frozen, (), 0)
    checker = compile_checker(spec.contract)
    bad = runnable + f"\nimport os\nos.system('touch {marker}')\n"
    assert testrun.run_mutant(bad, req, checker, []) == "does not freeze or load (GeneratedCodeError)"
    assert runnable.count("age >= 18") == 1
    assert testrun.run_mutant(runnable.replace("age >= 18", "age > 18"), req, checker,
                              [{"role": "admin", "age": 18, "items": []}]) == "property test"
    assert testrun.run_mutant(runnable, req, checker, [{"role": "admin", "age": 18, "items": []}]) is None
    assert not marker.exists()


def test_freeze_writes_only_the_module_the_gates_tested(tmp_path):
    from veriguard.contracts.errors import GeneratedCodeError

    spec = load_spec(write_spec(tmp_path))
    result = fake_result(spec)
    assert result.frozen_source.count("return PolicyDecision(allowed,") == 1
    result.frozen_source = result.frozen_source.replace("return PolicyDecision(allowed,", "return PolicyDecision(True,")
    with pytest.raises(GeneratedCodeError, match="differs from the one the gates tested"):
        write_build(result, tmp_path / "out", run_info={})
    assert not (tmp_path / "out" / "mini").exists()


def test_a_decision_that_reports_a_rule_twice_fails_the_gates(mini, monkeypatch):
    """The examples and the property tests compared a decision's rules as sets, so a policy that named a rule twice
    passed synth (the monitor refuses such a decision at run time: load.PolicyMismatch)."""
    from veriguard.verify import testrun

    spec, runnable, frozen = mini
    old = "tuple(rule_ids[k] for k in numbers)"
    assert frozen.count(old) == 1
    broken = frozen.replace(old, f"{old} * 2")
    monkeypatch.setattr(testrun, "frozen_module", lambda spec, runnable: broken)
    minor = dataclasses.replace(spec.examples[0], name="minor", args={**spec.examples[0].args, "age": 17},
                                allowed=False, violations=("adult",))
    out = testrun.run(testrun.TestRequest(spec, (*spec.examples, minor), runnable, broken, (), 30))
    assert [(e["name"], e["verdict"], "more than once" in e["error"]) for e in out["examples"]] == [
        ("adult admin", "PASSED", False), ("minor", "REFUTED", True)]
    assert out["hypothesis"]["verdict"] == "REFUTED" and "more than once" in out["hypothesis"]["failure"]["problem"]
