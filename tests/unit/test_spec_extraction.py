"""The [extraction] section is checked when the spec is read: an `llm` entry's endpoint and API key variable
(red team F1: a spec sent the operator's secret to its own server), and every entry's shape (F7: a malformed
entry passed synth and failed every call at run time)."""
import pytest

from veriguard.contracts.errors import SpecError
from veriguard.providers import extraction
from veriguard.synth.specfile import load_spec
from tests.conftest import MINIMAL, write_spec

CONTEXT = 'role = { from = "context", fields = { r = "session.role" } }\n'


def with_extraction(entries: str) -> str:
    return MINIMAL + "\n[extraction]\n" + entries


def spec_error(tmp_path, entries: str) -> tuple[SpecError, str]:
    """The SpecError of MINIMAL with `entries` as its [extraction], and its line from the key it points at (an inline
    table's key, or a [extraction.x] table's `key = value` line)."""
    with pytest.raises(SpecError) as e:
        load_spec(write_spec(tmp_path, with_extraction(entries)))
    line = (tmp_path / "mini.toml").read_text().splitlines()[e.value.pos.line - 1]
    return e.value, line[e.value.pos.col - 1:] if "{" in line else line


@pytest.mark.parametrize("entry, at, words", [
    ('age = { from = "llm", provider = "openai", base_url = "http://127.0.0.1:8/v1", model = "m", '
     'api_key_env = "VICTIM_SECRET" }', "api_key_env", "not the name of an API key variable"),
    ('age = { from = "llm", api_key_env = "HOME" }', "api_key_env", "_API_KEY"),
    ('age = { from = "llm", api_key_env = "openai_api_key" }', "api_key_env", "_API_KEY"),
    ('age = { from = "llm", api_key_env = 3 }', "api_key_env", "_API_KEY"),
    ('age = { from = "llm", provider = "openai", base_url = "http://models.example.com/v1", model = "m" }',
     "base_url", "plain http"),
    ('age = { from = "llm", provider = "openai", base_url = "http://127.0.0.1@evil.example/v1", model = "m" }',
     "base_url", "'evil.example'"),
    ('age = { from = "llm", provider = "openai", base_url = "ftp://localhost/v1", model = "m" }',
     "base_url", "not an http(s) URL"),
    ('[extraction.age]\nfrom = "llm"\nprovider = "openai"\nmodel = "m"\nbase_url = "http://10.1.2.3:8000/v1"',
     "base_url", "plain http"),
])
def test_an_llm_endpoint_or_key_variable_the_monitor_may_not_use_is_a_located_spec_error(tmp_path, entry, at,
                                                                                           words):
    entries = entry if entry.startswith("[") else CONTEXT.replace("role", "items", 1) + entry
    e, there = spec_error(tmp_path, entries)
    assert e.code == "spec.extraction" and there.startswith(at) and words in e.message and e.fix


@pytest.mark.parametrize("cfg", [{}, {"api_key_env": "OPENAI_API_KEY"}, {"api_key_env": "VLLM2_API_KEY"},
                                 {"base_url": "https://models.example.com/v1"}, {"base_url": "http://localhost:8000/v1"},
                                 {"base_url": "http://127.9.9.9/v1"}, {"base_url": "http://[::1]:8000/v1"}])
def test_https_loopback_http_and_api_key_variables_are_allowed(cfg):
    assert extraction.endpoint_problem({"from": "llm", **cfg}) is None


@pytest.mark.parametrize("url", ["http://[::ffff:127.0.0.1]/", "http://localhost.evil.example/", "http://0.0.0.0/",
                                 "http://localhost:99999/", "https://", "file:///etc/passwd", None])
def test_urls_that_are_neither_https_nor_loopback_http_are_refused(url):
    assert extraction.base_url_problem(url)


@pytest.mark.parametrize("entry, at, words", [
    ('items = { from = "tool_call", tool = "send_payment", fields = "recipient" }', "fields", "must be a table"),
    ('items = { from = "tool_call", tool = "send_payment", fields = { r = 3 } }', "fields", "must be a table"),
    ('items = { from = "tool_call", tool = 7, fields = { r = "r" } }', "tool", "must be a string"),
    ('items = { from = "tool_call", tool = "t", fields = { r = "r" }, ignore = "x" }', "ignore", "list of strings"),
    ('items = { from = "tool_call", tool = "t", fields = { r = "r" }, ignor = ["x"] }', "ignor", "unknown key"),
    ('items = { from = "tool_call", fields = { r = "r" } }', "from", "needs `tool`"),
    ('items = { from = "field", path = ["a", "b"] }', "path", "must be a string"),
    ('items = { from = "field", path = "a", map = ["x"] }', "map", "must be a table"),
    ('items = { from = "context", fields = ["a"] }', "fields", "must be a table"),
    ('items = { from = "context", fields = { a = "b" }, defaults = 3 }', "defaults", "must be a table"),
    ('items = { from = "code", schema = 3 }', "schema", "must be a string"),
    ('items = { from = "classifier", text = "t", bank = "b.toml", abstain = "allow" }', "abstain", "deny"),
    ('items = { from = "classifier", text = "t" }', "from", "needs `bank`"),
    ('items = { from = "regex", path = "a" }', "from", "not an extractor"),
    ('items = "field"', "items", "not an extractor"),
    ('items = { from = "llm", max_tokens = "lots" }', "max_tokens", "positive integer"),
    ('items = { from = "llm", temperature = 0 }', "temperature", "unknown key"),
    ('items = { from = "llm", provider = "cohere" }', "provider", "is not one of"),
    ('items = { from = "llm", mode = "vote" }', "mode", "mode 'vote'"),
    ('[extraction.items]\nfrom = "tool_call"\ntool = "send_payment"\nfields = "recipient"', "fields", "must be a table"),
])
def test_a_malformed_extraction_entry_is_a_located_spec_error(tmp_path, entry, at, words):
    """Red team F7: `fields = "recipient"` passed synth, then every call failed closed with an AttributeError."""
    e, there = spec_error(tmp_path, entry if entry.startswith("[") else CONTEXT + entry)
    assert e.code == "spec.extraction" and there.startswith(at) and words in e.message and e.fix


def test_well_formed_entries_of_every_kind_load(tmp_path):
    spec = load_spec(write_spec(tmp_path, with_extraction(
        'role = { from = "field", path = "session.role", map = { administrator = "admin" } }\n'
        'age = { from = "context", fields = { age = "user.age" }, defaults = { age = 0 } }\n'
        'items = { from = "tool_call", tool = "*", fields = { t = "$name" }, ignore = ["note"] }\n')))
    assert set(spec.extraction) == {"role", "age", "items"}
