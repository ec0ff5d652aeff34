"""Which restricted categories a task falls under (none, one or several), from an example bank we
wrote, with an embedded sentence model and no LLM.

Features: the task's MiniLM embedding plus one indicator per category saying whether one of that
category's cue phrases occurs. One ridge-regularised logistic regression per category (one vs rest),
trained on the bank when the classifier loads. A category is in when its probability is at least
`include`; between `unsure` and `include` the classifier is unsure: it reports the category as
uncertain and abstains, and the spec decides what that means (deny, or assume the category).

The text is normalised first (enforce/textnorm.py: escapes, invisible characters, look-alike letters,
spaced letters, leetspeak, run-on words) and read whole: a task up to `WINDOW` characters as one piece
and, when it has several sentences, sentence by sentence; a longer one sentence by sentence, with
half-overlapping word windows for a sentence over `WINDOW`. The categories of all pieces are united
(the restrictive union: a prefix or filler cannot dilute the ask). Above `MAX_CHARS` characters or
`MAX_PIECES` pieces nothing is read: the classifier abstains with an unreadable text, which every
abstain mode denies (the cost grows with the length, and no web task is that long; the benchmark's
longest has 244 characters). Text unlike the bank abstains with every category not found uncertain:
characters the normaliser cannot map to Latin, words broken by digits or symbols that spell nothing,
another language, a piece longer than the model reads, or an embedding far from every bank example.
"""
from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from veriguard.enforce.embedder import Embedder, lexicon, shared_embedder
from veriguard.enforce.textnorm import Normalised, describe, foreign_words, normalise

MAX_CHARS = 10_000
MAX_PIECES = 256      # distinct sentences or windows read; more abstains like a text over MAX_CHARS
WINDOW = 400          # characters: a task up to this long is read whole as well as sentence by sentence
WINDOW_WORDS = 40     # a sentence longer than WINDOW is read in windows of this many words, half overlapping
MIN_SIMILARITY = 0.25  # below the least similar benchmark task (0.263) and bank example to its nearest other (0.267)


@dataclass(frozen=True)
class Classification:
    labels: frozenset[str]
    scores: dict[str, float]
    abstained: bool
    confidence: float
    reason: str
    uncertain: frozenset[str] = frozenset()
    readable: bool = True  # False when there was no text to read at all


@dataclass(frozen=True)
class Bank:
    names: tuple[str, ...]
    descriptions: dict[str, str]
    cues: dict[str, tuple[re.Pattern[str], ...]]
    texts: tuple[str, ...]
    labels: tuple[frozenset[str], ...]
    settings: dict[str, Any]


def read_bank(path: str | Path) -> Bank:
    raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    names = tuple(raw["categories"])
    gold: dict[str, set[str]] = {}
    for name, body in raw["categories"].items():
        for t in body["positives"]:
            gold.setdefault(t, set()).add(name)
        for t in body.get("negatives", []):
            gold.setdefault(t, set())
    for t in raw.get("none", {}).get("examples", []):
        gold.setdefault(t, set())
    cues = {n: tuple(re.compile(c, re.IGNORECASE) for c in raw["categories"][n].get("cues", [])) for n in names}
    return Bank(names, {n: raw["categories"][n].get("description", "") for n in names}, cues, tuple(gold),
                tuple(frozenset(v) for v in gold.values()), dict(raw.get("settings", {})))


def cue_vector(bank: Bank, text: str) -> np.ndarray:
    return np.array([1.0 if any(p.search(text) for p in bank.cues[n]) else 0.0 for n in bank.names], np.float32)


def features(bank: Bank, vectors: np.ndarray, texts: list[str] | tuple[str, ...], cue_weight: float) -> np.ndarray:
    cues = np.stack([cue_vector(bank, t) for t in texts]) * cue_weight
    return np.hstack([vectors, cues, np.ones((len(texts), 1), np.float32)]).astype(np.float64)


def train(x: np.ndarray, y: np.ndarray, ridge: float, iterations: int = 25) -> np.ndarray:
    """Logistic regression by Newton's method with an L2 penalty (the bias is penalised too, lightly)."""
    w = np.zeros(x.shape[1])
    pos = max(y.sum(), 1.0)
    weight = np.where(y > 0, (len(y) - pos) / pos, 1.0)  # balance the classes
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        grad = x.T @ (weight * (p - y)) + ridge * w
        hess = (x * (weight * p * (1 - p))[:, None]).T @ x + ridge * np.eye(x.shape[1])
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-6:
            break
    return w


class CategoryClassifier:
    def __init__(self, bank: Bank, embedder: Embedder, *, source: str = "") -> None:
        self.bank = bank
        self.embedder = embedder
        self.source = source
        s = bank.settings
        self.cue_weight = float(s.get("cue_weight", 1.5))
        self.ridge = float(s.get("ridge", 1.0))
        self.include = float(s.get("include", 0.5))
        self.unsure = float(s.get("unsure", 0.25))
        self.min_similarity = float(s.get("min_similarity", MIN_SIMILARITY))
        self.vectors = embedder.embed(list(bank.texts))
        bank_words = {w.lower() for t in bank.texts for w in re.findall(r"[A-Za-z]+", t)}
        self.known: frozenset[str] = lexicon() | bank_words
        self.weights = self.fit(range(len(bank.texts)))

    @classmethod
    def from_bank(cls, path: str | Path, embedder: Embedder | None = None) -> "CategoryClassifier":
        if embedder is not None:
            return cls(read_bank(path), embedder, source=str(path))
        return _trained(str(path), hashlib.sha256(Path(path).read_bytes()).hexdigest())

    def fit(self, rows: Any) -> dict[str, np.ndarray]:
        idx = list(rows)
        x = features(self.bank, self.vectors[idx], [self.bank.texts[i] for i in idx], self.cue_weight)
        return {n: train(x, np.array([1.0 if n in self.bank.labels[i] else 0.0 for i in idx]), self.ridge)
                for n in self.bank.names}

    def probabilities(self, vector: np.ndarray, text: str, weights: dict[str, np.ndarray] | None = None) -> dict[str, float]:
        x = features(self.bank, vector[None, :], [text], self.cue_weight)[0]
        ws = weights or self.weights
        return {n: float(1.0 / (1.0 + np.exp(-(x @ ws[n])))) for n in self.bank.names}

    def decide(self, probs: dict[str, float]) -> Classification:
        labels = frozenset(n for n, p in probs.items() if p >= self.include)
        uncertain = frozenset(n for n, p in probs.items() if self.unsure <= p < self.include)
        parts = [f"{n} {probs[n]:.2f}" for n in sorted(labels)] + [f"{n}? {probs[n]:.2f}" for n in sorted(uncertain)]
        sure = min((abs(p - self.include) for p in probs.values()), default=1.0)
        return Classification(labels, {n: round(p, 4) for n, p in probs.items()}, bool(uncertain),
                              0.5 if uncertain else round(min(1.0, 0.5 + sure), 3),
                              ", ".join(parts) or "no restricted category", uncertain)

    def unreadable(self, reason: str) -> Classification:
        return Classification(frozenset(), {}, True, 0.0, reason, frozenset(self.bank.names), readable=False)

    def classify(self, text: str) -> Classification:
        if not isinstance(text, str):
            return self.unreadable("the task is not text")
        if len(text) > MAX_CHARS:
            return self.unreadable(f"the task has {len(text)} characters, over the {MAX_CHARS} the classifier reads")
        norm = normalise(text, self.known)
        if not re.search(r"[A-Za-z]{2,}", norm.text):
            shown = f" (unreadable characters: {describe(norm.unreadable)})" if norm.unreadable else ""
            return self.unreadable("no task text to classify" + shown)
        pieces, whole = split_text(norm.text)
        if len(pieces) > MAX_PIECES:
            return self.unreadable(f"the task has {len(pieces)} distinct sentences or windows, over the {MAX_PIECES} "
                                   "the classifier reads")
        vectors = self.embedder.embed(pieces)
        results = [self.decide(self.probabilities(v, p)) for v, p in zip(vectors, pieces)]
        checked = [0] if whole else list(range(len(pieces)))
        doubts = self.doubts(norm, [pieces[i] for i in checked], vectors[checked])
        return self.merge(results, doubts, norm)

    def doubts(self, norm: Normalised, pieces: list[str], vectors: np.ndarray) -> list[str]:
        """Why the text is unlike anything the bank taught the classifier to read (empty: it is like it)."""
        out = []
        if norm.unreadable:
            out.append(f"characters it cannot read: {describe(norm.unreadable)}")
        if norm.residue:
            out.append(f"words with digits or symbols that spell no known word: {', '.join(norm.residue[:5])}")
        foreign = next(filter(None, (foreign_words(p, self.known) for p in pieces)), "")
        if foreign:
            out.append(f"not English ({foreign})")
        similarity = float((vectors @ self.vectors.T).max(axis=1).min())
        if similarity < self.min_similarity:
            out.append(f"unlike every bank example (similarity {similarity:.2f} < {self.min_similarity})")
        if any(self.embedder.truncated(pieces)):
            out.append("a piece longer than the model reads")
        return out

    def merge(self, results: list[Classification], doubts: list[str], norm: Normalised) -> Classification:
        """The restrictive union of the pieces' readings; a doubt makes every category not found uncertain."""
        labels = frozenset().union(*(r.labels for r in results))
        uncertain = frozenset(self.bank.names) - labels if doubts else \
            frozenset().union(*(r.uncertain for r in results)) - labels
        scores = {n: max(r.scores[n] for r in results) for n in self.bank.names}
        reason = ", ".join([f"{n} {scores[n]:.2f}" for n in sorted(labels)]
                           + [f"{n}? {scores[n]:.2f}" for n in sorted(uncertain) if scores[n] >= self.unsure]) \
            or "no restricted category"
        if len(results) > 1:
            reason += f" (read in {len(results)} pieces)"
        if norm.changes:
            reason += f"; normalised: {'; '.join(norm.changes)}"
        if doubts:
            reason += f"; text unlike the bank, every category not found is uncertain: {'; '.join(doubts)}"
        confidence = 0.0 if doubts else min(r.confidence for r in results)
        return Classification(labels, scores, bool(uncertain), confidence, reason, uncertain)


def split_text(text: str) -> tuple[list[str], bool]:
    """The pieces to read, and whether the first is the whole text: a text up to WINDOW characters whole
    and, when it has several sentences, each sentence; a longer one in windows (sentences, and words
    for a sentence longer than WINDOW, half overlapping)."""
    sentences = [" ".join(s.split()) for s in re.split(r"(?<=[.!?;])\s+|\n", text) if s.strip()]
    flat = " ".join(text.split())
    if len(flat) <= WINDOW:
        return list(dict.fromkeys([flat] + (sentences if len(sentences) > 1 else []))), True
    pieces: list[str] = []
    for sentence in sentences:
        words = sentence.split(" ")
        if len(sentence) <= WINDOW:
            pieces.append(sentence)
            continue
        step = WINDOW_WORDS // 2
        pieces.extend(" ".join(words[i:i + WINDOW_WORDS]) for i in range(0, max(len(words) - step, 1), step))
    return list(dict.fromkeys(pieces)), False


@lru_cache(maxsize=8)
def _trained(path: str, sha256: str) -> CategoryClassifier:
    """One trained classifier per bank content (the sha256 is part of the key): training embeds the bank."""
    return CategoryClassifier(read_bank(path), shared_embedder(), source=path)


def leave_one_out(clf: CategoryClassifier) -> dict[str, Any]:
    """Each bank example classified by a model trained on all the others."""
    rows = []
    n = len(clf.bank.texts)
    for i in range(n):
        weights = clf.fit(j for j in range(n) if j != i)
        got = clf.decide(clf.probabilities(clf.vectors[i], clf.bank.texts[i], weights))
        rows.append({"text": clf.bank.texts[i], "gold": sorted(clf.bank.labels[i]), "got": sorted(got.labels),
                     "uncertain": sorted(got.uncertain)})
    return {"n": n, "exact": sum(1 for r in rows if r["gold"] == r["got"] and not r["uncertain"]),
            "missed": [r for r in rows if set(r["gold"]) - set(r["got"]) - set(r["uncertain"])],
            "extra": [r for r in rows if set(r["got"]) - set(r["gold"])],
            "abstained": sum(1 for r in rows if r["uncertain"]), "rows": rows}
