"""The embedded encoder's WordPiece vocabulary, read without numpy or the encoder (the `llm` install has neither):
its whole words are what the classifier reads as one word and what an English reader knows."""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

TOKENIZER = Path(__file__).parent / "assets" / "minilm_tokenizer.json"


@lru_cache(maxsize=1)
def whole_words() -> frozenset[str]:
    """The vocabulary's whole words (lower case, Latin letters only). OSError, ValueError, KeyError or TypeError when
    the tokenizer file cannot be read; each caller says what that stops."""
    vocab = json.loads(TOKENIZER.read_text(encoding="utf-8"))["model"]["vocab"]
    return frozenset(w for w in vocab if w.isascii() and w.isalpha())
