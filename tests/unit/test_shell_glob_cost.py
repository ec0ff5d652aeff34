"""Many globs in one command that meet the same folders (`cat **/a0.py **/a1.py ...`, `cat */x0 */x1 ...`): each
listed those folders, and walked every folder under a `**` for links, again (about 3 ms a glob in a small project:
`scripts/bench_globs.py`), and each listing counted against the decision's limit of entries read (WALK_LIMIT), so a
few hundred such globs in a project of a thousand files reached it and read the unresolved zone: a benign command
denied. A folder is listed once a decision now, and a place reached twice is looked at once."""
from __future__ import annotations

from pathlib import Path

import pytest

from veriguard.enforce.shell import WALK_LIMIT, analyse
from tests.unit.test_shell_indirect_config import COMMANDS, ZONES

pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")


def test_globs_that_meet_the_same_folders_do_not_exhaust_the_walk(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    for d in range(50):
        (project / f"d{d}").mkdir(parents=True)
        for f in range(20):
            (project / f"d{d}" / f"f{f}.py").write_text("")
    entries = 50 * 21
    globs = WALK_LIMIT // entries + 20       # enough that listing the tree once a glob passes the limit
    for form in ("**/a{}.py", "*/a{}.py"):
        command = "cat " + " ".join(form.format(i) for i in range(globs))
        a = analyse(command, cwd=str(project), home=str(tmp_path / "home"), workspace=str(project),
                    commands=COMMANDS, zones=ZONES, follow_links=True, rewrites=False)
        assert ("read", "outside") not in a.touched, (form, a.account[-1:])   # outside: the unresolved zone
