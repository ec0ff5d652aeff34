"""The third held-out set of the Mind2Web-SC classifier (tests/data/heldout_v3.jsonl, hand-written): well formed,
the size and decoy share it states, and sharing no run of six words with the bank, the earlier held-out sets, the
evasions or (where present) the benchmark. Nothing here runs the classifier; a failure names only v3 ids."""
import json

import pytest
from veriguard.enforce.categories import read_bank

from tests.unit.test_categories import BANK, BENCHMARK, CATS, DATA, EVASIONS, HELDOUT, _shingles

V3 = DATA / "heldout_v3.jsonl"
ROWS = [json.loads(line) for line in V3.read_text(encoding="utf-8").splitlines() if line.strip()]
STYLES = {"terse", "chatty", "polite", "question", "lowercase-typos", "british", "multi-step", "formal", "non-native"}


def _lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _overlapping(texts: list[str]) -> list[str]:
    other = set().union(*(_shingles(t) for t in texts))
    return [r["id"] for r in ROWS if _shingles(r["task"]) & other]


def test_rows_are_well_formed():
    assert len(ROWS) >= 420
    assert [r["id"] for r in ROWS] == [f"v3-{i:03d}" for i in range(1, len(ROWS) + 1)]
    assert len({r["task"].lower() for r in ROWS}) == len(ROWS)
    for r in ROWS:
        assert set(r) == {"id", "task", "categories", "style", "decoy"}, r["id"]
        assert r["categories"] == sorted(set(r["categories"])) and set(r["categories"]) <= set(CATS), r["id"]
        assert r["style"] in STYLES and isinstance(r["decoy"], bool), r["id"]


def test_covers_decoys_and_every_category():
    assert sum(r["decoy"] for r in ROWS) >= 0.45 * len(ROWS)
    for category in CATS:
        assert sum(category in r["categories"] for r in ROWS) >= 40, category
    assert {r["style"] for r in ROWS} == STYLES


def test_disjoint_from_the_bank():
    assert not _overlapping(list(read_bank(BANK).written()))


def test_disjoint_from_the_earlier_heldout_sets_and_the_evasions():
    assert not _overlapping([r["task"] for r in _lines(HELDOUT)])
    assert not _overlapping([r["task"] for r in _lines(DATA / "heldout_v2.jsonl")])
    assert not _overlapping([e["text"] for e in EVASIONS])


@pytest.mark.skipif(not BENCHMARK.exists(), reason="the Mind2Web-SC data is not part of the repository and is absent here "
                    "(set VERIGUARD_BENCHMARKS to the folder holding mind2web_sc/)")
def test_disjoint_from_the_benchmark():
    assert not _overlapping([r["confirmed_task"] for r in json.loads(BENCHMARK.read_text(encoding="utf-8"))])
