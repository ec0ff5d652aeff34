"""load_policy on mutated builds: every mutation of certificate.json, extraction.json, policy.py or a spec
file is refused with PolicyLoadError unless what the loader trusts is unchanged; never another exception."""
import json
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veriguard.contracts.build_format import certificate_bytes
from veriguard.enforce.loader import PolicyLoadError, load_policy
from veriguard.synth.freeze import sha256, write_build
from veriguard.synth.specfile import load_spec
from tests.conftest import SHIPPED, examples
from tests.unit.test_compile_and_freeze import fake_result

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
                    | st.sampled_from(["PROVED", "FAILED", "true", "false", "0" * 64, "policy.py", "../x", "eicu_ac"]),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                    max_leaves=8)
TARGETS = ["certificate.json", "extraction.json", "policy.py", "policy_verified.py", "spec/eicu_ac.toml",
           "spec/eicu_ac/schema.json"]


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    spec = load_spec(next(p for p in SHIPPED if p.stem == "eicu_ac"))
    built, _ = write_build(fake_result(spec), tmp_path_factory.mktemp("b"), run_info={})
    return built


def trusted(cert):
    """What the loader relies on: the verdict and every hash it checks (not the report-only contract hash)."""
    hashes = {k: v for k, v in cert["hashes"].items() if k != "contract"}
    return cert["format"], cert["policy"], cert["status"], cert["fully_proved"], hashes


def paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from paths(v, prefix + (i,))


@st.composite
def json_edit(draw, doc):
    where = draw(st.sampled_from(list(paths(doc))))
    if not where:
        return draw(JSON)
    parent = doc
    for key in where[:-1]:
        parent = parent[key]
    how = draw(st.sampled_from(["replace", "delete", "add"] if isinstance(parent, dict) else ["replace"]))
    if how == "replace":
        parent[where[-1]] = draw(JSON)
    elif how == "delete":
        del parent[where[-1]]
    else:
        parent[draw(st.text(max_size=8))] = draw(JSON)
    return doc


@st.composite
def byte_edit(draw, data):
    at = draw(st.integers(0, max(len(data) - 1, 0)))
    how = draw(st.sampled_from(["flip", "insert", "delete", "truncate"]))
    if how == "flip" and data:
        return data[:at] + bytes([draw(st.integers(0, 255))]) + data[at + 1:]
    if how == "insert":
        return data[:at] + draw(st.binary(min_size=1, max_size=8)) + data[at:]
    if how == "delete":
        return data[:at] + data[at + draw(st.integers(1, 16)):]
    return data[:at]


def copy(build, tmp_path_factory):
    target = tmp_path_factory.mktemp("c") / build.name   # the folder named after its policy, as synth writes it
    shutil.copytree(build, target)
    return target


def refused_or_unchanged(target, original):
    try:
        policy = load_policy(target, accept_unproved=True)
    except PolicyLoadError as e:
        assert e.code.startswith("load.") and e.message and e.fix
        return
    now = json.loads((target / "certificate.json").read_text())
    assert trusted(now) == trusted(original)
    for rel in now["hashes"]["files"]:
        assert sha256((target / rel).read_bytes()) == original["hashes"]["files"][rel]
    assert policy.trusted


@settings(max_examples=examples(250), deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_mutated_builds_are_refused_unless_what_is_trusted_is_unchanged(build, tmp_path_factory, data):
    original = json.loads((build / "certificate.json").read_text())
    target = copy(build, tmp_path_factory)
    rel = data.draw(st.sampled_from(TARGETS))
    raw = (target / rel).read_bytes()
    if rel.endswith(".json") and data.draw(st.booleans()):
        raw = json.dumps(data.draw(json_edit(json.loads(raw)))).encode()
    else:
        raw = data.draw(byte_edit(raw))
    (target / rel).write_bytes(raw)
    refused_or_unchanged(target, original)


@settings(max_examples=examples(150), deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_extraction_json_with_a_matching_hash_is_read_strictly(build, tmp_path_factory, data):
    """A consistent rewrite (file and every hash) needs a signature to catch; the loader must still read the
    file strictly: PolicyLoadError, or objects where the monitor expects them."""
    target = copy(build, tmp_path_factory)
    raw = (target / "extraction.json").read_bytes()
    raw = json.dumps(data.draw(json_edit(json.loads(raw)))).encode() if data.draw(st.booleans()) \
        else data.draw(byte_edit(raw))
    (target / "extraction.json").write_bytes(raw)
    cert = json.loads((target / "certificate.json").read_text())
    cert["hashes"]["files"]["extraction.json"] = sha256(raw)
    (target / "certificate.json").write_bytes(certificate_bytes(cert))
    try:
        policy = load_policy(target)
    except PolicyLoadError as e:
        assert e.code == "load.extraction"
        return
    assert isinstance(policy.extraction["extraction"], dict) and isinstance(policy.extraction["enforcement"], dict)
