"""The decision log under failures a test can cause for real (helper C, stop 20): a writer process killed between
its record and its head, a file-size limit hit partway through a record (a full disk), a write that fails half
done, two monitors with different keys on one log, records holding lone surrogates, NUL or deep nesting. Each
must deny (or be recovered as documented) and leave a log that verifies."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT
from veriguard.enforce.decision_log import DecisionLog, DecisionLogError, verify_log
from veriguard.enforce.keys import load_verify_key, new_key_pair


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    d = tmp_path_factory.mktemp("keys")
    first, first_public, _ = new_key_pair(d / "a")
    second, _, _ = new_key_pair(d / "b")
    return first, load_verify_key(first_public), second


def _log(path: Path, key: Path | None, n: int = 3) -> Path:
    log = DecisionLog(path, key=key)
    for i in range(n):
        log.append({"allowed": True, "i": i})
    return path


def _child(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=ROOT,
                          timeout=60)


def test_a_writer_killed_between_its_record_and_its_head_leaves_a_log_that_verifies(tmp_path, keys):
    private, public, _ = keys
    path = _log(tmp_path / "d.jsonl", private)
    done = _child(f"""
        import os
        from veriguard.enforce.decision_log import DecisionLog
        DecisionLog._write_head = lambda self, chain: os._exit(9)   # the process dies: no handler runs
        DecisionLog({str(path)!r}, key={str(private)!r}).append({{"allowed": True, "i": 3}})
    """)
    assert done.returncode == 9
    check = verify_log(path, public)
    assert check.ok and check.records == 4 and check.after_anchor == 1
    DecisionLog(path, key=private).append({"allowed": False, "i": 4})
    check = verify_log(path, public)
    assert check.ok and check.records == 5 and check.after_anchor == 0


@pytest.mark.parametrize("room", [0, 100])
def test_a_file_size_limit_hit_partway_through_a_record_denies_and_takes_it_back(tmp_path, keys, room):
    """RLIMIT_FSIZE stands in for a full disk: the kernel writes what fits, then refuses (EFBIG)."""
    private, public, _ = keys
    path = _log(tmp_path / "d.jsonl", private)
    size = path.stat().st_size
    done = _child(f"""
        import resource, signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, ({size + room}, {size + room}))
        from veriguard.enforce.decision_log import DecisionLog, DecisionLogError
        try:
            DecisionLog({str(path)!r}, key={str(private)!r}).append({{"allowed": True, "pad": "x" * 5000}})
            print("APPENDED")
        except DecisionLogError as e:
            print("DENIED", e.code)
    """)
    assert done.stdout.strip() == "DENIED log.write", done.stderr[-500:]
    check = verify_log(path, public)
    assert check.ok and check.records == 3 and check.after_anchor == 0 and path.stat().st_size == size


def test_a_write_that_fails_half_done_denies_and_takes_the_half_back(tmp_path, keys, monkeypatch):
    import os

    from veriguard.enforce import decision_log

    private, public, _ = keys
    path = _log(tmp_path / "d.jsonl", private)
    size, real, calls = path.stat().st_size, os.write, []

    def half(fd: int, data: bytes) -> int:
        calls.append(len(data))
        if len(calls) == 1:
            return real(fd, bytes(data[:len(data) // 2]))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(decision_log.os, "write", half)
    with pytest.raises(DecisionLogError) as e:
        DecisionLog(path, key=private).append({"allowed": True})
    monkeypatch.undo()
    assert e.value.code == "log.write" and path.stat().st_size == size
    assert verify_log(path, public).ok


def test_two_monitors_with_different_keys_cannot_both_extend_one_log(tmp_path, keys):
    private, public, other = keys
    path = _log(tmp_path / "d.jsonl", private)
    with pytest.raises(DecisionLogError) as e:
        DecisionLog(path, key=other).append({"allowed": True})
    assert e.value.code == "log.broken" and "not by the given key" in e.value.message
    with pytest.raises(DecisionLogError) as e:
        DecisionLog(path).append({"allowed": True})
    assert e.value.code == "log.key"
    unkeyed = _log(tmp_path / "u.jsonl", None)
    with pytest.raises(DecisionLogError) as e:
        DecisionLog(unkeyed, key=private).append({"allowed": True})
    assert e.value.code == "log.broken" and "not signed" in e.value.message
    assert verify_log(path, public).ok and verify_log(path, public).records == 3


@pytest.mark.parametrize("value", ["\udc80", "a\x00b", "\ud800\udc00", {"\x00": "\u2028"}, {"\udfff": 1}],
                         ids=["lone low surrogate", "NUL", "a surrogate pair written apart", "NUL key", "surrogate key"])
def test_records_with_lone_surrogates_or_nul_verify(tmp_path, keys, value):
    private, public, _ = keys
    path = _log(tmp_path / "d.jsonl", private)
    DecisionLog(path, key=private).append({"allowed": False, "t": value})
    check = verify_log(path, public)
    assert check.ok and check.records == 4


@pytest.mark.parametrize("kind", ["dict", "list"])
def test_a_record_the_verifier_could_not_read_back_is_refused_before_it_is_written(tmp_path, keys, kind):
    """Before: objects nested 1,000 to 1,500 deep were written (json.dumps reads deeper than strict JSON's reader),
    and from then on verify_log said the log was broken at that line, whatever else was done to it: whoever could
    put such a value in a record (an argument, a tool name's payload) made an honest log unverifiable."""
    import threading

    private, public, _ = keys
    path = _log(tmp_path / "d.jsonl", private)
    outcomes: list[str] = []

    def append(value: object) -> None:  # on a thread of its own: a shallow stack, as a monitor's may be
        try:
            DecisionLog(path, key=private).append({"allowed": False, "t": value})
            outcomes.append("written")
        except DecisionLogError as e:
            outcomes.append(e.code)

    for depth in (150, 1000, 1200, 1400, 1490):
        value: object = 1
        for _ in range(depth):
            value = {"k": value} if kind == "dict" else [value]
        thread = threading.Thread(target=append, args=(value,))
        thread.start()
        thread.join()
        check = verify_log(path, public)
        assert check.ok, (depth, outcomes, check.problem)
    assert outcomes == ["written"] + ["log.record"] * 4


@pytest.mark.parametrize("kind", ["dict", "list"])
def test_the_nesting_limit_counts_empty_containers(tmp_path, keys, kind):
    """Before: the depth was read at the scalars only, so lists or objects nested around an empty one (`[[[...[]...]]]`,
    1,000 deep) were 0 deep to the writer and written, past the documented limit of MAX_RECORD_DEPTH levels."""
    from veriguard.enforce.decision_log import MAX_RECORD_DEPTH

    private, public, _ = keys
    path = _log(tmp_path / "d.jsonl", private)
    outcomes: list[str] = []
    for depth in (MAX_RECORD_DEPTH - 2, MAX_RECORD_DEPTH + 1, 1000):
        value: object = {} if kind == "dict" else []
        for _ in range(depth - 2):   # inside the record's own object and its field's container
            value = {"k": value} if kind == "dict" else [value]
        try:
            DecisionLog(path, key=private).append({"t": value})
            outcomes.append("written")
        except DecisionLogError as e:
            outcomes.append(e.code)
    assert outcomes == ["written", "log.record", "log.record"]
    assert verify_log(path, public).ok
