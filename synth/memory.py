"""Demonstration memory (as in GuardAgent): finished syntheses, retrieved by text similarity.

Demonstrations live in the transcript database (table `demonstrations`, created by migration
`m002_demonstrations` in `synth.transcripts`, its `clarifications` column by
`m003_demonstration_clarifications`), so one file holds a user's whole history.
Similarity is the normalized Levenshtein distance between the query's request+agent text and
each stored case's, after lower-casing, collapsing whitespace and capping the length.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from veriguard.synth.transcripts import connect


@dataclass(frozen=True)
class Demonstration:
    id: int
    spec_name: str
    request: str
    agent: str
    contract: str
    policy: str
    synthesis_id: str | None
    created_at: str
    clarifications: str
    """The approved answers (or recorded assumptions) that resolved the request's ambiguities."""


@dataclass(frozen=True)
class Match:
    demonstration: Demonstration
    distance: float
    """Normalized Levenshtein distance in [0, 1]; 0 means identical texts."""

    def as_prompt_case(self) -> dict[str, Any]:
        """The case as the prompts show it (synth.prompting.demonstrations reads a stage's key from it)."""
        d = self.demonstration
        return {"spec": d.spec_name, "request": d.request, "clarifications": d.clarifications,
                "contract": d.contract, "policy": d.policy, "distance": round(self.distance, 4)}


def levenshtein(a: str, b: str, *, max_distance: int | None = None) -> int:
    """Edit distance, O(len(a) * len(b)); stops early with a value > max_distance once it is exceeded."""
    if len(a) < len(b):
        a, b = b, a
    if max_distance is not None and len(a) - len(b) > max_distance:
        return len(a) - len(b)
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, start=1):
        current = [i]
        left = i
        for j, char_b in enumerate(b):
            # comparisons instead of min(): this loop is the whole cost of retrieval
            cost = previous[j] + (char_a != char_b)
            if previous[j + 1] + 1 < cost:
                cost = previous[j + 1] + 1
            if left + 1 < cost:
                cost = left + 1
            current.append(cost)
            left = cost
        if max_distance is not None and min(current) > max_distance:
            return min(current)  # no later row can go below this row's minimum
        previous = current
    return previous[-1]


def normalized_text(request: str, agent: str, max_chars: int) -> str:
    """The text compared: request first, so a long agent description is what the cap cuts."""
    text = " ".join(request.lower().split()) + "\n" + " ".join(agent.lower().split())
    return text[:max_chars]


def normalized_distance(a: str, b: str, *, max_distance: float = 1.0) -> float:
    longest = max(len(a), len(b))
    if longest == 0:
        return 0.0
    distance = levenshtein(a, b, max_distance=int(max_distance * longest))
    return min(1.0, distance / longest)


class DemonstrationMemory:
    """Past syntheses for few-shot prompting; with `enabled=False` it stores and returns nothing."""

    def __init__(self, path: str | Path | None = None, *, enabled: bool = True, max_chars: int = 500) -> None:
        self.path = path
        self.enabled = enabled
        self.max_chars = max_chars
        self._db: sqlite3.Connection | None = None

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            self._db = connect(self.path)
        return self._db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def add(
        self,
        *,
        spec_name: str,
        request: str,
        agent: str,
        contract: str,
        policy: str,
        clarifications: str = "",
        synthesis_id: str | None = None,
    ) -> int | None:
        """Store a finished synthesis; returns its id, or None when the memory is disabled."""
        if not self.enabled:
            return None
        with self.db:
            cursor = self.db.execute(
                "INSERT INTO demonstrations (spec_name, request, agent, contract, policy, clarifications, synthesis_id,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (spec_name, request, agent, contract, policy, clarifications, synthesis_id,
                 datetime.now(UTC).isoformat(timespec="milliseconds")),
            )
        return int(cursor.lastrowid or 0)

    def all(self) -> list[Demonstration]:
        if not self.enabled:
            return []
        rows = self.db.execute("SELECT * FROM demonstrations ORDER BY id").fetchall()
        return [Demonstration(**dict(row)) for row in rows]

    def retrieve(self, request: str, agent: str, *, k: int = 3) -> list[Match]:
        """The k stored cases closest to request+agent, nearest first; ties go to the newest."""
        if not self.enabled or k <= 0:
            return []
        query = normalized_text(request, agent, self.max_chars)
        matches: list[Match] = []
        for demo in reversed(self.all()):
            bound = matches[-1].distance if len(matches) >= k else 1.0
            text = normalized_text(demo.request, demo.agent, self.max_chars)
            distance = normalized_distance(query, text, max_distance=bound)
            if len(matches) < k or distance < bound:
                matches.append(Match(demo, distance))
                # stable sort: among equal distances the newer (seen earlier) stays first
                matches.sort(key=lambda match: match.distance)
                del matches[k:]
        return matches
