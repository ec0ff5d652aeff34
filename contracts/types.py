"""Types of policy arguments and table columns."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Union


@dataclass(frozen=True)
class BoolT:
    def __str__(self) -> str:
        return "bool"


@dataclass(frozen=True)
class IntT:
    def __str__(self) -> str:
        return "int"


@dataclass(frozen=True)
class StrT:
    def __str__(self) -> str:
        return "str"


@dataclass(frozen=True)
class EnumT:
    """A closed set of string values; at run time the value is the string itself."""

    name: str
    values: tuple[str, ...]

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class TupleT:
    items: tuple["Scalar", ...]

    def __str__(self) -> str:
        return "(" + ", ".join(map(str, self.items)) + ")"


@dataclass(frozen=True)
class ListT:
    elem: Union["Scalar", TupleT]

    def __str__(self) -> str:
        return f"list[{self.elem}]"


@dataclass(frozen=True)
class RecordT:
    """A record of scalar fields; the compiled policy receives one parameter per field."""

    name: str
    fields: tuple[tuple[str, "Scalar"], ...]

    def field(self, name: str) -> "Scalar | None":
        for fname, ftype in self.fields:
            if fname == name:
                return ftype
        return None

    def __str__(self) -> str:
        return self.name


Scalar = Union[BoolT, IntT, StrT, EnumT]
Type = Union[BoolT, IntT, StrT, EnumT, TupleT, ListT, RecordT]

BOOL = BoolT()
INT = IntT()
STR = StrT()


def is_scalar(t: object) -> bool:
    return isinstance(t, (BoolT, IntT, StrT, EnumT))


def is_stringy(t: object) -> bool:
    return isinstance(t, (StrT, EnumT))


def comparable(a: Type, b: Type) -> bool:
    """Whether `==` between values of these types is meaningful."""
    if is_stringy(a) and is_stringy(b):
        return not (isinstance(a, EnumT) and isinstance(b, EnumT) and a != b)
    return a == b


def python_type(t: Type) -> str:
    """The annotation used in generated policy code (Nagini subset)."""
    if isinstance(t, BoolT):
        return "bool"
    if isinstance(t, IntT):
        return "int"
    if isinstance(t, (StrT, EnumT)):
        return "str"
    if isinstance(t, TupleT):
        return "Tuple[" + ", ".join(python_type(i) for i in t.items) + "]"
    if isinstance(t, ListT):
        return f"List[{python_type(t.elem)}]"
    raise TypeError(f"no Python type for {t}")

# characters in one string constant of a rule or a table: z3 took 17 s over one of 4,000 and crashed the process
# (a segmentation fault) over one of 40,000 (the shipped specs' longest: 25)
MAX_TEXT = 256
