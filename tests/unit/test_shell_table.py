"""The command table's loading: the TOML reader, and entries checked when first looked up (lazy) or
all at once."""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from veriguard.enforce.extract_errors import ExtractionError
from veriguard.enforce.shell import analyse
from veriguard.enforce.shell_table import _toml, _toml_parser, load_commands, load_zones

SPECS = Path(__file__).resolve().parents[2] / "specs"
TABLES = sorted([*SPECS.glob("*/commands.toml"), *SPECS.glob("*/zones.toml")])
HEAD = 'class_order = ["unknown", "read_only"]\nunknown_class = "unknown"\n'


def test_the_fast_reader_is_installed_and_reads_every_shipped_table_as_tomllib_does() -> None:
    loads, _ = _toml_parser()
    assert loads is not tomllib.loads, "rtoml (the shell extra) is not installed: the hook pays 10 ms more per call"
    assert len(TABLES) >= 4
    for table in TABLES:
        assert _toml(table) == tomllib.loads(table.read_text(encoding="utf-8")), table


@pytest.mark.parametrize("text", ['a = 1\na = 2\n', '[x]\n[x]\n', 'a = "\\q"\n', 'a = 1 b = 2\n',
                                  'a = { b = 1 }\n[a]\nc = 1\n', 'a.b = 1\n[a]\nc = 2\n', 'a = [1,\n'])
def test_what_tomllib_rejects_is_rejected_with_the_file_named(tmp_path: Path, text: str) -> None:
    with pytest.raises(tomllib.TOMLDecodeError):
        tomllib.loads(text)
    f = tmp_path / "t.toml"
    f.write_text(text, encoding="utf-8")
    with pytest.raises(ExtractionError, match="t.toml: not valid TOML"):
        _toml(f)


def test_a_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "t.toml"
    f.write_bytes(b'a = "\xff"\n')
    with pytest.raises(ExtractionError, match="not UTF-8"):
        _toml(f)


def bad_entry_table(tmp_path: Path, entry: str) -> Path:
    f = tmp_path / "commands.toml"
    f.write_text(HEAD + '[commands.cat]\nclass = "read_only"\noperands = ["read*"]\n' + entry, encoding="utf-8")
    return f


@pytest.mark.parametrize("entry,needle", [
    ('[commands.zz]\nclass = "read_only"\noperands = ["reed"]\n', "unknown role"),
    ('[commands.zz]\nclass = "nope"\n', "class 'nope' is not one of"),
    ('[commands.zz]\nsame_as = "nothing"\n', "same_as 'nothing'"),
    ('[commands.zz]\nclass = "read_only"\n[commands.zz.subcommands]\nx = { same_as = "nothing" }\n', "same_as 'nothing'"),
    ('[commands.zz]\nsame_as = "yy"\n[commands.yy]\nsame_as = "cat"\n', "same_as 'yy'"),
    ('[commands.zz]\nclass = "read_only"\n[commands.zz.options]\n"-x" = { then = "read" }\n', "takes a second"),
    ('[commands.zz]\nclass = "read_only"\n[commands.zz.options]\n"-x" = { value = "none", separate = "" }\n',
     "takes a separate one"),
    ('[commands.zz]\nclass = "read_only"\n[commands.zz.options]\n"-x" = { value = "none", attached = true, separate = "(" }\n',
     "not a regular expression"),
])
def test_an_entry_in_error_is_refused_at_load_or_when_used_lazily(tmp_path: Path, entry: str, needle: str) -> None:
    f = bad_entry_table(tmp_path, entry)
    with pytest.raises(ExtractionError, match=needle):
        load_commands(f)
    table = load_commands(f, lazy=True)
    zones = load_zones(SPECS / "shell_agent" / "zones.toml")
    a = analyse("cat README.md", cwd="/w", home="/h", commands=table, zones=zones)
    assert a.kind == "read_only" and a.touched == (("read", "workspace"),)
    with pytest.raises(ExtractionError, match=needle) as e:
        analyse("zz x", cwd="/w", home="/h", commands=table, zones=zones)
    assert "commands.toml" in e.value.message
    with pytest.raises(ExtractionError, match=needle):
        table.check()


def test_table_level_errors_are_found_at_load_even_when_lazy(tmp_path: Path) -> None:
    f = tmp_path / "commands.toml"
    f.write_text(HEAD + '[commands."a|b"]\nclass = "read_only"\n[commands.b]\nclass = "read_only"\n', encoding="utf-8")
    with pytest.raises(ExtractionError, match="declared twice"):
        load_commands(f, lazy=True)
    f.write_text(HEAD + 'commands = 3\n', encoding="utf-8")
    with pytest.raises(ExtractionError, match=r"\[commands\]: expected a table"):
        load_commands(f, lazy=True)


def test_aliases_share_one_compiled_entry_and_every_shipped_entry_compiles() -> None:
    for folder in ("shell_agent", "os_agent"):
        table = load_commands(SPECS / folder / "commands.toml", lazy=True)
        table.check()
        assert table.commands["cd"] is table.commands["pushd"]
        assert len(table.commands) == len(list(table.commands)) > 100


def test_synth_refuses_a_command_table_entry_a_monitor_would_refuse_at_first_use(tmp_path: Path) -> None:
    # red-team pass of 2026-11-29, late morning: a hostile `separate` regular expression passed synth and was caught
    # only when a monitor first analysed a sed command (the hook loads the table lazily)
    import shutil

    from veriguard.contracts.errors import SpecError
    from veriguard.synth.specfile import load_spec
    from tests.conftest import ROOT

    shutil.copy(ROOT / "specs" / "shell_agent.toml", tmp_path / "shell_agent.toml")
    shutil.copytree(ROOT / "specs" / "shell_agent", tmp_path / "shell_agent")
    assert load_spec(tmp_path / "shell_agent.toml").name == "shell_agent"
    table = tmp_path / "shell_agent" / "commands.toml"
    text = table.read_text()
    assert 'separate = "|\\\\.[^ ]*"' in text
    table.write_text(text.replace('separate = "|\\\\.[^ ]*"', 'separate = "(a+)+b"', 1))
    with pytest.raises(SpecError) as e:
        load_spec(tmp_path / "shell_agent.toml")
    assert e.value.code == "spec.extraction" and "separate" in str(e.value)
