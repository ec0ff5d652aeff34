"""How scripts/test spreads the suite over two processes: every integration test is in a JVM group (one
process, one warm Nagini worker per group); the tests that share the shipped syntheses share a group."""
from tests.conftest import ROOT, jvm_group


def test_every_integration_file_is_in_a_jvm_group_and_no_other_test_is():
    files = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "tests" / "integration").glob("test_*.py"))
    assert files and all(jvm_group(f"{f}::test_x") for f in files)
    assert jvm_group("tests/unit/test_monitor.py::test_x") is None
    assert jvm_group("tests/property/test_spec_fuzz.py::test_x[a@b]") is None


def test_the_users_of_the_shipped_syntheses_share_one_group():
    shipped = {jvm_group(f"tests/integration/{f}::t") for f in ("test_synthesis.py", "test_audit_real.py")}
    assert len(shipped) == 1 and shipped != {jvm_group("tests/integration/test_llm_loop.py::t")}
