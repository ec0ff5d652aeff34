"""Ed25519 key files: what anchors the decision log and signs builds.

A key pair is two PEM files written by `new_key_pair(DIR)` (`veriguard keys new --out DIR`):
DIR/veriguard.key, the PKCS#8 private key (mode 0600; it stays with the writer, e.g. the monitor's
user), and DIR/veriguard.pub, the public key (it goes to whoever verifies). A key's id is the
sha256 of its raw public key, so a signature names the key that made it. Every problem with a key
file is a KeyFileError (exit code 2 in the CLI). `cryptography` is imported only when a key is used.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from veriguard.contracts.build_format import SIGNATURE_ALGORITHM, SIGNATURE_FORMAT
from veriguard.contracts.errors import OperatorError
from veriguard.contracts.regular_file import (FileRefused, read_regular_file_and_stat, replaceable_above,
                                              writable_from_outside)

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

PRIVATE_NAME = "veriguard.key"
PUBLIC_NAME = "veriguard.pub"
_MAX_KEY_FILE = 64 * 1024
_KEEP = "choose another directory: a log (or build) signed with the existing key needs that key to verify"


class KeyFileError(OperatorError):
    """A key file is missing, unreadable, not an Ed25519 key, or too widely readable."""


@dataclass(frozen=True)
class VerifyKey:
    public: "Ed25519PublicKey"
    key_id: str

    def verify(self, message: bytes, signature: object) -> bool:
        from cryptography.exceptions import InvalidSignature

        if not isinstance(signature, str):
            return False
        try:
            raw = base64.b64decode(signature, validate=True)
            self.public.verify(raw, message)
        except (InvalidSignature, binascii.Error, ValueError):
            return False
        # one spelling per signature, as sign() writes it: base64 leaves 4 bits of the last character unused, and a
        # decoder ignores them, so 16 spellings verified and a log line or signature.json could change unseen
        return base64.b64encode(raw).decode("ascii") == signature


@dataclass(frozen=True)
class SigningKey:
    private: "Ed25519PrivateKey"
    public: VerifyKey

    @property
    def key_id(self) -> str:
        return self.public.key_id

    def sign(self, message: bytes) -> str:
        return base64.b64encode(self.private.sign(message)).decode("ascii")


def _key_id(public: "Ed25519PublicKey") -> str:
    from cryptography.hazmat.primitives import serialization

    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


def _read(path: Path, what: str) -> tuple[bytes, os.stat_result]:
    """The bytes and the fstat of a key file (never through a symlink; a FIFO is refused, not waited on)."""
    fix = "pass the file written by `veriguard keys new --out DIR`"
    try:
        data, st = read_regular_file_and_stat(path, _MAX_KEY_FILE, follow_links=False)
    except FileRefused as e:
        if e.kind == "special":
            raise KeyFileError("key.unreadable", f"the {what} is not a regular file", file=str(path),
                               fix=fix + ", not a pipe or device") from None
        if e.kind == "large":
            raise KeyFileError("key.format", f"the {what} is larger than any key file", file=str(path)) from None
        raise KeyFileError("key.unreadable", f"cannot read the {what}: {e.strerror}", file=str(path), fix=fix) from None
    return data, st


def load_signing_key(path: str | Path) -> SigningKey:
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    path = Path(path)
    data, st = _read(path, "private key")
    mode = stat.S_IMODE(st.st_mode)
    if b"PRIVATE KEY" not in data:
        raise KeyFileError("key.format", "not a private key", file=str(path),
                           fix=f"pass {PRIVATE_NAME} from `veriguard keys new --out DIR` ({PUBLIC_NAME} is for verifiers)")
    if mode & 0o077:
        raise KeyFileError("key.permissions", f"the private key can be read by other users (mode {mode:o})",
                           file=str(path), fix=f"chmod 600 {path}")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as e:
        raise KeyFileError("key.format", f"not an unencrypted PEM private key ({str(e).split('. ')[0][:100]})",
                           file=str(path), fix="pass DIR/veriguard.key from `veriguard keys new --out DIR`") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError("key.format", f"a {type(key).__name__}, not an Ed25519 key", file=str(path),
                           fix="create one with `veriguard keys new --out DIR`")
    public = key.public_key()
    return SigningKey(key, VerifyKey(public, _key_id(public)))


def load_verify_key(path: str | Path) -> VerifyKey:
    """The public key a verifier trusts (verify-log --public-key, audit --log-public-key): refused when someone who may
    not write its folder could change it, or put another in its place (_anchor_problem): whoever rewrote the log and
    signed it with a key of their own would put their public key there, and the verdict would read "intact, anchored"."""
    path = Path(path)
    key, st = _verify_key_and_stat(path)
    problem = _anchor_problem(path, st, "public key file")
    if problem is not None:
        raise problem
    return key


def _anchor_problem(path: Path, st: os.stat_result, what: str, walked: os.stat_result | None = None) -> \
        KeyFileError | None:
    """A trust anchor (`path`, a key file or a folder of them, whose stat is `st`) that someone who may not write it
    could change or replace, as a build's files and folders are judged (contracts.regular_file): a folder or file every
    user may write (sticky or not: a sticky folder still takes a new key), a file with a second name (a hard link),
    owned by another user than root and its folder's owner or writable by a group that may not write its folder, in a
    folder every user may replace entries in, or below a folder or link through which someone who may not write it
    could put another in its place (`mv keys old && mkdir keys && cp mine.pub keys/`). `walked`: the stat of the file's
    folder, whose own anchor check walked the folders above it already: only that folder is asked about the file."""
    folder = path if stat.S_ISDIR(st.st_mode) else Path(os.path.abspath(path)).parent
    try:
        held = st if folder is path else walked or os.stat(folder)
    except OSError as e:
        return KeyFileError("key.unreadable", f"cannot read the folder holding the {what}: {e.strerror}", file=str(path))
    if st.st_mode & 0o002:
        return KeyFileError("key.permissions", f"the {what} can be written by every user (mode "
                            f"{stat.S_IMODE(st.st_mode):o}): anyone could add or replace a trusted key", file=str(path),
                            fix=f"chmod o-w {path}")
    problem = "" if folder is path else writable_from_outside(st, held)
    if problem:
        return KeyFileError("key.permissions", f"the {what}: {problem}; anyone who may write it could replace the key",
                            file=str(path), fix=f"keep the key in a folder of its owner, as a plain file (no hard "
                            f"link) writable by that owner only (chmod go-w {path})")
    # for a file, from the folder holding it up; with `walked`, only that folder
    above = replaceable_above(path, st, walked=None if walked is None else held)
    if above:
        return KeyFileError("key.permissions", f"{above[0]}, above the {what}: {above[1]}; so the {what} can be "
                            "replaced below it", file=str(path), fix=f"chmod o-w,g-w {above[0]} (or chown it to the "
                            "key's owner), or keep the key elsewhere")
    return None


def _verify_key_and_stat(path: Path) -> tuple[VerifyKey, os.stat_result]:
    """The public key in `path` and the file's fstat (from the descriptor it was read from)."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    data, st = _read(path, "public key")
    if b"PRIVATE KEY" in data:
        raise KeyFileError("key.format", "this is a private key; verifiers get the public key", file=str(path),
                           fix=f"pass {PUBLIC_NAME}, and keep {PRIVATE_NAME} with the writer only")
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError, UnsupportedAlgorithm) as e:
        raise KeyFileError("key.format", f"not a PEM public key ({str(e).split('. ')[0][:100]})", file=str(path),
                           fix=f"pass DIR/{PUBLIC_NAME} from `veriguard keys new --out DIR`") from None
    if not isinstance(key, Ed25519PublicKey):
        raise KeyFileError("key.format", f"a {type(key).__name__}, not an Ed25519 key", file=str(path))
    return VerifyKey(key, _key_id(key)), st


def write_atomic(path: Path, data: bytes, *, mode: int = 0o644, overwrite: bool = True) -> None:
    """Write `path` whole or not at all: a temporary file beside it (never through a symlink), fsync,
    then a rename over `path`, or, with overwrite=False, a hard link that fails if `path` exists."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if overwrite:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def new_key_pair(directory: str | Path) -> tuple[Path, Path, str]:
    """Create DIR/veriguard.key and DIR/veriguard.pub; refuses to replace either. Returns both paths and the key id."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    d = Path(directory)
    private_path, public_path = d / PRIVATE_NAME, d / PUBLIC_NAME
    for p in (private_path, public_path):
        if p.exists() or p.is_symlink():
            raise KeyFileError("key.exists", "the file already exists", file=str(p), fix=_KEEP)
    try:
        d.mkdir(parents=True, exist_ok=True)
        key = Ed25519PrivateKey.generate()
        write_atomic(private_path, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                     serialization.NoEncryption()), mode=0o600, overwrite=False)
        write_atomic(public_path, key.public_key().public_bytes(serialization.Encoding.PEM,
                                                                serialization.PublicFormat.SubjectPublicKeyInfo),
                     overwrite=False)
    except FileExistsError as e:
        raise KeyFileError("key.exists", "the file already exists", file=str(e.filename2 or d), fix=_KEEP) from None
    except OSError as e:
        raise KeyFileError("key.write", f"cannot write a key here: {e.strerror}", file=str(e.filename or d)) from None
    return private_path, public_path, _key_id(key.public_key())


# --- builds: an Ed25519 signature over certificate.json's exact bytes -------------------------------------
_BUILD_DOMAIN = b"veriguard-build-signature/1\0"  # a build signature can never pass for a log signature


def sign_certificate(key: SigningKey, certificate: bytes) -> bytes:
    """The bytes of signature.json for a build whose certificate.json holds `certificate`."""
    doc = {"format": SIGNATURE_FORMAT, "algorithm": SIGNATURE_ALGORITHM, "key_id": key.key_id,
           "signed_file": "certificate.json", "signature": key.sign(_BUILD_DOMAIN + certificate)}
    return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode("ascii")


def certificate_signed_by(key: VerifyKey, certificate: bytes, signature: object) -> bool:
    return key.verify(_BUILD_DOMAIN + certificate, signature)


def load_trusted_keys(source: str | Path | Sequence[str | Path]) -> dict[str, VerifyKey]:
    """Key id -> public key, from a directory of .pub files, a key file, an os.pathsep-separated list of
    either (the syntax of VERIGUARD_TRUSTED_KEYS), or a sequence of them. Naming no key at all is an error:
    a trust anchor that trusts nothing is a mistake, never a silent pass."""
    items: list[str | Path] = [p for p in str(source).split(os.pathsep) if p] \
        if isinstance(source, (str, Path)) else list(source)
    keys: dict[str, VerifyKey] = {}
    for item in items:
        path = Path(item).expanduser()
        try:
            held = path.stat()
            folder = stat.S_ISDIR(held.st_mode)
            problem = _anchor_problem(path, held, "directory of trusted keys") if folder else None
            # a hidden key (.x.pub) is not one of them: `ls` does not show it to whoever reviews the folder
            files = sorted(p for p in path.iterdir() if p.suffix == ".pub" and not p.name.startswith(".")) \
                if folder else [path]
        except OSError as e:
            raise KeyFileError("key.unreadable", f"cannot list the directory of trusted keys: {e.strerror}",
                               file=str(path)) from None
        if problem:
            raise problem
        if folder and not files:
            raise KeyFileError("key.trust", "the directory of trusted keys holds no .pub file", file=str(path),
                               fix=f"copy the signer's {PUBLIC_NAME} (from `veriguard keys new`) into it")
        for f in files:
            key, st = _verify_key_and_stat(f)
            problem = _anchor_problem(f, st, "trusted key file", held if folder else None)
            if problem:
                raise problem
            keys[key.key_id] = key
    if not keys:
        raise KeyFileError("key.trust", f"no trusted public key is named by {str(source)!r}",
                           fix="name a directory of .pub files or the .pub files themselves, separated by "
                           f"{os.pathsep!r}")
    return keys
