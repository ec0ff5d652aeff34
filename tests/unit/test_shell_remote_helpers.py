"""git's TRANSPORT::ADDRESS URLs run the program git-remote-TRANSPORT, and `ext::COMMAND` runs COMMAND (red-team pass
of 2026-11-29, late morning: `git fetch 'ext::sh -c id'` and `git clone 'ext::…' DIR` were network commands, allowed;
git refuses ext:: unless the protocol is allowed, which the user's configuration or GIT_ALLOW_PROTOCOL in the agent's
environment may do). A push to a local repository writes it (`git push ~/.claude/x HEAD` read nothing)."""
from __future__ import annotations

import pytest

from veriguard.enforce.shell import analyse
from tests.unit.test_shell_indirect_config import COMMANDS, HOME, PROJECT, ZONES

pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")


def analysed(command: str):
    return analyse(command, cwd=PROJECT, home=HOME, workspace=PROJECT, commands=COMMANDS, zones=ZONES)


@pytest.mark.parametrize("command", ["git fetch 'ext::sh -c id'", "git clone 'ext::sh -c id' /tmp/x",
                                     "git ls-remote fd::3", "git push 'ext::sh -c id' main", "git ls-remote --heads 'ext::x y'"])
def test_a_remote_helper_url_is_unknown(command: str) -> None:
    assert analysed(command).kind == "unknown", analysed(command).account


def test_a_remote_helper_naming_a_protected_place_is_a_write_of_it() -> None:
    assert ("write", "ssh_keys") in analysed("git clone 'ext::sh -c cat% ~/.ssh/id_rsa' /tmp/x").touched


def test_a_push_to_a_local_repository_writes_it() -> None:
    assert ("write", "agent_config") in analysed("git push ~/.claude/x HEAD").touched
    # the files a push sends are the repository's to say (ask_git; here no repository holds the folder): without
    # asking, any committed file may leave, the project's secrets too
    ordinary = analyse("git push origin main", cwd=PROJECT, home=HOME, workspace=PROJECT, commands=COMMANDS,
                       zones=ZONES, ask_git=True)
    assert ordinary.kind == "network" and {z for _, z in ordinary.touched} <= {"workspace"}, ordinary.touched
    assert ("read", "project_secrets") in analysed("git push origin main").touched
    assert analysed("git fetch origin").kind == "network"
