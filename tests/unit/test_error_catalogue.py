"""contracts/error_catalogue.py lists exactly the dotted error codes the source raises, each with the
actor of the error class that raises it.

The scan reads the AST of every product module: calls of VeriguardError / ProviderError and their
subclasses (code first), calls of helpers that pass a `code` parameter on to one of them, and
`code=` keywords; a local variable is followed to the values assigned to it. A code made at run time
(an f-string, a concatenation) must be listed in BUILT by the expression that makes it; a code passed
through (`e.code`, a helper's parameter) is the caller's.
"""
from __future__ import annotations

import ast
import importlib
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from veriguard.contracts.error_catalogue import BUILT, CATALOGUE, Actor
from veriguard.contracts.errors import VeriguardError

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("contracts", "verify", "synth", "enforce", "providers", "veriguard")
CODE = re.compile(r"[a-z][a-z0-9_]*(\.[a-z0-9_]+)+")
ROOTS = {("contracts/errors.py", "VeriguardError"), ("providers/types.py", "ProviderError")}

Ref = tuple[str, str]  # (module file relative to ROOT, name defined there)


@dataclass
class Module:
    tree: ast.Module
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)
    imports: dict[str, Ref] = field(default_factory=dict)


def _file_of(module: str) -> str:
    parts = module.split(".")[1:] if module.startswith("veriguard.") else [""]
    if parts and parts[0] in FOLDERS[:-1]:
        return "/".join(parts) + ".py"
    return "/".join(["veriguard", *parts]) + ".py"


def _modules() -> dict[str, Module]:
    out = {}
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            m = Module(ast.parse(path.read_text(encoding="utf-8")))
            for node in ast.walk(m.tree):
                if isinstance(node, ast.ClassDef):
                    m.classes[node.name] = node
                elif isinstance(node, ast.FunctionDef):
                    m.functions.setdefault(node.name, node)
                elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("veriguard."):
                    for alias in node.names:
                        m.imports[alias.asname or alias.name] = (_file_of(node.module or ""), alias.name)
            out[str(path.relative_to(ROOT))] = m
    return out


def _resolve(modules: dict[str, Module], where: str, name: str) -> Ref:
    m = modules[where]
    if name in m.classes or name in m.functions or name not in m.imports:
        return where, name
    return m.imports[name]


def _assigned(fn: ast.FunctionDef | None, expr: ast.expr) -> list[ast.expr]:
    """A local variable passed as a code (`code, fix = "provider.auth", ...` then `fail(code, ...)`): the values
    the function assigns to it. A parameter, an attribute or anything else stays as it is: the caller's."""
    if fn is None or not isinstance(expr, ast.Name) or expr.id in {a.arg for a in fn.args.args + fn.args.kwonlyargs}:
        return [expr]
    values = []
    for node in ast.walk(fn):
        for target in node.targets if isinstance(node, ast.Assign) else []:
            if isinstance(target, ast.Name) and target.id == expr.id:
                values.append(node.value)
            elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                values += [v for e, v in zip(target.elts, node.value.elts) if isinstance(e, ast.Name) and e.id == expr.id]
    return values or [expr]


def _callee(call: ast.Call) -> str:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


class Scan:
    def __init__(self) -> None:
        self.modules = _modules()
        self.raisers = set(ROOTS)
        self.helpers: dict[Ref, int] = {}  # function -> position of its `code` argument in a call
        self.helper_raises: dict[Ref, Ref] = {}  # function -> the error class its `code` ends in
        self.literal: dict[str, list[str]] = {}
        self.built: dict[str, list[str]] = {}
        self.via: dict[str, dict[Ref, str]] = {}  # code or BUILT expression -> error class -> a place
        self.bad: list[str] = []
        self.other: dict[str, list[str]] = {}
        while self._more_raisers():
            pass
        while self._more_helpers():
            pass
        for where, m in self.modules.items():
            self._collect(where, m)

    def bases(self, where: str, cls: ast.ClassDef) -> set[Ref]:
        return {_resolve(self.modules, where, b.id) for b in cls.bases if isinstance(b, ast.Name)}

    def _more_raisers(self) -> bool:
        """Add the subclasses of known raisers; False when every one is known."""
        new = {(where, name) for where, m in self.modules.items() for name, cls in m.classes.items()
               if (where, name) not in self.raisers and self.bases(where, cls) & self.raisers}
        self.raisers |= new
        return bool(new)

    def class_position(self, ref: Ref) -> int | None:
        """Where a raiser takes its code; None when its __init__ fixes the code itself."""
        if ref in ROOTS:
            return 0
        where, name = ref
        cls = self.modules[where].classes[name]
        init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
        if init is not None:
            params = [a.arg for a in init.args.args][1:]
            return params.index("code") if "code" in params else None
        return next(self.class_position(b) for b in self.bases(where, cls) if b in self.raisers)

    def code_position(self, where: str, call: ast.Call) -> int | None:
        ref = _resolve(self.modules, where, _callee(call))
        return self.class_position(ref) if ref in self.raisers else self.helpers.get(ref)

    def raised_class(self, where: str, call: ast.Call) -> Ref | None:
        """The error class a call's code ends in: the class called, or the one a helper passes it to."""
        ref = _resolve(self.modules, where, _callee(call))
        return ref if ref in self.raisers else self.helper_raises.get(ref)

    def code_args(self, where: str, call: ast.Call) -> list[ast.expr]:
        position = self.code_position(where, call)
        if position is None:
            return []
        given = call.args[position:position + 1] if not any(isinstance(a, ast.Starred) for a in call.args) else []
        return given + [k.value for k in call.keywords if k.arg == "code"]

    def _more_helpers(self) -> bool:
        """Add the functions that pass their `code` parameter on to a raiser or a known helper."""
        new = {}
        for where, m in self.modules.items():
            for name, fn in m.functions.items():
                params = [a.arg for a in fn.args.args]
                raises = self._passes_code(where, fn) if "code" in params else None
                if (where, name) not in self.helpers and raises is not None:
                    new[(where, name)] = params.index("code") - (params[:1] in (["self"], ["cls"]))
                    self.helper_raises[(where, name)] = raises
        self.helpers |= new
        return bool(new)

    def _passes_code(self, where: str, fn: ast.FunctionDef) -> Ref | None:
        """The error class `fn` passes its `code` parameter on to, if it does."""
        return next((self.raised_class(where, c) for c in ast.walk(fn) if isinstance(c, ast.Call) and any(
            isinstance(a, ast.Name) and a.id == "code" for a in self.code_args(where, c))), None)

    def _collect(self, where: str, m: Module) -> None:
        for cls in m.classes.values():
            if (where, cls.name) in self.raisers - ROOTS and self.class_position((where, cls.name)) is None:
                # its own __init__ fixes the code: super().__init__("code", ...)
                for c in ast.walk(cls):
                    if isinstance(c, ast.Call) and _callee(c) == "__init__" and c.args:
                        self._code(c.args[0], f"{where}:{c.lineno}", (where, cls.name), strict=True)
        enclosing = {node: fn for fn in ast.walk(m.tree) if isinstance(fn, ast.FunctionDef) for node in ast.walk(fn)}
        for c in ast.walk(m.tree):
            if isinstance(c, ast.Call):
                strict = _resolve(self.modules, where, _callee(c)) in self.raisers
                raised = self.raised_class(where, c)
                for arg in self.code_args(where, c):
                    assert raised is not None
                    for expr in _assigned(enclosing.get(c), arg):
                        self._code(expr, f"{where}:{c.lineno}", raised, strict=strict)

    def _code(self, expr: ast.expr, at: str, raised: Ref, *, strict: bool) -> None:
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            if CODE.fullmatch(expr.value):
                self.literal.setdefault(expr.value, []).append(at)
                self.via.setdefault(expr.value, {}).setdefault(raised, at)
            elif strict:
                self.bad.append(f"{at}: {expr.value!r} is not a dotted code")
        elif isinstance(expr, ast.IfExp):
            self._code(expr.body, at, raised, strict=strict)
            self._code(expr.orelse, at, raised, strict=strict)
        elif isinstance(expr, (ast.JoinedStr, ast.BinOp, ast.Call)):
            self.built.setdefault(ast.unparse(expr), []).append(at)
            self.via.setdefault(ast.unparse(expr), {}).setdefault(raised, at)
        else:
            self.other.setdefault(ast.unparse(expr), []).append(at)


@pytest.fixture(scope="module")
def scan() -> Scan:
    return Scan()


def test_the_scan_finds_the_codes_it_must(scan):
    """A scan that found nothing would pass the checks below: it must see each way a code is raised."""
    assert len(scan.literal) > 150 and not scan.bad, scan.bad
    assert "extract.sql.syntax" in scan.literal      # fail(...) in enforce/code_values.py, imported
    assert "contract.duplicate_id" in scan.literal   # self.fail(...) of contracts/check.py
    assert "load.missing" in scan.literal            # _read_bytes(path, "load.missing"): code not first
    assert "env.encoder" in scan.literal             # super().__init__("env.encoder", ...)
    assert "provider.timeout" in scan.literal        # ProviderError through providers/errors.fail
    assert {"log.unreadable", "log.write"} <= set(scan.literal)  # one code or another (if/else)
    assert {"provider.auth", "provider.server"} <= set(scan.literal)  # code, fix = "...", "..." then fail(code, ...)
    assert "f'contract.{f.check}'" in scan.built


def test_every_code_raised_is_catalogued(scan):
    missing = {code: places[0] for code, places in scan.literal.items() if code not in CATALOGUE}
    assert not missing, f"add these codes to contracts/error_catalogue.py (who acts, what it means): {missing}"


def test_every_code_made_at_run_time_is_listed_with_what_it_can_make(scan):
    unlisted = {text: places[0] for text, places in scan.built.items() if text not in BUILT}
    assert not unlisted, f"list these expressions in BUILT with the codes each can make: {unlisted}"
    assert all(code in CATALOGUE for codes in BUILT.values() for code in codes)


def test_every_catalogued_code_is_raised_somewhere(scan):
    made = set(scan.literal) | {code for text in scan.built for code in BUILT.get(text, ())}
    unused = sorted(set(CATALOGUE) - made)
    assert not unused, f"these codes are raised nowhere: remove them from the catalogue: {unused}"
    assert not set(BUILT) - set(scan.built), "BUILT lists an expression the source no longer has"


def test_built_codes_follow_their_sources():
    from veriguard.synth.pipeline import SPEC_CHECKS

    assert set(BUILT["f'contract.{f.check}'"]) == {f"contract.{c}" for c in SPEC_CHECKS}
    providers = {c.removeprefix("provider.") for c in CATALOGUE if c.startswith("provider.")}
    assert set(BUILT["'extract.llm.' + e.code.removeprefix('provider.')"]) == {f"extract.llm.{c}" for c in providers}


def test_every_entry_says_who_acts_and_what_it_means():
    for code, entry in CATALOGUE.items():
        assert CODE.fullmatch(code) and isinstance(entry.actor, Actor), code
        assert entry.meaning and "\n" not in entry.meaning and len(entry.meaning) <= 100, code


# Error classes that carry codes of every actor by design: the code's actor says who must fix the cause.
CARRIERS = {("enforce/extract_errors.py", "ExtractionError"): "every failure on the online path is a denial"}
# Codes raised through a class of another group: known debts, each with the change that removes it.
DEBTS = {
    ("provider.config", ("providers/types.py", "ProviderError")):
        "providers/config.py: raise OperatorError for bad provider options (exit 2), not ProviderError (exit 3)",
    ("provider.replay_mismatch", ("providers/types.py", "ProviderError")):
        "providers/replay.py: raise OperatorError when a transcript does not match (exit 2), not ProviderError",
}


def error_class(ref: Ref) -> type[VeriguardError]:
    where, name = ref
    module = "veriguard." + where.removesuffix(".py").replace("/", ".").removeprefix("veriguard.")
    return getattr(importlib.import_module(module), name)


def test_every_code_is_raised_through_an_error_of_its_actor(scan):
    """The group of the class that raises a code (contracts/errors.py) gives its exit code; the catalogue says
    who must act. They must agree, or `veriguard` would end an environment problem with exit 2."""
    wrong, used = {}, set()
    for code, through in scan.via.items():
        for ref, at in through.items():
            for made in BUILT.get(code, (code,)):
                if ref in CARRIERS or error_class(ref).actor is CATALOGUE[made].actor:
                    continue
                if (made, ref) in DEBTS:
                    used.add((made, ref))
                    continue
                wrong[f"{made} via {ref[1]} at {at}"] = (CATALOGUE[made].actor.name, error_class(ref).actor.name)
    assert not wrong, f"raise these through an error of the catalogue's actor (or fix the catalogue): {wrong}"
    assert used == set(DEBTS), f"these debts are paid: remove them from DEBTS: {set(DEBTS) - used}"


def test_the_group_check_sees_each_way_a_code_is_raised(scan):
    """The check above must see the class behind a helper, behind a class's own __init__, and the root."""
    assert ("contracts/errors.py", "ContractError") in scan.via["contract.duplicate_id"]   # self.fail(...)
    assert ("providers/types.py", "ProviderError") in scan.via["provider.timeout"]        # providers/errors.fail
    assert ("enforce/loader.py", "PolicyMismatch") in scan.via["policy.mismatch"]          # its own __init__
    assert ("contracts/errors.py", "VeriguardError") in scan.via["cli.usage"]              # the root, directly
    assert error_class(("enforce/loader.py", "PolicyMismatch")).actor is Actor.BUG


def test_every_code_is_a_literal_a_built_code_or_passed_through(scan):
    """A code looked up in a table (`fail(CODES[kind], ...)`) would escape the checks above."""
    passed_through = {"code": "a helper's parameter", "e.code": "another error's code",
                      "error['code']": "a code recorded in a transcript, replayed (providers/replay.py)"}
    unknown = {text: places[0] for text, places in scan.other.items() if text not in passed_through}
    assert not unknown, f"raise these codes as literals, or list the expressions in BUILT: {unknown}"
