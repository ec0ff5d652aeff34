"""Verifier benchmark, side by side in one run (medians of --runs; the expensive columns of --full-runs):

  full       synth of every shipped spec with an empty proof cache (the work of `synth --no-cache`:
             within the run, mutants re-verify only the functions they change), warm worker
  no reuse   the same with no cache at all: every proof, mutants included, verifies the whole file
             (how synth worked before the proof cache); --baseline SPEC... limits it
  unchanged  the same again with the cache the full run filled, plus write_build (a never-started
             worker: the JVM must not start; z3, tests and the classifier come from the cache too);
             and once as a `veriguard synth` process (without --timeout)
  edited     shell_agent after editing one rule (in a temp copy of the spec), cache filled by the
             original, warm worker
plus the worker's start (JVM + prelude), where shell_agent's time goes (per gate), and ratios.
With --cli-vs-worker: the earlier comparison of a cold `nagini` CLI process with the warm worker.

    .venv/bin/python scripts/bench_verifier.py [--runs 3] [--full-runs 1] [--baseline [SPEC ...]] [--specs SPEC ...] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from veriguard.synth import classifier_build  # noqa: E402
from veriguard.synth.freeze import write_build  # noqa: E402
from veriguard.synth.pipeline import SynthResult, synthesize_spec  # noqa: E402
from veriguard.synth.specfile import SpecFile, load_spec  # noqa: E402
from veriguard.verify.nagini import NaginiWorker  # noqa: E402
from veriguard.verify.proof_cache import ProofCache, default_dir  # noqa: E402

SILICON_ARGS = "--moreJoins=2"  # the worker's setting, so both sides verify the same problem
EDIT = ('command.kind in {"destructive", "package_install", "unknown"} ==> command.approved',
        'command.kind in {"destructive", "package_install", "unknown", "vcs"} ==> command.approved')

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


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def median(xs: list[float]) -> float:
    return round(statistics.median(xs), 2)


def load(spec_path: Path, timeout: int | None) -> SpecFile:
    spec = load_spec(spec_path)
    return spec if timeout is None else replace(spec, settings=replace(spec.settings, nagini_timeout=timeout))


def timed_synth(spec_path: Path, worker: NaginiWorker, cache: ProofCache | None, timeout: int | None, *,
                freeze: bool = False) -> tuple[float, SynthResult]:
    """load_spec + compile + synthesize (+ write_build into a temp dir: all the CLI does after its imports)."""
    classifier_build._TRAINED.clear()  # each synth as in a new process: a classifier only from `cache`
    t0 = time.monotonic()
    spec = load(spec_path, timeout)
    with tempfile.TemporaryDirectory() as wd:
        result = synthesize_spec(spec, worker, workdir=Path(wd), cache=cache)
        if freeze:
            write_build(result, Path(wd) / "out", run_info={})
    return time.monotonic() - t0, result


def prime_encoders(primed: Path) -> None:
    """Put the encoder's runtime copy this process's synth used (enforce.embedder.runtime_copy, made once per cache
    folder, about 1 s) beside the primed proofs: one folder then holds what a user's second `veriguard synth` finds."""
    made = default_dir() / "encoders"
    if made.is_dir():
        shutil.copytree(made, primed / "encoders", dirs_exist_ok=True)


def cli_synth(spec_path: Path, cache_dir: Path, out: Path) -> tuple[float, dict[str, Any]]:
    """`veriguard synth` end to end in a fresh process; its JSON result and the build's run.json."""
    env = dict(os.environ, VERIGUARD_CACHE=str(cache_dir))
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "veriguard.cli", "synth", str(spec_path), "--out", str(out), "--quiet",
                           "--json"], capture_output=True, text=True, env=env, cwd=ROOT)
    seconds = time.monotonic() - t0
    doc = json.loads(proc.stdout)
    [res] = doc["results"]
    run = json.loads((Path(res["build"]) / "run.json").read_text())
    return seconds, {"ok": res["ok"], "cache": (res.get("proof") or {}).get("cache"), "synth_s": res["seconds"],
                     "jvm_starts": len(run.get("worker_start_seconds", []))}


def edited_copy(spec_path: Path, folder: Path) -> Path:
    """shell_agent with one rule edited, beside copies of its files."""
    shutil.copytree(spec_path.parent / spec_path.stem, folder / spec_path.stem)
    text = spec_path.read_text()
    assert text.count(EDIT[0]) == 1, "the edited rule is no longer in the spec: update EDIT"
    copy = folder / spec_path.name
    copy.write_text(text.replace(*EDIT))
    return copy


def gate_seconds(result: SynthResult) -> dict[str, float]:
    return {g.name: round(g.seconds, 2) for g in result.gates}


def bench_synth(args: argparse.Namespace) -> dict[str, Any]:
    paths = [p for p in sorted((ROOT / "specs").glob("*.toml")) if not args.specs or p.stem in args.specs]
    rows: list[dict[str, Any]] = []
    worker = NaginiWorker()
    t0 = time.monotonic()
    worker.start()
    start_s = time.monotonic() - t0
    log(f"worker start {start_s:.1f} s")
    with tempfile.TemporaryDirectory() as tmp:  # the worker's first proof is slower: keep it out of the figures
        warm = Path(tmp) / "warm_up.py"
        warm.write_text(small_policy(*SMALL[0]))
        worker.verify_file(warm, timeout=120)
    profile: dict[str, Any] = {}
    edited: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for path in paths:
            row: dict[str, Any] = {"spec": path.stem}
            full, primed = [], Path(tmp) / f"cache-{path.stem}"
            for k in range(args.full_runs):
                cache_dir = Path(tmp) / f"cache-{path.stem}-{k}"
                seconds, result = timed_synth(path, worker, ProofCache(cache_dir), args.timeout)
                full.append(seconds)
                if k == 0:
                    cache_dir.mkdir(exist_ok=True)  # empty when the proof gave no verdict worth storing
                    shutil.copytree(cache_dir, primed)
                    prime_encoders(primed)
                    row["ok"] = result.ok
                    row["proof"] = f"{result.proof.verdict.value} {result.proof.detail}" if result.proof else "none"
                    row["gates_full"] = gate_seconds(result)
                log(f"{path.stem}: full (empty cache) {seconds:.1f} s, ok={result.ok}, proof {row['proof']}")
            row["full_s"] = median(full)
            if args.baseline is None or path.stem in args.baseline:
                base = []
                for _ in range(args.full_runs):
                    seconds, result = timed_synth(path, worker, None, args.timeout)
                    base.append(seconds)
                    row["gates_no_reuse"] = gate_seconds(result)
                    log(f"{path.stem}: no reuse {seconds:.1f} s")
                row["no_reuse_s"] = median(base)
            again, hits = [], []
            for k in range(args.runs):
                fresh = NaginiWorker()  # never started unless the cache fails to answer
                seconds, result = timed_synth(path, fresh, ProofCache(primed), args.timeout, freeze=True)
                fresh.close()
                hit = fresh.stats.starts == 0 and bool(result.proof and (result.proof.cache or {}).get("hit"))
                row["unchanged_gates_cached"] = [g.name for g in result.gates if "(cached)" in g.summary]
                row["gates_unchanged"] = gate_seconds(result)
                again.append(seconds)
                hits.append(hit)
                log(f"{path.stem}: unchanged (cache on) {seconds:.2f} s, from the cache without a JVM: {hit}")
            row["unchanged_s"], row["unchanged_from_cache_without_jvm"] = median(again), all(hits)
            if args.timeout is None:  # the CLI proves with the spec's own timeout, so only then is its key the same
                seconds, info = cli_synth(path, primed, Path(tmp) / f"out-{path.stem}")
                row["unchanged_cli_s"] = round(seconds, 2)
                log(f"{path.stem}: unchanged, `veriguard synth` process {seconds:.2f} s: {info}")
            row["unchanged_over_full"] = round(row["unchanged_s"] / row["full_s"], 3)
            rows.append(row)
            if path.stem == "shell_agent":
                profile = row["gates_full"]
                times, selected = [], []
                for k in range(args.full_runs):
                    folder = Path(tmp) / f"edit-{k}"
                    folder.mkdir()
                    copy = edited_copy(path, folder)
                    cache_dir = Path(tmp) / f"cache-edit-{k}"
                    shutil.copytree(primed, cache_dir)
                    seconds, result = timed_synth(copy, worker, ProofCache(cache_dir), args.timeout)
                    times.append(seconds)
                    selected = (result.proof.cache or {}).get("proved_now", []) if result.proof else []
                    edited["gates"] = gate_seconds(result)
                    log(f"shell_agent edited: {seconds:.1f} s, re-proved {selected}")
                edited |= {"edit": EDIT, "edited_s": median(times), "full_s": row["full_s"],
                           "edited_over_full": round(median(times) / row["full_s"], 3), "reproved": selected}
    worker.close()
    return {"worker_start_s": round(start_s, 2), "worker_peak_rss_mb": round(worker.stats.peak_rss_kb / 1024),
            "runs": args.runs, "full_runs": args.full_runs, "timeout_override": args.timeout, "specs": rows,
            "shell_agent_edit": edited,
            "shell_agent_profile_full": profile}


def cold_cli(path: Path) -> float:
    exe = Path(sys.executable).parent / "nagini"
    t0 = time.monotonic()
    out = subprocess.run([str(exe), f"--viper-arg={SILICON_ARGS}", str(path)], capture_output=True, text=True)
    seconds = time.monotonic() - t0
    if "Verification successful" not in out.stdout:
        raise SystemExit(f"cold nagini did not verify {path}: {out.stdout[-500:]} {out.stderr[-500:]}")
    return seconds


def small_policy(spec_expr: str, code_expr: str) -> str:
    return ("from nagini_contracts.contracts import *\n\n\n"
            "def allow(role: str, age: int, banned: bool, mfa: bool) -> bool:\n"
            f"    Ensures(Result() == ({spec_expr}))\n"
            f"    return {code_expr}\n")


def bench_cli_vs_worker(args: argparse.Namespace) -> dict[str, Any]:
    warm, cold = [], []
    with tempfile.TemporaryDirectory() as tmp, NaginiWorker() as worker:
        for i, (spec_expr, code_expr) in enumerate(SMALL):
            path = Path(tmp) / f"small_{i:02d}.py"
            path.write_text(small_policy(spec_expr, code_expr))
            worker.verify_file(path, timeout=120)  # first call of a file warms its caches
            for _ in range(args.runs):
                raw = worker.verify_file(path, timeout=120)
                assert raw["status"] == "proved", raw
                warm.append(raw["seconds"])
            cold.append(cold_cli(path))
            log(f"small {i}: warm {median(warm[-args.runs:])} s, cold {cold[-1]:.2f} s")
    return {"files": len(SMALL), "cold_cli_median_s": median(cold), "warm_worker_median_s": median(warm),
            "speedup": round(statistics.median(cold) / statistics.median(warm), 1)}


def print_synth(r: dict[str, Any]) -> None:
    print(f"Nagini worker start (JVM + prelude): {r['worker_start_s']} s; peak RSS {r['worker_peak_rss_mb']} MB; "
          f"medians of {r['full_runs']} (full, no reuse, edited) and {r['runs']} (unchanged); Silicon timeout "
          f"{r['timeout_override'] or 'as each spec sets it'}")
    print("\n| spec | full, empty cache (warm worker) | + worker start | no reuse (warm worker) | "
          "unchanged, cache on | `veriguard synth` process | unchanged / full | no JVM, cache hit | proof (full run) |")
    print("|---|---|---|---|---|---|---|---|")
    for row in r["specs"]:
        print(f"| {row['spec']} | {row['full_s']} s | {round(row['full_s'] + r['worker_start_s'], 1)} s | "
              f"{row.get('no_reuse_s', '-')} s | {row['unchanged_s']} s | {row.get('unchanged_cli_s', '-')} s | "
              f"{row['unchanged_over_full']} | {row['unchanged_from_cache_without_jvm']} | {row['proof'][:40]} |")
    e = r["shell_agent_edit"]
    if e:
        print(f"\nshell_agent, one rule edited ({e['edit'][0]!r} -> {e['edit'][1]!r}): {e['edited_s']} s against "
              f"{e['full_s']} s full: ratio {e['edited_over_full']}; re-proved: {', '.join(e['reproved'])}")
        print(f"shell_agent full, per gate (s): {r['shell_agent_profile_full']}")
        print(f"shell_agent edited, per gate (s): {e['gates']}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3, help="repetitions of the cheap measurements (default 3)")
    ap.add_argument("--full-runs", type=int, default=1, help="repetitions of full and edited synths (default 1)")
    ap.add_argument("--baseline", nargs="*", default=None, metavar="SPEC",
                    help="the specs to time without any cache too (default: all; none: --baseline)")
    ap.add_argument("--timeout", type=int, default=None, help="Silicon timeout for every proof instead of the specs' "
                    "own (for a loaded machine; reported)")
    ap.add_argument("--specs", nargs="*", default=None, metavar="SPEC", help="only these shipped specs (default: all)")
    ap.add_argument("--cli-vs-worker", action="store_true", help="only compare a cold nagini CLI with the warm worker")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    report = bench_cli_vs_worker(args) if args.cli_vs_worker else bench_synth(args)
    if args.json:
        print(json.dumps(report, indent=2))
    elif args.cli_vs_worker:
        print(f"{report['files']} small one-function policies: cold `nagini` CLI {report['cold_cli_median_s']} s, "
              f"warm worker {report['warm_worker_median_s']} s, speed-up {report['speedup']}x")
    else:
        print_synth(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
