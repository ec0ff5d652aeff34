"""For every shipped spec, the runtime checker and z3 give the same truth value to every rule,
assumption and property on random inputs: two compilers of one AST held to agreement."""
import pytest
from hypothesis import HealthCheck, given, settings

from veriguard.contracts.runtime_support import flatten_arguments
from veriguard.contracts.schema import argument_schema
from veriguard.contracts.strategies import coverage_inputs, from_contract
from veriguard.contracts.to_python import compile_checker
from veriguard.contracts.to_z3 import Z3Encoding
from veriguard.synth.specfile import load_spec
from tests.conftest import SHIPPED, examples

MAX_LIST = 3


class Terms:
    """Each clause of the spec compiled once, to the runtime checker and to z3."""

    def __init__(self, spec):
        self.spec = spec
        self.schema = argument_schema(spec.signature)
        self.checker = compile_checker(spec.contract)
        self.enc = Z3Encoding(spec.contract, bound=MAX_LIST)
        c = spec.contract
        self.assumes = {d.id: self.enc.expr(d.body) for d in c.assumes}
        self.rules = {d.id: self.enc.holds(d.id) for d in c.rules}
        self.allowed = self.enc.allowed()
        self.properties = {d.id: self.enc.expr(d.body) for d in c.properties}

    def agree(self, args):
        flat = flatten_arguments(self.schema, args)
        ev = self.enc.evaluate
        assert set(self.checker.assumes(**flat)) == {k for k, t in self.assumes.items() if not ev(t, flat)}
        allowed, violations, denied = self.checker.spec_decision(**flat)
        assert set(violations) == {k for k, t in self.rules.items() if not ev(t, flat)}
        assert allowed == ev(self.allowed, flat)
        failed = self.checker.failed_properties(**flat, vg_allowed=allowed, vg_violations=violations, vg_denied=denied)
        assert set(failed) == {k for k, t in self.properties.items() if not ev(t, flat)}


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_checker_and_z3_agree(path):
    spec = load_spec(path)
    terms = Terms(spec)

    @settings(max_examples=examples(150), deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(from_contract(spec.contract, max_list=MAX_LIST))
    def agree(args):
        terms.agree(args)

    agree()


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_checker_and_z3_agree_on_the_coverage_corpus(path):
    spec = load_spec(path)
    terms = Terms(spec)
    for args in coverage_inputs(spec.contract)[::11]:
        terms.agree(args)
