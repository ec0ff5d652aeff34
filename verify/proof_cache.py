"""Proof cache by content, per file and per function.

A file entry holds the verifier's real reply for one exact source (PROVED, a failure with its
diagnostics, or a translation error; never a timeout, a kill or a crash, which say nothing about the
source). A function entry says that one function was proved; its key is conservative: the function's
own source, the source of every pure function whose body it can see (transitively, through bodies and
contracts), the contracts of every function and everything outside functions (imports, classes).
Nagini verifies modularly (a caller sees its callees' contracts, and the bodies of @Pure functions), so
a function whose key is unchanged needs no new proof; only the others are verified (Nagini's `selected`).
Both keys also bind the verifier's identity (versions, Silicon options, the worker's own code) and the
options that change the answer (the Silicon timeout; a file's key also whether its failures carry counterexample
models, verify.nagini.verify_explained).

An entry is never trusted blindly: it names its key and carries a sha256 of its content; a corrupt,
truncated or mismatched entry is ignored (and reported) and the proof runs again. The self-hash
catches damage, not an attacker who can write the cache directory: `veriguard audit` re-runs Nagini.

The deterministic gates (z3 checks, tests, mutant generation, the frozen classifier) keep their results in
the same store (`through_cache`): kind "z3", "tests", "mutants", "classifier" or "reveals" (what each lemma may look into), keyed by every input the caller names plus
veriguard's own code and the tools' versions (`gate_key`); only results the gate really computed and
that do not depend on the clock are stored.
"""
from __future__ import annotations

import ast
import datetime as dt
import hashlib
import json
import os
import platform
import tempfile
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Protocol, TypeVar

from veriguard.contracts.cache_dir import CACHE_ENV, cache_dir
from veriguard.verify import nagini_worker
from veriguard.verify.nagini import Explained, Models, tool_versions, verify_explained

FORMAT = 1
ENV = CACHE_ENV
STORED_FILE_STATUSES = frozenset({"proved", "failed", "translation_error"})
FIRST_RUN = "/first run, models not asked"  # the key of a failure stored without its models
VISIBLE_BODY_DECORATORS = frozenset({"Pure", "Predicate"})
INTERFACE_CALLS = frozenset({"Requires", "Ensures", "Exsures", "Decreases"})
GATE_KINDS = frozenset({"z3", "tests", "mutants", "classifier", "reveals"})
CODE_FOLDERS = ("contracts", "verify", "synth", "enforce")
T = TypeVar("T")


class Verifier(Protocol):
    def verify_file(self, path: str | Path, *, timeout: int = ..., counterexample: bool = ...,
                    wall_limit: float | None = ..., select: tuple[str, ...] = ...) -> dict[str, Any]: ...


def default_dir() -> Path:
    """$VERIGUARD_CACHE, else $XDG_CACHE_HOME/veriguard, else ~/.cache/veriguard."""
    return cache_dir()


def _sha(data: str) -> str:
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


@lru_cache(maxsize=1)
def verifier_identity() -> dict[str, str]:
    """Everything about the verifier that can change its answer for the same source."""
    return {"python": platform.python_version(),
            "worker": hashlib.sha256(Path(nagini_worker.__file__).read_bytes()).hexdigest(),
            "silicon_args": " ".join(nagini_worker.SILICON_ARGS), "bv_size": str(nagini_worker.BV_SIZE),
            **tool_versions(("nagini", "z3-solver", "jpype1", "mypy"))}


@lru_cache(maxsize=1)
def code_identity() -> str:
    """sha256 of veriguard's own code under CODE_FOLDERS: conservative, any change recomputes every gate."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for folder in CODE_FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            digest.update(f"{path.relative_to(root)}\0".encode() + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


@lru_cache(maxsize=1)
def gate_tools() -> dict[str, str]:
    return {"python": platform.python_version(),
            **tool_versions(("z3-solver", "hypothesis", "lark", "numpy", "onnxruntime", "tokenizers"))}


def gate_key(kind: str, inputs: dict[str, Any]) -> str:
    """The key of a gate's result: `inputs` (everything the gate reads) bound to the code and the tools."""
    return _sha(_canonical({"kind": kind, "format": FORMAT, "code": code_identity(), "tools": gate_tools(),
                            "inputs": inputs}))


# --- keys -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FunctionKeys:
    keys: dict[str, str]          # top-level function name -> its conservative key


def _is_contract(stmt: ast.stmt) -> bool:
    """A pre- or postcondition (or termination measure): what callers rely on. An Assert is part of the body."""
    return (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Name)
            and stmt.value.func.id in INTERFACE_CALLS)


def _interface(node: ast.FunctionDef) -> ast.FunctionDef:
    """Decorators, signature and contract: what a caller of a non-pure function sees."""
    out = ast.FunctionDef(name=node.name, args=node.args, body=[s for s in node.body if _is_contract(s)] or [ast.Pass()],
                          decorator_list=node.decorator_list, returns=node.returns, type_comment=node.type_comment,
                          type_params=[])
    return ast.copy_location(out, node)


def _body_visible(node: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id in VISIBLE_BODY_DECORATORS for d in node.decorator_list)


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _opaque(node: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "Opaque" for d in node.decorator_list)


def _revealed(node: ast.AST) -> set[str]:
    """Functions whose bodies `node` may reveal: every name inside a `Reveal(...)` anywhere in it (Nagini unfolds
    only the outermost call; counting them all keeps the key conservative)."""
    return set().union(*(_names(c) for c in ast.walk(node)
                         if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == "Reveal"))


def _visible_bodies(name: str, funcs: dict[str, ast.FunctionDef]) -> dict[str, str]:
    """The bodies a proof of `name` can see: pure functions it reaches, an opaque one only where something
    reached reveals it (repeated until no new reveal appears)."""
    revealed = _revealed(funcs[name])
    while True:
        seen, todo, bodies = {name}, list(_names(funcs[name])), {}
        while todo:
            g = todo.pop()
            if g in seen or g not in funcs:
                continue
            seen.add(g)
            if _body_visible(funcs[g]) and (not _opaque(funcs[g]) or g in revealed):
                bodies[g] = ast.unparse(funcs[g])
                todo += _names(funcs[g])
            else:
                todo += _names(_interface(funcs[g]))
        more = set().union(*(_revealed(funcs[g]) for g in bodies)) if bodies else set()
        if more <= revealed:
            return bodies
        revealed |= more


def function_keys(source: str, base: str) -> FunctionKeys | None:
    """One key per top-level function; None when the source does not parse (it is verified whole).

    Code enters the keys as `ast.unparse` text (comments and layout do not change a proof), so a mutant
    that unparses the policy shares the keys of the functions it leaves alone."""
    try:
        tree = ast.parse(source, type_comments=True)
    except SyntaxError:
        return None
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    if len(funcs) != sum(isinstance(n, ast.FunctionDef) for n in tree.body):
        return None  # a name defined twice: no per-function reasoning
    outside = [ast.unparse(n) for n in tree.body if not isinstance(n, ast.FunctionDef)]
    interfaces = {name: ast.unparse(_interface(f)) for name, f in funcs.items()}
    shared = _sha(_canonical({"base": base, "outside": outside, "interfaces": interfaces}))
    keys = {name: _sha(_canonical({"kind": "function", "shared": shared, "self": ast.unparse(f),
                                   "visible_bodies": _visible_bodies(name, funcs)}))
            for name, f in funcs.items()}
    return FunctionKeys(keys)


def key_base(timeout: int) -> str:
    return _canonical({"format": FORMAT, "verifier": verifier_identity(), "timeout": timeout})


def file_key(source: str, filename: str, base: str) -> str:
    return _sha(_canonical({"kind": "file", "base": base, "filename": filename, "source": source}))


# --- the store --------------------------------------------------------------------------------
@dataclass
class ProofCache:
    """Entries in `directory` (None: in memory, for this run only). `problems` lists entries ignored."""

    directory: Path | None = None
    memory: dict[str, dict[str, Any]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def _path(self, key: str) -> Path:
        assert self.directory is not None
        return self.directory / f"v{FORMAT}" / key[:2] / f"{key}.json"

    def get(self, key: str, kind: str) -> dict[str, Any] | None:
        """The entry's reply, or None when there is none or it cannot be trusted."""
        if self.directory is None:
            kept = self.memory.get(key)
            return dict(kept["reply"]) if kept else None
        path = self._path(key)
        try:
            text = path.read_bytes().decode("utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as e:
            self.problems.append(f"{path}: unreadable or not JSON ({e}); ignored, proving again")
            return None
        why = _untrusted(text, key, kind)
        if why:
            self.problems.append(f"{path}: {why}; ignored, proving again")
            return None
        entry: dict[str, Any] = json.loads(text)
        return dict(entry["reply"]) | {"stored_at": entry["stored_at"]}

    def put(self, key: str, kind: str, reply: dict[str, Any]) -> None:
        body = {"format": FORMAT, "kind": kind, "key": key, "verifier": verifier_identity(),
                "stored_at": dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
                "reply": {k: v for k, v in reply.items() if k in ("status", "errors", "message", "seconds", "value")}}
        if self.directory is None:
            self.memory[key] = body
            return
        entry = body | {"sha256": _sha(_canonical(body))}
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(json.dumps(entry, sort_keys=True) + "\n")
            os.replace(tmp, path)
        except OSError as e:  # a cache that cannot be written costs time, never a verdict
            self.problems.append(f"{path}: not written ({e.strerror})")


def _untrusted(text: str, key: str, kind: str) -> str:
    """Why an entry's text cannot be trusted for `key`, or "" when it can."""
    try:
        entry = json.loads(text)
    except ValueError:
        return "corrupt or truncated (not JSON)"
    if not isinstance(entry, dict) or not isinstance(entry.get("reply"), dict):
        return "not a cache entry"
    body = {k: v for k, v in entry.items() if k != "sha256"}
    if entry.get("sha256") != _sha(_canonical(body)):
        return "its sha256 does not match its content"
    if entry.get("format") != FORMAT or entry.get("key") != key or entry.get("kind") != kind:
        return f"made for another key or kind ({str(entry.get('key'))[:16]}, {entry.get('kind')})"
    if entry.get("verifier") != verifier_identity():
        return "made by another verifier"
    status = entry["reply"].get("status")
    allowed = STORED_FILE_STATUSES if kind == "file" else {"computed"} if kind in GATE_KINDS else {"proved"}
    if status not in allowed:
        return f"holds a verdict that is never stored ({status!r})"
    if not isinstance(entry.get("stored_at"), str):
        return "no time of storage"
    return ""


# --- verification through the cache -------------------------------------------------------------
# the keys of the "cache" entry a reply gains (verify_cached) or a cached value is labelled with (through_cache, whose
# "seconds" synth.pipeline.labelled_cached takes out); veriguard.audit refuses a certificate's entry with another key
CACHE_KEYS = frozenset({"hit", "key", "seconds_then", "stored_at", "reused", "proved_now", "selected", "not_sent"})


def verify_cached(worker: Verifier, path: Path, source: str, *, timeout: int, cache: ProofCache,
                  models: Models = "on failure", skip: tuple[str, ...] = (),
                  explained: Explained = lambda: None) -> dict[str, Any]:
    """The worker's reply for `source` (written at `path`), from the cache where it can be trusted.

    The reply gains "cache": {"hit": "file" | "functions" | None, "key", "reused", "proved_now", ...}.
    Only functions whose key is not cached are verified; a run that selects some functions proves
    the file only together with the cached proofs of the others. Functions in `skip` are never verified, and
    the reply is then about the others only: it is not stored for the file. A failure left without the models
    `models` asks for (`explained`, verify.nagini.verify_explained) is stored apart, as Nagini's first run on the
    file: it answers again only when `explained()` again gives a reason (a test fails on this run's policy)."""
    base = key_base(timeout)  # a function's proof is the same with or without models; a file's failures differ
    fkey = file_key(source, path.name, base + ("/no models" if models == "never" else ""))
    first_key = file_key(source, path.name, base + FIRST_RUN)
    t0 = time.monotonic()
    hit = None if skip else cache.get(fkey, "file")
    if hit is None and not skip and models == "on failure":
        hit = _first_run(cache, first_key, explained)
        fkey = first_key if hit is not None else fkey
    if hit is not None:
        answer = {"hit": "file", "key": fkey, "stored_at": hit.pop("stored_at", None), "seconds_then": hit.get("seconds")}
        return hit | {"seconds": round(time.monotonic() - t0, 3), "cache": answer}
    fkeys = function_keys(source, base)
    cached = {n for n, k in fkeys.keys.items() if cache.get(k, "function") is not None} if fkeys else set()
    names = sorted(fkeys.keys) if fkeys else []
    missing = [n for n in names if n not in cached and n not in skip]
    info: dict[str, Any] = {"key": fkey, "reused": sorted(cached - set(skip)), "proved_now": missing,
                            **({"not_sent": sorted(skip)} if skip else {})}
    if fkeys and not missing:
        reply = {"status": "proved", "errors": [], "seconds": round(time.monotonic() - t0, 3)}
        if not skip:
            cache.put(fkey, "file", reply)
        return reply | {"cache": info | {"hit": "functions"}}
    select = tuple(missing) if cached or skip else ()
    reply = verify_explained(worker, path, timeout=timeout, select=select, models=models, explained=explained)
    if reply.get("status") == "proved" and fkeys:
        for name in missing:
            cache.put(fkeys.keys[name], "function", {"status": "proved", "errors": [], "seconds": reply.get("seconds")})
    if reply.get("status") in STORED_FILE_STATUSES and not skip:
        cache.put(first_key if reply.get("unexplained") else fkey, "file", reply)
    return reply | {"cache": info | {"hit": None, "selected": list(select)}}


def _first_run(cache: ProofCache, key: str, explained: Explained) -> dict[str, Any] | None:
    """A failure stored from Nagini's first run without models, when `explained()` gives a reason again (only a
    failure: such an entry never answers "proved")."""
    hit = cache.get(key, "file")
    if hit is None or hit.get("status") != "failed":
        return None
    why = explained()
    return hit | {"models": f"not asked: {why}", "unexplained": True} if why else None


def through_cache(cache: ProofCache | None, kind: str, inputs: dict[str, Any], compute: Callable[[], T], *,
                  encode: Callable[[T], Any], decode: Callable[[Any], T],
                  storable: Callable[[T], bool] = lambda _v: True) -> tuple[T, dict[str, Any] | None]:
    """`compute()`, or its stored result for the same inputs; the second value describes a hit (None: computed).

    `storable` says whether a computed result may be stored (never a timeout or a crash); an entry that
    cannot be decoded is ignored like a damaged one and the result is computed again."""
    if cache is None:
        return compute(), None
    key = gate_key(kind, inputs)
    t0 = time.monotonic()
    hit = cache.get(key, kind)
    if hit is not None:
        try:
            value = decode(hit["value"])
        except (KeyError, TypeError, ValueError) as e:
            cache.problems.append(f"{kind} entry {key[:16]}: cannot be read back ({type(e).__name__}: {e}); "
                                  "ignored, computing again")
        else:
            return value, {"hit": kind, "key": key, "stored_at": hit.get("stored_at"),
                           "seconds_then": hit.get("seconds"), "seconds": round(time.monotonic() - t0, 3)}
    t0 = time.monotonic()
    value = compute()
    if storable(value):
        cache.put(key, kind, {"status": "computed", "value": encode(value), "seconds": round(time.monotonic() - t0, 3)})
    return value, None
