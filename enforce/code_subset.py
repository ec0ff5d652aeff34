"""The subset of Python the code interpreter follows, as allowlists; anything else is refused.

Statements, expressions and operators (ALLOWED_NODES, checked before anything is read), the builtins
a program may call, the modules and members it may import (LIBRARY), and the attributes and methods
allowed on each kind of value: a table or row, a string, a container the program made, a library
object, any other run-time value. What each of these reveals is decided by the interpreter.
"""
from __future__ import annotations

import ast
import builtins
import re

from veriguard.enforce.code_values import unanalysable

NO_REVEAL = frozenset({"len", "isinstance"})
VALUE_FUNCTIONS = frozenset({"abs", "bool", "float", "int", "str", "round", "repr", "divmod", "pow", "chr", "ord",
                             "print", "Exception", "ValueError", "TypeError", "KeyError", "IndexError",
                             "ZeroDivisionError", "AttributeError", "RuntimeError", "ArithmeticError",
                             "LookupError"})
COLLECTING = frozenset({"list", "tuple", "set", "frozenset", "sorted", "reversed", "dict", "enumerate", "zip",
                        "range", "min", "max", "sum", "any", "all"})
BUILTINS = NO_REVEAL | VALUE_FUNCTIONS | COLLECTING
CONSUMERS = frozenset({"list", "tuple", "set", "frozenset", "sorted", "dict", "min", "max", "sum", "any", "all"})
# A name bound nowhere raises NameError only if the agent's Python has no builtin of that name, and the agent may run
# another version than the one reading its code: builtins of CPython 3.6-3.13 that 3.12 lacks, and the kinds of name
# new versions add (exceptions, private helpers), count as builtins whatever Python reads the code.
OTHER_VERSIONS_BUILTINS = frozenset({"PythonFinalizationError", "_IncompleteInputError"})
BUILTIN_LIKE = re.compile(r"_.*|[A-Z]\w*(?:Error|Exception|Warning|Group|Exit|Interrupt|Iteration)")
RAISES_ON_TABLE = frozenset({"eval", "exec", "compile"})  # take text or code only: a DataFrame is a TypeError
LIBRARY: dict[str, str] = {  # importable modules and the members used from them: kind of each
    "datetime": "module", "datetime.datetime": "class", "datetime.date": "class", "datetime.time": "class",
    "datetime.timedelta": "class", "datetime.MINYEAR": "constant", "datetime.MAXYEAR": "constant",
    **{f"datetime.{c}.{m}": "function" for c in ("datetime", "date") for m in ("today", "fromisoformat",
                                                                             "fromtimestamp")},
    **{f"datetime.datetime.{m}": "function" for m in ("now", "strptime", "combine")},
    **{f"datetime.{c}.{k}": "constant" for c in ("datetime", "date", "time", "timedelta")
       for k in ("min", "max", "resolution")},
    "collections": "module",
    **{f"collections.{c}": "container" for c in ("Counter", "defaultdict", "OrderedDict", "deque")},
    "math": "module",
    **{f"math.{f}": "function" for f in ("ceil", "floor", "trunc", "sqrt", "exp", "log", "log2", "log10", "pow",
                                         "fabs", "fsum", "prod", "isnan", "isinf", "isfinite", "isclose")},
    **{f"math.{c}": "constant" for c in ("pi", "e", "tau", "inf", "nan")},
    "statistics": "module",
    **{f"statistics.{f}": "function" for f in ("mean", "fmean", "median", "median_low", "median_high", "mode",
                                               "multimode", "stdev", "pstdev", "variance", "pvariance")},
}
SAFE_TABLE_ATTRS = frozenset({"empty", "shape", "columns", "size", "ndim", "dtypes"})
WHOLE_TABLE_ATTRS = frozenset({"values", "T", "iloc", "loc", "at", "iat", "index"})
TABLE_METHODS = frozenset({"head", "tail", "to_dict", "to_list", "tolist", "unique", "nunique", "value_counts",
                           "count", "sum", "mean", "max", "min", "sort_values", "drop_duplicates", "reset_index",
                           "copy", "dropna", "isin", "items", "keys"})  # read-only: count as reading all of it
STR_METHODS = frozenset({"join", "split", "rsplit", "splitlines", "strip", "lstrip", "rstrip", "lower", "upper",
                         "title", "capitalize", "casefold", "replace", "startswith", "endswith", "find", "rfind",
                         "index", "rindex", "count", "isdigit", "isnumeric", "isdecimal", "isalpha", "isalnum",
                         "isspace", "islower", "isupper", "zfill", "center", "ljust", "rjust", "partition",
                         "rpartition", "encode"})
VALUE_ATTRS = frozenset({"year", "month", "day", "hour", "minute", "second", "microsecond", "days", "seconds",
                         "microseconds", "values", "real", "imag", "empty", "shape", "size"})
VALUE_METHODS = (STR_METHODS - {"join"}) | frozenset({
    "strftime", "isoformat", "date", "time", "weekday", "isoweekday", "timestamp", "total_seconds", "ctime",
    "append", "extend", "insert", "pop", "remove", "copy", "sort", "reverse", "clear", "get", "items", "keys",
    "values", "update", "setdefault", "add", "discard", "union", "intersection", "difference", "issubset",
    "issuperset", "most_common", "tolist", "to_list", "unique", "nunique", "item", "mean", "max", "min", "sum",
    "value_counts"})
CONTAINER_METHODS = frozenset({"append", "add", "appendleft", "insert", "extend", "update", "setdefault", "get",
                               "pop", "popleft", "copy", "items", "keys", "values", "most_common", "union",
                               "intersection", "difference", "symmetric_difference", "count", "index", "remove",
                               "discard", "clear", "reverse", "sort", "issubset", "issuperset"})
ALLOWED_NODES = frozenset({
    ast.Module, ast.Expr, ast.Assign, ast.AugAssign, ast.If, ast.For, ast.While, ast.Break, ast.Continue, ast.Pass,
    ast.Try, ast.ExceptHandler, ast.Import, ast.ImportFrom, ast.alias, ast.FunctionDef, ast.Lambda, ast.arguments,
    ast.arg, ast.Return, ast.Raise, ast.Assert, ast.Constant, ast.Name, ast.Load, ast.Store, ast.Call, ast.keyword,
    ast.Attribute, ast.Subscript, ast.Slice, ast.Compare, ast.BinOp, ast.BoolOp, ast.UnaryOp, ast.IfExp,
    ast.JoinedStr, ast.FormattedValue, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp,
    ast.DictComp, ast.GeneratorExp, ast.comprehension, ast.Starred, ast.And, ast.Or, ast.Not, ast.USub, ast.UAdd,
    ast.Invert, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Is, ast.IsNot, ast.In, ast.NotIn, ast.Add,
    ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.BitAnd, ast.BitOr, ast.BitXor})
CONTAINER_OPS = (ast.Add, ast.Mult, ast.BitAnd, ast.BitOr, ast.BitXor, ast.Sub)
CONSTRUCTS = {ast.With: "`with`", ast.ClassDef: "a class definition", ast.Delete: "`del`", ast.Global: "`global`",
              ast.Nonlocal: "`nonlocal`", ast.Match: "`match`", ast.NamedExpr: "the walrus operator `:=`",
              ast.Yield: "`yield`", ast.YieldFrom: "`yield from`", ast.Await: "`await`",
              ast.AnnAssign: "an annotated assignment", ast.AsyncFunctionDef: "`async def`",
              ast.AsyncFor: "`async for`", ast.AsyncWith: "`async with`", ast.TryStar: "`except*`",
              ast.MatMult: "the operator `@`", ast.LShift: "the operator `<<`", ast.RShift: "the operator `>>`"}


def may_be_builtin(name: str) -> bool:
    """Whether the agent's Python, whichever version, may bind `name` as a builtin (see OTHER_VERSIONS_BUILTINS)."""
    return hasattr(builtins, name) or name in OTHER_VERSIONS_BUILTINS or BUILTIN_LIKE.fullmatch(name) is not None


def construct_name(node: ast.AST) -> str:
    return CONSTRUCTS.get(type(node), f"the construct {type(node).__name__}")


def check_constructs(tree: ast.Module) -> None:
    """Refuse, before reading anything, every construct outside the subset the interpreter follows."""
    for node in ast.walk(tree):
        if type(node) not in ALLOWED_NODES:
            unanalysable(node, construct_name(node))
        if isinstance(node, ast.FunctionDef) and (node.decorator_list or node.returns
                                                  or getattr(node, "type_params", None)):
            unanalysable(node, "a decorated or annotated function")
        elif isinstance(node, ast.arg) and node.annotation is not None:
            unanalysable(node, "an annotated parameter")
        elif isinstance(node, ast.Call) and (any(isinstance(a, ast.Starred) for a in node.args)
                                             or any(k.arg is None for k in node.keywords)):
            unanalysable(node, "a call with *args or **kwargs")
        elif isinstance(node, ast.ImportFrom) and node.level:
            unanalysable(node, "a relative import")
        elif isinstance(node, ast.comprehension) and node.is_async:
            unanalysable(node, "an async comprehension")
        elif isinstance(node, ast.Attribute) and node.attr.startswith("__"):
            unanalysable(node, f"the attribute {node.attr!r} (interpreter internals)")
        elif isinstance(node, ast.Name) and node.id.startswith("__"):
            unanalysable(node, f"the name `{node.id}` (interpreter internals)")
        else:
            named = node_name(node)
            if named is not None and named[1] and named[0].startswith("__"):
                unanalysable(node, f"the name `{named[0]}` bound (interpreter internals)")


def node_name(node: ast.AST) -> tuple[str, bool] | None:
    """The identifier a node reads or binds, and whether it binds it; None for a node that names none. Binding: a name
    stored or deleted, an import's alias, a def or class, a parameter, `except ... as`, a match capture.

    A dunder bound so is no plain variable: a function defined after `import statistics as __builtins__` takes
    statistics' names (sys, random) as its builtins, so `sys` there is no NameError."""
    if isinstance(node, ast.Name):
        return node.id, not isinstance(node.ctx, ast.Load)
    if isinstance(node, ast.alias):
        return node.asname or node.name.split(".")[0], True
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name, True
    if isinstance(node, ast.arg):
        return node.arg, True
    if isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
        return node.name, True
    return None
