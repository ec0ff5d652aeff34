"""The Mind2Web-SC classifier's exact category set on asks worded away from the imperative (issue 10; helper D29,
2026-11-30, sixth session). Each text is our own wording, written for these tests (none is a held-out task, a bank
sentence or a benchmark record). At the start commit (e1e32b1) each was read with its category uncertain among others
or with every category in doubt (an act the bank's asks did not read: told of the agent in the third person, wanted
done to its object, or on a vehicle or an airline the asks did not name); the act read as asked gives the one
category."""
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
]


@pytest.mark.parametrize("gold,text", EXACT)
def test_exact_set(clf, gold, text):
    c = clf.classify(text)
    assert c.labels | c.uncertain == gold, c.reason
