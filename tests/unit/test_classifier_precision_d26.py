"""The Mind2Web-SC classifier's exact category set (issue 10; helper D26, 2026-11-30, third session): benign texts it
abstained on, every category made uncertain, though nothing in them is unreadable. Each text is our own wording,
written for these tests (none is a held-out task, a bank sentence or a benchmark record).

- Words written together with punctuation and no space ("TL;DR", "short—busy", "economy,PLEASE") were read as a
  disguised word (the normaliser's residue: a symbol between letters that decodes to no known word), and every
  category became uncertain. Now such a word is no disguise when it holds no digit, every piece between its symbols
  is a known word, an acronym or a name, and no run of pieces spells a known word: "ho;tel", "B00K-ING", "CA-00R" and
  models with digits ("XR-2200BT") still abstain. Names joined by a dash ("Toronto–Halifax") are a route, which
  abstains as one joined by an arrow does when no ask reads it.
- A clause that may ask, names no category and holds no pronoun or indefinite ("Water the ferns") was taken to ask on
  an object named elsewhere, so every category read anywhere stayed ("... Separately, is the Hilton Garden Inn in Fargo
  pet friendly?" read as hotel). Now it is read alone for what it asks; "book it", "get us something" still ask on any.
- A wish to know ("I need to know if ...", "we need to find out whether ...") is a question, not an ask.
"""
import pytest

from veriguard.enforce import categories
from veriguard.enforce.categories import CategoryClassifier
from veriguard.enforce.embedder import lexicon
from tests.unit.classifier_probes import BANK


@pytest.fixture(scope="module")
def clf():
    return CategoryClassifier.from_bank(BANK)


# (the exact set expected, text): each abstained on every category, or read one it does not ask, at the start commit
EXACT = [
    (set(), "TL;DR: no errands today, I only want to know when the library opens on Sunday."),
    (set(), "Long story short, TL;DR my sister visits next week. What's a good board game for four players?"),
    ({"car"}, "TL;DR — rent me a minivan at the Tucson airport from April 2 to April 6."),
    (set(), "My week in short—busy. Which planets can I see tonight from Denver?"),
    # an errand with its own object beside a question naming a category: the errand asks no category named elsewhere
    (set(), "Water the ferns. Separately, is the Hilton Garden Inn in Fargo pet friendly?"),
    # a wish to know is a question
    (set(), "I need to know if Enterprise rents to drivers under 21."),
    (set(), "We need to find out when Spotify Premium renews for the family plan."),
]

# (a category that must be found or uncertain, text): disguised words, routes and trips on an unnamed vehicle still
# abstain; an ask on a pronoun or an idiom beside other clauses, and an ask beside a wish to know, are still found
GUARDS = [
    ("hotel", "Reserve me a ho;tel room in Dayton for Friday night."),
    ("flight", "Please B00K-ING a seat to Reno for Monday."),
    ("car", "Rent me a CA-00R at Dulles for the weekend."),
    ("flight", "Book me the hopper from Hilo to Kona on Friday."),
    ("car", "Get me from Boston to Albany and a hotel there for Friday."),
    ("flight", "Put Dad on the Tulsa–Wichita hop tomorrow morning."),
    ("flight", "Get me from Boston to Albany and a hotel there for Friday."),
    # an ask with its own object, or on a pronoun, beside other clauses; a wish to know beside an ask
    ("hotel", "Thanks for yesterday. Lock in the Driskill in Austin for Friday and Saturday."),
    ("car", "Our trip is set. Grab the Camry at the airport on Friday, I land at noon."),
    ("hotel", "The Hyatt by the river looks nice. Water the plants, then book it for Friday."),
    ("hotel", "I need to know if the Hyatt has a room Friday, and if it does, book it."),
]


@pytest.mark.parametrize("gold,text", EXACT)
def test_a_benign_text_is_read_exactly_without_abstaining(clf, gold, text):
    c = clf.classify(text)
    assert set(c.labels) == gold and not c.uncertain, c.reason


@pytest.mark.parametrize("gold,text", GUARDS)
def test_a_disguised_word_a_route_or_an_ask_beside_other_clauses_is_still_found(clf, gold, text):
    c = clf.classify(text)
    assert gold in c.labels | c.uncertain, c.reason


@pytest.mark.parametrize("word,apart", [
    ("TL;DR", True), ("Seattle–Spokane", True), ("economy,PLEASE", True), ("short—busy", True),
    ("ho;tel", False), ("B00K-ING", False), ("CA-00R", False), ("REN-TAL-CAR", False), ("fl;ights", False),
    ("XR-2200BT", False), ("cv_2025.pdf", False),   # digits: a model or a file, what it names is unread
])
def test_words_run_together_are_told_from_a_disguised_word(word, apart):
    assert categories.run_together(word, lexicon()) is apart
