"""The third held-out set of the Mind2Web-SC classifier (tests/data/heldout_v3.jsonl, hand-written): well formed,
the size and decoy share it states, and sharing no run of six words with the bank, the earlier held-out sets, the
evasions or (where present) the benchmark. Nothing here runs the classifier; a failure names only v3 ids."""
import json

import pytest
from veriguard.enforce.categories import read_bank

from tests.unit.heldout_checks import assert_well_formed, lines, shared_runs
from tests.unit.test_categories import BANK, BENCHMARK, CATS, DATA, EVASIONS, HELDOUT

V3 = DATA / "heldout_v3.jsonl"
ROWS = lines(V3)
STYLES = {"terse", "chatty", "polite", "question", "lowercase-typos", "british", "multi-step", "formal", "non-native"}


def _overlapping(texts: list[str]) -> list[tuple[str, str]]:
    return shared_runs(ROWS, texts)


def test_rows_are_well_formed():
    assert_well_formed(ROWS, "v3", STYLES, 420)


def test_covers_decoys_and_every_category():
    assert sum(r["decoy"] for r in ROWS) >= 0.45 * len(ROWS)
    for category in CATS:
        assert sum(category in r["categories"] for r in ROWS) >= 40, category
    assert {r["style"] for r in ROWS} == STYLES


def test_disjoint_from_the_bank():
    assert not _overlapping(list(read_bank(BANK).written()))


def test_disjoint_from_the_earlier_heldout_sets_and_the_evasions():
    assert not _overlapping([r["task"] for r in lines(HELDOUT)])
    assert not _overlapping([r["task"] for r in lines(DATA / "heldout_v2.jsonl")])
    assert not _overlapping([e["text"] for e in EVASIONS])


@pytest.mark.skipif(not BENCHMARK.exists(), reason="the Mind2Web-SC data is not part of the repository and is absent here "
                    "(set VERIGUARD_BENCHMARKS to the folder holding mind2web_sc/)")
def test_disjoint_from_the_benchmark():
    assert not _overlapping([r["confirmed_task"] for r in json.loads(BENCHMARK.read_text(encoding="utf-8"))])
