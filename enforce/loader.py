"""Load a frozen policy from its build directory, refusing anything the certificate does not vouch for.

The certificate binds the sha256 of every build file the monitor trusts (policy.py, policy.code,
policy_verified.py, extraction.json, the spec and the files it names under spec/); each is checked here,
before policy.py runs, and nothing else may sit in the build (but the certificate, its signature, run.json
and report.md).

Signatures (`synth --sign KEY`): signature.json holds an Ed25519 signature over certificate.json's exact
bytes. Without one, whoever can write the build can rewrite a file and its hash consistently; with one
checked against a trusted key, they cannot. Trust comes from `trusted_keys=` or VERIGUARD_TRUSTED_KEYS
(a directory of .pub files, or .pub files separated by os.pathsep); `require_signed=True` or
VERIGUARD_REQUIRE_SIGNED=1 refuses an unsigned build. A signature is verified whenever trusted keys are
configured; a signed build loaded with none configured (and signing not required) loads as an unsigned
one would, with `FrozenPolicy.signature == "unchecked"`: the signature adds nothing then, and refusing
would break every deployment that has not set up keys yet, which `require_signed` is there to demand.

Stdlib only (and `cryptography` once a signature is verified): a production agent that imports a frozen
policy pays for nothing else.
"""
from __future__ import annotations

import __future__
import hashlib
import importlib.util
import marshal
import os
import re
import stat
import sys
import unicodedata
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from pathlib import Path, PurePosixPath
from types import CodeType, ModuleType
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from veriguard.contracts.build_format import (CERT_FORMAT, HEX64, POLICY_CODE, SIGNATURE_ALGORITHM, SIGNATURE_FORMAT,
                                               SIGNATURE_KEYS, SIGNATURE_NAME, UNCERTIFIED_FILES, CERTIFIED_GATES,
                                               approval_problem, respelt, unheld_gates)
from veriguard.contracts.errors import AgentInputError, InternalError, OperatorError
from veriguard.contracts.shown import (address_keys, ascii_form, compared_address, invisible_beside, latin_compat,
                                       look_alike_key, named_hosts, separator_form, sign_of, spelling_key, visible,
                                       visible_spelling_key)
import veriguard.contracts.strict_json as strict_json
from veriguard.contracts.regular_file import (FileRefused, build_folders_exposed, read_regular_file_and_stat,
                                              writable_from_outside)

if TYPE_CHECKING:  # enforce.keys is imported where keys are used: most loads (a hook's, each tool call) use none
    from veriguard.enforce.keys import VerifyKey

REQUIRED_FILES = ("policy.py", "policy_verified.py", "extraction.json")
# exactly the keys synth.freeze.certificate writes (a build it did not write is refused)
CERT_KEYS = frozenset({"format", "policy", "status", "fully_proved", "path", "synthesized_at", "request", "agent",
                       "contract_text", "hashes", "rules", "properties", "gates", "proof", "mutation", "assumptions",
                       "transcript", "tools"})
OPTIONAL_CERT_KEYS = frozenset({"approval"})  # present only when synth wrote it (an approved verified update)
HASH_KEYS = frozenset({"policy", "verified_source", "spec", "contract", "tables", "extraction_files", "files"})
_NAME = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")
_RESYNTH = "re-run `veriguard synth` to rebuild it; never edit a build by hand"
TRUSTED_KEYS_ENV = "VERIGUARD_TRUSTED_KEYS"
REQUIRE_SIGNED_ENV = "VERIGUARD_REQUIRE_SIGNED"
_RESIGN = "re-run `veriguard synth SPEC --sign KEY` with the key whose public half the monitor trusts"
TrustedKeys = str | Path | Sequence[str | Path] | Mapping[str, "VerifyKey"]


class PolicyLoadError(OperatorError):
    """The build cannot be trusted: missing, tampered with, malformed, or not fully proved."""

    def __init__(self, code: str, message: str, fix: str = "") -> None:
        super().__init__(code, message, fix=fix)


class ArgumentError(AgentInputError, ValueError):
    """A policy argument is missing, mistyped or outside the domain the proof covers: deny."""

    def __init__(self, argument: str, reason: str) -> None:
        super().__init__("policy.argument", f"argument {argument!r}: {reason}",
                         fix="pass the arguments the policy declares (FrozenPolicy.arguments), with exact types")
        self.argument = argument
        self.reason = reason


class PolicyMismatch(InternalError, RuntimeError):
    """The proved policy and the independent runtime contract checker disagree: deny."""

    def __init__(self, message: str) -> None:
        super().__init__("policy.mismatch", message, fix="report it: the build's proof and checker disagree")


@dataclass(frozen=True)
class Decision:
    """What a frozen policy decided: allowed, the ids of the violated rules, the denied items."""

    allowed: bool
    violations: tuple[str, ...]
    denied: tuple[tuple[Any, ...] | Any, ...]


@dataclass(frozen=True)
class FrozenPolicy:
    name: str
    directory: Path
    module: ModuleType
    certificate: dict[str, Any]
    sha256: str
    trusted: bool            # False only when loaded with accept_unproved=True and the certificate is not PROVED
    extraction: dict[str, Any]
    signature: str = "unsigned"   # "verified" (by `signed_by`), "unsigned", or "unchecked" (no trusted keys given)
    signed_by: str = ""           # the id of the trusted key whose signature was verified
    contents: Mapping[str, bytes] = field(default_factory=dict, repr=False)   # certified path -> the bytes hashed
    build_sha256: str = ""        # of certificate.json's bytes: the whole build (policy.py's sha256 is the policy)

    @property
    def spec_files(self) -> dict[str, bytes]:
        """The certified files under spec/ (spec-relative path -> the bytes that were hashed): what the extractors
        are built from, never the paths, which may have changed since the check."""
        return {rel.removeprefix("spec/"): data for rel, data in self.contents.items() if rel.startswith("spec/")}

    def evaluate(self, args: Mapping[str, Any]) -> Decision:
        """The proved policy's decision; ArgumentError when the arguments are not the policy's."""
        return self._call(self.module.evaluate, args)

    def evaluate_checked(self, args: Mapping[str, Any]) -> Decision:
        """evaluate(), double-checked by the runtime contract checker; PolicyMismatch if they disagree."""
        return self._call(self.module.evaluate_checked, args)

    @cached_property
    def spellings(self) -> Spellings:
        """The strings the policy compares, and each one's spelling_key and look_alike_key (made on the first call, not
        at load: a hook loads the build for one call, and a large table's keys take time)."""
        return spellings_of(compared_texts(self.module, self.certificate))

    def _call(self, entry: Any, args: Mapping[str, Any]) -> Decision:
        odd = _shown_otherwise(args, self.spellings)
        if odd is not None:
            raise ArgumentError(*odd)
        try:
            d = entry(args)
        except self.module.ArgumentError as e:  # the frozen module's own classes, as importable veriguard errors
            raise ArgumentError(e.argument, e.reason) from None
        except self.module.PolicyMismatch as e:
            raise PolicyMismatch(str(e)) from None
        violations = tuple(d.violations)
        if len(set(violations)) != len(violations):   # the gates compare rules as sets: a repeat was never tested
            raise PolicyMismatch(f"the policy reported a rule more than once ({', '.join(map(str, violations))[:200]}): "
                                 "a decision names each violated rule once")
        return Decision(d.allowed is True, violations, tuple(d.denied))

    @property
    def rules(self) -> dict[str, str]:
        return dict(self.module.RULES)

    @property
    def arguments(self) -> list[tuple[str, Any]]:
        """The policy's arguments and their types (the schema its argument checks enforce)."""
        return [(name, t) for name, t in self.module.ARGUMENTS]


@dataclass(frozen=True)
class Spellings:
    """The strings a policy compares (`texts`), by spelling_key (`keys`) and by look_alike_key (`looks`, made when first
    asked: only a text that is not ASCII, or a policy that compares one, asks), and the longest key."""

    texts: frozenset[str]
    keys: dict[str, str]
    longest: int
    ascii: bool   # every compared string is ASCII: an ASCII text looks like none it does not spell

    @cached_property
    def looks(self) -> dict[str, str]:
        """Of two texts with one look-alike key, the one that is not ASCII is kept (the last in this order), whatever
        order the frozenset holds them in: `paypa1.com` is then another spelling of `раураl.com` in every process, not
        of `paypal.com` (decided as written: both ASCII) in some and denied in others, by the hash seed."""
        return {look_alike_key(text): text for text in sorted(self.texts, key=lambda t: (not t.isascii(), t))}

    @cached_property
    def addresses(self) -> dict[str, str]:
        """The compared strings that are IPv6 addresses, by the address they are (made when an argument is first read
        as one; a canonical address, IPv4 or IPv6, is its own spelling_key, so `keys` finds it, and synth refuses an
        IPv4 address written otherwise); of two with one address, the first in code point order, in every process."""
        found: dict[str, str] = {}
        for text in [text for text in self.texts if ":" in text]:   # a comprehension: 100,000 rows in a few ms
            key = compared_address(text)
            if key is not None and (key not in found or text < found[key]):
                found[key] = text
        return found


def spellings_of(texts: frozenset[str]) -> Spellings:
    keys = {spelling_key(text): text for text in texts}
    return Spellings(texts, keys, max(map(len, keys), default=0), all(map(str.isascii, texts)))


_CHECKER = ("vg_assumes", "vg_spec_decision", "vg_failed_properties")   # contracts.to_python's runtime checker


def compared_texts(module: ModuleType, certificate: Mapping[str, Any]) -> frozenset[str]:
    """Every string the policy compares an argument with: the literals of its rules, assumptions and properties (the
    runtime checker's string constants, but the declarations' ids it reports) and its tables' keys and values. The
    contract language compares strings only for equality (==, !=, in {...}, a table's key); an enum argument is held to
    its values exactly by the frozen module's own checks."""
    found: set[str] = set()
    _strings_of([getattr(getattr(module, name, None), "__code__", None) for name in _CHECKER], found)
    text = certificate.get("contract_text")
    quoted = "\n".join(v for v in text.values() if isinstance(v, str)) if isinstance(text, dict) else ""
    ids = {str(d.get("id")) for key in ("assumptions", "properties") for d in certificate.get(key) or ()
           if isinstance(d, dict)} | set(getattr(module, "RULE_IDS", ()))
    found -= {i for i in ids if f'"{i}"' not in quoted}   # an id the contract also compares as a string is kept
    for table in (v for k, v in vars(module).items() if k.startswith("VG_TABLE_") and type(v) is dict):
        cells = set(chain.from_iterable(table))   # contracts.to_python.table_source: a tuple of scalars -> a scalar
        cells.update(table.values())
        found.update(cell for cell in cells if type(cell) is str)
    return frozenset(found)


def _strings_of(todo: list[Any], found: set[str]) -> None:
    while todo:
        item = todo.pop()
        if type(item) is str:
            found.add(item)
        elif type(item) in (tuple, list, frozenset):
            todo.extend(item)
        elif type(item) is dict:
            todo.extend(item.items())
        elif isinstance(item, CodeType):
            todo.extend(item.co_consts)   # a quantifier's generator is a code object among them


def _shown_otherwise(args: Any, spellings: Spellings) -> tuple[str, str] | None:
    """The argument holding a string that shows another text than it is, and why, or None. A rule
    `recipient != "josé.com"` is NFC with ASCII letters (synth.tables.compared_otherwise); the canonically equivalent
    decomposed `jose` U+0301 `.com`, the full-width `ｊｏｓé.com` and `josé.com` U+200B, which a reader and IDNA take for
    josé.com, compared as other strings and were allowed. Mapping them instead would decide on other code points than
    the tool receives (two files on ext4), so they are refused."""
    if not isinstance(args, Mapping):
        return None   # the frozen module's own checks say what is wrong with it
    seen: set[int] = set()   # a list that holds itself is walked once (the frozen checks refuse it)
    for name, value in args.items():
        todo = [(value,)]
        while todo:
            for item in todo.pop():
                if isinstance(item, str):   # str's own methods: a subclass's isascii() is not asked
                    text = str(item)
                    why = None if str.isascii(text) else _text_shown_otherwise(text)
                    if why is None and spellings.keys and text not in spellings.texts:
                        why = _another_spelling(text, spellings)
                    if why is not None:
                        return str(name), why
                elif type(item) in (list, tuple, dict) and id(item) not in seen:
                    seen.add(id(item))
                    todo.append(tuple(item.values()) if type(item) is dict else item)
    return None


def _text_shown_otherwise(text: str) -> str | None:
    if not unicodedata.is_normalized("NFC", text):
        return ("holds text not in Unicode's composed form (NFC): it shows as the spelling the spec's rules compare "
                "with (which synth holds to NFC) and never equals it, so it is denied rather than decided as another "
                "string")
    hidden = invisible_beside(text, spaces_too=False)
    if hidden is not None:
        return (f"holds U+{ord(hidden):04X}, an invisible character, beside ASCII text: it shows as the text without "
                "it (which IDNA and a reader take it for) and never equals the spec's spelling, so it is denied")
    compat = latin_compat(text, where_read_as_ascii=True)
    if compat is not None:
        return (f"holds U+{ord(compat):04X}, a compatibility form of the ASCII {ascii_form(compat)!r} "
                "(full-width, mathematical, circled...): it shows as that letter (which IDNA maps it to) and never "
                "equals the spec's spelling, so it is denied")
    sign = separator_form(text)
    if sign is not None:
        return (f"holds U+{ord(sign):04X}, another form of the ASCII separator {sign_of(sign)!r} (which IDNA and a "
                "reader take it for) joined to ASCII text: it never equals the spec's spelling, so it is denied")
    return None


def _another_spelling(text: str, spellings: Spellings) -> str | None:
    """Why `text` is another spelling of a compared string, or None: itself (its spelling_key), the name it holds as a
    URL, a mail address or in percent-encoding (named_hosts), either in look-alike letters of another script
    (look_alike_key, when the two are not both ASCII: `paypa1.com` is decided as written), or another form of a
    compared IP address (address_keys)."""
    shown = visible(text)   # read once: for the bound below and for the key
    bound = 4 * spellings.longest + 4   # NFKC shortens a text at most 3 to 1 (ㅎㅏㄴ is 한)
    whole = len(text) <= bound or len(shown.strip().rstrip(_ROOT_DOTS).strip()) <= bound
    hosts = [visible(host) for host in named_hosts(shown) if len(host) <= bound]   # a decoded host may hold them anew
    names = ([(shown, False)] if whole else []) + [(host, True) for host in hosts]
    for name, held in names:
        key = visible_spelling_key(name)
        same, how = spellings.keys.get(key), _SPELT
        if same is None and not (spellings.ascii and str.isascii(key)):   # the key: punycode read as what it spells
            same, how = spellings.looks.get(look_alike_key(name)), _LOOKS
            same = None if same is None or str.isascii(key) and str.isascii(same) else same
        if same is None and (addresses := address_keys(key)):
            same = next(filter(None, (spellings.keys.get(a) or spellings.addresses.get(a) for a in addresses)), None)
            how = _ADDRESS
        if same is not None:
            named = f"names {name!r} (a URL's or mail address's host, or percent-encoded), which " if held else ""
            return (f"{named}is another spelling of {same!r}, a string the policy compares with ({how}: a mail "
                    "server, IDNA, a reader or a tool takes the two for one name): the policy compares strings as "
                    "written, so it is denied rather than decided as another string; pass it spelt as the policy "
                    "writes it")
    return None


_SPELT = "case, width, spaces around it, invisible characters, IDNA's dots, a DNS root dot or punycode"
_LOOKS = "letters of another script that look like its own (Unicode's confusables)"
_ADDRESS = ("another form of one IP address: a resolver, a browser and inet_aton read `127.1`, `2130706433`, `0x7f.1`, "
            "`0177.0.0.1` and `::ffff:127.0.0.1` as 127.0.0.1, and `0:0::1` or `[::1]:22` as ::1")


# the bound above measures a text without the spaces and root dots around it, whatever its length: `.`, IDNA's `。`
# `｡` and the full-width and small `．` `﹒` (a set of its own: U+2024, which NFKC also folds to `.`, is not in it)
_ROOT_DOTS = ".\u3002\uff61\uff0e\ufe52"


def load_policy(directory: str | Path, *, accept_unproved: bool = False, trusted_keys: TrustedKeys | None = None,
                require_signed: bool | None = None, expect_sha256: str | None = None) -> FrozenPolicy:
    """Import DIR/policy.py after checking DIR against DIR/certificate.json (and its signature).

    Refuses (PolicyLoadError) a malformed certificate, any certified file whose sha256 differs from
    the certificate's, a file the certificate does not cover, a signature that is malformed, made by
    an untrusted key or does not verify, an unsigned build when `require_signed`, a certificate
    that is not fully proved unless `accept_unproved` is set, a build whose folder is not named after
    its policy, as given or once links are resolved (synth writes DIR/<name>: another policy's build was put in its
    place), a build file with a second name (a hard link) or that every user may write, and, with
    `expect_sha256`, a policy.py whose sha256 is not that one. `trusted_keys` and `require_signed`
    default to VERIGUARD_TRUSTED_KEYS and VERIGUARD_REQUIRE_SIGNED (see the module's docstring).
    """
    d = Path(directory)
    cert_path, policy_path = d / "certificate.json", d / "policy.py"
    if not cert_path.is_file() or not policy_path.is_file():
        raise PolicyLoadError("load.missing", f"{d} is not a policy build (needs policy.py and certificate.json)",
                              "run `veriguard synth SPEC --out DIR` and pass DIR/<name>")
    keys, required = trust_settings(trusted_keys, require_signed=require_signed)
    cert_bytes = _read_bytes(cert_path, "load.certificate")
    signature, signed_by = check_signature(d, cert_bytes, keys, required=required)
    cert = _read_json(cert_path, "load.certificate", cert_bytes)
    name, proved, files, _ = check_certificate(cert, cert_path)
    if problem := respelt(cert, cert_bytes, str(cert_path)):   # the audit's rule: the same claims under another sha256
        raise PolicyLoadError("load.certificate", problem, _RESYNTH)
    contents = certified_contents(d, files)
    if not proved and not accept_unproved:
        raise PolicyLoadError("load.unproved", f"the certificate of {name} says {cert['status']}: not every gate "
                              "passed", "fix the spec and re-run synth, or pass accept_unproved=True "
                              "(--accept-unproved) to load it anyway, knowingly")
    digest = files["policy.py"]
    build_sha256 = hashlib.sha256(cert_bytes).hexdigest()
    check_expected(d, name, digest, expect_sha256, build_sha256)
    extraction = _extraction(contents["extraction.json"], d / "extraction.json", name)
    code = precompiled(contents.get(POLICY_CODE), digest, d / POLICY_CODE)
    module = _import(contents["policy.py"], policy_path, f"veriguard_frozen_{name}_{digest[:12]}", name, code)
    return FrozenPolicy(name, d, module, cert, digest, proved, extraction, signature, signed_by, contents,
                        build_sha256)


def check_expected(d: Path, name: str, digest: str, expect_sha256: str | None, build_sha256: str = "") -> None:
    """PolicyLoadError unless the build in `d` is the one expected there: its folder named after its policy (as
    synth writes it) and, when `expect_sha256` pins one, its certificate.json's sha256 (`build_sha256`: the whole
    build) or its policy.py's (`digest`: the policy alone, whatever extractors come with it) that one."""
    # the name as given and the name of the folder the files are read from: `DIR/mini/sub/..` names `mini`, but
    # reads the folder `sub` leads above; `DIR/payments`, a link to a folder `mini`, reads mini's build
    names = dict.fromkeys((Path(os.path.abspath(d)).name, Path(os.path.realpath(d)).name))
    folder = next((n for n in names if n != name), name)
    if folder != name:
        raise PolicyLoadError("load.foreign", f"{d} holds a build of the policy {name!r}, not of {folder!r}: synth "
                              "writes DIR/<name>, so this build was copied or moved here from elsewhere",
                              f"pass the folder named after the policy you mean to enforce (DIR/{name} if it is "
                              f"{name!r}), or re-run `veriguard synth` for the policy {folder!r}")
    if expect_sha256 is None:
        return
    if not HEX64.fullmatch(expect_sha256.lower()):
        raise PolicyLoadError("load.expected", f"the expected hash {expect_sha256[:80]!r} is not 64 hex digits",
                              "pass the sha256 of the build's certificate.json (`sha256sum DIR/certificate.json`: the "
                              "whole build) or of its policy.py (`hashes.policy` in its certificate)")
    if expect_sha256.lower() not in (digest, build_sha256):
        raise PolicyLoadError("load.expected", f"{d} holds the policy {name!r} with policy.py sha256 {digest[:16]}… and "
                              f"certificate sha256 {build_sha256[:16]}…, not the expected {expect_sha256.lower()[:16]}…",
                              "deploy the build whose hash was pinned, or, once this build is reviewed (`veriguard "
                              "diff OLD NEW`), pin its certificate's sha256 instead")


def trust_settings(trusted_keys: TrustedKeys | None, *, require_signed: bool | None) -> \
        tuple[Mapping[str, VerifyKey] | None, bool]:
    """(trusted key id -> key, or None when none is configured; whether a signature is required), from
    the arguments or else the environment. A misconfiguration is a PolicyLoadError, never a pass."""
    if require_signed is None:
        flag = os.environ.get(REQUIRE_SIGNED_ENV, "")
        if flag not in ("", "0", "1"):
            raise PolicyLoadError("load.trust", f"{REQUIRE_SIGNED_ENV}={flag!r} is neither 1 nor 0",
                                  f"set {REQUIRE_SIGNED_ENV}=1 to refuse unsigned builds, or unset it")
        require_signed = flag == "1"
    if trusted_keys is None:
        trusted_keys = os.environ.get(TRUSTED_KEYS_ENV) or None
    keys: Mapping[str, VerifyKey] | None = None
    if isinstance(trusted_keys, Mapping):
        keys = dict(trusted_keys)
    elif trusted_keys is not None:
        from veriguard.enforce.keys import KeyFileError, load_trusted_keys

        try:
            keys = load_trusted_keys(trusted_keys)
        except KeyFileError as e:
            raise PolicyLoadError("load.trust", f"the trusted keys cannot be read: {e}",
                                  f"fix {TRUSTED_KEYS_ENV} (or trusted_keys=): a directory of .pub files or .pub "
                                  f"files separated by {os.pathsep!r}") from None
    if require_signed and not keys:
        raise PolicyLoadError("load.trust", "signed builds are required, but no trusted public key is configured",
                              f"set {TRUSTED_KEYS_ENV} to the signer's .pub file (or a directory of them), or pass "
                              "trusted_keys=")
    return keys, bool(require_signed)


def trusted_key_paths(trusted_keys: TrustedKeys | None) -> list[Path]:
    """The files and folders that name the trusted keys (trusted_keys=, else VERIGUARD_TRUSTED_KEYS): a trust anchor
    whoever can write it can extend, so the monitor protects it like the build. None for keys given as objects."""
    if isinstance(trusted_keys, Mapping):
        return []
    source = os.environ.get(TRUSTED_KEYS_ENV) or "" if trusted_keys is None else trusted_keys
    items = str(source).split(os.pathsep) if isinstance(source, (str, Path)) else [str(p) for p in source]
    return [Path(p).expanduser() for p in items if p]


def check_signature(d: Path, certificate: bytes, keys: Mapping[str, VerifyKey] | None, *, required: bool) -> \
        tuple[str, str]:
    """("verified", key id), ("unsigned", "") or ("unchecked", "") for the build in `d` whose certificate.json
    holds `certificate`; PolicyLoadError for anything a trusted signer did not vouch for."""
    path = d / SIGNATURE_NAME
    if not path.exists() and not path.is_symlink():
        if required:
            raise PolicyLoadError("load.unsigned", f"{d} is not signed ({SIGNATURE_NAME} is missing), and signed "
                                  f"builds are required ({REQUIRE_SIGNED_ENV})", _RESIGN)
        return "unsigned", ""
    doc = _read_json(path, "load.signature", _read_bytes(path, "load.signature"))
    shaped = isinstance(doc, dict) and set(doc) == SIGNATURE_KEYS and doc["format"] == SIGNATURE_FORMAT \
        and doc["algorithm"] == SIGNATURE_ALGORITHM and doc["signed_file"] == "certificate.json" \
        and isinstance(doc["key_id"], str) and HEX64.fullmatch(doc["key_id"]) is not None \
        and isinstance(doc["signature"], str)
    if not shaped:
        raise PolicyLoadError("load.signature", f"{path} is not a veriguard build signature (it must be an object "
                              f"with exactly {', '.join(sorted(SIGNATURE_KEYS))}; format {SIGNATURE_FORMAT!r}, "
                              f"algorithm {SIGNATURE_ALGORITHM!r}, signed_file \"certificate.json\")", _RESIGN)
    if not keys:
        return "unchecked", ""
    key = keys.get(doc["key_id"])
    if key is None:
        raise PolicyLoadError("load.signature_key", f"{path}: the build is signed by key {doc['key_id'][:16]}…, "
                              f"which is not among the {len(keys)} trusted key(s)",
                              f"add the signer's .pub file to {TRUSTED_KEYS_ENV} if you trust it, or re-sign "
                              "the build with a trusted key")
    from veriguard.enforce.keys import certificate_signed_by

    if not certificate_signed_by(key, certificate, doc["signature"]):
        raise PolicyLoadError("load.signature", f"{path}: the signature does not verify against certificate.json: "
                              "the certificate was changed after signing, or the signature was", _RESIGN)
    return "verified", key.key_id


def _read_bytes(path: Path, code: str) -> bytes:
    """The bytes of a build file no hash covers (the certificate, its signature): a regular file, read once from one
    descriptor without waiting (a FIFO put in its place would hang every load)."""
    try:
        data, st = read_regular_file_and_stat(path)
    except FileRefused as e:
        why = "is not a regular file (a pipe, a device or a socket)" if e.kind == "special" else \
            f"cannot be read: {e.why}"
        raise PolicyLoadError(code, f"{path} {why}", _RESYNTH) from None
    _not_shared(path, st)
    return data


def _not_shared(path: Path, st: os.stat_result) -> None:
    """PolicyLoadError when the build file `path` (whose fstat is `st`, from the descriptor its bytes were read from)
    can be changed by someone who cannot write the build: a hard link, o+w, another owner than root or its folder's,
    g+w for a group that may not write its folder (contracts.regular_file)."""
    try:
        folder = os.stat(path.parent)
    except OSError as e:
        raise PolicyLoadError("load.tampered", f"cannot read {path.parent}: {e.strerror}", _RESYNTH) from None
    problem = writable_from_outside(st, folder)
    if problem:
        raise PolicyLoadError("load.shared", f"{path}: {problem}; a build must hold its own files, writable only "
                              "by whoever may write the build", "copy the build as plain files (cp -r, or rsync "
                              "without --link-dest), owned by the build folder's owner and writable by it only "
                              "(chown -R, chmod -R go-w), or re-run synth")


def _folders_closed(d: Path, files: Mapping[str, str]) -> None:
    """PolicyLoadError when a folder of the build, or above it, lets someone who may not write the build swap a file of
    it, or the whole build, for their own (contracts.regular_file.build_folders_exposed, as the audit asks)."""
    exposed = build_folders_exposed(d, files)
    if exposed:
        folder, why = exposed[0]
        raise PolicyLoadError("load.shared", f"{folder}: {why}: anyone who may write it could put files of their own "
                              f"in the build {d}, or a build of their own in its place", f"chmod o-w,g-w {folder} (or "
                              "chown it to the build's owner), or keep the build under folders only the build's owner "
                              "and root may write")


def _read_json(path: Path, code: str, data: bytes | None = None) -> Any:
    """Strict JSON (enforce.strict_json); every failure is a PolicyLoadError."""
    try:
        return strict_json.loads(_read_bytes(path, code) if data is None else data)
    except strict_json.StrictJSONError as e:
        raise PolicyLoadError(code, f"{path} is not valid JSON: {str(e)[:200]}", _RESYNTH) from None


def check_certificate(cert: Any, path: Path) -> tuple[str, bool, dict[str, str], str]:
    """(policy name, fully proved, certified files -> sha256, the spec's path in the build) from a
    certificate that passes the schema; PolicyLoadError otherwise.

    The mutation figures (`mutation`: killed, total, score, the mutant limit) are not read here beyond the mutation
    gate's verdict: the monitor runs none of them. A certificate without `mutation.limit` (from before synth recorded
    it) loads as before; `veriguard audit` checks the figures, and `audit --mutation` says NOT_CHECKED for it."""
    def bad(what: str) -> PolicyLoadError:
        return PolicyLoadError("load.certificate", f"{path}: {what}", _RESYNTH)

    if not isinstance(cert, dict):
        raise bad(f"the certificate is a JSON {type(cert).__name__}, not an object")
    if cert.get("format") != CERT_FORMAT:
        raise PolicyLoadError("load.certificate_format", f"{path}: format {cert.get('format')!r} is not "
                              f"{CERT_FORMAT!r} (older certificates do not cover extraction.json and spec/)", _RESYNTH)
    if not CERT_KEYS <= set(cert) <= CERT_KEYS | OPTIONAL_CERT_KEYS:
        raise bad(f"unexpected keys {sorted(set(cert) - CERT_KEYS - OPTIONAL_CERT_KEYS)} or missing keys "
                  f"{sorted(CERT_KEYS - set(cert))}")
    if "approval" in cert and approval_problem(cert["approval"]):
        raise bad(approval_problem(cert["approval"]))
    name = cert.get("policy")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise bad(f"`policy` must be the policy's name, got {name!r}")
    status, fully = cert.get("status"), cert.get("fully_proved")
    if status not in ("PROVED", "FAILED") or not isinstance(fully, bool):
        raise bad(f"`status` must be \"PROVED\" or \"FAILED\" and `fully_proved` true or false (JSON booleans), got "
                  f"status={status!r}, fully_proved={fully!r}")
    if (status == "PROVED") != fully:
        raise bad(f"`status` {status!r} contradicts `fully_proved` {fully!r}")
    unheld = unheld_gates(cert.get("gates")) if fully else []
    if unheld:   # an empty or partial list of gates under PROVED says that nothing, or not everything, was checked
        raise bad(f"`status` PROVED, but its gates do not all hold: {', '.join(unheld[:4])} (each of "
                  f"{', '.join(CERTIFIED_GATES)} must be recorded once, PROVED or PASSED)")
    hashes = cert.get("hashes")
    if not isinstance(hashes, dict) or set(hashes) != HASH_KEYS:
        raise bad(f"`hashes` must be an object with exactly the keys {', '.join(sorted(HASH_KEYS))}")
    for key in ("policy", "verified_source", "spec", "contract"):
        if not isinstance(hashes.get(key), str) or not HEX64.fullmatch(hashes[key]):
            raise bad(f"`hashes.{key}` must be 64 lower-case hex digits, got {hashes.get(key)!r}")
    for key in ("tables", "extraction_files", "files"):
        table = hashes.get(key)
        if not isinstance(table, dict) or not all(isinstance(v, str) and HEX64.fullmatch(v) for v in table.values()):
            raise bad(f"`hashes.{key}` must be an object of 64-hex-digit sha256 values")
    files: dict[str, str] = hashes["files"]
    for rel in files:
        parts = PurePosixPath(rel).parts
        if not rel or "\\" in rel or "\0" in rel or PurePosixPath(rel).is_absolute() or ".." in parts \
                or PurePosixPath(rel).as_posix() != rel:   # one name per file: `spec/./t.json` was a second
            raise bad(f"`hashes.files` names {rel!r}, which is not a path inside the build")
    named = {**hashes["tables"], **hashes["extraction_files"]}  # spec-relative path -> sha256
    copied = {k.removeprefix("spec/"): v for k, v in files.items() if k.startswith("spec/")}
    unnamed = set(copied) - set(named)  # what remains must be the copy of the spec itself
    if set(files) - {*REQUIRED_FILES, POLICY_CODE} - {f"spec/{r}" for r in copied} \
            or not set(REQUIRED_FILES) <= set(files) \
            or set(named) - set(copied) or len(unnamed) != 1:
        raise bad("`hashes.files` must list exactly policy.py, policy_verified.py, extraction.json, the spec and "
                  "the files it names (`hashes.tables`, `hashes.extraction_files`) under spec/, and may list "
                  f"{POLICY_CODE}")
    spec_file = unnamed.pop()
    agree = files["policy.py"] == hashes["policy"] and files["policy_verified.py"] == hashes["verified_source"] \
        and copied[spec_file] == hashes["spec"] and all(copied[r] == v for r, v in named.items())
    if not agree:  # `hashes.contract` (of the contract text) is for the report; the loader does not read it
        raise bad("`hashes.files` disagrees with `hashes.policy`, `verified_source`, `spec`, `tables` or "
                  "`extraction_files`")
    return name, fully, files, f"spec/{spec_file}"


def certified_contents(d: Path, files: Mapping[str, str]) -> dict[str, bytes]:
    """The bytes of every certified file of the build in `d` (path in the build -> bytes), each matching its
    sha256; PolicyLoadError for a changed or missing file, or one the certificate does not cover."""
    _folders_closed(d, files)
    contents = {rel: _certified_bytes(d, rel, digest) for rel, digest in files.items()}
    _nothing_else(d / "spec", {rel.removeprefix("spec/") for rel in files if rel.startswith("spec/")})
    _no_stray_files(d, files)
    return contents


def _certified_bytes(d: Path, rel: str, digest: str) -> bytes:
    """The bytes of d/rel when they are what the certificate says (d/rel may not lead out of d, and must be
    a regular file: a FIFO or a device could answer this read with one content and a later one with another)."""
    path = d / rel
    try:
        inside = path.resolve().is_relative_to(d.resolve())
        data, st = read_regular_file_and_stat(path, None) if inside else (b"", None)
    except (OSError, RuntimeError) as e:
        raise PolicyLoadError("load.tampered", f"{path} cannot be read ({e}): the build is incomplete",
                              "restore the build or re-run synth") from None
    except FileRefused as e:
        if e.kind == "special":
            raise PolicyLoadError("load.tampered", f"{path} is not a regular file (a pipe, a device or a socket can "
                                  "give the certificate check one content and a later reader another)",
                                  "restore the build's file, or re-run synth") from None
        raise PolicyLoadError("load.tampered", f"{path} cannot be read ({e.strerror}): the build is incomplete",
                              "restore the build or re-run synth") from None
    if not inside or st is None:
        raise PolicyLoadError("load.tampered", f"{path} leads out of the build directory", _RESYNTH)
    _not_shared(path, st)
    actual = hashlib.sha256(data).hexdigest()
    if actual != digest:
        raise PolicyLoadError("load.tampered", f"{path} does not match its certificate (sha256 {actual[:16]}…, "
                              f"certificate says {digest[:16]}…): it was changed after freezing",
                              "restore the file or re-run synth; never edit a frozen build")
    return data


def _nothing_else(spec_dir: Path, certified: set[str]) -> None:
    """Every entry under spec/ is certified: nothing the monitor could be pointed at was slipped in."""
    found = set()
    folders = {p.as_posix() for rel in certified for p in PurePosixPath(rel).parents if p != PurePosixPath(".")}
    for root, dirs, names in os.walk(spec_dir, followlinks=False):
        base = Path(root).relative_to(spec_dir)
        found |= {(base / n).as_posix() for n in names}
        # a folder only on the way to certified files (the audit's rule): an empty __pycache__ is refused too
        found |= {(base / n).as_posix() for n in dirs
                  if (Path(root) / n).is_symlink() or (base / n).as_posix() not in folders}
    extra = sorted(found - certified)
    if extra:
        raise PolicyLoadError("load.tampered", f"{spec_dir} holds files the certificate does not cover: "
                              f"{', '.join(extra[:5])}", "remove them, or re-run synth")


def _no_stray_files(d: Path, files: Mapping[str, str]) -> None:
    """The build's top level holds the certified files and the certificate, its signature, run.json and
    report.md: anything else was put there after freezing."""
    allowed = {rel.split("/")[0] for rel in files} | UNCERTIFIED_FILES
    try:
        entries = list(d.iterdir())
        extra = sorted(p.name for p in entries if p.name not in allowed)
        # the names no hash covers must be plain files: a folder named report.md hid whatever it held from this look
        odd = sorted(p.name for p in entries if p.name in UNCERTIFIED_FILES and not stat.S_ISREG(p.lstat().st_mode))
    except OSError as e:
        raise PolicyLoadError("load.tampered", f"cannot list {d}: {e.strerror}", _RESYNTH) from None
    if odd:
        raise PolicyLoadError("load.tampered", f"{d}: {', '.join(odd)} must be regular files (a folder or a link there "
                              "can hold or lead to anything the certificate does not cover)",
                              "remove them, or re-run synth")
    if extra:
        raise PolicyLoadError("load.tampered", f"{d} holds entries the certificate does not cover: "
                              f"{', '.join(extra[:5])}", "remove them (nothing may be added to a frozen build), or "
                              "re-run synth")


def _extraction(data: bytes, path: Path, name: str) -> dict[str, Any]:
    doc = _read_json(path, "load.extraction", data)
    if not isinstance(doc, dict) or doc.get("policy") != name or not isinstance(doc.get("extraction"), dict) \
            or not isinstance(doc.get("enforcement"), dict):
        raise PolicyLoadError("load.extraction", f"{path} must be an object with `policy` = {name!r} and the "
                              "objects `extraction` and `enforcement`", _RESYNTH)
    return doc


def precompiled(data: bytes | None, source_sha256: str, path: Path) -> CodeType | None:
    """The code object in policy.code (certified bytes) when this interpreter's bytecode is the one it holds;
    None when there is none or it is another Python's. PolicyLoadError when it is not of the certified policy.py
    or not a code object (a broken build: nothing of it runs)."""
    if data is None or not data.startswith(importlib.util.MAGIC_NUMBER):
        return None
    head = len(importlib.util.MAGIC_NUMBER)
    if data[head:head + 32] != bytes.fromhex(source_sha256):
        raise PolicyLoadError("load.exec", f"{path} was not compiled from the certified policy.py", _RESYNTH)
    try:
        code = marshal.loads(data[head + 32:])
    except (EOFError, ValueError, TypeError) as e:
        raise PolicyLoadError("load.exec", f"{path} is not readable bytecode ({e})", _RESYNTH) from None
    if not isinstance(code, CodeType):
        raise PolicyLoadError("load.exec", f"{path} holds a {type(code).__name__}, not a code object", _RESYNTH)
    adapted = specialised(code)
    if adapted:
        raise PolicyLoadError("load.exec", f"{path}: the code object {adapted!r} holds specialised instructions that "
                              "no compiler writes (they compare equal to the plain ones, and may compute something "
                              "else)", _RESYNTH)
    return code


def specialised(code: CodeType) -> str:
    """The qualified name of the first code object, `code` or one nested in it at any depth, whose instructions
    are not what this Python makes of its plain bytecode (`co_code`, which hides specialised opcodes: code
    objects compare on it); '' when there is none."""
    stack = [code]
    while stack:
        current = stack.pop()
        if getattr(current.replace(), "_co_code_adaptive", None) != getattr(current, "_co_code_adaptive", None):
            return current.co_qualname
        stack.extend(c for c in current.co_consts if isinstance(c, CodeType))
    return ""


def _import(data: bytes, path: Path, module_name: str, name: str, code: CodeType | None = None) -> ModuleType:
    spec = importlib.util.spec_from_loader(module_name, loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses look their module up while the class is built
    try:
        if code is None:  # as synth.freeze.policy_code compiles it: annotations stay strings, whoever compiles
            code = compile(data, str(path), "exec", flags=__future__.annotations.compiler_flag, dont_inherit=True)
        exec(code, module.__dict__)  # the bytes just hashed (or their certified bytecode): what was certified runs
    except Exception as e:
        del sys.modules[module_name]
        raise PolicyLoadError("load.exec", f"{path} fails to import: {type(e).__name__}: {e}", _RESYNTH) from None
    shaped = all(callable(getattr(module, f, None)) for f in ("evaluate", "evaluate_checked")) \
        and getattr(module, "POLICY_NAME", None) == name and isinstance(getattr(module, "RULES", None), dict) \
        and isinstance(getattr(module, "ARGUMENTS", None), list)
    if not shaped:
        del sys.modules[module_name]
        raise PolicyLoadError("load.exec", f"{path} is not a frozen policy module for {name!r} (it lacks evaluate, "
                              "evaluate_checked, POLICY_NAME, RULES or ARGUMENTS)", _RESYNTH)
    return module
