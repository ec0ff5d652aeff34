"""Zones.beyond, the fast test the git rewrite check runs on every file a repository names, agrees with the exact
zone lookup on literal paths: under the project, above it, in the home folder and elsewhere, with the protected
names, dots and other cases mixed in."""
from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import examples
from veriguard.enforce.shell_table import load_zones, split_pattern
from veriguard.enforce.shell_words import escape_glob

ROOT = Path(__file__).resolve().parents[2]
ZONES = {spec: load_zones(ROOT / "specs" / spec / "zones.toml").compile("/home/dev/project", "/home/dev", "/tmp",
                                                                        (("guard", ("/home/dev/project/.vg",)),))
         for spec in ("shell_agent", "os_agent")}
NAMES = [".claude", "settings.json", ".envrc", ".ENVRC", ".mcp.json", ".git", "hooks", "config", ".husky", "src",
         "a.py", ".ssh", "id_rsa", ".aws", "credentials", "etc", "shadow", ".mise.toml", "mise", ".config", "x",
         "project", "dev", "home", "tmp", "proc", "1", "environ", ".vg", "policy.py", "*", "[a]", "CLAUDE", ".npmrc",
         ".Cargo", "config.toml", ".vscode", "tasks.json", "commondir", ".mise"]   # the last: zones.toml [nested]
ROOTS = ["/home/dev/project", "/home/dev", "/tmp", "/", "/etc", "/home/dev/project/.git", "/home/other", "/home/deß",
         "/home/dess/project"]


@settings(max_examples=examples(400), deadline=None)
@given(spec=st.sampled_from(sorted(ZONES)), root=st.sampled_from(ROOTS),
       parts=st.lists(st.sampled_from(NAMES), min_size=0, max_size=4),
       base=st.sampled_from([("workspace",), ("tmp",), ("home",), ("workspace", "tmp"), ("outside",)]),
       under=st.sampled_from(["", *ROOTS, "/home/dev/Project", "/HOME/dev/project/.Claude", "/home/deß"]))
def test_the_fast_test_agrees_with_the_zone_lookup(spec: str, root: str, parts: list[str], base: tuple[str, ...],
                                                   under: str) -> None:
    zones = ZONES[spec]
    path = "/" + "/".join([*root.strip("/").split("/"), *parts]).strip("/")
    exact = not set(zones.of(split_pattern(escape_glob(path)), dot_rule=True)) <= set(base)
    assert zones.beyond(base, under)(path) == exact, (path, under, zones.of(split_pattern(escape_glob(path))))
