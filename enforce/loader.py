"""Load a frozen policy from its build directory, refusing anything the certificate does not vouch for.

Stdlib only: a production agent that imports a frozen policy pays for nothing else.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Mapping


class PolicyLoadError(Exception):
    """The build cannot be trusted: missing, tampered with, or not fully proved."""

    def __init__(self, code: str, message: str, fix: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.fix = fix

    def __str__(self) -> str:
        return f"error[{self.code}]: {self.message}" + (f"\n  fix: {self.fix}" if self.fix else "")


@dataclass(frozen=True)
class FrozenPolicy:
    name: str
    directory: Path
    module: ModuleType
    certificate: dict[str, Any]
    sha256: str
    trusted: bool            # False only when loaded with accept_unproved=True and the certificate is not PROVED
    extraction: dict[str, Any]

    def evaluate(self, args: Mapping[str, Any]) -> Any:
        return self.module.evaluate(args)

    def evaluate_checked(self, args: Mapping[str, Any]) -> Any:
        return self.module.evaluate_checked(args)

    @property
    def rules(self) -> dict[str, str]:
        return dict(self.module.RULES)


def load_policy(directory: str | Path, *, accept_unproved: bool = False) -> FrozenPolicy:
    """Import DIR/policy.py after checking it against DIR/certificate.json.

    Refuses (PolicyLoadError) a module whose sha256 differs from the certificate's, and a
    certificate that is not fully proved unless `accept_unproved` is set.
    """
    d = Path(directory)
    cert_path, policy_path = d / "certificate.json", d / "policy.py"
    if not cert_path.is_file() or not policy_path.is_file():
        raise PolicyLoadError("load.missing", f"{d} is not a policy build (needs policy.py and certificate.json)",
                              "run `veriguard synth SPEC --out DIR` and pass DIR/<name>")
    try:
        cert = json.loads(cert_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise PolicyLoadError("load.certificate", f"cannot read {cert_path}: {e}", "re-run synth") from None
    data = policy_path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    expected = (cert.get("hashes") or {}).get("policy")
    if digest != expected:
        raise PolicyLoadError("load.tampered", f"{policy_path} does not match its certificate "
                              f"(sha256 {digest[:16]}…, certificate says {str(expected)[:16]}…): it was changed after freezing",
                              "restore the file or re-run synth; never edit a frozen policy")
    proved = bool(cert.get("fully_proved")) and cert.get("status") == "PROVED"
    if not proved and not accept_unproved:
        raise PolicyLoadError("load.unproved", f"the certificate of {cert.get('policy')} says {cert.get('status')}: "
                              "not every gate passed", "fix the spec and re-run synth, or pass accept_unproved=True "
                              "(--accept-unproved) to load it anyway, knowingly")
    name = f"veriguard_frozen_{cert.get('policy', 'policy')}_{digest[:12]}"
    spec = importlib.util.spec_from_loader(name, loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    code = compile(data, str(policy_path), "exec")
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    try:
        exec(code, module.__dict__)  # the bytes just hashed, so what runs is what was certified
    except Exception as e:
        del sys.modules[name]
        raise PolicyLoadError("load.exec", f"{policy_path} fails to import: {type(e).__name__}: {e}",
                              "re-run synth") from None
    extraction: dict[str, Any] = {}
    ext_path = d / "extraction.json"
    if ext_path.is_file():
        extraction = json.loads(ext_path.read_text(encoding="utf-8"))
    return FrozenPolicy(str(cert.get("policy")), d, module, cert, digest, proved, extraction)
