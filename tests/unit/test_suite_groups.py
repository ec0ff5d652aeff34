"""How scripts/test spreads the suite over two processes: the scope xdist schedules by keeps every integration test
in one process (one warm Nagini worker), keeps each other module's tests together (its module-scoped fixtures are
made once) and lets the modules go to whichever process is free."""
from tests.conftest import ROOT, scheduling_scope


def test_the_integration_tests_share_one_process_and_no_other_test_does():
    files = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "tests" / "integration").glob("test_*.py"))
    scopes = {scheduling_scope(f"{f}::test_x[a]") for f in files}
    assert files and len(scopes) == 1
    others = ["tests/unit/test_monitor.py::test_x", "tests/unit/test_guard.py::test_y",
              "tests/property/test_spec_fuzz.py::test_x[a@b]"]
    assert len({scheduling_scope(n) for n in others}) == len(others) and not scopes & {scheduling_scope(n) for n in others}


def test_a_module_s_tests_share_one_process():
    """test_packaging's module fixture builds a wheel in the source tree: built in two processes at once, it raced."""
    assert scheduling_scope("tests/unit/test_packaging.py::test_a") == scheduling_scope("tests/unit/test_packaging.py::b[x]")
    assert scheduling_scope("tests/unit/test_packaging.py::test_a") != scheduling_scope("tests/unit/test_monitor.py::a")


def test_the_tests_that_train_on_the_shipped_bank_share_one_process():
    """Each names a test that exists (a renamed test would silently leave the group and embed the bank again)."""
    from tests.conftest import SHIPPED_BANK

    for prefix in SHIPPED_BANK:
        file, _, name = prefix.partition("::")
        assert (ROOT / file).is_file() and f"def {name}" in (ROOT / file).read_text(), prefix
    scopes = {scheduling_scope(p + ("test_x" if p.endswith("::") else "")) for p in SHIPPED_BANK}
    assert scopes == {"shipped_bank"}
    assert scheduling_scope("tests/unit/test_categoriesx.py::t") != "shipped_bank"
