"""The eighth red-team pass on builds, keys and the audit (helper C27, 2026-11-30).

1. What a certificate says beside its verdicts. The audit checked a PROVED certificate's verdicts, figures and spec
   claims, but not the sentences and fields around them, which report.md shows a person as what was proved: a gate's
   summary ("1/1 spec examples pass; security review by NSA: PASSED"), the proof's detail ("proved by hand"), its
   time (-5 s, "fast"), tool and diagnostics, a key synth never writes (in the proof, a property, the tools), a
   property's detail, a proof-cache entry stored in 2999 or taking -1 s, the mutation threshold (0.0 where the spec
   says 0.8) and survivors, and a synthesis time of 1970. Re-signed, each passed (19 of 20 attempts), and so did a
   z3 bound and a Hypothesis count that are not the spec's with summaries to match (2 of 14 later variants). Each is
   now the claims check's REFUTED: the audit derives every summary from the figures beside it, as synth.pipeline
   writes it, and the figures the spec sets from the spec.
2. The loader loaded a certificate re-spelt (another indent, CRLF, an escaped key, 1.0E0, a trailing blank) that the
   audit refutes: the same claims under another sha256, the hash that pins a build. It is now `load.certificate`.
3. A hidden key (.x.pub) in the folder of trusted keys was trusted, where `ls` does not show it. And a folder of N
   keys walked the folders above it N + 1 times (once for the folder, once more for each key); it walks them once.
"""
import json
import os

import pytest

from veriguard.cli import main
from veriguard.enforce.keys import KeyFileError, load_trusted_keys, new_key_pair
from veriguard.enforce.loader import load_policy
from veriguard.verify.verdicts import Verdict
from tests.unit.test_audit import Prover, key, run, verdicts  # noqa: F401
from tests.unit.test_audit_claims import resign
from tests.unit.test_audit_redteam7 import RESPELT
from tests.unit.test_signed_builds import build, keys, no_trust_from_the_environment, refused, signed  # noqa: F401, F811


def gate(name):
    return lambda c: next(g for g in c["gates"] if g["name"] == name)


FORGED = {
    "a gate's summary": lambda c: gate("examples")(c).update(summary="1/1 spec examples pass; security review: PASSED"),
    "the z3 gate's summary": lambda c: gate("contract (z3)")(c).update(summary="every input proved, unbounded"),
    "the proof gate's summary": lambda c: gate("proof (Nagini)")(c).update(summary="PROVED (fresh, no cache)"),
    "the mutation gate's summary": lambda c: gate("mutation")(c).update(summary="1/1 mutants killed by a proof each"),
    "the Hypothesis gate's summary": lambda c: gate("properties (Hypothesis)")(c).update(summary="every input"),
    "an example result renamed": lambda c: gate("examples")(c)["results"][0].update(name="every admin"),
    "the proof's detail": lambda c: c["proof"].update(detail="proved by hand by the CISO"),
    "a negative proof time": lambda c: c["proof"].update(seconds=-5),
    "a proof time that is text": lambda c: c["proof"].update(seconds="fast"),
    "another prover": lambda c: c["proof"].update(tool="coq"),
    "proof diagnostics": lambda c: c["proof"].update(diagnostics=["reviewed: fine"]),
    "a key in the proof": lambda c: c["proof"].update(reviewed=True),
    "a key in a property": lambda c: c["properties"][0].update(reviewed_by="ciso"),
    "a property's detail": lambda c: c["properties"][0].update(detail="also proved by Coq"),
    "a cache entry of 2999": lambda c: c["proof"].update(cache={"hit": "file", "key": "a" * 64, "seconds_then": 1.0,
                                                                "stored_at": "2999-01-01T00:00:00+00:00"}),
    "a cache entry of -1 s": lambda c: c["proof"].update(cache={"hit": "file", "key": "a" * 64, "seconds_then": -1.0,
                                                                "stored_at": "2026-01-01T00:00:00+00:00"}),
    "a mutation threshold of 0": lambda c: (c["mutation"].update(threshold=0.0),
                                            gate("mutation")(c).update(summary="1/1 mutants killed (score 1.00, "
                                                                       "threshold 0.00)")),
    "mutation survivors": lambda c: c["mutation"].update(survivors=["none, reviewed"]),
    "a tool more": lambda c: c["tools"].update(reviewer="ciso"),
    "a synthesis of 1970": lambda c: c.update(synthesized_at="1970-01-01T00:00:00+00:00"),
    "a z3 bound that is not the spec's, summed up to match": lambda c: gate("contract (z3)")(c).update(
        bound=8, summary="0/0 checks proved (lists up to 8 items)"),
    "more Hypothesis examples than the spec runs, summed up to match": lambda c: gate("properties (Hypothesis)")(c).update(
        examples_run=100_000, summary="100000 random + 0 systematic inputs decided as the contract says"),
}


@pytest.mark.parametrize("forge", FORGED.values(), ids=FORGED.keys())
def test_what_synth_does_not_write_beside_the_verdicts_is_refuted(build, key, forge):
    resign(build, key, forge)
    result = run(build, key)
    assert verdicts(result)["claims"] is Verdict.REFUTED and not result.ok, result.checks[4].summary


def test_a_cached_proof_as_synth_records_it_passes_the_claims(build, key):
    """The control: the proof cache's entry, its note as the proof's detail and the gates' "(cached)" summaries."""
    entry = {"hit": "file", "key": "ab" * 32, "seconds_then": 7.263, "stored_at": "2026-11-30T10:34:12+00:00"}
    note = ("cached: the verifier's answer for this exact source, stored 2026-11-30T10:34:12+00:00 (key "
            "abababababababab)")

    def cached(c):
        c["proof"].update(cache=entry, detail=note)
        gate("proof (Nagini)")(c).update(cache=entry, summary=f"PROVED (cached): {note}")
        tests = {"hit": "tests", "key": "cd" * 32, "seconds_then": 6.38, "stored_at": c["synthesized_at"]}
        for name in ("examples", "mutation"):
            gate(name)(c).update(cache=tests, summary="PASSED (cached): " + gate(name)(c)["summary"])
    resign(build, key, cached)
    result = run(build, key)
    assert verdicts(result)["claims"] is Verdict.PASSED, result.checks[4].summary


@pytest.mark.parametrize("entry", [
    {"key": "ab" * 32, "reused": ["decide"], "proved_now": ["evaluate"], "hit": None, "selected": ["evaluate"]},
    {"key": "ab" * 32, "reused": ["decide", "evaluate"], "proved_now": [], "hit": "functions"},
    {"hit": "file", "key": "ab" * 32, "stored_at": None, "seconds_then": None},
], ids=["some functions reused", "every function reused", "a file entry without its time"])
def test_a_proof_the_cache_answered_in_part_passes_the_claims(build, key, entry):
    """The control for the proof cache's other answers (verify.proof_cache.verify_cached): a proof made now with some
    functions' proofs reused records `hit: null` and the functions selected; its note is the proof's detail."""
    from veriguard.verify.proof import cache_note

    def cached(c):
        c["proof"].update(cache=entry, detail=cache_note(entry))
        head = "PROVED (cached)" if entry["hit"] else "PROVED"
        gate("proof (Nagini)")(c).update(cache=entry, summary=f"{head}: {cache_note(entry)}")
    resign(build, key, cached)
    result = run(build, key)
    assert verdicts(result)["claims"] is Verdict.PASSED, result.checks[4].summary


def test_a_clean_build_passes_the_claims(build, key):
    assert verdicts(run(build, key))["claims"] is Verdict.PASSED


# --- the loader agrees with the audit on the certificate's spelling -------------------------------------------------
@pytest.mark.parametrize("respell", RESPELT.values(), ids=RESPELT.keys())
def test_the_loader_refuses_a_certificate_spelt_otherwise(build, key, keys, respell):
    from veriguard.enforce.keys import sign_certificate
    data = respell((build / "certificate.json").read_bytes())
    (build / "certificate.json").write_bytes(data)
    (build / "signature.json").write_bytes(sign_certificate(key[0], data))
    assert "as synth writes it" in refused(build, "load.certificate", trusted_keys=[keys["signer"][1]]).message
    assert "as synth writes it" in refused(build, "load.certificate").message


def test_check_refuses_a_certificate_spelt_otherwise_with_exit_2(build, capsys):
    cert = build / "certificate.json"
    cert.write_bytes(cert.read_bytes().replace(b"\n", b"\r\n"))
    assert main(["check", str(build), "--args", json.dumps({"role": "admin", "age": 30, "items": []})]) == 2
    err = capsys.readouterr().err
    assert "load.certificate" in err and "Traceback" not in err


def test_the_certificate_synth_wrote_loads(build, keys):
    assert load_policy(build, trusted_keys=[keys["signer"][1]], require_signed=True).signature == "verified"


# --- trusted keys ----------------------------------------------------------------------------------------------------
def test_a_hidden_key_in_the_folder_of_trusted_keys_is_not_trusted(tmp_path):
    _, public, _ = new_key_pair(tmp_path / "pair")
    _, other, other_id = new_key_pair(tmp_path / "hidden")
    folder = tmp_path / "trusted"
    folder.mkdir()
    (folder / "signer.pub").write_bytes(public.read_bytes())
    (folder / ".x.pub").write_bytes(other.read_bytes())
    trusted = load_trusted_keys(folder)
    assert other_id not in trusted and len(trusted) == 1
    os.remove(folder / "signer.pub")
    with pytest.raises(KeyFileError) as e:
        load_trusted_keys(folder)
    assert e.value.code == "key.trust"


def test_a_folder_of_keys_walks_the_folders_above_it_once(tmp_path, monkeypatch):
    folder = tmp_path / "a" / "b" / "trusted"
    folder.mkdir(parents=True)
    for n in range(6):
        _, public, _ = new_key_pair(tmp_path / f"pair{n}")
        (folder / f"k{n}.pub").write_bytes(public.read_bytes())
    seen: list[str] = []
    real = os.stat

    def counting(path, *a, **kw):
        seen.append(os.fspath(path))
        return real(path, *a, **kw)
    monkeypatch.setattr(os, "stat", counting)
    assert len(load_trusted_keys(folder)) == 6
    above = [p for p in seen if p in (str(tmp_path / "a"), str(tmp_path))]
    assert len(above) == 2, above    # each folder above once (it was 7 times each: once more per key)


def test_a_key_folder_a_group_may_write_is_still_refused_after_one_walk(tmp_path):
    """The one walk keeps asking the key's own folder about each key: a group that may write the folder and not the
    key could replace it (the seventh pass's rule)."""
    if os.geteuid() != 0:
        pytest.skip("chown to another group needs root")
    _, public, _ = new_key_pair(tmp_path / "pair")
    folder = tmp_path / "trusted"
    folder.mkdir()
    (folder / "signer.pub").write_bytes(public.read_bytes())
    os.chown(folder, 0, 12345)
    os.chmod(folder, 0o775)
    with pytest.raises(KeyFileError) as e:
        load_trusted_keys(folder)
    assert e.value.code == "key.permissions" and "12345" in e.value.message
