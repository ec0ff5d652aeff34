"""The eleventh red-team pass on specs (helper C30, 2026-11-30): a compared value wholly in letters that read as Latin.

On 5795103 `rule not_evil: recipient != "ⲥⲟⲣ"` (Coptic sima, o, ro) loaded and was proved: it shows "cop" denied and
denies only the Coptic spelling. No list of look-alike letters can be complete, so two mechanisms close the class:
* a value the policy compares (a rule's string, an enum value, a table cell) may hold letters of UAX 31's recommended
  scripts only (Latin, Cyrillic, Greek, Han, Arabic ...): Coptic, Tifinagh, Canadian syllabics, Deseret, N'Ko, Runic,
  Cherokee, Lisu, Osage ... are refused whatever their shapes;
* a symbol that frames a Latin letter (circled ⓔ, parenthesized ⒠, squared 🄴, negative squared 🅴) is read as that
  letter in any spec string, as full-width and mathematical letters already were, and a compared value may not hold a
  compatibility form of an ASCII letter or digit joined to ASCII (`ｊｏｓé.com`).
Words of recommended scripts, Japanese text with full-width Latin, flags (regional indicators) and signs (™, ², ①)
load as before.
"""
import pytest

from veriguard.contracts.errors import SpecError
from veriguard.synth.specfile import load_spec
from tests.unit.test_spec_redteam9 import write

REFUSED = {
    "a wholly Coptic cop": "\u2ca5\u2c9f\u2ca3",
    "a wholly Coptic cop.com": "\u2ca5\u2c9f\u2ca3.com",
    "Coptic capitals COP": "\u2ca4\u2c9e\u2ca2",
    "a Coptic word beside a Russian one": "\u2ca5\u2c9f\u2ca3 \u043d\u0435\u0442",
    "a Coptic word between ASCII words": "pay \u2ca5\u2c9f\u2ca3 now",
    "circled evil.com": "\u24d4\u24e5\u24d8\u24db.com",
    "circled evil alone": "\u24d4\u24e5\u24d8\u24db",
    "parenthesized evil.com": "\u24a0\u24b1\u24a4\u24a7.com",
    "squared EVIL.com": "\U0001f134\U0001f145\U0001f138\U0001f13b.com",
    "negative squared EVIL.com": "\U0001f174\U0001f185\U0001f178\U0001f17b.com",
    "a Tifinagh word": "\u2d54\u2d54",
    "Canadian syllabics": "\u144c\u142f",
    "a Deseret word": "\U0001042f\U00010437",
    "an N'Ko word": "\u07cb\u07cb",
    "a Runic word": "\u16b1\u16a2\u16be",
    "full-width letters joined to ASCII": "\uff4a\uff4f\uff53\u00e9.com",
    "full-width digits joined to ASCII": "evil\uff11.com",
    # variants written after the fix
    "a Coptic word that looks like nothing Latin": "\u2ca1\u2c81\u2ca3",
    "Old Italic": "\U00010300\U00010301",
    "a Vai syllable": "\ua500\ua501",
    "a Glagolitic word": "\u2c30\u2c31",
    "an Osage word": "\U000104d8\U000104d9",
    "Ol Chiki": "\u1c5a\u1c5b",
    "negative circled EVIL": "\U0001f154\U0001f165\U0001f158\U0001f15b",
    "circled capitals joined to ASCII": "\u24ba\u24cb\u24be\u24c1.com",
    "a Gothic word": "\U00010330\U00010331",
    "a Mongolian word": "\u1820\u1821",
}
LOADS = {
    "Latin with accents": "z\u00fcrich.com",
    "a Russian word": "\u043f\u0440\u0438\u043c\u0435\u0440.\u0440\u0444",
    "a Greek word": "\u03b1\u03b2\u03b3",
    "a Georgian word": "\u10e1\u10d0\u10ee\u10da\u10d8",
    "an Armenian word": "\u0562\u0561\u0580\u0565\u0582",
    "Hebrew": "\u05e9\u05dc\u05d5\u05dd",
    "Arabic": "\u0645\u0631\u062d\u0628\u0627",
    "Devanagari": "\u0928\u092e\u0938\u094d\u0924\u0947",
    "Thai": "\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35",
    "Ethiopic": "\u1230\u120b\u121d",
    "Japanese with full-width Latin": "\uff21\uff22\uff23\u682a\u5f0f\u4f1a\u793e",
    "Japanese with full-width digits": "\uff12\uff10\uff12\uff14\u5e74",
    "a trade mark sign": "Acme\u2122",
    "a superscript two": "m\u00b2",
    "a circled digit": "step \u2460",
    "a flag": "\U0001f1fa\U0001f1f8",
    "a micro sign": "5\u00b5s",
}


@pytest.mark.parametrize("value", REFUSED.values(), ids=REFUSED.keys())
def test_a_compared_value_in_letters_that_read_as_latin_is_refused(tmp_path, value):
    with pytest.raises(SpecError) as e:
        load_spec(write(tmp_path, CONSTANT=value))
    assert e.value.code == "spec.hidden_text" and e.value.pos.line == 14, e.value


@pytest.mark.parametrize("value", LOADS.values(), ids=LOADS.keys())
def test_recommended_scripts_and_signs_load(tmp_path, value):
    assert load_spec(write(tmp_path, CONSTANT=value))


@pytest.mark.parametrize("table, fmt", [('{"\u2ca5\u2c9f\u2ca3": true}', "json"), ("key,value\n\u2d54\u2d54,true\n", "csv"),
                                        ('{"\u24d4\u24e5\u24d8\u24db.com": true}', "json")])
def test_a_table_key_in_such_letters_is_refused(tmp_path, table, fmt):
    with pytest.raises(SpecError) as e:
        load_spec(write(tmp_path, table=table, fmt=fmt))
    assert e.value.code == "spec.hidden_text", e.value


@pytest.mark.parametrize("role", ["\u2ca5\u2c9f\u2ca3", "\u24d0\u24d3\u24dc\u24d8\u24dd"])
def test_an_enum_value_in_such_letters_is_refused(tmp_path, role):
    with pytest.raises(SpecError) as e:
        load_spec(write(tmp_path, ROLE=role))
    assert e.value.code == "spec.hidden_text", e.value


@pytest.mark.parametrize("message", ["No payments to \u24d4\u24e5\u24d8\u24db.com", "\u24d4\u24e5\u24d8\u24db"])
def test_framed_letters_that_read_as_ascii_are_refused_in_any_string(tmp_path, message):
    with pytest.raises(SpecError) as e:
        load_spec(write(tmp_path, MESSAGE=message))
    assert e.value.code == "spec.hidden_text" and "\u24d4" in str(e.value), e.value


def test_a_coptic_word_in_a_message_is_shown_as_written(tmp_path):
    """A message is shown, not compared: another script's word there changes no decision."""
    assert load_spec(write(tmp_path, MESSAGE="\u2ca1\u2c81\u2ca3 blocked"))


# a rule whose line shows less than it declares: on 5795103 each loaded with the hidden part proved
SMALL = 'rule small "Payments stay small": amount < 1000\n'
HIDDEN_ON_A_LINE = {
    "a second rule after the first on its line": SMALL[:-1] + ' rule big "Big": amount > 5\n',
    "an assumption after a rule on its line": SMALL[:-1] + ' assume pos "Positive": amount > 0\n',
    "300 spaces before an `or`": 'rule small "Payments stay small": amount < 1000' + " " * 300 + "or amount > 0\n",
    "tabs before an `or`": 'rule small "Payments stay small": amount < 1000' + "\t" * 6 + "or amount > 0\n",
    "spaces before a second rule": 'rule small "Payments stay small": amount < 1000' + " " * 80 + 'rule big "Big": amount > 5\n',
    "spaces inside the comparison": 'rule small "Payments stay small": amount <' + " " * 60 + "1000 or amount > 0\n",
}
SHOWN_ON_A_LINE = {
    "a comment aligned far right": 'rule small "Payments stay small": amount < 1000' + " " * 60 + "# dollars\n",
    "a rule continued on the next line": 'rule small "Payments stay small": amount < 1000\n    or amount < 0\n',
    "aligned bodies": 'rule small "Payments stay small":            amount < 1000\n',
}


def with_rules(tmp_path, small):
    path = write(tmp_path)
    path.write_text(path.read_text(encoding="utf-8").replace(SMALL, small), encoding="utf-8")
    return path


@pytest.mark.parametrize("small", HIDDEN_ON_A_LINE.values(), ids=HIDDEN_ON_A_LINE.keys())
def test_a_line_that_hides_part_of_what_it_declares_is_refused(tmp_path, small):
    with pytest.raises(SpecError) as e:
        load_spec(with_rules(tmp_path, small))
    assert e.value.code == "spec.hidden_text" and e.value.pos.line == 16, e.value


@pytest.mark.parametrize("small", SHOWN_ON_A_LINE.values(), ids=SHOWN_ON_A_LINE.keys())
def test_rules_laid_out_in_sight_load(tmp_path, small):
    assert load_spec(with_rules(tmp_path, small))


# digits of another numbering system in an ASCII word (UTS 39: one word, one numbering system): loaded on 5795103
OTHER_DIGITS = {"Devanagari zeros in a domain": "g\u0966\u0966gle.com", "a Bengali zero in a year": "2\u09e624",
                "Thai zeros": "g\u0e50\u0e50gle.com", "an N'Ko zero": "g\u07c0\u07c0gle.com",
                "Arabic-Indic fives": "g\u0665\u0665gle.com", "Osmanya zeros": "g\U000104a0\U000104a0gle.com",
                "a Devanagari zero as a label": "\u0966.com", "Myanmar zeros": "\u1040\u1040.com"}
OWN_DIGITS = {"Arabic-Indic digits alone": "\u0662\u0660\u0662\u0664", "a Hindi year": "\u0938\u0928 \u0968\u0966\u0968\u096a",
              "full-width digits in Japanese": "\u30d0\u30fc\u30b8\u30e7\u30f3\uff12", "ASCII digits": "COVID-19"}


@pytest.mark.parametrize("value", OTHER_DIGITS.values(), ids=OTHER_DIGITS.keys())
def test_digits_of_another_system_in_ascii_text_are_refused(tmp_path, value):
    with pytest.raises(SpecError) as e:
        load_spec(write(tmp_path, CONSTANT=value))
    assert e.value.code == "spec.hidden_text" and "numbering system" in str(e.value), e.value


@pytest.mark.parametrize("value", OWN_DIGITS.values(), ids=OWN_DIGITS.keys())
def test_digits_among_their_own_scripts_text_load(tmp_path, value):
    assert load_spec(write(tmp_path, CONSTANT=value))
