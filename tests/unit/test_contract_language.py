import pytest

from veriguard.contracts.ast import render
from veriguard.contracts.check import check_contract
from veriguard.contracts.errors import ContractError
from veriguard.contracts.parse import parse_contract, parse_expr
from veriguard.contracts.signature import Argument, Signature, Table
from veriguard.contracts.types import BOOL, INT, STR, EnumT, ListT, RecordT, TupleT

ROLE = EnumT("Role", ("admin", "nursing"))
SIG = Signature(
    types=(("Role", ROLE),),
    arguments=(Argument("role", ROLE), Argument("age", INT),
               Argument("user", RecordT("User", (("age", INT), ("member", BOOL)))),
               Argument("items", ListT(TupleT((STR, STR)))), Argument("tags", ListT(STR))),
    tables=(Table("ok", (ROLE, STR, STR), BOOL, ((("admin", "db", "x"), True),)),),
)


def check(text):
    return check_contract(SIG, parse_contract(text))


def error(text) -> ContractError:
    with pytest.raises(ContractError) as e:
        check(text)
    return e.value


def test_parses_every_construct():
    c = check('''
        assume sane "ages": user.age >= 0 and user.age <= 150
        rule a "m1": role == "admin" ==> age >= 18
        rule b "m2": forall (x, y) in items: ok(role, x, y) or x in {"public", "open"}
        rule c "m3": len(tags) <= 3 and not user.member implies age - 1 > 16
        property p "m4": forall (x, y) in items: x == "secret" ==> denied(x, y)
        property q "m5": exists t in tags: t != "x" ==> allowed or violated(a)
    ''')
    assert [d.id for d in c.rules] == ["a", "b", "c"]
    assert [d.id for d in c.properties] == ["p", "q"]
    assert [d.id for d in c.assumes] == ["sane"]
    assert [r.decl.id for r in c.item_rules()] == ["b"]


def test_positions_are_kept():
    decls = parse_contract('\n\nrule a "m":\n    age >= 18\n')
    assert decls[0].pos.line == 3 and decls[0].pos.col == 1
    assert decls[0].body.pos.line == 4 and decls[0].body.pos.col == 5


def test_render_round_trips():
    text = 'forall (x, y) in items: (x == "a" and y != "b") ==> denied(x, y)'
    once = render(parse_expr(text))
    assert render(parse_expr(once)) == once


@pytest.mark.parametrize("text,line,col", [
    ('rule a "m": age = 18', 1, 17),
    ("rule a 'm': age >= 18", 1, 8),
    ('rule a "m": (age >= 18', 1, 21),  # end of text: lark points at the last token
    ('rule a "m": age >= 18 and forall x in tags: x == "a"', 1, 34),
])
def test_syntax_errors_have_place_and_fix(text, line, col):
    with pytest.raises(ContractError) as e:
        parse_contract(text)
    assert e.value.code == "contract.syntax"
    assert (e.value.pos.line, e.value.pos.col) == (line, col)
    assert e.value.fix


def test_quantifier_in_conjunction_suggests_parentheses():
    with pytest.raises(ContractError) as e:
        parse_contract('rule a "m": age >= 18 and forall x in tags: x == "a"')
    assert "parenthesised" in e.value.fix


@pytest.mark.parametrize("text,code,needle", [
    ('rule a "m": agee >= 18', "contract.unknown_name", "did you mean 'age'"),
    ('rule a "m": user.agee >= 18', "contract.unknown_field", "did you mean user.age"),
    ('rule a "m": role == "nurse"', "contract.enum_value", "did you mean 'nursing'"),
    ('rule a "m": okk(role, "a", "b")', "contract.unknown_table", "did you mean 'ok'"),
    ('rule a "m": ok(role, "a")', "contract.arity", "signature"),
    ('rule a "m": age >= "18"', "contract.type", ""),
    ('rule a "m": role < 3', "contract.type", ""),
    ('rule a "m": not allowed', "contract.decision_in_rule", "properties"),
    ('rule a "m": items == 3', "contract.type", "quantifier"),
    ('rule a "m": forall x in items: x == "a"', "contract.quantifier", "(x0, x1)"),
    ('rule a "m": forall x in age: true', "contract.quantifier", "list arguments"),
    ('rule a "m": age > 1\nrule a "n": age < 99', "contract.duplicate_id", ""),
    ('property p "m": forall t in tags: denied(t)', "contract.denied", "item-rule lists"),
    ('property p "m": violated(nope)', "contract.violated", ""),
    ('rule a "m": user >= 1', "contract.type", "user.age"),
])
def test_check_errors(text, code, needle):
    e = error(text)
    assert e.code == code
    assert needle in e.fix or needle in e.message
    assert e.pos.line >= 1


def test_item_rules_must_share_an_element_type():
    e = error('rule a "m": forall (x, y) in items: ok(role, x, y)\nrule b "n": forall t in tags: t != "z"')
    assert e.code == "contract.denied_types"


def test_guarded_forall_is_an_item_rule():
    c = check('rule a "m": role == "admin" ==> forall (x, y) in items: ok(role, x, y)')
    (item,) = c.item_rules()
    assert item.quant.source == "items"
    assert "role" in render(item.quant.body)


@pytest.mark.parametrize("text, code", [
    ('rule a "m":\n  ' + "not " * 3000 + "age > 1", "contract.too_deep"),
    ('rule a "m": age > 1' + " and age > 1" * 3000, "contract.too_deep"),
    ('rule a "m": age == ' + "-" * 3000 + "1", "contract.too_deep"),
    ('rule a "m": ' + "(" * 3000 + "age > 1" + ")" * 3000 + " and " + "not " * 60 + "true", "contract.too_deep"),
    ('rule a "m": age == ' + "9" * 5000, "contract.int_too_large"),
    ('rule a "m": role in {"admin", ' + "1" * 19 + "}", "contract.int_too_large"),
])
def test_deep_nesting_and_huge_literals_are_contract_errors(text, code):
    e = error(text)
    assert e.code == code and e.pos.line >= 1 and e.pos.col >= 1 and e.fix


def test_nesting_up_to_the_limit_still_works():
    check('rule a "m": ' + "not " * 40 + "age > 1")
    check('rule a "m": age > 1' + " or age > 2" * 40)
    check('rule a "m": age < 999999999999999999')
    deep = error('rule a "m":\n  ' + "not " * 60 + "age > 1")
    assert deep.pos.line == 2 and 150 < deep.pos.col < 200, "points at the level where the limit is passed"


@pytest.mark.parametrize("name", ["class", "_x", "Big", "x__y", "len", "match", "x_"])
def test_declaration_ids_and_bound_variables_are_checked(name):
    assert error(f'rule {name} "m": age > 1').code == "contract.name"
    assert error(f'rule ok_id "m": forall ({name}, b) in items: ok(role, {name}, b)').code == "contract.name"


@pytest.mark.parametrize("name", ["vg_x", "table_x", "len_items", "e0", "print", "decide"])
def test_bound_variables_may_not_take_names_of_the_generated_code(name):
    check(f'rule {name} "m": age > 1')  # an id becomes rule_<id>: no clash
    assert error(f'rule ok_id "m": forall ({name}, b) in items: ok(role, {name}, b)').code == "contract.name"
