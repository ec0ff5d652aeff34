"""The Mind2Web-SC classifier's recall on asks worded away from the imperative (issue 10; helper D29, 2026-11-30, sixth
session). Each text is our own wording, written for these tests (none is a held-out task, a bank sentence or a
benchmark record).

- An act told of the agent in the third person ("TASKING: the agent orders a kettle ...", "the assistant hires 1 x 4x4
  ... and books ...") or wanted done to its object ("I want ... a Ford Transit hired from Bristol") is the act asked:
  `reading` turns it into the imperative the bank's asks read ("order a kettle", "hire a 4x4", "hire a Ford Transit").
- A dare ("I bet you won't find a room near ... If you can, reserve it") asks the act it dares (rows in
  test_classifier_precision_d29 and below).
- Vehicles the car asks lacked (a minibus, a people carrier, an MPV, a Transit or Sprinter van), a rental at an
  airport, station or depot booked beside another object, and an airline named by its "Air/Airlines/Airways" suffix.

Each RECALL row was read without its category at the start commit (e1e32b1): a user who qualifies for nothing was let
through. KEPT rows are controls that stay as they were."""
import pytest

from veriguard.enforce.categories import CategoryClassifier, acts_as_asked
from tests.unit.classifier_probes import BANK, allowed


@pytest.fixture(scope="module")
def clf():
    return CategoryClassifier.from_bank(BANK)


RECALL = [
    ("shop", "TASKING: the agent orders a replacement kettle from Currys for the staff kitchen."),
    ("shop", "Task for the bot: bot purchases a 2TB external drive from Scan online and ships it to the office."),
    ("car", "PLAN: The assistant hires 1 x 4x4 from Inverness airport, 6-9 May, and books 2 rooms at a B&B in Aviemore."),
    ("car", "As the organiser, I want a double room reserved at a guesthouse in Bath for 2-4 June and a Ford Transit hired "
            "from Bristol."),
    ("car", "My brother wants a used hatchback bought from a dealer near Swindon, under 6,000 pounds."),
    ("car", "Hire a people carrier from Leeds station for the week of 4 August."),
    ("car", "Book the 7am train to Exeter and a cheap rental at the station for two days."),
    ("car", "Sort the hotel in Bruges for Friday, plus a compact rental from the station for the weekend."),
    ("flight", "Book me on Coral Coast Air from Nadi to Suva on Friday morning."),
    ("flight", "Put my dad on Island Hopper Air from Nassau to Exuma on the 12th."),
]


@pytest.mark.parametrize("gold,text", RECALL)
def test_the_category_is_found(clf, gold, text):
    assert not allowed(clf, gold, text), clf.classify(text).reason


# (the set expected, text): texts read right at the start commit too, which the new readings must not change
KEPT = [
    ({"hotel"}, "Sort me a twin room in Galway for the 3rd and 4th, nothing else."),
    (set(), "The van we hired from Northgate broke down on the M6, what's the AA's number?"),
    (set(), "I need the sofa I ordered from DFS delivered on Friday instead of Thursday."),
    (set(), "The agent orders were signed last week by the general."),
    (set(), "Who runs Coral Coast Air, and is it safe to fly with them?"),
]


@pytest.mark.parametrize("gold,text", KEPT)
def test_controls_keep_their_set(clf, gold, text):
    c = clf.classify(text)
    assert c.labels | c.uncertain == gold, c.reason


@pytest.mark.parametrize("text,asked", [
    ("I'd bet you won't find a cottage in Rye for under 100 a night.", "you can find a cottage in Rye for under 100 a night."),
    ("MISSION: Assistant procures 1 x label printer from Viking, and sends the invoice to me.",
     "MISSION: Assistant buy a label printer from Viking, and send the invoice to me."),
    ("I want a tent reserved at the Keswick campsite for 2-4 May and a compact hired from Penrith.",
     "I want reserve a tent at the Keswick campsite for 2-4 May and hire a compact from Penrith."),
    ("Please have the blue rug bought from Habitat online.", "Please have buy the blue rug from Habitat online."),
])
def test_an_act_told_or_wanted_done_reads_as_asked(text, asked):
    assert acts_as_asked(text) == asked


@pytest.mark.parametrize("text", [
    "The laptop I bought from Argos last year broke.",            # a past act, its subject named
    "We need the car we rented from Hertz returned by five.",    # the act's object told by its subject
    "I want the jacket ordered from Zara cancelled and refunded.",  # an ask on an act already done
    "My assistant orders too much coffee.",                        # no agent of the task: a possessive
])
def test_past_acts_and_other_subjects_are_left_as_they_are(text):
    assert acts_as_asked(text) == text
