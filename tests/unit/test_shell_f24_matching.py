"""The zone map's matching after [copies] (2026-11-30, morning, helper F24): each secret's name under four more
suffixes added some 360 patterns, most of them globs with two `*` (`*.key.*`), which the two-pointer matcher read in
Python one character at a time: `veriguard eval shell`'s commands took about twice the analysis time. A glob of `*`
and literal text alone is now matched by finding its literal pieces in order, and a path whose last name is literal
skips the patterns that end in another literal name."""
from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from veriguard.enforce import shell_table
from veriguard.enforce.shell_table import glob_match, load_zones, split_pattern

ZONES = Path(__file__).resolve().parents[2] / "specs" / "shell_agent" / "zones.toml"


def _reference(pattern: str, name: str) -> bool:
    return re.fullmatch("[^/]*".join(map(re.escape, pattern.split("*"))), name) is not None


def test_globs_of_stars_and_text_are_matched_without_the_character_matcher(monkeypatch: pytest.MonkeyPatch) -> None:
    def slow(*_: object) -> bool:
        raise AssertionError("the character-by-character matcher ran")

    monkeypatch.setattr(shell_table, "_match_greedy", slow)
    rng = random.Random(24)
    for _ in range(3000):
        pattern = "".join(rng.choice("ab.*") for _ in range(rng.randint(2, 8)))
        if pattern.count("*") < 2:
            continue
        name = "".join(rng.choice("ab.") for _ in range(rng.randint(0, 10)))
        assert glob_match(pattern, name, dot_rule=False) == _reference(pattern, name), (pattern, name)
    assert glob_match("*.key.*", "server.key.bak", dot_rule=True)
    assert not glob_match("*.key.*", "server.keys", dot_rule=True)
    assert not glob_match("*.key.*", ".key.x", dot_rule=True)      # a leading dot is matched by a dot only


def test_a_literal_name_skips_the_patterns_that_end_in_another_one(monkeypatch: pytest.MonkeyPatch) -> None:
    zones = load_zones(ZONES).compile("/w", "/h", "/tmp", (), (), ())
    seen: list[tuple[shell_table.Comp, ...]] = []
    real = shell_table._intersect

    def counted(t: tuple[shell_table.Comp, ...], z: tuple[shell_table.Comp, ...], *, dot_rule: bool) -> bool:
        seen.append(z)
        return real(t, z, dot_rule=dot_rule)

    monkeypatch.setattr(shell_table, "_intersect", counted)
    assert zones.of(split_pattern("/w/src/main.py")) == ["workspace"]
    nested = {z for _, patterns in zones.nested for z in patterns}
    mapped = {z for _, patterns in (*zones.zones, *zones.folded) for z in patterns} - nested
    ends = [z[-1] for z in seen if z in mapped and z]      # [zones] patterns ([nested] ones are matched apart)
    assert ends and not [c.text for c in ends if not c.glob and not c.star2 and c.text != "main.py"]
    assert zones.of(split_pattern("/w/deploy/server.key.bak"))[0] == "project_secrets"
    assert zones.of(split_pattern("/w/.env")) == ["project_secrets"]
    assert zones.of(split_pattern("/w/.env.example")) == ["workspace"]
