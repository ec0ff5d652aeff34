import ast

from veriguard.contracts.types import INT, STR, EnumT, ListT, TupleT
from veriguard.verify import counterexample as cx
from veriguard.verify.mutation import mutants
from veriguard.verify.proof import MODEL_NOT_REPLAYED, clause_of, from_worker
from veriguard.verify.runnable import strip_contracts
from veriguard.verify.verdicts import Verdict

SOURCE = '''from typing import List
from nagini_contracts.contracts import *


@Pure
def rule_adult(age: int) -> bool:
    """Adults only."""
    Decreases(None)
    return age >= 18


def decide(age: int, tags: List[str]) -> bool:
    Requires(Acc(list_pred(tags), 1/2))
    Ensures(Result() == rule_adult(age))  # rule adult
    out: List[str] = []
    if not rule_adult(age):
        out.append("adult")
    return len(out) == 0 and not (age < 0)


def property_x(age: int) -> bool:
    Ensures(Implies(age < 18, not Result()))
    return decide(age, [])
'''


def test_strip_contracts_leaves_plain_python():
    out = strip_contracts(SOURCE, drop_functions=("property_x",))
    tree = ast.parse(out)
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert not names & {"Requires", "Ensures", "Decreases", "Pure", "Result", "Acc"}
    assert "property_x" not in out and "nagini" not in out
    ns = {}
    exec(out, ns)
    assert ns["decide"](18, []) and not ns["decide"](17, [])


def test_mutants_never_touch_contracts_or_docstrings():
    ms = mutants(SOURCE, limit=50, skip_functions=("property_x",))
    assert {m.operator for m in ms} >= {"swap-comparison", "drop-not", "drop-append", "change-int", "change-string"}
    for m in ms:
        assert m.source != SOURCE
        written = ast.unparse(ast.parse(m.source))  # the statements a mutant leaves alone keep their own layout
        contract_lines = [l.strip() for l in written.splitlines() if l.strip().startswith(("Ensures", "Requires"))]
        assert contract_lines == ["Requires(Acc(list_pred(tags), 1 / 2))", "Ensures(Result() == rule_adult(age))",
                                  "Ensures(Implies(age < 18, not Result()))"]
        assert "Adults only." in m.source
        assert "def property_x" in m.source and "return decide(age, [])" in m.source


def test_a_mutant_writes_again_only_the_statement_it_changes():
    tree = ast.parse(SOURCE)
    for m in mutants(SOURCE, limit=50, skip_functions=("property_x",)):
        new = ast.parse(m.source)
        changed = [i for i, (a, b) in enumerate(zip(tree.body, new.body)) if ast.dump(a) != ast.dump(b)]
        assert len(new.body) == len(tree.body) and len(changed) == 1, m
        kept = [ast.get_source_segment(SOURCE, s, padded=True) for i, s in enumerate(tree.body) if i != changed[0]]
        assert all(text in m.source for text in kept), m  # byte for byte, comments and layout included
    # statements sharing a line: the module is written again whole, and it is still one mutation of it
    shared = "def f(a: int) -> bool:\n    return a < 3\nx = 1; y = 2 < 3\n"
    made = mutants(shared, limit=10)
    before = [ast.dump(s) for s in ast.parse(shared).body]
    for m in made:
        after = [ast.dump(s) for s in ast.parse(m.source).body]
        assert len(after) == 3 and sum(a != b for a, b in zip(before, after)) == 1, m.source
    assert {m.description for m in made} >= {"Lt -> LtE"} and any("y = 2 <= 3" in m.source for m in made)


def test_mutants_are_deterministic():
    assert [m.source for m in mutants(SOURCE, seed=3)] == [m.source for m in mutants(SOURCE, seed=3)]


def test_counterexample_decoding_of_lists_and_strings():
    raw = {"inputs": {"role": "'nursing'", "age": 18, "accessed": "?0", "flag": "?"},
           "heap": {"?0": {"len(?0)": 3, "?0[2]": "( len(None) -> 2, None[0] -> 'diagnosis', None[1] -> 'icd9code' )"}},
           "old_heap": {"?0": {"len(?0)": 0}}}
    params = [("role", EnumT("Role", ("nursing",))), ("age", INT), ("accessed", ListT(TupleT((STR, STR)))),
              ("flag", INT)]
    values = cx.decode(raw, params)
    assert values["role"] == "nursing" and values["age"] == 18 and values["flag"] is None
    assert values["accessed"] == {"length": 3, "items": {2: ("diagnosis", "icd9code")}}
    concrete = cx.concretize(values, params)
    assert concrete == {"role": "nursing", "age": 18, "accessed": [("diagnosis", "icd9code")], "flag": 0}
    assert "accessed[2]=('diagnosis', 'icd9code') (length 3)" in cx.render(values)


def test_counterexample_holes_are_filled_from_the_pools():
    params = [("accessed", ListT(TupleT((STR, STR))))]
    values = {"accessed": {"length": 5, "items": {4: ("diagnosis", None)}}}
    cands = cx.candidates(values, params, {"str": ["icd9code", "age"], "int": []})
    assert cands[0] == {"accessed": [("diagnosis", "x")]}
    assert {"accessed": [("diagnosis", "icd9code")]} in cands


def test_worker_replies_become_verdicts():
    ok = from_worker({"status": "proved", "seconds": 1.0})
    assert ok.verdict is Verdict.PROVED and not ok.diagnostics
    failed = from_worker({"status": "failed", "errors": [{"code": "postcondition.violated:assertion.false",
                          "message": "m", "line": 4, "source": "Ensures(x)  # rule adult",
                          "counterexample": {"inputs": {"age": 17}}}]}, params=[("age", INT)])
    # a model nobody replayed is Nagini's claim, not a refutation
    assert failed.verdict is Verdict.UNKNOWN and failed.detail == MODEL_NOT_REPLAYED
    assert failed.diagnostics[0].clause == "rule adult" and failed.diagnostics[0].confirmed is None
    assert failed.diagnostics[0].counterexample == {"age": 17}
    no_model = from_worker({"status": "failed", "errors": [{"code": "c", "message": "m"}]})
    assert no_model.verdict is Verdict.UNKNOWN and no_model.detail != MODEL_NOT_REPLAYED
    assert from_worker({"status": "timeout"}).verdict is Verdict.TIMEOUT
    assert from_worker({"status": "killed"}).verdict is Verdict.TIMEOUT
    assert from_worker({"status": "translation_error", "errors": [{"code": "translation.unsupported"}]}).verdict \
        is Verdict.ERROR
    crash = from_worker({"status": "crash", "message": "died"})
    assert crash.verdict is Verdict.ERROR and crash.diagnostics[0].code == "verify.backend.crash"
    assert from_worker({"status": "something new"}).verdict is Verdict.ERROR


def test_a_crash_keeps_the_tail_of_what_the_worker_wrote():
    stderr = [f"noise {i}" for i in range(30)] + ["Exception in thread main java.lang.StackOverflowError",
                                                  "\tat viper.silicon.Foo(Foo.scala:12)"]
    died = from_worker({"status": "crash", "message": "the verifier process died", "stderr": stderr}, file="p.py")
    text = died.diagnostics[0].message
    assert died.verdict is Verdict.ERROR and died.detail == "verifier crashed"
    assert text.startswith("the verifier process died") and "StackOverflowError" in text and "Foo.scala:12" in text
    assert "noise 0" not in text and len(text.splitlines()) <= 14
    trace = "Traceback (most recent call last):\n  File \"x.py\", line 3\nKeyError: 'sil_programs'"
    caught = from_worker({"status": "crash", "errors": [{"code": "worker.crash", "message": "KeyError: 'x'",
                                                         "trace": trace}]})
    assert "KeyError: 'x'" in caught.diagnostics[0].message and "KeyError: 'sil_programs'" in caught.diagnostics[0].message
    assert "stderr" not in caught.to_dict()  # the tail lives in the diagnostic, once


def test_clause_names_come_from_the_generated_comment():
    assert clause_of("Ensures(x)  # property p") == "property p"
    assert clause_of("Ensures(x)") == "Ensures(x)"
