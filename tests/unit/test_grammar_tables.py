"""The contract parser loads lark's tables from contracts/grammar_tables.py: they must be made from the grammar and
lark installed, and parse (and reject) exactly what the parser built from grammar.lark does."""
from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import lark
import pytest
from lark import UnexpectedInput

from veriguard.contracts import grammar_tables, parse

ROOT = Path(__file__).resolve().parents[2]
STARTS = ("start", "type_start", "signature_start")


def strings(node: Any) -> list[str]:
    if isinstance(node, str):
        return [node]
    values = node.values() if isinstance(node, dict) else node if isinstance(node, list) else []
    return [s for v in values for s in strings(v)]


def corpus() -> list[str]:
    """Every string of the shipped specs (contracts, types, signatures and prose), and each cut short at
    three places (errors at every kind of position)."""
    texts = sorted({s for p in sorted((ROOT / "specs").glob("*.toml"))
                    for s in strings(tomllib.loads(p.read_text()))})
    return texts + [t[:n] for t in texts if len(t) > 4 for n in (len(t) // 3, len(t) // 2, len(t) - 1)]


def outcome(parser: lark.Lark, text: str, start: str) -> Any:
    try:
        return parser.parse(text, start=start)
    except UnexpectedInput as e:
        return type(e).__name__, e.line, e.column, sorted(getattr(e, "expected", None) or ())


def test_the_tables_are_made_from_the_installed_grammar_and_lark():
    assert (grammar_tables.GRAMMAR_SHA256, grammar_tables.LARK_VERSION) == (parse.grammar_sha256(), lark.__version__), \
        "contracts/grammar_tables.py is stale: run .venv/bin/python scripts/grammar_tables.py"


def test_the_parser_comes_from_the_tables(monkeypatch):
    monkeypatch.setattr(parse, "built_parser", lambda: pytest.fail("built from the grammar"))
    parse._parser.cache_clear()
    try:
        assert parse.parse_expr("x + 1 > 2") is not None
    finally:
        parse._parser.cache_clear()


def test_stale_tables_are_not_used(monkeypatch):
    monkeypatch.setattr(grammar_tables, "GRAMMAR_SHA256", "0" * 64)
    monkeypatch.setattr(parse, "built_parser", lambda: "built")
    parse._parser.cache_clear()
    try:
        assert parse._parser() == "built"
    finally:
        parse._parser.cache_clear()


def test_the_tables_parse_and_reject_what_the_grammar_does():
    texts = corpus()
    assert len(texts) > 500
    built = parse.built_parser()
    loaded = lark.Lark._load_from_dict(grammar_tables.DATA, grammar_tables.MEMO, propagate_positions=True)
    differ = [(start, text) for text in texts for start in STARTS
              if outcome(built, text, start) != outcome(loaded, text, start)]
    assert not differ, differ[:3]
    parsed = sum(not isinstance(outcome(built, t, s), tuple) for t in texts for s in STARTS)
    assert parsed > 100  # the corpus holds real contracts, not only errors
