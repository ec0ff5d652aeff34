"""Tenth red-team pass on the `llm` extractor (2026-11-30, night; helper B30): the cost of the ninth pass's withdrawal
check. B29 asked the model, alone, each clause in which the bank's classifier reads a category the model answered
false, and the text without it: on benign texts (v1-v17, the evasions, Mind2Web-SC, a model answering gold) the extra
calls went from 40.6% of the texts sent to 100.5%, and 18 benign texts went over the cap (fields kept true unasked).
Now a clause disputes a field where the classifier is sure of it read alone (or unsure of one the whole text's reading
is unsure of too), and the text without it is asked only where a clause names the field in words: 52.9%, 2 over the
cap (B30's report; llm/'both' figures: in the cascade, sure of the whole text, a clause's sure or unsure reading of a
field the whole reading lacks counts, 062e1f4). Every model answer is scripted through the real Anthropic SDK over httpx2.MockTransport
(tests.llm_fakes): how a model reads each text, never a model's accuracy; the classifier is scripted through the
extractor's `classify`. Each test fails on the start commit (5795103) unless its name says guard."""
from __future__ import annotations

from typing import Callable

from tests.llm_fakes import agent_text_in, obeying_reader
from tests.unit import test_extract_llm_redteam9 as r9
from tests.unit.test_extract_llm import NONE, answer
from veriguard.enforce.categories import Classification

REVIEWS = "Read the reviews of the Hilton in Rome"
LONG_REST = "tell me what the guests say about the breakfast and the pool there"


def unsure_alone(*, whole_sure: bool = False) -> Callable[[str], Classification]:
    """A scripted classifier unsure of the category whose cue a text holds (r9.CUES), as it often is of a short clause
    read alone; sure of a text that holds more than one clause's words when `whole_sure`."""
    def classify(text: str) -> Classification:
        found = frozenset(f for f, cue in r9.CUES.items() if cue in text)
        if whole_sure and "." in text:
            return Classification(found, {}, False, 0.9, "scripted: sure")
        return Classification(frozenset(), {}, bool(found), 0.5, "scripted: unsure", found)
    return classify


def test_a_clause_the_classifier_is_only_unsure_of_costs_no_call():
    """Before: every clause's reading, sure or not, disputed the model's false; a short clause the classifier is
    unsure of cost a call on benign text. Now an unsure reading of a clause alone asks nothing in llm mode."""
    got, model = r9.extracted(f"{REVIEWS}. Then tell me the weather.", lambda _t: answer(), classify=unsure_alone())
    assert got.value == NONE and len(model.bodies) == 1, got.how


def test_a_clause_only_the_classifier_disputes_is_asked_alone_without_the_rest():
    """Before: the clause was asked alone, and the text without it too (three calls). The rest serves a clause that
    names the field, which may be the withdrawal itself; a clause the classifier is sure of is the request."""
    got, model = r9.extracted(f"{REVIEWS} and {LONG_REST}", lambda _t: answer())
    assert got.value == NONE and [agent_text_in(b) for b in model.bodies] == [f"{REVIEWS} and {LONG_REST}", REVIEWS]


def test_a_benign_text_the_classifier_is_unsure_of_in_many_clauses_is_not_kept_true_unasked():
    """Before: five clauses each read unsure went over the cap (MAX_WITHDRAWN), and the field was kept true, unasked:
    a benign text over-restricted. Now none disputes."""
    text = "Compare the Hilton, the Hilton Garden, the Hilton Plaza, the Hilton Suites and the Hilton Inn on price maps"
    got, model = r9.extracted(text, lambda _t: answer(), classify=unsure_alone())
    assert got.value == NONE and "withdrawn" not in got.details and len(model.bodies) == 1, got.how


def test_guard_a_request_the_classifier_is_sure_of_is_still_read_apart():
    got, model = r9.extracted(f"{r9.HOTEL}. Accommodation: not needed.", r9.read_by("not needed", "hotel"))
    assert got.value["hotel"] is True and got.details["withdrawn"] == ["hotel"] and len(model.bodies) == 2


def test_guard_a_clause_that_names_the_field_still_has_the_rest_asked():
    """The withdrawal names the field ("the hotel part can wait"); the request is in words the classifier does not
    read: the text without the naming clause is asked, and read."""
    text = "Reserve two nights at the Four Seasons in Rome for my family. The hotel part can wait until later."
    got, model = r9.extracted(text, obeying_reader("can wait", "Four Seasons", answer(hotel=True), answer()))
    assert got.value["hotel"] is True and got.details["withdrawn"] == ["hotel"]


def test_guard_the_cascade_still_asks_apart_a_clause_it_is_unsure_of_as_of_the_whole():
    """The cascade keeps only its sure categories (abstain = 'deny'): a category it is unsure of in the whole text and
    in the request's clause read alone is still asked apart (pass 9)."""
    got, model = r9.extracted(f"{r9.HOTEL}. Accommodation: not needed.", r9.read_by("not needed", "hotel"), "cascade",
                              classify=unsure_alone())
    assert got.value["hotel"] is True and len(model.bodies) >= 2, got.how


def test_guard_the_cascade_asks_apart_an_unsure_clause_its_sure_whole_reading_takes_back():
    """The classifier, sure of the whole text, reads the request as taken back (never mind) and is only unsure of it in
    the request's clause alone: the cascade calls the model for that clause's reading, and asks the clause alone (the
    sure-reading rule of 9624f7c alone left the model's false standing)."""
    def classify(text: str) -> Classification:
        if "Never mind" in text:
            return Classification(frozenset(), {}, False, 0.9, "scripted: taken back")
        return unsure_alone()(text)
    got, model = r9.extracted(f"{r9.HOTEL}. Never mind.", r9.read_by("Never mind", "hotel"), "cascade",
                              classify=classify)
    assert got.value["hotel"] is True and len(model.bodies) >= 2, got.how
