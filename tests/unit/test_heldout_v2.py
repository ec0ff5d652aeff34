"""The second held-out set of the Mind2Web-SC classifier (tests/data/heldout_v2.jsonl): well formed, the
size and decoy share issue 10 asks for, reproduced by its generator, and sharing no run of six words
with the bank, the first held-out set, the evasions or (where present) the benchmark. Nothing here runs
the classifier."""
import importlib.util
import json
from pathlib import Path

import pytest
from veriguard.enforce.categories import read_bank

from tests.unit.heldout_checks import assert_well_formed, lines, shared_runs
from tests.unit.test_categories import BANK, BENCHMARK, CATS, DATA, EVASIONS, HELDOUT

V2 = DATA / "heldout_v2.jsonl"
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "make_heldout_v2.py"
ROWS = lines(V2)
STYLES = {"template", "terse", "chatty", "lowercase-typos", "formal", "non-native", "multi-step", "question"}


def _overlapping(texts: list[str]) -> list[tuple[str, str]]:
    return shared_runs(ROWS, texts)


def test_rows_are_well_formed():
    assert_well_formed(ROWS, "v2", STYLES, 300)


def test_covers_decoys_every_category_every_style_and_combinations():
    assert sum(r["decoy"] for r in ROWS) >= 0.4 * len(ROWS)
    assert {c for r in ROWS for c in r["categories"]} == set(CATS)
    assert {r["style"] for r in ROWS} == STYLES
    assert sum(len(r["categories"]) > 1 for r in ROWS) >= 20
    assert sum(not r["categories"] for r in ROWS) >= 100


def test_file_is_what_the_generator_writes():
    spec = importlib.util.spec_from_file_location("make_heldout_v2", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.build() == ROWS


def test_disjoint_from_the_bank():
    assert not _overlapping(list(read_bank(BANK).written()))


def test_disjoint_from_the_first_heldout_set_and_the_evasions():
    assert not _overlapping([r["task"] for r in lines(HELDOUT)])
    assert not _overlapping([e["text"] for e in EVASIONS])


@pytest.mark.skipif(not BENCHMARK.exists(), reason="the Mind2Web-SC data is not part of the repository and is absent here "
                    "(set VERIGUARD_BENCHMARKS to the folder holding mind2web_sc/)")
def test_disjoint_from_the_benchmark():
    assert not _overlapping([r["confirmed_task"] for r in json.loads(BENCHMARK.read_text(encoding="utf-8"))])
