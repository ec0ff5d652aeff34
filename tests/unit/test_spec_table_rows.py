"""Every row a table file holds is a row of the table, or the spec is refused (red-team, 2026-11-29, night).

The table reader skipped a JSON key starting with `_` at any level (meant for notes such as `"_note": "..."`), a CSV
row whose first cell starts with `#` (meant for comments), and the CSV's first line (the header) whatever it held. A
value table keyed by str then gave such a key its `default`, silently: with `{"_vip": 100}` or the CSV row `#vip,100`
and `default = 1000000`, a payment of 500 to `_vip` / `#vip` was allowed where the file caps it at 100; a CSV written
without a header lost its first row the same way.
"""
from pathlib import Path

import pytest

from veriguard.contracts.errors import SpecError
from veriguard.synth.specfile import load_spec

SPEC = '''
name = "caps"
request = "Payments stay under each payee's cap."

[types]
{types}

[arguments]
p = {{ type = "P" }}

[tables.cap]
file = "{file}"
signature = "{signature}"
default = 1000000

[contract]
rules = """
rule under_cap "A payment stays under its payee's cap": p.amount <= cap({call})
"""
'''
STR_KEYED = dict(types='P = { record = { who = "str", amount = "int" } }', signature="(str) -> int", call="p.who")
TWO_KEYS = dict(types='P = { record = { who = "str", what = "str", amount = "int" } }', signature="(str, str) -> int",
                call="p.who, p.what")
ENUM_KEYED = dict(types='Who = { enum = ["bob", "#vip"] }\nP = { record = { who = "Who", amount = "int" } }',
                  signature="(Who) -> int", call="p.who")


def rows(tmp_path: Path, table: str, *, file: str = "caps.json", shape: dict[str, str] = STR_KEYED) -> dict:
    (tmp_path / file).write_text(table, encoding="utf-8")
    (tmp_path / "caps.toml").write_text(SPEC.format(file=file, **shape), encoding="utf-8")
    return dict(load_spec(tmp_path / "caps.toml").signature.tables[0].rows)


def refused(tmp_path: Path, table: str, *, file: str, shape: dict[str, str] = STR_KEYED) -> SpecError:
    with pytest.raises(SpecError) as e:
        rows(tmp_path, table, file=file, shape=shape)
    assert e.value.fix and e.value.file.endswith(file)
    return e.value


@pytest.mark.parametrize("key", ["_vip", "_", "_note"])
def test_a_json_key_starting_with_underscore_where_rows_stand_is_a_row(tmp_path, key):
    assert rows(tmp_path, f'{{"{key}": 100, "bob": 200}}') == {(key,): 100, ("bob",): 200}


def test_a_json_key_starting_with_underscore_holding_a_level_of_rows_is_a_row(tmp_path):
    got = rows(tmp_path, '{"_vip": {"x": 100}, "bob": {"x": 200}}', shape=TWO_KEYS)
    assert got == {("_vip", "x"): 100, ("bob", "x"): 200}


def test_a_note_where_rows_cannot_stand_is_still_a_note(tmp_path):
    got = rows(tmp_path, '{"_note": "caps in cents", "bob": {"x": 200}}', shape=TWO_KEYS)
    assert got == {("bob", "x"): 200}


def test_a_note_where_a_value_stands_is_read_as_a_row_and_refused_when_it_is_none(tmp_path):
    e = refused(tmp_path, '{"_note": "caps in cents", "bob": 200}', file="caps.json")
    assert e.code == "spec.table" and "caps in cents" in e.message


@pytest.mark.parametrize("row", ["#vip,100", "# a comment", "#,5"])
def test_a_csv_row_starting_with_a_hash_in_a_str_keyed_table_is_refused(tmp_path, row):
    e = refused(tmp_path, f"who,cap\nbob,200\n{row}\n", file="caps.csv")
    assert e.code == "spec.table" and "'#'" in e.message and e.pos.line == 3


def test_a_csv_comment_that_no_key_can_be_is_still_a_comment(tmp_path):
    assert rows(tmp_path, "who,cap\n# caps in cents\nbob,200\n", file="caps.csv", shape=ENUM_KEYED) == {("bob",): 200}


def test_a_csv_row_whose_hash_key_is_an_enum_value_is_a_row(tmp_path):
    assert rows(tmp_path, "who,cap\n#vip,100\n", file="caps.csv", shape=ENUM_KEYED) == {("#vip",): 100}


def test_a_csv_without_a_header_is_refused_rather_than_losing_its_first_row(tmp_path):
    e = refused(tmp_path, "vip,100\nbob,200\n", file="caps.csv")
    assert e.code == "spec.table_csv" and "header" in e.message and "vip,100" in e.message


def test_a_csv_with_a_header_keeps_every_row(tmp_path):
    assert rows(tmp_path, "who,cap\nvip,100\nbob,200\n", file="caps.csv") == {("vip",): 100, ("bob",): 200}

