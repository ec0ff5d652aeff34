"""What a contract talks about: named types, typed arguments, constant tables."""
from __future__ import annotations

from dataclasses import dataclass, field

from veriguard.contracts.errors import NOWHERE, Pos
from veriguard.contracts.types import BoolT, ListT, RecordT, Scalar, TupleT, Type

Value = bool | int | str


@dataclass(frozen=True)
class Table:
    """A constant function of scalars, e.g. `permitted(role, db, col) -> bool`.

    `rows` maps argument tuples to results; any other tuple gives `default`. For a relation
    (result bool) the rows are exactly the tuples for which it is true.
    """

    name: str
    params: tuple[Scalar, ...]
    result: Scalar
    rows: tuple[tuple[tuple[Value, ...], Value], ...]
    default: Value = False
    doc: str = ""
    source: str = ""
    pos: Pos = field(default=NOWHERE, compare=False)
    sha256: str = field(default="", compare=False)  # of the file's bytes the rows were read from

    @property
    def is_relation(self) -> bool:
        return isinstance(self.result, BoolT) and self.default is False

    def lookup(self, key: tuple[Value, ...]) -> Value:
        return dict(self.rows).get(key, self.default)


@dataclass(frozen=True)
class Argument:
    name: str
    type: Type
    doc: str = ""
    pos: Pos = field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class Signature:
    types: tuple[tuple[str, Type], ...]
    arguments: tuple[Argument, ...]
    tables: tuple[Table, ...]

    def argument(self, name: str) -> Argument | None:
        return next((a for a in self.arguments if a.name == name), None)

    def table(self, name: str) -> Table | None:
        return next((t for t in self.tables if t.name == name), None)

    def flat_params(self) -> list[tuple[str, Type]]:
        """The compiled policy's parameters: records flattened to one parameter per field."""
        out: list[tuple[str, Type]] = []
        for a in self.arguments:
            if isinstance(a.type, RecordT):
                out.extend((f"{a.name}_{f}", t) for f, t in a.type.fields)
            else:
                out.append((a.name, a.type))
        return out

    def list_arguments(self) -> list[Argument]:
        return [a for a in self.arguments if isinstance(a.type, ListT)]


def element_types(t: ListT) -> tuple[Scalar, ...]:
    return t.elem.items if isinstance(t.elem, TupleT) else (t.elem,)
