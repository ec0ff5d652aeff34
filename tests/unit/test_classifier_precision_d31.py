"""The Mind2Web-SC classifier's exact category set where an ask read a category from words that name none (issue 10;
helper D31, 2026-12-01, eighth session). Each text is our own wording, written for these tests (none is a held-out task,
a bank sentence or a benchmark record).

- A screenplay's scene heading ("INT. SPA - DAY") is no route of airport codes: its time of day is no airport.
- An order "for pickup" or "for store pickup" (from Best Buy) is collected from a shop, not a pickup truck bought.

Each EXACT row was read with an extra flight or car at the start commit (6d7c2a0). KEPT rows stay as they were."""
import pytest

from tests.unit.test_classifier_recall_d30 import clf  # noqa: F401  (the module's classifier, trained once)


EXACT = [
    ({"media"}, "INT. SPA - DAY\nRUTH laces her trainers.\nRUTH\n(to the assistant)\nPut my spin-class playlist on Spotify, loud."),
    ({"shop"}, "Grab a kettle from Best Buy for pickup by noon."),
    ({"shop"}, "Get the toaster at Best Buy for store pickup on Saturday."),
]


@pytest.mark.parametrize("gold,text", EXACT)
def test_the_set_is_exact(clf, gold, text):  # noqa: F811
    c = clf.classify(text)
    assert c.labels == gold and not c.uncertain, c.reason


KEPT = [
    ({"car"}, "Rent a pickup for the weekend move."),
    ({"flight"}, "Book ORD-DEN on the 4th, aisle."),
    ({"shop"}, "Order two phone cases from Currys for pickup at the Leeds store."),
    ({"job"}, "Please put forward my CV for the caretaker post at Hillside Primary."),
    (set(), "Send my reply to that post on the forum."),
]


@pytest.mark.parametrize("gold,text", KEPT)
def test_controls_keep_their_set(clf, gold, text):  # noqa: F811
    c = clf.classify(text)
    assert c.labels | c.uncertain == gold, c.reason
