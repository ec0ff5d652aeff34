"""A word that mixes ASCII letters with a letter of a script that does not mix with Latin is spec.hidden_text, whatever
the letter's shape (the lead's variants after C29's pass, 2026-11-30: Coptic ⲟ in `gⲟⲟgle.com` loaded, since no list of
look-alikes held it). Latin letters, Han, kana and Hangul beside ASCII, and other scripts' own words, load."""
import pytest

from veriguard.contracts.errors import SpecError
from veriguard.synth.specfile import load_spec
from tests.unit.test_spec_redteam9 import write

MIXED = {
    "Coptic o's inside an ASCII domain": "g\u2c9f\u2c9fgle.com",
    "a Tifinagh yar for an o": "g\u2d54\u2d54gle.com",
    "a Glagolitic letter beside ASCII": "pay\u2c30.com",
    "an Ethiopic letter beside ASCII": "ev\u12d0l.com",
    "an Osage letter beside ASCII": "bad\U000104ea.com",
}
LOADS = {
    "a Latin accent": "z\u00fcrich.com",
    "Latin with katakana": "T\u30b7\u30e3\u30c4",
    "Latin with Han": "\u6771\u4eacshop",
    "a Georgian word alone": "\u10e1\u10d0\u10ee\u10da\u10d8",   # a Coptic one is refused since C30's pass
}


@pytest.mark.parametrize("value", MIXED.values(), ids=MIXED.keys())
def test_a_word_mixing_ascii_letters_with_another_script_is_refused(tmp_path, value):
    with pytest.raises(SpecError) as e:
        load_spec(write(tmp_path, CONSTANT=value))
    assert e.value.code == "spec.hidden_text" and "another script" in str(e.value), e.value


@pytest.mark.parametrize("value", LOADS.values(), ids=LOADS.keys())
def test_scripts_that_mix_with_latin_and_words_of_their_own_load(tmp_path, value):
    assert load_spec(write(tmp_path, CONSTANT=value))
