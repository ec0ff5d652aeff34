"""SQLite transcript store: every synthesis and every provider exchange, raw payloads included.

The schema evolves only through `MIGRATIONS`, an append-only list of named functions
(`m001_initial`, ...); a migration's function name is its id in the `_migrations` table. The
demonstration memory (`synth.memory`) keeps its table in the same file (`m002_demonstrations`).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from veriguard.contracts.errors import OperatorError
from veriguard.providers.prices import cost_usd
from veriguard.providers.types import (
    Completion, CompletionRequest, Provider, ProviderError, canonical_json, request_hash,
)

TRANSCRIPT_FORMAT = "veriguard.transcript/1"

Migration = Callable[[sqlite3.Connection], None]
MIGRATIONS: list[Migration] = []


def migration(step: Migration) -> Migration:
    """Register a migration; append new ones at the end of this module, never edit applied ones."""
    MIGRATIONS.append(step)
    return step


@migration
def m001_initial(db: sqlite3.Connection) -> None:
    db.execute(
        """CREATE TABLE syntheses (
            id TEXT PRIMARY KEY,
            spec_name TEXT NOT NULL,
            spec_sha256 TEXT NOT NULL,
            provider TEXT NOT NULL,
            model TEXT NOT NULL,
            mode TEXT NOT NULL,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            status TEXT NOT NULL,
            certificate_path TEXT
        )"""
    )
    db.execute(
        """CREATE TABLE exchanges (
            synthesis_id TEXT NOT NULL REFERENCES syntheses(id),
            seq INTEGER NOT NULL,
            stage TEXT NOT NULL,
            round INTEGER NOT NULL,
            system TEXT NOT NULL,
            prompt TEXT NOT NULL,
            schema_json TEXT NOT NULL,
            request_hash TEXT NOT NULL,  -- what ReplayProvider checks
            request_json TEXT,           -- raw provider request body, as sent
            response_json TEXT,          -- raw provider response body, as received
            data_json TEXT,              -- the schema-checked answer
            text TEXT,
            model TEXT,
            stop_reason TEXT,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            latency_s REAL,
            cost_usd REAL,               -- NULL when the model has no list price
            error_code TEXT,
            error_message TEXT,
            created_at TEXT NOT NULL,
            PRIMARY KEY (synthesis_id, seq)
        )"""
    )


@migration
def m002_demonstrations(db: sqlite3.Connection) -> None:
    db.execute(
        """CREATE TABLE demonstrations (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            spec_name TEXT NOT NULL,
            request TEXT NOT NULL,
            agent TEXT NOT NULL,
            contract TEXT NOT NULL,
            policy TEXT NOT NULL,
            synthesis_id TEXT,
            created_at TEXT NOT NULL
        )"""
    )


@migration
def m003_demonstration_clarifications(db: sqlite3.Connection) -> None:
    """The approved answers of each demonstration, shown to the clarify stage (synth.memory)."""
    db.execute("ALTER TABLE demonstrations ADD COLUMN clarifications TEXT NOT NULL DEFAULT ''")


def default_db_path() -> Path:
    """`$VERIGUARD_HOME/transcripts.db`, with VERIGUARD_HOME defaulting to ~/.veriguard."""
    return Path(os.environ.get("VERIGUARD_HOME", "~/.veriguard")).expanduser() / "transcripts.db"


def migrate(db: sqlite3.Connection) -> list[str]:
    """Apply every migration not yet applied, in order; returns the names applied now."""
    db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    applied = []
    for step in MIGRATIONS:
        # One write transaction per step (SQLite DDL is transactional): a failing step leaves no
        # trace, and a second process migrating the same file waits, then sees the step as done.
        db.execute("BEGIN IMMEDIATE")
        try:
            if not db.execute("SELECT 1 FROM _migrations WHERE name = ?", (step.__name__,)).fetchone():
                step(db)
                db.execute("INSERT INTO _migrations (name, applied_at) VALUES (?, ?)", (step.__name__, _now()))
                applied.append(step.__name__)
            db.commit()
        except BaseException:
            db.rollback()
            raise
    return applied


def connect(path: str | Path | None = None) -> sqlite3.Connection:
    """Open (creating parent folders) and migrate the database; ':memory:' is allowed."""
    target = default_db_path() if path is None else path
    if str(target) != ":memory:":
        try:
            Path(target).parent.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError) as e:  # a file where a folder must be: it said only "File exists"
            raise OperatorError("cli.environment", f"the transcript store's folder {Path(target).parent} cannot be "
                                f"created: {e.strerror} (a file is in the way)",
                                fix="set VERIGUARD_HOME to a folder (default ~/.veriguard), or pass --store FILE") from None
    db = sqlite3.connect(str(target))
    db.row_factory = sqlite3.Row
    db.execute("PRAGMA foreign_keys = ON")
    migrate(db)
    return db


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class Synthesis:
    id: str
    spec_name: str
    spec_sha256: str
    provider: str
    model: str
    mode: str
    started_at: str
    finished_at: str | None
    status: str
    certificate_path: str | None


@dataclass(frozen=True)
class StageTotals:
    calls: int
    errors: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    """None when some call in the stage used a model without a list price."""


class TranscriptStore:
    """Syntheses and their exchanges in one SQLite file (default `~/.veriguard/transcripts.db`)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = default_db_path() if path is None else path
        self.db = connect(self.path)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> TranscriptStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def begin(self, *, spec_name: str, spec_sha256: str, provider: str, model: str, mode: str) -> str:
        """Start a synthesis (status 'running') and return its id."""
        synthesis_id = uuid.uuid4().hex
        with self.db:
            self.db.execute(
                "INSERT INTO syntheses (id, spec_name, spec_sha256, provider, model, mode, started_at, status)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, 'running')",
                (synthesis_id, spec_name, spec_sha256, provider, model, mode, _now()),
            )
        return synthesis_id

    def record(
        self,
        synthesis_id: str,
        request: CompletionRequest,
        outcome: Completion | ProviderError,
        *,
        latency_s: float | None = None,
    ) -> int:
        """Append one exchange (an answer or an error) and return its sequence number (from 1)."""
        synthesis = self.synthesis(synthesis_id)
        tokens = (outcome.input_tokens, outcome.output_tokens)
        answer: tuple[str | None, str | None, str | None, str | None]
        error: tuple[str | None, str | None]
        if isinstance(outcome, Completion):
            answer = (_dumps(outcome.data), outcome.text, outcome.model, outcome.stop_reason)
            latency: float | None = outcome.latency_s if latency_s is None else latency_s
            cost = cost_usd(synthesis.provider, outcome.model, *tokens)
            error = (None, None)
        else:
            answer, latency = (None, None, None, None), latency_s
            cost = cost_usd(synthesis.provider, synthesis.model, *tokens)
            error = (outcome.code, outcome.message)
        with self.db:
            (seq,) = self.db.execute(
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM exchanges WHERE synthesis_id = ?", (synthesis_id,)
            ).fetchone()
            self.db.execute(
                "INSERT INTO exchanges (synthesis_id, seq, stage, round, system, prompt, schema_json, request_hash,"
                " request_json, response_json, data_json, text, model, stop_reason, input_tokens, output_tokens,"
                " latency_s, cost_usd, error_code, error_message, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    synthesis_id, seq, request.stage, request.round, request.system, request.prompt,
                    canonical_json(request.schema), request_hash(request),
                    _dumps(outcome.raw_request), _dumps(outcome.raw_response), *answer, *tokens, latency, cost,
                    *error, _now(),
                ),
            )
        return int(seq)

    def finish(self, synthesis_id: str, *, status: str, certificate_path: str | Path | None = None) -> None:
        """Close a synthesis with a final status (e.g. 'verified', 'failed', 'error', 'aborted')."""
        if not status or status == "running":
            raise ValueError(f"finish() needs a final status, got {status!r}; e.g. status='verified'")
        self.synthesis(synthesis_id)
        with self.db:
            self.db.execute(
                "UPDATE syntheses SET status = ?, finished_at = ?, certificate_path = ? WHERE id = ?",
                (status, _now(), None if certificate_path is None else str(certificate_path), synthesis_id),
            )

    def synthesis(self, synthesis_id: str) -> Synthesis:
        row = self.db.execute("SELECT * FROM syntheses WHERE id = ?", (synthesis_id,)).fetchone()
        if row is None:
            raise KeyError(f"no synthesis {synthesis_id!r} in {self.path}; list them with list_syntheses()")
        return Synthesis(**dict(row))

    def list_syntheses(self) -> list[Synthesis]:
        rows = self.db.execute("SELECT * FROM syntheses ORDER BY started_at, rowid").fetchall()
        return [Synthesis(**dict(row)) for row in rows]

    def exchanges(self, synthesis_id: str) -> list[dict[str, Any]]:
        """Every exchange of a synthesis, in order, as plain JSON-ready dicts."""
        rows = self.db.execute(
            "SELECT * FROM exchanges WHERE synthesis_id = ? ORDER BY seq", (synthesis_id,)
        ).fetchall()
        return [_exchange_dict(row) for row in rows]

    def stage_totals(self, synthesis_id: str) -> dict[str, StageTotals]:
        rows = self.db.execute(
            "SELECT stage, COUNT(*), COUNT(error_code), SUM(input_tokens), SUM(output_tokens),"
            " SUM(cost_usd), COUNT(*) - COUNT(cost_usd)"
            " FROM exchanges WHERE synthesis_id = ? GROUP BY stage ORDER BY MIN(seq)",
            (synthesis_id,),
        ).fetchall()
        return {
            row[0]: StageTotals(row[1], row[2], row[3], row[4], None if row[6] else round(row[5] or 0.0, 6))
            for row in rows
        }

    def export(self, synthesis_id: str) -> dict[str, Any]:
        """The whole transcript as JSON-ready data; `ReplayProvider.from_file` reads it back."""
        totals = self.stage_totals(synthesis_id)
        return {
            "format": TRANSCRIPT_FORMAT,
            "synthesis": vars(self.synthesis(synthesis_id)).copy(),
            "exchanges": self.exchanges(synthesis_id),
            "totals": {stage: vars(total).copy() for stage, total in totals.items()},
        }


def _exchange_dict(row: sqlite3.Row) -> dict[str, Any]:
    error = {"code": row["error_code"], "message": row["error_message"]} if row["error_code"] else None
    return {
        "seq": row["seq"],
        "stage": row["stage"],
        "round": row["round"],
        "system": row["system"],
        "prompt": row["prompt"],
        "schema": json.loads(row["schema_json"]),
        "request_hash": row["request_hash"],
        "request": _loads(row["request_json"]),
        "response": _loads(row["response_json"]),
        "data": _loads(row["data_json"]),
        "text": row["text"],
        "model": row["model"],
        "stop_reason": row["stop_reason"],
        "input_tokens": row["input_tokens"],
        "output_tokens": row["output_tokens"],
        "latency_s": row["latency_s"],
        "cost_usd": row["cost_usd"],
        "error": error,
        "created_at": row["created_at"],
    }


# The hash covers what was asked and answered, not how or when the run happened: wall-clock
# times, latencies, the random id, the certificate's location, costs (they move with the price
# table) and the provider/model/mode that executed the run (so a replay hashes like the original;
# each exchange still records the answering model and the raw request naming it).
_UNHASHED_SYNTHESIS_KEYS = frozenset(
    {"id", "started_at", "finished_at", "certificate_path", "provider", "model", "mode"}
)
_UNHASHED_EXCHANGE_KEYS = frozenset({"latency_s", "created_at", "cost_usd"})


def transcript_hash(transcript: Mapping[str, Any]) -> str:
    """sha256 over the canonical JSON of a transcript's run-independent content."""
    hashed = {
        "format": transcript.get("format"),
        "synthesis": {k: v for k, v in transcript["synthesis"].items() if k not in _UNHASHED_SYNTHESIS_KEYS},
        "exchanges": [
            {k: v for k, v in exchange.items() if k not in _UNHASHED_EXCHANGE_KEYS}
            for exchange in transcript["exchanges"]
        ],
    }
    return hashlib.sha256(canonical_json(hashed).encode("utf-8")).hexdigest()


class RecordingProvider:
    """Wraps a provider and records every call, errors included, in a `TranscriptStore`."""

    def __init__(self, inner: Provider, store: TranscriptStore, synthesis_id: str) -> None:
        self.inner = inner
        self.store = store
        self.synthesis_id = synthesis_id
        self.name: str = inner.name
        self.model: str = inner.model

    def complete(self, request: CompletionRequest) -> Completion:
        started = time.monotonic()
        try:
            completion = self.inner.complete(request)
        except ProviderError as error:
            self.store.record(self.synthesis_id, request, error, latency_s=time.monotonic() - started)
            raise
        except Exception as error:
            unexpected = ProviderError("provider.unexpected", f"{type(error).__name__}: {error}")
            self.store.record(self.synthesis_id, request, unexpected, latency_s=time.monotonic() - started)
            raise
        self.store.record(self.synthesis_id, request, completion)
        return completion
