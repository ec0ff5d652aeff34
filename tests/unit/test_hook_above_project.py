"""What tools read in the folders above a project that has none of its own (found open on 2026-11-29, evening): git
climbs from the project to the first `.git` it meets, so for a project under /tmp without its own repository the agent
could run `git init /tmp` and write `/tmp/.git/config` (an fsmonitor, hooks: plain tmp writes), which the user's own
`git status` in the project then ran, outside any command the hook sees; cargo reads `.cargo/config.toml` in every
folder above, yarn `.yarnrc.yml`. The hook protects those names in each folder above the project, below the home."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.test_hook_linked_folders import build, decide  # noqa: F401 (fixture)

pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")


def test_the_configuration_of_tools_above_a_tmp_project_is_the_agents(build: Path, tmp_path: Path) -> None:  # noqa: F811
    above, project, home = tmp_path / "work", tmp_path / "work" / "proj", Path("/home/dev")
    project.mkdir(parents=True)
    for name in (".git/config", ".git/hooks/post-checkout", ".cargo/config.toml", ".yarnrc.yml"):
        assert decide(build, project, home, "Bash", command=f"echo x > {above}/{name}") == 2, name
        assert decide(build, project, home, "Write", file_path=f"{tmp_path}/{name}", content="x") == 2, name
    assert decide(build, project, home, "Bash", command=f"echo x > {above}/notes.txt") == 0
    assert decide(build, project, home, "Bash", command=f"echo x > {project}/src.py") == 0


def test_above_a_project_in_the_home_only_the_folders_below_the_home_count(tmp_path: Path) -> None:
    from veriguard.hook import above_project
    assert above_project("/home/u/code/proj", "/home/u") == [f"/home/u/code/{n}" for n in
                                                            (".git", ".cargo/config", ".cargo/config.toml",
                                                             ".yarnrc.yml", ".mise.toml", ".envrc")]
    assert above_project("/home/u/proj", "/home/u") == []
    assert [p for p in above_project("/tmp/a/proj", "/home/u") if p.endswith("/.git")] == ["/tmp/a/.git", "/tmp/.git"]
