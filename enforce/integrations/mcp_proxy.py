"""A stdio MCP server that puts a real MCP server behind a proved policy.

    veriguard mcp-proxy --build DIR [--context FILE] -- COMMAND [ARGS...]

The proxy starts COMMAND as its child (the real server), speaks MCP to the host on its own stdin and
stdout, forwards tools/list, resources and prompts, and decides every tools/call before forwarding
it. A refusal is a CallToolResult with isError and the reason as text, never a JSON-RPC error, so
the model reads it and can re-plan. When the policy, the extractor or the child fails (a crash, no
answer within the timeout, an answer that is not MCP), the call is refused and the result says why.

The observation the policy reads is the call in MCP shape, {"method": "tools/call", "params":
{"name", "arguments"}}, beside the facts of the context file (a JSON object, read again for every
call so that a ledger kept by another process stays current). MCP gives a server no way to end the
host's run: terminate, like a halt, refuses this call and every later one.

Not forwarded: notifications and requests from the child (list changes, progress, logging,
sampling, elicitation), resource subscriptions. Requests whose params are not MCP at all (a tools/call
whose `arguments` is not an object) are answered by the SDK with JSON-RPC INVALID_PARAMS before the
proxy sees them; they never reach the child either.

Uses the mcp SDK v2 (`mcp>=2.3,<3`): its handlers turn exceptions into JSON-RPC errors, so every
refusal here is built as a result.
"""
from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable, Mapping, Sequence

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from veriguard.contracts.errors import VeriguardError
from veriguard.enforce.guard import MODES, Context, Guard
from veriguard.enforce.loader import PolicyLoadError
from veriguard.enforce.strict_json import loads as strict_loads

RUN = "mcp"                    # one host session per proxy process
DEFAULT_TIMEOUT_S = 30.0
START_TIMEOUT_S = 60.0         # starting the child and its handshake (an interpreter with the SDK takes seconds)
FORWARDED: dict[str, tuple[tuple[str, type[Any], type[Any]], ...]] = {   # child capability -> handlers
    "tools": (("on_list_tools", types.ListToolsRequest, types.ListToolsResult),),
    "resources": (("on_list_resources", types.ListResourcesRequest, types.ListResourcesResult),
                  ("on_list_resource_templates", types.ListResourceTemplatesRequest,
                   types.ListResourceTemplatesResult),
                  ("on_read_resource", types.ReadResourceRequest, types.ReadResourceResult)),
    "prompts": (("on_list_prompts", types.ListPromptsRequest, types.ListPromptsResult),
                ("on_get_prompt", types.GetPromptRequest, types.GetPromptResult)),
    "completions": (("on_completion", types.CompleteRequest, types.CompleteResult),),
}


@dataclass
class StrayLines:
    """Remembers the child's last line that was not JSON-RPC, to say why a call got no answer."""

    last: str = ""

    async def record(self, message: Any) -> None:
        if isinstance(message, ValidationError) and message.errors():
            self.last = repr(message.errors()[0].get("input"))[:200]   # the line itself
        elif isinstance(message, Exception):
            self.last = describe(message)


class ProxyStartError(Exception):
    """The proxy cannot start: the child would not run or did not complete the MCP handshake."""


def refusal(reason: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=reason)], is_error=True)


def describe(e: BaseException) -> str:
    if isinstance(e, ValidationError):
        problems = "; ".join(f"{'.'.join(map(str, err['loc'])) or 'the answer'}: {err['msg']}"
                             for err in e.errors()[:3])
        return f"its answer is not valid MCP ({problems})"
    return f"{type(e).__name__}: {e}"[:300]


def say(text: str) -> None:
    print(f"veriguard mcp-proxy: {text}", file=sys.stderr, flush=True)


@dataclass
class Proxy:
    """Decides and forwards the host's requests to one child session."""

    guard: Guard
    child: ClientSession
    context: Context
    timeout_s: float
    stray: StrayLines

    async def call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            return await self._call_tool(str(ctx.request_id), params)
        except Exception as e:  # a proxy bug: refuse, never answer with a protocol error
            say(f"refused tools/call {params.name!r}: the proxy failed: {type(e).__name__}: {e}")
            return refusal(f"fail closed: the policy proxy failed: {type(e).__name__}: {e}")

    async def _call_tool(self, call_id: str, params: types.CallToolRequestParams) -> types.CallToolResult:
        call = {"method": "tools/call", "params": {"name": params.name, "arguments": params.arguments}}
        outcome = self.guard.check(call, context=self.context, action_id=call_id, run=RUN, integration="mcp_proxy",
                                   tool=str(params.name))
        if outcome.message:
            say(f"{'refused' if not outcome.allowed else 'shadow'} tools/call {params.name!r} (id {call_id}): "
                f"{outcome.message}")
        if not outcome.allowed:
            return refusal(outcome.message)
        try:
            with anyio.fail_after(self.timeout_s):   # exactly what was decided; the host validates the result
                result = await self.child.send_request(types.CallToolRequest(params=types.CallToolRequestParams(
                    name=params.name, arguments=params.arguments)), types.CallToolResult)
        except TimeoutError:
            stray = f"; it wrote a line that is not MCP: {self.stray.last}" if self.stray.last else ""
            return self._failed(params.name, f"the MCP server did not answer within {self.timeout_s:g} s{stray}")
        except MCPError as e:
            if e.code == types.CONNECTION_CLOSED:
                return self._failed(params.name, "the MCP server is gone (it exited or closed its output)")
            return self._failed(params.name, f"the MCP server answered with error {e.code}: {e.message}")
        except Exception as e:  # an answer that is not a CallToolResult, a broken pipe
            return self._failed(params.name, f"the MCP server failed: {describe(e)}")
        return result

    def _failed(self, tool: str, reason: str) -> types.CallToolResult:
        say(f"refused tools/call {tool!r}: {reason}")
        return refusal(f"The call was allowed by the policy but did not complete: {reason}.")

    def forward(self, request_type: type[Any], result_type: type[Any]) -> Callable[[Any, Any], Awaitable[Any]]:
        async def handler(ctx: Any, params: Any) -> Any:
            with anyio.fail_after(self.timeout_s):
                return await self.child.send_request(request_type(params=params), result_type)
        return handler


def proxy_server(proxy: Proxy, init: types.InitializeResult) -> Server[Any]:
    """An MCP server offering what the child offers, with tools/call decided by the proxy."""
    handlers: dict[str, Any] = {}
    for capability, entries in FORWARDED.items():
        if capability == "tools" or getattr(init.capabilities, capability, None) is not None:
            for name, request_type, result_type in entries:
                handlers[name] = proxy.forward(request_type, result_type)
    info = init.server_info
    server: Server[Any] = Server(f"veriguard-proxy:{info.name}", version=info.version, instructions=init.instructions,
                                 on_call_tool=proxy.call_tool, **handlers)
    server.middleware = []   # the SDK's OpenTelemetry middleware: the proxy installs no exporter, so it only costs time
    return server


async def serve(guard: Guard, command: str, args: Sequence[str], *, context: Context = None,
                timeout_s: float = DEFAULT_TIMEOUT_S, start_timeout_s: float = START_TIMEOUT_S,
                cwd: str | Path | None = None) -> None:
    """Start the child, then serve the host on this process's stdin and stdout until it hangs up."""
    if shutil.which(command) is None:
        raise ProxyStartError(f"cannot start the MCP server: no executable {command!r} (give a path or a command "
                              "on PATH)")
    server_params = StdioServerParameters(command=command, args=list(args), env=dict(os.environ), cwd=cwd)
    stray = StrayLines()
    async with stdio_client(server_params, errlog=sys.stderr) as (read, write):
        async with ClientSession(read, write, message_handler=stray.record) as child:
            try:
                with anyio.fail_after(start_timeout_s):
                    init = await child.initialize()
            except Exception as e:
                raise ProxyStartError(f"the MCP server {command!r} did not complete the MCP handshake within "
                                      f"{start_timeout_s:g} s: {type(e).__name__}: {e}") from e
            server = proxy_server(Proxy(guard, child, context, timeout_s, stray), init)
            async with stdio_server() as (host_read, host_write):
                await server.run(host_read, host_write, server.create_initialization_options())


def run_proxy(build: str | Path, command: str, args: Sequence[str], *, context: Context = None,
              strategy: str | None = None, mode: str | None = None, halt_after: int | None = None,
              log: str | Path | None = None, log_key: str | Path | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
              start_timeout_s: float = START_TIMEOUT_S, accept_unproved: bool = False) -> None:
    """Load the build and serve until the host hangs up (raises PolicyLoadError, GuardConfigError, a
    KeyFileError or ProxyStartError when it cannot start)."""
    guard = Guard.from_build(build, strategy=strategy, mode=mode, halt_after=halt_after, log=log, log_key=log_key,
                             accept_unproved=accept_unproved)
    try:
        anyio.run(lambda: serve(guard, command, args, context=context, timeout_s=timeout_s,
                                start_timeout_s=start_timeout_s))
    except BaseExceptionGroup as group:  # the SDK's task groups wrap what failed inside them
        start, _ = group.split((ProxyStartError, OSError))
        if start is None:
            raise
        raise ProxyStartError(str(_first(start))) from group


def _first(group: BaseException) -> BaseException:
    while isinstance(group, BaseExceptionGroup):
        group = group.exceptions[0]
    return group


def context_file(path: Path) -> Callable[[], Mapping[str, Any]]:
    """The facts in a JSON object file, read again at every call (an unreadable file refuses the call)."""
    def read() -> Mapping[str, Any]:
        facts = strict_loads(path.read_bytes())
        if not isinstance(facts, dict):
            raise ValueError(f"{path} must hold a JSON object, not {type(facts).__name__}")
        return facts
    return read


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="veriguard mcp-proxy", usage="%(prog)s --build DIR [options] -- COMMAND [ARGS...]",
                                description="Serve an MCP server's tools behind a proved policy: every tools/call is "
                                "decided before it reaches the server (COMMAND, started as a child).")
    p.add_argument("--build", required=True, type=Path, help="the frozen policy build, DIR/<name>")
    p.add_argument("--context", type=Path, help="a JSON object of the facts beside each call (read at every call)")
    p.add_argument("--log", type=Path, help="append a hash-chained decision record per call to this JSONL file")
    p.add_argument("--log-key", type=Path, help="the private key that signs the log (`veriguard keys new`)")
    p.add_argument("--strategy", help="override the spec's [enforcement] strategy")
    p.add_argument("--accept-unproved", action="store_true", help="load a build whose certificate is not PROVED "
                   "(knowingly: for trying a policy out, never for guarding an agent)")
    p.add_argument("--mode", choices=MODES, help="shadow: decide and log, never refuse (default: the spec's, "
                   "else enforce)")
    p.add_argument("--halt-after", type=int, help="replan_halt: halt after this many denials in a row")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="seconds the server has per request "
                   f"(default {DEFAULT_TIMEOUT_S:g})")
    p.add_argument("--start-timeout", type=float, default=START_TIMEOUT_S, help="seconds the server has to start "
                   f"and complete the MCP handshake (default {START_TIMEOUT_S:g})")
    return p


class OneLine(logging.Formatter):
    """The SDK's log lines on stderr without tracebacks (the host shows stderr to a person)."""

    def format(self, record: logging.LogRecord) -> str:
        error = record.exc_info[1] if record.exc_info else None
        return f"veriguard mcp-proxy: {record.name}: {record.getMessage()}" + (
            f" ({type(error).__name__})" if error is not None else "")


def main(argv: Sequence[str] | None = None) -> int:
    """`veriguard mcp-proxy --build DIR [OPTIONS] -- COMMAND [ARGS...]`; 2 on bad input or a failed start."""
    argv = list(sys.argv[1:] if argv is None else argv)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLine())
    sdk_log = logging.getLogger("mcp")
    sdk_log.handlers, sdk_log.propagate = [handler], False
    cut = argv.index("--") if "--" in argv else len(argv)
    p = parser()
    try:
        opts = p.parse_args(argv[:cut])
    except SystemExit as e:  # --help, or argparse's own message for a bad option
        return 0 if e.code == 0 else 2
    if cut >= len(argv) - 1:
        p.print_usage(sys.stderr)
        say("error: give the MCP server's command after `--`, e.g. -- python server.py")
        return 2
    for flag, value in (("--timeout", opts.timeout), ("--start-timeout", opts.start_timeout)):
        if not value > 0:
            say(f"error: {flag} must be a positive number of seconds, not {value:g}")
            return 2
    if opts.context is not None and not opts.context.is_file():
        say(f"error: the context file {opts.context} does not exist")
        return 2
    command, *args = argv[cut + 1:]
    try:
        run_proxy(opts.build, command, args, context=context_file(opts.context) if opts.context else None,
                  strategy=opts.strategy, mode=opts.mode, halt_after=opts.halt_after, log=opts.log,
                  log_key=opts.log_key, timeout_s=opts.timeout, start_timeout_s=opts.start_timeout,
                  accept_unproved=opts.accept_unproved)
    except (PolicyLoadError, ProxyStartError, VeriguardError, ValueError) as e:
        # ValueError: a bad guard setting, or Monitor.from_build's unknown strategy; VeriguardError: a bad log key
        say(f"error: {e}")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
