"""Freeze: write the build directory of a synthesized policy, all or nothing.

DIR/<name>/policy.py          stdlib-only module: the proved policy (contracts stripped), argument checks,
                              the independent runtime contract checker, and `evaluate` / `evaluate_checked`
                              (contracts/frozen_entry.py); exactly the module the gates tested
DIR/<name>/policy.code        policy.py compiled (enforce.loader uses it when the Python version matches)
DIR/<name>/policy_verified.py the Nagini-annotated source that was proved
DIR/<name>/certificate.json   hashes + every gate's verdict and figures + tool versions + time
DIR/<name>/run.json           this run's timings and peak memory (not part of the certificate)
DIR/<name>/report.md          the audit report
DIR/<name>/extraction.json    the spec's [extraction] and [enforcement] sections, for the monitor
DIR/<name>/spec/              a copy of the spec, its table files and the files its [extraction] names
DIR/<name>/signature.json     with a signer (`synth --sign KEY`): Ed25519 over certificate.json's exact bytes

The certificate binds the sha256 of every file but itself, signature.json, run.json and report.md
(hashes.files); enforce.loader checks each of them (and the signature) before it imports policy.py.
"""
from __future__ import annotations

import __future__
import datetime as dt
import hashlib
import importlib.util
import json
import marshal
import os
import platform
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

from veriguard.contracts import strict_json
from veriguard.contracts.errors import GeneratedCodeError, SpecError, VeriguardError
from veriguard.contracts.generated import check_generated
from veriguard.contracts.regular_file import FileRefused, read_regular_file
from veriguard.contracts.schema import argument_schema
from veriguard.synth.specfile import PATH_FIX, SpecFile, file_in_folder
from veriguard.contracts.build_format import (CERT_FORMAT, POLICY_CODE, SIGNATURE_NAME, approval_problem,
                                              certificate_bytes, missing_gates, referenced_files)
from veriguard.synth.pipeline import SynthResult
from veriguard.providers.extraction import pin_extraction
from veriguard.synth.classifier_build import frozen_extraction
from veriguard.verify.report import render as render_report
from veriguard.verify.runnable import frozen_module, lemma_function
from veriguard.verify.proof import NOT_SENT
from veriguard.verify.verdicts import ProofResult, Verdict


def policy_code(policy_py: str) -> bytes:
    """DIR/<name>/policy.code: policy.py compiled once here, for the monitor to run without compiling it on each
    load (a hook loads the build once per tool call): this interpreter's magic number, the sha256 of policy.py,
    then the marshalled code object (enforce.loader.precompiled reads it; another Python compiles policy.py)."""
    source = policy_py.encode("utf-8")
    code = compile(source, "policy.py", "exec", flags=__future__.annotations.compiler_flag, dont_inherit=True)
    return importlib.util.MAGIC_NUMBER + hashlib.sha256(source).digest() + marshal.dumps(code)


def sha256(data: bytes | str) -> str:
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


TOOL_DISTRIBUTIONS = ("veriguard", "nagini", "z3-solver", "hypothesis", "lark", "jpype1")
RECORDED_TOOLS = frozenset({"python", "java", *TOOL_DISTRIBUTIONS})   # the keys of a certificate's `tools`


def tool_versions() -> dict[str, str]:
    from veriguard.verify.nagini import tool_versions as installed

    return {"python": platform.python_version(), **installed(TOOL_DISTRIBUTIONS)}


def property_verdict(proof: ProofResult | None, prop: str) -> tuple[Verdict, str]:
    """Nagini's verdict on one property (the lemma `property_<id>`), with why when it is not PROVED.

    A lemma is proved against the policy's contract, not its code: when the contract itself fails,
    a lemma that went through still says nothing about the policy."""
    if proof is None:
        return Verdict.NOT_CHECKED, "Nagini did not run"
    if proof.verdict in (Verdict.ERROR, Verdict.TIMEOUT):
        return proof.verdict, proof.detail
    lemma = next((d for d in proof.diagnostics if d.function == lemma_function(prop)), None)
    if lemma is not None and lemma.code == NOT_SENT:
        return Verdict.NOT_CHECKED, "not sent to Nagini: z3's input breaks the property on the policy"
    if lemma is not None:
        return (Verdict.REFUTED, "a counterexample reproduces on the policy") if lemma.confirmed else \
            (Verdict.UNKNOWN, "not proved, and no counterexample reproduces on the policy")
    if any(not d.function.startswith("property_") for d in proof.diagnostics) or \
            (not proof.diagnostics and proof.verdict is not Verdict.PROVED):
        return Verdict.UNKNOWN, "proved only relative to the policy's own contract, which is not proved"
    return Verdict.PROVED, ""


def spec_claims(spec: SpecFile) -> dict[str, Any]:
    """What a certificate says of its spec: the request, the agent, the contract's text and hash, the rules and the
    properties (ids and messages). `veriguard audit` derives them again from the build's spec and compares: report.md
    shows them to a person as what was proved."""
    assert spec.contract is not None
    return {"request": spec.request, "agent": spec.agent,
            "contract_text": {"rules": spec.rules_text.strip(), "properties": spec.properties_text.strip()},
            "contract": sha256(spec.rules_text + "\n----\n" + spec.properties_text),
            "rules": [{"id": d.id, "message": d.message} for d in spec.contract.rules],
            "properties": [{"id": d.id, "message": d.message} for d in spec.contract.properties]}


def certificate(result: SynthResult, policy_py: str, *, synthesized_at: str, path: str,
                files: dict[str, str], approval: dict[str, Any] | None = None) -> dict[str, Any]:
    """The certificate; `files` maps each build file the monitor trusts (path in the build) to its sha256.

    `status` is PROVED exactly when `result.ok` (the worst gate verdict holds and Nagini proved the policy) and every
    gate of CERTIFIED_GATES was recorded once: a result missing one was not fully checked.
    `approval` (contracts.build_format.APPROVAL_KEYS) is present only for an approved verified update."""
    spec = result.spec
    assert spec.contract is not None
    proof = result.proof
    z3_props = {f.subject: f.verdict for f in (result.z3.findings if result.z3 else ()) if f.check == "property"}
    claims = spec_claims(spec)
    props = []
    for d in claims["properties"]:
        verdict, detail = property_verdict(proof, d["id"])
        props.append({**d, "nagini": verdict.value, "detail": detail,
                      "z3": z3_props.get(d["id"], Verdict.NOT_CHECKED).value})
    fully = result.ok and not missing_gates([g.name for g in result.gates])
    return {
        "format": CERT_FORMAT,
        "policy": spec.name,
        "status": "PROVED" if fully else "FAILED",
        "fully_proved": fully,
        "path": path,
        "synthesized_at": synthesized_at,
        "request": claims["request"],
        "agent": claims["agent"],
        "contract_text": claims["contract_text"],
        "hashes": {
            "spec": spec.sha256,
            "tables": dict(spec.files),
            "contract": claims["contract"],
            "verified_source": sha256(result.verified_source),
            "policy": sha256(policy_py),
            "extraction_files": {rel: files[f"spec/{rel}"] for rel in referenced_files(spec.extraction)},
            "files": files,
        },
        "rules": claims["rules"],
        "properties": props,
        "gates": [g.to_dict(timings=False) for g in result.gates],
        "proof": proof.to_dict() | {"seconds": None} if proof else None,
        "mutation": {k: v for k, v in result.mutation.items() if k != "mutants"},
        "assumptions": result.assumptions,
        "transcript": result.transcript,
        "tools": tool_versions(),
    } | ({"approval": dict(approval)} if approval is not None else {})


def write_build(result: SynthResult, out_dir: Path, *, run_info: dict[str, Any],
                synthesized_at: str | None = None, path: str = "compile",
                approval: dict[str, Any] | None = None,
                signer: Callable[[bytes], bytes] | None = None) -> tuple[Path, dict[str, Any]]:
    """Write DIR/<name>/ atomically: everything is built in a temporary sibling and renamed into place.

    `approval`: who approved a verified update that allows what the previous build denied, and why
    (exactly the keys of contracts.build_format.APPROVAL_KEYS); it goes into the certificate and the report.
    `signer` maps the certificate's bytes to those of signature.json (enforce.keys.sign_certificate)."""
    spec = result.spec
    if approval is not None and approval_problem(approval):
        raise VeriguardError("freeze.approval", approval_problem(approval) + "; nothing was written",
                             fix="give `by` and `reason` (non-empty), the previous build's policy hash, the number "
                             "of newly allowed witnesses and the approval time (ISO-8601 with offset)")
    check_generated(result.verified_source, "nagini")
    policy_py = frozen_module(spec, result.runnable_source)  # every generated part is checked again
    if policy_py != result.frozen_source:
        raise GeneratedCodeError("internal.generated_code", "the frozen module differs from the one the gates "
                                 "tested; nothing was written", fix="this is a bug in veriguard: report it")
    extraction = extraction_json(spec, frozen_extraction(spec))
    stamp = synthesized_at or dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()
    out_dir.mkdir(parents=True, exist_ok=True)
    final = out_dir / spec.name
    tmp = Path(tempfile.mkdtemp(prefix=f".{spec.name}.tmp-", dir=out_dir))
    try:
        files = {rel: _write(tmp, rel, data.encode("utf-8")) for rel, data in
                 (("policy.py", policy_py), ("policy_verified.py", result.verified_source),
                  ("extraction.json", extraction))}
        for rel, data in _spec_files(spec).items():
            files[f"spec/{rel}"] = _write(tmp, f"spec/{rel}", data)
        files[POLICY_CODE] = _write(tmp, POLICY_CODE, policy_code(policy_py))
        cert = certificate(result, policy_py, synthesized_at=stamp, path=path, files=files, approval=approval)
        cert_bytes = certificate_bytes(cert)
        _reads_back(cert_bytes)
        _write(tmp, "certificate.json", cert_bytes)
        if signer is not None:
            _write(tmp, SIGNATURE_NAME, signer(cert_bytes))
        _write(tmp, "run.json", (json.dumps(run_info, indent=2, sort_keys=True) + "\n").encode("utf-8"))
        _write(tmp, "report.md", render_report(cert, run_info, json.loads(extraction)["extraction"]).encode("utf-8"))
        # the previous build goes to a fresh name, never a fixed one: `.NAME.old` left as a link or a file by
        # anyone who can write DIR made every later synth fail after the proof (rmtree refuses a link)
        old = Path(tempfile.mkdtemp(prefix=f".{spec.name}.old-", dir=out_dir))
        if final.is_symlink() or final.exists():
            os.replace(final, old / spec.name)
        os.chmod(tmp, 0o755)   # mkdtemp's 0700 kept a monitor of another user from reading the build it was given
        os.replace(tmp, final)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final, cert


def _reads_back(cert_bytes: bytes) -> None:
    """VeriguardError (freeze.certificate) for a certificate the loader would refuse as not strict JSON: a lone
    surrogate in a model's text (the transcript), which json.dumps writes as its escape; nothing is written."""
    try:
        strict_json.loads(cert_bytes)
    except strict_json.StrictJSONError as e:
        raise SpecError("freeze.certificate", f"the certificate would not read back as strict JSON ({e}); "
                        "nothing was written", fix="re-run synth (with --llm: the model's text held it)") from None


def extraction_json(spec: SpecFile, extraction: dict[str, Any]) -> str:
    """DIR/<name>/extraction.json: `extraction` (the spec's [extraction], each bank's classifier frozen in it) with
    every llm entry pinned, and [enforcement]. `veriguard audit` regenerates it with this function."""
    pinned = pin_extraction(extraction, argument_schema(spec.signature), Path(spec.path).parent)
    return json.dumps({"policy": spec.name, "extraction": pinned, "enforcement": spec.enforcement}, indent=2) + "\n"


def _spec_files(spec: SpecFile) -> dict[str, bytes]:
    """The spec, its tables and the files [extraction] names (path relative to the spec -> bytes), each
    read once and checked against the hash taken when the spec was loaded."""
    folder = Path(spec.path).parent
    expected: list[tuple[str, Path, str | None]] = [(Path(spec.path).name, Path(spec.path), spec.sha256)]
    assert len(spec.files) == len(spec.signature.tables)
    # a table is read where it was loaded from (the LLM path loads its tables from the draft's folder)
    expected += [(rel, Path(t.source), digest) for (rel, digest), t in zip(spec.files, spec.signature.tables)]
    known = dict(spec.extraction_files)
    for rel in referenced_files(spec.extraction):
        try:
            expected.append((rel, file_in_folder(folder, rel), known.get(rel)))
        except ValueError as e:
            raise SpecError("spec.path", f"[extraction] file {rel!r} {e}", file=spec.path, fix=PATH_FIX) from None
    out: dict[str, bytes] = {}
    for rel, source, digest in expected:
        try:   # as the spec loader read it: a FIFO or a device put in its place is refused, never waited on
            data = read_regular_file(source)
        except FileRefused as e:
            raise SpecError("freeze.file", f"cannot read {source}: {e.why}", file=spec.path,
                            fix="keep the spec's files in place until synth ends") from None
        if digest is not None and sha256(data) != digest:
            raise SpecError("freeze.changed", f"{source} changed while the policy was synthesized", file=str(source),
                            fix="re-run synth once the file is final")
        out[rel] = data
    return out


def _write(root: Path, rel: str, data: bytes) -> str:
    """Write root/rel, which must stay inside root; returns the sha256 of `data`."""
    target = root / rel
    if ".." in Path(rel).parts or Path(rel).is_absolute() or not target.resolve().is_relative_to(root.resolve()):
        raise SpecError("freeze.path", f"{rel!r} would be written outside the build directory {root}", fix=PATH_FIX)
    # modes given, whatever the umask: the loader refuses a build file or folder that every user may write
    for folder in reversed(Path(rel).parents[:-1]):
        try:
            (root / folder).mkdir()
        except FileNotFoundError:
            raise
        except OSError:   # as mkdir(exist_ok=True): a folder there already is one an earlier file made, and set
            if not (root / folder).is_dir():
                raise
        else:
            os.chmod(root / folder, 0o755)   # mkdir's mode is masked by the umask: 0700 under umask 077
    target.write_bytes(data)
    os.chmod(target, 0o644)   # inside the build's private (0700) temporary folder until it is renamed into place
    return sha256(data)
