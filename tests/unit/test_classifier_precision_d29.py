"""The Mind2Web-SC classifier's exact category set (issue 10; helper D29, 2026-11-30, sixth session). Each text is our
own wording, written for these tests (none is a held-out task, a bank sentence or a benchmark record).

- EXACT: asks worded away from the imperative (an act told of the agent in the third person, wanted done to its object,
  or on a vehicle or an airline the asks did not name; a dare, "I bet you can't find ..."). At the start commit
  (e1e32b1) each was read with its category uncertain (alone, or every category in doubt); the act read as asked gives
  the one category, without doubt.
- NOTHING_TO: "nothing to <act>" says there is no act to do: the categories its clause names, else those whose act it
  names, are set aside unless asked elsewhere. A refusal of part of the ask ("Don't book the return leg, only the
  outbound") or beside an act still asked ("No need to buy anything yet, just add ... to my wish list") is not such a
  statement (it read as a refusal, five of v5's positives were lost: the broader form was rejected)."""
import pytest

from veriguard.enforce.categories import CategoryClassifier
from tests.unit.classifier_probes import BANK


@pytest.fixture(scope="module")
def clf():
    return CategoryClassifier.from_bank(BANK)


EXACT = [
    ({"shop"}, "OBJECTIVE: Assistant buys 3 x USB-C hubs from Argos online, delivered by Tuesday."),
    ({"shop"}, "ORDERS: Assistant procures 2 x ergonomic office chairs from IKEA online, invoice to facilities."),
    ({"shop"}, "Please have a yoga mat and two foam blocks bought from Sweaty Betty online before Friday."),
    ({"car"}, "Rent a minibus for the choir trip to Cardiff on Saturday."),
    ({"flight"}, "Get us on Blue Lagoon Airways from Glasgow to Reykjavik, 2 adults, 14 May."),
    # a dare asks the act it dares; at the start the pronoun ("reserve it") found no object and abstained
    ({"hotel"}, "My ferry docks at midnight and I bet you can't find a room near Dover port under £60. If you manage, "
                "reserve it for the 8th."),
]


@pytest.mark.parametrize("gold,text", EXACT)
def test_exact_set_without_doubt(clf, gold, text):
    c = clf.classify(text)
    assert c.labels == gold and not c.uncertain, c.reason


# "nothing to <act>": a statement that there is no act to do sets aside the categories its clause names, else those
# whose act it names (the first two were read as their topic at the start commit, the third with hotel beside car);
# the last is a control: the hotel is asked, so it stays
NOTHING_TO = [
    (set(), "Netflix raised the price again. Find the new monthly figure, nothing to watch."),
    (set(), "Our Avis rental ran two days over. Find the late-return fee in their terms; nothing to rent."),
    ({"car"}, "I need wheels at Denver airport Friday to Sunday, nothing to book for the hotel."),
    ({"hotel"}, "Book the Premier Inn in Derby for Friday night, nothing to rent."),
]


@pytest.mark.parametrize("gold,text", NOTHING_TO)
def test_nothing_to_do_sets_the_act_aside(clf, gold, text):
    c = clf.classify(text)
    assert c.labels | c.uncertain == gold, c.reason


# a refusal of part of the ask, or beside an act still asked, is no statement that nothing is to be done: kept
@pytest.mark.parametrize("gold,text", [
    ("flight", "Don't book the return leg, only the outbound: Gatwick to Lisbon on TAP, 22 May, one way."),
    ("shop", "No need to buy anything yet, just add the cast iron skillet to my Amazon wish list."),
])
def test_a_refusal_keeps_the_category(clf, gold, text):
    c = clf.classify(text)
    assert gold in c.labels | c.uncertain, c.reason
