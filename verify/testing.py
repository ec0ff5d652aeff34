"""Run a policy's tests in a child process (verify.testrun) and collect the results."""
from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contracts.check import Contract
from contracts.spec import Example
from verify.testrun import TestRequest


@dataclass(frozen=True)
class TestReport:
    examples: list[dict[str, Any]]
    hypothesis: dict[str, Any]
    mutants: list[dict[str, Any]]
    corpus: int
    error: str = ""
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def examples_passed(self) -> bool:
        return not self.error and all(e.get("passed") for e in self.examples)

    @property
    def hypothesis_passed(self) -> bool:
        return not self.error and bool(self.hypothesis.get("passed"))


def run_tests(contract: Contract, examples: tuple[Example, ...], policy_source: str, *,
              mutants: list[tuple[int, str]] | None = None, hypothesis_examples: int = 300,
              replays: list[dict[str, Any]] | None = None, wall_seconds: float = 300.0) -> TestReport:
    """Examples, Hypothesis against the runtime contract, and mutants, in a sandboxed child."""
    import time

    req = TestRequest(contract, examples, policy_source, tuple(mutants or ()), hypothesis_examples,
                      replays=tuple(replays or ()))
    root = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "PYTHONHASHSEED": "0"}
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="veriguard-tests-") as tmp:
        path = Path(tmp) / "request.pickle"
        path.write_bytes(pickle.dumps(req))
        try:
            proc = subprocess.run([sys.executable, "-m", "verify.testrun", str(path)], capture_output=True, text=True,
                                  timeout=wall_seconds, env=env, cwd=tmp)
        except subprocess.TimeoutExpired:
            return TestReport([], {}, [], 0, error=f"the tests did not finish within {wall_seconds:.0f} s",
                              seconds=time.monotonic() - t0)
    seconds = time.monotonic() - t0
    if proc.returncode != 0 or not proc.stdout.strip():
        tail = (proc.stderr or "").strip().splitlines()[-5:]
        return TestReport([], {}, [], 0, error=f"the test process failed (exit {proc.returncode}): {' | '.join(tail)}",
                          seconds=seconds)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if out.get("error"):
        return TestReport([], {}, [], 0, error=out["error"], seconds=seconds)
    return TestReport(out["examples"], out["hypothesis"], out["mutants"], out["corpus"], seconds=seconds,
                      extra={"replays": out.get("replays", [])})
