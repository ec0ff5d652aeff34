"""Turn an EHRAgent output log into what the guard sees, following GuardAgent's `get_output_ehr`.

The guard's input is knowledge + "Generated code:" + code + "Answer:" + answer, where code is the
last autogen `{"cell": ...}` attempt (JSON-decoded here, so `\\n` escapes become real newlines), or
the longest section when the log holds raw code, and answer is the section before the last
TERMINATE. One deliberate difference: the longest-section fallback only looks before the answer, so
a long answer can never stand in for the code. A log without those parts is refused
(ExtractionError), never half-read.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from enforce.extract_errors import ExtractionError

SECTION_SEPARATOR = "\n" + "-" * 58 + "\n"
END_OF_EXAMPLES = "(END OF EXAMPLES)\n"
CELL = re.compile(r'\{\s*"cell":\s*"((?:[^"\\]|\\.)*)"\s*\}', re.DOTALL)
ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{4}|.)", re.DOTALL)
SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
                  "'": "'", "\n": ""}


@dataclass(frozen=True)
class AgentOutput:
    knowledge: str
    code: str
    answer: str
    question: str

    def guard_input(self) -> str:
        """The text GuardAgent hands its guard, for comparison with LLM guards."""
        return self.knowledge + "\nGenerated code:\n" + self.code + "\nAnswer:\n" + self.answer


def parse_agent_log(text: str) -> AgentOutput:
    """Parse one EHRAgent log; raise ExtractionError if it is empty, truncated or malformed."""
    if not text.strip():
        raise ExtractionError("extract.log.empty", "the agent log is empty")
    if END_OF_EXAMPLES not in text:
        raise ExtractionError("extract.log.format", "no '(END OF EXAMPLES)' line: this is not an EHRAgent log")
    tail = text.split(END_OF_EXAMPLES, 1)[1]
    if "Question:" not in tail or "Solution:" not in tail:
        raise ExtractionError("extract.log.truncated", "the log ends before its 'Question:'/'Solution:' lines")
    knowledge = tail.split("Question:", 1)[0]
    question = tail.split("Question:", 1)[1].split("\n", 1)[0].strip()
    sections = tail.split("Solution:")[-1].split(SECTION_SEPARATOR)
    answer_at = _answer_index(sections)
    code = _last_cell(sections[:answer_at])  # output and answer text are data, never code
    if code is None:  # GuardAgent takes the longest section; the answer and what follows it are not code
        code = max(sections[:answer_at], key=len)
    if not code.strip():
        raise ExtractionError("extract.log.no_code", "the log holds no generated code")
    return AgentOutput(knowledge=knowledge, code=code, answer=sections[answer_at], question=question)


def _answer_index(sections: list[str]) -> int:
    terminate = [i for i, section in enumerate(sections) if "TERMINATE" in section]
    if not terminate:
        raise ExtractionError("extract.log.truncated",
                              "no TERMINATE section: the agent did not finish, or the log was cut")
    if terminate[-1] == 0:
        raise ExtractionError("extract.log.truncated", "TERMINATE comes before any answer section")
    return terminate[-1] - 1


def _last_cell(sections: list[str]) -> str | None:
    """The last `{"cell": "..."}` payload anywhere in the solution, decoded; None if there is none."""
    raw: str | None = None
    for number, section in enumerate(sections):
        matches = list(CELL.finditer(section))
        if '"cell":' in section and not matches:
            raise ExtractionError("extract.log.cell", f"section {number} opens a \"cell\" that never closes: "
                                  "the log is truncated or corrupt")
        for match in matches:
            raw = match.group(1)
    return None if raw is None else _decode_cell(raw)


def _decode_cell(raw: str) -> str:
    """Decode a JSON string body, also accepting the two escapes LLMs add: \\' and backslash-newline.

    JSON's own escapes keep their meaning; `\\'` is a quote and backslash-newline a line continuation,
    as in Python. Any other escape is refused rather than guessed.
    """
    out: list[str] = []
    position = 0
    for match in ESCAPE.finditer(raw):
        out.append(raw[position:match.start()])
        escape = match.group(0)
        if escape.startswith("\\u"):
            out.append(chr(int(escape[2:], 16)))
        elif escape[1] in SIMPLE_ESCAPES:
            out.append(SIMPLE_ESCAPES[escape[1]])
        else:
            line = raw.count("\n", 0, match.start()) + 1
            raise ExtractionError("extract.log.cell",
                                  f"the last \"cell\" has an unknown escape {escape!r} on its line {line}: "
                                  "cannot tell what code the agent ran")
        position = match.end()
    out.append(raw[position:])
    return "".join(out)
