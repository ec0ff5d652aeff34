"""The classifier's Python work around the encoder, cut with every output bit for bit unchanged (S32): plain ASCII text
is tokenised in Python (`wordpiece.AsciiWordPiece`, the library's ids), normalise skips its Unicode steps on ASCII
text (identities there), and the row norms of the pooled vectors are numpy's own ufuncs without np.linalg.norm's
checks. The classify outputs of v1-v19, both evasion splits and the benchmark were compared whole (see the README)."""
from __future__ import annotations

import random
import string
import unicodedata

import numpy as np
import pytest

from veriguard.enforce import attention, embedder, textnorm
from veriguard.enforce.attention import row_norms
from veriguard.enforce.textnorm import normalise
from tests.unit.test_classifier_speed_s26 import TEXTS, emb  # noqa: F401  (emb: a fixture)
from tests.unit.test_classifier_speed_s27 import texts
from tests.unit.test_classifier_speed_s29 import SENTENCES
from tests.unit.test_classifier_speed_s31 import WRITTEN

PLAIN = WRITTEN + SENTENCES + TEXTS + [
    "", " ", "\n\t\r", "Book   a\thotel\nnow!!", "e-mail: jo.doe@example.com, #tag $5 50% off (x2) [note] {a|b} ~`^_\\",
    "Supercalifragilisticexpialidocious qwzxv zzzzzzzzzzzzzzzzz HOTEL hOtEl 4x4 2024-05-01 10:30pm",
    "x" * 100, "x" * 101, "book " + "y" * 100 + " now", " ".join(["hotel"] * 300), " ".join(["unbelievably"] * 90),
    "[sep] [Cls] [MASK", "a [b] c",
]
NOT_PLAIN = ["Book a hôtel", "Rent a car\x0bnow", "delete\x7f", "nul\x00", "Book [SEP] it", "[MASK]", "x[UNK]",
             "\u00a0space", "ｂｏｏｋ"]


def random_plain(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits + string.punctuation + " \t\n\r")
                   for _ in range(rng.randint(0, 80)))


def test_plain_text_gets_the_librarys_ids_and_cut(emb):  # noqa: F811
    rng = random.Random(32)
    cases = PLAIN + [t for t in texts() if t.isascii()] + [random_plain(rng) for _ in range(2000)]
    for text in cases:
        got, want = emb.plain.encode(text), emb.tokenizer.encode(text)
        assert got is not None, text
        assert (got.ids, got.overflowing) == (want.ids, bool(want.overflowing)), text
    for words, cut in [(emb.encoder.max_tokens - 2, False), (emb.encoder.max_tokens - 1, True)]:
        got, want = emb.plain.encode(" ".join(["hotel"] * words)), emb.tokenizer.encode(" ".join(["hotel"] * words))
        assert (got.overflowing, got.ids) == (cut, want.ids)
        assert len(got.ids) == min(words + 2, emb.encoder.max_tokens)


def test_other_text_is_left_to_the_library(emb):  # noqa: F811
    for text in NOT_PLAIN:
        assert emb.plain.encode(text) is None, text


class CountingTokenizer:
    """The library tokenizer, counting the texts it encodes."""

    def __init__(self, tokenizer):
        self.tokenizer, self.texts = tokenizer, []

    def encode(self, text):
        self.texts.append(text)
        return self.tokenizer.encode(text)


def test_the_embedder_reads_plain_text_without_the_library(emb, monkeypatch):  # noqa: F811
    counting = CountingTokenizer(emb.tokenizer)
    monkeypatch.setattr(emb, "tokenizer", counting)
    emb._recent.clear()
    emb.embed_states(["Book a hotel in Lyon for two nights, s32", "Rent a van; then buy a ticket (s32)"])
    assert emb.truncated(["Rent me a car s32 " * 60]) == [True]
    assert counting.texts == []
    emb.embed(["Book a hôtel in Lyon s32"])
    assert counting.texts == ["Book a hôtel in Lyon s32"]


class NoPlain:
    def encode(self, text):
        return None


def test_vectors_and_states_are_the_same_bits_through_either_tokenizer(emb, monkeypatch):  # noqa: F811
    batch = PLAIN[:12] + NOT_PLAIN[:2]
    emb._recent.clear()
    fast_vectors, fast_states = emb.embed_states(batch)
    fast_cut = emb.truncated(batch)
    emb._recent.clear()
    monkeypatch.setattr(emb, "plain", NoPlain())
    vectors, states = emb.embed_states(batch)
    assert fast_vectors.tobytes() == vectors.tobytes()
    assert [s.tobytes() for s in fast_states] == [s.tobytes() for s in states]
    emb._recent.clear()
    assert emb.truncated(batch) == fast_cut


def test_row_norms_are_linalg_norms_bits():
    rng = np.random.default_rng(32)
    for shape in [(1, 384), (3, 384), (7, 13), (2, 1)]:
        for scale in (1e-20, 1.0, 1e3):
            x = (rng.standard_normal(shape) * scale).astype(np.float32)
            want = np.linalg.norm(x, axis=1, keepdims=True)
            got = row_norms(x)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    hidden = rng.standard_normal((2, 9, 384)).astype(np.float32)
    mask = np.array([[1] * 9, [1] * 5 + [0] * 4], np.int64)
    weights = mask[..., None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), np.float32(1e-9))
    want = (pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), np.float32(1e-12))).astype(np.float32)
    assert embedder.mean_pooled(hidden, mask).tobytes() == want.tobytes()


def test_the_unicode_steps_skipped_on_ascii_are_identities_there():
    every = "".join(map(chr, range(128)))
    for text in [every, *PLAIN, *(t for t in texts() if t.isascii())]:
        assert textnorm.map_lookalikes(text) == text
        assert unicodedata.normalize("NFKC", text) == text
        assert textnorm.strip_marks(text) == text
        assert textnorm.glued_arrows(text) == []
        assert textnorm.name_pictographs(text) == (text, [])


@pytest.mark.parametrize("text", ["Book a hotel -> Lyon <3 :) &amp; now", "Rent\x01 a car\x7f", "ok"])
def test_normalise_skips_the_unicode_steps_on_ascii_text(text, monkeypatch):
    calls = []
    for name in ("map_lookalikes", "glued_arrows", "name_pictographs"):
        plain = getattr(textnorm, name)
        monkeypatch.setattr(textnorm, name, lambda t, *a, _f=plain, _n=name: calls.append(_n) or _f(t, *a))
    got = normalise(text)
    assert calls == []
    assert got.pictographs == () and got.routes == ()
    normalise("Book a hôtel → Lyon 🏨")
    assert set(calls) == {"map_lookalikes", "glued_arrows", "name_pictographs"}


def test_attention_pooling_reads_the_same_norms():
    rng = np.random.default_rng(7)
    att = attention.Attention(rng.standard_normal((3, 16)).astype(np.float32),
                              rng.standard_normal(16).astype(np.float32), np.abs(rng.standard_normal(16)).astype(np.float32) + 0.5)
    states = [rng.standard_normal((n, 16)).astype(np.float32) for n in (3, 11)]
    out = attention.pooled(att, states)
    for i, h in enumerate(states):
        z = (h - att.centre) / att.scale
        s = z @ att.queries.T
        a = np.exp(s - s.max(axis=0, keepdims=True))
        p = (a / a.sum(axis=0, keepdims=True)).T @ z
        want = (p / np.maximum(np.linalg.norm(p, axis=1, keepdims=True), np.float32(1e-12))).ravel()
        assert out[i].tobytes() == want.tobytes()


def test_the_tokenizer_settings_are_the_librarys_and_no_piece_is_longer_than_the_bound(emb):  # noqa: F811
    """The added tokens, max_input_chars_per_word and the longest entry are read from the tokenizer file (review
    mend): they are the library's own, and words of long pieces still get its ids with the lookup stopped there."""
    plain, tokenizer = emb.plain, emb.tokenizer
    assert plain.special == tuple(t.content for _, t in sorted(tokenizer.get_added_tokens_decoder().items()))
    assert plain.longest_word == tokenizer.model.max_input_chars_per_word == 100
    assert plain.longest_piece == max(map(len, tokenizer.get_vocab(with_added_tokens=True)))
    vocab = tokenizer.get_vocab()
    longest = sorted((w for w in vocab if w.isascii() and w.isalnum()), key=len)[-20:]
    endings = sorted((w for w in vocab if w.startswith("##") and w[2:].isalnum()), key=len)[-20:]
    rng = random.Random(1)
    for _ in range(300):
        word = rng.choice(longest) + "".join(rng.choice(endings)[2:] for _ in range(rng.randint(0, 5)))
        word += "".join(rng.choice("qxzjvkw") for _ in range(rng.randint(0, 30)))
        for text in (word[:100], word[:101], "x" + word[:99]):
            assert emb.plain.encode(text).ids == tokenizer.encode(text).ids, text
