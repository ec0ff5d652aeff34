"""Obfuscation never helps a task past the category classifier: invisible characters inserted into a bank
sentence, or its letters swapped for look-alikes, read as the clean sentence; and no text at all makes
the normaliser or the classifier raise."""
from collections import defaultdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veriguard.enforce.categories import CategoryClassifier
from veriguard.enforce.textnorm import _LOOKALIKE, normalise, readable
from tests.conftest import SPECS, examples

BANK = SPECS / "mind2web_sc" / "categories.toml"
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\u00ad", "\ufeff", "\u202e", "\u202c", "\u2066", "\u2069",
             "\u2062", "\u180e", "\u034f", "\ufe0f", "\ufe00", "\U000e0020", "\U000e0068", "\U000e0101", "\u3164",
             "\u115f", "\u2800"]
LOOKALIKES: dict[str, list[str]] = defaultdict(list)
for code, latin in _LOOKALIKE.items():
    if len(latin) == 1:
        LOOKALIKES[latin].append(chr(code))


@pytest.fixture(scope="module")
def clf():
    return CategoryClassifier.from_bank(BANK)


@st.composite
def obfuscated(draw, sentences):
    """(clean, obfuscated): invisible characters inserted anywhere, letters swapped for look-alikes, at
    drawn rates (one random stream per example keeps generation fast)."""
    clean = draw(st.sampled_from(sentences))
    swap, insert = draw(st.floats(0, 1)), draw(st.floats(0, 0.6))
    rnd = draw(st.randoms(use_true_random=False))
    out = []
    for ch in clean:
        if ch in LOOKALIKES and rnd.random() < swap:
            ch = rnd.choice(LOOKALIKES[ch])
        while rnd.random() < insert:
            ch += rnd.choice(INVISIBLE)
        out.append(ch)
    return clean, "".join(out)


def test_obfuscated_bank_sentences_read_as_the_clean_ones(clf):
    @settings(max_examples=examples(200), deadline=None, database=None)
    @given(obfuscated(clf.bank.texts))
    def check(pair):
        clean, dirty = pair
        assert normalise(dirty, clf.known).text == normalise(clean, clf.known).text

    check()


def test_obfuscation_never_removes_a_category(clf):
    positives = [t for t, labels in zip(clf.bank.texts, clf.bank.labels) if labels]

    @settings(max_examples=examples(60), deadline=None, database=None)
    @given(obfuscated(positives))
    def check(pair):
        clean, dirty = pair
        before, after = clf.classify(clean), clf.classify(dirty)
        assert before.labels | before.uncertain <= after.labels | after.uncertain, (dirty, after.reason)

    check()


ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=300) | \
    st.lists(st.sampled_from(["h", "0", "t", "3", "l", " ", ".", "-", "a", "1", "@", "$", "!", "|", "%2", "&#",
                              ";", "\u200b", "\u0435", "\U0001F3E8", "book", "hotel", "\n"]), max_size=60).map("".join)


@settings(max_examples=examples(500), deadline=None, database=None)
@given(ANY_TEXT)
def test_normalised_text_is_always_readable(text):
    n = normalise(text, frozenset({"hotel", "book", "a"}))
    assert all(readable(c) for c in n.text)


def test_the_classifier_answers_any_text(clf):
    @settings(max_examples=examples(80), deadline=None, database=None)
    @given(ANY_TEXT)
    def check(text):
        got = clf.classify(text)
        assert got.labels | got.uncertain <= set(clf.bank.names)
        assert got.abstained or not got.uncertain
        assert got.readable or got.uncertain == set(clf.bank.names)

    check()
