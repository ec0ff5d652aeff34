"""The classifier's work outside the encoder, cut with every output unchanged (S29): cue_vector looks the patterns it
found up in per-bank id sets made once (not every pattern of the bank per text), features builds its float64 rows in
place, and normalise does not read a known word of plain letters again."""
from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from veriguard.enforce import categories, textnorm
from veriguard.enforce.categories import Cues, cue_vector, features
from veriguard.enforce.embedder import lexicon
from tests.conftest import SPECS
from tests.unit.test_classifier_speed_s26 import reference_cue_vector
from tests.unit.test_classifier_speed_s27 import texts

SENTENCES = [
    "Book a hotel in Rome for Friday and rent a car at the airport",
    "What's the Hilton's phone number? Then book it for two nights.",
    "Hertz's number for a car, then rent it",
    "Find the baggage rules for United, and buy a ticket to Denver",
    "Apply for the barista job at Starbucks; also stream The Office",
    "Order a rain jacket from REI. Not the hotel, just the jacket.",
    "check the car wash hours then book a flight to Lima",
    "",
    "ok",
]


@pytest.fixture(scope="module")
def bank():
    return categories.read_bank(SPECS / "mind2web_sc" / "categories.toml")


class Counted(dict):
    """A cue kind (category -> patterns) that counts how often a category's patterns are looked up."""

    reads = 0

    def __getitem__(self, key):
        Counted.reads += 1
        return super().__getitem__(key)


def test_cue_vector_reads_a_banks_pattern_lists_once_not_per_text(bank):
    cues = Cues(Counted(bank.cues.topic), Counted(bank.cues.act), Counted(bank.cues.aside), bank.cues.ask)
    cue_vector(bank.names, cues, SENTENCES[0])
    Counted.reads = 0
    for text in SENTENCES + texts() + list(bank.texts[:200]):
        assert np.array_equal(cue_vector(bank.names, cues, text), reference_cue_vector(bank.names, bank.cues, text)), text
    assert Counted.reads == 0


def test_a_changed_bank_gets_its_own_pattern_ids(bank):
    """The ids are kept per Cues object: a bank whose car topic is another word reads that word, and the first bank
    still reads its own; a smaller list of categories gets its own ids too."""
    zeppelin = (re.compile(r"\bzeppelins?\b", re.IGNORECASE),)
    other = dataclasses.replace(bank.cues, topic={**bank.cues.topic, "car": zeppelin})
    text = "Rent a zeppelin for Friday"
    car = bank.names.index("car")
    first = cue_vector(bank.names, bank.cues, text)
    changed = cue_vector(bank.names, other, text)
    assert first[car] == 0.0 and changed[car] == 1.0
    assert np.array_equal(cue_vector(bank.names, bank.cues, text), first)
    assert categories.cue_ids(bank.names, other)[car][0] == frozenset({id(zeppelin[0])})
    assert categories.cue_ids(bank.names, bank.cues)[car][0] == frozenset(map(id, bank.cues.topic["car"]))
    some = bank.names[1:]
    assert [k[0] for k in categories.cue_ids(some, bank.cues)] == [frozenset(map(id, bank.cues.topic[n])) for n in some]
    for t in SENTENCES:
        assert np.array_equal(cue_vector(some, bank.cues, t), reference_cue_vector(some, bank.cues, t))
        assert np.array_equal(cue_vector(bank.names, other, t), reference_cue_vector(bank.names, other, t))


def test_features_are_the_old_rows_bit_for_bit_built_in_place(bank, monkeypatch):
    rng = np.random.default_rng(29)
    rows = list(bank.texts[:40]) + SENTENCES
    vectors = rng.standard_normal((len(rows), 1152)).astype(np.float32)
    hits = np.stack([cue_vector(bank.names, bank.cues, t) for t in rows]) * 0.37
    want = np.hstack([vectors, hits, np.ones((len(rows), 1), np.float32)]).astype(np.float64)

    def no_copy(*_a, **_k):
        raise AssertionError("rows built by stacking and copying")

    monkeypatch.setattr(categories.np, "hstack", no_copy)
    got = features(bank.names, bank.cues, vectors, rows, 0.37)
    assert got.dtype == np.float64 and got.tobytes() == want.tobytes()
    one = features(bank.names, bank.cues, vectors[3:4], [rows[3]], 0.37)
    assert one.tobytes() == want[3:4].tobytes()
    with pytest.raises(ValueError):
        features(bank.names, bank.cues, vectors[:0], [], 0.37)


def decoded_the_old_way(text, known):
    """decode_words as it was before S29: every word split into its punctuation and word, and read."""
    decoded, residue = [], []

    def sub(m):
        before, word, after = textnorm._core(m.group(0))
        read, odd = textnorm.read_word(word, known, hashtag=before.endswith("#"))
        if odd:
            residue.append(word)
        elif read != word:
            decoded.append(f"{word} -> {read}")
        return before + read + after
    return re.sub(r"\S+", sub, text), decoded, residue


def test_a_known_word_of_plain_letters_is_not_read_again(monkeypatch):
    known = lexicon()
    samples = ["Book a hotel in Boston tonight", "BOOK A HOTEL", "Book a h0tel, then rent a kar", "#bookhotel now",
               "purch a flight", "rooooom for two", "reserv a car", "Übernachtung in Köln", "fl ight to Lima",
               "bookahotelinparisforfriday please"] + texts()[:150]
    for text in samples:
        assert textnorm.decode_words(text, known) == decoded_the_old_way(text, known), text
    reads = []
    plain = textnorm.read_word
    monkeypatch.setattr(textnorm, "read_word", lambda w, k, **kw: reads.append(w) or plain(w, k, **kw))
    assert textnorm.decode_words("Book a hotel in Rome, then rent a h0tel", known)[0] == \
        "Book a hotel in Rome, then rent a hotel"
    assert reads == ["Rome", "h0tel"]
