"""The classifier's per-sentence cost (issue 10, speed pass S27), every output kept bit for bit: numpy's OpenBLAS on one
thread inside a scope (`embedder.one_blas_thread`, whatever OPENBLAS_NUM_THREADS says), the tokenizer run in the
caller's thread (no pool of its own), the overflow flags read from the embedder's recent texts (one store, not two),
and the cue index's literals looked for only where the text holds their first characters, its answers kept by id
(a compiled pattern's hash reads its whole code). The outputs of v1-v14, both evasion splits and the benchmark were
compared whole (see the README)."""
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from veriguard.enforce import categories, embedder, textnorm
from veriguard.enforce.embedder import Embedder
from tests.conftest import SPECS
from tests.unit.test_classifier_speed_s26 import reference_cue_vector

DATA = Path(__file__).resolve().parents[1] / "data"
ROOT = Path(__file__).resolve().parents[2]


def blas():
    controls = embedder.openblas_threads()
    assert controls is not None, "numpy's wheel ships OpenBLAS here: its thread controls must be found"
    return controls


@pytest.fixture
def many_threads():
    """OpenBLAS set to 3 threads for the test (it creates more when asked), put back after."""
    get, set_ = blas()
    before = get()
    set_(3)
    yield get
    set_(before)


def test_numpy_runs_on_one_blas_thread_in_the_scope_and_gets_its_count_back(many_threads):
    get = many_threads
    assert get() == 3
    with embedder.one_blas_thread():
        assert get() == 1
        with embedder.one_blas_thread():
            assert get() == 1
        assert get() == 1          # an inner scope's end does not give the threads back
    assert get() == 3


def test_overlapping_scopes_in_threads_give_the_count_back_when_the_last_ends(many_threads):
    get = many_threads
    inside, leave = threading.Event(), threading.Event()

    def other():
        with embedder.one_blas_thread():
            inside.set()
            leave.wait(10)

    t = threading.Thread(target=other)
    with embedder.one_blas_thread():
        t.start()
        assert inside.wait(10)
    assert get() == 1              # the other thread's scope still runs
    leave.set()
    t.join(10)
    assert get() == 3


def test_a_scope_gives_the_count_back_when_its_body_raises(many_threads):
    with pytest.raises(ValueError):
        with embedder.one_blas_thread():
            raise ValueError("boom")
    assert many_threads() == 3


def test_the_environment_does_not_set_the_threads_of_a_classification():
    """A fresh process told to use 4 BLAS threads and 4 OpenMP threads: numpy keeps its count outside the scope, one
    inside; onnxruntime and the tokenizer start no thread of their own for the encoder."""
    code = """
import os, sys
import numpy as np
from veriguard.enforce.embedder import Embedder, one_blas_thread, openblas_threads
get, _ = openblas_threads()
outside = get()
with one_blas_thread():
    inside = get()
e = Embedder()
before = len(os.listdir('/proc/self/task'))
e.embed(['Book a hotel in Paris for two nights', 'and a car', 'then stream a film ' * 60])
print(outside, inside, get(), len(os.listdir('/proc/self/task')) - before)
"""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "4", "OMP_NUM_THREADS": "4", "TOKENIZERS_PARALLELISM": "true"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    outside, inside, after, started = map(int, out.stdout.split())
    assert outside > 1 and inside == 1 and after == outside
    assert started == 0


def test_the_tokenizer_runs_in_the_callers_thread():
    emb = Embedder()

    class OneAtATime:
        def __init__(self, real):
            self.real = real

        def encode(self, text):
            return self.real.encode(text)

        def encode_batch(self, _texts):
            raise AssertionError("a batch goes to the tokenizer's thread pool")

    emb.tokenizer = OneAtATime(emb.tokenizer)
    vectors = emb.embed(["Rent a cheap SUV in Denver", "Fly me from Boston to Chicago"])
    assert vectors.shape == (2, embedder.DIM)
    assert emb.truncated(["a text never embedded"]) == [False]


def test_the_overflow_flags_come_from_the_recent_texts_not_only_the_last_run():
    emb = Embedder()
    long = " ".join(["book a cheap hotel room near the station"] * 60)  # over the 256 tokens the model reads
    emb.embed([long, "Rent a cheap SUV in Denver"])
    emb.embed(["Fly me from Boston to Chicago"])      # a later run
    real = emb.tokenizer

    class NoTokeniser:
        def encode(self, _text):
            raise AssertionError("tokenised again")

        encode_batch = encode

    real_plain = emb.plain   # plain ASCII is tokenised in Python (S32): neither tokeniser may run again
    emb.tokenizer = emb.plain = NoTokeniser()
    assert emb.truncated([long, "Rent a cheap SUV in Denver", "Fly me from Boston to Chicago"]) == [True, False, False]
    with pytest.raises(AssertionError, match="tokenised again"):
        emb.truncated(["a text no run read"])
    emb.tokenizer, emb.plain = real, real_plain
    assert not hasattr(emb, "_overflowing")    # one store of what was embedded


def bank_index():
    cues = categories.read_bank(SPECS / "mind2web_sc" / "categories.toml").cues
    patterns = tuple(p for kind in cues.kinds() for ps in kind.values() for p in ps)
    return textnorm.LiteralIndex(patterns), patterns


def texts():
    out = [json.loads(line)["task"] for line in (DATA / "heldout_tasks.jsonl").read_text().splitlines() if line]
    out += [json.loads(line)["text"] for line in (DATA / "evasions.jsonl").read_text().splitlines() if line]
    return out + ["", "a", "ab", "car", "suv", "SUV!", "an suv", "HOTEL \u212AITCHEN", "\u0130nn near the lake"]


def test_the_gram_prefilter_finds_every_literal_the_text_holds():
    """matchable (by id) and candidates are the patterns of every literal the text holds, as a search for each gives,
    less those whose other requirements (index.also and index.spaced, S33) it does not meet."""
    index, patterns = bank_index()
    assert any(len(s) < index.GRAM for s, _ in index.needing) and any(len(s) == index.GRAM for s, _ in index.needing)
    for text in texts():
        low = textnorm.folded(text)
        want = {id(p): p for p in index.always.values()}
        for s, ps in index.needing:
            if s in low:
                want.update(ps)
        want = {i: p for i, p in want.items() if all(any(s in low for s in r) for r in index.also.get(i, ()))
                and (" " in low or i not in index.spaced)}
        assert dict(index.matchable(low)) == want, text
        assert index.candidates(low) == frozenset(want.values()), text
    by_id = {id(p): p for p in patterns}
    assert all(by_id[i] is p for i, p in index.matchable(textnorm.folded("book a hotel and rent a car")).items())


def test_an_index_answers_a_text_asked_again_from_what_it_kept():
    index, _ = bank_index()
    low = textnorm.folded("Book a hotel in Rome and rent a car")
    first, firsts = index.matchable(low), index.candidates(low)
    assert first and firsts
    index.by_gram, index.short = {}, []     # the literals are not looked for again
    assert index.matchable(low) is first and index.candidates(low) is firsts
    for i in range(index.RECENT * 3):
        index.matchable(f"text {i}")
        index.candidates(f"text {i}")
    assert len(index._recent) <= index.RECENT and len(index._recent_sets) <= index.RECENT


def test_cue_vector_does_not_hash_a_pattern(monkeypatch):
    """cue_vector reads the patterns that may match by id: the index hands it a mapping whose patterns cannot be
    hashed, and it still gives the vector that searching every pattern gives."""
    bank = categories.read_bank(SPECS / "mind2web_sc" / "categories.toml")
    index = bank.cues.feature_index

    class Unhashable:
        __hash__ = None   # type: ignore[assignment]

        def __init__(self, p):
            self.p = p

        def finditer(self, text):
            return self.p.finditer(text)

    real = index.matchable
    monkeypatch.setattr(index, "matchable", lambda t: {i: Unhashable(p) for i, p in real(t).items()})
    monkeypatch.setattr(index, "candidates", lambda t: frozenset(Unhashable(p) for p in real(t).values()))
    for text in texts()[:80] + list(bank.texts[:100]):
        got = categories.cue_vector(bank.names, bank.cues, text)
        assert np.array_equal(got, reference_cue_vector(bank.names, bank.cues, text)), text

