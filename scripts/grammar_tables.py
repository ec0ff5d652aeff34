"""Write contracts/grammar_tables.py: the contract grammar's LALR tables, so that a process loads them instead of
building them from grammar.lark (run it after every change of the grammar or of lark's version;
tests/unit/test_grammar_tables.py fails until it is run).

    .venv/bin/python scripts/grammar_tables.py
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from veriguard.contracts.parse import tables_source  # noqa: E402
from veriguard.enforce.keys import write_atomic  # noqa: E402

TABLES = ROOT / "contracts" / "grammar_tables.py"


def main() -> None:
    write_atomic(TABLES, tables_source().encode())
    print(f"wrote {TABLES.relative_to(ROOT)} ({TABLES.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
