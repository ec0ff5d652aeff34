"""Writes the [training] section of the Mind2Web-SC example bank from the development sets: held-out sets we
measured the classifier on once, then read and tuned on (tests/data/README.md), whose tasks now also train it.
The section is the bank's last; the rest of the bank is kept byte for byte, and the file is replaced atomically.
tests/unit/test_categories.py checks that the bank holds exactly these sets.

    .venv/bin/python scripts/bank_training.py [--bank specs/mind2web_sc/categories.toml]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from veriguard.enforce.keys import write_atomic  # noqa: E402

BANK = ROOT / "specs" / "mind2web_sc" / "categories.toml"
SETS = tuple(ROOT / "tests" / "data" / name for name in ("heldout_tasks.jsonl", "heldout_v2.jsonl", "heldout_v3.jsonl",
                                                          "heldout_v4.jsonl", "heldout_v5.jsonl"))
HEADER = """[training]
# The development sets, as training examples (written by scripts/bank_training.py; do not edit by hand):
# tests/data/heldout_tasks.jsonl (v1), heldout_v2.jsonl to heldout_v5.jsonl, each written by us as a held-out
# set, measured, then read while tuning (tests/data/README.md). heldout_v6.jsonl to heldout_v11.jsonl stay out.
examples = [
"""


def training_rows(sets: tuple[Path, ...] = SETS) -> list[tuple[str, list[str]]]:
    rows = []
    for path in sets:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                r = json.loads(line)
                rows.append((r["task"], r["categories"]))
    return rows


def section(rows: list[tuple[str, list[str]]]) -> str:
    body = "".join(f"  {{task = {json.dumps(t, ensure_ascii=False)}, categories = {json.dumps(c)}}},\n"
                   for t, c in rows)
    return HEADER + body + "]\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bank", type=Path, default=BANK)
    args = ap.parse_args(argv)
    text = args.bank.read_text(encoding="utf-8")
    kept = text.split("\n[training]\n")[0].rstrip("\n") + "\n\n"
    rows = training_rows()
    write_atomic(args.bank, (kept + section(rows)).encode("utf-8"))
    print(f"{args.bank}: [training] holds {len(rows)} examples from {len(SETS)} sets", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
