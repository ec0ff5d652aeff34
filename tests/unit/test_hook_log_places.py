"""The decision log, its head, its --log-checkpoint copy and the key that signs it are out of the agent's reach through
the hook (checked on 2026-11-29, evening: already so, through Monitor.from_build's {guard} and {secret}; this test
holds it end to end, for the shell and the file tools, the log's folder too)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from veriguard import hook
from veriguard.enforce.keys import new_key_pair
from veriguard.synth.freeze import write_build
from veriguard.synth.specfile import load_spec
from tests.conftest import ROOT
from tests.unit.test_compile_and_freeze import fake_result

pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hook_log_places")
    return write_build(fake_result(load_spec(ROOT / "specs" / "shell_agent.toml")), out, run_info={})[0]


def decide(build: Path, tmp: Path, tool: str, **tool_input: object) -> int:
    key = tmp / "keys" / "veriguard.key"
    if not key.exists():
        new_key_pair(tmp / "keys")
    opts = hook.parse_options(["--build", str(build), "--log", f"{tmp}/logs/log.jsonl", "--log-key", str(key),
                               "--log-checkpoint", f"{tmp}/logs/checkpoint"])
    assert isinstance(opts, hook.Options)
    project = tmp / "proj"
    project.mkdir(exist_ok=True)
    opts = opts._replace(env={"HOME": "/home/dev", "CLAUDE_PROJECT_DIR": str(project)})
    call = {"session_id": "s", "cwd": str(project), "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": tool, "tool_input": tool_input, "tool_use_id": "t"}
    return hook.decide(json.dumps(call).encode(), opts).code


@pytest.mark.parametrize("name", ["log.jsonl", "log.jsonl.head", "checkpoint"])
def test_the_log_its_head_and_its_checkpoint_cannot_be_changed(build: Path, tmp_path: Path, name: str) -> None:
    path = f"{tmp_path}/logs/{name}"
    for command in (f"echo x > {path}", f"truncate -s 0 {path}", f"mv {path} {path}.old", f"ln -sf /tmp/x {path}",
                    f"cp /tmp/e/{name} {tmp_path}/logs/", f"rm -rf {tmp_path}/logs"):
        assert decide(build, tmp_path, "Bash", command=command) == 2, command
    assert decide(build, tmp_path, "Write", file_path=path, content="x") == 2
    assert decide(build, tmp_path, "Bash", command=f"cat {tmp_path}/logs/log.jsonl") == 0


def test_the_key_that_signs_the_log_is_not_even_read(build: Path, tmp_path: Path) -> None:
    assert decide(build, tmp_path, "Bash", command="ls") == 0    # makes the key pair
    assert decide(build, tmp_path, "Read", file_path=f"{tmp_path}/keys/veriguard.key") == 2
    assert decide(build, tmp_path, "Bash", command=f"cat {tmp_path}/keys/veriguard.key") == 2
