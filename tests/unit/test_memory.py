"""Demonstration memory: Levenshtein distance, retrieval order, the enabled switch, storage."""

import random
import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

from veriguard.synth.memory import DemonstrationMemory, levenshtein, normalized_distance, normalized_text
from veriguard.synth.transcripts import TranscriptStore
from tests.conftest import examples

short_text = st.text(alphabet="abc d", max_size=12)


def reference_levenshtein(a, b):
    """Textbook full-matrix dynamic programme, for comparison."""
    table = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
    return table[-1][-1]


def add(memory, name, request, agent="A retail support agent with refund tools."):
    return memory.add(
        spec_name=name, request=request, agent=agent, contract=f"contract {name}", policy=f"policy {name}"
    )


def test_levenshtein_known_values():
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("", "abc") == levenshtein("abc", "") == 3
    assert levenshtein("", "") == 0
    assert levenshtein("flaw", "lawn") == 2
    assert levenshtein("same", "same") == 0


@settings(max_examples=examples(300))
@given(short_text, short_text)
def test_levenshtein_matches_the_reference(a, b):
    assert levenshtein(a, b) == levenshtein(b, a) == reference_levenshtein(a, b)


@settings(max_examples=examples(300))
@given(short_text, short_text, st.integers(min_value=0, max_value=12))
def test_levenshtein_cutoff_is_exact_within_the_bound(a, b, bound):
    exact = reference_levenshtein(a, b)
    bounded = levenshtein(a, b, max_distance=bound)
    if exact <= bound:
        assert bounded == exact
    else:
        assert bound < bounded <= exact


def test_normalized_distance_range():
    assert normalized_distance("", "") == 0.0
    assert normalized_distance("abc", "abc") == 0.0
    assert normalized_distance("abc", "xyz") == 1.0
    assert normalized_distance("abcd", "abce") == 0.25


def test_normalized_text_ignores_case_and_spacing_and_caps_length():
    assert normalized_text("Refund  THE order", " Shop\nagent ", 100) == "refund the order\nshop agent"
    assert normalized_text("x" * 50, "agent", 10) == "x" * 10


def test_retrieve_returns_the_k_nearest_in_order(tmp_path):
    memory = DemonstrationMemory(tmp_path / "t.db")
    add(memory, "refunds", "Never refund more than $100 without a manager.")
    add(memory, "deletes", "The agent must not delete database tables.")
    add(memory, "refunds-200", "Never refund more than $200 without a manager.")
    add(memory, "emails", "Only send email to verified customer addresses.")

    request = "Never refund more than $150 without a manager."
    matches = memory.retrieve(request, "A retail support agent with refund tools.", k=2)

    assert [match.demonstration.spec_name for match in matches] == ["refunds", "refunds-200"]
    assert 0 < matches[0].distance <= matches[1].distance < 0.1
    assert matches[0].demonstration.contract == "contract refunds"
    assert matches[0].demonstration.policy == "policy refunds"
    everything = memory.retrieve(request, "A retail support agent.", k=10)
    assert len(everything) == 4
    assert [m.distance for m in everything] == sorted(m.distance for m in everything)
    assert everything[-1].demonstration.spec_name in {"deletes", "emails"}


def test_agent_text_counts_too(tmp_path):
    memory = DemonstrationMemory(tmp_path / "t.db")
    add(memory, "shop", "Limit refunds.", agent="A shop assistant that issues refunds.")
    add(memory, "bank", "Limit refunds.", agent="A bank teller agent moving money.")
    (match,) = memory.retrieve("Limit refunds.", "A bank teller agent moving money.", k=1)
    assert (match.demonstration.spec_name, match.distance) == ("bank", 0.0)


def test_ties_go_to_the_newest(tmp_path):
    memory = DemonstrationMemory(tmp_path / "t.db")
    add(memory, "first", "Same request.")
    add(memory, "second", "Same request.")
    add(memory, "third", "SAME   request.")
    matches = memory.retrieve("same request.", "a retail support agent with refund tools.", k=2)
    assert [match.demonstration.spec_name for match in matches] == ["third", "second"]


def sentence(rnd, words, length):
    return " ".join(rnd.choice(words) for _ in range(length))


def test_pruned_retrieval_agrees_with_brute_force(tmp_path):
    rnd = random.Random(7)
    words = ["refund", "delete", "email", "table", "limit", "customer", "admin", "never", "only", "send"]
    memory = DemonstrationMemory(tmp_path / "t.db", max_chars=120)
    for index in range(40):
        add(memory, f"d{index}", sentence(rnd, words, 8), agent=sentence(rnd, words, 6))
    query = (sentence(rnd, words, 8), sentence(rnd, words, 6))

    matches = memory.retrieve(*query, k=5)

    key = normalized_text(*query, 120)
    texts = {d.id: normalized_text(d.request, d.agent, 120) for d in memory.all()}
    brute = sorted((reference_levenshtein(key, text) / max(len(key), len(text)), -i) for i, text in texts.items())[:5]
    assert [(round(m.distance, 12), -m.demonstration.id) for m in matches] == [(round(d, 12), i) for d, i in brute]


def test_length_cap_ignores_the_tail(tmp_path):
    memory = DemonstrationMemory(tmp_path / "t.db", max_chars=30)
    add(memory, "long", "Refund at most one hundred dollars and then a very long tail A")
    (match,) = memory.retrieve("Refund at most one hundred dollars and then a completely different tail", "", k=1)
    assert match.distance == 0.0


def test_disabled_memory_stores_and_returns_nothing(tmp_path):
    path = tmp_path / "t.db"
    memory = DemonstrationMemory(path, enabled=False)
    assert add(memory, "x", "request") is None
    assert memory.retrieve("request", "agent") == []
    assert memory.all() == []
    assert not path.exists()


def test_memory_persists_and_shares_the_transcript_file(tmp_path):
    path = tmp_path / "t.db"
    store = TranscriptStore(path)
    synthesis_id = store.begin(spec_name="refunds", spec_sha256="0" * 64, provider="replay", model="m", mode="replay")
    first = DemonstrationMemory(path)
    demo_id = first.add(
        spec_name="refunds", request="Limit refunds.", agent="Shop agent.", contract="c", policy="p",
        synthesis_id=synthesis_id,
    )
    first.close()
    store.close()

    (demo,) = DemonstrationMemory(path).all()
    assert (demo.id, demo.synthesis_id, demo.spec_name) == (demo_id, synthesis_id, "refunds")
    tables = {row[0] for row in sqlite3.connect(path).execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"syntheses", "exchanges", "demonstrations"} <= tables


def test_k_zero_returns_nothing(tmp_path):
    memory = DemonstrationMemory(tmp_path / "t.db")
    add(memory, "x", "request")
    assert memory.retrieve("request", "agent", k=0) == []


class CapturingProvider:
    """Records the prompt it is sent; answers that nothing is ambiguous."""

    name, model = "capture", "capture"

    def complete(self, request):
        from veriguard.providers.types import Completion

        self.prompt = request.prompt
        return Completion({"questions": []}, '{"questions": []}', self.model, 0, 0, 0.0, "end_turn", {}, {})


def test_clarifications_are_stored_and_shown_to_the_clarify_stage(tmp_path):
    from veriguard.synth import clarify
    from veriguard.synth.specfile import load_spec
    from tests.conftest import write_spec

    answers = clarify.answers_text([{"question": "Does the $100 limit include tax?", "answer": "yes, tax included",
                                     "by": "engineer"}])
    memory = DemonstrationMemory(tmp_path / "t.db")
    memory.add(spec_name="refunds", request="Never refund more than $100.", agent="Shop agent.", contract="c",
               policy="p", clarifications=answers)
    (match,) = memory.retrieve("Never refund more than $150.", "Shop agent.", k=1)
    assert match.demonstration.clarifications == answers
    case = match.as_prompt_case()
    assert all(case[key] for key in ("clarifications", "contract", "policy")), "every stage's key is served"
    provider = CapturingProvider()
    assert clarify.ask(provider, load_spec(write_spec(tmp_path)), [case]) == []
    assert "Does the $100 limit include tax? -> yes, tax included (engineer)" in provider.prompt
    assert "Never refund more than $100." in provider.prompt
