"""The one error every extractor raises: extraction fails closed, with a stable code and a precise message."""
from __future__ import annotations

from veriguard.contracts.errors import AgentInputError


class ExtractionError(AgentInputError, ValueError):
    """The agent's output could not be turned into policy arguments; the caller must deny.

    `code` is a stable dotted identifier (e.g. `extract.code.syntax`) that callers and tests match on;
    `message` says what failed, where, and why.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(code, message)
