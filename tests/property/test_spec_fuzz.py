"""The spec loader on random and mutated specs: it loads them or raises SpecError (ContractError is one),
never another exception: no traceback, whatever the bytes."""
import re
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veriguard.contracts.errors import SpecError
from veriguard.synth.specfile import load_spec
from tests.conftest import MINIMAL, SHIPPED, SPECS, examples

FRAGMENTS = [
    "[" * 400, "]" * 3, "{a=" * 200, "}", "not " * 2000, " and x" * 500, "9" * 5000, "-" * 300, "(" * 500,
    '"', '"""', "'''", "\\", "\\u", "\n", "\r", "\x00", "\x7f", "\u2028", "\ufeff", "=", "#", ",", ".", "[[examples]]",
    "[types]", "[arguments]", "[tables.x]", "[extraction]", "[contract]", "[verify]", 'x = "int"', "x = 1",
    'file = "../../etc/passwd"', 'file = "/etc/passwd"', 'schema = "../x"', 'bank = "."', 'file = ""',
    "__import__('os')", "x: int = 1, *, y", "class", "match", "_", "__init__", "vg_", "decide", "len", "rule",
    "forall (a, b) in items:", "exists x in", "==>", "violated(", "denied(", "allowed", "true", "false", "nan", "inf",
    "1979-05-27T07:32:00Z", "0x1F", "1e999", "{ enum = [] }", "{ record = {} }", "list[list[int]]", "(str, (int))",
    "signature = \"(Role) -> list[int]\"", "default = []", "violations = [[1]]", "denied = [{}]", "args = 3",
    "z3_bound = -1", "nagini_timeout = 99999999999999999999", "mutation_threshold = nan",
]
LINE_KEY = re.compile(r"^\s*([A-Za-z0-9_\"\-.]+)\s*=", re.M)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A copy of specs/ (tables beside each spec) plus MINIMAL and its table."""
    target = tmp_path_factory.mktemp("specs")
    shutil.copytree(SPECS, target, dirs_exist_ok=True)
    (target / "ok.json").write_text('{"admin": {"db": ["x", "y"]}, "user": {"db": ["x"]}}')
    (target / "mini.toml").write_text(MINIMAL.lstrip("\n"))
    return target


SOURCES = [p.name for p in SHIPPED] + ["mini.toml"]


def original(name):
    return MINIMAL.lstrip("\n") if name == "mini.toml" else (SPECS / name).read_text()


@st.composite
def edit(draw, text):
    kind = draw(st.sampled_from(["char", "fragment", "delete", "line", "key", "bytes"]))
    n = len(text)
    at = draw(st.integers(0, n))
    if kind == "char":
        return text[:at] + draw(st.characters(exclude_categories=["Cs"])) + text[at + 1:]
    if kind == "fragment":
        return text[:at] + draw(st.sampled_from(FRAGMENTS)) + text[at:]
    if kind == "delete":
        return text[:at] + text[at + draw(st.integers(1, 40)):]
    if kind == "line":
        lines = text.split("\n")
        i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
        how = draw(st.sampled_from(["drop", "copy", "swap"]))
        if how == "drop":
            del lines[i]
        elif how == "copy":
            lines.insert(j, lines[i])
        else:
            lines[i], lines[j] = lines[j], lines[i]
        return "\n".join(lines)
    if kind == "key":
        keys = list(LINE_KEY.finditer(text))
        if not keys:
            return text
        m = draw(st.sampled_from(keys))
        new = draw(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12)))
        return text[:m.start(1)] + new + text[m.end(1):]
    return text  # "bytes": mutated after encoding, in `mutated`


@st.composite
def mutated(draw):
    name = draw(st.sampled_from(SOURCES))
    text = original(name)
    for _ in range(draw(st.integers(1, 4))):
        text = draw(edit(text))
    data = text.encode("utf-8", "surrogatepass")
    if draw(st.booleans()) and data:
        at = draw(st.integers(0, len(data) - 1))
        data = data[:at] + bytes([draw(st.integers(0, 255))]) + data[at + 1:]
    return name, data


def loads_or_spec_error(folder, name, data):
    path = folder / name
    path.write_bytes(data)
    try:
        load_spec(path)
    except SpecError as e:
        assert e.code and e.message and e.file, e  # a coded error that names its file, never a bare one


@settings(max_examples=examples(400), deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(mutated())
def test_mutated_specs_load_or_raise_spec_error(folder, case):
    loads_or_spec_error(folder, *case)


@settings(max_examples=examples(150), deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(st.binary(max_size=300), st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass")),
                 st.lists(st.sampled_from(FRAGMENTS), max_size=12).map(lambda f: "\n".join(f).encode())))
def test_random_bytes_load_or_raise_spec_error(folder, data):
    loads_or_spec_error(folder, "random.toml", data)


def test_the_unmutated_sources_load(folder):
    for name in SOURCES:
        (folder / name).write_text(original(name))
        assert load_spec(folder / name).contract is not None
