"""How often `mode = "cascade"` would call the model: the share of tasks on which the embedded classifier
abstains (the cascade asks the model exactly then). No model is involved, so this measures cost exposure,
not accuracy. Sets: Mind2Web-SC (the classifier was tuned on it), our held-out tasks and the evasions.

    .venv/bin/python scripts/llm_cascade_calls.py [--bank specs/mind2web_sc/categories.toml] [--json]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from veriguard.enforce.categories import CategoryClassifier  # noqa: E402
from veriguard.evaluation import MIND2WEB_FILE, benchmark_data, mind2web_records  # noqa: E402


def task_sets() -> dict[str, list[str]]:
    sets: dict[str, list[str]] = {}
    benchmark = benchmark_data() / MIND2WEB_FILE
    if benchmark.is_file():
        sets["mind2web-sc (tuned on)"] = [obs["confirmed_task"] for _r, obs in mind2web_records(benchmark)]
    for name in ("heldout_tasks", "heldout_v2", "evasions"):
        path = ROOT / "tests" / "data" / f"{name}.jsonl"
        if path.is_file():
            rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
            sets[name] = [str(r.get("task") or r.get("text")) for r in rows]
    return sets


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bank", default=str(ROOT / "specs" / "mind2web_sc" / "categories.toml"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    classifier = CategoryClassifier.from_bank(args.bank)
    rows = []
    for name, tasks in task_sets().items():
        calls = sum(1 for t in tasks if classifier.classify(t).abstained)
        rows.append({"set": name, "n": len(tasks), "model_calls": calls,
                     "share": round(100.0 * calls / len(tasks), 1) if tasks else 0.0})
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        print(f"{'set':<26} {'n':>5} {'cascade model calls':>20}")
        for r in rows:
            print(f"{r['set']:<26} {r['n']:>5} {r['model_calls']:>12} ({r['share']:.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
