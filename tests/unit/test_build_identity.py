"""Pinning a build (red-team, 2026-11-29): `expect_sha256` pinned policy.py alone, so another signed build of the
same policy with the same policy.py and other extractors (an older extraction.json, another classifier bank) loaded
under the pin. The certificate's sha256 names the whole build: pinning it refuses every other build, and the
monitor writes it into each decision record."""
import hashlib
import json

import pytest

from tests.conftest import MINIMAL, write_spec
from tests.unit.test_compile_and_freeze import fake_result
from tests.unit.test_signed_builds import keys, no_trust_from_the_environment  # noqa: F401
from veriguard.enforce.keys import load_signing_key, sign_certificate
from veriguard.enforce.loader import PolicyLoadError, load_policy
from veriguard.enforce.monitor import Monitor
from veriguard.synth.freeze import write_build
from veriguard.synth.specfile import load_spec

EXTRACTION = """
[extraction]
role = {{ from = "field", path = "{role}" }}
age = {{ from = "field", path = "age" }}
items = {{ from = "field", path = "items" }}
"""


@pytest.fixture(scope="module")
def two_builds(tmp_path_factory, keys):
    key = load_signing_key(keys["signer"][0])
    made = []
    for role in ("role", "claimed_role"):   # the same rules; the role read from another field
        folder = tmp_path_factory.mktemp(role)
        build, _ = write_build(fake_result(load_spec(write_spec(folder, MINIMAL + EXTRACTION.format(role=role)))),
                               folder / "out", run_info={}, signer=lambda cert: sign_certificate(key, cert))
        made.append(build)
    return made


def certificate_sha256(build):
    return hashlib.sha256((build / "certificate.json").read_bytes()).hexdigest()


def test_two_builds_with_one_policy_py_are_told_apart_by_their_certificates(two_builds, keys):
    a, b = two_builds
    trusted = keys["signer"][1]
    assert load_policy(a).sha256 == load_policy(b).sha256                 # the pin of policy.py cannot tell them
    assert load_policy(b, trusted_keys=trusted, expect_sha256=load_policy(a).sha256).signature == "verified"
    pin = certificate_sha256(a)
    assert load_policy(a, trusted_keys=trusted, expect_sha256=pin).build_sha256 == pin
    with pytest.raises(PolicyLoadError) as e:
        load_policy(b, trusted_keys=trusted, expect_sha256=pin)
    assert e.value.code == "load.expected" and "certificate" in e.value.message


def test_each_decision_record_names_the_build(two_builds, tmp_path):
    a, _ = two_builds
    m = Monitor.from_build(a, log=tmp_path / "d.jsonl")
    record = m.check({"role": "admin", "age": 30, "items": []})
    logged = json.loads((tmp_path / "d.jsonl").read_text().splitlines()[-1])
    assert record.build_sha256 == logged["build_sha256"] == certificate_sha256(a)
