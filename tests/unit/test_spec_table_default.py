"""A table's `default` is a TOML value of the table's result type (red-team G, 2026-11-29).

Before, a bool table's default went into the generated code as written: `default = "false"` was a truthy
string in the frozen module and its runtime checker (a key missing from the table passed the rule), and z3's
contract check stopped on a sort mismatch (`veriguard synth` exit 70, an internal error, for a spec error).
"""
import pytest

from veriguard.contracts.errors import SpecError
from veriguard.synth.specfile import load_spec
from tests.conftest import MINIMAL, write_spec

BOOL_TABLE = MINIMAL.replace('signature = "(Role, str, str) -> bool"',
                             'signature = "(Role, str, str) -> bool"\ndefault = {default}')
INT_TABLE = MINIMAL.replace('[contract]', '[tables.limit]\nfile = "lim.csv"\nsignature = "(Role) -> int"\n'
                            'default = {default}\n\n[contract]').replace(
    'rule adult "Users must be adults": age >= 18', 'rule adult "Users must be adults": age >= limit(role)')


@pytest.mark.parametrize("default", ['"false"', '"true"', "0", "1", '"no"', "[]", "{}", "1970-01-01", "0.0"])
def test_a_bool_tables_default_must_be_a_toml_boolean(tmp_path, default):
    with pytest.raises(SpecError) as e:
        load_spec(write_spec(tmp_path, BOOL_TABLE.replace("{default}", default)))
    assert e.value.code == "spec.table_default" and "returns bool" in e.value.message
    assert e.value.pos.line == BOOL_TABLE.replace("{default}", default).lstrip("\n").splitlines().index(
        f"default = {default}") + 1


@pytest.mark.parametrize("default", ['"5"', "true", "1.0", "[0]"])
def test_an_int_tables_default_must_be_a_toml_integer(tmp_path, default):
    (tmp_path / "lim.csv").write_text("role,limit\nadmin,100\n")
    with pytest.raises(SpecError) as e:
        load_spec(write_spec(tmp_path, INT_TABLE.replace("{default}", default)))
    assert e.value.code == "spec.table_default" and "returns int" in e.value.message


@pytest.mark.parametrize("default, missing", [("false", False), ("true", True)])
def test_a_boolean_default_is_what_a_missing_key_gives(tmp_path, default, missing):
    spec = load_spec(write_spec(tmp_path, BOOL_TABLE.replace("{default}", default)))
    assert spec.signature.table("ok").lookup(("user", "db", "zz")) is missing


def test_an_integer_default_loads(tmp_path):
    (tmp_path / "lim.csv").write_text("role,limit\nadmin,100\n")
    spec = load_spec(write_spec(tmp_path, INT_TABLE.replace("{default}", "-1")))
    assert spec.signature.table("limit").lookup(("user",)) == -1
