"""Contract -> stdlib-only Python: the runtime checker.

The generated functions take the policy's flat parameters (records flattened) and compute
what the contract says directly from the rules, independently of any policy code:
  vg_assumes(...)           -> ids of failed assumptions (inputs outside the proved domain)
  vg_spec_decision(...)     -> (allowed, violated rule ids, denied items) as the rules define them
  vg_failed_properties(..., vg_allowed, vg_violations, vg_denied) -> ids of failed properties
The same text is embedded in frozen modules and exec'd by tests and the verify layer.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from veriguard.contracts import ast as A
from veriguard.contracts.check import Contract
from veriguard.contracts.generated import check_generated
from veriguard.contracts.signature import Table


def expr(e: A.Expr) -> str:
    """One expression as Python source over the flat parameter names."""
    if isinstance(e, A.Lit):
        return repr(e.value)
    if isinstance(e, A.Var):
        return e.flat or e.path[0]
    if isinstance(e, A.Not):
        return f"(not {expr(e.operand)})"
    if isinstance(e, A.BoolOp):
        return f"({expr(e.left)} {e.op} {expr(e.right)})"
    if isinstance(e, A.Implies):
        return f"((not {expr(e.left)}) or {expr(e.right)})"
    if isinstance(e, (A.Compare, A.Arith)):
        return f"({expr(e.left)} {e.op} {expr(e.right)})"
    if isinstance(e, A.Member):
        values = ", ".join(repr(v.value) for v in e.values) + ("," if len(e.values) == 1 else "")
        return f"({expr(e.operand)} {'not in' if e.negated else 'in'} ({values}))"
    if isinstance(e, A.Neg):
        return f"(-{expr(e.operand)})"
    if isinstance(e, A.Call):
        if e.kind == "len":
            return f"len({expr(e.args[0])})"
        if e.kind == "violated":
            arg = e.args[0]
            assert isinstance(arg, A.Var)
            return f"({arg.path[0]!r} in vg_violations)"
        if e.kind == "denied":
            item = expr(e.args[0]) if len(e.args) == 1 else "(" + ", ".join(expr(a) for a in e.args) + ")"
            return f"({item} in vg_denied)"
        return f"{table_name(e.name)}(" + ", ".join(expr(a) for a in e.args) + ")"
    if isinstance(e, A.Quant):
        fn = "all" if e.kind == "forall" else "any"
        binder = e.names[0] if len(e.names) == 1 else "(" + ", ".join(e.names) + ")"
        return f"{fn}({expr(e.body)} for {binder} in {e.source})"
    if isinstance(e, A.Allowed):
        return "vg_allowed"
    raise TypeError(e)


def table_name(name: str) -> str:
    return f"vg_table_{name}"


def table_source(t: Table) -> str:
    params = ", ".join(f"a{i}" for i in range(len(t.params)))
    key = "(" + params + ("," if len(t.params) == 1 else "") + ")"
    data = "{" + ", ".join(f"{k!r}: {v!r}" for k, v in sorted(t.rows, key=repr)) + "}"
    return (f"VG_TABLE_{t.name.upper()} = {data}\n\n\n"
            f"def {table_name(t.name)}({params}):\n"
            f"    return VG_TABLE_{t.name.upper()}.get({key}, {t.default!r})\n")


def checker_source(c: Contract) -> str:
    """The runtime checker for `c` as module source text (no imports needed)."""
    params = ", ".join(name for name, _ in c.signature.flat_params())
    parts = [table_source(t) for t in c.signature.tables]
    lines = [f"def vg_assumes({params}):", "    failed = []"]
    lines += [f"    if not {expr(d.body)}:\n        failed.append({d.id!r})" for d in c.assumes]
    lines += ["    return failed", ""]
    lines += [f"def vg_spec_decision({params}):", "    vg_violations = []"]
    lines += [f"    if not {expr(d.body)}:\n        vg_violations.append({d.id!r})" for d in c.rules]
    lines.append("    vg_denied = []")
    for item in c.item_rules():
        q = item.quant
        binder = q.names[0] if len(q.names) == 1 else "(" + ", ".join(q.names) + ")"
        element = q.names[0] if len(q.names) == 1 else binder
        lines.append(f"    for {binder} in {q.source}:")
        lines.append(f"        if not {expr(q.body)} and {element} not in vg_denied:")
        lines.append(f"            vg_denied.append({element})")
    lines += ["    return (len(vg_violations) == 0, vg_violations, vg_denied)", ""]
    lines += [f"def vg_failed_properties({params}{', ' if params else ''}vg_allowed, vg_violations, vg_denied):",
              "    failed = []"]
    lines += [f"    if not {expr(d.body)}:\n        failed.append({d.id!r})" for d in c.properties]
    lines += ["    return failed", ""]
    return "\n\n".join(parts + ["\n".join(lines)])


@dataclass(frozen=True)
class RuntimeChecker:
    """The compiled checker, callable on flat parameters."""

    source: str
    rule_ids: list[str]
    assumes: Callable[..., list[str]]
    spec_decision: Callable[..., tuple[bool, list[str], list[Any]]]
    failed_properties: Callable[..., list[str]]


def compile_checker(c: Contract) -> RuntimeChecker:
    source = checker_source(c)
    check_generated(source, "checker")
    namespace: dict[str, Any] = {}
    exec(compile(source, "<contract>", "exec"), namespace)  # our compiler's output, within the allowlist
    return RuntimeChecker(source, [d.id for d in c.rules], namespace["vg_assumes"], namespace["vg_spec_decision"],
                          namespace["vg_failed_properties"])
