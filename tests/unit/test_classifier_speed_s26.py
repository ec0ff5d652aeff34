"""The classifier's per-sentence cost (issue 10, speed pass S26), each change keeping every output bit for bit: pieces of
different lengths run apart (`runs`: padding weighed against the cost of a run), a text embedded again not run again
(the embedder keeps its RECENT texts), the cue patterns searched only where the text holds the literals they need
(`textnorm.LiteralIndex`), and the normaliser's per-character steps skipped on text they cannot change. What makes the
first two exact is that a text's vector and states do not depend on the texts run beside it nor on the padding:
checked here on texts of many lengths, so that an onnxruntime that breaks it fails this test before it changes a
reading. The outputs of v1-v13, both evasion splits and the benchmark were compared whole (see the README)."""
import json
import re
import sys
import unicodedata
from pathlib import Path

import numpy as np
import pytest

from veriguard.enforce import categories, embedder, textnorm
from veriguard.enforce.categories import CLAUSE, cue_vector
from veriguard.enforce.embedder import BATCH, Embedder, mean_pooled
from veriguard.enforce.textnorm import normalise
from tests.conftest import SPECS

DATA = Path(__file__).resolve().parents[1] / "data"
TEXTS = ["Rent a cheap SUV in Denver", "Book a table",
         "Stream the new season of a show tonight please, and then find me a hotel near the stadium for Friday",
         "Hi", "Apply for the barista job at the Starbucks on 5th street; my resume is attached to the email",
         "Fly me from Boston to Chicago", "Book a table"]


class Counting:
    """The embedder's session, counting its runs and the token slots (padding included) they read."""

    def __init__(self, session):
        self.session, self.runs, self.slots = session, 0, 0

    def run(self, outputs, feeds):
        self.runs += 1
        self.slots += feeds["input_ids"].size
        return self.session.run(outputs, feeds)


@pytest.fixture(scope="module")
def emb():
    return Embedder()


def test_a_text_reads_the_same_bits_alone_and_beside_others_of_other_lengths(emb):
    """The premise of the two changes below: no padding, batch or neighbour changes a text's vector or states."""
    texts = list(dict.fromkeys(TEXTS))
    encs = emb.tokenizer.encode_batch(texts)
    hidden, mask = emb._hidden(encs)   # one run, every text padded to the longest
    alone = Embedder()
    for i, (text, e) in enumerate(zip(texts, encs)):
        vector, states = alone.embed_states([text])   # a run of its own
        assert np.array_equal(states[0], hidden[i, :len(e.ids)])
        assert np.array_equal(vector[0], mean_pooled(hidden[i:i + 1], mask[i:i + 1])[0])


def test_pieces_of_different_lengths_are_not_padded_to_the_longest(emb):
    fresh = Embedder()
    fresh.session = counted = Counting(emb.session)
    texts = list(dict.fromkeys(TEXTS))
    lengths = [len(e.ids) for e in fresh.tokenizer.encode_batch(texts)]
    fresh.embed_states(texts)
    assert counted.slots < len(texts) * max(lengths)    # before: one run, every text padded to the longest
    assert counted.slots + embedder.RUN_TOKENS * counted.runs <= len(texts) * max(lengths) + embedder.RUN_TOKENS


def test_runs_weigh_padding_against_a_run():
    assert embedder.runs([]) == []
    assert embedder.runs([9, 9, 9]) == [[0, 1, 2]]                # equal lengths: one run
    assert embedder.runs([40, 12, 12]) == [[1, 2], [0]]           # 2 x 28 slots saved outweigh one run more
    assert embedder.runs([13, 12]) == [[1, 0]]                    # one slot saved does not
    assert sorted(i for r in embedder.runs(list(range(100))) for i in r) == list(range(100))
    assert max(len(r) for r in embedder.runs([5] * 100)) <= BATCH


def test_a_text_embedded_again_is_not_run_again(emb):
    fresh = Embedder()
    fresh.session = counted = Counting(emb.session)
    first, states = fresh.embed_states(TEXTS[:3])
    assert counted.runs >= 1
    before = counted.runs
    again, states_again = fresh.embed_states([TEXTS[2], TEXTS[0]])
    assert counted.runs == before
    assert np.array_equal(again, first[[2, 0]]) and np.array_equal(states_again[0], states[2])
    assert fresh.truncated([TEXTS[2]]) == [False]
    fresh.embed([TEXTS[5]])                 # a vector without states: asked for states later, it is run again
    fresh.embed_states([TEXTS[5]])
    assert counted.runs == before + 2


def test_the_states_kept_cannot_be_changed_by_a_caller(emb):
    _, states = emb.embed_states(["Rent a van in Ohio"])
    with pytest.raises(ValueError):
        states[0][0, 0] = 1.0


def test_the_texts_kept_are_bounded(emb):
    fresh = Embedder()
    fresh.session = emb.session
    fresh.embed([f"book {i} rooms" for i in range(embedder.RECENT + 20)])
    assert len(fresh._recent) == embedder.RECENT


def test_folded_maps_every_character_ignorecase_reads_as_an_ascii_letter():
    letter = re.compile("[a-z]", re.IGNORECASE)
    for cp in range(sys.maxunicode + 1):
        ch = chr(cp)
        if letter.fullmatch(ch):
            plain = textnorm.folded(ch)
            assert plain in "abcdefghijklmnopqrstuvwxyz" and re.fullmatch(plain, ch, re.IGNORECASE), hex(cp)
    assert textnorm.folded("\u212Aitchen \u017Fuite HOTEL") == "kitchen suite hotel"


@pytest.mark.parametrize(("pattern", "needed"), [
    (r"\bhotels?\b", {"hotel"}),
    (r"\b(book|reserve|booking)\b", {"book", "reserve", "booking"}),
    (r"\b(room|suite|bed)s? for\b", {" for"}),         # the longer of the two requirements
    (r"(?<!\bnot )\bbuy\b", {"buy"}),                   # a lookaround asks nothing of the text
    (r"\bx*\b", None),
    (r"(?-i:\b[A-Z]{3}\b)", None),
    (r"\b(?:hotel|\w+ inn)\b", {"hotel", " inn"}),
    (r"(?:ab)+c", {"ab"}),
    (r"a(?:b|\d)", {"a"}),
    (r"Rent A Car", {"rent a car"}),
])
def test_the_literals_a_pattern_needs(pattern, needed):
    assert textnorm.required_literals(re.compile(pattern, re.IGNORECASE)) == needed


def bank_patterns():
    cues = categories.read_bank(SPECS / "mind2web_sc" / "categories.toml").cues
    return tuple(dict.fromkeys(p for kind in cues.kinds() for ps in kind.values() for p in ps)) + tuple(
        p for _, p in categories.OBJECTLESS + categories.NO_ASK)


def corpus():
    texts = [json.loads(line)["task"] for line in (DATA / "heldout_tasks.jsonl").read_text().splitlines() if line]
    texts += [json.loads(line)["text"] for line in (DATA / "evasions.jsonl").read_text().splitlines() if line]
    return texts + ["HOTEL \u212AITCHEN", "\u0130nn near the lake", "\u017Fuite for two", "h\u200bo\u200btel"]


def test_a_pattern_left_out_by_the_index_matches_nowhere():
    patterns = bank_patterns()
    index = textnorm.LiteralIndex(patterns)
    assert len(index.always) < len(patterns) / 10   # most patterns have literals to look for
    skipped = 0
    for text in corpus():
        for t in (text, normalise(text).text):
            may = index.candidates(textnorm.folded(t))
            for p in patterns:
                if p not in may:
                    skipped += 1
                    assert p.search(t) is None, (p.pattern, t)
    assert skipped > 0


def reference_cue_vector(names, cues, text):
    """cue_vector as it was before the index (c915136): every pattern searched."""
    import bisect
    ends = [m.end() for m in CLAUSE.finditer(text) if m.end() < len(text)]
    found = {}

    def clauses(patterns):
        for p in patterns:
            if p not in found:
                found[p] = {bisect.bisect_right(ends, m.start()) for m in p.finditer(text)}
        return set().union(*(found[p] for p in patterns))

    free, aside, asides, acts = [], [], set(), set()
    named = set().union(*(clauses(cues.topic[n]) for n in names))
    for n in names:
        topic, act, off = clauses(cues.topic[n]), clauses(cues.act[n]), clauses(cues.aside[n])
        kept = topic - (off - act) or (topic if act - named else set())
        free.append(1.0 if kept else 0.0)
        aside.append(1.0 if topic and not kept else 0.0)
        asides |= off
        acts |= act
    return np.array(free + aside + [len(asides - acts) / (len(ends) + 1)], np.float32)


def test_cue_vector_is_what_searching_every_pattern_gives():
    bank = categories.read_bank(SPECS / "mind2web_sc" / "categories.toml")
    texts = corpus() + list(bank.texts[:300])
    for text in texts:
        assert np.array_equal(cue_vector(bank.names, bank.cues, text), reference_cue_vector(bank.names, bank.cues, text))


def test_plain_ascii_is_not_read_character_by_character(monkeypatch):
    text = "Book a hotel in Paris for 2 nights, then rent a car -- under $90/day (see https://x.example/a?b=1)."
    want = normalise(text)

    def per_character(*_a):
        raise AssertionError("read character by character")

    monkeypatch.setattr(textnorm, "is_invisible", per_character)
    monkeypatch.setattr(textnorm, "_within", per_character)
    monkeypatch.setattr(textnorm, "readable", per_character)
    assert normalise(text) == want


@pytest.mark.parametrize("text", ["Book a h\u200bo\u200btel \U0001F3E8 now", "Fly BOS\u2192DEN on Friday \u2708",
                                  "R\u00e9serve a caf\u00e9 table", "rent a car\x07 in Reno\tplease\r\n\x7f",
                                  "\u0412ook a \u0440oom \U0001F600\U0001F3FD", "plain ascii text"])
def test_the_shortcuts_give_what_reading_each_character_gives(text, monkeypatch):
    want = normalise(text)
    every = re.compile(r"[\s\S]")
    monkeypatch.setattr(textnorm, "_NAMED_CLASS", every)          # every character a candidate: the loops as they were
    monkeypatch.setattr(textnorm, "_MAYBE_UNREADABLE", every)
    monkeypatch.setattr(textnorm, "strip_invisible", lambda t: "".join(ch for ch in t if not textnorm.is_invisible(ch)))
    monkeypatch.setattr(textnorm, "strip_marks", lambda t: unicodedata.normalize("NFC", "".join(
        ch for ch in unicodedata.normalize("NFKD", t) if not unicodedata.category(ch).startswith("M"))))
    assert normalise(text) == want
