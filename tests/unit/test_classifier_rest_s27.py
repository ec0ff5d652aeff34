"""S27's speed changes in the rest of categories.py (categories_rest.patch), every output kept bit for bit: classify runs
numpy's products on one OpenBLAS thread, the product over the whole bank is skipped when a sample of the bank shows the
text is like it (by far more than the float32 product's rounding), and the cue indexes are read by id."""
import numpy as np

from veriguard.enforce import categories, embedder
from veriguard.enforce.categories import CategoryClassifier
from veriguard.enforce.embedder import Embedder
from tests.unit.test_classifier_speed_p24 import TINY


def tiny(tmp_path):
    bank = tmp_path / "tiny.toml"
    bank.write_text(TINY)
    return CategoryClassifier.from_bank(bank, Embedder())


def test_classify_runs_numpy_on_one_blas_thread_whatever_the_count(tmp_path, monkeypatch):
    get, set_ = embedder.openblas_threads()
    clf = tiny(tmp_path)
    seen = []
    real = CategoryClassifier.doubts

    def counted(self, *a):
        seen.append(get())
        return real(self, *a)

    monkeypatch.setattr(CategoryClassifier, "doubts", counted)
    before = get()
    set_(3)
    try:
        got = clf.classify("Book a hotel room in Rome for two nights")
        assert seen == [1] and get() == 3 and "hotel" in got.labels
    finally:
        set_(before)


def test_the_sample_of_the_bank_says_like_only_where_the_whole_product_does(tmp_path):
    clf = tiny(tmp_path)
    rng = np.random.default_rng(0)
    bank = clf.vectors
    # the bank's own rows, random directions, and rows at about the threshold's similarity to a sampled example
    near = [np.sqrt(1 - s * s) * rng.normal(size=bank.shape[1]) / np.sqrt(bank.shape[1]) + s * bank[0]
            for s in np.linspace(clf.min_similarity - 0.01, clf.min_similarity + 0.01, 41)]
    rows = np.vstack([bank, rng.normal(size=(200, bank.shape[1])), np.array(near)]).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    said = 0
    for v in rows:
        if clf.like_the_bank(v[None, :]):
            said += 1
            assert float((v[None, :] @ bank.T).max()) >= clf.min_similarity
    assert said >= len(bank)                    # every bank example is like the bank
    assert not clf.like_the_bank(np.zeros((0, bank.shape[1]), np.float32))


def test_the_clause_functions_are_kept_per_text():
    categories.asks_no_act.cache_clear()
    categories.asks_no_act("What is the phone number of the Hilton?")
    categories.asks_no_act("What is the phone number of the Hilton?")
    assert categories.asks_no_act.cache_info().hits == 1
    assert categories.ask_unnamed("book it for Friday") == categories.ask_unnamed("book it for Friday")
