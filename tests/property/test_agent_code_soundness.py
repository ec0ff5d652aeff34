"""Random programs of tables, containers, aliases and functions, run on a fake database that records
every column read: whatever they read is among the pairs the extractor reports (or it refuses)."""
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veriguard.enforce.extract_code import extract_accesses
from veriguard.enforce.extract_errors import ExtractionError
from tests.conftest import examples

SCHEMA = {"diagnosis": ["patientunitstayid", "diagnosisname"], "lab": ["patientunitstayid", "labname"]}
NAMES = ["a", "b", "c", "d"]


class Row:
    def __init__(self, table, seen):
        self.table, self.seen = table, seen

    def __getitem__(self, column):
        if column not in SCHEMA[self.table]:
            raise KeyError(column)
        self.seen.add((self.table, column))
        return f"{self.table}.{column}"


class Table(Row):
    def __iter__(self):
        return iter([Row(self.table, self.seen)])


def tools(seen):
    def load(name):
        return Table(name, seen)

    def get_value(table, column):
        return table[column.split(",")[0].strip()]

    return {"LoadDB": load, "GetValue": get_value}


STATEMENTS = st.one_of(
    st.builds("{} = LoadDB('{}')".format, st.sampled_from(NAMES), st.sampled_from(sorted(SCHEMA))),
    st.builds("{} = []".format, st.sampled_from(NAMES)),
    st.builds("{} = {{}}".format, st.sampled_from(NAMES)),
    st.builds("{} = {}".format, st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.builds("{} = [{}]".format, st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.builds("{} = {{'k': {}}}".format, st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.builds("{} = ({}, 1)".format, st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.builds("{}.append({})".format, st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.builds("{}['k'] = {}".format, st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.builds("{} += [{}]".format, st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.builds("{}.setdefault('k', []).append({})".format, st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.builds("{}.extend({})".format, st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.builds("{} = {}[0]".format, st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.builds("{} = {}['k']".format, st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.builds("{} = {}[-1]".format, st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.builds("{} = list({}.values())".format, st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.builds("{} = {}.copy()".format, st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.builds("{} = {}[:]".format, st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.builds("{} = [x for x in {}]".format, st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.builds("for {} in {}:\n        pass".format, st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.builds("{} = sorted({}, key=lambda r: 0)".format, st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.builds("def f(p):\n        p.append(LoadDB('diagnosis'))\n    f({})".format, st.sampled_from(NAMES)),
    st.builds("for _ in [0]:\n        {} = {}\n        break\n        {} = 0".format, st.sampled_from(NAMES),
              st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.builds("for _ in [0, 1]:\n        x = {}['diagnosisname']\n        {} = {}\n        continue\n        {} = 0".format,
              st.sampled_from(NAMES), st.sampled_from(NAMES), st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.builds("if 1:\n        {} = {}\n        raise ValueError\n        {} = 0".format, st.sampled_from(NAMES),
              st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.builds("x = {}['{}']".format, st.sampled_from(NAMES), st.sampled_from(["diagnosisname", "labname"])),
    st.builds("x = GetValue({}, '{}')".format, st.sampled_from(NAMES), st.sampled_from(["diagnosisname", "labname"])),
)


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(STATEMENTS, min_size=1, max_size=12))
def test_every_column_a_program_reads_is_reported(statements):
    program = "".join(f"try:\n    {s}\nexcept Exception:\n    pass\n" for s in statements)
    try:
        reported = set(extract_accesses(program, SCHEMA).pairs)
    except ExtractionError:
        return  # refused: denied, nothing to compare
    seen: set[tuple[str, str]] = set()
    namespace = {"__builtins__": {"Exception": Exception, "ValueError": ValueError, "list": list, "sorted": sorted},
                 **tools(seen)}
    exec(program, namespace)  # noqa: S102 -- the point: run what was generated above on the fake database
    assert seen <= reported, f"read {sorted(seen - reported)} unreported in:\n{program}"
