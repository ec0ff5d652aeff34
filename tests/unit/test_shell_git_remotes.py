"""Remote addresses kept in the repository's configuration (the README's "still open" of 2026-11-29): `git remote
add`, `git remote set-url`, `git push -u` and `git submodule add`/`set-url` write `.git/config` (agent_config) and were
allowed as network commands. Of the keys they write, only an address can make git run a program later: a remote
helper's (`ext::COMMAND` runs COMMAND, `TRANSPORT::ADDRESS` runs `git-remote-TRANSPORT`), which every later `git fetch`
or `git push` naming the remote uses without another approval. Such an address, or one the analysis cannot read, is a
write of the repository's configuration: denied even approved. A network address or a local path runs nothing of
the configuration's choosing (a push to a local repository runs that repository's hooks, code in the agent's reach as
the project's own code is), nor do the tracking keys (`branch.NAME.remote`, `branch.NAME.merge`) that `git push -u
origin main` and `git branch --set-upstream-to` write: those stay allowed."""
from __future__ import annotations

import pytest

from veriguard.enforce.monitor import Monitor
from tests.unit.test_shell_indirect_config import build, decide, monitor, touched  # noqa: F401 (fixtures)

pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")

KEEPS_A_HELPER = [
    "git remote add origin 'ext::sh -c id'", "git remote add x evil::foo", "git remote add -f x 'ext::sh -c id %S'",
    "git remote set-url origin 'ext::sh -c touch% /tmp/x'", "git remote set-url --push origin evil::x",
    "git remote set-url --add origin fd::3", "git -C . remote add x evil::foo", "cd src && git remote add x evil::y",
    "git push -u 'ext::sh -c id' main", "git push --set-upstream evil::x HEAD", "git submodule add 'ext::sh -c id' lib",
    "git submodule add -b main --name x evil::y lib", "git submodule set-url lib evil::y",
    'git remote add origin "$(cat /tmp/url)"', 'git remote set-url origin "$NEW_URL"',
]
KEEPS_NOTHING_THAT_RUNS = [
    "git remote add origin https://github.com/u/r.git", "git remote add upstream git@github.com:u/r.git",
    "git remote add -f up ssh://git@h.example/u/r", "git remote set-url origin https://h.example/u/r",
    "git remote add local /tmp/mirror.git", "git remote add -t main -m main up https://h.example/u/r",
    "git remote rename origin up", "git remote remove up", "git remote -v", "git remote", "git remote show origin",
    "git remote get-url origin", "git remote prune origin", "git push -u origin main", "git push --set-upstream origin HEAD",
    "git branch --set-upstream-to=origin/main", "git branch -u origin/main",
]   # (`git submodule add URL lib` needs approval for the files it checks out: test_shell_brought_content.py)


@pytest.mark.parametrize("command", KEEPS_A_HELPER)
def test_keeping_a_helper_address_writes_the_repository_configuration(command: str) -> None:
    assert ("write", "agent_config") in touched(command), command


@pytest.mark.parametrize("command", KEEPS_A_HELPER[:5])
def test_it_is_denied_even_approved(monitor: Monitor, command: str) -> None:  # noqa: F811
    assert not decide(monitor, command, approved=True), command


@pytest.mark.parametrize("command", KEEPS_NOTHING_THAT_RUNS)
def test_addresses_and_tracking_keys_that_run_nothing_stay_allowed(monitor: Monitor, command: str) -> None:  # noqa: F811
    assert ("write", "agent_config") not in touched(command), command
    assert decide(monitor, command, approved=False), command
