"""Value tables of any size compile (red-team G, 2026-11-29).

Before, a table mapping keys to values was one nested conditional expression: from 200 rows on, Python's parser
refused it ("too many nested parentheses") and synth stopped with internal.generated_code, exit 70, for a
spec that was fine. Up to 199 rows the source is what it always was (builds made before keep their bytes).
"""
import json
import types

import pytest

from veriguard.synth.compile import ONE_FUNCTION_ROWS, compile_policy
from veriguard.synth.specfile import load_spec
from veriguard.verify.runnable import frozen_module, runnable_policy

SPEC = """name = "big"
request = "test"
[arguments]
role = { type = "str" }
zone = { type = "int" }
n = { type = "int" }
[tables.lim]
file = "lim.json"
signature = "(str, int) -> int"
default = -1
[contract]
rules = '''
rule under "n within the limit": n <= lim(role, zone)
'''
"""


def compiled(tmp_path, rows: int):
    (tmp_path / "lim.json").write_text(json.dumps({f"r{i}": {str(i % 3): i * 10} for i in range(rows)}))
    (tmp_path / "big.toml").write_text(SPEC)
    spec = load_spec(tmp_path / "big.toml")
    return spec, compile_policy(spec)


def module(spec, source):
    m = types.ModuleType("vg_value_table_test")
    exec(compile(frozen_module(spec, runnable_policy(spec.contract, source)), "policy.py", "exec"), m.__dict__)
    return m


def test_up_to_the_limit_a_value_table_is_one_expression_as_before(tmp_path):
    _, c = compiled(tmp_path, ONE_FUNCTION_ROWS)
    assert "def table_lim(" in c.source and "table_lim__" not in c.source


@pytest.mark.parametrize("rows", [ONE_FUNCTION_ROWS + 1, 1000])
def test_a_larger_value_table_compiles_and_decides_every_row_and_the_default(tmp_path, rows):
    spec, c = compiled(tmp_path, rows)
    assert "def table_lim__0(" in c.source
    m = module(spec, c.source)
    table = spec.signature.table("lim")
    for (role, zone), limit in table.rows:
        assert m.table_lim(role, zone) == limit
        assert m.evaluate({"role": role, "zone": zone, "n": limit}).allowed
        assert not m.evaluate({"role": role, "zone": zone, "n": limit + 1}).allowed
    assert m.table_lim("r1", 0) == table.lookup(("r1", 0)) == -1   # a key of no row: the default
    assert m.table_lim("nobody", 5) == -1
