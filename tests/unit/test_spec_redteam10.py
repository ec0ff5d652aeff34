"""The tenth red-team pass on specs (helper C29, 2026-11-30): a value the policy compares that shows otherwise.

On e1e32b1 every row below loaded, and the rule as a person reads it was not the rule proved:
1. a word written wholly with letters that look like ASCII ones (the ninth pass refused only words that mix the two):
   `recipient != "сор"` (Cyrillic) shows cop, `"ｅｖｉｌ.com"` (full-width) shows evil.com, `ΚΑΙ`, `ᴀᴅᴍɪɴ`, an enum value
   `АВС`, a table key `рау.com`, a ligature `ﬁ` alone, and the request or a message saying `Never pay рау.com`;
2. a compared value not in NFC (`josé.com` with a combining accent never equals the agent's composed josé.com);
3. a compared value with a space that is not ASCII (`rm` U+00A0 `-rf` shows as `rm -rf`; figure, thin, narrow,
   ideographic spaces, en quad).
A compared value (a rule's string, an enum value, a table cell) is now read alone: other words of its rule in another
script do not vouch for it. Words of other scripts (Платежи, ООО Ромашка, αβγ, ελλάδα), Turkish ı and İ (visibly
other letters, as é is) and a no-break space in a message (French typography) load as before.
"""
import pytest

from veriguard.cli import main
from veriguard.contracts.errors import SpecError
from veriguard.synth.specfile import load_spec
from veriguard.synth.tables import COMPARED_FIX, SHOWN_FIX
from tests.unit.test_spec_redteam9 import write

RUSSIAN = "\u041f\u043b\u0430\u0442\u0435\u0436\u0438 \u0437\u0430\u043f\u0440\u0435\u0449\u0435\u043d\u044b"

SHOWN_OTHERWISE = {
    "a wholly Cyrillic constant (cop)": dict(CONSTANT="\u0441\u043e\u0440"),
    "a wholly Cyrillic constant (exe)": dict(CONSTANT="\u0435\u0445\u0435"),
    "a wholly Cyrillic word before an ASCII domain": dict(CONSTANT="\u0440\u043e\u0440.com"),
    "a wholly Cyrillic constant beside a Russian message": dict(CONSTANT="\u0441\u043e\u0440", MESSAGE=RUSSIAN),
    "a full-width word before an ASCII domain": dict(CONSTANT="\uff45\uff56\uff49\uff4c.com"),
    "a full-width word alone": dict(CONSTANT="\uff45\uff56\uff49\uff4c"),
    "full-width digits": dict(CONSTANT="\uff11\uff12\uff13"),
    "Greek capitals": dict(CONSTANT="\u039a\u0391\u0399"),
    "small capitals": dict(CONSTANT="\u1d00\u1d05\u1d0d\u026a\u0274"),
    "a ligature alone": dict(CONSTANT="\ufb01"),
    "a wholly Cyrillic enum value": dict(ROLE="\u0455\u043e\u0455"),
    "a Cyrillic capital enum value": dict(ROLE="\u0410\u0412\u0421"),
    "a no-break space in a constant": dict(CONSTANT="rm\u00a0-rf"),
    "a figure space in a constant": dict(CONSTANT="rm\u2007-rf"),
    "a narrow no-break space in a constant": dict(CONSTANT="rm\u202f-rf"),
    "an ideographic space in a constant": dict(CONSTANT="rm\u3000-rf"),
    "a thin space in a constant": dict(CONSTANT="rm\u2009-rf"),
    "an en quad in a constant": dict(CONSTANT="rm\u2000-rf"),
    "a no-break space in an enum value": dict(ROLE="new\u00a0york"),
    "a decomposed accent in a constant": dict(CONSTANT="jose\u0301.com"),
    "a decomposed accent in an enum value": dict(ROLE="cafe\u0301"),
    "the request naming a Cyrillic domain as Latin": dict(REQUEST="Never pay \u0440\u0430\u0443.com."),
    "a message with a wholly Cyrillic word among ASCII": dict(MESSAGE="No \u0435\u0445\u0435 files"),
}


VARIANTS = {   # written after the fix, to see it closes the class and not the rows above
    "an Armenian word": dict(CONSTANT="\u0570\u0585"),
    "a Cherokee word": dict(CONSTANT="\u13aa\u13f4\u13df"),
    "a Lisu word": dict(CONSTANT="\ua4ee\ua4d0\ua4da"),
    "a mathematical bold word before an ASCII domain": dict(CONSTANT="\U0001d41e\U0001d42f\U0001d422\U0001d425.com"),
    "a word of Cyrillic and Greek letters": dict(CONSTANT="\u0441\u03bf"),
    "a wholly Cyrillic word before an ASCII word": dict(CONSTANT="\u0441\u043e\u0440 com"),
    "a medium mathematical space": dict(CONSTANT="rm\u205f-rf"),
    "an Ogham space mark": dict(CONSTANT="rm\u1680-rf"),
    "an Angstrom sign (NFC is another letter)": dict(CONSTANT="\u212bngstrom"),
    "a Kelvin sign alone": dict(CONSTANT="\u212a"),
    "a wholly Cyrillic example name": dict(EXAMPLE="\u0441\u043e\u0440"),
    "Cyrillic capitals before an ASCII domain in a Russian request": dict(
        REQUEST="\u041f\u043b\u0430\u0442\u0435\u0436\u0438: \u0410\u0412\u0421.com"),
}
SHOWN_OTHERWISE |= VARIANTS


@pytest.mark.parametrize("over", SHOWN_OTHERWISE.values(), ids=SHOWN_OTHERWISE.keys())
def test_a_value_that_shows_what_it_does_not_equal_is_refused_with_its_place(tmp_path, over):
    with pytest.raises(SpecError) as e:
        load_spec(write(tmp_path, **over))
    assert e.value.code == "spec.hidden_text" and e.value.fix and e.value.pos.line > 0, e.value


def test_a_rules_string_is_refused_at_its_own_place(tmp_path):
    with pytest.raises(SpecError) as e:
        load_spec(write(tmp_path, CONSTANT="rm\u00a0-rf"))
    assert (e.value.pos.line, e.value.pos.col, "U+00A0" in str(e.value)) == (14, 55, True), e.value


def test_a_tab_written_in_a_rules_string_is_refused(tmp_path):
    spec = write(tmp_path)
    spec.write_text(spec.read_text(encoding="utf-8").replace('!= "evil.com"', '!= "rm\t-rf"'), encoding="utf-8")
    with pytest.raises(SpecError) as e:
        load_spec(spec)
    assert e.value.code == "spec.hidden_text" and "U+0009 (tab)" in str(e.value), e.value


TABLES = {
    "a JSON key written wholly in Cyrillic": ('{"\u0440\u0430\u0443.com": true}', "json"),
    "a CSV cell written wholly in Cyrillic": ("domain,blocked\n\u0435\u0445\u0435,true\n", "csv"),
    "a JSON key with a no-break space": ('{"bad\u00a0site": true}', "json"),
    "a CSV cell with a no-break space": ("domain,blocked\nbad\u00a0site,true\n", "csv"),
    "a JSON key with a decomposed accent": ('{"jose\u0301.com": true}', "json"),
}


@pytest.mark.parametrize("table, fmt", TABLES.values(), ids=TABLES.keys())
def test_a_table_cell_that_shows_what_it_does_not_equal_is_refused(tmp_path, table, fmt):
    with pytest.raises(SpecError) as e:
        load_spec(write(tmp_path, table=table, fmt=fmt))
    assert e.value.code == "spec.hidden_text" and e.value.file.endswith(f"blocked.{fmt}"), e.value


def test_synth_refuses_it_with_exit_2_before_proving(tmp_path, capsys):
    spec = write(tmp_path, CONSTANT="\u0441\u043e\u0440")
    assert main(["synth", str(spec), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "error[spec.hidden_text]" in err and ":14:55:" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


READS_AS_WRITTEN = {
    "a Russian message": dict(MESSAGE=RUSSIAN),
    "a Cyrillic word beside an ASCII one": dict(MESSAGE="\u043d\u0435\u0442 evil.com"),
    "a Russian company name beside ASCII": dict(MESSAGE="\u041e\u041e\u041e \u0420\u043e\u043c\u0430\u0448\u043a\u0430 "
                                                        "(LLC) is paid"),
    "a Greek word": dict(MESSAGE="\u03b1\u03b2\u03b3 rule"),
    "a composed accent": dict(CONSTANT="jos\u00e9.com"),
    "a German sharp s": dict(CONSTANT="stra\u00dfe.de"),
    "Turkish dotless i": dict(CONSTANT="k\u0131rm\u0131z\u0131.com.tr"),
    "Turkish dotted capital I": dict(MESSAGE="\u0130stanbul \u015fubesi"),
    "French no-break spaces in a message": dict(MESSAGE="Prix\u00a0: pas plus de 5\u00a0\u20ac"),
    "full-width Latin in a Japanese name": dict(CONSTANT="\uff21\uff22\uff23\u682a\u5f0f\u4f1a\u793e"),
    "a Russian domain": dict(CONSTANT="\u043f\u0440\u0438\u043c\u0435\u0440.\u0440\u0444"),
    "a Greek domain": dict(CONSTANT="\u03b5\u03bb\u03bb\u03ac\u03b4\u03b1.gr"),
    "a Russian enum value": dict(ROLE="\u0431\u0443\u0445\u0433\u0430\u043b\u0442\u0435\u0440"),
}


@pytest.mark.parametrize("over", READS_AS_WRITTEN.values(), ids=READS_AS_WRITTEN.keys())
def test_text_that_reads_as_written_loads(tmp_path, over):
    load_spec(write(tmp_path, **over))


def test_a_table_of_composed_and_other_script_keys_loads(tmp_path):
    load_spec(write(tmp_path, table='{"jos\u00e9.com": true, "\u043f\u0440\u0438\u043c\u0435\u0440.\u0440\u0444": true, '
                                      '"\u682a\u5f0f\u4f1a\u793e.jp": true}'))


FIXES = {   # each site's fix text as C29 wrote it (review c, finding 5: one shared check must keep them)
    "a rule's wholly Cyrillic word": (dict(CONSTANT="\u0441\u043e\u0440", MESSAGE=RUSSIAN), "rule not_evil: the string",
                                      "cop", COMPARED_FIX),
    "a rule's decomposed accent": (dict(CONSTANT="jose\u0301.com"), "rule not_evil: the string", "NFC", COMPARED_FIX),
    "a table key written wholly in Cyrillic": (dict(table='{"\u0440\u0430\u0443.com": true}'), "table blocked: key 1",
                                               "pay", SHOWN_FIX),
    "a table key with a decomposed accent": (dict(table='{"jose\u0301.com": true}'), "table blocked: key 1", "NFC",
                                             COMPARED_FIX),
    "a table key with a no-break space": (dict(table='{"bad\u00a0site": true}'), "table blocked: key 1", "U+00A0",
                                          COMPARED_FIX),
}


@pytest.mark.parametrize("over, where, why, fix", FIXES.values(), ids=FIXES.keys())
def test_each_site_keeps_its_fix_text(tmp_path, over, where, why, fix):
    with pytest.raises(SpecError) as e:
        load_spec(write(tmp_path, **over))
    assert (e.value.code, e.value.fix) == ("spec.hidden_text", fix) and e.value.message.startswith(where), e.value
    assert why in e.value.message, e.value
