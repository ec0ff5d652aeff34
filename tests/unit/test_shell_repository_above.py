"""Programs that run what a repository's configuration names, where that repository is not the working directory's
own (found open on 2026-11-29, evening): git looks for `.git` in the working directory and then in each folder above
it, so a project under /tmp without its own `.git` meets `/tmp/.git`, which the agent may make and configure (its
fsmonitor runs on `git status`): `git status` there was read_only and allowed, since only the working directory's own
`.git/config` was looked at (agent_config in a project, though absent). Which repository git finds above is read on
disk now (shell.through_repositories). And gh, glab and pre-commit, which run git in the repository they work in,
were allowed in a repository the agent configured in /tmp (`cd /tmp/r && gh pr status`), where git itself needs
approval: [settings.gh], [settings.glab] and [settings.pre-commit] say so now."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from veriguard.enforce.shell import analyse
from tests.unit.test_shell_indirect_config import COMMANDS, HOME, PROJECT, ZONES

pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")


def kind(command: str, project: str = PROJECT, cwd: str | None = None) -> str:
    return analyse(command, cwd=cwd or project, home=HOME, workspace=project, commands=COMMANDS, zones=ZONES,
                   rewrites=False, content=True).kind


def test_git_in_a_tmp_project_without_a_repository_meets_the_one_above(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    assert kind("git status", str(project)) != "unknown"        # no repository above yet: git finds none
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)   # the agent's own, in /tmp: any config
    for command in ("git status", "git log", "cd src && git diff", f"git -C {project} status"):
        assert kind(command, str(project)) == "unknown", command
    assert kind("ls", str(project)) != "unknown"


def test_a_project_with_its_own_repository_is_not_asked_about_the_one_above(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    for command in ("git status", "cd src && git status", "git log --oneline"):
        assert kind(command, str(project)) != "unknown", command


@pytest.mark.parametrize("command", ["cd /tmp/r && gh pr status", "cd /tmp/r && gh pr checkout 1",
                                     "cd /tmp/r && glab mr list", "cd /tmp/r && pre-commit run --all-files",
                                     "cd /tmp/r && gh repo view"])
def test_programs_that_run_git_in_a_repository_the_agent_configures_need_approval(command: str) -> None:
    cwd = "/tmp/r" if not command.startswith("cd ") else PROJECT
    assert kind(command, cwd=cwd) == "unknown", command


@pytest.mark.parametrize("command", ["gh pr status", "glab mr list", "pre-commit run --all-files",
                                     "cd /tmp/r && gh api /user",
                                     "cd /tmp/r && pre-commit validate-config", "gh search repos x"])
def test_those_programs_in_the_project_or_without_a_repository_stay_as_they_were(command: str) -> None:
    assert kind(command) != "unknown", command
