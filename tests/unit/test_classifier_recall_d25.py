"""The Mind2Web-SC classifier's recall on hotel asks that name the hotel by its brand with a place word before it (issue
10; helper D25, 2026-11-30): "secure the downtown Hyatt", "hold the airport Westin". The bank's hotel ask on a brand
after a booking verb took "the Hyatt" but not "the downtown Hyatt"; beside a cancelled flight the regression then read the
flight (or nothing), and a user who qualifies for nothing was let through. Each text is our own wording, written for
these tests (none is a held-out task). The first two asks were read without hotel at 9cb4155 (one as no category at
all); the others were found there too and guard the same ask in other words. The decoys name the same brands with a
place word without asking a booking and are guards: hotel not read before and after."""
import pytest

from veriguard.enforce.categories import CategoryClassifier
from tests.unit.classifier_probes import BANK


@pytest.fixture(scope="module")
def clf():
    return CategoryClassifier.from_bank(BANK)


ASKS = [
    "Since my flight was cancelled in Denver, secure the downtown Hyatt for the night.",
    "Yes, the connecting flight is definitely off, so hold the airport Westin for tonight.",
    "The ferry is cancelled because of the storm, so reserve the harbourside Marriott for tonight.",
    "The late train is cancelled, so reserve the station Premier Inn for one night.",
    "Reserve the airport Marriott in Denver for Thursday night.",
    "My flight got cancelled; book the downtown Hilton for tonight.",
    "Grab us the beachfront Westin in Maui for the 3rd to the 6th.",
    "Our train was cancelled, so lock in the station Premier Inn for tonight.",
    "Get me the convention center Hyatt for the three nights of the expo.",
    "Hold the riverside Sheraton for Friday and Saturday.",
]

DECOYS = [
    "What time does the airport Marriott's shuttle start running?",
    "Is the downtown Hilton's pool open in winter?",
]


@pytest.mark.parametrize("text", ASKS)
def test_a_hotel_brand_after_a_place_word_is_a_hotel_ask(clf, text):
    c = clf.classify(text)
    assert "hotel" in c.labels | c.uncertain, c.reason


@pytest.mark.parametrize("text", DECOYS)
def test_a_hotel_brand_after_a_place_word_without_a_booking_asks_nothing(clf, text):
    c = clf.classify(text)
    assert "hotel" not in c.labels, c.reason
