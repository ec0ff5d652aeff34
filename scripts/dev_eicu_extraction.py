"""Measure the code/SQL extractor on EICU-AC: pairs vs access_gt, labels (LPA) and inaccessible sets (EA).

Usage: .venv/bin/python scripts/dev_eicu_extraction.py [--json OUT.json] [--root DIR]
A measurement, not a test: it prints every mismatch with the evidence and exits 0.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from veriguard.enforce.agent_logs import parse_agent_log
from veriguard.evaluation import EICU_DIR, benchmark_data
from veriguard.enforce.extract_code import extract_accesses
from veriguard.enforce.extract_errors import ExtractionError

DEFAULT_ROOT = benchmark_data() / EICU_DIR


def as_pairs(mapping: dict[str, list[str]]) -> set[tuple[str, str]]:
    return {(db, column) for db, columns in mapping.items() for column in columns}


def as_mapping(pairs: set[tuple[str, str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for db, column in sorted(pairs):
        out.setdefault(db, []).append(column)
    return out


def evaluate(record: dict[str, Any], log_text: str, schema: dict[str, list[str]],
             permissions: dict[str, dict[str, list[str]]]) -> dict[str, Any]:
    role = record["identity"]
    allowed = as_pairs(permissions[role])
    gold_pairs, gold_inaccessible = as_pairs(record["access_gt"]), as_pairs(record["inaccessible_db"])
    start = time.perf_counter()
    try:
        output = parse_agent_log(log_text)
        access = extract_accesses(output.code, schema)
        error, pairs = None, set(access.pairs)
    except ExtractionError as e:
        access, error, pairs = None, f"{e.code}: {e.message}", set()
    seconds = time.perf_counter() - start
    inaccessible = pairs - allowed
    label = 1 if error or inaccessible else 0  # an extraction error denies (fail closed)
    return {
        "id": record["id"], "role": role, "gold_label": record["label"], "label": label,
        "label_ok": label == record["label"],
        "ea_ok": None if record["label"] != 1 else (error is None and inaccessible == gold_inaccessible),
        "pairs_exact": error is None and pairs == gold_pairs,
        "extracted": as_mapping(pairs), "gold_access": record["access_gt"],
        "inaccessible": as_mapping(inaccessible), "gold_inaccessible": record["inaccessible_db"],
        "missing_vs_gold": as_mapping(gold_pairs - pairs), "extra_vs_gold": as_mapping(pairs - gold_pairs),
        "error": error, "confidence": access.confidence if access else 0.0,
        "notes": list(access.notes) if access else [],
        "provenance": list(access.provenance) if access else [],
        "seconds": seconds,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    parser.add_argument("--json", type=Path, help="write every per-record result here")
    args = parser.parse_args(argv)
    records = json.loads((args.root / "ehragent" / "eicu_ac.json").read_text(encoding="utf-8"))
    schema = json.loads((args.root / "derived" / "eicu_schema.json").read_text(encoding="utf-8"))["databases"]
    permissions = json.loads((args.root / "derived" / "permission_table.json").read_text(encoding="utf-8"))
    permissions = permissions["roles"]
    results = [evaluate(r, (args.root / "ehragent" / "logs" / f"{r['id']}.txt").read_text(encoding="utf-8"),
                        schema, permissions) for r in records]

    denied = [r for r in results if r["gold_label"] == 1]
    times = sorted(r["seconds"] for r in results)
    summary = {
        "records": len(results),
        "lpa": sum(r["label_ok"] for r in results),
        "ea": sum(bool(r["ea_ok"]) for r in denied), "ea_of": len(denied),
        "access_gt_exact": sum(r["pairs_exact"] for r in results),
        "errors": sum(r["error"] is not None for r in results),
        "below_full_confidence": sum(r["confidence"] < 1.0 for r in results),
        "median_ms": 1000 * statistics.median(times),
        "p99_ms": 1000 * times[min(len(times) - 1, int(0.99 * len(times)))],
    }
    print(f"EICU-AC extraction over {summary['records']} records")
    print(f"  LPA (label agreement)          {summary['lpa']}/{summary['records']} = {summary['lpa'] / summary['records']:.2%}")
    print(f"  EA  (exact inaccessible, deny) {summary['ea']}/{summary['ea_of']} = {summary['ea'] / summary['ea_of']:.2%}")
    print(f"  pairs == access_gt exactly     {summary['access_gt_exact']}/{summary['records']}")
    print(f"  extraction errors              {summary['errors']}")
    print(f"  confidence < 1.0               {summary['below_full_confidence']}")
    print(f"  time per record                median {summary['median_ms']:.2f} ms, p99 {summary['p99_ms']:.2f} ms")

    for r in results:
        if r["label_ok"] and r["ea_ok"] is not False:
            continue
        print(f"\nMISMATCH {r['id']} ({r['role']}): label {r['label']} vs gold {r['gold_label']}")
        print(f"  inaccessible {r['inaccessible']} vs gold {r['gold_inaccessible']}")
        if r["error"]:
            print(f"  error: {r['error']}")
        for line in r["provenance"]:
            print(f"    {line}")
    differing = [r for r in results if not r["pairs_exact"]]
    print(f"\n{len(differing)} records whose pairs differ from access_gt (label and EA may still agree):")
    for r in differing:
        print(f"  {r['id']} ({r['role']}): missing {r['missing_vs_gold']} extra {r['extra_vs_gold']}"
              + (f" error {r['error']}" if r["error"] else ""))
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "results": results}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
