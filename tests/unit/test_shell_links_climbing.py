"""`..` after a symbolic link (red-team pass on a real disk, 2026-11-29: each was allowed and read or wrote the file).
The kernel takes `..` from where the link leads, not from the path as written: with `src/a/x -> the project`,
`src/a/x/../.ssh/id_rsa` is the home's key, while the lexical reading is `src/a/.ssh/id_rsa`. With `follow_links`,
a path with `..` after a name is also resolved on disk, and so is the working directory after `cd`."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from veriguard.enforce.shell import analyse
from tests.unit.test_shell_indirect_config import COMMANDS, ZONES

pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")


@pytest.fixture
def machine(tmp_path: Path) -> dict[str, Path]:
    """A home with its key and its settings, the project inside it, `src/a/x -> the project`, and a relative link
    of a system folder as systemd ships one (`etc/xdg/user -> ../../lib/user`)."""
    home = tmp_path / "home"
    project = home / "project"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("KEY")
    (home / ".claude").mkdir()
    (project / "src" / "a").mkdir(parents=True)
    (project / "README.md").write_text("hi")
    os.symlink(project, project / "src" / "a" / "x")
    (tmp_path / "lib" / "user").mkdir(parents=True)
    (tmp_path / "etc" / "xdg").mkdir(parents=True)
    os.symlink("../../lib/user", tmp_path / "etc" / "xdg" / "user")
    return {"root": tmp_path, "home": home, "project": project}


def touched(m: dict[str, Path], command: str, *, follow: bool = True) -> set[tuple[str, str]]:
    ws = str(m["project"])
    return set(analyse(command, cwd=ws, home=str(m["home"]), workspace=ws, commands=COMMANDS, zones=ZONES,
                       follow_links=follow).touched)


@pytest.mark.parametrize("command,access,zone", [
    ("cat src/a/x/../.ssh/id_rsa", "read", "ssh_keys"),
    ("echo ssh-rsa EVIL >> src/a/x/../.ssh/authorized_keys", "write", "ssh_keys"),
    ("cd src/a/x && cat ../.ssh/id_rsa", "read", "ssh_keys"),
    ("cd src/a/x/.. && cat .ssh/id_rsa", "read", "ssh_keys"),
    ("cd -P src/a/x/.. && cat .ssh/id_rsa", "read", "ssh_keys"),
    ("cd src/a/x/.. && grep -r BEGIN .", "read", "ssh_keys"),
    ("cat src/a/x/../.ssh/id_*", "read", "ssh_keys"),
    ("cat src/*/x/../.ssh/id_rsa", "read", "ssh_keys"),
])
def test_dotdot_after_a_link_is_taken_from_where_the_link_leads(machine, command, access, zone):
    assert (access, zone) in touched(machine, command)
    assert (access, zone) not in touched(machine, command, follow=False)   # the lexical reading alone misses it


def test_a_system_link_with_dotdot_after_it_leads_where_the_kernel_goes(machine):
    """/etc/xdg/systemd/user -> ../../systemd/user ships with systemd: three `..` after it reach /, not /etc."""
    root = machine["root"]
    command = f"cat {root}/etc/xdg/user/../../../{root.name}/home/.ssh/id_rsa"
    assert ("read", "ssh_keys") in touched(machine, command)
    assert ("read", "ssh_keys") not in touched(machine, command, follow=False)


def test_a_folder_before_dotdot_that_cannot_be_looked_at_is_the_unresolved_zone(machine):
    os.symlink("loop", machine["project"] / "loop")   # the kernel cannot resolve it either (ELOOP)
    assert ("read", "outside") in touched(machine, "cat loop/../README.md")


@pytest.mark.parametrize("command", ["cat src/../README.md", "cd src && cat ../README.md", "cd src/a/.. && ls",
                                     "mkdir -p build && cd build && cat ../README.md", "cat nothere/../README.md"])
def test_dotdot_after_plain_folders_reads_as_before(machine, command):
    assert touched(machine, command) == touched(machine, command, follow=False)
