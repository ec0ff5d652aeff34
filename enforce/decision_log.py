"""Append-only, hash-chained JSONL decision log.

Each line is one record; `prev` is the hash of the line before (64 zeros for the first) and
`hash` is the sha256 of the record's canonical JSON without `hash`. A sidecar `<log>.head` holds
the count and last hash, so removing records at the end is detected too.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

GENESIS = "0" * 64


def canonical(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def record_hash(record: dict[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k != "hash"}
    return hashlib.sha256(canonical(body).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class LogCheck:
    ok: bool
    records: int
    problem: str = ""
    line: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "records": self.records, "problem": self.problem, "line": self.line}


class DecisionLog:
    """Appends records under an exclusive lock; never rewrites a line."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.head_path = self.path.with_name(self.path.name + ".head")

    def append(self, record: dict[str, Any]) -> dict[str, Any]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a+", encoding="utf-8") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                count, prev = self._tail(f)
                entry = {**record, "seq": count, "prev": prev}
                entry["hash"] = record_hash(entry)
                f.seek(0, os.SEEK_END)
                f.write(canonical(entry) + "\n")
                f.flush()
                os.fsync(f.fileno())
                self._write_head(count + 1, entry["hash"])
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)
        return entry

    def _tail(self, f: Any) -> tuple[int, str]:
        if self.head_path.exists():
            head = json.loads(self.head_path.read_text(encoding="utf-8"))
            return int(head["records"]), str(head["last_hash"])
        f.seek(0)
        count, prev = 0, GENESIS
        for line in f:
            if line.strip():
                count += 1
                prev = json.loads(line)["hash"]
        return count, prev

    def _write_head(self, count: int, last: str) -> None:
        tmp = self.head_path.with_name(self.head_path.name + ".tmp")
        tmp.write_text(json.dumps({"records": count, "last_hash": last}) + "\n", encoding="utf-8")
        os.replace(tmp, self.head_path)

    def records(self) -> Iterator[dict[str, Any]]:
        with open(self.path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    yield json.loads(line)


def verify_log(path: str | Path) -> LogCheck:
    """Recompute every hash and link; say where the chain first breaks."""
    path = Path(path)
    if not path.exists():
        return LogCheck(False, 0, f"{path} does not exist")
    prev, n = GENESIS, 0
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                return LogCheck(False, n, f"line {lineno} is not JSON ({e.msg}): the log was edited", lineno)
            if rec.get("prev") != prev:
                return LogCheck(False, n, f"line {lineno}: the link to the previous record is broken (a record before "
                                "it was removed, inserted or reordered)", lineno)
            if rec.get("seq") != n:
                return LogCheck(False, n, f"line {lineno}: sequence number {rec.get('seq')} where {n} was expected", lineno)
            if record_hash(rec) != rec.get("hash"):
                return LogCheck(False, n, f"line {lineno}: the record's content does not match its hash (it was "
                                "altered)", lineno)
            prev, n = rec["hash"], n + 1
    head = path.with_name(path.name + ".head")
    if head.exists():
        h = json.loads(head.read_text(encoding="utf-8"))
        if h.get("records") != n or h.get("last_hash") != prev:
            return LogCheck(False, n, f"the log has {n} records but its head file says {h.get('records')}: records "
                            "were removed from the end (or the head file was changed)", n)
    return LogCheck(True, n)
