"""The shell extractor on arbitrary text and on mutations of the labelled commands: an analysis or an
ExtractionError, never another exception; and a secret read appended to any command is always seen."""
from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from veriguard.enforce.extract_errors import ExtractionError
from veriguard.enforce.shell import analyse
from veriguard.enforce.shell_table import load_commands, load_zones
from tests.conftest import examples

ROOT = Path(__file__).resolve().parents[2]
TABLE = load_commands(ROOT / "specs" / "shell_agent" / "commands.toml")
ZONES = load_zones(ROOT / "specs" / "shell_agent" / "zones.toml")
COMMANDS = [json.loads(line)["command"] for line in
            (ROOT / "tests" / "data" / "shell_commands.jsonl").read_text(encoding="utf-8").splitlines() if line]
SHELL_CHARS = list("|&;<>()$`\\\"' \t\n*?[]{}~=#!-/.,:@%^+") + ["$(", "${", "<<", ">>", "&&", "||", "<(", "EOF"]


def outcome(command: str):
    try:
        return analyse(command, cwd="/home/dev/project", home="/home/dev", commands=TABLE, zones=ZONES)
    except ExtractionError as e:
        assert e.code.startswith("extract.") and e.message
        return None


@st.composite
def mutated(draw) -> str:
    text = draw(st.sampled_from(COMMANDS))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["insert", "delete", "replace", "duplicate"]))
        piece = draw(st.sampled_from(SHELL_CHARS) | st.text(max_size=3))
        if op == "insert":
            text = text[:at] + piece + text[at:]
        elif op == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 5)):]
        elif op == "replace":
            text = text[:at] + piece + text[at + 1:]
        else:
            text = text[:at] + text[at:at + 8] + text[at:]
    return text


@settings(max_examples=examples(400), deadline=2000, database=None)
@given(st.lists(st.sampled_from(SHELL_CHARS) | st.text(max_size=4), max_size=30).map("".join))
def test_random_text_is_analysed_or_refused(command: str) -> None:
    outcome(command)


@settings(max_examples=examples(600), deadline=2000, database=None)
@given(mutated())
def test_mutated_commands_are_analysed_or_refused(command: str) -> None:
    outcome(command)


@settings(max_examples=examples(300), deadline=2000, database=None)
@given(st.sampled_from(COMMANDS), st.sampled_from(["\n", " ; ", " && ", " || ", " | "]))
def test_a_key_read_after_any_command_is_seen(command: str, joiner: str) -> None:
    a = outcome(command + joiner + "cat /home/dev/.ssh/id_rsa")
    assert a is None or ("read", "ssh_keys") in a.touched, a.how
