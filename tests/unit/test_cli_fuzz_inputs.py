"""Malformed inputs found by fuzzing the commands (red team E): each is exit 2 with the file and the fix (or a
denial on the online path), never a wait on a FIFO, a read of /dev/zero into memory, or an exception that
blames the wrong thing."""
from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any, Iterator

import pytest

from veriguard.contracts.errors import VeriguardError


@pytest.fixture(autouse=True)
def no_hang() -> Iterator[None]:
    """A blocking open of a FIFO would hang the test run: fail it after 10 s instead."""
    def stop(*_: Any) -> None:
        raise TimeoutError("blocked on a special file")
    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(10)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def test_eval_shell_data_that_is_a_fifo_or_a_device_is_refused(tmp_path: Path) -> None:
    from veriguard.evaluation_shell import read_shell_data

    for special in (fifo(tmp_path / "data.jsonl"), Path("/dev/zero")):
        with pytest.raises(VeriguardError) as e:
            read_shell_data(special)
        assert e.value.code == "eval.data" and "not a regular file" in str(e.value) and e.value.exit_code == 2


def test_eval_asb_data_that_is_a_fifo_is_refused(tmp_path: Path) -> None:
    from veriguard.evaluation_asb import _read

    with pytest.raises(VeriguardError) as e:
        _read(fifo(tmp_path / "calls.jsonl"))
    assert e.value.code == "eval.data" and "not a regular file" in str(e.value)


def test_eicu_data_and_logs_that_are_fifos_are_refused(tmp_path: Path) -> None:
    from veriguard.evaluation import DataError, eicu_records

    folder = tmp_path / "ehragent"
    (folder / "logs").mkdir(parents=True)
    fifo(folder / "eicu_ac.json")
    with pytest.raises(DataError, match="not a regular file"):
        eicu_records(tmp_path)
    (folder / "eicu_ac.json").unlink()
    (folder / "eicu_ac.json").write_text('[{"id": "a", "identity": "x", "label": 1, "inaccessible_db": {}}]')
    fifo(folder / "logs" / "a.txt")
    with pytest.raises(DataError, match="not a regular file"):
        eicu_records(tmp_path)


def test_eicu_data_is_strict_json(tmp_path: Path) -> None:
    from veriguard.evaluation import DataError, eicu_records

    (tmp_path / "ehragent").mkdir()
    (tmp_path / "ehragent" / "eicu_ac.json").write_text('[{"id": "a", "id": "b"}]')
    with pytest.raises(DataError, match="duplicate key"):
        eicu_records(tmp_path)
    (tmp_path / "ehragent" / "eicu_ac.json").write_text('[NaN]')
    with pytest.raises(DataError, match=r"eicu_ac.json:1:\d+: not valid JSON \(NaN"):
        eicu_records(tmp_path)


def test_hook_context_that_is_a_fifo_or_a_device_is_refused(tmp_path: Path) -> None:
    from veriguard.hook import Refused, read_context

    for special in (fifo(tmp_path / "ctx.json"), Path("/dev/zero")):
        with pytest.raises(Refused, match="not a regular file"):
            read_context(str(special))


def test_a_log_path_in_a_link_loop_is_protected_not_a_crash(tmp_path: Path) -> None:
    from veriguard.enforce.monitor import protected

    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    protected([tmp_path / "a"], None, tmp_path / "b")   # Path.resolve raised RuntimeError: Symlink loop


def test_log_export_without_an_id_is_refused_not_ignored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from veriguard.cli import main

    code = main(["log", "--store", str(tmp_path / "t.db"), "--export", str(tmp_path / "t.json")])
    err = capsys.readouterr().err
    assert code == 2 and "cli.usage" in err and "needs the id" in err and not (tmp_path / "t.json").exists()


def test_a_transcript_store_folder_that_is_a_file_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    from veriguard.cli import main

    (tmp_path / "home").write_text("")
    monkeypatch.setenv("VERIGUARD_HOME", str(tmp_path / "home"))
    code = main(["log"])
    err = capsys.readouterr().err
    assert code == 2 and "cli.environment" in err and "VERIGUARD_HOME" in err


def test_a_jvm_heap_that_is_not_a_size_is_refused_before_the_jvm(monkeypatch: pytest.MonkeyPatch) -> None:
    from veriguard.verify import nagini

    monkeypatch.setattr(nagini, "java_version", lambda *a: ("17", 17))
    monkeypatch.setattr(nagini.subprocess, "Popen", lambda *a, **k: pytest.fail("the worker was started"))
    monkeypatch.setenv("VERIGUARD_JVM_HEAP", "abc")
    with pytest.raises(VeriguardError) as e:
        nagini.NaginiWorker().start()
    assert e.value.code == "cli.environment" and e.value.exit_code == 2 and "'abc'" in str(e.value)
    monkeypatch.setenv("VERIGUARD_JVM_HEAP", "2g")
    assert nagini.JVM_HEAP.fullmatch("2g") and nagini.JVM_HEAP.fullmatch("768m")


@pytest.mark.parametrize("flag", ["--timeout", "--start-timeout"])
def test_mcp_proxy_refuses_an_infinite_timeout(tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str) -> None:
    from veriguard.enforce.integrations.mcp_proxy import main

    assert main(["--build", str(tmp_path / "nowhere"), flag, "1e999", "--", "true"]) == 2
    assert f"{flag} must be a positive number of seconds, finite, not inf" in capsys.readouterr().err


def test_verify_refuses_what_is_not_python_before_the_verifier(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from veriguard import cli

    monkeypatch.setattr(cli, "_nagini", lambda *a: pytest.fail("the verifier was started"))
    files = {"bad.py": b"\xff\xfe", "nul.py": b"x = 1\x00\n", "deep.py": b"x = " + b"(" * 5000 + b")" * 5000,
             "syntax.py": b"def f(:\n"}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    fifo(tmp_path / "fifo.py")
    for name in [*files, "fifo.py"]:
        assert cli.main(["verify", str(tmp_path / name), "--quiet"]) == 2, name
        err = capsys.readouterr().err
        assert "verify.input" in err and "fix:" in err and "Traceback" not in err, err
    assert cli.main(["verify", str(tmp_path / "syntax.py"), "--timeout", "-5"]) == 2
    assert "cli.usage" in capsys.readouterr().err


def test_a_very_long_enum_value_is_refused_at_once(tmp_path: Path) -> None:
    from tests.conftest import MINIMAL, write_spec
    from veriguard.contracts.errors import SpecError
    from veriguard.synth.specfile import MAX_ENUM_VALUE, load_spec

    path = write_spec(tmp_path, MINIMAL.replace('"user"]', f'"user", "{"u" * (MAX_ENUM_VALUE + 1)}"]'))
    with pytest.raises(SpecError) as e:
        load_spec(path)
    assert e.value.code == "spec.enum" and f"{path}:" in str(e.value) and "at most" in str(e.value)
    load_spec(write_spec(tmp_path, MINIMAL.replace('"user"]', f'"user", "{"u" * MAX_ENUM_VALUE}"]')))


def test_an_approval_that_is_not_utf8_is_called_an_approval(tmp_path: Path) -> None:
    from veriguard.diff import read_approval

    (tmp_path / "approve.toml").write_bytes(b"\xff")
    with pytest.raises(VeriguardError) as e:
        read_approval(tmp_path / "approve.toml")
    assert e.value.code == "approval.encoding" and "the approval file is not UTF-8" in str(e.value)


@pytest.mark.parametrize("argv", [["keys", "new", "--out", ""], ["check", "", "--args", "{}"],
                                  ["audit", "x", "--public-key", ""], ["verify-log", ""]])
def test_an_empty_path_is_refused_not_taken_for_the_current_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    from veriguard.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert "cli.usage" in capsys.readouterr().err and not list(tmp_path.iterdir())


def test_eval_shell_refuses_a_build_that_reads_no_shell_command(monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from veriguard import evaluation_shell
    from veriguard.enforce.monitor import Monitor

    fake = SimpleNamespace(extractors={}, policy=SimpleNamespace(name="payments"))
    monkeypatch.setattr(Monitor, "from_build", staticmethod(lambda *a, **k: fake))
    with pytest.raises(VeriguardError) as e:   # it scored every case as a fail-closed denial, exit 0
        evaluation_shell.load_monitor("somewhere/payments")
    assert e.value.code == "eval.build" and "does not read shell commands" in str(e.value)


def test_a_file_where_a_folder_must_be_is_bad_input_not_the_machine() -> None:
    import errno

    from veriguard.cli import _failure

    message, code = _failure(FileExistsError(errno.EEXIST, "File exists", "cases"))
    assert code == 2 and message.startswith("cases: error[io]")


@pytest.mark.parametrize("value", ["nan", "-1", "2"])
def test_eval_min_confidence_outside_0_1_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     value: str) -> None:
    from veriguard.cli import main

    assert main(["eval", "eicu-ac", "--data", str(tmp_path), "--build", str(tmp_path), "--min-confidence", value]) == 2
    assert "--min-confidence" in capsys.readouterr().err
