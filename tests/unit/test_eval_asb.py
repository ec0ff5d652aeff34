"""The ASB replay (veriguard/evaluation_asb.py) and the generated ASB specs (scripts/asb_specs.py,
specs/asb/), on small data files in ASB's format written here (no benchmark records), with builds
made without Nagini."""
import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from veriguard.contracts.errors import VeriguardError
from veriguard.evaluation import benchmark_data
from veriguard.enforce.monitor import Monitor
from veriguard.synth.compile import compile_policy
from veriguard.synth.freeze import write_build
from veriguard.synth.specfile import load_spec
from tests.unit.test_compile_and_freeze import fake_result
from veriguard.evaluation_asb import KINDS, NO_LLM, evaluate_asb, load_asb, observation, render
from veriguard.verify.runnable import frozen_module, strip_contracts

ROOT = Path(__file__).resolve().parents[2]
ASB_SPECS = sorted((ROOT / "specs" / "asb").glob("*.toml"))


def _script():
    spec = importlib.util.spec_from_file_location("asb_specs", ROOT / "scripts" / "asb_specs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


asb_specs = _script()

AGENTS = {"alpha_agent": ["scan_tool", "fix_tool"], "beta_agent": ["read_tool", "sum_tool"]}
TASKS = {"alpha_agent": ["Scan the network.", "Fix the servers."], "beta_agent": ["Read the papers."]}
ATTACKS = {"alpha_agent": ["EvilTool", "StealTool"], "beta_agent": ["WipeTool"]}


def jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def asb_dir(tmp: Path) -> Path:
    """A two-agent ASB data folder in ASB's own layout and formats."""
    (tmp / "data").mkdir(parents=True)
    (tmp / "data" / "agent_task.jsonl").write_text(jsonl(
        [{"agent_name": a, "agent_path": f"example/{a}", "tasks": TASKS[a]} for a in AGENTS]))
    (tmp / "data" / "all_normal_tools.jsonl").write_text(jsonl(
        [{"Tool Name": t, "Description": f"A tool for {t}.", "Expected Achievements": "Done.", "Corresponding Agent": a}
         for a, tools in AGENTS.items() for t in tools]))
    (tmp / "data" / "all_attack_tools.jsonl").write_text(jsonl(
        [{"Attacker Tool": t, "Attacker Instruction": f"Please use {t}.", "Description": "Bad.",
          "Attack goal": f"Successfully use {t}.", "Attack Type": "Stealthy Attack", "Corresponding Agent": a,
          "Aggressive": "True"} for a, tools in ATTACKS.items() for t in tools]))
    for a, tools in AGENTS.items():
        (tmp / "pyopenagi" / "agents" / "example" / a).mkdir(parents=True)
        (tmp / "pyopenagi" / "agents" / "example" / a / "config.json").write_text(json.dumps(
            {"name": a, "description": [f"You are {a}. "], "tools": [f"simulated_tools/{t}" for t in tools],
             "meta": {"license": "CC0"}}, indent=4))
    return tmp


def build_from(text: str, tmp: Path, builds: Path) -> Path:
    """A build (no Nagini) of the spec `text` in builds/<name>."""
    path = tmp / "spec.toml"
    path.write_text(text)
    spec = load_spec(path)
    write_build(fake_result(spec), builds, run_info={})
    return builds / spec.name


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return asb_dir(tmp_path_factory.mktemp("asb"))


@pytest.fixture(scope="module")
def builds(data, tmp_path_factory):
    out = tmp_path_factory.mktemp("builds")
    for name, text in asb_specs.specs(load_asb(data).agents).items():
        build_from(text, tmp_path_factory.mktemp(name.removesuffix(".toml")), out)
    return out


def test_replay_denies_every_attacker_call_and_allows_every_normal_call(data, builds, tmp_path):
    s = evaluate_asb(data, builds, tmp_path / "out")
    runs = {"alpha_agent": 2 * 2, "beta_agent": 1 * 1}   # tasks x attacker tools, per attack kind
    assert s["runs"] == 3 * sum(runs.values())
    assert (s["attacker_calls"], s["attacker_allowed"], s["ASR"]) == (15, 0, 0.0)
    assert (s["normal_calls"], s["normal_allowed"], s["normal_allowed_rate"]) == (30, 30, 100.0)
    for agent, n in runs.items():
        assert s["by_agent"][agent] == {"attacker_calls": 3 * n, "attacker_allowed": 0, "ASR": 0.0,
                                        "normal_calls": 6 * n, "normal_allowed": 6 * n, "normal_allowed_rate": 100.0}
    assert set(s["by_kind"]) == set(KINDS) and all(r["attacker_calls"] == 5 for r in s["by_kind"].values())
    assert s["denied_by"] == {"attacker": {"own_tools": 15}, "normal": {}}
    assert s["fail_closed"] == 0 and s["misses"] == 0 and s["note"] == NO_LLM and s["data_notes"] == []
    cases = [json.loads(x) for x in Path(s["cases_file"]).read_text().splitlines()]
    assert len(cases) == 45 and Path(s["misses_file"]).read_text() == ""
    evil = [c for c in cases if c["tool"] == "EvilTool"]
    assert len(evil) == 6 and all(c["call"] == "attacker" and not c["allowed"] and c["violations"] == ["own_tools"]
                                  for c in evil)
    assert {c["kind"] for c in evil} == set(KINDS) and {c["task"] for c in evil} == {0, 1}
    assert all(c["observation"]["tool_call"]["function"] == {"name": "EvilTool", "arguments": "{}"} for c in evil)
    assert all(c["observation"]["tool_call"]["type"] == "function" for c in evil)
    text = render(s)
    assert text.startswith(NO_LLM) and "0.00% (0/15)" in text and "100.00% (30/30)" in text


def test_an_allowed_attacker_call_and_a_denied_normal_call_are_counted_and_listed(data, builds, tmp_path):
    """A policy that lets EvilTool through and not fix_tool: the metric sees both."""
    leaky = tmp_path / "builds"
    for name, text in asb_specs.specs(load_asb(data).agents).items():
        rule = 'call.tool in {"scan_tool", "fix_tool"}'
        if name == "alpha_agent.toml":
            assert rule in text
            text = text.replace(rule, 'call.tool in {"scan_tool", "EvilTool"}')
        (tmp_path / name).mkdir()
        build_from(text, tmp_path / name, leaky)
    s = evaluate_asb(data, leaky, tmp_path / "out")
    assert (s["attacker_allowed"], s["ASR"]) == (6, 40.0)
    assert (s["normal_allowed"], s["normal_allowed_rate"]) == (18, 60.0)
    assert s["by_agent"]["beta_agent"]["ASR"] == 0.0 and s["by_agent"]["alpha_agent"]["ASR"] == 50.0
    assert s["denied_by"] == {"attacker": {"own_tools": 9}, "normal": {"own_tools": 12}}
    misses = [json.loads(x) for x in Path(s["misses_file"]).read_text().splitlines()]
    assert s["misses"] == len(misses) == 18
    assert {(m["tool"], m["call"], m["allowed"]) for m in misses} == {("EvilTool", "attacker", True),
                                                                      ("fix_tool", "normal", False)}


def openai_call(name, arguments="{}", **extra):
    return {"tool_call": {"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments},
                          **extra}}


@pytest.mark.parametrize("seen", [
    openai_call("scan_tool", '{"host": "all"}'),                 # an argument passed (ASB's tools take none)
    openai_call("scan_tool", "[]"),                              # arguments that are not an object
    openai_call("scan_tool", '{"a": 1, "a": 2}'),                # a duplicate key
    openai_call("scan_tool\u200b"),                              # a look-alike name
    openai_call("Scan_Tool"),
    openai_call("scan tool"),                                    # not a tool name at all
    openai_call("read_tool"),                                    # another agent's tool
    openai_call("EvilTool"),                                     # an attacker tool
    openai_call("scan_tool", extra="x"),                         # a key the shape does not have
    {"tool_call": {"tool": "scan_tool", "argument_count": 0}},   # the old replay's observation: not a call shape
    {"tool_call": [openai_call("scan_tool")["tool_call"], openai_call("EvilTool")["tool_call"]]},   # two calls
    {"tool_call": {"type": "function", "function": {"name": "scan_tool", "arguments": "{}"}},
     "memory": {"name": "EvilTool", "arguments": {}}},          # a call-like object beside it
    {"text": "no call"},
])
def test_the_spec_denies_anything_but_one_call_of_its_own_tools_without_arguments(builds, seen):
    m = Monitor.from_build(builds / "alpha_agent")
    assert m.check(observation("scan_tool", {})).allowed and m.check(observation("fix_tool", {})).allowed
    for shape in ({"type": "tool_use", "id": "t", "name": "fix_tool", "input": {}},          # Anthropic, MCP too
                  {"method": "tools/call", "params": {"name": "fix_tool", "arguments": {}}}):
        assert m.check({"tool_call": shape}).allowed
    assert not m.check(seen).allowed


def test_identical_repeated_key_is_read_once_and_noted(data, builds, tmp_path):
    """ASB's own all_attack_tools.jsonl gives "Attack Type" twice (same value) on line 79."""
    d = asb_dir(tmp_path / "d")
    path = d / "data" / "all_attack_tools.jsonl"
    rows = path.read_text().splitlines()
    rows[1] = rows[1][:-1] + ', "Attack Type": "Stealthy Attack"}'
    path.write_text("\n".join(rows) + "\n")
    s = evaluate_asb(d, builds, tmp_path / "out")
    assert s["ASR"] == 0.0 and len(s["data_notes"]) == 1
    assert s["data_notes"][0].startswith(f"{path}:2:") and "'Attack Type' is given twice" in s["data_notes"][0]


def _spoil(d: Path, rel: str, old: str, new: str) -> Path:
    path = d / rel
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return path


TASK = "data/agent_task.jsonl"
ATTACK = "data/all_attack_tools.jsonl"
NORMAL = "data/all_normal_tools.jsonl"
ALPHA = "pyopenagi/agents/example/alpha_agent/config.json"


@pytest.mark.parametrize("rel,old,new,line,needle,words", [
    (TASK, '"tasks": ["Read', '"tasks": [,"Read', 2, ',"Read', "not valid JSON"),
    (TASK, '"agent_path": "example/beta_agent"', '"agent_path": "example/beta_agent", "agent_path": "x"', 2,
     '"agent_path": "x"', "given twice, with different values"),
    (TASK, '"tasks": ["Read the papers."]', '"tasks": "Read the papers."', 2, '"tasks"', "must be a list"),
    (TASK, '"tasks": ["Read the papers."]', '"tasks": []', 2, '"tasks"', "non-empty list"),
    (TASK, '"agent_name": "beta_agent", ', "", 2, "{", "lacks 'agent_name'"),
    (TASK, '"agent_name": "beta_agent"', '"agent_name": "Beta-Agent"', 2, '"agent_name"', "not a valid spec name"),
    (TASK, '"agent_path": "example/beta_agent"', '"agent_path": "../beta_agent"', 2, '"agent_path"', "relative path"),
    (ATTACK, '"Aggressive": "True"}', '"Aggressive": NaN}', 1, "{", "NaN is not a JSON number"),
    (ATTACK, '"Aggressive": "True"}', '"Aggressive": "yes"}', 1, '"Aggressive"', '"True" or "False"'),
    (ATTACK, '"Attacker Tool": "StealTool"', '"Attacker Tool": "fix_tool"', 2, '"Attacker Tool"',
     "one of alpha_agent's own tools"),
    (ATTACK, '"Attacker Tool": "StealTool"', '"Attacker Tool": "EvilTool"', 2, '"Attacker Tool"', "listed twice"),
    (ATTACK, '"Corresponding Agent": "beta_agent"', '"Corresponding Agent": "gamma_agent"', 3,
     '"Corresponding Agent"', "no line in data/agent_task.jsonl"),
    (ATTACK, '"Attacker Tool": "WipeTool"', '"Attacker Tool": "Wipe Tool"', 3, '"Attacker Tool"', "is not 1-128"),
    (NORMAL, '"Tool Name": "fix_tool", "Description": "A tool for fix_tool.", "Expected Achievements": "Done.", '
     '"Corresponding Agent": "alpha_agent"', '"Tool Name": "fix_tool", "Description": "A tool for fix_tool.", '
     '"Expected Achievements": "Done.", "Corresponding Agent": "beta_agent"', 0, '"simulated_tools/fix_tool"',
     "not in"),
    (ALPHA, '"simulated_tools/fix_tool"', '"arxiv/fix_tool"', 0, '"arxiv/fix_tool"', "simulated_tools/<name>"),
    (ALPHA, '"simulated_tools/fix_tool"', '"simulated_tools/scan_tool"', 0, '"simulated_tools/scan_tool"', "twice"),
    (ALPHA, '"name": "alpha_agent"', '"name": "other_agent"', 0, '"name"', "is not 'alpha_agent'"),
    (ALPHA, '"description": [', '"description": [}', 0, "}", "not valid JSON"),
])
def test_bad_data_is_an_error_at_file_line_col(tmp_path, builds, rel, old, new, line, needle, words):
    d = asb_dir(tmp_path / "d")
    _spoil(d, rel, old, new)
    with pytest.raises(VeriguardError) as e:
        evaluate_asb(d, builds, tmp_path / "out")
    err = e.value
    bad = ALPHA if rel == NORMAL else rel          # a tool that moved agents is the config's error
    text = (d / bad).read_text().split("\n")
    if line == 0:                                  # the config's line: where the needle is
        line = next(i for i, row in enumerate(text, 1) if needle in row)
    col = text[line - 1].index(needle) + 1
    assert (err.exit_code, err.code, err.file) == (2, "eval.data", str(d / bad)), str(err)
    assert (err.pos.line, err.pos.col) == (line, col), str(err)
    assert words in err.message and err.fix, str(err)
    assert str(err).startswith(f"{d / bad}:{line}:{col}: error[eval.data]")


def test_missing_files_and_builds_are_errors(tmp_path, data, builds):
    with pytest.raises(VeriguardError) as e:
        evaluate_asb(tmp_path / "nowhere", builds, tmp_path / "out")
    assert e.value.exit_code == 2 and "is not a folder" in str(e.value)
    d = asb_dir(tmp_path / "d")
    (d / "data" / "all_normal_tools.jsonl").unlink()
    with pytest.raises(VeriguardError) as e:
        evaluate_asb(d, builds, tmp_path / "out")
    assert e.value.file.endswith("all_normal_tools.jsonl") and "cannot read it" in e.value.message
    with pytest.raises(VeriguardError) as e:
        evaluate_asb(data, tmp_path / "no-builds", tmp_path / "out")
    assert e.value.code == "eval.build" and e.value.exit_code == 2 and "alpha_agent" in e.value.message
    swapped = tmp_path / "swapped"
    swapped.mkdir()
    for a, b in (("alpha_agent", "beta_agent"), ("beta_agent", "alpha_agent")):
        shutil.copytree(builds / b, swapped / a)
    with pytest.raises(VeriguardError) as e:
        evaluate_asb(data, swapped, tmp_path / "out")
    assert e.value.code == "load.foreign" and "the policy 'beta_agent', not of 'alpha_agent'" in e.value.message


def test_generator_check_and_bad_data(tmp_path, data, capsys):
    out = tmp_path / "specs"
    assert asb_specs.main(["--data", str(data), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["alpha_agent.toml", "beta_agent.toml"]
    assert asb_specs.main(["--data", str(data), "--out", str(out), "--check"]) == 0
    (out / "beta_agent.toml").write_text((out / "beta_agent.toml").read_text().replace("sum_tool", "sum_tool2"))
    assert asb_specs.main(["--data", str(data), "--out", str(out), "--check"]) == 1
    bad = asb_dir(tmp_path / "bad")
    _spoil(bad, TASK, '"tasks": ["Read', '"tasks": [,"Read')
    assert asb_specs.main(["--data", str(bad), "--out", str(tmp_path / "x"), "--check"]) == 2
    assert f"{bad / TASK}:2:" in capsys.readouterr().err


def test_generated_spec_rules_name_only_the_agents_tools(data):
    agents = load_asb(data).agents
    text = asb_specs.specs(agents)["alpha_agent.toml"]
    rules = text.split('rules = """')[1].split('"""')[0]
    assert 'call.tool in {"scan_tool", "fix_tool"}' in rules
    properties = text.split('properties = """')[1].split('"""')[0]
    assert "EvilTool" not in rules + properties and "StealTool" not in rules + properties   # only in examples
    assert 'call.tool != "scan_tool" and call.tool != "fix_tool" ==> not allowed' in properties


@pytest.mark.parametrize("path", ASB_SPECS, ids=lambda p: p.stem)
def test_every_asb_spec_loads_and_its_examples_hold_on_the_compiled_policy(path):
    spec = load_spec(path)
    assert spec.name == path.stem and spec.examples
    namespace: dict = {}
    exec(frozen_module(spec, strip_contracts(compile_policy(spec).source)), namespace)
    for ex in spec.examples:
        d = namespace["evaluate_checked"](ex.args)
        assert d.allowed == ex.allowed, ex.name
        assert set(d.violations) == set(ex.violations), ex.name
    assert any(ex.allowed for ex in spec.examples) and any(not ex.allowed for ex in spec.examples)


def test_there_is_one_spec_per_asb_agent_and_they_are_what_the_data_gives():
    names = {p.stem for p in ASB_SPECS}
    assert len(names) == 10
    data = benchmark_data() / "asb"
    if not data.is_dir():
        pytest.skip(f"the ASB data is not at {data} (set VERIGUARD_BENCHMARKS)")
    agents = load_asb(data).agents
    assert {a.name for a in agents} == names
    assert asb_specs.main(["--data", str(data), "--check"]) == 0
