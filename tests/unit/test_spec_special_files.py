"""A file a spec names, the spec itself and an approval are read only when they are regular files of at most
64 MiB, opened without blocking (contracts/regular_file.py): a FIFO (no writer: a plain open waits forever), a
device, a socket or a directory is exit 2 with the file and the fix, and nothing waits."""
from __future__ import annotations

import dataclasses
import os
import shutil
import signal
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from veriguard.contracts.errors import SpecError, VeriguardError
from veriguard.contracts.regular_file import FileRefused, read_regular_file
from tests.conftest import MINIMAL, SPECS, write_spec


@pytest.fixture(autouse=True)
def no_hang() -> Iterator[None]:
    """A blocking open would hang the test run: fail it after 20 s instead."""
    def stop(*_: Any) -> None:
        raise TimeoutError("blocked on a special file")
    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def refused(call: Callable[[], Any]) -> VeriguardError:
    with pytest.raises(VeriguardError) as e:
        call()
    assert e.value.exit_code == 2 and e.value.fix
    return e.value


def test_the_helper_reads_regular_files_only(tmp_path: Path) -> None:
    (tmp_path / "ok").write_bytes(b"data")
    assert read_regular_file(tmp_path / "ok") == b"data"
    os.mkfifo(tmp_path / "fifo")
    for path, kind in ((tmp_path / "fifo", "FIFO"), (tmp_path, "directory"), ("/dev/zero", "character device")):
        with pytest.raises(FileRefused, match=f"not a regular file \\(an? {kind}"):
            read_regular_file(path)
    with pytest.raises(FileRefused, match="larger than 3 bytes"):
        read_regular_file(tmp_path / "ok", limit=3)
    with pytest.raises(FileRefused, match="cannot read it"):
        read_regular_file(tmp_path / "absent")


def test_a_fifo_as_a_table(tmp_path: Path) -> None:
    from veriguard.synth.specfile import load_spec

    path = write_spec(tmp_path)
    (tmp_path / "ok.json").unlink()
    os.mkfifo(tmp_path / "ok.json")
    e = refused(lambda: load_spec(path))
    assert isinstance(e, SpecError) and e.code == "spec.table_file" and "FIFO" in e.message
    assert e.file.endswith("ok.json") and "regular file" in e.fix


def test_a_fifo_or_a_device_as_the_spec(tmp_path: Path) -> None:
    from veriguard.synth.specfile import load_spec

    os.mkfifo(tmp_path / "spec.toml")
    for path in (tmp_path / "spec.toml", Path("/dev/zero")):
        e = refused(lambda: load_spec(path))
        assert e.code == "spec.file" and "not a regular file" in e.message and e.file == str(path)


def test_a_fifo_as_an_extraction_file(tmp_path: Path) -> None:
    from veriguard.synth.classifier_build import freeze_classifier
    from veriguard.synth.specfile import load_spec

    shutil.copy(SPECS / "mind2web_sc.toml", tmp_path / "mind2web_sc.toml")
    (tmp_path / "mind2web_sc").mkdir()
    os.mkfifo(tmp_path / "mind2web_sc" / "categories.toml")
    e = refused(lambda: load_spec(tmp_path / "mind2web_sc.toml"))
    assert e.code == "spec.file" and "FIFO" in e.message and "[extraction]" in e.message
    spec = load_spec(SPECS / "mind2web_sc.toml")   # the bank turned into a FIFO after the spec was read
    moved = dataclasses.replace(spec, path=str(tmp_path / "mind2web_sc.toml"))
    e = refused(lambda: freeze_classifier(moved, "task", spec.extraction["task"]))
    assert e.code == "spec.file" and "FIFO" in e.message and "regular file" in e.fix


def test_a_fifo_as_the_approval(tmp_path: Path) -> None:
    from veriguard.diff import read_approval

    os.mkfifo(tmp_path / "approval.toml")
    e = refused(lambda: read_approval(tmp_path / "approval.toml"))
    assert e.code == "approval.file" and "FIFO" in e.message and e.file == str(tmp_path / "approval.toml")
    e = refused(lambda: read_approval(tmp_path / "absent.toml"))
    assert e.code == "approval.file" and "cannot read it" in e.message


def test_a_table_over_the_limit(tmp_path: Path) -> None:
    from veriguard.synth.specfile import load_spec

    path = write_spec(tmp_path, MINIMAL)
    with open(tmp_path / "ok.json", "wb") as out:
        out.truncate(64 * 2**20 + 1)  # sparse: no disk used
    e = refused(lambda: load_spec(path))
    assert e.code == "spec.table_file" and "larger than 67,108,864 bytes" in e.message and "64 MiB" in e.fix
