"""The allowlist for model-written policy code, checked on the AST before anything runs.

Only the Nagini subset a policy needs: assignments, if/while, returns, arithmetic and
comparisons, list appends and indexing, calls to the policy's own functions (tables, rule and
item predicates, toolbox helpers, helpers defined alongside) and to Nagini's contract functions.
No imports, no I/O, no attribute or name starting with an underscore, no eval/exec, no classes, no
default values or *args. Whatever passes also passes the allowlist for the generated module around it.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from veriguard.contracts.generated import CONTRACT_FUNCTIONS, shape_problem
from veriguard.verify.runnable import CONTRACT_CALLS
BUILTINS = frozenset({"len", "List", "Tuple", "int", "str", "bool", "True", "False", "None", "Decision"})
ALLOWED_NODES = (
    ast.Module, ast.FunctionDef, ast.arguments, ast.arg, ast.Return, ast.Assign, ast.AnnAssign, ast.AugAssign,
    ast.If, ast.While, ast.Expr, ast.Pass, ast.Break, ast.Continue, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.BinOp,
    ast.IfExp, ast.Call, ast.Name, ast.Constant, ast.List, ast.Tuple, ast.Attribute, ast.Subscript, ast.Lambda,
    ast.Load, ast.Store, ast.And, ast.Or, ast.Not, ast.USub, ast.Add, ast.Sub, ast.Eq, ast.NotEq, ast.Lt,
    ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.Is, ast.IsNot, ast.keyword, ast.Div,
)
ATTRIBUTES = frozenset({"append", "allowed", "violations", "denied"})
MAX_LINES = 400


@dataclass(frozen=True)
class SubsetViolation:
    line: int
    col: int
    what: str
    fix: str

    def __str__(self) -> str:
        return f"line {self.line}:{self.col}: {self.what} (fix: {self.fix})"


def check_subset(code: str, known: set[str]) -> list[SubsetViolation]:
    """Every construct in `code` outside the allowlist; `known` are the names the skeleton defines."""
    if len(code.splitlines()) > MAX_LINES:
        return [SubsetViolation(1, 0, f"the code has more than {MAX_LINES} lines", "write a smaller policy")]
    try:
        tree = ast.parse(code)
    except SyntaxError as e:
        return [SubsetViolation(e.lineno or 0, e.offset or 0, f"not valid Python: {e.msg}", "fix the syntax")]
    defined = set(known) | {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    local = {t.id for n in ast.walk(tree) for t in _targets(n)} | {a.arg for n in ast.walk(tree)
                                                                   if isinstance(n, ast.arg) for a in [n]}
    out: list[SubsetViolation] = []
    for stmt in tree.body:
        if not isinstance(stmt, ast.FunctionDef):
            out.append(SubsetViolation(stmt.lineno, stmt.col_offset, f"top-level {type(stmt).__name__}",
                                       "write only function definitions"))
    # contract functions may appear only inside contract statements, which the runnable policy drops
    in_contracts = {id(n) for stmt in ast.walk(tree) if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
                    and isinstance(stmt.value.func, ast.Name) and stmt.value.func.id in CONTRACT_CALLS
                    for n in ast.walk(stmt)}
    decorators = {id(d) for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) for d in n.decorator_list}
    owners = {id(n.args): n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.Lambda))}
    for node in ast.walk(tree):
        place = owners.get(id(node), node)  # parameter lists have no position of their own
        line, col = getattr(place, "lineno", 0), getattr(place, "col_offset", 0)
        if isinstance(node, ast.Name) and node.id in CONTRACT_FUNCTIONS and id(node) not in in_contracts:
            out.append(SubsetViolation(line, col, f"{node.id} outside a contract statement",
                                       "use contract functions only inside Requires/Ensures/Invariant/Assert"))
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.append(SubsetViolation(line, col, "imports are not allowed", "use only the functions provided"))
        elif not isinstance(node, ALLOWED_NODES):
            out.append(SubsetViolation(line, col, f"{type(node).__name__} is outside the policy subset",
                                       "use assignments, if/while, calls to the provided functions"))
        if isinstance(node, ast.FunctionDef) and any(not (isinstance(d, ast.Name) and d.id == "Pure")
                                                     for d in node.decorator_list):
            out.append(SubsetViolation(line, col, f"decorator on {node.name}", "only @Pure is allowed"))
        problem = shape_problem(node)  # the rules generated modules keep too (contracts.generated)
        if problem is not None:
            out.append(SubsetViolation(line, col, problem, "plain functions over the parameters; no dunders"))
        if isinstance(node, ast.Name) and node.id in ("eval", "exec", "open", "compile", "getattr", "setattr",
                                                      "globals", "locals", "vars", "input", "print"):
            out.append(SubsetViolation(line, col, f"name {node.id!r} is not allowed", "no I/O or reflection"))
        if isinstance(node, ast.Attribute) and node.attr not in ATTRIBUTES:
            out.append(SubsetViolation(line, col, f"attribute .{node.attr} is not allowed",
                                       f"only {', '.join(sorted(ATTRIBUTES))}"))
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id not in defined | CONTRACT_FUNCTIONS | BUILTINS:
                out.append(SubsetViolation(line, col, f"call of unknown function {f.id!r}",
                                           "call only the tables, predicates and helpers provided"))
            elif not (isinstance(f, ast.Name) or (isinstance(f, ast.Attribute) and f.attr == "append")):
                out.append(SubsetViolation(line, col, "calls must name a function (or .append)",
                                           "call a function by its name"))
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in decorators and \
                node.id not in defined | CONTRACT_FUNCTIONS | BUILTINS | local:
            out.append(SubsetViolation(line, col, f"unknown name {node.id!r}", "use the parameters and locals"))
    return sorted(set(out), key=lambda v: (v.line, v.col, v.what))


def _targets(node: ast.AST) -> list[ast.Name]:
    if isinstance(node, ast.Assign):
        return [t for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name):
        return [node.target]
    if isinstance(node, ast.Lambda):
        return [ast.Name(id=a.arg) for a in node.args.args]
    return []
