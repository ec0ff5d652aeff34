"""Attention pooling of the encoder's token states, as features of the category classifier beside the mean vector.

The mean of the token states reads a sentence's topics; a category's act is a few tokens of it ("book", "rent"),
which the mean dilutes among the rest. K query vectors, shared by all categories, each weigh the tokens of a
piece by softmax(z . q) and take the weighted mean of their states z (centred and scaled by the training tokens'
mean and deviation); each pooled vector, L2-normalised, joins the mean vector among the regression's inputs.

Synth learns the queries once, jointly for all categories: a logistic output per category over the pooled vectors
and the mean vector, trained by Adam on the bank in float32 (`learn`); the category regressions are then fitted
on the frozen queries' features as on the mean vector. The queries, the centre and the scale are frozen into the
build with the weights (`Attention`), and pooling a piece costs one (tokens x 384) by (384 x K) product."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

BUCKET = 64  # texts of similar length padded together while learning


@dataclass(frozen=True)
class Attention:
    queries: np.ndarray   # (K, D) float32
    centre: np.ndarray    # (D,) the training tokens' mean
    scale: np.ndarray     # (D,) their deviation

    @property
    def width(self) -> int:
        return int(self.queries.size)


def row_norms(x: np.ndarray) -> np.ndarray:
    """np.linalg.norm(x, axis=1, keepdims=True) of a real array, by the same ufuncs in the same order (its own code
    for this case: sqrt(add.reduce(x * x))), so the same bits, without its per-call checks."""
    return np.sqrt(np.add.reduce(x * x, axis=1, keepdims=True))


def pooled(att: Attention, states: Sequence[np.ndarray]) -> np.ndarray:
    """(n, K*D): per text, each query's attention-weighted mean of its standardised token states, L2-normalised."""
    out = np.zeros((len(states), att.width), np.float32)
    for i, h in enumerate(states):
        z = (np.asarray(h, np.float32) - att.centre) / att.scale
        s = z @ att.queries.T                       # (T, K)
        a = np.exp(s - s.max(axis=0, keepdims=True))
        p = (a / a.sum(axis=0, keepdims=True)).T @ z  # (K, D)
        out[i] = (p / np.maximum(row_norms(p), np.float32(1e-12))).ravel()
    return out


def _buckets(states: Sequence[np.ndarray], att_centre: np.ndarray, att_scale: np.ndarray
             ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(indices, standardised states padded to the bucket's longest, mask) for texts sorted by length."""
    order = sorted(range(len(states)), key=lambda i: len(states[i]))
    out = []
    for start in range(0, len(order), BUCKET):
        rows = np.array(order[start:start + BUCKET])
        width = max(len(states[i]) for i in rows)
        z = np.zeros((len(rows), width, att_centre.shape[0]), np.float32)
        mask = np.zeros((len(rows), width), bool)
        for j, i in enumerate(rows):
            z[j, :len(states[i])] = (states[i] - att_centre) / att_scale
            mask[j, :len(states[i])] = True
        out.append((rows, z, mask))
    return out


def learn(states: Sequence[np.ndarray], means: np.ndarray, y: np.ndarray, k: int, *, iterations: int = 100,
          rate: float = 0.04, ridge: float = 1e-2, seed: int = 0) -> Attention:
    """K queries shared by the categories (the columns of y, 0/1), learnt jointly with one logistic output per
    category over [pooled vectors, mean vector] by Adam, each category's classes balanced. Deterministic."""
    tokens = np.concatenate([np.asarray(h, np.float32) for h in states])
    centre = tokens.mean(axis=0)
    scale = tokens.std(axis=0) + np.float32(1e-6)
    del tokens
    d = centre.shape[0]
    n, c = y.shape
    rng = np.random.default_rng(seed)
    q = rng.normal(0.0, 0.05, (k, d)).astype(np.float32)
    w = np.zeros((c, k * d + d), np.float32)
    b = np.zeros(c, np.float32)
    pos = np.maximum(y.mean(axis=0), 1e-3)
    cw = (np.where(y > 0, 0.5 / pos, 0.5 / np.maximum(1 - pos, 1e-3)) / n).astype(np.float32)
    buckets = _buckets(states, centre, scale)
    params = [q, w, b]
    m1 = [np.zeros_like(p) for p in params]
    m2 = [np.zeros_like(p) for p in params]
    for t in range(1, iterations + 1):
        gq, gw, gb = ridge * q, ridge * w, np.zeros_like(b)
        # contiguous copies: numpy's products on transposed or sliced float32 operands skip BLAS (10-30x slower)
        qt, wt, wp = np.ascontiguousarray(q.T), np.ascontiguousarray(w.T), np.ascontiguousarray(w[:, :k * d])
        for rows, z, mask in buckets:
            nb, width = mask.shape
            flat = z.reshape(-1, d)                                            # (nb*T, D)
            s = np.where(mask[:, :, None], (flat @ qt).reshape(nb, width, k), np.float32(-1e9))
            a = np.exp(s - s.max(axis=1, keepdims=True)) * mask[:, :, None]
            a /= a.sum(axis=1, keepdims=True)                                  # (nb, T, K)
            p = np.matmul(a.transpose(0, 2, 1), z)                             # (nb, K, D)
            x = np.concatenate([p.reshape(nb, -1), means[rows]], axis=1)
            g = (1.0 / (1.0 + np.exp(-(x @ wt + b))) - y[rows]) * cw[rows]  # (nb, C)
            gw += g.T @ x
            gb += g.sum(axis=0)
            dp = (g @ wp).reshape(nb, k, d)
            e = np.matmul(z, dp.transpose(0, 2, 1))                            # (nb, T, K)
            ds = a * (e - (a * e).sum(axis=1, keepdims=True))
            gq += (flat.T @ ds.reshape(-1, k)).T                               # (K, D)
        for i, (param, grad) in enumerate(zip(params, (gq, gw, gb))):
            m1[i] = 0.9 * m1[i] + 0.1 * grad
            m2[i] = 0.999 * m2[i] + 0.001 * grad ** 2
            param -= (rate * (m1[i] / (1 - 0.9 ** t)) / (np.sqrt(m2[i] / (1 - 0.999 ** t)) + 1e-8)).astype(np.float32)
    return Attention(q, centre.astype(np.float32), scale.astype(np.float32))
