"""Every error veriguard raises sits under one root and in exactly one group of who must act
(contracts/errors.py); the group gives the exit code the CLI ends with."""
from __future__ import annotations

import ast
import importlib
import re

import pytest

from tests.conftest import ROOT
from veriguard.contracts.errors import (GROUPS, Actor, AgentInputError, EnvironmentProblem, InternalError,
                                        OperatorError, SpecError, VeriguardError)

FOLDERS = ("contracts", "verify", "synth", "enforce", "providers", "veriguard")
EXIT = {SpecError: 2, OperatorError: 2, AgentInputError: 2, EnvironmentProblem: 3, InternalError: 70}
# a class that ends a command with another code than its group's, and why
OWN_EXIT = {"UpdateRefused": 1}   # the verified update is refused: a gate failed (exit 1)
# exceptions deliberately outside the root, and why; a new one must be added here with its reason
OUTSIDE = {
    "contracts/frozen_entry.py:PolicyMismatch": "stdlib-only code copied into frozen modules; the loader re-raises it",
    "contracts/runtime_support.py:ArgumentError": "the same: enforce.loader turns it into veriguard's ArgumentError",
    "contracts/runtime_support.py:_Bad": "private to runtime_support, turned into its ArgumentError",
    "verify/testrun.py:_Alarm": "private: a test case's time limit, caught where it is raised",
    "enforce/decision_log.py:_Broken": "private: a finding of the log check, caught in the module",
    "contracts/strict_json.py:StrictJSONError": "a parse signal: every reader re-raises it with its own code and group",
    "contracts/regex_safety.py:UnsafeRegex": "a check's signal: the bank and command-table readers re-raise it with "
                                             "their own codes (spec.bank, load.classifier, extract.config)",
    "contracts/regular_file.py:FileRefused": "a read's signal: each reader (tables, specfile, cli, diff) re-raises it "
                                             "with its own code, file and fix",
    "enforce/guard.py:RunTerminated": "control flow: a BaseException that stops the agent's run",
    "veriguard/hook.py:Refused": "the hook's denial, answered as exit 2 by hook.main",
    "veriguard/hook.py:_BadOptions": "private: the hook's usage error, answered by hook.main",
    "enforce/shell_git.py:_Fail": "private: a question git could not answer, turned into Unresolved in the module",
    "enforce/integrations/anthropic_sdk.py:ProviderToolsRefused": "control flow: a BaseException the SDK does not "
                                                                  "retry, like RunTerminated",
    "enforce/integrations/anthropic_sdk.py:SdkChanged": "a ProviderToolsRefused (control flow the SDK does not retry) "
                                                        "that names the SDK's private name which is gone",
    "enforce/integrations/anthropic_sdk.py:UnguardedTools": "a setup error of the integrating code (a ValueError, as "
                                                            "the SDK's own for a bad tool list), raised before a run",
    "enforce/integrations/openai_agents.py:HostedToolsRefused": "control flow: a BaseException the OpenAI client "
                                                                "does not retry, like anthropic_sdk's ProviderToolsRefused",
    "enforce/integrations/openai_agents.py:UnguardedTools": "an Agents SDK UserError, so the SDK reports it as its own "
                                                            "setup errors, before any model call",
    "providers/http.py:BodyRefused": "a read's signal: both providers re-raise it as provider.malformed",
    "enforce/integrations/mcp_proxy.py:Stopped": "control flow: a stop signal before the proxy serves (a "
                                                 "KeyboardInterrupt, which asyncio lets out of a task); the proxy "
                                                 "exits 128 + the signal's number",
    # debts: callers print or re-wrap str(e), which would repeat the code; see the report of issue 13
}


def exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class the product defines, as `file:Name`."""
    found = {}
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            names = [n.name for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                     if isinstance(n, ast.ClassDef) and n.bases]
            if not names:
                continue
            where = str(path.relative_to(ROOT))
            module = importlib.import_module("veriguard." + where.removesuffix(".py").removesuffix("/__init__")
                                             .replace("/", ".").removeprefix("veriguard."))
            for name in names:
                cls = getattr(module, name, None)
                if isinstance(cls, type) and issubclass(cls, BaseException):
                    found[f"{where}:{name}"] = cls
    return found


@pytest.fixture(scope="module")
def classes() -> dict[str, type[BaseException]]:
    return exception_classes()


def test_the_scan_sees_the_errors_it_must(classes):
    assert classes["contracts/errors.py:VeriguardError"] is VeriguardError
    assert {"enforce/loader.py:PolicyMismatch", "enforce/extract_errors.py:ExtractionError",
            "providers/types.py:ProviderError", "veriguard/diff.py:UpdateRefused"} <= set(classes)
    assert set(OUTSIDE) <= set(classes), f"OUTSIDE names classes that are gone: {set(OUTSIDE) - set(classes)}"


def test_every_error_is_under_the_root_or_outside_it_for_a_stated_reason(classes):
    stray = sorted(name for name, cls in classes.items() if not issubclass(cls, VeriguardError) and name not in OUTSIDE)
    assert not stray, f"derive these from a group of contracts/errors.py (or say in OUTSIDE why not): {stray}"
    inside = sorted(name for name in OUTSIDE if issubclass(classes[name], VeriguardError))
    assert not inside, f"these are under the root now: remove them from OUTSIDE: {inside}"


def test_every_error_class_is_in_exactly_one_group_which_gives_its_actor_and_exit_code(classes):
    for name, cls in classes.items():
        if not issubclass(cls, VeriguardError) or cls is VeriguardError or cls in GROUPS:
            continue
        groups = [g for g in GROUPS if issubclass(cls, g)]
        assert len(groups) == 1, f"{name} is in {len(groups)} groups: {groups}"
        assert cls.actor is groups[0].actor, name
        assert cls.exit_code == OWN_EXIT.get(cls.__name__, EXIT[groups[0]]), name


def test_the_groups_cover_every_actor_once():
    assert [g.actor for g in GROUPS] == list(Actor) and set(EXIT) == set(GROUPS)
    assert all(g.exit_code == EXIT[g] for g in GROUPS)
    assert VeriguardError.actor is Actor.OPERATOR and VeriguardError.exit_code == 2   # the root raised directly


def test_errors_that_ended_in_a_traceback_or_the_wrong_code_are_rendered_by_their_group():
    from veriguard.cli import _failure
    from veriguard.enforce.guard import GuardConfigError
    from veriguard.enforce.loader import ArgumentError, PolicyMismatch
    from veriguard.evaluation import DataError

    cases = [(PolicyMismatch("the checker says allowed=False"), "policy.mismatch", 70),
             (GuardConfigError("halt_after 0 must be 1 or more"), "guard.config", 2),
             (DataError("bad.json is not a list", "pass the data"), "eval.data", 2),
             (ArgumentError("role", "not a str"), "policy.argument", 2),
             (EnvironmentProblem("env.java_missing", "no java"), "env.java_missing", 3)]
    for error, code, exit_code in cases:
        message, got = _failure(error)
        assert got == exit_code and re.match(rf"error\[{re.escape(code)}\]: ", message), (message, got)
    assert isinstance(GuardConfigError("x"), ValueError) and isinstance(DataError("x", "y"), ValueError)


def test_the_groups_are_part_of_the_public_api():
    import veriguard

    for group in GROUPS:
        assert getattr(veriguard, group.__name__) is group and group.__name__ in veriguard.__all__


def test_veriguard_errors_lists_every_code_once_under_its_group(capsys):
    import json

    from veriguard.cli import main
    from veriguard.contracts.error_catalogue import CATALOGUE

    assert main(["errors", "--json"]) == 0
    groups = json.loads(capsys.readouterr().out)["groups"]
    assert [(g["class"], g["exit_code"]) for g in groups] == [(g.__name__, EXIT[g]) for g in GROUPS]
    listed = [(code, g["actor"]) for g in groups for code in g["codes"]]
    assert sorted(listed) == sorted((code, e.actor.value) for code, e in CATALOGUE.items())
    assert main(["errors"]) == 0
    text = capsys.readouterr().out
    assert "environment: EnvironmentProblem, exit 3" in text and "  env.java_missing " in text


def test_an_error_of_any_class_can_be_placed_in_a_file():
    from veriguard.contracts.errors import ContractError, Pos
    from veriguard.enforce.extract_errors import ExtractionError
    from veriguard.enforce.loader import ArgumentError

    placed = ContractError("contract.syntax", "unexpected ')'", pos=Pos(1, 4), fix="remove it").located("s.toml", 9, 7)
    assert (type(placed), placed.where(), placed.fix, str(placed).splitlines()[0]) == \
        (ContractError, "s.toml:10:11", "remove it", "s.toml:10:11: error[contract.syntax]: unexpected ')'")
    argument = ArgumentError("role", "not a str").located("call.json")   # its __init__ takes (argument, reason)
    assert (type(argument), argument.argument, argument.code, argument.where()) == \
        (ArgumentError, "role", "policy.argument", "call.json")
    assert ExtractionError("extract.type", "not an int").located("a.json").code == "extract.type"
