"""A glob that begins an argument is replaced by names from the disk, and a name that starts with `-` is then read as
an option (found open on 2026-11-29, evening: `tar cf /tmp/a.tar *` in a folder holding a file named
`--checkpoint-action=exec=sh x.sh` was allowed, and tar ran the script; `rsync -a * dst` beside `-e sh x.sh`, `rm *`
beside `-rf`). Such a command is unknown now when a match on disk starts with `-`; `./*` and `src/*` begin with a
literal and are read as before."""
from __future__ import annotations

from pathlib import Path

import pytest

from veriguard.enforce.shell import analyse
from tests.unit.test_shell_indirect_config import COMMANDS, ZONES

pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")


def kind(command: str, cwd: Path) -> str:
    return analyse(command, cwd=str(cwd), home="/home/dev", workspace=str(cwd), commands=COMMANDS, zones=ZONES,
                   rewrites=False, content=True).kind


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    for name in ("--checkpoint=1", "--checkpoint-action=exec=sh x.sh", "x.sh", "a.txt"):
        (tmp_path / name).write_text("")
    (tmp_path / "sub").mkdir()
    return tmp_path


@pytest.mark.parametrize("command", ["tar cf /tmp/a.tar *", "tar cf /tmp/a.tar -- *", "rsync -a * /tmp/w/",
                                     "chmod 644 *", "ls -- [-a]*", "cat ?-checkpoint=1", "cd sub && cat ../x.sh; ls *"])
def test_a_glob_that_matches_an_option_like_name_is_unknown(folder: Path, command: str) -> None:
    assert kind(command, folder) == "unknown", command


@pytest.mark.parametrize("command", ["tar cf /tmp/a.tar ./*", "cat *.txt", "ls sub/*", "cat x.*"])
def test_globs_that_cannot_begin_with_a_dash_stay_as_they_were(folder: Path, command: str) -> None:
    assert kind(command, folder) != "unknown", command


def test_the_same_glob_in_a_folder_without_such_names_stays_as_it_was(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("")
    assert kind("tar cf /tmp/a.tar *", tmp_path) != "unknown"
