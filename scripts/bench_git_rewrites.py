"""The git rewrite check's cost (enforce/shell_git.py), each figure beside a baseline measured in the same run:

1. a decision on a git command that rewrites the work tree, with the repository asked (`ask_git`), beside the
   static analysis of the same command alone (`rewrites=False`), medians over --repeat runs, in a repository of
   --files tracked files made here (a branch that changes every file, a local change to every file);
2. the zone test of every file a repository names: `Zones.beyond` (the fast test) beside the exact lookup
   `Zones.of`, per file.

    .venv/bin/python scripts/bench_git_rewrites.py [--files 5000] [--repeat 7] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from veriguard.enforce import shell  # noqa: E402
from veriguard.enforce.shell_table import load_commands, load_zones, split_pattern  # noqa: E402
from veriguard.enforce.shell_words import escape_glob  # noqa: E402

COMMANDS = ["git checkout feature", "git merge feature", "git stash", "git restore .", "git checkout -- src"]


def git(repo: Path, *args: str) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@b", GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def make_repo(top: Path, files: int) -> Path:
    repo = top / "home" / "project"
    (repo / ".claude").mkdir(parents=True)
    (repo / ".claude" / "settings.json").write_text("{}\n")
    for i in range(files):
        f = repo / "src" / f"pkg{i % 50}" / f"m{i}.py"
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(f"x = {i}\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    git(repo, "checkout", "-qb", "feature")
    for f in (repo / "src").rglob("*.py"):
        f.write_text(f.read_text() + "y = 1\n")
    git(repo, "commit", "-qam", "every file")
    git(repo, "checkout", "-q", "main")
    for f in (repo / "src").rglob("*.py"):        # a local change to every file (stash and restore read them)
        f.write_text(f.read_text() + "z = 2\n")
    return repo


def fresh(command: str, **kw: object) -> object:
    shell._analyse.cache_clear()          # the parse and walk are timed too, every run
    return shell.analyse(command, **kw)   # type: ignore[arg-type]


def median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=5000, help="tracked files in the repository (default 5000)")
    ap.add_argument("--repeat", type=int, default=7, help="runs per figure (default 7)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    spec = ROOT / "specs" / "shell_agent"
    table, zmap = load_commands(spec / "commands.toml"), load_zones(spec / "zones.toml")
    with tempfile.TemporaryDirectory() as tmp:
        print(f"making a repository of {args.files} files ...", file=sys.stderr)
        repo = make_repo(Path(tmp), args.files)
        kw = dict(cwd=str(repo), home=str(repo.parent), workspace=str(repo), commands=table, zones=zmap)
        rows = []
        for command in COMMANDS:
            asked = median_ms(lambda: fresh(command, ask_git=True, **kw), args.repeat)
            static = median_ms(lambda: fresh(command, rewrites=False, **kw), args.repeat)
            rows.append({"command": command, "asked_ms": round(asked, 1), "static_ms": round(static, 2)})
        zones = zmap.compile(str(repo), str(repo.parent), "/tmp", ())
        paths = [str(p) for p in (repo / "src").rglob("*.py")][:2000]
        base = zones.of(split_pattern(escape_glob(str(repo))))   # the work tree's own zone (tmp, here)
        beyond = zones.beyond(base, str(repo))
        fast = median_ms(lambda: [beyond(p) for p in paths], args.repeat) / len(paths) * 1000
        exact = median_ms(lambda: [zones.of(split_pattern(escape_glob(p))) for p in paths], 1) / len(paths) * 1000
        zones_row = {"files": len(paths), "beyond_us": round(fast, 1), "exact_us": round(exact, 1),
                     "ratio": round(exact / fast, 1)}
    if args.json:
        print(json.dumps({"files": args.files, "decisions": rows, "zone_test": zones_row}, indent=2))
        return 0
    print(f"repository of {args.files} tracked files, medians of {args.repeat} runs")
    print(f"{'command':28} {'asked (ms)':>11} {'static alone (ms)':>18}")
    for r in rows:
        print(f"{r['command']:28} {r['asked_ms']:>11} {r['static_ms']:>18}")
    print(f"zone test per file: beyond {zones_row['beyond_us']} us, exact lookup {zones_row['exact_us']} us "
          f"(x{zones_row['ratio']}), over {zones_row['files']} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
