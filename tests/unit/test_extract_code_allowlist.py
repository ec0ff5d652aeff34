"""The analysable subset: every construct outside it is refused, and inside it nothing escapes the count.

Each attack below tries to read diagnosis.diagnosisname without it being counted. It must either be
refused (ExtractionError) or be counted.
"""
import pytest

from veriguard.enforce.extract_code import extract_accesses
from veriguard.enforce.extract_errors import ExtractionError

SCHEMA = {
    "patient": ["patientunitstayid", "uniquepid", "age", "hospitaladmittime"],
    "lab": ["patientunitstayid", "labname", "labresult", "labresulttime"],
    "diagnosis": ["patientunitstayid", "diagnosisname", "diagnosistime"],
}
SECRET = ("diagnosis", "diagnosisname")
D = "d = LoadDB('diagnosis')\nx = GetValue(FilterDB(d, 'patientunitstayid=1'), 'patientunitstayid')\n"  # names a column


def pairs(code, **options) -> set[tuple[str, str]]:
    return set(extract_accesses(code, SCHEMA, **options).pairs)


def refusal(code, **options) -> ExtractionError:
    with pytest.raises(ExtractionError) as info:
        extract_accesses(code, SCHEMA, **options)
    return info.value


# ---- refused: outside the subset ------------------------------------------------------------------
UNANALYSABLE = {
    # reflection and interpreter internals
    "generator frame": "g = (x for x in [0])\nL = g.gi_frame.f_globals['LoadDB']",
    "function globals": "f = lambda: 0\nL = f.__globals__['LoadDB']",
    "bound method self": "import datetime\nm = datetime.datetime.now.__self__",
    "attribute of a function": "f = lambda: 0\ng = f.func_globals",
    "attribute of a tool": "x = LoadDB.keywords",
    "builtins dict": "b = __builtins__",
    "vars": "v = vars()",
    "type makes classes": "C = type('C', (), {})",
    "getattr with a built name": D + "v = getattr(d, 'diagnosis' + 'name')",
    "array base reaches other columns": D + "b = d['patientunitstayid'].values.base",
    "pandas query evaluates text": D + "q = d.query('patientunitstayid > 0')",
    "pandas apply": D + "q = d.apply(len)",
    "unknown table attribute": D + "q = d.secret",
    "header module": "t = tabtools.db_loader('diagnosis')",
    "calculator module": "c = calculator.WolframAlphaCalculator",
    # module internals and modules outside the list
    "collections._sys": "import collections\nm = collections._sys.modules",
    "from-import of an internal": "from collections import _sys",
    "datetime.sys": "import datetime\ns = datetime.sys",
    "dunder of a module": "import math\nl = math.__loader__",
    "calendar": "import calendar\nm = calendar.sys.modules",
    "string.Formatter": "import string\nf = string.Formatter()",
    "operator.itemgetter": "import operator\ng = operator.itemgetter('diagnosisname')",
    "functools.partial": "import functools\np = functools.partial(LoadDB, 'diagnosis')",
    "relative import": "from . import tools",
    "dotted import": "import os.path",
    # str.format reaching into its arguments
    "format attribute field": "import datetime\ns = '{0.min}'.format(datetime.datetime)",
    "format index field": D + "s = '{0[diagnosisname]}'.format(d)",
    "format nested spec field": "s = '{0:{1.real}}'.format(1, 2)",
    "format template from run time": D + "tpl = GetValue(d, 'patientunitstayid')\ns = tpl.format(d)",
    "format template with a run-time part": "s = ('{' + str(k) + '}').format(1)",
    "format_map": "s = '{x}'.format_map({'x': 1})",
    # late binding
    "lambda reads a global bound later": "f = lambda: t['diagnosisname']\nt = LoadDB('diagnosis')\nanswer = f()",
    "def reads a global table": D + "def f():\n    return d['diagnosisname']\nanswer = f()",
    "closure over a local": "def outer():\n    t = LoadDB('diagnosis')\n    def inner():\n        return t['diagnosisname']\n"
                            "    return 1",
    "lambda closure in a comprehension": "fs = [lambda: r['diagnosisname'] for r in LoadDB('diagnosis')]",
    "rebound builtin read in a function": "len = LoadDB\ndef f():\n    return len('diagnosis')",
    "function rebound after its def": "def g():\n    return 1\ndef f():\n    return g()\ng = LoadDB",
    "module rebound": "import datetime\ndatetime = LoadDB\ndef f():\n    return datetime('diagnosis')",
    "generator kept for later": D + "g = (r['diagnosisname'] for r in [d])\nanswer = list(g)",
    "map with a lambda": D + "m = map(lambda r: r['diagnosisname'], [d])",
    "filter": D + "m = filter(None, [d])",
    # statements outside the subset
    "walrus": "x = [(t := LoadDB('diagnosis')) for _ in [0]]",
    "match": "match x:\n    case _:\n        pass",
    "decorator": "@staticmethod\ndef f():\n    pass",
    "class": "class C:\n    pass",
    "with": "with x as f:\n    pass",
    "del": "x = 1\ndel x",
    "global": "def f():\n    global g\n    g = LoadDB('diagnosis')",
    "nonlocal": "def f():\n    t = 1\n    def g():\n        nonlocal t\n        t = LoadDB('diagnosis')\n    return t",
    "async": "async def f():\n    pass",
    "yield": "def f():\n    yield LoadDB('diagnosis')",
    "annotated assignment evaluates its annotation": "x: LoadDB('diagnosis')['diagnosisname'] = 1",
    "annotated parameter": "def f(x: LoadDB('diagnosis')):\n    pass",
    "star arguments": "args = ['diagnosis']\nt = LoadDB(*args)",
    "keyword unpacking": "kw = {}\nx = print(**kw)",
    "attribute store": "import datetime\ndatetime.x = LoadDB('diagnosis')",
    "write into a table": D + "d['patientunitstayid'] = 1",
    "calling an unknown value": D + "f = d['patientunitstayid'].tolist\nf()",
    "bound method called later": "a = []\nadd = a.append\nadd(LoadDB('diagnosis'))",
    "matmul": "x = [1] @ [2]",
    "calling what dict.get gave": "d = {}\nx = d.get('k')\nx(GetValue(LoadDB('diagnosis'), 'diagnosisname'))",
}


@pytest.mark.parametrize("name", sorted(UNANALYSABLE))
def test_constructs_outside_the_subset_are_refused(name):
    error = refusal(UNANALYSABLE[name])
    assert error.code == "extract.code.unanalysable", error
    assert error.message.startswith("unanalysable code: ") and " at line " in error.message


# ---- counted: inside the subset, nothing escapes ----------------------------------------------------
COUNTED = {
    "alias then append": "a = []\nb = a\nb.append(LoadDB('diagnosis'))\nx = GetValue(b[0], 'patientunitstayid')\n"
                         "y = a[0]['diagnosisname']",
    "loop variable alias": "a = []\nfor lst in [a]:\n    lst.append(LoadDB('diagnosis'))\nx = a[0]['diagnosisname']",
    "alias inside a dict": "a = []\nd = {'k': a}\nd['k'].append(LoadDB('diagnosis'))\nx = a[0]['diagnosisname']",
    "alias inside a tuple": "a = []\nt = (a, 1)\nt[0].append(LoadDB('diagnosis'))\nx = a[0]['diagnosisname']",
    "augmented add through an alias": "a = []\nb = a\nb += [LoadDB('diagnosis')]\nx = a[0]['diagnosisname']",
    "augmented add through a subscript": "a = []\nb = [a]\nb[0] += [LoadDB('diagnosis')]\nx = a[0]['diagnosisname']",
    "dict view": "a = []\nfor w in {'x': a}.values():\n    w.append(LoadDB('diagnosis'))\nx = a[0]['diagnosisname']",
    "star target": "first, *rest = [[], []]\nrest.append(LoadDB('diagnosis'))\nx = rest[-1]['diagnosisname']",
    "setdefault": "d = {}\nd.setdefault('k', []).append(LoadDB('diagnosis'))\nx = d['k'][0]['diagnosisname']",
    "defaultdict": "from collections import defaultdict\nd = defaultdict(list)\nd['k'].append(LoadDB('diagnosis'))\n"
                   "x = d['k'][0]['diagnosisname']",
    "comprehension appends to an alias": "a = []\n[l.append(LoadDB('diagnosis')) for l in [a]]\n"
                                         "x = a[0]['diagnosisname']",
    "concatenated list aliased": "a = [] + []\nb = a\nb.append(LoadDB('diagnosis'))\nx = a[0]['diagnosisname']",
    "dict comprehension": "d = {k: LoadDB('diagnosis') for k in ['x']}\nx = d['x']['diagnosisname']",
    "added after it is read": "a = []\nfor i in range(2):\n    y = [r['diagnosisname'] for r in a]\n"
                              "    a.append(LoadDB('diagnosis'))",
    "passed to a function": "a = []\ndef f(l):\n    l.append(LoadDB('diagnosis'))\nf(a)\nx = a[0]['diagnosisname']",
    "stored into a run-time value": D + "o = GetValue(d, 'patientunitstayid, list')\na = []\no[0] = a\n"
                                        "a.append(d)\nx = o[0][0]['diagnosisname']",
    "attribute column": D + "x = d.diagnosisname",
    "sort key sees every row": D + "rows = sorted(d, key=lambda r: r['diagnosisname'])",
    "default argument": D + "def f(x=d):\n    return x['diagnosisname']",
    "raised value": D + "try:\n    raise ValueError(d)\nexcept ValueError as e:\n    answer = str(e)",
    "exception hides the binding": "try:\n    t = LoadDB('diagnosis')\n    1 / 0\nexcept ZeroDivisionError:\n"
                                   "    pass\nx = t['diagnosisname']",
    "state at a break": "for x in [0]:\n    t = FilterDB(LoadDB('diagnosis'), 'patientunitstayid=1')\n    break\n"
                        "    t = 1\nanswer = t['diagnosisname']",
    "state at a continue": "t = 0\nfor x in [0, 1]:\n    y = t['diagnosisname']\n"
                           "    t = FilterDB(LoadDB('diagnosis'), 'patientunitstayid=1')\n    continue\n    t = 1",
    "raise deep inside a try": "try:\n    if c:\n        t = FilterDB(LoadDB('diagnosis'), 'patientunitstayid=1')\n"
                               "        raise ValueError\n        t = 1\nexcept ValueError:\n    x = t['diagnosisname']",
    "slice assignment splices elements": "lst = []\nt = FilterDB(LoadDB('diagnosis'), 'patientunitstayid=1')\n"
                                          "lst[0:1] = [t]\nx = lst[0]['diagnosisname']",
    "whole-table method": D + "h = d.head(3)",
    "values of a table": D + "v = d.values",
    "printed": D + "print(d)",
}


@pytest.mark.parametrize("name", sorted(COUNTED))
def test_reads_inside_the_subset_are_counted(name):
    assert SECRET in pairs(COUNTED[name])


# ---- what the subset allows and how it reads it -----------------------------------------------------
def test_benign_agent_constructs_read_exactly_what_they_name():
    code = ("from datetime import datetime\nimport datetime as dt\nfrom collections import Counter\n"
            "lab = FilterDB(LoadDB('lab'), 'patientunitstayid=1||labname=mcv')\n"
            "results = GetValue(lab, 'labresult, list')\ntimes = GetValue(lab, 'labresulttime, list')\n"
            "by_month = {}\nfor i in range(len(results)):\n"
            "    month = datetime.strptime(times[i], '%Y-%m-%d %H:%M:%S').month\n"
            "    if month not in by_month or results[i] > by_month[month]:\n        by_month[month] = results[i]\n"
            "counts = Counter(results)\ntop = sorted(counts.items(), key=lambda x: x[1], reverse=True)[:3]\n"
            "recent = sum(1 for t in times if dt.datetime.now().year - 1 >= 2104)\n"
            "try:\n    value = float(results[0].split(', ')[0])\nexcept ValueError:\n    value = None\n"
            "for index, row in lab.iterrows():\n    if isinstance(row, dict) and not lab.empty:\n"
            "        name = row['labname']\n"
            "answer = [top[0][0], by_month, recent, value, set(results) & set(times)]\n")
    access = extract_accesses(code, SCHEMA)
    assert set(access.pairs) == {("lab", c) for c in ("patientunitstayid", "labname", "labresult", "labresulttime")}
    assert access.confidence == 1.0


def test_functions_may_read_parameters_locals_imports_and_tools():
    code = ("import datetime\ndef year_of(text):\n    parsed = datetime.datetime.strptime(text, '%Y')\n"
            "    return parsed.year\ndef first_lab():\n    return GetValue(LoadDB('lab'), 'labname')\n"
            "answer = year_of('2104') + len(first_lab())\n")
    assert pairs(code) == {("lab", "labname")}


def test_a_name_bound_nowhere_raises_and_reads_nothing():
    assert pairs("x = np.float64(3.0)\ny = undefined.attr(LoadDB('diagnosis'))") == set()


def test_eval_of_a_table_raises_type_error_so_nothing_runs():
    code = D + "d2 = eval(FilterDB(d, 'patientunitstayid=2'))"
    assert pairs(code) == {("diagnosis", "patientunitstayid")}
    assert refusal("x = eval('1')").code == "extract.code.unanalysable"


def test_getvalue_with_an_aggregation_the_tool_lacks_reads_nothing():
    assert pairs("x = GetValue(FilterDB(LoadDB('lab'), 'labname=k'), 'labresult, count')") == {("lab", "labname")}


def test_a_column_the_database_lacks_reads_nothing_only_when_the_schema_is_complete():
    code = "lab = LoadDB('lab')\nx = GetValue(FilterDB(lab, 'labid=3'), 'labname')\ny = FilterDB(lab, 'year(labresulttime)=2104')"
    assert refusal(code).code == "extract.code.unknown_column"
    assert pairs(code, complete=True) == {("lab", "labname")}
    only_absent = "lab = LoadDB('lab')\nx = GetValue(lab, 'labstring')"  # it raises: the program ends, lab unused
    assert pairs(only_absent, complete=True) == set()
    caught = "lab = LoadDB('lab')\ntry:\n    x = GetValue(lab, 'labstring')\nexcept Exception:\n    x = 0"
    assert pairs(caught, complete=True) == {("lab", c) for c in SCHEMA["lab"]}  # names no use of it


def test_several_programs_count_together_and_any_refusal_denies():
    assert set(extract_accesses(["x = GetValue(LoadDB('lab'), 'labname')", D], SCHEMA).pairs) == {
        ("lab", "labname"), ("diagnosis", "patientunitstayid")}
    with pytest.raises(ExtractionError) as info:
        extract_accesses(["x = 1", "y = eval('1')"], SCHEMA)
    assert "program 2 of 2" in info.value.message


@pytest.mark.parametrize("code", ["x = " + "(" * 300 + "1" + ")" * 300, "x = 1" + " + 1" * 20000,
                                  "x = " + "[" * 90 + "]" * 90, "x = " + "not " * 5000 + "y"])
def test_deep_code_is_read_or_refused_never_a_crash(code):
    try:
        extract_accesses(code, SCHEMA)
    except ExtractionError:
        pass


def test_code_too_costly_to_follow_is_refused_not_waited_on():
    code = "".join("    " * i + f"for v{i} in range(3):\n" + "    " * (i + 1) + f"w{i} = w{i} + 'a' if 0 else 'b'\n"
                   for i in range(25)) + "    " * 25 + "x = [1]\n"
    assert "too costly" in refusal(code).message
