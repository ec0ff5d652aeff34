"""What a selected proof sends to Nagini: the functions the selection reaches, the others blanked line for line."""
import ast

from veriguard.verify.nagini_worker import selection_slice

SOURCE = '''from nagini_contracts.contracts import *
from dataclasses import dataclass


@Pure
def adult_age() -> int:
    return 18


@Opaque
@Pure
def rule(age: int) -> bool:
    return age >= adult_age()


@dataclass(frozen=True)
class Decision:
    allowed: bool


def decide(age: int) -> Decision:
    Ensures(ResultT(Decision).allowed == rule(age))
    return Decision(rule(age))


def lemma_adult(age: int) -> Decision:
    Ensures(Implies(age >= 18, ResultT(Decision).allowed))
    d = decide(age)
    Assert(Reveal(rule(age)) == (age >= 18))
    return d


def lemma_child(age: int) -> Decision:
    Ensures(Implies(age < 18, not ResultT(Decision).allowed))
    d = decide(age)
    Assert(Reveal(rule(age)) == (age >= 18))
    return d


def unrelated(x: int) -> int:
    Ensures(Result() > x)
    return x + 1
'''


def top_level(source: str) -> set[str]:
    return {n.name for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)}


def test_only_what_the_selection_reaches_is_kept_on_the_same_lines():
    out = selection_slice(SOURCE, frozenset({"lemma_adult"}))
    assert out is not None
    assert top_level(out) == {"adult_age", "rule", "decide", "lemma_adult"}  # reached through calls, transitively
    before, after = SOURCE.splitlines(), out.splitlines()
    assert len(after) == len(before)
    for old, new in zip(before, after):
        assert new in (old, "")
    assert "@Opaque" in out and out.count("@Pure") == 2  # the decorators of kept functions stay
    kept_class = [n for n in ast.parse(out).body if isinstance(n, ast.ClassDef)]
    assert [c.name for c in kept_class] == ["Decision"]


def test_a_dropped_function_takes_its_decorators_with_it():
    out = selection_slice(SOURCE, frozenset({"unrelated"}))
    assert out is not None and top_level(out) == {"unrelated"}
    assert "@Pure" not in out and "@Opaque" not in out


def test_a_function_named_at_module_level_is_kept():
    source = SOURCE + "\nLIMIT = adult_age\n"
    out = selection_slice(source, frozenset({"unrelated"}))
    assert out is not None and top_level(out) == {"unrelated", "adult_age"}


def test_nothing_to_leave_out_or_nothing_to_reason_about_sends_the_file_as_it_is():
    assert selection_slice(SOURCE, frozenset()) is None                      # no selection: everything is verified
    assert selection_slice(SOURCE, frozenset({"no_such_function"})) is None  # the worker reports the missing name
    assert selection_slice(SOURCE, frozenset({"Decision"})) is None           # not a top-level function
    assert selection_slice(SOURCE + "\ndef broken(:\n", frozenset({"unrelated"})) is None
    reach_all = frozenset({"lemma_adult", "lemma_child", "unrelated"})
    assert selection_slice(SOURCE, reach_all) is None
