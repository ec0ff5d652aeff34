"""Shell-guard benchmark, each figure beside a baseline measured in the same run:

1. the shell extractor (enforce/shell.py: parse, walk, zones; the analysis cache bypassed) per
   command, on one CPU core, beside `shlex.split` of the same command;
2. the Claude Code hook round trip: a new process per tool call, from spawn to exit, with the hook
   JSON on stdin (the console script `veriguard hook claude-code --build B`, whose entry,
   veriguard.entry, goes to the hook without importing the CLI), beside a bare `python -c pass` of
   the same interpreter, runs interleaved; the ratio of the medians, in wall-clock time and in CPU
   time (user + system, the forked decision process included: steadier on a busy machine);
3. where the hook's time goes: the stages of one decision in a fresh interpreter, in the order the
   hook meets them, and `python -X importtime`'s largest imports.

Bytecode is compiled first (`compileall`, as `pip install` does), so no run pays for compiling source.
The builds are made here without Nagini (fake certificates) unless --build names real ones: the
decision does not depend on how the certificate was made.

    .venv/bin/python scripts/bench_shell.py [--runs 40] [--repeat 20] [--build DIR] [--json]
"""
from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGET_EXTRACTOR_MS = 2.0
TARGET_HOOK_MS = 150.0


def median_ms(times: list[float]) -> float:
    return round(statistics.median(times) * 1000, 3)


def p90_ms(times: list[float]) -> float:
    s = sorted(times)
    return round(s[int(0.9 * (len(s) - 1))] * 1000, 3)


def typical_commands() -> list[tuple[str, str, str]]:
    """(command, cwd, home): the benign commands of tests/data/shell_commands.jsonl, the everyday ones."""
    rows = [json.loads(line) for line in (ROOT / "tests" / "data" / "shell_commands.jsonl").read_text().splitlines()
            if line.strip()]
    return [(r["command"], r["cwd"], r["home"]) for r in rows if r["label"] == 0]


def bench_extractor(repeat: int) -> dict[str, Any]:
    from veriguard.enforce.shell import _analyse, analyse  # noqa: F401  (analyse: the public entry)
    from veriguard.enforce.shell_table import load_commands, load_zones, normalise

    table = load_commands(ROOT / "specs" / "shell_agent" / "commands.toml")
    zones = load_zones(ROOT / "specs" / "shell_agent" / "zones.toml")
    commands = typical_commands()
    uncached = _analyse.__wrapped__

    def analysis(c: tuple[str, str, str]) -> Any:
        command, cwd, home = c
        return uncached(command, normalise(cwd), normalise(home), normalise(cwd), "/tmp", table, zones, ())

    for c in commands:  # warm: the parser, the zone cache, the regexes
        analysis(c)
    per_command: dict[str, list[float]] = {c[0]: [] for c in commands}
    base: dict[str, list[float]] = {c[0]: [] for c in commands}
    clock = time.perf_counter
    for _ in range(repeat):
        for c in commands:
            t0 = clock()
            analysis(c)
            t1 = clock()
            shlex.split(c[0])
            t2 = clock()
            per_command[c[0]].append(t1 - t0)
            base[c[0]].append(t2 - t1)
    medians = [statistics.median(v) for v in per_command.values()]
    base_medians = [statistics.median(v) for v in base.values()]
    slowest = sorted(((statistics.median(v), k) for k, v in per_command.items()), reverse=True)[:3]
    return {"commands": len(commands), "repeat": repeat, "median_ms": median_ms(medians), "p90_ms": p90_ms(medians),
            "baseline_shlex_median_ms": median_ms(base_medians),
            "slowest": [{"command": k[:80], "median_ms": round(t * 1000, 3)} for t, k in slowest],
            "target_ms": TARGET_EXTRACTOR_MS}


ENTRY = "import sys; from veriguard.entry import main; sys.exit(main())"  # what the console script runs


def hook_command(build: Path) -> tuple[list[str], str]:
    """The console script when it dispatches `hook` (veriguard.entry), else `python -m veriguard.hook`."""
    script = Path(sys.executable).parent / "veriguard"
    probe = subprocess.run([str(script), "hook", "claude-code", "--build", str(build)], input=b"{}",
                           capture_output=True) if script.exists() else None
    if probe is not None and probe.returncode == 2 and b"veriguard hook" in probe.stderr:
        return [str(script), "hook", "claude-code", "--build", str(build)], "veriguard hook claude-code, the console script"
    return [sys.executable, "-m", "veriguard.hook", "claude-code", "--build", str(build)], \
        "python -m veriguard.hook claude-code (the CLI does not dispatch `hook` yet)"


def hook_input(command: str, cwd: str) -> bytes:
    return json.dumps({"session_id": "bench", "transcript_path": "/tmp/t.jsonl", "cwd": cwd,
                       "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                       "tool_input": {"command": command, "description": "bench"}, "tool_use_id": "toolu_b"}).encode()


def spawn(argv: list[str], data: bytes, env: dict[str, str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds: user + system of the process and the children it waited for, exit code)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(argv, input=data, capture_output=True, env=env)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime, p.returncode


def bench_hook(build: Path, runs: int, log: Path | None) -> dict[str, Any]:
    argv, how = hook_command(build)
    if log is not None:
        argv = argv + ["--log", str(log)]
    env = {**os.environ, "HOME": "/home/dev", "CLAUDE_PROJECT_DIR": "/home/dev/project"}  # as Claude Code sets it
    calls = [("git status && pytest -q tests/", 0), ("cat ~/.ssh/id_rsa", 2), ("grep -rn TODO src | head -20", 0)]
    bare = [sys.executable, "-c", "pass"]
    for command, want in calls:  # warm the page cache; check the answers
        code = spawn(argv, hook_input(command, "/home/dev/project"), env)[2]
        if code != want:
            raise SystemExit(f"bench: the hook answered {code} for {command!r}, expected {want}")
    hook_t: list[tuple[float, float, int]] = []
    bare_t: list[tuple[float, float, int]] = []
    for i in range(runs):
        command, _ = calls[i % len(calls)]
        bare_t.append(spawn(bare, b"", env))
        hook_t.append(spawn(argv, hook_input(command, "/home/dev/project"), env))
    h, b = median_ms([t[0] for t in hook_t]), median_ms([t[0] for t in bare_t])
    hc, bc = median_ms([t[1] for t in hook_t]), median_ms([t[1] for t in bare_t])
    return {"how": how, "runs": runs, "logged": log is not None, "median_ms": h, "p90_ms": p90_ms([t[0] for t in hook_t]),
            "baseline_python_c_pass_median_ms": b, "ratio": round(h / b, 2), "target_ms": TARGET_HOOK_MS,
            "cpu_median_ms": hc, "baseline_cpu_median_ms": bc, "cpu_ratio": round(hc / bc, 2),
            "load_average": os.getloadavg()[0]}


def stages(build: Path) -> dict[str, float]:
    """One decision in a fresh interpreter, stage by stage (CPU ms of the process: steadier than the clock on a busy
    machine)."""
    code = f"""
import gc, time
gc.disable()  # as veriguard.hook.run does
t = [time.process_time()]
from veriguard import hook
t.append(time.process_time())
import dataclasses, json
t.append(time.process_time())
from veriguard.enforce.monitor import Monitor
t.append(time.process_time())
import veriguard.enforce.shell, tree_sitter, tree_sitter_bash
t.append(time.process_time())
m = Monitor.from_build({str(build)!r})
t.append(time.process_time())
r = m.check({{"command": "git status && pytest -q tests/", "cwd": "/home/dev/project", "home": "/home/dev",
             "approved": False}})
t.append(time.process_time())
names = ["import veriguard.hook (and the veriguard package)", "import dataclasses (and inspect) and json",
         "import the monitor (loader, extractors)", "import the shell extractor and tree-sitter",
         "Monitor.from_build (certificate, policy, tables)", "the first decision (parse, walk, zones, policy)"]
print(json.dumps({{n: round((b - a) * 1000, 2) for n, a, b in zip(names, t, t[1:])}}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def importtime(build: Path, top: int = 12) -> list[dict[str, Any]]:
    argv, _ = hook_command(build)
    argv = [sys.executable, "-X", "importtime", *(argv[1:] if argv[0] == sys.executable else ["-c", ENTRY, *argv[1:]])]
    p = subprocess.run(argv, input=hook_input("ls", "/home/dev/project"), capture_output=True,
                       env={**os.environ, "HOME": "/home/dev", "CLAUDE_PROJECT_DIR": "/home/dev/project"})
    rows = []
    for line in p.stderr.decode("utf-8", "replace").splitlines():
        if line.startswith("import time:") and "|" in line and "self" not in line:
            _, cumulative, name = line.split("|")
            rows.append({"module": name.strip(), "cumulative_ms": round(int(cumulative) / 1000, 2),
                         "depth": (len(name) - len(name.lstrip())) // 2})
    return sorted((r for r in rows if r["depth"] <= 2), key=lambda r: -r["cumulative_ms"])[:top]


def make_builds(out: Path) -> Path:
    from tests.unit.test_compile_and_freeze import fake_result
    from veriguard.synth.freeze import write_build
    from veriguard.synth.specfile import load_spec

    return write_build(fake_result(load_spec(ROOT / "specs" / "shell_agent.toml")), out, run_info={})[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=40, help="hook processes to time (default 40)")
    ap.add_argument("--repeat", type=int, default=20, help="times each command is analysed (default 20)")
    ap.add_argument("--build", type=Path, help="a shell_agent build to use (default: one made here without Nagini)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    for folder in ("veriguard", "enforce", "contracts"):
        compileall.compile_dir(str(ROOT / folder), quiet=1)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core, inherited by the processes
    with tempfile.TemporaryDirectory(prefix="bench-shell-") as tmp:
        build = args.build or make_builds(Path(tmp))
        result: dict[str, Any] = {"cpu": "one core" if hasattr(os, "sched_setaffinity") else "any",
                                  "python": sys.version.split()[0]}
        result["extractor"] = bench_extractor(args.repeat)
        result["hook"] = bench_hook(build, args.runs, None)
        result["hook_logged"] = bench_hook(build, max(10, args.runs // 2), Path(tmp) / "decisions.jsonl")
        result["stages_ms"] = stages(build)
        result["largest_imports"] = importtime(build)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    e, h, hl = result["extractor"], result["hook"], result["hook_logged"]
    print(f"shell extractor ({e['commands']} typical commands x {e['repeat']}, {result['cpu']}): median "
          f"{e['median_ms']} ms per command (p90 {e['p90_ms']} ms; target < {e['target_ms']} ms); "
          f"shlex.split baseline {e['baseline_shlex_median_ms']} ms")
    print(f"hook round trip ({h['how']}, {h['runs']} runs): median {h['median_ms']} ms (p90 {h['p90_ms']} ms; "
          f"target <= {h['target_ms']} ms); python -c pass {h['baseline_python_c_pass_median_ms']} ms; "
          f"ratio {h['ratio']}")
    print(f"  CPU time (user + system, the hook's decision process included): median {h['cpu_median_ms']} ms; "
          f"python -c pass {h['baseline_cpu_median_ms']} ms; ratio {h['cpu_ratio']} (1-minute load average "
          f"{h['load_average']:.2f}: on a busy machine the wall-clock figures grow, the CPU figures less)")
    print(f"  with --log: median {hl['median_ms']} ms, CPU {hl['cpu_median_ms']} ms ({hl['runs']} runs)")
    print("where one decision's time goes (fresh interpreter, CPU ms):")
    for k, v in result["stages_ms"].items():
        print(f"  {v:8.2f}  {k}")
    print("largest imports of the hook process (python -X importtime, cumulative ms, inflated by the tracing):")
    for r in result["largest_imports"]:
        print(f"  {r['cumulative_ms']:8.2f}  {'  ' * r['depth']}{r['module']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
