"""Editors', IDEs' and other agents' project files that name programs they start on their own (found open on
2026-11-29 evening: each was a plain workspace write): Helix's `.helix/languages.toml` (language servers and
formatters, started when a file opens), JetBrains' `.idea/` and `.run/*.run.xml` (run configurations, startup tasks run
when the project opens, file watchers), aider's `.aider.conf.yml` (lint and test commands run after each edit),
opencode's `opencode.json` and `.opencode/`, Codex's `.codex/config.toml` and Continue's `.continue/mcpServers/` (MCP
servers they start), Neovim's `.nvim.lua`/`.nvimrc`/`.exrc` and Emacs' `.dir-locals.el`. They are agent_config: read,
never changed, at the top of the project and, where a command names them, in a sub-folder."""
from __future__ import annotations

import pytest

from veriguard.enforce.monitor import Monitor
from tests.unit.test_shell_indirect_config import build, decide, monitor, touched  # noqa: F401 (fixtures)

pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")

STARTS_PROGRAMS = [
    "echo x > .helix/languages.toml", "tee .helix/config.toml", "echo x > .idea/workspace.xml",
    "cp /tmp/a.xml .idea/runConfigurations/a.xml", "echo x > .idea/watcherTasks.xml", "echo x > .run/dev.run.xml",
    "echo 'lint-cmd: sh x' > .aider.conf.yml", "echo x > opencode.json", "cp /tmp/x opencode.jsonc",
    "echo x > .opencode/opencode.json", "echo x > .codex/config.toml", "echo x > .continue/mcpServers/a.yaml",
    "echo x > .nvim.lua", "echo x > .nvimrc", "echo x > .exrc", "echo x > .dir-locals.el",
    "echo x > web/.helix/languages.toml", "echo x > web/opencode.json", "echo x > web/.codex/config.toml",
    "cp /tmp/x web/.continue/mcpServers/a.json", "rm -rf .idea",
]
ORDINARY = ["cat .idea/workspace.xml", "ls .helix", "echo x > .run/app.pid", "echo x > src/opencode_notes.md",
            "grep -r x .", "cat opencode.json"]


@pytest.mark.parametrize("command", STARTS_PROGRAMS)
def test_a_file_that_names_programs_a_tool_starts_is_the_agents_configuration(command: str) -> None:
    changed = touched(command)
    assert ("write", "agent_config") in changed or ("delete", "agent_config") in changed, command


@pytest.mark.parametrize("command", STARTS_PROGRAMS[:4])
def test_it_is_denied_even_approved(monitor: Monitor, command: str) -> None:  # noqa: F811
    assert not decide(monitor, command, approved=True), command


@pytest.mark.parametrize("command", ORDINARY)
def test_reading_them_and_other_files_stays_allowed(monitor: Monitor, command: str) -> None:  # noqa: F811
    assert decide(monitor, command, approved=False), command
