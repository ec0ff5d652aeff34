"""Shell-command benchmarks: `veriguard eval shell` (a labelled JSONL file of commands) and
`veriguard eval safe-os` (AGrail's Safe-OS), each decided by a frozen policy whose spec reads shell
commands (`from = "shell"`), with GuardAgent's metrics (LPA, LPP, LPR, EA).

`eval shell` reads one JSON object per line: {"command": str, "label": 0|1, "violations": [rule ids]
(optional), "cwd": str, "home": str (optional, absolute; default /home/user, cwd defaults to home, which a
spec with a {workspace} zone refuses as the workspace: give such records a project folder as cwd),
"approved": bool (optional, default false), "user": "user"|"root" (optional, for specs that read who
acts), "id", "category" (optional strings)}. A denial counts as label 1, including one that only a
human's approval would lift (reported as `approvable`). EA is measured on the label-1 records that
give their rule ids; with none, EA is not applicable (null).

`eval safe-os` reads ../shared/benchmarks/agrail_safe_os: the DEFEND copy with the agent's command
written (defend_simulated/benign_simulate.jsonl: label 0, harmful_simulate.jsonl: label 1; its own
`labels` field is inverted, so the file name is the truth) and AGrail's tasks whose command is given
(DAS/data/safe-os/*.json: `evaluation.example.code`, `evaluation.check.code`, or an environment
task's `evaluation.match` unless that text is the task's expected output, i.e. appears in its setup
code). Each command runs as the task's user (`user` or `root`) in that user's home (/home/user or
/root); the setup code is the benchmark's, not the agent's, and is not decided. Safe-OS has no
rule-level gold, so EA is not applicable there.

Bad data is a VeriguardError (exit 2) at file:line:col. Returns values; the CLI prints them.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from veriguard.contracts.errors import NOWHERE, Pos, VeriguardError
from veriguard.contracts import strict_json
from veriguard.contracts.regular_file import FileRefused, read_regular_file
from veriguard.evaluation import Case, metrics, summarize, write_cases

DEFAULT_HOME = "/home/user"
HOMES = {"user": "/home/user", "root": "/root"}
SHELL_KEYS = ("command", "label", "violations", "cwd", "home", "approved", "user", "id", "category")
DEFEND_DIR = "defend_simulated"
DEFEND_FILES = (("benign_simulate.jsonl", 0), ("harmful_simulate.jsonl", 1))
DAS_DIR = "DAS/data/safe-os"
DAS_FILES = ("benign.json", "environment.json", "prompt_injection.json", "system_sabotage.json")
SHELL_FIX = ("one JSON object per line: {\"command\": str, \"label\": 0 or 1, optional \"violations\": [rule ids], "
             "\"cwd\"/\"home\": absolute paths, \"approved\": bool, \"user\": \"user\" or \"root\", \"id\", "
             "\"category\"}")
SAFE_OS_FIX = "pass the agrail_safe_os folder (defend_simulated/ and DAS/data/safe-os/ as the benchmark ships them)"


@dataclass(frozen=True)
class Item:
    """One command to decide, with its gold label and where it came from."""

    id: str
    category: str
    observation: dict[str, Any]
    label: int
    violations: tuple[str, ...] | None     # gold rule ids, when the data gives them
    file: Path
    line: int


def _error(message: str, file: Path, pos: Pos = NOWHERE, fix: str = SHELL_FIX) -> VeriguardError:
    return VeriguardError("eval.data", message, file=str(file), pos=pos, fix=fix)


def _text(file: Path, fix: str) -> str:
    try:  # never a FIFO (it would wait for a writer) or a device such as /dev/zero (it would fill memory)
        data = read_regular_file(file)
    except FileRefused as e:
        raise _error(e.why, file, fix=fix if e.kind == "unreadable" else e.fix) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _error(f"not UTF-8 (byte {e.start})", file, fix=fix) from None


def _json(text: str, file: Path, line: int, fix: str) -> Any:
    try:
        return strict_json.loads(text)
    except strict_json.StrictJSONError as e:
        raise _error(f"not valid JSON: {e.message}", file, Pos(line + max(e.line, 1) - 1, e.col or 1), fix) from None


def _show(value: Any) -> str:
    return repr(value)[:60] if isinstance(value, (str, int, float, bool, type(None))) else type(value).__name__


# ------------------------------------------------------------------------------------------------
# eval shell: a labelled JSONL file

def read_shell_data(file: Path) -> list[Item]:
    """The records of a labelled command file, checked field by field."""
    items = []
    for n, line in enumerate(_text(file, SHELL_FIX).split("\n"), start=1):
        if line.strip():
            items.append(_shell_item(_json(line, file, n, SHELL_FIX), line, file, n))
    if not items:
        raise _error("no records (expected one JSON object per line)", file)
    return items


def _shell_item(rec: Any, line: str, file: Path, n: int) -> Item:
    def where(key: str) -> Pos:
        at = line.find(json.dumps(key))
        return Pos(n, at + 1 if at >= 0 else 1)

    def bad(key: str, message: str) -> VeriguardError:
        return _error(message, file, where(key))

    if not isinstance(rec, dict):
        raise _error(f"a record must be a JSON object, got {type(rec).__name__}", file, Pos(n, 1))
    extra = [k for k in rec if k not in SHELL_KEYS]
    if extra:
        raise bad(extra[0], f"unknown field {extra[0][:60]!r}; the fields are {', '.join(SHELL_KEYS)}")
    if "command" not in rec or "label" not in rec:
        raise _error(f"the record lacks {'command' if 'command' not in rec else 'label'!r}", file, Pos(n, 1))
    if not isinstance(rec["command"], str):
        raise bad("command", f"'command' must be a string, got {_show(rec['command'])}")
    if type(rec["label"]) is not int or rec["label"] not in (0, 1):
        raise bad("label", f"'label' must be 0 or 1, got {_show(rec['label'])}")
    violations = rec.get("violations")
    if violations is not None and (not isinstance(violations, list) or
                                   not all(isinstance(v, str) and v for v in violations)):
        raise bad("violations", f"'violations' must be a list of rule ids, got {_show(violations)}")
    if violations and rec["label"] == 0:
        raise bad("violations", "a record with label 0 names violations; give label 1 or no violations")
    for key in ("home", "cwd"):
        if key in rec and (not isinstance(rec[key], str) or not rec[key].startswith("/")):
            raise bad(key, f"{key!r} must be an absolute path, got {_show(rec[key])}")
    if "approved" in rec and type(rec["approved"]) is not bool:
        raise bad("approved", f"'approved' must be true or false, got {_show(rec['approved'])}")
    if "user" in rec and rec["user"] not in HOMES:
        raise bad("user", f"'user' must be \"user\" or \"root\", got {_show(rec['user'])}")
    for key in ("id", "category"):
        if key in rec and not isinstance(rec[key], str):
            raise bad(key, f"{key!r} must be a string, got {_show(rec[key])}")
    home = rec.get("home", DEFAULT_HOME)
    obs: dict[str, Any] = {"command": rec["command"], "cwd": rec.get("cwd", home), "home": home,
                           "approved": rec.get("approved", False)}
    if "user" in rec:
        obs["user"] = rec["user"]
    category = rec.get("category") or ("harmful" if rec["label"] else "benign")
    return Item(rec.get("id") or f"{file.name}:{n}", category, obs, rec["label"],
                tuple(violations) if violations else None, file, n)


# ------------------------------------------------------------------------------------------------
# eval safe-os

def read_safe_os(data: Path) -> tuple[list[Item], list[Item]]:
    """(DEFEND's simulated commands, AGrail's tasks whose command is given)."""
    if not data.is_dir():
        raise _error("not a folder", data, fix=SAFE_OS_FIX)
    return _defend(data / DEFEND_DIR), _das(data / DAS_DIR)


def _defend(folder: Path) -> list[Item]:
    items = []
    for name, label in DEFEND_FILES:
        file = folder / name
        for n, line in enumerate(_text(file, SAFE_OS_FIX).split("\n"), start=1):
            if not line.strip():
                continue
            rec = _json(line, file, n, SAFE_OS_FIX)
            command = rec.get("agent_actions") if isinstance(rec, dict) else None
            user = rec.get("user_identity") if isinstance(rec, dict) else None
            if not isinstance(command, str) or user not in HOMES:
                raise _error("a record needs \"agent_actions\" (a string) and \"user_identity\" (\"user\" or "
                             f"\"root\"), got {_show(command)} and {_show(user)}", file, Pos(n, 1), SAFE_OS_FIX)
            items.append(Item(f"{name}:{n}", "harmful" if label else "benign", _os_observation(command, user),
                              label, None, file, n))
    return items


def _das(folder: Path) -> list[Item]:
    items = []
    for name in DAS_FILES:
        file = folder / name
        tasks = _json(_text(file, SAFE_OS_FIX), file, 1, SAFE_OS_FIX)
        if not isinstance(tasks, list):
            raise _error(f"expected a list of tasks, got {type(tasks).__name__}", file, fix=SAFE_OS_FIX)
        for i, task in enumerate(tasks):
            if not isinstance(task, dict) or task.get("labels") not in (0, 1) or task.get("user") not in HOMES:
                raise _error(f"task {i}: needs \"labels\" (0 or 1) and \"user\" (\"user\" or \"root\")", file,
                             fix=SAFE_OS_FIX)
            command = das_command(task)
            if command is not None:
                items.append(Item(f"{name}#{i}", name.removesuffix(".json"), _os_observation(command, task["user"]),
                                  task["labels"], None, file, 1))
    return items


def das_command(task: dict[str, Any]) -> str | None:
    """The command an AGrail task gives: its reference command (example or check code), or an
    environment task's `match`, unless the match is the expected output (its setup code writes it)."""
    raw = task.get("evaluation")
    evaluation: dict[str, Any] = raw if isinstance(raw, dict) else {}
    for key in ("example", "check"):
        code = evaluation.get(key, {}).get("code") if isinstance(evaluation.get(key), dict) else None
        if isinstance(code, str) and code.strip():
            return code
    match = evaluation.get("match")
    if task.get("attack") == "environment" and isinstance(match, str) and match.strip():
        create = task.get("create")
        init = create.get("init", {}).get("code", "") if isinstance(create, dict) and \
            isinstance(create.get("init"), dict) else ""
        if not (isinstance(init, str) and match in init):
            return match
    return None


def _os_observation(command: str, user: str) -> dict[str, Any]:
    home = HOMES[user]
    return {"command": command, "cwd": home, "home": home, "approved": False, "user": user}


# ------------------------------------------------------------------------------------------------
# deciding and scoring

def load_monitor(build: str | Path) -> Any:
    from veriguard.enforce.extract_errors import ExtractionError
    from veriguard.enforce.monitor import Monitor

    from veriguard.enforce.shell import ShellExtractor

    try:
        monitor = Monitor.from_build(build)
        for x in monitor.extractors.values():  # the monitor checks table entries when first used; all of them here
            if isinstance(x, ShellExtractor):
                x.commands.check()
    except ExtractionError as e:
        raise VeriguardError(e.code, f"the build's [extraction] section: {e.message}", file=str(build),
                             fix="fix the spec's [extraction] section and re-run synth") from None
    if not any(isinstance(x, ShellExtractor) for x in monitor.extractors.values()):  # else every case fails closed
        raise VeriguardError("eval.build", f"the policy {monitor.policy.name} does not read shell commands (its "
                             "[extraction] has no `from = \"shell\"` argument)", file=str(build),
                             fix="pass a build of a shell spec, e.g. build/shell_agent or build/os_agent")
    return monitor


def decide_all(monitor: Any, items: list[Item], benchmark: str,
               progress: Callable[[str], None] = lambda _m: None) -> list[Case]:
    from veriguard.hook import approval_would_allow

    rules = set(monitor.policy.rules)
    for it in items:
        unknown = sorted(set(it.violations or ()) - rules)
        if unknown:
            raise _error(f"violations {unknown} are not rules of {monitor.policy.name} ({', '.join(sorted(rules))})",
                         it.file, Pos(it.line, 1), f"use the rule ids of {monitor.policy.name}'s spec")
    cases = []
    for i, it in enumerate(items):
        d = monitor.check(it.observation, action_id=it.id, integration="eval", tool="shell")
        denied = not d.allowed
        gold = list(it.violations) if it.violations is not None else None
        exact = denied and (gold is None or set(d.violations) == set(gold))
        contains = denied and (gold is None or set(gold) <= set(d.violations))
        provenance = dict(d.provenance)
        provenance["approvable"] = denied and not d.fail_closed and approval_would_allow(monitor.policy, d.arguments)
        provenance["command"] = it.observation["command"][:2000]
        cases.append(Case(it.id, it.category, it.label, gold, int(denied), list(d.violations), exact, contains,
                          d.fail_closed, d.latency_us, provenance))
        if (i + 1) % 100 == 0:
            progress(f"{benchmark}: {i + 1}/{len(items)} commands")
    return cases


def score(benchmark: str, cases: list[Case]) -> dict[str, Any]:
    """summarize's metrics, with EA and EA_contains over the label-1 records that give rule ids (None
    when none does), the denials a human's approval would lift, and the latency."""
    out = summarize(benchmark, cases)
    groups = {"": cases, **{cat: [c for c in cases if c.category == cat] for cat in out["by_category"]}}
    for cat, group in groups.items():
        target = out if cat == "" else out["by_category"][cat]
        explained = [c for c in group if c.gold_label == 1 and c.gold_explanation is not None]
        ea = metrics(explained) if explained else None
        target["EA"] = ea["EA"] if ea else None
        target["EA_contains"] = ea["EA_contains"] if ea else None
        target["EA_n"] = len(explained)
        target["approvable"] = sum(1 for c in group if c.provenance.get("approvable"))
    return out


def evaluate_shell(build: str | Path, data: str | Path, cases_dir: str | Path,
                   progress: Callable[[str], None] = lambda _m: None) -> dict[str, Any]:
    """`veriguard eval shell`: every command of `data` decided by the policy in `build`."""
    items = read_shell_data(Path(data))
    monitor = load_monitor(build)
    progress(f"shell: deciding {len(items)} commands with {build}")
    t0 = time.perf_counter()
    cases = decide_all(monitor, items, "shell", progress)
    summary = score("shell", cases)
    summary.update(policy=monitor.policy.name, build=str(build), data=str(data),
                   seconds=round(time.perf_counter() - t0, 3))
    summary["cases_file"], summary["misses_file"] = map(str, write_cases(cases, Path(cases_dir), "shell"))
    return summary


def evaluate_safe_os(data: str | Path, build: str | Path, cases_dir: str | Path,
                     progress: Callable[[str], None] = lambda _m: None) -> dict[str, Any]:
    """`veriguard eval safe-os`: DEFEND's simulated Safe-OS commands and AGrail's tasks whose command is
    given, decided by the policy in `build` (an os_agent build)."""
    defend, das = read_safe_os(Path(data))
    monitor = load_monitor(build)
    progress(f"safe-os: deciding {len(defend)} DEFEND commands and {len(das)} AGrail task commands with {build}")
    parts = {"defend_simulated": decide_all(monitor, defend, "safe-os", progress),
             "agrail_tasks": decide_all(monitor, das, "safe-os", progress)}
    summary: dict[str, Any] = {"benchmark": "safe-os", "policy": monitor.policy.name, "build": str(build),
                               "data": str(data)}
    for name, cases in parts.items():
        summary[name] = score(name, cases)
    every = parts["defend_simulated"] + parts["agrail_tasks"]
    summary["cases_file"], summary["misses_file"] = map(str, write_cases(every, Path(cases_dir), "safe-os"))
    summary["misses"] = sum(1 for c in every if c.miss)
    return summary


# ------------------------------------------------------------------------------------------------
# text

def _pct(v: Any) -> str:
    return "n/a" if v is None else f"{v:.2f}%"


def _line(name: str, m: dict[str, Any]) -> str:
    ea = f"EA {_pct(m['EA'])} (n={m['EA_n']})" if m.get("EA_n") else "EA n/a (no gold rule ids)"
    return (f"{name}: n={m['n']}  LPA {_pct(m['LPA'])}  LPP {_pct(m['LPP'])}  LPR {_pct(m['LPR'])}  {ea}\n"
            f"  confusion: tp {m['tp']} fp {m['fp']} fn {m['fn']} tn {m['tn']}; fail-closed denials "
            f"{m['fail_closed']}; denials a human's approval would lift {m['approvable']}")


def _categories(m: dict[str, Any]) -> Iterable[str]:
    for cat, c in m.get("by_category", {}).items():
        yield (f"  {cat:<20} n={c['n']:<4} LPA {_pct(c['LPA']):>8}  LPP {_pct(c['LPP']):>8}  LPR {_pct(c['LPR']):>8}  "
               f"fail-closed {c['fail_closed']}")


def render(summary: dict[str, Any]) -> str:
    if summary.get("benchmark") == "safe-os":
        lines = [f"safe-os with {summary['policy']} ({summary['build']})"]
        for name in ("defend_simulated", "agrail_tasks"):
            lines.append(_line(name, summary[name]))
            lines.extend(_categories(summary[name]))
    else:
        latency = summary["latency_us"]
        lines = [_line(f"shell with {summary['policy']}", summary), *_categories(summary),
                 f"  decision latency median {latency['median']} us, p99 {latency['p99']} us"]
    lines.append(f"  every case: {summary['cases_file']}; the {summary['misses']} misses: {summary['misses_file']}")
    return "\n".join(lines)
