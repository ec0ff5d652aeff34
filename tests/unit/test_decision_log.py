"""The decision log: anchored by a signed head, recoverable after a crash, never written through a
symlink, and every malformed input a finding (never a traceback)."""
import json
import os
import threading
from pathlib import Path

import pytest

from veriguard.enforce.decision_log import GENESIS, DecisionLog, DecisionLogError, Head, canonical, record_hash, verify_log
from veriguard.enforce.keys import KeyFileError, load_signing_key, load_verify_key, new_key_pair
from veriguard.cli import main
from tests.unit.test_monitor import payments_build  # noqa: F401  (fixture)


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    d = tmp_path_factory.mktemp("keys")
    private, public, _ = new_key_pair(d / "a")
    other_private, other_public, _ = new_key_pair(d / "b")
    return {"private": private, "public": load_verify_key(public), "public_path": public,
            "other_private": other_private, "other_public": load_verify_key(other_public)}


class Crash(BaseException):
    """The process dying mid-append: no handler of the writer's runs (an OSError is a failed write, not a crash)."""


def write_log(path, n=3, key=None):
    log = DecisionLog(path, key=key)
    for i in range(n):
        log.append({"allowed": i % 2 == 0, "i": i})
    return log


def rewrite_history(path, *, head=None, resign=None):
    """r7: flip record 1 to allowed, recompute the chain (and, with `resign`, sign with that key), write a head."""
    recs = [json.loads(line) for line in open(path)]
    recs[1]["allowed"] = True
    prev = GENESIS
    for r in recs:
        r.pop("sig", None)
        r["prev"] = prev
        r["hash"] = record_hash(r)
        if resign is not None:
            r["sig"] = resign.sign(b"veriguard-log-record/1\n" + r["hash"].encode())
        prev = r["hash"]
    data = "".join(canonical(r) + "\n" for r in recs).encode()
    path.write_bytes(data)
    if head == "recomputed":
        h = Head(len(recs), len(data), recs[0]["hash"], prev, "2026-01-01T00:00:00+00:00")
        if resign is not None:
            h = Head(h.records, h.size, h.first_hash, h.last_hash, h.time, resign.key_id)
            h = Head(h.records, h.size, h.first_hash, h.last_hash, h.time, resign.key_id, resign.sign(h.message()))
        path.with_name(path.name + ".head").write_bytes(h.to_bytes())


@pytest.mark.parametrize("head", ["kept", "recomputed"])
def test_r7_rewritten_history_is_detected_when_anchored(tmp_path, keys, head):
    path = tmp_path / "r7.jsonl"
    write_log(path, key=keys["private"])
    assert verify_log(path, keys["public"]).ok
    rewrite_history(path, head=head)
    r = verify_log(path, keys["public"])
    assert not r.ok and ("signature" in r.problem or "not signed" in r.problem)


def test_r7_resigned_with_another_key_is_detected(tmp_path, keys):
    path = tmp_path / "r7.jsonl"
    write_log(path, key=keys["private"])
    rewrite_history(path, head="recomputed", resign=load_signing_key(keys["other_private"]))
    r = verify_log(path, keys["public"])
    assert not r.ok and "signed by key" in r.problem


def test_r7_unanchored_log_says_a_rewrite_cannot_be_detected(tmp_path, capsys):
    path = tmp_path / "r7.jsonl"
    write_log(path)
    rewrite_history(path, head="recomputed")
    r = verify_log(path)
    assert r.ok and not r.anchored and "not anchored" in r.note and "rewrite cannot be detected" in r.note
    assert main(["verify-log", str(path)]) == 0
    assert "not anchored" in capsys.readouterr().out
    assert main(["verify-log", str(path), "--require-anchor"]) == 1


def test_anchored_log_verifies_and_cli_exit_codes(tmp_path, keys, capsys):
    path = tmp_path / "d.jsonl"
    write_log(path, 4, key=keys["private"])
    r = verify_log(path, keys["public"])
    assert r.ok and r.anchored and r.records == 4 and r.after_anchor == 0
    assert main(["verify-log", str(path), "--public-key", str(keys["public_path"]), "--require-anchor"]) == 0
    assert "anchored" in capsys.readouterr().out
    assert main(["verify-log", str(path), "--public-key", str(tmp_path / "missing.pub")]) == 2
    assert main(["verify-log", str(tmp_path / "missing.jsonl")]) == 2
    other = tmp_path / "other.pub"
    other.write_bytes(b"-----BEGIN PUBLIC KEY-----\ngarbage\n-----END PUBLIC KEY-----\n")
    assert main(["verify-log", str(path), "--public-key", str(other)]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_removal_alteration_and_truncation(tmp_path):
    log = write_log(tmp_path / "d.jsonl", 5)
    lines = log.path.read_text().splitlines()

    def check(new_lines):
        log.path.write_text("".join(x + "\n" for x in new_lines))
        return verify_log(log.path)

    removed = check(lines[:2] + lines[3:])
    assert not removed.ok and removed.line == 3 and "link" in removed.problem
    altered = json.loads(lines[1])
    altered["allowed"] = True
    r = check([lines[0], canonical(altered)] + lines[2:])
    assert not r.ok and r.line == 2 and "altered" in r.problem
    r = check([lines[0], json.dumps(json.loads(lines[1]))] + lines[2:])  # same content, other spelling
    assert not r.ok and r.line == 2 and "canonical" in r.problem
    r = check(lines[:4])
    assert not r.ok and "removed from the end" in r.problem
    r = check(lines[:1] + ["{oops"] + lines[2:])
    assert not r.ok and "not JSON" in r.problem
    assert check(lines).ok


@pytest.mark.parametrize("keyed", [True, False])
def test_truncation_with_the_head_deleted_is_detected(tmp_path, keys, keyed):
    path = tmp_path / "d.jsonl"
    write_log(path, 4, key=keys["private"] if keyed else None)
    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:2]))
    path.with_name(path.name + ".head").unlink()
    r = verify_log(path, keys["public"] if keyed else None)
    assert not r.ok and "head file" in r.problem and "missing" in r.problem
    with pytest.raises(DecisionLogError, match="missing"):
        DecisionLog(path, key=keys["private"] if keyed else None).append({"allowed": True})


def test_truncation_with_the_head_edited_to_match_is_detected(tmp_path, keys):
    log = write_log(tmp_path / "d.jsonl", 4, key=keys["private"])
    kept = log.path.read_bytes().splitlines(keepends=True)[:2]
    log.path.write_bytes(b"".join(kept))
    head = json.loads(log.head_path.read_text())
    head.update(records=2, bytes=sum(map(len, kept)), last_hash=json.loads(kept[-1])["hash"])
    log.head_path.write_text(json.dumps(head))  # the old signature and key id kept
    r = verify_log(log.path, keys["public"])
    assert not r.ok and "signature does not verify" in r.problem
    assert verify_log(log.path).ok  # without the public key, nothing can tell


def test_a_whole_new_log_is_detected(tmp_path, keys):
    path = tmp_path / "d.jsonl"
    write_log(path, 3, key=keys["private"])
    forged = tmp_path / "forged.jsonl"
    write_log(forged, 2)  # a genuine-looking log written without the private key
    os.replace(forged, path)
    os.replace(forged.with_name(forged.name + ".head"), path.with_name(path.name + ".head"))
    r = verify_log(path, keys["public"])
    assert not r.ok and "not signed" in r.problem


@pytest.mark.parametrize("keyed", [True, False])
def test_a_crash_between_the_line_and_the_head_is_recovered(tmp_path, keys, keyed, monkeypatch):
    key = keys["private"] if keyed else None
    verify_key = keys["public"] if keyed else None
    log = write_log(tmp_path / "d.jsonl", 3, key=key)
    real_write_head = DecisionLog._write_head

    def crash(self, chain):
        raise Crash  # the line is on disk; the process dies before its head is written

    monkeypatch.setattr(DecisionLog, "_write_head", crash)
    with pytest.raises(Crash):
        log.append({"allowed": False, "i": 3})
    monkeypatch.setattr(DecisionLog, "_write_head", real_write_head)
    r = verify_log(log.path, verify_key)
    assert r.ok and r.records == 4 and r.after_anchor == 1 and "after the last anchor" in r.note
    log.append({"allowed": True, "i": 4})
    r = verify_log(log.path, verify_key)
    assert r.ok and r.records == 5 and r.after_anchor == 0
    assert [rec["i"] for rec in log.records()] == [0, 1, 2, 3, 4]


def test_a_torn_last_line_is_dropped_by_the_next_append(tmp_path, keys):
    log = write_log(tmp_path / "d.jsonl", 3, key=keys["private"])
    with open(log.path, "ab") as f:
        f.write(b'{"allowed":true,"has')  # the record's write was cut short, before its head
    r = verify_log(log.path, keys["public"])
    assert r.ok and r.records == 3 and "incomplete last line" in r.note
    log.append({"allowed": False, "i": 3})
    r = verify_log(log.path, keys["public"])
    assert r.ok and r.records == 4 and not r.note.count("incomplete")


def test_records_after_the_anchor_must_chain_and_be_signed(tmp_path, keys):
    log = write_log(tmp_path / "d.jsonl", 2, key=keys["private"])
    last = json.loads(log.path.read_text().splitlines()[-1])
    extra = {"allowed": True, "seq": 2, "prev": last["hash"]}
    extra["hash"] = record_hash(extra)  # chained, but not signed: written without the key
    with open(log.path, "a") as f:
        f.write(canonical(extra) + "\n")
    r = verify_log(log.path, keys["public"])
    assert not r.ok and r.line == 3 and "signature" in r.problem
    with pytest.raises(DecisionLogError, match="signature"):
        log.append({"allowed": False})


def test_one_head_per_real_file_through_a_symlink(tmp_path):
    real = tmp_path / "real.jsonl"
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    by_link, by_real = DecisionLog(link), DecisionLog(real)
    for i in range(3):
        by_link.append({"i": 2 * i})
        by_real.append({"i": 2 * i + 1})
    assert not (tmp_path / "link.jsonl.head").exists()
    assert verify_log(link).ok and verify_log(real).records == 6


def test_a_log_swapped_for_a_symlink_is_not_written_through(tmp_path):
    log = write_log(tmp_path / "d.jsonl", 1)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    os.replace(log.path, tmp_path / "moved.jsonl")
    log.path.symlink_to(victim)
    with pytest.raises(DecisionLogError, match="symlink"):
        log.append({"allowed": True})
    assert victim.read_text() == "precious\n"


def test_a_head_swapped_for_a_symlink_is_refused(tmp_path):
    log = write_log(tmp_path / "d.jsonl", 2)
    elsewhere = tmp_path / "elsewhere.head"
    os.replace(log.head_path, elsewhere)
    log.head_path.symlink_to(elsewhere)
    r = verify_log(log.path)
    assert not r.ok and "symlink" in r.problem
    with pytest.raises(DecisionLogError, match="symlink"):
        log.append({"allowed": True})


BAD_HEADS = {
    "not JSON": b"{oops",
    "a list": b"[1, 2]",
    "old format": b'{"records": 2, "last_hash": "' + b"0" * 64 + b'"}',
    "string count": None,
    "bool count": None,
    "missing field": None,
    "extra field": None,
    "invalid UTF-8": b'{"format": "\xff"}',
    "empty": b"",
    "deep": b"[" * 100_000,
}


@pytest.mark.parametrize("name", BAD_HEADS)
def test_a_bad_head_is_a_finding_and_append_fails_cleanly(tmp_path, name):
    log = write_log(tmp_path / "d.jsonl", 2)
    head = json.loads(log.head_path.read_text())
    edits = {"string count": {"records": "2"}, "bool count": {"records": True, "bytes": True},
             "missing field": {"time": None}, "extra field": {"allowed": True}}
    if BAD_HEADS[name] is None:
        head.update(edits[name])
        head = {k: v for k, v in head.items() if v is not None}
        log.head_path.write_text(json.dumps(head))
    else:
        log.head_path.write_bytes(BAD_HEADS[name])
    before = log.path.read_bytes()
    r = verify_log(log.path)
    assert not r.ok and "head" in r.problem
    with pytest.raises(DecisionLogError, match="refusing to append"):
        log.append({"allowed": True})
    assert log.path.read_bytes() == before


BAD_LINES = {
    "a number": b"5\n",
    "a list": b"[1]\n",
    "invalid UTF-8": b'{"allowed": "\xff\xfe"}\n',
    "NaN": b'{"x": NaN}\n',
    "duplicate keys": b'{"allowed":true,"allowed":false}\n',
    "blank": b"\n",
    "deep": b"[" * 100_000 + b"\n",
    "huge integer": b'{"x": ' + b"9" * 5000 + b"}\n",
}


@pytest.mark.parametrize("name", BAD_LINES)
def test_a_bad_line_is_a_finding(tmp_path, name, capsys):
    log = write_log(tmp_path / "d.jsonl", 2)
    lines = log.path.read_bytes().splitlines(keepends=True)
    log.path.write_bytes(lines[0] + BAD_LINES[name] + lines[1])
    r = verify_log(log.path)
    assert not r.ok and r.line == 2
    assert main(["verify-log", str(log.path)]) == 1
    out = capsys.readouterr()
    assert "BROKEN" in out.out and "Traceback" not in out.err


def test_the_writer_of_a_signed_log_must_hold_its_key(tmp_path, keys):
    signed = write_log(tmp_path / "s.jsonl", 1, key=keys["private"])
    with pytest.raises(DecisionLogError, match="pass its private key"):
        DecisionLog(signed.path).append({"allowed": True})
    with pytest.raises(DecisionLogError, match="signed by key"):
        DecisionLog(signed.path, key=keys["other_private"]).append({"allowed": True})
    plain = write_log(tmp_path / "p.jsonl", 1)
    with pytest.raises(DecisionLogError, match="not signed"):
        DecisionLog(plain.path, key=keys["private"]).append({"allowed": True})


def test_reserved_fields_and_unwritable_records_write_nothing(tmp_path):
    log = write_log(tmp_path / "d.jsonl", 1)
    before = log.path.read_bytes()
    with pytest.raises(DecisionLogError, match="may not set"):
        log.append({"seq": 7})
    with pytest.raises(DecisionLogError, match="cannot be written as JSON"):
        log.append({"x": float("nan")})
    with pytest.raises(DecisionLogError, match="cannot be written as JSON"):
        log.append({"x": 10 ** 5000})
    assert log.path.read_bytes() == before and verify_log(log.path).ok


def test_concurrent_writers_keep_one_chain(tmp_path, keys):
    path = tmp_path / "d.jsonl"

    def writer(w):
        log = DecisionLog(path, key=keys["private"])
        for i in range(20):
            log.append({"writer": w, "i": i})

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    r = verify_log(path, keys["public"])
    assert r.ok and r.records == 80 and r.after_anchor == 0


def test_an_empty_log_without_a_head(tmp_path, keys):
    path = tmp_path / "d.jsonl"
    path.write_bytes(b"")
    r = verify_log(path)
    assert r.ok and r.records == 0 and not r.anchored and "not anchored" in r.note
    r = verify_log(path, keys["public"])  # with a key, a head comes first: emptied, head deleted
    assert not r.ok and "emptied" in r.problem
    DecisionLog(path, key=keys["private"]).append({"allowed": False})  # an interrupted start is not broken for good
    assert verify_log(path, keys["public"]).ok


def test_key_files(tmp_path, keys):
    with pytest.raises(KeyFileError, match="already exists"):
        new_key_pair(keys["private"].parent)
    loose = tmp_path / "loose.key"
    loose.write_bytes(keys["private"].read_bytes())
    loose.chmod(0o644)
    with pytest.raises(KeyFileError, match="read by other users"):
        load_signing_key(loose)
    with pytest.raises(KeyFileError, match="private key"):
        load_verify_key(keys["private"])
    with pytest.raises(KeyFileError, match="not a private key"):
        load_signing_key(keys["public_path"])
    assert oct(keys["private"].stat().st_mode & 0o777) == "0o600"


def test_an_old_head_over_a_log_cut_later_is_broken_and_never_re_anchored(tmp_path, keys, capsys):
    """A head kept from after record 3, put back over the log cut after record 7: four records follow the head,
    where a crash leaves at most one. verify-log finds it and the next append refuses to anchor it."""
    path = tmp_path / "d.jsonl"
    log = DecisionLog(path, key=keys["private"])
    sizes = []
    for i in range(10):
        log.append({"allowed": i < 7, "i": i})
        sizes.append(path.stat().st_size)
        if i == 2:
            old_head = log.head_path.read_bytes()
    with open(path, "r+b") as f:
        f.truncate(sizes[6])
    log.head_path.write_bytes(old_head)
    r = verify_log(path, keys["public"])
    assert not r.ok and r.line == 5 and "more records follow the head" in r.problem
    assert main(["verify-log", str(path), "--public-key", str(keys["public_path"]), "--require-anchor"]) == 1
    assert "BROKEN" in capsys.readouterr().out
    cut = path.read_bytes()
    with pytest.raises(DecisionLogError, match="more records follow the head"):   # a writer started since
        DecisionLog(path, key=keys["private"]).append({"allowed": True, "i": 99})
    with pytest.raises(DecisionLogError, match="vouches for 3 records where this writer wrote 10"):
        log.append({"allowed": True, "i": 99})
    assert path.read_bytes() == cut and log.head_path.read_bytes() == old_head


@pytest.mark.parametrize("keyed", [True, False])
def test_crashes_in_a_row_leave_at_most_one_record_after_the_head(tmp_path, keys, keyed, monkeypatch):
    """The append after a crash anchors what the crash left before it writes its own record, so a second crash
    (between that record and its head) again leaves one record after the head."""
    key = keys["private"] if keyed else None
    log = write_log(tmp_path / "d.jsonl", 3, key=key)
    real_write_head = DecisionLog._write_head
    calls = []

    def crash_after_records(self, chain):
        calls.append(chain.records)
        if len(calls) in (1, 3):   # the head after record 4, then after record 5 (call 2 anchors record 4)
            raise Crash   # the record is on disk; the process dies before its head is written
        real_write_head(self, chain)

    monkeypatch.setattr(DecisionLog, "_write_head", crash_after_records)
    for i in (3, 4):
        with pytest.raises(Crash):
            log.append({"allowed": False, "i": i})
        r = verify_log(log.path, keys["public"] if keyed else None)
        assert r.ok and r.records == i + 1 and r.after_anchor == 1, r
    assert calls == [4, 4, 5]


@pytest.mark.parametrize("fails", ["write", "fsync", "head"])
def test_a_failed_append_takes_its_record_back(tmp_path, keys, monkeypatch, fails):
    """A write that fails without a crash (a full disk) raises, so the monitor denies the call: the record, already
    on disk when the fsync or the head write fails, must not stay in the log to say "allowed" (red team B)."""
    import veriguard.enforce.decision_log as dl

    log = write_log(tmp_path / "d.jsonl", 2, key=keys["private"])
    full = OSError(28, "No space left on device")
    if fails == "write":
        real_write = os.write
        monkeypatch.setattr(dl.os, "write", lambda fd, data: real_write(fd, bytes(data[:10])) if len(data) > 10
                            else (_ for _ in ()).throw(full))
    elif fails == "fsync":
        monkeypatch.setattr(dl.os, "fsync", lambda fd: (_ for _ in ()).throw(full))
    else:
        monkeypatch.setattr(dl, "write_atomic", lambda *a, **k: (_ for _ in ()).throw(full))
    with pytest.raises(DecisionLogError, match="No space left"):
        log.append({"allowed": True, "i": 2})
    monkeypatch.undo()
    assert [r["i"] for r in log.records()] == [0, 1]
    r = verify_log(log.path, keys["public"])
    assert r.ok and r.records == 2 and r.after_anchor == 0, r
    log.append({"allowed": False, "i": 3})
    assert [r["i"] for r in log.records()] == [0, 1, 3] and verify_log(log.path, keys["public"]).ok



def test_the_monitor_denies_and_logs_no_allow_when_the_head_cannot_be_written(tmp_path, payments_build, monkeypatch):
    import veriguard.enforce.decision_log as dl
    from veriguard.enforce.monitor import Monitor
    from tests.unit.test_monitor import observation

    monitor = Monitor.from_build(payments_build, log=tmp_path / "d.jsonl")
    assert monitor.check(observation()).allowed
    monkeypatch.setattr(dl, "write_atomic", lambda *a, **k: (_ for _ in ()).throw(OSError(28, "No space left")))
    d = monitor.check(observation())
    assert not d.allowed and "decision log write failed" in d.fail_closed
    monkeypatch.undo()
    assert [r["allowed"] for r in monitor.log.records()] == [True]   # before the fix: [True, True]
    assert verify_log(tmp_path / "d.jsonl").ok


def test_the_root_folder_as_the_log_is_a_log_error():
    with pytest.raises(DecisionLogError, match="must be a file, not the root folder"):
        DecisionLog("/")


@pytest.mark.parametrize("keyed", [True, False])
def test_a_writer_refuses_a_log_that_went_back_behind_what_it_wrote(tmp_path, keys, keyed):
    """Its own anchor, in memory: a log and head deleted while it runs would have been started afresh, and an old
    state put back (the head kept from after record 2, the log cut there, or with the one record a crash leaves)
    extended, as if the records since had never been written (red team B)."""
    key = keys["private"] if keyed else None
    path = tmp_path / "d.jsonl"
    log = write_log(path, 2, key=key)
    kept_log, kept_head = path.read_bytes(), log.head_path.read_bytes()
    log.append({"allowed": True, "i": 2})
    log.append({"allowed": True, "i": 3})
    for cut in (kept_log, kept_log + path.read_bytes()[len(kept_log):].splitlines(keepends=True)[0]):
        path.write_bytes(cut)
        log.head_path.write_bytes(kept_head)
        assert verify_log(path, keys["public"] if keyed else None).ok   # on disk alone: an earlier state, or a crash
        with pytest.raises(DecisionLogError, match="vouches for 2 records where this writer wrote 4"):
            log.append({"allowed": False, "i": 4})
        assert path.read_bytes() == cut
    path.unlink()
    log.head_path.unlink()
    with pytest.raises(DecisionLogError, match="is gone, though this writer wrote 4 records"):
        log.append({"allowed": False, "i": 4})
    assert not path.exists() or path.read_bytes() == b""
    other = tmp_path / "other.jsonl"                      # replaced by another log of as many records
    write_log(other, 4, key=key)
    path.write_bytes(other.read_bytes())
    log.head_path.write_bytes(Path(str(other) + ".head").read_bytes())
    with pytest.raises(DecisionLogError, match="another last record"):
        log.append({"allowed": False, "i": 4})


def test_a_lock_held_for_ever_is_an_error_not_a_wait_for_ever(tmp_path, monkeypatch):
    """Another process that takes the log's lock and keeps it (`flock LOG sleep 1d`) made every append, so every
    monitor check, wait for ever (red team B): past LOCK_WAIT_S it is a DecisionLogError, so a denial."""
    import fcntl

    import veriguard.enforce.decision_log as dl

    log = write_log(tmp_path / "d.jsonl", 2)
    monkeypatch.setattr(dl, "LOCK_WAIT_S", 0.2)
    with open(log.path, "rb") as holder:          # a second open file description: flock conflicts with it
        fcntl.flock(holder, fcntl.LOCK_EX)
        with pytest.raises(DecisionLogError, match="held the log's lock for over 0.2 s") as refused:
            log.append({"allowed": True, "i": 2})
        assert refused.value.code == "log.write"
        with pytest.raises(DecisionLogError, match="held the log's lock") as unread:
            verify_log(log.path)
        assert unread.value.code == "log.unreadable"
    log.append({"allowed": True, "i": 2})
    assert verify_log(log.path).records == 3
