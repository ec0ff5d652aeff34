"""`diff` and `synth --previous` see how each build reads the agent's action (red-team, 2026-11-29, night).

Before, two builds of one policy whose [extraction] differed (OLD reads `role` from `session.role`, NEW from
`request.claimed_role`, a field the agent writes) diffed as "the same decisions", exit 0, and `synth --previous OLD`
wrote NEW without an approval: the contracts are the same, so z3 finds nothing, yet the monitor of NEW decides the
same action otherwise (a user who claims "admin" is an admin). Now the [extraction] entries are compared too.
"""
import json

import pytest

from veriguard.diff import UpdateRefused, previous_build
from veriguard.synth.freeze import write_build
from veriguard.synth.specfile import load_spec
from tests.conftest import MINIMAL, write_spec
from tests.unit.test_compile_and_freeze import fake_result
from tests.unit.test_policy_diff import run

READS = """
[extraction]
role = {{ from = "field", path = "{role}" }}
age = {{ from = "field", path = "age" }}
items = {{ from = "field", path = "items" }}
"""


def spec(tmp_path, name, role):
    folder = tmp_path / name
    folder.mkdir()
    return load_spec(write_spec(folder, MINIMAL + READS.format(role=role)))


def build(tmp_path, name, role):
    return write_build(fake_result(spec(tmp_path, name, role)), tmp_path / name / "out", run_info={})[0]


def test_a_build_that_reads_an_argument_otherwise_does_not_diff_as_the_same(tmp_path, capsys):
    old, new = build(tmp_path, "old", "session.role"), build(tmp_path, "new", "request.claimed_role")
    code, out, _ = run(capsys, "diff", old, new)
    assert code == 1 and "different decisions" in out and "NEW reads role from the agent's action otherwise" in out
    code, out, _ = run(capsys, "diff", old, new, "--json")
    assert code == 1 and json.loads(out)["extraction_changed"] == ["role"]


def test_builds_that_read_alike_still_diff_as_the_same(tmp_path, capsys):
    old, new = build(tmp_path, "old", "session.role"), build(tmp_path, "new", "session.role")
    code, out, _ = run(capsys, "diff", old, new, "--json")
    assert code == 0 and json.loads(out)["extraction_changed"] == []


def test_an_update_that_reads_an_argument_otherwise_needs_an_approval(tmp_path):
    old = build(tmp_path, "old", "session.role")
    update = previous_build(str(old), None, specs=1, llm=False)
    with pytest.raises(UpdateRefused) as e:
        update.freeze(fake_result(spec(tmp_path, "new", "request.claimed_role")), tmp_path / "out", {}, write_build)
    assert e.value.code == "update.unapproved" and "reads role from the agent's action otherwise" in e.value.message
    assert not (tmp_path / "out" / "mini").exists()


def test_an_approved_update_that_reads_an_argument_otherwise_is_written_with_its_approval(tmp_path):
    old = build(tmp_path, "old", "session.role")
    (tmp_path / "ok.toml").write_text('by = "Ana"\nreason = "the gateway now sets claimed_role"\n')
    update = previous_build(str(old), str(tmp_path / "ok.toml"), specs=1, llm=False)
    _, cert = update.freeze(fake_result(spec(tmp_path, "new", "request.claimed_role")), tmp_path / "out", {},
                            write_build)
    assert cert["approval"]["by"] == "Ana" and cert["approval"]["newly_allowed"] == 0
    assert update.last["extraction_changed"] == ["role"]
