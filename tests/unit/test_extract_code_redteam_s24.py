"""Red-team pass s24 on the code extractor: a dunder bound without an ast.Name changes what a function reads.

`import statistics as __builtins__` binds the exec namespace's `__builtins__`; a function, lambda or generator made
after it takes statistics' names (sys, random, math, numbers) as its builtins, so `sys` in its body is no NameError:
`sys._getframe(1).f_globals['LoadDB']` reaches the tools. Only dunders read as names were refused; those bound by
an import's alias, a def, a parameter or `except ... as` were let through, and the body read as raising.
"""
import json

import pytest

from veriguard.enforce.extract_code import extract_accesses
from veriguard.enforce.extract_errors import ExtractionError
from tests.conftest import SHIPPED

SCHEMA = json.loads((next(p for p in SHIPPED if p.stem == "eicu_ac").parent / "eicu_ac" / "schema.json")
                    .read_text(encoding="utf-8"))["databases"]
REACH = "sys._getframe(1).f_globals['LoadDB']('diagnosis')['diagnosisname']"


def pairs(code: str) -> set[tuple[str, str]]:
    return set(extract_accesses(code, SCHEMA, complete=True, pipe_free_values=True).pairs)


def refusal(code: str) -> str:
    with pytest.raises(ExtractionError) as info:
        pairs(code)
    assert info.value.code == "extract.code.unanalysable"
    return info.value.message


def test_statistics_bound_as_builtins_gives_a_function_sys_for_real():
    """The premise, run for real: the function reaches LoadDB through statistics' sys."""
    seen: list[str] = []
    namespace = {"LoadDB": lambda name: seen.append(name) or {"diagnosisname": 1}}
    exec("import statistics as __builtins__\ndef f():\n    return " + REACH + "\nanswer = f()", namespace)
    assert seen == ["diagnosis"] and namespace["answer"] == 1


BOUND = {
    "import_alias": "import statistics as __builtins__\ndef f():\n    return " + REACH + "\nanswer = f()",
    "import_alias_lambda": "import statistics as __builtins__\nf = lambda: " + REACH + "\nanswer = f()",
    "import_alias_generator": "import statistics as __builtins__\nanswer = list(" + REACH + " for _ in [0])",
    "from_import_alias": "from statistics import mean as __builtins__\nanswer = 1",
    "def": "def __builtins__():\n    pass\nanswer = LoadDB('diagnosis')['diagnosisname']",
    "except_as": "try:\n    1 / 0\nexcept Exception as __builtins__:\n    pass\nanswer = 1",
    "parameter": "def f(__builtins__):\n    return 1\nanswer = f(1)",
    "lambda_parameter": "answer = (lambda __x: 1)(2)",
    "other_dunder": "import math as __name__\nanswer = 1",
}


@pytest.mark.parametrize("code", BOUND.values(), ids=list(BOUND))
def test_a_dunder_bound_by_any_means_is_refused(code):
    message = refusal(code)
    assert "bound (interpreter internals)" in message and "`__" in message


@pytest.mark.parametrize("code", ["import statistics as _s\ndef f():\n    return 1\nanswer = f()",
                                  "import math as m_\nanswer = m_.floor(1.5)",
                                  "def _helper(_x):\n    return _x\nanswer = _helper(1)",
                                  "try:\n    1 / 0\nexcept Exception as _e:\n    answer = 1"])
def test_single_underscore_names_are_still_plain_names(code):
    assert pairs(code) == set()
