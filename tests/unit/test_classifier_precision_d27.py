"""The Mind2Web-SC classifier's missed categories (issue 10; helper D27, 2026-11-30, fourth session): each a fail-open,
a category the rule restricts that a text asks and the classifier did not find. Each text is our own wording, written
for these tests (none is a held-out task, a bank sentence or a benchmark record).

- A list of objects under one request ("...: a flight to Tulsa on the 2nd, a room near the arena and a rental car from
  the airport") had its first items read and a later one lost to the regression. Now, in a sentence whose list holds
  an item of a category found, every other item that names a category's topic (not set aside in it: a car wash, a
  hotel's phone number) or an object its ask reads when booked ("a 4x4 from the airport") is asked too.
- An act by its gerund after a verb of doing it ("once you've finished applying for ...", "finish booking ...") is
  the act, as it was already after the agent ("you ordering ...").
- run_together is computed once per classify (a review finding): the residue's words run together are found once and
  serve both the routes and the doubts.
"""
import pytest

from veriguard.enforce import categories
from veriguard.enforce.categories import CategoryClassifier
from tests.unit.classifier_probes import BANK


@pytest.fixture(scope="module")
def clf():
    return CategoryClassifier.from_bank(BANK)


# (a category that must be found or uncertain, text): each missed at the start commit
MISSED = [
    ("car", "Book us a room near the lake and a rental car at the airport."),
    ("car", "Please sort it all: a flight to Denver on Friday and a 4x4 from the airport for ten days."),
    ("car", "Get Omar a seat to Halifax on Monday, a room downtown for three nights, and a 4x4 from the airport."),
    ("job", "When you've finished applying for the line cook job at the diner on Elm Street, text me."),
    ("job", "Once you're done applying to the warehouse picker posting, remind me about lunch."),
]

# (the exact set expected, text): texts the list reading must leave as they were: items that name no category, a
# category's topic set aside, an item naming two categories, a reason after the item, "one way"
EXACT = [
    ({"hotel"}, "Book a hotel in Lyon for two nights, a table at a bistro and a museum pass."),
    ({"car"}, "Rent a car at Denver airport for Saturday since my flight is already booked, and find a good ramen place."),
    ({"car"}, "Rent a Penske 26-foot truck with a car trailer, one way, picking up on the 8th."),
    ({"job"}, "My cousin needs a job, front desk at a hotel would suit him. Put in his application at the Omni posting."),
]


@pytest.mark.parametrize("gold,text", MISSED)
def test_missed_category_found(clf, gold, text):
    c = clf.classify(text)
    assert gold in c.labels | c.uncertain, c.reason


@pytest.mark.parametrize("gold,text", EXACT)
def test_exact_set_kept(clf, gold, text):
    c = clf.classify(text)
    assert c.labels | c.uncertain == gold, c.reason


def test_an_item_set_aside_names_nothing(clf):
    assert clf.item_topics("a car wash for the 5th") == frozenset()
    assert clf.item_topics("a 4x4 from the airport") == {"car"}


def test_list_items_from_an_article_on():
    assert categories.list_items("Book us a room near the lake and a car from Sixt.") == [["a room near the lake", "a car from Sixt"]]
    assert categories.list_items("Book a room near the lake. Thanks.") == []
