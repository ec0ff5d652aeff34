"""Random damage to a signed decision log: verify_log never raises, and whatever it accepts with the
public key is the log as written (a torn, never-anchored last line aside)."""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veriguard.enforce.decision_log import DecisionLog, DecisionLogError, verify_log
from veriguard.enforce.keys import load_verify_key, new_key_pair
from tests.conftest import examples


@pytest.fixture(scope="module")
def genuine(tmp_path_factory):
    d = tmp_path_factory.mktemp("genuine")
    private, public, _ = new_key_pair(d / "keys")
    log = DecisionLog(d / "log.jsonl", key=private)
    for i in range(5):
        log.append({"allowed": i % 2 == 0, "i": i, "arguments": {"role": "clerk", "amount": i * 100}})
    return log.path.read_bytes(), log.head_path.read_bytes(), load_verify_key(public), private


def edit(data: bytes, op: tuple) -> bytes:
    kind, i, j, payload = op
    i, j = sorted((i % (len(data) + 1), j % (len(data) + 1)))
    lines = data.splitlines(keepends=True)
    if kind == "flip" and data:
        k = i % len(data)
        return data[:k] + bytes([data[k] ^ (payload[0] if payload and payload[0] else 1)]) + data[k + 1:]
    if kind == "delete":
        return data[:i] + data[j:]
    if kind == "insert":
        return data[:i] + payload + data[i:]
    if kind == "truncate":
        return data[:i]
    if kind == "swap" and len(lines) > 1:
        a, b = i % len(lines), j % len(lines)
        lines[a], lines[b] = lines[b], lines[a]
        return b"".join(lines)
    if kind == "duplicate" and lines:
        a = i % len(lines)
        return b"".join(lines[:a + 1] + [lines[a]] + lines[a + 1:])
    return data


OPS = st.tuples(st.sampled_from(["flip", "delete", "insert", "truncate", "swap", "duplicate"]),
                st.integers(0, 4000), st.integers(0, 4000),
                st.binary(max_size=8) | st.sampled_from([b"\n", b"{}\n", b"5\n", b"\xff\n", b'{"seq":0}\n', b" "]))


@settings(max_examples=examples(400), deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(OPS, min_size=1, max_size=3), st.lists(OPS, max_size=2), st.booleans())
def test_damage_is_found_or_harmless(genuine, tmp_path, log_ops, head_ops, drop_head):
    original, head, public, _ = genuine
    data = original
    for op in log_ops:
        data = edit(data, op)
    new_head = head
    for op in head_ops:
        new_head = edit(new_head, op)
    path = tmp_path / "log.jsonl"
    path.write_bytes(data)
    head_path = tmp_path / "log.jsonl.head"
    head_path.unlink(missing_ok=True)
    if not drop_head:
        head_path.write_bytes(new_head)
    verify_log(path)  # without the key: any verdict, never an exception
    r = verify_log(path, public)
    if r.ok:
        assert r.records == 5 and data.startswith(original)
        tail = data[len(original):]
        assert b"\n" not in tail  # at most an incomplete line, never a record


@settings(max_examples=examples(150), deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(OPS, min_size=1, max_size=2))
def test_append_after_damage_refuses_or_leaves_the_damage_visible(genuine, tmp_path, ops):
    original, head, public, private = genuine
    data = original
    for op in ops:
        data = edit(data, op)
    path = tmp_path / "log.jsonl"
    path.write_bytes(data)
    (tmp_path / "log.jsonl.head").write_bytes(head)
    try:
        DecisionLog(path, key=private).append({"allowed": False})
    except DecisionLogError:
        assert path.read_bytes() == data  # refused: nothing written
        return
    # The writer reads only the head and what follows it; an edit inside the anchored records (same
    # length) is not its to see, but it must stay visible: appending launders nothing.
    r = verify_log(path, public)
    assert r.ok == path.read_bytes().startswith(original)
    assert not r.ok or r.records == 6
