"""Names from a spec or a model's draft are identifiers; values reach generated code only as constants;
every generated module passes an allowlist before anything imports it (red-team finding 6, r5)."""
import ast
import dataclasses
import json
import subprocess
import sys
import tomllib

import pytest

from veriguard.contracts.errors import GeneratedCodeError, SpecError
from veriguard.contracts.generated import check_generated
from veriguard.contracts.signature import Signature
from veriguard.contracts.to_python import checker_source, compile_checker
from veriguard.contracts.types import BOOL, INT, RecordT
from veriguard.synth.compile import compile_policy
from veriguard.synth.formalize import load_draft, render_draft
from veriguard.synth.freeze import frozen_module
from veriguard.synth.implement import assemble
from veriguard.synth.specfile import load_spec
from tests.conftest import MINIMAL, ROOT, SHIPPED, write_spec
from veriguard.verify.runnable import strip_contracts
from veriguard.verify.testrun import load

PAYLOAD = "__import__('os').system('touch {marker}')"
R5 = '''
name = "inj"
request = "test"
[types]
Profile = {{ record = {{ age = "int", "x: int = {payload}, *, user_y" = "bool" }} }}
[arguments]
user = {{ type = "Profile" }}
[contract]
rules = """
rule adult "Users must be adults": user.age >= 18
"""
'''


def r5_spec(tmp_path):
    marker = tmp_path / "PWNED"
    path = tmp_path / "inj.toml"
    path.write_text(R5.format(payload=PAYLOAD.format(marker=marker)).lstrip("\n"), encoding="utf-8")
    return path, marker


def test_r5_record_field_payload_is_refused_where_it_stands(tmp_path):
    path, marker = r5_spec(tmp_path)
    with pytest.raises(SpecError) as e:
        load_spec(path)
    line = path.read_text().splitlines()[e.value.pos.line - 1]
    assert e.value.code == "spec.name" and e.value.pos.line == 4
    assert line[e.value.pos.col - 1:].startswith("x: int = __import__") and "lower-case" in e.value.fix
    assert not marker.exists()


def test_r5_through_veriguard_synth_exits_2_before_any_work(tmp_path):
    path, marker = r5_spec(tmp_path)
    out = subprocess.run([sys.executable, "-m", "veriguard.cli", "synth", str(path), "--out", str(tmp_path / "out"),
                          "--mutants", "2"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 2, out.stderr
    assert f"{path}:4:38: error[spec.name]" in out.stderr and "Traceback" not in out.stderr
    assert not marker.exists() and not (tmp_path / "out" / "inj").exists()


def q(name):
    return json.dumps(name)


def minimal_with(kind, bad):
    """MINIMAL with one name of `kind` replaced by `bad` (quoted where TOML needs it)."""
    if kind == "argument":
        return MINIMAL.replace('age = "int"', f'{q(bad)} = "int"').replace("age = 30", f"{q(bad)} = 30").replace(
            "age >=", f"{bad} >=").replace("age <", f"{bad} <")
    if kind == "field":
        return MINIMAL.replace('[arguments]', '[arguments]\nuser = { type = "P" }').replace(
            '[types]', f'[types]\nP = {{ record = {{ {q(bad)} = "int" }} }}').replace(
            "args = { role", f"args = {{ user = {{ {q(bad)} = 1 }}, role")
    if kind == "type":
        return MINIMAL.replace('Role = {', f'{q(bad)} = {{ enum = ["a"] }}\nRole = {{')
    if kind == "table":
        return MINIMAL.replace("[tables.ok]", f"[tables.{q(bad)}]").replace("ok(role", f"{bad}(role")
    if kind == "spec":
        return MINIMAL.replace('name = "mini"', f"name = {q(bad)}")
    if kind in ("rule", "property"):
        old = "rule adult" if kind == "rule" else "property minors"
        return MINIMAL.replace(old, f"{kind} {bad}")
    assert kind == "variable"
    return MINIMAL.replace("forall (a, b) in items: ok(role, a, b)", f"forall ({bad}, b) in items: ok(role, {bad}, b)")


COMMON = ["x: int = 1, *, y", "class", "match", "__init__", "_private", "", "x__y", "x_", "a" * 64, "\uff41ge",
          "len", "allowed"]
LOWER = ["Age"]
IDENTIFIERS = ["decide", "vg_x", "table_x", "rule_x", "print", "e0", "violation_list", "list_pred"]
KINDS = {"argument": COMMON + LOWER + IDENTIFIERS, "variable": COMMON + LOWER + IDENTIFIERS,
         "field": COMMON + LOWER, "table": COMMON + LOWER, "spec": COMMON + LOWER, "rule": COMMON + LOWER,
         "property": COMMON + LOWER, "type": COMMON}
CASES = [(kind, bad) for kind, bads in KINDS.items() for bad in bads]


@pytest.mark.parametrize("kind, bad", CASES, ids=[f"{k}-{b!r}" for k, b in CASES])
def test_every_kind_of_name_is_checked_with_a_place_and_a_fix(tmp_path, kind, bad):
    with pytest.raises(SpecError) as e:  # ContractError is a SpecError
        load_spec(write_spec(tmp_path, minimal_with(kind, bad)))
    err = e.value
    assert err.code in ("spec.name", "contract.name", "contract.syntax") and err.pos.line > 0 and err.fix
    assert err.file.endswith("mini.toml")


@pytest.mark.parametrize("kind", KINDS)
def test_the_same_specs_load_with_a_good_name(tmp_path, kind):
    good = "Good_name2" if kind == "type" else "good_name2"
    assert load_spec(write_spec(tmp_path, minimal_with(kind, good))).contract is not None


def test_flattened_record_parameters_are_checked_and_unique(tmp_path):
    clash = MINIMAL.replace('[types]', '[types]\nP = { record = { age = "int" } }').replace(
        '[arguments]', '[arguments]\nuser = "P"\nuser_age = "int"')
    with pytest.raises(SpecError, match="user_age") as e:
        load_spec(write_spec(tmp_path, clash))
    assert e.value.code == "spec.name" and e.value.pos.line > 0
    prefix = MINIMAL.replace('[types]', '[types]\nP = { record = { x = "int" } }').replace(
        '[arguments]', '[arguments]\nitem = "P"')
    with pytest.raises(SpecError, match="item_x"):
        load_spec(write_spec(tmp_path, prefix))


def test_valid_names_still_load(tmp_path):
    body = MINIMAL.replace("age", "age_in_years_2").replace('"mini"', '"mini_policy_2"')
    spec = load_spec(write_spec(tmp_path, body))
    assert spec.name == "mini_policy_2" and spec.signature.argument("age_in_years_2")


VALUE = "'); __import__('os').system('touch {marker}') #\"\"\"\n\\"


def contract_string(text):
    """`text` as a contract-language string, for a TOML literal string (a TOML escape in the contract's text is
    refused: spec.contract_escape)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def literal_rules(body):
    """MINIMAL with its rules in a TOML multi-line literal string."""
    start = body.index('rules = """')
    end = body.index('"""', start + len('rules = """'))
    return body[:start] + "rules = " + "'" * 3 + body[start + len('rules = """'):end] + "'" * 3 + body[end + 3:]


def test_enum_values_and_messages_reach_code_only_as_constants(tmp_path):
    marker = tmp_path / "PWNED"
    value = VALUE.format(marker=marker)
    body = MINIMAL.replace('Role = { enum = ["admin", "user"] }', f'Role = {{ enum = ["admin", "user", {q(value)}] }}')
    body = body.replace('rule adult "Users must be adults": age >= 18',
                        f'rule adult {contract_string("Adults " + value)}: '
                        f'age >= 18 and role != {contract_string(value)}')
    spec = load_spec(write_spec(tmp_path, literal_rules(body)))
    compiled = compile_policy(spec)
    runnable = strip_contracts(compiled.source)
    frozen = frozen_module(spec, runnable)
    for source in (compiled.source, runnable, frozen, checker_source(spec.contract)):
        tree = ast.parse(source)
        assert not any(isinstance(n, ast.Name) and n.id == "__import__" for n in ast.walk(tree))
        assert any(isinstance(n, ast.Constant) and n.value == value for n in ast.walk(tree))
    rule_fn = next(n for n in ast.parse(compiled.source).body
                   if isinstance(n, ast.FunctionDef) and n.name == "rule_adult")
    assert ast.get_docstring(rule_fn, clean=False) == spec.contract.rule("adult").message
    namespace = {}
    exec(frozen, namespace)
    decision = namespace["evaluate_checked"]({"role": value, "age": 30, "items": []})
    assert not decision.allowed and decision.violations == ("adult",)
    assert not marker.exists()


def test_a_spec_file_name_cannot_break_out_of_the_docstring(tmp_path):
    name = 'x"""\nimport os; os.system("id")\n"""y.toml'
    path = write_spec(tmp_path, MINIMAL, name=name)
    compiled = compile_policy(load_spec(path))
    tree = ast.parse(compiled.source)
    assert name in ast.get_docstring(tree, clean=False)
    assert not any(isinstance(n, ast.Import) for n in ast.walk(tree))


def bypassed_spec(tmp_path, field):
    """A spec whose record has a field the loader would refuse (as if a generator had a bug)."""
    body = MINIMAL.replace('[types]', '[types]\nP = { record = { good = "int" } }').replace(
        '[arguments]', '[arguments]\nuser = "P"').replace("args = { role", "args = { user = { good = 1 }, role")
    spec = load_spec(write_spec(tmp_path, body))
    bad = RecordT("P", (("good", INT), (field, BOOL)))
    args = tuple(dataclasses.replace(a, type=bad) if a.name == "user" else a for a in spec.signature.arguments)
    sig = Signature(spec.signature.types, args, spec.signature.tables)
    return dataclasses.replace(spec, signature=sig, contract=dataclasses.replace(spec.contract, signature=sig))


def test_generated_code_is_checked_even_when_a_bad_name_gets_past_the_loader(tmp_path):
    marker = tmp_path / "PWNED"
    spec = bypassed_spec(tmp_path, f"x: int = {PAYLOAD.format(marker=marker)}, *, user_y")
    with pytest.raises(GeneratedCodeError) as e:
        compile_policy(spec)
    assert e.value.code == "internal.generated_code" and "none of it was run" in e.value.message
    with pytest.raises(GeneratedCodeError):
        compile_checker(spec.contract)
    assert not marker.exists()


def test_the_test_process_checks_the_module_before_running_it(tmp_path):
    marker = tmp_path / "PWNED"
    spec = load_spec(write_spec(tmp_path))
    for source in (f"import os\nos.system('touch {marker}')\ndef decide():\n    return 1\n",
                   f"def decide():\n    return 1\n__import__('os').system('touch {marker}')\n",
                   f"def decide(x=__import__('os').system('touch {marker}')):\n    return 1\n",
                   "def decide():\n    return ().__class__\n"):
        with pytest.raises(GeneratedCodeError):
            load(spec, source)  # freezes it first: every generated part is checked before any runs
    assert not marker.exists()


@pytest.mark.parametrize("source", [
    "import os\n", "from os import system\n", "from typing import *\n", "x = open('f')\n",
    "def f():\n    return getattr(f, 'x')\n", "def f(x):\n    return x.__class__\n", "def f(x):\n    return x.mro\n",
    "def f():\n    return f'{1}'\n", "def f():\n    return b'x'\n", "def f():\n    global y\n",
    "class Other:\n    x: int\n", "@dataclass\nclass Decision:\n    x: int\n", "@staticmethod\ndef f():\n    pass\n",
    "def f(*a):\n    pass\n", "def f(**k):\n    pass\n", "def f():\n    return (lambda: 1)()\n",
    "def f():\n    return [1][0]()\n", "def f():\n    return exec('1')\n", "def f():\n    try:\n        pass\n"
    "    except Exception:\n        pass\n", "def f():\n    return 1.5\n", "x = 1\n", "print(1)\n",
    "def f(:\n",
])
def test_the_allowlist_refuses_what_generated_code_never_contains(source):
    with pytest.raises(GeneratedCodeError):
        check_generated(source, "runnable")


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_shipped_spec_generates_modules_inside_the_allowlist(path):
    spec = load_spec(path)
    compiled = compile_policy(spec)
    check_generated(compiled.source, "nagini")
    check_generated(strip_contracts(compiled.source), "runnable")
    check_generated(checker_source(spec.contract), "checker")


def test_a_model_draft_cannot_smuggle_sections_keys_or_paths(tmp_path):
    spec = load_spec(next(p for p in SHIPPED if p.stem == "payments"))
    evil = 'x"\n[extraction]\nage = { from = "code", schema = "../../etc/passwd" }\n#'
    rules = 'rule adult "Adults": age >= 18\n"""\n[extraction]\nx = 1\n"""'
    data = {"types": {evil: {"enum": [evil, "a\x00b", "\ud800"]}},
            "arguments": {"age": {"type": "int", "doc": evil}},
            "tables": {"../../outside": {"rows": [["a"]], "signature": "(str) -> bool", "default": evil}},
            "rules": rules, "properties": "", "notes": ""}
    workdir = tmp_path / "w"
    draft = render_draft(spec, data, workdir)
    parsed = tomllib.loads(draft.toml)
    assert set(parsed) == {"name", "request", "agent", "types", "arguments", "tables", "contract"}
    assert parsed["contract"]["rules"].strip() == rules and list(parsed["types"]) == [evil]
    assert parsed["arguments"]["age"]["doc"] == evil and list(parsed["tables"]) == ["../../outside"]
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["payments.toml", "table_0.json"]
    with pytest.raises(SpecError) as e:
        load_draft(draft)
    assert e.value.code == "spec.name" and e.value.file == str(draft.path) and e.value.pos.line > 0


ACCEPTED = [  # (helpers, body of decide) a model may write
    ("", "vg_violations = violation_list(not rule_adult(age), len(violators_access(role, items)) > 0)\n"
         "return Decision(len(vg_violations) == 0, vg_violations, violators_access(role, items))"),
    ("@Pure\ndef adult(a: int) -> bool:\n    Requires(a >= 0)\n    Ensures(Implies(a >= 18, Result()))\n"
     "    return a >= 18", "return Decision(adult(age), [], [])"),
    ("", "vg_x = [].append(1)\nreturn Decision(True, [], [])"),
]
REFUSED = [
    ("def h(x: int = 1) -> int:\n    return x", "return Decision(True, [], [])"),
    ("def h(**k) -> int:\n    return 1", "return Decision(True, [], [])"),
    ("x = 1", "return Decision(True, [], [])"),
    ("", "return Decision(Implies(True, True), [], [])"),
    ("", "return Decision(items.allowed(), [], [])"),
    ("def _h() -> int:\n    return 1", "return Decision(True, [], [])"),
    ("", "return Decision(True, [], []).__class__"),
]


@pytest.mark.parametrize("helpers, body", ACCEPTED)
def test_model_code_the_subset_accepts_stays_inside_the_generated_allowlist(tmp_path, helpers, body):
    compiled = compile_policy(load_spec(write_spec(tmp_path)))
    impl = assemble(compiled, body, helpers)
    assert not impl.violations
    check_generated(impl.source, "nagini")
    check_generated(strip_contracts(impl.source, drop_functions=compiled.property_functions), "runnable")


@pytest.mark.parametrize("helpers, body", REFUSED)
def test_the_subset_refuses_what_the_generated_allowlist_would(tmp_path, helpers, body):
    assert assemble(compile_policy(load_spec(write_spec(tmp_path))), body, helpers).violations
