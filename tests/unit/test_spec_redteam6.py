"""The sixth red-team pass on specs, JSON readers and freezing (helper C25, 2026-11-30).

1. Lone surrogates: strict JSON took `"\\ud800"` (half of a UTF-16 pair, no character: Python keeps it, lossy readers
   make it U+FFFD, serde_json refuses it), so a table allowing the column "\\ud800" was proved and frozen, `check
   --args` decided on such a value with exit 0, and a re-signed certificate holding one loaded. Every reader of
   strict JSON now refuses one, escaped or raw, with its place (TOML's readers already did); the decision log's
   records and the MCP proxy's relay keep them (they record or pass on what came, escaped).
2. Freezing: a certificate synth would write but its loader refuse (a lone surrogate in a model's transcript) is
   `freeze.certificate` before anything is written; `.NAME.old`, a fixed name in the output folder, left there as a
   link or a file made every later synth end in an OSError after the proof.
"""
import json
import os

import pytest
from hypothesis import given, settings, strategies as st

from veriguard.cli import main
from veriguard.contracts.errors import SpecError
from veriguard.contracts.strict_json import StrictJSONError, loads, loads_passing_surrogates
from veriguard.enforce.decision_log import DecisionLog, verify_log
from veriguard.enforce.keys import load_verify_key
from veriguard.synth.freeze import write_build
from veriguard.synth.specfile import load_spec
from tests.conftest import write_spec
from tests.unit.test_audit import key  # noqa: F401
from tests.unit.test_audit_claims import resign
from tests.unit.test_compile_and_freeze import fake_result
from tests.unit.test_signed_builds import FIELDS, build, keys, no_trust_from_the_environment, refused, signed  # noqa: F401, F811

LONE = [r'"\ud800"', r'"\udfff"', r'"\uDBFF"', r'"a\ud800\ud800\udc00"', r'"\\\ud800"', r'{"k\udc00": 1}',
        '{"a": [1, "x\\udd00"]}', '"\ud800"']


@pytest.mark.parametrize("text", LONE)
def test_a_lone_surrogate_is_not_strict_json(text):
    with pytest.raises(StrictJSONError) as e:
        loads(text)
    assert "lone surrogate" in e.value.message and e.value.line == 1 and e.value.col >= 2
    assert loads_passing_surrogates(text) == json.loads(text)


@pytest.mark.parametrize("text", [r'"\ud83d\ude00"', r'"\uD83D\uDE00"', r'"\\ud800"', r'"\\\\ud800"', r'"\u0041\u00e9"',
                                  '"\U0001F600 \u2028"', r'["\\", "\ud800\udc00"]'])
def test_pairs_and_escaped_backslashes_are_still_read(text):
    assert loads(text) == json.loads(text)
    assert loads(text.encode("utf-8")) == json.loads(text)


def test_the_place_of_a_lone_surrogate_is_given():
    with pytest.raises(StrictJSONError) as e:
        loads('{\n  "a": "ok",\n  "b": "x\\ud800"\n}')
    assert (e.value.line, e.value.col) == (3, 10)


def test_a_table_holding_a_lone_surrogate_is_a_spec_error_with_its_place(tmp_path):
    path = write_spec(tmp_path, FIELDS, table='{"admin": {"db": ["x", "\\ud800"]}, "user": {"db": ["x"]}}')
    with pytest.raises(SpecError) as e:
        load_spec(path)
    assert "lone surrogate" in e.value.message and "ok.json" in str(e.value.file)


@pytest.mark.parametrize("args", ['{"role": "admin", "age": 30, "items": [["db", "\\ud800"]]}',
                                  '{"role": "admin", "age": 30, "items": [["\\udfff", "x"]]}'])
def test_check_refuses_arguments_holding_a_lone_surrogate(build, args, capsys):
    assert main(["check", str(build), "--args", args]) == 2
    out = json.loads(capsys.readouterr().out)
    assert out["allowed"] is False and "lone surrogate" in out["error"]["message"]
    assert main(["check", str(build), "--args", args.replace("\\ud800", "y").replace("\\udfff", "db")]) == 0


def test_a_resigned_certificate_holding_a_lone_surrogate_is_refused(build, key):
    resign(build, key, lambda c: c.update(request=c["request"] + "\ud800"))
    assert '\\ud800' in (build / "certificate.json").read_text()
    assert "lone surrogate" in refused(build, "load.certificate").message


def test_the_decision_log_still_records_a_lone_surrogate_and_verifies(tmp_path, keys):
    log = DecisionLog(tmp_path / "d.jsonl", key=keys["signer"][0])
    log.append({"allowed": False, "to": "bob\ud800"})
    assert verify_log(tmp_path / "d.jsonl", load_verify_key(keys["signer"][1])).ok
    assert [r["to"] for r in log.records()] == ["bob\ud800"]


def test_freeze_refuses_a_certificate_its_loader_would_refuse(tmp_path):
    result = fake_result(load_spec(write_spec(tmp_path, FIELDS)))
    result.transcript = {"model": "m", "turns": [{"text": "half a pair \ud800"}]}
    with pytest.raises(SpecError) as e:
        write_build(result, tmp_path / "out", run_info={}, path="llm")
    assert e.value.code == "freeze.certificate" and "lone surrogate" in e.value.message
    assert not (tmp_path / "out" / "mini").exists() and os.listdir(tmp_path / "out") == []


@pytest.mark.parametrize("kind", ["link to a folder", "file", "dangling link"])
def test_a_fixed_old_name_in_the_output_folder_does_not_stop_synth(tmp_path, kind):
    result = fake_result(load_spec(write_spec(tmp_path, FIELDS)))
    out = tmp_path / "out"
    (tmp_path / "victim").mkdir()
    (tmp_path / "victim" / "precious").write_text("keep")
    write_build(result, out, run_info={})
    old = out / ".mini.old"
    if kind == "file":
        old.write_text("x")
    else:
        old.symlink_to(tmp_path / ("victim" if kind == "link to a folder" else "nowhere"))
    final, _ = write_build(result, out, run_info={})
    assert (final / "certificate.json").is_file()
    assert (tmp_path / "victim" / "precious").read_text() == "keep"
    assert sorted(os.listdir(out)) == [".mini.old", "mini"]   # the previous build went, nothing else was left


def test_a_link_in_the_build_s_place_is_replaced_and_its_target_kept(tmp_path):
    result = fake_result(load_spec(write_spec(tmp_path, FIELDS)))
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (out / "mini").symlink_to(tmp_path / "nowhere")   # dangling: os.replace of a folder over it failed
    final, _ = write_build(result, out, run_info={})
    assert final.is_dir() and not final.is_symlink() and (final / "policy.py").is_file()



PIECES = ["a", "\\", '"', "u", "d8", "\ud800", "\udc00", "\U0001F600", "\\ud800", "\\udc00", "é", "\n"]


@settings(max_examples=400, deadline=None)
@given(st.recursive(st.lists(st.sampled_from(PIECES), max_size=6).map("".join),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                    max_leaves=6), st.booleans())
def test_refused_exactly_when_a_string_holds_a_lone_surrogate(value, ascii_only):
    """Any value, written by json.dumps escaped or raw: refused iff what a reader gets holds a surrogate that is not
    half of a pair (a high and a low half written next to each other as escapes are one character); read back as
    json reads it otherwise."""
    text = json.dumps(value, ensure_ascii=ascii_only)
    expected = json.loads(text)
    lone = any(0xD800 <= ord(c) <= 0xDFFF for c in (json.dumps(expected, ensure_ascii=False) + text))
    if lone:
        with pytest.raises(StrictJSONError):
            loads(text)
    else:
        assert loads(text) == expected and loads(text.encode("utf-8")) == expected
    assert loads_passing_surrogates(text) == expected


MERGED = [("Ok.json", "ok.json"), ("caf\u00e9.json", "cafe\u0301.json"), ("T/ok.json", "t/ok.json"),
          ("stra\u00dfe.json", "STRASSE.json")]


@pytest.mark.parametrize("first,second", MERGED, ids=ascii)
def test_two_spec_files_a_macos_filesystem_would_merge_are_a_spec_error(tmp_path, first, second):
    """On Linux two files; on APFS / HFS+ / NTFS one: the build certified both, and no copy of it there loaded."""
    for rel, table in ((first, '{"x": true}'), (second, '{"y": true}')):
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        (tmp_path / rel).write_text(table, encoding="utf-8")
    (tmp_path / "m.toml").write_text(TWO_TABLES.format(first=first, second=second), encoding="utf-8")
    with pytest.raises(SpecError) as e:
        load_spec(tmp_path / "m.toml")
    assert e.value.code == "spec.path" and "one file" in e.value.message and repr(first) in e.value.message


def test_one_file_named_once_for_two_tables_and_distinct_names_still_load(tmp_path):
    for rel in ("a.json", "b.json"):
        (tmp_path / rel).write_text('{"x": true}', encoding="utf-8")
    (tmp_path / "m.toml").write_text(TWO_TABLES.format(first="a.json", second="a.json"), encoding="utf-8")
    assert [f for f, _ in load_spec(tmp_path / "m.toml").files] == ["a.json", "a.json"]
    (tmp_path / "m.toml").write_text(TWO_TABLES.format(first="a.json", second="b.json"), encoding="utf-8")
    assert [f for f, _ in load_spec(tmp_path / "m.toml").files] == ["a.json", "b.json"]


TWO_TABLES = '''name = "m"
request = "x"
[arguments]
a = "str"
b = "str"
[tables.t1]
file = "{first}"
signature = "(str) -> bool"
[tables.t2]
file = "{second}"
signature = "(str) -> bool"
[contract]
rules = """
rule r1 "a": t1(a)
rule r2 "b": t2(b)
"""
[[examples]]
name = "e"
args = {{ a = "x", b = "y" }}
allowed = true
violations = []
'''
