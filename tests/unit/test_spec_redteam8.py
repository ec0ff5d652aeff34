"""The eighth red-team pass on specs (helper C27, 2026-11-30): a spec that displays otherwise than TOML reads it.

The seventh pass refused TOML escapes in the contract and a backslash ending a comment there. The class is wider: a
character that changes how the text around it is displayed, anywhere in the file. A bidirectional control
(Trojan Source) in a rule's message reorders the rest of its line (`rule adult "Adults\u202e": age >= 18` shows the
condition reversed), in a comment it makes code look commented out or the reverse; a line separator (U+2028), a
paragraph separator or NEL shows a line break inside a comment, so a rule a person reads there is not one; an escape
in the request or an example name (`\\b` backspaces, an ANSI `\\u001b[2K`) rewrites the terminal line the request is
printed on. 10 of 30 attempts loaded so (3 more load, and may: a zero-width space or a look-alike letter in a
message, a quoted key); each is now `spec.hidden_text`, at the character's line and column.
TOML itself refuses a lone CR, a form feed and raw C0 controls, and the rest of the attempts (quoted and bare keys
that collide, tables and arrays of tables reopened) were already refused.
"""
import pytest

from veriguard.cli import main
from veriguard.contracts.errors import SpecError
from veriguard.synth.specfile import load_spec
from tests.conftest import MINIMAL, write_spec

RULE = 'rule adult "Users must be adults": age >= 18'
REQUEST = 'request = "Adults only."'

SHOWN_OTHERWISE = {   # the spec, and a text on the line the error must name
    "RLO in a rule's message": (MINIMAL.replace('"Users must be adults"', '"Users must be adults\u202e"'), "adults\u202e"),
    "RLI in a rule's message": (MINIMAL.replace('"Users must be adults"', '"Users must be adults\u2067"'), "adults\u2067"),
    "LRE in a property's message": (MINIMAL.replace('"Minors are denied"', '"Minors\u202a are denied"'), "\u202a"),
    "RLM in a contract comment": (MINIMAL.replace(RULE, f"# \u200f note\n{RULE}"), "\u200f"),
    "PDI in a comment of the file": ("# \u2069 note\n" + MINIMAL.lstrip("\n"), "\u2069"),
    "ALM in the request": (MINIMAL.replace(REQUEST, 'request = "Adults only.\u061c"'), "request"),
    "RLO in an example's name": (MINIMAL.replace('name = "adult admin"', 'name = "adult\u202e admin"'), "adult\u202e"),
    "RLO in an enum value": (MINIMAL.replace('["admin", "user"]', '["admin", "user\u202e"]'), "user\u202e"),
    "U+2028 in a contract comment": (MINIMAL.replace(RULE, f'# c\u2028rule minors "Minors denied": age >= 21\n{RULE}'),
                                     "# c"),
    "U+2029 in a contract comment": (MINIMAL.replace(RULE, f"# c\u2029x\n{RULE}"), "# c"),
    "NEL in a contract comment": (MINIMAL.replace(RULE, f"# c\x85x\n{RULE}"), "# c"),
    "U+2028 in the request": (MINIMAL.replace(REQUEST, 'request = "Adults\u2028 only."'), "request"),
    "\\u202e escaped in the request": (MINIMAL.replace(REQUEST, 'request = "Adults only.\\u202e"'), "request"),
    "backspaces in the request": (MINIMAL.replace(REQUEST, 'request = "Everyone\\b\\b\\b\\b\\b\\b\\b\\bAdults only."'),
                                  "request"),
    "an ANSI escape in the request": (MINIMAL.replace(REQUEST, 'request = "Adults\\u001b[2K only."'), "request"),
    "NUL in the request": (MINIMAL.replace(REQUEST, 'request = "Adults\\u0000 only."'), "request"),
    "an escaped CR in an example name": (MINIMAL.replace('name = "adult admin"', 'name = "adult\\radmin"'),
                                         "adult\\radmin"),
    "an escape in a quoted key": (MINIMAL + '\n[clarifications]\n"q\\u202e" = "a"\n', "q\\u202e"),
    "a C1 control in [agent]": (MINIMAL + '\n[agent]\nrole = "helper\\u0090"\n', "helper"),
    "an 8-bit CSI in a comment of the file": ("# c\x9b2K\n" + MINIMAL.lstrip("\n"), "# c"),
    "LRM in a rule's condition": (MINIMAL.replace("age >= 18", "age >=\u200e 18"), "age >=\u200e"),
    "FSI in the name": (MINIMAL.replace('name = "mini"', 'name = "mini\u2068"'), "mini\u2068"),
    "RLI in an [extraction] path": (MINIMAL + '\n[extraction]\nage = { from = "field", path = "age\u2067" }\n', "age\u2067"),
}


@pytest.mark.parametrize("body, needle", SHOWN_OTHERWISE.values(), ids=SHOWN_OTHERWISE.keys())
def test_a_spec_that_displays_otherwise_than_it_reads_is_refused(tmp_path, body, needle):
    path = write_spec(tmp_path, body)
    line = next(n for n, text in enumerate(path.read_text(encoding="utf-8").split("\n"), 1) if needle in text)
    with pytest.raises(SpecError) as e:
        load_spec(path)
    assert e.value.code == "spec.hidden_text" and e.value.fix and "U+" in e.value.message
    assert e.value.pos.line == line, e.value


def test_synth_refuses_it_with_exit_2_before_proving(tmp_path, capsys):
    spec = write_spec(tmp_path, MINIMAL.replace('"Users must be adults"', '"Users must be adults\u202e"'))
    assert main(["synth", str(spec), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "error[spec.hidden_text]" in err and ":18:" in err and "Traceback" not in err
    assert not (tmp_path / "out" / "mini").exists()


READS_AS_SHOWN = {
    "accents, CJK, Arabic and Hebrew letters": MINIMAL.replace(
        REQUEST, 'request = "Adultes seulement; 成人のみ; للبالغين فقط; למבוגרים בלבד"'),
    "a right-to-left rule message": MINIMAL.replace('"Users must be adults"', '"للبالغين فقط"'),
    "an emoji and a zero-width joiner": MINIMAL.replace(REQUEST, 'request = "Adults only 👩‍💻."'),
    "a tab and line breaks in the request": MINIMAL.replace(REQUEST, 'request = """Adults\tonly.\nNo minors."""'),
    "escaped quotes and tabs": MINIMAL.replace(REQUEST, 'request = "Adults \\"only\\"\\t."'),
}


@pytest.mark.parametrize("body", READS_AS_SHOWN.values(), ids=READS_AS_SHOWN.keys())
def test_text_that_reads_as_it_shows_loads(tmp_path, body):
    assert load_spec(write_spec(tmp_path, body)).name == "mini"


def test_a_crlf_spec_loads(tmp_path):
    path = write_spec(tmp_path, MINIMAL)
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert load_spec(path).contract is not None
