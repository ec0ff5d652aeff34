"""Links a command makes (red-team pass on a real disk, 2026-11-29). A relative target of `ln -s TARGET LINK` is taken
by the kernel from LINK's folder, not from the working directory: `cd src/a && ln -s ../.ssh/id_rsa ../../k` links
the project's `k` to the home's key, which the analysis read as `src/.ssh/id_rsa`."""
from __future__ import annotations

import pytest

from tests.unit.test_shell_indirect_config import touched

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
