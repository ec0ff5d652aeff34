"""Read an EHRAgent log the way EHRAgent wrote it and hand over every program the agent may have run.

EHRAgent (ehragent/main.py) writes its chat messages joined by SECTION_SEPARATOR: the question, its
gold answer, the prompt (examples, "(END OF EXAMPLES)", knowledge, "Question: ...", "Solution: "),
then the conversation: an assistant message (the raw arguments of its `python` function call, or
text), the user proxy's reply (what `run_code` returned, or "" when nothing ran), and so on, up to the
assistant message that ends in TERMINATE; the benchmark adds a "Ground-Truth Answer --->" section.
Every call runs in a fresh namespace on json.loads(arguments)["cell"], or, when the arguments are not
JSON, on the text after their last `: "` up to the first `", ` (medagent.execute_function).

Every program is read, failed attempts included: each `{"cell": ...}` object in an assistant message,
found with a JSON decoder at every '{' (any spelling or order of keys), and every run of whole sections, in full
(a call logged as its bare cell, which may hold `: "` itself) and as its `: "` cut, outputs included, wherever it
parses as Python and is more than a literal value.
A printed separator can make code look like output or split it in two, so no placement is trusted:
reading more can only deny more. The answer is the section before TERMINATE, as in GuardAgent's
`get_output_ehr`; the old longest-section fallback is gone (the cut is what EHRAgent runs).

Refused (ExtractionError), never half-read: a log without those parts; messages and outputs that do
not alternate; text after TERMINATE other than the benchmark's line; a cell object that is not one
string under "cell" alone (duplicate or extra keys, another type) or that spans a separator; anything
keyed "cell" in an output; an output after a message that is neither a call (a '{' with a cell key) nor a
program in full (Python, more than a literal value): what ran is not in the log; a markdown code fence before
TERMINATE (autogen's code execution runs the code blocks of a message without a function call: python, sh, ...);
a call that does not compile while its output does not report the error, or whose error a later Python may not
make (STABLE_ERRORS: the program's own output can read "Error: ..." where a newer Python ran it).
Limit: when a message has both text and a function call, EHRAgent logs only the text; the code that ran is then
not in the log. Its output is refused unless that text is itself Python in full, which cannot be told apart from a
call logged as its bare cell: then the text is read as the program, and must explain its output (_explains, as
run_code makes it: str(answer) when the last code line names `answer`, else the SAVE_ANSWER reminder, or the error
raised). A program that reads no database and answers no constant equal to its output, one without an answer line
followed by a value, one that never sets `answer` followed by anything but 0, cannot have made that output: the log
says so (AgentOutput.hidden) and the code extractor counts every column as read; so does an output whose form no value
of `answer` can have (every assignment a comparison, len/int/ord or float, the output no True/False, integer or number:
_fits_form). Still open: text that is itself a program reading the database and setting `answer` to a value of any
form, beside a call that reads more.
"""
from __future__ import annotations

import ast
import bisect
import json
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass

from veriguard.enforce.code_subset import node_name
from veriguard.enforce.extract_errors import ExtractionError

SECTION_SEPARATOR = "\n" + "-" * 58 + "\n"
END_OF_EXAMPLES = "(END OF EXAMPLES)\n"
GROUND_TRUTH = "Ground-Truth Answer --->"
ERROR_REPORTS = ("SyntaxError:", "Error:")  # how run_code reports code that did not compile
# A call the analyser's Python cannot parse ran nowhere only if the agent's Python cannot parse it either, and the agent
# may run a newer one (3.13 takes `def f[T = int]()`, 3.14 `except A, B:` and t-strings), whose output the program
# itself can make read "Error: ...". These errors no later Python accepts: a character after a line continuation, a
# decimal with leading zeros, a string left open, two expressions side by side in brackets; each is reached the same
# way by a later tokenizer unless a template string (3.14) reads the quotes otherwise.
STABLE_ERRORS = re.compile(r"unexpected character after line continuation character|leading zeros in decimal "
                           r"integer literals|unterminated (?:triple-quoted )?string literal|invalid syntax\. Perhaps "
                           r"you forgot a comma\?")
TEMPLATE_PREFIX = re.compile(r"(?<![\w'\"])(?:[tT][rR]?|[rR][tT])['\"]")
CUT_OPEN, CUT_CLOSE = ': "', '", '          # where execute_function cuts arguments that are not JSON
# A program that reads no database explains its output only by a NameError it makes itself; any other output may
# come from a function call beside the message's text, which EHRAgent does not log (_explains)
DATA_TOOLS = frozenset({"LoadDB", "SQLInterpreter"})
# EHRAgent's run_code returns str(answer) only when the last line of code (no blank or comment line) names `answer`;
# otherwise, after running the program to its end, this sentence
ANSWER_NAME = "answer"
ERROR_OUTPUT = re.compile(r"(?:[A-Za-z_][\w.]*)?(?:Error|Exception)\b")  # "Error: ...", "TypeError: ...": it raised
SAVE_ANSWER = "Please save the answer to the question in the variable 'answer'."
NAME_ERROR = re.compile(r"""Error: NameError\(["']name '([A-Za-z_][A-Za-z0-9_]*)' is not defined["']\)\.?""")
CODE_FENCE = "```"  # autogen's code blocks: three backticks, a language or none, then the code
MAX_SECTIONS = 64
MAX_LOG_CHARS = 500_000
PARSE_BUDGET = 1_000_000  # characters handed to the Python parser for one log
CELL_KEY = "cell"
KEY = re.compile(r'("(?:[^"\\]|\\.){1,24}")\s*:')  # "cell" spelled with escapes is at most 24 units
# strict=False: autogen turns raw newlines and tabs in strings into escapes; pairs keep duplicate keys
DECODER = json.JSONDecoder(strict=False, object_pairs_hook=list)


@dataclass(frozen=True)
class AgentOutput:
    knowledge: str
    code: tuple[str, ...]  # every program the agent may have run, each to be analysed on its own
    answer: str
    question: str
    hidden: str = ""  # why a program not in the log ran (an output no logged program made); it may read anything

    def guard_input(self) -> str:
        """The text GuardAgent hands its guard (with every program), for comparison with LLM guards."""
        return self.knowledge + "\nGenerated code:\n" + "\n\n".join(self.code) + "\nAnswer:\n" + self.answer


@dataclass(frozen=True)
class _Cell:
    start: int
    end: int
    code: str


class _Parser:
    """ast.parse under a budget per log, each distinct text parsed once: a log built to be costly to read is refused,
    not waited on, and every reading of a program (whether it parses, is a literal, explains its output) shares it."""

    def __init__(self) -> None:
        self.left = PARSE_BUDGET
        self.parsed: dict[str, ast.Module | str] = {}

    def tree(self, code: str) -> ast.Module | str:
        """The module `code` parses to, or the message of the SyntaxError Python raises on it."""
        known = self.parsed.get(code)
        if known is not None:
            return known
        self.left -= len(code)
        if self.left < 0:
            raise ExtractionError("extract.log.structure", f"reading every program of this log would parse more "
                                  f"than {PARSE_BUDGET:,} characters of Python")
        try:
            with warnings.catch_warnings():  # invalid escapes in strings warn; they do not stop the code
                warnings.simplefilter("ignore")
                result: ast.Module | str = ast.parse(code)
        except SyntaxError as e:
            result = str(e.msg)
        except (ValueError, RecursionError, MemoryError) as e:  # null bytes, nesting: cannot tell, so refuse
            raise ExtractionError("extract.code.unanalysable", f"unanalysable code: Python cannot parse it "
                                  f"({type(e).__name__})") from None
        self.parsed[code] = result
        return result

    def parses(self, code: str) -> bool:
        return isinstance(self.tree(code), ast.Module)

    def program(self, code: str) -> bool:
        """Whether `code` parses and is more than a literal value ('42', "['a', 1]": printed output that reads nothing
        even if it ran)."""
        tree = self.tree(code)
        return isinstance(tree, ast.Module) and not _is_value(tree)

    def never_runs(self, code: str) -> bool:
        """Whether no Python, this one or a later one, parses `code` (see STABLE_ERRORS)."""
        error = self.tree(code)
        return isinstance(error, str) and bool(STABLE_ERRORS.match(error)) and not TEMPLATE_PREFIX.search(code)


def parse_agent_log(text: str) -> AgentOutput:
    """Parse one EHRAgent log; raise ExtractionError if it is empty, truncated, malformed or ambiguous."""
    if not text.strip():
        raise ExtractionError("extract.log.empty", "the agent log is empty")
    if len(text) > MAX_LOG_CHARS:
        raise ExtractionError("extract.log.structure", f"the log has {len(text):,} characters, more than the "
                              f"{MAX_LOG_CHARS:,} read")
    if END_OF_EXAMPLES not in text:
        raise ExtractionError("extract.log.format", "no '(END OF EXAMPLES)' line: this is not an EHRAgent log")
    prompt, separator, conversation = text.split(END_OF_EXAMPLES, 1)[1].partition(SECTION_SEPARATOR)
    if "Question:" not in prompt or "Solution:" not in prompt or not separator:
        raise ExtractionError("extract.log.truncated", "the log ends before its 'Question:'/'Solution:' lines")
    if not prompt.rstrip().endswith("Solution:"):
        raise ExtractionError("extract.log.format", "the prompt does not end with 'Solution:' before the first "
                              "section separator: the conversation cannot be told apart from the prompt")
    knowledge, _, asked = prompt.rpartition("Question:")
    sections = conversation.split(SECTION_SEPARATOR)
    if len(sections) > MAX_SECTIONS:
        raise ExtractionError("extract.log.structure", f"the log has {len(sections)} sections, more than the "
                              f"{MAX_SECTIONS} a run of EHRAgent writes")
    messages = _messages(sections)
    _refuse_code_blocks(messages)
    parser = _Parser()
    cells, hidden = _cells(messages, parser)
    candidates = [cell.code for cell in cells] + _cuts(messages)
    code = tuple(program for program in dict.fromkeys(candidates) if program.strip() and parser.program(program))
    if not code:
        raise ExtractionError("extract.log.no_code", "the log holds no generated code")
    return AgentOutput(knowledge=knowledge, code=code, answer=sections[len(messages) - 1],
                       question=asked.split("\n", 1)[0].strip(), hidden=hidden)


def _messages(sections: list[str]) -> list[str]:
    """The sections before the final TERMINATE; refuses a log that does not end the way EHRAgent ends one."""
    ending = list(sections)
    while len(ending) > 1 and (not ending[-1].strip() or ending[-1].startswith(GROUND_TRUTH)):
        ending.pop()  # the benchmark's gold-answer line, or nothing, may follow TERMINATE
    if not ending[-1].rstrip().endswith("TERMINATE"):
        where = "no TERMINATE section" if not any("TERMINATE" in s for s in ending) else "text after TERMINATE"
        raise ExtractionError("extract.log.truncated", f"{where}: the agent did not finish, or the log was cut "
                              "or extended")
    messages = ending[:-1]
    if not messages:
        raise ExtractionError("extract.log.truncated", "TERMINATE comes before any answer section")
    if len(messages) % 2:
        raise ExtractionError("extract.log.structure", f"{len(messages)} sections before TERMINATE: the agent's "
                              "messages and the outputs do not alternate (a section separator was printed?)")
    return messages


def _refuse_code_blocks(sections: list[str]) -> None:
    """A markdown code fence before TERMINATE: EHRAgent's user proxy (code_execution_config set) runs the code blocks
    of a message without a function call, in any language autogen knows (python, sh, bash, ...); such a program is no
    cell and no cut, so it is not read. Outputs count too: printed separators can shift a message into their place."""
    for number, section in enumerate(sections, 1):
        if CODE_FENCE in section:
            raise ExtractionError("extract.log.code_block", f"section {number} holds a markdown code fence "
                                  f"({CODE_FENCE}): autogen's code execution runs such blocks (python, sh, ...), which "
                                  "are not read")


def _cells(sections: list[str], parser: _Parser) -> tuple[list[_Cell], str]:
    """Every cell object before TERMINATE, checked against where it stands and what follows it; and why a program the
    log does not show ran ('' when every output is explained by the program before it: _explains)."""
    bounds, position = [], 0
    for section in sections:
        bounds.append((position, position + len(section)))
        position += len(section) + len(SECTION_SEPARATOR)
    found = list(_cell_objects(SECTION_SEPARATOR.join(sections)))
    unexplained = 0  # the first message whose program cannot have made the output after it
    for number, (start, end) in enumerate(bounds):
        section, inside = sections[number], [c for c in found if start <= c.start < end]
        if any(cell.end > end for cell in inside):
            raise ExtractionError("extract.log.cell", f"the cell object in section {number + 1} spans a section "
                                  "separator")
        if number % 2:
            if _mentions_cell_key(section):
                raise ExtractionError("extract.log.structure", f"section {number + 1} is an output but holds a "
                                      "cell object: output is never code")
            continue
        output = sections[number + 1]
        if _is_call(section):
            whole = [c for c in inside if not (section[:c.start - start] + section[c.end - start:]).strip()]
            ran = whole[0].code if whole else _cut(section)  # what execute_function hands run_code
            if not parser.parses(ran) and not (output.lstrip().startswith(ERROR_REPORTS) and parser.never_runs(ran)):
                raise ExtractionError("extract.code.syntax", f"the call in section {number + 1} is not valid "
                                      "Python here, yet its output does not report the error, or a later Python may "
                                      "run it (its error is not one every version makes): cannot tell what ran")
        elif output.strip() and not parser.program(section):
            raise ExtractionError("extract.log.structure", f"section {number + 2} is output, but section "
                                  f"{number + 1} is neither a call nor code: what ran is not in the log (a message "
                                  "with text and a function call is logged as its text)")
        else:
            ran = section
        tree = parser.tree(ran) if not unexplained and output.strip() else None
        if isinstance(tree, ast.Module) and not _explains(tree, ran, output):
            unexplained = number + 1
    hidden = (f"section {unexplained + 1} is output that the program of section {unexplained} cannot have made: it "
              f"reads no database (no {' or '.join(sorted(DATA_TOOLS))}), answers no constant that is the output, and "
              "makes no NameError the output shows; the output may come from a function call the log does not show "
              "(EHRAgent logs a message's text, not its call)") if unexplained else ""
    return found, hidden


def _explains(tree: ast.Module, program: str, output: str) -> bool:
    """Whether `program` can be what made `output`: it assigns `answer` a constant whose text is the output (up to a
    separator it prints); the output is run_code's SAVE_ANSWER and no answer line ends the program; it calls a tool
    that reads the database and ends with an answer line (or the output reports an error); or the output is the
    NameError of a name the program reads and binds nowhere (an attempt that failed before reading anything).
    `tree` is the program parsed (one that does not parse is judged by _cells' own rules: its output must report the
    error)."""
    said = output.strip()
    if said in _answered_constants(tree):
        return True
    lines = _code_lines(program)
    answers = ANSWER_NAME in lines[-1] if lines else False
    if said == SAVE_ANSWER:  # what run_code returns for a program that ran to its end without an answer line
        return not answers
    called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    if ERROR_OUTPUT.match(said) and called & DATA_TOOLS:
        return True  # an error it raised on the way
    if answers and called & DATA_TOOLS:  # a value it computed from the database, if it ever sets `answer` (else 0)
        return ANSWER_NAME in _bound_in(tree) and _fits_form(tree, said) or said == "0"
    report = NAME_ERROR.fullmatch(said.split("\n", 1)[0])
    return report is not None and _read_unbound(tree, report.group(1))


INTEGER_TEXT = re.compile(r"-?[0-9]+")
NUMBER_TEXT = re.compile(r"-?(?:[0-9]+\.?[0-9]*(?:e[+-]?[0-9]+)?|inf|nan)")
INTEGER_CALLS = frozenset({"len", "int", "ord"})   # builtins whose str() is an integer's text, whatever they read


def _fits_form(tree: ast.Module, said: str) -> bool:
    """Whether `said` can be str(answer) for some value the program gives `answer`: when every assignment to it is a
    comparison or `not` (str: True or False), a call of len, int or ord (an integer's text) or of float (a number's),
    the output must have the form of one of them; any other assignment (or augmented assignment, or a binding the
    analysis does not follow) fits any output. A program whose output has another form did not make it."""
    forms = set()
    # one walk; each node with what decides a binding of `answer` at or under it: the outermost _UNFOLLOWED node
    # around it (any form), else the Assign it is in; None (a lambda's parameter, a match capture): not looked at
    stack: list[tuple[ast.AST, ast.AST | None]] = [(tree, None)]
    while stack:
        node, under = stack.pop()
        if not isinstance(under, _UNFOLLOWED) and isinstance(node, (*_UNFOLLOWED, ast.Assign)):
            under = node
        if under is not None and node_name(node) == (ANSWER_NAME, True):
            if not isinstance(under, ast.Assign) or not all(isinstance(t, ast.Name) for t in under.targets):
                return True   # a binding not followed, or unpacked into: any form
            forms.add(_form(under.value))
        stack.extend((child, under) for child in ast.iter_child_nodes(node))
    if "" in forms or not forms:
        return True
    fits = {"bool": said in ("True", "False"), "int": bool(INTEGER_TEXT.fullmatch(said)),
            "float": bool(NUMBER_TEXT.fullmatch(said.lower()))}
    return any(fits[form] for form in forms)   # one of its assignments may be the last that ran


# bindings of `answer` whose value _fits_form does not follow: any output fits
_UNFOLLOWED = (ast.AugAssign, ast.AnnAssign, ast.For, ast.With, ast.NamedExpr, ast.Import, ast.ImportFrom,
               ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler, ast.comprehension, ast.Global,
               ast.Nonlocal, ast.Delete)


def _form(value: ast.expr) -> str:
    """'bool', 'int' or 'float' for a value whose str() has that form whatever it reads; '' for any other."""
    if isinstance(value, ast.Compare) or isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not):
        return "bool"
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and not value.keywords:
        if value.func.id in INTEGER_CALLS:
            return "int"
        if value.func.id == "float":
            return "float"
    return ""


def _code_lines(program: str) -> list[str]:
    """The lines run_code looks at for an answer: blank lines and comment lines dropped."""
    return [line for line in program.split("\n") if line.strip() and not line.strip().startswith("#")]


def _read_unbound(tree: ast.Module, name: str) -> bool:
    """Whether a top-level statement may read `name` before any statement binds it (an assignment's value is read
    before its targets are bound: `x = float(x)`)."""
    for statement in tree.body:
        first = statement.value if isinstance(statement, ast.Assign) else statement
        if any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(first)):
            return True
        if name in _bound_in(statement):
            return False
    return False


def _bound_in(statement: ast.AST) -> set[str]:
    """Every name a statement may bind, at any depth (targets, defs, parameters, imports, `except ... as`)."""
    return {named[0] for n in ast.walk(statement) if (named := node_name(n)) is not None and named[1]}


def _cell_objects(text: str) -> Iterator[_Cell]:
    """Each JSON object with a "cell" key, decoded at every '{' (any spelling of the key, any key order).

    One that does not decode is not a cell: execute_function then runs the `: "` cut, which `_cuts` reads.
    """
    for brace in (m.start() for m in re.finditer(r"\{", text)):
        try:
            pairs, end = DECODER.raw_decode(text, brace)
        except ValueError:
            continue
        except RecursionError:
            raise ExtractionError("extract.log.cell", "a JSON object nested too deeply to read") from None
        keys = [key for key, _ in pairs]
        if CELL_KEY not in keys:
            continue
        if keys != [CELL_KEY] or not isinstance(pairs[0][1], str):
            raise ExtractionError("extract.log.cell", f"a cell object must hold one string under \"cell\" and "
                                  f"nothing else; it has keys {keys}")
        yield _Cell(brace, end, pairs[0][1])


def _cuts(sections: list[str]) -> list[str]:
    """Every run of whole sections, in full and as its `: "` cut: whichever separators are real, each message is
    one."""
    text = SECTION_SEPARATOR.join(sections)
    starts = [sum(len(s) + len(SECTION_SEPARATOR) for s in sections[:i]) for i in range(len(sections))]
    opens = [m.end() for m in re.finditer(re.escape(CUT_OPEN), text)]
    closes = [m.start() for m in re.finditer(re.escape(CUT_CLOSE), text)]
    spans = set()
    for first, low in enumerate(starts):
        bare = not _is_json_object(sections[first])  # a JSON object is a whole Python expression: nothing continues it
        for last in range(first, len(sections)):
            high = starts[last] + len(sections[last])
            if bare:
                spans.add((low, high))  # the run itself: a call logged as its bare cell, which may hold `: "`
            k = bisect.bisect_right(opens, high) - 1
            begin = opens[k] if k >= 0 and opens[k] - len(CUT_OPEN) >= low else low
            c = bisect.bisect_left(closes, begin)
            spans.add((begin, closes[c] if c < len(closes) and closes[c] + len(CUT_CLOSE) <= high else high))
    return [text[begin:end] for begin, end in sorted(spans)]


def _is_json_object(section: str) -> bool:
    """Whether the section is one JSON object and nothing else (a call's arguments, logged as they came)."""
    text = section.strip()
    if not text.startswith("{"):
        return False
    try:
        _, end = DECODER.raw_decode(text)
    except (ValueError, RecursionError):
        return False
    return end == len(text)


def _cut(text: str) -> str:
    """The code execute_function runs when a call's arguments are not JSON."""
    return text.split(CUT_OPEN)[-1].split(CUT_CLOSE)[0]


def _mentions_cell_key(text: str) -> bool:
    """Whether any JSON object key in the text, well-formed object or not, decodes to "cell"."""
    return any(_decodes_to(m.group(1), CELL_KEY) for m in KEY.finditer(text))


def _is_call(section: str) -> bool:
    return section.lstrip().startswith("{") and _mentions_cell_key(section)


def _decodes_to(literal: str, expected: str) -> bool:
    try:
        return json.loads(literal, strict=False) == expected
    except ValueError:
        return False


def _answered_constants(tree: ast.Module) -> set[str]:
    """The texts of the constants the program assigns to `answer` (as run_code returns them: str(answer)), each cut at
    the first section separator it holds."""
    texts = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "answer" for t in node.targets):
            try:
                value = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
            texts.add(str(value).split(SECTION_SEPARATOR)[0].strip())
    return texts


def _is_value(tree: ast.Module) -> bool:
    """A plain literal ('42', "['a', 1]"): printed output that reads nothing even if it ran."""
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return False
    try:
        ast.literal_eval(tree.body[0].value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True
