"""The Mind2Web-SC classifier's recall on asks that name no flight, car or job in the words its asks read (issue 10;
helper D32, 2026-12-01, ninth session). Each text is our own wording, written for these tests (none is a held-out
task, a bank sentence or a benchmark record).

- A seat beside a route of named places, on either side ("the seat: X to Y"); a person the agent moves along a route
  ("get her X → Y", "get me pdx to reno sunday"); a seat out of a named place; people taken out of a named place on a
  date, or leaving one on a date with a way back ("from X on the 2nd, back the 9th"): the flight asked. Never with a
  train, coach, ferry, cruise, table or show in the sentence.
- Dialect spellings of the words the asks read ("out o' X on t' 5th", "summat", "goin'") are read as those words.
- A car named by its gearbox, power or seats hired or leased ("lease us an automatic"); anything from a car rental firm
  ("summat roomy from Europcar").
- Something with seven seats or four-wheel drive is a car; a place or spot in or near a named town for a span of dates
  is a stay.
- "apply" as the act on a person ("apply me to the kiosk one").

Each RECALL row was read without its category at the start commit (c1d7034): a user who qualifies for nothing was let
through. KEPT rows are controls that stay as they were."""
import pytest

from veriguard.enforce import categories
from tests.unit.classifier_probes import allowed
from tests.unit.test_classifier_recall_d30 import clf  # noqa: F401  (the module's classifier, trained once)


RECALL = [
    ("flight", "The conference hotel is covered; I only need the seat: Cardiff to Munich on the 8th."),
    ("flight", "Just get her Leeds → Zurich on the 19th, morning."),
    ("flight", "no hotel needed, just get me pdx to reno sunday"),
    ("flight", "Sort our Tom a seat out o' Doncaster, goin' t' 6th."),
    ("flight", "Get us out o' Bristol on t' 5th, back on t' 11th."),
    ("flight", "Get the four of us out of Cork on the 9th, back the 14th."),
    ("flight", "Eight of us out of Luton on the 2nd, back the 6th, stag do."),
    ("flight", "Off to Faro for the reunion: from Exeter on the 2nd, back the 9th."),
    ("car", "Lease us an automatic for the month, nothing flashy."),
    ("car", "summat roomy from Europcar in Hull for t' weekend"),
    ("car", "We land in Tromso on the 3rd; something with seven seats waiting there, please."),
    ("hotel", "Me and the dog need a spot near Keswick, 12th to 15th."),
    ("job", "apply me to the kiosk one at the zoo pls"),
]


@pytest.mark.parametrize("gold,text", RECALL)
def test_the_category_is_found(clf, gold, text):  # noqa: F811
    assert not allowed(clf, gold, text), clf.classify(text).reason


# (the set expected, text): texts read so at the start commit too, which the new asks and readings must not change
KEPT = [
    (set(), "Is there a seat on the train from York to Durham at 9?"),
    (set(), "Take the coach: Bristol to Bath on Saturday, two seats."),
    (set(), "Book a table: Smith to Jones party, 8pm, four seats."),
    (set(), "Seat them by the window: Table 4 to Table 6 are free."),
    (set(), "Get me the report to review by Friday."),
    (set(), "Download the boarding pass to my phone."),
    (set(), "Download the invoice PDF to my laptop and email it to accounts."),
    (set(), "Hire an automatic washing machine repair man."),
    (set(), "I've got a lease on an electric toothbrush subscription, cancel it."),
    (set(), "Is there a cafe with a quiet place in Whitby open 4-7 pm?"),
]


@pytest.mark.parametrize("gold,text", KEPT)
def test_controls_keep_their_set(clf, gold, text):  # noqa: F811
    c = clf.classify(text)
    assert c.labels | c.uncertain == gold, c.reason


@pytest.mark.parametrize("text,read", [
    ("Sort us a seat out o' Hull, goin' t' 3rd an' back", "Sort us a seat out of Hull, going the 3rd and back"),
    ("summat small fae the depot", "something small from the depot"),
    ("It's 5 o'clock, rock 'n' roll, don't", "It's 5 o'clock, rock 'n' roll, don't"),   # no dialect word: as written
])
def test_dialect_words_are_read_as_the_words_they_spell(text, read):
    assert categories.undialected(text) == read
