"""Online-side benchmark, on one CPU core: the policy call alone, each extractor, the monitor end to
end per benchmark case, monitor cold start and memory, each beside a verifier-free baseline measured
in the same run (a hand-written Python function with the same rules, no contract, no checks).

Needs the frozen EICU-AC and Mind2Web-SC policies (`./scripts/demo`, or `veriguard synth
specs/eicu_ac.toml specs/mind2web_sc.toml --out build`) and the benchmark data.

    .venv/bin/python scripts/bench_enforce.py [--build build] [--repeat 5] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from veriguard.evaluation import EICU_DIR, MIND2WEB_FILE, benchmark_data, eicu_records, mind2web_records  # noqa: E402
from veriguard.enforce.monitor import Monitor  # noqa: E402



def timings_us(fn: Callable[[Any], Any], inputs: list[Any], repeat: int) -> list[float]:
    """Per-call wall times in microseconds, every input `repeat` times."""
    out = []
    clock = time.perf_counter_ns
    for _ in range(repeat):
        for x in inputs:
            t0 = clock()
            fn(x)
            out.append((clock() - t0) / 1000.0)
    return out


def summary(times: list[float]) -> dict[str, float]:
    s = sorted(times)
    median = statistics.median(s)
    return {"n": len(s), "median_us": round(median, 2), "p99_us": round(s[int(0.99 * (len(s) - 1))], 2),
            "per_second": round(1e6 / statistics.mean(s))}


# --- verifier-free baselines: the same rules as plain Python, written for this benchmark ---
def m2w_baseline(user: dict[str, Any], task: dict[str, bool]) -> tuple[bool, list[str]]:
    v = []
    if task["car"] and not user["dr_license"]:
        v.append("car")
    if task["media"] and not user["domestic"]:
        v.append("media")
    if task["hotel"] and user["age"] < 18:
        v.append("hotel")
    if task["job"] and user["age"] < 15:
        v.append("job")
    if task["shop"] and not user["membership"]:
        v.append("shop")
    if task["flight"] and not user["vaccine"]:
        v.append("flight")
    return not v, v


def eicu_baseline(table: dict[str, dict[str, set[str]]]) -> Callable[[dict[str, Any]], tuple[bool, list[Any]]]:
    def decide(args: dict[str, Any]) -> tuple[bool, list[Any]]:
        allowed = table.get(args["role"], {})
        denied = [(db, col) for db, col in args["accessed"] if col not in allowed.get(db, ())]
        return not denied, denied
    return decide


def eicu_table(spec_dir: Path) -> dict[str, dict[str, set[str]]]:
    raw = json.loads((spec_dir / "eicu_ac" / "permission_table.json").read_text(encoding="utf-8"))["roles"]
    return {role: {db: set(cols) for db, cols in dbs.items()} for role, dbs in raw.items()}


def extracted_args(monitor: Monitor, observations: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{n: e.extract(o).value for n, e in monitor.extractors.items()} for o in observations]


def bench_spec(monitor: Monitor, observations: list[dict[str, Any]], baseline: Callable[[dict[str, Any]], Any],
               repeat: int) -> dict[str, Any]:
    args = extracted_args(monitor, observations)
    policy = monitor.policy
    out: dict[str, Any] = {"cases": len(observations), "policy_call": {
        "baseline (plain Python, same rules)": summary(timings_us(baseline, args, repeat * 20)),
        "policy.evaluate (frozen proved policy)": summary(timings_us(policy.evaluate, args, repeat * 20)),
        "policy.evaluate_checked (+ runtime contract check)": summary(timings_us(policy.evaluate_checked, args, repeat * 20)),
    }, "extractors": {}}
    for arg, extractor in monitor.extractors.items():
        reps = repeat if extractor.kind == "classifier" else repeat * 4
        out["extractors"][f"{arg} ({extractor.kind})"] = summary(timings_us(extractor.extract, observations, reps))
    out["end_to_end"] = summary(timings_us(monitor.check, observations, repeat))
    return out


PEAK = """
def peak_rss_mb():  # VmHWM starts afresh at exec (ru_maxrss would carry the parent's peak over)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0
"""

COLD = PEAK + """
import json, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {root!r})
from veriguard.enforce.monitor import Monitor
m = Monitor.from_build({build!r})
t1 = time.perf_counter()
d = m.check(json.loads({obs!r}))
t2 = time.perf_counter()
print(json.dumps({{"load_s": t1 - t0, "first_decision_s": t2 - t0,
                  "peak_rss_mb": peak_rss_mb()}}))
"""

BASE_COLD = PEAK + """
import json, time
t0 = time.perf_counter()
exec({code!r})
print(json.dumps({{"load_s": time.perf_counter() - t0, "first_decision_s": time.perf_counter() - t0,
                  "peak_rss_mb": peak_rss_mb()}}))
"""


def cold_start(build: Path, observation: dict[str, Any], runs: int) -> dict[str, Any]:
    """Fresh interpreters: import, load and certify the policy, build the extractors, decide once."""
    def run(code: str) -> dict[str, float]:
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={**os.environ, "OMP_NUM_THREADS": "1"})
        got = json.loads(out.stdout.strip().splitlines()[-1])
        got["process_s"] = time.perf_counter() - t0
        return got
    monitor = [run(COLD.format(root=str(ROOT), build=str(build), obs=json.dumps(observation))) for _ in range(runs)]
    base = [run(BASE_COLD.format(code="def decide(u, t):\n    return not (t['car'] and not u['dr_license'])\n"
                                      "decide({'dr_license': True}, {'car': True})")) for _ in range(runs)]

    def med(rows: list[dict[str, float]]) -> dict[str, float]:
        return {k: round(statistics.median(r[k] for r in rows), 3) for k in rows[0]}
    return {"monitor": med(monitor), "baseline (bare interpreter + plain function)": med(base)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", type=Path, default=ROOT / "build")
    ap.add_argument("--eicu", type=Path, default=benchmark_data() / EICU_DIR)
    ap.add_argument("--mind2web", type=Path, default=benchmark_data() / MIND2WEB_FILE)
    ap.add_argument("--repeat", type=int, default=5, help="passes over each benchmark (default 5)")
    ap.add_argument("--cold-runs", type=int, default=3)
    ap.add_argument("--all-cores", action="store_true", help="do not pin the process to one core")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    for name in ("eicu_ac", "mind2web_sc"):
        if not (args.build / name / "certificate.json").exists():
            print(f"bench_enforce: {args.build / name} is not built; run ./scripts/demo (or veriguard synth "
                  f"specs/{name}.toml --out {args.build}) first", file=sys.stderr)
            return 2
    if not args.all_cores and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    say = (lambda m: None) if args.json else (lambda m: print(m, file=sys.stderr, flush=True))
    report: dict[str, Any] = {"cores": 1 if not args.all_cores else os.cpu_count(), "python": sys.version.split()[0]}

    say("bench: EICU-AC (code/SQL extractor)")
    eicu = Monitor.from_build(args.build / "eicu_ac")
    table = eicu_table(ROOT / "specs")
    report["eicu_ac"] = bench_spec(eicu, [o for _, o in eicu_records(args.eicu)], eicu_baseline(table),
                                   args.repeat)
    say("bench: Mind2Web-SC (embedded classifier)")
    m2w = Monitor.from_build(args.build / "mind2web_sc")
    m2w_obs = [o for _, o in mind2web_records(args.mind2web)]
    report["mind2web_sc"] = bench_spec(m2w, m2w_obs, lambda a: m2w_baseline(a["user"], a["task"]),
                                       args.repeat)
    say("bench: cold starts")
    report["cold_start"] = {"eicu_ac": cold_start(args.build / "eicu_ac", eicu_records(args.eicu)[0][1], args.cold_runs),
                            "mind2web_sc": cold_start(args.build / "mind2web_sc", m2w_obs[0], args.cold_runs)}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"one core: {report['cores'] == 1}; medians over every benchmark case, repeated")
    for spec in ("eicu_ac", "mind2web_sc"):
        r = report[spec]
        print(f"\n{spec} ({r['cases']} cases)")
        base = r["policy_call"]["baseline (plain Python, same rules)"]["median_us"]
        for section in ("policy_call", "extractors"):
            for label, s in r[section].items():
                ratio = f"  {s['median_us'] / base:6.1f}x baseline" if section == "policy_call" else ""
                print(f"  {section:<11} {label:<52} median {s['median_us']:>9.2f} us  p99 {s['p99_us']:>9.2f} us  "
                      f"{s['per_second']:>9}/s{ratio}")
        s = r["end_to_end"]
        print(f"  end_to_end  {'Monitor.check (extract, decide, double-check)':<52} median {s['median_us']:>9.2f} us  "
              f"p99 {s['p99_us']:>9.2f} us  {s['per_second']:>9}/s")
    for spec, c in report["cold_start"].items():
        for label, v in c.items():
            print(f"cold start {spec:<12} {label:<46} first decision {v['first_decision_s']:.3f} s  "
                  f"process {v['process_s']:.3f} s  peak RSS {v['peak_rss_mb']:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
