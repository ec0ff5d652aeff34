"""The allowlist for the modules veriguard generates, checked on the AST before any process imports
them and before freeze writes them: the Nagini source, the runnable policy (contracts stripped), the
runtime contract checker, and the constants of the frozen module.

Spec names are checked when the spec loads (contracts.names) and spec values reach code only as
constants; this is the second wall. Whatever a generator emits, only these constructs get through:
the expected imports, functions (and the `Decision` dataclass), calls of names the module defines,
of Nagini's contract functions and of len/all/any, a few attributes, and str/int/bool constants.
"""
from __future__ import annotations

import ast
from functools import lru_cache

from veriguard.contracts.errors import GeneratedCodeError

CONTRACT_FUNCTIONS = frozenset({"Requires", "Ensures", "Invariant", "Decreases", "Acc", "list_pred", "Forall",
                                "Exists", "Implies", "Result", "ResultT", "Old", "Assert", "Reveal"})
NAGINI_NAMES = CONTRACT_FUNCTIONS | {"Pure", "Opaque"}
BUILTINS = frozenset({"len", "all", "any", "int", "str", "bool"})
ATTRIBUTES = frozenset({"append", "get", "allowed", "violations", "denied"})
CALLED_ATTRIBUTES = frozenset({"append", "get"})
POLICY_IMPORTS = {"dataclasses": {"dataclass"}, "typing": {"List", "Tuple"}}
IMPORTS: dict[str, dict[str, set[str]]] = {
    "nagini": {**POLICY_IMPORTS, "nagini_contracts.contracts": {"*"}},
    "runnable": POLICY_IMPORTS,
    "checker": {},
    "constants": {},
}
NODES = (
    ast.Module, ast.FunctionDef, ast.ClassDef, ast.arguments, ast.arg, ast.Return, ast.Assign, ast.AnnAssign,
    ast.AugAssign, ast.If, ast.While, ast.For, ast.Expr, ast.Pass, ast.Break, ast.Continue, ast.ImportFrom, ast.alias,
    ast.Compare, ast.BoolOp, ast.UnaryOp, ast.BinOp, ast.IfExp, ast.Call, ast.keyword, ast.Name, ast.Constant,
    ast.List, ast.Tuple, ast.Dict, ast.Attribute, ast.Subscript, ast.Lambda, ast.GeneratorExp, ast.comprehension,
    ast.Load, ast.Store, ast.And, ast.Or, ast.Not, ast.USub, ast.Add, ast.Sub, ast.Div, ast.Eq, ast.NotEq,
    ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.Is, ast.IsNot,
)
WHAT = {"nagini": "policy source (Nagini)", "runnable": "runnable policy", "checker": "runtime contract checker",
        "constants": "frozen module's constants"}


def check_generated(source: str, kind: str) -> None:
    """Raise GeneratedCodeError unless `source` keeps to the allowlist for `kind` (see WHAT)."""
    problem = _source_problem(source, kind)
    if problem is not None:
        raise _error(kind, *problem)


@lru_cache(maxsize=32)
def _source_problem(source: str, kind: str) -> tuple[str, int, int] | None:
    """What is wrong with `source` and where (the same module is checked at each stage that writes or reads it)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError) as e:
        return f"is not valid Python ({e})", getattr(e, "lineno", 0) or 0, 0
    problem = _problem(tree, kind)
    if problem is None:
        return None
    node, what = problem
    return what, getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def check_composed(whole: str, parts: list[str]) -> None:
    """`whole` must be exactly `parts` one after the other: no part may reach into the next
    (e.g. an unterminated string swallowing what follows)."""
    try:
        body = [stmt for part in parts for stmt in ast.parse(part).body]
        same = ast.dump(ast.parse(whole)) == ast.dump(ast.Module(body=body, type_ignores=[]))
    except (SyntaxError, ValueError) as e:
        raise _error("module", f"is not valid Python ({e})", 0, 0) from None
    if not same:
        raise _error("module", "differs from the checked parts it is made of", 0, 0)


def docstring(text: str) -> str:
    """A triple-quoted literal holding `text` that always ends where it should."""
    out = []
    for ch in text:
        if ch in '\\"':
            out.append("\\" + ch)
        elif ch == "\n" or ch.isprintable():
            out.append(ch)
        else:
            out.append(ch.encode("unicode_escape").decode("ascii"))
    return '"""' + "".join(out) + '"""'


def _error(kind: str, what: str, line: int, col: int) -> GeneratedCodeError:
    where = f" at line {line}:{col}" if line else ""
    return GeneratedCodeError("internal.generated_code",
                              f"the generated {WHAT.get(kind, 'frozen module')} {what}{where}; none of it was run",
                              fix="this is a bug in veriguard: report it with the spec that triggers it")


def _problem(tree: ast.Module, kind: str) -> tuple[ast.AST, str] | None:
    nodes = list(ast.walk(tree))
    known = set(BUILTINS | (NAGINI_NAMES if kind == "nagini" else set()))
    for n in nodes:
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            known.add(n.id)
        elif isinstance(n, ast.arg):
            known.add(n.arg)
        elif isinstance(n, (ast.FunctionDef, ast.ClassDef)):
            known.add(n.name)
        elif isinstance(n, ast.ImportFrom):
            known.update(a.asname or a.name for a in n.names)
    for stmt in tree.body:
        problem = _top_level(stmt, kind)
        if problem is not None:
            return stmt, problem
    for node in nodes:
        problem = _node(node, kind, known)
        if problem is not None:
            return node, problem
    return None


def _top_level(stmt: ast.stmt, kind: str) -> str | None:
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
        return None  # a docstring
    if kind == "constants":
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            try:
                ast.literal_eval(stmt.value)
                return None
            except (ValueError, TypeError, SyntaxError, RecursionError):
                return "assigns something other than a literal"
        return "has a statement other than NAME = literal"
    if isinstance(stmt, (ast.ImportFrom, ast.FunctionDef)):
        return None
    if isinstance(stmt, ast.ClassDef) and kind in ("nagini", "runnable"):
        return None
    if isinstance(stmt, ast.Assign) and kind == "checker":
        return None
    return f"has a top-level {type(stmt).__name__}"


def shape_problem(node: ast.AST) -> str | None:
    """What any construct, generated or model-written (verify.subset), must keep to: no private or dunder
    identifier, plain parameters, no **keyword arguments, constants of type str, int, bool or None."""
    for name in _identifiers(node):
        if name.startswith("_"):
            return f"uses the name {name!r} (names starting with _ are not allowed)"
    if isinstance(node, ast.arguments) and (node.vararg or node.kwarg or node.kwonlyargs or node.posonlyargs
                                            or node.defaults or node.kw_defaults):
        return "has a function with *args, **kwargs, keyword-only parameters or default values"
    if isinstance(node, ast.keyword) and node.arg is None:
        return "passes **keyword arguments"
    if isinstance(node, ast.Constant) and not isinstance(node.value, (str, int, type(None))):
        return f"has a constant of type {type(node.value).__name__}"
    return None


def _node(node: ast.AST, kind: str, known: set[str]) -> str | None:
    if not isinstance(node, NODES):
        return f"contains {type(node).__name__}, which generated code never uses"
    problem = shape_problem(node)
    if problem is not None:
        return problem
    if isinstance(node, ast.ImportFrom):
        allowed = IMPORTS[kind].get(node.module or "")
        if allowed is None or node.level or not {a.name for a in node.names} <= allowed:
            return f"imports from {node.module!r} ({', '.join(a.name for a in node.names)})"
    elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in known:
        return f"reads the name {node.id!r}, which it does not define"
    elif isinstance(node, ast.Attribute) and node.attr not in ATTRIBUTES:
        return f"reads the attribute .{node.attr}"
    elif isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) or (
            isinstance(node.func, ast.Attribute) and node.func.attr in CALLED_ATTRIBUTES)):
        return "calls something other than a named function"
    elif isinstance(node, ast.FunctionDef):
        return _function(node, kind)
    elif isinstance(node, ast.ClassDef):
        return _decision_class(node)
    return None


def _identifiers(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.keyword):
        return [node.arg] if node.arg else []
    if isinstance(node, ast.alias):
        return [n for n in (node.name, node.asname) if n and n != "*"]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    return []


def _function(node: ast.FunctionDef, kind: str) -> str | None:
    allowed = {"Pure", "Opaque"} if kind == "nagini" else set()
    if getattr(node, "type_params", None):
        return f"function {node.name} has type parameters"
    if any(not (isinstance(d, ast.Name) and d.id in allowed) for d in node.decorator_list):
        return f"function {node.name} has a decorator other than " + (" / ".join(sorted(allowed)) or "none")
    return None


def _decision_class(node: ast.ClassDef) -> str | None:
    dataclass_frozen = (len(node.decorator_list) == 1 and isinstance(node.decorator_list[0], ast.Call)
                        and ast.unparse(node.decorator_list[0]) == "dataclass(frozen=True)")
    fields_only = all(isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.value is None
                      for s in node.body)
    if node.name != "Decision" or node.bases or node.keywords or not dataclass_frozen or not fields_only \
            or getattr(node, "type_params", None):
        return f"defines class {node.name} other than the frozen dataclass Decision with fields only"
    return None
