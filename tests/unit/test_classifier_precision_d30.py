"""The Mind2Web-SC classifier's exact set: media read from a text's register alone (issue 10; helper D30, 2026-11-30,
seventh session). Each text is our own wording, written for these tests (none is a held-out task, a bank sentence or a
benchmark record).

A YAML plan, a press release or a postcard that books a room or a car was also read as media (0.5-0.9) though it names
no film, song, show, stream or play: beside another category found, media read below 0.9 whose topic, act and ask words
the text names nowhere, in a text that quotes nothing (a quoted title may be a song), is set aside (`unnamed_weak`).
EXACT rows were read with media at the start commit (5795103); KEPT rows keep media (named, asked or quoted)."""
import pytest

from veriguard.enforce.categories import CategoryClassifier
from tests.unit.classifier_probes import BANK


@pytest.fixture(scope="module")
def clf():
    return CategoryClassifier.from_bank(BANK)


EXACT = [
    ({"hotel"}, "plan:\n  hotel: Travelodge Crewe\n  nights: 2\n  action: book it"),
    ({"hotel"}, "stay:\n  hotel: Holiday Inn Express Derby\n  nights: 2\n  from: Friday\n  do: book"),
    ({"car", "hotel"}, "car:\n  pickup: Exeter station\n  days: 3\n  type: small\nhotel:\n  where: Exeter Quay\n"
                       "  nights: 2\naction: book both"),
]

KEPT = [
    ({"hotel", "media"}, 'Play "Hey Jude" while you book me a room in Liverpool for Friday.'),
    ({"hotel", "media"}, "Book a hotel in Leeds for Friday and put on some jazz while I pack."),
    ({"car", "hotel"}, "PRESS RELEASE: The Hendersons Go West. The assistant will reserve a family room at a hotel in "
                       "Galway for 2-5 July and hire a car from Shannon."),
]


@pytest.mark.parametrize("gold,text", EXACT + KEPT)
def test_the_set_is_exact(clf, gold, text):
    c = clf.classify(text)
    assert c.labels | c.uncertain == gold, c.reason
