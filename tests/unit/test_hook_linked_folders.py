"""The hook follows a symbolic link at any folder of a protected name, not only at the name itself (found open on
2026-11-29: `.vscode -> /tmp/v` left `/tmp/v/tasks.json` a plain tmp file, since only `.vscode/tasks.json` itself was
looked at, and the agent wrote the tasks VS Code runs when the folder opens)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from veriguard import hook
from veriguard.synth.freeze import write_build
from veriguard.synth.specfile import load_spec
from tests.conftest import ROOT
from tests.unit.test_compile_and_freeze import fake_result

pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hook_linked_folders")
    return write_build(fake_result(load_spec(ROOT / "specs" / "shell_agent.toml")), out, run_info={})[0]


def decide(build: Path, project: Path, home: Path, tool: str, **tool_input: object) -> int:
    opts = hook.parse_options(["--build", str(build)])
    assert isinstance(opts, hook.Options)
    opts = opts._replace(env={"HOME": str(home), "CLAUDE_PROJECT_DIR": str(project)})
    call = {"session_id": "s", "cwd": str(project), "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": tool, "tool_input": tool_input, "tool_use_id": "t"}
    return hook.decide(json.dumps(call).encode(), opts).code


def test_a_folder_of_a_protected_name_linked_elsewhere_protects_the_name_there(build: Path, tmp_path: Path) -> None:
    home, project, shared = tmp_path / "home", tmp_path / "home" / "proj", tmp_path / "shared"
    for folder in (project, shared / "vsc", shared / "cargo", shared / "jj" / "repo"):
        folder.mkdir(parents=True)
    (project / ".vscode").symlink_to(shared / "vsc")          # tasks.json not made yet: the name is protected anyway
    (project / ".cargo").symlink_to(shared / "cargo")
    (project / ".jj").symlink_to(shared / "jj")               # a link two folders above the name
    for target in ("vsc/tasks.json", "vsc/settings.json", "cargo/config.toml", "jj/repo/config.toml"):
        assert decide(build, project, home, "Write", file_path=f"{shared}/{target}", content="x") == 2, target
        assert decide(build, project, home, "Bash", command=f"echo x > {shared}/{target}") == 2, target
    # the rest of those folders stays writable: only the protected names are
    assert decide(build, project, home, "Write", file_path=f"{shared}/vsc/extensions.json", content="x") == 0
    assert decide(build, project, home, "Bash", command=f"echo x > {shared}/cargo/notes.txt") == 0


def test_a_home_folder_linked_into_a_dotfiles_project_protects_the_names_under_it(build: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    dotfiles = home / "dotfiles"
    (dotfiles / "share" / "keyrings").mkdir(parents=True)
    (dotfiles / "share" / "keyrings" / "login.keyring").write_text("secret")
    (home / ".local").mkdir()
    (home / ".local" / "share").symlink_to(dotfiles / "share")   # ~/.local/share/keyrings/** is a credential
    assert decide(build, dotfiles, home, "Read", file_path=f"{dotfiles}/share/keyrings/login.keyring") == 2
    assert decide(build, dotfiles, home, "Bash", command="cat share/fish/fish_history") == 2
    assert decide(build, dotfiles, home, "Write", file_path=f"{dotfiles}/share/other.txt", content="x") == 0
