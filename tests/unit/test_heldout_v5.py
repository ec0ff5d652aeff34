"""The fifth held-out set of the Mind2Web-SC classifier (tests/data/heldout_v5.jsonl, hand-written in ten
styles): well formed, the size, decoy share and coverage it states, sharing no run of six words with the bank,
the earlier held-out sets, the evasions or (where present) the benchmark, and no run of six words shared between
two of its own tasks. Nothing here runs the classifier; a failure names only v5 ids and the shared run."""
import json

import pytest
from veriguard.enforce.categories import read_bank

from tests.unit.heldout_checks import assert_covers, assert_well_formed, lines, runs_shared_within, shared_runs
from tests.unit.test_categories import BANK, BENCHMARK, DATA, EVASIONS, HELDOUT

V5 = DATA / "heldout_v5.jsonl"
ROWS = lines(V5)
STYLES = {"follow-up", "conditional", "executive-assistant", "bullet-list", "parent", "accessibility", "australian-english",
          "compare-then-act", "negated", "hypothetical"}


def _overlapping(texts: list[str]) -> list[tuple[str, str]]:
    """(v5 id, shared run) pairs; the caller asserts on the result alone, so a failure never shows the other texts."""
    return shared_runs(ROWS, texts)


def test_rows_are_well_formed():
    assert_well_formed(ROWS, "v5", STYLES, 450)
    assert all(isinstance(r["task"], str) and r["task"].strip() for r in ROWS)


def test_covers_decoys_every_category_and_every_style():
    assert_covers(ROWS, STYLES)


def test_disjoint_from_the_bank():
    shared = _overlapping(list(read_bank(BANK).written()))
    assert not shared


def test_disjoint_from_the_four_earlier_heldout_sets_and_the_evasions():
    sets = (HELDOUT, DATA / "heldout_v2.jsonl", DATA / "heldout_v3.jsonl", DATA / "heldout_v4.jsonl")
    shared = {path.name: _overlapping([r["task"] for r in lines(path)]) for path in sets}
    shared["evasions.jsonl"] = _overlapping([e["text"] for e in EVASIONS])
    shared = {name: runs for name, runs in shared.items() if runs}
    assert not shared


def test_no_two_tasks_share_a_run_of_six_words():
    assert not runs_shared_within(ROWS)


@pytest.mark.skipif(not BENCHMARK.exists(), reason="the Mind2Web-SC data is not part of the repository and is absent here "
                    "(set VERIGUARD_BENCHMARKS to the folder holding mind2web_sc/)")
def test_disjoint_from_the_benchmark():
    shared = _overlapping([r["confirmed_task"] for r in json.loads(BENCHMARK.read_text(encoding="utf-8"))])
    assert not shared
