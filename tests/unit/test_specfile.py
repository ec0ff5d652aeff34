import json

import pytest

from veriguard.contracts.errors import SpecError
from veriguard.synth.specfile import load_spec
from tests.conftest import MINIMAL, SHIPPED, write_spec


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_specs_load(path):
    spec = load_spec(path)
    assert spec.contract is not None and spec.contract.rules and spec.contract.properties
    assert spec.examples, "every shipped spec carries examples"
    assert spec.request and spec.agent


def load_error(tmp_path, body, **kw) -> SpecError:
    with pytest.raises(SpecError) as e:
        load_spec(write_spec(tmp_path, body, **kw))
    assert e.value.file.endswith("mini.toml") or e.value.file.endswith(".json")
    return e.value


def test_minimal_spec_loads(tmp_path):
    spec = load_spec(write_spec(tmp_path))
    assert [d.id for d in spec.contract.rules] == ["adult", "access"]
    assert spec.files and spec.files[0][0] == "ok.json"


def test_toml_syntax_error_has_line_and_column(tmp_path):
    e = load_error(tmp_path, MINIMAL.replace('request = "Adults only."', 'request = "Adults only.'))
    assert e.code == "spec.toml" and e.pos.line == 2 and e.pos.col > 0


def test_contract_syntax_error_points_into_the_spec_file(tmp_path):
    e = load_error(tmp_path, MINIMAL.replace('rule adult "Users must be adults": age >= 18',
                                             'rule adult "Users must be adults": age => 18'))
    lines = (tmp_path / "mini.toml").read_text().splitlines()
    assert e.code == "contract.syntax"
    assert "rule adult" in lines[e.pos.line - 1] and lines[e.pos.line - 1][e.pos.col - 1:].startswith("=>")


def test_unknown_argument_points_at_the_name(tmp_path):
    e = load_error(tmp_path, MINIMAL.replace("age >= 18", "agee >= 18"))
    line = (tmp_path / "mini.toml").read_text().splitlines()[e.pos.line - 1]
    assert e.code == "contract.unknown_name" and line[e.pos.col - 1:].startswith("agee")
    assert "did you mean 'age'" in e.fix


def test_unknown_table_name(tmp_path):
    e = load_error(tmp_path, MINIMAL.replace("ok(role, a, b)", "allowed_cols(role, a, b)"))
    assert e.code == "contract.unknown_table" and "tables: ok" in e.fix


def test_unknown_key_suggests_the_right_one(tmp_path):
    e = load_error(tmp_path, MINIMAL.replace("[arguments]", "[argument]"))
    assert e.code == "spec.unknown_key" and "did you mean 'arguments'" in e.fix and e.pos.line == 7


def test_key_swallowed_by_a_table_header_is_explained(tmp_path):
    body = MINIMAL.replace('[contract]\n', '')
    e = load_error(tmp_path, body)
    assert e.code == "spec.unknown_key" and "belongs to that table" in e.fix


def test_example_with_a_mistyped_argument(tmp_path):
    e = load_error(tmp_path, MINIMAL.replace('age = 30', 'age = "thirty"'))
    assert e.code == "spec.example_args" and "'age'" in e.message and e.pos.line > 20


def test_example_with_an_unknown_rule(tmp_path):
    e = load_error(tmp_path, MINIMAL.replace("violations = []", 'violations = ["adultt"]'))
    assert e.code == "spec.example" and "rule ids" in e.fix


def test_table_value_outside_its_enum(tmp_path):
    e = load_error(tmp_path, MINIMAL, table='{"admin": {"db": ["x"]}, "guest": {"db": ["x"]}}')
    assert e.code == "spec.table" and "'guest'" in e.message and e.file.endswith("ok.json") and e.pos.line == 1


def test_table_json_syntax_error(tmp_path):
    e = load_error(tmp_path, MINIMAL, table='{"admin": {"db": ["x",]}}')
    assert e.code == "spec.table_json" and e.file.endswith("ok.json")


def test_missing_table_file(tmp_path):
    path = write_spec(tmp_path)
    (tmp_path / "ok.json").unlink()
    with pytest.raises(SpecError) as e:
        load_spec(path)
    assert e.value.code == "spec.table_file"


def test_csv_tables_and_value_tables(tmp_path):
    (tmp_path / "lim.csv").write_text("role,limit\nadmin,100\nuser,10\n")
    body = MINIMAL.replace('[contract]', '[tables.limit]\nfile = "lim.csv"\nsignature = "(Role) -> int"\ndefault = 0\n\n'
                           '[contract]').replace('rule adult "Users must be adults": age >= 18',
                                                 'rule adult "Users must be adults": age >= limit(role)')
    spec = load_spec(write_spec(tmp_path, body))
    table = spec.signature.table("limit")
    assert table.lookup(("admin",)) == 100 and table.lookup(("nobody",)) == 0


def test_value_table_needs_a_default(tmp_path):
    (tmp_path / "lim.csv").write_text("role,limit\nadmin,100\n")
    body = MINIMAL.replace('[contract]', '[tables.limit]\nfile = "lim.csv"\nsignature = "(Role) -> int"\n\n[contract]')
    e = load_error(tmp_path, body)
    assert e.code == "spec.table_default"


def test_shipped_eicu_table_matches_the_benchmark_table():
    spec = load_spec(SHIPPED[[p.stem for p in SHIPPED].index("eicu_ac")])
    raw = json.loads((spec_dir := SHIPPED[0].parent / "eicu_ac" / "permission_table.json").read_text())["roles"]
    rows = {k for k, v in spec.signature.table("permitted").rows if v}
    assert rows == {(r, d, c) for r, dbs in raw.items() for d, cols in dbs.items() for c in cols}
    assert spec_dir.exists()


@pytest.mark.parametrize("replace, code, at", [
    (('age >= 18', "not " * 3000 + "age >= 18"), "contract.too_deep", "not not"),
    (('age = 30', "age = " + "[" * 5000 + "]" * 5000), "spec.too_deep", "[[["),
    (('age = 30', "age = " + "{a=" * 3000 + "1" + "}" * 3000), "spec.too_deep", "{a={a="),
    (('age = 30', "age = " + "7" * 5000), "spec.toml", "7777"),
    (('age >= 18', "age >= " + "7" * 5000), "contract.int_too_large", "7777"),
    (('violations = []', "violations = [[1]]"), "spec.example", "[[1]]"),
    (('violations = []', "denied = [[[1]]]"), "spec.example", "[[[1]]]"),
    (('[contract]', '[verify]\nz3_bound = 100000\n\n[contract]'), "spec.verify", "100000"),
    (('[contract]', '[verify]\nmutation_threshold = nan\n\n[contract]'), "spec.verify", "nan"),
])
def test_hostile_specs_are_located_spec_errors(tmp_path, replace, code, at):
    e = load_error(tmp_path, MINIMAL.replace(*replace))
    line = (tmp_path / "mini.toml").read_text().splitlines()[e.pos.line - 1]
    assert e.code == code and at in line[e.pos.col - 1:] and e.fix


@pytest.mark.parametrize("data, code", [(b'name = "mini"\nrequest = "caf\xe9"\n', "spec.encoding"),
                                        (bytes(range(256)) * 4, "spec.encoding"),
                                        (b"\x00\x01\x02binary", "spec.toml")])
def test_files_that_are_not_utf8_toml(tmp_path, data, code):
    path = tmp_path / "bin.toml"
    path.write_bytes(data)
    with pytest.raises(SpecError) as e:
        load_spec(path)
    assert e.value.code == code and e.value.pos.line >= 1 and e.value.fix
    if code == "spec.encoding":
        assert (e.value.pos.line, e.value.pos.col) == ((2, 15) if data.startswith(b"name") else (2, 118))


def test_a_directory_instead_of_a_spec_or_a_table(tmp_path):
    (tmp_path / "dir.toml").mkdir()
    with pytest.raises(SpecError) as e:
        load_spec(tmp_path / "dir.toml")
    assert e.value.code == "spec.file" and "directory" in e.value.message.lower()
    path = write_spec(tmp_path)
    (tmp_path / "ok.json").unlink()
    (tmp_path / "ok.json").mkdir()
    with pytest.raises(SpecError) as e:
        load_spec(path)
    assert e.value.code == "spec.table_file"


@pytest.mark.parametrize("table, code", [
    (b"\xff\xfe{}", "spec.table_file"), (b"[" * 100_000 + b"]" * 100_000, "spec.table_json"),
    (b'{"admin": {"db": [' + b"1" * 5000 + b"]}}", "spec.table_json"),
    (b'[["admin", "db", "x"], 5]', "spec.table")])
def test_hostile_table_files(tmp_path, table, code):
    path = write_spec(tmp_path)
    (tmp_path / "ok.json").write_bytes(table)
    with pytest.raises(SpecError) as e:
        load_spec(path)
    assert e.value.code == code and e.value.fix


@pytest.mark.parametrize("table, needle", [
    ('{"admin": {"db": ["x"]}, "admin": {"db": ["x", "y"]}}', "duplicate key 'admin'"),
    ('{"admin": {"db": ["x"], "db": []}}', "duplicate key 'db'"),
    ('{"admin": {"db": [NaN]}}', "NaN is not a JSON number")])
def test_a_json_table_is_read_strictly(tmp_path, table, needle):
    """json.loads would keep the last of two values of one key (a CSV table refuses the same key twice)."""
    e = load_error(tmp_path, MINIMAL, table=table)
    assert e.code == "spec.table_json" and needle in e.message and e.file.endswith("ok.json") and e.fix
    assert "once" in e.fix


def test_hostile_csv_tables(tmp_path):
    body = MINIMAL.replace('[contract]', '[tables.limit]\nfile = "lim.csv"\nsignature = "(Role) -> int"\ndefault = 0\n\n'
                           '[contract]').replace('age >= 18', 'age >= limit(role)')
    for csv_text, needle in (("role,limit\nadmin,\u00b2\n", "not an integer"),
                             ("role,limit\nadmin," + "9" * 5000 + "\n", "not an integer"),
                             ("role,limit\nadmin,1\x00\n", "not an integer"),
                             ('role,limit\nadmin,"' + "a" * 200_000 + '"\n', "field larger")):
        (tmp_path / "lim.csv").write_text(csv_text)
        with pytest.raises(SpecError) as raised:
            load_spec(write_spec(tmp_path, body))
        e = raised.value
        assert e.code in ("spec.table", "spec.table_csv") and needle in e.message and e.file.endswith("lim.csv")
