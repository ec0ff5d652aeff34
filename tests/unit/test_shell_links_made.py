"""Links a command makes (red-team pass on a real disk, 2026-11-29). A relative target of `ln -s TARGET LINK` is taken
by the kernel from LINK's folder, not from the working directory: `cd src/a && ln -s ../.ssh/id_rsa ../../k` links
the project's `k` to the home's key, which the analysis read as `src/.ssh/id_rsa`."""
from __future__ import annotations

from pathlib import Path

import pytest

from veriguard.enforce.shell import analyse
from tests.unit.test_shell_indirect_config import COMMANDS, ZONES, touched

pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")


@pytest.mark.parametrize("command,zone", [
    ("cd src/a && ln -s ../.ssh/id_rsa ../../k", "ssh_keys"),
    ("cd src/a && ln -s ../.ssh/authorized_keys ../../ak && echo ssh-rsa EVIL >> ../../ak", "ssh_keys"),
    ("cd /tmp/w/a && ln -s ../.claude/settings.json /home/dev/project/s.json", "agent_config"),
    ("ln -s ../.claude/. /home/dev/project/cfg", "agent_config"),
    ("ln -s ../../../.ssh -t src/a", "ssh_keys"),
    ("ln -sf ../../../.ssh --target-directory=src/a", "ssh_keys"),
    ("cd src && cp -s ../.ssh/id_rsa ../k", "ssh_keys"),
])
def test_a_relative_link_target_is_taken_from_the_links_folder(command, zone):
    assert ("write", zone) in touched(command)


def test_a_relative_target_into_a_folder_the_analysis_cannot_resolve_is_unresolved():
    assert ("write", "outside") in touched("ln -s ../x \"$DEST\"")


@pytest.mark.parametrize("command", ["cd src && ln -s ../lib/util.py util.py", "cd docs && ln -s ../README.md .",
                                     "cd src && ln -sf ../build/out out", "ln -s /tmp/cache .cache"])
def test_links_within_the_project_stay_in_the_project(command):
    assert {z for _, z in touched(command)} <= {"workspace", "tmp"}


# A link an earlier step of the same command makes (tar x, unzip, git clone, cp -a, rsync -a, mv, ln) is not on disk
# when the command is decided: a later step that goes through it was judged by its path as written
# (`tar xf a.tar -C x && echo PWNED > x/docs/settings.json` with the member docs -> ~/.claude wrote the settings).

def follow(tmp_path: Path, command: str) -> set[tuple[str, str]]:
    home = tmp_path / "home"
    project = home / "project"
    project.mkdir(parents=True, exist_ok=True)
    return set(analyse(command, cwd=str(project), home=str(home), workspace=str(project), commands=COMMANDS,
                       zones=ZONES, follow_links=True, rewrites=False).touched)


@pytest.mark.parametrize("command,access", [
    ("mkdir -p x && tar xf /tmp/a.tar -C x && echo PWNED > x/docs/settings.json", "write"),
    ("unzip -o /tmp/a.zip -d x && cat x/keys/id_rsa", "read"),
    ("git clone -q /tmp/evil.git vendor && cat vendor/keys/id_rsa", "read"),
    ("git clone -q file:///tmp/evil.git && cat evil/keys/id_rsa", "read"),
    ("cp -a /tmp/payload dst && cat dst/keys/id_rsa", "read"),
    ("rsync -a /tmp/payload/ dst/ && cd dst && cat keys/id_rsa", "read"),
    ("mv /tmp/payload dst && cat dst/keys/id_rsa", "read"),
    ("ln -s /tmp/elsewhere src/x && cat src/x/../.ssh/id_rsa", "read"),
    ("tar xf /tmp/a.tar && grep -r BEGIN .", "read"),
])
def test_a_path_through_a_folder_an_earlier_step_filled_is_unresolved(tmp_path, command, access):
    assert (access, "outside") in follow(tmp_path, command)


@pytest.mark.parametrize("command", [
    "tar xf /tmp/a.tar -C x", "git clone https://h/u/r.git vendor && cd vendor && make",
    "mkdir -p build && cd build && cmake .. && make", "cp config.h build/ && cd build && cmake ..",
    "unzip -o /tmp/a.zip -d out && ls out", "ruff format . && ruff check .", "black . && grep -r x .",
    "cat x/README && tar xf /tmp/a.tar -C x",
])
def test_steps_that_do_not_go_through_such_a_folder_read_as_before(tmp_path, command):
    assert ("read", "outside") not in follow(tmp_path, command)
    assert ("write", "outside") not in follow(tmp_path, command)
