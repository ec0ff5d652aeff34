"""Paths the zone map missed, found by a red-team pass on the hook's file tools (2026-11-29): the thread folders of
/proc (each holds the process's environment and memory again), credential files of tools the map did not name,
files that make tools run programs later (lefthook, .pnpmfile.cjs, rust-toolchain, Claude Code's own files in a
sub-folder), extglob patterns (`@(.ssh)`) that hid a folder from the Glob tool's base, a name spelled in another
Unicode normalisation (macOS's file systems treat `cafe\u0301` as `café`), and a file with several hard links (its
other names may be protected). Builds are made without Nagini."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from veriguard import hook
from veriguard.synth.freeze import write_build
from veriguard.synth.specfile import load_spec
from tests.conftest import ROOT
from tests.unit.test_compile_and_freeze import fake_result

pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")

HOME, PROJECT = "/home/dev", "/home/dev/project"


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hook_paths")
    return write_build(fake_result(load_spec(ROOT / "specs" / "shell_agent.toml")), out, run_info={})[0]


def decide(build: Path, tool: str, project: str = PROJECT, home: str = HOME, env: dict[str, str] | None = None,
           **tool_input: object) -> int:
    opts = hook.parse_options(["--build", str(build)])
    assert isinstance(opts, hook.Options)
    opts = opts._replace(env={"HOME": home, "CLAUDE_PROJECT_DIR": project, **(env or {})})
    call = {"session_id": "s", "cwd": project, "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": tool, "tool_input": tool_input, "tool_use_id": "t"}
    return hook.decide(json.dumps(call).encode(), opts).code


@pytest.mark.parametrize("command", [
    "cat /proc/self/task/*/environ", "grep -a KEY /proc/self/task/*/environ", "cat /proc/123/task/123/environ",
    "dd if=/proc/123/task/123/mem bs=1 skip=4096 count=10", "cat /proc/123/task/123/fd/3",
    "cat /proc/thread-self/environ", "cat ~/.config/git/credentials", "cat ~/.tsh/keys/k", "cat ~/.codex/auth.json",
    "cat ~/.gemini/oauth_creds.json", "cat ~/.config/github-copilot/hosts.json", "cat ~/.yarnrc.yml",
    "cat ~/.sbt/.credentials", "echo x > .lefthook.yml", "echo x > .pnpmfile.cjs", "echo x > pkg/.pnpmfile.cjs",
    "echo x > sub/.claude/settings.json", "echo x > pkg/.mcp.json"])
def test_paths_the_map_missed_are_denied(build: Path, command: str) -> None:
    assert decide(build, "Bash", command=command) == 2, command


@pytest.mark.parametrize("file_path", ["/proc/77/task/77/environ", "/proc/77/task/77/fd/0",
                                       "/home/dev/.config/git/credentials"])
def test_the_read_tool_meets_them_too(build: Path, file_path: str) -> None:
    assert decide(build, "Read", file_path=file_path) == 2


@pytest.mark.parametrize("command", ["cat /proc/cpuinfo", "cat /proc/self/status", "cat ~/.config/git/ignore",
                                     "echo x > src/main.rs", "cat sub/.claude/settings.json"])
def test_their_neighbours_stay_allowed(build: Path, command: str) -> None:
    assert decide(build, "Bash", command=command) == 0, command


@pytest.mark.parametrize("pattern,expected", [("/home/dev/@(.ssh)/*", 2), ("/home/dev/+(.ssh|x)/*", 2),
                                              ("!(src)/**", 0), ("node_modules/@types/**/*.d.ts", 0)])
def test_extglob_patterns_count_as_globs(build: Path, pattern: str, expected: int) -> None:
    assert decide(build, "Glob", pattern=pattern) == expected
    assert hook.glob_base("/h/@(.ssh)/*", "/p") == "/h"


@pytest.mark.parametrize("pattern,expected", [("/home/dev/.ss\\h/*", 2), ("/home/dev/\\.aws/*", 2),
                                              ("/home/dev/.ssh\\/id_rsa", 2), ("src/**/*.py", 0)])
def test_a_backslash_escape_counts_as_a_glob(build: Path, pattern: str, expected: int) -> None:
    """Glob libraries read `\\h` as `h` (`~/.ss\\h/*` lists ~/.ssh): a component with a backslash is no literal folder
    (found open on 2026-11-29 evening: the base was the folder `.ss\\h`, in the home zone)."""
    assert decide(build, "Glob", pattern=pattern) == expected
    assert hook.glob_base("/h/.ss\\h/*", "/p") == "/h"


def test_a_name_in_another_unicode_normalisation_is_the_same_file(build: Path) -> None:
    project = "/private/tmp/caf\u00e9"
    nfd = "/private/tmp/cafe\u0301"
    assert decide(build, "Write", project=project, file_path=f"{project}/.claude/settings.json", content="x") == 2
    assert decide(build, "Write", project=project, file_path=f"{nfd}/.claude/settings.json", content="x") == 2
    assert decide(build, "Write", project=project, file_path=f"{nfd}/src/a.py", content="x") == 0


def test_a_write_to_a_file_with_several_hard_links_is_denied(build: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text("{}")
    project = home / "project"
    project.mkdir()
    os.link(home / ".claude" / "settings.json", project / "notes.json")
    (project / "plain.json").write_text("{}")
    for tool, extra in (("Write", {"content": "{}"}), ("Edit", {"old_string": "{", "new_string": "["})):
        assert decide(build, tool, project=str(project), home=str(home), file_path=f"{project}/notes.json",
                      **extra) == 2, tool
        assert decide(build, tool, project=str(project), home=str(home), file_path=f"{project}/plain.json",
                      **extra) == 0, tool
    assert decide(build, "Bash", project=str(project), home=str(home), command="echo {} > notes.json") == 2
    assert decide(build, "Read", project=str(project), home=str(home), file_path=f"{project}/notes.json") == 0


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_what_the_projects_git_configuration_names_is_the_agents_configuration(build: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = home / "project"
    project.mkdir(parents=True)
    for args in (["init", "-q"], ["config", "core.hooksPath", ".githooks"], ["config", "include.path", "../shared.cfg"]):
        subprocess.run(["git", *args], cwd=project, check=True)
    where = {"project": str(project), "home": str(home)}
    for path in (".githooks/pre-commit", "shared.cfg"):
        assert decide(build, "Write", **where, file_path=f"{project}/{path}", content="x") == 2, path
        assert decide(build, "Bash", **where, command=f"echo x > {path}") == 2, path
    assert decide(build, "Write", **where, file_path=f"{project}/src/a.py", content="x") == 0


def test_a_moved_claude_configuration_folder_is_the_agents_configuration(build: Path) -> None:
    env = {"CLAUDE_CONFIG_DIR": "/home/dev/.claude-work"}
    assert decide(build, "Write", env=env, file_path="/tmp/x/settings.json", content="x") == 0
    for file_path in ("/home/dev/.claude-work/settings.json", "/home/dev/.claude-work/.credentials.json"):
        assert decide(build, "Write", env=env, file_path=file_path, content="x") == 2
    assert decide(build, "Read", env=env, file_path="/home/dev/.claude-work/.credentials.json") == 2
    assert decide(build, "Read", env=env, file_path="/home/dev/.claude-work/settings.json") == 0
    moved = {"CLAUDE_CONFIG_DIR": "/tmp/claude-cfg"}
    assert decide(build, "Write", env=moved, file_path="/tmp/claude-cfg/settings.json", content="{}") == 2


def test_a_protected_name_that_is_a_link_protects_its_target(build: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    dotfiles = home / "dotfiles"
    for folder in ("claude", "ssh", "other"):
        (dotfiles / folder).mkdir(parents=True)
    (dotfiles / "claude" / "settings.json").write_text("{}")
    (dotfiles / "ssh" / "authorized_keys").write_text("ssh-ed25519 AAAA")
    (dotfiles / "gitconfig").write_text("[user]\n")
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").symlink_to(dotfiles / "claude" / "settings.json")
    (home / ".ssh").symlink_to(dotfiles / "ssh")
    (home / ".gitconfig").symlink_to(dotfiles / "gitconfig")
    where = {"project": str(dotfiles), "home": str(home)}
    for path in ("claude/settings.json", "gitconfig", "ssh/authorized_keys"):
        assert decide(build, "Write", **where, file_path=f"{dotfiles}/{path}", content="x") == 2, path
    assert decide(build, "Read", **where, file_path=f"{dotfiles}/ssh/authorized_keys") == 2
    assert decide(build, "Read", **where, file_path=f"{dotfiles}/claude/settings.json") == 0
    assert decide(build, "Write", **where, file_path=f"{dotfiles}/other/vimrc", content="x") == 0
    assert decide(build, "Bash", **where, command="echo {} > claude/settings.json") == 2


def test_a_protected_name_linked_deeper_in_a_protected_folder_protects_its_target(build: Path, tmp_path: Path) -> None:
    # red-team pass of 2026-11-29, late morning: only the literal folder and the entries right under it were looked at,
    # so `~/.claude/commands/team/deploy.md -> ~/dotfiles/...` (a dotfiles manager's link two levels down) left its
    # target a plain workspace file for an agent working in ~/dotfiles
    home = tmp_path / "home"
    dotfiles = home / "dotfiles"
    (dotfiles / "claude" / "team").mkdir(parents=True)
    (dotfiles / "claude" / "team" / "deploy.md").write_text("run this")
    (dotfiles / "aws").mkdir()
    (dotfiles / "aws" / "token.json").write_text("{}")
    (dotfiles / "agents").mkdir()
    (home / ".claude" / "commands" / "team").mkdir(parents=True)
    (home / ".claude" / "commands" / "team" / "deploy.md").symlink_to(dotfiles / "claude" / "team" / "deploy.md")
    (home / ".claude" / "agents").mkdir()
    (home / ".claude" / "agents" / "shared").symlink_to(dotfiles / "agents")     # a folder, two levels down
    (home / ".aws" / "sso" / "cache").mkdir(parents=True)
    (home / ".aws" / "sso" / "cache" / "token.json").symlink_to(dotfiles / "aws" / "token.json")
    where = {"project": str(dotfiles), "home": str(home)}
    assert decide(build, "Write", **where, file_path=f"{dotfiles}/claude/team/deploy.md", content="x") == 2
    assert decide(build, "Write", **where, file_path=f"{dotfiles}/agents/new.md", content="x") == 2
    assert decide(build, "Read", **where, file_path=f"{dotfiles}/aws/token.json") == 2
    assert decide(build, "Bash", **where, command="echo x >> claude/team/deploy.md") == 2
    assert decide(build, "Read", **where, file_path=f"{dotfiles}/claude/team/deploy.md") == 0
    assert decide(build, "Write", **where, file_path=f"{dotfiles}/claude/other.md", content="x") == 0


@pytest.mark.parametrize("tool, tool_input, key, path", [
    ("NotebookEdit", {"notebook_path": f"{PROJECT}/x.ipynb", "new_source": "x"}, "file_path",
     f"{PROJECT}/.claude/settings.json"),
    ("Write", {"file_path": f"{PROJECT}/x.py", "content": "x"}, "notebook_path", f"{PROJECT}/.mcp.json"),
    ("Edit", {"file_path": f"{PROJECT}/x.py", "old_string": "a", "new_string": "b"}, "path",
     f"{PROJECT}/.claude/settings.json"),
    ("Read", {"file_path": f"{PROJECT}/x.py"}, "path", f"{HOME}/.ssh/id_rsa"),
    ("Read", {"file_path": f"{PROJECT}/x.py"}, "notebook_path", "x.ipynb")])
def test_a_file_tool_with_a_path_under_another_key_is_decided_on_it_too(build: Path, tool: str, tool_input: dict,
                                                                         key: str, path: str) -> None:
    # red-team pass of 2026-11-29, late morning: NotebookEdit read only notebook_path, so a file_path beside it (which
    # a client that reads that key would write) was allowed unseen
    assert decide(build, tool, **tool_input) == 0
    assert decide(build, tool, **tool_input, **{key: path}) == 2


def test_the_hook_reads_what_a_copy_or_an_unpacking_brings_on_disk(build: Path, tmp_path: Path) -> None:
    """Through the hook (the shipped spec follows the disk): a folder copied whole that holds `.envrc` is denied, an
    ordinary one allowed, and a clone into the project, whose files cannot be listed first, is asked (2026-11-29)."""
    home, project, src, plain = tmp_path / "home", tmp_path / "home" / "project", tmp_path / "x", tmp_path / "y"
    (project / "sub").mkdir(parents=True)
    src.mkdir()
    (src / ".envrc").write_text("x")
    plain.mkdir()
    (plain / "a.txt").write_text("x")
    opts = hook.parse_options(["--build", str(build)])
    assert isinstance(opts, hook.Options)
    opts = opts._replace(env={"HOME": str(home), "CLAUDE_PROJECT_DIR": str(project)})

    def answer(command: str) -> hook.Answer:
        call = {"session_id": "s", "cwd": str(project), "permission_mode": "default", "hook_event_name": "PreToolUse",
                "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "t"}
        return hook.decide(json.dumps(call).encode(), opts)

    assert answer(f"cp -r {src} sub").code == 2
    assert answer(f"cp -r {plain} sub") == hook.Answer(0)
    asked = answer("git clone https://x.example/u/r sub")
    assert asked.code == 0 and '"ask"' in asked.stdout
