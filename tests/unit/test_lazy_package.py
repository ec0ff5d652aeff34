"""`import veriguard` loads nothing until a name is used (PEP 562), so a process that needs one part
(the Claude Code hook) does not pay for the others; every public name still resolves."""
from __future__ import annotations

import subprocess
import sys

import pytest

import veriguard
from tests.conftest import ROOT


def run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
                          timeout=120).stdout.strip()


def test_importing_the_package_loads_no_layer() -> None:
    loaded = run("import sys, veriguard; print(sorted(m for m in sys.modules if m.startswith('veriguard.')))")
    assert loaded == "[]"


def test_every_public_name_resolves_from_its_module() -> None:
    assert sorted(veriguard.__all__) == sorted(veriguard._HOME)
    for name in veriguard.__all__:
        value = getattr(veriguard, name)
        assert value.__name__ == name and value.__module__ == veriguard._HOME[name]
    assert set(veriguard.__all__) <= set(dir(veriguard))
    assert run("from veriguard import *; print(Monitor.__name__, load_policy.__name__)") == "Monitor load_policy"


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        veriguard.no_such_name  # noqa: B018
