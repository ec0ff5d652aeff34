"""The cost of following links on disk (red-team pass on a real disk, 2026-11-29): a project with 5,000 links to
folders elsewhere (a pnpm store) cost about 5 ms per link for each `grep -r` decision, twice (both shell arguments),
past the hook's 20 s limit, so every recursive read there was denied. Only the `touched` argument follows links, and
the exact zone test of a link's target runs only where a fast test says it could add a zone."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

import veriguard.enforce.shell as shell
from veriguard.enforce.shell import analyse
from tests.unit.test_shell import extractors, policy   # noqa: F401  (a fixture)
from tests.unit.test_shell_indirect_config import COMMANDS, ZONES

pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")


@pytest.fixture
def store(tmp_path: Path) -> dict[str, Path]:
    """A project whose node_modules links to 200 folders of a store beside it, and one link to ~/.ssh."""
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".ssh").mkdir(parents=True)
    (project / "node_modules").mkdir(parents=True)
    for i in range(200):
        (tmp_path / "store" / f"p{i}").mkdir(parents=True)
        os.symlink(tmp_path / "store" / f"p{i}", project / "node_modules" / f"p{i}")
    return {"home": home, "project": project}


def test_the_command_argument_does_not_walk_the_links(policy, store, monkeypatch):   # noqa: F811
    def refuse(self, folder):
        raise AssertionError(f"walked {folder}")

    monkeypatch.setattr(shell._Walk, "links_under", refuse)
    ex = extractors(policy)
    obs = {"command": "grep -r foo .", "cwd": str(store["project"]), "home": str(store["home"]),
           "workspace": str(store["project"]), "approved": False}
    assert ex["command"].extract(obs).value["kind"] == "read_only"
    with pytest.raises(AssertionError, match="walked"):
        ex["touched"].extract(obs)


def test_links_whose_zones_are_touched_already_skip_the_exact_test(store, monkeypatch):
    calls = []
    exact = shell._zones_of

    def counted(zones, path, *, recursive=False):
        calls.append(path)
        return exact(zones, path, recursive=recursive)

    monkeypatch.setattr(shell, "_zones_of", counted)
    os.symlink(store["home"] / ".ssh", store["project"] / "node_modules" / "keys")
    ws = str(store["project"])
    got = analyse("grep -r foo .", cwd=ws, home=str(store["home"]), workspace=ws, commands=COMMANDS, zones=ZONES,
                  follow_links=True).touched
    assert ("read", "ssh_keys") in got
    assert len(calls) < 20        # not one per link
