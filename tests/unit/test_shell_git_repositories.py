"""Git run in a repository whose configuration the agent may write (found open on 2026-11-29 evening): a repository
the agent made in /tmp holds whatever `.git/config` it wrote there (a plain tmp write), and git runs what that
configuration names on ordinary commands: `core.fsmonitor` on `git status` (checked with git 2.39: a marker file was
made), the pager on `git log`, diff and merge drivers, hooks on `git commit`. `git -C /tmp/r status` was read_only and
allowed. A git command whose working directory's repository folder lies in a zone the agent may write
([settings.git] writable: workspace, tmp) is unknown now: a human approves it. The project's own repository, and one
nested in it, are agent_config (the agent cannot change them); `git clone` and `git init` read no repository's
configuration (checked: a `core.sshCommand` of the enclosing repository did not run on `git clone ssh://...`)."""
from __future__ import annotations

import pytest

from veriguard.enforce.monitor import Monitor
from tests.unit.test_shell_indirect_config import build, decide, monitor  # noqa: F401 (fixtures)
from tests.unit.test_shell_indirect_config import COMMANDS, HOME, PROJECT, ZONES
from veriguard.enforce.shell import analyse

pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")

IN_A_REPOSITORY_THE_AGENT_CONFIGURES = [
    "git -C /tmp/r status", "cd /tmp/r && git status", "cd /tmp/r/src && git diff", "git -C /tmp/r log",
    "git -C /tmp/r commit -m x", "cd /tmp/r && git add .", "git -C /tmp/r ls-remote origin", "cd /tmp/r; git show",
    "git -C /var/tmp/r status",
]
ELSEWHERE = [
    "git status", "git log --oneline", "cd src && git status", "git -C vendor/lib status", "git -C ~/other log",
    "cd /tmp && git clone https://x.example/u/r", "git -C /tmp/x init", "git clone https://x.example/u/r /tmp/r",
    "git --version",
]


def kind(command: str) -> str:
    return analyse(command, cwd=PROJECT, home=HOME, workspace=PROJECT, commands=COMMANDS, zones=ZONES,
                   rewrites=False).kind


@pytest.mark.parametrize("command", IN_A_REPOSITORY_THE_AGENT_CONFIGURES)
def test_git_in_a_repository_the_agent_may_configure_needs_approval(monitor: Monitor, command: str) -> None:  # noqa: F811
    assert kind(command) == "unknown", command
    assert not decide(monitor, command, approved=False), command


@pytest.mark.parametrize("command", ELSEWHERE)
def test_git_in_the_project_and_clone_or_init_in_tmp_stay_as_they_were(command: str) -> None:
    assert kind(command) != "unknown", command
