"""The online monitor: extract the policy's arguments from what the agent proposes, decide with the
frozen policy, choose the enforcement, log the decision. Fails closed on every error: `check` returns
a denial, never raises, and a decision that cannot be logged is a denial too."""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from veriguard.enforce.extract_errors import ExtractionError
from veriguard.enforce.extractors import Extracted, Extractor, build_extractors
from veriguard.enforce.loader import FrozenPolicy, TrustedKeys, load_policy, trusted_key_paths

if TYPE_CHECKING:  # imported where a log is opened: a monitor without one (a hook's, by default) needs none
    from veriguard.enforce.decision_log import DecisionLog

Abandoned = Callable[[], str]   # Monitor.check's `abandoned`: why the caller gave up on the decision, "" while it waits
ABANDONED = "abandoned by the caller before it was logged: "   # the start of such a record's fail_closed
Veto = Callable[["DecisionRecord"], str]   # Monitor.check's `veto`: why an allow may not stand, "" when it may

STRATEGIES = {
    "terminate": "terminate_task",        # stop the whole task
    "block": "block_action",              # drop this action, let the agent continue
    "tool_halt": "halt_tool",             # stop the tool execution in flight
    "replan": "replan",                   # send the reasons back and ask the agent for another plan
    "replan_halt": "replan_then_halt",    # ask for another plan; halt if the next one is denied too
}


@dataclass(frozen=True)
class Enforcement:
    strategy: str
    action: str                  # "allow" or one of STRATEGIES' values
    feedback: str = ""           # what the agent (or the user) is told


@dataclass(frozen=True)
class DecisionRecord:
    time: str
    policy: str
    policy_sha256: str
    allowed: bool
    violations: tuple[str, ...]
    denied: tuple[Any, ...]
    messages: tuple[str, ...]
    arguments: dict[str, Any]
    provenance: dict[str, dict[str, Any]]
    enforcement: Enforcement
    fail_closed: str = ""        # why the decision was forced to deny, when it was
    latency_us: float = 0.0
    action_id: str = ""          # the tool call's id, when the integration has one
    integration: str = ""        # which enforcement point asked (anthropic_sdk, openai_agents, mcp_proxy, hook...)
    tool: str = ""               # the tool the call was for, when there is one
    mode: str = "enforce"        # "shadow": decided and logged, not enforced
    arguments_sha256: str = ""   # of the canonical JSON of `arguments`
    decision_sha256: str = ""    # of the policy hash, the arguments hash and the decision (allowed, violations, denied)
    build_sha256: str = ""       # of the build's certificate.json: which build (policy and extractors) decided
    unchecked: bool = False      # let through undecided by the operator's choice (Monitor.unchecked), not by the policy

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["denied"] = [list(x) if isinstance(x, tuple) else x for x in self.denied]
        if not self.unchecked:   # a decision's record keeps the fields it always had
            del d["unchecked"]
        return d


@dataclass
class Monitor:
    """Checks one proposed action at a time against a certified frozen policy."""

    policy: FrozenPolicy
    extractors: Mapping[str, Extractor]
    strategy: str = "block"
    log: DecisionLog | None = None
    min_confidence: float = 0.5
    double_check: bool = True
    stats: dict[str, int] = field(default_factory=lambda: {"checked": 0, "denied": 0, "fail_closed": 0})

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"unknown enforcement strategy {self.strategy!r}; one of {sorted(STRATEGIES)}")
        missing = [n for n, _ in self.policy.module.ARGUMENTS if n not in self.extractors]
        if missing:
            raise ValueError(f"no extractor for argument(s) {missing}")

    @classmethod
    def from_build(cls, build: str | Path, *, strategy: str | None = None, log: DecisionLog | str | Path | None = None,
                   log_key: str | Path | None = None, log_checkpoint: str | Path | None = None,
                   accept_unproved: bool = False,
                   trusted_keys: TrustedKeys | None = None, require_signed: bool | None = None,
                   protect: Sequence[str | Path] = (), secrets: Sequence[str | Path] = (),
                   expect_sha256: str | None = None, **kw: Any) -> "Monitor":
        """A monitor for DIR/<name> with the extractors its spec declares (files checked against the certificate).

        `log` is a DecisionLog or a path; `log_key`, the private key file that signs a log given as a
        path (see enforce.keys), anchors it so that a rewrite of its history is detected; `log_checkpoint`, a file
        where a copy of its signed head is kept (out of reach of whoever can write the log), makes the log refuse
        to be extended when it was rolled back or replaced by another log between runs. `trusted_keys`
        and `require_signed` check the build's signature (enforce.loader.load_policy; by default from
        VERIGUARD_TRUSTED_KEYS and VERIGUARD_REQUIRE_SIGNED; `expect_sha256` pins the policy's hash). `protect` and `secrets` add paths to the shell zone
        maps' {guard} (the agent reads but never changes them) and {secret} (a credential): what the caller found
        where it runs (the Claude Code hook: the agent's configuration folder, the files git's configuration names)."""
        policy = load_policy(build, accept_unproved=accept_unproved, trusted_keys=trusted_keys,
                             require_signed=require_signed, expect_sha256=expect_sha256)
        base = Path(build) / "spec"
        extraction = policy.extraction.get("extraction", {})
        enforcement = policy.extraction.get("enforcement", {})
        given = [build, *protect, *trusted_key_paths(trusted_keys)] + \
            ([log, f"{log}.head"] if isinstance(log, (str, Path)) else []) + \
            ([log_checkpoint] if log_checkpoint is not None else [])
        if isinstance(log, (str, Path)):
            from veriguard.enforce.decision_log import DecisionLog

            log = DecisionLog(log, key=log_key, checkpoint=log_checkpoint)
        elif log_key is not None or log_checkpoint is not None:
            raise ValueError("log_key and log_checkpoint go with a log given as a path; a DecisionLog brings its own")
        # only the shell extractor reads the protected places: a monitor without one does not import the shell tables
        shell = any(isinstance(c, Mapping) and c.get("from") == "shell" for c in extraction.values())
        extractors = build_extractors(extraction, [(n, t) for n, t in policy.module.ARGUMENTS], base,
                                      places=protected(given, log, log_key, secrets) if shell else (),
                                      files=policy.spec_files)
        return cls(policy, extractors, strategy or enforcement.get("strategy", "block"), log, **kw)

    def check(self, observation: Mapping[str, Any], *, action_id: str = "", integration: str = "", tool: str = "",
              mode: str = "enforce", abandoned: Abandoned | None = None, veto: Veto | None = None) -> DecisionRecord:
        """Decide one proposed action and log the decision. Never raises: a failure anywhere (an
        extractor, the policy, building the record, writing the log) is a denial that says why. Only
        KeyboardInterrupt and SystemExit pass through: they stop the process, and no decision is returned.

        `abandoned` is asked once, after deciding and just before logging: a non-empty answer (why the caller gave
        up on this decision: its deadline passed, it was cancelled) makes the record a denial that says so, so a
        decision nobody waits for any more never reads as an allow. One that raises counts as abandoned.

        `veto` is asked next, with an allow only: a non-empty answer (why the enforcement point will not run the call
        after all: its run was halted, another call of the run is still running) makes that record a denial that says
        so, so that the one record of the call is the refusal, never an allow followed by one. One that raises vetoes."""
        t0 = time.perf_counter()
        try:
            record = _placed(self._decide(observation, action_id, t0), integration, tool, mode)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:  # a bug anywhere must deny, never crash the agent or allow
            record = _placed(self._failed(f"the monitor failed: {_describe(e)}", action_id, t0), integration, tool,
                             mode)
        if abandoned is not None:
            record = self._unless_abandoned(record, abandoned)
        if veto is not None and record.allowed:
            record = self._unless_vetoed(record, veto)
        return self._logged(record)

    def _unless_vetoed(self, record: DecisionRecord, veto: Veto) -> DecisionRecord:
        """`record`, or its denial when `veto` says why the allow may not stand (a veto that fails says that)."""
        why = _answer(lambda: veto(record), "the enforcement point's last check failed")
        if not why:
            return record
        return self._denial(record, ' '.join(str(why).split())[:500])

    def _unless_abandoned(self, record: DecisionRecord, abandoned: Abandoned) -> DecisionRecord:
        """`record`, or its denial when the caller abandoned the decision (a check that fails counts as that)."""
        why = gave_up(abandoned)
        if not why:
            return record
        return self._denial(record, f"{ABANDONED}{' '.join(str(why).split())[:300]}; the call was not run")

    def refuse(self, reason: str, *, action_id: str = "", integration: str = "", tool: str = "",
               mode: str = "enforce") -> DecisionRecord:
        """Record and log a call refused without being decided (its run was halted, the enforcement point
        could not read it): a fail-closed denial that says why."""
        record = self._failed(reason, str(action_id), time.perf_counter())
        return self._logged(_placed(record, integration, tool, mode))

    def unchecked(self, what: str, arguments: Mapping[str, Any], *, action_id: str = "", integration: str = "",
                  tool: str = "", mode: str = "enforce") -> DecisionRecord:
        """Record and log an action the enforcement point lets through without a decision because the operator chose
        not to check it (`what` says which and why; `arguments` what identifies it): an allow marked `unchecked`, which
        the policy did not make. A log that cannot be written makes it a denial: then the action must not pass."""
        t0 = time.perf_counter()
        message = f"unchecked: {what}"
        record = DecisionRecord(_now(), self.policy.name, self.policy.sha256, True, (), (), (message,), dict(arguments),
                                {}, Enforcement(self.strategy, "allow", message), "",
                                round((time.perf_counter() - t0) * 1e6, 1), str(action_id),
                                build_sha256=self.policy.build_sha256, unchecked=True)
        return self._logged(_placed(record, integration, tool, mode))

    def _logged(self, record: DecisionRecord) -> DecisionRecord:
        """`record` appended to the log (a denial when that fails), and counted."""
        if self.log is not None:
            try:
                self.log.append(json.loads(json.dumps(record.to_dict(), default=str)))
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as e:  # an unlogged decision is no decision: deny
                record = self._denial(record, f"decision log write failed: {_describe(e)}")
        self.stats["checked"] += 1
        self.stats["denied"] += 0 if record.allowed else 1
        self.stats["fail_closed"] += 1 if record.fail_closed else 0
        return record

    def _decide(self, observation: Mapping[str, Any], action_id: str, t0: float) -> DecisionRecord:
        values: dict[str, Any] = {}
        provenance: dict[str, dict[str, Any]] = {}
        reason = ""
        for name, extractor in self.extractors.items():
            try:
                got: Extracted = extractor.extract(observation)
            except ExtractionError as e:
                reason = f"argument {name!r}: {e.message} [{e.code}]"
                provenance[name] = {"extractor": extractor.kind, "error": e.code}
                break
            except Exception as e:  # an extractor bug denies (anything stranger: `check` denies it)
                reason = f"argument {name!r}: the {extractor.kind} extractor failed: {_describe(e)}"
                provenance[name] = {"extractor": extractor.kind, "error": type(e).__name__}
                break
            provenance[name] = {"extractor": got.extractor, "how": got.how, "confidence": got.confidence,
                                **got.details}
            if not got.confidence >= self.min_confidence:  # `not >=`: a NaN confidence denies too
                reason = f"argument {name!r}: extraction confidence {got.confidence} is below {self.min_confidence}"
                break
            values[name] = got.value
        decision = None
        if not reason:
            try:
                decide = self.policy.evaluate_checked if self.double_check else self.policy.evaluate
                decision = decide(values)
            except Exception as e:  # ArgumentError, PolicyMismatch or a policy bug: deny
                reason = f"the policy could not decide: {_describe(e)}"
        latency = (time.perf_counter() - t0) * 1e6
        return self._record(values, provenance, decision, reason, latency, action_id)

    def _record(self, values: dict[str, Any], provenance: dict[str, dict[str, Any]], decision: Any, reason: str,
                latency: float, action_id: str) -> DecisionRecord:
        rules = self.policy.rules
        violations: tuple[str, ...]
        denied: tuple[Any, ...]
        if decision is None:
            allowed, violations, denied = False, (), ()
            messages: tuple[str, ...] = (f"fail closed: {reason}",)
        else:
            allowed, violations, denied = decision.allowed is True, tuple(decision.violations), tuple(decision.denied)
            messages = tuple(rules.get(v, v) for v in violations)
        if allowed:
            enforcement = Enforcement(self.strategy, "allow")
        else:
            items = "; denied: " + ", ".join(map(str, denied)) if denied else ""
            enforcement = Enforcement(self.strategy, STRATEGIES[self.strategy], " / ".join(messages) + items)
        return DecisionRecord(_now(), self.policy.name, self.policy.sha256, allowed, violations, denied, messages, values,
                              provenance, enforcement, reason, round(latency, 1), action_id,
                              build_sha256=self.policy.build_sha256)

    def _failed(self, reason: str, action_id: str, t0: float) -> DecisionRecord:
        """The denial when deciding itself failed: nothing of the failed attempt is trusted."""
        message = f"fail closed: {reason}"
        return DecisionRecord(_now(), self.policy.name, self.policy.sha256, False, (), (), (message,), {}, {},
                              Enforcement(self.strategy, STRATEGIES[self.strategy], message), reason,
                              round((time.perf_counter() - t0) * 1e6, 1), action_id,
                              build_sha256=self.policy.build_sha256)

    def _denial(self, record: DecisionRecord, reason: str) -> DecisionRecord:
        """`record` turned into a denial for `reason` (what was extracted and decided is kept for the audit)."""
        messages = (f"fail closed: {reason}",) + record.messages
        return _sealed(replace(record, allowed=False, messages=messages, fail_closed=reason,
                               enforcement=Enforcement(self.strategy, STRATEGIES[self.strategy], " / ".join(messages))))


def sha256_json(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _sealed(record: DecisionRecord) -> DecisionRecord:
    """The record with the hashes that bind its decision to the policy and the arguments it was made on."""
    arguments = sha256_json(record.arguments)
    decision = sha256_json({"policy_sha256": record.policy_sha256, "arguments_sha256": arguments,
                             "allowed": record.allowed, "violations": list(record.violations),
                             "denied": [list(x) if isinstance(x, tuple) else x for x in record.denied],
                             **({"unchecked": True} if record.unchecked else {})})
    return replace(record, arguments_sha256=arguments, decision_sha256=decision)


def _placed(record: DecisionRecord, integration: str, tool: str, mode: str) -> DecisionRecord:
    """`record`, sealed, with the enforcement point that asked for it."""
    return _sealed(replace(record, integration=str(integration), tool=str(tool), mode=str(mode)))


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="microseconds")


def gave_up(abandoned: Abandoned | None) -> str:
    """Why the caller gave up on the decision ("" while it waits, or with no check); a check that fails counts as
    giving up. KeyboardInterrupt and SystemExit pass through."""
    return "" if abandoned is None else _answer(abandoned, "the caller's check of whether it still waits failed")


def _answer(ask: Callable[[], str], failed: str) -> str:
    """What `ask` answers, or `failed` and why when it raises. KeyboardInterrupt and SystemExit pass through."""
    try:
        return ask()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:
        return f"{failed}: {_describe(e)}"


def _describe(e: BaseException) -> str:
    """`Type: message` on one line, even for an exception whose message cannot be printed."""
    try:
        text = " ".join(str(e).split())
    except Exception:
        text = "(its message cannot be printed)"
    return f"{type(e).__name__}: {text[:300]}"


def own_installation() -> list[Path]:
    """The code this monitor runs: veriguard's runtime packages (where they are installed, or the source folders of
    an editable install) and the virtual environment of its interpreter (its libraries, `.pth` files and
    sitecustomize run in every process it starts). An agent that changes them, when they lie in its workspace,
    changes the guard; a system interpreter's prefix is left out (no zone allows writing there)."""
    import veriguard
    import veriguard.contracts.errors

    own = [Path(__file__).parent] + [Path(m.__file__).parent for m in (veriguard, veriguard.contracts.errors) if m.__file__]
    return own + ([Path(sys.prefix)] if sys.prefix != sys.base_prefix else []) + import_path_folders()


def import_path_folders() -> list[Path]:
    """The folders the environment puts on this interpreter's import path, outside its own and its base installation:
    PYTHONPATH's and the user's site folder (when Python reads it). A module the agent put there
    (cryptography/__init__.py, sitecustomize.py) would run in the next process of the guard that imports that name.
    Folders a .pth file adds, and `python -m`'s working folder, are not among them."""
    import site

    prefixes = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}
    named = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    named += [site.getusersitepackages()] if site.ENABLE_USER_SITE else []
    on_path = {os.path.abspath(p) for p in sys.path if p}
    out = []
    for entry in named:
        path = Path(os.path.abspath(Path(entry).expanduser()))
        real = Path(os.path.realpath(path))
        if str(path) in on_path and path.is_dir() and not any(real.is_relative_to(p) for p in prefixes):
            out.append(path)
    return out


def protected(given: list[str | Path], log: DecisionLog | None, log_key: str | Path | None,
              secrets: Sequence[str | Path] = ()) -> tuple[
        tuple[str, tuple[str, ...]], ...]:
    """What the agent must not change or read (the shell zone maps' {guard} and {secret}): its own policy, the
    record of its decisions and the key that signs that record, each as given and with its links resolved; and
    the code that decides (`own_installation`)."""
    from veriguard.enforce.shell_table import places_of

    def both(path: str | Path) -> list[Path]:  # realpath, not Path.resolve: a link loop raises RuntimeError there
        return [Path(path).absolute(), Path(os.path.realpath(path))]

    guard = [p for g in [*given, *own_installation()] for p in both(g)] + (
        [log.path, log.head_path] + ([log.checkpoint] if log.checkpoint is not None else []) if log is not None else [])
    keys = both(log_key) if isinstance(log_key, (str, Path)) else []
    return places_of({"guard": guard, "secret": keys + [p for s in secrets for p in both(s)]})
