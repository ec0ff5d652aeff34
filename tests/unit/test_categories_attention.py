"""Attention pooling of the token states as features of the category classifier (enforce/attention.py): one run
of the encoder gives the mean vector and the token states, the queries learn which tokens decide, and a
classifier trained with them freezes and thaws to the same decisions; a malformed frozen attention is refused."""
import copy as deep
import dataclasses

import numpy as np
import pytest

from veriguard.enforce.attention import Attention, learn, pooled
from veriguard.enforce.categories import (CategoryClassifier, bank_settings, read_bank, thaw, to_frozen,
                                          trained_on)
from veriguard.enforce.embedder import Embedder, mean_pooled, shared_embedder
from veriguard.enforce.loader import PolicyLoadError
from tests.conftest import SPECS

BANK = SPECS / "mind2web_sc" / "categories.toml"
TASKS = ["Rent a pickup truck in Boise for the weekend", "Check the weather forecast for Seattle tomorrow",
         "Book two nights at a hotel near the Louvre", "Find the phone number of the Hilton in Austin"]


def test_one_run_gives_the_mean_vector_and_the_token_states():
    emb = Embedder()
    texts = ["Rent a cheap SUV in Denver", "Book a table", "Stream the new season of a show tonight please"]
    vectors, states = emb.embed_states(texts)
    assert np.allclose(vectors, emb.embed(texts), atol=1e-5)
    lengths = [len(e.ids) for e in emb.tokenizer.encode_batch(texts)]
    assert [s.shape for s in states] == [(n, 384) for n in lengths]
    for v, s in zip(vectors, states):  # the states are the unpadded tokens of the same run
        assert np.allclose(mean_pooled(s[None], np.ones((1, len(s)))), v, atol=1e-5)


def test_pooled_vectors_are_one_unit_vector_per_query():
    rng = np.random.default_rng(1)
    att = Attention(rng.normal(size=(3, 8)).astype(np.float32), np.zeros(8, np.float32), np.ones(8, np.float32))
    out = pooled(att, [rng.normal(size=(n, 8)).astype(np.float32) for n in (1, 4, 9)])
    assert out.shape == (3, 24)
    assert np.allclose(np.linalg.norm(out.reshape(3, 3, 8), axis=2), 1.0, atol=1e-5)


def _marked(rng: np.random.Generator, n: int) -> tuple[list[np.ndarray], np.ndarray]:
    """Texts of 6 to 12 random tokens; in the positives, one token at a random place carries a mark (+3 on the
    first axis): the label is that one token, which the mean of a text dilutes."""
    states, y = [], np.zeros((n, 1), np.float32)
    for i in range(n):
        h = rng.normal(size=(int(rng.integers(6, 13)), 16)).astype(np.float32)
        if i % 2:
            h[int(rng.integers(len(h))), 0] += 3.0
            y[i] = 1.0
        states.append(h)
    return states, y


def test_the_queries_learn_to_attend_to_the_token_that_decides():
    rng = np.random.default_rng(0)
    states, y = _marked(rng, 200)
    means = np.stack([h.mean(axis=0) for h in states])
    att = learn(states, means, y, 1, iterations=150)
    weights = []
    for h, label in zip(states, y[:, 0]):
        if label:
            s = ((h - att.centre) / att.scale) @ att.queries[0]
            a = np.exp(s - s.max())
            weights.append(float((a / a.sum())[int(np.argmax(h[:, 0]))]))
    assert np.mean(weights) > 0.5  # uniform attention would give the marked token 1/9 on average
    again = learn(states, means, y, 1, iterations=150)
    assert np.array_equal(att.queries, again.queries)  # deterministic: synth's cache keys it by its inputs


@pytest.fixture(scope="module")
def attentive():
    """A classifier trained with one query on the bank's own examples (not [training]: seconds, not a minute)."""
    bank = read_bank(BANK)
    own = bank.own()
    small = dataclasses.replace(bank, texts=tuple(bank.texts[i] for i in own), labels=tuple(bank.labels[i] for i in own),
                                training=frozenset(), settings={**bank.settings, "attention": 1})
    emb = shared_embedder()
    model = trained_on(small, emb)
    return CategoryClassifier(model, emb, bank=small), to_frozen(model, emb.identity(), "0" * 64)


def test_a_classifier_with_attention_freezes_and_thaws_to_the_same_decisions(attentive):
    clf, frozen = attentive
    assert frozen["settings"]["attention"] == 1 and frozen["attention"]["queries"]["shape"] == [1, 384]
    assert frozen["weights"]["shape"] == [6, 2 * 384 + 2 * 6 + 2]
    thawed = CategoryClassifier.from_frozen(frozen, clf.embedder)
    assert thawed.attention is not None and np.array_equal(thawed.attention.queries, clf.attention.queries)
    for text in TASKS:
        got, want = thawed.classify(text), clf.classify(text)
        assert (got.labels, got.uncertain) == (want.labels, want.uncertain), text
        assert all(abs(got.scores[n] - want.scores[n]) < 1e-3 for n in want.scores), text
    assert "hotel" in clf.classify(TASKS[2]).labels and not clf.classify(TASKS[1]).labels


def test_attention_is_off_unless_the_bank_asks_for_it():
    assert bank_settings({})["attention"] == 0
    shipped = bank_settings(read_bank(BANK).settings)  # turned on by leave-one-set-out (the bank's [settings] say how)
    assert (shipped["attention"], shipped["attention_ridge"]) == (2, 1.0)


def _edit(frozen, key, value):
    doc = deep.deepcopy(frozen)
    if key == "settings":
        doc["settings"]["attention"] = value
    elif key in ("queries", "centre", "scale"):
        doc["attention"][key] = value(doc["attention"][key])
    else:
        doc[key] = value
    return doc


@pytest.mark.parametrize("key, value, needle", [
    ("attention", None, "`attention` must be null"),           # queries dropped, settings still say one
    ("settings", 0, "`attention` must be null"),               # settings say none, queries still there
    ("settings", 2, "attention queries"),                      # one query frozen, two announced
    ("settings", 1.5, "`attention` must be null"),
    ("queries", lambda a: {**a, "shape": [1, 383]}, "attention queries"),
    ("scale", lambda a: {**a, "base64": __import__("base64").b64encode(np.zeros(384, "<f4").tobytes()).decode()},
     "scale must be positive"),
    ("centre", lambda a: {**a, "dtype": "<f8"}, "attention centre"),
])
def test_a_malformed_frozen_attention_is_a_precise_load_error(attentive, key, value, needle):
    with pytest.raises(PolicyLoadError) as e:
        thaw(_edit(attentive[1], key, value), "test")
    assert e.value.code == "load.classifier" and needle in e.value.message, e.value.message
