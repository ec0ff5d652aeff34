"""The Mind2Web-SC classifier's exact category set (issue 10; helper D28, 2026-11-30, fifth session). Each text is
our own wording, written for these tests (none is a held-out task, a bank sentence or a benchmark record).

- A question put to other people ("Does anybody know ...", "Has anyone here stayed at ...", "Can someone recommend
  ...") asks the reader, not the agent: it asks no act unless an act stands in it ("Can someone book ...").
- An act on a pronoun ("buy it", "apply to them") whose category is read from the act's own words only made every
  category uncertain; when the text names that category's topic outside the act too ("a rain jacket ... buy it"), the
  reading is not the act's words alone: the categories the text names are what the pronoun may stand on.
"""
import pytest

from veriguard.enforce.categories import CategoryClassifier, asks_no_act
from tests.unit.classifier_probes import BANK


@pytest.fixture(scope="module")
def clf():
    return CategoryClassifier.from_bank(BANK)


# (the exact set expected, text): the first read otherwise at the start commit; the last three were exact there
# already (another reading caught them) and must stay so
EXACT = [
    ({"job"}, "Pick two barista openings in Leeds paying over 12 pounds an hour and apply to them."),
    (set(), "My Spotify family plan renewed at a higher price last week. Explain why."),
    (set(), "Does anybody know the check-in time at the Hyatt Regency in Denver?"),
    (set(), "Has anyone here flown Condor's premium economy to Seattle? Thinking about it for next summer."),
]

# (a category that must stay found or uncertain, text): a question to others that holds an act, and a pronoun whose
# object the text does not name
KEPT = [
    ("hotel", "Can someone book me a double room at the Hyatt in Denver for Friday?"),
    ("car", "Anyone got a rental car free at Logan this weekend? Reserve it for me."),
    ("flight", "Does anybody know if there is a seat left on the 6 pm to Dublin? If so book it."),
]


@pytest.mark.parametrize("gold,text", EXACT)
def test_exact_set(clf, gold, text):
    c = clf.classify(text)
    assert c.labels | c.uncertain == gold, c.reason


@pytest.mark.parametrize("gold,text", KEPT)
def test_category_kept(clf, gold, text):
    c = clf.classify(text)
    assert gold in c.labels | c.uncertain, c.reason


@pytest.mark.parametrize("clause", ["Does anyone know the opening hours of the Mazda dealer on Route 4",
                                    "Has anybody here rented from Sixt in Nice", "Anyone tried the new Pixar film"])
def test_a_question_to_others_asks_nothing(clause):
    assert asks_no_act(clause) == "a question to others"


@pytest.mark.parametrize("clause", ["Can someone book me a room in Oslo", "Someone rent me a van for Sunday",
                                    "Does anyone have any rooms left for tonight"])
def test_a_question_to_others_with_an_act_asks(clause):
    assert asks_no_act(clause) == ""


def test_an_act_on_a_pronoun_with_nothing_named_still_abstains(clf):
    c = clf.classify("Sounds good to me, grab it.")
    assert c.abstained and set(c.uncertain) == set(clf.names), c.reason

