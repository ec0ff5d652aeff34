"""The JSON-able argument schema that frozen policies validate against (see runtime_support)."""
from __future__ import annotations

from typing import Any

from veriguard.contracts.signature import Signature
from veriguard.contracts.types import BoolT, EnumT, IntT, ListT, RecordT, StrT, TupleT, Type


def type_schema(t: Type) -> dict[str, Any]:
    if isinstance(t, BoolT):
        return {"kind": "bool"}
    if isinstance(t, IntT):
        return {"kind": "int"}
    if isinstance(t, StrT):
        return {"kind": "str"}
    if isinstance(t, EnumT):
        return {"kind": "enum", "name": t.name, "values": list(t.values)}
    if isinstance(t, TupleT):
        return {"kind": "tuple", "items": [type_schema(i) for i in t.items]}
    if isinstance(t, ListT):
        return {"kind": "list", "elem": type_schema(t.elem)}
    if isinstance(t, RecordT):
        return {"kind": "record", "name": t.name, "fields": [[f, type_schema(ft)] for f, ft in t.fields]}
    raise TypeError(t)


def argument_schema(sig: Signature) -> list[tuple[str, dict[str, Any]]]:
    return [(a.name, type_schema(a.type)) for a in sig.arguments]
