"""The violation list helper: more than CHUNK rules are split into helpers joined with `+` (proved faster), and the
code that ships reports exactly the failed rules' numbers, in rule order, for every combination of flags."""
import itertools

import pytest

from veriguard.synth import toolbox
from veriguard.verify.runnable import strip_contracts

HEAD = "from typing import List\n\nfrom nagini_contracts.contracts import *\n\n\n"


@pytest.mark.parametrize("n", [1, 3, 4, 5, 8, 9, 13])
def test_the_shipped_code_reports_exactly_the_failed_rules(n):
    flags = [f"f_r{k}" for k in range(n)]
    source = HEAD + toolbox.violation_list(flags, [f"r{k}" for k in range(n)])
    helpers = source.count("def violation_list_")
    assert helpers == (0 if n <= toolbox.CHUNK else -(-n // toolbox.CHUNK))
    namespace: dict = {}
    exec(compile(strip_contracts(source), "<violation_list>", "exec"), namespace)  # noqa: S102 (our template)
    for combo in itertools.product([False, True], repeat=n) if n <= 9 else [(True,) * n, (False,) * n,
                                                                            tuple(k % 3 == 0 for k in range(n))]:
        assert namespace["violation_list"](*combo) == [k for k, failed in enumerate(combo) if failed]


def test_each_helper_states_its_own_range():
    source = toolbox.violation_list([f"f_r{k}" for k in range(6)], [f"r{k}" for k in range(6)])
    assert "lambda vg_v: (4 <= vg_v and vg_v < 6, [])" in source  # the second helper's numbers
    assert "lambda vg_v: (0 <= vg_v and vg_v < 6, [])" in source  # the whole list's
    assert "(5 in ResultT(List[int])) == f_r5)  # rule r5" in source
