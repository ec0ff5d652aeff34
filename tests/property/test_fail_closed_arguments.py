"""Argument validation on arbitrary JSON-like input: it returns well-typed parameters or raises
ArgumentError, and nothing else, for every shipped spec."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contracts.runtime_support import ArgumentError, flatten_arguments
from contracts.schema import argument_schema
from contracts.strategies import from_contract
from synth.specfile import load_spec
from tests.conftest import SHIPPED

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
                    max_leaves=12)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_anything_is_either_valid_or_an_argument_error(path):
    spec = load_spec(path)
    schema = argument_schema(spec.signature)
    names = [a.name for a in spec.signature.arguments]

    @settings(max_examples=300, deadline=None, database=None)
    @given(st.one_of(JSON, st.fixed_dictionaries({n: JSON for n in names}),
                     from_contract(spec.contract).flatmap(lambda good: st.sampled_from(names).flatmap(
                         lambda n: JSON.map(lambda bad: {**good, n: bad})))))
    def fuzz(args):
        try:
            flat = flatten_arguments(schema, args)
        except ArgumentError:
            return
        assert set(flat) == {n for n, _ in spec.signature.flat_params()}

    fuzz()
