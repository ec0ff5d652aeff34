"""The fourth red-team pass on the decision log (helper C23, 2026-11-30): a head that does not belong to the log.

Appending read only the head and what follows it, so a head taken from another log of the same size (the same key
signs both) was extended as if it were this log's, and so was a log whose first or last record was swapped for
another log's: only verify_log, reading everything, found it. Now append reads the first and the last record the
head vouches for (two records, whatever the log's length) and refuses when their hashes or log id differ.
"""
import shutil

import pytest

from veriguard.enforce.decision_log import DecisionLog, DecisionLogError, verify_log
from veriguard.enforce.keys import load_signing_key, load_verify_key, new_key_pair


@pytest.fixture(scope="module")
def key(tmp_path_factory):
    private, public, _ = new_key_pair(tmp_path_factory.mktemp("keys") / "log")
    return load_signing_key(private), load_verify_key(public)


def log(folder, key, records=3):
    folder.mkdir()
    path = folder / "log.jsonl"
    writer = DecisionLog(path, key=key)
    for i in range(records):
        writer.append({"i": i, "allowed": True})
    return path


def head(path):
    return path.with_name(path.name + ".head")


def two_logs(tmp_path, key, records=3):
    a, b = log(tmp_path / "a", key, records), log(tmp_path / "b", key, records)
    assert a.stat().st_size == b.stat().st_size   # records of one shape: only the random log ids differ
    return a, b


def refused(path, key, **kw):
    before = path.read_bytes()
    with pytest.raises(DecisionLogError) as e:
        DecisionLog(path, key=key, **kw).append({"after": True})
    assert e.value.code == "log.broken" and path.read_bytes() == before
    return e.value.message


@pytest.mark.parametrize("signed", [True, False], ids=["signed", "unsigned"])
def test_append_refuses_a_head_taken_from_another_log_of_the_same_size(tmp_path, key, signed):
    a, b = two_logs(tmp_path, key[0] if signed else None)
    shutil.copy(head(b), head(a))
    assert not verify_log(a, key[1] if signed else None).ok   # verify-log always found it
    assert "record the head vouches for is not in the log" in refused(a, key[0] if signed else None)


def test_append_refuses_another_logs_head_and_its_checkpoint(tmp_path, key):
    a, b = two_logs(tmp_path, key[0])
    shutil.copy(head(b), head(a))
    shutil.copy(head(b), tmp_path / "checkpoint")
    refused(a, key[0], checkpoint=tmp_path / "checkpoint")


@pytest.mark.parametrize("which", [0, -1], ids=["first", "last"])
def test_append_refuses_a_log_whose_first_or_last_record_is_another_logs(tmp_path, key, which):
    a, b = two_logs(tmp_path, key[0])
    lines_a, lines_b = a.read_bytes().splitlines(keepends=True), b.read_bytes().splitlines(keepends=True)
    assert len(lines_a[which]) == len(lines_b[which])
    lines_a[which] = lines_b[which]
    a.write_bytes(b"".join(lines_a))
    assert not verify_log(a, key[1]).ok
    refused(a, key[0])


def test_a_log_whose_records_are_another_logs_under_its_own_head_is_refused(tmp_path, key):
    a, b = two_logs(tmp_path, key[0])
    shutil.copy(b, a)
    refused(a, key[0])


def test_a_genuine_log_still_appends_after_a_torn_write(tmp_path, key):
    a = log(tmp_path / "a", key[0])
    with open(a, "ab") as f:
        f.write(b'{"torn":')
    DecisionLog(a, key=key[0]).append({"after": True})
    check = verify_log(a, key[1])
    assert check.ok and check.records == 4
