"""cue_vector's cost follows what a text holds, not the bank (S31): the per-category id sets made once per bank are
intersected by walking the few pattern ids a text matched, never by walking each set; every cue vector unchanged."""
from __future__ import annotations

import numpy as np

from veriguard.enforce import categories
from veriguard.enforce.categories import cue_ids, cue_vector
from tests.unit.test_classifier_speed_s26 import reference_cue_vector
from tests.unit.test_classifier_speed_s27 import texts
from tests.unit.test_classifier_speed_s29 import SENTENCES, bank  # noqa: F401  (bank: a fixture)

WRITTEN = [
    "Rent me a car at the airport, then book a hotel near it; no flight needed.",
    "I don't want a hotel. Just the phone number of the Hertz at JFK.",
    "Stream the new season and buy the soundtrack; skip the car.",
    "Apply for the nurse job in Leeds, and cancel my flight to Oslo and the hotel too",
    "what's on tv tonight? also the cv for the wh position, fl to NYC",
    "Book it.",
]


class Walked(frozenset):
    """A bank's id set that counts how often something walks it (iter)."""

    walks = 0

    def __iter__(self):
        Walked.walks += 1
        return super().__iter__()


def test_cue_vector_walks_the_ids_found_not_the_banks_id_sets(bank):  # noqa: F811
    ids = cue_ids(bank.names, bank.cues)
    plain = categories._CUE_IDS[id(bank.cues)]
    categories._CUE_IDS[id(bank.cues)] = (plain[0], plain[1], [tuple(Walked(s) for s in k) for k in ids])
    try:
        Walked.walks = 0
        for text in WRITTEN + SENTENCES + texts()[:120]:
            assert np.array_equal(cue_vector(bank.names, bank.cues, text),
                                  reference_cue_vector(bank.names, bank.cues, text)), text
        assert Walked.walks == 0
    finally:
        categories._CUE_IDS[id(bank.cues)] = plain


def test_cue_vectors_unchanged_on_written_sentences_and_the_bank(bank):  # noqa: F811
    for text in WRITTEN + list(bank.texts[::3]):
        got = cue_vector(bank.names, bank.cues, text)
        assert got.dtype == np.float32 and got.shape == (2 * len(bank.names) + 1,)
        assert got.tobytes() == reference_cue_vector(bank.names, bank.cues, text).astype(np.float32).tobytes(), text
