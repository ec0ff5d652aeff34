"""What a glob costs the shell guard: one hook decision (in process, the build loaded once) of a command with N globs
of each form, beside the same command with one glob, in a generated project (--folders folders of --files files, a
few symbolic links), median of --repeat runs; the figure is (median with N - median with 1) / (N - 1).

    .venv/bin/python scripts/bench_globs.py [--globs 200] [--repeat 5] [--folders 50] [--files 20] [--json]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FORMS = {"**/aN.py": "cat {}", "*/aN.py": "cat {}", "dN/*.py": "cat {}", ".aN*": "cat {}", "~/aN*": "cat {}",
         "dN/*": "rm -rf {}"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--globs", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--folders", type=int, default=50)
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from veriguard import hook
    from veriguard.synth.freeze import write_build
    from veriguard.synth.specfile import load_spec
    from tests.unit.test_compile_and_freeze import fake_result

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        project = home / "proj"
        for d in range(args.folders):
            (project / f"d{d}").mkdir(parents=True)
            for f in range(args.files):
                (project / f"d{d}" / f"f{f}.py").write_text("")
        (project / "d0" / "up").symlink_to(home)
        (project / ".claude").mkdir()
        build = write_build(fake_result(load_spec(ROOT / "specs" / "shell_agent.toml")), Path(tmp) / "b",
                            run_info={})[0]
        opts = hook.parse_options(["--build", str(build)])
        assert isinstance(opts, hook.Options)
        opts = opts._replace(env={"HOME": str(home), "CLAUDE_PROJECT_DIR": str(project)})

        def once(command: str) -> float:
            call = {"cwd": str(project), "permission_mode": "default", "hook_event_name": "PreToolUse",
                    "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "t"}
            t = time.perf_counter()
            hook.decide(json.dumps(call).encode(), opts)
            return time.perf_counter() - t

        out = {}
        for form, template in FORMS.items():
            one = template.format(form.replace("N", "0"))
            many = template.format(" ".join(form.replace("N", str(i)) for i in range(args.globs)))
            a, b = [], []
            for _ in range(args.repeat):      # interleaved: a busy machine weighs on both alike
                a.append(once(one))
                b.append(once(many))
            m1, mn = statistics.median(a), statistics.median(b)
            out[template.format(form)] = {"one_glob_ms": m1 * 1e3, f"{args.globs}_globs_ms": mn * 1e3,
                                          "per_glob_ms": (mn - m1) / (args.globs - 1) * 1e3}
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        for name, r in out.items():
            print(f"{name:16} one glob {r['one_glob_ms']:7.1f} ms   {args.globs} globs "
                  f"{r[f'{args.globs}_globs_ms']:8.1f} ms   per glob {r['per_glob_ms']:6.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
