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


# Links met by a glob or inside a folder read recursively (2026-11-29: each was allowed before, `cat keys/*` and
# `zip -r /tmp/a.zip .` read ~/.ssh through a link the repository brought).
@pytest.mark.parametrize("command", [
    "cat docs/*", "cat */id_rsa", "head -n 5 */*", "wc -c k*.txt", "grep -R BEGIN .", "zip -r /tmp/a.zip .",
    "cp -rL . /tmp/out", "tar -h -czf /tmp/a.tgz .", "rsync -aL . /tmp/out", "find . -exec cat {} +",
    "python3 -m http.server 8000", "rg BEGIN", "cat **/id_rsa",
])
def test_a_link_met_by_a_glob_or_a_recursive_read_is_followed(machine, command):
    assert ("read", "ssh_keys") in touched(machine, command, follow=True)
    assert ("read", "ssh_keys") not in touched(machine, command, follow=False)


def test_a_link_to_a_place_no_zone_names_or_inside_the_folder_is_not_a_reason_to_deny(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    (project / ".venv" / "bin").mkdir(parents=True)
    (project / ".venv" / "lib").mkdir()
    home.mkdir()
    os.symlink("/usr/bin/env", project / ".venv" / "bin" / "python")   # a virtual environment's interpreter
    os.symlink("lib", project / ".venv" / "lib64")
    m = {"home": home, "project": project}
    plain = touched(m, "grep -R x . && ls -R .venv", follow=False)
    assert touched(m, "grep -R x . && ls -R .venv", follow=True) == plain


def test_a_walk_too_large_to_finish_reads_the_unresolved_zone(machine, monkeypatch):
    import veriguard.enforce.shell as shell

    for i in range(30):
        (machine["project"] / f"f{i}").write_text("x")
    assert ("read", "outside") not in touched(machine, "grep -R x src", follow=True)
    monkeypatch.setattr(shell, "WALK_LIMIT", 10)
    got = touched(machine, "grep -R x .", follow=True)
    assert ("read", "outside") in got   # the zone map's unresolved zone: denied


@pytest.mark.parametrize("command", ["unzip -o /tmp/p.zip -d vendor", "cd vendor && 7z x /tmp/p.7z",
                                     "cp -r /tmp/payload/. vendor"])
def test_a_recursive_write_goes_through_a_link_to_a_folder(machine, command):
    """`unzip` writes `cfg/settings.json` into the folder `cfg -> ~/.claude` leads to (seen on disk, 2026-11-29)."""
    (machine["project"] / "vendor").mkdir()
    os.symlink(machine["home"] / ".claude", machine["project"] / "vendor" / "cfg")
    assert ("write", "agent_config") in touched(machine, command, follow=True)
    assert ("write", "agent_config") not in touched(machine, command, follow=False)


def test_a_link_to_a_file_elsewhere_is_read_but_not_written_by_a_recursive_access(machine):
    (machine["project"] / "vendor").mkdir()
    os.symlink(machine["home"] / ".ssh" / "id_rsa", machine["project"] / "vendor" / "python")   # a file link
    assert ("write", "ssh_keys") not in touched(machine, "unzip -o /tmp/p.zip -d vendor", follow=True)
    assert ("read", "ssh_keys") in touched(machine, "grep -R x vendor", follow=True)


def test_a_folder_whose_zones_are_all_there_already_is_not_walked(machine, monkeypatch):
    """`grep -r x /` touches every zone lexically: walking / for links (200,000 entries) would add nothing."""
    import veriguard.enforce.shell as shell

    def refuse(self, folder):
        raise AssertionError(f"walked {folder}")

    monkeypatch.setattr(shell._Walk, "links_under", refuse)
    touched(machine, "grep -r x /", follow=True)
    with pytest.raises(AssertionError, match="walked"):
        touched(machine, "grep -r x .", follow=True)
