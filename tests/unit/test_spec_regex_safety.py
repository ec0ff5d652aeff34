"""A spec's regular expressions run on the agent's text (the classifier bank's cues, the command table's
`separate`): contracts/regex_safety.py refuses nested repetition and backreferences wherever one is read,
with the file, the key, the pattern, why and the fix; every shipped pattern passes."""
from __future__ import annotations

import dataclasses
import re
import time
import tomllib
from pathlib import Path

import pytest

from veriguard.contracts.errors import SpecError
from veriguard.contracts.regex_safety import UnsafeRegex, check_regex, regex_problem
from veriguard.enforce.categories import parse_bank
from veriguard.enforce.extract_errors import ExtractionError
from veriguard.enforce.shell_table import load_commands

SPECS = Path(__file__).resolve().parents[2] / "specs"
BANK = SPECS / "mind2web_sc" / "categories.toml"
HEAD = 'class_order = ["unknown", "read_only"]\nunknown_class = "unknown"\n'


@pytest.mark.parametrize("pattern", [
    r"zebra(\s?\w+)+#", r"|\.[^ ]*|(\w?\w)+#", r"(a+)+", r"(a*)*b", r"(?:a|b?c)+", r"((ab)*c)*", r"(a{1,3}){4}",
    r"(x(?:y|z+))+", r"(?=(a+))+", r"(?>a*)+", r"(a+)++", r"(a+?)+",
])
def test_nested_repetition_is_refused(pattern: str) -> None:
    assert "repeats a group" in regex_problem(pattern)


@pytest.mark.parametrize("pattern", [r"(a|aa)+b", r"(?:\w|_x)+#", r"(?:ab|a)*c", r"(?:x|)+y", r"(?:a|(?:b|ab))+c",
                                     r"(?:[ab]c|a)+d", r"(?:foo|fo){4,}"])
def test_overlapping_alternatives_in_a_long_repeat_are_refused(pattern: str) -> None:
    assert "alternatives which may start alike" in regex_problem(pattern)


@pytest.mark.parametrize("pattern", [r"(a)\1", r"(?P<x>a)(?P=x)", r"(a)?(?(1)b|c)"])
def test_a_backreference_is_refused(pattern: str) -> None:
    assert "backreference" in regex_problem(pattern)


@pytest.mark.parametrize("pattern", [
    r"\bhotels?\b", r"(\W+\w+){0,3}\W+(movies?|films?)", r"(a{2})+", r"(?:ab|cd)+", r"(a{1,2}){3}", r"\d+\w*x",
    r"|\.[^ ]*", r"(?<!not )\b(buy|rent)\b", r"[\s\w]*\w",
])
def test_unambiguous_patterns_pass(pattern: str) -> None:
    assert regex_problem(pattern) == ""


def test_the_error_names_the_key_the_pattern_why_and_the_fix() -> None:
    with pytest.raises(UnsafeRegex) as e:
        check_regex(r"zebra(\s?\w+)+#", "[categories.media] cues")
    text = str(e.value)
    assert text.startswith("[categories.media] cues: pattern 'zebra(\\\\s?\\\\w+)+#' repeats a group (`+`)")
    assert "fix: " in text and e.value.fix and isinstance(e.value, ValueError)
    with pytest.raises(re.error):
        check_regex("(", "x")


def _patterns(raw: dict) -> list[str]:
    kinds = ("cues", "acts", "asides")
    return [p for body in raw.get("categories", {}).values() for k in kinds for p in body.get(k, [])] + \
        raw.get("asides", {}).get("cues", [])


def test_every_shipped_pattern_passes() -> None:
    for spec in SPECS.rglob("*.toml"):
        raw = tomllib.loads(spec.read_text(encoding="utf-8"))
        for p in _patterns(raw):
            assert regex_problem(p, re.IGNORECASE) == "", (spec, p)
    assert parse_bank(BANK.read_text(encoding="utf-8")).names
    for folder in ("shell_agent", "os_agent"):
        load_commands(SPECS / folder / "commands.toml")


@pytest.mark.parametrize("kind", ["cues", "acts", "asides"])
def test_a_bank_cue_that_backtracks_is_refused_with_its_key(kind: str) -> None:
    text = BANK.read_text(encoding="utf-8") + f"\n[categories.zebra]\npositives = ['a zebra']\n{kind} = ['zebra(\\s?\\w+)+#']\n"
    t = time.monotonic()
    with pytest.raises(UnsafeRegex) as e:
        parse_bank(text)
    assert time.monotonic() - t < 5
    assert str(e.value).startswith(f"[categories.zebra] {kind}: pattern 'zebra") and "fix:" in str(e.value)


def test_a_shared_aside_that_backtracks_is_refused() -> None:
    text = BANK.read_text(encoding="utf-8").replace("[asides]\ncues = [", "[asides]\ncues = ['(a|b?)+c', ", 1)
    with pytest.raises(UnsafeRegex, match=r"^\[asides\] cues: pattern"):
        parse_bank(text)


def test_synth_refuses_the_bank_at_its_file(tmp_path: Path) -> None:
    from veriguard.synth.classifier_build import freeze_classifier
    from veriguard.synth.specfile import load_spec

    spec = load_spec(SPECS / "mind2web_sc.toml")
    text = BANK.read_text(encoding="utf-8").replace("[asides]\ncues = [", "[asides]\ncues = ['(\\w+\\s?)*#', ", 1)
    (tmp_path / "bank.toml").write_text(text, encoding="utf-8")
    moved = dataclasses.replace(spec, path=str(tmp_path / "mind2web_sc.toml"))
    with pytest.raises(SpecError) as e:
        freeze_classifier(moved, "task", {**spec.extraction["task"], "bank": "bank.toml"})
    assert e.value.code == "spec.bank" and e.value.file == str(tmp_path / "bank.toml")
    assert "[asides] cues: pattern" in e.value.message and "repeats a group" in e.value.message


@pytest.mark.parametrize("separate, needle", [
    (r"|\\.[^ ]*|(\\w?\\w)+#", "repeats a group"),
    (r"(x)\\1", "backreference"),
    ("3", "expected a regular expression"),
])
def test_a_command_tables_separate_that_backtracks_is_refused(tmp_path: Path, separate: str, needle: str) -> None:
    f = tmp_path / "commands.toml"
    value = f'"{separate}"' if separate != "3" else "3"
    f.write_text(HEAD + '[commands.zz]\nclass = "read_only"\n[commands.zz.options]\n'
                 f'"-i" = {{ value = "none", attached = true, separate = {value} }}\n', encoding="utf-8")
    with pytest.raises(ExtractionError, match=needle) as e:
        load_commands(f)
    assert str(f) in e.value.message and "[commands.zz].options.'-i'.separate: " in e.value.message
    if needle != "expected a regular expression":
        assert "fix:" in e.value.message
