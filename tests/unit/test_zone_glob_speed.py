"""Zone globs are data; the agent chooses the file names they are matched against. A component's glob is
matched in time linear in the name (enforce/shell_table.glob_match), and matches what its regex matched."""
from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from veriguard.enforce.shell import analyse
from veriguard.enforce.shell_table import _component_regex, _glob_match, glob_match, load_commands, load_zones

SPECS = Path(__file__).resolve().parents[2] / "specs"
HOSTILE = "*a" * 12 + "*b"
# Not a speed target (scripts/bench_globs.py measures what globs cost a decision): a bound that only a
# backtracking matcher misses. Twelve `*a` took the old regex 8 s on 30 characters and would take years on 10,000;
# the linear matcher takes well under a second unloaded, and several seconds on a machine loaded tenfold.
CATASTROPHIC_S = 30.0


def test_many_stars_match_in_linear_time() -> None:
    for name in ("a" * 30, "a" * 10_000, "a" * 64 * 1024):
        start = time.monotonic()
        assert not glob_match(HOSTILE, name, dot_rule=True)
        assert not _glob_match(HOSTILE, name + "/")
        assert time.monotonic() - start < CATASTROPHIC_S, len(name)
    assert glob_match(HOSTILE, "a" * 12 + "b", dot_rule=True) and not glob_match(HOSTILE, "a" * 11 + "b", dot_rule=True)


@pytest.mark.parametrize("pattern, name, dot_rule, matches", [
    ("*.pem", "key.pem", True, True), ("*.pem", ".pem", True, False), ("*.pem", ".pem", False, True),
    ("*_key*", "ssh_host_key.pub", True, True), ("*[!a]*x", "b/cx", False, True), ("*?*", "/", False, False),
    ("a*b*c", "a/b/c", False, False), ("a*b*c", "abbbc", False, True), ("\\**\\*", "*x*", False, True),
    ("[ab]*[!c]*", "acd", False, True), ("[ab]*[!c]*", "ccd", False, False), ("?*?*", ".ab", True, False),
    ("**.env", "x.env", True, True),
])
def test_the_matcher_matches_what_the_regex_matched(pattern: str, name: str, dot_rule: bool,  # noqa: FBT001
                                                    matches: bool) -> None:  # noqa: FBT001
    assert glob_match(pattern, name, dot_rule=dot_rule) is matches
    assert (_component_regex(pattern, dot_rule=dot_rule).fullmatch(name) is not None) is matches


def test_the_matcher_agrees_with_the_regex_on_random_globs() -> None:
    rng = random.Random(7)
    pieces = ["a", "b", ".", "*", "?", "[ab]", "[!a]", "[^.]", "\\*", "[a-b]", "[", "]"]
    for _ in range(5000):
        pattern = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))
        name = "".join(rng.choice("ab./*[") for _ in range(rng.randint(0, 7)))
        for dot_rule in (False, True):
            for loose in (False, True):
                want = _component_regex(pattern, dot_rule=dot_rule, loose=loose).fullmatch(name) is not None
                assert glob_match(pattern, name, dot_rule=dot_rule, loose=loose) is want, (pattern, name, dot_rule, loose)


def test_a_hostile_zone_pattern_does_not_slow_the_analysis(tmp_path: Path) -> None:
    text = (SPECS / "shell_agent" / "zones.toml").read_text(encoding="utf-8")
    text = text.replace('ssh_keys = ["{home}/.ssh/**",', f'ssh_keys = ["{{workspace}}/{HOSTILE}", "{{home}}/.ssh/**",', 1)
    (tmp_path / "zones.toml").write_text(text, encoding="utf-8")
    zones = load_zones(tmp_path / "zones.toml")
    commands = load_commands(SPECS / "shell_agent" / "commands.toml", lazy=True)
    start = time.monotonic()
    for n in (20, 30, 40):
        a = analyse(f"cat {'a' * n}", cwd="/w", home="/h", commands=commands, zones=zones)
        assert a.touched == (("read", "workspace"),)
    a = analyse(f"cat {'a' * 12}b", cwd="/w", home="/h", commands=commands, zones=zones)
    assert a.touched == (("read", "ssh_keys"),)
    assert time.monotonic() - start < CATASTROPHIC_S
