"""The certificate's optional `approval` (issue 11, verified updates): written by freeze, shown in the
report, and accepted by the loader only in exactly its shape."""
import json

import pytest

from veriguard.contracts.build_format import approval_problem
from veriguard.contracts.errors import VeriguardError
from veriguard.enforce.loader import PolicyLoadError, load_policy
from veriguard.synth.freeze import write_build
from veriguard.synth.specfile import load_spec
from tests.conftest import write_spec
from tests.unit.test_compile_and_freeze import fake_result

APPROVAL = {"by": "Dana Sec", "reason": "refunds up to 500 are now allowed", "previous_policy": "a" * 64,
            "newly_allowed": 2, "approved_at": "2026-11-23T12:00:00+00:00"}


@pytest.fixture
def spec(tmp_path):
    return load_spec(write_spec(tmp_path))


def test_an_approval_goes_into_the_certificate_and_the_report_and_loads(spec, tmp_path):
    build, cert = write_build(fake_result(spec), tmp_path / "out", run_info={}, approval=APPROVAL)
    assert cert["approval"] == APPROVAL
    assert json.loads((build / "certificate.json").read_text())["approval"] == APPROVAL
    report = (build / "report.md").read_text()
    assert "## Approved update" in report and "Dana Sec" in report and "a" * 64 in report
    assert load_policy(build).certificate["approval"] == APPROVAL


def test_without_an_approval_the_certificate_has_no_approval_key(spec, tmp_path):
    build, cert = write_build(fake_result(spec), tmp_path / "out", run_info={})
    assert "approval" not in cert and "Approved update" not in (build / "report.md").read_text()


BAD = [({**APPROVAL, "by": ""}, "approval.by"), ({**APPROVAL, "reason": "  "}, "approval.reason"),
       ({k: v for k, v in APPROVAL.items() if k != "reason"}, "missing: ['reason']"),
       ({**APPROVAL, "extra": 1}, "unexpected: ['extra']"),
       ({**APPROVAL, "previous_policy": "A" * 64}, "previous_policy"),
       ({**APPROVAL, "newly_allowed": -1}, "newly_allowed"), ({**APPROVAL, "newly_allowed": True}, "newly_allowed"),
       ({**APPROVAL, "newly_allowed": 1.0}, "newly_allowed"), ({**APPROVAL, "approved_at": "yesterday"}, "approved_at"),
       ({**APPROVAL, "approved_at": "2026-11-23T12:00:00"}, "approved_at"), ("Dana", "an object")]


@pytest.mark.parametrize("approval, why", BAD)
def test_freeze_refuses_a_malformed_approval_and_writes_nothing(spec, tmp_path, approval, why):
    with pytest.raises(VeriguardError) as e:
        write_build(fake_result(spec), tmp_path / "out", run_info={}, approval=approval)
    assert e.value.code == "freeze.approval" and why in e.value.message and e.value.fix
    assert not (tmp_path / "out" / "mini").exists()


@pytest.mark.parametrize("approval, why", BAD + [(None, "an object")])
def test_the_loader_refuses_a_malformed_approval(spec, tmp_path, approval, why):
    build, _ = write_build(fake_result(spec), tmp_path / "out", run_info={})
    cert = json.loads((build / "certificate.json").read_text())
    (build / "certificate.json").write_text(json.dumps(cert | {"approval": approval}))
    with pytest.raises(PolicyLoadError) as e:
        load_policy(build)
    assert e.value.code == "load.certificate" and why in e.value.message


def test_approval_problem_accepts_exactly_the_shape():
    assert approval_problem(APPROVAL) == "" and approval_problem({**APPROVAL, "newly_allowed": 0}) == ""
