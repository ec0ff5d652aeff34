"""Which names a spec (or a model's draft) may give to what.

Every name ends up in generated Python, so each kind has a strict pattern (an allowlist) and
the words it may not take. Values (enum values, strings, table rows) are data: they reach
generated code only as constants (repr of a str/int/bool) and are not checked here.

  kind       pattern                       becomes
  spec       lower snake case              the build folder, the frozen module's POLICY_NAME
  argument   lower snake case              a parameter of `decide` and of the checker functions
  field      lower snake case              part of a parameter: `user.age` -> `user_age`
  variable   lower snake case              a quantifier's bound name (a lambda / loop variable)
  table      lower snake case              `table_<name>`, `vg_table_<name>`, called as `<name>(...)`
  id         lower snake case              `rule_<id>`, `item_<id>`, `property_<id>`, `violators_<id>`
  type       letters, digits, single _     comments, the argument schema (data), and an enum's domain
                                           predicate `vg_domain_<Type>` (a prefix no other name may take)

Lower snake case: `[a-z][a-z0-9]*(_[a-z0-9]+)*`, at most 63 characters (so no leading, trailing
or double underscore: no dunder, no private name, no clash with the `<table>__<k>` helpers).
"""
from __future__ import annotations

import builtins
import keyword
import re

SNAKE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")
TYPE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*")
MAX_LENGTH = 63

# the contract language's reserved words and builtin functions
RESERVED = ("rule", "assume", "property", "forall", "exists", "in", "not", "and", "or", "implies",
            "true", "false", "allowed")
BUILTINS = ("len", "violated", "denied")
CONTRACT_WORDS = frozenset(RESERVED + BUILTINS)
PYTHON_WORDS = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)
# names that generated modules define or call, lower case ones only (the patterns exclude the rest)
GENERATED = frozenset({"decide", "violation_list", "dataclass", "evaluate", "evaluate_checked", "tuple_of",
                       "list_pred", "dict_pred", "set_pred", "bytearray_pred", "overload"})
GENERATED_PREFIXES = ("vg_", "len_", "table_", "rule_", "item_", "property_", "violators_")
# parameters of generated helpers that sit beside argument names (item predicates: e0, e1, ...; tables: a0, ...)
HELPER_PARAMETER = re.compile(r"[ae][0-9]+")
TYPE_WORDS = frozenset({"bool", "int", "str", "list", "tuple"})

KINDS = ("spec", "argument", "field", "variable", "table", "id", "type")


def name_problem(kind: str, name: object) -> tuple[str, str] | None:
    """(what is wrong, how to fix it) for a `kind` name, or None when the name is fine."""
    assert kind in KINDS, kind
    if not isinstance(name, str):
        return f"is a {type(name).__name__}, not a name", "write a name"
    pattern = TYPE_NAME if kind == "type" else SNAKE
    if not pattern.fullmatch(name) or len(name) > MAX_LENGTH:
        shape = ("letters and digits, words joined by single underscores, starting with a letter" if kind == "type"
                 else "lower-case letters and digits, words joined by single underscores, starting with a letter")
        return f"is not a valid {kind} name", f"use {shape}, at most {MAX_LENGTH} characters, e.g. {_example(kind)}"
    if name in PYTHON_WORDS or name in CONTRACT_WORDS or (kind == "type" and name in TYPE_WORDS):
        return "is a reserved word", f"rename it, e.g. {name}_1"
    if kind in ("argument", "variable"):  # these become identifiers on their own (a record's flat names too)
        if name in GENERATED or name in dir(builtins) or HELPER_PARAMETER.fullmatch(name):
            return "is a name the generated policy uses", f"rename it, e.g. {name}_value"
        if name.startswith(GENERATED_PREFIXES):
            return ("starts with a prefix the generated policy uses (" + ", ".join(GENERATED_PREFIXES) + ")",
                    "rename it")
    return None


def _example(kind: str) -> str:
    return {"type": "Role", "table": "permitted", "id": "adults_only", "field": "age", "spec": "payments",
            "variable": "db"}.get(kind, "user")
