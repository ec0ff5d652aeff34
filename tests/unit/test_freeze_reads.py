"""Freeze reads the spec's files again to copy them into the build: as carefully as the spec loader did (red-team,
2026-11-29, night). A table replaced by a FIFO between the spec's load and the freeze (after the proof) hung synth
for ever; now it is refused (freeze.file) without waiting, and nothing is written."""
import os
import threading

import pytest

from veriguard.contracts.errors import SpecError
from veriguard.synth.freeze import write_build
from veriguard.synth.specfile import load_spec
from tests.conftest import write_spec
from tests.unit.test_compile_and_freeze import fake_result


@pytest.mark.parametrize("swapped", ["ok.json", "mini.toml"])
def test_a_spec_file_swapped_for_a_fifo_before_the_freeze_is_refused_without_waiting(tmp_path, swapped):
    result = fake_result(load_spec(write_spec(tmp_path)))
    (tmp_path / swapped).unlink()
    os.mkfifo(tmp_path / swapped)
    outcome: list[object] = []

    def freeze() -> None:
        try:
            write_build(result, tmp_path / "out", run_info={})
            outcome.append("built")
        except SpecError as e:
            outcome.append(e)
    thread = threading.Thread(target=freeze, daemon=True)
    thread.start()
    thread.join(20)
    assert outcome, "the freeze waited on the FIFO"
    assert isinstance(outcome[0], SpecError) and outcome[0].code == "freeze.file" and "FIFO" in outcome[0].message
    assert not (tmp_path / "out" / "mini").exists()
