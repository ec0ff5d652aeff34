"""A symbolic link in the project to a folder elsewhere (found open on 2026-11-29, evening): `ln -s /tmp/x sub` is a
workspace write, and a later `echo 'export X=1' > /tmp/x/.envrc` was a write of tmp, allowed, though it lands at
`sub/.envrc`, which direnv runs on `cd sub` (as VS Code runs `sub/.vscode/tasks.json` and git `sub/.git/config`'s
fsmonitor). A path under where a link of the project leads is now also in the zones of its spelling under the link:
each step of a chain of links, a target not made yet, a link inside the folder a link leads to, a link to a file; and
after a step of the same command that may put links in the project (not on disk yet), a change outside the project of
a name the zone map protects there is unresolved."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from veriguard import hook
from veriguard.enforce import shell_mounts
from veriguard.enforce.shell import analyse
from veriguard.enforce.shell_table import Comp, split_pattern
from veriguard.enforce.shell_table import _below
from veriguard.synth.freeze import write_build
from veriguard.synth.specfile import load_spec
from tests.conftest import ROOT
from tests.unit.test_compile_and_freeze import fake_result
from tests.unit.test_shell_indirect_config import COMMANDS, ZONES

pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hook_project_links")
    return write_build(fake_result(load_spec(ROOT / "specs" / "shell_agent.toml")), out, run_info={})[0]


@pytest.fixture
def machine(tmp_path: Path) -> dict[str, Path]:
    home, shared = tmp_path / "home", tmp_path / "shared"
    project = home / "proj"
    for folder in (project / "src", project / "lib", shared / "x" / "deep", shared / "b", shared / "inner", home / "notes"):
        folder.mkdir(parents=True)
    (project / "sub").symlink_to(shared / "x")                  # the agent's own `ln -s /tmp/x sub`
    (shared / "a").symlink_to(shared / "b")
    (project / "chained").symlink_to(shared / "a")              # sub -> a -> b
    (project / "later").symlink_to(shared / "later")            # nothing there yet
    (shared / "x" / "deep" / "in").symlink_to(shared / "inner")  # a link inside where a link leads
    (project / "src" / ".npmrc").symlink_to(shared / "file")     # a link to a file
    (project / "notes").symlink_to(home / "notes")               # a folder of the home
    (shared / "pkg" / ".git").mkdir(parents=True)
    (shared / "pkg" / ".git" / "config").write_text("[core]\n\tfsmonitor = sh x\n")
    return {"home": home, "project": project, "shared": shared}


def decide(build: Path, m: dict[str, Path], tool: str, **tool_input: object) -> str:
    opts = hook.parse_options(["--build", str(build)])
    assert isinstance(opts, hook.Options)
    opts = opts._replace(env={"HOME": str(m["home"]), "CLAUDE_PROJECT_DIR": str(m["project"])})
    call = {"session_id": "s", "cwd": str(m["project"]), "permission_mode": "default",
            "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input, "tool_use_id": "t"}
    answer = hook.decide(json.dumps(call).encode(), opts)
    return "deny" if answer.code == 2 else "ask" if '"ask"' in answer.stdout else "allow"


@pytest.mark.parametrize("command", [
    "echo 'export X=1' > {shared}/x/.envrc",
    "mkdir -p {shared}/x/.vscode && echo '{{}}' > {shared}/x/.vscode/tasks.json",
    "echo '[core]' > {shared}/x/.git/config",
    "cp /tmp/a {shared}/x/.envrc",
    "tee {shared}/x/.claude/settings.json < /dev/null",
    "sed -i s/a/b/ {shared}/x/.npmrc",
    "echo x > {shared}/*/.envrc",                      # a glob that meets the linked folder
    "echo x > {shared}/b/.envrc",                      # the end of a chain of links
    "echo x > {shared}/a/.envrc",                      # a step of it
    "mkdir {shared}/later && echo x > {shared}/later/.envrc",   # a target made after the link
    "echo x > {shared}/later/.mise.toml",
    "echo x > {shared}/inner/.envrc",                  # sub/deep/in/.envrc
    "echo x > {shared}/file",                          # src/.npmrc
    "cp -r {shared}/pkg {shared}/x/",                  # brings sub/pkg/.git/config
    "echo x > {home}/notes/.envrc",
    "ln -s {shared}/new newlink && echo x > {shared}/new/.envrc",     # a link made by an earlier step, not on disk
    "ln -s {shared}/new2 n2; mkdir -p {shared}/new2/.vscode; echo x > {shared}/new2/.vscode/tasks.json",
    "ln -s {shared}/new3 n3 && cp -r {shared}/pkg {shared}/new3/",  # a folder written whole there
    "ln -s {shared}/new5 n5 && touch {shared}/new5/.*rc",             # a wildcard may meet a protected name
])
def test_a_write_where_a_link_of_the_project_leads_is_a_write_of_the_project_spelling(build, machine, command):
    text = command.format(shared=machine["shared"], home=machine["home"])
    assert decide(build, machine, "Bash", command=text) == "deny", text


def test_the_file_tools_meet_the_project_spelling_too(build, machine):
    shared = machine["shared"]
    assert decide(build, machine, "Write", file_path=f"{shared}/x/.envrc", content="x") == "deny"
    assert decide(build, machine, "Edit", file_path=f"{shared}/x/.vscode/settings.json", old_string="a",
                  new_string="b") == "deny"


def test_the_rest_of_a_linked_folder_stays_as_free_as_the_project(build, machine):
    shared = machine["shared"]
    for command in (f"echo x > {shared}/x/notes.txt", f"echo x > {shared}/x/deep/main.py", f"echo x > {shared}/c.txt",
                    f"cat {shared}/x/.envrc", f"ls {shared}/x", f"cp -r lib backup && echo done > {shared}/log.txt",
                    f"ln -s {shared}/new4 n4 && echo x > {shared}/new4/notes.txt"):
        assert decide(build, machine, "Bash", command=command) == "allow", command
    assert decide(build, machine, "Write", file_path=f"{shared}/x/README.md", content="x") == "allow"


def touched(m: dict[str, Path], command: str) -> set[tuple[str, str]]:
    ws = str(m["project"])
    return set(analyse(command, cwd=ws, home=str(m["home"]), workspace=ws, commands=COMMANDS, zones=ZONES,
                       follow_links=True).touched)


def test_the_project_is_walked_only_for_a_command_that_changes_something_outside_it(machine, monkeypatch):
    calls: list[tuple[str, ...]] = []
    real = shell_mounts.project_links

    def counted(project: tuple[str, ...], limit: int | None = None) -> tuple:
        calls.append(project)
        return real(project, limit)

    monkeypatch.setattr("veriguard.enforce.shell.project_links", counted)
    for command in ("echo x > out.txt", "cat /etc/hosts", "grep -r x src", "rm -rf build"):
        touched(machine, command)
    assert calls == []
    assert ("write", "agent_config") in touched(machine, f"echo x > {machine['shared']}/x/.envrc")
    assert len(calls) == 1


def test_past_the_walks_limit_a_protected_name_written_outside_the_project_is_unresolved(machine, monkeypatch):
    monkeypatch.setattr(shell_mounts, "MOUNT_LIMIT", 2)
    shared = machine["shared"]
    for command in (f"echo x > {shared}/c/.envrc", f"cp -r {shared}/pkg {shared}/c/", f"touch {shared}/c/.*rc"):
        assert ("write", "outside") in touched(machine, command), command
    # a name no pattern gives under the project lands, through a link not looked at, on a plain project file
    assert touched(machine, f"echo x > {shared}/c.txt") == {("write", "tmp")}
    assert touched(machine, "echo x > out.txt") == {("write", "tmp")}    # inside the project: no walk needed


def test_a_pattern_less_a_folder_keeps_what_it_matches_under_it():
    def below(target: str, folder: str) -> set[str]:
        comps = tuple(Comp(p) for p in folder.split("/") if p)
        return {"/".join(c.text for c in rest) for rest in _below(split_pattern(target), comps, dot_rule=True)}

    assert below("/t/x/.envrc", "/t/x") == {".envrc"}
    assert below("/t/*/.envrc", "/t/x") == {".envrc"}
    assert below("/t/*/.envrc", "/t/.x") == set()          # bash's `*` skips a dotted name
    assert below("/t/**", "/t/x/y") == {"**"}
    assert below("/**/.git/config", "/t/x") == {"**/.git/config"}   # the `**` may stand for names under it too
    assert below("/t/x", "/t/x") == {""}
    assert below("/t", "/t/x") == set()
    assert below("/u/x/.envrc", "/t/x") == set()


def test_a_link_loop_and_a_link_to_the_project_itself_end_the_walk(tmp_path):
    project = tmp_path / "p"
    (project / "a").mkdir(parents=True)
    os.symlink(tmp_path / "loop", project / "a" / "l")
    os.symlink(tmp_path / "loop", tmp_path / "loop")            # a link to itself
    os.symlink(project, project / "self")
    os.symlink(tmp_path, project / "up")                        # above the project: walked, the project again not
    mounts, more = shell_mounts.project_links((str(project),))
    assert not more
    assert (str(tmp_path / "loop"), f"{project}/a/l") in mounts
    assert (str(tmp_path), f"{project}/up") in mounts
    assert not any(link.endswith("/self") for _, link in mounts)
