"""The third red-team pass on the decision log (helper C22, 2026-11-29, night).

Before: a record value that is not JSON is written as its str(), which was taken twice (once for the hash, once for
the line): a value whose str() changes between calls (a counter, a clock, a lazy object) left a line that did not
match its own hash, and every later `verify-log` said the genuine log was altered at that line; a str() that raised
escaped `append` as that exception (KeyError), not as the log's error. And a checkpoint naming the log's own head
through a linked folder was accepted (compared by name): it vouched for whatever the head did, so a rollback with
its head went unseen. Now the record is made plain JSON data once, before anything is written (`log.record` when it
cannot be), and the checkpoint is compared with the log and its head as files (links resolved).
"""
import itertools

import pytest

from veriguard.enforce.decision_log import DecisionLog, DecisionLogError, read_verified, verify_log
from veriguard.enforce.keys import load_signing_key, load_verify_key, new_key_pair


@pytest.fixture(scope="module")
def key(tmp_path_factory):
    private, public, _ = new_key_pair(tmp_path_factory.mktemp("keys"))
    return load_signing_key(private), load_verify_key(public)


class Changing:
    """A value whose text differs each time it is asked for (as a clock's or a counter's)."""

    def __init__(self):
        self.calls = itertools.count()

    def __str__(self):
        return f"call {next(self.calls)}"


class Raising:
    def __str__(self):
        raise KeyError("no text")


def test_a_value_whose_text_changes_is_written_once_and_the_log_stays_intact(tmp_path, key):
    log = DecisionLog(tmp_path / "log.jsonl", key=key[0])
    log.append({"i": 0})
    written = log.append({"when": Changing()})
    log.append({"i": 2})
    check, records = read_verified(tmp_path / "log.jsonl", key[1])
    assert check.ok and check.records == 3, check.problem
    assert records[1]["when"] == written["when"] == "call 0"


def test_a_value_whose_text_raises_is_refused_and_nothing_is_written(tmp_path, key):
    path = tmp_path / "log.jsonl"
    log = DecisionLog(path, key=key[0])
    log.append({"i": 0})
    before = path.read_bytes()
    with pytest.raises(DecisionLogError) as e:
        log.append({"v": Raising()})
    assert e.value.code == "log.record"
    assert path.read_bytes() == before and verify_log(path, key[1]).ok


@pytest.mark.parametrize("which", ["head", "log"])
def test_the_checkpoint_may_not_be_the_head_or_the_log_through_a_link(tmp_path, key, which):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    path = real / "log.jsonl"
    DecisionLog(path, key=key[0]).append({"i": 0})
    name = "log.jsonl.head" if which == "head" else "log.jsonl"
    with pytest.raises(DecisionLogError) as e:
        DecisionLog(path, key=key[0], checkpoint=tmp_path / "link" / name)
    assert e.value.code == "log.write" and "checkpoint" in e.value.message
    assert verify_log(path, key[1]).ok


def test_a_writer_never_creates_its_log_again_in_a_folder_put_in_its_place(tmp_path, key):
    """Before, the folder swapped for a link to another folder between two appends was refused, but only after an
    empty log.jsonl was created in the other folder (the writer opened the log with O_CREAT)."""
    folder, other = tmp_path / "logs", tmp_path / "other"
    folder.mkdir()
    other.mkdir()
    log = DecisionLog(folder / "log.jsonl", key=key[0])
    log.append({"i": 0})
    folder.rename(tmp_path / "moved")
    folder.symlink_to(other)
    with pytest.raises(DecisionLogError) as e:
        log.append({"i": 1})
    assert "gone" in e.value.message and list(other.iterdir()) == []


def test_a_log_that_is_a_hard_link_is_not_written(tmp_path, key):
    """Before, a log.jsonl hard-linked to another (empty) file was written: the records went into that file too, as
    they would through a symlink, which the log already refuses."""
    other = tmp_path / "elsewhere.txt"
    other.write_bytes(b"")
    (tmp_path / "logs").mkdir()
    path = tmp_path / "logs" / "log.jsonl"
    path.hardlink_to(other)
    with pytest.raises(DecisionLogError) as e:
        DecisionLog(path, key=key[0]).append({"i": 0})
    assert e.value.code == "log.write" and "hard link" in e.value.message
    assert other.read_bytes() == b""
