"""A decision log rolled back or swapped between runs (red-team, 2026-11-29): an older copy of the log with its
old signed head, a log cut to an earlier valid state, or another valid log signed with the same key. On disk alone
each is a log the key vouches for; a checkpoint (a copy of the signed head kept where the log's attacker cannot
write) and the log's own id tell them apart, for the next writer and for the verifier."""
import json
import shutil

import pytest

from veriguard.enforce.decision_log import DecisionLog, DecisionLogError, read_head, verify_log
from veriguard.enforce.keys import load_signing_key, load_verify_key, new_key_pair
from tests.unit.test_monitor import payments_build  # noqa: F401  (fixture)


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    d = tmp_path_factory.mktemp("keys")
    private, public, _ = new_key_pair(d / "a")
    return {"private": load_signing_key(private), "public": load_verify_key(public)}


def write(log, n, start=0):
    for i in range(start, start + n):
        log.append({"allowed": True, "i": i})


def snapshot(path, to):
    to.mkdir()
    shutil.copy2(path, to / path.name)
    shutil.copy2(path.with_name(path.name + ".head"), to / (path.name + ".head"))


def restore(snap, path):
    shutil.copy2(snap / path.name, path)
    shutil.copy2(snap / (path.name + ".head"), path.with_name(path.name + ".head"))


def test_a_rollback_between_runs_is_refused_by_the_next_writer_with_a_checkpoint(tmp_path, keys):
    path, cp = tmp_path / "logs" / "d.jsonl", tmp_path / "safe" / "d.checkpoint"
    cp.parent.mkdir()
    write(DecisionLog(path, key=keys["private"], checkpoint=cp), 3)
    snapshot(path, tmp_path / "old")
    write(DecisionLog(path, key=keys["private"], checkpoint=cp), 2, 3)   # a later run
    restore(tmp_path / "old", path)                                      # between runs: the old copy put back
    assert verify_log(path, keys["public"]).ok                           # on disk alone, an earlier valid state
    with pytest.raises(DecisionLogError) as e:
        DecisionLog(path, key=keys["private"], checkpoint=cp).append({"allowed": True})
    assert e.value.code == "log.broken" and "rolled back" in e.value.message
    r = verify_log(path, keys["public"], expected=read_head(cp))
    assert not r.ok and "rolled back" in r.problem


def test_a_log_cut_to_an_earlier_valid_prefix_is_refused(tmp_path, keys):
    path, cp = tmp_path / "d.jsonl", tmp_path / "d.checkpoint"
    log = DecisionLog(path, key=keys["private"], checkpoint=cp)
    write(log, 2)
    snapshot(path, tmp_path / "at2")
    write(log, 3, 2)
    restore(tmp_path / "at2", path)
    r = verify_log(path, keys["public"], expected=read_head(cp))
    assert not r.ok and "5 records" in r.problem


def test_another_log_signed_with_the_same_key_is_refused(tmp_path, keys):
    mine, theirs, cp = tmp_path / "mine.jsonl", tmp_path / "theirs.jsonl", tmp_path / "mine.checkpoint"
    write(DecisionLog(mine, key=keys["private"], checkpoint=cp), 3)
    write(DecisionLog(theirs, key=keys["private"]), 6)     # another session, same key: a longer, valid log
    snapshot(theirs, tmp_path / "t")
    shutil.copy2(theirs, mine)
    shutil.copy2(theirs.with_name("theirs.jsonl.head"), mine.with_name("mine.jsonl.head"))
    assert verify_log(mine, keys["public"]).ok              # on disk alone: a valid log of this key
    r = verify_log(mine, keys["public"], expected=read_head(cp))
    assert not r.ok and "another log" in r.problem
    with pytest.raises(DecisionLogError) as e:
        DecisionLog(mine, key=keys["private"], checkpoint=cp).append({"allowed": True})
    assert "another log" in e.value.message


def test_a_record_of_another_log_is_never_anchored_into_this_one(tmp_path, keys, monkeypatch):
    """A new log's first head (0 records), then the first record of another log of the same key put after it:
    the next writer would anchor it as what a crash leaves. Every record names its log now."""
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write(DecisionLog(b, key=keys["private"]), 1)

    class Crash(BaseException):
        pass

    def crash(fd, data):
        raise Crash()

    with monkeypatch.context() as m:
        m.setattr("veriguard.enforce.decision_log._write_all", crash)
        with pytest.raises(Crash):
            DecisionLog(a, key=keys["private"]).append({"allowed": False})
    assert a.stat().st_size == 0 and read_head(a.with_name("a.jsonl.head")).records == 0
    a.write_bytes(b.read_bytes())
    r = verify_log(a, keys["public"])
    assert not r.ok and "another log" in r.problem
    with pytest.raises(DecisionLogError) as e:
        DecisionLog(a, key=keys["private"]).append({"allowed": True})
    assert "another log" in e.value.message


def test_records_and_heads_name_their_log(tmp_path, keys):
    path = tmp_path / "d.jsonl"
    write(DecisionLog(path, key=keys["private"]), 2)
    head = read_head(path.with_name("d.jsonl.head"))
    records = [json.loads(x) for x in path.read_text().splitlines()]
    assert head.log_id and all(r["log"] == head.log_id for r in records)


def test_a_missing_checkpoint_for_a_log_with_records_is_refused(tmp_path, keys):
    path, cp = tmp_path / "d.jsonl", tmp_path / "d.checkpoint"
    write(DecisionLog(path, key=keys["private"], checkpoint=cp), 2)
    cp.unlink()
    with pytest.raises(DecisionLogError) as e:
        DecisionLog(path, key=keys["private"], checkpoint=cp).append({"allowed": True})
    assert e.value.code == "log.broken" and "checkpoint" in e.value.message and "missing" in e.value.message


def test_an_honest_log_extends_its_checkpoint(tmp_path, keys):
    path, cp = tmp_path / "d.jsonl", tmp_path / "d.checkpoint"
    write(DecisionLog(path, key=keys["private"], checkpoint=cp), 2)
    saved = read_head(cp)
    write(DecisionLog(path, key=keys["private"], checkpoint=cp), 2, 2)
    for expected in (saved, read_head(cp)):
        r = verify_log(path, keys["public"], expected=expected)
        assert r.ok and r.records == 4, r


def test_the_monitor_keeps_a_checkpoint_and_denies_on_a_rolled_back_log(tmp_path, keys, payments_build):
    from tests.unit.test_monitor import observation
    from veriguard.enforce.monitor import Monitor

    path, cp = tmp_path / "m.jsonl", tmp_path / "safe" / "m.checkpoint"
    cp.parent.mkdir()
    key_file = tmp_path / "k"
    private, _, _ = new_key_pair(key_file)
    first = Monitor.from_build(payments_build, log=path, log_key=private, log_checkpoint=cp)
    assert first.check(observation()).allowed
    snapshot(path, tmp_path / "old")
    assert first.check(observation()).allowed
    restore(tmp_path / "old", path)
    later = Monitor.from_build(payments_build, log=path, log_key=private, log_checkpoint=cp)
    record = later.check(observation())
    assert not record.allowed and "rolled back" in record.fail_closed


def v1_log(path, key, n):
    """A log as written before log ids (head format /1, records without `log`)."""
    from veriguard.enforce.decision_log import GENESIS, Head, canonical, record_hash

    prev, data, first = GENESIS, b"", GENESIS
    for i in range(n):
        rec = {"allowed": True, "i": i, "seq": i, "prev": prev}
        rec["hash"] = record_hash(rec)
        rec["sig"] = key.sign(b"veriguard-log-record/1\n" + rec["hash"].encode())
        first = rec["hash"] if i == 0 else first
        prev = rec["hash"]
        data += (canonical(rec) + "\n").encode()
    path.write_bytes(data)
    head = Head(n, len(data), first, prev, "2026-11-01T00:00:00+00:00", key.key_id)
    head = Head(n, len(data), first, prev, head.time, key.key_id, key.sign(head.message()))
    assert b"veriguard-log-head/1" in head.to_bytes() and b"log_id" not in head.to_bytes()
    path.with_name(path.name + ".head").write_bytes(head.to_bytes())


def test_a_log_begun_before_log_ids_still_verifies_and_is_extended_as_it_was(tmp_path, keys):
    path = tmp_path / "old.jsonl"
    v1_log(path, keys["private"], 2)
    r = verify_log(path, keys["public"])
    assert r.ok and r.records == 2 and r.log_id == "" and "no id" in r.note
    write(DecisionLog(path, key=keys["private"]), 1, 2)
    records = [json.loads(x) for x in path.read_text().splitlines()]
    assert "log" not in records[-1] and read_head(path.with_name("old.jsonl.head")).log_id == ""
    assert verify_log(path, keys["public"]).records == 3


def test_a_checkpoint_that_cannot_be_written_leaves_the_log_as_it_was(tmp_path, keys, monkeypatch):
    """The head is written before the checkpoint: when the checkpoint's write fails (its disk is full), the record
    is taken back, and so must the head be, else the log is shorter than its head, broken for good."""
    import veriguard.enforce.decision_log as dl

    path, cp = tmp_path / "d.jsonl", tmp_path / "cp" / "d.checkpoint"
    cp.parent.mkdir()
    write(DecisionLog(path, key=keys["private"], checkpoint=cp), 2)
    real = dl.write_atomic

    def full(target, data, **kw):
        if target == cp:
            raise OSError(28, "No space left on device")
        return real(target, data, **kw)

    with monkeypatch.context() as m:
        m.setattr(dl, "write_atomic", full)
        with pytest.raises(DecisionLogError):
            DecisionLog(path, key=keys["private"], checkpoint=cp).append({"allowed": True})
    assert verify_log(path, keys["public"], expected=read_head(cp)).records == 2
    write(DecisionLog(path, key=keys["private"], checkpoint=cp), 1, 2)
    assert verify_log(path, keys["public"], expected=read_head(cp)).records == 3


def test_a_checkpoint_binds_a_log_begun_before_log_ids_too(tmp_path, keys):
    path, cp = tmp_path / "old.jsonl", tmp_path / "old.checkpoint"
    v1_log(path, keys["private"], 2)
    shutil.copy(path.with_name("old.jsonl.head"), cp)      # the operator's first checkpoint of an old log
    write(DecisionLog(path, key=keys["private"], checkpoint=cp), 2, 2)
    snapshot(path, tmp_path / "at4")
    write(DecisionLog(path, key=keys["private"], checkpoint=cp), 1, 4)
    restore(tmp_path / "at4", path)
    with pytest.raises(DecisionLogError) as e:
        DecisionLog(path, key=keys["private"], checkpoint=cp).append({"allowed": True})
    assert "rolled back" in e.value.message


def test_a_crash_between_the_head_and_the_checkpoint_leaves_a_log_the_next_writer_extends(tmp_path, keys, monkeypatch):
    import veriguard.enforce.decision_log as dl

    class Crash(BaseException):
        pass

    path, cp = tmp_path / "d.jsonl", tmp_path / "d.checkpoint"
    write(DecisionLog(path, key=keys["private"], checkpoint=cp), 2)
    real = dl.write_atomic

    def crash(target, data, **kw):
        if target == cp:
            raise Crash()
        return real(target, data, **kw)

    with monkeypatch.context() as m:
        m.setattr(dl, "write_atomic", crash)
        with pytest.raises(Crash):
            DecisionLog(path, key=keys["private"], checkpoint=cp).append({"allowed": True})
    assert read_head(cp).records == 2 and read_head(path.with_name("d.jsonl.head")).records == 3
    assert verify_log(path, keys["public"], expected=read_head(cp)).records == 3
    write(DecisionLog(path, key=keys["private"], checkpoint=cp), 1, 3)
    assert read_head(cp).records == 4 and verify_log(path, keys["public"], expected=read_head(cp)).ok
