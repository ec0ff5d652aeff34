"""The spec's [enforcement] section is checked when the spec is read: known keys, strategy and mode
names, halt_after, fail_closed; every error at file:line:col with the fix."""
import pytest

from veriguard.contracts.errors import SpecError
from veriguard.enforce.guard import MODES
from veriguard.enforce.monitor import STRATEGIES
from veriguard.contracts.build_format import MODE_NAMES, STRATEGY_NAMES
from veriguard.synth.specfile import load_spec
from tests.conftest import MINIMAL, write_spec


def with_enforcement(tmp_path, section: str):
    return write_spec(tmp_path, MINIMAL.rstrip("\n") + "\n\n[enforcement]\n" + section + "\n")


def enforcement_error(tmp_path, section: str) -> tuple[SpecError, str]:
    path = with_enforcement(tmp_path, section)
    with pytest.raises(SpecError) as e:
        load_spec(path)
    line = path.read_text(encoding="utf-8").splitlines()[e.value.pos.line - 1]
    return e.value, line


def test_the_names_are_the_runtimes():
    assert STRATEGY_NAMES == tuple(STRATEGIES) and MODE_NAMES == MODES


@pytest.mark.parametrize("section", [
    "", 'strategy = "terminate"', 'strategy = "replan_halt"\nhalt_after = 3\nmode = "shadow"',
    'strategy = "tool_halt"\nfail_closed = true', 'mode = "enforce"',
])
def test_good_sections_load(tmp_path, section):
    assert load_spec(with_enforcement(tmp_path, section)).enforcement == __import__("tomllib").loads(section)


@pytest.mark.parametrize("section,where,message,fix", [
    ('strategy = "replan-halt"', "strategy", 'strategy = "replan-halt" is not a known strategy',
     "did you mean 'replan_halt'?"),
    ('strategy = "halt"', "strategy", 'strategy = "halt" is not a known strategy', '"tool_halt"'),
    ("strategy = 3", "strategy", "strategy = 3 is not a known strategy", '"terminate", "block"'),
    ('mode = "log_only"', "mode", 'mode = "log_only" is not a known mode', '"enforce", "shadow"'),
    ('mode = "Shadow"', "mode", 'mode = "Shadow" is not a known mode', "did you mean 'shadow'?"),
    ("mode = true", "mode", "mode = true is not a known mode", '"enforce"'),
    ('strategy = "replan_halt"\nhalt_after = 0', "halt_after", "halt_after = 0 must be a whole number", "e.g."),
    ('strategy = "replan_halt"\nhalt_after = 1.5', "halt_after", "halt_after = 1.5 must be", "e.g."),
    ('strategy = "replan_halt"\nhalt_after = true', "halt_after", "halt_after = true must be", "e.g."),
    ('strategy = "replan_halt"\nhalt_after = "2"', "halt_after", 'halt_after = "2" must be', "e.g."),
    ("halt_after = 2", "halt_after", 'the strategy here is "block"', 'strategy = "replan_halt"'),
    ('strategy = "replan"\nhalt_after = 2', "halt_after", 'the strategy here is "replan"', "remove halt_after"),
    ("fail_closed = false", "fail_closed", "always fails closed", "remove the key"),
    ('fail_closed = "yes"', "fail_closed", "always fails closed", "remove the key"),
    ('strategy = "block"\nignore = ["read_file"]', "ignore", "unknown key 'ignore' in [enforcement]",
     "allowed: strategy, mode, halt_after, fail_closed"),
    ('stratgy = "block"', "stratgy", "unknown key 'stratgy'", "did you mean 'strategy'?"),
])
def test_bad_sections_are_errors_at_the_key(tmp_path, section, where, message, fix):
    e, line = enforcement_error(tmp_path, section)
    assert e.code in ("spec.enforcement", "spec.unknown_key") and message in e.message and fix in e.fix, (e.message, e.fix)
    assert line.startswith(where) and 1 <= e.pos.col <= len(line) and e.file.endswith("mini.toml")


def test_a_section_that_is_not_a_table(tmp_path):
    path = write_spec(tmp_path, MINIMAL.rstrip("\n").replace('request = "Adults only."',
                                                            'request = "Adults only."\nenforcement = "block"'))
    with pytest.raises(SpecError, match=r"\[enforcement\] must be a dict"):
        load_spec(path)


def test_a_tuple_argument_is_an_error_at_its_key(tmp_path):
    """The checker, z3 and Nagini read tuples only as a list's elements; a bare tuple argument would be
    proved as one type and checked at run time as another."""
    path = write_spec(tmp_path, MINIMAL.replace('age = "int"\n', 'age = "int"\npair = "(int, int)"\n', 1))
    with pytest.raises(SpecError) as e:
        load_spec(path)
    assert e.value.code == "spec.type" and "'pair' is a tuple" in e.value.message and "list[(" in e.value.fix
    assert path.read_text(encoding="utf-8").splitlines()[e.value.pos.line - 1].startswith("pair")
