"""The fourth red-team pass on builds (helper C23, 2026-11-30).

1. A build moved into a folder named after another policy: the loader refuses it (load.foreign: synth writes
   DIR/<name>, so `build/other` holding the policy `mini` was copied there), but `veriguard audit build/other`
   passed it, exit 0, so an auditor could vouch for a folder that the monitor would refuse, or believe `other`
   was audited. The audit's certificate check now applies the loader's rule.
2. `audit --mutation` on a certificate without `mutation.limit` (a build from before synth recorded it) said
   NOT_CHECKED even when the policy has no more sites to mutate than the certificate counts mutants; then no limit
   could have made more, and the re-run is PASSED.
"""
import shutil

import veriguard.verify.mutation as mutation
from veriguard.verify.verdicts import Verdict
from tests.unit.test_audit import Prover, key, run, verdicts  # noqa: F401
from tests.unit.test_audit_claims import resign
from tests.unit.test_audit_redteam3 import TRUE_MUTATION, no_worker, with_mutation
from tests.unit.test_signed_builds import build, keys, no_trust_from_the_environment, signed  # noqa: F401, F811


def test_the_audit_refuses_a_build_in_a_folder_named_after_another_policy(build, key, tmp_path):
    moved = tmp_path / "elsewhere" / "other"
    shutil.copytree(build, moved)
    result = run(moved, key, prover=Prover())
    v = verdicts(result)
    assert result.exit_code == 1 and v["certificate"] is Verdict.REFUTED, result.to_dict()
    assert "'mini', not of 'other'" in result.checks[0].summary
    assert run(build, key, prover=Prover()).ok   # the same files where synth put them pass


def test_an_old_certificate_counting_every_mutant_the_policy_has_passes_the_re_run(build, key, monkeypatch):
    """Stands in a policy of exactly 30 sites to mutate: whatever limit synth used, it made these 30 mutants."""
    monkeypatch.setattr(mutation, "site_count", lambda source, skip_functions=(): 30)
    resign(build, key, with_mutation({k: v for k, v in TRUE_MUTATION.items() if k != "limit"}))
    result = run(build, key, prover=Prover(), mutation=True, mutation_worker=no_worker)
    check = result.checks[-1]
    assert check.verdict is Verdict.PASSED and result.ok, result.to_dict()
    assert "no more than 30 sites" in check.summary
