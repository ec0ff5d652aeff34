"""Leave-one-set-out figures for the Mind2Web-SC task classifier: for each development set (v1 to v5, which the
bank's [training] section holds), the classifier is trained as synth trains it (enforce.categories.trained_on,
frozen with to_frozen and thawed as the monitor thaws it) on the bank without that set's tasks, and measured on
them with the whole classify() (pieces, cues, asks, abstentions). The shipped settings and a candidate (the bank's
[settings] with --set overrides, e.g. attention=2, and --encoder, another encoder of enforce/embedder.py's ENCODERS)
run side by side on the same folds. Figures only: no task is
printed. Never pass a held-out set (v6, v7, v8): only the development sets are accepted.

    .venv/bin/python scripts/loso_classifier.py [--sets heldout_v2,heldout_v5] [--set attention=2 ...] [--encoder E]
        [--json]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from eval_classifier import score  # noqa: E402

from veriguard.enforce.categories import Bank, CategoryClassifier, read_bank, to_frozen, trained_on  # noqa: E402
from veriguard.enforce.embedder import ENCODERS, shared_embedder  # noqa: E402

DEVELOPMENT = ("heldout_tasks", "heldout_v2", "heldout_v3", "heldout_v4", "heldout_v5")
BANK = ROOT / "specs" / "mind2web_sc" / "categories.toml"


def read_set(name: str) -> list[tuple[str, set[str]]]:
    if name not in DEVELOPMENT:
        raise SystemExit(f"error: {name!r} is not a development set ({', '.join(DEVELOPMENT)}); held-out sets are "
                         "never measured here")
    path = ROOT / "tests" / "data" / f"{name}.jsonl"
    return [(r["task"], set(r["categories"])) for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())]


def without(bank: Bank, tasks: set[str], overrides: dict[str, Any]) -> Bank:
    """The bank without the [training] examples among `tasks`, its [settings] overridden."""
    keep = [i for i, t in enumerate(bank.texts) if not (t in tasks and t in bank.training)]
    return dataclasses.replace(bank, texts=tuple(bank.texts[i] for i in keep),
                               labels=tuple(bank.labels[i] for i in keep), training=bank.training - tasks,
                               settings={**bank.settings, **overrides})


def measure(bank: Bank, rows: list[tuple[str, set[str]]]) -> dict[str, Any]:
    embedder = shared_embedder(bank.encoder())
    start = time.perf_counter()
    model = trained_on(bank, embedder)
    trained = time.perf_counter() - start
    clf = CategoryClassifier.from_frozen(to_frozen(model, embedder.identity(), "0" * 64), embedder)
    out = score([(t, g, clf.classify(t)) for t, g in rows], bank.names)
    out.pop("misses")
    out["train_s"] = round(trained, 1)
    return out


def line(name: str, label: str, r: dict[str, Any]) -> str:
    per = " ".join(f"{n} {m['recall']:5.1f}" for n, m in r["per_category"].items())
    return (f"{name:14s} {label:9s} n={r['n']:3d} exact {r['exact']:5.1f} strict {r['strict_exact']:5.1f} "
            f"abstained {r['abstained']:3d} recall {r['recall']:5.1f} | {per} | train {r['train_s']} s")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bank", type=Path, default=BANK)
    ap.add_argument("--sets", default=",".join(DEVELOPMENT), help="development sets to leave out, comma-separated")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="the candidate's [settings] override (repeatable), e.g. attention=2")
    ap.add_argument("--encoder", choices=list(ENCODERS), help="the candidate's encoder (its [settings] encoder)")
    ap.add_argument("--candidate-only", action="store_true", help="skip the shipped settings (measured before)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    try:
        overrides: dict[str, Any] = {k: float(v) for k, v in (s.split("=", 1) for s in args.set)}
    except ValueError:
        print("error: --set takes KEY=NUMBER", file=sys.stderr)
        return 2
    if args.encoder:
        overrides["encoder"] = args.encoder
    if args.candidate_only and not overrides:
        print("error: --candidate-only needs --set or --encoder", file=sys.stderr)
        return 2
    bank = read_bank(args.bank)
    report: dict[str, Any] = {}
    for name in args.sets.split(","):
        rows = read_set(name)
        tasks = {t for t, _ in rows}
        report[name] = {} if args.candidate_only else {"shipped": measure(without(bank, tasks, {}), rows)}
        if overrides:
            report[name]["candidate"] = measure(without(bank, tasks, overrides), rows)
        if not args.json:
            for label, r in report[name].items():
                print(line(name, label, r), flush=True)
    if args.json:
        print(json.dumps({"candidate": overrides, "folds": report}, indent=2))
        return 0
    labels = ("shipped",) * (not args.candidate_only) + ("candidate",) * bool(overrides)
    for label in labels:
        folds = [f[label] for f in report.values()]
        print(f"{'mean':14s} {label:9s} exact {sum(f['exact'] for f in folds) / len(folds):5.1f} "
              f"recall {sum(f['recall'] for f in folds) / len(folds):5.1f} "
              f"abstained {sum(f['abstained'] for f in folds) / len(folds):5.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
