"""The literal prefilter, cheaper and stricter, every answer unchanged (S33): a pattern is kept only when the text holds
a string of EVERY requirement its outer sequence gives (`textnorm.all_required_literals`), not only of the one indexed;
`folded` is str.lower on ASCII text (the fold map changes only A-Z there) instead of a translate through a dict; the
GRAM-grams of a text are made once for the four indices of a bank (`textnorm.text_grams`). classify's whole output on
v1-v19, both evasion splits and the benchmark was compared bit for bit with the start commit's (see the README)."""
from __future__ import annotations

import re
import random
import string

from veriguard.enforce import categories, textnorm
from veriguard.enforce.categories import CategoryClassifier, act_clauses
from veriguard.enforce.embedder import Embedder
from tests.conftest import SPECS
from tests.unit.test_classifier_speed_p24 import TINY
from tests.unit.test_classifier_speed_s26 import bank_patterns
from tests.unit.test_classifier_speed_s27 import bank_index, texts
from tests.unit.test_classifier_speed_s29 import SENTENCES
from tests.unit.test_classifier_speed_s31 import WRITTEN

ODD = ["HOTEL \u212AITCHEN", "\u0130nn near the lake", "\u017Fuite for two", "Book a h\u00f4tel", "ｂｏｏｋ a room",
       "", "A", "AbC-12 ~`^_\\|{}[]\x7f\x00\t\n"]


class CountingFold(dict):
    """The fold map, counting the characters looked up in it (str.translate asks a dict subclass item by item)."""

    lookups = 0

    def __getitem__(self, key):
        CountingFold.lookups += 1
        return super().__getitem__(key)


def by_translate(text: str) -> str:
    return text.translate(textnorm._FOLD)


def test_folded_is_the_fold_map_and_plain_ascii_is_not_looked_up_in_it(monkeypatch):
    rng = random.Random(33)
    cases = [chr(c) for c in range(128)] + texts() + WRITTEN + SENTENCES + ODD + [
        "".join(rng.choice(string.printable) for _ in range(rng.randint(0, 60))) for _ in range(500)]
    for text in cases:
        assert textnorm.folded(text) == by_translate(text), text
    monkeypatch.setattr(textnorm, "_FOLD", CountingFold(textnorm._FOLD))
    CountingFold.lookups = 0
    assert textnorm.folded("Book a HOTEL in Rome, s33!") == "book a hotel in rome, s33!"
    assert CountingFold.lookups == 0
    assert textnorm.folded("\u212Aitchen \u017Fuite") == "kitchen suite" and CountingFold.lookups > 0


def test_the_indices_of_a_bank_share_one_gram_set_per_text():
    cues = categories.read_bank(SPECS / "mind2web_sc" / "categories.toml").cues
    indices = [cues.feature_index, cues.named_index, cues.topic_index, cues.ask_index]
    textnorm._GRAMS.clear()
    low = textnorm.folded("Book a hotel in Rome and rent a car there, s33")
    for index in indices:
        index._recent.clear()
        index.matchable(low)
    assert list(textnorm._GRAMS) == [(textnorm.LiteralIndex.GRAM, low)]
    assert textnorm.text_grams(low, 3) is textnorm._GRAMS[(3, low)]
    for i in range(textnorm.RECENT_GRAMS * 2 + 5):
        textnorm.text_grams(f"text {i}", 3)
    assert len(textnorm._GRAMS) <= textnorm.RECENT_GRAMS
    assert textnorm.text_grams("ab", 3) == set() and textnorm.text_grams("abcd", 3) == {"abc", "bcd"}


def test_matchable_is_every_pattern_of_a_literal_the_text_holds_with_the_grams_shared():
    """What matchable gives through the shared gram sets: by definition, the patterns of every literal the folded text
    holds (and those with none); asked in any order of indices and texts, the answers are the same."""
    index, _ = bank_index()
    other, _ = bank_index()
    for text in texts() + WRITTEN + SENTENCES + ODD:
        low = textnorm.folded(text)
        want = dict(index.always)
        for s, ps in index.needing:
            if s in low:
                want.update(ps)
        want = {i: p for i, p in want.items() if all(any(s in low for s in r) for r in index.also.get(i, ()))
                and (" " in low or i not in index.spaced)}
        other.matchable(low)   # the gram set is made by another index first
        assert dict(index.matchable(low)) == want, text


def test_classify_gives_the_same_outputs_without_the_shortcuts(tmp_path, monkeypatch):
    bank = tmp_path / "tiny.toml"
    bank.write_text(TINY)
    clf = CategoryClassifier.from_bank(bank, Embedder())
    sentences = WRITTEN + SENTENCES + ODD + [
        "Book a Hotel in Rome, then RENT a car; what's the weather?", "hire a van and buy it", "\u017Fuite in Oslo"]
    fast = [clf.classify(t) for t in sentences]

    def grams_unkept(folded_text: str, g: int) -> set[str]:
        return {folded_text[i:i + g] for i in range(len(folded_text) - g + 1)}

    monkeypatch.setattr(textnorm, "text_grams", grams_unkept)
    monkeypatch.setattr(textnorm, "folded", by_translate)
    monkeypatch.setattr(categories, "folded", by_translate)
    for index in (clf.model.cues.feature_index, clf.model.cues.named_index, clf.model.cues.topic_index,
                  clf.model.cues.ask_index):
        index._recent.clear()
        index._recent_sets.clear()
        monkeypatch.setattr(index, "also", {})   # each pattern filtered by its indexed literal alone, as before
    categories.ask_unnamed.cache_clear()
    categories.asks_no_act.cache_clear()
    assert [clf.classify(t) for t in sentences] == fast


def test_every_requirement_of_the_outer_sequence():
    def every(pattern):
        return textnorm.all_required_literals(re.compile(pattern, re.IGNORECASE))
    assert every(r"\bbook\b.{0,20}\bhotels?\b") == (frozenset({"book"}), frozenset({"hotel"}))
    assert every(r"(?:rent|hire)\s+(?:a\s+)?(?:car|van)") == (frozenset({"rent", "hire"}), frozenset({"car", "van"}))
    assert every(r"(?<!not )buy") == (frozenset({"buy"}),) and every(r"\w+") == ()
    assert textnorm.required_literals(re.compile(r"\bbook\b.{0,20}\bhotels?\b")) == {"hotel"}


def test_a_pattern_is_kept_only_where_the_text_meets_all_its_requirements():
    pattern = re.compile(r"\bbook\b.{0,20}\bhotels?\b", re.IGNORECASE)
    index = textnorm.LiteralIndex((pattern,))
    assert index.matchable(textnorm.folded("Hotel: book a flight")) == {id(pattern): pattern}
    assert index.matchable(textnorm.folded("book a flight to Rome")) == {}
    assert index.matchable(textnorm.folded("a hotel, no flight")) == {}
    assert index.candidates(textnorm.folded("BOOK the HOTEL")) == {pattern}


def test_the_patterns_left_out_by_an_index_match_nowhere():
    """The bank's cues, and the objectless and no-ask forms (their prefilter is proposed, report S33): a pattern left out
    does not match, on the tasks, their clauses, and their spellings with the letters that fold to s, k and i."""
    forms = bank_patterns()
    index = textnorm.LiteralIndex(forms)
    assert len(index.always) <= 3 and len(index.also) > 100
    odd = str.maketrans({"s": "\u017F", "k": "\u212A", "i": "\u0130"})
    skipped = 0
    for text in texts()[::3] + WRITTEN + SENTENCES + ODD:   # a third of the tasks: s26 reads them all, whole
        for t in {text, *act_clauses(text), text.translate(odd)}:
            may = index.matchable(textnorm.folded(t))
            for p in forms:
                if id(p) not in may:
                    skipped += 1
                    assert p.search(t) is None, (p.pattern, t)
    assert skipped > 30_000


def old_matchable(index, every, low):
    """matchable as it was before the space requirement was split off (review mend): each pattern's other
    requirements, in the parser's order with repeats, checked one by one."""
    kept = index.also, index.spaced
    index.also, index.spaced = {}, frozenset()   # the patterns of the literals the text holds, in matchable's order
    index._recent.clear()
    try:
        got = dict(index.matchable(low))
    finally:
        index.also, index.spaced = kept
        index._recent.clear()
    for i in list(got):
        needs = every[i]
        also = tuple(r for r in needs if r is not textnorm._best(needs)) if len(needs) > 1 else ()
        if not all(any(s in low for s in r) for r in also):
            del got[i]
    return got


def test_the_space_requirement_read_once_leaves_every_answer_as_it_was():
    """`spaced` (a space looked for once a text) and `also` (the other requirements, each once, fewest strings first)
    keep the same patterns, in the same order, as every requirement checked in turn: on texts with and without a
    space, the bank's cues and the objectless and no-ask forms."""
    forms = bank_patterns()
    cues_index, cues = bank_index()
    for index, patterns in ((cues_index, cues), (textnorm.LiteralIndex(forms), forms)):
        every = {id(p): textnorm.all_required_literals(p) for p in patterns}
        assert index.spaced and all(textnorm._SPACE not in r for r in index.also.values())
        assert all(list(r) == sorted(r, key=len) and len(set(r)) == len(r) for r in index.also.values())
        spaceless = 0
        for text in texts() + WRITTEN + SENTENCES + ODD:
            for t in {text, *act_clauses(text), text.replace(" ", ""), text.replace(" ", "\n")}:
                low = textnorm.folded(t)
                spaceless += " " not in low
                assert list(index.matchable(low).items()) == list(old_matchable(index, every, low).items()), t
        assert spaceless > 500
