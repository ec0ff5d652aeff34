"""Parsing a shell command with tree-sitter-bash, refusing what bash would read differently.

tree-sitter is not bash: where the two disagree in a way that matters (a backslash-newline inside a
word, the text of a backtick substitution) the text is rewritten the way bash reads it first, and a
tree with an error fails closed.
"""
from __future__ import annotations

import re
import threading
from typing import Any, Iterable

from veriguard.enforce.extract_errors import ExtractionError

MAX_LENGTH = 64 * 1024
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

_local = threading.local()


def _parser() -> Any:
    parser = getattr(_local, "parser", None)
    if parser is None:
        import tree_sitter

        parser = tree_sitter.Parser(tree_sitter.Language(_bash_language()))
        _local.parser = parser
    return parser


def _bash_language() -> Any:
    """tree-sitter-bash's grammar, from its compiled module alone: the package's __init__ imports
    importlib.resources (with tempfile, shutil, bz2, lzma...) for query files the analysis never reads, which
    is most of a hook's parser start-up. The plain import where that module is not where it is expected."""
    import importlib.machinery
    import importlib.util

    package = importlib.util.find_spec("tree_sitter_bash")
    where = package.submodule_search_locations if package else None
    spec = importlib.machinery.PathFinder.find_spec("tree_sitter_bash._binding", where) if where else None
    if spec is None or spec.loader is None:
        import tree_sitter_bash

        return tree_sitter_bash.language()
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.language()


def check_text(text: str) -> None:
    if not text.strip():
        raise ExtractionError("extract.shell.empty", "the command is empty")
    if len(text) > MAX_LENGTH:
        raise ExtractionError("extract.shell.too_long", f"the command is {len(text)} characters long; commands over "
                              f"{MAX_LENGTH} are refused")
    bad = CONTROL.search(text)
    if bad:
        raise ExtractionError("extract.shell.binary", f"the command contains the control character "
                              f"{bad.group(0)!r} at offset {bad.start()}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ExtractionError("extract.shell.binary", f"the command is not valid text at offset {e.start}") from None


ASTRAL = re.compile("[\U00010000-\U0010FFFF]")


def parse(text: str) -> Any:
    """The tree of `text`, with backslash-newline removed where bash removes it; fails closed on errors.

    tree-sitter-bash 0.25.1 reads out of bounds (and may crash the process) on a 4-byte UTF-8
    character after a `{` (upstream issue tree-sitter/tree-sitter-bash#337). No such character means
    anything to bash, so each is parsed, and then read, as U+FFFD: the tree has the same shape."""
    text = ASTRAL.sub("\ufffd", text)
    tree = _parser().parse(text.encode("utf-8"))
    if "\\\n" in text:
        joined = _join_lines(text, tree)
        if joined != text:
            check_text(joined)
            text = joined
            tree = _parser().parse(text.encode("utf-8"))
    root = tree.root_node
    if root.has_error:
        bad = _first_error(root)
        row, col = bad.start_point
        what = f"missing {bad.type!r}" if bad.is_missing else \
            f"unexpected `{bad.text.decode('utf-8', 'replace')[:40]}`"
        raise ExtractionError("extract.shell.parse", f"{row + 1}:{col + 1}: the command does not parse as bash "
                              f"({what})")
    return tree


def _first_error(node: Any) -> Any:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "ERROR" or n.is_missing:
            return n
        stack.extend(reversed(n.children))
    return node


def _join_lines(text: str, tree: Any) -> str:
    """Remove `\\<newline>` outside single quotes, comments and here-documents (bash joins the lines
    before it splits words; tree-sitter splits the word there)."""
    data = text.encode("utf-8")
    cut: list[int] = []
    for m in re.finditer(rb"\\+\n", data):
        if (m.end() - m.start() - 1) % 2 == 0:
            continue
        at = m.end() - 2
        node = tree.root_node.descendant_for_byte_range(at, at + 1)
        inside = False
        while node is not None:
            if node.type in ("raw_string", "comment", "heredoc_body", "ansi_c_string", "heredoc_content"):
                inside = True
                break
            node = node.parent
        if not inside:
            cut.append(at)
    for at in reversed(cut):
        data = data[:at] + data[at + 2:]
    return data.decode("utf-8")


def backtick_text(node: Any) -> str:
    """The command inside `...` as bash reads it: a backslash before $, ` or \\ (and " inside double
    quotes) is removed first."""
    raw = node.text.decode("utf-8")[1:-1]
    quoted = any(p.type == "string" for p in ancestors(node))
    return re.sub(r'\\([$`\\"])' if quoted else r"\\([$`\\])", r"\1", raw)


def ancestors(node: Any) -> Iterable[Any]:
    p = node.parent
    while p is not None:
        yield p
        p = p.parent


def single_command(node: Any) -> bool:
    """A stage whose output is that of one simple command."""
    while node.type in ("redirected_statement", "negated_command"):
        node = node.child_by_field_name("body") if node.type == "redirected_statement" else node.named_children[-1]
        if node is None:
            return False
    return node.type == "command"


def walk_tree(node: Any) -> Iterable[Any]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children)
