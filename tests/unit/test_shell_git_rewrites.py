"""Git commands that rewrite their work tree, checked against real repositories made here: which files
the repository says they may write (enforce/shell_git.py), and the whole work tree where it cannot say."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.unit.test_compile_and_freeze import fake_result
from veriguard.enforce.extract_errors import ExtractionError
from veriguard.enforce.monitor import Monitor
from veriguard.enforce.shell import analyse
from veriguard.enforce.shell_git import Repository, Unresolved, written
from veriguard.enforce.shell_table import load_commands, load_zones
from veriguard.synth.freeze import write_build
from veriguard.synth.specfile import load_spec

SPEC = ROOT / "specs" / "shell_agent"
COMMANDS = load_commands(SPEC / "commands.toml")
ZONES = load_zones(SPEC / "zones.toml")
CHANGES = {"write", "delete"}


def git(repo: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="a", GIT_AUTHOR_EMAIL="a@b", GIT_COMMITTER_NAME="a",
               GIT_COMMITTER_EMAIL="a@b", GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def commit_files(repo: Path, files: dict[str, str], message: str) -> None:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """main: the hook in .claude/settings.json; `evil`: the hook removed; `feature`: a source change only;
    origin/remote-evil: a remote-tracking branch that removes the hook."""
    project = tmp_path / "home" / "project"
    project.mkdir(parents=True)
    git(project, "init", "-q", "-b", "main")
    commit_files(project, {".claude/settings.json": '{"hooks": "veriguard"}\n', "src/a.py": "a\n", "README.md": "r\n"},
                 "init")
    git(project, "checkout", "-qb", "evil")
    commit_files(project, {".claude/settings.json": "{}\n"}, "drop the hook")
    git(project, "checkout", "-qb", "feature", "main")
    commit_files(project, {"src/a.py": "a\nb\n"}, "feature")
    git(project, "update-ref", "refs/remotes/origin/remote-evil", "evil")
    git(project, "checkout", "-q", "main")
    return project


def touched(repo: Path, command: str, *, cwd: Path | None = None, ask_git: bool = True) -> set[tuple[str, str]]:
    a = analyse(command, cwd=str(cwd or repo), home=str(repo.parent), workspace=str(repo), commands=COMMANDS,
                zones=ZONES, ask_git=ask_git)
    return set(a.touched)


def rewrites_config(repo: Path, command: str, **kw: object) -> bool:
    return any(acc in CHANGES and zone == "agent_config" for acc, zone in touched(repo, command, **kw))  # type: ignore[arg-type]


TO_EVIL = ["git checkout evil", "git switch evil", "git merge evil", "git rebase evil", "git cherry-pick main..evil",
           "git reset --hard evil", "git checkout evil -- .", "git checkout -b x evil", "git switch -c x evil",
           "git checkout remote-evil", "git restore --source=evil .", "git -C src checkout evil",
           "cd src && git checkout evil", "git status && git checkout evil", "git checkout -q --detach evil",
           "git merge --no-ff -m 'x' evil", "git rebase --onto evil main feature", "git checkout -f evil",
           "git checkout evil^{tree} .", "git checkout 'evil^{tree}' -- .", "git restore --source=evil^{tree} ."]


def test_a_sub_folder_of_a_commit_checked_out_at_the_top_writes_its_files_there(repo: Path) -> None:
    """`git checkout REV:FOLDER -- .` writes FOLDER's files at the top of the work tree."""
    commit_files(repo, {"src/.envrc": "echo hi\n"}, "a file named as direnv's, in a sub-folder")
    for command in ("git checkout main:src -- .", "git checkout main:src .", "git restore --source=main:src ."):
        assert rewrites_config(repo, command), command
HARMLESS = ["git checkout feature", "git switch feature", "git merge feature", "git rebase feature",
            "git cherry-pick main..feature", "git reset --hard feature", "git checkout evil -- src",
            "git checkout -b x feature", "git checkout -b x", "git switch -c y", "git stash list", "git restore .",
            "git checkout -- .", "git stash", "git reset --hard", "git clean -fd", "git status; git checkout feature",
            "git checkout feature 2>/dev/null", "git clean -n", "git checkout nonexistent-branch",
            "git merge -X theirs -s ort feature", "git cherry-pick -X ours main..feature",
            "git checkout evil:.claude -- settings.json"]   # the sub-folder's settings.json lands at the top


@pytest.mark.parametrize("command", TO_EVIL)
def test_a_git_command_that_would_rewrite_the_agents_configuration_writes_it(repo: Path, command: str) -> None:
    assert rewrites_config(repo, command), touched(repo, command)


@pytest.mark.parametrize("command", HARMLESS)
def test_a_git_command_that_leaves_the_agents_configuration_as_it_is_does_not(repo: Path, command: str) -> None:
    assert not rewrites_config(repo, command), touched(repo, command)


@pytest.mark.parametrize("command", ["git stash", "git restore .", "git checkout -- .", "git reset --hard",
                                     "git checkout -f feature", "git switch --discard-changes feature",
                                     "git stash push -- .claude"])
def test_discarding_a_local_change_of_the_configuration_rewrites_it(repo: Path, command: str) -> None:
    (repo / ".claude" / "settings.json").write_text('{"hooks": "veriguard", "more": 1}\n')
    assert rewrites_config(repo, command), touched(repo, command)
    assert not rewrites_config(repo, "git restore src"), "a restore elsewhere does not touch it"


def test_cleaning_removes_untracked_configuration_files(repo: Path) -> None:
    (repo / ".claude" / "settings.local.json").write_text('{"hooks": "veriguard"}\n')
    for command in ("git clean -fd", "git clean -fdx", "git clean -f -x -d", "git clean -fX"):
        assert rewrites_config(repo, command), command
    for command in ("git clean -n -d", "git clean -fx src"):
        assert not rewrites_config(repo, command), command


def test_popping_a_stash_writes_what_the_stash_holds(repo: Path) -> None:
    (repo / ".claude" / "settings.json").write_text("{}\n")
    git(repo, "stash", "-q")
    assert rewrites_config(repo, "git stash pop")
    assert rewrites_config(repo, "git stash apply stash@{0}")
    git(repo, "stash", "drop", "-q")
    (repo / ".claude" / "settings.local.json").write_text("{}\n")
    git(repo, "stash", "-q", "-u")
    assert rewrites_config(repo, "git stash pop"), "the stash's untracked files are written too"


@pytest.mark.parametrize("command", [
    "git pull", "git pull --rebase", "git fetch && git checkout feature", "git checkout feature > log.txt",
    "git checkout feature && git checkout main", "for b in feature main; do git checkout $b; done",
    "git checkout --no-such-option feature", "GIT_DIR=.git git checkout feature", "git checkout $BRANCH",
    "git bisect start", "git read-tree -u HEAD", "echo x > .git/refs/heads/feature && git checkout feature",
    "git rebase --continue", "git merge --abort", "git reflog delete HEAD@{0} && git checkout -",
    # strategies that put their files elsewhere (subtree: under a folder) or run a program git-merge-NAME
    "git merge -s subtree feature", "git merge -X subtree=.claude feature", "git merge -X ours -X subtree=.x feature",
    "git cherry-pick -X subtree=.claude main..feature", "git rebase -s mine feature", "git merge --strategy=x feature",
    # git takes a unique prefix of a long option: `--ha` is --hard, so only words this reading knows are plain
    "git reset --ha evil", "git reset --har", "git restore --stag --work .", "git clean --dry --force -d -x"])
def test_what_the_repository_cannot_answer_counts_as_the_whole_work_tree(repo: Path, command: str) -> None:
    assert rewrites_config(repo, command), touched(repo, command)


def test_outside_a_repository_git_writes_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "home" / "plain"
    folder.mkdir(parents=True)
    assert touched(folder, "git checkout main") <= {("read", "tmp"), ("write", "tmp")}
    with pytest.raises(ExtractionError) as e:
        touched(folder, "mkdir r && cd r && git init && git checkout main")
    assert e.value.code == "extract.shell.git"


def test_without_ask_git_a_rewrite_is_refused_unless_its_words_show_it_writes_nothing(repo: Path) -> None:
    with pytest.raises(ExtractionError) as e:
        touched(repo, "git checkout feature", ask_git=False)
    assert e.value.code == "extract.shell.git" and "ask_git = true" in str(e.value)
    for command in ("git checkout -b new", "git stash list", "git reset --soft HEAD~1", "git restore --staged .",
                    "git clean -n"):
        assert not rewrites_config(repo, command, ask_git=False), command


def test_asking_the_repository_runs_none_of_its_programs(repo: Path, tmp_path: Path) -> None:
    """A repository the agent configured (one in tmp, say) cannot make the monitor run a program: fsmonitor, a
    clean filter on a file the monitor compares, a diff driver and a pager would each leave a marker."""
    marker = tmp_path / "ran"
    program = tmp_path / "prog.sh"
    program.write_text(f"#!/bin/sh\necho ran >> {marker}\ncat\n")
    program.chmod(0o755)
    for key in ("core.fsmonitor", "filter.x.clean", "filter.x.smudge", "diff.x.textconv", "diff.external",
                "core.pager", "filter.x.process"):
        git(repo, "config", key, str(program))
    commit_files(repo, {".gitattributes": "* filter=x diff=x\n"}, "attributes")
    marker.unlink(missing_ok=True)
    (repo / ".claude" / "settings.json").write_text("{}\n")
    (repo / ".claude" / "settings.local.json").write_text("{}\n")
    for command in ("git checkout evil", "git stash", "git restore .", "git clean -fd", "git merge evil"):
        assert rewrites_config(repo, command), command
    assert not marker.exists(), marker.read_text()


def test_the_answer_is_a_superset_of_what_git_then_writes(repo: Path) -> None:
    """The files `written` names (all relevant here) against those the command really changed."""
    top = Repository.find(str(repo))
    assert isinstance(top, Repository)
    cases = [("merge", ["feature"]), ("cherry-pick", ["feature..evil"]), ("reset", ["--hard", "evil"]),
             ("checkout", ["feature"]), ("checkout", ["-"]), ("revert", ["--no-edit", "HEAD"])]
    for sub, args in cases:
        before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts}
        said = written(top, sub, args, lambda p: True)
        assert not isinstance(said, Unresolved), said
        git(repo, sub, *args)
        after = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts}
        changed = {str(p.relative_to(repo)) for p in set(before) | set(after) if before.get(p) != after.get(p)}
        assert changed <= said, (sub, args, changed - said)
        assert changed, f"git {sub} {args} changed nothing: the case tests nothing"
        top = Repository.find(str(repo))
        assert isinstance(top, Repository)


@pytest.fixture(scope="module")
def monitor(tmp_path_factory: pytest.TempPathFactory) -> Monitor:
    build = write_build(fake_result(load_spec(ROOT / "specs" / "shell_agent.toml")),
                        tmp_path_factory.mktemp("git_rewrites"), run_info={})[0]
    return Monitor.from_build(build)


def test_the_shipped_spec_asks_the_repository(monitor: Monitor, repo: Path) -> None:
    def allowed(command: str, *, approved: bool = False) -> bool:
        return monitor.check({"command": command, "cwd": str(repo), "home": str(repo.parent),
                              "workspace": str(repo), "approved": approved}).allowed
    assert allowed("git checkout feature") and allowed("git merge feature")
    assert not allowed("git checkout evil", approved=True)
    assert not allowed("git pull", approved=True)
    assert not allowed("git clean -fdx", approved=False) and allowed("git clean -fdx", approved=True)
    (repo / ".claude" / "settings.local.json").write_text("{}\n")
    assert not allowed("git clean -fdx", approved=True)


def test_an_alias_is_read_as_what_it_stands_for(repo: Path) -> None:
    for name, value in (("co", "checkout"), ("sw", "switch -q"), ("co2", "co"), ("sh", "!git checkout"),
                        ("st", "status")):
        git(repo, "config", f"alias.{name}", value)
    for command in ("git co evil", "git sw evil", "git co2 evil", "git sh evil"):
        assert rewrites_config(repo, command), command
    for command in ("git co feature", "git st", "git no-such-alias evil"):
        assert not rewrites_config(repo, command), command


def test_a_submodule_writes_its_whole_folder(repo: Path) -> None:
    assert rewrites_config(repo, "git submodule add https://example.com/x.git .claude")
    assert rewrites_config(repo, "git submodule add https://example.com/x.git ../.husky", cwd=repo / "src")
    assert rewrites_config(repo, "git submodule add https://example.com/.claude"), "the folder is the URL's name"
    assert not rewrites_config(repo, "git submodule add https://example.com/x.git lib/x")
    assert not rewrites_config(repo, "git submodule update --init")
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{head},.husky")
    git(repo, "commit", "-qm", "a submodule where git's hooks are looked for")
    assert rewrites_config(repo, "git submodule update --init")
    assert rewrites_config(repo, "git submodule update --init --recursive -- .husky")
    assert not rewrites_config(repo, "git submodule update --init -- src")


def test_a_name_in_another_case_is_the_protected_file_on_a_case_insensitive_disk(repo: Path) -> None:
    """On macOS a branch's `.CLAUDE/settings.json` is checked out over `.claude/settings.json`: zones match ignoring
    case, so the files the repository names are too."""
    git(repo, "checkout", "-qb", "case")
    commit_files(repo, {".CLAUDE/settings.json": "{}\n"}, "the same file in other letters")
    git(repo, "checkout", "-q", "main")
    assert rewrites_config(repo, "git checkout case") and rewrites_config(repo, "git merge case")


# git rm matches its pathspecs as git does: a wildcard crosses folders, `:/` starts at the top
REMOVES_CONFIG = ["git rm -- '*.json'", "git rm '*settings.json'", "git rm -r ':/.claude'", "git rm -r -f -- ':/.claude'",
                  "git rm -r ':(glob)**/settings.json'", "git rm ':(icase).CLAUDE/SETTINGS.JSON'",
                  "git rm --pathspec-from-file=list.txt", "git rm -q --ignore-unmatch '.clau[d]e/*'"]


@pytest.mark.parametrize("command", REMOVES_CONFIG)
def test_git_rm_deletes_the_files_its_pathspecs_match(repo: Path, command: str) -> None:
    (repo / "list.txt").write_text(".claude/settings.json\n")
    assert rewrites_config(repo, command), touched(repo, command)


@pytest.mark.parametrize("command", ["cd src && git rm ':/.claude/settings.json'", "git -C src rm -r ':/.claude'",
                                     "cd src && git rm -r ':(top).claude'"])
def test_git_rm_from_a_sub_folder_reaches_the_top_with_magic(repo: Path, command: str) -> None:
    assert rewrites_config(repo, command), touched(repo, command)


@pytest.mark.parametrize("command", ["git rm src/a.py", "git rm '*.py'", "git rm --cached -- '*.json'",
                                     "git rm -n -- '*.json'", "git rm --dry-run ':/.claude'", "git rm -r src"])
def test_git_rm_of_other_files_or_of_the_index_only_leaves_the_configuration(repo: Path, command: str) -> None:
    assert not rewrites_config(repo, command), touched(repo, command)


def test_without_ask_git_only_a_git_rm_of_plain_paths_is_judged(repo: Path) -> None:
    assert not rewrites_config(repo, "git rm src/a.py", ask_git=False)
    assert rewrites_config(repo, "git rm .claude/settings.json", ask_git=False)   # the table deletes the path itself
    with pytest.raises(ExtractionError) as e:
        touched(repo, "git rm '*.json'", ask_git=False)
    assert e.value.code == "extract.shell.git"


# A symbolic link a rewrite checks out is a link made (red-team pass on a real disk, 2026-11-29: `git checkout
# linkonly && cat keylink/id_rsa` read ~/.ssh through keylink -> ~/.ssh, which the branch commits): its target is
# written, as `ln -s` writes it.

@pytest.fixture
def linked(repo: Path) -> Path:
    home = repo.parent
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("KEY")
    git(repo, "checkout", "-qb", "linkonly")
    os.symlink(home / ".ssh", repo / "keylink")
    os.symlink("../.claude", repo / "cfglink")       # relative: from the link's folder, the home's .claude
    os.symlink("src/a.py", repo / "inside")          # a link within the project
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "links")
    git(repo, "checkout", "-q", "main")
    return repo


@pytest.mark.parametrize("command,zone", [
    ("git checkout linkonly && cat keylink/id_rsa", "ssh_keys"), ("git checkout linkonly", "ssh_keys"),
    ("git merge --ff-only linkonly", "ssh_keys"), ("git cherry-pick main..linkonly", "ssh_keys"),
    ("git checkout linkonly -- .", "ssh_keys"), ("git checkout linkonly", "agent_config"),
    ("git restore --source=linkonly .", "agent_config"),
])
def test_a_symbolic_link_a_rewrite_checks_out_writes_its_target(linked: Path, command: str, zone: str) -> None:
    assert ("write", zone) in touched(linked, command)


def test_a_link_within_the_project_is_a_project_file(repo: Path) -> None:
    git(repo, "checkout", "-qb", "inner")
    os.symlink("src/a.py", repo / "inside")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "inner link")
    git(repo, "checkout", "-q", "main")
    # the test's project lies in /tmp; a folder of it may hold a .env (project_secrets, writable)
    assert {z for _, z in touched(repo, "git checkout inner")} <= {"workspace", "tmp", "project_secrets"}
