"""`veriguard diff OLD NEW [--log LOG]` and `veriguard synth SPEC --previous OLD [--approve FILE]`.

A build is read as the monitor reads it (enforce.loader: every file checked against the certificate),
and its contract from the copy of the spec under BUILD/spec/. verify.policy_diff finds what NEW decides
differently, and every witness is run on both frozen modules. Results are values; the CLI prints them.
"""
from __future__ import annotations

import datetime as dt
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from veriguard.audit import bytecode_check, compiled_from, read_regular
from veriguard.contracts.build_format import POLICY_CODE
from veriguard.contracts.regular_file import FileRefused, read_regular_file
from veriguard.contracts.errors import OperatorError, Pos, SpecError, VeriguardError
from veriguard.synth.specfile import SpecFile, _parse_toml, load_spec
from veriguard.enforce.decision_log import read_verified
from veriguard.enforce.loader import ArgumentError, FrozenPolicy, check_certificate, load_policy
from veriguard.synth.freeze import sha256
from veriguard.synth.pipeline import SynthResult
from veriguard.synth.tomlpos import key_positions
from veriguard.verify.policy_diff import Outcome, PolicyDiff, Run, Witness, argument_difference, diff_policies
from veriguard.verify.runnable import frozen_module, runnable_policy
from veriguard.verify.verdicts import Verdict

APPROVAL_FIX = 'write a TOML file with by = "who approves" and reason = "why the new policy may allow this"'


class UpdateRefused(OperatorError):
    """synth --previous: the new policy allows what the previous one denied, without an approval."""

    exit_code = 1


@dataclass(frozen=True)
class Build:
    policy: FrozenPolicy
    spec: SpecFile


@dataclass(frozen=True)
class Approval:
    by: str
    reason: str
    file: str


def load_build(directory: str | Path, *, accept_unproved: bool = False) -> Build:
    """The frozen policy (checked against its certificate) and the spec copied into the build."""
    policy = load_policy(directory, accept_unproved=accept_unproved)
    hashes = policy.certificate["hashes"]
    spec = load_spec(policy.directory / check_certificate(policy.certificate, policy.directory)[3])
    if spec.sha256 != hashes["spec"] or dict(spec.files) != hashes["tables"]:
        raise VeriguardError("diff.changed", "the build's spec or tables changed while it was read",
                             file=str(policy.directory), fix="re-run the command once nothing writes to the build")
    if spec.contract is None:
        raise VeriguardError("diff.no_contract", f"the spec of {policy.name} has no formal [contract] rules",
                             file=str(policy.directory), fix="diff builds made from specs with [contract] rules")
    _module_of(policy, spec)
    return Build(policy, spec)


def _module_of(policy: FrozenPolicy, spec: SpecFile) -> None:
    """policy.py must be the frozen module of the build's spec and proved source, byte for byte, and the proved source
    what the compile path makes of the spec: the diff reasons about the spec's contract, and the monitor runs
    policy.py (whose decide, with `double_check=False`, is only as good as the contract it was proved against)."""
    assert spec.contract is not None
    verified = read_regular(policy.directory / "policy_verified.py", "diff.changed")
    shipped = read_regular(policy.directory / "policy.py", "diff.changed")
    hashes = policy.certificate["hashes"]
    if sha256(verified) != hashes["verified_source"] or sha256(shipped) != policy.sha256 or \
            frozen_module(spec, runnable_policy(spec.contract, verified.decode("utf-8"))).encode() != shipped:
        raise VeriguardError("diff.inconsistent", "policy.py is not the frozen module of the spec and the proved "
                             "source in the build", file=str(policy.directory),
                             fix="re-run `veriguard synth` to rebuild it; never edit a build by hand")
    if not compiled_from(spec, verified.decode("utf-8")):
        raise VeriguardError("diff.inconsistent", "policy_verified.py is not what the compile path makes of the "
                             "build's spec: the contract it was proved against is not the spec's",
                             file=str(policy.directory / "policy_verified.py"),
                             fix="re-run `veriguard synth` to rebuild it; never edit a build by hand")
    _code_of(policy, shipped)


def _code_of(policy: FrozenPolicy, shipped: bytes) -> None:
    """The loader runs policy.code when this Python wrote it: it must be `shipped` (policy.py) compiled, else the
    diff would reason about code the frozen policy does not run."""
    digest = policy.certificate["hashes"]["files"].get(POLICY_CODE)
    if digest is None:
        return
    code = read_regular(policy.directory / POLICY_CODE, "diff.changed")
    verdict, why = bytecode_check(shipped, code) if sha256(code) == digest else \
        (Verdict.REFUTED, f"{POLICY_CODE} changed while the build was read")
    if verdict not in (Verdict.PASSED, Verdict.NOT_CHECKED):
        raise VeriguardError("diff.inconsistent", why,
                             file=str(policy.directory / POLICY_CODE),
                             fix="re-run `veriguard synth` to rebuild it; never edit a build by hand")


def frozen_run(policy: FrozenPolicy) -> Run:
    """The frozen policy's decision as the monitor takes it (evaluate_checked); a refusal or an error denies."""
    def run(args: dict[str, Any]) -> Outcome:
        try:
            d = policy.evaluate_checked(args)
        except ArgumentError as e:
            return Outcome("rejected", reason=e.message)
        except Exception as e:  # PolicyMismatch or a policy bug: the monitor denies
            return Outcome("failed", reason=f"{type(e).__name__}: {' '.join(str(e).split())[:300]}")
        return Outcome("decided", d.allowed, d.violations, d.denied)
    return run


def check_arguments(old: Build, new: SpecFile, where: str) -> None:
    problem = argument_difference(old.spec.signature, new.signature)
    if problem:
        raise VeriguardError("diff.arguments", f"{old.policy.directory} and {where} take different arguments: "
                             f"{problem}", file=where, fix="compare two versions of one policy: the same [arguments] "
                             "(names, order and types, enum values included)")


def extraction_changes(old: Build, new: Build) -> list[str]:
    """The arguments NEW's monitor reads from the agent's action otherwise than OLD's (their [extraction] entries in
    extraction.json differ: another field, map, tool, schema or frozen classifier). The contracts' diff cannot see
    it: the same policy then decides the same action otherwise (`role` read from a field the agent writes)."""
    a, b = (build.policy.extraction.get("extraction", {}) for build in (old, new))
    return sorted(n for n in set(a) | set(b) if json.dumps(a.get(n), sort_keys=True) != json.dumps(b.get(n),
                                                                                                 sort_keys=True))


def diff_builds(old: Build, new: Build) -> PolicyDiff:
    check_arguments(old, new.spec, str(new.policy.directory))
    assert old.spec.contract is not None and new.spec.contract is not None
    bound = max(old.spec.settings.z3_bound, new.spec.settings.z3_bound)
    return diff_policies(old.spec.contract, new.spec.contract, frozen_run(old.policy), frozen_run(new.policy),
                         bound=bound)


# --- decision log replay -------------------------------------------------------------------------
@dataclass(frozen=True)
class Changed:
    """A logged decision that NEW would make the other way."""

    line: int
    record: dict[str, Any]
    new: Outcome

    @property
    def old_allowed(self) -> bool:
        return self.record["allowed"] is True

    @property
    def tool(self) -> str:
        return str(self.record.get("tool") or "")

    @property
    def arguments(self) -> dict[str, Any]:
        return dict(self.record["arguments"])

    def to_dict(self) -> dict[str, Any]:
        r = self.record
        return {"line": self.line, "seq": r.get("seq"), "time": r.get("time"), "tool": self.tool,
                "action_id": r.get("action_id", ""), "arguments": self.arguments,
                "old": {"allowed": self.old_allowed, "violations": r.get("violations", []),
                        "fail_closed": r.get("fail_closed", "")}, "new": self.new.to_dict()}


@dataclass(frozen=True)
class Replay:
    log: str
    records: int
    replayed: int
    changed: tuple[Changed, ...]
    not_replayable: tuple[dict[str, Any], ...]
    chain: str

    def to_dict(self) -> dict[str, Any]:
        return {"log": self.log, "records": self.records, "replayed": self.replayed, "changed": [c.to_dict() for c in self.changed],
                "not_replayable": list(self.not_replayable), "chain": self.chain,
                "note": "the recorded arguments are decided again by NEW; the extraction is not re-run"}


def replay_log(path: str | Path, new: Build) -> Replay:
    """Each logged decision whose recorded arguments NEW would decide the other way (allowed vs denied), among
    the records verify_log verified (never a line it did not check, such as an incomplete last one)."""
    check, records = read_verified(path)
    if not check.ok:
        raise VeriguardError("diff.log", f"the decision log is broken: {check.problem}", file=str(path),
                             pos=Pos(check.line, 1) if check.line else Pos(0, 0),
                             fix="run `veriguard verify-log` on it; replay only an intact log")
    run = frozen_run(new.policy)
    names = [n for n, _ in new.policy.arguments]
    changed: list[Changed] = []
    unusable: list[dict[str, Any]] = []
    total = 0
    for n, rec in enumerate(records, start=1):
        total += 1
        why = _not_replayable(rec, names)
        if why:
            unusable.append({"line": n, "seq": rec.get("seq") if isinstance(rec, dict) else None, "why": why})
            continue
        got = run(rec["arguments"])
        allowed = got.kind == "decided" and got.allowed
        if allowed != rec["allowed"]:
            changed.append(Changed(n, rec, got))
    return Replay(str(path), total, total - len(unusable), tuple(changed), tuple(unusable), check.note)


def _not_replayable(rec: Any, names: list[str]) -> str:
    if not isinstance(rec, dict) or not isinstance(rec.get("allowed"), bool):
        return "not a decision record (no `allowed` true/false)"
    args = rec.get("arguments")
    failed = f" (fail closed: {rec['fail_closed']})" if rec.get("fail_closed") else ""
    if not isinstance(args, dict) or not args:
        return "no arguments recorded" + failed
    missing = [n for n in names if n not in args]
    return f"arguments not recorded: {', '.join(missing)}{failed}" if missing else ""


# --- verified updates (synth --previous) ---------------------------------------------------------
def read_approval(path: str | Path) -> Approval:
    """An approval file: TOML with exactly `by` and `reason`, both non-empty strings."""
    file = str(path)
    try:
        data = read_regular_file(path)
    except FileRefused as e:
        raise VeriguardError("approval.file", e.why, file=file, fix=f"{e.fix}; {APPROVAL_FIX}") from None
    try:
        text, raw = _parse_toml(data, file)
    except SpecError as e:
        raise VeriguardError(e.code.replace("spec.", "approval.", 1), e.message.replace("the spec is", "the approval "
                             "file is", 1), file=file, pos=e.pos,
                             fix=e.fix) from None
    where = key_positions(text)
    for key in raw:
        if key not in ("by", "reason"):
            raise VeriguardError("approval.key", f"unknown key {key!r}", file=file, pos=where.get((key,), Pos(0, 0)),
                                 fix="an approval has only `by` and `reason`")
    values = {}
    for key, what in (("by", "who approves the update"), ("reason", "why the new policy may allow more")):
        value = raw.get(key)
        if not isinstance(value, str) or not value.strip():
            got = "missing" if key not in raw else f"{value!r}"
            raise VeriguardError("approval.missing", f"`{key}` ({what}) must be a non-empty string, got {got}",
                                 file=file, pos=where.get((key,), Pos(0, 0)), fix=APPROVAL_FIX)
        if key == "by" and not value.isprintable():
            raise VeriguardError("approval.by", f"`by` must be one line of printable text, got {value!r}", file=file,
                                 pos=where.get((key,), Pos(0, 0)), fix="name the person who approves, on one line")
        values[key] = value
    return Approval(values["by"], values["reason"], file)


@dataclass
class Previous:
    """The build a synthesis updates. `freeze` diffs the proved result against it before writing."""

    build: Build
    approval: Approval | None
    last: dict[str, Any] = field(default_factory=dict)   # what the last `freeze` found, for the CLI

    def check_arguments(self, spec: SpecFile) -> None:
        check_arguments(self.build, spec, spec.path)

    def freeze(self, result: SynthResult, out_dir: Path, run_info: dict[str, Any],
               write: Callable[..., tuple[Path, dict[str, Any]]]) -> tuple[Path, dict[str, Any]]:
        """Write the build with `write` (synth.freeze.write_build) unless it newly allows something without
        an approval (UpdateRefused, nothing written). An unproved result is written as before, undiffed."""
        if not result.ok:
            self.last = {"checked": False, "why": "the new policy is not proved: nothing to compare"}
            return write(result, out_dir, run_info=run_info)
        with tempfile.TemporaryDirectory(prefix="veriguard-update-") as tmp:
            candidate, _ = write(result, Path(tmp), run_info={})
            built = load_build(candidate)
            found, read_otherwise = diff_builds(self.build, built), extraction_changes(self.build, built)
        self.last = {"checked": True, "previous": str(self.build.policy.directory),
                     "previous_policy": self.build.policy.sha256, "diff": found.to_dict(),
                     "extraction_changed": read_otherwise}
        loosened = found.newly_allowed
        if loosened.verdict is not Verdict.PROVED and loosened.verdict is not Verdict.REFUTED:
            raise UpdateRefused("update.undecided", f"cannot establish what the update allows that "
                                f"{self.build.policy.directory} denied ({loosened.verdict.value}): {loosened.message}; "
                                "nothing was written", file=result.spec.path,
                                fix="simplify the rules, or synthesize without --previous and review the policy by hand")
        approval = None
        if loosened.verdict is Verdict.REFUTED or read_otherwise:
            if self.approval is None:
                what = f"the new policy allows what {self.build.policy.directory} denied" \
                    if loosened.verdict is Verdict.REFUTED else \
                    f"the new build reads {', '.join(read_otherwise)} from the agent's action otherwise than " \
                    f"{self.build.policy.directory} ([extraction]): the same action may be decided otherwise"
                raise UpdateRefused("update.unapproved", f"{what}; nothing was written:\n"
                                    f"{witness_lines(loosened.witnesses)}".rstrip(),
                                    file=result.spec.path, fix="if this is intended, approve it: --approve FILE "
                                    "(TOML: by = \"...\", reason = \"...\")")
            approval = {"by": self.approval.by, "reason": self.approval.reason,
                        "previous_policy": self.build.policy.sha256, "newly_allowed": len(loosened.witnesses),
                        "approved_at": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()}
            self.last["approval"] = approval
        return write(result, out_dir, run_info=run_info, approval=approval)


def previous_build(previous: str | None, approve: str | None, *, specs: int, llm: bool) -> Previous:
    """The build `synth --previous` updates and the approval, both read before any work starts."""
    if previous is None:
        raise VeriguardError("synth.approve", "--approve needs --previous OLD_BUILD (the build the update replaces)",
                             fix="add --previous OLD_BUILD, or drop --approve")
    if llm:
        raise VeriguardError("synth.previous", "--previous checks compile-path syntheses only (not --llm, --replay "
                             "or --compare yet)", fix="synthesize a spec with formal rules without --llm, or drop "
                             "--previous and compare the builds with `veriguard diff OLD NEW`")
    if specs != 1:
        raise VeriguardError("synth.previous", f"--previous compares one new policy with one build; {specs} specs "
                             "were given", fix="synthesize one spec at a time with --previous")
    return Previous(load_build(previous), read_approval(approve) if approve else None)


def render_update(last: dict[str, Any]) -> str:
    """What `synth --previous` prints after a build was written."""
    if not last.get("checked"):
        return f"  update: not compared with the previous build: {last.get('why', '')}"
    d = last["diff"]
    out = [f"  update of {last['previous']} (policy sha256 {last['previous_policy'][:16]}…):"]
    for key, title in (("newly_allowed", "newly allowed"), ("newly_denied", "newly denied")):
        out.append(f"    {title}: {d[key]['verdict']}: {d[key]['message']}")
        out += [f"      {json.dumps(w['arguments'], sort_keys=True)}: denied by {', '.join(w['reasons'])}"
                for w in d[key]["witnesses"]]
    if last.get("extraction_changed"):
        out.append(f"    extraction read otherwise than before: {', '.join(last['extraction_changed'])}")
    if last.get("approval"):
        a = last["approval"]
        out.append(f"    approved by {a['by']} ({a['reason']}): recorded in the certificate and the report")
    lost = [p["id"] for p in d["properties"] if p["owner"] == "old" and p["verdict"] != Verdict.PROVED.value]
    if lost:
        out.append(f"    properties of the previous spec not kept: {', '.join(lost)}")
    return "\n".join(out)


def witness_lines(witnesses: tuple[Witness, ...], indent: str = "    ") -> str:
    rows = []
    for w in witnesses:
        rows.append(f"{indent}{json.dumps(w.arguments, sort_keys=True)}\n{indent}  OLD: {_said(w.old)}; NEW: {_said(w.new)}"
                    + (f"\n{indent}  PROBLEM: {w.problem}" if w.problem else ""))
    return "\n".join(rows)


def _said(o: Outcome) -> str:
    if o.kind == "decided":
        return "allowed" if o.allowed else f"denied ({', '.join(o.violations)})"
    return f"denied, input {o.kind}: {o.reason}"


def render(old: str, new: str, found: PolicyDiff, replay: Replay | None, extraction: list[str] | None = None) -> str:
    """The text `veriguard diff` prints (`extraction`: extraction_changes)."""
    head = "the same decisions" if found.same_decisions and not extraction else "different decisions"
    out = [f"{old} -> {new}: {head} (lists up to {found.bound} items; {found.seconds:.1f} s)"]
    if extraction:
        out.append(f"  extraction: NEW reads {', '.join(extraction)} from the agent's action otherwise than OLD (its "
                   "[extraction] differs): the same action may be decided otherwise, whatever the policies decide")
    for d, title in ((found.newly_allowed, "newly allowed"), (found.newly_denied, "newly denied")):
        out.append(f"  {title}: {d.verdict.value}: {d.message}")
        if d.witnesses:
            out.append(witness_lines(d.witnesses))
    for p in found.properties:
        status = {("old", Verdict.PROVED): "kept", ("old", Verdict.REFUTED): "LOST",
                  ("new", Verdict.PROVED): "already held by OLD", ("new", Verdict.REFUTED): "new guarantee"}.get(
            (p.owner, p.verdict), p.verdict.value)
        out.append(f"  property {p.id} ({p.owner.upper()}): {status}" + (f": {p.detail}" if p.detail else ""))
        if p.witness is not None:
            out.append(f"    {json.dumps(p.witness, sort_keys=True)}")
    if replay is not None:
        out.append(f"  log {replay.log}: {replay.records} records, {replay.replayed} replayed, {len(replay.changed)} "
                   f"would change, {len(replay.not_replayable)} not replayable ({replay.chain})")
        for c in replay.changed:
            out.append(f"    line {c.line}: {'allowed' if c.old_allowed else 'denied'} -> {_said(c.new)}: "
                       f"{c.tool or 'arguments'} {json.dumps(c.arguments, sort_keys=True)}")
        for u in replay.not_replayable:
            out.append(f"    line {u['line']}: not replayable: {u['why']}")
    return "\n".join(out)
