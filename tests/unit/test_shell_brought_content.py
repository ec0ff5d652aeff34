"""What a step brings into a folder under names the disk gives (found open on 2026-11-29, the README's "still open"):
a glob's matches (`cp /tmp/x/* .` dropped `lefthook.yml`, `mise.toml`, `rust-toolchain.toml` into the project: an
undotted name is agent_config only where a command spells it), a folder copied or moved whole (`cp -r /tmp/x sub`,
`mv`, `rsync -a`: `sub/.envrc`, `sub/.claude/settings.json`), an archive unpacked into a sub-folder (`tar x -C sub`,
`unzip -d sub`). On a real disk (`follow_links`, as the hook runs) the names are read now: a glob's matches, a
folder's entries, a tar or zip archive's members; each is a write of its zone. What cannot be listed before the
command runs (a clone's files, an archive on the input or in another format, a source an earlier step of the same
command makes) makes the command unknown: a human approves what it brings unseen."""
from __future__ import annotations

import tarfile
import zipfile
from pathlib import Path

import pytest

from veriguard.enforce.shell import analyse
from tests.unit.test_shell_indirect_config import COMMANDS, ZONES, touched

pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")


@pytest.fixture
def machine(tmp_path: Path) -> dict[str, str]:
    home, project, tmp = tmp_path / "home", tmp_path / "home" / "project", tmp_path / "tmp"
    (project / "sub").mkdir(parents=True)
    (project / "src").mkdir()
    (project / "src" / "main.py").write_text("x")
    bad, good = tmp / "x", tmp / "y"
    (bad / ".claude").mkdir(parents=True)
    (bad / ".claude" / "settings.json").write_text("{}")
    (bad / ".envrc").write_text("x")
    (bad / "pkg").mkdir()
    (bad / "pkg" / ".npmrc").write_text("script-shell=/tmp/evil")
    (tmp / "u").mkdir()
    for name in ("lefthook.yml", "mise.toml", "rust-toolchain.toml", "a.txt"):
        (tmp / "u" / name).write_text("x")
    (good / "docs").mkdir(parents=True)
    (good / "a.txt").write_text("x")
    (good / "docs" / "b.md").write_text("x")
    with tarfile.open(project / "bad.tar", "w") as t:
        t.add(bad, arcname="pkg")
    with tarfile.open(project / "top.tar.gz", "w:gz") as t:
        t.add(tmp / "u" / "lefthook.yml", arcname="release/lefthook.yml")
    with tarfile.open(project / "good.tar", "w") as t:
        t.add(good, arcname="y")
    with zipfile.ZipFile(project / "bad.zip", "w") as z:
        z.writestr("pkg/.claude/settings.json", "{}")
    with zipfile.ZipFile(project / "good.zip", "w") as z:
        z.writestr("pkg/a.txt", "x")
    (project / "notes.7z").write_bytes(b"7z\xbc\xaf\x27\x1c" + bytes(32))
    return {"home": str(home), "project": str(project), "tmp": str(tmp)}


def analysed(m: dict[str, str], command: str, *, follow: bool = True):  # type: ignore[no-untyped-def]
    return analyse(command.replace("TMP", m["tmp"]), cwd=m["project"], home=m["home"], workspace=m["project"],
                   tmp=m["tmp"], commands=COMMANDS, zones=ZONES, follow_links=follow, rewrites=False)


BRINGS_CONFIG = [
    # a glob's matches: undotted names (and dotted ones the glob's match brings in a folder)
    "cp TMP/u/* .", "cp TMP/u/*.yml .", "cp TMP/u/*.toml ./", "mv TMP/u/* .", "ln -s TMP/u/* .", "install TMP/u/* .",
    "cp -t . TMP/u/*", "rsync TMP/u/* .", "cp -r TMP/x/* sub", "cd sub && cp -r TMP/x/* .",
    # a folder copied or moved whole into a sub-folder
    "cp -r TMP/x sub", "cp -a TMP/x sub/", "cp -r TMP/x/. sub", "cp -R TMP/x src/vendor", "mv TMP/x sub",
    "mv TMP/x sub/", "rsync -a TMP/x/ sub/", "rsync -a TMP/x sub", "cp -r TMP/x/pkg sub",
    # an archive unpacked there: its members, also less leading folders (--strip-components, unzip -j)
    "tar xf bad.tar -C sub", "tar -xf bad.tar --directory=sub", "tar -C sub -xf bad.tar", "tar xzf top.tar.gz",
    "tar xzf top.tar.gz --strip-components=1", "cd sub && tar xf ../bad.tar", "unzip bad.zip -d sub",
    "unzip -o bad.zip -d sub/", "unzip -j bad.zip -d sub", "bsdtar xf bad.tar -C sub",
]
ORDINARY = [
    "cp TMP/y/* .", "cp -r TMP/y sub", "cp -r TMP/y/. sub", "mv TMP/y sub", "rsync -a TMP/y/ sub/", "cp -r src dist",
    "cp src/*.py sub/", "tar xf good.tar -C sub", "unzip good.zip -d sub", "tar xf bad.tar -C TMP/out",
    "unzip bad.zip -d TMP/out", "cp -r TMP/x TMP/z", "tar xf missing.tar -C sub", "cp -r TMP/missing sub",
    "tar czf TMP/b.tgz sub", "git clone https://x.example/u/r TMP/r",
]
UNSEEN = [
    "git clone https://x.example/u/r sub", "git clone https://x.example/u/r", "gh repo clone u/r vendor/r",
    "curl -sL https://x.example/a.tgz | tar xz -C sub", "tar xf - -C sub < bad.tar", "7z x notes.7z -osub",
    "mkdir -p TMP/z/.claude && echo '{}' > TMP/z/.claude/settings.json && cp -r TMP/z sub",
    "curl -o a.tar https://x.example/a.tar && tar xf a.tar -C sub",
    "git submodule add https://x.example/u/r lib", "git submodule add https://x.example/u/r", "git worktree add wt main",
]


@pytest.mark.parametrize("command", BRINGS_CONFIG)
def test_a_protected_name_the_disk_gives_is_a_write_of_its_zone(machine, command):
    assert ("write", "agent_config") in analysed(machine, command).touched, command


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_copies_and_unpacking_stay_allowed(machine, command):
    a = analysed(machine, command)
    assert ("write", "agent_config") not in a.touched and a.kind != "unknown", (command, a.account)


@pytest.mark.parametrize("command", UNSEEN)
def test_what_cannot_be_listed_before_it_runs_needs_approval(machine, command):
    a = analysed(machine, command)
    assert a.kind == "unknown", (command, a.account)


def test_the_names_are_read_from_the_disk_at_each_decision(machine):
    assert ("write", "agent_config") not in analysed(machine, "cp -r TMP/y sub").touched
    Path(machine["tmp"], "y", "docs", ".envrc").write_text("x")
    assert ("write", "agent_config") in analysed(machine, "cp -r TMP/y sub").touched


def test_a_tar_archive_is_read_from_where_the_command_starts(machine):
    """tar opens `-f ARCHIVE` in its starting folder, whatever -C names (it was read under the -C folder)."""
    a = analysed(machine, "tar -C sub -xf bad.tar", follow=False)
    assert any(p.endswith("/project/bad.tar") for _, p, _ in a.paths), a.paths


@pytest.mark.parametrize("command", [
    "cd /tmp/evil && cp --parents .claude/settings.json /home/dev/project",
    "cd /tmp/evil && cp --parents .claude/settings.json /home/dev/project/", "cp --parents /tmp/evil/.envrc sub",
    "cd /tmp/evil && cp -P --parents .claude/settings.json ~/project"])
def test_a_copy_that_keeps_its_sources_paths_writes_the_folder_whole(command):
    """`cp --parents SRC DIR` writes DIR/SRC (found open on 2026-11-29 evening: read as DIR/NAME, it wrote
    .claude/settings.json as `settings.json`, a workspace file)."""
    assert ("write", "agent_config") in touched(command), command
