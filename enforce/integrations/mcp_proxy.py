"""A stdio MCP server that puts a real MCP server behind a proved policy.

    veriguard mcp-proxy --build DIR [--context FILE] -- COMMAND [ARGS...]

The proxy starts COMMAND as its child (the real server), speaks MCP to the host on its own stdin and
stdout, forwards tools/list and decides every tools/call before forwarding it. The policy decides tool
calls only, so the server's resources, prompts and completions (a resources/read can return any file a
filesystem server exposes) are not offered to the host unless `--unchecked GROUP` names them: then
they are forwarded unchecked, as the operator chose. A refusal is a CallToolResult with isError and the reason as text, never a JSON-RPC
error, so the model reads it and can re-plan; a tools/call that is not valid MCP (arguments that are
not an object, a name that is not a string, params the proxy would not forward) is refused the same
way, and so is a tools/call whose id a request still awaiting the child's answer has, spelt either way (1 and "1",
which a lenient client matches alike and the log records alike; another request with such an id gets a JSON-RPC
error), each such answer sent only after the answer of the request holding the id, so that the host gets them in the
order it sent the requests; a tools/call that cannot be answered (a notification, an id that is
null, a boolean or a fraction, an item of a batch) is never forwarded and is recorded as refused; a
notifications/cancelled that is not {requestId, reason?: string} is dropped. When the policy, the extractor or the child fails (a crash, no answer within the timeout, an
answer that is not MCP), the call is refused and the result says why.

Each call is decided on a thread of its own, so a slow policy (a large context, an LLM extractor) holds neither the event
loop nor the other requests; a call not decided within --decision-timeout (10 s) is refused with a record, and its
decision, when it comes, is recorded as a denial saying it was abandoned and not run, never as an allow. At most 8
decisions run at once, in time or late (Python cannot stop a thread): a call beyond is refused at once, recorded, so
a burst of calls on a slow policy leaves at most 8 threads behind. The refusal at the deadline counts as a denial of
the run (towards --halt-after under replan_halt; terminate halts): a call the policy cannot decide in time is refused
like any call it cannot read, failing closed; its late record does not count a second time. Host lines that are refused before any call can be read from them (not
strict JSON, a method that is not a string or that reads as tools/call to a lenient reader or to the eye: "TOOLS/CALL",
"tools/call ", Cyrillic "tооls/call", "t00ls/call"; a method MCP does not have whose params hold a name and arguments)
are recorded as refused calls, since they may have been one. A tools/call no child can take (it exited, or is being
started again) is refused undecided, recorded as not run (counting in no run's denials).

The observation the policy reads is the call in MCP shape, {"method": "tools/call", "params":
{"name", "arguments"}}, beside the facts of the context file (a JSON object in a regular file, read again for
every call so that a ledger kept by another process stays current, and holding no tool call); the child receives exactly that name
and those arguments. MCP gives a server no way to end the host's run: terminate, like a halt,
refuses this call and every later one, and cancels in the child the tool calls still running there
(refused to the host: they may have done part of their work).

Messages are relayed as JSON-RPC lines, parsed as strict JSON (contracts.strict_json: a duplicate key or
nesting too deep for the parser is not JSON, so a host's such line is a parse error and a child's is not
MCP); a failure while reading the child's output stops the child, and later calls are refused. Only the child's
handshake and its tools/call results are validated with the `mcp` SDK's types (`mcp>=2.3,<3`), so
the proxy adds little over calling the child directly. Request ids are renumbered towards the child.
Both sides use the initialize handshake (2024-11-05 to 2025-11-25; the stateless 2026-07-28 envelope
and server/discover are not offered), each negotiating its own version with the proxy.

A tools/call the host cancelled, or that timed out, may still be running in the child (a server is free to finish
what it can no longer stop): it counts as running, holding the run's one running call (Guard.finished), until the
child answers it; a child that has not answered it --timeout later is stopped (its process group killed, and on Linux
every process below the proxy, which adopts the orphans below it: a helper the child started dies too, even one in a
session of its own or a daemon) and started again, so that the call cannot finish behind a later one.

SIGTERM, SIGINT and SIGHUP stop the proxy: the tool calls running in the child are cancelled there and refused, those still
decided are refused as not run, each recorded once (a decision not logged yet is logged as abandoned); the child is
stopped and the proxy exits 128 + the signal's number, also when the signal comes while the build loads or the child
starts (the child is killed). Each call's action id in the decision log is its request id, a string that reads as
another id (1 and "1") in its JSON form. The proxy's own stderr is written by a thread, so that a host that never reads
it cannot stop the proxy; what a full pipe cannot take is dropped and counted.

A forwarded request (tools/list, and what --unchecked offers) takes only the params MCP gives its method, of the SDK's
types, without _meta: other keys are refused as invalid params, never forwarded, and a tool's name and arguments among
them are recorded as a refused call (a server that reads params loosely ran the call a tools/list carried). When the
host closes its input, the calls running in the child are let finish (each within its --timeout) before the child's
input is closed.

An allowed tools/call that ends without the child's result (no answer within --timeout, an error or an answer that is
not MCP, the child gone, the host's cancellation after it went to the child) gets a second record saying so, counting
in no run's denials. A host line longer than MAX_LINE is dropped as it is read (a parse error, recorded as a refused
call). A notification, or a request the proxy answers itself (ping, initialize, logging/setLevel...), whose params
carry a tool's name and arguments is recorded as a refused call (a request gets an invalid-params error). A stop
signal while the proxy's modules load ends it at once (128 + n, no traceback). The proxy needs SIGHUP and process
groups: elsewhere (Windows) it exits 2 with error[mcp.platform]. Without /proc (macOS) the processes `ps` shows below
the child are stopped, then killed with it; a process the child handed work to outside its tree (a daemon started
before, at, cron, systemd-run, launchd) is out of any proxy's reach.

A request whose id a client would take for the id of one still running (id_keys: the Python SDK reads " 1", "01",
"+1" as 1 with int(), the TypeScript SDK "1.0", "1e0", "0x1" with Number()) is answered after it, as 1 and "1" are. When
a write to the host fails (it closed the proxy's output), the proxy stops reading: the calls it had read, or was
deciding, are refused unrun, recorded, and it ends (before, the next call read was run, its answer lost). A request of
the child's that carries a tool call (a tools/call, a sampling with a tool's name and arguments) is recorded as
refused, counting in no run. A stop signal while the console script loads its modules is `veriguard/entry.py`'s.
A server that closes its input while it runs is gone at the next call (refused undecided, recorded); before, asyncio
dropped each call written to the closed pipe without a word and the host waited --timeout.

Each tool's definition is kept as the server first lists it (the proxy's own tools/list as the server comes up, before
any call, and the host's answers, every page): a call to a
tool the server then lists otherwise (re-described, a new schema), or lists twice otherwise, is refused undecided,
recorded, since the host and the policy read the tool as first listed; an allowed call to a tool the server never
listed is not run (recorded): nothing the host or the policy read describes it. When the server says its tools changed
(notifications/tools/list_changed), or was started again (a server's tools may depend on
its start), the proxy lists them again; calls meanwhile, and while the server is started again, are held (their ids
awaited, at most MAX_WAITING, beyond which one is refused) and decided once the tools are read, or refused with a
record when they cannot be, the server is gone, the proxy is stopped, or the host cancels them. A request passed unchecked (--unchecked) gets an allowed record marked
unchecked with its params' sha256 (Guard.record_unchecked), and is not forwarded when that record cannot be written.

Not forwarded: notifications and requests from the child (list changes, progress, logging,
sampling, elicitation; its requests are answered "method not found"), the host's notifications but
cancellation, resource subscriptions, logging/setLevel. The child's stderr goes to the proxy's, each line marked as
the server's and its control characters escaped, so that none passes for a line of the proxy's own.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import itertools
import json
import math
import os
import queue
import re
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Awaitable, Callable, Coroutine, Iterable, Iterator, Mapping, Sequence

from veriguard.entry import LOADING, stopped_loading   # os, signal, sys only: cheap before the signals are held

STOP_SIGNALS = tuple(getattr(signal, name) for name in LOADING["mcp-proxy"][0] if hasattr(signal, name))
# A stop signal while the proxy's modules load (half a second and more: the SDK's types): nothing was read and no
# server started, so the process ends at once, saying so, where a KeyboardInterrupt printed a traceback. The same
# handler, words and status as `veriguard mcp-proxy` holds from its start (veriguard.entry.LOADING).
stopped_importing = stopped_loading(*LOADING["mcp-proxy"][1:])


def hold_stop_signals(handler: Callable[[int, Any], None]) -> dict[int, Any]:
    """Stop signals go to `handler` (while the modules load: stopped_importing, ending the process quietly; while
    run_proxy starts: stop_early); signals ignored when the process started (nohup, a background job) stay ignored.
    Returns the handlers each had before, to be put back (none off the main thread, where none can be set)."""
    main_thread = threading.current_thread() is threading.main_thread()   # only there can a handler be set
    before = {s: signal.getsignal(s) for s in STOP_SIGNALS} if main_thread else {}
    for signum, prev in before.items():
        if prev is not signal.SIG_IGN:
            signal.signal(signum, handler)
    return before


# the proxy's own process: `veriguard mcp-proxy` (held by veriguard.entry already), `python -m veriguard.cli mcp-proxy`
if __name__ == "__main__" or sys.argv[1:2] == ["mcp-proxy"]:
    hold_stop_signals(stopped_importing)

import mcp_types as types  # noqa: E402  (after the stop signals are held: these imports take the longest)
from mcp_types.methods import SPEC_CLIENT_METHODS, SPEC_CLIENT_NOTIFICATION_METHODS  # noqa: E402
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION  # noqa: E402
from pydantic import ValidationError  # noqa: E402

from veriguard.contracts.errors import OperatorError, VeriguardError  # noqa: E402
from veriguard.contracts.regular_file import FileRefused, read_regular_file  # noqa: E402
from veriguard.enforce.guard import MODES, Context, Guard, GuardOutcome  # noqa: E402
from veriguard.enforce.loader import PolicyLoadError  # noqa: E402
from veriguard.enforce.monitor import sha256_json  # noqa: E402
from veriguard.contracts.strict_json import StrictJSONError, loads_passing_surrogates as strict_loads  # noqa: E402

RUN = "mcp"                    # one host session per proxy process
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_DECISION_TIMEOUT_S = 10.0   # the policy's time to decide one call (context, extraction, policy, log)
SWITCH_INTERVAL_S = 0.0005     # the GIL's switch interval in the proxy process (Python's default: 0.005)
MAX_DECIDING = 8               # decisions on threads (in time or past their deadline), beyond which calls are refused unread
START_TIMEOUT_S = 60.0         # starting the child and its handshake (an interpreter with the SDK takes seconds)
STOP_TIMEOUT_S = 2.0           # after the host hangs up, before the child is killed
DRAIN_S, DRAIN_QUIET_S = 0.5, 0.02   # at the end, the lines the pump still hands over are served (recorded) so long
MAX_LINE = 64 * 1024 * 1024    # the longest line read from the child
MAX_RELIST_PAGES = 100         # pages of the proxy's own tools/list after the server said its tools changed
MAX_WAITING = MAX_DECIDING     # tools/calls held while the proxy reads the tools again, beyond which they are refused
MAX_UNSAID = 10_000            # lines for the proxy's stderr waiting to be written, beyond which they are dropped
MAX_UNSAID_CHARS = 4 << 20     # and their characters: 10,000 lines of a server's 16 KiB escaped fourfold held 640 MB
UNCHECKED = ("resources", "prompts", "completions")   # capabilities the policy does not decide: off by default
FORWARDED = {                  # child capability -> the host's requests forwarded to it
    "tools": ("tools/list",),
    "resources": ("resources/list", "resources/templates/list", "resources/read"),
    "prompts": ("prompts/list", "prompts/get"),
    "completions": ("completion/complete",),
}
CALL_PARAMS = ("name", "arguments", "_meta")   # _meta is read by nobody and not forwarded
FORWARDED_PARAMS: dict[str, type[types.RequestParams]] = {   # a forwarded request's params: the SDK's type for them
    "tools/list": types.PaginatedRequestParams, "resources/list": types.PaginatedRequestParams,
    "resources/templates/list": types.PaginatedRequestParams, "prompts/list": types.PaginatedRequestParams,
    "resources/read": types.ReadResourceRequestParams, "prompts/get": types.GetPromptRequestParams,
    "completion/complete": types.CompleteRequestParams}
STATELESS_PARAMS = frozenset({"inputResponses", "requestState"})   # the 2026-07-28 flow, which the proxy does not offer
FORWARDED_KEYS = {method: frozenset(field.alias or name for name, field in model.model_fields.items()) - STATELESS_PARAMS
                  for method, model in FORWARDED_PARAMS.items()}   # the keys a forwarded request's params may have
LOOKALIKE_SCRIPTS = ("LATIN", "CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE", "COPTIC", "LISU", "CANADIAN", "TIFINAGH",
                     "NKO", "VAI", "OSAGE", "DESERET", "GOTHIC", "OLD ITALIC", "RUNIC", "GLAGOLITIC")   # letters that pass for Latin
INIT_ID = "veriguard-proxy-initialize"
OWN_ID = "veriguard-proxy-tools-list-"   # the ids of the proxy's own tools/list, OWN_ID + a number
ChildId = int | str            # a request's id towards the child: the host's renumbered, or one of the proxy's own
GONE = "the MCP server is gone (it exited or closed its output)"
FRAMED = ("; the proxy reads one JSON-RPC message per line (MCP's stdio transport), not Content-Length frames (the "
          "Language Server Protocol's)")
HOST_GONE = "the host closed the proxy's output (a write failed), so no answer can reach it"
TOOLS_CALL = "toolscall"       # tools/call's letters: a method whose letters read as these may have been a call
AS_L = str.maketrans("I|", "ll")   # ASCII that reads as l ("tools/caIl"); for a letter of another script see reads_as
DIGIT_READS_AS = "ol-eas-t--"   # the letter each digit 0-9 looks like ("-": none): "t00ls/ca11", not "123456789"
MCP_METHODS = frozenset(SPEC_CLIENT_METHODS) | frozenset(SPEC_CLIENT_NOTIFICATION_METHODS)   # what a host may send


class Stopped(KeyboardInterrupt):
    """A stop signal (STOP_SIGNALS) that came before the proxy served: while the build loaded or the server started
    (a KeyboardInterrupt, which asyncio lets out of a task, where it keeps other exceptions in the task)."""

    def __init__(self, signum: signal.Signals) -> None:
        super().__init__(signum)
        self.signum = signum


def stop_early(signum: int, _frame: Any) -> None:
    raise Stopped(signal.Signals(signum))


class PlatformUnsupported(OperatorError):
    """The proxy cannot run on this platform: it stops the server with its helpers through process groups and is
    itself stopped by SIGHUP, SIGTERM and SIGINT (Windows has neither process groups nor SIGHUP)."""

    def __init__(self, missing: Sequence[str]) -> None:
        super().__init__("mcp.platform", f"veriguard mcp-proxy cannot run on this platform ({sys.platform}): it has no "
                         f"{', '.join(missing)}, which the proxy needs to stop the MCP server with every process it "
                         "started, and to be stopped itself with its calls recorded",
                         fix="run the proxy on Linux or macOS (on Windows, inside WSL)")


def platform_missing() -> list[str]:
    """What the proxy needs that this platform lacks ([] on Linux and macOS)."""
    return ([f"signal.{name}" for name in ("SIGHUP", "SIGKILL", "SIGCHLD") if not hasattr(signal, name)]
            + [f"os.{name}" for name in ("killpg", "getpgid") if not hasattr(os, name)])


class ProxyStartError(OperatorError):
    """The proxy cannot start: the child would not run or did not complete the MCP handshake."""

    def __init__(self, message: str) -> None:
        super().__init__("mcp.start", message, fix="check the MCP server's command and that it speaks MCP on stdio")


def refusal(reason: str) -> dict[str, Any]:
    """A CallToolResult with isError, in MCP's JSON."""
    return {"content": [{"type": "text", "text": reason}], "isError": True}


def describe(e: BaseException, *, what: str = "its answer is") -> str:
    """An exception in a line: a ValidationError as `what` not valid MCP, with its first three problems."""
    if isinstance(e, ValidationError):
        problems = "; ".join(f"{'.'.join(map(str, err['loc'])) or 'the answer'}: {err['msg']}"
                             for err in e.errors()[:3])
        return f"{what} not valid MCP ({problems})"
    return f"{type(e).__name__}: {e}"[:300]


class SaidLater:
    """The proxy's stderr written by a thread of its own while it serves (said_later), through a descriptor of its
    own: a host that never reads the proxy's stderr (a pipe left full) blocks that thread in the write, never the loop
    that answers the host, nor sys.stderr's lock at the interpreter's exit; beyond MAX_UNSAID lines or
    MAX_UNSAID_CHARS characters waiting, lines are dropped, and how many is said once the pipe takes lines again. A
    regular file never blocks a write: it is written at once, nothing dropped (the thread fell behind a server's 8 MB
    burst on a quiet machine, and 1-2 MB of it were dropped although the file would have taken them)."""

    def __init__(self, fd: int) -> None:
        self.fd = os.dup(fd)
        self.lines: queue.Queue[str | None] = queue.Queue(MAX_UNSAID)
        self.dropped = 0
        self.waiting = 0           # the characters of the lines waiting
        self.lock = threading.Lock()
        self.at_once = stat.S_ISREG(os.fstat(self.fd).st_mode)
        self.thread = None if self.at_once else threading.Thread(target=self.write, name="veriguard-stderr",
                                                                  daemon=True)
        if self.thread is not None:
            self.thread.start()

    def put(self, line: str) -> None:
        if self.at_once:
            with self.lock:   # decisions' threads say things too
                self.written(line)
            return
        with self.lock:
            if self.waiting + len(line) > MAX_UNSAID_CHARS or self.lines.full():
                self.dropped += 1
                return
            self.waiting += len(line)
            self.lines.put_nowait(line)

    def write(self) -> None:
        while (line := self.lines.get()) is not None:
            with self.lock:
                self.waiting -= len(line)
                dropped, self.dropped = self.dropped, 0
            self.written((f"veriguard mcp-proxy: {dropped} lines were dropped: stderr was not read\n" if dropped
                          else "") + line)
        os.close(self.fd)

    def written(self, data: str) -> None:
        try:
            view = memoryview(data.encode("utf-8", "backslashreplace"))
            while view:
                view = view[os.write(self.fd, view):]
        except OSError:
            pass

    def close(self, timeout_s: float) -> None:
        """Wait up to timeout_s for the lines waiting to be written, then end the thread."""
        if self.thread is None:
            os.close(self.fd)
            return
        end = time.monotonic() + timeout_s
        try:
            self.lines.put(None, timeout=timeout_s)
        except queue.Full:
            return
        self.thread.join(max(0.0, end - time.monotonic()))


LATER: list[SaidLater] = []   # the writer while main serves; else say writes itself


@contextlib.contextmanager
def said_later() -> Iterator[None]:
    """say() through a SaidLater while the block runs, when stderr is the process's own (a test's capture, which
    cannot block, is written at once)."""
    try:
        fd = sys.stderr.fileno() if sys.stderr is sys.__stderr__ else -1
    except (AttributeError, OSError, ValueError):
        fd = -1
    if fd < 0:
        yield
        return
    sys.stderr.flush()
    writer = SaidLater(fd)
    LATER.append(writer)
    try:
        yield
    finally:
        LATER.remove(writer)
        writer.close(STOP_TIMEOUT_S)


def say(text: str) -> None:
    line = f"veriguard mcp-proxy: {text}\n"
    if LATER:
        LATER[0].put(line)
        return
    sys.stderr.write(line)
    sys.stderr.flush()


def encode(message: Mapping[str, Any]) -> bytes:
    """One JSON-RPC line, ASCII only: a lone surrogate that JSON allowed in (\\ud800) goes out as the same escape,
    where UTF-8 could not hold it."""
    return json.dumps(message, separators=(",", ":")).encode("ascii") + b"\n"


def _show(value: Any) -> str:
    return repr(value)[:60] if type(value) in (str, int, float, bool, type(None)) else type(value).__name__


def action_id(host_id: int | str) -> str:
    """The decision log's action id for a host's request id, one per id: an integer as its digits, a string as itself
    unless it could be read as another id's or as none (digits, a quote first, empty: the action id of a line with no
    usable id), then as its JSON ("1" is '"1"', 1 is "1", "" is '""')."""
    if type(host_id) is int:
        return str(host_id)
    text = str(host_id)
    return json.dumps(text) if not text or text.startswith('"') or text.lstrip("-").isdigit() else text


JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
JS_NUMBER = re.compile(r"[+-]?(?:Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)|0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+",
                       re.ASCII)


def int_number(value: int) -> float:
    """The float JavaScript's Number() gives an integer: the nearest double, and past the largest one infinity of the
    integer's sign, where float() raises. Before, every integer over 1000 bits was +infinity: -(2**1100) was not taken
    for "-Infinity", nor 2**1010 for "1.0972248137587377e+304", which the TypeScript SDK matches alike."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def js_number(text: str) -> float | None:
    """JavaScript's Number(text) (None for NaN): how the TypeScript SDK matches an answer's id to its request."""
    text = text.strip(JS_SPACE)
    if not text:
        return 0.0
    if not JS_NUMBER.fullmatch(text):
        return None
    if text[:2].lower() in ("0x", "0o", "0b"):
        return int_number(int(text, 0))
    return float(text)   # reads "Infinity", "+Infinity", "-Infinity" too


@functools.lru_cache(maxsize=1024, typed=True)   # typed: 1, True and "1" are kept apart
def id_keys(host_id: int | str) -> frozenset[tuple[str, Any]]:
    """What a client may take `host_id` for when it matches an answer to its request: itself, the integer Python's
    int() reads in a string (the official Python SDK's coerce_request_id: " 1", "01", "+1", "1_0", "١"), and the
    number JavaScript's Number() reads (the TypeScript SDK: "1.0", "1e0", "0x1", "" for 0). Two ids sharing a key
    cannot be told apart by such a client. Cached: it runs for every awaited id on each message (in_use)."""
    if type(host_id) is int:
        value = int_number(host_id)
        return frozenset({("int", host_id), ("number", value)})
    text = str(host_id)
    keys: set[tuple[str, Any]] = {("str", text)}
    with contextlib.suppress(ValueError):
        keys.add(("int", int(text)))
    number = js_number(text)
    if number is not None:
        keys.add(("number", number))
    return frozenset(keys)


def malformed_call(params: Any) -> str:
    """Why a tools/call's params are not a call the proxy can decide and forward ('' when they are)."""
    if not isinstance(params, dict):
        return f"params must be an object with name and arguments, got {_show(params)}"
    extra = sorted(set(params) - set(CALL_PARAMS))
    if extra:
        return f"params has {extra[:5]}, which the proxy does not forward; allowed: {list(CALL_PARAMS)}"
    if type(params.get("name")) is not str:
        return f"the tool name must be a string, got {_show(params.get('name'))}"
    if params.get("arguments") is not None and not isinstance(params["arguments"], dict):
        return f"the arguments must be an object, got {_show(params['arguments'])}"
    return ""


def calls_a_tool(method: Any, params: Any = None) -> bool:
    """Whether `method` names tools/call, or would to a lenient reader (case, width, spaces, NUL, other separators) or
    to the eye (a letter of another script or a digit in a letter's place: Cyrillic "tооls/call", "t00ls/call"), or
    is no MCP method and `params` hold a tool call (a string name and arguments): such a request is never forwarded,
    and is recorded as a refused call."""
    if type(method) is not str:
        return False
    if method not in MCP_METHODS and carries_call(params):
        return True
    folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", method.translate(AS_L)).casefold())
    kept = [c for c in folded if c.isalnum()]   # NFKD: combining marks apart, dropped ("ća")
    mixed = any(c.isascii() and c.isalpha() for c in kept)   # Latin letters beside others: a spelling, not a word
    return len(kept) == len(TOOLS_CALL) and all(reads_as(c, t, mixed=mixed) for c, t in zip(kept, TOOLS_CALL))


def same_id(host_id: Any, asked: Any) -> bool:
    """Whether `host_id` is the id `asked` (a cancellation's requestId): equal and of one type (1, True and 1.0 apart)."""
    return host_id == asked and type(host_id) is type(asked)


def call_name(params: Any) -> str:
    """The tool's name a request's params give ("" where they give none)."""
    return params["name"] if isinstance(params, dict) and type(params.get("name")) is str else ""


def carries_call(params: Any) -> bool:
    """Whether a request's params hold a tool call: a string name and arguments."""
    return isinstance(params, dict) and type(params.get("name")) is str and "arguments" in params


def carries_foreign_call(method: str, params: Any) -> bool:
    """Whether a request's params hold a tool call (carries_call) that MCP does not give `method`: a prompt's name and
    arguments are a prompts/get's own (FORWARDED_KEYS), a tool's on any other method are not."""
    return carries_call(params) and not {"name", "arguments"} <= FORWARDED_KEYS.get(method, frozenset())


def reads_as(c: str, letter: str, *, mixed: bool) -> bool:
    """Whether `c` (case and compatibility folded) may stand for the ASCII `letter` to the eye: itself, a digit of any
    script that looks like it (0 for o, 1 for l...), a letter of a script whose letters pass for Latin ones
    (LOOKALIKE_SCRIPTS: Cyrillic "о", Greek "ο"), or, in a method `mixed` with Latin letters, any other letter (an
    Arabic alef for l in "tools/caاl"). A method of nine letters of CJK, kana, Arabic or Hebrew alone is a word of
    its own, no tools/call (it was recorded as a refused call and halted a replan_halt run)."""
    if c.isdecimal():
        return DIGIT_READS_AS[unicodedata.decimal(c)] == letter
    return c == letter or (c.isalpha() and not c.isascii()
                           and (mixed or unicodedata.name(c, "").startswith(LOOKALIKE_SCRIPTS)))


def forwarded_params(method: str, params: Any) -> tuple[dict[str, Any] | None, str]:
    """The params a forwarded request (FORWARDED_PARAMS) takes to the child: only its own keys, of the SDK's types, and
    no _meta (read by nobody, like a tools/call's); or why not ('' when they go). A key MCP does not give the method
    (a tool's name and arguments on a tools/list) is refused, never forwarded: a server that reads params loosely ran
    the tool call it carried."""
    if params is None:
        return None, ""
    if not isinstance(params, dict):
        return None, f"params must be an object, got {_show(params)}"
    known = FORWARDED_KEYS[method]
    extra = sorted(set(params) - known)
    if extra:
        return None, f"params has {extra[:5]}, which MCP does not give {method}; allowed: {sorted(known)}"
    try:
        FORWARDED_PARAMS[method].model_validate(params)
    except ValidationError as e:
        return None, describe(e, what="the params are")
    return {k: v for k, v in params.items() if k != "_meta"}, ""


def batch_items(batch: list[Any]) -> Iterator[dict[str, Any]]:
    """The objects of a batch, at any depth (a batch inside a batch is no JSON-RPC either, but its tools/calls are
    recorded as refused like those of a flat one)."""
    stack = [batch]
    while stack:
        for item in stack.pop():
            if isinstance(item, list):
                stack.append(item)
            elif isinstance(item, dict):
                yield item


def malformed_cancellation(params: Any) -> str:
    """Why a notifications/cancelled's params are not MCP's {requestId, reason?} ('' when they are)."""
    if not isinstance(params, dict):
        return f"params must be an object with requestId, got {_show(params)}"
    if type(params.get("requestId")) not in (int, str):
        return f"requestId must be a string or an integer, got {_show(params.get('requestId'))}"
    if "reason" in params and type(params["reason"]) is not str:
        return f"reason must be a string, got {_show(params['reason'])}"
    return ""


Starter = Callable[[], Awaitable[tuple[asyncio.subprocess.Process, types.InitializeResult]]]


PR_SET_CHILD_SUBREAPER = 36   # Linux prctl: orphans below this process are re-parented to it, not to init
STARTED: set[int] = set()      # the children start_child started (asyncio reaps them; reap_adopted never does)
ADOPTING = False               # True once this process reaps the orphans below it (adopt_orphans)


def adopt_orphans() -> None:
    """Linux: the proxy process becomes the reaper of the orphans below it, so that a helper of the child that left
    its process group (setsid) and lost its parent (a daemon) is still below the proxy, found and killed with the
    child (kill_tree). Elsewhere, or refused, the child's process group and its /proc descendants are what is killed."""
    global ADOPTING
    if not sys.platform.startswith("linux") or ADOPTING:
        return
    import ctypes

    try:
        if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0:
            ADOPTING = True
    except (OSError, AttributeError):
        pass


def children(pid: int) -> list[int]:
    """The live processes whose parent is `pid` (Linux /proc; [] elsewhere or when it is gone)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as f:
                found.extend(int(x) for x in f.read().split())
        except (OSError, ValueError):
            pass
    return found


def below(roots: Sequence[int], kids: Callable[[int], list[int]] | None = None) -> set[int]:
    """`roots` and every live process below them (`kids`: a process's children; by default /proc's)."""
    kids = kids or children
    seen, todo = set[int](), list(roots)
    while todo:
        pid = todo.pop()
        if pid not in seen:
            seen.add(pid)
            todo.extend(kids(pid))
    return seen


PROC_TASKS = "/proc/self/task"   # where it is missing (macOS, the BSDs), `ps` tells a process's children


def ps_children() -> Callable[[int], list[int]]:
    """A process's children as `ps` lists them now (no /proc); none when ps cannot be run."""
    try:
        out = subprocess.run(["ps", "-A", "-o", "pid=,ppid="], capture_output=True, timeout=5, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        out = b""
    tree: dict[int, list[int]] = {}
    for pid, ppid in (line.split() for line in out.splitlines() if len(line.split()) == 2):
        if pid.isdigit() and ppid.isdigit():
            tree.setdefault(int(ppid), []).append(int(pid))
    return lambda pid: tree.get(pid, [])


def signal_each(pids: Iterable[int], signum: int, spared: tuple[type[OSError], ...] = (ProcessLookupError,)) -> None:
    """Send `signum` to each of `pids`; a failure of the kinds `spared` (one already gone...) is passed over."""
    for pid in pids:
        with contextlib.suppress(*spared):
            os.kill(pid, signum)


def signal_below(roots: Callable[[], Sequence[int]], signum: int, kids: Callable[[], Callable[[int], list[int]]],
                 rounds: int, spared: tuple[type[OSError], ...] = (ProcessLookupError,)) -> set[int]:
    """Send `signum` to `roots()` and every process below them (`kids()`: a process's children, asked afresh with the
    roots each round), again until none is new (one forked meanwhile is found the next round), at most `rounds`
    times; returns every process signalled."""
    done: set[int] = set()
    for _ in range(rounds):
        new = below(roots(), kids()) - done
        if not new:
            break
        signal_each(new, signum, spared)
        done |= new
    return done


def forget(child: asyncio.subprocess.Process) -> None:
    """A started child that asyncio has reaped leaves STARTED (its pid is no longer the proxy's child)."""
    if child.returncode is not None:
        STARTED.discard(child.pid)


def reap_adopted() -> None:
    """Collect the exit status of the orphans the proxy adopted that have ended (never of a child asyncio waits for)."""
    for pid in children(os.getpid()) if ADOPTING else []:
        if pid not in STARTED:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass


def kill_tree(child: Any) -> None:
    """SIGKILL the child and every process below it: its process group (start_child makes it lead one), each
    descendant /proc shows (one that left the group: setsid) and, where the proxy adopts orphans, each process below
    it (a daemon whose parent exited), again until none is left (one forked meanwhile is found the next round).
    Without /proc (macOS), the child and every process `ps` shows below it are first stopped (SIGSTOP, again until
    none is new), so that none exits (its children passing to launchd, out of reach) or forks before the kill, then
    killed. Before, on macOS only the child's process group was killed: a helper of its that had left the group
    (setsid) lived on."""
    if isinstance(child, asyncio.subprocess.Process) and not os.path.isdir(PROC_TASKS):
        either = (ProcessLookupError, PermissionError)
        stopped = signal_below(lambda: [child.pid], signal.SIGSTOP, ps_children, 20, either)
        signal_each(stopped - {child.pid}, signal.SIGKILL, either)
    try:
        if isinstance(child, asyncio.subprocess.Process) and os.getpgid(child.pid) == child.pid:
            os.killpg(child.pid, signal.SIGKILL)
        else:
            child.kill()
    except ProcessLookupError:
        pass
    if not isinstance(child, asyncio.subprocess.Process):
        return
    signal_below(lambda: [p for p in children(os.getpid()) if p not in STARTED or p == child.pid] if ADOPTING
                 else [child.pid], signal.SIGKILL, lambda: children, 100)
    reap_adopted()


@dataclass
class Pending:
    """A host request forwarded to the child, awaiting its answer."""

    host_id: Any
    method: str
    tool: str
    timer: asyncio.TimerHandle | None = None


class Settled:
    """Which comes first for a call decided on a thread: its decision, ready to be logged, or the caller giving up on it
    (the deadline, the host's cancellation). Settled once, under a lock, so a decision is logged as made only when
    nobody had given up on it yet; otherwise its record says it was abandoned (Monitor.check's `abandoned`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.decided = False
        self.given_up = ""

    def logging(self) -> str:
        """Asked by the monitor just before it logs the decision: "" (and the decision stands), or why it was given up."""
        with self._lock:
            self.decided = not self.given_up
            return self.given_up

    def give_up(self, why: str) -> bool:
        """True when the decision was not ready to be logged yet: its record will say `why`, and the caller refuses it."""
        with self._lock:
            if not self.decided and not self.given_up:
                self.given_up = why
            return self.given_up == why


class Proxy:
    """Relays one host session to one child, deciding every tools/call with the guard."""

    def __init__(self, guard: Guard, child: asyncio.subprocess.Process, init: types.InitializeResult,
                 context: Context, timeout_s: float, host_out: IO[bytes], unchecked: frozenset[str] = frozenset(),
                 decision_timeout_s: float | None = None, start: Starter | None = None) -> None:
        """`decision_timeout_s`: each call is decided on a thread of its own, and refused (recorded) when the policy has
        not decided within it, so a slow policy holds neither the event loop nor the host; None decides on the loop.
        `start` starts the child again (start_child): a child that does not finish a call given up on is replaced."""
        self.guard, self.child, self.context, self.timeout_s, self.host_out = guard, child, context, timeout_s, host_out
        has = {c for c in FORWARDED if c == "tools" or getattr(init.capabilities, c, None) is not None}
        offered = {c for c in has if c == "tools" or c in unchecked}
        self.withheld = {m: c for c in has - offered for m in FORWARDED[c]}   # the child has them; not offered
        self.methods = frozenset(m for c in offered for m in FORWARDED[c])
        self.capabilities: dict[str, dict[str, Any]] = {c: {} for c in sorted(offered)}
        info = init.server_info
        self.server_info = {"name": f"veriguard-proxy:{info.name}", "version": info.version}
        self.instructions = init.instructions
        self.pending: dict[ChildId, Pending] = {}
        self.ids = itertools.count(1)
        self.gone = ""             # why the child can no longer answer ("" while it can)
        self.stray = ""            # the child's last line that was not JSON-RPC, to say why a call got no answer
        self.host_gone = ""        # HOST_GONE once the host's output failed ("" before): nothing more is run (refusing)
        self.wake: Callable[[], None] = lambda: None   # ends the serve loop's wait for the host's next line
        self.decision_timeout_s = decision_timeout_s
        self.deciding: dict[int, Any] = {}   # decisions under way on threads: token -> the host's id
        self.settled: dict[int, Settled] = {}   # token -> who settles it: the decision or the caller giving up
        self.cancelled_early: set[int] = set()   # tokens the host cancelled while they were decided
        self.abandoned = 0         # decisions past their deadline whose thread still runs
        self.tokens = itertools.count(1)
        self.unfinished: dict[ChildId, asyncio.TimerHandle] = {}   # given-up tools/calls the child may still be running
        self.start = start
        self.replacing = ""        # why the child is being stopped and started again ("" while it is not)
        self.tasks: set[asyncio.Task[None]] = set()   # the child's readers and restarts (the loop keeps weak references)
        self.held: list[Mapping[str, Any]] = []   # answers to a request whose id another still awaiting its answer has
        self.listed: dict[str, str] = {}    # each tool's definition as the server first listed it (its JSON, no _meta)
        self.changed: set[str] = set()   # tools the server listed again otherwise: a call to one is refused
        self.relisting = False     # while the proxy's own tools/list chain is under way (its tools changed)
        self.relist_queued = False   # the server said so again meanwhile: one more chain once this one ends
        self.relist_pages = 0      # pages read by those chains
        self.relist_failed = ""    # why the server's changed tool list could not be read ("" while it could)
        self.waiting: list[tuple[Any, Any]] = []   # tools/calls (id, params) held until the tools are read again
        self.reads_tools = False   # the proxy lists the tools itself from the start (list_first): a tool it never saw
        # listed is not called

    @property
    def unavailable(self) -> str:
        """Why nothing can go to the child now: it is gone or being started again ("" while it can answer)."""
        return self.gone or self.replacing

    @property
    def refusing(self) -> str:
        """Why no call may go to the child now ("" while one may): nothing can go there (unavailable), or nobody could
        read its answer (the host's output failed: before, the next call read was decided and run, its answer lost)."""
        return self.unavailable or self.host_gone

    # --- the host's side -----------------------------------------------------------------------
    def host_line(self, line: bytes | int) -> None:
        """A line of the host's (host_lines: its bytes, or the length of one too long to read)."""
        if isinstance(line, int):
            self.too_long(line)
        elif line.strip():
            self.from_host(line)

    def from_host(self, line: bytes) -> None:
        try:
            message = strict_loads(line)
        except StrictJSONError as e:   # it may have been a tools/call: nothing of it runs, and that is recorded
            framed = FRAMED if line.lstrip().lower().startswith(b"content-length:") else ""
            self.parse_error(f"a host line that is not strict JSON ({str(e)[:200]}), so no call could be read from it; "
                             f"if it was a tools/call, it was not run{framed}", f"not JSON: {e}{framed}")
            return
        if isinstance(message, list):   # a batch (MCP has none since 2025-06-18): answered as one invalid request
            for item in batch_items(message):
                if calls_a_tool(item.get("method"), item.get("params")):
                    self.unanswerable(item.get("params"), "a tools/call in a JSON-RPC batch, which the proxy does "
                                      "not take")
        if isinstance(message, dict) and not isinstance(message.get("method", ""), str):
            self.unanswerable(message.get("params"), f"a request whose method is {_show(message.get('method'))}, "
                              "not a string: if it was a tools/call, it was not run")
        if not isinstance(message, dict) or not isinstance(message.get("method", ""), str):
            self.to_host({"jsonrpc": "2.0", "id": None, "error": {"code": types.INVALID_REQUEST,
                                                                  "message": "not a JSON-RPC message"}})
            return
        method, params = message.get("method"), message.get("params")
        if method is None:        # an answer to a request the proxy never sent the host
            return
        if "id" not in message:
            if calls_a_tool(method, params):   # never run, since it can have no answer; recorded like any refused call
                self.unanswerable(params, "a tools/call sent as a notification (without an id) cannot be answered")
            elif carries_call(params):   # notifications/initialized, /progress, /cancelled... with a tool call in it
                self.unanswerable(params, f"a notification {method!r} whose params carry a tool's name and arguments: "
                                  "dropped, not run")
            elif method == "notifications/cancelled":
                self.cancelled(params)
            return
        host_id = message["id"]
        if type(host_id) not in (int, str):
            if calls_a_tool(method, params):
                self.unanswerable(params, f"a tools/call whose id is {_show(host_id)}, not a string or an integer")
            self.to_host({"jsonrpc": "2.0", "id": None, "error": {"code": types.INVALID_REQUEST,
                                                                  "message": "a request id must be a string or an integer"}})
            return
        try:
            self.request(host_id, method, params)
        except Exception as e:  # a proxy bug: refuse a call, never answer it with a protocol error
            if method == "tools/call":
                say(f"refused tools/call (id {host_id!r}): the proxy failed: {type(e).__name__}: {e}")
                self.to_host({"jsonrpc": "2.0", "id": host_id,
                              "result": refusal(f"fail closed: the policy proxy failed: {type(e).__name__}: {e}")})
            else:
                self.to_host({"jsonrpc": "2.0", "id": host_id,
                              "error": {"code": types.INTERNAL_ERROR, "message": f"the proxy failed: {describe(e)}"}})

    def too_long(self, length: int) -> None:
        """A host line longer than MAX_LINE, dropped unread: a parse error, recorded as a refused call (it may have been
        one)."""
        self.parse_error(f"a host line of {length} bytes, longer than the {MAX_LINE} the proxy reads, was dropped "
                         "unread; if it was a tools/call, it was not run",
                         f"a line of {length} bytes, longer than {MAX_LINE}: not read")

    def parse_error(self, why: str, message: str) -> None:
        """A host line that could not be read: the refusal of the tools/call it may have been is recorded (`why`), and
        the host gets a parse error (`message`)."""
        self.unanswerable(None, why)
        self.to_host({"jsonrpc": "2.0", "id": None, "error": {"code": types.PARSE_ERROR, "message": message}})

    def unanswerable(self, params: Any, why: str) -> None:
        """Record the refusal of a tools/call the proxy cannot answer (it is never forwarded either)."""
        name = call_name(params)
        say(f"refused tools/call {name!r}: {why}")
        if self.guard.refuse(why, run=RUN, integration="mcp_proxy", tool=name).action in ("halt", "terminate"):
            self.halt_in_flight()

    def request(self, host_id: Any, method: str, params: Any) -> None:
        reused = self.reused_id(host_id)
        if method == "tools/call":
            self.call_tool(host_id, params, reused)
        elif reused:
            say(f"refused {method!r} (id {host_id!r}): {reused}")
            self.to_host({"jsonrpc": "2.0", "id": host_id, "error": {"code": types.INVALID_REQUEST,
                                                                     "message": f"refused: {reused}"}})
        elif method in MCP_METHODS and method not in self.methods and carries_foreign_call(method, params):
            # a request the proxy answers itself (ping, initialize, logging/setLevel...) carrying a tool call: before,
            # answered as if it were plain, the call unrecorded
            self.unanswerable(params, f"a {method} whose params carry a tool's name and arguments, which MCP does not "
                              f"give {method}: not run")
            self.to_host({"jsonrpc": "2.0", "id": host_id, "error": {
                "code": types.INVALID_PARAMS, "message": f"refused: {method} with a tool's name and arguments"}})
        elif method in self.methods:
            self.forward_request(host_id, method, params)
        elif method == "initialize":
            asked = params.get("protocolVersion") if isinstance(params, dict) else None
            result = {"protocolVersion": asked if asked in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION,
                      "capabilities": self.capabilities, "serverInfo": self.server_info}
            if self.instructions:
                result["instructions"] = self.instructions
            self.to_host({"jsonrpc": "2.0", "id": host_id, "result": result})
        elif method == "ping":
            self.to_host({"jsonrpc": "2.0", "id": host_id, "result": {}})
        elif method in self.withheld:
            group = self.withheld[method]
            say(f"refused {method!r} (id {host_id!r}): the policy decides tool calls only")
            self.to_host({"jsonrpc": "2.0", "id": host_id, "error": {
                "code": types.METHOD_NOT_FOUND, "message": f"the veriguard proxy does not offer {method!r}: the policy "
                f"decides tool calls only, so the server's {group} are withheld; start the proxy with --unchecked "
                f"{group} to forward them unchecked"}})
        else:
            if calls_a_tool(method, params):   # "TOOLS/CALL", "tооls/call": not forwarded, recorded as a refused call
                self.unanswerable(params, f"a request for method {method!r}, which is not tools/call but reads as it "
                                  "to a lenient reader or to the eye, or carries a tool call")
            self.to_host({"jsonrpc": "2.0", "id": host_id, "error": {
                "code": types.METHOD_NOT_FOUND, "message": f"Method not found: the veriguard proxy does not offer {method!r}"}})

    def forward_request(self, host_id: Any, method: str, params: Any) -> None:
        """Forward a request the proxy offers (not a tools/call) with only its own params; else refuse it, recording a
        tool call it carried (a prompt's name and arguments are a prompts/get's own)."""
        sent, problem = forwarded_params(method, params)
        if not problem and method not in FORWARDED["tools"]:
            problem = self.unrecorded(host_id, method, sent)
        if not problem:
            self.forward(host_id, method, sent)
            return
        if carries_foreign_call(method, params):
            self.unanswerable(params, f"a {method} whose params carry a tool's name and arguments, which MCP does not "
                              f"give {method}: not forwarded")
        say(f"refused {method!r} (id {host_id!r}): {problem}")
        self.to_host({"jsonrpc": "2.0", "id": host_id, "error": {"code": types.INVALID_PARAMS,
                                                                 "message": f"refused: {problem}"}})

    def unrecorded(self, host_id: Any, method: str, params: dict[str, Any] | None) -> str:
        """Record a request the operator chose to forward unchecked (--unchecked: resources/read, prompts/get...) as an
        allowed record marked unchecked, with the sha256 of the params sent; why it may not go ('' when it may): a
        record that could not be written. Before, such a pass was said on stderr only, and the log held nothing of it."""
        record = self.guard.record_unchecked(method, sha256_json(params), action_id=action_id(host_id))
        if record is not None and record.allowed is True:
            return ""
        why = record.fail_closed if record is not None else "nor could its refusal"
        return f"the unchecked pass could not be recorded ({why[:300]}), so it is not forwarded"

    def unlisted(self, name: str) -> str:
        """Why a call to tool `name` is refused undecided because of what the server listed ('' when it is not): the
        server changed the tool's definition after it was first listed (the host and the policy's author read it as it
        was: a tool re-described to pay in dollars where it paid in cents), it listed the name twice, or it said its
        tools changed and the proxy has not read them again yet (or could not)."""
        if self.relist_failed:
            return self.relist_failed
        if self.relisting:   # held (call_tool) but beyond MAX_WAITING
            return (f"the proxy is reading the MCP server's tools again, and holds {len(self.waiting)} calls until "
                    "then; send the call again")
        if name in self.changed:
            return (f"the MCP server changed the definition of tool {name[:100]!r} (its description, schema or "
                    "annotations) after it was first listed, or listed it twice: the host and the policy read the tool "
                    "as first listed; restart the proxy to take the new definition")
        return ""

    def pin(self, result: Any) -> None:
        """Keep each tool's definition (its JSON but _meta) as the server first lists it, in the host's tools/list
        answers (every page) and the proxy's own; a tool listed again otherwise, or twice in one answer otherwise,
        goes into `changed`. Before, a call was forwarded to whatever the tool had become."""
        tools = result.get("tools") if isinstance(result, dict) else None
        for tool in tools if isinstance(tools, list) else ():
            if not isinstance(tool, dict) or type(tool.get("name")) is not str:
                continue
            name = tool["name"]
            shape = json.dumps({k: v for k, v in tool.items() if k != "_meta"}, sort_keys=True)
            if self.listed.setdefault(name, shape) != shape:
                self.changed.add(name)

    def list_first(self) -> None:
        """List the server's tools as soon as it is up, before any call, and pin them (as list_again): a host that
        calls without listing (it listed in an earlier session, or never) gets the tools as the server defined them at
        the start, and a later change (the server's list_changed, a restart) is read and pinned as for any host. Before,
        only what the host listed was pinned: a server that re-described a tool the host had not listed in this session
        ran the call as it now defined the tool (45000 cents decided, paid as whole dollars)."""
        self.reads_tools = True
        self.list_again()   # at the start: relisting False, relist_failed "", relist_pages 0, as list_again sets them

    def never_listed(self, name: str) -> str:
        """Why an allowed call to tool `name` is not run ('' when it may be): the proxy lists the server's tools itself
        (list_first), and the server has never listed this one, so what it does is described nowhere the host or the
        policy's author could read."""
        if not self.reads_tools or name in self.listed:
            return ""
        return (f"the MCP server has not listed a tool {name[:100]!r} in this session (the proxy reads its tool list "
                "when it starts and whenever it changes), so nothing the host or the policy read describes what it "
                "does; call only tools that tools/list returns")

    def list_again(self) -> None:
        """Read the server's tools again (the proxy's own tools/list, every page) and pin them: the server said its tools
        changed, or it was started again, or the last read failed (list_failed) (a server's tools may depend on its start:
        before, a server started again was never listed, and ran the next call as it now defined the tool). Calls
        meanwhile are held (call_tool). One chain at a time, and one more after it however often the server said so
        meanwhile: before, each notification started a chain of its own (a server's 10,000 notifications, 10,000
        tools/list in flight)."""
        if not self.listed and not self.reads_tools:   # nothing listed yet, and nothing to compare
            return
        if self.relisting:
            self.relist_queued = True
            return
        self.relisting, self.relist_failed, self.relist_pages = True, "", 0   # a failed read is over: this one decides
        self.relist()

    def relist(self, cursor: str | None = None) -> None:
        """The proxy's own tools/list (a page at `cursor`); calls are held until every page is read and pinned
        (relisted), and refused undecided when that fails."""
        self.forward(None, "tools/list", {"cursor": cursor} if cursor else None)

    @property
    def starting_over(self) -> bool:
        """Whether a call must wait for the server: its tools are being read again, or it is being started again (and
        neither the server nor the host is gone)."""
        gone = self.gone or self.host_gone
        return not gone and ((self.relisting and not self.relist_failed) or bool(self.replacing))

    def hold(self, host_id: Any, params: Any) -> bool:
        """Hold a tools/call while the proxy reads the tools again or starts the server again (starting_over; False
        when it does not, or MAX_WAITING are held): its id is awaited (awaited), and it is decided once that is done,
        or refused with a record when the tools cannot be read, the server is gone, the proxy is stopped or the host
        cancels it. Before, it was refused ("send the call again", "not run"), and a host that did not retry lost it."""
        if not self.starting_over or len(self.waiting) >= MAX_WAITING:
            return False
        self.waiting.append((host_id, params))
        return True

    def release_waiting(self) -> None:
        """The held tools/calls, decided (or refused undecided: the re-list failed, the server is gone) in the order
        they came, once the proxy is no longer reading the tools or nothing can go to the server."""
        if not self.waiting or self.starting_over:
            return
        waiting, self.waiting = self.waiting, []
        for host_id, params in waiting:
            self.call_tool(host_id, params, held=True)

    def relisted(self, message: Mapping[str, Any]) -> None:
        result = message.get("result")
        cursor = result.get("nextCursor") if isinstance(result, dict) else None
        if "error" in message or not isinstance(result, dict) or not isinstance(result.get("tools"), list):
            why = _show(message["error"]) if "error" in message else "its answer held no list of tools"
            self.list_failed(f"the MCP server's tool list could not be read ({why})")
            return
        self.pin(result)
        self.relist_pages += 1
        if type(cursor) is str and cursor:
            if self.relist_pages >= MAX_RELIST_PAGES:
                self.list_failed(f"the MCP server's tool list, read again, had more than {MAX_RELIST_PAGES} pages")
            else:
                self.relist(cursor)
        else:
            self.relist_pages = 0
            if self.relist_queued:   # the server said its tools changed while they were read: read them once more
                self.relist_queued = False
                self.relist()
                return
            self.relisting = False
            self.release_waiting()

    def list_failed(self, why: str) -> None:
        """The proxy's read of the tools failed (`why`): the calls held for it are refused with the reason, and so is a
        call until the tools are read again, which the next call does (call_tool). Before, the failure held for the
        rest of the session: every later call was refused, and a later list_changed or restart never read the tools
        again (the chain stayed marked as under way)."""
        self.relist_failed, self.relisting, self.relist_queued = why, False, False
        self.release_waiting()

    def reused_id(self, host_id: Any) -> str:
        """Why the host may not use `host_id` now ('' when it may): a request of its with that id, or with the same id
        spelt as a string or as an integer (1 and "1", which a lenient client matches alike and the log records alike),
        still awaits the child's answer or its decision, and two answers with one id could not be told apart."""
        if not self.in_use(host_id):
            return ""
        return (f"the request id {host_id!r} is still in use by a request the MCP server has not answered yet; "
                "give each request an id that no pending request has")

    def call_tool(self, host_id: Any, params: Any, reused: str = "", *, held: bool = False) -> None:
        """`held`: it was held while the tools were read (it is not held again for a new read)."""
        call_id = action_id(host_id)
        malformed = malformed_call(params)
        problem = reused or (f"the tools/call is not valid MCP: {malformed}" if malformed else "")
        if not problem and not held and self.relist_failed and self.reads_tools and not self.refusing:
            self.list_again()   # read the tools again for this call, held meanwhile (list_failed)
        if not problem and self.hold(host_id, params):
            return
        name = call_name(params)
        arguments = (params.get("arguments") or {}) if not problem else {}
        self.input_closed()   # so that a call no server can read is refused undecided, not decided and then dropped
        undecided = "" if problem else self.refusing or self.unlisted(name)
        if undecided:   # refused undecided, recorded
            self.not_run(host_id, name, undecided)
            return
        if problem:   # refused in shadow mode too: there is no call to forward
            reason = problem
            outcome = self.guard.refuse(reason, action_id=call_id, run=RUN, integration="mcp_proxy", tool=name)
            message = outcome.message if not outcome.allowed else f"fail closed: {reason}"
        else:
            call = {"method": "tools/call", "params": {"name": name, "arguments": arguments}}

            def decide(abandoned: Callable[[], str] | None = None) -> GuardOutcome:
                return self.guard.check(call, context=self.context, action_id=call_id, run=RUN,
                                        integration="mcp_proxy", tool=name, exclusive=True,   # finished: settle
                                        abandoned=abandoned)
            if self.decision_timeout_s is not None:
                self.decide_in_time(host_id, name, arguments, decide)
                return
            outcome = decide()
            message = outcome.message
        self.carry_out(host_id, name, arguments, outcome, message, refused=bool(problem) or not outcome.allowed)

    def carry_out(self, host_id: Any, name: str, arguments: dict[str, Any], outcome: GuardOutcome, message: str, *,
                  refused: bool) -> None:
        """Forward the decided call, or answer the refusal (and halt the calls in flight when the run halted)."""
        if message:
            say(f"{'refused' if refused else 'shadow'} tools/call {name!r} (id {host_id!r}): {message}")
        if refused:
            self.to_host({"jsonrpc": "2.0", "id": host_id, "result": refusal(message)})
            if outcome.action in ("halt", "terminate"):
                self.halt_in_flight()
            return
        self.input_closed()   # as forward does first: a server or host gone outranks a tool never listed
        unlisted = "" if self.refusing else self.never_listed(name)
        if unlisted:   # decided, but nothing the host or the policy read describes the tool: recorded as not run
            self.not_run(host_id, name, unlisted, allowed=True)
            self.settle()
            return
        self.forward(host_id, "tools/call", {"name": name, "arguments": arguments}, name)   # exactly what was decided

    def decide_in_time(self, host_id: Any, name: str, arguments: dict[str, Any],
                       decide: Callable[[Callable[[], str]], GuardOutcome]) -> None:
        """Decide on a thread; a decision not ready to be logged within decision_timeout_s refuses the call (recorded),
        and its record, when the policy gets there, is a denial saying it was abandoned (never an allow). The loop goes
        on serving the host and the child meanwhile."""
        running = len(self.deciding) + self.abandoned
        if running >= MAX_DECIDING:   # each would become a thread that may outlive its deadline: bounded here
            self.refuse_undecided(host_id, name, f"{running} decisions of the policy are still running ({self.abandoned} "
                                  f"of them past their {self.decision_timeout_s:g} s deadline), and no more than "
                                  f"{MAX_DECIDING} run at once; send this call again once one is done")
            return
        loop, deadline = asyncio.get_running_loop(), self.decision_timeout_s or 0.0
        token = next(self.tokens)
        self.deciding[token] = host_id
        settled = self.settled[token] = Settled()
        timer = loop.call_later(deadline, self.decision_expired, token, host_id, name)

        def work() -> None:
            try:
                outcome: GuardOutcome | BaseException = decide(settled.logging)
            except BaseException as e:   # Guard.check does not raise; a bug here must refuse, not vanish
                outcome = e
            try:
                loop.call_soon_threadsafe(self.decision_done, token, timer, host_id, name, arguments, outcome)
            except RuntimeError:   # the loop is closed: the host is gone, and nothing is forwarded
                pass
        threading.Thread(target=work, name=f"veriguard-decide-{token}", daemon=True).start()

    def decision_done(self, token: int, timer: asyncio.TimerHandle, host_id: Any, name: str, arguments: dict[str, Any],
                      outcome: GuardOutcome | BaseException) -> None:
        timer.cancel()
        settled = self.settled.pop(token, None)
        # why it was given up: a deadline pops it (decision_expired), a cancellation is caught first (cancelled_early),
        # so what is left is the proxy stopping (shut_down)
        cancelled, stopped = token in self.cancelled_early, settled.given_up if settled else ""
        self.cancelled_early.discard(token)
        if self.deciding.pop(token, None) is None:   # past its deadline: refused already
            self.abandoned -= 1
            self.decided_late(host_id, name, outcome)
        elif isinstance(outcome, BaseException):
            self.refuse_undecided(host_id, name, f"the policy proxy failed: {describe(outcome)}")
        elif cancelled:
            self.decided_late(host_id, name, outcome, why="the host cancelled it while it was decided")
        elif stopped:   # its one record is the monitor's, saying it was abandoned
            self.decided_late(host_id, name, outcome, why=stopped)
            self.to_host({"jsonrpc": "2.0", "id": host_id, "result": refusal(f"Not run: {stopped}.")})
        else:
            self.carry_out(host_id, name, arguments, outcome, outcome.message, refused=not outcome.allowed)
        self.settle()

    def decided_late(self, host_id: Any, name: str, outcome: GuardOutcome | BaseException, why: str = "") -> None:
        """A decision that came when its call could no longer be run. Its record says so when the call was given up
        before it was logged (Settled); one logged as an allow just before (a cancellation that came while the allow
        was on its way to the loop) is ended at once (it holds the run's one call at a time) and followed by a record
        that it did not run."""
        if isinstance(outcome, GuardOutcome) and outcome.allowed:
            self.guard.finished(RUN)
            self.guard.refuse(f"decided only {why or 'after its deadline, when it had been refused'}: not run",
                              action_id=action_id(host_id), run=RUN, integration="mcp_proxy", tool=name)
        say(f"tools/call {name!r} (id {host_id!r}) decided late ({why or 'past its deadline'}): not run")

    def decision_expired(self, token: int, host_id: Any, name: str) -> None:
        settled = self.settled.get(token)
        if token not in self.deciding or (settled is not None and not settled.give_up(
                f"the policy did not decide within {self.decision_timeout_s:g} s (--decision-timeout), so the call was "
                "refused")):
            return   # decided in time and being logged: carried out when it reaches the loop (decision_done)
        self.deciding.pop(token)
        self.settled.pop(token, None)
        self.cancelled_early.discard(token)
        self.abandoned += 1
        self.refuse_undecided(host_id, name, f"the policy did not decide within {self.decision_timeout_s:g} s "
                              "(--decision-timeout)")
        self.settle()

    def not_run(self, host_id: Any, name: str, why: str, *, allowed: bool = False) -> None:
        """Refuse a tools/call that no child could take (gone, or being started again), with a record that counts in no
        run's denials (the policy did not refuse it); `allowed`: the policy had allowed it."""
        self.record_end(host_id, name, f"{'allowed by the policy, but ' if allowed else ''}not run: {why}")
        say(f"refused tools/call {name!r} (id {host_id!r}): {why}")
        self.to_host({"jsonrpc": "2.0", "id": host_id, "result": refusal(f"Not run: {why}.")})

    def record_end(self, host_id: Any, name: str, why: str) -> None:
        """Record how a tools/call that the policy did not refuse ended without its answer (not run, cancelled, did not
        complete): a record that counts in no run's denials."""
        self.guard.refuse_run(why, integration="mcp_proxy", tool=name, action_id=action_id(host_id))

    def refuse_undecided(self, host_id: Any, name: str, why: str) -> None:
        """Refuse a call the policy did not decide (in shadow mode too: nothing decided it), with a record."""
        outcome = self.guard.refuse(why, action_id=action_id(host_id), run=RUN, integration="mcp_proxy", tool=name)
        message = outcome.message if not outcome.allowed else f"fail closed: {why}"
        self.carry_out(host_id, name, {}, outcome, message, refused=True)

    def halt_in_flight(self, why: str = "the run was halted") -> None:
        """The run was halted (or the proxy stopped: `why`): the tool calls still running in the child are cancelled
        there (the child may have done part of the work already), refused to the host, and recorded as refused."""
        for child_id, pending in list(self.pending.items()):
            if pending.method != "tools/call":
                continue
            del self.pending[child_id]
            if pending.timer is not None:
                pending.timer.cancel()
            self.to_child({"jsonrpc": "2.0", "method": "notifications/cancelled",
                           "params": {"requestId": child_id, "reason": f"tool execution was stopped: {why}"}})
            outcome = self.guard.refuse(f"{why} while it ran; it was cancelled", action_id=action_id(pending.host_id),
                                        run=RUN, integration="mcp_proxy", tool=pending.tool)
            say(f"cancelled tools/call {pending.tool!r} (id {pending.host_id!r}): {why} while it ran")
            message = outcome.message if not outcome.allowed else f"fail closed: {why} while it ran"
            self.to_host({"jsonrpc": "2.0", "id": pending.host_id, "result": refusal(
                f"{message} The call was still running and was cancelled: it may have done part of its work.")})
        self.settle()

    def shut_down(self, why: str) -> None:
        """The proxy is told to stop (a signal): the tool calls running in the child are cancelled there and refused,
        recorded; its other requests fail; nothing more goes to the child, so a call still being decided, or read
        from the host after this, is refused with a record that it was not run: one record, the monitor's saying the
        decision was abandoned when it was not logged yet (Settled), else the decision's and then that it did not run."""
        for settled in list(self.settled.values()):
            settled.give_up(why)
        self.halt_in_flight(why)
        self.child_gone(f"{why}, so no later call goes to the MCP server")

    def running(self) -> bool:
        """Whether a tools/call forwarded to the child awaits its answer (within its --timeout)."""
        return any(p.method == "tools/call" for p in self.pending.values())

    def settle(self) -> None:
        """When no allowed tools/call awaits the child's answer any more, the next may be allowed (Guard.finished:
        a policy that reads facts beside the call decides one running call at a time). A call the host cancelled or
        that timed out still counts as running until the child answers it or --timeout more has passed (`linger`)."""
        self.release_held()   # a request that ended unanswered (cancelled) no longer holds its id
        if not self.deciding and not self.unfinished and not self.replacing and not self.running():
            self.guard.finished(RUN)   # (a decision on a thread may have allowed a call not forwarded yet)

    def linger(self, child_id: ChildId) -> None:
        """A tools/call given up before the child answered it (cancelled by the host, timed out) may still be running
        there, a server being free to finish what it cannot stop: it holds the run's one running call until the
        child's answer to it comes (dropped) or timeout_s passes, so that the next call is not decided on facts the
        first may still change (a payment cancelled and sent again ran twice on the same ledger)."""
        self.unfinished[child_id] = asyncio.get_running_loop().call_later(self.timeout_s, self.overdue, child_id)

    def overdue(self, child_id: ChildId) -> None:
        """A given-up tools/call the child has not answered --timeout after: it may still be running, and may finish
        behind a later call's back (a payment made after the next was decided on the ledger without it). The child is
        stopped (its process group killed: a helper it started dies too) so that the call cannot finish, and started
        again; until then the call holds the run's one running call. A child that cannot be started again is gone."""
        if child_id not in self.unfinished or self.unavailable:
            return
        why = (f"the MCP server did not finish a tools/call within {self.timeout_s:g} s after it was cancelled or timed "
               "out, and was stopped so that the call cannot finish behind a later call")
        self.replacing = why
        self.spawn(self.replace_child(why))

    async def replace_child(self, why: str) -> None:
        say(why + (": starting it again" if self.start is not None else ""))
        old = self.child
        self.kill_child()
        try:
            await asyncio.wait_for(old.wait(), STOP_TIMEOUT_S)
        except TimeoutError:
            pass
        forget(old)
        self.drop_child_work(why)   # whatever else the stopped child had under way is refused
        try:
            if self.start is None:
                raise ProxyStartError("the proxy cannot start it again")
            self.child, _ = await self.start()
        except ProxyStartError as e:
            self.replacing = ""
            self.child_gone(f"{why}; it could not be started again ({e.message}), so no later call goes to it")
            return
        self.replacing = ""
        self.read_in_background()
        say("the MCP server was started again")
        self.list_again()
        self.release_waiting()   # held while it started, when no re-list holds them longer
        self.settle()

    def read_in_background(self) -> None:
        self.spawn(self.read_child())

    def spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        """A task on the running loop, held in self.tasks until it is done (the loop keeps weak references)."""
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def release(self, child_id: ChildId) -> None:
        timer = self.unfinished.pop(child_id, None)
        if timer is not None:
            timer.cancel()
            self.settle()

    def input_closed(self) -> None:
        """A child that closed its input (its read end of the pipe) while it runs is gone for the proxy: asyncio drops
        what is written to a closed pipe without a word, so before, each call went nowhere and was refused only at its
        --timeout (30 s), and the server was then started again for a call it never received."""
        stdin = self.child.stdin
        if not self.unavailable and stdin is not None and stdin.is_closing():
            self.child_gone("the MCP server closed its input (it reads no more requests)")

    def forward(self, host_id: Any, method: str, params: Any, tool: str = "") -> None:
        self.input_closed()
        pending = Pending(host_id, method, tool)
        refusing = self.refusing
        if refusing:
            if method == "tools/call":   # decided before the child or the host went: recorded as not run
                self.not_run(host_id, tool, refusing, allowed=True)
            else:
                self.fail(pending, refusing)
            self.settle()
            return
        # the proxy's own tools/list under an id of its own: a server's answer to an integer id it was never sent (a
        # bug, or log lines) failed the list read at the start, and with it every call of the session
        child_id: ChildId = next(self.ids) if host_id is not None else f"{OWN_ID}{next(self.ids)}"
        self.pending[child_id] = pending
        pending.timer = asyncio.get_running_loop().call_later(self.timeout_s, self.expired, child_id)
        self.to_child({"jsonrpc": "2.0", "id": child_id, "method": method,
                       **({"params": params} if params is not None else {})})

    def cancelled(self, params: Any) -> None:
        problem = malformed_cancellation(params)
        if problem:   # a notification has no answer: dropped, and said on stderr
            say(f"dropped notifications/cancelled: {problem}")
            return
        asked = params["requestId"]
        kept: list[tuple[Any, Any]] = []
        dropped: list[tuple[Any, Any]] = []
        for entry in self.waiting:   # one pass (the held ids are apart: reused_id)
            (dropped if same_id(entry[0], asked) else kept).append(entry)
        self.waiting = kept
        for host_id, held in dropped:
            self.record_end(host_id, call_name(held), "cancelled by the host while it was held (the proxy was reading "
                            "the MCP server's tools again): not decided, not run")
        for token in [t for t, h in self.deciding.items() if same_id(h, asked)]:
            self.cancelled_early.add(token)
            if token in self.settled:
                self.settled[token].give_up("the host cancelled it while it was decided")
        for child_id, pending in list(self.pending.items()):
            if same_id(pending.host_id, asked):
                del self.pending[child_id]
                if pending.timer is not None:
                    pending.timer.cancel()
                if pending.method == "tools/call":
                    self.linger(child_id)
                    self.record_end(pending.host_id, pending.tool, "allowed by the policy, then cancelled by the host "
                                    "after it went to the MCP server: it may have run there; its answer is dropped")
                self.to_child({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {
                    "requestId": child_id, **({"reason": params["reason"]} if "reason" in params else {})}})
        self.settle()

    def in_use(self, host_id: Any, awaited: set[tuple[str, Any]] | None = None) -> bool:
        """Whether a request with an id a client may take for `host_id` (id_keys: 1 and "1", " 1", "1.0", "0x1")
        awaits its decision or the child's answer (`awaited`: self.awaited(), when known). Before, only 1 and "1"
        were: the answer to " 1" went out while 1 ran, and the SDKs' clients took it for 1's."""
        if type(host_id) not in (int, str):
            return False
        return not id_keys(host_id).isdisjoint(self.awaited() if awaited is None else awaited)

    def awaited(self) -> set[tuple[str, Any]]:
        """The id_keys of the requests that await their decision or the child's answer."""
        return set().union(*(id_keys(h) for h in [p.host_id for p in self.pending.values() if p.host_id is not None]
                             + list(self.deciding.values()) + [h for h, _ in self.waiting]))

    def to_host(self, message: Mapping[str, Any]) -> None:
        """Answer the host. The answer to a request whose id another request still awaiting its answer has (a reused
        id) is held until that request's answer went out: the host gets the two in the order it sent them. Before, the
        refusal of a reused id came first, and the host took it for the answer to the call running in the server
        (which it then thought refused)."""
        if self.in_use(message.get("id")):
            self.held.append(message)
            return
        self.write_to_host(message)
        self.release_held()

    def release_held(self) -> None:
        """The held answers whose id no request awaiting its answer has any more, in the order they were made (one pass:
        writing them changes no request's state)."""
        if not self.held:
            return
        awaited = self.awaited()
        ready: list[Mapping[str, Any]] = []
        waiting: list[Mapping[str, Any]] = []
        for message in self.held:
            (waiting if self.in_use(message.get("id"), awaited) else ready).append(message)
        if ready:
            self.held = waiting
            for message in ready:
                self.write_to_host(message)

    def write_to_host(self, message: Mapping[str, Any]) -> None:
        if self.host_gone:
            return
        try:
            self.host_out.write(encode(message))
            self.host_out.flush()
        except (OSError, ValueError):   # the host hung up (host_gone was "": checked above, on this loop's thread)
            self.host_gone = HOST_GONE
            say(HOST_GONE + ": later calls are refused unrun, recorded")
            self.wake()

    # --- the child's side ----------------------------------------------------------------------
    async def read_child(self) -> None:
        child = self.child
        assert child.stdout is not None
        while True:
            try:
                line = await child.stdout.readline()
            except ValueError:
                self.child_gone(f"the MCP server wrote a line longer than {MAX_LINE} bytes")
                self.kill_child()
                return
            if child is not self.child or self.replacing:   # stopped to be replaced: its last words are dropped
                return
            if not line:
                self.child_gone(GONE)
                return
            try:
                self.from_child(line)
            except Exception as e:   # a reader that stops would leave every later call unanswered
                self.child_gone(f"the proxy failed to read the MCP server's output ({describe(e)}); it was stopped "
                                "and no later call goes to it")
                self.kill_child()
                return

    def kill_child(self) -> None:
        kill_tree(self.child)

    def from_child(self, line: bytes) -> None:
        try:
            message = strict_loads(line)
        except StrictJSONError:
            message = None
        if not isinstance(message, dict):
            self.stray = repr(line.decode("utf-8", "replace").strip())[:200]
            return
        if "method" in message:     # the child's own requests and notifications
            if message["method"] == "notifications/tools/list_changed":   # with an id too: the change it says
                self.list_again()
            if "id" in message:
                self.childs_request(message)
                self.to_child({"jsonrpc": "2.0", "id": message["id"], "result": {}} if message["method"] == "ping" else
                              {"jsonrpc": "2.0", "id": message["id"], "error": {
                                  "code": types.METHOD_NOT_FOUND, "message": "the veriguard proxy forwards no requests "
                                  "from the server"}})
            return
        child_id = message.get("id")
        pending = self.pending.pop(child_id, None) if type(child_id) is int or type(child_id) is str else None
        if pending is None:         # late (after a timeout or a cancellation: that call is over now), or not ours
            if type(child_id) is int:
                self.release(child_id)
            return
        if pending.timer is not None:
            pending.timer.cancel()
        self.answered(pending, message)
        self.settle()

    def childs_request(self, message: dict[str, Any]) -> None:
        """Record a request of the child's that carries a tool call (a tools/call, or a sampling or elicitation whose
        params hold a tool's name and arguments): never forwarded to the host, so never run, but a server asking its
        client to run a tool is worth a record (before: answered "method not found", no trace). Counted in no run's
        denials: the host did not make it. Any other request but ping (a sampling whose prompt asks the model to pay,
        an elicitation asking the user for a secret, roots/list) is said on stderr, its method and id only. A
        notification's params are not read (a server may log its own calls)."""
        method, params = message.get("method"), message.get("params")
        if not (carries_call(params) or calls_a_tool(method)):   # calls_a_tool(method, params) adds nothing here
            if method != "ping":   # before, an elicitation asking the user for a secret left no trace at all
                say(f"the MCP server asked the client {_show(method)} (id {_show(message.get('id'))}): not forwarded "
                    "to the host (the proxy offers the server no sampling, elicitation or roots), answered \"method not "
                    "found\"")
            return
        name = call_name(params)
        why = (f"the MCP server sent the client a request {_show(method)} (id {_show(message.get('id'))}) carrying a "
               "tool call: not forwarded to the host, not run")
        say(f"refused tools/call {name!r}: {why}")
        self.guard.refuse_run(why, integration="mcp_proxy", tool=name)

    def answered(self, pending: Pending, message: dict[str, Any]) -> None:
        error, result = message.get("error"), message.get("result")
        if pending.host_id is None:   # the proxy's own tools/list
            self.relisted(message)
            return
        if pending.method == "tools/list" and error is None:
            self.pin(result)
        if pending.method != "tools/call":
            self.to_host({"jsonrpc": "2.0", "id": pending.host_id,
                          **({"error": error} if error is not None else {"result": result})})
            return
        if error is not None:
            code, text = (error.get("code"), error.get("message")) if isinstance(error, dict) else (None, error)
            self.fail(pending, f"the MCP server answered with error {_show(code)}: {_show(text)}")
            return
        try:
            types.CallToolResult.model_validate(result)   # a result the host could not read must not pass as allowed
        except ValidationError as e:
            self.fail(pending, f"the MCP server failed: {describe(e)}")
            return
        self.to_host({"jsonrpc": "2.0", "id": pending.host_id, "result": result})

    def expired(self, child_id: ChildId) -> None:
        pending = self.pending.pop(child_id, None)
        if pending is None:
            return
        if pending.method == "tools/call":
            self.linger(child_id)
        self.to_child({"jsonrpc": "2.0", "method": "notifications/cancelled",
                       "params": {"requestId": child_id, "reason": "timed out in the veriguard proxy"}})
        stray = f"; it wrote a line that is not MCP: {self.stray}" if self.stray else ""
        self.fail(pending, f"the MCP server did not answer within {self.timeout_s:g} s{stray}")
        self.settle()

    def child_gone(self, why: str) -> None:
        if self.gone:
            return
        self.gone = why
        say(why)
        self.drop_child_work(why)
        self.release_waiting()
        self.settle()

    def drop_child_work(self, why: str) -> None:
        """What the child had under way ends: the given-up calls' timers are cancelled and forgotten, and every
        request still awaiting its answer is refused (a tools/call) or failed (any other) with `why`."""
        for timer in self.unfinished.values():
            timer.cancel()
        self.unfinished.clear()
        for child_id in list(self.pending):
            pending = self.pending.pop(child_id)
            if pending.timer is not None:
                pending.timer.cancel()
            self.fail(pending, why)

    def fail(self, pending: Pending, reason: str) -> None:
        """The host's request could not be completed: a refusal for a tools/call, a JSON-RPC error otherwise."""
        if pending.host_id is None:   # the proxy's own tools/list: later calls are refused
            self.relisted({"error": reason})
            return
        if pending.method == "tools/call":   # its allow record is followed by one of its end (before: the allow alone)
            self.record_end(pending.host_id, pending.tool, f"allowed by the policy, but did not complete: {reason}")
            say(f"refused tools/call {pending.tool!r}: {reason}")
            self.to_host({"jsonrpc": "2.0", "id": pending.host_id,
                          "result": refusal(f"The call was allowed by the policy but did not complete: {reason}.")})
        else:
            self.to_host({"jsonrpc": "2.0", "id": pending.host_id,
                          "error": {"code": types.INTERNAL_ERROR, "message": reason}})

    def to_child(self, message: Mapping[str, Any]) -> None:
        stdin = self.child.stdin
        if self.unavailable or stdin is None:
            return
        try:
            stdin.write(encode(message))
        except (OSError, RuntimeError) as e:   # a closed pipe; reading its output will say it is gone
            self.child_gone(f"the MCP server cannot be written to: {describe(e)}")


async def how_it_ended(child: asyncio.subprocess.Process) -> str:
    """Why a child closed its output before the handshake: its exit status or signal, when it ends within
    STOP_TIMEOUT_S (before, "closed its output (exited?)", whatever the status: a server that failed at once and one
    that closed its stdout read alike)."""
    try:
        status = await asyncio.wait_for(child.wait(), STOP_TIMEOUT_S)
    except TimeoutError:
        return "it closed its output and still runs"
    if status < 0:
        return f"it was killed by {signal.Signals(-status).name} (it closed its output)"
    return f"it exited with status {status}"


async def start_child(command: str, args: Sequence[str], start_timeout_s: float,
                      cwd: str | Path | None) -> tuple[asyncio.subprocess.Process, types.InitializeResult]:
    """The child started and initialized (ProxyStartError when it will not run or not speak MCP)."""
    try:
        child = await asyncio.create_subprocess_exec(command, *args, stdin=asyncio.subprocess.PIPE,
                                                     stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                     cwd=cwd, limit=MAX_LINE, process_group=0)
    except OSError as e:
        raise ProxyStartError(f"cannot start the MCP server {command!r}: {e.strerror or e}") from None
    assert child.stdin is not None and child.stdout is not None and child.stderr is not None
    STARTED.add(child.pid)
    STDERR_RELAYS.add(task := asyncio.create_task(relay_stderr(child.stderr)))
    task.add_done_callback(STDERR_RELAYS.discard)
    child.stdin.write(encode({"jsonrpc": "2.0", "id": INIT_ID, "method": "initialize", "params": {
        "protocolVersion": LATEST_HANDSHAKE_VERSION, "capabilities": {},
        "clientInfo": {"name": "veriguard-mcp-proxy", "version": "1"}}}))
    failed = f"the MCP server {command!r} did not complete the MCP handshake"
    stray = ""
    try:
        async with asyncio.timeout(start_timeout_s):
            while True:
                line = await child.stdout.readline()
                if not line:
                    raise ProxyStartError(f"{failed}: {await how_it_ended(child)}"
                                          + (f"; its last line: {stray}" if stray else ""))
                try:
                    message = strict_loads(line)
                except StrictJSONError:
                    message = None
                if isinstance(message, dict) and message.get("id") == INIT_ID and "method" not in message:
                    break
                stray = repr(line.decode("utf-8", "replace").strip())[:200]
    except TimeoutError:
        await stop_child(child)
        raise ProxyStartError(f"{failed} within {start_timeout_s:g} s"
                              + (f"; its last line: {stray}" if stray else "")) from None
    except (ProxyStartError, ValueError) as e:
        await stop_child(child)
        raise ProxyStartError(e.message if isinstance(e, ProxyStartError) else f"{failed}: {e}") from None
    except BaseException:   # a stop signal (Stopped, a cancellation) while it started: it does not outlive the proxy
        kill_tree(child)
        child.stdin.close()
        with contextlib.suppress(BaseException):   # its pipes closed while the loop runs (else a warning at exit)
            await asyncio.wait_for(child.wait(), STOP_TIMEOUT_S)
        raise
    try:
        if "error" in message:
            raise ValueError(f"it answered initialize with an error: {message['error']!r}"[:300])
        init = types.InitializeResult.model_validate(message.get("result"))
        if init.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
            raise ValueError(f"it speaks protocol version {init.protocol_version!r}, not one of "
                             f"{list(HANDSHAKE_PROTOCOL_VERSIONS)}")
    except (ValueError, ValidationError) as e:
        await stop_child(child)
        raise ProxyStartError(f"{failed}: {describe(e) if isinstance(e, ValidationError) else e}") from None
    child.stdin.write(encode({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    return child, init


STDERR_RELAYS: set[asyncio.Task[None]] = set()   # held here: the loop keeps only weak references to tasks
STDERR_LINE = 16 * 1024        # a longer line of the child's stderr is relayed in parts


CONTROLS = {c: repr(chr(c))[1:-1] for c in (*range(32), *range(127, 160)) if c != 9}   # escaped at C speed


def server_says(line: bytes) -> str:
    """A line of the child's stderr as the proxy relays it: marked as the server's, its control characters escaped,
    so that it can neither pass for a line of the proxy's own ("veriguard mcp-proxy: shadow ... allowed") nor
    rewrite one on a terminal (a carriage return)."""
    text = line.decode("utf-8", "backslashreplace").rstrip("\r\n").translate(CONTROLS)
    shown = text if text.isprintable() else "".join(c if c.isprintable() or c == "\t" else repr(c)[1:-1] for c in text)
    return f"the MCP server's stderr: {shown}"


async def relay_stderr(stream: asyncio.StreamReader) -> None:
    """The child's stderr to the proxy's, each line marked as the server's (server_says), until the child closes it."""
    part, unyielded = b"", 0
    while chunk := await stream.read(STDERR_LINE):
        *lines, part = (part + chunk).split(b"\n")
        if len(part) >= STDERR_LINE:
            lines, part = [*lines, part], b""
        for line in lines:
            say(server_says(line))
        # a read of buffered data does not yield: a server writing without end held the loop, and a call took 1-4 s;
        # a yield each 1 MiB still reads more than the transport adds in a turn of the loop (256 KiB), so the buffer
        # does not grow
        unyielded += len(chunk)
        if unyielded >= 1 << 20:
            unyielded = 0
            await asyncio.sleep(0)
    if part:
        say(server_says(part))


async def stop_child(child: asyncio.subprocess.Process) -> None:
    """Close the child's input and give it STOP_TIMEOUT_S to exit, then terminate it, then kill it."""
    try:
        await _stop_child(child)
    finally:
        forget(child)


async def _stop_child(child: asyncio.subprocess.Process) -> None:
    if child.returncode is not None:
        return
    if child.stdin is not None:
        child.stdin.close()
    for end in (None, child.terminate, child.kill):
        if end is not None:
            try:
                end()
            except ProcessLookupError:
                return
        try:
            await asyncio.wait_for(child.wait(), STOP_TIMEOUT_S)
            return
        except TimeoutError:
            continue


def host_lines(source: IO[bytes]) -> Iterator[bytes | int]:
    """The host's lines, each of at most MAX_LINE bytes; for a longer one, its length (its bytes read and dropped up to
    its end): before, a line was read whole however long (a 100 MB line held 100 MB and more, then was parsed)."""
    while line := source.readline(MAX_LINE + 1):
        if len(line) <= MAX_LINE or line.endswith(b"\n"):
            yield line
            continue
        dropped = len(line)
        while (rest := source.readline(MAX_LINE)) and not rest.endswith(b"\n"):
            dropped += len(rest)
        yield dropped + len(rest)


def _pump(source: IO[bytes], loop: asyncio.AbstractEventLoop, lines: asyncio.Queue[bytes | int | None]) -> None:
    """The host's lines into the loop (a thread: stdin may be a pipe, a file or a terminal)."""
    try:
        for line in host_lines(source):
            loop.call_soon_threadsafe(lines.put_nowait, line)
    except (OSError, ValueError):
        pass
    finally:
        try:
            loop.call_soon_threadsafe(lines.put_nowait, None)
        except RuntimeError:   # the loop is closed: the proxy is already done
            pass


async def serve(guard: Guard, command: str, args: Sequence[str], *, context: Context = None,
                timeout_s: float = DEFAULT_TIMEOUT_S, start_timeout_s: float = START_TIMEOUT_S,
                cwd: str | Path | None = None, host_in: IO[bytes] | None = None,
                host_out: IO[bytes] | None = None, unchecked: frozenset[str] = frozenset(),
                decision_timeout_s: float = DEFAULT_DECISION_TIMEOUT_S) -> int:
    """Start the child, then serve the host (this process's stdin and stdout) until it hangs up or SIGTERM or SIGINT
    stops the proxy (then that signal's number is returned, else 0); `unchecked` names the capabilities (UNCHECKED)
    forwarded without a decision."""
    if shutil.which(command) is None:
        raise ProxyStartError(f"cannot start the MCP server: no executable {command!r} (give a path or a command "
                              "on PATH)")
    child, init = await start_child(command, args, start_timeout_s, cwd)
    proxy = Proxy(guard, child, init, context, timeout_s, host_out or sys.stdout.buffer, unchecked, decision_timeout_s,
                  start=lambda: start_child(command, args, start_timeout_s, cwd))
    lines: asyncio.Queue[bytes | int | None] = asyncio.Queue()
    # stdin read through a reader of its own: a signal leaves the pump blocked in it, and the interpreter's exit must
    # not wait for the lock of sys.stdin's reader (a fatal error at shutdown)
    source = host_in or open(os.dup(sys.stdin.fileno()), "rb")
    threading.Thread(target=_pump, args=(source, asyncio.get_running_loop(), lines), daemon=True).start()
    proxy.read_in_background()
    proxy.list_first()
    loop, stopped_by = asyncio.get_running_loop(), list[signal.Signals]()

    def stop(signum: signal.Signals) -> None:   # calls in flight refused and recorded, no traceback
        if not stopped_by:
            stopped_by.append(signum)
            proxy.shut_down(f"the proxy was stopped by {signum.name}")
            lines.put_nowait(None)
    for signum in STOP_SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:   # ignored when started so (nohup, a background job)
            loop.add_signal_handler(signum, stop, signum)
    if ADOPTING:   # an adopted orphan that ends is reaped, not left a zombie of the proxy
        loop.add_signal_handler(signal.SIGCHLD, reap_adopted)
    proxy.wake = lambda: lines.put_nowait(None)
    try:
        while (line := await lines.get()) is not None:
            proxy.host_line(line)
        # lines read before the end came (a stop signal, the host's output gone) are served too: their calls refused
        # unrun (the child or the host is gone), recorded; before, they were dropped with no record. Until the pump has
        # been quiet for DRAIN_QUIET_S (at most DRAIN_S): one turn of the loop was not always enough for the lines it
        # had read in the same chunk as the one that ended the loop (a loaded machine, CI: no record of them)
        drained_by = loop.time() + DRAIN_S
        while True:
            while not lines.empty():
                if (line := lines.get_nowait()) is not None:
                    proxy.host_line(line)
            if loop.time() >= drained_by:
                break
            await asyncio.sleep(DRAIN_QUIET_S)
            if lines.empty():
                break
        # the host is done: the calls it sent are decided first, and those the child runs end (answered, or at their
        # --timeout) before its input is closed; before, a call still running 2 s after the host's last line was
        # killed with the child, its record an allow with nothing after it
        while proxy.deciding or proxy.replacing or proxy.waiting or (not stopped_by and proxy.running()):
            await asyncio.sleep(0.01)
    finally:
        if proxy.waiting:   # ended otherwise (a bug, a cancellation): the held calls are refused, recorded
            proxy.child_gone("the proxy stopped while it held calls")
        for signum in (*STOP_SIGNALS, signal.SIGCHLD):
            loop.remove_signal_handler(signum)
        await stop_child(proxy.child)
        for task in list(proxy.tasks):
            task.cancel()
    return int(stopped_by[0]) if stopped_by else 0


def run_proxy(build: str | Path, command: str, args: Sequence[str], *, context: Context = None,
              strategy: str | None = None, mode: str | None = None, halt_after: int | None = None,
              log: str | Path | None = None, log_key: str | Path | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
              start_timeout_s: float = START_TIMEOUT_S, accept_unproved: bool = False,
              unchecked: frozenset[str] = frozenset(), expect_sha256: str | None = None,
              log_checkpoint: str | Path | None = None,
              decision_timeout_s: float = DEFAULT_DECISION_TIMEOUT_S) -> int:
    """Load the build and serve until the host hangs up (0) or a signal stops the proxy (its number); raises
    PolicyLoadError, GuardConfigError, a KeyFileError or ProxyStartError when it cannot start."""
    # Until serve takes them over, a stop signal raises Stopped: nothing was read from the host yet, and a server being
    # started is killed with its helpers (start_child); main says so and exits 128 + the signal's number.
    before = hold_stop_signals(stop_early)
    try:
        guard = Guard.from_build(build, strategy=strategy, mode=mode, halt_after=halt_after, log=log, log_key=log_key,
                                 log_checkpoint=log_checkpoint, accept_unproved=accept_unproved,
                                 expect_sha256=expect_sha256)
        # The loop's thread waits for the GIL after each system call while decisions run on threads: at Python's 5 ms
        # it answered a ping 20 s late behind 8 slow decisions (each refusal it logged took 0.5 s); this process is the
        # proxy.
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        adopt_orphans()
        return asyncio.run(serve(guard, command, args, context=context, timeout_s=timeout_s,
                                 start_timeout_s=start_timeout_s, unchecked=unchecked,
                                 decision_timeout_s=decision_timeout_s))
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


def context_file(path: Path) -> Callable[[], Mapping[str, Any]]:
    """The facts in a JSON object file, read again at every call (an unreadable file refuses the call, and so does
    one that is not a regular file: a FIFO put in its place would block the proxy at the next call)."""
    def read() -> Mapping[str, Any]:
        try:
            data = read_regular_file(path)
        except FileRefused as e:
            raise ValueError(f"the context file {path}: {e.why}") from None
        facts = strict_loads(data)
        if not isinstance(facts, dict):
            raise ValueError(f"{path} must hold a JSON object, not {type(facts).__name__}")
        return facts
    return read


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="veriguard mcp-proxy", usage="%(prog)s --build DIR [options] -- COMMAND [ARGS...]",
                                description="Serve an MCP server's tools behind a proved policy: every tools/call is "
                                "decided before it reaches the server (COMMAND, started as a child).")
    p.add_argument("--build", required=True, type=Path, help="the frozen policy build, DIR/<name>")
    p.add_argument("--expect-sha256", metavar="HEX", help="refuse the build unless this is the sha256 of its "
                   "certificate.json (the whole build) or of its policy.py (the policy alone: its certificate's "
                   "hashes.policy)")
    p.add_argument("--context", type=Path, help="a JSON object of the facts beside each call (read at every call)")
    p.add_argument("--log", type=Path, help="append a hash-chained decision record per call to this JSONL file")
    p.add_argument("--log-key", type=Path, help="the private key that signs the log (`veriguard keys new`)")
    p.add_argument("--log-checkpoint", type=Path, help="keep a copy of the log's signed head in this file too, out of "
                   "reach of whoever can write the log: a log rolled back behind it, or another log put in its "
                   "place, refuses every call")
    p.add_argument("--strategy", help="override the spec's [enforcement] strategy")
    p.add_argument("--accept-unproved", action="store_true", help="load a build whose certificate is not PROVED "
                   "(knowingly: for trying a policy out, never for guarding an agent)")
    p.add_argument("--mode", choices=MODES, help="shadow: decide and log, never refuse (default: the spec's, "
                   "else enforce)")
    p.add_argument("--halt-after", type=int, help="replan_halt: halt after this many denials in a row")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="seconds the server has per request "
                   f"(default {DEFAULT_TIMEOUT_S:g})")
    p.add_argument("--decision-timeout", type=float, default=DEFAULT_DECISION_TIMEOUT_S, help="seconds the policy "
                   "has to decide a call (reading the context, extracting, deciding, logging); a call not decided in "
                   f"time is refused, recorded (default {DEFAULT_DECISION_TIMEOUT_S:g})")
    p.add_argument("--unchecked", action="append", choices=UNCHECKED, default=[], metavar="GROUP",
                   help="also offer the server's resources, prompts or completions, forwarded WITHOUT a policy "
                   "decision (repeatable; default: tools only, since the policy decides tool calls only)")
    p.add_argument("--start-timeout", type=float, default=START_TIMEOUT_S, help="seconds the server has to start "
                   f"and complete the MCP handshake (default {START_TIMEOUT_S:g})")
    return p


def log_problem(log: Path | None) -> str:
    """What is wrong with --log ("" when nothing): an existing path that is not a regular file (a folder, a FIFO, a
    symbolic link, which the log never writes through), or a folder that does not exist. Before, the proxy started
    and refused every call (the log could not be written)."""
    if log is None:
        return ""
    if os.path.lexists(log) and (log.is_symlink() or not log.is_file()):
        return f"the --log file {log} exists and is not a regular file (a folder, a FIFO or a symbolic link)"
    if not log.parent.is_dir():
        return f"the --log file's folder {log.parent} does not exist or is not a folder"
    return ""


def checkpoint_problem(checkpoint: Path | None, log: Path | None) -> str:
    """What is wrong with --log-checkpoint ("" when nothing): given without --log, empty, or an existing path that
    is not a readable head (a folder, a FIFO, a link, another file). An absent one is written with the first record."""
    if checkpoint is None:
        return ""
    if log is None:
        return "--log-checkpoint keeps a copy of the log's head, and no --log was given"
    if not os.path.lexists(checkpoint):
        return ""
    from veriguard.enforce.decision_log import DecisionLogError, read_head

    try:
        read_head(checkpoint)
    except DecisionLogError as e:
        return f"the --log-checkpoint file {checkpoint}: {e.message} ({e.fix})"
    return ""


def main(argv: Sequence[str] | None = None) -> int:
    """`veriguard mcp-proxy --build DIR [OPTIONS] -- COMMAND [ARGS...]`; 2 on bad input or a failed start."""
    argv = list(sys.argv[1:] if argv is None else argv)
    with said_later():
        return serve_main(argv)


def serve_main(argv: list[str]) -> int:
    cut = argv.index("--") if "--" in argv else len(argv)
    p = parser()
    try:
        opts = p.parse_args(argv[:cut])
    except SystemExit as e:  # --help, or argparse's own message for a bad option
        return 0 if e.code == 0 else 2
    if missing := platform_missing():   # before: an AttributeError (no signal.SIGHUP) at import, a traceback
        say(str(PlatformUnsupported(missing)))
        return 2
    if cut >= len(argv) - 1:
        p.print_usage(sys.stderr)
        say("error: give the MCP server's command after `--`, e.g. -- python server.py")
        return 2
    for flag, value in (("--timeout", opts.timeout), ("--start-timeout", opts.start_timeout),
                        ("--decision-timeout", opts.decision_timeout)):
        if not 0 < value < float("inf"):  # inf passed `> 0` and made a hung server hang the proxy for good
            say(f"error: {flag} must be a positive number of seconds, finite, not {value:g}")
            return 2
    if opts.context is not None and not opts.context.is_file():
        say(f"error: the context file {opts.context} does not exist or is not a regular file")
        return 2
    problem = log_problem(opts.log) or checkpoint_problem(opts.log_checkpoint, opts.log)
    if problem:
        say(f"error: {problem}")
        return 2
    command, *args = argv[cut + 1:]
    try:
        stopped_by = run_proxy(opts.build, command, args, context=context_file(opts.context) if opts.context else None,
                               strategy=opts.strategy, mode=opts.mode, halt_after=opts.halt_after, log=opts.log,
                               log_key=opts.log_key, timeout_s=opts.timeout, start_timeout_s=opts.start_timeout,
                               accept_unproved=opts.accept_unproved, unchecked=frozenset(opts.unchecked),
                               expect_sha256=opts.expect_sha256, log_checkpoint=opts.log_checkpoint,
                               decision_timeout_s=opts.decision_timeout)
    except (PolicyLoadError, ProxyStartError, VeriguardError, ValueError) as e:
        # ValueError: a bad guard setting, or Monitor.from_build's unknown strategy; VeriguardError: a bad log key
        say(str(e) if isinstance(e, VeriguardError) else f"error: {e}")
        return 2
    except Stopped as e:   # before the proxy served (loading the build, starting the server): nothing ran
        say(f"stopped by {e.signum.name} before it served: no call was read, and the MCP server was stopped")
        return 128 + e.signum
    except KeyboardInterrupt:   # SIGINT where the signal was not the proxy's to handle
        return 128 + signal.SIGINT
    return 128 + stopped_by if stopped_by else 0   # a signal's usual exit status


if __name__ == "__main__":
    sys.exit(main())
