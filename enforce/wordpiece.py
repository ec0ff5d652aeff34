"""The embedded encoder's WordPiece vocabulary, read without numpy or the encoder (the `llm` install has neither):
its whole words are what the classifier reads as one word and what an English reader knows."""
from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Callable, NamedTuple

TOKENIZER = Path(__file__).parent / "assets" / "minilm_tokenizer.json"


class _Vocabulary(NamedTuple):
    """What is read of the tokenizer file, parsed once (the vocabulary itself is not kept)."""
    words: frozenset[str]        # whole words: lower case, Latin letters only
    special: tuple[str, ...]     # the added tokens, matched in the raw text before normalising
    longest_word: int            # max_input_chars_per_word: a longer word is [UNK]
    longest_piece: int           # the longest vocabulary entry or added token, in characters ("##" included)


@lru_cache(maxsize=1)
def _vocabulary() -> _Vocabulary:
    """The tokenizer file's facts. OSError, ValueError, KeyError or TypeError when it cannot be read."""
    tokenizer = json.loads(TOKENIZER.read_text(encoding="utf-8"))
    vocab = tokenizer["model"]["vocab"]
    special = tuple(t["content"] for t in tokenizer["added_tokens"])
    return _Vocabulary(frozenset(w for w in vocab if w.isascii() and w.isalpha()), special,
                       int(tokenizer["model"]["max_input_chars_per_word"]), max(map(len, (*vocab, *special))))


def whole_words() -> frozenset[str]:
    """The vocabulary's whole words (lower case, Latin letters only). OSError, ValueError, KeyError or TypeError when
    the tokenizer file cannot be read; each caller says what that stops."""
    return _vocabulary().words


# Text of these characters only is tokenised in Python (AsciiWordPiece); any other goes to the tokenizers library.
_PLAIN_TEXT = re.compile(r"[\t\n\r -~]*")
# Of plain text, lower-cased: what BertPreTokenizer splits it into (whitespace dropped; every ASCII character that is
# not a letter, a digit or whitespace is BERT punctuation, a word of its own)
_WORDS = re.compile(r"[a-z0-9]+|[!-/:-@\[-`{-~]")


class Encoded(NamedTuple):
    """What the embedder reads of an encoding: the token ids ([CLS] and [SEP] included) and whether it was cut."""
    ids: list[int]
    overflowing: bool


class AsciiWordPiece:
    """The vendored tokenizer (BertNormalizer lower-casing, BertPreTokenizer, WordPiece with '##' and
    max_input_chars_per_word 100, [CLS] ... [SEP], cut to `max_tokens`) for text of printable ASCII, tabs and line
    breaks, where normalising is lower-casing alone; its ids equal the library's (tests/unit/test_classifier_speed_s32.py).
    `lookup` is the library's own vocabulary lookup (Tokenizer.token_to_id): no copy of the vocabulary is kept, only
    the pieces of the WORDS words last read. The added tokens (text holding one is not plain), max_input_chars_per_word
    and the longest entry's length (no longer piece is looked up) are read from the tokenizer file."""

    WORDS = 8192

    def __init__(self, lookup: Callable[[str], int | None], max_tokens: int) -> None:
        self.lookup = lookup
        self.max_tokens = max_tokens
        vocabulary = _vocabulary()
        self.special = vocabulary.special
        self.longest_word = vocabulary.longest_word
        self.longest_piece = vocabulary.longest_piece
        ids = [lookup(t) for t in ("[CLS]", "[SEP]", "[UNK]")]
        if any(i is None for i in ids):
            raise ValueError("the tokenizer has no [CLS], [SEP] or [UNK] token")
        self.cls, self.sep, self.unk = (int(i) for i in ids if i is not None)
        self._pieces: dict[str, tuple[int, ...]] = {}

    def encode(self, text: str) -> Encoded | None:
        """The text's encoding; None when the text is not plain (the library tokenises it)."""
        if not _PLAIN_TEXT.fullmatch(text) or "[" in text and any(s in text for s in self.special):
            return None
        ids = [self.cls]
        known = self._pieces
        for word in _WORDS.findall(text.lower()):
            got = known.get(word)
            if got is None:
                got = self.word_ids(word)
                if len(known) >= self.WORDS:
                    known.clear()   # not an eviction of the oldest: a clear is safe beside other threads under the GIL
                known[word] = got
            ids.extend(got)
        cut = len(ids) > self.max_tokens - 1
        if cut:
            del ids[self.max_tokens - 1:]
        ids.append(self.sep)
        return Encoded(ids, cut)

    def word_ids(self, word: str) -> tuple[int, ...]:
        """WordPiece: the longest vocabulary piece at each place ('##' after the first); [UNK] for the whole word when
        some place has none. No piece longer than the longest entry is looked up (none could be found)."""
        if len(word) > self.longest_word:
            return (self.unk,)
        out, start = [], 0
        while start < len(word):
            most = self.longest_piece if start == 0 else self.longest_piece - 2   # "##" counted in the entry
            for end in range(min(len(word), start + most), start, -1):
                got = self.lookup(word[start:end] if start == 0 else "##" + word[start:end])
                if got is not None:
                    break
            else:
                return (self.unk,)
            out.append(got)
            start = end
        return tuple(out)
