"""Verifier benchmark: cold `nagini` CLI per policy vs the warm worker, synth time per shipped spec,
and the worker's peak memory. Medians over --runs repetitions, measured in one run.

    .venv/bin/python scripts/bench_verifier.py [--runs 3] [--json]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from veriguard.synth.compile import compile_policy  # noqa: E402
from veriguard.synth.pipeline import synthesize  # noqa: E402
from veriguard.synth.specfile import load_spec  # noqa: E402
from veriguard.verify.nagini import NaginiWorker  # noqa: E402

SILICON_ARGS = "--moreJoins=2"  # the worker's setting, so both sides verify the same problem

# Small one-function policies (the size of the notes' lab benchmark), written for this benchmark.
SMALL = [
    ("role == \"admin\" and age >= 18", "role == \"admin\" and age >= 18"),
    ("(role == \"admin\" or role == \"analyst\") and not banned", "(role == \"admin\" or role == \"analyst\") and not banned"),
    ("age >= 18 and age <= 120", "not (age < 18) and not (age > 120)"),
    ("Implies(banned, False) and age >= 13", "(not banned) and age >= 13"),
    ("role != \"guest\" or age >= 21", "role != \"guest\" or age >= 21"),
    ("mfa or role == \"viewer\"", "role == \"viewer\" or mfa"),
    ("age + 2 >= 20 and not banned", "age >= 18 and not banned"),
    ("(role == \"hr\" and mfa) or (role == \"admin\" and mfa and age >= 25)", "mfa and (role == \"hr\" or (role == \"admin\" and age >= 25))"),
    ("Implies(role == \"admin\", mfa) and Implies(role == \"guest\", age >= 18)", "(role != \"admin\" or mfa) and (role != \"guest\" or age >= 18)"),
    ("age >= 16 and (role == \"driver\" or role == \"owner\")", "(role == \"driver\" or role == \"owner\") and age >= 16"),
]


def small_policy(spec_expr: str, code_expr: str) -> str:
    return ("from nagini_contracts.contracts import *\n\n\n"
            "def allow(role: str, age: int, banned: bool, mfa: bool) -> bool:\n"
            f"    Ensures(Result() == ({spec_expr}))\n"
            f"    return {code_expr}\n")


def cold_cli(path: Path) -> float:
    exe = Path(sys.executable).parent / "nagini"
    t0 = time.monotonic()
    out = subprocess.run([str(exe), f"--viper-arg={SILICON_ARGS}", str(path)], capture_output=True, text=True)
    seconds = time.monotonic() - t0
    if "Verification successful" not in out.stdout:
        raise SystemExit(f"cold nagini did not verify {path}: {out.stdout[-500:]} {out.stderr[-500:]}")
    return seconds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    specs = [load_spec(p) for p in sorted((ROOT / "specs").glob("*.toml"))]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for spec in specs:
            files[spec.name] = Path(tmp) / f"policy_{spec.name}.py"
            files[spec.name].write_text(compile_policy(spec).source)
        worker = NaginiWorker()
        t0 = time.monotonic()
        worker.start()
        start_s = time.monotonic() - t0
        small_warm, small_cold = [], []
        for i, (spec_expr, code_expr) in enumerate(SMALL):
            path = Path(tmp) / f"small_{i:02d}.py"
            path.write_text(small_policy(spec_expr, code_expr))
            worker.verify_file(path, timeout=120)  # first call of a file warms its caches
            for _ in range(args.runs):
                raw = worker.verify_file(path, timeout=120)
                assert raw["status"] == "proved", raw
                small_warm.append(raw["seconds"])
            small_cold.append(cold_cli(path))
            print(f"small {i}: warm {statistics.median(small_warm[-args.runs:]):.2f} s, cold {small_cold[-1]:.2f} s",
                  file=sys.stderr)
        for spec in specs:
            warm, cold = [], []
            for _ in range(args.runs):
                raw = worker.verify_file(files[spec.name], timeout=300)
                assert raw["status"] == "proved", raw
                warm.append(raw["seconds"])
                print(f"{spec.name}: warm {warm[-1]:.2f} s", file=sys.stderr)
            for _ in range(args.runs):
                cold.append(cold_cli(files[spec.name]))
                print(f"{spec.name}: cold CLI {cold[-1]:.2f} s", file=sys.stderr)
            rows.append({"policy": spec.name, "cold_cli_median_s": round(statistics.median(cold), 2),
                         "warm_worker_median_s": round(statistics.median(warm), 2),
                         "speedup": round(statistics.median(cold) / statistics.median(warm), 1)})
        synth_rows = []
        for spec in specs:
            with tempfile.TemporaryDirectory() as wd:
                t0 = time.monotonic()
                result = synthesize(spec, worker, compile_policy(spec).source, workdir=Path(wd))
                seconds = time.monotonic() - t0
            synth_rows.append({"policy": spec.name, "synth_warm_s": round(seconds, 1), "ok": result.ok})
            print(f"{spec.name}: synth (warm worker) {seconds:.1f} s", file=sys.stderr)
        worker.close()
        peak_mb = worker.stats.peak_rss_kb / 1024
        # one spec end to end from a cold start: a fresh worker pays the JVM start inside the synth
        cold_synth = []
        for spec in specs:
            fresh = NaginiWorker()
            with tempfile.TemporaryDirectory() as wd:
                t0 = time.monotonic()
                synthesize(spec, fresh, compile_policy(spec).source, workdir=Path(wd))
                cold_synth.append({"policy": spec.name, "synth_cold_s": round(time.monotonic() - t0, 1)})
            fresh.close()
            print(f"{spec.name}: synth (fresh worker) {cold_synth[-1]['synth_cold_s']} s", file=sys.stderr)
    small = {"files": len(SMALL), "cold_cli_median_s": round(statistics.median(small_cold), 2),
             "warm_worker_median_s": round(statistics.median(small_warm), 2),
             "speedup": round(statistics.median(small_cold) / statistics.median(small_warm), 1)}
    report = {"runs": args.runs, "worker_start_s": round(start_s, 2), "worker_peak_rss_mb": round(peak_mb), "small": small,
              "verify": rows, "synth": [{**a, **b} for a, b in zip(synth_rows, cold_synth)],
              "median_speedup": statistics.median(r["speedup"] for r in rows)}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"Nagini worker start (JVM + prelude): {report['worker_start_s']} s; peak RSS {report['worker_peak_rss_mb']} MB")
    print(f"\n| policy | cold `nagini` CLI (median of {args.runs}) | warm worker (median) | speed-up |")
    print("|---|---|---|---|")
    print(f"| {small['files']} small one-function policies | {small['cold_cli_median_s']} s | "
          f"{small['warm_worker_median_s']} s | {small['speedup']}x |")
    for r in rows:
        print(f"| {r['policy']} | {r['cold_cli_median_s']} s | {r['warm_worker_median_s']} s | {r['speedup']}x |")
    print("\n| policy | synth, warm worker | synth, fresh worker (JVM start included) | all gates passed |")
    print("|---|---|---|---|")
    for r in report["synth"]:
        print(f"| {r['policy']} | {r['synth_warm_s']} s | {r['synth_cold_s']} s | {r['ok']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
