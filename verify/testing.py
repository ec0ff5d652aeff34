"""Run a policy's tests against its frozen module in a child process (verify.testrun) and collect the results."""
from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from veriguard.contracts.cache_dir import cache_dir
from veriguard.contracts.spec import Example, Spec
from veriguard.verify.testrun import TestRequest
from veriguard.verify.verdicts import Verdict


def _hypothesis_storage() -> dict[str, str]:
    """Hypothesis keeps its Unicode table under its storage folder (default: .hypothesis in the working folder, for
    the child a fresh temporary one): in veriguard's cache folder it is built once, not in every child (about 1.1 s
    of CPU). Without a home folder for the cache, the default."""
    try:
        return {"HYPOTHESIS_STORAGE_DIRECTORY": str(cache_dir() / "hypothesis")}
    except RuntimeError:  # Path.home(): no home folder
        return {}


def _contract_layer(spec: Spec) -> Spec:
    """The contract layer's own Spec (synth's SpecFile adds what the child never reads): unpickling it then imports
    no synth module, nor the contract parser they import (70 ms of every child)."""
    return Spec(**{f.name: getattr(spec, f.name) for f in fields(Spec)})


@dataclass(frozen=True)
class TestReport:
    examples: list[dict[str, Any]]         # one row per spec example, with its verdict
    hypothesis: dict[str, Any]             # the verdict, figures and first failure of the random and systematic inputs
    mutants: list[dict[str, Any]]          # {"id", "killed_by": how the tests killed it, or None}
    replays: list[dict[str, Any]] = field(default_factory=list)  # verify.testrun.diagnose of each replayed input
    seconds: dict[str, float] = field(default_factory=dict)  # per phase, measured in the child
    error: str = ""                        # the tests could not run at all
    error_verdict: Verdict = Verdict.ERROR  # TIMEOUT when that was the wall clock


def run_tests(spec: Spec, examples: tuple[Example, ...], runnable: str, module: str, *,
              mutants: list[tuple[int, str]] | None = None, hypothesis_examples: int = 300,
              replays: list[dict[str, Any]] | None = None, wall_seconds: float = 300.0) -> TestReport:
    """Examples, Hypothesis against the runtime contract, and mutants (contracts stripped), run in a
    sandboxed child on the frozen module of `runnable`, which must be `module`, and on each frozen mutant."""
    req = TestRequest(_contract_layer(spec), examples, runnable, module, tuple(mutants or ()), hypothesis_examples,
                      replays=tuple(replays or ()))
    root = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "PYTHONHASHSEED": "0", **_hypothesis_storage()}
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="veriguard-tests-") as tmp:
        path = Path(tmp) / "request.pickle"
        path.write_bytes(pickle.dumps(req))
        try:
            proc = subprocess.run([sys.executable, "-m", "veriguard.verify.testrun", str(path)], capture_output=True, text=True,
                                  timeout=wall_seconds, env=env, cwd=tmp)
        except subprocess.TimeoutExpired:
            return TestReport([], {}, [], error=f"the tests did not finish within {wall_seconds:.0f} s",
                              error_verdict=Verdict.TIMEOUT, seconds={"total": time.monotonic() - t0})
    total = {"total": time.monotonic() - t0}
    if proc.returncode != 0 or not proc.stdout.strip():
        tail = (proc.stderr or "").strip().splitlines()[-5:]
        return TestReport([], {}, [], error=f"the test process failed (exit {proc.returncode}): {' | '.join(tail)}",
                          seconds=total)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if out.get("error"):
        return TestReport([], {}, [], error=out["error"], seconds=total)
    return TestReport(out["examples"], out["hypothesis"], out["mutants"], out["replays"],
                      seconds={**out["seconds"], **total})
