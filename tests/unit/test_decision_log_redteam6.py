"""The seventh red-team pass on the decision log (helper C26, 2026-11-30).

Record times going backwards verified "intact, anchored" and nothing said so. Writers append in the order they take
the log's lock, not in the order of their decisions' times (the monitor dates a record when it decides, before it
waits for the lock), so concurrent writers do this in normal use, and it cannot be a finding. It is now said in the
verdict's note (how many records, and the first line), as `verify-log` and `audit --log` print it: a clock set back,
or a record whose time was made up, is visible there.
"""
from veriguard.cli import main
from veriguard.enforce.decision_log import DecisionLog, verify_log
from veriguard.enforce.keys import load_verify_key, new_key_pair


def written(tmp_path, times):
    private, public, _ = new_key_pair(tmp_path / "keys")
    log = DecisionLog(tmp_path / "log.jsonl", private)
    for t in times:
        log.append({"allowed": True} | ({"time": t} if t is not None else {}))
    return tmp_path / "log.jsonl", public


def test_record_times_going_backwards_are_said(tmp_path, capsys):
    path, public = written(tmp_path, ["2026-11-30T10:00:00.000001+00:00", "2026-11-30T09:59:59+00:00",
                                      "2026-11-30T10:00:01+00:00", "2020-01-01T00:00:00+00:00"])
    check = verify_log(path, load_verify_key(public))
    assert check.ok and check.anchored
    assert "2 record(s) dated before the record above them (first at line 2)" in check.note
    assert main(["verify-log", str(path), "--public-key", str(public)]) == 0
    assert "dated before the record above them" in capsys.readouterr().out


def test_times_in_another_offset_compare_as_times(tmp_path):
    path, public = written(tmp_path, ["2026-11-30T10:00:00+00:00", "2026-11-30T11:30:00+01:00"])   # 10:30 UTC
    assert "dated before" not in verify_log(path, load_verify_key(public)).note
    path2, public2 = written(tmp_path / "b", ["2026-11-30T10:00:00+00:00", "2026-11-30T10:30:00+01:00"])   # 09:30
    assert "1 record(s) dated before the record above them (first at line 2)" in \
        verify_log(path2, load_verify_key(public2)).note


def test_times_in_order_equal_missing_or_unreadable_say_nothing(tmp_path):
    path, public = written(tmp_path, ["2026-11-30T10:00:00+00:00", "2026-11-30T10:00:00+00:00", None, "yesterday",
                                      "2026-11-30T10:00:01", "2026-11-30T10:00:02+00:00"])
    check = verify_log(path, load_verify_key(public))
    assert check.ok and "dated before" not in check.note
