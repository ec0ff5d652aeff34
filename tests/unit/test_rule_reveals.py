"""Opaque rule predicates: a lemma reveals only the rules z3 finds its property needs, the proof cache's keys
follow Reveal, and the compile path falls back to every rule visible when a lemma with fewer reveals fails."""
import re
from types import SimpleNamespace

import pytest

from tests.conftest import MINIMAL, SPECS, write_spec
from veriguard.synth import pipeline
from veriguard.synth.compile import compile_policy
from veriguard.synth.specfile import load_spec
from veriguard.verify.proof_cache import function_keys, key_base
from veriguard.verify.verdicts import Diagnostic, ProofResult, Verdict
from veriguard.verify.z3check import rules_needed

TWO_RULES = MINIMAL.replace('rule adult "Users must be adults": age >= 18\n',
                            'rule adult "Users must be adults": age >= 18\n'
                            'rule plausible "Ages are plausible": age <= 150\n'
                            'rule admins "Admins are adults over 21": role == "admin" ==> age >= 21\n')


def revealed(source: str, lemma: str) -> list[str]:
    body = source[source.index(f"def {lemma}("):].split("\n\n\n")[0]
    return re.findall(r"Reveal\(rule_(\w+)\(", body)


@pytest.fixture
def spec(tmp_path):
    return load_spec(write_spec(tmp_path, TWO_RULES))


def test_z3_finds_the_rules_a_property_needs(spec):
    (minors,) = spec.contract.properties
    assert rules_needed(spec.contract, minors) == ("adult",)


@pytest.mark.parametrize("stem,prop,needed", [
    ("mind2web_sc", "minors_never_book_hotels", ("hotel",)),
    ("mind2web_sc", "qualified_users_allowed", ("car", "media", "hotel", "job", "shop", "flight")),
    ("payments", "wire_mfa", ("wire_needs_mfa",)),
    ("shell_agent", "ssh_keys_untouchable", ()),
    ("shell_agent", "sudo_never", ("no_sudo",)),
    ("os_agent", "forbidden_never", ("no_privilege_escalation", "no_account_change", "no_service_change",
                                     "no_log_tampering", "no_exhaustion")),
])
def test_shipped_lemmas_reveal_what_their_property_needs(stem, prop, needed):
    source = compile_policy(load_spec(SPECS / f"{stem}.toml")).source
    assert tuple(revealed(source, f"property_{prop}")) == needed


@pytest.mark.parametrize("stem,prop,reveals_item,partial", [
    ("shell_agent", "ssh_keys_untouchable", True, True),  # names denied(...): reads the item rule's condition only
    ("shell_agent", "read_only_fine", True, False),       # `==> allowed` needs every item and every rule to pass
    ("shell_agent", "sudo_never", False, True),           # `sudo ==> not allowed`: the sudo rule alone
    ("os_agent", "forbidden_never", False, True),
    ("os_agent", "processes_need_human", False, True),
    ("os_agent", "system_unchanged", True, True),
    ("eicu_ac", "nursing_no_diagnosis", True, False),     # the item rule is eicu_ac's only rule
])
def test_the_item_rule_is_revealed_only_where_the_property_needs_it(stem, prop, reveals_item, partial):
    spec = load_spec(SPECS / f"{stem}.toml")
    (item,) = spec.contract.item_rules()
    compiled = compile_policy(spec)
    body = compiled.source[compiled.source.index(f"def property_{prop}("):].split("\n\n\n")[0]
    assert (f"Reveal(item_{item.decl.id}(" in body) == reveals_item
    assert (f"property_{prop}" in compiled.partial_reveals) == partial  # a failure of it is then not the answer
    visible = compile_policy(spec, opaque_rules=False).source
    assert f"Reveal(item_{item.decl.id}(" in visible[visible.index(f"def property_{prop}("):].split("\n\n\n")[0]


def test_a_property_z3_cannot_prove_reveals_every_rule(tmp_path):
    body = TWO_RULES.replace('property minors "Minors are denied": age < 18 ==> not allowed',
                             'property minors "Minors are denied": age < 21 ==> not allowed')
    spec = load_spec(write_spec(tmp_path, body))
    assert rules_needed(spec.contract, spec.contract.properties[0]) is None
    compiled = compile_policy(spec)
    assert revealed(compiled.source, "property_minors") == ["adult", "plausible", "admins"]
    assert compiled.partial_reveals == ()


def test_rules_are_opaque_on_the_compile_path_and_visible_on_the_llm_path(spec):
    opaque = compile_policy(spec)
    assert opaque.opaque_rules and opaque.partial_reveals == ("property_minors",)
    assert opaque.source.count("@Opaque\n@Pure\ndef rule_") == 3
    assert "Assert(Reveal(rule_adult(age)) == (age >= 18))" in opaque.source
    visible = compile_policy(spec, opaque_rules=False)
    assert "@Opaque\n@Pure\ndef rule_" not in visible.source and revealed(visible.source, "property_minors") == []
    assert visible.partial_reveals == ()


@pytest.mark.parametrize("old,new,changed", [
    ("age <= 150", "age <= 140", {"rule_plausible"}),  # no lemma reveals it; decide sees the rules' names only
    ("age >= 18\n", "age >= 17\n", {"rule_adult", "property_minors"}),  # the rule and the lemma revealing it
])
def test_editing_a_rule_in_the_spec_changes_the_keys_of_the_rule_and_its_revealers(tmp_path, old, new, changed):
    base = key_base(60)
    keys = function_keys(compile_policy(load_spec(write_spec(tmp_path, TWO_RULES))).source, base).keys
    (tmp_path / "edited").mkdir()
    edited_spec = load_spec(write_spec(tmp_path / "edited", TWO_RULES.replace(old, new, 1)))
    edited = function_keys(compile_policy(edited_spec).source, base).keys
    assert {n for n in keys if keys[n] != edited[n]} == changed


def test_a_reveal_inside_a_visible_body_counts():
    source = ("@Opaque\n@Pure\ndef g(x: int) -> bool:\n    return x > 0\n\n\n"
              "@Pure\ndef h(x: int) -> bool:\n    return Reveal(g(x))\n\n\n"
              "def f(x: int) -> None:\n    Requires(h(x))\n    Assert(x > 0)\n")
    base = key_base(60)
    keys = function_keys(source, base).keys
    edited = function_keys(source.replace("return x > 0", "return x > 1"), base).keys
    assert keys["f"] != edited["f"] and keys["h"] != edited["h"]


def fake_synthesize(failing):
    calls = []

    def synthesize(spec, worker, source, **kw):
        calls.append(source)
        opaque = "@Opaque\n@Pure\ndef rule_" in source
        diags = (Diagnostic("postcondition.violated", "no", function=failing),) if opaque else ()
        return SimpleNamespace(proof=ProofResult(Verdict.REFUTED if opaque else Verdict.PROVED, diags))
    return synthesize, calls


def test_a_lemma_with_fewer_reveals_that_fails_is_proved_again_with_every_rule(spec, tmp_path, monkeypatch):
    synthesize, calls = fake_synthesize("property_minors")
    monkeypatch.setattr(pipeline, "synthesize", synthesize)
    result = pipeline.synthesize_spec(spec, None, workdir=tmp_path)
    assert len(calls) == 2 and calls[1] == compile_policy(spec, opaque_rules=False).source
    assert result.proof.verdict is Verdict.PROVED


def test_other_failures_stand(spec, tmp_path, monkeypatch):
    synthesize, calls = fake_synthesize("decide")
    monkeypatch.setattr(pipeline, "synthesize", synthesize)
    result = pipeline.synthesize_spec(spec, None, workdir=tmp_path)
    assert len(calls) == 1 and result.proof.verdict is Verdict.REFUTED
