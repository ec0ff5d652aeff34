"""The deterministic gates through the proof cache (verify.proof_cache.through_cache): an unchanged spec
never re-runs z3, the tests (examples, Hypothesis, mutants) or the classifier's training; any change of
an input, a damaged entry or an in-memory cache (`--no-cache`) computes them again; failed results are
stored as failed, results of a crash, a time limit or an undecided z3 query are not stored."""
import json

import pytest

from veriguard.synth import classifier_build, pipeline
from veriguard.synth.compile import compile_policy
from veriguard.synth.freeze import write_build
from veriguard.synth.specfile import load_spec
from veriguard.verify import proof_cache
from veriguard.verify.proof_cache import ProofCache
from veriguard.verify.testing import TestReport as Report
from veriguard.verify.verdicts import Verdict
from tests.conftest import SPECS, write_spec
from tests.unit.test_proof_cache import FAST, Recorder


class Counted:
    """Wraps pipeline's z3 check and test runner, counting the calls that really compute."""

    def __init__(self, monkeypatch):
        self.z3 = self.tests = self.mutants = 0
        real_z3, real_tests, real_mutants = pipeline.check_contract, pipeline.run_tests, pipeline.mutants

        def z3(*a, **kw):
            self.z3 += 1
            return real_z3(*a, **kw)

        def tests(*a, **kw):
            self.tests += 1
            return real_tests(*a, **kw)

        def made(*a, **kw):
            self.mutants += 1
            return real_mutants(*a, **kw)

        monkeypatch.setattr(pipeline, "mutants", made)
        monkeypatch.setattr(pipeline, "check_contract", z3)
        monkeypatch.setattr(pipeline, "run_tests", tests)


def synth(spec_path, cache, tmp_path, tag, mutant_limit=4):
    spec = load_spec(spec_path)
    return pipeline.synthesize(spec, Recorder(), compile_policy(spec).source, workdir=tmp_path / tag,
                               mutant_limit=mutant_limit, cache=cache)


@pytest.fixture
def spec_path(tmp_path):
    folder = tmp_path / "spec"
    folder.mkdir()
    return write_spec(folder, FAST)


def test_an_unchanged_spec_reuses_every_gate_and_says_so(tmp_path, spec_path, monkeypatch):
    counted, cache = Counted(monkeypatch), ProofCache(tmp_path / "c")
    first = synth(spec_path, cache, tmp_path, "w1")
    assert (counted.z3, counted.tests, counted.mutants) == (1, 1, 1)
    assert not any("(cached)" in g.summary for g in first.gates)
    again = synth(spec_path, cache, tmp_path, "w2")
    assert (counted.z3, counted.tests, counted.mutants) == (1, 1, 1), "an unchanged spec recomputed a gate"
    assert all(g.summary.startswith(f"{g.verdict.value} (cached): ") for g in again.gates), [g.summary for g in again.gates]
    assert [g.verdict for g in again.gates] == [g.verdict for g in first.gates]
    assert again.z3.findings == first.z3.findings and again.tests.hypothesis == first.tests.hypothesis
    assert again.mutation["score"] == first.mutation["score"]
    build, _cert = write_build(again, tmp_path / "out", run_info={})
    gates = {g["name"]: g for g in json.loads((build / "certificate.json").read_text())["gates"]}
    assert gates["contract (z3)"]["cache"]["hit"] == "z3" and gates["examples"]["cache"]["hit"] == "tests"
    assert "PASSED (cached): " in (build / "report.md").read_text()


def _edit_spec(path):
    path.write_text(path.read_text().replace("hypothesis_examples = 20", "hypothesis_examples = 21"))


def _edit_table(path):
    (path.parent / "ok.json").write_text('{"admin": {"db": ["x", "y"]}, "user": {"db": ["y"]}}')


@pytest.mark.parametrize("change", ["spec", "table", "code", "tools"])
def test_any_change_of_an_input_recomputes(tmp_path, spec_path, monkeypatch, change):
    counted, cache = Counted(monkeypatch), ProofCache(tmp_path / "c")
    synth(spec_path, cache, tmp_path, "w1")
    if change == "spec":
        _edit_spec(spec_path)
    elif change == "table":
        _edit_table(spec_path)
    elif change == "code":
        monkeypatch.setattr(proof_cache, "code_identity", lambda: "0" * 64)
    else:
        monkeypatch.setattr(proof_cache, "gate_tools", lambda: {"python": "3.12.0", "z3-solver": "0.0"})
    again = synth(spec_path, cache, tmp_path, "w2")
    assert (counted.z3, counted.tests) == (2, 2) and (change in ("spec", "table") or counted.mutants == 2)
    assert not any("(cached)" in g.summary for g in again.gates if g.name != "proof (Nagini)")


def test_a_damaged_entry_is_ignored_and_the_gate_runs_again(tmp_path, spec_path, monkeypatch):
    counted, cache = Counted(monkeypatch), ProofCache(tmp_path / "c")
    synth(spec_path, cache, tmp_path, "w1")
    damaged = 0
    for path in cache.directory.rglob("*.json"):
        entry = json.loads(path.read_text())
        if entry["kind"] in ("z3", "tests"):
            entry["reply"]["value"]["seconds"] = 0.5  # content changed, self-hash kept
            path.write_text(json.dumps(entry))
            damaged += 1
    assert damaged == 2
    synth(spec_path, cache, tmp_path, "w2")
    assert (counted.z3, counted.tests) == (2, 2)
    assert sum("sha256 does not match" in p for p in cache.problems) == 2


def test_an_entry_that_decodes_to_nonsense_is_ignored(tmp_path, spec_path, monkeypatch):
    cache = ProofCache(tmp_path / "c")
    key = proof_cache.gate_key("z3", {"x": 1})
    cache.put(key, "z3", {"status": "computed", "value": {"findings": "nonsense"}})
    value, hit = proof_cache.through_cache(cache, "z3", {"x": 1}, lambda: "fresh", encode=str,
                                           decode=pipeline._z3_from_json)
    assert (value, hit) == ("fresh", None) and "cannot be read back" in cache.problems[0]


def test_no_cache_recomputes_every_run(tmp_path, spec_path, monkeypatch):
    counted = Counted(monkeypatch)
    synth(spec_path, ProofCache(), tmp_path, "w1")  # what `synth --no-cache` gives each run
    synth(spec_path, ProofCache(), tmp_path, "w2")
    assert (counted.z3, counted.tests, counted.mutants) == (2, 2, 2)
    assert not list((tmp_path / "c").glob("**/*.json"))


def test_failed_tests_are_stored_as_failed(tmp_path, monkeypatch):
    folder = tmp_path / "spec"
    folder.mkdir()
    wrong = FAST.replace("allowed = true\nviolations = []", 'allowed = false\nviolations = ["adult"]')
    path = write_spec(folder, wrong)
    counted, cache = Counted(monkeypatch), ProofCache(tmp_path / "c")
    first = synth(path, cache, tmp_path, "w1", mutant_limit=0)
    examples = next(g for g in first.gates if g.name == "examples")
    assert examples.verdict is Verdict.REFUTED
    again = synth(path, cache, tmp_path, "w2", mutant_limit=0)
    cached = next(g for g in again.gates if g.name == "examples")
    assert counted.tests == 1 and cached.verdict is Verdict.REFUTED and cached.summary.startswith("REFUTED (cached): ")


def test_tests_that_could_not_run_and_undecided_z3_are_not_stored(tmp_path, spec_path, monkeypatch):
    calls = []

    def crashed(*_a, **_kw):
        calls.append(1)
        return Report([], {}, [], error="the tests did not finish within 300 s", error_verdict=Verdict.TIMEOUT)

    monkeypatch.setattr(pipeline, "run_tests", crashed)
    real = pipeline.check_contract

    def undecided(*a, **kw):
        report = real(*a, **kw)
        calls.append(2)
        return type(report)(tuple(f if f.check != "property" else type(f)(f.check, f.subject, Verdict.UNKNOWN, "gave up")
                                  for f in report.findings), report.seconds, report.bound)

    monkeypatch.setattr(pipeline, "check_contract", undecided)
    cache = ProofCache(tmp_path / "c")
    synth(spec_path, cache, tmp_path, "w1")
    synth(spec_path, cache, tmp_path, "w2")
    assert calls.count(1) == 2 and calls.count(2) == 2
    assert not [p for p in cache.directory.rglob("*.json") if json.loads(p.read_text())["kind"] in ("z3", "tests")]


class FakeEmbedder:
    def identity(self):
        return {"model": "fake", "model_sha256": "1" * 64}


@pytest.fixture
def classifier_spec(monkeypatch):
    from veriguard.enforce import categories, embedder
    trained = []
    monkeypatch.setattr(embedder, "shared_embedder", lambda *_: FakeEmbedder())
    monkeypatch.setattr(categories, "trained_on", lambda bank, emb: trained.append(bank) or "model")
    monkeypatch.setattr(categories, "to_frozen", lambda model, enc, digest: {"model": model, "bank_sha256": digest})
    monkeypatch.setattr(classifier_build, "_TRAINED", {})
    spec = load_spec(SPECS / "mind2web_sc.toml")
    name, cfg = next((n, c) for n, c in spec.extraction.items() if isinstance(c, dict) and "bank" in c)
    return spec, name, cfg, trained


def test_the_classifier_is_trained_once_per_bank_encoder_and_code(tmp_path, classifier_spec, monkeypatch):
    spec, name, cfg, trained = classifier_spec
    cache = ProofCache(tmp_path / "c")
    first = classifier_build.freeze_classifier(spec, name, cfg, cache)
    monkeypatch.setattr(classifier_build, "_TRAINED", {})  # a new process
    assert classifier_build.freeze_classifier(spec, name, cfg, cache) == first and len(trained) == 1
    monkeypatch.setattr(classifier_build, "_TRAINED", {})
    monkeypatch.setattr(proof_cache, "code_identity", lambda: "0" * 64)  # the training code changed
    classifier_build.freeze_classifier(spec, name, cfg, cache)
    assert len(trained) == 2


def test_the_classifier_without_a_disk_cache_is_trained_again_in_a_new_process(tmp_path, classifier_spec, monkeypatch):
    spec, name, cfg, trained = classifier_spec
    classifier_build.freeze_classifier(spec, name, cfg, ProofCache())
    monkeypatch.setattr(classifier_build, "_TRAINED", {})
    classifier_build.freeze_classifier(spec, name, cfg, ProofCache())
    assert len(trained) == 2


def test_what_each_lemma_reveals_is_computed_once_per_spec(tmp_path, monkeypatch):
    """synth keeps z3's answer to "which rules does this property need" (the lemmas' reveals): an unchanged spec
    compiles to the same source without z3; an edited spec, a damaged entry or an entry naming other properties
    computes it again."""
    from veriguard.synth import compile as compile_mod
    calls = []
    real = compile_mod.property_reveals.__wrapped__
    monkeypatch.setattr(pipeline, "property_reveals", lambda c: calls.append(c) or real(c))
    folder = tmp_path / "spec"
    folder.mkdir()
    spec_path = write_spec(folder, FAST)
    cache = ProofCache(tmp_path / "c")
    spec = load_spec(spec_path)
    first = pipeline.cached_reveals(spec, cache)
    assert first == real(spec.contract) and len(calls) == 1
    assert pipeline.cached_reveals(load_spec(spec_path), cache) == first and len(calls) == 1
    assert (compile_policy(spec, reveals=first).source == compile_policy(spec).source)

    [entry_path] = [p for p in cache.directory.rglob("*.json") if json.loads(p.read_text())["kind"] == "reveals"]
    entry = json.loads(entry_path.read_text())
    entry["reply"]["value"] = {"some_other_property": None}
    entry.pop("sha256")
    entry["sha256"] = proof_cache._sha(proof_cache._canonical(entry))
    entry_path.write_text(json.dumps(entry))
    assert pipeline.cached_reveals(load_spec(spec_path), cache) == first and len(calls) == 2
    assert "cannot be read back" in cache.problems[-1]

    text = entry_path.read_text()  # the good entry stored again; now damaged (its self-hash no longer matches)
    assert '"adult"' in text
    entry_path.write_text(text.replace('"adult"', '"some_rule"'))
    assert pipeline.cached_reveals(load_spec(spec_path), cache) == first and len(calls) == 3

    _edit_spec(spec_path)
    pipeline.cached_reveals(load_spec(spec_path), cache)
    assert len(calls) == 4
