"""Supervise the Nagini worker process: start it once, send one file at a time, kill it on a hard
wall-clock deadline or a crash, restart it on the next call. Results come back as raw dicts;
`verify.verdicts` turns them into verdicts.
"""
from __future__ import annotations

import ast
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Literal

from veriguard.contracts.errors import EnvironmentProblem, OperatorError

JVM_HEAP = re.compile(r"[1-9][0-9]{0,8}[kKmMgG]?")  # the sizes -Xmx takes (a number alone: bytes)

START_TIMEOUT = 180.0
GRACE = 20.0


def java_version(java: str | None = None) -> tuple[str, int]:
    """(path, major version) of the Java that JPype will use; raises EnvironmentProblem with the fix."""
    home = os.environ.get("JAVA_HOME")
    exe = java or (str(Path(home) / "bin" / "java") if home else shutil.which("java"))
    fix = ("install Java 11 or newer (Debian/Ubuntu: `apt-get install openjdk-17-jre-headless`; macOS: "
           "`brew install openjdk@17`) and put it on PATH or set JAVA_HOME")
    if not exe or not os.path.exists(exe):
        raise EnvironmentProblem("env.java_missing", "Java was not found (the Nagini verifier runs on the JVM)", fix=fix)
    try:
        out = subprocess.run([exe, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise EnvironmentProblem("env.java_broken", f"{exe} -version failed: {e}", fix=fix) from None
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not m:
        raise EnvironmentProblem("env.java_broken", f"cannot read the version of {exe}: {(out.stderr or out.stdout)[:200]!r}",
                                 fix=fix)
    major = int(m.group(1))
    if major == 1 and m.group(2):
        major = int(m.group(2))
    if major < 11:
        raise EnvironmentProblem("env.java_old", f"{exe} is Java {major}; Nagini needs Java 11 or newer", fix=fix)
    return exe, major


def tool_versions(dists: tuple[str, ...]) -> dict[str, str]:
    """The installed version of each distribution, and the Java major version ("unknown" without Java)."""
    out = {}
    for dist in dists:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    try:
        out["java"] = str(java_version()[1])
    except Exception:  # recorded as unknown; nothing can be proved without Java anyway
        out["java"] = "unknown"
    return out


@dataclass
class WorkerStats:
    starts: int = 0
    kills: int = 0
    crashes: int = 0
    start_seconds: list[float] = field(default_factory=list)
    peak_rss_kb: int = 0


class NaginiWorker:
    """One warm Nagini process. Not thread-safe: one verification at a time, as Nagini requires."""

    def __init__(self, *, python: str = sys.executable, heap: str | None = None,
                 progress: Callable[[str], None] | None = None) -> None:
        self.python = python
        self.heap = heap
        self.progress = progress or (lambda _msg: None)
        self.proc: subprocess.Popen[str] | None = None
        self.replies: queue.Queue[str | None] = queue.Queue()
        self.stderr_tail: deque[str] = deque(maxlen=60)
        self._stderr_reader: threading.Thread | None = None
        self.stats = WorkerStats()
        self._counter = 0

    # --- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            return
        java_version()
        env = dict(os.environ)
        if self.heap:
            env["VERIGUARD_JVM_HEAP"] = self.heap
        heap = env.get("VERIGUARD_JVM_HEAP")
        if heap is not None and not JVM_HEAP.fullmatch(heap):  # else the JVM does not start: exit 3, the value unnamed
            raise OperatorError("cli.environment", f"VERIGUARD_JVM_HEAP={heap[:40]!r} is not a heap size",
                                fix="set it to a size such as 768m or 2g (the JVM's -Xmx), or unset it for 768m")
        env.setdefault("Z3_EXE", str(Path(self.python).parent / "z3"))
        root = str(Path(__file__).resolve().parent.parent)
        env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
        self.progress("starting the Nagini verifier (JVM)")
        t0 = time.monotonic()
        self.replies = queue.Queue()
        self.stderr_tail.clear()  # a crash report shows this process's lines, not an earlier one's
        self.proc = subprocess.Popen([self.python, "-m", "veriguard.verify.nagini_worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                     start_new_session=True, cwd=root)
        threading.Thread(target=self._pump, args=(self.proc.stdout, self.replies), daemon=True).start()
        self._stderr_reader = threading.Thread(target=self._drain, args=(self.proc.stderr,), daemon=True)
        self._stderr_reader.start()
        reply = self._read(START_TIMEOUT)
        if reply is None or reply.get("status") != "ready":
            self.kill()
            detail = (reply or {}).get("errors") or list(self.stderr_tail)[-8:]
            raise EnvironmentProblem("env.nagini_start", f"the Nagini worker did not start: {detail}",
                                     fix="check that `python -m veriguard.verify.nagini_worker` runs in the project's .venv "
                                         "(Python 3.12, nagini 1.3.1, Java 11+)")
        self.stats.starts += 1
        self.stats.start_seconds.append(time.monotonic() - t0)

    @staticmethod
    def _pump(stream: Any, out: "queue.Queue[str | None]") -> None:
        for line in stream:
            out.put(line)
        out.put(None)

    def _drain(self, stream: Any) -> None:
        for line in stream:
            self.stderr_tail.append(line.rstrip("\n"))

    def _read(self, timeout: float) -> dict[str, Any] | None:
        try:
            line = self.replies.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError from None
        if line is None:
            return None
        parsed: dict[str, Any] = json.loads(line)
        return parsed

    def kill(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        self._sample_rss(proc.pid)
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the JVM and its z3 children
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass

    def close(self) -> None:
        proc = self.proc
        if proc is None:
            return
        self._sample_rss(proc.pid)
        try:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(timeout=10)
        except (subprocess.TimeoutExpired, OSError):
            pass
        self.kill()

    def __enter__(self) -> "NaginiWorker":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def _sample_rss(self, pid: int) -> None:
        """Peak RSS of the worker (VmHWM) plus its current children, in kB (Linux only)."""
        total = 0
        try:
            total = int(re.search(r"VmHWM:\s+(\d+)", Path(f"/proc/{pid}/status").read_text()).group(1))  # type: ignore[union-attr]
            for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
                m = re.search(r"VmHWM:\s+(\d+)", Path(f"/proc/{child}/status").read_text())
                total += int(m.group(1)) if m else 0
        except (OSError, AttributeError, ValueError):
            pass
        self.stats.peak_rss_kb = max(self.stats.peak_rss_kb, total)

    # --- verification ------------------------------------------------------------------------
    def verify_file(self, path: str | Path, *, timeout: int = 60, counterexample: bool = True,
                    wall_limit: float | None = None, select: tuple[str, ...] = ()) -> dict[str, Any]:
        """Verify one file (only the functions in `select`, when given). Silicon gets `timeout` seconds;
        the process is killed at `wall_limit` (default timeout + 20 s). Never raises for verifier
        trouble: returns status crash/killed."""
        self.start()
        assert self.proc is not None and self.proc.stdin is not None
        self._counter += 1
        req = {"id": self._counter, "path": str(Path(path).resolve()), "timeout": timeout,
               "counterexample": counterexample, "select": list(select)}
        limit = wall_limit if wall_limit is not None else timeout + GRACE
        t0 = time.monotonic()
        try:
            self.proc.stdin.write(json.dumps(req) + "\n")
            self.proc.stdin.flush()
            reply = self._read(limit)
        except TimeoutError:
            self.stats.kills += 1
            self.kill()
            return {"status": "killed", "seconds": round(time.monotonic() - t0, 3), "errors": [],
                    "message": f"the verifier did not answer within {limit:.0f} s and was killed; it restarts "
                               "on the next call"}
        except (BrokenPipeError, OSError):
            reply = None
        if reply is None:
            self.stats.crashes += 1
            self.kill()
            if self._stderr_reader is not None:
                self._stderr_reader.join(timeout=5)  # the process is gone: its last lines are the crash trace
            tail = list(self.stderr_tail)[-12:]
            return {"status": "crash", "seconds": round(time.monotonic() - t0, 3), "errors": [],
                    "message": "the verifier process died", "stderr": tail}
        self._sample_rss(self.proc.pid if self.proc else 0)
        return reply


Models = Literal["always", "on failure", "never"]


Explained = Callable[[], str | None]


def verify_explained(verifier: Any, path: str | Path, *, timeout: int, select: tuple[str, ...] = (),
                     models: Models = "on failure", explained: Explained = lambda: None) -> dict[str, Any]:
    """`verifier.verify_file`, with Nagini's counterexample models for its failures as `models` says.

    Asking Silicon for models slows every proof (one warm worker, 2026-11-28: os_agent 66 s against 60 s, payments
    13-14 s against 10-11.5 s), while a failing function costs the same either way and dominates a failed run (a
    false property of eicu_wrong_table: 60-67 s of the file's 78-80 s). So "on failure", for a proof expected to
    go through, runs without models and verifies only the functions that failed again with them; "always" asks
    for them at once (a failure is expected); "never" leaves them out (a mutant's verdict needs none). If the
    second run does not fail as the first did, the first reply stands, without models, and says so.

    Under "on failure", `explained()` is asked once the first run has failed: why no models are needed (a test
    already fails on a concrete input), or None to ask for them. A reply left without them says so in "models" and
    carries "unexplained": True (verify.proof_cache does not store it as the file's answer)."""
    first = verifier.verify_file(path, timeout=timeout, counterexample=models == "always", select=select)
    if models != "on failure" or first.get("status") != "failed":
        return first
    why = explained()
    if why:
        return first | {"models": f"not asked: {why}", "unexplained": True}
    failing = _failing_functions(first)
    again_select = select if "" in failing or not failing <= _top_level_functions(path) else tuple(sorted(failing))
    again = verifier.verify_file(path, timeout=timeout, counterexample=True, select=again_select)
    seconds = round(float(first.get("seconds", 0.0)) + float(again.get("seconds", 0.0)), 3)
    if again.get("status") == "failed" and _failing_functions(again) == failing:
        return again | {"seconds": seconds}
    return first | {"seconds": seconds, "models": f"not given: verified again with models, the failing functions "
                                                   f"answered {again.get('status')!r}"}


def _failing_functions(reply: dict[str, Any]) -> set[str]:
    """The functions a reply's errors are in ("" for an error outside any function)."""
    return {str(e.get("function") or "") for e in reply.get("errors", [])}


def _top_level_functions(path: str | Path) -> set[str]:
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return set()
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
