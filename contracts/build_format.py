"""What a build is made of, shared by the writer (synth.freeze) and the reader (enforce.loader).

Stdlib only, no I/O: the online side imports it.
"""
from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any, Mapping

CERT_FORMAT = "veriguard-certificate/2"
# keys of a spec's [extraction] entries whose values name files beside the spec (copied into the build, hashed)
FILE_KEYS = ("schema", "bank", "commands", "zones")
# the approval of a verified update that allows something the previous build denied (`synth --previous`)
APPROVAL_KEYS = frozenset({"by", "reason", "previous_policy", "newly_allowed", "approved_at"})
# signature.json: an Ed25519 signature over certificate.json's exact bytes (the certificate covers the rest)
SIGNATURE_NAME = "signature.json"
SIGNATURE_FORMAT = "veriguard-signature/1"
SIGNATURE_ALGORITHM = "ed25519"
SIGNATURE_KEYS = frozenset({"format", "algorithm", "key_id", "signed_file", "signature"})
# policy.py compiled by synth.freeze (this Python's magic number, policy.py's sha256, the marshalled code object):
# certified like every file; the loader runs it when both match, else compiles policy.py
POLICY_CODE = "policy.code"
# files a build may hold beside the certified ones: none of them is read by the monitor
UNCERTIFIED_FILES = frozenset({"certificate.json", SIGNATURE_NAME, "run.json", "report.md"})
HEX64 = re.compile(r"[0-9a-f]{64}")


# The gates both synthesis paths record (synth.pipeline.synthesize): a certificate says PROVED only when it carries each
# of them once, holding (freeze writes it so; the loader refuses one that does not; `veriguard audit` checks it).
CERTIFIED_GATES = ("contract (z3)", "proof (Nagini)", "examples", "properties (Hypothesis)", "mutation")
HOLDING_VERDICTS = ("PROVED", "PASSED")
# the keys a gate's record may have (synth.pipeline.Gate.to_dict without timings: its details; any gate may have come
# from the proof cache): a gate or a key synthesis never writes is a claim no one checked ("security review: PASSED")
GATE_KEYS = {"contract (z3)": ("bound", "findings"), "proof (Nagini)": (), "examples": ("passed", "total", "results"),
             "properties (Hypothesis)": ("examples_run", "systematic", "rejected", "failure"),
             "mutation": ("score", "killed", "total")}
_COMMON_GATE_KEYS = ("name", "verdict", "summary", "cache")


def missing_gates(names: list[Any]) -> list[str]:
    """The gates of CERTIFIED_GATES that `names` (the recorded gates' names, in order) lacks or lists twice."""
    return [g for g in CERTIFIED_GATES if names.count(g) != 1]


def unheld_gates(gates: Any) -> list[str]:
    """What a PROVED certificate's `gates` lacks: each gate of CERTIFIED_GATES missing or listed twice, and each gate
    whose verdict does not hold, that synthesis does not record or that has a key it does not write (by name, or by
    place when it is not an object)."""
    listed = gates if isinstance(gates, list) else [gates]
    wrong = [f"gates[{i}] ({str(g.get('name'))[:40] if isinstance(g, dict) else g!r})" for i, g in enumerate(listed)
             if not (isinstance(g, dict) and g.get("verdict") in HOLDING_VERDICTS and _known_gate(g))]
    return wrong + [f"gates ({name!r} not recorded once)" for name in
                    missing_gates([g.get("name") if isinstance(g, dict) else None for g in listed])]


def _known_gate(gate: dict[str, Any]) -> bool:
    """A gate synthesis records, with only the keys it writes for that gate."""
    name = gate.get("name")
    return isinstance(name, str) and name in GATE_KEYS and set(gate) <= {*_COMMON_GATE_KEYS, *GATE_KEYS[name]}


def referenced_files(extraction: Mapping[str, Any]) -> list[str]:
    """Files an [extraction] section points at (schemas, example banks, command tables, zone maps),
    relative to the spec."""
    return sorted({str(cfg[k]) for cfg in extraction.values() if isinstance(cfg, Mapping)
                   for k in FILE_KEYS if k in cfg})


def approval_problem(approval: Any) -> str:
    """What is wrong with a certificate's `approval` object ("" when it has exactly the right shape)."""
    if not isinstance(approval, dict):
        return f"`approval` must be an object, got a {type(approval).__name__}"
    if set(approval) != APPROVAL_KEYS:
        return (f"`approval` must have exactly the keys {', '.join(sorted(APPROVAL_KEYS))} (unexpected: "
                f"{sorted(set(approval) - APPROVAL_KEYS)}, missing: {sorted(APPROVAL_KEYS - set(approval))})")
    for key in ("by", "reason"):
        if not isinstance(approval[key], str) or not approval[key].strip():
            return f"`approval.{key}` must be a non-empty string, got {approval[key]!r}"
    if not isinstance(approval["previous_policy"], str) or not HEX64.fullmatch(approval["previous_policy"]):
        return f"`approval.previous_policy` must be the previous policy's sha256 (64 lower-case hex digits), " \
               f"got {approval['previous_policy']!r}"
    n = approval["newly_allowed"]
    if type(n) is not int or n < 0:
        return f"`approval.newly_allowed` must be an integer >= 0, got {n!r}"
    if not _iso_datetime(approval["approved_at"]):
        return f"`approval.approved_at` must be an ISO-8601 date and time with its UTC offset (e.g. " \
               f"2026-11-23T14:05:00+00:00), got {approval['approved_at']!r}"
    return ""


def _iso_datetime(value: Any) -> bool:
    return isinstance(value, str) and "T" in value and offset_datetime(value) is not None


def offset_datetime(value: Any) -> dt.datetime | None:
    """`value` as an ISO-8601 time with its UTC offset (datetime.fromisoformat's reading), or None: not a string, not
    such a time, or one without an offset. approval.approved_at (with a "T"), the audit's stamps (one spelling, not
    in the future) and a decision record's `time` are each read with it."""
    try:
        when = dt.datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None
    return when if when is not None and when.tzinfo is not None else None

# the enforcement strategies (enforce.monitor.STRATEGIES) and modes (enforce.guard.MODES) a spec may name
STRATEGY_NAMES = ("terminate", "block", "tool_halt", "replan", "replan_halt")
MODE_NAMES = ("enforce", "shadow")


def certificate_bytes(cert: Mapping[str, Any]) -> bytes:
    """certificate.json's bytes as synth writes them (indented, keys sorted, ASCII, a final newline): one spelling per
    certificate, so that its sha256 (a build's pin, the `build_sha256` of every decision record) names its content."""
    return (json.dumps(cert, indent=2, sort_keys=True) + "\n").encode("utf-8")


def respelt(cert: Mapping[str, Any], data: bytes, name: str = "certificate.json") -> str:
    """Why `data`, read from the file `name` and parsed as `cert`, is refused: the same claims spelt otherwise than
    certificate_bytes (another sha256, so another build pin); '' when it is spelt so. The loader and the audit say it."""
    if certificate_bytes(cert) == data:
        return ""
    return (f"{name} is not written as synth writes it (indented, keys sorted, ASCII escapes, one final newline): its "
            "sha256, which pins the build and names it in every decision record, would not be the one of its content")
