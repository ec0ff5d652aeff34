"""The two shipped command tables (shell_agent's and os_agent's) name the same programs: an option that one table
says reads, writes or runs a file must be listed in the other's entry for the program too, where that entry
ignores the options it does not list. Otherwise a fix made in one table leaves the hole open in the other, as
iconv -o, dmesg -F and gh's uploads were in os_agent's until 2026-11-29."""
from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

SPECS = Path(__file__).resolve().parents[2] / "specs"

# (the table that lacks the options, program): why the difference is not a hole
KNOWN = {
    ("os_agent", "at"): "os_agent: at is a service change, denied whatever its options",
    ("os_agent", "batch"): "os_agent: batch is a service change, denied whatever its options",
    ("os_agent", "mount"): "os_agent: mount is a service change, denied whatever its options",
    ("os_agent", "basename"): "basename and dirname read no file; os_agent lists them among the name printers",
    ("os_agent", "dirname"): "basename and dirname read no file; os_agent lists them among the name printers",
    ("os_agent", "git init"): "os_agent: git init writes the working folder whole (the vcs group)",
    ("shell_agent", "bw"): "shell_agent: secrets managers are unknown, their text scanned for protected names",
    ("shell_agent", "op"): "shell_agent: secrets managers are unknown, their text scanned for protected names",
    ("shell_agent", "pass"): "shell_agent: secrets managers are unknown, their text scanned for protected names",
    ("shell_agent", "security"): "shell_agent: secrets managers are unknown, their text scanned for protected names",
    ("shell_agent", "vault"): "shell_agent: secrets managers are unknown, their text scanned for protected names",
    ("shell_agent", "deno"): "shell_agent: deno's options are read per subcommand (run, test...)",
    ("shell_agent", "git am"): "os_agent's vcs group lists options of other git commands (-F, -o) that am lacks",
    ("shell_agent", "git apply"): "os_agent's vcs group lists options of other git commands (-F, -o) that apply lacks",
    ("shell_agent", "git bisect"): "os_agent's vcs group lists options of other git commands (-F, -o) that bisect lacks",
    ("shell_agent", "git init"): "os_agent's vcs group lists options of other git commands (-F, -o) that init lacks",
    ("shell_agent", "git mv"): "os_agent's vcs group lists options of other git commands (-F, -o) that mv lacks",
    ("shell_agent", "git archive"): "os_agent's vcs group lists options of other git commands (-F, --template) that "
                                    "archive lacks",
    ("os_agent", "git archive"): "os_agent's vcs group ignores archive's --add-file (shell_agent: a read of it)",
    ("shell_agent", "cargo init"): "os_agent's cargo install group holds init and new, which have no --root",
    ("shell_agent", "cargo new"): "os_agent's cargo install group holds init and new, which have no --root",
}


def entries(spec: str) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """Every program and subcommand path of a table -> (its entry, its options by single name)."""
    table = tomllib.loads((SPECS / spec / "commands.toml").read_text(encoding="utf-8"))["commands"]
    out: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}

    def walk(entry: dict[str, Any], names: list[str]) -> None:
        options = {name: v for key, v in entry.get("options", {}).items() for name in key.split("|")}
        out.update({name: (entry, options) for name in names})
        for key, sub in entry.get("subcommands", {}).items():
            if isinstance(sub, dict):
                walk(sub, [f"{n} {s}" for n in names for s in key.split("|")])

    for key, entry in table.items():
        walk(entry, key.split("|"))
    return out


def lacking(have: dict[str, Any], other: dict[str, Any], other_entry: dict[str, Any]) -> list[str]:
    if other_entry.get("other_options") != "ignore":
        return []
    return sorted(o for o, v in have.items()
                  if isinstance(v, dict) and v.get("value", "none") != "none" and o not in other)


def test_an_option_one_table_reads_writes_or_runs_is_listed_in_the_other() -> None:
    shell, os_agent = entries("shell_agent"), entries("os_agent")
    holes = {}
    for name in sorted(set(shell) & set(os_agent)):
        (se, so), (oe, oo) = shell[name], os_agent[name]
        for side, missing in (("os_agent", lacking(so, oo, oe)), ("shell_agent", lacking(oo, so, se))):
            if missing and (side, name) not in KNOWN:
                holes[(side, name)] = missing
    assert not holes, f"options one table judges and the other ignores (list them, or say why in KNOWN): {holes}"


def test_every_known_difference_is_still_a_difference() -> None:
    shell, os_agent = entries("shell_agent"), entries("os_agent")
    for side, name in KNOWN:
        (se, so), (oe, oo) = shell[name], os_agent[name]
        missing = lacking(so, oo, oe) if side == "os_agent" else lacking(oo, so, se)
        assert missing, f"{(side, name)} no longer differs: remove it from KNOWN"
