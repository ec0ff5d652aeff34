"""Bad synth options are refused before any slow step (red-team, 2026-11-29, night): `synth --mutants -1` ran the
whole synthesis (84 s here: z3, tests, the Nagini proof) and then failed its mutation gate (NOT_CHECKED, exit 1)."""
import pytest

from veriguard.cli import main
from tests.conftest import write_spec


@pytest.mark.parametrize("mutants", ["-1", "-30"])
def test_a_negative_mutant_count_is_bad_input_before_any_work(tmp_path, monkeypatch, capsys, mutants):
    def no_synthesis(*a, **kw):
        raise AssertionError("synthesis started")
    monkeypatch.setattr("veriguard.synth.jobs.SpecRunner", no_synthesis)
    code = main(["synth", str(write_spec(tmp_path)), "--out", str(tmp_path / "out"), "--mutants", mutants])
    err = capsys.readouterr().err
    assert code == 2 and "error[cli.usage]" in err and f"--mutants must be 0 or more, not {mutants}" in err
    assert not (tmp_path / "out").exists()
