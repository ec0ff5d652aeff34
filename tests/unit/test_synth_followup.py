"""Follow-ups of the third red-team pass on builds (helper H22, 2026-11-30): the mutant limit synth used is recorded
in the certificate, and `audit --mutation` re-makes the mutants with it.

Before, `synth --mutants N` was not recorded: a re-signed certificate counting fewer mutants than synth made (20 of
20 where synth made 30, the ten it leaves out possibly survivors) passed `audit --mutation`, which re-made only as
many mutants as the certificate counts. Now synth records `mutation.limit`; the claims check refuses a limit that is
not a whole number at least the total; `audit --mutation` re-makes the mutants with that limit and refutes a
certificate that counts fewer; a certificate without a limit (an older build) loads as before (the monitor reads no
mutation figure), and `audit --mutation` says NOT_CHECKED for it when its figures agree, so the audit fails.
"""
import pytest

from veriguard.contracts.errors import SpecError
from veriguard.enforce.loader import load_policy
from veriguard.synth.pipeline import mutation_gate
from veriguard.synth.specfile import load_spec
from veriguard.verify.mutation import Mutant
from veriguard.verify import testing
from veriguard.verify.verdicts import Verdict
from tests.conftest import write_spec
from tests.unit.test_audit import Prover, key, run, verdicts  # noqa: F401
from tests.unit.test_audit_claims import resign
from tests.unit.test_audit_redteam3 import TRUE_MUTATION, no_worker, with_mutation
from tests.unit.test_signed_builds import build, keys, no_trust_from_the_environment, signed  # noqa: F401, F811


def test_the_mutation_summary_records_the_limit_the_mutants_were_made_with(tmp_path):
    spec = load_spec(write_spec(tmp_path))
    chosen = [Mutant(i, "op", 1, "change", "source") for i in range(3)]
    tests = testing.TestReport([], {}, [{"id": i, "killed_by": "examples"} for i in range(3)])
    gate, summary = mutation_gate(spec, None, tests, chosen, tmp_path, lambda _m: None, limit=30)
    assert gate.verdict is Verdict.PASSED and summary["limit"] == 30 and summary["total"] == 3


def test_audit_mutation_refutes_a_certificate_counting_fewer_mutants_than_its_limit_makes(build, key):
    """Synth made 30 (limit 30); the certificate counts the first 20, all killed: before, the re-run made 20 and
    passed it."""
    resign(build, key, with_mutation({**TRUE_MUTATION, "killed": 20, "by_tests": 20, "total": 20}))
    result = run(build, key, prover=Prover(), mutation=True, mutation_worker=no_worker)
    v = verdicts(result)
    assert v["claims"] is Verdict.PASSED   # 20 of 20 under a limit of 30 adds up: only the re-run sees 30 mutants
    assert v["mutation (re-run)"] is Verdict.REFUTED and result.exit_code == 1, result.to_dict()
    assert "total 20 in the certificate, 30 here" in result.checks[-1].summary


def test_audit_mutation_passes_a_smaller_limit_the_certificate_states(build, key):
    """`synth --mutants 20` makes exactly this certificate: it says what was run, and the audit shows the limit."""
    resign(build, key, with_mutation({**TRUE_MUTATION, "killed": 20, "by_tests": 20, "total": 20, "limit": 20}))
    result = run(build, key, prover=Prover(), mutation=True, mutation_worker=no_worker)
    assert result.ok, result.to_dict()
    assert "mutant limit 20" in result.checks[-1].summary


def test_an_old_certificate_without_a_limit_loads_and_its_re_run_is_not_checked(build, key):
    old = {k: v for k, v in TRUE_MUTATION.items() if k != "limit"}
    resign(build, key, with_mutation(old))
    assert load_policy(build, trusted_keys={key[0].key_id: key[0].public}).trusted
    plain = run(build, key, prover=Prover())
    assert plain.ok, plain.to_dict()   # without --mutation nothing re-derives the count
    result = run(build, key, prover=Prover(), mutation=True, mutation_worker=no_worker)
    check = result.checks[-1]
    assert check.verdict is Verdict.NOT_CHECKED and result.exit_code == 1, result.to_dict()
    assert "records no mutant limit" in check.summary and "re-run `veriguard synth`" in check.summary


@pytest.mark.parametrize("limit", ["30", True, 30.0, 29, 0, -1, None, [30]], ids=repr)
def test_the_claims_check_refuses_a_limit_that_is_not_a_count_at_least_the_total(build, key, limit):
    resign(build, key, with_mutation({**TRUE_MUTATION, "limit": limit}))
    result = run(build, key, prover=Prover(), mutation=True, mutation_worker=no_worker)
    v = verdicts(result)
    assert v["claims"] is Verdict.REFUTED and v["mutation (re-run)"] is Verdict.REFUTED, result.to_dict()


def test_a_limit_far_above_the_sites_makes_each_site_once(build, key):
    """`synth --mutants 1000000` on a policy with 30-odd sites: making the mutants stops at the last site."""
    resign(build, key, with_mutation({**TRUE_MUTATION, "limit": 10**6}))
    result = run(build, key, prover=Prover(), mutation=True, mutation_worker=no_worker)
    assert verdicts(result)["mutation (re-run)"] is Verdict.REFUTED   # the policy has more than 30 sites
    assert "total 30 in the certificate" in result.checks[-1].summary


# A CSV table's `header`: an all-str CSV whose first line is data could not be told it has no header (the first line
# was dropped as the header, its row taking the table's default); `header = false` reads every line as a row. Before,
# `header` was an unknown key (spec.unknown_key), and `path` on a CSV table was ignored: the spec showed a part of a
# file that was read whole.
HEADER_SPEC = '''
name = "pairs"
request = "Users reach only the hosts the table lists."

[arguments]
user = {{ type = "str" }}
host = {{ type = "str" }}

[tables.reach]
file = "{file}"
signature = "(str, str) -> bool"
{option}

[contract]
rules = """
rule listed "A user reaches only listed hosts": reach(user, host)
"""
'''


def header_spec(tmp_path, option, *, file="reach.csv", table="alice,db1\nbob,db2\n"):
    (tmp_path / file).write_text(table, encoding="utf-8")
    path = tmp_path / "pairs.toml"
    path.write_text(HEADER_SPEC.format(file=file, option=option), encoding="utf-8")
    return path


def reach_rows(path):
    return dict(load_spec(path).signature.tables[0].rows)


def test_header_false_reads_the_first_line_of_an_all_str_csv_as_a_row(tmp_path):
    assert reach_rows(header_spec(tmp_path, "header = false")) == {("alice", "db1"): True, ("bob", "db2"): True}
    assert reach_rows(header_spec(tmp_path, "header = true")) == {("bob", "db2"): True}


def test_header_false_on_a_csv_with_a_header_line_of_an_int_column_is_refused(tmp_path):
    (tmp_path / "caps.csv").write_text("who,cap\nbob,100\n", encoding="utf-8")
    (tmp_path / "caps.toml").write_text(
        'name = "caps"\nrequest = "r"\n[arguments]\nwho = { type = "str" }\namount = { type = "int" }\n'
        '[tables.cap]\nfile = "caps.csv"\nsignature = "(str) -> int"\ndefault = 0\nheader = false\n'
        '[contract]\nrules = """\nrule under "under the cap": amount <= cap(who)\n"""\n', encoding="utf-8")
    with pytest.raises(SpecError) as e:
        load_spec(tmp_path / "caps.toml")
    assert e.value.code == "spec.table" and "'cap'" in e.value.message and e.value.file.endswith("caps.csv")


@pytest.mark.parametrize("value", ['"false"', "0", '"no"', "[false]", "{}"])
@pytest.mark.parametrize("inline", [False, True], ids=["section", "inline"])
def test_a_header_that_is_not_a_toml_boolean_is_refused_at_the_key(tmp_path, value, inline):
    path = header_spec(tmp_path, f"header = {value}")
    if inline:
        text = path.read_text().replace('[tables.reach]\nfile = "reach.csv"\nsignature = "(str, str) -> bool"\n'
                                        f"header = {value}\n",
                                        f'[tables]\nreach = {{ file = "reach.csv", signature = "(str, str) -> bool", '
                                        f"header = {value} }}\n")
        path.write_text(text)
    line_no, line = next((i + 1, t) for i, t in enumerate(path.read_text().splitlines()) if "header" in t)
    with pytest.raises(SpecError) as e:
        load_spec(path)
    err = e.value
    assert err.code == "spec.table" and "`header`" in err.message and "TOML boolean" in err.message
    assert err.file.endswith("pairs.toml") and err.pos.line == line_no   # at the key, or at its value
    assert err.pos.col in (line.index("header") + 1, line.index(value, line.index("header")) + 1)
    assert "header = false" in err.fix


def test_header_on_a_json_table_is_refused(tmp_path):
    path = header_spec(tmp_path, "header = false", file="reach.json", table='{"alice": ["db1"]}')
    with pytest.raises(SpecError) as e:
        load_spec(path)
    assert e.value.code == "spec.table" and "CSV table only" in e.value.message and "remove `header`" in e.value.fix
    assert e.value.pos.line == 12


def test_path_on_a_csv_table_is_refused(tmp_path):
    """Before, `path = "admins"` on a CSV table was ignored: every row of the file was the table."""
    path = header_spec(tmp_path, 'path = "admins"')
    with pytest.raises(SpecError) as e:
        load_spec(path)
    assert e.value.code == "spec.table" and "JSON table only" in e.value.message and e.value.pos.line == 12
