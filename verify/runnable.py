"""Nagini-annotated source -> the plain Python that ships: contracts stripped (`strip_contracts`),
then frozen into the stdlib-only module that synth.freeze writes and verify.testrun tests
(`frozen_module`)."""
from __future__ import annotations

import ast
from pathlib import Path

from veriguard.contracts import frozen_entry, runtime_support
from veriguard.contracts.check import Contract
from veriguard.contracts.generated import check_composed, check_generated, docstring
from veriguard.contracts.schema import argument_schema
from veriguard.contracts.spec import Spec
from veriguard.contracts.to_python import checker_source
from veriguard.contracts.signature import element_types
from veriguard.contracts.types import EnumT, ListT

CONTRACT_CALLS = {"Requires", "Ensures", "Invariant", "Decreases", "Assert", "Assume", "Fold", "Unfold", "Exsures"}
CONTRACT_DECORATORS = {"Pure", "Opaque", "Predicate", "ContractOnly", "Inline", "Ghost"}
# binds the copy of contracts/frozen_entry.py to the parts of the frozen module before it
ENTRY_BINDING = ("evaluate, evaluate_checked = entry_points(argument_checker(ARGUMENTS), vg_assumes, decide, "
                 "vg_spec_decision, RULE_IDS, ArgumentError)\n")


def _is_contract_stmt(node: ast.stmt) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
            and node.value.func.id in CONTRACT_CALLS)


class _Strip(ast.NodeTransformer):
    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self.generic_visit(node)
        node.decorator_list = [d for d in node.decorator_list
                               if not (isinstance(d, ast.Name) and d.id in CONTRACT_DECORATORS)]
        body = [s for s in node.body if not _is_contract_stmt(s)]
        node.body = body or [ast.Pass()]
        return node

    def generic_visit(self, node: ast.AST) -> ast.AST:
        for name, value in ast.iter_fields(node):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                kept = [s for s in value if not _is_contract_stmt(s)]
                setattr(node, name, kept or [ast.Pass()])
        return super().generic_visit(node)


def domain_types(c: Contract) -> list[EnumT]:
    """The enum types of the arguments (and of their list elements), each once, in first-use order: each has a
    domain predicate `domain_function(t)` in the verified source (synth/compile.py)."""
    enums: dict[str, EnumT] = {}
    for _, t in c.signature.flat_params():
        for et in (element_types(t) if isinstance(t, ListT) else [t]):
            if isinstance(et, EnumT):
                enums.setdefault(et.name, et)
    return list(enums.values())


def domain_function(t: EnumT) -> str:
    return f"vg_domain_{t.name}"


def lemma_function(prop_id: str) -> str:
    """The verified source's lemma for property `prop_id`: its proof is the property's proof."""
    return f"property_{prop_id}"


def contract_functions(c: Contract) -> tuple[str, ...]:
    """The verified source's functions that state the contract rather than implement it: the property lemmas and
    the domain predicates. The runnable policy leaves them out, and mutants leave them alone."""
    return tuple(lemma_function(d.id) for d in c.properties) + tuple(domain_function(t) for t in domain_types(c))


def runnable_policy(c: Contract, verified: str) -> str:
    """The policy as it runs: `verified` without its contracts and without the functions that only state them."""
    return strip_contracts(verified, drop_functions=contract_functions(c))


def strip_contracts(source: str, *, drop_functions: tuple[str, ...] = ()) -> str:
    """Remove contract statements, contract decorators, the nagini_contracts import and the
    listed functions (e.g. property lemmas). The result imports only the standard library."""
    tree = ast.parse(source)
    body = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("nagini_contracts"):
            continue
        if isinstance(node, ast.FunctionDef) and node.name in drop_functions:
            continue
        body.append(node)
    tree.body = body
    tree = _Strip().visit(tree)
    ast.fix_missing_locations(tree)
    return ast.unparse(tree) + "\n"


def _without_docstring(source: str) -> str:
    tree = ast.parse(source)
    first = tree.body[0] if tree.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return "".join(source.splitlines(keepends=True)[first.end_lineno:]).lstrip("\n")
    return source


def frozen_module(spec: Spec, runnable: str) -> str:
    """The stdlib-only module for the runnable policy `runnable`. The parts made from the spec (policy,
    checker, constants) are checked against the allowlist for generated code, and the module against
    the parts it is made of, before the text is returned: nothing of it has run yet."""
    assert spec.contract is not None
    rules = {d.id: d.message for d in spec.contract.rules}
    header = docstring(f"Frozen policy {spec.name!r}, generated by veriguard. Do not edit.\n\n"
                       "The loader (enforce.loader) refuses this file unless its sha256 matches certificate.json.\n"
                       "It imports only the standard library.\n") + "\n"
    policy = _without_docstring(runnable)
    checker = checker_source(spec.contract)
    constants = "".join(f"{name} = {value!r}\n" for name, value in (
        ("POLICY_NAME", spec.name), ("RULE_IDS", tuple(rules)), ("RULES", rules),
        ("ARGUMENTS", argument_schema(spec.signature))))
    for part, kind in ((policy, "runnable"), (checker, "checker"), (constants, "constants")):
        check_generated(part, kind)
    support = _without_docstring(Path(runtime_support.__file__).read_text(encoding="utf-8"))
    entry = _without_docstring(Path(frozen_entry.__file__).read_text(encoding="utf-8"))
    parts = [header, "# --- argument checks (veriguard runtime support) ---\n" + support,
             "# --- the proved policy (contracts stripped) ---\n" + policy,
             "# --- the runtime contract checker, compiled from the contract independently of the policy ---\n"
             + checker, "# --- constants ---\n" + constants, "# --- entry points (veriguard frozen entry) ---\n" + entry,
             ENTRY_BINDING]
    source = "\n\n".join(p.rstrip("\n") + "\n" for p in parts)
    check_composed(source, parts)
    return source
