"""A nested shell whose own options or environment change how it expands globs (red-team pass on a real disk,
2026-11-29): `bash -O dotglob -c 'rm -rf *'` was read with the dot rule, so `*` skipped `.claude` and `.git`; asked,
then approved, it deleted both. Such a shell reads its globs loosely, as `shopt -s dotglob` in the same shell does,
so the delete of the agent's configuration is denied whatever a human approves."""
from __future__ import annotations

import pytest

from tests.unit.test_shell_indirect_config import touched

pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")


@pytest.mark.parametrize("command", [
    "bash -O dotglob -c 'rm -rf *'",
    "bash +O nullglob -c 'rm -rf *'",
    "bash --norc -O dotglob -c 'rm -rf *'",
    "BASHOPTS=dotglob bash -c 'rm -rf *'",
    "env BASHOPTS=dotglob bash -c 'rm -rf *'",
    "env -i BASHOPTS=dotglob GLOBIGNORE=x sh -c 'rm -rf *'",
    "GLOBIGNORE=. bash -c 'rm -rf *'",
    "bash -O dotglob <<'EOF'\nrm -rf *\nEOF",
    "timeout 5 bash -O dotglob -c 'rm -rf *'",
    "shopt -s dotglob; rm -rf *",
])
def test_a_shell_started_with_options_that_change_globs_reads_them_loosely(command):
    assert ("delete", "agent_config") in touched(command)


@pytest.mark.parametrize("command", ["bash -c 'rm -rf *'", "bash -e -c 'rm -rf *'", "bash -ec 'rm -rf *'",
                                     "LANG=C bash -c 'rm -rf *'"])
def test_a_plain_nested_shell_keeps_the_dot_rule(command):
    assert ("delete", "agent_config") not in touched(command)
