"""Every dotted error code veriguard raises, who must act on it, and what it means.

A code is the stable part of a VeriguardError (or ProviderError): scripts and tests match on it, the
message around it changes. tests/unit/test_error_catalogue.py scans the source and fails when a code
is raised but not listed here, listed here but raised nowhere, or raised through an error class whose
group (contracts/errors.py: one per Actor) is not the code's actor.
"""
from __future__ import annotations

from dataclasses import dataclass

from veriguard.contracts.errors import GROUPS, Actor, VeriguardError

__all__ = ["Actor", "BUILT", "CATALOGUE", "Entry", "by_actor"]


@dataclass(frozen=True)
class Entry:
    actor: Actor
    meaning: str


S, O, E, A, B = Actor.SPEC_AUTHOR, Actor.OPERATOR, Actor.ENVIRONMENT, Actor.AGENT, Actor.BUG

CATALOGUE: dict[str, Entry] = {
    # clarification answers (synth/clarify.py)
    "answers.file": Entry(S, "the answers file cannot be read"),
    "answers.format": Entry(S, "the answers file does not have the expected questions/answers shape"),
    "answers.missing": Entry(S, "a clarification question has no answer"),
    "answers.not_approved": Entry(S, "the answers are not marked approved by the engineer"),
    "answers.stale": Entry(S, "the answers were written for another version of the spec"),
    "answers.toml": Entry(S, "the answers file is not valid TOML"),
    # approval of a verified update (veriguard/diff.py)
    "approval.by": Entry(O, "the approval's `by` is not one line of printable text"),
    "approval.encoding": Entry(O, "the approval file is not UTF-8 text"),
    "approval.file": Entry(O, "the approval file cannot be read"),
    "approval.key": Entry(O, "the approval file has a key it may not have"),
    "approval.missing": Entry(O, "the approval file lacks a required field"),
    "approval.toml": Entry(O, "the approval file is not valid TOML"),
    "approval.too_deep": Entry(O, "the approval file nests tables or arrays too deeply"),
    # audit bundles (veriguard/audit.py)
    "audit.bundle": Entry(O, "the audit bundle's name or format is not one veriguard writes"),
    "audit.input": Entry(O, "the audit input is not a policy build or cannot be read"),
    "check.args": Entry(O, "`veriguard check --args` is not a JSON object (or its @file cannot be read)"),
    "cli.usage": Entry(O, "the command line lacks an option the command needs"),
    "cli.environment": Entry(O, "a VERIGUARD_* environment variable is set to a value veriguard cannot use"),
    # compile path (synth/compile.py)
    "compile.no_rules": Entry(S, "the spec has no [contract] rules for the compile path"),
    "compile.shape": Entry(S, "a rule has a shape the compile path does not support"),
    # the contract language (contracts/)
    "contract.arity": Entry(S, "a table is called with the wrong number of arguments"),
    "contract.can_fire": Entry(S, "a rule can never fire: it is vacuous"),
    "contract.can_hold": Entry(S, "a rule can never be satisfied: it contradicts itself"),
    "contract.decision_in_rule": Entry(S, "a rule speaks of the decision; only a property may"),
    "contract.denied": Entry(S, "denied(...) does not name the variables of a rule that denies items"),
    "contract.denied_types": Entry(S, "rules that deny items range over lists of different element types"),
    "contract.duplicate_id": Entry(S, "a rule or property id is declared twice"),
    "contract.enum_value": Entry(S, "a value is not one of its enum's values"),
    "contract.int_too_large": Entry(S, "an integer literal has more digits than supported"),
    "contract.string_too_long": Entry(S, "a string literal has more characters than supported"),
    "contract.len": Entry(S, "len(...) is not given exactly one list"),
    "contract.name": Entry(S, "a name in the contract is not allowed (reserved, malformed or too long)"),
    "contract.not_allow_all": Entry(S, "the rules can never deny anything"),
    "contract.not_deny_all": Entry(S, "the rules contradict each other: nothing could ever be allowed"),
    "contract.not_shadowed": Entry(S, "a rule can fire only when another rule already fires"),
    "contract.quantifier": Entry(S, "a quantifier ranges over something that is not a list argument"),
    "contract.satisfiable": Entry(S, "the assumptions and enum domains admit no input at all"),
    "contract.shadow": Entry(S, "a bound variable hides another name"),
    "contract.syntax": Entry(S, "the contract text does not parse"),
    "contract.too_deep": Entry(S, "an expression nests deeper than supported"),
    "contract.type": Entry(S, "an expression has the wrong type"),
    "contract.unknown_field": Entry(S, "a record has no such field"),
    "contract.unknown_name": Entry(S, "a name is not an argument, a bound variable or a constant"),
    "contract.unknown_table": Entry(S, "a call names no table or function of the spec"),
    "contract.violated": Entry(S, "violated(...) does not take exactly one rule id"),
    "contract.z3_unknown": Entry(S, "z3 cannot decide a rule (e.g. nonlinear arithmetic)"),
    # comparing two builds (veriguard/diff.py)
    "diff.arguments": Entry(O, "the two builds take different arguments and cannot be compared"),
    "diff.changed": Entry(O, "a build's spec or tables changed while they were read"),
    "diff.inconsistent": Entry(O, "a build's policy.py is not the frozen module of its own spec and source"),
    "diff.log": Entry(O, "the decision log given for replay is broken"),
    "diff.no_contract": Entry(O, "a build given to compare comes from a spec without formal rules"),
    # the machine (verify/nagini.py, the classifier)
    "env.agents_sdk": Entry(E, "the installed openai-agents lacks a name the Agents guardrail reads (tested: 0.24)"),
    "env.embedder": Entry(E, "the sentence-embedding model or its runtime is not installed"),
    "env.encoder": Entry(E, "the installed encoder differs from the one the classifier was frozen with"),
    "env.java_broken": Entry(E, "the Java executable does not report a version"),
    "env.java_missing": Entry(E, "Java is not installed or not on PATH"),
    "env.java_old": Entry(E, "Java is older than 11"),
    "env.nagini_start": Entry(E, "the Nagini worker did not start"),
    # benchmarks (veriguard eval)
    "eval.build": Entry(O, "no build for the benchmark's agent, or one that does not read its input (shell commands)"),
    "eval.data": Entry(O, "the benchmark data file is missing or malformed"),
    "eval.extractor": Entry(O, "the --extractor choice does not fit the policy"),
    # extraction on the online path (enforce/): every one is a denial
    "extract.abstain": Entry(A, "the classifier is not sure which categories the text belongs to"),
    "extract.classifier": Entry(B, "the classifier returned a category the argument does not have"),
    "extract.code.call": Entry(A, "a tool is called with the wrong number of arguments"),
    "extract.code.empty": Entry(A, "there is no generated code to check"),
    "extract.code.filter_syntax": Entry(A, "a FilterDB condition names no column"),
    "extract.code.getvalue_syntax": Entry(A, "a GetValue argument is not a column with known aggregations"),
    "extract.code.syntax": Entry(A, "the generated code is not valid Python"),
    "extract.code.unanalysable": Entry(A, "the code uses a construct outside the subset the extractor follows"),
    "extract.code.unknown_column": Entry(A, "the code names a column the schema does not have"),
    "extract.code.unknown_table": Entry(A, "the code loads a table the schema does not have"),
    "extract.code.unresolved_table": Entry(A, "which table a tool reads cannot be told statically"),
    "extract.config": Entry(S, "the spec's [extraction] entry for an argument is wrong or incomplete"),
    "extract.enum": Entry(A, "an extracted value is not one of its enum's values"),
    "extract.llm.ambiguous": Entry(A, "the agent's text holds two values for an integer the model reads (a correction)"),
    "extract.llm.unwritten": Entry(A, "the model's number or name is not written in the agent's text (computed, respelt)"),
    "extract.llm.auth": Entry(E, "the model provider refused the API key or its access to the model"),
    "extract.llm.bad_request": Entry(E, "the model provider rejected the request (model name, max_tokens, schema)"),
    "extract.llm.busy": Entry(E, "too many model calls are still running (a slow or stalled model server)"),
    "extract.llm.config": Entry(O, "the LLM extractor's provider is misconfigured"),
    "extract.llm.empty": Entry(E, "the model gave an empty answer"),
    "extract.llm.failed": Entry(E, "the model call failed in a way the provider did not map"),
    "extract.llm.injection": Entry(A, "the agent's text speaks to the model that would read it: denied unsent"),
    "extract.llm.unreadable": Entry(A, "text the injection check cannot read (another language, hex, base64): denied unsent"),
    "extract.llm.malformed": Entry(E, "the model's answer does not satisfy the argument's schema"),
    "extract.llm.network": Entry(E, "the model provider cannot be reached"),
    "extract.llm.no_key": Entry(E, "no API key for the LLM extractor's provider"),
    "extract.llm.pin": Entry(O, "the build does not pin the model, prompt and schema the extractor uses"),
    "extract.llm.rate_limited": Entry(E, "the model provider is rate-limiting"),
    "extract.llm.refusal": Entry(E, "the model refused to answer"),
    "extract.llm.replay_mismatch": Entry(O, "a replayed transcript does not match the extractor's requests"),
    "extract.llm.server": Entry(E, "the model provider failed or is overloaded"),
    "extract.llm.timeout": Entry(E, "the model call timed out"),
    "extract.llm.too_long": Entry(A, "the agent's text is longer than the extractor sends to the model"),
    "extract.llm.unavailable": Entry(E, "the LLM provider's package is not installed"),
    "extract.llm.unexpected": Entry(E, "the model provider failed unexpectedly"),
    "extract.log.cell": Entry(A, "a cell of the agent log spans a section separator"),
    "extract.log.code_block": Entry(A, "a message of the agent log holds a code block the agent's runtime would run"),
    "extract.log.empty": Entry(A, "the agent log is empty"),
    "extract.log.format": Entry(A, "the text is not an EHRAgent log"),
    "extract.log.no_code": Entry(A, "the agent log holds no generated code"),
    "extract.log.structure": Entry(A, "the agent log's sections are not in the expected order or size"),
    "extract.log.truncated": Entry(A, "the agent log ends early"),
    "extract.missing": Entry(A, "the agent data lacks a field the extractor reads"),
    "extract.shell.binary": Entry(A, "the command holds a control character"),
    "extract.shell.construct": Entry(A, "the command uses a construct the shell analysis does not follow"),
    "extract.shell.empty": Entry(A, "the command has nothing to run"),
    "extract.shell.nesting": Entry(A, "the command nests too deeply"),
    "extract.shell.parse": Entry(A, "the command does not parse as bash"),
    "extract.shell.path": Entry(A, "a path the analysis needs (cwd, home) is not absolute"),
    "extract.shell.workspace": Entry(A, "the workspace is the root or home folder, or above it: not a project"),
    "extract.shell.git": Entry(A, "a git command that rewrites its work tree, and no repository to ask which files"),
    "extract.shell.too_complex": Entry(A, "the command needs too many steps to analyse"),
    "extract.shell.too_long": Entry(A, "the command is longer than the analysis reads"),
    "extract.sql.column": Entry(A, "the SQL reads an unknown or ambiguous column"),
    "extract.sql.dynamic": Entry(A, "SQL built with a run-time part (any part may carry SQL: a quote from chr(39), a UNION)"),
    "extract.sql.function": Entry(A, "the SQL calls a function outside SQLite's built-ins (load_extension, one the connection adds)"),
    "extract.sql.statement": Entry(A, "the SQL is not a query"),
    "extract.sql.syntax": Entry(A, "the SQL does not parse or is empty"),
    "extract.sql.unknown_table": Entry(A, "the SQL reads a table the schema does not have"),
    "extract.sql.unresolved": Entry(A, "the SQL query is not known statically"),
    "extract.tool_call": Entry(A, "the tool calls in the agent's output are malformed, several or missing"),
    "extract.type": Entry(A, "an extracted value has the wrong type"),
    # freezing a build (synth/freeze.py)
    "freeze.approval": Entry(O, "the approval given to freeze does not fit the build"),
    "freeze.certificate": Entry(S, "the certificate would not read back as strict JSON (a lone surrogate in a model's text)"),
    "freeze.changed": Entry(S, "the spec or a file it names changed during synthesis"),
    "freeze.file": Entry(S, "a file of the spec that the build copies cannot be read"),
    "freeze.path": Entry(S, "a file would be written outside the build directory"),
    "mcp.start": Entry(O, "the MCP server the proxy guards would not start or did not complete the handshake"),
    "mcp.platform": Entry(O, "the MCP proxy cannot run on this platform (no SIGHUP or process groups: Windows)"),
    "guard.config": Entry(O, "the guard's options (or the build's [enforcement] settings) are invalid"),
    "internal.generated_code": Entry(B, "code veriguard generated falls outside its own allowlist"),
    # signing keys (enforce/keys.py)
    "key.exists": Entry(O, "a key file already exists where a new key would be written"),
    "key.format": Entry(O, "a key file is not in the expected format"),
    "key.permissions": Entry(O, "a private key can be read by other users"),
    "key.trust": Entry(O, "no trusted public key is found where one is named"),
    "key.unreadable": Entry(O, "a key file cannot be read"),
    "key.write": Entry(O, "a key file cannot be written"),
    # loading a build (enforce/loader.py)
    "load.certificate": Entry(O, "the build's certificate is malformed"),
    "load.certificate_format": Entry(O, "the certificate's format is older or newer than this loader"),
    "load.classifier": Entry(O, "the build's frozen classifier is malformed"),
    "load.exec": Entry(O, "policy.py is not a frozen policy module"),
    "load.expected": Entry(O, "the build's policy hash is not the one the caller pinned (--expect-sha256)"),
    "load.extraction": Entry(O, "the build's extraction.json is malformed"),
    "load.foreign": Entry(O, "the build's folder is not named after its certificate's policy: another policy's build"),
    "load.missing": Entry(O, "the directory is not a build, or a build file is missing"),
    "load.shared": Entry(O, "a build file has a second name (a hard link) or every user may write it or its folder"),
    "load.signature": Entry(O, "the build's signature file is malformed or does not verify"),
    "load.signature_key": Entry(O, "the build is signed by a key that is not trusted"),
    "load.tampered": Entry(O, "a build file does not match the certificate's hash"),
    "load.trust": Entry(O, "signed builds are required but no trusted key is configured"),
    "load.unproved": Entry(O, "the certificate says the policy is not proved"),
    "load.unsigned": Entry(O, "signed builds are required and the build is not signed"),
    # the decision log (enforce/decision_log.py)
    "log.broken": Entry(O, "the decision log's chain is broken: refusing to append"),
    "log.key": Entry(O, "the decision log is signed and no private key was given"),
    "log.record": Entry(O, "a record the integration passed cannot be written as JSON"),
    "log.reserved": Entry(O, "a record sets a field the log reserves"),
    "log.unknown": Entry(O, "`veriguard log` is given a synthesis id the transcript store does not hold"),
    "log.unreadable": Entry(O, "the decision log cannot be read"),
    "log.write": Entry(O, "the decision log cannot be written"),
    # the frozen policy at run time (enforce/loader.py)
    "policy.argument": Entry(A, "an argument is mistyped, shows other text than it is, or respells a compared string"),
    "policy.mismatch": Entry(B, "the frozen policy's decision disagrees with its contract"),
    # model providers (providers/)
    "provider.auth": Entry(E, "the provider refused the API key or its access to the model (HTTP 401/403)"),
    "provider.bad_request": Entry(E, "the provider rejected the request (HTTP 4xx): model name, max_tokens, schema"),
    "provider.config": Entry(O, "the provider options are incomplete or inconsistent"),
    "provider.empty": Entry(E, "the model gave an empty answer"),
    "provider.malformed": Entry(E, "the provider's answer is not in the expected shape"),
    "provider.network": Entry(E, "the provider cannot be reached"),
    "provider.no_key": Entry(E, "no API key for the provider (the environment variable is not set)"),
    "provider.rate_limited": Entry(E, "the provider is rate-limiting"),
    "provider.refusal": Entry(E, "the model refused to answer"),
    "provider.replay_mismatch": Entry(O, "a replayed transcript does not match the requests made"),
    "provider.server": Entry(E, "the provider failed or is overloaded (HTTP 5xx)"),
    "provider.timeout": Entry(E, "the provider call timed out"),
    "provider.unexpected": Entry(E, "the provider failed in an unexpected way"),
    "report.input": Entry(O, "the build's certificate.json or run.json is not a JSON object"),
    # the spec file (synth/specfile.py, synth/tables.py)
    "spec.arguments": Entry(S, "a spec with [contract] rules has no [arguments]"),
    "spec.bank": Entry(S, "the classifier bank's categories are not the argument's fields"),
    "spec.encoding": Entry(S, "the spec is not UTF-8 text, or begins with a byte order mark"),
    "spec.enforcement": Entry(S, "the [enforcement] section has a wrong value"),
    "spec.enum": Entry(S, "an enum is not a non-empty list of distinct strings"),
    "spec.example": Entry(S, "an example does not fit the rules"),
    "spec.contract_escape": Entry(S, "the contract's text uses a TOML escape, so it reads otherwise than the file shows"),
    "spec.hidden_text": Entry(S, "the spec shows otherwise than it reads: bidi, look-alike, invisible, outer spaces, a rule off-screen"),
    "spec.example_args": Entry(S, "an example's arguments do not fit their types"),
    "spec.extraction": Entry(S, "an [extraction] entry's keys or values are wrong, or an endpoint or key it may not use"),
    "spec.file": Entry(S, "the spec or a file it names cannot be read, or is too large"),
    "spec.misplaced": Entry(S, "a rule is declared among properties, or a property among rules"),
    "spec.name": Entry(S, "a name in the spec is not allowed (reserved, malformed or too long)"),
    "spec.no_rules": Entry(S, "[contract] rules declares no rule"),
    "spec.path": Entry(S, "a file path in the spec leaves the spec's folder or is not a file"),
    "spec.record": Entry(S, "a record field is not a scalar"),
    "spec.request": Entry(S, "the spec has no `request`"),
    "spec.table": Entry(S, "a table's declaration is wrong"),
    "spec.table_csv": Entry(S, "a table's CSV file is malformed"),
    "spec.table_default": Entry(S, "a table needs a `default` for missing keys"),
    "spec.table_empty": Entry(S, "a table has no rows"),
    "spec.table_file": Entry(S, "a table's file cannot be read"),
    "spec.table_json": Entry(S, "a table's JSON file is malformed"),
    "spec.table_path": Entry(S, "a table's key path is not in its file"),
    "spec.toml": Entry(S, "the spec is not valid TOML"),
    "spec.too_deep": Entry(S, "the spec nests arrays or tables too deeply"),
    "spec.too_large": Entry(S, "the contract declares more rules, assumptions and properties than supported"),
    "spec.type": Entry(S, "a type in the spec is wrong"),
    "spec.type_decl": Entry(S, "a type declaration is neither an enum nor a record"),
    "spec.unknown_key": Entry(S, "the spec has a key veriguard does not read"),
    "spec.unknown_type": Entry(S, "the spec names a type that is not declared"),
    "spec.verify": Entry(S, "a [verify] setting is out of range"),
    # synthesis options (veriguard synth)
    "synth.approve": Entry(O, "--approve is given without --previous"),
    "synth.compare": Entry(S, "--compare is given a spec without formal rules to compare with"),
    "synth.jobs": Entry(O, "--jobs is less than 1"),
    "synth.llm": Entry(O, "the LLM path is given more than one spec"),
    "synth.previous": Entry(O, "--previous is given with a path it does not support"),
    "synth.replay": Entry(O, "the file given to --replay is not a transcript"),
    "synth.sign": Entry(O, "--sign is given with --compare, which writes no build"),
    # verified updates (veriguard/diff.py)
    "update.unapproved": Entry(O, "the new policy allows what the old denied and nobody approved it"),
    "update.undecided": Entry(O, "what the update allows that the old policy denied cannot be established"),
}

# Codes made at run time: the expression that makes them (as the source writes it) -> what it can make.
BUILT: dict[str, tuple[str, ...]] = {
    "f'contract.{f.check}'": tuple(f"contract.{check}" for check in (
        "satisfiable", "can_fire", "can_hold", "not_deny_all", "not_allow_all", "not_shadowed")),
    "'extract.llm.' + e.code.removeprefix('provider.')": tuple(
        "extract.llm." + code.removeprefix("provider.") for code in CATALOGUE if code.startswith("provider.")),
    "e.code.replace('spec.', 'approval.', 1)": ("approval.encoding", "approval.toml", "approval.too_deep"),
}


def by_actor() -> list[tuple[type[VeriguardError], dict[str, str]]]:
    """The catalogue grouped by who must act: each group's error class (its exit code) and its codes, sorted."""
    return [(group, {code: entry.meaning for code, entry in sorted(CATALOGUE.items()) if entry.actor is group.actor})
            for group in GROUPS]
