"""Random and mutated input to the CLI: every run ends with a documented exit code and never a
traceback. Only commands that finish before the verifier would start (no JVM)."""
import json
import shutil
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veriguard.enforce.decision_log import DecisionLog
from veriguard.enforce.keys import new_key_pair
from veriguard.cli import main
from tests.conftest import examples

FAST = settings(max_examples=examples(120), deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
GOOD_ARGS = {"user": {"role": "treasurer", "sent_today_cents": 0, "mfa": True},
             "payment": {"recipient": "acme-supplies", "amount_cents": 100, "currency": "USD", "method": "ach",
                         "human_approved": False}}
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=12)


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    from veriguard.synth.freeze import write_build
    from veriguard.synth.specfile import load_spec
    from tests.conftest import SHIPPED
    from tests.unit.test_compile_and_freeze import fake_result

    spec = load_spec(next(p for p in SHIPPED if p.stem == "payments"))
    return write_build(fake_result(spec), tmp_path_factory.mktemp("b"), run_info={})[0]


@pytest.fixture(scope="module")
def signed_log(tmp_path_factory):
    d = tmp_path_factory.mktemp("log")
    private, public, _ = new_key_pair(d / "keys")
    log = DecisionLog(d / "log.jsonl", key=private)
    for i in range(4):
        log.append({"allowed": bool(i % 2), "i": i})
    return log.path.read_bytes(), log.head_path.read_bytes(), public


def clean(capsys, argv, codes):
    try:
        code = main(argv)
    except SystemExit as e:  # argparse refusing the command line: its own usage message, exit 2
        code = e.code
    out = capsys.readouterr()
    assert code in codes, (code, out.err[-500:])
    assert "Traceback" not in out.err and "Traceback" not in out.out
    return code, out


def mutate(data: bytes, edits) -> bytes:
    for pos, value, kind in edits:
        pos = pos % (len(data) + 1)
        if kind == 0:
            data = data[:pos] + bytes([value]) + data[pos + 1:]
        elif kind == 1:
            data = data[:pos] + data[pos + 1:]
        else:
            data = data[:pos] + bytes([value]) + data[pos:]
    return data


EDITS = st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255), st.integers(0, 2)), min_size=1, max_size=4)


@FAST
@given(st.one_of(st.text(max_size=40), JSON.map(json.dumps),
                 EDITS.map(lambda e: mutate(json.dumps(GOOD_ARGS).encode(), e).decode("utf-8", "replace"))))
def test_check_with_any_args(build, capsys, text):
    if text.startswith("@") or text.startswith("-"):
        text = " " + text  # a file reference or an option is another test's business
    clean(capsys, ["check", str(build), "--args", text], {0, 2})


@FAST
@given(st.binary(max_size=200) | EDITS.map(lambda e: mutate(json.dumps(GOOD_ARGS).encode(), e)))
def test_check_with_any_args_file(build, tmp_path, capsys, data):
    f = tmp_path / "args.json"
    f.write_bytes(data)
    clean(capsys, ["check", str(build), "--args", f"@{f}"], {0, 2})


@FAST
@given(st.sampled_from(["certificate.json", "policy.py", "extraction.json", "run.json"]), EDITS)
def test_check_and_report_on_a_mutated_build(build, tmp_path, capsys, name, edits):
    copy = tmp_path / "b" / build.name   # the folder named after its policy, as synth writes it
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(build, copy)
    (copy / name).write_bytes(mutate((copy / name).read_bytes(), edits))
    clean(capsys, ["check", str(copy), "--args", json.dumps(GOOD_ARGS)], {0, 2})
    clean(capsys, ["report", str(copy)], {0, 1, 2})
    clean(capsys, ["report", str(copy), "--json"], {0, 1, 2})


@FAST
@given(EDITS, st.one_of(st.none(), EDITS), st.booleans())
def test_verify_log_on_a_mutated_log(signed_log, tmp_path, capsys, log_edits, head_edits, with_key):
    data, head, public = signed_log
    path = tmp_path / "log.jsonl"
    path.write_bytes(mutate(data, log_edits))
    head_path = tmp_path / "log.jsonl.head"
    head_path.unlink(missing_ok=True)
    if head_edits is not None:
        head_path.write_bytes(mutate(head, head_edits))
    argv = ["verify-log", str(path)] + (["--public-key", str(public)] if with_key else [])
    clean(capsys, argv, {0, 1})
    code, out = clean(capsys, argv + ["--json", "--require-anchor"], {0, 1})
    assert json.loads(out.out)["exit_code"] == code


@FAST
@given(st.binary(max_size=300) | JSON.map(lambda x: json.dumps(x).encode()))
def test_verify_log_report_and_eval_on_garbage_files(build, tmp_path, capsys, data):
    (tmp_path / "garbage.jsonl").write_bytes(data)
    clean(capsys, ["verify-log", str(tmp_path / "garbage.jsonl")], {0, 1})
    (tmp_path / "certificate.json").write_bytes(data)
    clean(capsys, ["report", str(tmp_path)], {0, 1, 2})
    (tmp_path / "ehragent").mkdir(exist_ok=True)
    (tmp_path / "ehragent" / "eicu_ac.json").write_bytes(data)
    clean(capsys, ["eval", "eicu-ac", "--data", str(tmp_path), "--build", str(build), "--quiet", "--cases-dir",
                   str(tmp_path / "cases")], {0, 2})
    (tmp_path / "key.pub").write_bytes(data)
    clean(capsys, ["verify-log", str(tmp_path / "garbage.jsonl"), "--public-key", str(tmp_path / "key.pub")], {2})


@pytest.mark.parametrize("argv", [["check", "{missing}", "--args", "1"], ["report", "{missing}"],
                                  ["verify-log", "{missing}"], ["verify-log", "{dir}"],
                                  ["eval", "eicu-ac", "--data", "{missing}", "--build", "{missing}"],
                                  ["keys", "new", "--out", "{file}"]])
def test_every_command_on_a_missing_or_wrong_path_as_a_process(tmp_path, argv):
    (tmp_path / "file").write_text("x")
    argv = [a.format(missing=tmp_path / "missing", dir=tmp_path, file=tmp_path / "file") for a in argv]
    p = subprocess.run([sys.executable, "-m", "veriguard.cli", *argv], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "Traceback" not in p.stderr and "error[" in p.stderr
