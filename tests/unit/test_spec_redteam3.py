"""The third red-team pass on what a spec can do to synthesis (helper H22, 2026-11-30).

Strings beyond ASCII reach z3 one to one. z3 4.8.7's StringVal takes ASCII only: a rule comparing with "é", an enum
value "é" or a table key "José" ended `veriguard synth` in an internal error (ctypes.ArgumentError, exit 70) before
any gate ran, and the runtime checker and z3 could not be compared on such inputs. Now every string is spelled in
ASCII for z3 (contracts.to_z3.z3_text: a backslash doubled, U+0080 and up as \\u{hex}) and a model's strings are
read back (python_text); the contract language compares strings for equality only, so no verdict changes.
"""
import textwrap

import pytest

from veriguard.contracts.errors import ContractError, SpecError
from veriguard.contracts.runtime_support import flatten_arguments
from veriguard.contracts.schema import argument_schema
from veriguard.contracts.to_python import compile_checker
from veriguard.contracts.to_z3 import Z3Encoding, python_text, z3_text
from veriguard.synth.specfile import load_spec
from veriguard.verify.verdicts import Verdict
from veriguard.verify.z3check import check_contract

SPEC = '''
name = "names"
request = "Only the listed people, in the listed places."

[types]
Place = {{ enum = ["café", "q\\u0301", "plain"] }}

[arguments]
who = "str"
place = "Place"

[tables.listed]
file = "listed.json"
signature = "(str) -> bool"

[contract]
rules = """
rule listed_only "Only listed people": listed(who)
rule not_smiley "Not the smiley": who != "{literal}"
rule cafe "Only in the café": place == "café"
"""
'''
STRINGS = ["José", "jose", "Jose\u0301", "😀", "\ud800", "\\", "\\u{e9}", "\\x41", "a\x00b", "", "\u2028", "café"]


def spec_with(tmp_path, literal="😀"):
    # no lone surrogate ("\\ud800"): strict JSON refuses one since C25 (test_spec_redteam6.py)
    (tmp_path / "listed.json").write_text('["José", "\\\\u{e9}", "\\ud83d\\ude00", "x"]', encoding="utf-8")
    path = tmp_path / "names.toml"
    path.write_text(textwrap.dedent(SPEC.format(literal=literal)).lstrip(), encoding="utf-8")
    return load_spec(path)


def test_z3_checks_a_contract_with_strings_beyond_ascii(tmp_path):
    report = check_contract(spec_with(tmp_path).contract, bound=2)
    verdicts = {(f.check, f.subject): f.verdict for f in report.findings}
    assert verdicts and all(v is Verdict.PROVED for v in verdicts.values()), report.findings
    held = {f.subject: f.witness for f in report.findings if f.check == "can_hold" and f.witness}
    assert held["cafe"]["place"] == "café" and held["listed_only"]["who"] in ("José", "\\u{e9}", "😀", "x")


@pytest.mark.parametrize("who", STRINGS, ids=ascii)
@pytest.mark.parametrize("place", ["café", "q\u0301", "plain"], ids=ascii)  # q + U+0301 is NFC (no composed q with acute); e + U+0301 is refused since C29
def test_the_checker_and_z3_agree_on_strings_beyond_ascii(tmp_path, who, place):
    spec = spec_with(tmp_path)
    enc, checker = Z3Encoding(spec.contract, bound=2), compile_checker(spec.contract)
    flat = flatten_arguments(argument_schema(spec.signature), {"who": who, "place": place})
    _allowed, violations, _denied = checker.spec_decision(**flat)
    assert set(violations) == {d.id for d in spec.contract.rules if not enc.evaluate(enc.holds(d.id), flat)}


@pytest.mark.parametrize("s", STRINGS + ["\U0010ffff", "\\\\u{41}", "\\u{zz}", "e\u0301"], ids=ascii)
def test_z3_text_reads_back_through_a_z3_model(s):
    import z3
    x, solver = z3.String("x"), z3.Solver()
    solver.add(x == z3.StringVal(z3_text(s)))
    assert solver.check() == z3.sat
    assert z3_text(s).isascii() and python_text(solver.model()[x].as_string()) == s


# A string constant of thousands of characters: z3 took 17 s over a table key of 4,000 characters and ended the
# process with a segmentation fault over one of 40,000 (synth died without a message). Now a rule's string and a
# table's string are at most contracts.types.MAX_TEXT (256) characters, refused at their place.
LONG_SPEC = '''
name = "long"
request = "r"

[arguments]
who = "str"

[tables.ok]
file = "t.{ext}"
signature = "(str) -> bool"

[contract]
rules = """
rule listed "Only listed": ok(who) and who != "{literal}"
"""
'''


def long_spec(tmp_path, *, key="bob", literal="x", ext="json"):
    table = f'["{key}"]' if ext == "json" else f"who\n{key}\n"
    (tmp_path / f"t.{ext}").write_text(table, encoding="utf-8")
    path = tmp_path / "long.toml"
    path.write_text(LONG_SPEC.format(literal=literal, ext=ext).lstrip(), encoding="utf-8")
    return path


@pytest.mark.parametrize("ext", ["json", "csv"])
def test_a_table_string_over_the_limit_is_refused_at_the_table(tmp_path, ext):
    with pytest.raises(SpecError) as e:
        load_spec(long_spec(tmp_path, key="k" * 4000, ext=ext))
    assert e.value.code == "spec.table" and "4,000 characters" in e.value.message and e.value.file.endswith(ext)
    at_the_limit = load_spec(long_spec(tmp_path, key="k" * 256, literal="y" * 256, ext=ext))
    assert dict(at_the_limit.signature.tables[0].rows) == {("k" * 256,): True}


def test_a_rule_string_over_the_limit_is_refused_at_the_rule(tmp_path):
    with pytest.raises(ContractError) as e:
        load_spec(long_spec(tmp_path, literal="y" * 4000))
    assert e.value.code == "contract.string_too_long" and e.value.pos.line == 13 and e.value.fix


def test_a_byte_order_mark_is_no_part_of_a_csv_key(tmp_path):
    """With `header = false` the first line is a row: its BOM became part of the first key, which the spec shows
    without it (a value table's capped key then took the default)."""
    (tmp_path / "t.csv").write_bytes("\ufeffbob\nann\n".encode())
    path = tmp_path / "s.toml"
    path.write_text(LONG_SPEC.format(literal="x", ext="csv").lstrip().replace('signature = "(str) -> bool"\n',
                                                                              'signature = "(str) -> bool"\nheader = false\n'))
    assert dict(load_spec(path).signature.tables[0].rows) == {("bob",): True, ("ann",): True}


# The contract's text is what the file shows. A TOML escape in a basic string is decoded before the contract is
# parsed: `x > 0 \u0023 and x < 100` compiled to `x > 0` (the rest a comment), `# note\u000arule s ...` hid a rule
# inside what reads as a comment, and error positions inside such text were off. Now an escape in the rules or
# properties is spec.contract_escape at its place; a line-ending backslash (TOML's continuation) and literal strings
# ('''...''', no escapes) are read as before.
ESCAPED = [('rules = """\nrule r "x": x > 0 \\u0023 and x < 100\n"""', (8, 19)),
           ('rules = """\nrule r "x": x > 0 # note\\u000arule s "y": x != 3\n"""', (8, 25)),
           ('rules = "rule r \\"x\\": x > 0"', (7, 17)),
           ('rules = """\nrule r "x": x > 0\n"""\nproperties = """\nproperty p "x\\"": x > 0 ==> allowed\n"""', (11, 14))]


def escape_spec(tmp_path, contract):
    path = tmp_path / "e.toml"
    path.write_text(f'name = "e"\nrequest = "r"\n\n[arguments]\nx = "int"\n[contract]\n{contract}\n', encoding="utf-8")
    return path


@pytest.mark.parametrize("contract, where", ESCAPED, ids=range(len(ESCAPED)))
def test_a_toml_escape_in_the_contract_is_refused_at_its_place(tmp_path, contract, where):
    with pytest.raises(SpecError) as e:
        load_spec(escape_spec(tmp_path, contract))
    assert e.value.code == "spec.contract_escape" and (e.value.pos.line, e.value.pos.col) == where
    assert "literal string" in e.value.fix
    # what stays: a line-ending backslash (TOML's continuation) and a literal string, escapes and all
    continued = load_spec(escape_spec(tmp_path, 'rules = """\nrule r "x": x > 0 \\\n  or x == -5\n"""'))
    assert [d.id for d in continued.contract.rules] == ["r"]
    literal = load_spec(escape_spec(tmp_path, "rules = '''\nrule r \"x\\\"y\": x > 0 # \\u0023 and x < 100\n'''"))
    assert literal.contract.rule("r").message == 'x"y'
