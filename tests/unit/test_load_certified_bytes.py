"""The extractors are built from the bytes the loader hashed, never from the build's paths read again after
the check; a certified file that is not a regular file (a FIFO could give the check one content and a later
reader another) is refused without waiting on it."""
import json
import os
import re
import shutil

import pytest

import veriguard.enforce.monitor as monitor_module
from veriguard.enforce.loader import REQUIRE_SIGNED_ENV, TRUSTED_KEYS_ENV, PolicyLoadError, load_policy
from veriguard.enforce.monitor import Monitor
from veriguard.synth.freeze import write_build
from veriguard.synth.specfile import load_spec
from tests.conftest import ROOT
from tests.unit.test_compile_and_freeze import fake_result
from tests.unit.test_signed_builds import finishes

SSH = {"command": "cat ~/.ssh/id_rsa", "cwd": "/tmp/ws", "home": "/root", "workspace": "/tmp/ws", "approved": False}


@pytest.fixture(autouse=True)
def no_trust_from_the_environment(monkeypatch):
    monkeypatch.delenv(TRUSTED_KEYS_ENV, raising=False)
    monkeypatch.delenv(REQUIRE_SIGNED_ENV, raising=False)


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    out = tmp_path_factory.mktemp("certified_bytes")
    return {name: write_build(fake_result(load_spec(ROOT / "specs" / f"{name}.toml")), out, run_info={})[0]
            for name in ("shell_agent", "eicu_ac")}


def copy(builds, name, tmp_path):
    target = tmp_path / name
    shutil.copytree(builds[name], target)
    return target


def swapped_after_the_check(monkeypatch, rel, data):
    """Monitor.from_build's load_policy, then `rel` in the build rewritten: what a reader after the check sees."""
    real = monitor_module.load_policy

    def load_then_swap(build, **kw):
        policy = real(build, **kw)
        (policy.directory / rel).write_bytes(data)
        return policy

    monkeypatch.setattr(monitor_module, "load_policy", load_then_swap)


def test_a_certified_file_that_is_a_fifo_is_refused_without_waiting(builds, tmp_path):
    build = copy(builds, "shell_agent", tmp_path)
    zones = build / "spec" / "shell_agent" / "zones.toml"
    zones.unlink()
    os.mkfifo(zones)
    error = finishes(lambda: load_policy(build, accept_unproved=True), zones)
    assert isinstance(error, PolicyLoadError) and error.code == "load.tampered", error
    assert "is not a regular file" in error.message and error.fix


def test_the_shell_extractor_uses_the_zone_map_that_was_hashed(builds, tmp_path, monkeypatch):
    build = copy(builds, "shell_agent", tmp_path)
    rel = "spec/shell_agent/zones.toml"
    genuine = (build / rel).read_bytes()
    evil = re.sub(rb"\nssh_keys = \[[^\]]*\]", b'\nssh_keys = ["/nonexistent-zone/**"]', genuine)
    assert evil != genuine
    swapped_after_the_check(monkeypatch, rel, evil)
    record = Monitor.from_build(build, accept_unproved=True).check(SSH)
    assert not record.allowed and "ssh_keys" in json.dumps(record.arguments["touched"]), record


def test_the_shell_extractor_uses_the_command_table_that_was_hashed(builds, tmp_path, monkeypatch):
    build = copy(builds, "shell_agent", tmp_path)
    rel = "spec/shell_agent/commands.toml"
    swapped_after_the_check(monkeypatch, rel, b"not = [valid")
    record = Monitor.from_build(build, accept_unproved=True).check(SSH)
    assert not record.allowed and "ssh_keys" in json.dumps(record.arguments["touched"]), record


def test_the_code_extractor_uses_the_schema_that_was_hashed(builds, tmp_path, monkeypatch):
    build = copy(builds, "eicu_ac", tmp_path)
    rel = "spec/eicu_ac/schema.json"
    genuine = json.loads((build / rel).read_bytes())
    swapped_after_the_check(monkeypatch, rel, b'{"databases": {"x": ["y"]}, "complete": true}')
    extractor = Monitor.from_build(build, accept_unproved=True).extractors["accessed"]
    assert extractor.schema == genuine.get("databases", genuine)
