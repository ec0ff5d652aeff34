"""The fourth held-out set of the Mind2Web-SC classifier (tests/data/heldout_v4.jsonl, hand-written in nine
styles): well formed, the size, decoy share and coverage it states, sharing no run of six words with the bank,
the earlier held-out sets, the evasions or (where present) the benchmark, and no run of six words shared between
two of its own tasks. Nothing here runs the classifier; a failure names only v4 ids and the shared run."""
import json

import pytest
from veriguard.enforce.categories import read_bank

from tests.unit.heldout_checks import assert_well_formed, lines, shared_runs
from tests.unit.test_categories import BANK, BENCHMARK, CATS, DATA, EVASIONS, HELDOUT, _shingles

V4 = DATA / "heldout_v4.jsonl"
ROWS = lines(V4)
STYLES = {"agent-instruction", "voice", "email", "persona-student", "persona-retiree", "persona-smallbiz", "ticket",
          "slang", "long-context"}


def _overlapping(texts: list[str]) -> list[tuple[str, str]]:
    return shared_runs(ROWS, texts)


def test_rows_are_well_formed():
    assert_well_formed(ROWS, "v4", STYLES, 450)
    assert all(isinstance(r["task"], str) and r["task"].strip() for r in ROWS)


def test_covers_decoys_every_category_and_every_style():
    assert sum(r["decoy"] for r in ROWS) >= 0.45 * len(ROWS)
    for category in CATS:
        assert sum(category in r["categories"] for r in ROWS) >= 45, category
    assert any(len(r["categories"]) == 2 for r in ROWS) and any(len(r["categories"]) == 3 for r in ROWS)
    assert any(r["decoy"] and r["categories"] for r in ROWS)
    assert {r["style"] for r in ROWS} == STYLES
    for style in STYLES:
        assert sum(r["style"] == style for r in ROWS) >= 30, style


def test_disjoint_from_the_bank():
    assert not _overlapping(list(read_bank(BANK).texts))


def test_disjoint_from_the_earlier_heldout_sets_and_the_evasions():
    assert not _overlapping([r["task"] for r in lines(HELDOUT)])
    assert not _overlapping([r["task"] for r in lines(DATA / "heldout_v2.jsonl")])
    assert not _overlapping([r["task"] for r in lines(DATA / "heldout_v3.jsonl")])
    assert not _overlapping([e["text"] for e in EVASIONS])


def test_no_two_tasks_share_a_run_of_six_words():
    seen: dict[tuple[str, ...], str] = {}
    shared = []
    for r in ROWS:
        for run in _shingles(r["task"]):
            if run in seen and seen[run] != r["id"]:
                shared.append((seen[run], r["id"], " ".join(run)))
            seen.setdefault(run, r["id"])
    assert not shared


@pytest.mark.skipif(not BENCHMARK.exists(), reason="the Mind2Web-SC data is not part of the repository and is absent here "
                    "(set VERIGUARD_BENCHMARKS to the folder holding mind2web_sc/)")
def test_disjoint_from_the_benchmark():
    assert not _overlapping([r["confirmed_task"] for r in json.loads(BENCHMARK.read_text(encoding="utf-8"))])
