"""The fourth red-team pass on specs (helper C23, 2026-11-30).

1. Where a key is written. tomlpos read the file line by line with regexes, so a line inside a string that looked
   like a header or a key was taken for one, and keys of inline tables were not seen at all. The check that the
   contract uses no TOML escape (`\\u0023` is `#`) looks at the text where `[contract] rules` is written; when that
   place was wrong or missing it looked at the wrong text or at none, and `x > 0 \\u0023 and x < 100` compiled to
   `x > 0` again: `contract = { rules = "..." }`, a quoted key `"ru\\u006ces"` or `'rules'`, or a fake
   `rules = '...'` inside a later multi-line string. The scan now reads strings, comments, arrays and inline tables
   as TOML does, and a contract text it cannot place (or places twice) is refused.
2. An example's `violations` and `denied` are compared with the policy's as sets, so `["r", "r"]` passed as if
   it said something; an item listed twice is spec.example at its place.
3. z3 strings: z3 invents strings outside z3_text's spellings (a lone backslash, a byte from 0x80 up, `\\u{41}`),
   and python_text read them as their characters, which could equal a constant z3 took as different; and z3 shows a
   newline as `\\n`, which was read back as a backslash and an n. The domain keeps z3's strings to spellings, and
   python_text refuses anything else.
"""
import pytest

from veriguard.contracts.errors import SpecError
from veriguard.contracts.to_z3 import Z3Encoding, python_text, z3_text
from veriguard.synth.specfile import load_spec
from veriguard.synth.tomlpos import key_positions, scan_keys

HEAD = '''name = "s"
request = "r"
{top}
[arguments]
x = "int"
s = "str"
items = "list[str]"
'''
EXAMPLE = '''
[[examples]]
name = "ok"
args = {{ x = 50, s = "a", items = [{items}] }}
allowed = true
'''
ESCAPED = 'rule r \\"m\\": x > 0 \\u0023 and x < 100'   # in a basic string: \u0023 is '#', the rest a comment


def spec(tmp_path, text):
    path = tmp_path / "s.toml"
    path.write_text(text, encoding="utf-8")
    return path


def refused(tmp_path, text, code):
    with pytest.raises(SpecError) as e:
        load_spec(spec(tmp_path, text))
    assert e.value.code == code, e.value
    assert e.value.pos.line and e.value.fix
    return e.value


PLACES = {
    "an inline contract table": HEAD.format(top=f'contract = {{ rules = "{ESCAPED}" }}') + EXAMPLE.format(items=""),
    "the properties of an inline contract table": HEAD.format(
        top="contract = { rules = 'rule r \"m\": x > 0', properties = \"property p 'q': x > 0 \\u0023 ==> allowed\" }")
    + EXAMPLE.format(items=""),
    "a quoted key with an escape": HEAD.format(top="") + f'[contract]\n"ru\\u006ces" = "{ESCAPED}"\n'
    + EXAMPLE.format(items=""),
    "a literal quoted key": HEAD.format(top="") + f"[contract]\n'rules' = \"{ESCAPED}\"\n" + EXAMPLE.format(items=""),
    "a fake rules line in a later multi-line literal": HEAD.format(top="") + f'[contract]\nrules = "{ESCAPED}"\n'
    + EXAMPLE.format(items="'''\n[contract]\nrules = 'rule r \"m\": x > 0'\n'''"),
    "a fake rules line in a later multi-line basic string": HEAD.format(top="") + f'[contract]\nrules = "{ESCAPED}"\n'
    + EXAMPLE.format(items='"""\n[contract]\nrules = \'rule r "m": x > 0\'\n"""'),
}


@pytest.mark.parametrize("place", PLACES)
def test_an_escape_in_the_contract_is_found_wherever_toml_puts_the_contract(tmp_path, place):
    e = refused(tmp_path, PLACES[place], "spec.contract_escape")
    line = PLACES[place].split("\n")[e.pos.line - 1]
    assert line[e.pos.col - 1] == "\\", (e.pos, line)   # the escape itself, not the fake


def test_the_scan_skips_strings_and_reads_inline_tables_and_arrays():
    text = ('a = """x \\"""\n[b]\nc = 1\n"""\n'   # an escaped quote in a multi-line string: still open
            "d = { e = 'f', \"g.h\" = [1, { i = 2 }] }\n"
            '[[t]]\nu = """""x"""""\n[[t]]\nv = 2\n')
    positions, values, twice = scan_keys(text)
    assert ("b",) not in positions and ("b", "c") not in positions and not twice
    assert positions[("d", "e")].col == 7 and values[("d", "e")].col == 11
    assert ("d", "g.h", 1, "i") in positions
    assert positions[("t", 0, "u")].line == 7 and positions[("t", 1, "v")].line == 9


def test_an_error_in_the_third_of_inline_examples_points_at_it(tmp_path):
    rows = "\n".join(f'  {{ name = "{n}", args = {{ x = {x}, s = "a", items = [] }}, allowed = true }},'
                     for n, x in (("a", 1), ("b", 2), ("c", '"no"')))
    text = HEAD.format(top=f"examples = [\n{rows}\n]") + "[contract]\nrules = 'rule r \"m\": x > 0'\n"
    assert refused(tmp_path, text, "spec.example_args").pos.line == 6


def test_the_shipped_specs_keep_their_positions():
    """Every position the line scan gave for the shipped specs is the same (nothing shipped moved)."""
    from pathlib import Path
    for path in sorted(Path("specs").glob("*.toml")):
        text = path.read_text(encoding="utf-8")
        assert ("contract", "rules") in key_positions(text), path
        assert not scan_keys(text)[2], path


@pytest.mark.parametrize("field,listed", [("violations", '["r", "r"]'), ("denied", '["bad", "bad"]')])
def test_an_example_may_not_list_a_rule_or_an_item_twice(tmp_path, field, listed):
    text = HEAD.format(top="") + "[contract]\nrules = '''rule r \"m\": forall i in items: i != \"bad\"'''\n" + \
        EXAMPLE.format(items='"bad"').replace("allowed = true", f'allowed = false\n{field} = {listed}')
    e = refused(tmp_path, text, "spec.example")
    line = text.split("\n")[e.pos.line - 1]
    assert "listed twice" in e.message and line.startswith(field) and e.pos.col == line.rindex('"', 0, -2) + 1


NOT_SPELLINGS = ["\\", "a\\b", "\\u{41}", "\\u{0e9}", "\\u{E9}", "\\u{110000}"]   # as z3 holds them


@pytest.mark.parametrize("held", NOT_SPELLINGS)
def test_python_text_refuses_a_string_no_python_string_is_spelled_as(held):
    with pytest.raises(ValueError):
        python_text(held.replace("\\", "\\\\"))   # as_string shows a backslash doubled


@pytest.mark.parametrize("byte", [0x80, 0xE9, 0xFF])
def test_python_text_refuses_a_byte_from_0x80_up(byte):
    with pytest.raises(ValueError):
        python_text(f"\\x{byte:02X}")


@pytest.mark.parametrize("char", ["\n", "\v", "\f", "\r", "\x00", "\x1c", "\t", "\x7f"])
def test_a_control_character_z3_invents_reads_back_as_itself(char):
    import z3
    ctx = z3.Context()
    shown = z3.simplify(z3.Unit(z3.BitVecVal(ord(char), 8, ctx))).as_string()
    assert python_text(shown) == char


def test_z3_witnesses_are_spellings_of_python_strings(tmp_path):
    """Asked for strings unlike the constants, z3 now answers only with spellings, each reading back as a string
    that is not a constant (before, a string outside the spellings read back as its characters)."""
    import z3
    text = HEAD.format(top="") + "[contract]\nrules = '''rule r \"m\": s != \"\\\\x\" and s != \"é\"'''\n" + \
        EXAMPLE.format(items="")
    enc = Z3Encoding(load_spec(spec(tmp_path, text)).contract)
    s = enc.scalars["s"]
    constants = ["\\x", "é", "\\", "\\u{41}", "\\u{e9}"]
    solver = z3.Solver(ctx=enc.ctx)
    solver.add(enc.domain(), *[s != enc.value(c) for c in constants])
    for _ in range(25):
        assert solver.check() == z3.sat
        value = solver.model().eval(s, model_completion=True)
        got = python_text(value.as_string())
        assert got not in constants and z3.is_true(z3.simplify(z3.StringVal(z3_text(got), enc.ctx) == value)), got
        solver.add(s != value)


def test_the_domain_forbids_what_z3_invented_before(tmp_path):
    import z3
    text = HEAD.format(top="") + "[contract]\nrules = 'rule r \"m\": x > 0'\n" + EXAMPLE.format(items="")
    enc = Z3Encoding(load_spec(spec(tmp_path, text)).contract)
    for held in NOT_SPELLINGS:
        solver = z3.Solver(ctx=enc.ctx)
        solver.add(enc.domain(), enc.scalars["s"] == z3.StringVal(held, enc.ctx))
        assert solver.check() == z3.unsat, held
    solver = z3.Solver(ctx=enc.ctx)
    high = z3.Concat(z3.StringVal("a", enc.ctx), z3.Unit(z3.BitVecVal(0x80, 8, enc.ctx)))   # "a" and byte 0x80
    solver.add(enc.domain(), enc.scalars["s"] == high)
    assert solver.check() == z3.unsat


def test_a_contract_text_the_scan_cannot_place_is_refused(tmp_path, monkeypatch):
    """Fail closed: had the scan missed the contract's place (or found it twice), the escape check would look at
    nothing; now the text is refused with how to write it so that it can be placed."""
    import veriguard.synth.specfile as specfile
    monkeypatch.setattr(specfile, "scan_keys", lambda text: ({}, {}, set()))
    text = HEAD.format(top="") + "[contract]\nrules = 'rule r \"m\": x > 0'\n" + EXAMPLE.format(items="")
    e = refused(tmp_path, text, "spec.contract_escape")
    assert "cannot tell where [contract.rules] is written" in e.message and "'''" in e.fix
