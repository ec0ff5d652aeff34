"""Transcript store: migrations, recording through real providers, export, replay and hashing."""

import copy
import json
import sqlite3

import httpx2
import pytest

from veriguard.providers.anthropic_api import AnthropicProvider
from veriguard.providers.config import provider_from_config
from veriguard.providers.types import CompletionRequest, ProviderError
from veriguard.synth.transcripts import (
    MIGRATIONS,
    RecordingProvider,
    TranscriptStore,
    connect,
    default_db_path,
    m001_initial,
    migrate,
    transcript_hash,
)

SCHEMA = {
    "type": "object",
    "required": ["rules"],
    "properties": {"rules": {"type": "array", "items": {"type": "string"}}},
}
CLARIFY = CompletionRequest("clarify", "You ask questions.", "Spec: refunds.", {"type": "object"}, max_tokens=256)
FORMALIZE = CompletionRequest("formalize", "You write contracts.", "Spec: refunds <= 100.", SCHEMA, max_tokens=512)
REPAIR = CompletionRequest("formalize", "You write contracts.", "Fix: rules must be strings.", SCHEMA, round=1)




def message(data, usage):
    body = {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-5-5",
        "content": [{"type": "text", "text": json.dumps(data)}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }
    return httpx2.Response(200, json=body)


def scripted_anthropic(*replies):
    queue = list(replies)
    client = httpx2.Client(transport=httpx2.MockTransport(lambda request: queue.pop(0)))
    return AnthropicProvider(api_key="sk-ant-test", max_retries=0, http_client=client)


def run_loop(provider):
    """A miniature synthesis loop: clarify, formalize (rejected answer), repair."""
    answers = [provider.complete(CLARIFY).data]
    with pytest.raises(ProviderError) as info:
        provider.complete(FORMALIZE)
    answers.append(info.value.code)
    answers.append(provider.complete(REPAIR).data)
    return answers


def live_replies():
    return (
        message({"questions": []}, (1000, 100)),
        message({"rules": [3]}, (2000, 50)),
        message({"rules": ["amount <= 100"]}, (2500, 60)),
    )


def begin(store, provider="anthropic", model="claude-sonnet-5-5", mode="live"):
    return store.begin(spec_name="refunds", spec_sha256="ab" * 32, provider=provider, model=model, mode=mode)


@pytest.fixture
def store(tmp_path):
    with TranscriptStore(tmp_path / "t.db") as opened:
        yield opened


# --- migrations ----------------------------------------------------------------------------


def test_migrations_are_named_unique_and_ordered():
    names = [step.__name__ for step in MIGRATIONS]
    assert names[:2] == ["m001_initial", "m002_demonstrations"]
    assert len(set(names)) == len(names)
    assert names == sorted(names)


def test_migrations_are_idempotent(tmp_path):
    path = tmp_path / "t.db"
    db = sqlite3.connect(path)
    assert migrate(db) == ["m001_initial", "m002_demonstrations", "m003_demonstration_clarifications"]
    assert migrate(db) == []
    db.close()
    TranscriptStore(path).close()
    TranscriptStore(path).close()
    db = sqlite3.connect(path)
    assert [row[0] for row in db.execute("SELECT name FROM _migrations ORDER BY name")] == [step.__name__ for step in MIGRATIONS]


def test_migrate_upgrades_an_old_database_and_keeps_its_data(tmp_path):
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    m001_initial(db)
    db.execute("INSERT INTO _migrations VALUES ('m001_initial', 'then')")
    db.execute(
        "INSERT INTO syntheses (id, spec_name, spec_sha256, provider, model, mode, started_at, status)"
        " VALUES ('old', 'spec', 'sha', 'anthropic', 'm', 'live', 'then', 'verified')"
    )
    db.commit()
    db.close()

    upgraded = connect(path)
    assert migrate(upgraded) == []
    tables = {row[0] for row in upgraded.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"syntheses", "exchanges", "demonstrations", "_migrations"} <= tables
    upgraded.close()
    with TranscriptStore(path) as store:
        assert [synthesis.id for synthesis in store.list_syntheses()] == ["old"]


def test_a_failing_migration_leaves_no_trace(monkeypatch, tmp_path):
    def m999_broken(db):
        db.execute("CREATE TABLE half_done (x INTEGER)")
        raise RuntimeError("migration bug")

    monkeypatch.setattr("veriguard.synth.transcripts.MIGRATIONS", [*MIGRATIONS, m999_broken])
    db = sqlite3.connect(tmp_path / "t.db")
    with pytest.raises(RuntimeError):
        migrate(db)
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "half_done" not in tables and "syntheses" in tables
    assert "m999_broken" not in {row[0] for row in db.execute("SELECT name FROM _migrations")}


def test_default_path_follows_veriguard_home(monkeypatch, tmp_path):
    monkeypatch.setenv("VERIGUARD_HOME", str(tmp_path / "home"))
    assert default_db_path() == tmp_path / "home" / "transcripts.db"
    TranscriptStore().close()
    assert (tmp_path / "home" / "transcripts.db").exists()


# --- recording -----------------------------------------------------------------------------


def test_recording_provider_records_answers_and_errors(store, tmp_path):
    synthesis_id = begin(store)
    recording = RecordingProvider(scripted_anthropic(*live_replies()), store, synthesis_id)
    assert (recording.name, recording.model) == ("anthropic", "claude-sonnet-5-5")

    assert run_loop(recording) == [{"questions": []}, "provider.malformed", {"rules": ["amount <= 100"]}]
    store.finish(synthesis_id, status="verified", certificate_path=tmp_path / "cert.json")

    (synthesis,) = store.list_syntheses()
    assert (synthesis.status, synthesis.certificate_path) == ("verified", str(tmp_path / "cert.json"))
    assert synthesis.finished_at is not None
    clarify, rejected, repaired = store.exchanges(synthesis_id)
    assert [e["seq"] for e in (clarify, rejected, repaired)] == [1, 2, 3]
    assert [(e["stage"], e["round"]) for e in (clarify, rejected, repaired)] == [
        ("clarify", 0),
        ("formalize", 0),
        ("formalize", 1),
    ]
    assert clarify["data"] == {"questions": []}
    assert clarify["request"]["output_config"]["format"]["schema"] == {"type": "object"}
    assert clarify["response"]["id"] == "msg_01"
    assert clarify["cost_usd"] == pytest.approx((1000 * 2 + 100 * 10) / 1e6)
    assert clarify["latency_s"] >= 0
    assert rejected["error"]["code"] == "provider.malformed"
    assert rejected["data"] is None
    assert rejected["response"]["usage"] == {"input_tokens": 2000, "output_tokens": 50}
    assert (rejected["input_tokens"], rejected["output_tokens"]) == (2000, 50)
    assert rejected["cost_usd"] == pytest.approx((2000 * 2 + 50 * 10) / 1e6)
    assert repaired["schema"] == SCHEMA

    totals = store.stage_totals(synthesis_id)
    assert list(totals) == ["clarify", "formalize"]
    assert (totals["formalize"].calls, totals["formalize"].errors) == (2, 1)
    assert (totals["formalize"].input_tokens, totals["formalize"].output_tokens) == (4500, 110)
    assert totals["formalize"].cost_usd == pytest.approx((4500 * 2 + 110 * 10) / 1e6)


def test_network_errors_are_recorded_with_the_request(store):
    synthesis_id = begin(store)
    client = httpx2.Client(transport=httpx2.MockTransport(lambda r: (_ for _ in ()).throw(httpx2.ConnectError("down"))))
    provider = AnthropicProvider(api_key="k", max_retries=0, http_client=client)
    with pytest.raises(ProviderError):
        RecordingProvider(provider, store, synthesis_id).complete(CLARIFY)
    (exchange,) = store.exchanges(synthesis_id)
    assert exchange["error"]["code"] == "provider.network"
    assert exchange["request"]["system"] == CLARIFY.system
    assert exchange["response"] is None
    assert exchange["cost_usd"] == 0.0


def test_unexpected_exceptions_are_recorded_and_reraised(store):
    class Broken:
        name, model = "anthropic", "claude-sonnet-5-5"

        def complete(self, request):
            raise RuntimeError("bug in a provider")

    synthesis_id = begin(store)
    with pytest.raises(RuntimeError):
        RecordingProvider(Broken(), store, synthesis_id).complete(CLARIFY)
    (exchange,) = store.exchanges(synthesis_id)
    assert exchange["error"] == {"code": "provider.unexpected", "message": "RuntimeError: bug in a provider"}


def test_unpriced_model_has_unknown_cost(store):
    synthesis_id = begin(store, model="claude-future-9")
    reply = message({"questions": []}, (10, 10)).json()
    reply["model"] = "claude-future-9"
    RecordingProvider(scripted_anthropic(httpx2.Response(200, json=reply)), store, synthesis_id).complete(CLARIFY)
    assert store.exchanges(synthesis_id)[0]["cost_usd"] is None
    assert store.stage_totals(synthesis_id)["clarify"].cost_usd is None


def test_finish_needs_a_final_status_and_a_known_synthesis(store):
    synthesis_id = begin(store)
    with pytest.raises(ValueError):
        store.finish(synthesis_id, status="running")
    with pytest.raises(KeyError):
        store.finish("nope", status="failed")


# --- export, replay, hashing ---------------------------------------------------------------


def record_live(store):
    synthesis_id = begin(store)
    run_loop(RecordingProvider(scripted_anthropic(*live_replies()), store, synthesis_id))
    store.finish(synthesis_id, status="verified")
    return store.export(synthesis_id)


def test_export_is_json_with_every_exchange(store):
    transcript = record_live(store)
    assert transcript["format"] == "veriguard.transcript/1"
    assert transcript["synthesis"]["spec_name"] == "refunds"
    assert len(transcript["exchanges"]) == 3
    assert transcript["totals"]["formalize"]["calls"] == 2
    assert json.loads(json.dumps(transcript)) == transcript


def test_replay_round_trip_reproduces_the_transcript(store, tmp_path):
    original = record_live(store)
    path = tmp_path / "transcript.json"
    path.write_text(json.dumps(original))

    replay = provider_from_config({"provider": "replay", "path": str(path)})
    assert replay.model == "claude-sonnet-5-5"
    synthesis_id = begin(store, provider="replay", model=replay.model, mode="replay")
    answers = run_loop(RecordingProvider(replay, store, synthesis_id))
    store.finish(synthesis_id, status="verified")
    replayed = store.export(synthesis_id)

    assert answers == [{"questions": []}, "provider.malformed", {"rules": ["amount <= 100"]}]
    assert [e["request"] for e in replayed["exchanges"]] == [e["request"] for e in original["exchanges"]]
    assert [e["response"] for e in replayed["exchanges"]] == [e["response"] for e in original["exchanges"]]
    assert [e["cost_usd"] for e in replayed["exchanges"]] == [0.0, 0.0, 0.0]
    assert transcript_hash(replayed) == transcript_hash(original)


def test_replay_detects_a_changed_prompt(store):
    original = record_live(store)
    replay = provider_from_config({"provider": "replay", "exchanges": original["exchanges"]})
    replay.complete(CLARIFY)
    changed = CompletionRequest(FORMALIZE.stage, FORMALIZE.system, "Spec: refunds <= 200.", SCHEMA)
    with pytest.raises(ProviderError) as info:
        replay.complete(changed)
    assert info.value.code == "provider.replay_mismatch"
    assert "exchange 2 of 3" in info.value.message


def test_transcript_hash_is_stable(store):
    transcript = record_live(store)
    digest = transcript_hash(transcript)
    assert len(digest) == 64 and int(digest, 16) >= 0
    assert transcript_hash(json.loads(json.dumps(transcript))) == digest

    rerun = copy.deepcopy(transcript)
    rerun["synthesis"].update(id="other", started_at="later", finished_at="later", certificate_path="/elsewhere")
    for exchange in rerun["exchanges"]:
        exchange.update(latency_s=99.0, created_at="later", cost_usd=123.0)
    rerun["totals"] = {}
    assert transcript_hash(rerun) == digest


@pytest.mark.parametrize(
    "change",
    [
        lambda t: t["exchanges"][0].update(prompt="Spec: refunds, please."),
        lambda t: t["exchanges"][2].update(data={"rules": ["amount < 100"]}),
        lambda t: t["exchanges"][1]["error"].update(code="provider.timeout"),
        lambda t: t["synthesis"].update(spec_sha256="cd" * 32),
        lambda t: t["synthesis"].update(status="failed"),
        lambda t: t["exchanges"].pop(),
    ],
)
def test_transcript_hash_changes_with_content(store, change):
    transcript = record_live(store)
    changed = copy.deepcopy(transcript)
    change(changed)
    assert transcript_hash(changed) != transcript_hash(transcript)
