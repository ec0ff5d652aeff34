"""What the examples share: the payments policy build, the facts beside each call, and scripted model
replies served through each SDK's own HTTP layer (httpx2.MockTransport), so nothing reaches the network.
"""
from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

import httpx2

ROOT = Path(__file__).resolve().parent.parent
# The facts the policy needs beside the call: who asks (from the session) and what they sent today (the ledger).
CONTEXT = {"session": {"role": "clerk", "mfa": False}, "ledger": {"sent_today_cents": 0}}
INVOICE = {"recipient": "acme-supplies", "amount_cents": 45000, "currency": "USD", "method": "ach"}
OVER_LIMIT = {"recipient": "acme-supplies", "amount_cents": 250000, "currency": "USD", "method": "ach"}
UNKNOWN_PAYEE = {"recipient": "totally-legit-llc", "amount_cents": 90000, "currency": "USD", "method": "wire"}


def build_option(description: str) -> Path | None:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--build", type=Path, help="a proved payments build, DIR/payments (default: an offline "
                        "build made without Nagini)")
    return parser.parse_args().build


def payments_build(build: Path | None) -> tuple[Path, bool]:
    """(build, accept_unproved): `build` when given (made by `veriguard synth specs/payments.toml --out DIR`);
    otherwise the payments spec compiled into a temporary folder WITHOUT running Nagini. That build's
    certificate says NOT_CHECKED (so FAILED), it loads only with accept_unproved, and the output says so."""
    if build is not None:
        return build, False
    from veriguard.synth.compile import compile_policy
    from veriguard.synth.freeze import frozen_module, write_build
    from veriguard.synth.pipeline import Gate, SynthResult
    from veriguard.synth.specfile import load_spec
    from veriguard.verify.runnable import runnable_policy
    from veriguard.verify.verdicts import ProofResult, Verdict

    spec = load_spec(ROOT / "specs" / "payments.toml")
    compiled = compile_policy(spec)
    runnable = runnable_policy(spec.contract, compiled.source)
    result = SynthResult(spec, compiled.source, runnable, frozen_module(spec, runnable),
                         [Gate("offline example", Verdict.NOT_CHECKED, "Nagini was not run")],
                         ProofResult(Verdict.NOT_CHECKED, detail="Nagini was not run"),
                         None, None, {})
    build, _ = write_build(result, Path(tempfile.mkdtemp(prefix="veriguard-example-")), run_info={})
    print("NOTE: offline example. The payments policy was compiled from specs/payments.toml WITHOUT running "
          "Nagini: its certificate says NOT_CHECKED and it is loaded with accept_unproved. For a proved build run "
          "`.venv/bin/veriguard synth specs/payments.toml --out build` and pass --build build/payments.\n")
    return build, True


def anthropic_http(*replies: Any) -> httpx2.MockTransport:
    """Messages API replies in order: a dict is a tool call of send_payment (its input), a str a final answer."""
    script = list(replies)

    def serve(request: httpx2.Request) -> httpx2.Response:
        nxt = script.pop(0)
        n = len(replies) - len(script)
        content = [{"type": "text", "text": nxt}] if isinstance(nxt, str) else [
            {"type": "tool_use", "id": f"toolu_{n:02d}", "name": "send_payment", "input": nxt}]
        return httpx2.Response(200, json={
            "id": f"msg_{n:02d}", "type": "message", "role": "assistant", "model": "scripted", "content": content,
            "stop_reason": "end_turn" if isinstance(nxt, str) else "tool_use", "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0}})
    return httpx2.MockTransport(serve)


def openai_http(*replies: Any) -> httpx2.MockTransport:
    """Chat Completions replies in order: a dict is a call of send_payment (its arguments), a str a final answer."""
    script = list(replies)

    def serve(request: httpx2.Request) -> httpx2.Response:
        nxt = script.pop(0)
        n = len(replies) - len(script)
        call = {"id": f"call_{n:02d}", "type": "function",
                "function": {"name": "send_payment", "arguments": json.dumps(nxt)}}
        message: dict[str, Any] = {"role": "assistant", "content": nxt} if isinstance(nxt, str) else {
            "role": "assistant", "content": None, "tool_calls": [call]}
        return httpx2.Response(200, json={
            "id": f"chatcmpl-{n:02d}", "object": "chat.completion", "created": 0, "model": "scripted",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop" if isinstance(nxt, str) else
                         "tool_calls"}], "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}})
    return httpx2.MockTransport(serve)


def show_log(path: Path) -> None:
    from veriguard.enforce.decision_log import DecisionLog, verify_log

    print(f"\nDecision log {path} ({'chain intact' if verify_log(path).ok else 'CHAIN BROKEN'}):")
    for r in DecisionLog(path).records():
        verdict = (f"passed unchecked ({r.get('tool') or '?'})" if r.get("unchecked") else "allowed" if r["allowed"]
                   else f"denied ({', '.join(r['violations']) or r['fail_closed']})")
        print(f"  #{r['seq']} {r['action_id'] or '(no call id)'}: {verdict}")


