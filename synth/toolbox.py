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
    Ensures(Forall(ResultT(List[{T}]), lambda vg_p: (not {pred_p}, [])))  # rule {rule}: only failing items are denied
    Ensures(Forall(ResultT(List[{T}]), lambda vg_p: (vg_p in {xs}, [])))  # rule {rule}: only requested items are denied
    Ensures(Forall(int, lambda vg_j: (Implies(0 <= vg_j and vg_j < len({xs}) and not {pred_j}, {xs}[vg_j] in ResultT(List[{T}])), [[{xs}[vg_j]]])))  # rule {rule}: every failing item is denied
    Ensures(Implies(len(ResultT(List[{T}])) > 0, Exists(int, lambda vg_j: (0 <= vg_j and vg_j < len({xs}) and not {pred_j}, [[{xs}[vg_j]]]))))  # rule {rule}: a denial has a failing item
    vg_out: List[{T}] = []
    vg_i = 0
    while vg_i < len({xs}):
        Invariant(Acc(list_pred({xs}), 1/2) and Acc(list_pred(vg_out)))  # rule {rule}: loop invariant
        Invariant(0 <= vg_i and vg_i <= len({xs}))  # rule {rule}: loop invariant
        Invariant(Forall(vg_out, lambda vg_p: (not {pred_p}, [])))  # rule {rule}: loop invariant
        Invariant(Forall(vg_out, lambda vg_p: (vg_p in {xs}, [])))  # rule {rule}: loop invariant
        Invariant(Forall(int, lambda vg_j: (Implies(0 <= vg_j and vg_j < vg_i and not {pred_j}, {xs}[vg_j] in vg_out), [[{xs}[vg_j]]])))  # rule {rule}: loop invariant
        Invariant(Implies(len(vg_out) > 0, Exists(int, lambda vg_j: (0 <= vg_j and vg_j < vg_i and not {pred_j}, [[{xs}[vg_j]]]))))  # rule {rule}: loop invariant
        if not {pred_i}:
            vg_out.append({xs}[vg_i])
        vg_i += 1
    return vg_out
'''


def violators(name: str, pred: str, fixed: list[tuple[str, str]], xs: str, shape: ItemShape, rule: str = "") -> str:
    """Source of a violators helper for predicate `pred(fixed..., element parts...)` over list `xs`."""
    fixed_names = [n for n, _ in fixed]
    params = ", ".join([f"{n}: {t}" for n, t in fixed] + [f"{xs}: List[{shape.elem_type}]"])
    return VIOLATORS.format(
        name=name, params=params, T=shape.elem_type, xs=xs, pred=pred, rule=rule or pred,
        pred_p=_call(pred, fixed_names, shape.parts("vg_p")),
        pred_j=_call(pred, fixed_names, shape.parts(f"{xs}[vg_j]")),
        pred_i=_call(pred, fixed_names, shape.parts(f"{xs}[vg_i]")),
    )


REVEAL = ("    Assert(Forall(int, lambda vg_j: (Implies(0 <= vg_j and vg_j < len({xs}), "
          "Reveal({pred_j}) == {body_j}), [[{xs}[vg_j]]])))  # reveal {pred} on every element of {xs}\n")


def reveal(pred: str, fixed: list[str], xs: str, shape: ItemShape, body_j: str) -> str:
    """An assertion that unfolds an opaque item predicate on each element, for property lemmas."""
    return REVEAL.format(xs=xs, pred=pred, pred_j=_call(pred, fixed, shape.parts(f"{xs}[vg_j]")), body_j=body_j)


CHUNK = 4  # flags per helper: 4 conditional appends prove in about 5 s, 8 in one function in 21 to 27 s


def violation_list(flags: list[str], rule_ids: list[str]) -> str:
    """The numbers of the failed rules, in rule order, from one flag per rule (toolbox: violation list).

    Rules are numbered, not named, inside the proof: Z3 separates integers instantly but needs
    tens of seconds to separate string literals in a list (measured: 5 s vs 42 s for 7 rules).
    More than CHUNK rules: one helper per CHUNK of them, joined with `+` (the cost of proving the
    membership postconditions grows faster than the number of appends: 8 rules in one function took
    21 to 27 s, as two helpers and a join 7.5 to 8.2 s, 2026-11-23).
    """
    if len(flags) <= CHUNK:
        return _violations("violation_list", flags, rule_ids, 0, len(flags), [_appends(flags, 0)])
    chunks = [(k, flags[k:k + CHUNK]) for k in range(0, len(flags), CHUNK)]
    parts = [_violations(f"violation_list_{n}", part, rule_ids[k:k + CHUNK], k, k + len(part), [_appends(part, k)])
             for n, (k, part) in enumerate(chunks)]
    join = [f"    vg_part{n} = violation_list_{n}({', '.join(part)})" for n, (_, part) in enumerate(chunks)]
    join.append(f"    return {' + '.join(f'vg_part{n}' for n in range(len(chunks)))}")
    return "\n\n".join(parts + [_violations("violation_list", flags, rule_ids, 0, len(flags), [join])])


def _appends(flags: list[str], first: int) -> list[str]:
    lines = ["    vg_out: List[int] = []"]
    for k, f in enumerate(flags, start=first):
        lines += [f"    if {f}:", f"        vg_out.append({k})"]
    return lines + ["    return vg_out"]


def _violations(name: str, flags: list[str], rule_ids: list[str], first: int, end: int,
                body: list[list[str]]) -> str:
    """A function returning the numbers first..end-1 of the failed rules among `flags`, with its contract."""
    params = ", ".join(f"{f}: bool" for f in flags)
    r = "ResultT(List[int])"
    lines = [f"def {name}({params}) -> List[int]:",
             '    """Numbers of the failed rules in rule order (toolbox: violation list)."""',
             f"    Ensures(Acc(list_pred({r})))"]
    lines += [f"    Ensures(({k} in {r}) == {f})  # rule {rid}: reported exactly when it fails"
              for k, (f, rid) in enumerate(zip(flags, rule_ids), start=first)]
    lines.append(f"    Ensures(Forall({r}, lambda vg_v: ({first} <= vg_v and vg_v < {end}, [])))  # decision: only rule numbers")
    lines.append(f"    Ensures((len({r}) == 0) == (" + " and ".join(f"not {f}" for f in flags) + "))")
    for b in body:
        lines += b
    return "\n".join(lines) + "\n"
