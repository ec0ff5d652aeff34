"""The Mind2Web-SC classifier's recall on asks that name no act on a flight, a car or a cart (issue 10; helper D30,
2026-11-30, seventh session). Each text is our own wording, written for these tests (none is a held-out task, a bank
sentence or a benchmark record).

- A seat or a ticket with a route is the flight asked, with or without a verb before it: "the tickets home from X to
  Y", "one seat home to X", "a ticket X to Y", "seats to X fae Y" (not a train, bus, coach or ferry ticket).
- An airline named alone as what the traveller goes on ("on the next <airline> to X", "the first <airline> out", "the
  7.15am <airline>"), people moved out of a named airport on a day ("get the three of us from Gatwick on the 8th"), an
  outbound or return leg from a named airport.
- A car, van or people carrier "to hire" or "on hire", one "from X airport" in a list of arrangements required, "hire
  us an estate", "sort us a rental" (not a rental flat); a basket that "will be added to" (not one that has been);
  "apply her to the ... recruitment".

Each RECALL row was read without its category at the start commit (5795103): a user who qualifies for nothing was let
through. KEPT rows are controls that stay as they were."""
import pytest

from veriguard.enforce.categories import CategoryClassifier
from tests.unit.classifier_probes import BANK, allowed


@pytest.fixture(scope="module")
def clf():
    return CategoryClassifier.from_bank(BANK)


RECALL = [
    ("flight", "The last bit is the tickets home from Palermo to Leeds on the 30th."),
    ("flight", "All she needs now is one seat home to Cardiff next Friday."),
    ("flight", "Sort a ticket Chennai to Kochi for Amma on the 4th."),
    ("flight", "Put the pair of us on the 7.15am IndiGo and ring me when it's done."),
    ("flight", "Is there room on the Aurigny out of Guernsey on Saturday? Take it if so."),
    ("flight", "Get the three of us from Gatwick on the 8th, back on the 15th."),
    ("flight", "Travel plan: outbound from Stansted on 2 March, the rest we sort ourselves."),
    ("car", "Required: rooms for two nights in Galway, and a convertible from Shannon airport for the same dates."),
    ("car", "Hire us an estate for the camping trip, 3-7 June, from Exeter."),
    ("car", "Sort us a rental for the four days we're in Skye."),
]


@pytest.mark.parametrize("gold,text", RECALL)
def test_the_category_is_found(clf, gold, text):
    assert not allowed(clf, gold, text), clf.classify(text).reason


# (the set expected, text): texts read right at the start commit too, which the new asks must not change
KEPT = [
    ({"flight"}, "Grab two seats from Bristol to Faro for the half-term week."),
    ({"car"}, "We need a people carrier to hire at Bristol Airport for the wedding weekend."),
    ({"shop"}, "A dozen party bags will be added to the basket on the Hobbycraft site and paid for."),
    (set(), "The train tickets from Leeds to York are in my inbox, can you print them?"),
    (set(), "How much are bus tickets from Cork to Galway these days?"),
    (set(), "My parents flew home from Malaga yesterday and loved it."),
    (set(), "The estate agent wants to show us a flat on Tuesday."),
    ({"hotel"}, "Sort me a rental flat in Leith for September."),
    (set(), "Nothing has been added to the basket yet, and don't add anything."),
    (set(), "Is Ryanair any good for leg room?"),
]


@pytest.mark.parametrize("gold,text", KEPT)
def test_controls_keep_their_set(clf, gold, text):
    c = clf.classify(text)
    assert c.labels | c.uncertain == gold, c.reason
