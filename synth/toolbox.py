"""The verified toolbox: helpers with their own contracts, instantiated per policy.

Loop invariants are written here once. Each helper is re-verified inside every policy that
uses it, and tests/integration verifies the templates with an uninterpreted predicate.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ItemShape:
    """How one element of a list argument is passed to an item predicate."""

    elem_type: str       # e.g. "Tuple[str, str]"
    arity: int           # 1 for scalar elements

    def parts(self, element: str) -> list[str]:
        return [element] if self.arity == 1 else [f"{element}[{k}]" for k in range(self.arity)]


def _call(pred: str, fixed: list[str], parts: list[str]) -> str:
    return f"{pred}(" + ", ".join(fixed + parts) + ")"


VIOLATORS = '''
def {name}({params}) -> List[{T}]:
    """Every element of {xs} that fails {pred}, in order (toolbox: violators)."""
    Requires(Acc(list_pred({xs}), 1/2))
    Ensures(Acc(list_pred({xs}), 1/2))
    Ensures(Acc(list_pred(ResultT(List[{T}]))))
    Ensures(Forall(ResultT(List[{T}]), lambda vg_p: (not {pred_p}, [])))  # soundness: only failing elements
    Ensures(Forall(ResultT(List[{T}]), lambda vg_p: (vg_p in {xs}, [])))  # soundness: only requested elements
    Ensures(Forall(int, lambda vg_j: (Implies(0 <= vg_j and vg_j < len({xs}) and not {pred_j}, {xs}[vg_j] in ResultT(List[{T}])), [[{xs}[vg_j]]])))  # completeness
    vg_out: List[{T}] = []
    vg_i = 0
    while vg_i < len({xs}):
        Invariant(Acc(list_pred({xs}), 1/2) and Acc(list_pred(vg_out)))
        Invariant(0 <= vg_i and vg_i <= len({xs}))
        Invariant(Forall(vg_out, lambda vg_p: (not {pred_p}, [])))
        Invariant(Forall(vg_out, lambda vg_p: (vg_p in {xs}, [])))
        Invariant(Forall(int, lambda vg_j: (Implies(0 <= vg_j and vg_j < vg_i and not {pred_j}, {xs}[vg_j] in vg_out), [[{xs}[vg_j]]])))
        if not {pred_i}:
            vg_out.append({xs}[vg_i])
        vg_i += 1
    return vg_out
'''


def violators(name: str, pred: str, fixed: list[tuple[str, str]], xs: str, shape: ItemShape) -> str:
    """Source of a violators helper for predicate `pred(fixed..., element parts...)` over list `xs`."""
    fixed_names = [n for n, _ in fixed]
    params = ", ".join([f"{n}: {t}" for n, t in fixed] + [f"{xs}: List[{shape.elem_type}]"])
    return VIOLATORS.format(
        name=name, params=params, T=shape.elem_type, xs=xs, pred=pred,
        pred_p=_call(pred, fixed_names, shape.parts("vg_p")),
        pred_j=_call(pred, fixed_names, shape.parts(f"{xs}[vg_j]")),
        pred_i=_call(pred, fixed_names, shape.parts(f"{xs}[vg_i]")),
    )


REVEAL = ("    Assert(Forall(int, lambda vg_j: (Implies(0 <= vg_j and vg_j < len({xs}), "
          "Reveal({pred_j}) == {body_j}), [[{xs}[vg_j]]])))  # reveal {pred} on every element of {xs}\n")


def reveal(pred: str, fixed: list[str], xs: str, shape: ItemShape, body_j: str) -> str:
    """An assertion that unfolds an opaque item predicate on each element, for property lemmas."""
    return REVEAL.format(xs=xs, pred=pred, pred_j=_call(pred, fixed, shape.parts(f"{xs}[vg_j]")), body_j=body_j)
