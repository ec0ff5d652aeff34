"""The LLM synthesis loop end to end, with a scripted model behind the real Anthropic SDK and the real
Nagini. Nothing here measures a model: the answers are written by us."""
import json
import shutil

import httpx2
import pytest

from veriguard.synth import llm_loop
from veriguard.synth.memory import DemonstrationMemory
from veriguard.providers.replay import ReplayProvider
from veriguard.synth.specfile import load_spec
from veriguard.synth.transcripts import TranscriptStore
from veriguard.verify.proof_cache import ProofCache, default_dir
from tests.conftest import FIXTURES
from tests.llm_fakes import (BUGGY_BODY, FORMAL, GOOD_BODY, NO_QUESTIONS, QUESTIONS, TESTS, ScriptedModel, api_error,
                             reply)
from veriguard.cli import main

pytestmark = pytest.mark.integration


@pytest.fixture
def spec(tmp_path):
    path = tmp_path / "age_rules.toml"
    shutil.copy(FIXTURES / "nl" / "age_rules.toml", path)
    return load_spec(path)


def run(spec, model, worker, tmp_path, **kw):
    """One loop through the session's proof cache, as `veriguard synth --llm` does: an identical source (the good
    body, the buggy one) is proved once per session with the real Nagini."""
    store = TranscriptStore(tmp_path / "t.db")
    kw.setdefault("autonomous", True)
    kw.setdefault("cache", ProofCache(default_dir()))
    out = llm_loop.run(spec, model.provider() if isinstance(model, ScriptedModel) else model, worker, store,
                       out_dir=tmp_path / "build", workdir=tmp_path / "work", **kw)
    return out, store


def test_proved_on_the_first_round(spec, nagini_worker, tmp_path):
    model = ScriptedModel(NO_QUESTIONS, FORMAL, TESTS, GOOD_BODY)
    out, store = run(spec, model, nagini_worker, tmp_path)
    assert out.status == "proved" and out.exit_code == 0, (out.message, out.notes)
    cert = out.certificate
    assert cert["status"] == "PROVED" and cert["path"] == "llm" and cert["transcript"]["hash"]
    assert cert["transcript"]["input_tokens"] == 4000 and cert["transcript"]["models"] == ["claude-sonnet-5-5"]
    stages = [x["stage"] for x in store.export(out.synthesis_id)["exchanges"]]
    assert stages == ["memory", "clarify", "formalize", "test", "implement"]
    examples = next(g for g in cert["gates"] if g["name"] == "examples")
    assert examples["passed"] and examples["total"] == 4


def test_repaired_after_a_counterexample(spec, nagini_worker, tmp_path):
    model = ScriptedModel(NO_QUESTIONS, FORMAL, TESTS, BUGGY_BODY, GOOD_BODY)
    out, _ = run(spec, model, nagini_worker, tmp_path)
    assert out.status == "proved", (out.message, out.notes)
    repair_prompt = model.prompt(4)
    assert "previous attempt failed" in repair_prompt and "user_age=18" in repair_prompt.replace(" ", "")
    assert "hotel" in repair_prompt


def test_repaired_after_a_parse_error(spec, nagini_worker, tmp_path):
    broken = {**FORMAL, "rules": FORMAL["rules"].replace("user.age >= 18", "user.age => 18")}
    model = ScriptedModel(NO_QUESTIONS, broken, FORMAL, TESTS, GOOD_BODY)
    out, _ = run(spec, model, nagini_worker, tmp_path)
    assert out.status == "proved", (out.message, out.notes)
    feedback = model.prompt(2)
    assert "contract.syntax" in feedback and "age_rules.toml:" in feedback and "user.age => 18" in feedback


def test_clarification_then_resume(spec, nagini_worker, tmp_path):
    asked = ScriptedModel(QUESTIONS)
    out, _ = run(spec, asked, nagini_worker, tmp_path, autonomous=False, questions_file=tmp_path / "q.toml")
    assert out.status == "needs_answers" and out.exit_code == 4 and out.build is None
    text = (tmp_path / "q.toml").read_text()
    assert "Is 18 itself allowed" in text and "approved = false" in text
    (tmp_path / "q.toml").write_text(text.replace('answer = ""', 'answer = "yes, 18 may book"')
                                     .replace("approved = false", "approved = true"))
    resumed = ScriptedModel(FORMAL, TESTS, GOOD_BODY)
    out, _ = run(spec, resumed, nagini_worker, tmp_path, autonomous=False, answers=tmp_path / "q.toml")
    assert out.status == "proved", (out.message, out.notes)
    assert "yes, 18 may book (engineer)" in resumed.prompt(0)
    assert out.certificate["assumptions"][0]["by"] == "engineer"


def test_autonomous_assumptions_reach_certificate_and_report(spec, nagini_worker, tmp_path):
    model = ScriptedModel(QUESTIONS, FORMAL, TESTS, GOOD_BODY)
    out, _ = run(spec, model, nagini_worker, tmp_path, autonomous=True)
    assert out.status == "proved"
    (a,) = out.certificate["assumptions"]
    assert a["answer"] == "yes" and a["by"] == "model (autonomous)"
    report = (out.build / "report.md").read_text()
    assert "Assumptions made during synthesis" in report and "Is 18 itself allowed" in report


def test_budget_exhausted_after_three_refutations(spec, nagini_worker, tmp_path):
    model = ScriptedModel(NO_QUESTIONS, FORMAL, TESTS, BUGGY_BODY, BUGGY_BODY, BUGGY_BODY)
    out, _ = run(spec, model, nagini_worker, tmp_path, budget=llm_loop.Budget(rounds=3))
    assert out.status == "budget" and out.exit_code == 1
    assert out.certificate["status"] == "FAILED" and not out.certificate["fully_proved"]
    assert any("proof (Nagini)" in item for item in out.never_proved)
    assert "not certified" in (out.build / "report.md").read_text()


def test_token_budget(spec, nagini_worker, tmp_path):
    model = ScriptedModel(NO_QUESTIONS, FORMAL, TESTS, GOOD_BODY)
    out, _ = run(spec, model, nagini_worker, tmp_path, budget=llm_loop.Budget(max_tokens=2500))
    assert out.status == "budget" and out.exit_code == 1 and "token budget" in out.message
    assert out.certificate is None


MALICIOUS = [
    "import os\nos.system('touch PWNED')\nreturn Decision(True, [], [])\n",
    "open('PWNED', 'w').write('x')\nreturn Decision(True, [], [])\n",
    "x = ().__class__.__bases__[0].__subclasses__()\nreturn Decision(True, [], [])\n",
    "return eval('Decision(True, [], [])')\n",
    "v = [k for k in range(3)]\nreturn Decision(True, [], [])\n",
]


def test_malicious_code_is_rejected_before_it_runs(spec, nagini_worker, tmp_path, monkeypatch):
    """Each malicious body in its own round, then a good one: one synthesis for all of them."""
    monkeypatch.chdir(tmp_path)
    bodies = [{"helpers": "", "body": m} for m in MALICIOUS]
    model = ScriptedModel(NO_QUESTIONS, FORMAL, TESTS, *bodies, GOOD_BODY)
    out, _ = run(spec, model, nagini_worker, tmp_path, budget=llm_loop.Budget(rounds=len(MALICIOUS) + 1))
    assert out.status == "proved", (out.message, out.notes)
    assert not list(tmp_path.rglob("PWNED"))
    rejected = [n for n in out.notes if "rejected by the allowlist" in n]
    assert [n.split(":")[0] for n in rejected] == [f"implement round {i + 1}" for i in range(len(MALICIOUS))]
    for i in range(len(MALICIOUS)):  # each rejection is the next round's feedback
        assert "outside the allowed subset" in model.prompt(4 + i)


@pytest.mark.parametrize("bad,status,code", [
    (reply("this is not JSON"), "provider", 1),
    (reply(""), "provider", 1),
    (reply("I can't help with that.", stop_reason="refusal"), "refused", 1),
    (api_error(429, "rate_limit_error", "slow down", {"retry-after": "30"}), "provider", 3),
    (httpx2.ReadTimeout("timed out"), "provider", 3),
])
def test_provider_failures_end_cleanly_without_a_certificate(spec, nagini_worker, tmp_path, bad, status, code):
    out, store = run(spec, ScriptedModel(NO_QUESTIONS, bad), nagini_worker, tmp_path)
    assert out.status == status and out.exit_code == code and out.certificate is None and out.build is None
    errors = [x["error"] for x in store.exchanges(out.synthesis_id) if x["error"]]
    assert errors, "the failed exchange is in the transcript"


def test_malformed_answers_file(spec, nagini_worker, tmp_path):
    bad = tmp_path / "a.toml"
    bad.write_text(f'spec_sha256 = "{spec.sha256}"\napproved = true\n[[questions]]\nid = "x"\nanswer = 3\n')
    out, _ = run(spec, ScriptedModel(), nagini_worker, tmp_path, autonomous=False, answers=bad)
    assert out.status == "bad_input" and out.exit_code == 2 and "answers.format" in out.message
    assert f"{bad}:" in out.message
    bad.write_text('approved = true\n[[questions\n')
    out, _ = run(spec, ScriptedModel(), nagini_worker, tmp_path, autonomous=False, answers=bad)
    assert out.exit_code == 2 and "answers.toml" in out.message


def test_replay_gives_a_byte_identical_certificate(spec, nagini_worker, tmp_path):
    """Under the same proof cache: a first run fills it (or finds both bodies there), so the original and its
    replay both take every proof from it, and the certificates name the same cache entries."""
    answers = (QUESTIONS, FORMAL, TESTS, BUGGY_BODY, GOOD_BODY)
    run(spec, ScriptedModel(*answers), nagini_worker, tmp_path / "first")
    out, store = run(spec, ScriptedModel(*answers), nagini_worker, tmp_path)
    assert all(g["summary"].startswith("PROVED (cached)") for g in out.certificate["gates"]
               if g["name"] == "proof (Nagini)"), out.certificate["gates"]
    assert out.status == "proved"
    original = (out.build / "certificate.json").read_bytes()
    transcript = tmp_path / "transcript.json"
    transcript.write_text(json.dumps(store.export(out.synthesis_id)))
    replay_dir = tmp_path / "replay"
    replay_dir.mkdir()
    started = json.loads(transcript.read_text())["synthesis"]["started_at"]
    again = llm_loop.run(spec, ReplayProvider.from_file(transcript), nagini_worker, TranscriptStore(tmp_path / "r.db"),
                         out_dir=replay_dir, workdir=tmp_path / "work2", autonomous=True, mode="replay",
                         replay_started=started, cache=ProofCache(default_dir()))
    assert again.status == "proved", again.message
    replayed = (again.build / "certificate.json").read_bytes()
    assert replayed == original, [(a, b) for a, b in zip(original.decode().splitlines(), replayed.decode().splitlines()) if a != b]


def test_memory_serves_demonstrations_and_is_recorded(spec, nagini_worker, tmp_path):
    memory = DemonstrationMemory(tmp_path / "t.db")
    out, _ = run(spec, ScriptedModel(NO_QUESTIONS, FORMAL, TESTS, GOOD_BODY), nagini_worker, tmp_path, memory=memory)
    assert out.status == "proved" and len(memory.all()) == 1
    second = ScriptedModel(NO_QUESTIONS, FORMAL, TESTS, GOOD_BODY)
    out, store = run(spec, second, nagini_worker, tmp_path, memory=memory)
    recalled = store.exchanges(out.synthesis_id)[0]
    assert recalled["stage"] == "memory" and len(recalled["data"]["demonstrations"]) == 1
    assert "Worked examples from earlier syntheses" in second.prompt(1)
    # the clarify stage is shown what the first synthesis settled (its answers; here: nothing was ambiguous)
    assert "(none: nothing in the request was found ambiguous)" in second.prompt(0)


def test_cli_llm_path_and_log(nagini_worker, tmp_path, capsys):
    """The CLI on a replayed transcript: no network, no key."""
    spec_path = tmp_path / "age_rules.toml"
    shutil.copy(FIXTURES / "nl" / "age_rules.toml", spec_path)
    transcript = {"format": "veriguard-transcript/1", "synthesis": {"started_at": "2026-11-22T00:00:00+00:00",
                                                                   "model": "scripted"},
                  "exchanges": [{"stage": s, "data": d} for s, d in
                                [("memory", {"demonstrations": []}), ("clarify", NO_QUESTIONS), ("formalize", FORMAL),
                                 ("test", TESTS), ("implement", GOOD_BODY)]]}
    path = tmp_path / "scripted.json"
    path.write_text(json.dumps(transcript))
    code = main(["synth", str(spec_path), "--replay", str(path), "--out", str(tmp_path / "b"),
                 "--store", str(tmp_path / "s.db"), "--quiet", "--json"], worker=nagini_worker)
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["status"] == "proved", out
    assert main(["log", "--store", str(tmp_path / "s.db"), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["spec_name"] == "age_rules" and rows[0]["status"] == "proved"
    assert main(["log", out["synthesis_id"], "--store", str(tmp_path / "s.db")]) == 0
    assert "implement" in capsys.readouterr().out


def test_no_key_is_an_environment_error(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    spec_path = tmp_path / "age_rules.toml"
    shutil.copy(FIXTURES / "nl" / "age_rules.toml", spec_path)
    code = main(["synth", str(spec_path), "--llm", "--out", str(tmp_path), "--quiet"])
    assert code == 3 and "ANTHROPIC_API_KEY" in capsys.readouterr().err
