"""The fifth red-team pass on the decision log (helper C25, 2026-11-30).

A signature has one spelling. An Ed25519 signature is 64 bytes, 88 base64 characters, the last of them carrying 4
bits no byte uses; the decoder ignored them, so each record's `sig` and the head's could be written 16 ways. A log
whose lines were rewritten so (every record and the head: other bytes, another sha256 of the file) verified intact
and anchored, and appending extended it (a respelt head; append leaves the records to verify_log). Now only the spelling the writer writes verifies: the line is BROKEN where
it was respelt, and append refuses the log.
"""
import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from veriguard.enforce.decision_log import DecisionLog, DecisionLogError, canonical, verify_log
from veriguard.enforce.keys import load_verify_key, new_key_pair

B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    private, public, _ = new_key_pair(tmp_path_factory.mktemp("keys") / "log")
    return private, load_verify_key(public), public


def respelt(signature, low=5):
    body = signature.rstrip("=")
    spelt = body[:-1] + B64[(B64.index(body[-1]) & ~0xF) | low] + signature[len(body):]
    assert spelt != signature and base64.b64decode(spelt) == base64.b64decode(signature)
    return spelt


def written(tmp_path, keys, n=3):
    path = tmp_path / "d.jsonl"
    log = DecisionLog(path, key=keys[0])
    for i in range(n):
        log.append({"allowed": i % 2 == 0, "i": i})
    return path


def respell_record(path, index):
    lines = path.read_bytes().splitlines(keepends=True)
    rec = json.loads(lines[index])
    rec["sig"] = respelt(rec["sig"])
    lines[index] = (canonical(rec) + "\n").encode("ascii")
    path.write_bytes(b"".join(lines))


def respell_head(path):
    head = path.with_name(path.name + ".head")
    doc = json.loads(head.read_bytes())
    doc["sig"] = respelt(doc["sig"])
    head.write_bytes((canonical(doc) + "\n").encode("ascii"))


@pytest.mark.parametrize("index", [0, 1, 2])
def test_a_record_whose_signature_is_spelt_otherwise_is_broken(tmp_path, keys, index):
    path = written(tmp_path, keys)
    respell_record(path, index)
    check = verify_log(path, keys[1])
    assert not check.ok and check.line == index + 1 and "signature" in check.problem
    # append checks the head's signature and the chain, not each record's (module docstring): verify_log finds it
    # even after an append
    DecisionLog(path, key=keys[0]).append({"allowed": True})
    assert verify_log(path, keys[1]).line == index + 1


def test_a_head_whose_signature_is_spelt_otherwise_is_broken(tmp_path, keys):
    path = written(tmp_path, keys)
    respell_head(path)
    check = verify_log(path, keys[1])
    assert not check.ok and not check.anchored and "signature" in check.problem
    with pytest.raises(DecisionLogError) as e:
        DecisionLog(path, key=keys[0]).append({"allowed": True})
    assert e.value.code == "log.broken"


def test_verify_log_exits_1_on_a_respelt_log(tmp_path, keys):
    path = written(tmp_path, keys)
    for index in range(3):
        respell_record(path, index)
    respell_head(path)
    cli = str(Path(sys.executable).with_name("veriguard"))
    run = subprocess.run([cli, "verify-log", str(path), "--public-key", str(keys[2]), "--json"], capture_output=True,
                         text=True, timeout=120)
    out = json.loads(run.stdout)
    assert run.returncode == 1 and out["ok"] is False and "Traceback" not in run.stderr


def test_an_untouched_log_verifies_and_extends(tmp_path, keys):
    path = written(tmp_path, keys, n=5)
    assert verify_log(path, keys[1]).ok
    DecisionLog(path, key=keys[0]).append({"allowed": True})
    check = verify_log(path, keys[1])
    assert check.ok and check.anchored and check.records == 6
