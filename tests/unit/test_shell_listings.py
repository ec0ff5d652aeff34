"""find, tree, du, fd and getfacl/lsattr -R walk the folders they are given and print every name under them (found open on 2026-11-29, evening:
`find ~ -name id_rsa`, `tree ~`, `du -a ~`, `fd id_rsa ~`, `getfacl -R ~` and, through a link in the project to ~/.ssh, `find -L . -name id_rsa` listed the key
folders, where `ls -R ~` and `ls ~/.ssh` are reads of ssh_keys, denied): a recursive read now."""
from __future__ import annotations

import pytest

from tests.unit.test_shell_indirect_config import touched

pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")


@pytest.mark.parametrize("command", ["find ~ -name id_rsa", "find ~ -maxdepth 3 -type f", "tree ~", "tree -a ~",
                                     "cd ~ && find . -name '*.pem'", "cd ~ && tree", "du -a ~", "du -sh ~",
                                     "cd ~ && du", "fd id_rsa ~", "fdfind . ~", "getfacl -R ~", "lsattr -R ~"])
def test_listing_the_home_reads_the_key_folders(command: str) -> None:
    assert ("read", "ssh_keys") in touched(command), command


@pytest.mark.parametrize("command", ["find . -name '*.py'", "find src -type f", "tree src", "tree", "du -sh .",
                                     "du -sh src", "fd '[.]py$'", "getfacl -R src"])
def test_listing_the_project_reads_the_project(command: str) -> None:
    assert {z for _, z in touched(command)} <= {"workspace", "agent_config", "project_secrets"}, command
