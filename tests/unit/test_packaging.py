"""What `pip install veriguard` gives a production agent: the runtime API under one namespace, in a
fresh virtualenv that has none of the synthesis tools."""
import json
import subprocess
import sys
import zipfile

import pytest

from tests.conftest import ROOT, SHIPPED


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out),
                    str(ROOT)], check=True, capture_output=True, timeout=300)
    return next(out.glob("veriguard-*.whl"))


def test_the_wheel_installs_only_under_the_veriguard_namespace(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith((".dist-info", ".data"))}
    assert tops == {"veriguard"}, tops
    for needed in ("veriguard/contracts/grammar.lark", "veriguard/synth/prompts/formalize.md",
                   "veriguard/enforce/assets/minilm_tokenizer.json", "veriguard/contracts/runtime_support.py",
                   "veriguard/contracts/frozen_entry.py"):
        assert needed in names, needed


def test_the_runtime_works_in_a_fresh_virtualenv_without_the_synthesis_tools(wheel, tmp_path):
    from veriguard.synth.freeze import write_build
    from veriguard.synth.specfile import load_spec
    from tests.unit.test_compile_and_freeze import fake_result

    build, _ = write_build(fake_result(load_spec(next(p for p in SHIPPED if p.stem == "payments"))),
                           tmp_path / "build", run_info={})
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q",
                    str(wheel)], check=True, capture_output=True, timeout=300)
    script = f"""
import importlib.util, json
from veriguard import Monitor, load_policy
m = Monitor.from_build({str(build)!r})
obs = {{"session": {{"role": "clerk", "mfa": False}}, "ledger": {{"sent_today_cents": 0}},
       "call": {{"type": "tool_use", "id": "t", "name": "send_payment", "input": {{"recipient": "acme-supplies",
                 "amount_cents": 250000, "currency": "USD", "method": "ach"}}}}}}
r = m.check(obs)
absent = [n for n in ("nagini", "z3", "lark", "hypothesis", "anthropic", "onnxruntime", "sqlglot", "contracts",
                      "enforce") if importlib.util.find_spec(n)]
print(json.dumps({{"allowed": r.allowed, "violations": list(r.violations), "fail_closed": r.fail_closed,
                   "present": absent, "policy": load_policy({str(build)!r}).name}}))
"""
    out = subprocess.run([str(python), "-I", "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout)
    assert got["present"] == [] and got["policy"] == "payments"
    assert got["allowed"] is False and got["violations"] == ["per_payment_limit"] and not got["fail_closed"]
