"""Cost of looking for the project's symbolic links that lead elsewhere (enforce/shell_mounts.py): one Claude Code hook
decision in process (the monitor loaded each time, as the hook does), median of --repeat, on a project of --files
files in folders of 500 with --links links to folders outside it, for commands that stay in the project (no walk) and
commands that write outside it (the walk); and `linked_places`, the hook's start. The project and a fake-certificate
build are made in a temporary folder.

    .venv/bin/python scripts/bench_project_links.py [--files 20000] [--links 200] [--repeat 9]
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
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def make_project(base: Path, files: int, links: int) -> tuple[Path, Path, Path]:
    home, project, targets = base / "home", base / "home" / "proj", base / "t"
    folders = max(1, files // 500)
    for d in range(folders):
        (project / f"d{d}").mkdir(parents=True)
        for f in range(min(500, files)):
            (project / f"d{d}" / f"f{f}.py").write_text("")
    for i in range(links):
        (targets / str(i)).mkdir(parents=True)
        os.symlink(targets / str(i), project / f"d{i % folders}" / f"l{i}")
    return home, project, targets


def median_ms(repeat: int, run: Callable[[], Any]) -> tuple[float, Any]:
    from veriguard.enforce import shell

    times, out = [], None
    for _ in range(repeat):
        shell._analyse.cache_clear()
        t = time.perf_counter()
        out = run()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=20_000)
    ap.add_argument("--links", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args()
    if args.files < 1 or args.links < 0 or args.repeat < 1:
        ap.error("--files and --repeat must be at least 1, --links at least 0")
    from veriguard import hook
    from veriguard.synth.freeze import write_build
    from veriguard.synth.specfile import load_spec
    from tests.unit.test_compile_and_freeze import fake_result

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        home, project, targets = make_project(base / "disk", args.files, args.links)
        write_build(fake_result(load_spec(ROOT / "specs" / "shell_agent.toml")), base / "build", run_info={})
        opts = hook.parse_options(["--build", str(base / "build" / "shell_agent")])
        assert isinstance(opts, hook.Options)
        env = {"HOME": str(home), "CLAUDE_PROJECT_DIR": str(project)}
        opts = opts._replace(env=env)
        monitor = hook.load_monitor(opts)
        ms, _ = median_ms(args.repeat, lambda: hook.linked_places(monitor, env))
        print(f"files={args.files} links={args.links} (1-minute load average {os.getloadavg()[0]:.2f})")
        print(f"  {ms:8.2f} ms  linked_places (at the hook's start)")
        for command in ("echo x > out.txt", "cat /etc/hosts", f"echo x > {targets}/0/notes.txt",
                        f"echo x > {targets}/0/.envrc", f"echo x > {base}/other.txt"):
            call = json.dumps({"session_id": "s", "cwd": str(project), "permission_mode": "default",
                               "hook_event_name": "PreToolUse", "tool_name": "Bash",
                               "tool_input": {"command": command}, "tool_use_id": "t"}).encode()
            ms, answer = median_ms(args.repeat, lambda: hook.decide(call, opts))
            kind = "allow" if answer.code == 0 and not answer.stdout else "ask" if '"ask"' in answer.stdout else "deny"
            print(f"  {ms:8.2f} ms  {kind:5}  {command.replace(str(base), '$TMP')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
