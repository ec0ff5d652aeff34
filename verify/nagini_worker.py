"""The Nagini worker process: one JVM, one verification at a time, JSON lines in and out.

Run as `python -m veriguard.verify.nagini_worker` by `verify.nagini.NaginiWorker`; the rest of the
product imports only its constants. Requests on stdin: {"id", "path", "timeout", "counterexample", "select"}
("select": names of the functions to verify, the others seen through their contracts; absent or empty: all).
Replies on the original stdout (the JVM's own output is sent to stderr):
{"id", "status": "proved"|"failed"|"timeout"|"translation_error"|"crash", "errors": [...], "seconds"}.
Two fixes over stock Nagini 1.3.1 (notes/nagini.md 1.6, 1.7): strings in counterexamples are
decoded to their values, and a Silicon timeout is a result instead of a crash.
"""
from __future__ import annotations

import ast
import json
import os
import sys
import tempfile
import time
import traceback
from typing import Any

PROTOCOL_FD: Any = None
BV_SIZE = 8
# moreJoins=2 joins branches after each conditional: a policy with n independent rules has 2**n paths otherwise
SILICON_ARGS = ("--numberOfErrorsToReport=0", "--moreJoins=2")


def _reply(obj: dict[str, Any]) -> None:
    PROTOCOL_FD.write(json.dumps(obj) + "\n")
    PROTOCOL_FD.flush()


def _start_jvm() -> Any:
    import jpype
    from nagini_translation.lib import config
    from nagini_translation.lib.jvmaccess import JVM
    import nagini_translation.main as nmain

    heap = os.environ.get("VERIGUARD_JVM_HEAP", "768m")
    # the parallel collector: os_agent's proof 66.5 s then 52.9 s in one worker against 71.2 s then 62.2 s with the
    # serial one, payments 15.7 / 11.7 s against 18.0 / 13.5 s (2 cores, 2026-11-28); a larger heap gained nothing
    jpype.startJVM(jpype.getDefaultJVMPath(), "-Djava.class.path=" + config.classpath, "-Xss32m",
                   f"-Xmx{heap}", "-XX:+UseParallelGC", convertStrings=True)
    jvm = JVM(config.classpath)
    nmain.sil_programs = nmain.load_sil_files(jvm, 8)
    _patch_string_decoding()
    return jvm


def _patch_string_decoding() -> None:
    from nagini_translation.models import converter as conv

    def decode(model: Any, ref: Any) -> str | None:
        vals = model.get("str___val__")
        if not isinstance(vals, dict):
            return None
        seq = vals.get(("$Snap.unit", ref)) or vals.get((ref,))
        if seq is None or seq == "#unspecified":
            return None
        n = model.get("Seq_length", {}).get((seq,))
        if n is None:
            return None
        idx = model.get("Seq_index", {})
        return "".join("?" if idx.get((seq, str(i))) is None else chr(int(idx[(seq, str(i))])) for i in range(int(n)))

    original = conv.Converter.convert_value

    def convert_value(self: Any, val: Any, t: Any, name: Any = None) -> Any:
        if getattr(t, "python_class", None) is not None and t.python_class.name == "str":
            decoded = decode(self.model, val)
            if decoded is not None:
                return repr(decoded)
        return original(self, val, t, name)

    conv.Converter.convert_value = convert_value


def _function_at(path: str, line: int) -> str:
    try:
        tree = ast.parse(open(path, encoding="utf-8").read())
    except (OSError, SyntaxError):
        return ""
    best = ""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.lineno <= line <= (node.end_lineno or node.lineno):
            best = node.name
    return best


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (bool, int, float)) or value is None:
        return value
    return str(value)


def _error_dict(e: Any, path: str, lines: list[str]) -> dict[str, Any]:
    pos = e.position
    in_file = bool(pos.file_name) and os.path.basename(str(pos.file_name)) == os.path.basename(path)
    line = pos.line if in_file else 0
    model = e._inputs
    counterexample = None
    if model is not None:
        counterexample = {"inputs": _plain(model.input_store or {}), "final": _plain(model.current_store or {}),
                          "heap": _plain(model.heap or {}), "old_heap": _plain(model.old_heap or {})}
    return {"file": str(pos.file_name), "code": e.full_id, "message": e.message, "reason": e.reason.string(False), "line": line,
            "col": (pos.column + 1) if in_file else 0, "function": _function_at(path, line) if line else "",
            "source": lines[line - 1].strip() if 0 < line <= len(lines) else "",
            "branch_conditions": list(e.bcs or []), "counterexample": counterexample}


def _translation_error(exc: BaseException, path: str, lines: list[str]) -> dict[str, Any]:
    from nagini_translation.lib.errors import rules  # noqa: F401  (loads the catalogue)
    from nagini_translation.lib.typeinfo import TypeException
    from nagini_translation.lib.util import InvalidProgramException, UnsupportedException

    if isinstance(exc, TypeException):
        msgs = [str(m) for m in exc.messages]
        line = 0
        for m in msgs:
            parts = m.split(":")
            if len(parts) > 2 and parts[1].isdigit():
                line = int(parts[1])
                break
        return {"code": "translation.type", "message": "; ".join(msgs)[:2000], "line": line, "col": 0,
                "function": _function_at(path, line) if line else "",
                "source": lines[line - 1].strip() if 0 < line <= len(lines) else ""}
    node = getattr(exc, "node", None)
    line = getattr(node, "lineno", 0) or 0
    if isinstance(exc, UnsupportedException):
        code, message = "translation.unsupported", str(exc.args[0]) if exc.args else "unsupported construct"
    elif isinstance(exc, InvalidProgramException):
        code, message = f"translation.invalid.{exc.code}", exc.message or exc.code
    else:
        code, message = "translation.crash", f"{type(exc).__name__}: {exc}"
    return {"code": code, "message": message, "line": line, "col": (getattr(node, "col_offset", 0) or 0) + 1,
            "function": _function_at(path, line) if line else "",
            "source": lines[line - 1].strip() if 0 < line <= len(lines) else ""}


def _not_in_program(jvm: Any, modules: list[Any], prog: Any, select: frozenset[str]) -> set[str]:
    """The selected names that have no method or function in the program that Silicon will verify."""
    if not select:
        return set()
    members = {str(m.name()) for m in jvm.scala.jdk.CollectionConverters.SeqHasAsJava(prog.methods()).asJava()}
    members |= {str(f.name()) for f in jvm.scala.jdk.CollectionConverters.SeqHasAsJava(prog.functions()).asJava()}
    found = {name for m in modules for table in (m.methods, m.functions, m.predicates)
             for name, node in table.items() if name in select and node.sil_name in members}
    return set(select) - found


def selection_slice(source: str, select: frozenset[str]) -> str | None:
    """`source` with every top-level function that no selected function reaches (through the names it uses,
    transitively) blanked out line for line, so that positions stay the same; None when nothing is left out.

    Nagini type-checks and translates the whole file before it picks the selected members (mypy alone took 5.2 s
    of os_agent's translation, most of it in the property lemmas' quantifiers, 2026-11-28). A function nothing
    selected reaches contributes nothing a selected proof can use: taking it out removes declarations from the
    Viper program and never an assumption the proof rests on, so what proves in the slice proves in the file."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    if not select or not select <= funcs.keys():
        return None
    outside = [n for n in tree.body if not isinstance(n, ast.FunctionDef)]
    reached: set[str] = set()
    todo = [*select, *(n.id for stmt in outside for n in ast.walk(stmt) if isinstance(n, ast.Name))]
    while todo:
        name = todo.pop()
        if name in reached or name not in funcs:
            continue
        reached.add(name)
        todo += [n.id for n in ast.walk(funcs[name]) if isinstance(n, ast.Name)]
    dropped = [f for name, f in funcs.items() if name not in reached]
    if not dropped:
        return None
    lines = source.splitlines()
    for f in dropped:
        first = min([f.lineno, *(d.lineno for d in f.decorator_list)])
        for i in range(first - 1, f.end_lineno or f.lineno):
            lines[i] = ""
    return "\n".join(lines) + "\n"


def verify(jvm: Any, path: str, timeout: int, *, counterexample: bool,
           select: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Verify `path`; with a selection, only what the selected functions reach goes to Nagini (a copy of the file
    under the same name, the others blanked: `selection_slice`), and the errors name `path` as before."""
    sliced = selection_slice(open(path, encoding="utf-8").read(), select)
    if sliced is None:
        return _verify(jvm, path, timeout, counterexample=counterexample, select=select)
    with tempfile.TemporaryDirectory(prefix="veriguard-slice-") as tmp:
        copy = os.path.join(tmp, os.path.basename(path))
        with open(copy, "w", encoding="utf-8") as fh:
            fh.write(sliced)
        res = _verify(jvm, copy, timeout, counterexample=counterexample, select=select)
    for e in res.get("errors", []):
        for key in ("file", "message"):
            if isinstance(e.get(key), str):
                e[key] = e[key].replace(copy, path)
    return res


def _verify(jvm: Any, path: str, timeout: int, *, counterexample: bool,
            select: frozenset[str] = frozenset()) -> dict[str, Any]:
    from nagini_translation.lib import config
    from nagini_translation.lib.errors import error_manager  # noqa: F401
    import nagini_translation.main as nmain
    from nagini_translation.verifier import Failure, Silicon

    lines = open(path, encoding="utf-8").read().splitlines()
    config.obligation_config._info.pop("disable_all", None)  # translate() switches it on for good; reset per file
    try:
        translated = nmain.translate(path, jvm, BV_SIZE, selected=set(select), counterexample=counterexample)
    except Exception as exc:  # translator crashes on some unsupported syntax (e.g. string slicing)
        return {"status": "translation_error", "errors": [_translation_error(exc, path, lines)]}
    if translated is None:
        return {"status": "translation_error", "errors": [{"code": "translation.type", "message": "type check failed",
                                                          "line": 0, "col": 0, "function": "", "source": ""}]}
    modules, prog = translated
    unselected = _not_in_program(jvm, modules, prog, select)
    if unselected:  # an empty selection would verify nothing and say "proved"
        return {"status": "crash", "errors": [{"code": "worker.select", "message": "selected functions are missing from "
                                               f"the program Nagini built: {', '.join(sorted(unselected))}"}]}
    args = [f"--timeout={timeout}", *SILICON_ARGS]
    sil = Silicon(jvm, path, args, counterexample, False)
    try:
        raw = sil.silicon.verify(prog)
    finally:
        sil.stop()
    if not isinstance(raw, jvm.viper.silver.verifier.Failure):
        return {"status": "proved", "errors": []}
    it = raw.errors().toIterator()
    errs = []
    while it.hasNext():
        errs.append(it.next())
    timeouts = [e for e in errs if isinstance(e, jvm.viper.silver.verifier.TimeoutOccurred)]
    others = [e for e in errs if not isinstance(e, jvm.viper.silver.verifier.TimeoutOccurred)]
    converted = [_error_dict(e, path, lines) for e in Failure(others, jvm, modules, False).errors] if others else []
    unique: list[dict[str, Any]] = []
    for e in converted:
        key = (e["code"], e["line"], e["reason"], json.dumps(e["counterexample"], sort_keys=True))
        if key not in [(u["code"], u["line"], u["reason"], json.dumps(u["counterexample"], sort_keys=True)) for u in unique]:
            unique.append(e)
    if timeouts:
        return {"status": "timeout", "errors": unique,
                "message": f"Silicon timed out after {timeout} s (" + str(timeouts[0].readableMessage()) + ")"}
    return {"status": "failed", "errors": unique}


def main() -> None:
    global PROTOCOL_FD
    PROTOCOL_FD = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything the JVM or Nagini prints goes to stderr, never into the protocol
    sys.stdout = sys.stderr
    started = time.monotonic()
    try:
        jvm = _start_jvm()
    except Exception as exc:
        _reply({"id": "start", "status": "crash", "errors": [{"code": "worker.start", "message": repr(exc)}]})
        return
    _reply({"id": "start", "status": "ready", "seconds": round(time.monotonic() - started, 3), "pid": os.getpid()})
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        t0 = time.monotonic()
        try:
            res = verify(jvm, req["path"], int(req.get("timeout", 60)), counterexample=bool(req.get("counterexample", True)),
                         select=frozenset(req.get("select") or ()))
        except Exception as exc:
            res = {"status": "crash", "errors": [{"code": "worker.crash", "message": f"{type(exc).__name__}: {exc}",
                                                  "trace": traceback.format_exc()[-4000:]}]}
        res["id"] = req.get("id")
        res["seconds"] = round(time.monotonic() - t0, 3)
        _reply(res)


if __name__ == "__main__":
    main()
