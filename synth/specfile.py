"""Load a spec file (TOML): check every section and report errors at file:line:col with a fix."""
from __future__ import annotations

import difflib
import hashlib
import json
import re
import unicodedata
import tomllib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Mapping

from veriguard.contracts.ast import Decl, literals, map_positions
from veriguard.contracts.check import Contract, check_contract, resolve_type
from veriguard.contracts.errors import ContractError, Pos, SpecError
from veriguard.contracts.names import name_problem
from veriguard.contracts.regular_file import FileRefused, read_regular_file
from veriguard.contracts.parse import parse_contract, parse_signature, parse_type
from veriguard.contracts.runtime_support import ArgumentError, flatten_arguments
from veriguard.contracts.schema import argument_schema
from veriguard.contracts.shown import visible
from veriguard.contracts.signature import Argument, Signature, Table
from veriguard.contracts.spec import Example, Spec
from veriguard.contracts.types import BoolT, EnumT, IntT, RecordT, TupleT, Type, is_scalar
from veriguard.contracts.build_format import MODE_NAMES, STRATEGY_NAMES, referenced_files
from veriguard.providers.extraction import EntryProblem, llm_entry_problem
from veriguard.synth.tables import (COMPARED_FIX, SHOWN_FIX, compared_otherwise, compared_problem, load_table,
                                    shown_otherwise)
from veriguard.synth.tomlpos import basic_string_escapes, scan_keys, string_offsets, too_deep

TOP_KEYS = ("name", "request", "agent", "types", "arguments", "tables", "contract", "examples",
            "extraction", "enforcement", "clarifications", "verify")
CONTRACT_KEYS = ("rules", "properties")
EXAMPLE_KEYS = ("name", "args", "allowed", "violations", "denied", "note")
TABLE_KEYS = ("file", "path", "signature", "default", "doc", "header")
VERIFY_KEYS: dict[str, tuple[type, float, float]] = {  # type, least, greatest
    "nagini_timeout": (int, 1, 3600), "hypothesis_examples": (int, 0, 100_000), "mutation_threshold": (float, 0, 1),
    "mutants_per_nagini": (int, 0, 1000), "z3_bound": (int, 1, 8)}
MAX_TOML_NESTING = 32
# a spec's own file (its tables, banks and command lists are files of their own, up to MAX_BYTES): the largest in the
# repository is 10 KB, and reading one of 10 MB took synth 15 s (each TOML string is scanned for its place)
MAX_SPEC_BYTES = 2**20
# rules, assumptions and properties together: 256 rules took z3's contract checks 17 s here; 1,500 ended, after
# minutes of z3, in a RecursionError while the policy was generated (synth exit 70 for an over-large spec)
MAX_DECLARATIONS = 256
ENFORCEMENT_KEYS = ("strategy", "mode", "halt_after", "fail_closed")
PATH_FIX = "put the file in the spec's folder (or a folder inside it) and give its path relative to the spec"


def _reading(text: str) -> str:
    """`text` as a person reads it: NFKC (composed and decomposed accents, full-width and compatibility forms alike),
    without invisible characters (contracts.shown.visible, the classifier's reading: format characters such as
    zero-width spaces and direction marks, and the default-ignorable ones that are not, such as variation selectors
    and Hangul fillers: `admin` and `admin` + U+FE0F were two enum values that read the same)."""
    return visible(unicodedata.normalize("NFKC", text))


def _alike(values: list[str]) -> tuple[str, str] | None:
    """The first two of `values` that differ but read the same (_reading), or None."""
    seen: dict[str, str] = {}
    for v in values:
        first = seen.setdefault(_reading(v), v)
        if first != v:
            return first, v
    return None


@dataclass(frozen=True)
class VerifySettings:
    """[verify]: how hard the gates work."""

    nagini_timeout: int = 120
    hypothesis_examples: int = 300
    mutation_threshold: float = 0.8
    mutants_per_nagini: int = 3
    z3_bound: int = 3


@dataclass(frozen=True)
class SpecFile(Spec):
    """A spec file as the product reads it: the contract layer's Spec, plus what synth, freeze and the monitor
    do with it ([extraction], [enforcement], [verify]), which the contract layer never reads."""

    extraction: dict[str, Any] = field(default_factory=dict)
    extraction_files: tuple[tuple[str, str], ...] = ()  # (path relative to the spec, sha256) of each file it names
    enforcement: dict[str, Any] = field(default_factory=dict)
    settings: VerifySettings = VerifySettings()


MAX_ENUM_VALUE = 256   # characters in one enum value (the shipped specs' longest: 22)


def file_in_folder(folder: Path, rel: object) -> Path:
    """`folder/rel` when it stays inside `folder` once symbolic links are resolved; ValueError says why not."""
    if not isinstance(rel, str) or not rel.strip():
        raise ValueError("is not a file path")
    if "\0" in rel or "\\" in rel:
        raise ValueError("contains a NUL character or a backslash (use / between folders)")
    if PurePosixPath(rel).is_absolute() or PureWindowsPath(rel).drive:
        raise ValueError("is an absolute path")
    if ".." in PurePosixPath(rel).parts:
        raise ValueError("climbs out of the spec's folder with `..`")
    if PurePosixPath(rel).as_posix() != rel:  # a build certifies each file under one name: `./t.json` was a second
        raise ValueError(f"is not written as a plain relative path: write {PurePosixPath(rel).as_posix()!r}")
    try:
        base = folder.resolve()
        target = (base / rel).resolve()
    except (OSError, RuntimeError) as e:  # a symbolic-link loop
        raise ValueError(f"cannot be resolved ({e})") from None
    if not target.is_relative_to(base):
        raise ValueError("leads out of the spec's folder through a symbolic link")
    return folder / rel


def _merged(rel: str) -> str:
    """`rel` as a case-insensitive, normalising filesystem (APFS, HFS+, NTFS) compares names."""
    return unicodedata.normalize("NFD", rel).casefold()


class _Loader:
    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.file = str(path)
        self.text = text
        self.positions, self.values, self.ambiguous = scan_keys(text)
        self.spellings = {_merged(path.name): path.name}   # the spec's files, as a macOS filesystem names them

    def pos(self, *key: object) -> Pos:
        while key:
            if key in self.positions:
                return self.positions[key]
            key = key[:-1]
        return Pos(1, 1)

    def fail(self, code: str, message: str, key: tuple[object, ...], fix: str = "",
             pos: Pos | None = None) -> SpecError:
        return SpecError(code, message, file=self.file, pos=pos or self.pos(*key), fix=fix)

    def inline_pos(self, key: tuple[object, ...], needle: str) -> Pos:
        """Where `needle` sits on the line of `key` (inline tables have no key positions of their own)."""
        pos = self.pos(*key)
        lines = self.text.split("\n")
        line = lines[pos.line - 1] if 0 < pos.line <= len(lines) else ""
        col = line.find(needle)
        return Pos(pos.line, col + 1) if col >= 0 else pos

    def found_after(self, key: tuple[object, ...], needle: str) -> Pos:
        """Where `needle` is first written at or after `key`'s line (a multi-line rule's word), else the key."""
        pos = self.pos(*key)
        start = sum(len(line) + 1 for line in self.text.split("\n")[:max(pos.line - 1, 0)])
        at = self.text.find(needle, start)
        return pos if at < 0 else _pos_at(self.text, at)

    def name(self, kind: str, name: object, key: tuple[object, ...], what: str, pos: Pos | None = None) -> None:
        problem = name_problem(kind, name)
        if problem is not None:
            raise self.fail("spec.name", f"{what} {name!r} {problem[0]}", key, problem[1], pos)

    def spec_file(self, rel: object, key: tuple[object, ...], what: str) -> Path:
        try:
            if rel == self.path.name:
                raise ValueError("is the spec itself")
            file = file_in_folder(self.path.parent, rel)
            other = self.spellings.setdefault(_merged(str(rel)), str(rel))
            if other != rel:   # on macOS one file: the build would certify two, and no copy there would load
                raise ValueError(f"and {other!r} are one file where names are compared without case or Unicode "
                                 "normalisation (macOS, Windows): give them names that differ otherwise")
            return file
        except ValueError as e:
            raise self.fail("spec.path", f"{what} {rel!r} {e}", key, PATH_FIX,
                            self.inline_pos(key, str(rel)) if isinstance(rel, str) else None) from None

    def shown_as_written(self) -> None:
        """SpecError for a character that makes the spec display otherwise than TOML reads it, anywhere in the file
        (comments too): a bidirectional control reorders what follows it on its line (`rule adult "Adults\u202e":
        age >= 18` shows `81 =< ega`), a line or paragraph separator or NEL shows a line break inside a comment (a rule
        a person reads there is not one), an 8-bit CSI rewrites the terminal line it is printed on."""
        m = _DISPLAY_CONTROL.search(self.text)
        if m is not None:
            raise SpecError("spec.hidden_text", f"the spec holds {_char_name(m.group())}, which makes the text around "
                            "it display otherwise than it is read", file=self.file, pos=_pos_at(self.text, m.start()),
                            fix=_SHOWN_FIX)

    def shown_as_parsed(self, strings: list[tuple[tuple[object, ...], str]]) -> None:
        """SpecError for such a character, or a control character (`\b`, an ANSI escape), that a TOML escape put in a
        key or a string value (`strings`: _strings of the parsed spec)."""
        for key, value in strings:
            m = _DISPLAY_CONTROL.search(value) or _CONTROL.search(value)
            if m is not None:
                raise self.fail("spec.hidden_text", f"[{'.'.join(map(str, key))}] holds {_char_name(m.group())} "
                                "(written as a TOML escape), which makes it display otherwise than it reads", key,
                                _SHOWN_FIX)

    def shown_as_compared(self, strings: list[tuple[tuple[object, ...], str]]) -> None:
        """SpecError for a key or string value with letters that only look like the ones a person reads
        (tables.shown_otherwise), once every name and value is otherwise checked (a name has its own error)."""
        for key, value in strings:
            shown = shown_otherwise(value)
            if shown is not None:
                raise self.fail("spec.hidden_text", f"[{'.'.join(map(str, key))}]: {shown[0]}", key, _SHOWN_FIX,
                                self.found_after(key, shown[1]))

    def compared_literals(self, d: Decl) -> None:
        """SpecError for a string the rule compares with that shows what it does not equal (tables.compared_otherwise),
        read alone: another rule's words in another script do not vouch for it."""
        for lit in literals(d.body):
            if not isinstance(lit.value, str):
                continue
            problem = compared_problem(lit.value)
            if problem is not None:   # this site's fix has been COMPARED_FIX for either kind (kept as it is)
                raise SpecError("spec.hidden_text", f"{d.kind} {d.id}: the string {lit.value!r}: {problem[0]}",
                                file=self.file, pos=lit.pos, fix=COMPARED_FIX)

    def unknown_keys(self, table: dict[str, Any], allowed: tuple[str, ...], where: tuple[object, ...]) -> None:
        for k in table:
            if k not in allowed:
                close = difflib.get_close_matches(k, allowed, n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                if where and (k in TOP_KEYS or k in CONTRACT_KEYS):
                    hint = (f"in TOML every key after a [table] header belongs to that table; move {k!r} "
                            f"to its own section (e.g. [contract]) or above the first header. ")
                raise self.fail("spec.unknown_key", f"unknown key {k!r}" + (f" in [{'.'.join(map(str, where))}]"
                                if where else ""), (*where, k), hint + "allowed: " + ", ".join(allowed))

    def typed(self, value: Any, kind: type, key: tuple[object, ...], what: str) -> Any:
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise self.fail("spec.type", f"{what} must be a {kind.__name__}, got {type(value).__name__} {value!r}", key)
        return value

    def relocate(self, err: ContractError, key: tuple[object, ...]) -> ContractError:
        pos = self.values.get(key) or self.pos(*key)
        line_offset, col_offset = string_offsets(self.text, pos)
        located = err.located(self.file, line_offset, col_offset)
        assert isinstance(located, ContractError)
        return located

    # --- sections -----------------------------------------------------------------------------
    def types(self, raw: Any) -> dict[str, Type]:
        named: dict[str, Type] = {}
        for name, body in self.typed(raw, dict, ("types",), "[types]").items():
            key = ("types", name)
            self.name("type", name, key, "type name")
            if not isinstance(body, dict) or len(body) != 1 or next(iter(body)) not in ("enum", "record"):
                raise self.fail("spec.type_decl", f"type {name} must be `{{ enum = [...] }}` or `{{ record = {{...}} }}`",
                                key, f'e.g. {name} = {{ enum = ["a", "b"] }}')
            if "enum" in body:
                values = body["enum"]
                if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values) \
                        or len(set(values)) != len(values):
                    raise self.fail("spec.enum", f"enum {name} needs a non-empty list of distinct strings", key)
                alike = _alike(values)
                if alike:
                    raise self.fail("spec.enum", f"enum {name} has the values {ascii(alike[0])} and {ascii(alike[1])}, which "
                                    "read the same (they differ only in Unicode normal form, width or invisible "
                                    "characters): a request spelt one way would not match a rule written the other",
                                    key, "keep one spelling of each value (NFC, without invisible characters)")
                for v in values:
                    odd = compared_otherwise(v)
                    if odd is not None:
                        raise self.fail("spec.hidden_text", f"enum {name}: the value {v!r}: {odd}", key, COMPARED_FIX,
                                        self.found_after(key, v))
                long = next((v for v in values if len(v) > MAX_ENUM_VALUE), None)
                if long is not None:  # compile and z3 time grow with it: 20,000 characters took 64 s before any proof
                    raise self.fail("spec.enum", f"enum {name} has a value of {len(long):,} characters "
                                    f"({long[:40]!r}...); at most {MAX_ENUM_VALUE} are supported", key,
                                    "use a short name for the value (an enum names cases, it does not hold data)")
                named[name] = EnumT(name, tuple(values))
            else:
                fields = []
                for fname, ftext in self.typed(body["record"], dict, key, f"record {name}").items():
                    self.name("field", fname, key, f"field of record {name}:", self.inline_pos(key, fname))
                    ft = self.type_text(ftext, named, key, f" (field {name}.{fname})")
                    if not is_scalar(ft):
                        raise self.fail("spec.record", f"field {name}.{fname} is {ft}; record fields are scalars", key)
                    fields.append((fname, ft))
                named[name] = RecordT(name, tuple(fields))  # type: ignore[arg-type]
        return named

    def type_text(self, text: Any, named: dict[str, Type], key: tuple[object, ...], where: str = "") -> Type:
        text = self.typed(text, str, key, "a type")
        try:
            return resolve_type(parse_type(text), named, where)
        except ContractError as e:
            raise self.relocate(e, key) from None

    def arguments(self, raw: Any, named: dict[str, Type]) -> tuple[Argument, ...]:
        out = []
        flat: dict[str, str] = {}
        for name, body in self.typed(raw, dict, ("arguments",), "[arguments]").items():
            key = ("arguments", name)
            self.name("argument", name, key, "argument name")
            doc = ""
            if isinstance(body, dict):
                self.unknown_keys(body, ("type", "doc"), key)
                doc = str(body.get("doc", ""))
                body = body.get("type")
            arg = Argument(name, self.type_text(body, named, key), doc, self.pos(*key))
            if isinstance(arg.type, TupleT):  # the checker, z3 and Nagini read only a list's elements as tuples
                raise self.fail("spec.type", f"argument {name!r} is a tuple", key,
                                "a tuple may only be a list's element: use list[(...)] or a record")
            for param, _ in Signature((), (arg,), ()).flat_params():  # a record gives one parameter per field
                self.name("argument", param, key, f"argument {name!r} gives the policy the parameter")
                if param in flat:
                    raise self.fail("spec.name", f"argument {name!r} gives the policy a parameter {param!r}, "
                                    f"which argument {flat[param]!r} gives too", key, "rename one of them")
                flat[param] = name
            out.append(arg)
        if not out:
            raise self.fail("spec.arguments", "[arguments] is empty", ("arguments",), "declare the policy's inputs")
        return tuple(out)

    def tables(self, raw: Any, named: dict[str, Type]) -> tuple[Table, ...]:
        out = []
        for name, body in self.typed(raw, dict, ("tables",), "[tables]").items():
            key = ("tables", name)
            self.name("table", name, key, "table name")
            body = self.typed(body, dict, key, f"[tables.{name}]")
            self.unknown_keys(body, TABLE_KEYS, key)
            for required in ("file", "signature"):
                if required not in body:
                    raise self.fail("spec.table", f"table {name} needs `{required}`", key,
                                    'e.g. file = "perms.json", signature = "(Role, str) -> bool"')
            try:
                raw_params, raw_result = parse_signature(self.typed(body["signature"], str, (*key, "signature"), "signature"))
                params = tuple(resolve_type(p, named) for p in raw_params)
                result = resolve_type(raw_result, named)
            except ContractError as e:
                raise self.relocate(e, (*key, "signature")) from None
            if not all(is_scalar(t) for t in (*params, result)):
                raise self.fail("spec.table", f"table {name}: parameters and result must be scalars", (*key, "signature"))
            if "default" in body:
                self.table_default(name, body["default"], result, (*key, "default"))
            file = self.spec_file(self.typed(body["file"], str, (*key, "file"), "file"), (*key, "file"),
                                  f"table {name}: file")
            header, path = self.table_form(name, body, file, key)
            try:
                out.append(load_table(name, file, params, result, path=path,  # type: ignore[arg-type]
                                      default=body.get("default"), doc=str(body.get("doc", "")), pos=self.pos(*key),
                                      header=header))
            except SpecError as e:
                if e.file:
                    raise
                raise e.located(self.file) from None
        return tuple(out)

    def table_form(self, name: str, body: dict[str, Any], file: Path, key: tuple[object, ...]) -> tuple[bool, str]:
        """(whether a CSV table's first line is its header, the dotted key of a JSON table). `header` is a CSV's only
        and `path` a JSON's only: either on the other kind of file was ignored, so the table meant something else than
        the spec shows."""
        csv_file = file.suffix.lower() == ".csv"
        for option, kind, example in (("header", bool, "header = false"), ("path", str, 'path = "tables.roles"')):
            if option not in body:
                continue
            where = (*key, option)
            pos = self.positions.get(where) or self.inline_pos(key, option)
            value = body[option]
            if type(value) is not kind:
                raise self.fail("spec.table", f"table {name}: `{option}` is {_toml_value(value)} (a TOML "
                                f"{_toml_kind(value)}); it must be a TOML {'boolean' if kind is bool else 'string'}",
                                where, f"write e.g. {example}", pos)
            if (option == "header") != csv_file:
                which = "CSV" if option == "header" else "JSON"
                raise self.fail("spec.table", f"table {name}: `{option}` applies to a {which} table only, and "
                                f"{file.name} is {'CSV' if csv_file else 'JSON'}", where,
                                f"remove `{option}`" + (" (a JSON table has no header line)" if option == "header"
                                                        else " (a CSV table is the whole file)"), pos)
        return body.get("header", True), body.get("path", "")

    def table_default(self, name: str, default: Any, result: Type, key: tuple[object, ...]) -> None:
        """A table's `default` must be a TOML value of the table's result type (a bool table's default went into
        the generated code as written: `default = "false"` was a truthy string to the frozen module, a sort
        mismatch to z3)."""
        kind = bool if isinstance(result, BoolT) else int if isinstance(result, IntT) else str
        if type(default) is not kind:
            example = {bool: "default = false", int: "default = 0", str: 'default = "none"'}[kind]
            raise self.fail("spec.table_default", f"table {name} returns {result}, but its default is "
                            f"{_toml_value(default)} (a TOML {_toml_kind(default)})", key,
                            f"write the default as a TOML {kind.__name__} of that type, e.g. {example}")

    def no_escapes(self, key: tuple[object, ...], *, given: bool) -> None:
        """The contract's text is what the spec shows: a TOML escape in it (u0023 is `#`, u000a a line break) made
        the rules mean something else than the file reads (`x > 0 \\u0023 and x < 100` compiled to `x > 0`), and so
        did a backslash ending a comment (TOML joins the next line to it: a whole rule the file shows on that line was
        part of the comment; a continuation elsewhere joins what reads as joined, and stays). Text that is `given` but
        cannot be found in the file, or is found at two places, is refused the same way: its escapes cannot be looked
        for (before, `contract = { rules = "..." }` was never looked at)."""
        if given and (key not in self.values or key in self.ambiguous):
            raise self.fail("spec.contract_escape", f"cannot tell where [{'.'.join(map(str, key))}] is written in the "
                            "file, so whether it uses a TOML escape cannot be checked", key,
                            f"write it under a [{key[0]}] header as {key[-1]} = \'\'\'...\'\'\' (a literal string)")
        at, hidden = basic_string_escapes(self.text, self.values[key]) if key in self.values else (None, None)
        if at is not None:
            shown = self.text.split("\n")[at.line - 1][at.col - 1:at.col + 5]
            raise self.fail("spec.contract_escape", f"[{'.'.join(map(str, key))}] uses a TOML escape ({shown!r}...): "
                            "the contract would read otherwise than the file shows", key,
                            "write the character itself, or put the text in a literal string '''...''' (no escapes)", at)
        if hidden is not None:
            raise self.fail("spec.contract_escape", f"[{'.'.join(map(str, key))}] ends a comment with a backslash: "
                            "TOML joins the next line to it, so what the file shows on that line is part of the "
                            "comment, not of the contract", key, "remove the backslash after the comment, or put the "
                            "text in a literal string '''...''' (no escapes, no line continuations)", hidden)

    def contract(self, sig: Signature, rules: str, properties: str) -> Contract:
        decls: list[Decl] = []
        for section, text in (("rules", rules), ("properties", properties)):
            self.no_escapes(("contract", section), given=bool(text))
            try:
                parsed = parse_contract(text)
            except ContractError as e:
                raise self.relocate(e, ("contract", section)) from None
            key = ("contract", section)
            line_offset, col_offset = string_offsets(self.text, self.values[key]) if key in self.values else (0, 0)
            hidden = _hidden_on_a_line(text, parsed)
            if hidden is not None:
                raise ContractError("spec.hidden_text", hidden[0], file=self.file,
                                    pos=hidden[1].shifted(line_offset, col_offset), fix=_OWN_LINE_FIX)
            for d in parsed:
                d = map_positions(d, lambda p: p.shifted(line_offset, col_offset) if p.line else p)  # type: ignore[assignment]
                if (section == "rules") == (d.kind == "property"):
                    raise ContractError("spec.misplaced", f"{d.kind} {d.id!r} belongs in "
                                        f"{'properties' if d.kind == 'property' else 'rules'}", file=self.file,
                                        pos=d.pos, fix="rules and assumptions go in `rules`, properties in `properties`")
                self.compared_literals(d)
                decls.append(d)
        if len(decls) > MAX_DECLARATIONS:
            raise ContractError("spec.too_large", f"the contract declares {len(decls):,} rules, assumptions and "
                                f"properties; at most {MAX_DECLARATIONS} are supported", file=self.file,
                                pos=decls[MAX_DECLARATIONS].pos, fix="merge rules that say the same thing, or move "
                                "data into a table (a table holds any number of rows)")
        try:
            contract = check_contract(sig, decls, text=rules + "\n" + properties)
        except ContractError as e:
            located = e.located(self.file)
            assert isinstance(located, ContractError)
            raise located from None
        if not contract.rules:
            raise self.fail("spec.no_rules", "[contract] rules declares no rule", ("contract", "rules"),
                            'add e.g. rule adult "Users must be adults": user.age >= 18')
        return contract

    def examples(self, raw: Any, sig: Signature, contract: Contract | None) -> tuple[Example, ...]:
        out = []
        schema = argument_schema(sig)
        rule_ids = {d.id for d in contract.rules} if contract else set()
        for i, ex in enumerate(self.typed(raw, list, ("examples",), "examples")):
            key = ("examples", i)
            ex = self.typed(ex, dict, key, f"example {i + 1}")
            self.unknown_keys(ex, EXAMPLE_KEYS, key)
            name = str(ex.get("name", f"example {i + 1}"))
            if "args" not in ex or "allowed" not in ex:
                raise self.fail("spec.example", f"example {name!r} needs `args` and `allowed`", key)
            try:
                flatten_arguments(schema, ex["args"])
            except ArgumentError as e:
                raise self.fail("spec.example_args", f"example {name!r}: {e}", (*key, "args"),
                                "give every argument, with the declared type") from None
            allowed = self.typed(ex["allowed"], bool, (*key, "allowed"), "allowed")
            violations = ex.get("violations")
            if violations is not None:
                for v in self.typed(violations, list, (*key, "violations"), "violations"):
                    if not isinstance(v, str) or v not in rule_ids:
                        raise self.fail("spec.example", f"example {name!r}: {v!r} is not a rule id", (*key, "violations"),
                                        "rule ids: " + ", ".join(sorted(rule_ids)))
                violations = tuple(violations)
                self.once(violations, (*key, "violations"), f"example {name!r}: the rule")
            denied = ex.get("denied")
            if denied is not None:
                denied = tuple(tuple(d) if isinstance(d, list) else d
                               for d in self.typed(denied, list, (*key, "denied"), "denied"))
                if not all(_scalar(d) or (isinstance(d, tuple) and all(map(_scalar, d))) for d in denied):
                    raise self.fail("spec.example", f"example {name!r}: a denied item is not a value or a list of "
                                    "values", (*key, "denied"), 'e.g. denied = [["diagnosis", "diagnosisname"]]')
                self.once(denied, (*key, "denied"), f"example {name!r}: the denied item")
            out.append(Example(name, ex["args"], allowed, violations, denied, self.pos(*key)))
        return tuple(out)

    def once(self, items: tuple[Any, ...], key: tuple[object, ...], what: str) -> None:
        """spec.example at the second mention of an item of an example's `violations` or `denied`: both are compared
        with the policy's decision as sets, so a rule or item listed twice read as a count the test never checked."""
        for i, item in enumerate(items):
            if item in items[:i]:
                shown = json.dumps(list(item) if isinstance(item, tuple) else item, ensure_ascii=False)[:80]
                raise self.fail("spec.example", f"{what} {shown} is listed twice", (*key, i),
                                f"list each {'item' if key[-1] == 'denied' else 'rule'} once (the comparison ignores "
                                "order and repetition)")

    def settings(self, raw: Any) -> VerifySettings:
        raw = self.typed(raw, dict, ("verify",), "[verify]")
        self.unknown_keys(raw, tuple(VERIFY_KEYS), ("verify",))
        values = {}
        for k, v in raw.items():
            kind, least, greatest = VERIFY_KEYS[k]
            values[k] = self.typed(v, kind, ("verify", k), k)
            if not least <= values[k] <= greatest:
                raise self.fail("spec.verify", f"{k} = {v!r} is out of range", ("verify", k),
                                f"give a value from {least} to {greatest}")
        return VerifySettings(**values)

    def enforcement(self, raw: Any) -> dict[str, Any]:
        """The [enforcement] section: how the monitor and the guards carry out a denial."""
        table = self.typed(raw, dict, ("enforcement",), "[enforcement]")
        self.unknown_keys(table, ENFORCEMENT_KEYS, ("enforcement",))
        for key, names in (("strategy", STRATEGY_NAMES), ("mode", MODE_NAMES)):
            value = table.get(key, names[1] if key == "strategy" else names[0])
            if not isinstance(value, str) or value not in names:
                close = difflib.get_close_matches(value, names, n=1) if isinstance(value, str) else []
                raise self.fail("spec.enforcement", f"[enforcement] {key} = {_toml_value(value)} is not a known {key}",
                                ("enforcement", key), (f"did you mean {close[0]!r}? " if close else "")
                                + "one of: " + ", ".join(f'"{n}"' for n in names))
        if "halt_after" in table:
            n = table["halt_after"]
            if type(n) is not int or n < 1:
                raise self.fail("spec.enforcement", f"[enforcement] halt_after = {_toml_value(n)} must be a whole "
                                "number of denials in a row, 1 or more", ("enforcement", "halt_after"),
                                "e.g. halt_after = 2: re-plan after the first denial, halt on the second")
            if table.get("strategy") != "replan_halt":
                raise self.fail("spec.enforcement", "[enforcement] halt_after counts denials for strategy "
                                f'"replan_halt" only; the strategy here is "{table.get("strategy", "block")}"',
                                ("enforcement", "halt_after"), 'set strategy = "replan_halt", or remove halt_after')
        if "fail_closed" in table and table["fail_closed"] is not True:
            raise self.fail("spec.enforcement", f"[enforcement] fail_closed = {_toml_value(table['fail_closed'])}: "
                            "the monitor always fails closed (an error or a doubt denies); it cannot be turned off",
                            ("enforcement", "fail_closed"), "remove the key, or write fail_closed = true")
        return table

    def extraction_files(self, extraction: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
        """(path, sha256) of every file [extraction] names; each must be a file inside the spec's folder."""
        out = []
        for rel in referenced_files(extraction):
            arg = next(a for a, cfg in extraction.items() if isinstance(cfg, Mapping) and rel in map(str, cfg.values()))
            what = f"[extraction] {arg}: file"
            file = self.spec_file(rel, ("extraction", arg), what)
            try:
                out.append((rel, hashlib.sha256(read_regular_file(file)).hexdigest()))
            except FileRefused as e:
                raise self.fail("spec.file", f"{what} {rel!r}: {e.why}", ("extraction", arg),
                                f"{e.fix}; {PATH_FIX}", self.inline_pos(("extraction", arg), rel)) from None
        return tuple(out)


# bidirectional controls (Trojan Source, CVE-2021-42574), line and paragraph separators and the C1 controls (NEL, the
# 8-bit CSI a terminal reads as ESC [), which TOML lets through raw, in comments too: never in a spec
_DISPLAY_CONTROL = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\x80-\x9f]")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")   # in a value; a tab and a line break read as they show
_SHOWN_FIX = SHOWN_FIX
MAX_BLANK_RUN = 40   # columns of spaces (a tab counts 8) between two parts of a rule's line: wider hides the second
_BLANK_RUN = re.compile(r"(?<=\S)[ \t]+(?=[^\s#])")
_OWN_LINE_FIX = "start each rule, assumption and property on its own line, and keep a line's parts within sight"
MAX_BODY_COLUMN = 160   # a body that begins further right on its declaration's line is off a reader's screen
_HEADER = re.compile(r'[a-z]+\s+\w+\s+"(?:[^"\\\n]|\\.)*"\s*:[ \t]*(?=[^\s#])')


def _hidden_on_a_line(text: str, decls: list[Decl]) -> tuple[str, Pos] | None:
    """Why `text` (a contract) shows a reader less than it declares on a line, and where: a declaration that follows
    another's text on its line (`... amount < 1000 rule big: ...` reads as part of the rule before it), or a run of
    blanks wider than MAX_BLANK_RUN columns before more of a rule (`amount < 1000` + 300 spaces + `or amount > 0`
    shows the rule without its second half in an editor or a review's diff). A comment may be aligned that far."""
    lines = text.split("\n")
    for d in decls:
        line = lines[d.pos.line - 1] if 0 < d.pos.line <= len(lines) else ""
        if line[:d.pos.col - 1].strip():
            return (f"{d.kind} {d.id} begins after other text on its line ({line[:d.pos.col - 1].strip()[-40:]!r}): "
                    "a reader takes it for part of what comes before it", d.pos)
        header = _HEADER.match(line, d.pos.col - 1)
        width = 0 if header is None else len(line[:header.end()].expandtabs(8))
        if header is not None and width > MAX_BODY_COLUMN:
            return (f"the body of {d.kind} {d.id} begins at column {width + 1} of its "
                    f"line, after its message: a reader sees the message and not what the {d.kind} says; put the body "
                    "on the next line", Pos(d.pos.line, header.end() + 1, d.pos.line, header.end() + 1))
    for n, line in enumerate(lines, 1):
        for m in _BLANK_RUN.finditer(line):
            width = len(m.group().expandtabs(8))
            if width > MAX_BLANK_RUN:
                return (f"a run of {width} blank columns on this line hides what follows it "
                        f"({line[m.end():m.end() + 40]!r}) beyond the edge of a reader's window",
                        Pos(n, m.end() + 1, n, m.end() + 1))
    return None


def _char_name(ch: str) -> str:
    return f"U+{ord(ch):04X} ({unicodedata.name(ch, 'a control character').lower()})"


def _pos_at(text: str, at: int) -> Pos:
    """The line and column (from 1) of offset `at` in `text`."""
    return Pos(text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at))


def _strings(value: Any, key: tuple[object, ...]) -> list[tuple[tuple[object, ...], str]]:
    """Every key and string value in a TOML value, with the key path that leads to it."""
    if isinstance(value, str):
        return [(key, value)]
    if isinstance(value, dict):
        return [found for k, v in value.items() for found in [((*key, k), k), *_strings(v, (*key, k))]]
    if isinstance(value, list):
        return [found for i, v in enumerate(value) for found in _strings(v, (*key, i))]
    return []


def load_spec(path: str | Path) -> SpecFile:
    """Read and check a spec; raises SpecError (file:line:col, the value, the fix)."""
    path = Path(path)
    try:
        data = read_regular_file(path, MAX_SPEC_BYTES)
    except FileRefused as e:
        raise SpecError("spec.file", e.why, file=str(path), fix=f"{e.fix} (the spec; tables go in files of their own)") \
            from None
    text, raw = _parse_toml(data, str(path))
    ld = _Loader(path, text)
    ld.shown_as_written()
    ld.unknown_keys(raw, TOP_KEYS, ())
    request = raw.get("request")
    if not isinstance(request, str) or not request.strip():
        raise ld.fail("spec.request", "the spec needs a `request`: what the agent must never do, in words", ("request",),
                      'add request = """..."""')
    name = ld.typed(raw.get("name", path.stem), str, ("name",), "name")
    ld.name("spec", name, ("name",), "spec name")
    named = ld.types(raw.get("types", {}))
    strings = _strings(raw, ())   # every key and string, for shown_as_parsed now and shown_as_compared at the end
    ld.shown_as_parsed(strings)   # after the names a model's draft may try to smuggle (spec.name says more of those)
    contract_raw = ld.typed(raw.get("contract", {}), dict, ("contract",), "[contract]")
    ld.unknown_keys(contract_raw, CONTRACT_KEYS, ("contract",))
    formal = "rules" in contract_raw
    if formal and "arguments" not in raw:
        raise ld.fail("spec.arguments", "a spec with [contract] rules needs [arguments]", ("contract", "rules"))
    arguments = ld.arguments(raw["arguments"], named) if "arguments" in raw else ()
    tables = ld.tables(raw.get("tables", {}), named)
    sig = Signature(tuple(named.items()), arguments, tables)
    rules_text = ld.typed(contract_raw.get("rules", ""), str, ("contract", "rules"), "rules")
    properties_text = ld.typed(contract_raw.get("properties", ""), str, ("contract", "properties"), "properties")
    contract = ld.contract(sig, rules_text, properties_text) if formal else None
    examples = ld.examples(raw.get("examples", []), sig, contract) if arguments else ()
    if contract is not None and any(e.denied for e in examples) and contract.denied_element() is None:
        raise ld.fail("spec.example", "an example lists denied items but no rule denies items", ("examples",))
    files = tuple((Path(t.source).relative_to(path.parent).as_posix(), t.sha256) for t in tables)
    extraction = ld.typed(raw.get("extraction", {}), dict, ("extraction",), "[extraction]")
    check_extraction(ld, extraction, [a.name for a in arguments] if arguments else None)
    check_shell_tables(ld, extraction, path.parent)
    ld.typed(raw.get("clarifications", {}), dict, ("clarifications",), "[clarifications]")  # checked, read by nothing
    ld.shown_as_compared(strings)
    return SpecFile(name=name, path=str(path), sha256=hashlib.sha256(data).hexdigest(), request=request.strip(),
                    agent=ld.typed(raw.get("agent", {}), dict, ("agent",), "[agent]"), signature=sig,
                    contract=contract, rules_text=rules_text, properties_text=properties_text, examples=examples,
                    files=files, extraction=extraction, extraction_files=ld.extraction_files(extraction),
                    enforcement=ld.enforcement(raw.get("enforcement", {})), settings=ld.settings(raw.get("verify", {})))


EXTRACTOR_KEYS: dict[str, dict[str, str]] = {  # kind -> the keys its builder reads -> what each value must be
    "field": {"from": "text", "path": "text", "map": "table of text"},
    "context": {"from": "text", "fields": "table of text", "defaults": "table"},
    "tool_call": {"from": "text", "tool": "text", "fields": "table of text", "defaults": "table",
                  "ignore": "list of text"},
    "code": {"from": "text", "schema": "text", "language": "text", "source": "text"},
}
EXTRACTOR_REQUIRED = {"field": ("path",), "context": ("fields",), "tool_call": ("tool", "fields"),
                      "code": ("schema",), "classifier": ("text", "bank")}
EXTRACTOR_KINDS = ("field", "context", "tool_call", "code", "shell", "classifier", "llm")
EXTRACTOR_EXAMPLES = {
    "field": 'e.g. age = { from = "field", path = "user.age" }',
    "context": 'e.g. user = { from = "context", fields = { role = "session.role", mfa = "session.mfa" } }',
    "tool_call": 'e.g. payment = { from = "tool_call", tool = "send_payment", fields = { recipient = "recipient" } }',
    "code": 'e.g. access = { from = "code", schema = "eicu_ac/schema.json" }',
    "classifier": 'e.g. task = { from = "classifier", text = "confirmed_task", bank = "categories.toml" }',
}
VALUE_WORDS = {"text": "a string", "table": "a table", "table of text": 'a table of name = "string"',
               "list of text": "a list of strings"}


def check_extraction(ld: _Loader, extraction: Mapping[str, Any], arguments: list[str] | None = None) -> None:
    """Each [extraction] entry as the monitor will build it: a known kind, the keys it reads with values of the right
    type (field, context, tool_call, code; the classifier's text, bank and abstain), and an `llm` entry's keys,
    values, endpoint and key variable (providers.extraction.llm_entry_problem). A `shell` entry's keys are checked
    when its zone map is read (enforce.shell). With `arguments` (the policy's), every entry must name one of them."""
    for arg, cfg in extraction.items():
        key = ("extraction", arg)
        if arguments is not None and arg not in arguments:
            close = difflib.get_close_matches(arg, arguments, n=1)
            raise ld.fail("spec.extraction", f"[extraction] {arg}: the policy has no argument {arg!r} (an extractor "
                          "gives one argument of the policy: the monitor could never use this one)", key,
                          (f"did you mean {close[0]!r}? " if close else "") + "arguments: " + ", ".join(arguments))
        if not isinstance(cfg, Mapping) or cfg.get("from") not in EXTRACTOR_KINDS:
            got = cfg.get("from") if isinstance(cfg, Mapping) else cfg
            raise ld.fail("spec.extraction", f"[extraction] {arg}: `from` = {_toml_value(got)} is not an extractor",
                          key, "from = one of " + ", ".join(f'"{k}"' for k in EXTRACTOR_KINDS),
                          _entry_key_pos(ld, arg, "from") if isinstance(cfg, Mapping) else None)
        problem = _entry_problem(str(cfg["from"]), cfg)
        if problem is not None:
            raise ld.fail("spec.extraction", f"[extraction] {arg}: {problem.message}", key, problem.fix,
                          _entry_key_pos(ld, arg, problem.key))


def check_shell_tables(ld: _Loader, extraction: Mapping[str, Any], base: Path) -> None:
    """Each `shell` entry's command and zone tables read in full now, not at a monitor's first use of the entry in
    error (a `separate` regular expression that can backtrack without bound passed synth)."""
    from veriguard.enforce.shell_table import check_tables

    for arg, cfg in extraction.items():
        if isinstance(cfg, Mapping) and cfg.get("from") == "shell":
            problem = check_tables(cfg, base)
            if problem is not None:
                raise ld.fail("spec.extraction", f"[extraction] {arg}: {problem}", ("extraction", arg),
                              "fix the table the message names")


def _entry_problem(kind: str, cfg: Mapping[str, Any]) -> EntryProblem | None:
    """What is wrong with the keys and values of one [extraction] entry of `kind` (None when nothing is)."""
    if kind == "llm":
        return llm_entry_problem(cfg)
    example = EXTRACTOR_EXAMPLES.get(kind, "")
    for required in EXTRACTOR_REQUIRED.get(kind, ()):
        if required not in cfg:
            return EntryProblem("from", f"a `{kind}` extractor needs `{required}`", example)
    keys = EXTRACTOR_KEYS.get(kind)
    if keys is None:  # shell, classifier: their builders read more keys (and check them)
        keys = {"text": "text", "bank": "text"} if kind == "classifier" else {}
    elif set(cfg) - set(keys):
        unknown = sorted(set(cfg) - set(keys))
        return EntryProblem(unknown[0], f"unknown key(s) {unknown} for a `{kind}` extractor",
                            f"allowed: {', '.join(keys)}; {example}")
    for k, want in keys.items():
        if k in cfg and not _value_is(cfg[k], want):
            return EntryProblem(k, f"`{k}` must be {VALUE_WORDS[want]}, got {_toml_value(cfg[k])}", example)
    if kind == "classifier" and cfg.get("abstain", "deny") not in ("deny", "restrict"):
        return EntryProblem("abstain", f"abstain = {_toml_value(cfg['abstain'])} is not \"deny\" or \"restrict\"",
                            'abstain = "deny" (an unsure classifier denies) or "restrict" (its uncertain categories '
                            "are taken to apply)")
    return None


def _value_is(value: Any, want: str) -> bool:
    if want == "text":
        return type(value) is str
    if want == "table":
        return isinstance(value, dict)
    if want == "table of text":
        return isinstance(value, dict) and all(type(v) is str for v in value.values())
    return isinstance(value, list) and all(type(v) is str for v in value)


def _entry_key_pos(ld: _Loader, arg: str, key: str) -> Pos:
    """Where `key` of the [extraction] entry `arg` is written (a [extraction.arg] table, or an inline one)."""
    if ("extraction", arg, key) in ld.positions:
        return ld.positions[("extraction", arg, key)]
    return ld.inline_pos(("extraction", arg), key)


def _parse_toml(data: bytes, file: str) -> tuple[str, dict[str, Any]]:
    """The text and the TOML table of a spec; every failure is a SpecError with its place."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise SpecError("spec.encoding", f"the spec is not UTF-8 text (byte {data[e.start]:#04x})", file=file,
                        pos=Pos(line, col), fix="save the file as UTF-8") from None
    if text.startswith("\ufeff"):   # tomllib reads it as a statement: "Invalid statement" said nothing of why
        raise SpecError("spec.encoding", "the spec begins with a byte order mark (U+FEFF), which TOML does not allow",
                        file=file, pos=Pos(1, 1), fix="save the file as UTF-8 without a byte order mark (BOM)")
    deep = too_deep(text, MAX_TOML_NESTING)
    if deep is not None:
        raise SpecError("spec.too_deep", f"arrays or inline tables nest deeper than {MAX_TOML_NESTING} levels; "
                        "nesting deeper than that is not supported", file=file, pos=deep, fix="flatten the value")
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        pos = Pos(int(m.group(1)), int(m.group(2))) if m else Pos(0, 0)
        raise SpecError("spec.toml", re.sub(r"\s*\(at line.*\)", "", str(e)), file=file, pos=pos,
                        fix="fix the TOML syntax (strings in double quotes, one key per line)") from None
    except ValueError:  # tomllib converts integer literals with int(), which refuses more than 4300 digits
        m = re.search(r"[0-9][0-9_]{4000,}", text)
        pos = Pos(text.count("\n", 0, m.start()) + 1, m.start() - text.rfind("\n", 0, m.start())) if m else Pos(0, 0)
        raise SpecError("spec.toml", "an integer has thousands of digits", file=file, pos=pos,
                        fix="write integers of at most 18 digits") from None
    except RecursionError:
        raise SpecError("spec.too_deep", "the TOML nests too deeply to read", file=file, pos=Pos(1, 1),
                        fix="flatten the nested values") from None


def _toml_value(value: object) -> str:
    """A value as the spec wrote it (TOML: true, "text", 2), for a message."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)[:80]
    return repr(value)[:80] if isinstance(value, (int, float)) else f"a {type(value).__name__}"


def _toml_kind(value: object) -> str:
    """The TOML kind of a value tomllib produced, for a message."""
    if isinstance(value, bool):
        return "boolean"
    names = {int: "integer", float: "float", str: "string", list: "array", dict: "table"}
    return next((n for t, n in names.items() if isinstance(value, t)), "date or time")


def _scalar(value: object) -> bool:
    return isinstance(value, (bool, int, str))
