"""The walk over a shell command's syntax tree: statements, words, substitutions, arithmetic,
redirections, and the paths and zones of what the command touches. Every node kind is either
followed or refused; a safety net checks at the end that every command and substitution in the tree
was reached."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from typing import Any, Callable, NamedTuple

from veriguard.enforce.extract_errors import ExtractionError
from veriguard.enforce.shell_commands import Commands
from veriguard.enforce.shell_state import IO, Invocation, State, merge, with_cwds
from veriguard.enforce.shell_syntax import backtick_text, check_text, parse, single_command, walk_tree
from veriguard.enforce.shell_table import (ACCESSES, STAR2, CommandTable, Comp, Zones, literal_head, normalise,
                                            split_pattern)
from veriguard.enforce.shell_words import Env, Value, assignment_value, heredoc_tokens, tokens, unsupported, values
from veriguard.enforce.shell_words import escape_glob as _escape

MAX_DEPTH = 120          # nesting of statements, words, substitutions and `sh -c` strings
MAX_STEPS = 20000        # statements analysed (loops are analysed more than once)
MAX_COMPONENTS = 256     # a longer path is not resolved
MAX_LOOP_WORDS = 16      # a for loop over more words binds its variable to an unknown value
ARITH_TESTS = {"-eq", "-ne", "-lt", "-le", "-gt", "-ge"}
# what bash expands inside a pattern that can run a command or evaluate text: $(...), `...`, ${...}, $((...)), $[...],
# <(...), >(...)
_EXPANDS = re.compile(r"\$[({\[]|`|[<>]\(")
ASSIGN_OPS = {"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|=", "++", "--"}


@dataclass(frozen=True)
class Rewrite:
    """A git command that rewrites files of its repository's work tree (checkout, merge, stash pop...): which
    files only the repository can tell (enforce/shell_git.py)."""

    sub: str
    args: tuple[str | None, ...]     # None: a word not known before it runs
    cwd: str | None                  # None: its working directory is not known
    alone: str = ""                  # why the repository as it is now may not be what it meets ('' when it is)


class Brought(NamedTuple):
    """Files a step puts in `folder` under names the disk gives: a glob's matches or a folder's content (`cp -r /tmp/x
    sub`, `cp /tmp/x/* .`), an archive's members (`tar x -C sub`, `unzip -d sub`, `git clone URL sub`)."""

    folder: str                  # absolute, not normalised
    sources: tuple[str, ...]     # absolute escaped patterns of what lands there; "": content not known (a URL, stdin)
    unpacks: bool                # the sources are archives, whose members land in `folder`
    recursive: bool              # a folder among the sources lands with everything in it
    alone: bool                  # no other step of the command writes at, in or above a source: one missing now stays so


@dataclass(frozen=True)
class Analysis:
    kind: str
    sudo: bool
    pipes_to_shell: bool
    touched: tuple[tuple[str, str], ...]
    account: tuple[str, ...]
    # (accesses, path, recursive) of every path known exactly (no glob): what links on disk may lead elsewhere; a
    # path with `..` after a name is also given as written (the kernel takes `..` from where a link leads)
    paths: tuple[tuple[tuple[str, ...], str, bool], ...] = ()
    rewrites: tuple[Rewrite, ...] = ()
    # (accesses, components, recursive) of every path with a glob: the shell expands it on disk, through links
    patterns: tuple[tuple[tuple[str, ...], tuple[Comp, ...], bool], ...] = ()
    # (accesses, path, folder): a path that goes through `folder` (or a recursive access above it) after an earlier
    # step wrote it whole or put links in it (tar x, git clone, cp -a, ln): links not on disk yet may lead anywhere
    fresh: tuple[tuple[tuple[str, ...], str, str], ...] = ()
    brought: tuple[Brought, ...] = ()
    # (working directory, repository folder name, zones the agent may write, program): a program that runs what its
    # repository's configuration names, whose repository may lie in a folder above its working directory
    repositories: tuple[tuple[str, str, tuple[str, ...], str], ...] = ()
    # (working directory, escaped first component): an argument glob that starts with a wildcard, whose matches on
    # disk begin the word (`tar cf a.tar *` meets a file named `--checkpoint-action=exec=sh x.sh`)
    leading_globs: tuple[tuple[str, str], ...] = ()
    # the paths the command writes that may hold what it reads of a `carried` zone (analyse's `copies`): a later
    # command that reads one reads that zone (the hook's state across commands)
    copies: tuple[str, ...] = ()
    # the files a command that sends data out reads by name (analyse's `copies`): a later copy of a secret onto one of
    # them may be sent by it, where the two were decided at once (the hook's state refuses that copy)
    sends: tuple[str, ...] = ()
    # whether its class is unknown for code the analysis does not follow (an unknown program, inline code, eval...), not
    # only for writes it sees that a human approves (a copy of a secret, a file that runs later): analyse fills it
    unfollowed: bool = False
    # each simple command's words as the shell expands them, where their text is known (`A=Zq7; B=w3e9r; curl
    # "x/?k=$A$B"` runs `curl x/?k=Zq7w3e9r`): a value typed in pieces joined by expansion is looked for there too
    words: tuple[str, ...] = ()
    # whether a step runs in the background (`cmd &`): it may still run long after the command returns
    background: bool = False
    # the names a command may set from a secret file it reads whose names its text does not show (`source .env`,
    # `eval "$(cat .env)"`, `export "$k=$v"`): the file's own keys (shell.sourced_names; with analyse's `copies`)
    sourced: tuple[str, ...] = ()

    @property
    def how(self) -> str:
        text = "shell: " + " | ".join(self.account)
        return text if len(text) <= 4000 else text[:3990] + " …"


class Analyser(Commands, Env):
    def __init__(self, table: CommandTable, zones: Zones, home: str, cwd: str, sources: tuple[str, ...]) -> None:
        self.table, self.zones, self.home = table, zones, home
        self.exact: dict[tuple[tuple[str, ...], str, bool], None] = {}   # Analysis.paths, in order
        self.globbed: dict[tuple[tuple[str, ...], tuple[Comp, ...], bool], None] = {}   # Analysis.patterns
        self.fresh: dict[tuple[tuple[str, ...], str, str], None] = {}     # Analysis.fresh
        self.above: dict[tuple[str, str, tuple[str, ...], str], None] = {}   # Analysis.repositories
        self.leading: dict[tuple[str, str], None] = {}   # Analysis.leading_globs
        self.made: list[tuple[Invocation | None, str]] = []   # folders a step may have put links in, and the step
        self.brings: list[tuple[Invocation, tuple[str, ...], tuple[str, ...] | None, bool]] = []   # Commands.bring
        self.read_by: dict[int, list[str]] = {}    # id(invocation) -> escaped patterns it reads ("": not known)
        self.expanded: dict[str, None] = {}        # Analysis.words, in order
        self.background = False                    # Analysis.background
        self.written_by: list[tuple[int, str]] = []   # (id(invocation) or 0, escaped path or "": not known) it changes
        self.system_dirs = tuple(normalise(d) for d in table.system_dirs)
        self.project_dirs = sources
        self.classes: list[tuple[str, str]] = []
        self.touches: dict[tuple[str, str], str] = {}
        self.sudo = False
        self.pipes = False
        self.lines: list[str] = []
        self.count = 0
        self.depth = 0
        self.written: set[str] = set()
        self.prints: Value | None = None
        self.visited: set[tuple[int, int, int, str]] = set()
        self.tree_id = 0
        self.st: State = State((cwd,))          # the state word evaluation reads
        self.loop_depth = 0                      # inside a loop body
        self.function_depth = 0                  # inside a function body
        self.inv: Invocation | None = None       # the simple command being analysed
        self.source = ""                         # the whole command's text
        self.workspaces: tuple[str, ...] = ()    # the project folder's spellings (through_made)
        self.active: dict[int, str] = {}         # invocations that write or are above the lowest class: id -> what
        self.held: list[Invocation] = []         # those invocations, kept alive so that no id is reused
        self.rewriting: list[tuple[str, list[Value], Invocation, bool]] = []  # (subcommand, words, invocation,
        # whether its repository, work tree or settings were changed for the run)

    # -- results ------------------------------------------------------------------------------

    def result(self) -> Analysis:
        order = self.table
        kind = max((c for c, _ in self.classes), key=order.rank, default=order.lowest())
        if kind == order.unknown or kind in order.opaque:  # what runs unseen code must not name a protected zone
            self.inv = None
            unquoted = re.sub(r"[\"'\\]", "", self.source)  # `hooks""Path` is hooksPath to the shell
            self.mentions(self.source + "\n" + unquoted, f"the command ({kind}: it runs code the analysis does not see)",
                          None)
        return Analysis(kind, self.sudo, self.pipes, ordered(self.touches),
                        tuple(dict.fromkeys(self.lines)) or ("only variable assignments",), tuple(self.exact),
                        tuple(self._rewrite(sub, w, inv, moved=m) for sub, w, inv, m in self.rewriting),
                        tuple(self.globbed), tuple(self.fresh), self._brought(), tuple(self.above),
                        tuple(self.leading), words=tuple(self.expanded), background=self.background)

    def _brought(self) -> tuple[Brought, ...]:
        out: list[Brought] = []
        for inv, folders, sources, recursive in self.brings:
            chosen = (tuple(dict.fromkeys(self.read_by.get(id(inv), ()))) or ("",)) if sources is None else sources
            alone = not any(who != id(inv) and (not path or any(_overlap(path, src) for src in chosen))
                            for who, path in self.written_by)
            out.extend(Brought(f, chosen, sources is None, recursive, alone) for f in folders)
        return tuple(dict.fromkeys(out))

    def rewrites_tree(self, sub: str, inv: Invocation, before: list[Value] | None = None) -> None:
        """`inv` runs git's `sub`, which may rewrite its work tree: called before the subcommand's own words are
        classified, so an unknown class so far comes from git's options or the environment (-c, --git-dir,
        --work-tree, GIT_DIR=...)."""
        moved = self.active.get(id(inv)) == "unknown" or bool(inv.repositories) or any(
            n.startswith("GIT_") for n in inv.env)
        self.rewriting.append((sub, [*(before or []), *inv.args], inv, moved))

    def _rewrite(self, sub: str, words: list[Value], inv: Invocation, *, moved: bool) -> Rewrite:
        cwd = normalise(inv.cwds[0]) if inv.cwds is not None and len(inv.cwds) == 1 else None
        others = [what for k, what in self.active.items() if k != id(inv)]
        why = ("it runs more than once, or beside another such git command" if len(self.rewriting) > 1 else
               f"{others[0]} may change the repository first" if others else
               "a word of it is not known before it runs" if any(not w.static for w in words) else
               "its working directory is not known" if cwd is None else
               "it names its repository or work tree, or changes git's settings" if moved else "")
        return Rewrite(sub, tuple(w.text if w.static else None for w in words), cwd, why)

    def note(self, phrase: str) -> None:
        if self.inv is not None:
            self.inv.phrases.append(phrase)
        else:
            self.lines.append(phrase)

    def classify(self, cls: str, why: str) -> None:
        self.classes.append((cls, why))
        if cls != self.table.lowest():
            key = self._active(self.inv)
            self.active[key] = "unknown" if cls == self.table.unknown else self.active.get(key) or (
                f"`{self.inv.name}`" if self.inv is not None else f"a {cls} step")
        if cls != self.table.lowest() or why:
            self.note(f"{cls}" + (f" ({why})" if why else ""))

    def _active(self, inv: Invocation | None) -> int:
        if inv is None:
            return 0
        if id(inv) not in self.active:
            self.held.append(inv)
        return id(inv)

    def unknown(self, why: str) -> None:
        self.classify(self.table.unknown, why)

    def mentions(self, text: str, what: str, inv: Invocation | None) -> None:
        """Text the analysis cannot follow (inline code, a sed or awk program, an unknown program's words,
        a script the command writes and runs): each zone of zones.toml's [mentions] it names, by one of
        its names (case-insensitively) or by a path in it, counts as a write of that zone. Defence in
        depth, not analysis: code can build any name."""
        if not self.zones.mentions:
            return
        found: list[tuple[str, str]] = []    # (zone, what names it)
        folded = text.casefold()
        for zone, pattern in self.zones.mention_patterns:
            hit = pattern.search(folded)
            if hit is not None:
                found.append((zone, f"mentions {hit.group(0)!r}"))
        for d in (inv.cwds or ()) if inv is not None else ():  # relative paths are in its working directory
            found.extend((z, f"runs in {d}") for z in self.zones.of(split_pattern(_escape(normalise(d))),
                                                                     dot_rule=False))
        cwds = inv.cwds if inv is not None else self.st.cwds
        for word in _PATHISH.findall(text)[:64]:
            for p in self.joined(word, cwds):
                comps = split_pattern(_escape(normalise(p))) if p is not None else ()
                if comps and len(comps) <= MAX_COMPONENTS:
                    found.extend((z, f"names the path {word}") for z in self.zones.of(comps, dot_rule=False))
        protected = {z for z, _ in self.zones.mentions}
        for zone, how in found:
            if zone in protected and ("write", zone) not in self.touches:
                self.touches[("write", zone)] = f"{what} {how}"
                self.note(f"{what} {how}: counted as a write of {zone}")

    def pipe_to_shell(self, why: str) -> None:
        self.pipes = True
        self.note(f"pipes to a shell: {why}")

    # -- depth and the safety net ---------------------------------------------------------------

    def enter(self, node: Any) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            row, col = node.start_point
            raise ExtractionError("extract.shell.nesting", f"{row + 1}:{col + 1}: the command nests deeper than "
                                  f"{MAX_DEPTH} levels")
        if node.type in _TRACKED:
            self.visited.add((self.tree_id, node.start_byte, node.end_byte, node.type))

    def leave(self) -> None:
        self.depth -= 1

    def mark(self, node: Any) -> None:
        """Count a subtree as analysed (it was analysed another way: a backtick re-parsed)."""
        for n in walk_tree(node):
            if n.type in _TRACKED:
                self.visited.add((self.tree_id, n.start_byte, n.end_byte, n.type))

    def check_visited(self, root: Any) -> None:
        stack = [root]
        while stack:
            n = stack.pop()
            if n.type in _TRACKED and (self.tree_id, n.start_byte, n.end_byte, n.type) not in self.visited:
                raise unsupported(n, f"{n.type} (not reached by the analysis)")
            stack.extend(n.children)

    # -- scripts --------------------------------------------------------------------------------

    def script(self, text: str, st: State, io: IO) -> State:
        """Analyse `text` as a shell script (bash -c, eval, a here-document fed to sh...)."""
        if not text.strip():
            return st
        check_text(text)
        tree = parse(text)
        saved, self.tree_id = self.tree_id, self.tree_id + 1000003
        try:
            self.enter(tree.root_node)
            try:
                out = self.sequence(tree.root_node.children, st, io)
            finally:
                self.leave()
            self.check_visited(tree.root_node)
        finally:
            self.tree_id = saved
        return out

    # -- statements -----------------------------------------------------------------------------

    def stmt(self, node: Any, st: State, io: IO) -> State:
        self.count += 1
        if self.count > MAX_STEPS:
            raise ExtractionError("extract.shell.too_complex", f"the command needs more than {MAX_STEPS} steps to "
                                  "analyse")
        self.enter(node)
        try:
            handler = _STATEMENTS.get(node.type)
            if handler is None:
                raise unsupported(node)
            return handler(self, node, st, io)
        finally:
            self.leave()

    def sequence(self, children: list[Any], st: State, io: IO) -> State:
        """Statements one after the other; a statement followed by `&` runs in the background."""
        nodes = [c for c in children if c.is_named and c.type != "comment"]
        for i, c in enumerate(nodes):
            nxt = c.next_sibling
            if nxt is not None and nxt.type == "&":
                self.background = True
                if self.loop_depth or self.function_depth:
                    self.repeats("starts a background job inside a loop or a function")
                self.stmt(c, st.copy(), io)
                continue
            after = self.stmt(c, st, io)
            st = with_cwds(after, st)
        return st

    def s_program(self, node: Any, st: State, io: IO) -> State:
        return self.sequence(node.children, st, io)

    def s_compound(self, node: Any, st: State, io: IO) -> State:
        if node.children and node.children[0].type == "((":
            st = st.copy()
            self.st = st
            self.arith(node)
            return st
        return self.sequence(node.children[1:-1], st, io)

    def s_subshell(self, node: Any, st: State, io: IO) -> State:
        self.sequence(node.children[1:-1], st.copy(), io)
        return st

    def s_list(self, node: Any, st: State, io: IO) -> State:
        """`a && b || c ...`: tree-sitter nests the chain to the left; it is walked as a sequence so a
        long chain is not a deep one."""
        chain: list[tuple[str, Any]] = []
        while node.type == "list":
            named = [c for c in node.children if c.is_named and c.type != "comment"]
            ops = [c.type for c in node.children if c.type in ("&&", "||")]
            if len(named) != 2 or len(ops) != 1:
                raise unsupported(node, "a list")
            chain.append((ops[0], named[1]))
            node = named[0]
        success = self.stmt(node, st, io)    # the state when every command so far succeeded
        seen = with_cwds(success, st)         # every state the chain may stop in
        for op, right in reversed(chain):
            after = self.stmt(right, success if op == "&&" else seen, io)
            success = after if op == "&&" else with_cwds(after, success)
            seen = with_cwds(seen, after)
        return with_cwds(success, seen)

    def join(self, left: Any, op: str, right: Callable[[State], State], st: State, io: IO) -> State:
        """`left && right` / `left || right`; `left` is a node or a function of the state. After a
        `cd` that may have failed, both directories stay possible."""
        after_left = left(st) if callable(left) else self.stmt(left, st, io)
        if op == "&&":
            return with_cwds(right(after_left), after_left, st)
        return with_cwds(right(with_cwds(after_left, st)), after_left, st)

    def s_pipeline(self, node: Any, st: State, io: IO) -> State:
        stages = [c for c in node.children if c.is_named and c.type != "comment"]
        return self.pipeline([functools.partial(self._stage, c) for c in stages], st, io)

    def _stage(self, node: Any, st: State, io: IO) -> None:
        self.stmt(node, st, io)
        if not single_command(node):
            self.prints = None

    def pipeline(self, stages: list[Callable[[State, IO], Any]], st: State, io: IO) -> State:
        data: Value | None = None
        for i, run in enumerate(stages):
            self.prints = None
            run(st.copy(), io if i == 0 else IO("pipe", data or Value.unknown("the output of a command", stream=True)))
            data = self.prints
        self.prints = data
        return st

    def s_negated(self, node: Any, st: State, io: IO) -> State:
        return self.sequence(node.children[1:], st, io)

    def s_redirected(self, node: Any, st: State, io: IO) -> State:
        body = node.child_by_field_name("body")
        redirects, stages, op, right = [], [], None, None
        for i, c in enumerate(node.children):
            if node.field_name_for_child(i) == "redirect":
                redirects.append(c)
                if c.type == "heredoc_redirect":
                    more, stages_c, op_c, right_c = self._heredoc_tail(c)
                    redirects.extend(more)
                    stages.extend(stages_c)
                    op, right = (op_c, right_c) if op_c else (op, right)
            elif c.is_named and c != body and c.type != "comment":
                raise unsupported(c, f"{c.type} after a redirection")
        if body is None:  # `> file` alone: the redirections still happen
            self.redirects(redirects, st, io)
            return st

        def first(s: State, i: IO = io) -> State:
            return self.with_tail(body, redirects, s, i)

        def chain(s: State) -> State:
            if not stages:
                return first(s)
            return self.pipeline([lambda s2, i2: first(s2, i2)] +
                                 [functools.partial(self._stage, n) for n in stages], s, io)

        if op is None:
            return chain(st)
        return self.join(chain, op, lambda s: self.stmt(right, s, io), st, io)

    def _heredoc_tail(self, hd: Any) -> tuple[list[Any], list[Any], str | None, Any]:
        """tree-sitter puts the rest of a here-document's line inside it: extra redirections, the
        rest of a pipeline, or `&& ...` / `|| ...`."""
        redirects, stages, op, right = [], [], None, None
        for i, c in enumerate(hd.children):
            fname = hd.field_name_for_child(i)
            if c.type in ("<<", "<<-", "heredoc_start", "heredoc_body", "heredoc_end") or fname == "operator":
                if fname == "operator":
                    op = c.type
                continue
            if fname == "redirect":
                redirects.append(c)
            elif fname == "right":
                right = c
            elif c.type == "pipeline" and c.children and c.children[0].type in ("|", "|&"):
                stages.extend(self._flat_stages(c))
            else:
                raise unsupported(c, f"{c.type} after a here-document")
        return redirects, stages, op, right

    def _flat_stages(self, node: Any) -> list[Any]:
        out = []
        for c in node.children:
            if not c.is_named or c.type == "comment":
                continue
            if c.type == "pipeline":
                out.extend(self._flat_stages(c))
            elif c.type == "list":
                raise unsupported(c, "a list after a here-document in a pipeline (put the here-document on its "
                                     "own line)")
            else:
                out.append(c)
        return out

    def with_tail(self, node: Any, redirects: list[Any], st: State, io: IO) -> State:
        """tree-sitter hangs `a && b > f` and `a | b > f` as a redirection of the whole list or
        pipeline; bash gives it to the last command only."""
        if node.type not in ("list", "pipeline"):
            return self.with_redirects(node, redirects, st, io)
        self.enter(node)
        try:
            named = [c for c in node.children if c.is_named and c.type != "comment"]
            if node.type == "list":
                ops = [c.type for c in node.children if c.type in ("&&", "||")]
                if len(named) != 2 or len(ops) != 1:
                    raise unsupported(node, "a list")
                return self.join(named[0], ops[0], lambda s: self.with_tail(named[1], redirects, s, io), st, io)
            stages: list[Callable[[State, IO], Any]] = [functools.partial(self._stage, c) for c in named[:-1]]
            stages.append(lambda s, i: self.with_tail(named[-1], redirects, s, i))
            return self.pipeline(stages, st, io)
        finally:
            self.leave()

    def with_redirects(self, body: Any, redirects: list[Any], st: State, io: IO) -> State:
        io, extra = self.redirects(redirects, st, io)
        if extra:
            if body.type != "command":
                raise unsupported(body, "words after a redirection of a compound command")
            return self.s_command(body, st, io, extra)
        return self.stmt(body, st, io)

    def s_if(self, node: Any, st: State, io: IO) -> State:
        branches: list[State] = []
        cond_end = st

        def clause(children: list[Any], start: State) -> tuple[State, State]:
            names = [c.type for c in children]
            k = names.index("then") if "then" in names else 0
            cond = self.sequence(children[:k], start, io) if k else start
            body = [c for c in children[k + 1:] if c.type not in ("elif_clause", "else_clause", "fi")]
            return cond, self.sequence(body, cond, io)

        cond_end, out = clause(node.children[1:], st)
        branches.append(out)
        has_else = False
        for c in node.children:
            if c.type == "elif_clause":
                self.enter(c)
                cond_end, out = clause(c.children[1:], cond_end)
                self.leave()
                branches.append(out)
            elif c.type == "else_clause":
                self.enter(c)
                branches.append(self.sequence(c.children[1:], cond_end, io))
                self.leave()
                has_else = True
        if not has_else:
            branches.append(cond_end)
        return merge(branches)

    def s_while(self, node: Any, st: State, io: IO) -> State:
        body = node.child_by_field_name("body")
        conds = [c for i, c in enumerate(node.children) if node.field_name_for_child(i) == "condition"]

        def once(s: State) -> State:
            s = self.sequence(conds, s, io)
            return self.stmt(body, s, io)

        self.repeats(f"a {node.children[0].type} loop runs any number of times")
        return self.loop(once, st)

    def s_do_group(self, node: Any, st: State, io: IO) -> State:
        return self.sequence(node.children[1:-1], st, io)

    def s_for(self, node: Any, st: State, io: IO) -> State:
        var = node.child_by_field_name("variable")
        body = node.child_by_field_name("body")
        words = [c for i, c in enumerate(node.children) if node.field_name_for_child(i) == "value"]
        name = var.text.decode("utf-8")
        if words:
            items: list[Value] = []
            for w in words:
                items.extend(self.words_of(w, st))
        else:
            items = list(st.positional[1:]) if st.positional is not None else \
                [Value.unknown("the arguments of the script", multi=True)]
        limit = self.table.loops.max_runs if self.table.loops is not None else 0
        if len(items) > limit or any(v.multi and v.pattern is None for v in items):
            self.repeats(f"a for loop over more than {limit} words" if len(items) > limit else
                         "a for loop over words the analysis cannot count")
        if len(items) > MAX_LOOP_WORDS:
            items = [Value.unknown(f"one of {len(items)} words")]

        def once(s: State) -> State:
            runs = []
            for item in items or [Value.of("")]:
                s2 = s.copy()
                s2.vars[name] = replace(item, multi=False)
                runs.append(self.stmt(body, s2, io))
            return merge(runs)

        return self.loop(once, st)

    def s_c_for(self, node: Any, st: State, io: IO) -> State:
        body = node.child_by_field_name("body")
        st = st.copy()
        self.st = st
        for c in node.children:
            if c.is_named and c != body:
                self.arith(c)
        self.repeats("a C-style for loop runs any number of times")
        return self.loop(lambda s: self.stmt(body, s, io), st)

    def repeats(self, why: str) -> None:
        """Repetition the analysis cannot bound: the [loops] class of the command table, if it has one."""
        if self.table.loops is not None:
            self.classify(self.table.loops.cls, why)

    def loop(self, once: Callable[[State], State], st: State) -> State:
        """A loop body runs any number of times: iterate to a fixed point, then widen."""
        current = st
        for _ in range(3):
            self.loop_depth += 1
            try:
                nxt = merge([current, once(current.copy())])
            finally:
                self.loop_depth -= 1
            if nxt.key() == current.key():
                return nxt
            current = nxt
        widened = current.copy()
        if widened.cwds != st.cwds:
            widened.cwds = None
        for name, v in list(widened.vars.items()):
            if st.vars.get(name) != v:
                widened.vars[name] = Value.unknown(f"${name} changes in a loop")
        return widened

    def s_case(self, node: Any, st: State, io: IO) -> State:
        value = node.child_by_field_name("value")
        if value is not None:
            self.words_of(value, st)
        branches = [st]
        for item in node.children:
            if item.type != "case_item":
                continue
            self.enter(item)
            body: list[Any] = []
            seen_paren = False
            for i, c in enumerate(item.children):
                if item.field_name_for_child(i) == "value":
                    self.words_of(c, st)
                elif c.type == ")":
                    seen_paren = True
                elif seen_paren and c.is_named:
                    body.append(c)
            branches.append(self.sequence(body, st.copy(), io))
            self.leave()
        return merge(branches)

    def s_function(self, node: Any, st: State, io: IO) -> State:
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        fname = name.text.decode("utf-8") if name is not None else "?"
        self.inv = None
        self.unknown(f"defines the function {fname}: what its calls do is not followed")
        inner = st.copy()
        inner.functions = st.functions | {fname}   # inside its body, the name calls the function itself
        self.function_depth += 1
        try:
            self.stmt(body, inner, io)
        finally:
            self.function_depth -= 1
        out = st.copy()
        out.functions = st.functions | {fname}
        return out

    def s_test(self, node: Any, st: State, io: IO) -> State:
        arithmetic = any(n.text.decode("utf-8") in ARITH_TESTS for n in walk_tree(node) if n.type == "test_operator")
        for n in walk_tree(node):
            if n.type == "test_operator" and n.text == b"-v" and n.next_named_sibling is not None:
                name = n.next_named_sibling.text.decode("utf-8", "replace")
                if not re.fullmatch(r"[A-Za-z_]\w*", name):
                    self.unknown(f"-v {name}: a subscript is evaluated as arithmetic")
        for n in walk_tree(node):
            if n.type in ("simple_expansion", "expansion") and arithmetic:
                name = next((c.text.decode("utf-8") for c in n.children if c.type == "variable_name"), "")
                if not self._integer(name, st):
                    self.unknown(f"compares ${name} as a number, which evaluates its text")
        self.st = st
        self.effects(node)
        return st

    def s_declaration(self, node: Any, st: State, io: IO) -> State:
        keyword = node.children[0].type
        flags: set[str] = set()
        out = st.copy()
        exported = keyword == "export"
        named = [c for c in node.children[1:] if not (c.type == "word" and c.text.decode("utf-8")[:1] in "-+")]
        if not named and keyword in ("export", "declare", "typeset", "readonly", "local"):
            self.read_environment(f"{keyword} without a name")   # prints the variables and their values
        for c in node.children[1:]:
            if c.type == "word" and c.text.decode("utf-8")[:1] in "-+":
                flags.update(c.text.decode("utf-8")[1:])
                continue
            if c.type == "variable_assignment":
                self.enter(c)
                name = self.assign(c, out)
                self.leave()
            elif c.type == "variable_name":
                name = c.text.decode("utf-8")
                if name not in out.vars and self.table.secret(name) and ("p" in flags or keyword == "readonly"):
                    self.read_environment(f"{keyword} -p {name}")
            else:
                self.st = out
                self.effects(c)
                self.unknown(f"{keyword} of a name the analysis cannot read")
                out.opaque = f"{keyword} of an unknown name"
                continue
            if exported or "x" in flags:
                if not self.table.harmless(name):
                    self.unknown(f"exports {name}, which may change what later programs do")
                if name in self.table.env_runs and name in out.vars:
                    self.env_runs(name, out.vars[name], Invocation(keyword, [], out, io, out.cwds))
            if flags & set("aAinluf"):
                out.vars[name] = Value.unknown(f"{keyword} -{''.join(sorted(flags))} {name}")
                if flags & set("inf"):
                    self.unknown(f"{keyword} -{''.join(sorted(flags))}: an attribute the analysis does not follow")
        return out

    def s_unset(self, node: Any, st: State, io: IO) -> State:
        out = st.copy()
        functions = any(c.text.decode("utf-8") == "-f" for c in node.children[1:])
        for c in node.children[1:]:
            text = c.text.decode("utf-8")
            if text.startswith("-") and c.type == "word":
                continue
            if c.type in ("variable_name", "word") and re.fullmatch(r"[A-Za-z_]\w*", text):
                if functions:
                    out.functions = out.functions - {text}
                else:
                    out.vars[text] = Value.of("")
            else:
                self.st = out
                self.effects(c)
                self.unknown(f"unset {text}: a name the analysis cannot follow")
        return out

    def s_assignment(self, node: Any, st: State, io: IO) -> State:
        out = st.copy()
        self.assign(node, out)
        return out

    def s_assignments(self, node: Any, st: State, io: IO) -> State:
        out = st.copy()
        for c in node.named_children:
            self.enter(c)
            self.assign(c, out)
            self.leave()
        return out

    def assign(self, node: Any, st: State) -> str:
        """`name=value` (or `+=`) into `st`; returns the name."""
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        self.st = st
        if name_node is None or name_node.type != "variable_name":
            if name_node is not None:
                self.effects(name_node)
            if value_node is not None:
                self.effects(value_node)
            name = name_node.child_by_field_name("name").text.decode("utf-8") \
                if name_node is not None and name_node.child_by_field_name("name") is not None else "?"
            st.vars[name] = Value.unknown(f"${name} is an array")
            return name
        name = name_node.text.decode("utf-8")
        if value_node is not None and value_node.type == "array":
            self.effects(value_node)
            st.vars[name] = Value.unknown(f"${name} is an array")
            return name
        value = assignment_value(value_node, self, self.home_value(st), self.pwd_value(st))
        if any(c.type == "+=" for c in node.children):
            old = self.var(name)
            value = Value.of(old[0].text + value.text) if len(old) == 1 and old[0].text is not None \
                and value.text is not None else Value.unknown(f"${name} appended to")
        if name in self.table.shell_variables:
            self.unknown(f"assigns {name}, which changes how the shell runs what follows")
            st.loose_glob = True
        st.vars[name] = value
        return name

    # -- simple commands ------------------------------------------------------------------------

    def s_command(self, node: Any, st: State, io: IO, extra: list[Any] | None = None) -> State:
        assigns: list[Any] = []
        word_nodes: list[Any] = []
        redirects: list[Any] = []
        for i, c in enumerate(node.children):
            fname = node.field_name_for_child(i)
            if c.type == "variable_assignment":
                assigns.append(c)
            elif fname == "redirect":
                redirects.append(c)
            elif fname == "name":
                word_nodes.append(c.named_children[0] if c.named_children else c)
            elif fname == "argument" or c.type == "$":
                word_nodes.append(c)
            elif c.type == "comment":
                continue
            else:
                raise unsupported(c, f"{c.type} in a command")
        word_nodes.extend(extra or [])
        io, more = self.redirects(redirects, st, io)
        word_nodes.extend(more)
        self.st = st
        env_assigns = []
        for a in assigns:
            self.enter(a)
            tmp = st.copy()
            name = self.assign(a, tmp)
            env_assigns.append((name, tmp.vars.get(name, Value.unknown(""))))
            self.leave()
        self.st = st
        words = self.words(word_nodes, st)
        if not word_nodes:
            out = st.copy()
            for a in assigns:
                self.assign(a, out)
            return out
        label = node.text.decode("utf-8", "replace").split("\n")[0][:80]
        return self.run(words, st, io, env_assigns, label)

    def words(self, nodes: list[Any], st: State) -> list[Value]:
        """The words of a command; adjacent nodes are one word (as bash reads them)."""
        groups: list[list[Any]] = []
        for n in nodes:
            if groups and groups[-1][-1].end_byte == n.start_byte and n.type != "heredoc_redirect":
                groups[-1].append(n)
            else:
                groups.append([n])
        out: list[Value] = []
        self.st = st
        for g in groups:
            toks = []
            for n in g:
                toks.extend(tokens(n, self))
            out.extend(values(toks, self.home_value(st), self.pwd_value(st)))
        self.note_expanded(out)
        return out

    def note_expanded(self, vals: list[Value]) -> None:
        """Keeps the text of words as the shell expands them, where it is known (Analysis.words)."""
        self.expanded[" ".join(v.text for v in vals if v.text is not None)] = None

    def words_of(self, node: Any, st: State) -> list[Value]:
        return self.words([node], st)

    # -- paths and zones --------------------------------------------------------------------------

    def chdir(self, target: Value, cwds: tuple[str, ...] | None) -> tuple[str, ...] | None:
        """The directories `cd TARGET` may go to, each with its `..` kept: after a symbolic link, `..` is the parent
        of where the link leads (`cd -P`, and bash's `cd` where the lexical folder does not exist), which only the
        disk can tell (shell.through_links reads both)."""
        if not target.static:
            return None
        paths = self.joined(target.text or "", cwds)
        if not paths or None in paths:
            return None
        return tuple(dict.fromkeys(kept(p) for p in paths if p is not None))

    def paths(self, value: Value, cwds: tuple[str, ...] | None) -> list[str | None]:
        """The absolute, normalised paths a static value may name (None: cannot tell)."""
        assert value.text is not None
        return [normalise(p) if p is not None else None for p in self.joined(value.text, cwds)]

    def joined(self, text: str, cwds: tuple[str, ...] | None) -> list[str | None]:
        """`text` made absolute, not normalised yet. A `~` still there (quoted, or after `=`) may be
        expanded by the program itself: both readings count."""
        out: list[str | None] = []
        if text.startswith("~"):
            head, _, rest = text[1:].partition("/")
            out.append(self.home + "/" + rest if head == "" else None)
        if text.startswith("/"):
            out.append(text)
        elif cwds is None:
            out.append(None)
        else:
            out.extend(c + "/" + text for c in cwds)
        return out

    def touch(self, accesses: tuple[str, ...], value: Value, inv: Invocation | None, *, recursive: bool) -> None:
        accesses = tuple(a for a in accesses if a in ACCESSES)
        if not accesses or value.pipe:
            return
        cwds = inv.cwds if inv is not None else self.st.cwds
        loose = inv.st.loose_glob if inv is not None else False
        targets: list[tuple[str, Any]] = []
        self.reads_and_writes(accesses, value, inv, cwds)
        if value.text is None:
            if value.under:
                targets = [(normalise(d) + "/…", split_pattern(_escape(normalise(d))) + (STAR2,)) for d in value.under]
                self.exact.update(dict.fromkeys((accesses, d, True) for d in value.under))
            else:
                targets = [(f"<{value.reason or 'unknown'}>", None)]
        elif value.text in ("", "-"):
            return
        else:
            raw = [_escape(p) if p is not None else None for p in self.joined(value.text, cwds)] \
                if value.pattern is None else self.pattern_paths(value, cwds)
            for p in raw:
                if p is None:
                    targets.append((f"{value.text} (cannot be resolved)", None))
                    continue
                comps = split_pattern(p)
                if len(comps) > MAX_COMPONENTS or self.zones.through_link(comps):
                    targets.append((f"{value.text} (cannot be resolved)", None))
                    continue
                if value.pattern is None and self.zones.no_data_path(_dotdot(comps)):
                    self.note(f"{value.text}: holds no data")
                    continue
                given, comps = comps, _dotdot(comps)
                if value.pattern is None and not any(c.glob for c in comps):
                    self.exact[accesses, "/" + "/".join(c.text for c in comps), recursive] = None
                    if _climbs(given):
                        self.exact[accesses, "/" + "/".join(c.text for c in given), recursive] = None
                else:
                    self.globbed[accesses, comps, recursive] = None
                    if _climbs(given):
                        self.globbed[accesses, given, recursive] = None
                self.through_made(accesses, "/" + "/".join(c.text for c in given), inv, recursive=recursive)
                if recursive and "write" in accesses and not (inv is not None and inv.builds):
                    self.made.append((inv, "/" + "/".join(c.text for c in comps)))
                if recursive and "write" in accesses:
                    # a folder written whole is a write of its own name too (`mv /tmp/x sub/.envrc`, `cp -r /tmp/x
                    # sub/.claude`): zones.toml's [nested] names meet a path a command names, which a `**` after it hid
                    targets.append(("/" + "/".join(c.text for c in comps), comps))
                if recursive:
                    comps = comps + (STAR2,)
                targets.append(("/" + "/".join(c.text for c in comps), comps))
        if targets and set(accesses) - {"read"}:
            self.active.setdefault(self._active(inv), f"`{inv.name}`" if inv is not None else "a redirection that writes")
        for shown, comps in targets:
            zones = [self.zones.unresolved] if comps is None else self.zones.of(comps, dot_rule=not loose)
            for zone in zones:
                for a in accesses:
                    self.touches.setdefault((a, zone), shown)
            if zones:
                self.note(f"{'+'.join(accesses)} {shown}{' (recursive)' if recursive else ''}: {', '.join(zones)}")

    def reads_and_writes(self, accesses: tuple[str, ...], value: Value, inv: Invocation | None,
                         cwds: tuple[str, ...] | None) -> None:
        """What each step writes and reads (the sources of Commands.bring: a source another step writes may not be on
        disk yet; an unpacking step takes its files from what it reads)."""
        if value.text in ("", "-"):
            return
        if value.text is None:
            found: list[str | None] = [None]
        elif value.pattern is None:
            found = [_escape(p) if p is not None else None for p in self.joined(value.text, cwds)]
        else:
            found = self.pattern_paths(value, cwds)
        if set(accesses) - {"read"}:
            who = self._active(inv)   # kept alive: its id names it
            self.written_by.extend((who, p or "") for p in found)
        if "read" in accesses and inv is not None:
            self._active(inv)
            self.read_by.setdefault(id(inv), []).extend(p or "" for p in found)

    def links_made(self, value: Value, inv: Invocation) -> None:
        """`value` may be a symbolic link `inv` makes (`ln -s T LINK`, `cp -P`, a copy put into a folder)."""
        for p in self.paths(value, inv.cwds) if value.static else []:
            if p is not None:
                self.made.append((inv, p))

    def through_made(self, accesses: tuple[str, ...], path: str, inv: Invocation | None, *, recursive: bool) -> None:
        """Record `path` (as written, `..` kept) when it goes through a folder an earlier step may have put links in,
        or reads or writes such a folder recursively, or changes something outside the project after a step may have
        put links in it (`ln -s /tmp/x sub && echo x > /tmp/x/.envrc` writes sub/.envrc: shell_mounts finds such
        links on disk, and this one is not there yet)."""
        path, lexical = kept(path), normalise(path)
        walked = recursive and bool({"read", "write"} & set(accesses))
        # (a wildcard in `path` stays one: it may match a protected name)
        elsewhere = lands_in_links(accesses, split_pattern(lexical), self.zones, self.workspaces, recursive=recursive)
        for step, folder in self.made:
            if step is inv:
                continue
            inside = path.startswith(folder.rstrip("/") + "/") or lexical.startswith(folder.rstrip("/") + "/")
            above = walked and (lexical == folder or folder.startswith(lexical.rstrip("/") + "/"))
            into = elsewhere and (within(folder, self.workspaces) or any(within(w, (folder,)) for w in self.workspaces))
            if inside or above or into:
                self.fresh[accesses, path, folder] = None
                return

    def pattern_paths(self, value: Value, cwds: tuple[str, ...] | None) -> list[str | None]:
        assert value.pattern is not None
        pat = value.pattern
        out: list[str | None] = []
        if pat.startswith("~"):
            head, _, rest = pat[1:].partition("/")
            out.append(_escape(self.home) + "/" + rest if head == "" else None)
        if pat.startswith("/"):
            out.append(pat)
        elif cwds is None:
            out.append(None)
        else:
            out.extend(_escape(c) + "/" + pat for c in cwds)
        return out

    # -- Env: what word evaluation needs ---------------------------------------------------------

    def home_value(self, st: State) -> Value:
        v = st.vars.get("HOME")
        return v if v is not None else Value.of(self.home)

    def pwd_value(self, st: State) -> Value:
        if "PWD" in st.vars:
            return st.vars["PWD"]
        return Value.of(normalise(st.cwds[0])) if st.cwds is not None and len(st.cwds) == 1 else \
            Value.unknown("the working directory is not known")

    def var(self, name: str) -> tuple[Value, ...]:
        st = self.st
        if name.isdigit():
            if st.positional is None:
                return (Value.unknown(f"${name}, an argument of the script"),)
            k = int(name)
            return (st.positional[k],) if k < len(st.positional) else (Value.of(""),)
        if name in ("@", "*"):
            if st.positional is None:
                return (Value.unknown("the arguments of the script", multi=True),)
            return tuple(st.positional[1:])
        if name in ("#", "?", "$", "!"):
            return (Value.unknown(f"${name}", numeric=True),)
        if name in ("-", "_"):
            return (Value.unknown(f"${name}"),)
        if name in st.vars:
            return (st.vars[name],)
        if st.opaque:
            return (Value.unknown(f"${name} after {st.opaque}"),)
        if name == "HOME":
            return (self.home_value(st),)
        if name == "PWD":
            return (self.pwd_value(st),)
        if self.table.secret(name):
            self.read_environment(f"${name}")
        return (Value.unknown(f"${name} comes from the environment"),)

    def read_environment(self, what: str) -> None:
        """`what` shows the value of secret variables (or all of them): a read of the process environment,
        which the zone map places among the credentials."""
        if self.table.environ:
            self.touch(("read",), Value.of(self.table.environ), None, recursive=False)
            self.note(f"{what} reads the environment's credentials")

    def assign_unknown(self, name: str, reason: str) -> None:
        self.st.vars[name] = Value.unknown(reason)

    def substitute(self, node: Any) -> Value:
        st, inv = self.st, self.inv
        self.inv = None
        self.enter(node)
        try:
            self.note("runs a command substitution:")
            self.prints = None
            inner = node.children[1:-1]
            named = [c for c in inner if c.is_named and c.type != "comment"]
            printed: Value | None = None
            if node.children[0].type == "`":
                self.mark(node)
                self.script(backtick_text(node), st.copy(), IO())
            elif len(named) == 1 and named[0].type == "file_redirect":
                self.redirects(named, st.copy(), IO())
            else:
                self.sequence(inner, st.copy(), IO())
                printed = self.prints if len(named) == 1 and single_command(named[0]) else None
        finally:
            self.leave()
            self.inv, self.st = inv, st
        text = node.text.decode("utf-8", "replace")[:50]
        return Value.unknown(f"the output of {text}", stream=True,
                             under=printed.under if printed is not None else ())

    def process(self, node: Any) -> Value:
        st, inv = self.st, self.inv
        self.inv = None
        self.enter(node)
        try:
            io = IO("pipe", Value.unknown("the output of a command", stream=True)) \
                if node.children[0].type == ">(" else IO()
            self.sequence(node.children[1:-1], st.copy(), io)
        finally:
            self.leave()
            self.inv, self.st = inv, st
        return Value.unknown(f"the pipe {node.text.decode('utf-8', 'replace')[:40]}", pipe=True, stream=True)

    def arith(self, node: Any) -> Value:
        """Arithmetic evaluates the text of every variable it names (`x='a[$(cmd)]'; $((x))` runs cmd):
        each must hold an integer the analysis knows of. Substitutions inside are analysed."""
        st = self.st
        for n in walk_tree(node):
            if n.type in ("command_substitution", "process_substitution"):
                (self.substitute if n.type == "command_substitution" else self.process)(n)
                continue
            if n.type not in ("variable_name", "word") or (n.parent is not None and n.parent.type in (
                    "simple_expansion", "expansion")):
                if n.type in ("simple_expansion", "expansion"):
                    name = next((c.text.decode("utf-8") for c in n.children if c.type == "variable_name"), "")
                    if not self._integer(name, st):
                        self.unknown(f"arithmetic on ${name}, whose text would be evaluated")
                continue
            text = n.text.decode("utf-8", "replace")
            if re.fullmatch(r"\d+|0[xX][0-9a-fA-F]+|\d+#\w+", text):
                continue
            if not re.fullmatch(r"[A-Za-z_]\w*", text):
                self.unknown(f"arithmetic on {text!r}, which the analysis does not follow")
            elif _assigned_in_arith(n):
                st.vars[text] = Value.unknown(f"${text} set by arithmetic", numeric=True)
            elif not self._integer(text, st):
                self.unknown(f"arithmetic on ${text}, whose text would be evaluated")
        self.mark(node)
        return Value.unknown("an arithmetic result", numeric=True)

    def index(self, node: Any) -> None:
        """An arithmetic context outside $((...)): a subscript or a substring offset."""
        text = node.text.decode("utf-8", "replace")
        if node.type == "number" or text in ("@", "*") or re.fullmatch(r"-?\d+", text):
            return
        if node.type in ("word", "variable_name") and re.fullmatch(r"[A-Za-z_]\w*", text):
            if not self._integer(text, self.st):
                self.unknown(f"uses ${text} as a number, which evaluates its text")
            return
        self.arith(node)

    def risky(self, reason: str) -> None:
        self.unknown(reason)

    def _integer(self, name: str, st: State) -> bool:
        if not name:
            return False
        v = st.vars.get(name)
        if v is None:
            return False
        return v.numeric or (v.text is not None and re.fullmatch(r"\s*-?\d+\s*", v.text) is not None)

    def effects(self, node: Any) -> None:
        """Analyse what runs inside a node whose value is not needed (substitutions, arithmetic)."""
        for c in node.children:
            if c.type == "command_substitution":
                self.substitute(c)
            elif c.type == "process_substitution":
                self.process(c)
            elif c.type in ("arithmetic_expansion",):
                self.arith(c)
            elif c.type == "regex" and _EXPANDS.search(c.text.decode("utf-8", "replace")):
                # tree-sitter keeps a pattern (${x#PAT}, ${x^^PAT}, [[ x =~ PAT ]]) as one leaf; bash expands it
                self.risky(f"the pattern {c.text.decode('utf-8', 'replace')[:60]!r} holds an expansion the analysis "
                           "does not read (a command substitution runs)")
            else:
                self.enter(c)
                try:
                    self.effects(c)
                finally:
                    self.leave()

    # -- redirections ---------------------------------------------------------------------------

    def redirects(self, nodes: list[Any], st: State, io: IO) -> tuple[IO, list[Any]]:
        extra: list[Any] = []
        self.st = st
        for r in nodes:
            self.enter(r)
            try:
                if r.type == "file_redirect":
                    io, more = self.file_redirect(r, st, io)
                    extra.extend(more)
                elif r.type == "heredoc_redirect":
                    io = self.heredoc(r, st)
                elif r.type == "herestring_redirect":
                    word = [c for c in r.children if c.is_named]
                    if len(word) != 1:
                        raise unsupported(r, "a here-string")
                    vals = values(tokens(word[0], self), self.home_value(st), self.pwd_value(st), split=False)
                    self.note_expanded(vals)
                    io = IO("text", vals[0] if len(vals) == 1 else Value.unknown("a here-string"))
                else:
                    raise unsupported(r)
            finally:
                self.leave()
        return io, extra

    def file_redirect(self, r: Any, st: State, io: IO) -> tuple[IO, list[Any]]:
        op = next((c.type for c in r.children if not c.is_named), "")
        dests = [c for i, c in enumerate(r.children) if r.field_name_for_child(i) == "destination"]
        if not dests:
            raise unsupported(r, "a redirection without a target")
        self.st = st
        vals = values(tokens(dests[0], self), self.home_value(st), self.pwd_value(st))
        target = vals[0] if len(vals) == 1 else Value.unknown("a redirection target of several words")
        shown = r.text.decode("utf-8", "replace")[:40]
        if op in (">&", "<&", ">&-", "<&-") and (target.text is None and target.numeric or
                                                  (target.text is not None and re.fullmatch(r"\d+-?|-", target.text))):
            return io, dests[1:]
        accesses = {"<": ("read",), "<>": ("read", "write")}.get(op, ("write",) if ">" in op else ())
        if not accesses:
            raise unsupported(r, f"the redirection {op}")
        inv = self.inv or Invocation("", [], st, io, st.cwds)
        saved = self.inv
        self.inv = inv
        try:
            self.touch(accesses, target, inv, recursive=False)
        finally:
            self.inv = saved
        if saved is None:
            self.lines.append(f"`{shown}`: " + ", ".join(dict.fromkeys(inv.phrases)))
        if "write" in accesses and target.static:
            for p in self.paths(target, st.cwds):
                if p is not None:
                    self.written.add(p)
        if op == "<":
            return IO("file", target), dests[1:]
        return io, dests[1:]

    def heredoc(self, r: Any, st: State) -> IO:
        start = next((c for c in r.children if c.type == "heredoc_start"), None)
        body = next((c for c in r.children if c.type == "heredoc_body"), None)
        if start is None:
            raise unsupported(r, "a here-document")
        if body is None:
            return IO("text", Value.of(""))
        quoted = bool(re.search(r"['\"\\]", start.text.decode("utf-8")))
        if quoted:
            for c in body.children:
                self.enter(c)
                self.leave()
            return IO("text", Value.of(body.text.decode("utf-8")))
        self.st = st
        vals = values(heredoc_tokens(body, self), self.home_value(st), self.pwd_value(st), split=False)
        self.enter(body)
        self.leave()
        self.note_expanded(vals)
        return IO("text", vals[0] if len(vals) == 1 else Value.unknown("a here-document"))


# ------------------------------------------------------------------------------------------------
# helpers

_PATHISH = re.compile(r"""[^\s'"`()<>|;&,=]*/[^\s'"`()<>|;&,=]*|~[^\s'"`()<>|;&,=]*""")

_TRACKED = frozenset({"command", "command_substitution", "process_substitution", "file_redirect", "heredoc_redirect",
                      "herestring_redirect", "variable_assignment", "function_definition", "subshell"})


_STATEMENTS: dict[str, Callable[[Analyser, Any, State, IO], State]] = {
    "program": Analyser.s_program, "compound_statement": Analyser.s_compound, "subshell": Analyser.s_subshell,
    "list": Analyser.s_list, "pipeline": Analyser.s_pipeline, "negated_command": Analyser.s_negated,
    "redirected_statement": Analyser.s_redirected, "command": Analyser.s_command, "if_statement": Analyser.s_if,
    "while_statement": Analyser.s_while, "for_statement": Analyser.s_for, "c_style_for_statement": Analyser.s_c_for,
    "case_statement": Analyser.s_case, "function_definition": Analyser.s_function, "test_command": Analyser.s_test,
    "declaration_command": Analyser.s_declaration, "unset_command": Analyser.s_unset,
    "variable_assignment": Analyser.s_assignment, "variable_assignments": Analyser.s_assignments,
    "do_group": Analyser.s_do_group,
}



def _assigned_in_arith(n: Any) -> bool:
    p = n.parent
    if p is None:
        return False
    if p.type == "variable_assignment":
        return p.child_by_field_name("name") == n
    ops = [c.type for c in p.children if not c.is_named]
    if p.type == "binary_expression" and p.child_by_field_name("left") == n:
        return any(o in ASSIGN_OPS for o in ops)
    return p.type in ("postfix_expression", "unary_expression") and any(o in ("++", "--") for o in ops)


def _overlap(a: str, b: str) -> bool:
    """Whether two escaped absolute patterns may name the same path, one inside the other (compared up to their
    first wildcard)."""
    x, y = (literal_head(split_pattern(normalise(p))) for p in (a, b))
    return x.startswith(y) or y.startswith(x)


def ordered(touches: Any) -> tuple[tuple[str, str], ...]:
    """(access, zone) pairs in the order an Analysis lists them: by access, then zone."""
    return tuple(sorted(touches, key=lambda p: (ACCESSES.index(p[0]) if p[0] in ACCESSES else 9, p[1])))


def lands_in_links(accesses: tuple[str, ...], target: tuple[Comp, ...], zones: Zones, workspaces: tuple[str, ...], *,
                   recursive: bool) -> bool:
    """Whether a change of `target` outside the project may land on a name the zone map protects in the project,
    through a symbolic link of it not looked at (made by an earlier step, or past the walk's limit: shell_mounts): a
    folder changed whole, a wildcard, or one of the names the map gives under the project (`.envrc`, `.vscode`...);
    `/tmp/log.txt` lands, at worst, on a plain project file."""
    if not set(accesses) - {"read"} or within(literal_head(target).rstrip("/") or "/", workspaces):
        return False
    return recursive or any(c.glob for c in target) or not project_names(zones, workspaces).isdisjoint(
        c.text.casefold() for c in target)


@functools.lru_cache(maxsize=64)
def project_names(zones: Zones, workspaces: tuple[str, ...]) -> frozenset[str]:
    """The literal names the zone map's patterns give under the project folder (`.envrc`, `.vscode`, `tasks.json`,
    `.git`, `config`...), case-folded."""
    heads = [tuple(p.casefold() for p in w.split("/") if p) for w in workspaces]
    names: set[str] = set()
    for _, patterns in (*zones.zones, *zones.nested):
        for z in patterns:
            texts = tuple(c.text.casefold() for c in z)
            for head in heads:
                if texts[:len(head)] == head and not any(c.glob for c in z[:len(head)]):
                    names.update(c.text.casefold() for c in z[len(head):] if not c.glob)
    return frozenset(names)


def within(path: str, folders: tuple[str, ...]) -> bool:
    """Whether `path` is one of `folders` or lies under one (both normalised)."""
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


def kept(path: str) -> str:
    """`path` without `//`, `/./` and a trailing `/`, its `..` kept (but for one at the root)."""
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", ".") or (part == ".." and not parts):
            continue
        parts.append(part)
    return "/" + "/".join(parts)


def _climbs(comps: tuple[Any, ...]) -> bool:
    """Whether a `..` follows a name in `comps`: the name may be a symbolic link, and `..` is then taken from where
    it leads."""
    named = False
    for c in comps:
        if not c.glob and c.text == "..":
            if named:
                return True
        elif not (not c.glob and c.text == "."):
            named = True
    return False


def _dotdot(comps: tuple[Any, ...]) -> tuple[Any, ...]:
    out: list[Any] = []
    for c in comps:
        if not c.glob and c.text == "..":
            if out and not out[-1].star2:
                out.pop()
            continue
        if not c.glob and c.text == ".":
            continue
        out.append(c)
    return tuple(out)
