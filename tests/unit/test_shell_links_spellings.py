"""A workspace, home or temporary folder given through a symbolic link (red-team pass of 2026-11-29, late morning):
the zone map names it under both spellings, the one given and the one the link leads to, so the project's
`.claude` written through its real path is still the agent's configuration, and a workspace whose real path is the
home folder is still refused. Both were open: `echo x > /tmp/real/.claude/settings.json` with the project given as
a link to /tmp/real was a write of tmp, allowed."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from veriguard.enforce.extract_errors import ExtractionError
from veriguard.enforce.shell import analyse
from tests.unit.test_shell_indirect_config import COMMANDS, ZONES

pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")


@pytest.fixture
def machine(tmp_path: Path) -> dict[str, Path]:
    home, real = tmp_path / "home", tmp_path / "real"
    home.mkdir()
    (real / ".claude").mkdir(parents=True)
    (real / ".git" / "hooks").mkdir(parents=True)
    os.symlink(real, home / "proj")             # the project as Claude Code gives it: ~/proj, a link to /tmp/.../real
    os.symlink(home, tmp_path / "home_link")    # a "project" that is the home folder under another name
    return {"home": home, "real": real, "spelled": home / "proj", "home_link": tmp_path / "home_link"}


def touched(m: dict[str, Path], command: str, *, workspace: str = "spelled", cwd: str | None = None) -> set:
    ws = str(m[workspace])
    return set(analyse(command, cwd=cwd or ws, home=str(m["home"]), workspace=ws, commands=COMMANDS, zones=ZONES,
                       follow_links=True).touched)


@pytest.mark.parametrize("command", [
    "echo x > {real}/.claude/settings.json",
    "echo x > {real}/.mcp.json",
    "echo x > {real}/.git/hooks/pre-commit",
    "cd {real} && echo x > .claude/settings.json",
    "rm -rf {real}/.claude",
    "cp /dev/null {real}/.envrc",
])
def test_the_projects_configuration_is_protected_under_its_real_path(machine, command):
    text = command.format(real=machine["real"])
    assert any(zone == "agent_config" and access in ("write", "delete") for access, zone in touched(machine, text))
    assert any(zone == "agent_config" for _, zone in touched(machine, text, cwd=str(machine["real"])))


def test_the_projects_own_files_stay_free_under_either_spelling(machine):
    for command in ("echo x > out.txt", f"echo x > {machine['real']}/out.txt", "cat README.md"):
        assert {z for _, z in touched(machine, command)} <= {"workspace", "tmp"}


def test_a_workspace_whose_real_path_is_the_home_folder_is_refused(machine):
    with pytest.raises(ExtractionError) as e:
        touched(machine, "echo x >> .bashrc", workspace="home_link")
    assert e.value.code == "extract.shell.workspace"
