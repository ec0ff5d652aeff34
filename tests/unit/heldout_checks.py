"""What every held-out set of the Mind2Web-SC classifier is checked for (tests/unit/test_heldout_v*.py): its rows,
and the runs of six words it shares with other texts. Nothing here runs the classifier."""
import json
from pathlib import Path

from tests.unit.test_categories import CATS, _shingles

FIELDS = {"id", "task", "categories", "style", "decoy"}


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def shared_runs(rows: list[dict], texts: list[str]) -> list[tuple[str, str]]:
    """(id, one shared run) for every row sharing a six-word run with one of texts; never the other text."""
    other = set().union(*(_shingles(t) for t in texts))
    return [(r["id"], " ".join(sorted(_shingles(r["task"]) & other)[0])) for r in rows if _shingles(r["task"]) & other]


def assert_well_formed(rows: list[dict], prefix: str, styles: set[str], minimum: int) -> None:
    """At least `minimum` rows, ids prefix-001 on, distinct tasks, exactly FIELDS, sorted known categories."""
    assert len(rows) >= minimum
    assert [r["id"] for r in rows] == [f"{prefix}-{i:03d}" for i in range(1, len(rows) + 1)]
    assert len({r["task"].lower() for r in rows}) == len(rows)
    for r in rows:
        assert set(r) == FIELDS, r["id"]
        assert r["categories"] == sorted(set(r["categories"])) and set(r["categories"]) <= set(CATS), r["id"]
        assert r["style"] in styles and isinstance(r["decoy"], bool), r["id"]


def assert_covers(rows: list[dict], styles: set[str], *, per_category: int = 45, per_style: int = 30,
                  decoy_share: float = 0.45) -> None:
    """The decoy share, positives per category, two- and three-category tasks, decoys under another category,
    and every style, as a set's README section states them."""
    assert sum(r["decoy"] for r in rows) >= decoy_share * len(rows)
    for category in CATS:
        assert sum(category in r["categories"] for r in rows) >= per_category, category
    assert any(len(r["categories"]) == 2 for r in rows) and any(len(r["categories"]) == 3 for r in rows)
    assert any(r["decoy"] and r["categories"] for r in rows)
    assert {r["style"] for r in rows} == styles
    for style in styles:
        assert sum(r["style"] == style for r in rows) >= per_style, style


def runs_shared_within(rows: list[dict]) -> list[tuple[str, str, str]]:
    """(first id, second id, run) for every run of six words two tasks of the set share."""
    seen: dict[tuple[str, ...], str] = {}
    shared = []
    for r in rows:
        for run in _shingles(r["task"]):
            if run in seen and seen[run] != r["id"]:
                shared.append((seen[run], r["id"], " ".join(run)))
            seen.setdefault(run, r["id"])
    return shared
