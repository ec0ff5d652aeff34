"""Symbolic links already on disk (a cloned repository can carry `docs -> ~/.ssh`): the shell analysis of a
spec with `follow_links = true` (shell_agent, os_agent: their monitor runs on the agent's machine) also
touches where each path leads through them, as the hook's file tools always did. A workspace, home or
temporary folder that is itself reached through a link is not a way out."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from veriguard.enforce.shell import analyse
from tests.unit.test_shell_indirect_config import COMMANDS, ZONES

pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")


@pytest.fixture
def machine(tmp_path: Path) -> dict[str, Path]:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("KEY")
    (home / ".claude").mkdir()
    project.mkdir()
    os.symlink(home / ".ssh", project / "docs")
    os.symlink(home / ".claude", project / "cfg")
    os.symlink(home / ".ssh" / "id_rsa", project / "key.txt")
    os.symlink(project, tmp_path / "via_link")
    return {"home": home, "project": project, "via_link": tmp_path / "via_link"}


def touched(m: dict[str, Path], command: str, *, follow: bool, workspace: str = "project") -> set[tuple[str, str]]:
    ws = str(m[workspace])
    return set(analyse(command, cwd=ws, home=str(m["home"]), workspace=ws, commands=COMMANDS, zones=ZONES,
                       follow_links=follow).touched)


@pytest.mark.parametrize("command,access,zone", [
    ("cat docs/id_rsa", "read", "ssh_keys"),
    ("cat key.txt", "read", "ssh_keys"),
    ("cd docs && cat id_rsa", "read", "ssh_keys"),
    ("grep -r BEGIN docs", "read", "ssh_keys"),
    ("cp docs/id_rsa /tmp/k", "read", "ssh_keys"),
    ("echo '{}' > cfg/settings.json", "write", "agent_config"),
    ("sed -i s/a/b/ cfg/settings.json", "write", "agent_config"),
    ("rm -rf cfg", "delete", "agent_config"),
])
def test_a_link_on_disk_is_a_way_into_its_target(machine, command, access, zone):
    assert (access, zone) in touched(machine, command, follow=True)
    assert (access, zone) not in touched(machine, command, follow=False)   # the lexical reading alone misses it


def test_a_workspace_reached_through_a_link_is_not_a_way_out(machine):
    plain = touched(machine, "cat src/x.py && echo x > out.txt", follow=False, workspace="via_link")
    assert touched(machine, "cat src/x.py && echo x > out.txt", follow=True, workspace="via_link") == plain


def test_following_links_reads_the_disk_each_time(machine):
    assert ("read", "ssh_keys") not in touched(machine, "cat notes/id_rsa", follow=True)
    os.symlink(machine["home"] / ".ssh", machine["project"] / "notes")   # made after a first analysis
    assert ("read", "ssh_keys") in touched(machine, "cat notes/id_rsa", follow=True)
