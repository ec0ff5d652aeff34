"""Second red-team pass on the monitor's online path with the `llm` extractor (2026-11-29, night; helper B22):
whatever the extraction raises or however long the agent data runs, `check` returns a denial and logs it. The model
is never reached here (a provider that raises, or data refused before any call); each test failed before its fix."""
from __future__ import annotations

import dataclasses
import threading
from typing import Any

import pytest

from tests.unit.test_extract_llm import PROFILE, llm_build
from veriguard.enforce.decision_log import DecisionLog, verify_log
from veriguard.enforce.monitor import Monitor

HOTEL = "Book a room at the Hilton in Rome for two nights"


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    """One monitor for the module (loading the build's classifier is slow); each test gives it its own log."""
    return Monitor.from_build(llm_build(tmp_path_factory.mktemp("b22"), "http://127.0.0.1:9"))  # never called here


@pytest.fixture
def monitor(loaded, tmp_path):
    loaded.log, loaded.stats = DecisionLog(tmp_path / "log.jsonl"), {"checked": 0, "denied": 0, "fail_closed": 0}
    saved = dict(loaded.extractors)
    yield loaded
    loaded.extractors = saved


class _Raises:
    name, model = "openai", "qwen2.5-7b-instruct"

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def complete(self, request: Any) -> Any:
        raise self.exc


def _decided(monitor: Monitor, observation: Any, seconds: float = 10.0) -> Any:
    out: list[Any] = []
    worker = threading.Thread(target=lambda: out.append(monitor.check(observation)), daemon=True)
    worker.start()
    worker.join(seconds)
    assert out, f"no decision within {seconds} s"
    return out[0]


@pytest.mark.parametrize("exc", [SystemExit(0), KeyboardInterrupt()], ids=lambda e: type(e).__name__)
def test_an_interrupt_raised_by_the_provider_on_its_thread_is_a_logged_denial(monitor, tmp_path, exc):
    """Before: SystemExit(0) raised by a provider on the model call's thread was re-raised in `check`, which lets
    interrupts through: the monitor's process ended with status 0 and no decision was returned or logged."""
    monitor.extractors = {**monitor.extractors, "task": dataclasses.replace(monitor.extractors["task"],
                                                                             make_provider=lambda: _Raises(exc))}
    d = _decided(monitor, {"confirmed_task": HOTEL, "user_info": {**PROFILE, "age": 40}})
    assert not d.allowed and "extract.llm.failed" in d.fail_closed and type(exc).__name__ in d.fail_closed
    assert verify_log(tmp_path / "log.jsonl").ok and monitor.stats["fail_closed"] == 1


def _cyclic() -> dict[str, Any]:
    data: dict[str, Any] = {"confirmed_task": HOTEL, "user_info": PROFILE}
    data["history"] = [data]
    return data


def test_agent_data_that_refers_to_itself_is_a_logged_denial(monitor, tmp_path):
    """Before: with an `llm` entry that reads the whole agent data (no `text`), `check` never returned."""
    monitor.extractors = {**monitor.extractors, "task": dataclasses.replace(monitor.extractors["task"], text="")}
    d = _decided(monitor, _cyclic())
    assert not d.allowed and "extract.llm.too_long" in d.fail_closed and "refers to itself" in d.fail_closed
    assert verify_log(tmp_path / "log.jsonl").ok
