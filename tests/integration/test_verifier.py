"""The supervised worker: every failure mode has its own verdict, never PROVED, and the worker recovers."""
import json
import os
import signal
import threading
from pathlib import Path

import pytest

from veriguard.synth import toolbox
from tests.conftest import FIXTURES
from veriguard.cli import main
from veriguard.verify.proof import MODEL_NOT_REPLAYED, from_worker
from veriguard.verify.verdicts import Verdict

pytestmark = pytest.mark.integration
NAGINI = FIXTURES / "nagini"


def verify(worker, name, **kw):
    return from_worker(worker.verify_file(NAGINI / name, **kw), file=name)


def test_proved_and_a_counterexample_model(nagini_worker):
    assert verify(nagini_worker, "small_good.py", timeout=60).verdict is Verdict.PROVED
    bad = verify(nagini_worker, "small_bad.py", timeout=60)
    assert bad.verdict is Verdict.UNKNOWN and bad.detail == MODEL_NOT_REPLAYED  # REFUTED needs a replay
    d = bad.diagnostics[0]
    assert d.confirmed is None
    assert d.function == "allow" and d.line == 5 and d.counterexample == {"role": "admin", "age": 18}


def test_silicon_timeout_is_a_timeout(nagini_worker):
    r = verify(nagini_worker, "hard_nonlinear.py", timeout=5)
    assert r.verdict is Verdict.TIMEOUT and "timed out" in r.detail
    assert verify(nagini_worker, "small_good.py", timeout=60).verdict is Verdict.PROVED


@pytest.mark.parametrize("name,code", [("unsupported_walrus.py", "translation.unsupported"),
                                       ("translator_crash_slicing.py", "translation.crash")])
def test_unsupported_python_is_a_translation_error(nagini_worker, name, code):
    r = verify(nagini_worker, name, timeout=60)
    assert r.verdict is Verdict.ERROR and r.detail.startswith("translation error")
    assert r.diagnostics[0].code == code


def test_toolbox_templates_verify_with_an_opaque_predicate(nagini_worker, tmp_path):
    head = (NAGINI / "toolbox_generic.py.in").read_text()
    shape = toolbox.ItemShape("Tuple[str, int]", 2)
    src = head + "\n\n" + toolbox.violators("violators_ok", "item_ok", [("limit", "int")], "xs", shape) + "\n\n" + \
        toolbox.violation_list(["f_a", "f_b", "f_c"], ["a", "b", "c"])
    path = tmp_path / "toolbox_check.py"
    path.write_text(src)
    r = from_worker(nagini_worker.verify_file(path, timeout=120))
    assert r.verdict is Verdict.PROVED, r.diagnostics


def test_verify_cli(nagini_worker, capsys):
    code = main(["verify", str(NAGINI / "small_good.py"), str(NAGINI / "small_bad.py"), "--json"], worker=nagini_worker)
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    assert [(r["verdict"], r["detail"]) for r in out["results"]] == [("PROVED", ""), ("UNKNOWN", MODEL_NOT_REPLAYED)]
    assert out["results"][1]["diagnostics"][0]["counterexample"] == {"role": "admin", "age": 18}


MODULAR = '''from nagini_contracts.contracts import *


@Pure
def adult_age() -> int:
    Decreases(None)
    return 18


def allow(age: int) -> bool:
    Ensures(Result() == (age >= 18))
    return age >= adult_age()


def next_after(x: int) -> int:
    Ensures(Result() > x)
    return x + 1
'''


class Counting:
    """The real worker, with a record of what the cache let through to it."""

    def __init__(self, worker):
        self.worker, self.calls, self.replies = worker, [], []

    def verify_file(self, path, **kw):
        self.calls.append(tuple(kw.get("select", ())))
        self.replies.append(self.worker.verify_file(path, **kw))
        return self.replies[-1]


@pytest.fixture(scope="module")
def session_cache(tmp_path_factory):
    from veriguard.verify.proof_cache import ProofCache

    return ProofCache(tmp_path_factory.mktemp("proof-cache"))


def test_the_proof_cache_in_front_of_the_real_verifier(nagini_worker, session_cache, tmp_path):
    from veriguard.verify.proof_cache import verify_cached

    worker = Counting(nagini_worker)

    def prove(source, name="modular.py"):
        path = tmp_path / name
        path.write_text(source)
        return from_worker(verify_cached(worker, path, source, timeout=60, cache=session_cache), file=name)

    assert prove(MODULAR).verdict is Verdict.PROVED and worker.calls == [()]
    again = prove(MODULAR)
    assert again.verdict is Verdict.PROVED and again.cache["hit"] == "file" and len(worker.calls) == 1
    # a wrong body in a function nobody's proof can see: only that function is verified, and it fails (then it
    # alone again, with counterexample models: verify.nagini.verify_explained)
    wrong = prove(MODULAR.replace("return x + 1", "return x"), "modular_wrong.py")
    assert worker.calls[-2:] == [("next_after",), ("next_after",)]
    assert wrong.verdict is Verdict.UNKNOWN and wrong.diagnostics[0].function == "next_after"
    assert wrong.diagnostics[0].counterexample is not None
    # Nagini saw only next_after (nagini_worker.selection_slice), on the file's own lines and under its name
    error = worker.replies[-1]["errors"][0]
    assert Path(error["file"]).name == "modular_wrong.py" and "veriguard-slice-" not in json.dumps(error)
    assert error["line"] == MODULAR.splitlines().index("def next_after(x: int) -> int:") + 2
    # a pure body its caller sees: the caller is verified again with it, and fails
    seen = prove(MODULAR.replace("return 18", "return 17"), "modular_pure.py")
    assert worker.calls[-2:] == [("adult_age", "allow"), ("allow",)]
    assert seen.verdict is Verdict.UNKNOWN and {d.function for d in seen.diagnostics} == {"allow"}
    fixed = prove(MODULAR.replace("return x + 1", "return x + 2"), "modular_fixed.py")
    assert fixed.verdict is Verdict.PROVED and worker.calls[-1] == ("next_after",)
    assert fixed.cache["reused"] == ["adult_age", "allow"]


def test_a_selection_the_program_lacks_is_an_error_never_proved(nagini_worker):
    # Nagini's chopper keeps nothing for an unknown name, and an empty program verifies: the worker refuses it
    r = from_worker(nagini_worker.verify_file(NAGINI / "small_good.py", timeout=60, select=("no_such_function",)))
    assert r.verdict is Verdict.ERROR and "no_such_function" in r.diagnostics[0].message
    assert from_worker(nagini_worker.verify_file(NAGINI / "small_good.py", timeout=60, select=("allow",))).verdict \
        is Verdict.PROVED


# The two tests that kill the worker come last: a restart is a cold JVM (7-15 s, and every proof after it runs on
# a cold JIT). The wall-clock kill is followed by a restart that must prove; the kill from outside is the session's
# last use of the worker, so its restart (the same path: verify_file starts a dead worker again) is not paid twice.


def test_hard_kill_at_the_wall_clock_then_restart(nagini_worker):
    pid = nagini_worker.pid
    raw = nagini_worker.verify_file(NAGINI / "hard_nonlinear.py", timeout=600, wall_limit=3)
    r = from_worker(raw)
    assert r.verdict is Verdict.TIMEOUT and "killed" in r.detail
    assert nagini_worker.stats.kills >= 1 and nagini_worker.proc is None
    assert verify(nagini_worker, "small_good.py", timeout=60).verdict is Verdict.PROVED
    assert nagini_worker.pid != pid


def test_worker_killed_from_outside_is_an_error_and_left_to_start_again(nagini_worker):
    nagini_worker.start()
    pid = nagini_worker.pid
    threading.Timer(1.5, lambda: os.killpg(pid, signal.SIGKILL)).start()
    r = from_worker(nagini_worker.verify_file(NAGINI / "hard_nonlinear.py", timeout=120))
    assert r.verdict is Verdict.ERROR and r.detail == "verifier crashed"
    assert r.diagnostics[0].message.startswith("the verifier process died")
    assert nagini_worker.proc is None  # the next call starts a new process, as after the kill above
