"""Spec limits found by red-team G (2026-11-29): each was accepted by the loader and failed later.

* A contract of 1,500 declarations passed the loader; synth spent minutes in z3's contract checks and then ended
  in a RecursionError while generating the policy (exit 70, an internal error, for an over-large spec).
* An [extraction] entry for a name that is not an argument passed synth; the monitor could never use it (a typo
  for an argument left that argument without an extractor: `Monitor.from_build` raised ValueError).
"""
from veriguard.contracts.errors import SpecError
from veriguard.synth.specfile import MAX_DECLARATIONS, load_spec
from tests.conftest import MINIMAL, write_spec

import pytest

RULE = 'rule adult "Users must be adults": age >= 18'


def with_rules(n: int) -> str:
    return MINIMAL.replace(RULE, RULE + "".join(f'\nrule r{i} "r{i}": age >= {i}' for i in range(n)))


def test_a_contract_of_more_declarations_than_supported_is_refused_where_the_first_extra_one_is(tmp_path):
    body = with_rules(MAX_DECLARATIONS)  # with `adult`, `access` and the property: 3 over the limit
    with pytest.raises(SpecError) as e:
        load_spec(write_spec(tmp_path, body))
    assert e.value.code == "spec.too_large" and f"at most {MAX_DECLARATIONS}" in e.value.message
    lines = body.lstrip("\n").splitlines()
    assert lines[e.value.pos.line - 1].startswith(f"rule r{MAX_DECLARATIONS - 1} ")  # after adult, r0, r1, ...


def test_a_contract_at_the_limit_loads(tmp_path):
    spec = load_spec(write_spec(tmp_path, with_rules(MAX_DECLARATIONS - 3)))
    assert len(spec.contract.rules) + len(spec.contract.properties) == MAX_DECLARATIONS


@pytest.mark.parametrize("name, hint", [("agee", "did you mean 'age'?"), ("nobody", "arguments: ")])
def test_an_extractor_for_no_argument_is_refused(tmp_path, name, hint):
    body = MINIMAL + f'\n[extraction]\n{name} = {{ from = "field", path = "user.age" }}\n'
    with pytest.raises(SpecError) as e:
        load_spec(write_spec(tmp_path, body))
    assert e.value.code == "spec.extraction" and f"no argument {name!r}" in e.value.message and hint in e.value.fix
    assert e.value.pos.line == body.lstrip("\n").splitlines().index(f'{name} = {{ from = "field", path = "user.age" }}') + 1


def test_an_extractor_for_an_argument_loads(tmp_path):
    spec = load_spec(write_spec(tmp_path, MINIMAL + '\n[extraction]\nage = { from = "field", path = "user.age" }\n'))
    assert set(spec.extraction) == {"age"}
