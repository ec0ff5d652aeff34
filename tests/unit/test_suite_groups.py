"""How scripts/test spreads the suite over two processes: every integration test is in a JVM group (one
process, one warm Nagini worker per group); today they all share one group."""
from tests.conftest import ROOT, jvm_group


def test_every_integration_file_is_in_a_jvm_group_and_no_other_test_is():
    files = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "tests" / "integration").glob("test_*.py"))
    assert files and all(jvm_group(f"{f}::test_x") for f in files)
    assert jvm_group("tests/unit/test_monitor.py::test_x") is None
    assert jvm_group("tests/property/test_spec_fuzz.py::test_x[a@b]") is None


def test_the_integration_tests_share_one_group():
    files = ("test_synthesis.py", "test_audit_real.py", "test_llm_loop.py", "test_verifier.py")
    assert len({jvm_group(f"tests/integration/{f}::t") for f in files}) == 1
