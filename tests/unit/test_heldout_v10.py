"""The tenth held-out set of the Mind2Web-SC classifier (tests/data/heldout_v10.jsonl, hand-written in ten styles
none of the earlier sets used): well formed, the size, decoy share and coverage it states, sharing no run of six
words with the bank, the nine earlier held-out sets, the evasions or (where present) the benchmark, and no run of six
words shared between two of its own tasks. Nothing here runs the classifier; a failure names only v10 ids and the
shared run."""
import json

import pytest
from veriguard.enforce.categories import read_bank

from tests.unit.heldout_checks import assert_covers, assert_well_formed, lines, runs_shared_within, shared_runs
from tests.unit.test_categories import BANK, BENCHMARK, DATA, EVASIONS, HELDOUT

V10 = DATA / "heldout_v10.jsonl"
ROWS = lines(V10)
STYLES = {"group-chat", "support-macro", "json-payload", "legalese", "checkbox-todo", "meeting-minutes", "url-query",
          "emoji-rich", "diary-entry", "proofread-request"}
EARLIER = (HELDOUT, *(DATA / f"heldout_v{n}.jsonl" for n in range(2, 10)))


def _overlapping(texts: list[str]) -> list[tuple[str, str]]:
    """(v10 id, shared run) pairs; the caller asserts on the result alone, so a failure never shows the other texts."""
    return shared_runs(ROWS, texts)


def test_rows_are_well_formed():
    assert_well_formed(ROWS, "v10", STYLES, 450)
    assert all(isinstance(r["task"], str) and r["task"].strip() for r in ROWS)


def test_covers_decoys_every_category_and_every_style():
    assert_covers(ROWS, STYLES, per_category=55, per_style=45)


def test_has_enough_multi_category_tasks_and_decoys_under_another_category():
    assert sum(len(r["categories"]) == 2 for r in ROWS) >= 35
    assert sum(len(r["categories"]) == 3 for r in ROWS) >= 10
    assert sum(r["decoy"] and bool(r["categories"]) for r in ROWS) >= 60


def test_has_tasks_in_no_category_that_are_no_decoys():
    assert sum(not r["categories"] and not r["decoy"] for r in ROWS) >= 15


def test_lengths_run_from_a_few_words_to_over_a_hundred():
    words = [len(r["task"].split()) for r in ROWS]
    assert min(words) <= 4 and sum(n > 100 for n in words) >= 3


def test_disjoint_from_the_bank():
    shared = _overlapping(list(read_bank(BANK).texts))
    assert not shared


def test_disjoint_from_the_nine_earlier_heldout_sets_and_the_evasions():
    shared = {path.name: _overlapping([r["task"] for r in lines(path)]) for path in EARLIER}
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
