"""Argument validation on arbitrary JSON-like input: it returns well-typed parameters or raises
ArgumentError, and nothing else, for every shipped spec."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veriguard.contracts.runtime_support import ArgumentError, flatten_arguments
from veriguard.contracts.schema import argument_schema
from veriguard.contracts.strategies import from_contract
from veriguard.synth.specfile import load_spec
from tests.conftest import SHIPPED, examples

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
                    max_leaves=12)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_anything_is_either_valid_or_an_argument_error(path):
    spec = load_spec(path)
    schema = argument_schema(spec.signature)
    names = [a.name for a in spec.signature.arguments]

    @settings(max_examples=examples(300), deadline=None, database=None)
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


# --- exact types (finding 12): a subclass can answer ==, <, hash or `in` unlike the value it prints as ---
class EqInt(int):
    def __eq__(self, other):
        return True

    def __lt__(self, other):
        return True

    __hash__ = int.__hash__


class EqStr(str):
    def __eq__(self, other):
        return True

    def __hash__(self):
        return hash("nursing")


class SubDict(dict):
    pass


class SubList(list):
    pass


class SubTuple(tuple):
    pass


def disguised(value):
    """`value` as an instance of a subclass of its exact type (None for a bool: bool has no subclasses)."""
    if type(value) is int:
        return EqInt(value)
    if type(value) is str:
        return EqStr(value)
    if type(value) is dict:
        return SubDict(value)
    if type(value) is list:
        return SubList(value)
    if type(value) is tuple:
        return SubTuple(value)
    return None


def places(x, path=()):
    """Every path to a value inside `x` that has a subclass to disguise it as (the whole `x` included)."""
    if disguised(x) is not None:
        yield path
    children = x.items() if type(x) is dict else enumerate(x) if type(x) in (list, tuple) else ()
    for k, v in children:
        yield from places(v, path + (k,))


def replaced(x, path, new):
    if not path:
        return new
    k, rest = path[0], path[1:]
    if type(x) is dict:
        return {**x, k: replaced(x[k], rest, new)}
    items = list(x)
    items[k] = replaced(items[k], rest, new)
    return type(x)(items)


def get(x, path):
    for k in path:
        x = x[k]
    return x


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_a_subclass_anywhere_is_an_argument_error(path):
    spec = load_spec(path)
    schema = argument_schema(spec.signature)

    @settings(max_examples=examples(200), deadline=None, database=None)
    @given(from_contract(spec.contract), st.data())
    def fuzz(good, data):
        flatten_arguments(schema, good)  # the genuine arguments pass
        where = data.draw(st.sampled_from(list(places(good))))
        bad = replaced(good, where, disguised(get(good, where)))
        with pytest.raises(ArgumentError):
            flatten_arguments(schema, bad)

    fuzz()


def test_bool_cannot_be_subclassed():
    with pytest.raises(TypeError):
        type("Truthy", (bool,), {})


def test_messages_never_run_the_callers_repr_nor_print_huge_integers():
    class Loud(int):
        def __repr__(self):
            raise RuntimeError("ran the caller's code")

    schema = [("n", {"kind": "int"}), ("b", {"kind": "bool"})]
    with pytest.raises(ArgumentError, match="an object of type Loud"):
        flatten_arguments(schema, {"n": Loud(3), "b": True})
    with pytest.raises(ArgumentError, match="an int of 16610 bits"):
        flatten_arguments(schema, {"n": 1, "b": 10 ** 5000})
    with pytest.raises(ArgumentError, match=r"expected an object \(dict\)"):
        flatten_arguments(schema, SubDict(n=1, b=True))


def test_the_frozen_copy_in_a_build_checks_exact_types_too(tmp_path):
    from veriguard.enforce.loader import ArgumentError as LoadedArgumentError, load_policy
    from veriguard.synth.freeze import write_build
    from tests.unit.test_compile_and_freeze import fake_result

    spec = load_spec(next(p for p in SHIPPED if p.stem == "payments"))
    policy = load_policy(write_build(fake_result(spec), tmp_path, run_info={})[0])
    good = {"user": {"role": "treasurer", "sent_today_cents": 0, "mfa": True},
            "payment": {"recipient": "acme-supplies", "amount_cents": 100, "currency": "USD", "method": "ach",
                        "human_approved": False}}
    assert policy.evaluate(good).allowed
    for where in places(good):
        with pytest.raises(LoadedArgumentError):  # the build's own class, turned into ours by the loader
            policy.evaluate(replaced(good, where, disguised(get(good, where))))
