"""Nagini-annotated source -> plain Python that runs without Nagini (contracts stripped)."""
from __future__ import annotations

import ast

CONTRACT_CALLS = {"Requires", "Ensures", "Invariant", "Decreases", "Assert", "Assume", "Fold", "Unfold", "Exsures"}
CONTRACT_DECORATORS = {"Pure", "Opaque", "Predicate", "ContractOnly", "Inline", "Ghost"}


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
