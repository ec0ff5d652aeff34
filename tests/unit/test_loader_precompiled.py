"""policy.code: the build's pre-compiled policy.py (synth.freeze.policy_code, enforce.loader.precompiled).

The loader runs it instead of compiling policy.py only when it is certified like every file, written by this
Python (magic number) and compiled from the certified policy.py (its sha256); another Python's compiles the
source; anything else is refused. Builds are made without Nagini."""
import __future__
import dis
import hashlib
import importlib.util
import json
import marshal
import shutil
import types

import pytest

from veriguard.enforce import loader
from veriguard.enforce.loader import POLICY_CODE, PolicyLoadError, load_policy
from veriguard.synth.freeze import policy_code, write_build
from veriguard.synth.specfile import load_spec
from tests.conftest import MINIMAL, write_spec
from tests.unit.test_compile_and_freeze import fake_result

FIELDS = MINIMAL + """
[extraction]
role = { from = "field", path = "role" }
age = { from = "field", path = "age" }
items = { from = "field", path = "items" }
"""


@pytest.fixture(scope="module")
def frozen(tmp_path_factory):
    folder = tmp_path_factory.mktemp("spec")
    return write_build(fake_result(load_spec(write_spec(folder, FIELDS))), folder / "out", run_info={})[0]


@pytest.fixture
def build(frozen, tmp_path):
    return shutil.copytree(frozen, tmp_path / "mini")


def recertify(build, rel, data):
    """Rewrite a file and its hash in the certificate consistently (what an unsigned build cannot stop)."""
    cert = json.loads((build / "certificate.json").read_text())
    if data is None:
        (build / rel).unlink()
        del cert["hashes"]["files"][rel]
    else:
        (build / rel).write_bytes(data)
        cert["hashes"]["files"][rel] = hashlib.sha256(data).hexdigest()
    (build / "certificate.json").write_text(json.dumps(cert, indent=2, sort_keys=True) + "\n")


def compiles(monkeypatch):
    """The file names load_policy compiles from here on (the loader's `compile`, recorded)."""
    seen = []

    def recording(source, filename, mode, **kw):
        seen.append(filename)
        return compile(source, filename, mode, **kw)

    monkeypatch.setattr(loader, "compile", recording, raising=False)
    return seen


def decisions(policy):
    return [policy.evaluate_checked({"role": role, "age": age, "items": []}).allowed
            for role in ("admin", "user") for age in (10, 30)]


def test_freeze_writes_and_certifies_the_compiled_policy(frozen):
    cert = json.loads((frozen / "certificate.json").read_text())
    data = (frozen / POLICY_CODE).read_bytes()
    assert cert["hashes"]["files"][POLICY_CODE] == hashlib.sha256(data).hexdigest()
    source = (frozen / "policy.py").read_bytes()
    head = importlib.util.MAGIC_NUMBER + hashlib.sha256(source).digest()
    # as the loader compiles policy.py when there is no policy.code
    assert data.startswith(head) and marshal.loads(data[len(head):]) == \
        compile(source, "policy.py", "exec", flags=__future__.annotations.compiler_flag, dont_inherit=True)


def test_the_loader_runs_it_without_compiling_and_decides_as_the_source_does(build, monkeypatch):
    seen = compiles(monkeypatch)
    with_code = decisions(load_policy(build))
    assert seen == []
    recertify(build, POLICY_CODE, None)  # a build from before policy.code: the source is compiled
    assert decisions(load_policy(build)) == with_code and seen == [str(build / "policy.py")]


def test_another_pythons_bytecode_is_not_used(build, monkeypatch):
    data = (build / POLICY_CODE).read_bytes()
    recertify(build, POLICY_CODE, b"\x00\x00\r\n" + data[4:])
    seen = compiles(monkeypatch)
    load_policy(build)
    assert seen == [str(build / "policy.py")]


def test_a_changed_policy_code_is_refused(build):
    (build / POLICY_CODE).write_bytes((build / POLICY_CODE).read_bytes() + b"\0")
    with pytest.raises(PolicyLoadError) as e:
        load_policy(build)
    assert e.value.code == "load.tampered"


@pytest.mark.parametrize("make, words", [
    (lambda src: policy_code(src.replace("def evaluate(", "def evaluate(  ", 1)), "not compiled from"),
    (lambda src: policy_code(src)[:-40], "not readable bytecode"),
    (lambda src: policy_code(src)[:len(importlib.util.MAGIC_NUMBER) + 32] + marshal.dumps(("not", "code")),
     "not a code object"),
])
def test_bytecode_that_is_not_the_certified_policy_is_refused(build, make, words):
    recertify(build, POLICY_CODE, make((build / "policy.py").read_text()))
    with pytest.raises(PolicyLoadError) as e:
        load_policy(build)
    assert e.value.code == "load.exec" and words in e.value.message and e.value.fix


def test_an_unexpected_file_in_the_certificate_is_still_refused(build):
    recertify(build, "policy.pyc", b"x")
    with pytest.raises(PolicyLoadError) as e:
        load_policy(build)
    assert "must list exactly" in e.value.message


def test_a_policy_code_the_certificate_does_not_list_is_refused_not_used(build):
    data = (build / POLICY_CODE).read_bytes()
    recertify(build, POLICY_CODE, None)
    (build / POLICY_CODE).write_bytes(data)  # planted beside a build whose certificate does not cover it
    with pytest.raises(PolicyLoadError) as e:
        load_policy(build)
    assert e.value.code == "load.tampered" and POLICY_CODE in e.value.message


def code_objects(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from code_objects(const)


def with_a_specialised_opcode(data: bytes, depth: int) -> bytes:
    """`data` (policy.code) with the first instruction of a code object `depth` deep that has a specialised
    form (BINARY_OP_ADD_INT for BINARY_OP, say) written as that form: still == to the genuine code object."""
    head = len(importlib.util.MAGIC_NUMBER) + 32
    out = bytearray(data)
    for code in code_objects(marshal.loads(data[head:])):
        if code.co_qualname.count(".") + (code.co_name != "<module>") < depth:
            continue
        for ins in dis.get_instructions(code):
            if ins.opname in dis._specializations:
                at = data.index(code.co_code, head) + ins.offset
                out[at] = dis._all_opmap[dis._specializations[ins.opname][0]]
                assert marshal.loads(bytes(out[head:])) == marshal.loads(data[head:])
                return bytes(out)
    raise AssertionError(f"no code object {depth} deep has an instruction with a specialised form")


@pytest.mark.parametrize("depth", [0, 1, 2])
def test_bytecode_with_a_specialised_opcode_is_refused_at_any_depth(build, depth):
    recertify(build, POLICY_CODE, with_a_specialised_opcode((build / POLICY_CODE).read_bytes(), depth))
    with pytest.raises(PolicyLoadError) as e:
        load_policy(build)
    assert e.value.code == "load.exec" and "specialised instructions" in e.value.message and e.value.fix


def test_the_shipped_builds_hold_no_specialised_instruction(tmp_path):
    from tests.conftest import ROOT
    from tests.unit.test_compile_and_freeze import fake_result
    from veriguard.synth.freeze import write_build
    from veriguard.synth.specfile import load_spec

    head = len(importlib.util.MAGIC_NUMBER) + 32
    for spec in ("payments", "eicu_ac", "shell_agent"):
        write_build(fake_result(load_spec(ROOT / "specs" / f"{spec}.toml")), tmp_path, run_info={})
    shipped = sorted(tmp_path.glob(f"*/{POLICY_CODE}"))
    assert len(shipped) == 3
    for path in shipped:
        data = path.read_bytes()
        if data.startswith(importlib.util.MAGIC_NUMBER):
            assert loader.specialised(marshal.loads(data[head:])) == "", path
