"""The cost of following links on disk (enforce/shell.py through_links, `follow_links = true`), beside a baseline
measured in the same run: a decision's analysis of commands that read a folder recursively or expand a glob, in a
project of --files files made here (nested 50 to a folder, one link in it leading to a home folder's ~/.ssh), with
links followed beside the lexical analysis alone (`follow_links=False`), medians over --repeat runs. The analysis
is cached per command text, so each run analyses a distinct command.

    .venv/bin/python scripts/bench_link_walk.py [--files 20000] [--repeat 7] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from veriguard.enforce import shell  # noqa: E402
from veriguard.enforce.shell_table import load_commands, load_zones  # noqa: E402

COMMANDS = ["grep -R x{i} .", "zip -r /tmp/a{i}.zip .", "cat src/*/f{i}.txt", "grep -r x{i} src"]


def project(root: Path, files: int) -> tuple[Path, Path]:
    home, work = root / "home", root / "home" / "project"
    (home / ".ssh").mkdir(parents=True)
    for i in range(files):
        folder = work / "src" / f"d{i // 50}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i}.txt").write_text("x")
    os.symlink(home / ".ssh", work / "src" / "d0" / "keys")
    return home, work


def median_ms(command: str, home: Path, work: Path, repeat: int, *, follow: bool) -> float:
    table, zones = load_commands(ROOT / "specs/shell_agent/commands.toml"), load_zones(ROOT / "specs/shell_agent/zones.toml")
    times = []
    for i in range(repeat):
        text = command.format(i=f"{i}{'f' if follow else 'l'}")
        start = time.perf_counter()
        shell.analyse(text, cwd=str(work), home=str(home), workspace=str(work), commands=table, zones=zones,
                      follow_links=follow)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home, work = project(Path(tmp), args.files)
        rows = [{"command": c.format(i=""), "links_followed_ms": median_ms(c, home, work, args.repeat, follow=True),
                 "lexical_ms": median_ms(c, home, work, args.repeat, follow=False)} for c in COMMANDS]
    if args.json:
        print(json.dumps({"files": args.files, "repeat": args.repeat, "rows": rows}, indent=2))
        return 0
    print(f"project of {args.files} files; medians of {args.repeat} runs")
    for r in rows:
        print(f"  {r['command']:<28} links followed {r['links_followed_ms']:8.2f} ms   lexical {r['lexical_ms']:6.2f} ms   "
              f"ratio {r['links_followed_ms'] / r['lexical_ms']:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
