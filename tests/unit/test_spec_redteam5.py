"""The fifth red-team pass on specs (helper C24, 2026-11-30): an enum whose values differ only in how they are spelt
in Unicode (`café` composed and decomposed, full-width letters, a zero-width space) loaded as two values that read
the same: a request spelt one way matched no rule written the other way. Such an enum is now spec.enum, at the type,
naming both values."""
import pytest

from veriguard.contracts.errors import SpecError
from veriguard.synth.specfile import load_spec
from tests.conftest import MINIMAL, write_spec

ENUM = 'Role = { enum = ["admin", "user"] }'


@pytest.mark.parametrize("values", [
    ["admin", "caf\u00e9", "cafe\u0301"],          # NFC and NFD
    ["admin", "user", "\uff55\uff53\uff45\uff52"],  # full-width `user`
    ["admin", "ad\u200bmin"],                      # a zero-width space
    ["admin", "\u2060admin"],                      # a word joiner
    ["user", "admin", "\ufb01le", "file"],         # the ligature fi
])
def test_enum_values_that_read_the_same_are_refused_at_the_type(tmp_path, values):
    body = MINIMAL.replace(ENUM, "Role = { enum = [%s] }" % ", ".join(f'"{v}"' for v in values), 1)
    with pytest.raises(SpecError) as e:
        load_spec(write_spec(tmp_path, body, table='{"admin": {"db": ["x"]}}'))
    assert e.value.code == "spec.enum" and e.value.pos.line == 5 and "read the same" in e.value.message
    assert e.value.fix


def test_distinct_values_in_other_scripts_still_load(tmp_path):
    body = MINIMAL.replace(ENUM, 'Role = { enum = ["admin", "user", "caf\u00e9", "cafe", "\u00e9t\u00e9"] }', 1)
    assert load_spec(write_spec(tmp_path, body)).name == "mini"
