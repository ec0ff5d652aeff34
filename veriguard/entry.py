"""The `veriguard` console script.

`veriguard hook ...` runs once per tool call of a coding agent, so it goes to the hook before
anything else is imported (the CLI's parser and its commands are not needed to decide a call);
every other command goes to veriguard.cli, which dispatches `hook` the same way when it is run as
`python -m veriguard.cli`.

A stop signal while the command's modules load (0.1-0.3 s of imports) is answered here, before any of them is
imported: before, a hook stopped there died by the signal or exited 1 with a KeyboardInterrupt traceback, both of
which Claude Code takes for a hook error and RUNS the tool; `mcp-proxy` printed the traceback or died unannounced.
Each command's own handlers take over once its module runs (veriguard.hook.main, mcp_proxy's); the interpreter's
own start before this module (about 20 ms) is out of any Python code's reach.
"""
from __future__ import annotations

import os
import signal
import sys
from typing import Any, Callable

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
