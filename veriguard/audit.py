"""`veriguard audit BUILD`: re-verify a build from its files alone, trusting nothing it did not re-run.

Each check has one Verdict (verify.verdicts); the audit passes only when every one holds:
  certificate      the certificate passes the loader's schema and says PROVED
  signature        signature.json verifies with a trusted key (--public-key or VERIGUARD_TRUSTED_KEYS);
                   an unsigned build, or one audited with no key, is NOT_CHECKED: it does not pass
  files            every certified file is a regular file matching its sha256, and nothing else is in the build;
                   no file of it (the certificate and signature too) has a second name (a hard link) or is writable
                   by every user, and no folder of it lets every user replace what it holds (the loader's rule)
  tools            Nagini, z3 and Python here are the versions the certificate records
  compiled source  the spec, compiled again, gives policy_verified.py byte for byte; run whatever the certificate's
                   `path` says (a claim the audit cannot re-derive: a compile-path build re-signed as `"llm"` skipped
                   it, and a policy proved against a contract without the spec's rules passed); an LLM-path build,
                   whose source is not re-derived from its spec, is NOT_CHECKED and does not pass
  frozen module    policy.py is byte for byte the frozen module of policy_verified.py
  bytecode         policy.code (what the monitor runs on this Python) is policy.py compiled: compared in a
                   child process, code object against code object (marshal's bytes vary between runs), and the
                   instructions the interpreter runs (`_co_code_adaptive`) of each nested code object
  extraction       extraction.json (how the monitor turns what the agent did into the policy's arguments) is
                   byte for byte what the build's spec gives (synth.freeze.extraction_json); a classifier frozen
                   in it is retrained here (deterministic on one machine) and compared, NOT_CHECKED when it differs
  contract (z3)    the spec's contract is satisfiable, every rule can fire and hold, properties follow; and the
                   certificate records these findings (each one, as z3 gives it here) and the bound
  examples         the spec's examples, run on the frozen module in a sandboxed child
  proof (Nagini)   Nagini, run here on policy_verified.py (never a cached proof)
  mutation (re-run) with --mutation only: the mutation score run again (the same mutants, made with the mutant limit
                   the certificate records, against the spec's tests, about 3 s for 30; the survivors to Nagini) and
                   compared with the certificate's figures; a certificate without `mutation.limit` (older builds) is
                   NOT_CHECKED when its figures agree, unless the policy has no more mutants than it counts (PASSED);
                   without --mutation `claims` checks only that the figures agree
                   with each other, with the mutation gate and with the limit
  mutation (count) with count_mutants (and not --mutation): the mutants made again with the recorded limit, and
                   counted against `total`, none run (under a second); NOT_CHECKED for a certificate without a limit
                   unless the policy has no more sites than it counts
Every file is read once, at the start, without following a symbolic link or waiting on a FIFO (anything but
a regular file is refused), into a private copy: the hashes, the signature, the spec (whose sha256 and tables
must be the ones the certificate binds), the regeneration, the examples and the proof all use those bytes. Nothing from the build runs in this process: the examples run in verify.testing's child, and
only after the frozen module was regenerated (every generated part checked against the allowlist) and
found identical to policy.py.
With --log, the decision log must also be intact and anchored (verified with --log-public-key; against its
checkpoint too when one is given): an unanchored log fails the audit as an unsigned build does.
Results are values; the CLI prints them.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import functools
import hashlib
import io
import json
import math
import os
import re
import tarfile
import tempfile
import time
import zipfile
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Mapping

from veriguard.contracts.build_format import (POLICY_CODE, SIGNATURE_NAME, UNCERTIFIED_FILES, offset_datetime,
                                               respelt, unheld_gates)
from veriguard.contracts.errors import EnvironmentProblem, VeriguardError
from veriguard.contracts.regular_file import (FileRefused, build_folders_exposed, read_regular_file_and_stat,
                                              writable_from_outside)
from veriguard.synth.specfile import SpecFile
from veriguard.contracts import strict_json
from veriguard.enforce.decision_log import Head
from veriguard.enforce.keys import VerifyKey
from veriguard.enforce.loader import PolicyLoadError, check_certificate, check_expected, check_signature, trust_settings
from veriguard.synth.pipeline import (MUTANT_KEYS, MUTATION_KEYS, PROVED_TOO, Gate, cached_summary, contract_summary,
                                      examples_summary, hypothesis_summary, mutant_row, mutation_summary, proof_summary)
from veriguard.verify.proof_cache import CACHE_KEYS
from veriguard.verify.verdicts import ProofResult, Verdict, holds

Progress = Callable[[str], None]
Prover = Callable[[SpecFile, str, Progress], tuple[Verdict, str]]
BUNDLE_SUFFIXES = (".zip", ".tar.gz", ".tgz")
AUDIT_CHECKS = ("certificate", "signature", "files", "tools", "claims", "compiled source", "frozen module", "bytecode",
                "extraction", "contract (z3)", "examples", "proof (Nagini)")
MUTATION_CHECK = "mutation (re-run)"
COUNT_CHECK = "mutation (count)"
COMPARED_TOOLS = ("nagini", "z3-solver", "python")


def _environment(check: Gate) -> bool:
    """An ERROR of this machine (no Java, no Nagini), not of the build."""
    return check.details.get("environment") is True


@dataclass(frozen=True)
class AuditResult:
    build: str
    policy: str
    checks: tuple[Gate, ...]       # one claim each, as synth's gates
    audited_at: str
    log: dict[str, Any] | None = None     # the decision log's verified summary (--log)
    report: str = ""                      # whether the build's report.md is what its certificate renders
    # the bytes the checks read (and report.md rendered from them): what a bundle holds, never a second read
    contents: Mapping[str, bytes] = field(default_factory=dict, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        """Every check holds, and the log, when given, is intact and anchored (verified with its public key): an
        unanchored log can be rewritten with a recomputed chain, as an unsigned build can, and neither passes."""
        return all(holds(c.verdict) for c in self.checks) and \
            (self.log is None or (self.log["ok"] and self.log["anchored"] is True))

    @property
    def exit_code(self) -> int:
        """0 every check holds; 3 a check could not run on this machine; 1 otherwise."""
        if self.ok:
            return 0
        return 3 if any(_environment(c) for c in self.checks) else 1

    def to_dict(self) -> dict[str, Any]:
        return {"build": self.build, "policy": self.policy, "ok": self.ok, "exit_code": self.exit_code,
                "audited_at": self.audited_at, "checks": [c.to_dict() for c in self.checks], "log": self.log,
                "report": self.report}


@dataclass
class _Build:
    """What the audit read from the build, once, and its private copy of those bytes."""

    directory: Path
    copy: Path                   # the certificate, the signature and every certified file as read
    certificate_bytes: bytes
    signature_bytes: bytes | None = None
    uncovered: dict[str, bytes] = field(default_factory=dict)  # run.json and report.md as read (no hash covers them)
    certified: dict[str, str] = field(default_factory=dict)   # path in the build -> sha256, once the schema holds
    files: dict[str, bytes] = field(default_factory=dict)     # every certified file as read
    unreadable: dict[str, str] = field(default_factory=dict)  # path in the build -> why it was not read
    exposed: dict[str, str] = field(default_factory=dict)     # path in the build -> how others could change it
    signature_problem: str = ""
    certificate: dict[str, Any] = field(default_factory=dict)
    name: str = "build"          # the policy's name once the certificate passes the schema
    policy_sha256: str = ""
    spec: SpecFile | None = None
    spec_error: str = ""

    def here(self, text: str) -> str:
        """`text` naming the build's own paths rather than the private copy's."""
        return text.replace(str(self.copy), str(self.directory))


def audit_build(directory: str | Path, *, trusted_keys: Mapping[str, VerifyKey] | None,
                log: str | Path | None = None, log_key: VerifyKey | None = None, log_expected: Head | None = None,
                progress: Progress = lambda _m: None, prover: Prover | None = None, mutation: bool = False,
                mutation_worker: Callable[[], Any] | None = None, count_mutants: bool = False) -> AuditResult:
    """Every check on the build in `directory`. `trusted_keys` (see `trusted_keys_for`) verify its signature;
    `log`, a decision log, is verified (with `log_key` when given, and against `log_expected`, a checkpoint of its
    head kept elsewhere, when given) and summarized. `prover` is `prove_fresh` (Nagini) unless a test replaces it.
    `mutation`: the mutation score is re-run (`mutation_again`; survivors of the tests go to a Nagini worker made by
    `mutation_worker`, verify.nagini.NaginiWorker unless a test replaces it) and compared with the certificate's.
    `count_mutants` (without `mutation`): only the mutants are made again, with the recorded limit, and counted
    (`mutation_count`: well under a second, where the re-run takes tens of seconds)."""
    d = Path(directory)
    count_mutants = count_mutants and not mutation   # the re-run counts them too
    names = AUDIT_CHECKS + ((MUTATION_CHECK,) if mutation else ()) + ((COUNT_CHECK,) if count_mutants else ())
    with tempfile.TemporaryDirectory(prefix="veriguard-audit-") as tmp:
        b = _read(d, Path(tmp) / "build")
        checks = [_certificate(b), _signature(b, trusted_keys), _files(b), _tools(b)]
        if b.spec is None:
            checks += [Gate(n, Verdict.ERROR, f"not run: {b.spec_error}") for n in names[len(checks):]]
        else:
            checks += _from_the_spec(b, b.spec, progress, prover or prove_fresh,
                                     (mutation_worker or _nagini_worker(progress)) if mutation else None)
            if count_mutants:
                verified = b.files.get("policy_verified.py", b"").decode("utf-8", errors="replace")
                checks.append(_timed(COUNT_CHECK, lambda: mutation_count(b.spec, verified,
                                                                          b.certificate.get("mutation"))))
    build_sha256 = hashlib.sha256(b.certificate_bytes).hexdigest()
    summary = log_summary(log, log_key, b.policy_sha256, expected=log_expected, build_sha256=build_sha256) \
        if log else None
    stamp = dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()
    report, rendered = _report(b)
    return AuditResult(str(d), b.name, tuple(checks), stamp, summary, report, _contents(b, rendered))


def _contents(b: _Build, report: bytes | None) -> dict[str, bytes]:
    """What the audit read, by path in the build, with report.md as the audited certificate renders it."""
    out = {"certificate.json": b.certificate_bytes, **b.files}
    out |= {SIGNATURE_NAME: b.signature_bytes} if b.signature_bytes is not None else {}
    out |= {"run.json": b.uncovered["run.json"]} if "run.json" in b.uncovered else {}
    out |= {"report.md": report} if report is not None else {}
    return dict(sorted(out.items()))


def _report(b: _Build) -> tuple[str, bytes | None]:
    """(what to say of the build's report.md, report.md rendered from the certificate and extraction.json the audit
    read, with run.json's figures): no hash covers report.md, so the bundle holds the rendered one."""
    from veriguard.verify.report import render

    try:
        run_info = strict_json.loads(b.uncovered.get("run.json", b"{}"))
        extraction = strict_json.loads(b.files["extraction.json"])["extraction"]
        rendered = render(b.certificate, run_info if isinstance(run_info, dict) else {}, extraction).encode("utf-8")
    except Exception as e:  # a certificate or extraction.json the checks refused: there is nothing to render
        return f"report.md not rendered ({type(e).__name__}: {str(e)[:120]}): the bundle holds none", None
    shipped = b.uncovered.get("report.md")
    if shipped == rendered:
        return "report.md is what the audited certificate renders", rendered
    return ("the build's report.md differs from what the audited certificate renders (no hash covers it: it was "
            "changed, or made by another veriguard); the bundle holds the rendered one"), rendered


def trusted_keys_for(public_keys: list[str] | None) -> Mapping[str, VerifyKey] | None:
    """The keys given on the command line, else VERIGUARD_TRUSTED_KEYS, else None (PolicyLoadError if unreadable)."""
    keys, _ = trust_settings(public_keys or None, require_signed=False)
    return keys


def read_regular(path: Path, code: str) -> bytes:
    """The bytes of `path` when it is a regular file, opened without following a symbolic link and without
    waiting (a FIFO, a device or a socket is refused, never read); VeriguardError(`code`) otherwise."""
    return read_regular_and_stat(path, code)[0]


def read_regular_and_stat(path: Path, code: str) -> tuple[bytes, os.stat_result]:
    """read_regular, with the fstat of the descriptor the bytes were read from."""
    fix = "restore the build (re-run `veriguard synth`): a build holds regular files only"
    try:
        return read_regular_file_and_stat(path, None, follow_links=False)
    except FileRefused as e:
        if e.kind == "special":
            raise VeriguardError(code, f"{path} is not a regular file (a FIFO, a device or a socket): not read",
                                 file=str(path), fix=fix) from None
        why = "it is a symbolic link" if e.kind == "link" else e.strerror
        raise VeriguardError(code, f"cannot read {path}: {why}", file=str(path), fix=fix) from None


def _read(d: Path, copy: Path) -> _Build:
    if not (d / "certificate.json").is_file():
        raise VeriguardError("audit.input", f"{d} is not a policy build (it has no certificate.json)", file=str(d),
                             fix="pass a build directory made by `veriguard synth`, e.g. build/payments")
    exposed: dict[str, str] = {}
    b = _Build(d, copy, _exposed(d, "certificate.json", exposed), exposed=exposed)
    _keep(copy, "certificate.json", b.certificate_bytes)
    if os.path.lexists(d / SIGNATURE_NAME):
        try:
            b.signature_bytes = _keep(copy, SIGNATURE_NAME, _exposed(d, SIGNATURE_NAME, exposed))
        except VeriguardError as e:
            b.signature_problem = e.message
    for rel in ("run.json", "report.md"):
        with contextlib.suppress(VeriguardError):
            if os.path.lexists(d / rel):
                b.uncovered[rel] = read_regular(d / rel, "audit.input")
    try:
        cert = strict_json.loads(b.certificate_bytes)
        b.certificate = cert if isinstance(cert, dict) else {}
        b.name, _, b.certified, spec_file = check_certificate(cert, d / "certificate.json")
    except (strict_json.StrictJSONError, VeriguardError) as e:
        b.spec_error = f"the build's certificate is unusable: {str(e).splitlines()[0][:300]}"
        return b
    b.policy_sha256 = b.certified["policy.py"]
    for rel in b.certified:
        try:
            b.files[rel] = _keep(copy, rel, _certified_read(d, rel, exposed))
        except VeriguardError as e:
            b.unreadable[rel] = e.message
    for folder, why in build_folders_exposed(d, b.certified):   # the loader's rule (load.shared)
        exposed[str(folder)] = why
    b.spec, b.spec_error = _spec(b, spec_file)
    return b


def _keep(copy: Path, rel: str, data: bytes) -> bytes:
    """Write `data` to the private copy (paths were checked against the certificate's schema)."""
    target = copy / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return data


def _exposed(d: Path, rel: str, exposed: dict[str, str]) -> bytes:
    """The bytes of d/rel (read_regular); when someone who cannot write the build could change them (a hard link,
    o+w, another owner, a group that may not write its folder: contracts.regular_file.writable_from_outside), why, in
    `exposed` under `rel`."""
    data, st = read_regular_and_stat(d / rel, "audit.input")
    try:
        folder: os.stat_result | None = os.stat((d / rel).parent)
    except OSError:   # its bytes were just read from there; a folder that cannot be listed now is checked as before
        folder = None
    problem = writable_from_outside(st, folder)
    if problem:
        exposed[rel] = problem
    return data


def _certified_read(d: Path, rel: str, exposed: dict[str, str]) -> bytes:
    path = d / rel
    try:
        inside = path.parent.resolve().is_relative_to(d.resolve())
    except (OSError, RuntimeError) as e:
        inside, problem = False, str(e)
    else:
        problem = "it leads out of the build through a symbolic link"
    if not inside:
        raise VeriguardError("audit.input", f"{path} cannot be read: {problem}", file=str(path),
                             fix="restore the build (re-run `veriguard synth`)")
    return _exposed(d, rel, exposed)


def _spec(b: _Build, spec_file: str) -> tuple[SpecFile | None, str]:
    """The spec loaded from the private copy, when it and every file it names are the certified bytes, and
    its sha256 and tables are the ones the certificate binds; else None and why."""
    from veriguard.synth.freeze import sha256
    from veriguard.synth.specfile import load_spec

    changed = [rel for rel in b.certified if rel.startswith("spec/") and
               (rel not in b.files or sha256(b.files[rel]) != b.certified[rel])]
    if changed:
        return None, f"{changed[0]} is not the file the certificate binds (see the files check)"
    try:
        spec = load_spec(b.copy / spec_file)
    except VeriguardError as e:
        return None, f"the build's spec is unusable: {b.here(str(e)).splitlines()[0][:300]}"
    hashes = b.certificate["hashes"]
    bound = {"hashes.spec": (spec.sha256, hashes["spec"]), "hashes.tables": (dict(spec.files), hashes["tables"]),
             "hashes.extraction_files": (dict(spec.extraction_files), hashes["extraction_files"])}
    differ = [name for name, (loaded, certified) in bound.items() if loaded != certified]
    if differ:
        return None, f"the spec read is not the one the certificate binds ({', '.join(differ)} differ)"
    return spec, ""


def _timed(name: str, run: Callable[[], tuple[Verdict, str]]) -> Gate:
    t0 = time.monotonic()
    try:
        verdict, detail = run()
    except EnvironmentProblem as e:
        return Gate(name, Verdict.ERROR, str(e), time.monotonic() - t0, {"environment": True})
    except VeriguardError as e:
        return Gate(name, Verdict.ERROR, str(e), time.monotonic() - t0)
    except Exception as e:  # the build is untrusted input: whatever breaks a check fails it, never the audit
        return Gate(name, Verdict.ERROR, f"{type(e).__name__}: {str(e)[:300]}", time.monotonic() - t0)
    return Gate(name, verdict, detail, time.monotonic() - t0)


def _certificate(b: _Build) -> Gate:
    def run() -> tuple[Verdict, str]:
        try:
            name, proved, files, _ = check_certificate(strict_json.loads(b.certificate_bytes),
                                                       b.directory / "certificate.json")
        except strict_json.StrictJSONError as e:
            return Verdict.ERROR, f"certificate.json is not valid JSON: {e}"
        except PolicyLoadError as e:
            return Verdict.ERROR, e.message
        if not proved:
            return Verdict.REFUTED, f"the certificate of {name} says {b.certificate['status']}: not every gate passed"
        if problem := respelt(b.certificate, b.certificate_bytes):   # another build hash, the same claims
            return Verdict.REFUTED, problem
        try:   # the loader's rule: a build of `name` anywhere but DIR/<name> was moved there, and is refused there
            check_expected(b.directory, name, files["policy.py"], None)
        except PolicyLoadError as e:
            return Verdict.REFUTED, e.message
        return Verdict.PASSED, f"the schema holds; {len(files)} files certified; status PROVED"
    return _timed("certificate", run)


def _signature(b: _Build, keys: Mapping[str, VerifyKey] | None) -> Gate:
    def run() -> tuple[Verdict, str]:
        if b.signature_problem:
            return Verdict.REFUTED, b.signature_problem
        try:
            state, key_id = check_signature(b.copy, b.certificate_bytes, keys, required=False)
        except PolicyLoadError as e:
            return Verdict.REFUTED, b.here(e.message)
        return {"verified": (Verdict.PROVED, f"signed by trusted key {key_id}"),
                "unsigned": (Verdict.NOT_CHECKED, "the build is not signed (synth --sign KEY)"),
                "unchecked": (Verdict.NOT_CHECKED, "signed, but no public key was given (--public-key or "
                              "VERIGUARD_TRUSTED_KEYS)")}[state]
    return _timed("signature", run)


def _files(b: _Build) -> Gate:
    def run() -> tuple[Verdict, str]:
        from veriguard.synth.freeze import sha256

        if not b.certified:
            return Verdict.ERROR, f"not run: {b.spec_error}"
        problems = list(b.unreadable.values())
        problems += [f"{b.directory / rel} does not match its certificate (sha256 {sha256(data)[:16]}…, the "
                     f"certificate says {b.certified[rel][:16]}…)" for rel, data in b.files.items()
                     if sha256(data) != b.certified[rel]]
        problems += _uncertified(b.directory, b.certified)
        problems += [f"{b.directory / rel}: {why} (a build holds its own files, writable only by whoever may write "
                     "the build; the loader refuses it: load.shared)" for rel, why in sorted(b.exposed.items())]
        if problems:
            return Verdict.REFUTED, "; ".join(problems[:5]) + (f" (and {len(problems) - 5} more)"
                                                               if len(problems) > 5 else "")
        return Verdict.PASSED, (f"{len(b.certified)} files, each a regular file read once, match their sha256; the "
                                "build holds nothing else")
    return _timed("files", run)


def _uncertified(d: Path, certified: Mapping[str, str]) -> list[str]:
    """What is wrong with the entries of the build the certificate does not cover: only the certificate, the
    signature, run.json and report.md may sit beside the certified files (folders only on the way to them)."""
    folders = {parent.as_posix() for rel in certified for parent in Path(rel).parents if parent != Path(".")}
    found: list[str] = []
    problems: list[OSError] = []
    for root, dirs, names in os.walk(d, followlinks=False, onerror=problems.append):
        base = Path(root).relative_to(d)
        found += [(base / n).as_posix() for n in names]
        found += [(base / n).as_posix() for n in dirs
                  if (Path(root) / n).is_symlink() or (base / n).as_posix() not in folders]
    extra = sorted(set(found) - set(certified) - UNCERTIFIED_FILES)
    odd = sorted(n for n in UNCERTIFIED_FILES if os.path.lexists(d / n) and not os.path.isfile(d / n)
                 or os.path.islink(d / n))
    return [f"{d / rel} is not covered by the certificate" for rel in extra] + \
        [f"{d / n} is not a regular file (no hash covers it: a folder or a link there can hold anything)" for n in odd] + \
        [f"{e.filename} cannot be listed: {e.strerror}" for e in problems]


def _tools(b: _Build) -> Gate:
    def run() -> tuple[Verdict, str]:
        from veriguard.synth.freeze import tool_versions

        here, recorded = tool_versions(), b.certificate.get("tools")
        if not isinstance(recorded, dict):
            return Verdict.ERROR, "the certificate records no tool versions"
        short = {"python": lambda v: ".".join(str(v).split(".")[:2])}
        differ = [f"{t} {recorded.get(t)!r} in the certificate, {here[t]!r} here" for t in COMPARED_TOOLS
                  if short.get(t, str)(recorded.get(t)) != short.get(t, str)(here[t])]
        if differ:
            return Verdict.UNKNOWN, "this audit re-ran other versions than the build's: " + "; ".join(differ)
        return Verdict.PASSED, ", ".join(f"{t} {here[t]}" for t in COMPARED_TOOLS) + " (as in the certificate)"
    return _timed("tools", run)


def _nagini_worker(progress: Progress) -> Callable[[], Any]:
    def make() -> Any:
        from veriguard.verify.nagini import NaginiWorker

        return NaginiWorker(progress=progress)
    return make


def _from_the_spec(b: _Build, spec: SpecFile, progress: Progress, prover: Prover,
                   mutation_worker: Callable[[], Any] | None) -> list[Gate]:
    from veriguard.synth.pipeline import contract_gate, examples_gate
    from veriguard.verify.runnable import frozen_module, runnable_policy
    from veriguard.verify.testing import run_tests
    from veriguard.verify.z3check import check_contract

    assert spec.contract is not None
    contract = spec.contract  # a Contract, also inside the lambda below
    checks = [_timed("claims", lambda: certificate_claims(spec, b.certificate))]
    verified = b.files.get("policy_verified.py", b"").decode("utf-8", errors="replace")
    checks.append(_timed("compiled source", lambda: _compiled_again(spec, verified, b.certificate.get("path"))))
    regenerated: list[tuple[str, str]] = []  # (runnable, frozen module), made once by the check below

    def frozen() -> tuple[Verdict, str]:
        runnable = runnable_policy(contract, verified)
        regenerated.append((runnable, frozen_module(spec, runnable)))
        if regenerated[0][1].encode("utf-8") != b.files.get("policy.py"):
            return Verdict.REFUTED, "policy.py is not the frozen module of policy_verified.py: it was changed"
        return Verdict.PASSED, "policy.py is byte for byte the frozen module regenerated from policy_verified.py"
    checks.append(_timed("frozen module", frozen))
    checks.append(_timed("bytecode", lambda: bytecode_check(b.files.get("policy.py"), b.files.get(POLICY_CODE))))
    progress("deriving extraction.json again from the spec")
    checks.append(_timed("extraction", lambda: _extraction(spec, b.files.get("extraction.json", b""))))
    progress("checking the contract with z3")
    checks.append(_timed("contract (z3)", lambda: z3_as_recorded(
        contract_gate(check_contract(contract, bound=spec.settings.z3_bound)), b.certificate)))
    progress("running the spec's examples on the frozen module")

    def examples() -> tuple[Verdict, str]:
        if not regenerated or regenerated[0][1].encode("utf-8") != b.files.get("policy.py"):
            return Verdict.NOT_CHECKED, "not run: policy.py is not the regenerated frozen module (nothing else runs)"
        runnable, frozen_source = regenerated[0]
        return _gate(examples_gate(run_tests(spec, spec.examples, runnable, frozen_source, hypothesis_examples=0)))
    checks.append(_timed("examples", examples))
    progress("proving policy_verified.py with Nagini (a fresh run, no cache)")
    checks.append(_timed("proof (Nagini)", lambda: prover(spec, verified, progress)))
    if mutation_worker is not None:
        def mutated() -> tuple[Verdict, str]:
            if not regenerated or regenerated[0][1].encode("utf-8") != b.files.get("policy.py"):
                return Verdict.NOT_CHECKED, "not run: policy.py is not the regenerated frozen module"
            return mutation_again(spec, verified, *regenerated[0], b.certificate.get("mutation"), progress,
                                  mutation_worker)
        checks.append(_timed(MUTATION_CHECK, mutated))
    return checks


MUTATION_FIGURES = ("limit", "killed", "total", "score", "threshold", "by_tests", "by_proof")
MAX_MUTANTS = 10_000


def mutation_again(spec: SpecFile, verified: str, runnable: str, frozen: str, recorded: Any, progress: Progress,
                   worker: Callable[[], Any]) -> tuple[Verdict, str]:
    """The mutation score run again as synth runs it (the same mutants: seed 0, with the mutant limit the certificate
    records; the same tests; the survivors of the tests to Nagini within `[verify] mutants_per_nagini`, in a worker
    made by `worker` only when one survives) and compared with the certificate's figures and survivors.

    A certificate without `mutation.limit` (written before synth recorded it) is re-run with the smallest limit that
    gives as many mutants as it counts: REFUTED when their figures differ; PASSED when the policy has no more mutants
    than that (every site's mutant was counted, whatever limit synth used); else NOT_CHECKED (the audit fails), since
    whether synth made more mutants than the certificate counts cannot be told."""
    from veriguard.synth.pipeline import cached_mutants, mutation_gate
    from veriguard.verify.testing import run_tests

    run = _recorded_run(spec, recorded)
    if not isinstance(run, _RecordedRun):
        return run
    said, limit = _object(recorded), run.limit
    made = (cached_mutants(verified, run.contract_only, limit, None) if limit is not None
            else _recorded_mutants(verified, run.contract_only, run.total, cached_mutants))
    progress(f"re-running the mutation score: {len(made)} mutants against the spec's tests" +
             (f" (mutant limit {limit})" if limit is not None else " (the certificate records no mutant limit)"))
    tests = run_tests(spec, spec.examples, runnable, frozen, mutants=[(m.id, r) for m, r in made],
                      hypothesis_examples=spec.settings.hypothesis_examples)
    if tests.error:
        return tests.error_verdict, f"the tests could not run: {tests.error}"
    survivors = [m for m in tests.mutants if not m["killed_by"]]
    if survivors and spec.settings.mutants_per_nagini > 0:
        progress(f"{len(survivors)} mutant(s) survived the tests; asking Nagini (up to "
                 f"{spec.settings.mutants_per_nagini})")
    with (worker() if survivors and spec.settings.mutants_per_nagini > 0 else contextlib.nullcontext(None)) as w, \
            tempfile.TemporaryDirectory(prefix="veriguard-audit-") as tmp:
        _gate_here, here = mutation_gate(spec, w, tests, [m for m, _ in made], Path(tmp), progress, limit=limit)
    differ = [f"{k} {said.get(k)!r} in the certificate, {here.get(k)!r} here" for k in MUTATION_FIGURES
              if _canonical(said.get(k)) != _canonical(here.get(k))]
    ids = sorted(str(r["id"]) for r in here["survivors"])
    recorded_ids = sorted(str(r.get("id")) for r in _list(said.get("survivors")) if isinstance(r, dict))
    if ids != recorded_ids:
        differ.append(f"survivors {recorded_ids} in the certificate, {ids} here")
    if differ:
        return Verdict.REFUTED, "the mutation run does not give the certificate's figures: " + "; ".join(differ[:4])
    figures = (f"{here['killed']}/{here['total']} mutants killed ({here['by_tests']} by the tests, {here['by_proof']} "
               f"by Nagini), score {here['score']}")
    if limit is None:
        return run.without_limit(verified, f"the first {run.total} mutants give the certificate's figures ({figures})")
    return Verdict.PASSED, f"re-run with mutant limit {limit}: {figures}, as the certificate says"


def mutation_count(spec: SpecFile | None, verified: str, recorded: Any) -> tuple[Verdict, str]:
    """Whether the mutant limit the certificate records makes as many mutants of `verified` as it counts (`total`),
    without running them: a certificate counting 20 of 20 killed where its limit makes 30 hides 10 from the score.
    REFUTED when the counts differ; a certificate without `mutation.limit` (older builds) is PASSED only when the
    policy has no more sites to mutate than it counts, else NOT_CHECKED. Whether each mutant is killed is the
    re-run's (`audit --mutation`)."""
    from veriguard.synth.pipeline import cached_mutants

    assert spec is not None
    run = _recorded_run(spec, recorded)
    if not isinstance(run, _RecordedRun):
        return run
    if run.limit is None:
        return run.without_limit(verified, f"it counts {run.total} mutants")
    mutants = [m for m, _runnable in cached_mutants(verified, run.contract_only, run.limit, None)]
    made = len(mutants)
    if made != run.total:
        return Verdict.REFUTED, (f"the recorded mutant limit {run.limit} makes {made} mutants of policy_verified.py, "
                                 f"but the certificate counts {run.total}: its score is not over the mutants synth made")
    rows = {tuple(mutant_row(m).values()) for m in mutants}
    strays = [s.get("id") if isinstance(s, dict) else s for s in _list(_object(recorded).get("survivors"))
              if not (isinstance(s, dict) and tuple(s.get(k) for k in MUTANT_KEYS) in rows)]
    if strays:
        return Verdict.REFUTED, (f"the certificate's survivors {strays[:5]} are not mutants the recorded limit makes "
                                 "(id, operator, line and change): they are not the ones synth ran")
    return Verdict.PASSED, (f"the recorded mutant limit {run.limit} makes {made} mutants, as many as the certificate "
                            "counts (whether each is killed is checked by `audit --mutation`)")


@dataclass(frozen=True)
class _RecordedRun:
    """The mutation run a certificate records, as far as it can be made again: how many mutants it counts, the mutant
    limit it was made with (None: a certificate from before synth recorded it), and the functions never mutated."""

    total: int
    limit: int | None
    contract_only: tuple[str, ...]

    def without_limit(self, verified: str, done: str) -> tuple[Verdict, str]:
        """The verdict on a certificate without a mutant limit, once `done` (what agreed) was checked: PASSED when the
        policy has no more sites to mutate than it counts (no limit made more), else NOT_CHECKED."""
        from veriguard.verify.mutation import site_count

        sites = site_count(verified, skip_functions=self.contract_only)
        if sites == self.total:
            return Verdict.PASSED, (f"{done}; it records no mutant limit (a build from before synth recorded "
                                    f"`mutation.limit`), but the policy has no more than {sites} sites to mutate, as "
                                    "many as it counts, so no limit made more")
        return Verdict.NOT_CHECKED, (f"{done}, but it records no mutant limit (a build from before synth recorded "
                                     f"`mutation.limit`) and the policy has {sites} sites to mutate, so whether synth "
                                     "made more mutants than it counts cannot be told; re-run `veriguard synth` to "
                                     "record it")


def _recorded_run(spec: SpecFile, recorded: Any) -> _RecordedRun | tuple[Verdict, str]:
    """The run the certificate's `mutation` (`recorded`) describes, or REFUTED and why when it describes none that can
    be made again (no total, or a limit below it: any larger limit is cheap, as making mutants stops at the last site)."""
    from veriguard.verify.runnable import contract_functions

    assert spec.contract is not None
    said = _object(recorded)
    total, limit = said.get("total"), said.get("limit")
    if not (type(total) is int and 0 < total <= MAX_MUTANTS):
        return Verdict.REFUTED, f"the certificate records no mutation run to re-derive (total {str(total)[:40]!r})"
    if "limit" in said and not (type(limit) is int and limit >= total):
        return Verdict.REFUTED, (f"the certificate's mutant limit {str(limit)[:40]!r} is not a whole number at least "
                                 f"its total {total}")
    return _RecordedRun(total, limit if type(limit) is int else None, contract_functions(spec.contract))


def _recorded_mutants(verified: str, contract_only: tuple[str, ...], total: int,
                      make: Callable[..., list[Any]]) -> list[Any]:
    """The first `total` mutants (an old certificate's, which records no limit): mutation.mutants picks sites in one
    order whatever its limit and skips a site it cannot mutate, so the smallest limit that gives `total` mutants gives
    the first `total` of any larger limit's."""
    limit = total
    made = make(verified, contract_only, limit, None)
    while len(made) < total and limit < 4 * total + 100:
        limit += total - len(made)
        made = make(verified, contract_only, limit, None)
    return made


# Run in a child (`python -I -S`): the build's bytecode is unmarshalled there, never in the auditor's process.
_SAME_CODE = """
import __future__, hashlib, importlib.util, marshal, sys
source, data = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
magic = importlib.util.MAGIC_NUMBER
if not data.startswith(magic):
    print("other Python")
    raise SystemExit
if data[len(magic):len(magic) + 32] != hashlib.sha256(source).digest():
    print("other source")
    raise SystemExit
fresh = compile(source, "policy.py", "exec", flags=__future__.annotations.compiler_flag, dont_inherit=True)
shipped = marshal.loads(data[len(magic) + 32:])

def instructions(code):
    # == compares deoptimised opcodes: a specialised one (BINARY_OP_SUBTRACT_INT for BINARY_OP +) is
    # "equal" yet runs as written, so the bytes the interpreter runs are compared too, in every nested code object
    yield getattr(code, "_co_code_adaptive", code.co_code)
    for const in code.co_consts:
        if isinstance(const, type(fresh)):
            yield from instructions(const)

same = shipped == fresh and list(instructions(shipped)) == list(instructions(fresh))
print("same" if same else "differs")
"""


def bytecode_check(policy_py: bytes | None, policy_code: bytes | None) -> tuple[Verdict, str]:
    """Whether `policy_code` (policy.code's bytes) is `policy_py` compiled, asked of a child process: PASSED,
    NOT_CHECKED (another Python's bytecode, which the loader does not run), REFUTED or ERROR."""
    import subprocess
    import sys

    if policy_code is None:
        return Verdict.PASSED, "the build carries no policy.code: the monitor compiles policy.py"
    if policy_py is None:
        return Verdict.ERROR, "the build has no policy.py to compare policy.code with"
    with tempfile.TemporaryDirectory(prefix="veriguard-audit-") as tmp:
        paths = [os.path.join(tmp, "policy.py"), os.path.join(tmp, "policy.code")]
        for path, data in zip(paths, (policy_py, policy_code)):
            with open(path, "wb") as f:
                f.write(data)
        try:
            done = subprocess.run([sys.executable, "-I", "-S", "-c", _SAME_CODE, *paths], capture_output=True,
                                  text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as e:
            return Verdict.ERROR, f"the comparison could not run: {e}"
    answer = done.stdout.strip()
    if done.returncode != 0 or answer not in ("same", "differs", "other Python", "other source"):
        return Verdict.REFUTED, ("policy.code is not readable bytecode: "
                                 f"{(done.stderr.strip().splitlines() or ['no output'])[-1][:300]}")
    if answer == "same":
        return Verdict.PASSED, "policy.code is policy.py compiled (code objects and the instructions they run equal)"
    if answer == "other Python":
        return Verdict.NOT_CHECKED, ("policy.code was compiled by another Python: a monitor on this Python "
                                     "compiles policy.py instead; audit with the build's Python to check it")
    return Verdict.REFUTED, ("policy.code is not policy.py compiled: the monitor would run other code than the "
                             f"source ({answer})")


def _extraction(spec: SpecFile, shipped: bytes) -> tuple[Verdict, str]:
    """extraction.json against the one the spec gives: every byte but the frozen classifiers, which are made
    with the shipped ones put in; then each of those against a classifier trained here on the bank."""
    from veriguard.synth.classifier_build import freeze_classifier
    from veriguard.synth.freeze import extraction_json

    try:
        doc = strict_json.loads(shipped)
    except strict_json.StrictJSONError as e:
        return Verdict.REFUTED, f"extraction.json is not JSON: {e}"
    entries = doc.get("extraction") if isinstance(doc, dict) else None
    if not isinstance(entries, dict):
        return Verdict.REFUTED, "extraction.json has no `extraction` object"
    banks = [n for n, cfg in spec.extraction.items() if isinstance(cfg, Mapping) and "bank" in cfg]
    kept = {n: {**cfg, "frozen": _frozen_in(entries, n)} if n in banks else cfg for n, cfg in spec.extraction.items()}
    made = extraction_json(spec, kept)
    if made.encode("utf-8") != shipped:
        return Verdict.REFUTED, ("extraction.json is not what the build's spec gives: it differs in "
                                 f"{_differing(doc, json.loads(made))}; the monitor would read the agent otherwise")
    if not banks:
        return Verdict.PASSED, "extraction.json is byte for byte what the build's spec gives"
    retrained = [n for n in banks if _canonical(freeze_classifier(spec, n, spec.extraction[n])) !=
                 _canonical(_frozen_in(entries, n))]
    if retrained:
        return Verdict.NOT_CHECKED, (f"the frozen classifier of {', '.join(retrained)} is not the one trained here on "
                                     "the bank: it was changed, or its training does not reproduce on this machine "
                                     "(another encoder or onnxruntime); it is not re-derived, the rest of "
                                     "extraction.json is byte for byte what the spec gives")
    return Verdict.PASSED, (f"extraction.json is byte for byte what the build's spec gives, and the frozen "
                            f"classifier of {', '.join(banks)} holds the values of the one retrained here")


def _frozen_in(entries: Mapping[str, Any], name: str) -> Any:
    entry = entries.get(name)
    return entry.get("frozen") if isinstance(entry, dict) else None


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"))


def _differing(shipped: Any, made: dict[str, Any]) -> str:
    """The top-level keys and [extraction] entries where `shipped` and `made` differ."""
    have = shipped if isinstance(shipped, dict) else {}
    keys = [k for k in sorted(set(have) | set(made)) if k != "extraction" and
            _canonical(have.get(k)) != _canonical(made.get(k))]
    entries, wanted = have.get("extraction") or {}, made["extraction"]
    keys += [f"extraction.{n}" for n in sorted(set(entries) | set(wanted)) if
             _canonical(entries.get(n)) != _canonical(wanted.get(n))]
    return ", ".join(keys) or "layout only (the same values, written otherwise)"


def _gate(gate: Any) -> tuple[Verdict, str]:
    return gate.verdict, gate.summary


def z3_as_recorded(fresh: Gate, cert: Mapping[str, Any]) -> tuple[Verdict, str]:
    """z3's contract checks run here (`fresh`), held to the certificate's record of them: the bound and every
    finding (check, subject, verdict, message, witness, place), which report.md shows a person as what z3 found. z3
    gives the same findings for the same contract and tables (the tools check compares its version). Before, a
    re-signed certificate with its findings emptied, a witness added or a message rewritten passed."""
    if not holds(fresh.verdict):
        return fresh.verdict, fresh.summary
    recorded: dict[str, Any] = next((g for g in _list(cert.get("gates")) if isinstance(g, dict)
                                     and g.get("name") == "contract (z3)"), {})
    made = fresh.details   # compared as _canonical writes them (JSON), as the certificate holds them
    differ = [k for k in ("bound", "findings") if _canonical(recorded.get(k)) != _canonical(made.get(k))]
    if differ == ["findings"]:
        said, gives = _list(recorded.get("findings")), list(made.get("findings") or [])
        first = next((i for i, (a, b) in enumerate(zip(said, gives)) if _canonical(a) != _canonical(b)),
                     min(len(said), len(gives)))
        return Verdict.REFUTED, (f"{fresh.summary}, but the certificate records other findings ({len(said)} where z3 "
                                 f"gives {len(gives)}; the first that differs is #{first + 1})")
    if differ:
        return Verdict.REFUTED, f"{fresh.summary}, but the certificate records another {' and '.join(differ)}"
    return fresh.verdict, f"{fresh.summary}, as the certificate records them"


def certificate_claims(spec: SpecFile, cert: Mapping[str, Any]) -> tuple[Verdict, str]:
    """Whether what the certificate says (and report.md shows a person as what was proved) is so: its request, agent,
    contract text and hash, rules and properties are the build's spec's (synth.freeze.spec_claims), and, as it says
    PROVED, every gate it lists held, the proof it records is PROVED, every property was proved by Nagini and none
    refuted by z3, the mutation figures are the mutation gate's, and a compile-path build carries no transcript or
    assumptions of a model. REFUTED naming the first claims that are not."""
    from veriguard.synth.freeze import spec_claims

    expected = json.loads(json.dumps(spec_claims(spec)))
    hashes = _object(cert.get("hashes"))
    said = {"request": cert.get("request"), "agent": cert.get("agent"), "contract_text": cert.get("contract_text"),
            "contract": hashes.get("contract"), "rules": cert.get("rules"),
            "properties": [{k: p.get(k) for k in ("id", "message")} if isinstance(p, dict) else p
                           for p in _list(cert.get("properties"))]}
    wrong = [("hashes." if k == "contract" else "") + k for k in expected if _canonical(said[k]) != _canonical(expected[k])]
    wrong += _unproved_claims(cert) + _records_synth_did_not_write(spec, cert)
    if wrong:
        return Verdict.REFUTED, (f"the certificate says what is not so of this build: {', '.join(wrong[:6])}; the "
                                 "report shows a person those claims")
    return Verdict.PASSED, ("the certificate's request, agent, contract, rules and properties are the spec's, and "
                            "its gates, proof and mutation figures say PROVED as its status does")


def _unproved_claims(cert: Mapping[str, Any]) -> list[str]:
    """The recorded verdicts that contradict a PROVED certificate (the checks above passed only PROVED ones)."""
    gates = _list(cert.get("gates"))
    wrong = unheld_gates(cert.get("gates"))   # every gate the synthesis records, once, holding
    if _object(cert.get("proof")).get("verdict") != Verdict.PROVED.value:
        wrong.append("proof.verdict")
    wrong += [f"properties.{p.get('id')}" for p in _list(cert.get("properties")) if isinstance(p, dict) and
              (p.get("nagini") != Verdict.PROVED.value or p.get("z3") not in (Verdict.PROVED.value,
                                                                              Verdict.NOT_CHECKED.value))]
    mutation = cert.get("mutation")
    gate: dict[str, Any] = next((g for g in gates if isinstance(g, dict) and g.get("name") == "mutation"), {})
    if not isinstance(mutation, dict) or any(gate.get(k) != mutation.get(k) for k in ("killed", "total", "score")) \
            or not _mutation_adds_up(mutation):
        wrong.append("mutation")
    if not _stamped(cert.get("synthesized_at")):
        wrong.append("synthesized_at")
    approval = cert.get("approval")
    if approval is not None and not (cert.get("path") == "compile" and isinstance(approval, dict) and
                                     _stamped(approval.get("approved_at")) and
                                     approval["approved_at"] <= str(cert.get("synthesized_at"))):
        wrong.append("approval (only a compile-path update is approved, before it is written)")
    if cert.get("path") == "compile" and (cert.get("transcript") is not None or cert.get("assumptions") != []):
        wrong.append("transcript or assumptions (a compile-path build has none)")
    return wrong


# what synth writes beside the verdicts (synth.pipeline's gates, verify.verdicts.ProofResult.to_dict, synth.freeze's
# certificate): a key, a time or a sentence it does not write is a claim no check made, and report.md shows it
PROOF_KEYS = frozenset(f.name for f in fields(ProofResult)) - {"cache"}   # ProofResult.to_dict's keys
PROPERTY_KEYS = frozenset({"id", "message", "nagini", "detail", "z3"})
FIRST_BUILD = "2026-01-01T00:00:00+00:00"   # no veriguard build is older (its first commit is of 2026-11-22)


def _records_synth_did_not_write(spec: SpecFile, cert: Mapping[str, Any]) -> list[str]:
    """The parts of a PROVED certificate that are not what synth writes from the figures beside them: each gate's
    summary (synth.pipeline's sentence for its figures), the proof's detail (the proof cache's note: Nagini says
    nothing of a proof it finds) and fields, each property's, a cache entry's time and duration, the mutation figures'
    threshold (the spec's) and survivors, the tools recorded, and a synthesis time before veriguard existed."""
    from veriguard.synth.freeze import RECORDED_TOOLS
    from veriguard.verify.proof import cache_note

    proof, mutation = _object(cert.get("proof")), _object(cert.get("mutation"))
    wrong = [f"gates.{g.get('name')}.summary" for g in _list(cert.get("gates"))
             if isinstance(g, dict) and g.get("summary") != _gate_summary(spec, g, proof, mutation)]
    if set(proof) - {"cache"} != PROOF_KEYS or proof.get("seconds") is not None or proof.get("tool") != "nagini" \
            or proof.get("diagnostics") != [] or proof.get("detail") != cache_note(_object(proof.get("cache"))):
        wrong.append("proof (its detail, fields or time are not what synth records of a proof)")
    wrong += [f"properties.{p.get('id')}" for p in _list(cert.get("properties"))
              if not isinstance(p, dict) or set(p) != PROPERTY_KEYS or p.get("detail") != ""]
    caches = [proof.get("cache"), *(g.get("cache") for g in _list(cert.get("gates")) if isinstance(g, dict))]
    if not all(c is None or _cache_entry(c, cert.get("synthesized_at"), spec) for c in caches):
        wrong.append("cache (an entry synth could not have used: a key it does not write, a duration that is not "
                     "a time synth records or longer than the run could take, or a time outside the synthesis)")
    survivors = mutation.get("survivors")
    if set(mutation) - {"limit"} != MUTATION_KEYS - {"limit"} \
            or mutation.get("threshold") != spec.settings.mutation_threshold \
            or not isinstance(survivors, list) or mutation.get("total") != _int(mutation.get("killed")) + len(survivors) \
            or _int(mutation.get("by_tests")) + _int(mutation.get("by_proof")) != mutation.get("killed") \
            or not _nagini_budget_kept(mutation, spec.settings.mutants_per_nagini):
        wrong.append("mutation (its threshold is not the spec's, its figures do not add up, or more mutants went to "
                     "Nagini than the spec's [verify] mutants_per_nagini allows)")
    tools = cert.get("tools")
    if not isinstance(tools, dict) or set(tools) != RECORDED_TOOLS or not all(
            isinstance(v, str) and _TOOL_VERSION.get(t, _DISTRIBUTION_VERSION).fullmatch(v) for t, v in tools.items()):
        wrong.append("tools (synth records the version of each tool it ran, as the tool gives it, and nothing else)")
    if str(cert.get("synthesized_at")) < FIRST_BUILD:
        wrong.append(f"synthesized_at (before {FIRST_BUILD[:10]}: no veriguard build is older)")
    return wrong


def _int(value: Any) -> int:
    return value if type(value) is int else -1


# a tool's version as synth records it (synth.freeze.tool_versions): platform.python_version(), Java's major version,
# a distribution's version (PEP 440) or "not installed"; anything else is a sentence no tool wrote
_DISTRIBUTION_VERSION = re.compile(r"[0-9]{1,9}(\.[0-9]{1,9}){0,5}((a|b|rc)[0-9]{1,9})?(\.post[0-9]{1,9})?"
                                   r"(\.dev[0-9]{1,9})?(\+[a-z0-9]{1,32}(\.[a-z0-9]{1,32}){0,5})?|not installed")
_TOOL_VERSION = {"python": re.compile(r"[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}((a|b|rc)[0-9]{1,3})?\+?"),
                 "java": re.compile(r"[0-9]{1,3}|unknown")}
MAX_GATE_SECONDS = 86_400.0   # a gate's run stored in the cache (tests, z3, mutants, a classifier): none takes a day


def _cache_entry(entry: Any, synthesized_at: Any, spec: SpecFile) -> bool:
    """A proof-cache entry as synth records it: its keys, a duration as the cache stores it (seconds rounded to the
    millisecond, not negative, and no longer than the run could take: a proof is killed at its timeout plus the
    worker's grace, and a failure may be verified twice, verify.nagini.verify_explained), and a time (as synth stamps
    times) between the first veriguard build and the synthesis that used it. Before, 1e308 s passed."""
    from veriguard.verify.nagini import GRACE

    if not isinstance(entry, dict) or not set(entry) <= CACHE_KEYS or "hit" not in entry:
        return False
    took = entry.get("seconds_then")   # None when the entry did not record it (verify.proof_cache)
    longest = 2 * (spec.settings.nagini_timeout + GRACE) if entry.get("hit") == "file" else MAX_GATE_SECONDS
    stored = entry.get("stored_at")
    return (took is None or _duration(took, longest)) and (
        stored is None or (_stamped(stored) and FIRST_BUILD <= str(stored) <= str(synthesized_at)))


def _duration(took: Any, longest: float) -> bool:
    """Seconds as synth records them: round(t, 3) of a monotonic clock's difference (a float, never -0.0)."""
    return type(took) is float and math.isfinite(took) and math.copysign(1.0, took) > 0 and took <= longest \
        and round(took, 3) == took


def _nagini_budget_kept(mutation: Mapping[str, Any], budget: int) -> bool:
    """Whether the mutants the figures send to Nagini are the ones synth.pipeline.mutation_gate sends: each survivor of
    the tests in turn while the spec's `mutants_per_nagini` lasts. The mutants that survive the tests are those
    killed by a proof and the survivors; min(those, budget) went to Nagini, each either killed (`by_proof`) or proved
    equivalent (a survivor with Nagini's note); the others carry the budget's note; `proofs_run` (not from the cache)
    is at most those sent. Before, `by_tests` and `by_proof` swapped with the same total passed (30 kills by proof
    where the spec lets Nagini see 3)."""
    survivors = [s for s in _list(mutation.get("survivors")) if isinstance(s, dict)]
    by_proof, proofs_run = _int(mutation.get("by_proof")), _int(mutation.get("proofs_run"))
    if len(survivors) != len(_list(mutation.get("survivors"))) or min(by_proof, proofs_run,
                                                                      _int(mutation.get("by_tests"))) < 0 or any(
            s.get("killed_by") is not None or not isinstance(s.get("note"), str) for s in survivors):
        return False
    proved_too = sum(1 for s in survivors if s["note"].startswith(PROVED_TOO))
    sent = by_proof + proved_too
    return sent == min(by_proof + len(survivors), budget) and proofs_run <= sent


def _gate_summary(spec: SpecFile, gate: Mapping[str, Any], proof: Mapping[str, Any],
                  mutation: Mapping[str, Any]) -> str | None:
    """The summary synth writes for a holding gate from its recorded figures (synth.pipeline: contract_gate,
    proof_gate, examples_gate, hypothesis_gate, mutation_gate, labelled_cached); None when the figures cannot make
    one (the gate checks above refute those)."""
    name, verdict = gate.get("name"), gate.get("verdict")
    if name == "proof (Nagini)":
        cached = _object(proof.get("cache")).get("hit")
        return proof_summary(verdict, cached, proof.get("detail")) if gate.get("cache") == proof.get("cache") else None
    if name == "contract (z3)":
        if gate.get("bound") != spec.settings.z3_bound:   # the lists z3 checked up to are the spec's
            return None
        findings = [f for f in _list(gate.get("findings")) if isinstance(f, dict)]
        bad = [f for f in findings if f.get("verdict") != Verdict.PROVED.value]
        text = contract_summary(len(findings) - len(bad), len(findings), gate.get("bound"),
                                [(f.get("subject"), f.get("verdict")) for f in bad if f.get("check") == "property"])
    elif name == "examples":
        rows = [{"error": "", "line": e.pos.line, "name": e.name, "verdict": Verdict.PASSED.value} for e in spec.examples]
        if gate.get("results") != rows or gate.get("passed") != len(rows) or gate.get("total") != len(rows):
            return None
        text = examples_summary(len(rows), len(rows))
    elif name == "properties (Hypothesis)":
        run, systematic = gate.get("examples_run"), gate.get("systematic")
        if gate.get("failure") is not None or type(run) is not int or type(systematic) is not int or run < 0 \
                or systematic < 0 or run > spec.settings.hypothesis_examples:   # Hypothesis runs at most the spec's
            return None
        text = hypothesis_summary(run, systematic)
    elif name == "mutation":
        killed, total, threshold = gate.get("killed"), gate.get("total"), mutation.get("threshold")
        if type(killed) is not int or type(total) is not int or not total \
                or not isinstance(threshold, (int, float)) or isinstance(threshold, bool):
            return None
        text = mutation_summary(killed, total, threshold)
    else:
        return None
    return cached_summary(verdict, text) if "cache" in gate else text


def _mutation_adds_up(mutation: Mapping[str, Any]) -> bool:
    """The figures a mutation run records agree with each other and with a PASSED mutation gate (at least one
    mutant, the score at its threshold; without mutants the gate is NOT_CHECKED and the build is not PROVED). They are
    re-derived only by `audit --mutation`."""
    killed, total, score, threshold = (mutation.get(k) for k in ("killed", "total", "score", "threshold"))
    if not (isinstance(killed, int) and isinstance(total, int) and isinstance(score, (int, float)) and
            isinstance(threshold, (int, float))) or any(isinstance(n, bool) for n in (killed, total, score, threshold)):
        return False
    limit = mutation.get("limit", total)   # absent in a certificate from before synth recorded it
    if type(limit) is not int or not total <= limit:
        return False
    # synth records the score rounded to 4 places (synth.pipeline.mutation_gate): 29 of 30 is 0.9667
    return 0 <= killed <= total and total > 0 and abs(score - round(killed / total, 4)) < 1e-9 and score >= threshold


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    """`value` when it is a list; else a list holding it, so that a claim of another type is one wrong item."""
    return value if isinstance(value, list) else [value]


CLOCK_SKEW_S = 300   # how far ahead of this machine's clock another machine's may have stamped a build


def _stamped(value: Any) -> bool:
    """Whether `value` is a time as synth stamps it (UTC, to the second, `+00:00`: one spelling, so that times compare
    as text) and not after now: a build stamped in 2999, or at +14:00, claimed a time it was not made at."""
    when = offset_datetime(value)
    now = dt.datetime.now(dt.timezone.utc)
    return when is not None and value == when.astimezone(dt.timezone.utc).isoformat() \
        and when.microsecond == 0 and when <= now + dt.timedelta(seconds=CLOCK_SKEW_S)


def _compiled_again(spec: SpecFile, verified: str, path: object) -> tuple[Verdict, str]:
    """Whether `verified` is what the compile path makes of `spec`. `path` (the certificate's) only words the
    verdict: a build that is not byte for byte the compiled spec never passes, whatever path it names."""
    if path != "compile":
        shown = json.dumps(path)[:40] if isinstance(path, str) else f"a {type(path).__name__}"
        return Verdict.NOT_CHECKED, (f"the certificate says path {shown}, not \"compile\": this audit re-derives "
                                     "policy_verified.py (the contract the proof is of) only from a compile-path spec")
    if not compiled_from(spec, verified):
        return Verdict.REFUTED, "policy_verified.py is not what the compile path makes of the build's spec"
    return Verdict.PASSED, "the build's spec compiles to policy_verified.py byte for byte"


def compiled_from(spec: SpecFile, verified: str) -> bool:
    """Whether `verified` is what the compile path makes of `spec` (each lemma revealing the rules z3 chose, or
    every rule): the contract Nagini proves it against is then the spec's."""
    from veriguard.synth.compile import compile_policy

    return verified in (compile_policy(spec).source, compile_policy(spec, opaque_rules=False).source)


def prove_fresh(spec: SpecFile, verified: str, progress: Progress, worker: Any = None) -> tuple[Verdict, str]:
    """Nagini on `verified`: a worker of its own (or `worker`, a warm NaginiWorker) called directly, never
    through a proof cache. A failed proof is confirmed as synth confirms it: by a spec example that fails on the
    policy (then Nagini is not asked again for models) or by replaying Nagini's counterexamples."""
    from veriguard.contracts.generated import check_generated
    from veriguard.synth.pipeline import confirm_by_tests, explained_by_tests, replay_counterexamples
    from veriguard.verify.nagini import NaginiWorker, verify_explained
    from veriguard.verify.proof import from_worker
    from veriguard.verify.runnable import frozen_module, runnable_policy
    from veriguard.verify.testing import TestReport, run_tests

    assert spec.contract is not None
    contract = spec.contract
    check_generated(verified, "nagini")  # nothing outside the allowlist reaches the verifier
    tests: list[TestReport] = []  # run only once the proof has failed

    @functools.cache
    def modules() -> tuple[str, str]:
        runnable = runnable_policy(contract, verified)
        return runnable, frozen_module(spec, runnable)

    def explained() -> str | None:
        progress("the proof failed: running the spec's examples on it")
        tests.append(run_tests(spec, spec.examples, *modules(), hypothesis_examples=0))
        return explained_by_tests(tests[0])

    with tempfile.TemporaryDirectory(prefix="veriguard-audit-") as tmp, contextlib.ExitStack() as own:
        path = Path(tmp) / f"policy_{spec.name}.py"
        path.write_text(verified, encoding="utf-8")
        verifier = worker if worker is not None else own.enter_context(NaginiWorker(progress=progress))
        raw = verify_explained(verifier, path, timeout=spec.settings.nagini_timeout, explained=explained)
        proof = from_worker(raw, file="policy_verified.py", params=contract.signature.flat_params())
    if tests:
        proof = confirm_by_tests(proof, tests[0], spec)
    if proof.verdict is Verdict.UNKNOWN:
        proof = replay_counterexamples(proof, spec, *modules())
    where = "; ".join(f"{d.clause or d.code} (line {d.line})" for d in proof.diagnostics[:3])
    return proof.verdict, f"{proof.verdict.value} in {proof.seconds:.1f} s" + \
        (f": {proof.detail}" if proof.detail else "") + (f"; {where}" if where else "")


def log_summary(path: str | Path, key: VerifyKey | None, policy_sha256: str, *, expected: Head | None = None,
                build_sha256: str = "") -> dict[str, Any]:
    """The decision log verified (enforce.decision_log.verify_log, against `expected` when given) and, when intact,
    counted: decisions of this build (allowed, denied, failed closed), of other builds of the same policy.py
    (records that name another certificate: other extractors) and of other policies, among the records it verified."""
    from veriguard.enforce.decision_log import read_verified

    check, records = read_verified(path, key, expected)
    out: dict[str, Any] = {"log": str(path), **check.to_dict()}
    if not check.ok:
        return out
    counts = {"this_policy": 0, "allowed": 0, "denied": 0, "fail_closed": 0, "other_builds": 0, "other_policies": 0}
    for record in records:
        if record.get("policy_sha256") != policy_sha256:
            counts["other_policies"] += 1
            continue
        if build_sha256 and record.get("build_sha256", build_sha256) != build_sha256:
            counts["other_builds"] += 1
            continue
        counts["this_policy"] += 1
        counts["allowed" if record.get("allowed") is True else "denied"] += 1
        counts["fail_closed"] += 1 if record.get("fail_closed") else 0
    return out | {"decisions": counts}


def write_bundle(result: AuditResult, target: str | Path) -> Path:
    """One archive (.zip, .tar.gz or .tgz) an auditor keeps, written atomically: under <policy>/ the build's files
    as the audit read and checked them (certificate, signature, spec and tables, the policy sources, run.json), never
    read again, and report.md rendered from the audited certificate; audit.json and, with a log, decision-log.json."""
    target = bundle_path(target)
    members = {f"{result.policy}/{rel}": data for rel, data in result.contents.items()}
    members["audit.json"] = (json.dumps(result.to_dict(), indent=2, sort_keys=True) + "\n").encode("utf-8")
    if result.log is not None:
        members["decision-log.json"] = (json.dumps(result.log, indent=2, sort_keys=True) + "\n").encode("utf-8")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                _archive(f, members, as_zip=target.name.endswith(".zip"))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        finally:
            Path(tmp).unlink(missing_ok=True)
    except OSError as e:
        raise VeriguardError("audit.bundle", f"cannot write the bundle: {e.strerror}", file=str(target),
                             fix="choose a writable place for --bundle") from None
    return target


def bundle_path(target: str | Path) -> Path:
    """`target` when it names an archive this module writes (checked before the audit's long work)."""
    target = Path(target)
    if not target.name.endswith(BUNDLE_SUFFIXES) or target.name.startswith(BUNDLE_SUFFIXES):
        raise VeriguardError("audit.bundle", f"{target.name!r} is neither NAME.zip, NAME.tar.gz nor NAME.tgz",
                             file=str(target), fix="name the bundle e.g. audit-payments.zip or audit-payments.tar.gz")
    return target


def _archive(f: Any, members: Mapping[str, bytes], *, as_zip: bool) -> None:
    if as_zip:
        with zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as z:
            for name, data in members.items():
                z.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)
        return
    with tarfile.open(fileobj=f, mode="w:gz") as t:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            t.addfile(info, io.BytesIO(data))
