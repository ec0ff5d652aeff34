"""The eighth red-team pass on the decision log (helper C27, 2026-11-30).

A record dated after the head that vouches for it verified "intact, anchored" and nothing said so. The head is written
after every record it vouches for (its time is when it was written, to the second), so a record dated later was dated
by a clock set back between the two, or its time was made up (a decision of 2999 in a log written today). Like times
going backwards (test_decision_log_redteam6), it is said in the verdict's note, never a finding: the key holder wrote
it, and its signature is good.
"""
from veriguard.cli import main
from veriguard.enforce.decision_log import DecisionLog, verify_log
from veriguard.enforce.keys import load_verify_key, new_key_pair
from tests.unit.test_decision_log_redteam6 import written


def test_a_record_dated_after_its_head_is_said(tmp_path, capsys):
    path, public = written(tmp_path, ["2026-11-30T10:00:00+00:00", "2999-01-01T00:00:00+00:00",
                                      "2026-11-30T10:00:01+00:00"])
    check = verify_log(path, load_verify_key(public))
    assert check.ok and check.anchored
    assert "1 record(s) dated after the head that vouches for them" in check.note and "first at line 2" in check.note
    assert main(["verify-log", str(path), "--public-key", str(public)]) == 0
    assert "dated after the head" in capsys.readouterr().out


def test_a_record_an_hour_ahead_in_another_offset_is_said(tmp_path):
    import datetime as dt
    later = (dt.datetime.now(dt.timezone(dt.timedelta(hours=5))) + dt.timedelta(hours=1)).isoformat()
    path, public = written(tmp_path, [later])
    assert "1 record(s) dated after the head" in verify_log(path, load_verify_key(public)).note


def test_records_dated_now_in_the_same_second_as_their_head_say_nothing(tmp_path):
    """The head is stamped to the second, a record to the microsecond: a record of 10:00:00.9 under a head of
    10:00:00 was written first."""
    import datetime as dt
    now = dt.datetime.now(dt.timezone.utc)
    path, public = written(tmp_path, [(now - dt.timedelta(seconds=3)).isoformat(), now.isoformat(),
                                      now.replace(microsecond=999_999).isoformat() if now.microsecond else now.isoformat(),
                                      None, "not a time"])
    check = verify_log(path, load_verify_key(public))
    assert check.ok and "dated after the head" not in check.note


def test_the_record_after_the_last_anchor_is_not_bounded_by_the_head(tmp_path):
    """A record written after the head (an interrupted write: the head was not updated) is later than it by nature."""
    private, public, _ = new_key_pair(tmp_path / "keys")
    log = DecisionLog(tmp_path / "log.jsonl", private)
    log.append({"allowed": True, "time": "2026-11-30T10:00:00+00:00"})
    head = (tmp_path / "log.jsonl.head").read_bytes()
    log.append({"allowed": True, "time": "2999-01-01T00:00:00+00:00"})
    (tmp_path / "log.jsonl.head").write_bytes(head)   # as a crash between the record and its head leaves it
    check = verify_log(tmp_path / "log.jsonl", load_verify_key(public))
    assert check.ok and check.after_anchor == 1 and "dated after the head" not in check.note


def test_a_head_dated_in_the_last_second_datetime_holds_is_read_without_a_crash(tmp_path, capsys):
    """An unsigned log's head rewritten to 9999-12-31T23:59:59+00:00: the bound "a second after the head" was a sum
    past datetime's range (OverflowError, a traceback from verify-log); it is a difference now."""
    import json
    log = DecisionLog(tmp_path / "log.jsonl")
    log.append({"allowed": True, "time": "2026-11-30T10:00:00+00:00"})
    head = tmp_path / "log.jsonl.head"
    head.write_text(json.dumps({**json.loads(head.read_text()), "time": "9999-12-31T23:59:59+00:00"}))
    verify_log(tmp_path / "log.jsonl")
    assert main(["verify-log", str(tmp_path / "log.jsonl")]) in (0, 1)
    assert "Traceback" not in capsys.readouterr().err
