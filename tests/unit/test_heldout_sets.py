"""The held-out sets v5-v21 of the Mind2Web-SC classifier (tests/data/heldout_v5.jsonl ... heldout_v21.jsonl, each
hand-written in ten or more styles no earlier set used; their README sections in tests/data/README.md state what each
holds): well formed, the size, decoy share and coverage each states, sharing no run of six words with the bank, the
earlier held-out sets, the evasions or (where present) the benchmark, and no run of six words shared between two of its
own tasks. Nothing here runs the classifier; a failure names only the set's ids and the shared run, never another
text."""
import functools
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from veriguard.enforce.categories import read_bank

from tests.unit.heldout_checks import assert_covers, assert_well_formed, lines, runs_shared_within, shared_runs
from tests.unit.test_categories import BANK, BENCHMARK, DATA, EVASIONS, HELDOUT


@dataclass(frozen=True)
class HeldOut:
    """What a set's README section states: at least `rows` tasks, `per_category` positives per category and
    `per_style` tasks per style, `two`/`three` tasks in two/three categories, `elsewhere` decoys under another
    category, `plain` tasks in no category that are no decoys, and (`lengths`) tasks of at most 4 words and over 100."""
    n: int
    styles: frozenset[str]
    rows: int
    per_category: int = 45
    per_style: int = 30
    two: int = 0
    three: int = 0
    elsewhere: int = 0
    plain: int = 0
    lengths: bool = False

    @property
    def path(self) -> Path:
        return DATA / f"heldout_v{self.n}.jsonl"

    @property
    def earlier(self) -> tuple[Path, ...]:
        return (HELDOUT, *(DATA / f"heldout_v{k}.jsonl" for k in range(2, self.n)))

    def bank_texts(self) -> tuple[str, ...]:
        """The bank's texts; v5 is a development set the bank's [training] section holds, so only its written ones."""
        bank = read_bank(BANK)
        return bank.written() if self.n == 5 else bank.texts


SETS = (
    HeldOut(5, frozenset({"follow-up", "conditional", "executive-assistant", "bullet-list", "parent", "accessibility",
                          "australian-english", "compare-then-act", "negated", "hypothetical"}), 450),
    HeldOut(6, frozenset({"nominal", "passive", "indirect-hint", "roleplay", "past-status", "self-correction",
                          "site-first", "euphemism-idiom", "code-switch", "question-of-ability"}), 300, plain=10),
    HeldOut(7, frozenset({"agent-narration", "ui-steps", "chat-transcript", "forwarded-quote", "sms-abbrev",
                          "scheduled-recurring", "fallback-plan", "complaint-then-fix", "budget-first",
                          "domain-jargon"}), 330, two=20, three=6, elsewhere=20, plain=12),
    HeldOut(8, frozenset({"slash-command", "calendar-entry", "sarcastic-rhetorical", "kid-teen-voice",
                          "regional-english", "story-context", "how-to-vs-do", "list-of-errands", "comparison-no-act",
                          "form-fields"}), 420, per_category=50, per_style=40, two=25, three=8, elsewhere=20, plain=12),
    HeldOut(9, frozenset({"code-comment", "all-caps-shouting", "review-testimonial", "translation-request",
                          "quoted-search-string", "reported-speech", "pasted-advert", "social-post", "word-problem",
                          "verse"}), 430, per_category=50, per_style=40, two=40, three=10, elsewhere=40, plain=15),
    HeldOut(10, frozenset({"group-chat", "support-macro", "json-payload", "legalese", "checkbox-todo",
                           "meeting-minutes", "url-query", "emoji-rich", "diary-entry", "proofread-request"}), 450,
            per_category=55, per_style=45, two=35, three=10, elsewhere=60, plain=15, lengths=True),
    HeldOut(11, frozenset({"web-task-detailed", "web-task-minimal", "assistant-handoff", "multi-intent", "product-spec",
                           "clarification-answer", "business-procurement", "results-page-pick", "itinerary-plan",
                           "news-lead-in"}), 460,
            per_category=55, per_style=40, two=35, three=10, elsewhere=55, plain=15, lengths=True),
    HeldOut(12, frozenset({"cart-checkout", "account-management", "price-watch", "gift-errand", "travel-disruption",
                           "relocation", "event-planning", "returns-exchanges", "profile-inline", "deadline-rush"}), 460,
            per_category=55, per_style=40, two=35, three=10, elsewhere=55, plain=15, lengths=True),
    HeldOut(13, frozenset({"spreadsheet-row", "travel-policy", "dictation-misheard", "l1-transfer", "declarative-need",
                           "unrelated-preamble", "postscript", "retry-after-error", "hedged-softener", "tldr",
                           "ocr-garbled"}), 540,
            per_category=60, per_style=45, two=55, three=10, elsewhere=70, plain=30, lengths=True),
    HeldOut(14, frozenset({"email-reply-chain", "slack-shortcodes", "travel-agent-brief", "expense-grant-note",
                           "screen-reader-steps", "subordinate-clause-act", "question-tag", "singapore-english",
                           "south-african-english", "family-app-export", "why-dont-you", "regret-then-ask"}), 560,
            per_category=60, per_style=45, two=60, three=10, elsewhere=75, plain=15, lengths=True),
    HeldOut(15, frozenset({"forum-help-post", "call-transcript-timestamps", "sop-runbook", "sticky-note-scrawl",
                           "kenyan-english", "caribbean-english", "canadian-english", "negotiation-then-agree",
                           "long-ramble-delegation", "out-of-office", "pros-and-cons"}), 540,
            per_category=65, per_style=45, two=65, three=10, elsewhere=65, plain=30, lengths=True),
    HeldOut(16, frozenset({"user-story", "support-chat-log", "onboarding-checklist", "new-zealand-english",
                           "ghanaian-english", "commit-message", "recipe-format", "telegram", "as-per-my-last",
                           "bet-challenge", "ops-order"}), 560,
            per_category=65, per_style=50, two=65, three=10, elsewhere=90, plain=40, lengths=True),
    HeldOut(17, frozenset({"scottish-english", "nigerian-english", "irish-english", "indian-english", "tweet-thread",
                           "faq-paste", "game-quest", "press-release", "multiple-choice", "postcard",
                           "yaml-manifest"}), 600,
            per_category=65, per_style=54, two=90, three=11, elsewhere=95, plain=40, lengths=True),
    HeldOut(18, frozenset({"us-southern-english", "philippine-english", "welsh-english", "haiku-note", "screenplay",
                           "radio-dispatch", "victorian-letter", "shakespearean", "sql-query", "budget-table",
                           "sports-commentary", "pirate-talk", "riddle-clue"}), 700,
            per_category=80, per_style=52, two=70, three=13, elsewhere=100, plain=35, lengths=True),
    HeldOut(19, frozenset({"voicemail-transcript", "bullet-journal", "horoscope-fortune", "news-ticker",
                           "childrens-story", "yorkshire-english", "malaysian-english", "log-lines", "html-snippet",
                           "shift-handover", "advice-column", "yoda-inverted", "gen-z-slang"}), 660,
            per_category=70, per_style=50, two=65, three=13, elsewhere=100, plain=25, lengths=True),
    HeldOut(20, frozenset({"limerick", "acrostic", "game-show-host", "weather-report", "school-newsletter",
                           "cockney-english", "hong-kong-english", "noir-detective", "courtroom-transcript",
                           "standup-update", "cowboy-western", "geordie-english"}), 700,
            per_category=65, per_style=49, two=65, three=11, elsewhere=100, plain=30, lengths=True),
    HeldOut(21, frozenset({"cooking-show-host", "tour-guide", "nature-documentary", "captains-log", "surfer-dude",
                           "corporate-buzzword", "new-york-english", "town-crier", "robot-directive", "markdown-table",
                           "coach-pep-talk", "infomercial"}), 700,
            per_category=65, per_style=50, two=65, three=11, elsewhere=100, plain=30, lengths=True),
)
each_set = pytest.mark.parametrize("s", SETS, ids=[f"v{s.n}" for s in SETS])


@functools.cache
def rows_of(s: HeldOut) -> list[dict]:
    return lines(s.path)


@each_set
def test_rows_are_well_formed(s: HeldOut):
    rows = rows_of(s)
    assert_well_formed(rows, f"v{s.n}", set(s.styles), s.rows)
    assert all(isinstance(r["task"], str) and r["task"].strip() for r in rows)


@each_set
def test_covers_decoys_every_category_and_every_style(s: HeldOut):
    assert_covers(rows_of(s), set(s.styles), per_category=s.per_category, per_style=s.per_style)


@each_set
def test_has_the_multi_category_tasks_decoys_elsewhere_and_plain_tasks_it_states(s: HeldOut):
    rows = rows_of(s)
    assert sum(len(r["categories"]) == 2 for r in rows) >= s.two
    assert sum(len(r["categories"]) == 3 for r in rows) >= s.three
    assert sum(r["decoy"] and bool(r["categories"]) for r in rows) >= s.elsewhere
    assert sum(not r["categories"] and not r["decoy"] for r in rows) >= s.plain


@pytest.mark.parametrize("s", [s for s in SETS if s.lengths], ids=[f"v{s.n}" for s in SETS if s.lengths])
def test_lengths_run_from_a_few_words_to_over_a_hundred(s: HeldOut):
    words = [len(r["task"].split()) for r in rows_of(s)]
    assert min(words) <= 4 and sum(n > 100 for n in words) >= 3


@each_set
def test_disjoint_from_the_bank(s: HeldOut):
    shared = shared_runs(rows_of(s), list(s.bank_texts()))  # named first: pytest shows only what the assert names
    assert not shared


@each_set
def test_disjoint_from_the_earlier_heldout_sets_and_the_evasions(s: HeldOut):
    shared = {path.name: shared_runs(rows_of(s), [r["task"] for r in lines(path)]) for path in s.earlier}
    shared["evasions.jsonl"] = shared_runs(rows_of(s), [e["text"] for e in EVASIONS])
    assert not {name: runs for name, runs in shared.items() if runs}


@each_set
def test_no_two_tasks_share_a_run_of_six_words(s: HeldOut):
    assert not runs_shared_within(rows_of(s))


@pytest.mark.skipif(not BENCHMARK.exists(), reason="the Mind2Web-SC data is not part of the repository and is absent here "
                    "(set VERIGUARD_BENCHMARKS to the folder holding mind2web_sc/)")
@each_set
def test_disjoint_from_the_benchmark(s: HeldOut):
    shared = shared_runs(rows_of(s), [r["confirmed_task"] for r in json.loads(BENCHMARK.read_text(encoding="utf-8"))])
    assert not shared
