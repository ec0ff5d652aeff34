"""A file beside the spec has one name in a build (red-team, 2026-11-29, night; helper G's open item).

A spec that named a file `./eicu_ac/schema.json`, `eicu_ac//schema.json` or `eicu_ac/schema.json/` (or itself, as an
[extraction] file) passed `load_spec` and synth's proof, and froze a build whose certificate listed the file under
that spelling: the loader then refused the build it had just made (`load.tampered`: "spec holds files the
certificate does not cover", or `load.certificate`), after minutes of proof. A certificate may also name one file
twice (`spec/ok.json` and `spec/./ok.json`) and a signed one loaded. Now the spec is refused where it names the file
(`spec.path`, exit 2, with the plain spelling), and the loader refuses a certificate that spells a path otherwise.
"""
import json
import shutil

import pytest

from veriguard.contracts.errors import SpecError
from veriguard.enforce.loader import PolicyLoadError, load_policy
from veriguard.synth.specfile import load_spec
from tests.conftest import MINIMAL, ROOT, write_spec
from tests.unit.test_signed_builds import build, keys, no_trust_from_the_environment, signed  # noqa: F401, F811
from tests.unit.test_audit import key, signer  # noqa: F401


def eicu_with_schema(tmp_path, schema):
    shutil.copy(ROOT / "specs" / "eicu_ac.toml", tmp_path)
    shutil.copytree(ROOT / "specs" / "eicu_ac", tmp_path / "eicu_ac")
    spec = tmp_path / "eicu_ac.toml"
    spec.write_text(spec.read_text().replace('schema = "eicu_ac/schema.json"', f'schema = "{schema}"'))
    return spec


@pytest.mark.parametrize("schema", ["./eicu_ac/schema.json", "eicu_ac//schema.json", "eicu_ac/schema.json/",
                                    "eicu_ac/./schema.json"])
def test_an_extraction_file_spelled_otherwise_is_refused_with_its_plain_spelling(tmp_path, schema):
    spec = eicu_with_schema(tmp_path, schema)
    with pytest.raises(SpecError) as e:
        load_spec(spec)
    assert e.value.code == "spec.path" and "'eicu_ac/schema.json'" in e.value.message
    assert e.value.pos.line == spec.read_text().splitlines().index(next(
        line for line in spec.read_text().splitlines() if schema in line)) + 1


def test_an_extraction_file_that_is_the_spec_itself_is_refused(tmp_path):
    with pytest.raises(SpecError) as e:
        load_spec(eicu_with_schema(tmp_path, "eicu_ac.toml"))
    assert e.value.code == "spec.path" and "the spec itself" in e.value.message


@pytest.mark.parametrize("table", ["./ok.json", "ok.json/", ".//ok.json"])
def test_a_table_file_spelled_otherwise_is_refused(tmp_path, table):
    spec = write_spec(tmp_path, MINIMAL.replace('file = "ok.json"', f'file = "{table}"'))
    with pytest.raises(SpecError) as e:
        load_spec(spec)
    assert e.value.code == "spec.path" and "'ok.json'" in e.value.message


def test_the_plain_spelling_loads(tmp_path):
    assert load_spec(eicu_with_schema(tmp_path, "eicu_ac/schema.json")).extraction_files


@pytest.mark.parametrize("spelled,plain", [("spec/./ok.json", "spec/ok.json"), ("spec//ok.json", "spec/ok.json"),
                                          ("spec/ok.json/", "spec/ok.json"), ("./policy.py", "policy.py")])
def test_a_signed_certificate_that_names_a_file_a_second_way_is_refused(build, key, spelled, plain):
    cert = json.loads((build / "certificate.json").read_text())
    files = cert["hashes"]["files"]
    files[spelled] = files[plain]
    if spelled.startswith("spec/"):
        cert["hashes"]["tables"][spelled.removeprefix("spec/")] = files[plain]
    data = (json.dumps(cert, indent=2, sort_keys=True) + "\n").encode()
    (build / "certificate.json").write_bytes(data)
    (build / "signature.json").write_bytes(signer(key)(data))
    with pytest.raises(PolicyLoadError) as e:
        load_policy(build, trusted_keys={key[0].key_id: key[0].public}, require_signed=True)
    assert e.value.code == "load.certificate" and repr(spelled) in e.value.message
