"""--compare: the model's contract (scripted here, through a replayed transcript) against the formal rules."""
import json

from tests.conftest import FIXTURES
from tests.llm_fakes import FORMAL, NO_QUESTIONS, TESTS
from veriguard.cli import main


def transcript(tmp_path, rules):
    # the scripted examples avoid the boundary, so the misread contract is not caught by its own tests
    examples = {"examples": [e for e in TESTS["examples"] if e["name"] != "adult hotel"]}
    exchanges = [{"stage": "clarify", "data": NO_QUESTIONS},
                 {"stage": "formalize", "data": {"rules": rules, "properties": "", "notes": ""}},
                 {"stage": "test", "data": examples}]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"synthesis": {"started_at": "2026-11-22T00:00:00+00:00"}, "exchanges": exchanges}))
    return path


def compare(tmp_path, capsys, rules):
    code = main(["synth", str(FIXTURES / "nl" / "age_rules_formal.toml"), "--compare", "--replay",
                 str(transcript(tmp_path, rules)), "--store", str(tmp_path / "s.db"), "--json", "--quiet"])
    return code, json.loads(capsys.readouterr().out)


def test_same_rules_decide_alike(tmp_path, capsys):
    code, out = compare(tmp_path, capsys, FORMAL["rules"])
    assert code == 0 and out["decide_alike"] and out["differences"] == []


def test_a_misread_boundary_is_found(tmp_path, capsys):
    code, out = compare(tmp_path, capsys, FORMAL["rules"].replace("user.age >= 18", "user.age > 18"))
    assert code == 1 and not out["decide_alike"]
    d = out["differences"][0]
    assert d["args"]["user"]["age"] == 18 and d["args"]["task"]["hotel"] is True
    assert d["formal"][0] is True and d["synthesized"][0] is False
