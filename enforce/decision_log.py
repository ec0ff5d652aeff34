"""Append-only, hash-chained JSONL decision log, anchored by a signed head.

Records: one JSON object per line in canonical form (sorted keys, no spaces, ASCII). `seq` counts
from 0, `prev` is the previous record's hash (64 zeros for the first) and `hash` the sha256 of the
record without `hash` and `sig`. With a key (`DecisionLog(path, key=...)`, an Ed25519 private key
file from `veriguard keys new`), `sig` signs the hash: no one without the private key can write a
record that verifies.

Head: `<log>.head`, beside the log's real path (symlinks resolved, so every writer of one file
shares one head), holds the record count, the byte length, the first and last hashes and the time;
with a key it names the key and is signed. It is rewritten atomically after each record, and a head
with 0 records is written before the first one, so a missing head is always a finding. Neither the
log nor its head is ever opened through a symlink.

Identity: a log begun by this version names itself: a random `log_id` in its (signed) head, copied into every
record as `log`, so a record of another log never chains into this one, and another log signed with the same key
is another id. A log begun before ids (head format /1) is still read and extended as it was, unbound.

Checkpoint: `DecisionLog(path, key, checkpoint=CP)` writes a copy of each head to CP as well (after the head), kept
where whoever can write the log cannot (another volume, a folder of another user). Before each append the log must
be CP's log at or after CP's state (same id, no fewer records, the record after CP chaining from it): a rollback
between runs or another log put in its place is refused. A missing CP beside a log with records is refused too.

What `verify_log` tells, given the public key: an edited, inserted, removed or reordered record;
records cut from the end; a deleted or unsigned head; a log replaced by one written without the key; an
old head put back over a log cut at a later record (more records after the head than a crash leaves); with
`expected` (read_head of a checkpoint), a rollback behind that head and another log in its place. Without it, it
cannot tell a rollback to an earlier state kept whole (an old copy of the log with its old head, or with one record
more, which is what a crash leaves), nor another log of the same key. Without the public key nothing is anchored:
whoever can write the file can rewrite it with a recomputed chain, and the verdict says so.

Appending reads only the head, the first and the last record it vouches for, and what follows it (constant work
per record): it refuses a head that is missing, unsigned or forged, a log shorter than its head, a head whose first
or last record is not in the log (another log's head of the same size, or such a record swapped for another log's),
and records after the head that do not chain; an edit inside the anchored records is left for `verify_log` to find
(the new record chains from the signed head, so appending never launders it). A writer also remembers what it wrote
last (its own anchor, in memory): a log behind that (deleted with its head, an old state put back,
another log put in its place) is refused while the writer runs, where on disk alone it is an earlier
state or a new log.

A crash between a record's write and its head's leaves one complete record after the last head; a crash
during the write, an incomplete last line. The next append first drops that line and anchors that record
(a head written before its own record), so no sequence of crashes leaves more than one record after the
head. That record is checked like the others (chain and, with a key, signature) and reported as "after
the last anchor"; more than one is a finding, and the writer refuses to anchor them (an old head put back
over a log cut short would otherwise be laundered by the next append). The log never stays broken because
of a crash. A write that fails without a crash (a full disk while writing the record, its fsync or the head)
takes the record back before append raises: its caller denies the call, and no record may say otherwise.
"""
from __future__ import annotations

import datetime as dt
import errno
import fcntl
import hashlib
import json
import os
import re
import stat
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO, Iterator, Mapping

from veriguard.contracts.build_format import offset_datetime
from veriguard.contracts.errors import OperatorError
from veriguard.enforce.keys import SigningKey, VerifyKey, load_signing_key, write_atomic
from veriguard.contracts.strict_json import StrictJSONError, loads, loads_passing_surrogates

GENESIS = "0" * 64
HEAD_FORMAT = "veriguard-log-head/2"      # names the log (log_id); every record of it carries that id as `log`
HEAD_FORMAT_V1 = "veriguard-log-head/1"   # logs begun before log ids: still read and extended, never bound
RESERVED = frozenset({"seq", "prev", "hash", "sig", "log"})
_HEAD_FIELDS = frozenset({"format", "records", "bytes", "first_hash", "last_hash", "time"})
_LOG_ID = re.compile(r"[0-9a-f]{32}")
_SIGNED_FIELDS = frozenset({"key_id", "sig"})
SHA256_HEX = re.compile(r"[0-9a-f]{64}")   # a sha256 in 64 lowercase hex digits
_RECORD_DOMAIN = b"veriguard-log-record/1\n"
_HEAD_DOMAIN = b"veriguard-log-head/1\n"
_MAX_HEAD = 64 * 1024
MAX_RECORD_DEPTH = 200  # lists and objects nested in a record: far under what any reader's stack reads back
UNANCHORED_LIMIT = 1   # complete records an interrupted write can leave after the head
LOCK_WAIT_S = 60.0     # the longest a writer or a verifier waits for another's lock on the log
_MODE = 0o640
_VERIFY_FIX = "run `veriguard verify-log LOG --public-key PUB` to see what changed; keep this log as evidence " \
              "and start a new one"


class DecisionLogError(OperatorError):
    """The log or its head cannot be read or written, or appending would extend a log that is not
    what its writer wrote. Nothing is written past such an error."""


class _Broken(Exception):
    """A finding: the log or its head is not what the writer wrote."""

    def __init__(self, problem: str, line: int = 0) -> None:
        super().__init__(problem)
        self.problem = problem
        self.line = line


def canonical(record: Mapping[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False, default=str)


def record_hash(record: Mapping[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k not in ("hash", "sig")}
    return hashlib.sha256(canonical(body).encode("ascii")).hexdigest()


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def _head_path(real: Path) -> Path:
    return real.with_name(real.name + ".head")


@dataclass(frozen=True)
class Head:
    """What the writer vouches for: the first `records` records, `size` bytes, from `first_hash` to `last_hash`."""

    records: int
    size: int
    first_hash: str
    last_hash: str
    time: str
    key_id: str = ""
    sig: str = ""
    log_id: str = ""     # "" only in a log begun before log ids (HEAD_FORMAT_V1)

    def body(self) -> dict[str, Any]:
        out = {"format": HEAD_FORMAT if self.log_id else HEAD_FORMAT_V1, "records": self.records, "bytes": self.size,
               "first_hash": self.first_hash, "last_hash": self.last_hash, "time": self.time}
        return out | ({"log_id": self.log_id} if self.log_id else {}) | ({"key_id": self.key_id} if self.key_id else {})

    def message(self) -> bytes:
        return _HEAD_DOMAIN + canonical(self.body()).encode("ascii")

    def to_bytes(self) -> bytes:
        return (canonical(self.body() | ({"sig": self.sig} if self.sig else {})) + "\n").encode("ascii")


def _parse_head(data: bytes) -> Head:
    try:
        h = loads(data)
    except StrictJSONError as e:
        raise _Broken(f"the head file is not JSON ({e})") from None
    if type(h) is not dict:
        raise _Broken(f"the head file holds a JSON {type(h).__name__}, not an object")
    if h.get("format") not in (HEAD_FORMAT, HEAD_FORMAT_V1):
        raise _Broken(f"the head file's format is {repr(h.get('format'))[:40]}, not {HEAD_FORMAT!r} (a head from "
                      "another version, or not a head)")
    fields = _HEAD_FIELDS | ({"log_id"} if h["format"] == HEAD_FORMAT else set())
    if set(h) not in (fields, fields | _SIGNED_FIELDS):
        raise _Broken(f"the head file has the fields {sorted(map(str, h))[:12]}, not {sorted(fields)} "
                      f"(plus {sorted(_SIGNED_FIELDS)} when signed)")
    if h["format"] == HEAD_FORMAT and not (type(h["log_id"]) is str and _LOG_ID.fullmatch(h["log_id"])):
        raise _Broken("the head file's log_id is not 32 hex digits")
    counts_ok = all(type(h[k]) is int and h[k] >= 0 for k in ("records", "bytes"))
    hashes_ok = all(type(h[k]) is str and SHA256_HEX.fullmatch(h[k]) for k in ("first_hash", "last_hash"))
    signed_ok = "sig" not in h or (type(h["key_id"]) is str and SHA256_HEX.fullmatch(h["key_id"]) and type(h["sig"]) is str)
    if not (counts_ok and hashes_ok and signed_ok and type(h["time"]) is str):
        raise _Broken("the head file has a field of the wrong type (records and bytes are counts, hashes and "
                      "key_id 64 hex digits, time and sig strings)")
    if (h["records"] == 0) != (h["bytes"] == 0) or (h["records"] == 0) != (h["last_hash"] == GENESIS):
        raise _Broken(f"the head file contradicts itself: {h['records']} records in {h['bytes']} bytes, last hash "
                      f"{h['last_hash'][:16]}…")
    return Head(h["records"], h["bytes"], h["first_hash"], h["last_hash"], h["time"], h.get("key_id", ""),
                h.get("sig", ""), h.get("log_id", ""))


def _load_head(path: Path) -> Head | None:
    """The head at `path`, None when there is none; _Broken when it is not a head; DecisionLogError when unreadable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise _Broken(f"the head file {path.name} is a symlink: refused (it could point anywhere)") from None
        raise DecisionLogError("log.unreadable", f"cannot read the head file: {e.strerror}", file=str(path)) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _Broken(f"the head file {path.name} is not a regular file")
        data = os.read(fd, _MAX_HEAD + 1)
    except OSError as e:
        raise DecisionLogError("log.unreadable", f"cannot read the head file: {e.strerror}", file=str(path)) from None
    finally:
        os.close(fd)
    if len(data) > _MAX_HEAD:
        raise _Broken(f"the head file {path.name} is larger than any head")
    return _parse_head(data)


def _check_signature(head: Head, key: VerifyKey, what: str = "the head") -> None:
    if not head.key_id:
        raise _Broken(f"{what} is not signed: the log was written without a key, or {what} was replaced")
    if head.key_id != key.key_id:
        raise _Broken(f"{what} is signed by key {head.key_id[:16]}…, not by the given key {key.key_id[:16]}…")
    if not key.verify(head.message(), head.sig):
        raise _Broken(f"{what}'s signature does not verify: {what} was altered")


def _continues(saved: Head, head: Head) -> None:
    """_Broken unless the log whose head is `head` may be the log of `saved` (a checkpoint, an expected head) at or
    after that state: the same log id, no fewer records, and the same last record when as many."""
    if saved.log_id != head.log_id:
        raise _Broken(f"the log is another log (id {head.log_id or 'none'}) than the expected one (id "
                      f"{saved.log_id or 'none'}): it was replaced by another log, perhaps signed with the same key")
    if head.records < saved.records:
        raise _Broken(f"the log was rolled back: its head vouches for {head.records} records where the expected head "
                      f"(a checkpoint of {saved.time}) vouches for {saved.records} records")
    if head.records == saved.records and (head.size, head.first_hash, head.last_hash) != \
            (saved.size, saved.first_hash, saved.last_hash):
        raise _Broken(f"the log holds {head.records} records, as the expected head (a checkpoint of {saved.time}) "
                      "says, but not the same ones: it was replaced by another log")


@dataclass
class _Chain:
    """The state after some records: what a head vouches for."""

    records: int = 0
    size: int = 0
    first: str = GENESIS
    last: str = GENESIS
    kept: list[dict[str, Any]] | None = None    # when a list, every record added, as checked
    log_id: str = ""                            # every record must name it ("": a log begun before log ids)
    time: dt.datetime | None = None             # the last record's `time`, when it has one
    earlier: int = 0                            # how many lines are dated before the record above them
    first_earlier: int = 0                      # the first such line
    signed_at: dt.datetime | None = None        # while adding the records a head vouches for: when it was written
    ahead: int = 0                              # how many of those are dated after it (their head is written later)
    first_ahead: int = 0                        # the first such line

    @classmethod
    def at(cls, head: Head) -> "_Chain":
        return cls(head.records, head.size, head.first_hash, head.last_hash, log_id=head.log_id)

    def matches(self, head: Head) -> bool:
        return (self.records, self.size, self.first, self.last) == \
            (head.records, head.size, head.first_hash, head.last_hash)

    def add(self, line: bytes, key: VerifyKey | None) -> None:
        """Check `line` (newline included) as the next record, then advance; raises _Broken."""
        n = self.records + 1  # line number: the writer puts one record on each line
        rec = _record(line, n)
        if rec.get("prev") != self.last:
            raise _Broken(f"line {n}: the link to the previous record is broken (a record before it was removed, "
                          "inserted or reordered)", n)
        if type(rec.get("seq")) is not int or rec["seq"] != self.records:
            raise _Broken(f"line {n}: sequence number {str(rec.get('seq'))[:20]} where {self.records} was expected "
                          "(a record was removed, inserted or reordered)", n)
        if record_hash(rec) != rec.get("hash"):
            raise _Broken(f"line {n}: the record's content does not match its hash (it was altered)", n)
        if key is not None and not key.verify(_RECORD_DOMAIN + rec["hash"].encode("ascii"), rec.get("sig")):
            raise _Broken(f"line {n}: the record's signature is missing or does not verify with the given key (it was "
                          "written or rewritten without the private key)", n)
        if self.log_id and rec.get("log") != self.log_id:
            raise _Broken(f"line {n}: the record belongs to another log (log {str(rec.get('log'))[:32]!r}, this "
                          f"one is {self.log_id!r}): a record, or the whole log, was taken from another log", n)
        self.first = rec["hash"] if self.records == 0 else self.first
        self.records, self.size, self.last = n, self.size + len(line), rec["hash"]
        when = offset_datetime(rec.get("time"))   # the monitor's time, when it decided
        if when is not None and self.time is not None and when < self.time:
            self.first_earlier = self.first_earlier or n
            self.earlier += 1
        self.time = when if when is not None else self.time
        if when is not None and self.signed_at is not None and when - self.signed_at >= dt.timedelta(seconds=1):
            self.first_ahead = self.first_ahead or n   # the head's time is to the second, a record's to the microsecond;
            # a difference, not a sum: a head dated 9999-12-31T23:59:59 plus a second is past datetime's range
            self.ahead += 1
        if self.kept is not None:
            self.kept.append(rec)


def _record(line: bytes, n: int) -> dict[str, Any]:
    try:   # a record keeps what it was given (a lone surrogate an agent sent, written as its escape, ASCII)
        rec = loads_passing_surrogates(line[:-1])
    except StrictJSONError as e:
        raise _Broken(f"line {n} is not JSON ({e})", n) from None
    if type(rec) is not dict:
        raise _Broken(f"line {n} is a JSON {type(rec).__name__}, not a record", n)
    try:
        same = canonical(rec).encode("ascii") == line[:-1]
    except (ValueError, RecursionError):
        same = False
    if not same:
        raise _Broken(f"line {n} was altered: it is not in the canonical form the writer writes", n)
    return rec


def _depth(value: Any) -> int:
    """How deeply lists and objects nest in `value` (0 for a scalar), walked without recursion."""
    deepest, todo = 0, [(value, 0)]
    while todo:
        item, level = todo.pop()   # `level`: the containers around `item`
        if isinstance(item, (Mapping, list, tuple)):   # a container counts itself, empty or not: [[[]]] nests 3
            deepest = max(deepest, level + 1)
            todo += [(v, level + 1) for v in (item.values() if isinstance(item, Mapping) else item)]
    return deepest


def _reads_back(line: bytes, n: int) -> None:
    """DecisionLogError (log.record) unless `line` reads back as the verifier reads it (_record), from any stack: a
    record the writer can encode but a reader refuses (objects nested deeper than strict JSON reads, which depends on
    how deep the reader's own stack is) would leave every later verification saying the log is broken at that line,
    whatever else was done to it. Records nest at most MAX_RECORD_DEPTH deep."""
    try:
        depth = _depth(json.loads(line))
    except (ValueError, RecursionError):
        depth = MAX_RECORD_DEPTH + 1
    if depth > MAX_RECORD_DEPTH:
        raise DecisionLogError("log.record", f"the record cannot be written: it nests lists or objects deeper than "
                               f"{MAX_RECORD_DEPTH} levels, which not every reader reads back; nothing was written")
    try:
        _record(line, n)
    except _Broken as e:
        raise DecisionLogError("log.record", f"the record cannot be written: it would not read back ({e.problem}); "
                               "nothing was written") from None


def _extend(chain: _Chain, f: BinaryIO, key: VerifyKey | None, limit: int | None = None) -> bool:
    """Add the complete lines of `f` to `chain`, up to `limit` records. True when the file ends in an
    incomplete line (an interrupted write), which is left out."""
    while limit is None or chain.records < limit:
        line = f.readline()
        if not line:
            return False
        if not line.endswith(b"\n"):
            return True
        chain.add(line, key)
    return False


def _unanchored(chain: _Chain, f: BinaryIO, key: VerifyKey | None, head: Head) -> bool:
    """Add to `chain` (at `head`) what an interrupted write leaves after the head: at most UNANCHORED_LIMIT
    complete records, then perhaps an incomplete line (True when there is one). _Broken when more follow."""
    if _extend(chain, f, key, head.records + UNANCHORED_LIMIT):
        return True
    rest = f.readline()
    if rest.endswith(b"\n"):
        raise _Broken(f"line {chain.records + 1}: more records follow the head ({head.records} records) than an "
                      f"interrupted write leaves (at most {UNANCHORED_LIMIT}): the head is older than the log (an old "
                      "head put back over a log cut short, or records written without updating the head)",
                      chain.records + 1)
    return bool(rest)


def _head_fits(fd: int, head: Head) -> None:
    """_Broken unless the first and the last record the head vouches for are in the log where it says, with the
    hashes (and log id) it names: a head taken from another log of the same size, or the log's first or last record
    swapped for another log's, was extended as if it were this log's (only verify_log, reading everything, found
    it). Reads two records, whatever the log's length."""
    if not head.records:
        return
    with os.fdopen(os.dup(fd), "rb") as f:   # a dup shares the offset, which other reads moved
        f.seek(0)
        first = f.readline()
        start = _line_start(f, head.size)
        f.seek(start)
        last = f.read(head.size - start)
    for line, n, digest, which in ((first, 1, head.first_hash, "first"), (last, head.records, head.last_hash, "last")):
        rec = _record(line, n) if line.endswith(b"\n") else {}
        if rec.get("hash") != digest or record_hash(rec) != digest or (head.log_id and rec.get("log") != head.log_id):
            raise _Broken(f"line {n}: the {which} record the head vouches for is not in the log (its hash or log "
                          "differs): the head was taken from another log, or the record replaced by another log's", n)


def _line_start(f: BinaryIO, end: int) -> int:
    """Where the line that ends at byte `end` (its newline at end - 1) begins."""
    pos = end - 1
    while pos > 0:
        step = min(pos, 1 << 16)
        f.seek(pos - step)
        cut = f.read(step).rfind(b"\n")
        if cut >= 0:
            return pos - step + cut + 1
        pos -= step
    return 0


def _open(path: Path, *, write: bool, create: bool = True) -> int:
    """The log, opened without following a symlink; created only when `create` (a writer that already wrote to it
    never creates it again: its folder swapped for a link to another left an empty log there before the refusal)."""
    flags = (os.O_RDWR | os.O_APPEND | (os.O_CREAT if create else 0)) if write else os.O_RDONLY
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, _MODE)
    except OSError as e:
        why = "it is a symlink, and the log is never written or read through one" if e.errno == errno.ELOOP \
            else e.strerror
        raise DecisionLogError("log.unreadable" if not write else "log.write", f"cannot open the log: {why}",
                               file=str(path)) from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise DecisionLogError("log.unreadable", "the log is not a regular file", file=str(path))
    if write and st.st_nlink != 1:   # as a symlink: the records would go into a file that is also elsewhere
        os.close(fd)
        raise DecisionLogError("log.write", f"the log has {st.st_nlink} names (a hard link): it is never written "
                               "through another file's name", file=str(path),
                               fix="keep the log as its own file (copy it, rather than linking it)")
    return fd


@dataclass(frozen=True)
class LogCheck:
    ok: bool
    records: int
    problem: str = ""
    line: int = 0
    anchored: bool = False       # a head signed by the given public key vouches for the records
    after_anchor: int = 0        # complete records after the last head: at most one, an interrupted write
    note: str = ""               # what the verdict does and does not cover
    log_id: str = ""             # the log's id ("" for a log begun before log ids)
    expected: int = -1           # the expected head's record count, when one was given and the log extends it

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class DecisionLog:
    """Appends records under an exclusive lock; never rewrites a record."""

    def __init__(self, path: str | Path, key: SigningKey | str | Path | None = None,
                 checkpoint: str | Path | None = None) -> None:
        self.path = Path(os.path.realpath(path))
        if not self.path.name:   # "/": no file to write, and no name to put the head beside
            raise DecisionLogError("log.write", "the log must be a file, not the root folder", file=str(path))
        self.head_path = _head_path(self.path)
        self.key = load_signing_key(key) if isinstance(key, (str, Path)) else key
        # a copy of every head, kept where whoever can write the log cannot (another volume, another user's
        # folder): the log must extend it, so a rollback or another log put in its place between runs is refused
        self.checkpoint = Path(os.path.abspath(checkpoint)) if checkpoint is not None else None
        # compared as the files they are (links resolved): the head named through a linked folder was accepted as its
        # own checkpoint, which then vouched for whatever the head did
        if self.checkpoint is not None and Path(os.path.realpath(self.checkpoint)) in (self.path, self.head_path):
            raise DecisionLogError("log.write", "the checkpoint must be another file than the log and its head",
                                   file=str(checkpoint), fix="keep the checkpoint in a folder the log's writers "
                                   "alone can write")
        self.wrote: tuple[int, str] | None = None   # (records, last hash) after this writer's last append

    def append(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """Write `record` with its seq, prev, hash (and sig), then the head; returns what was written.
        Raises DecisionLogError and writes nothing when the log cannot be extended as it stands."""
        plain = _plain(record)
        clash = RESERVED & set(plain)
        if clash:
            raise DecisionLogError("log.reserved", f"a record may not set {sorted(clash)}: the log sets them")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise DecisionLogError("log.write", f"cannot create the log's folder: {e.strerror}",
                                   file=str(self.path)) from None
        if self.wrote is not None and not os.path.lexists(self.path):
            raise DecisionLogError("log.broken", f"refusing to append: the log {self.path.name} is gone, though this "
                                   f"writer wrote {self.wrote[0]} records to it: it was deleted, moved or its folder "
                                   "replaced while it ran", file=str(self.path), fix=_VERIFY_FIX)
        fd = _open(self.path, write=True, create=self.wrote is None)
        try:
            _lock(fd, fcntl.LOCK_EX, self.path, "log.write")
            chain = self._chain(fd)
            entry = {**plain, "seq": chain.records, "prev": chain.last} | \
                ({"log": chain.log_id} if chain.log_id else {})
            entry["hash"] = record_hash(entry)
            if self.key is not None:
                entry["sig"] = self.key.sign(_RECORD_DOMAIN + entry["hash"].encode("ascii"))
            line = (canonical(entry) + "\n").encode("ascii")
            _reads_back(line, chain.records + 1)
            try:
                _write_all(fd, line)
                os.fsync(fd)
                first = chain.first if chain.records else entry["hash"]
                self._write_head(_Chain(chain.records + 1, chain.size + len(line), first, entry["hash"],
                                        log_id=chain.log_id))
            except Exception:   # the caller will deny: a record it could not anchor must not say otherwise
                _take_back(fd, chain.size)
                self._head_back(chain)
                raise
            self.wrote = (chain.records + 1, entry["hash"])
        except _Broken as e:
            raise DecisionLogError("log.broken", f"refusing to append: {e.problem}", file=str(self.path),
                                   fix=_VERIFY_FIX) from None
        except OSError as e:
            raise DecisionLogError("log.write", f"cannot write the log or its head: {e.strerror}",
                                   file=str(self.path)) from None
        finally:
            os.close(fd)
        return entry

    def _chain(self, fd: int) -> _Chain:
        """Where the chain ends, once what an interrupted write left after the last head is checked and anchored
        (an incomplete last line dropped), so that a crash during this append leaves at most one record after it."""
        size = os.fstat(fd).st_size
        head = _load_head(self.head_path)
        self._went_back(head)
        self._extends_checkpoint(head, fd)
        if head is None:
            if size:
                raise _Broken(f"the head file {self.head_path.name} is missing while the log holds {size} bytes: the "
                              "head was deleted, or the log was not written here")
            fresh = _Chain(log_id=os.urandom(16).hex())
            self._write_head(fresh)
            return fresh
        if self.key is not None:
            _check_signature(head, self.key.public)
        elif head.key_id:
            raise DecisionLogError("log.key", f"the log is signed (key {head.key_id[:16]}…): pass its private key",
                                   file=str(self.path), fix="DecisionLog(path, key=KEY) or Monitor.from_build(..., "
                                   "log_key=KEY)")
        if size < head.size:
            raise _Broken(f"the log holds {size} bytes where its head vouches for {head.size}: records were removed")
        _head_fits(fd, head)
        chain = _Chain.at(head)
        if size > head.size:
            with os.fdopen(os.dup(fd), "rb") as f:
                f.seek(head.size)
                torn = _unanchored(chain, f, self.key.public if self.key else None, head)
            if torn:
                os.ftruncate(fd, chain.size)  # an interrupted write's partial line, never anchored
            self._write_head(chain)
        return chain

    def _went_back(self, head: Head | None) -> None:
        """_Broken when the log is behind what this writer itself wrote (its own anchor, kept in memory): a log and
        head deleted, or an old state put back, while it runs would otherwise be extended as if nothing had happened
        (a fresh log started, or an old head re-anchored). Other writers only add records."""
        if self.wrote is None:
            return
        records, last = self.wrote
        if head is None:
            raise _Broken(f"the head file {self.head_path.name} is gone, though this writer wrote {records} records "
                          "to the log: the log was deleted or replaced while it ran")
        if head.records < records or (head.records == records and head.last_hash != last):
            raise _Broken(f"the log's head vouches for {head.records} records where this writer wrote {records}"
                          f"{'' if head.records < records else ' and another last record'}: the log was rolled back "
                          "or replaced while it ran")

    def _extends_checkpoint(self, head: Head | None, fd: int) -> None:
        """_Broken unless the log (at `head`) is the checkpoint's log, at or after the checkpoint: the writer's
        check, in constant work, of what verify_log(expected=) checks in full."""
        if self.checkpoint is None:
            return
        saved = _load_head(self.checkpoint)
        if saved is None:
            if head is not None and head.records:
                raise _Broken(f"the checkpoint {self.checkpoint} is missing while the log's head vouches for "
                              f"{head.records} records: it was deleted, or this log was not written with it (once "
                              "`veriguard verify-log` finds the log intact, copy its .head file there)")
            return
        if self.key is not None:
            _check_signature(saved, self.key.public, "the checkpoint")
        if head is None:
            raise _Broken(f"the log's head is gone while its checkpoint vouches for {saved.records} records: the log "
                          "was deleted or replaced")
        _continues(saved, head)
        if head.records > saved.records:   # the record after the checkpoint must chain from it
            with os.fdopen(os.dup(fd), "rb") as f:
                f.seek(saved.size)
                line = f.readline()
            try:
                if not line.endswith(b"\n"):
                    raise _Broken(f"no complete record at byte {saved.size}")
                _Chain.at(saved).add(line, self.key.public if self.key else None)
            except _Broken as e:
                raise _Broken(f"the log does not continue its checkpoint ({saved.records} records): {e.problem}; it "
                              "was replaced by another log or rewritten") from None

    def _head_back(self, chain: _Chain) -> None:
        """The head put back at `chain` after a failed append (the head may have been written before the checkpoint
        failed): a head that vouches for a record taken back would leave the log broken for good. Best effort, as
        _take_back; the checkpoint, written last, was not changed."""
        try:
            write_atomic(self.head_path, self._signed_head(chain).to_bytes(), mode=_MODE)
        except OSError:
            pass

    def _signed_head(self, chain: _Chain) -> Head:
        head = Head(chain.records, chain.size, chain.first, chain.last, _now(), log_id=chain.log_id)
        if self.key is None:
            return head
        head = replace(head, key_id=self.key.key_id)
        return replace(head, sig=self.key.sign(head.message()))

    def _write_head(self, chain: _Chain) -> None:
        head = self._signed_head(chain)
        write_atomic(self.head_path, head.to_bytes(), mode=_MODE)
        if self.checkpoint is not None:   # after the head: a crash between the two leaves the checkpoint behind
            self.checkpoint.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.checkpoint, head.to_bytes(), mode=_MODE)

    def records(self) -> Iterator[dict[str, Any]]:
        """The records as written (not verified: read_verified gives only the records verify_log checked)."""
        fd = _open(self.path, write=False)
        with os.fdopen(fd, "rb") as f:
            for n, line in enumerate(f, start=1):
                try:
                    yield loads_passing_surrogates(line)
                except StrictJSONError as e:
                    raise DecisionLogError("log.broken", f"line {n} is not JSON ({e})", file=str(self.path),
                                           fix=_VERIFY_FIX) from None


def _plain(record: Mapping[str, Any]) -> dict[str, Any]:
    """`record` as the JSON data it is written as, made once: a value that is not JSON is written as its str(), and
    a str() that differed between the hash and the line (a counter, a clock) left a line that did not match its own
    hash, so that the log read as altered for good; one that raised escaped as that exception."""
    try:
        plain = json.loads(canonical(record))
    except RecursionError:   # a cycle, or nesting deeper than the reader reads back
        raise DecisionLogError("log.record", "the record cannot be written as JSON: it nests too deeply (or holds "
                               "itself); nothing was written") from None
    except Exception as e:   # NaN, an int over 4,300 digits, a key that is not a string, a str() that raises
        raise DecisionLogError("log.record", f"the record cannot be written as JSON: {type(e).__name__}: "
                               f"{str(e)[:200]}; nothing was written") from None
    return dict(plain)


def _take_back(fd: int, size: int) -> None:
    """Cut the log back to `size` bytes (under the writer's lock): the record of a failed append, which its
    caller turns into a denial, must not stay to say "allowed". Best effort: a log that cannot even be cut keeps
    the record, as a crash would (a crash runs no handler, so what it leaves is still recovered as documented)."""
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    except OSError:
        pass


def _lock(fd: int, kind: int, path: Path, code: str) -> None:
    """flock `kind` on `fd`, waiting at most LOCK_WAIT_S: a process that takes the lock and keeps it (`flock LOG
    sleep 1d`) turns into an error, so a denial, where the monitor waited for it for ever."""
    deadline = time.monotonic() + LOCK_WAIT_S
    pause = 0.001
    while True:
        try:
            fcntl.flock(fd, kind | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise DecisionLogError(code, f"another process has held the log's lock for over {LOCK_WAIT_S:g} s",
                                       file=str(path), fix="find the process that holds it (`fuser LOG`) and stop it"
                                       ) from None
            time.sleep(pause)
            pause = min(2 * pause, 0.05)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def read_head(path: str | Path) -> Head:
    """The head in `path`: a log's .head file, or a copy of one kept elsewhere (a checkpoint) to pass as
    verify_log's `expected`. DecisionLogError when there is none or it is not a head."""
    try:
        head = _load_head(Path(path))
    except _Broken as e:
        raise DecisionLogError("log.unreadable", f"not a decision log head: {e.problem}", file=str(path),
                               fix="pass a copy of LOG.head (a checkpoint written with DecisionLog(checkpoint=))") \
            from None
    if head is None:
        raise DecisionLogError("log.unreadable", "the expected head (a checkpoint) does not exist", file=str(path),
                               fix="pass a copy of LOG.head kept where the log's writer put it")
    return head


def verify_log(path: str | Path, key: VerifyKey | None = None, expected: Head | None = None) -> LogCheck:
    """Check every record and the head; with `key`, every signature too; with `expected` (a head kept elsewhere:
    read_head of a checkpoint), that the log is that log at or after that state. A finding is a LogCheck with
    ok=False; a log that cannot be read at all is a DecisionLogError."""
    return _verify(path, key, _Chain(), expected)


def read_verified(path: str | Path, key: VerifyKey | None = None, expected: Head | None = None) -> \
        tuple[LogCheck, tuple[dict[str, Any], ...]]:
    """verify_log's verdict and the records it verified, parsed from the very bytes it checked (none when the log
    is broken; never an incomplete last line): what a reader may count or replay, without opening the log again."""
    chain = _Chain(kept=[])
    check = _verify(path, key, chain, expected)
    return check, (tuple(chain.kept or ()) if check.ok else ())


def _verify(path: str | Path, key: VerifyKey | None, chain: _Chain, expected: Head | None = None) -> LogCheck:
    real = Path(os.path.realpath(path))
    head_path = _head_path(real)
    fd = _open(real, write=False)
    with os.fdopen(fd, "rb") as f:
        _lock(f.fileno(), fcntl.LOCK_SH, real, "log.unreadable")
        try:
            head = _load_head(head_path)
            if head is None:
                if _extend(chain, f, key) or chain.records:
                    raise _Broken(f"the head file {head_path.name} is missing: records were cut from the end and the "
                                  "head deleted, or the log was replaced")
                if key is not None:  # a signed head precedes the first record: an empty log without one was emptied
                    raise _Broken(f"the log is empty and its head file {head_path.name} is missing: it was emptied "
                                  "and its head deleted (or its writer stopped before the first record)")
                if expected is not None:
                    raise _Broken(f"the log is empty and has no head, where the expected head vouches for "
                                  f"{expected.records} records: it was deleted or replaced")
                return LogCheck(True, 0, note="not anchored: an empty log with no head yet (nothing was written to it)")
            if key is not None:
                _check_signature(head, key)
            chain.log_id = head.log_id
            chain.signed_at = offset_datetime(head.time)   # every record it vouches for was written before it
            if expected is not None:
                _at_expected(chain, f, key, head, expected)
            if _extend(chain, f, key, head.records) or chain.records < head.records:
                raise _Broken(f"the log has {chain.records} complete records where its head vouches for {head.records}: "
                              "records were removed from the end (or the head was replaced)", chain.records + 1)
            if not chain.matches(head):
                raise _Broken(f"records 1-{head.records} do not match the head (its last hash is {head.last_hash[:16]}…, "
                              f"the log's {chain.last[:16]}…): the log or its head was replaced", head.records)
            chain.signed_at = None   # what follows the head was written after it
            torn = _unanchored(chain, f, key, head)
        except _Broken as e:
            return LogCheck(False, chain.records, e.problem, e.line)
    return LogCheck(True, chain.records, anchored=key is not None, after_anchor=chain.records - head.records,
                    note=_note(head, key, chain.records - head.records, torn=torn, expected=expected,
                               earlier=(chain.earlier, chain.first_earlier), ahead=(chain.ahead, chain.first_ahead)),
                    log_id=head.log_id, expected=expected.records if expected is not None else -1)


def _at_expected(chain: _Chain, f: BinaryIO, key: VerifyKey | None, head: Head, expected: Head) -> None:
    """Add the records up to the expected head's to `chain` (at the start), and _Broken unless they are the ones
    it vouches for, in the log it names."""
    if key is not None:
        _check_signature(expected, key, "the expected head")
    _continues(expected, head)
    if _extend(chain, f, key, expected.records) or chain.records < expected.records:
        raise _Broken(f"the log has {chain.records} complete records where the expected head vouches for "
                      f"{expected.records}", chain.records + 1)
    if not chain.matches(expected):
        raise _Broken(f"records 1-{expected.records} are not the ones the expected head vouches for (its last hash is "
                      f"{expected.last_hash[:16]}…, the log's {chain.last[:16]}…): the log was replaced by another log",
                      expected.records)


def _note(head: Head, key: VerifyKey | None, after: int, *, torn: bool, expected: Head | None = None,
          earlier: tuple[int, int] = (0, 0), ahead: tuple[int, int] = (0, 0)) -> str:
    if key is not None and expected is not None:
        notes = [f"anchored: the head is signed by key {head.key_id[:16]}… ({head.time}), and the log is the expected "
                 f"log at or after the expected head ({expected.records} records, {expected.time}); a rollback to a "
                 "state after that head cannot be detected"]
    elif key is not None:
        notes = [f"anchored: the head is signed by key {head.key_id[:16]}… ({head.time}); a rollback to an earlier "
                 "state kept whole, or another log of this key put in its place, cannot be detected without the "
                 "expected head (a checkpoint kept elsewhere)"]
    elif head.key_id:
        notes = [f"not anchored: the head is signed by key {head.key_id[:16]}…, but without --public-key the "
                 "signatures are not checked, and a rewrite cannot be detected"]
    else:
        notes = ["not anchored: the log was written without a key, and a rewrite cannot be detected"]
    if not head.log_id:
        notes.append("the log has no id (begun before log ids): another log of the same key cannot be told from it; "
                     "start a new log to bind its records")
    if after:
        notes.append(f"{after} record after the last anchor, accepted as an interrupted write (written, but the head "
                     "was not updated; the next append anchors it); a crash leaves at most one, so more would be a "
                     "finding")
    if torn:
        notes.append("an incomplete last line after the last anchor (an interrupted write; the next append drops it)")
    if earlier[0]:   # said, never a finding: concurrent writers do it in normal use (how many, and the first line)
        notes.append(f"{earlier[0]} record(s) dated before the record above them (first at line {earlier[1]}): "
                     "writers append in the order they take the log's lock, not of their decisions' times, so "
                     "concurrent writers do this; so does a clock set back, or a record whose time was made up")
    if ahead[0]:   # said, as times going backwards are: a clock stepped back between a record and its head does it
        notes.append(f"{ahead[0]} record(s) dated after the head that vouches for them ({head.time}; first at line "
                     f"{ahead[1]}), which is written after them: a record whose time was made up, or a clock set back")
    return "; ".join(notes)
