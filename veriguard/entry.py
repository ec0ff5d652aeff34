"""The `veriguard` console script.

`veriguard hook ...` runs once per tool call of a coding agent, so it goes to the hook before
anything else is imported (the CLI's parser and its commands are not needed to decide a call);
every other command goes to veriguard.cli, which dispatches `hook` the same way when it is run as
`python -m veriguard.cli`.

A stop signal while the command's modules load (0.1-0.3 s of imports) is answered here, before any of them is
imported: before, a hook stopped there died by the signal or exited 1 with a KeyboardInterrupt traceback, both of
which Claude Code takes for a hook error and RUNS the tool; `mcp-proxy` printed the traceback or died unannounced.
Each command's own handlers take over once its module runs (veriguard.hook.main, mcp_proxy's); the interpreter's
own start before this module (about 20 ms) is out of any Python code's reach. `python -m veriguard...` runs no
main() here: veriguard/__init__.py holds the same signals for it (hold_for_module).
"""
from __future__ import annotations

import os
import signal
import sys
from typing import Any, Callable, Sequence

# per command: the signals held while it loads, what it says when one comes, and its exit status (None: 128 + n)
LOADING: dict[str, tuple[tuple[str, ...], str, int | None]] = {
    # exit 2 is a denial whatever stdout holds (Claude Code reads stderr as the reason)
    "hook": (("SIGTERM", "SIGHUP", "SIGINT", "SIGQUIT"), "veriguard hook: stopped by {} while it started; denied", 2),
    "mcp-proxy": (("SIGTERM", "SIGINT", "SIGHUP"), "veriguard mcp-proxy: stopped by {} while it loaded: no call was "
                  "read and no MCP server was started", None),
}
OTHER = (("SIGINT",), "veriguard: interrupted", 130)   # the CLI's own answer to ^C (cli.main), before it is imported


def stopped_loading(said: str, status: int | None) -> Callable[[int, Any], None]:
    """A handler that ends the process at once, saying `said` (the signal's name in it) on stderr."""
    def stop(signum: int, _frame: Any) -> None:
        os.write(2, (said.format(signal.Signals(signum).name) + "\n").encode())
        os._exit(128 + signum if status is None else status)
    return stop


def hold_while_loading(command: str) -> Callable[[int, Any], None]:
    """`command`'s stop signals go to the handler returned (stopped_loading) until its own module sets its handlers;
    a signal ignored when the process started (nohup, a background job) stays ignored."""
    names, said, status = LOADING.get(command, OTHER)
    handler = stopped_loading(said, status)
    for name in names:
        signum = getattr(signal, name, None)
        if signum is not None and signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, handler)
    return handler


MODULE_COMMANDS = {"veriguard.hook": "hook", "veriguard.enforce.integrations.mcp_proxy": "mcp-proxy"}   # -m X: X's command


def run_as_module(orig_argv: Sequence[str], argv: Sequence[str]) -> tuple[str, list[str]]:
    """The module `python -m MODULE ARGS...` runs and its ARGS, read while the interpreter locates MODULE (then
    sys.argv is ["-m", *ARGS], and MODULE is the word before ARGS in sys.orig_argv, alone or joined to its -m); ("", [])
    for any other start (a script, -c, a library import)."""
    if list(argv[:1]) != ["-m"] or len(orig_argv) < len(argv) + 1:
        return "", []
    word = orig_argv[len(orig_argv) - len(argv)]
    module = word.split("m", 1)[1] if word.startswith("-") and "m" in word else word
    return module, list(argv[1:])


def hold_for_module(orig_argv: Sequence[str], argv: Sequence[str]) -> str:
    """`python -m veriguard.cli hook|mcp-proxy ...`, `python -m veriguard.hook ...` and `python -m
    veriguard.enforce.integrations.mcp_proxy ...` skip main(): veriguard/__init__.py calls this as the interpreter
    locates the module, so that their stop signals are held from there as the console script's are (before, the
    first 0.2 s of the module's imports were Python's default: a hook killed, and Claude Code ran the tool). Returns
    the command held ("" when none: another module, another command, a library import)."""
    module, args = run_as_module(orig_argv, argv)
    command = args[0] if module == "veriguard.cli" and args else MODULE_COMMANDS.get(module, "")
    if command not in LOADING:
        return ""
    hold_while_loading(command)
    return command


def main() -> int:
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    held = hold_while_loading(command)
    if command == "hook":
        from veriguard.hook import run

        run(sys.argv[2:])
    from veriguard.cli import main as cli

    if signal.getsignal(signal.SIGINT) is held and command not in LOADING:   # loaded: ^C is the CLI's again
        signal.signal(signal.SIGINT, signal.default_int_handler)
    return cli()
